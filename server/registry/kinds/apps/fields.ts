// The fields apps/v1 kinds offer to field selectors. apps/v1 registers no field-label
// conversions: ReplicaSets and StatefulSets take only metadata.name/namespace there. The
// registry's set still carries status.replicas.
import { intField as n, notKnownFieldSelector, type KindFields } from '../../strategy.ts';

export const replicaSetFieldSet: KindFields = {
  accepted: ['metadata.name', 'metadata.namespace'],
  fields: (o) => ({ 'status.replicas': n(o?.status?.replicas) }),
  message: (label) => notKnownFieldSelector(label),
};
