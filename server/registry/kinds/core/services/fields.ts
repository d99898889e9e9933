// The fields a Service offers to field selectors (kube's service GetAttrs).
import { stringField as s, type KindFields } from '../../../strategy.ts';

export const serviceFieldSet: KindFields = {
  accepted: ['metadata.namespace', 'metadata.name', 'spec.clusterIP', 'spec.type'],
  fields: (o) => ({ 'spec.clusterIP': s(o?.spec?.clusterIP), 'spec.type': s(o?.spec?.type) }),
};
