// Pods: created Pending, with the QoS class their resources give (kube's podStrategy
// PrepareForCreate and qos.ComputePodQOS), and a PodScheduled=False condition while scheduling
// gates hold them; assigned to a node through the binding subresource (kube's BindingREST),
// which a scheduler posts. Two subresources write parts of the spec the pod's own updates may
// not touch, as kube's strategies for them do: ephemeralcontainers (what `kubectl debug` patches:
// podEphemeralContainersStrategy, ValidatePodEphemeralContainersUpdate) and resize (containers'
// resources: podResizeStrategy, ValidatePodResize).
import type { Obj, Strategy } from '../../../strategy.ts';
import { addRationals, compareRationals, parseQuantity, type Rational } from '../../../../util/quantity.ts';
import { badRequest, conflict, internalError, invalid } from '../../../../errors.ts';
import { forbiddenError, invalidError, notSupportedError, requiredError, type FieldError } from '../../../../validation/field.ts';
import { goQuote } from '../../../../go/strconv.ts';
import { nowTimestamp } from '../../../now.ts';
import { isPlainObject, objectsOf, semanticEqual } from '../../../../util/json.ts';
import { specChangeError, validatePodSpec, validatePodUpdate } from './validation.ts';

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
    for (const [name, q] of positive(resources?.requests)) {
      if (sum) add(requests, name, q);
      else requests.set(name, q);
    }
    const found = positive(resources?.limits);
    for (const [name, q] of found) {
      if (sum) add(limits, name, q);
      else limits.set(name, q);
    }
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
  // The Binding's labels (PodTopologyLabels puts the node's topology there) go onto the pod,
  // over any it has, as kube's binding does with PodTopologyLabelsAdmission (on since 1.35).
  if (isPlainObject(meta.labels) && Object.keys(meta.labels).length) {
    pod.metadata.labels = { ...(pod.metadata.labels ?? {}), ...meta.labels };
  }
  const status = (pod.status ??= {});
  // ClearingNominatedNodeNameAfterBinding (on since 1.35): a bound pod's nomination is stale.
  delete status.nominatedNodeName;
  // podutil.UpdatePodCondition: the transition time moves only when the status does.
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

/** Static (mirror) pods carry this annotation; they have neither ephemeral containers nor resizes. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
const isMirrorPod = (pod: Obj): boolean => isPlainObject(pod.metadata?.annotations) && Object.hasOwn(pod.metadata.annotations, MIRROR_POD_ANNOTATION);
/** A Forbidden error about the whole object: kube's field.NewPath("") prints as "[]". */
const wholePodForbidden = (detail: string): FieldError => forbiddenError('[]', detail);

/** The stored pod with `spec` as given (a copy of old's metadata and status stays: ResetObjectMetaForStatus). */
function withSpec(old: Obj, spec: Obj, body: Obj): Obj {
  old.spec = spec;
  // An apply to the subresource computed the ownership the write keeps.
  if (body.metadata?.managedFields !== undefined) old.metadata.managedFields = body.metadata.managedFields;
  return old;
}

function setOrDelete(o: Obj, key: string, value: unknown): void {
  if (value === undefined) delete o[key];
  else o[key] = value;
}

/** dropNonEphemeralContainerUpdates: of the request, only spec.ephemeralContainers is kept. */
function ephemeralContainersUpdate(body: Obj, old: Obj): Obj {
  const spec = { ...(isPlainObject(old.spec) ? old.spec : {}) };
  setOrDelete(spec, 'ephemeralContainers', isPlainObject(body.spec) ? body.spec.ephemeralContainers : undefined);
  return withSpec(old, spec, body);
}

/**
 * dropNonResizeUpdates: of the request, only containers' (and init containers') resources and
 * resizePolicy, and the pod-level resources (InPlacePodLevelResourcesVerticalScaling, on by
 * default in 1.36). A request that adds, removes, reorders or renames containers is kept whole,
 * for validation to refuse.
 */
function resizeUpdate(body: Obj, old: Obj): Obj {
  const spec: Obj = isPlainObject(body.spec) ? body.spec : {};
  const oldSpec: Obj = isPlainObject(old.spec) ? old.spec : {};
  const lists = ['containers', 'initContainers'];
  if (lists.some((l) => objectsOf(spec[l]).length !== objectsOf(oldSpec[l]).length)) return body;
  const next = { ...oldSpec };
  for (const l of lists) {
    const now = objectsOf(spec[l]);
    const was = objectsOf(oldSpec[l]);
    if (now.length === 0) continue;
    if (now.some((c, i) => c.name !== was[i].name)) {
      next[l] = spec[l];
      continue;
    }
    next[l] = was.map((c, i) => {
      const merged = { ...c };
      setOrDelete(merged, 'resources', now[i].resources);
      setOrDelete(merged, 'resizePolicy', now[i].resizePolicy);
      return merged;
    });
  }
  setOrDelete(next, 'resources', spec.resources);
  return withSpec(old, next, body);
}

/**
 * ValidatePodEphemeralContainersUpdate: the pod's spec valid (its ephemeral containers included);
 * no static pod; every existing ephemeral container still there and unchanged (matched by name:
 * a patch does not keep their order).
 */
function validatePodEphemeralContainersUpdate(pod: Obj, old: Obj): FieldError[] {
  const errs = validatePodSpec(pod.spec, 'spec', pod.metadata);
  if (isMirrorPod(old)) return [wholePodForbidden('static pods do not support ephemeral containers')];
  const now = new Map(objectsOf(pod.spec?.ephemeralContainers).map((c) => [c.name, c]));
  for (const was of objectsOf(old.spec?.ephemeralContainers)) {
    const name = goQuote(typeof was.name === 'string' ? was.name : '');
    const current = now.get(was.name);
    if (current === undefined) errs.push(forbiddenError('spec.ephemeralContainers', `existing ephemeral containers ${name} may not be removed\n`));
    else {
      const changed = specChangeError('spec.ephemeralContainers', `existing ephemeral containers ${name} may not be changed`, 'core.EphemeralContainer', was, current);
      if (changed) errs.push(changed);
    }
  }
  return errs;
}

const restartable = (c: Obj): boolean => c.restartPolicy === 'Always';

/** Whether a resource list (requests or limits) lost a name the old one had (resourcesRemoved). */
function resourcesRemoved(now: unknown, was: unknown): boolean {
  const before = isPlainObject(was) ? Object.keys(was) : [];
  const after = isPlainObject(now) ? now : {};
  return before.some((name) => !Object.hasOwn(after, name));
}

/** validateContainerResize: requests and limits may change, not go away. */
function containerResizeErrors(now: Obj, was: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const resources: Obj = isPlainObject(now.resources) ? now.resources : {};
  const oldResources: Obj = isPlainObject(was.resources) ? was.resources : {};
  if (resourcesRemoved(resources.requests, oldResources.requests)) errs.push(forbiddenError(`${path}.requests`, 'resource requests cannot be removed'));
  if (resourcesRemoved(resources.limits, oldResources.limits)) errs.push(forbiddenError(`${path}.limits`, 'resource limits cannot be removed'));
  return errs;
}

/** dropCPUMemoryResourcesFromContainer: the container with its cpu and memory taken from the old one (lists the old one lacks stay absent). */
function withOldCpuMemory(c: Obj, was: Obj): Obj {
  const merge = (now: unknown, before: unknown): Obj | undefined => {
    if (!isPlainObject(before)) return undefined;
    const out: Obj = { ...(isPlainObject(now) ? now : {}) };
    for (const name of ['cpu', 'memory']) setOrDelete(out, name, before[name]);
    return out;
  };
  const resources: Obj = isPlainObject(c.resources) ? c.resources : {};
  const oldResources: Obj = isPlainObject(was.resources) ? was.resources : {};
  const munged: Obj = {};
  setOrDelete(munged, 'limits', merge(resources.limits, oldResources.limits));
  setOrDelete(munged, 'requests', merge(resources.requests, oldResources.requests));
  return { ...c, resources: munged };
}

/** The resources as a Go ResourceRequirements compares: claims and empty lists are the same as absent ones here. */
function sameContainer(a: Obj, b: Obj): boolean {
  const norm = (c: Obj): Obj => {
    const r: Obj = isPlainObject(c.resources) ? c.resources : {};
    const out: Obj = {};
    for (const k of ['limits', 'requests', 'claims']) if (r[k] !== undefined && r[k] !== null) out[k] = r[k];
    return { ...c, resources: out };
  };
  return semanticEqual(norm(a), norm(b));
}

/**
 * ValidatePodResize: the pod's spec valid; no static or Windows pod; the QoS class unchanged; a
 * node that reports container resources; requests and limits of regular and sidecar containers
 * only changed, never removed; nothing but cpu and memory changed (sidecars alike; other init
 * containers not at all). Pod-level resources may be resized, as with 1.36's default gates.
 */
function validatePodResize(pod: Obj, old: Obj): FieldError[] {
  const errs = validatePodSpec(pod.spec, 'spec', pod.metadata);
  if (isMirrorPod(old)) return [wholePodForbidden('static pods cannot be resized')];
  if (old.spec?.os?.name === 'windows') return [wholePodForbidden('windows pods cannot be resized')];
  const oldQOS = typeof old.status?.qosClass === 'string' && old.status.qosClass !== '' ? old.status.qosClass : podQOSClass(old);
  if (oldQOS !== podQOSClass(pod)) errs.push(invalidError('spec', goQuote(String(pod.status?.qosClass ?? '')), 'Pod QOS Class may not change as a result of resizing'));
  // isPodResizeRequestSupported: a running container without reported resources means a node that cannot resize.
  const running = objectsOf(old.status?.containerStatuses).find((s) => isPlainObject(s.state?.running));
  if (running && (running.resources === undefined || running.resources === null)) errs.push(forbiddenError('spec', 'Pod running on node without support for resize'));
  const spec: Obj = isPlainObject(pod.spec) ? pod.spec : {};
  const oldSpec: Obj = isPlainObject(old.spec) ? old.spec : {};
  const containers = objectsOf(spec.containers);
  const initContainers = objectsOf(spec.initContainers);
  objectsOf(oldSpec.initContainers).forEach((was, i) => {
    if (restartable(was) && initContainers[i]) errs.push(...containerResizeErrors(initContainers[i], was, `spec.initContainers[${i}].resources`));
  });
  objectsOf(oldSpec.containers).forEach((was, i) => {
    if (containers[i]) errs.push(...containerResizeErrors(containers[i], was, `spec.containers[${i}].resources`));
  });
  const munged: Obj = { ...spec };
  if (Array.isArray(spec.containers)) {
    munged.containers = containers.map((c, i) => {
      const was = objectsOf(oldSpec.containers)[i];
      if (!was) return c;
      const kept = withOldCpuMemory(c, was);
      if (!sameContainer(kept, was)) errs.push(forbiddenError('spec', 'only cpu and memory resources are mutable'));
      return was;
    });
  }
  if (Array.isArray(spec.initContainers)) {
    munged.initContainers = initContainers.map((c, i) => {
      const was = objectsOf(oldSpec.initContainers)[i];
      if (!was) return c;
      if (restartable(c)) {
        if (!sameContainer(withOldCpuMemory(c, was), was)) errs.push(forbiddenError('spec', 'only cpu and memory resources for sidecar containers are mutable'));
      } else if (!sameContainer(c, was)) {
        errs.push(forbiddenError('spec', 'resources for non-sidecar init containers are immutable'));
      }
      return was;
    });
  }
  if (errs.length) return errs;
  setOrDelete(munged, 'resources', oldSpec.resources);
  if (!semanticEqual(munged, oldSpec)) errs.push(forbiddenError('spec', 'only cpu and memory resources are mutable'));
  return errs;
}

export const podStrategy: Strategy = {
  validate(pod) {
    const errs = validatePodSpec(pod.spec, 'spec', pod.metadata);
    // ValidatePodCreate: ephemeral containers come only through their subresource.
    if (objectsOf(pod.spec?.ephemeralContainers).length > 0) errs.push(forbiddenError('spec.ephemeralContainers', 'cannot be set on create'));
    return errs;
  },
  validateUpdate(pod, old, subresource) {
    if (subresource === 'ephemeralcontainers') return validatePodEphemeralContainersUpdate(pod, old);
    if (subresource === 'resize') return validatePodResize(pod, old);
    // (a binding sets spec.nodeName, a status write carries the spec over: only a write of the pod itself is checked)
    return [...validatePodSpec(pod.spec, 'spec', pod.metadata), ...(subresource === '' ? validatePodUpdate(pod, old) : [])];
  },
  subresourceUpdate: { ephemeralcontainers: ephemeralContainersUpdate, resize: resizeUpdate },
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
};
