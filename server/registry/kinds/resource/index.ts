// resource.k8s.io: dynamic resource allocation's kinds; device requests have defaults, ResourceSlices
// selectable fields.
import { setZero, type Defaulters } from '../../defaulting.ts';
import { stringField as s, type KindFields, type Obj } from '../../strategy.ts';

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

/** ResourceSlices' fields for field selectors (spec.nodeName, spec.driver). */
export const resourceSliceFieldSet: KindFields = {
  accepted: ['metadata.name', 'spec.nodeName', 'spec.driver'],
  fields: (o) => ({ 'spec.nodeName': s(o?.spec?.nodeName), 'spec.driver': s(o?.spec?.driver) }),
  message: (label, version) => `field label not supported for resource.k8s.io/${version}, Kind=ResourceSlice: ${label}`,
};
