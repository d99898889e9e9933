// The fields a Job offers to field selectors (kube's job GetAttrs: status.successful).
import { intField as n, type KindFields } from '../../strategy.ts';

export const jobFieldSet: KindFields = {
  accepted: ['metadata.name', 'metadata.namespace', 'status.successful'],
  fields: (o) => ({ 'status.successful': n(o?.status?.succeeded) }),
};
