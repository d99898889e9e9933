// Pods: created Pending, with the QoS class their resources give (kube's podStrategy
// PrepareForCreate and qos.ComputePodQOS), and a PodScheduled=False condition while scheduling
// gates hold them; assigned to a node through the binding subresource (kube's BindingREST),
// which a scheduler posts.
import { registerStrategy } from '../strategy.ts';
import { addRationals, compareRationals, parseQuantity, type Rational } from '../../util/quantity.ts';
import { badRequest, conflict, internalError, invalid } from '../../errors.ts';
import type { FieldError } from '../../schema/types.ts';
import { notSupportedError, requiredError } from '../crd/schema-validator.ts';
import { goQuote } from '../metadata-validation.ts';
import { nowTimestamp } from '../store.ts';
import { isPlainObject } from '../../util/json.ts';
import { validatePodSpec, validatePodUpdate } from '../pod-validation.ts';

type ResourceList = Record<string, unknown> | undefined;

/** Only these count for the QoS class. */
const QOS_RESOURCES = new Set(['cpu', 'memory']);

/** The positive quantities of the QoS resources in a list (an unparsable one counts as none: validation refuses it). */
function positive(list: ResourceList): [string, Rational][] {
  const out: [string, Rational][] = [];
  if (!isPlainObject(list)) return out;
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

/** ValidatePodBinding: a Node target (or no kind), with a name. */
function validatePodBinding(binding: any): FieldError[] {
  const errors: FieldError[] = [];
  const target = isPlainObject(binding?.target) ? binding.target : {};
  const kind = typeof target.kind === 'string' ? target.kind : '';
  if (kind !== '' && kind !== 'Node') errors.push(notSupportedError('target.kind', goQuote(kind), ['Node', '<empty>']));
  if (typeof target.name !== 'string' || target.name === '') errors.push(requiredError('target.name', ''));
  return errors;
}

/**
 * The pod assigned to the Binding's node (kube's setPodNodeAndMetadata): refused while it is
 * being deleted, already assigned or gated, or when the Binding's uid or resourceVersion
 * preconditions fail; the Binding's annotations are added and PodScheduled turns True.
 */
function assignPod(pod: any, binding: any, now: string): any {
  const name: string = pod.metadata.name;
  const meta = binding.metadata ?? {};
  if (pod.metadata.deletionTimestamp) throw internalError(`pod ${name} is being deleted, cannot be assigned to a host`);
  if (meta.uid && meta.uid !== pod.metadata.uid) throw conflict('', 'pods/binding', name, `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${pod.metadata.uid}`);
  if (meta.resourceVersion && meta.resourceVersion !== pod.metadata.resourceVersion) {
    throw conflict('', 'pods/binding', name, `Precondition failed: ResourceVersion in precondition: ${meta.resourceVersion}, ResourceVersion in object meta: ${pod.metadata.resourceVersion}`);
  }
  const spec = (pod.spec ??= {});
  if (spec.nodeName) throw conflict('', 'pods/binding', name, `pod ${name} is already assigned to node ${goQuote(spec.nodeName)}`);
  if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) throw conflict('', 'pods/binding', name, `pod ${name} has non-empty .spec.schedulingGates`);
  spec.nodeName = binding.target.name;
  if (isPlainObject(meta.annotations) && Object.keys(meta.annotations).length) {
    pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...meta.annotations };
  }
  // podutil.UpdatePodCondition: the transition time moves only when the status does.
  const status = (pod.status ??= {});
  const conditions: any[] = Array.isArray(status.conditions) ? status.conditions : (status.conditions = []);
  const at = conditions.findIndex((c) => c?.type === 'PodScheduled');
  const scheduled = { type: 'PodScheduled', status: 'True', lastTransitionTime: at >= 0 && conditions[at].status === 'True' ? conditions[at].lastTransitionTime : now };
  if (at >= 0) conditions[at] = scheduled;
  else conditions.push(scheduled);
  return pod;
}

/** BindingREST's checks of the request: a Binding, named as the pod, valid. */
function checkBinding(binding: any, name: string): void {
  if (!isPlainObject(binding)) throw badRequest('the body of the request must be a Binding');
  if (binding.kind !== undefined && binding.kind !== 'Binding') throw badRequest(`the object provided is unrecognized (must be of type Binding): ${String(binding.kind)}`);
  if (binding.metadata?.name !== name) throw badRequest('name in URL does not match name in Binding object');
  const errors = validatePodBinding(binding);
  if (errors.length) throw invalid('', 'Binding', name, errors);
}

/**
 * What kube does to a new pod's pod-affinity terms and topology spread constraints that name
 * matchLabelKeys (mismatchLabelKeys): each key the pod has a label for joins the term's label
 * selector as `key In (value)` (`NotIn`), so the selector says what the keys meant for this pod.
 */
function mergeLabelKeysIntoSelectors(pod: any): void {
  const labels = isPlainObject(pod.metadata?.labels) ? pod.metadata.labels : {};
  const merge = (holder: any, keys: unknown, operator: 'In' | 'NotIn') => {
    if (!Array.isArray(keys) || !isPlainObject(holder?.labelSelector)) return;
    for (const key of keys) {
      if (typeof key !== 'string' || !Object.hasOwn(labels, key)) continue;
      const selector = holder.labelSelector;
      selector.matchExpressions = [...(Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []), { key, operator, values: [labels[key]] }];
    }
  };
  const affinity = pod.spec?.affinity;
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = affinity?.[kind];
    const terms = [...(Array.isArray(a?.requiredDuringSchedulingIgnoredDuringExecution) ? a.requiredDuringSchedulingIgnoredDuringExecution : []), ...(Array.isArray(a?.preferredDuringSchedulingIgnoredDuringExecution) ? a.preferredDuringSchedulingIgnoredDuringExecution.map((w: any) => w?.podAffinityTerm) : [])];
    for (const term of terms) {
      merge(term, term?.matchLabelKeys, 'In');
      merge(term, term?.mismatchLabelKeys, 'NotIn');
    }
  }
  for (const c of Array.isArray(pod.spec?.topologySpreadConstraints) ? pod.spec.topologySpreadConstraints : []) merge(c, c?.matchLabelKeys, 'In');
}

registerStrategy('', 'pods', {
  validate: (pod) => validatePodSpec(pod.spec, 'spec', pod.metadata),
  // (a binding sets spec.nodeName, a status write carries the spec over: only a write of the pod itself is checked)
  validateUpdate: (pod, old, subresource) => [...validatePodSpec(pod.spec, 'spec', pod.metadata), ...(subresource === '' ? validatePodUpdate(pod, old) : [])],
  subresourceCreate: {
    binding: { definition: 'io.k8s.api.core.v1.Binding', check: checkBinding, apply: (pod, binding) => assignPod(pod, binding, nowTimestamp()) },
  },
  // A pod on a node gets the time to stop that it or the request asks for; one on no node, or
  // finished, goes at once.
  gracePeriod(pod, requested) {
    let period = requested ?? (typeof pod.spec?.terminationGracePeriodSeconds === 'number' ? pod.spec.terminationGracePeriodSeconds : 0);
    const phase = pod.status?.phase;
    if (!pod.spec?.nodeName || phase === 'Failed' || phase === 'Succeeded') period = 0;
    return period < 0 ? 1 : period;
  },
  prepareForCreate(pod) {
    mergeLabelKeysIntoSelectors(pod);
    pod.status = { phase: 'Pending', qosClass: podQOSClass(pod) };
    if (Array.isArray(pod.spec?.schedulingGates) && pod.spec.schedulingGates.length > 0) {
      pod.status.conditions = [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' }];
    }
  },
});
