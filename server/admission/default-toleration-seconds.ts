// DefaultTolerationSeconds (kube's plugin/pkg/admission/defaulttolerationseconds, on by
// default): a pod that tolerates neither node.kubernetes.io/not-ready:NoExecute nor
// node.kubernetes.io/unreachable:NoExecute (an empty key or effect tolerates them too) gets a
// toleration of each for --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds (300 each), so the taint manager evicts its pods five
// minutes after their node fails rather than at once. On updates too, as kube's handler: a PUT
// that leaves them out gets them back, where pod validation would refuse the removal.
import type { AdmissionPlugin } from './types.ts';
import { list, rec } from './json-fields.ts';

export const DEFAULT_TOLERATION_SECONDS = 'DefaultTolerationSeconds';
/** v1.TaintNodeNotReady and v1.TaintNodeUnreachable. */
const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NO_EXECUTE = 'NoExecute';
/** The flags' default. */
export const DEFAULT_TOLERATION_SECONDS_VALUE = 300;

export interface TolerationSecondsOptions {
  notReadySeconds?: number;
  unreachableSeconds?: number;
}

export function defaultTolerationSeconds(options: TolerationSecondsOptions = {}): AdmissionPlugin {
  const notReadySeconds = options.notReadySeconds ?? DEFAULT_TOLERATION_SECONDS_VALUE;
  const unreachableSeconds = options.unreachableSeconds ?? DEFAULT_TOLERATION_SECONDS_VALUE;
  return {
    name: DEFAULT_TOLERATION_SECONDS,
    admit(a) {
      if (a.info.resource !== 'pods' || a.info.group !== '' || a.subresource) return;
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      const spec = rec(a.object).spec;
      if (typeof spec !== 'object' || spec === null) return;
      const s = spec as Record<string, unknown>;
      const tolerations = list(s.tolerations).map(rec);
      const tolerates = (key: string) => tolerations.some((t) => (t.key === key || !t.key) && (t.effect === NO_EXECUTE || !t.effect));
      const added: Record<string, unknown>[] = [];
      if (!tolerates(NOT_READY)) added.push({ key: NOT_READY, operator: 'Exists', effect: NO_EXECUTE, tolerationSeconds: notReadySeconds });
      if (!tolerates(UNREACHABLE)) added.push({ key: UNREACHABLE, operator: 'Exists', effect: NO_EXECUTE, tolerationSeconds: unreachableSeconds });
      if (added.length) s.tolerations = [...list(s.tolerations), ...added];
    },
  };
}
