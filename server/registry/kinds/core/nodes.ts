// Nodes: a kubelet registers its Node with the status it reports, so a create keeps the status
// it is given (kube's nodeStrategy.PrepareForCreate clears nothing). Also their defaults and their
// field set (spec.unschedulable).
import { boolField as b, type KindFields, type Strategy } from '../../strategy.ts';
import { absent, CORE, struct, type Defaulters } from '../../defaulting.ts';
import { isPlainObject } from '../../../util/json.ts';

export const nodeStrategy: Strategy = { statusOnCreate: true };

/** Nodes, by definition. */
export const nodeDefaults: Defaulters = {
  // Not a default: NodeSpec is a non-pointer struct, written as `spec: {}` however empty.
  [`${CORE}Node`]: (n) => struct(n, 'spec'),
  [`${CORE}NodeStatus`]: (s) => {
    if (absent(s.allocatable) && isPlainObject(s.capacity)) s.allocatable = { ...s.capacity };
  },
};

/** Nodes' fields for field selectors. */
export const nodeFieldSet: KindFields = { accepted: ['metadata.name', 'spec.unschedulable'], fields: (o) => ({ 'spec.unschedulable': b(o?.spec?.unschedulable) }) };
