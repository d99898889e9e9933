// resource.k8s.io: dynamic resource allocation's kinds; device requests have defaults.
import { setZero, type Defaulters, type Obj } from '../../defaulting.ts';

/** SetDefaults_ExactDeviceRequest, SetDefaults_DeviceSubRequest: one device unless said otherwise. */
function deviceCount(r: Obj): void {
  setZero(r, 'allocationMode', 'ExactCount');
  if (r.allocationMode === 'ExactCount') setZero(r, 'count', 1);
}

/** Device requests of ResourceClaims and their templates, by definition. */
export const resourceDefaults: Defaulters = {
  'io.k8s.api.resource.v1.ExactDeviceRequest': deviceCount,
  'io.k8s.api.resource.v1.DeviceSubRequest': deviceCount,
};
