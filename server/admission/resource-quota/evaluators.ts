// What quota counts for each resource: kube's pkg/quota/v1/evaluator/core (pods, services,
// persistentvolumeclaims; configmaps, secrets, replicationcontrollers and resourcequotas as
// object counts with their legacy names) and staging/.../quota/v1/generic (the `count/<resource>.<group>`
// object count of any other resource). The admission plugin asks an evaluator about one object;
// the quota controller sums an evaluator's usage over what a namespace holds.
import { podLimits, podRequests, type PodSpecView } from '../pod-resources.ts';
import { count, quantityOf, type ResourceList, resourceListOf } from './resource-lists.ts';

/** One requirement of a quota's scopes (spec.scopes as Exists, and spec.scopeSelector's). */
export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

export interface EvaluatorAttributes {
  operation: string;
  subresource: string;
  object?: unknown;
  oldObject?: unknown;
}

export interface Evaluator {
  /** The qualified resource it measures ("pods", "deployments.apps"). */
  readonly resource: string;
  /** Whether this write may change what the resource uses (kube's Handles). */
  handles(a: EvaluatorAttributes): boolean;
  /** Those of names it measures (kube's MatchingResources). */
  matchingResources(names: readonly string[]): string[];
  /** Whether the object is in one scope requirement of a quota. */
  matchesScope(scope: ScopeRequirement, obj: unknown): boolean;
  /** What a quota on these resources asks of the object before it is counted; the reason it fails. */
  constraints(required: readonly string[], obj: unknown): string | undefined;
  /** What the object uses. */
  usage(obj: unknown): ResourceList;
}

// ---- pods ----

const POD_RESOURCES = ['count/pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods'];
const POD_RESOURCE_PREFIXES = ['hugepages-', 'requests.hugepages-'];
/** kube's validationSet: quotas on these make every container state them (a mistake kube keeps). */
const VALIDATION_SET = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

interface PodView {
  metadata?: { deletionTimestamp?: unknown; deletionGracePeriodSeconds?: unknown };
  spec?: PodSpecView & {
    activeDeadlineSeconds?: unknown;
    priorityClassName?: unknown;
    affinity?: { podAffinity?: AffinityView; podAntiAffinity?: AffinityView };
  };
  status?: { phase?: unknown; qosClass?: unknown };
}

interface AffinityTermView {
  namespaces?: unknown[];
  namespaceSelector?: unknown;
}

interface AffinityView {
  requiredDuringSchedulingIgnoredDuringExecution?: AffinityTermView[];
  preferredDuringSchedulingIgnoredDuringExecution?: { podAffinityTerm?: AffinityTermView }[];
}

/** helper.IsNativeResource: no domain, or one under kubernetes.io. */
const isNativeResource = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');

/** An extended resource a container may request (IsExtendedResourceName, with its requests.* form for quota). */
function isExtendedResourceName(name: string): boolean {
  return !isNativeResource(name) && !name.startsWith('requests.');
}

/** isExtendedResourceNameForQuota: `requests.<domain>/<name>` (or a device class's implicit one). */
function isExtendedResourceNameForQuota(name: string): boolean {
  const implicit = name.startsWith('requests.deviceclass.resource.kubernetes.io/');
  return (!isNativeResource(name) || implicit) && name.startsWith('requests.');
}

/** podComputeUsageHelper. */
function podComputeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', count(1)]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [r, req] of requests) {
    if (r.startsWith('hugepages-')) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    if (isExtendedResourceName(r)) out.set(`requests.${r}`, req);
  }
  return out;
}

/** QuotaV1Pod: not terminal, and not past its deletion grace period. */
export function podIsCharged(pod: PodView, now = Date.now()): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const deletion = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (typeof deletion === 'string' && typeof grace === 'number') {
    if (Date.parse(deletion) + grace * 1000 < now) return false;
  }
  return true;
}

export const isTerminating = (pod: PodView): boolean => typeof pod.spec?.activeDeadlineSeconds === 'number' && pod.spec.activeDeadlineSeconds >= 0;

/**
 * qos.GetPodQOS == BestEffort: no cpu or memory requested or limited anywhere. Computed from the
 * spec, as kube's status.qosClass is computed after mutating admission (hearth's is computed
 * before it, when the strategy prepares the pod).
 */
function isBestEffort(pod: PodView): boolean {
  const spec = pod.spec ?? {};
  const lists = [spec.resources?.requests, spec.resources?.limits];
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) lists.push(c.resources?.requests, c.resources?.limits);
  for (const list of lists) {
    for (const [name, q] of resourceListOf(list)) if ((name === 'cpu' || name === 'memory') && q.value.num > 0n) return false;
  }
  return true;
}

function usesCrossNamespacePodAffinity(pod: PodView): boolean {
  const cross = (t: AffinityTermView | undefined) => !!t && ((t.namespaces?.length ?? 0) > 0 || (t.namespaceSelector !== undefined && t.namespaceSelector !== null));
  for (const a of [pod.spec?.affinity?.podAffinity, pod.spec?.affinity?.podAntiAffinity]) {
    if (!a) continue;
    if (a.requiredDuringSchedulingIgnoredDuringExecution?.some(cross)) return true;
    if (a.preferredDuringSchedulingIgnoredDuringExecution?.some((w) => cross(w.podAffinityTerm))) return true;
  }
  return false;
}

/** podMatchesSelector: the PriorityClass scope as a label selector on {PriorityClass: name}. */
function priorityClassMatches(pod: PodView, scope: ScopeRequirement): boolean {
  const name = typeof pod.spec?.priorityClassName === 'string' ? pod.spec.priorityClassName : '';
  const values = scope.values ?? [];
  switch (scope.operator) {
    case 'In':
      return name !== '' && values.includes(name);
    case 'NotIn':
      return name === '' || !values.includes(name);
    case 'Exists':
      return name !== '';
    case 'DoesNotExist':
      return name === '';
    default:
      return false;
  }
}

export function podMatchesScope(scope: ScopeRequirement, obj: unknown): boolean {
  const pod = obj as PodView;
  switch (scope.scopeName) {
    case 'Terminating':
      return isTerminating(pod);
    case 'NotTerminating':
      return !isTerminating(pod);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass':
      return priorityClassMatches(pod, scope);
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespacePodAffinity(pod);
    default:
      return false;
  }
}

function intersect(names: readonly string[], known: readonly string[]): string[] {
  return names.filter((n) => known.includes(n));
}

const podEvaluator: Evaluator = {
  resource: 'pods',
  handles(a) {
    if (a.subresource === 'resize') return a.operation === 'UPDATE';
    if (a.subresource !== '') return false;
    // An update is counted again only when it moves the pod between Terminating and NotTerminating.
    if (a.operation === 'UPDATE') return !!a.object && !!a.oldObject && isTerminating(a.oldObject as PodView) !== isTerminating(a.object as PodView);
    return a.operation === 'CREATE';
  },
  matchingResources(names) {
    const out = intersect(names, POD_RESOURCES);
    for (const n of names) {
      if (POD_RESOURCE_PREFIXES.some((p) => n.startsWith(p))) out.push(n);
      if (isExtendedResourceNameForQuota(n)) out.push(n);
    }
    return out;
  },
  matchesScope: podMatchesScope,
  constraints(required, obj) {
    const pod = obj as PodView;
    // Pod-level resources stand for the containers'.
    const podLevel = pod.spec?.resources;
    if (podLevel && (Object.keys(podLevel.requests ?? {}).length || Object.keys(podLevel.limits ?? {}).length)) return undefined;
    const requiredSet = required.filter((r) => VALIDATION_SET.has(r));
    if (requiredSet.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
      const has = podComputeUsage(resourceListOf(c.resources?.requests), resourceListOf(c.resources?.limits));
      for (const r of requiredSet) {
        if (has.has(r)) continue;
        let names = missing.get(r);
        if (!names) missing.set(r, (names = new Set()));
        names.add(String(c.name));
      }
    }
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
  usage(obj) {
    const pod = obj as PodView;
    // count/pods counts every stored pod; the rest only pods not at the end of their life.
    const out: ResourceList = new Map([['count/pods', count(1)]]);
    if (!podIsCharged(pod)) return out;
    for (const [k, v] of podComputeUsage(podRequests(pod.spec, true), podLimits(pod.spec, true))) out.set(k, v);
    return out;
  },
};

// ---- services ----

interface ServiceView {
  spec?: { type?: unknown; ports?: { nodePort?: unknown }[]; allocateLoadBalancerNodePorts?: unknown };
}

const SERVICE_RESOURCES = ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'];

const serviceEvaluator: Evaluator = {
  resource: 'services',
  handles: (a) => a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE'),
  matchingResources: (names) => intersect(names, SERVICE_RESOURCES),
  matchesScope: () => false,
  constraints: () => undefined,
  usage(obj) {
    const spec = (obj as ServiceView).spec ?? {};
    const ports = spec.ports ?? [];
    const out: ResourceList = new Map([
      ['count/services', count(1)],
      ['services', count(1)],
      ['services.loadbalancers', count(0)],
      ['services.nodeports', count(0)],
    ]);
    if (spec.type === 'NodePort') out.set('services.nodeports', count(ports.length));
    else if (spec.type === 'LoadBalancer') {
      // Without node ports allocated, only the ports that name one explicitly.
      const nodePorts = spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => typeof p.nodePort === 'number' && p.nodePort !== 0).length : ports.length;
      out.set('services.nodeports', count(nodePorts));
      out.set('services.loadbalancers', count(1));
    }
    return out;
  },
};

// ---- persistentvolumeclaims ----

interface ClaimView {
  metadata?: { annotations?: Record<string, string> };
  spec?: { storageClassName?: unknown; resources?: { requests?: unknown } };
  status?: { allocatedResources?: unknown };
}

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
const CLAIM_RESOURCES = ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'];
const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** storagehelpers.GetPersistentVolumeClaimClass: the beta annotation first, then the field. */
function claimClass(pvc: ClaimView): string {
  const annotated = pvc.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION];
  if (annotated !== undefined) return annotated;
  return typeof pvc.spec?.storageClassName === 'string' ? pvc.spec.storageClassName : '';
}

const claimEvaluator: Evaluator = {
  resource: 'persistentvolumeclaims',
  handles: (a) => a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE'),
  matchingResources(names) {
    return names.filter((n) => {
      if (CLAIM_RESOURCES.includes(n)) return true;
      const at = n.indexOf(STORAGE_CLASS_SUFFIX);
      if (at <= 0) return false;
      const rest = n.slice(at + STORAGE_CLASS_SUFFIX.length);
      return rest === 'persistentvolumeclaims' || rest === 'requests.storage';
    });
  },
  matchesScope: () => false,
  constraints: () => undefined,
  usage(obj) {
    const pvc = obj as ClaimView;
    const cls = claimClass(pvc);
    const out: ResourceList = new Map([
      ['persistentvolumeclaims', count(1)],
      ['count/persistentvolumeclaims', count(1)],
    ]);
    if (cls) out.set(`${cls}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, count(1));
    // What the claim asks, or what was allocated to it if more (an expansion under way).
    let storage = quantityOf((pvc.spec?.resources?.requests as Record<string, unknown> | undefined)?.storage);
    const allocated = quantityOf((pvc.status?.allocatedResources as Record<string, unknown> | undefined)?.storage);
    if (allocated && (!storage || allocated.value.num * storage.value.den > storage.value.num * allocated.value.den)) storage = allocated;
    if (storage) {
      out.set('requests.storage', storage);
      if (cls) out.set(`${cls}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
    }
    return out;
  },
};

// ---- object counts ----

/** `count/<resource>` for the core group, `count/<resource>.<group>` for the others. */
export const objectCountName = (group: string, resource: string): string => (group ? `count/${resource}.${group}` : `count/${resource}`);

/** generic.NewObjectCountEvaluator: one per object, on create; alias is the legacy name (configmaps, secrets, ...). */
export function objectCountEvaluator(group: string, resource: string, alias?: string): Evaluator {
  const names = alias ? [objectCountName(group, resource), alias] : [objectCountName(group, resource)];
  return {
    resource: group ? `${resource}.${group}` : resource,
    handles: (a) => a.operation === 'CREATE',
    matchingResources: (input) => intersect(input, names),
    matchesScope: () => false,
    constraints: () => undefined,
    usage: () => new Map(names.map((n) => [n, count(1)])),
  };
}

const CORE_EVALUATORS = new Map<string, Evaluator>([
  ['pods', podEvaluator],
  ['services', serviceEvaluator],
  ['persistentvolumeclaims', claimEvaluator],
  ['configmaps', objectCountEvaluator('', 'configmaps', 'configmaps')],
  ['secrets', objectCountEvaluator('', 'secrets', 'secrets')],
  ['replicationcontrollers', objectCountEvaluator('', 'replicationcontrollers', 'replicationcontrollers')],
  ['resourcequotas', objectCountEvaluator('', 'resourcequotas', 'resourcequotas')],
]);

const COUNT_EVALUATORS = new Map<string, Evaluator>();

/** The evaluator of a resource: kube's core ones, else an object count made on first use (as quota admission adds one). */
export function evaluatorFor(group: string, resource: string): Evaluator {
  if (!group) {
    const core = CORE_EVALUATORS.get(resource);
    if (core) return core;
  }
  const key = group ? `${resource}.${group}` : resource;
  let e = COUNT_EVALUATORS.get(key);
  if (!e) COUNT_EVALUATORS.set(key, (e = objectCountEvaluator(group, resource)));
  return e;
}

/** The core evaluators (the quota controller measures these for any quota naming their resources). */
export const coreEvaluators = (): Evaluator[] => [...CORE_EVALUATORS.values()];

/** The resource a `count/<resource>.<group>` name counts; undefined for other names. */
export function countedResource(name: string): { group: string; resource: string } | undefined {
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
}

/** Whether an object is in every scope requirement (no requirements: every object). */
export function matchesScopes(evaluator: Evaluator, scopes: readonly ScopeRequirement[], obj: unknown): boolean {
  for (const s of scopes) if (!evaluator.matchesScope(s, obj)) return false;
  return true;
}

interface QuotaSpecView {
  spec?: { scopes?: unknown[]; scopeSelector?: { matchExpressions?: ScopeRequirement[] } };
}

/** getScopeSelectorsFromQuota: spec.scopes as Exists requirements, then spec.scopeSelector's. */
export function scopesOf(quota: QuotaSpecView): ScopeRequirement[] {
  const out: ScopeRequirement[] = [];
  for (const s of quota.spec?.scopes ?? []) if (typeof s === 'string') out.push({ scopeName: s, operator: 'Exists' });
  for (const r of quota.spec?.scopeSelector?.matchExpressions ?? []) out.push(r);
  return out;
}
