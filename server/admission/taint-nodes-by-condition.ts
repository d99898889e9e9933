// TaintNodesByCondition (kube's plugin/pkg/admission/nodetaint, on by default): a Node is
// created with the node.kubernetes.io/not-ready:NoSchedule taint (unless it has one of that key
// and effect), so nothing is scheduled onto it before the node lifecycle controller has seen it
// Ready and lifted the taint.
import type { AdmissionPlugin } from './types.ts';
import { list, rec } from './json-fields.ts';

export const TAINT_NODES_BY_CONDITION = 'TaintNodesByCondition';
const NOT_READY = 'node.kubernetes.io/not-ready';
const NO_SCHEDULE = 'NoSchedule';

export function taintNodesByCondition(): AdmissionPlugin {
  return {
    name: TAINT_NODES_BY_CONDITION,
    admit(a) {
      if (a.info.resource !== 'nodes' || a.info.group !== '' || a.subresource || a.operation !== 'CREATE') return;
      const node = rec(a.object);
      const spec = typeof node.spec === 'object' && node.spec !== null ? (node.spec as Record<string, unknown>) : (node.spec = {});
      const taints = list(spec.taints);
      // Taint.MatchTaint: the same key and effect.
      if (taints.some((t) => rec(t).key === NOT_READY && rec(t).effect === NO_SCHEDULE)) return;
      spec.taints = [...taints, { key: NOT_READY, effect: NO_SCHEDULE }];
    },
  };
}
