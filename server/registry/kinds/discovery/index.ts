// discovery.k8s.io: EndpointSlices have only defaults of their own (their ports' name and protocol).
import { setPtr, type Defaulters } from '../../defaulting.ts';

/** EndpointSlices, by definition. */
export const endpointSliceDefaults: Defaulters = {
  'io.k8s.api.discovery.v1.EndpointPort': (p) => {
    setPtr(p, 'name', '');
    setPtr(p, 'protocol', 'TCP');
  },
};
