// Pods: created Pending, with the QoS class their resources give (kube's podStrategy
// PrepareForCreate and qos.ComputePodQOS), and a PodScheduled=False condition while scheduling
// gates hold them.
import { registerStrategy } from '../strategy.ts';
import { addRationals, compareRationals, parseQuantity, type Rational } from '../../util/quantity.ts';

type ResourceList = Record<string, unknown> | undefined;

/** Only these count for the QoS class. */
const QOS_RESOURCES = new Set(['cpu', 'memory']);

/** The positive quantities of the QoS resources in a list (an unparsable one counts as none: validation refuses it). */
function positive(list: ResourceList): [string, Rational][] {
  const out: [string, Rational][] = [];
  if (typeof list !== 'object' || list === null || Array.isArray(list)) return out;
  for (const [name, raw] of Object.entries(list)) {
    if (!QOS_RESOURCES.has(name)) continue;
    const q = typeof raw === 'string' ? parseQuantity(raw) : typeof raw === 'number' ? parseQuantity(String(raw)) : undefined;
    if (q !== undefined && q.num > 0n) out.push([name, q]);
  }
  return out;
}

/** Guaranteed, Burstable or BestEffort, as qos.ComputePodQOS decides (pod-level resources first, when the pod has them). */
export function podQOSClass(pod: any): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const requests = new Map<string, Rational>();
  const limits = new Map<string, Rational>();
  let guaranteed = true;
  const add = (into: Map<string, Rational>, name: string, q: Rational) => {
    const had = into.get(name);
    into.set(name, had === undefined ? q : addRationals(had, q));
  };
  const take = (resources: any, sum: boolean) => {
    for (const [name, q] of positive(resources?.requests)) sum ? add(requests, name, q) : requests.set(name, q);
    const found = positive(resources?.limits);
    for (const [name, q] of found) sum ? add(limits, name, q) : limits.set(name, q);
    // (pod-level limits are judged only when there are some)
    if ((sum || resources?.limits !== undefined) && !(found.some(([n]) => n === 'cpu') && found.some(([n]) => n === 'memory'))) guaranteed = false;
  };
  const spec = pod?.spec ?? {};
  if (spec.resources !== undefined && spec.resources !== null) take(spec.resources, false);
  else for (const c of [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])]) take(c?.resources, true);
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (lim === undefined || compareRationals(lim, req) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

registerStrategy('', 'pods', {
  prepareForCreate(pod) {
    pod.status = { phase: 'Pending', qosClass: podQOSClass(pod) };
    if (Array.isArray(pod.spec?.schedulingGates) && pod.spec.schedulingGates.length > 0) {
      pod.status.conditions = [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' }];
    }
  },
});
