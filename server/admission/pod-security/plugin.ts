// PodSecurity: the Pod Security Standards enforced by namespace labels, as kube-apiserver's
// built-in plugin (plugin/pkg/admission/security/podsecurity, delegating to
// staging/src/k8s.io/pod-security-admission/admission/admission.go). A validating plugin:
// - pods (create, update, and subresources other than kube's ignored ones) are refused when they
//   break the namespace's enforce level:version, warned when they break its warn level, and get
//   audit annotations for its audit level;
// - pod templates (deployments, jobs, …) are only warned and audited, never refused;
// - namespaces: bad policy labels are refused; raising the enforce level warns about the pods
//   already there that break it.
// Namespace labels come from the in-memory namespace index, so a pod write reads no row.
import type { AdmissionAttributes, AdmissionPlugin } from '../types.ts';
import { ApiError, forbidden, internalError, invalid } from '../../errors.ts';
import {
  AUDIT_ANNOTATION_PREFIX,
  AUDIT_LEVEL_LABEL,
  AUDIT_VERSION_LABEL,
  AUDIT_VIOLATIONS_ANNOTATION,
  ENFORCE_LEVEL_LABEL,
  ENFORCE_VERSION_LABEL,
  ENFORCED_POLICY_ANNOTATION,
  EXEMPT_ANNOTATION,
  LATEST,
  WARN_LEVEL_LABEL,
  WARN_VERSION_LABEL,
  compareLevels,
  equivalentPolicies,
  fullyPrivileged,
  levelVersionString,
  policyToEvaluate,
  sameLevelVersion,
  type LevelVersion,
  type Policy,
} from './api.ts';
import { Evaluator, aggregate, forbiddenDetail, forbiddenReason, type AggregateResult, type Container, type PodMeta, type PodSpec } from './checks.ts';
import { InvalidPodSecurityConfiguration, defaultConfiguration, parsePodSecurityConfiguration, type PodSecurityConfiguration } from './config.ts';
import { fieldErrorsText } from '../../validation/field.ts';

export interface PodSecurityLookups {
  /** A namespace's labels, undefined when it does not exist (the namespace index, no database read). */
  namespaceLabels(name: string): Readonly<Record<string, string>> | undefined;
  /** The pods of a namespace, read when its enforce level is raised. */
  listPods(namespace: string): unknown[];
}

/** kube's ignoredPodSubresources: every other pod subresource carries a Pod and is evaluated. */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** kube's defaultPodSpecResources (besides pods): where each keeps its pod template. */
const POD_TEMPLATE_OF: ReadonlyMap<string, (o: Record<string, unknown>) => unknown> = new Map([
  ['/podtemplates', (o) => o.template],
  ['/replicationcontrollers', (o) => spec(o)?.template],
  ['apps/replicasets', (o) => spec(o)?.template],
  ['apps/deployments', (o) => spec(o)?.template],
  ['apps/statefulsets', (o) => spec(o)?.template],
  ['apps/daemonsets', (o) => spec(o)?.template],
  ['batch/jobs', (o) => spec(o)?.template],
  ['batch/cronjobs', (o) => spec(asObject(spec(o)?.jobTemplate))?.template],
]);

/** kube's defaultNamespaceMaxPodsToCheck and defaultNamespacePodCheckTimeout. */
const NAMESPACE_MAX_PODS_TO_CHECK = 3000;
const NAMESPACE_POD_CHECK_TIMEOUT_MS = 1000;

function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
function spec(o: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return asObject(o?.spec);
}

interface Verdict {
  error?: ApiError;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

const allowed = (): Verdict => ({ warnings: [], auditAnnotations: {} });
/** The answers that carry nothing of the request, shared (kube's shared responses); never changed. */
const EXEMPT: Readonly<Record<'namespace' | 'user' | 'runtimeClass', Verdict>> = {
  namespace: { warnings: [], auditAnnotations: { [EXEMPT_ANNOTATION]: 'namespace' } },
  user: { warnings: [], auditAnnotations: { [EXEMPT_ANNOTATION]: 'user' } },
  runtimeClass: { warnings: [], auditAnnotations: { [EXEMPT_ANNOTATION]: 'runtimeClass' } },
};
const exempt = (by: 'namespace' | 'user' | 'runtimeClass'): Verdict => EXEMPT[by];
const PRIVILEGED: Verdict = { warnings: [], auditAnnotations: { [ENFORCED_POLICY_ANNOTATION]: levelVersionString({ level: 'privileged', version: LATEST }) } };
/** The resources whose pod templates are looked at, by resource name: most writes stop here. */
const POD_TEMPLATE_RESOURCES = new Set([...POD_TEMPLATE_OF.keys()].map((k) => k.slice(k.indexOf('/') + 1)));

/**
 * The plugin from --admission-control-config-file's PodSecurity configuration (undefined: none),
 * refusing a bad one at start as kube-apiserver's admission initialization words it.
 */
export function podSecurityFromConfiguration(lookups: PodSecurityLookups, raw: unknown): AdmissionPlugin {
  let config: PodSecurityConfiguration;
  try {
    config = parsePodSecurityConfiguration(raw);
  } catch (e) {
    const message = (e as Error).message;
    if (e instanceof InvalidPodSecurityConfiguration) throw new Error(`failed to initialize admission plugin "PodSecurity": ${message}`);
    throw new Error(`couldn't init admission plugin "PodSecurity": ${message}`);
  }
  return podSecurity(lookups, config);
}

export function podSecurity(lookups: PodSecurityLookups, config: PodSecurityConfiguration = defaultConfiguration(), evaluator = new Evaluator()): AdmissionPlugin {
  const core = new PodSecurityAdmission(lookups, config, evaluator);
  return {
    name: 'PodSecurity',
    validate(a: AdmissionAttributes) {
      const { group, resource } = a.info;
      let verdict: Verdict | undefined;
      if (group === '' && resource === 'pods') verdict = core.validatePod(a);
      else if (group === '' && resource === 'namespaces') verdict = core.validateNamespace(a);
      else if (POD_TEMPLATE_RESOURCES.has(resource)) {
        const templateOf = POD_TEMPLATE_OF.get(`${group}/${resource}`);
        if (templateOf) verdict = core.validatePodController(a, templateOf);
      }
      if (!verdict) return;
      for (const w of verdict.warnings) a.warn(w);
      for (const [k, v] of Object.entries(verdict.auditAnnotations)) a.addAuditAnnotation(AUDIT_ANNOTATION_PREFIX + k, v);
      if (verdict.error) throw verdict.error;
    },
  };
}

/** kube's podsecurity Admission: each method answers one request with a Verdict. */
export class PodSecurityAdmission {
  constructor(
    private readonly lookups: PodSecurityLookups,
    private readonly config: PodSecurityConfiguration,
    private readonly evaluator: Evaluator,
  ) {}

  /** Policies of the namespace index's labels, by their (frozen, replaced on change) object. */
  private readonly policies = new WeakMap<object, ReturnType<typeof policyToEvaluate>>();

  private policyOf(labels: Readonly<Record<string, string>> | undefined): ReturnType<typeof policyToEvaluate> {
    if (!labels || !Object.isFrozen(labels)) return policyToEvaluate(labels, this.config.defaults);
    let p = this.policies.get(labels);
    if (!p) this.policies.set(labels, (p = policyToEvaluate(labels, this.config.defaults)));
    return p;
  }

  validateNamespace(a: AdmissionAttributes): Verdict | undefined {
    if (a.subresource || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return undefined;
    const ns = asObject(a.object);
    const labels = labelsOf(ns);
    const name = String(asObject(ns?.metadata)?.name ?? a.name);
    const { policy, errors } = this.policyOf(labels);
    if (a.operation === 'CREATE') {
      if (errors.length) return { ...allowed(), error: invalid('', 'Namespace', a.name || name, errors) };
      // (kube's create handler gives a namespace's create its own name as the request's namespace)
      return this.exemptNamespaceVerdict(name, policy, labels);
    }
    const old = this.policyOf(labelsOf(asObject(a.oldObject)));
    // Labels that were already bad may stay; new or changed bad labels are refused.
    if (errors.length && (!old.errors.length || fieldErrorsText(errors) !== fieldErrorsText(old.errors))) {
      return { ...allowed(), error: invalid('', 'Namespace', a.name || name, errors) };
    }
    const next = policy.enforce;
    const prev = old.policy.enforce;
    if (sameLevelVersion(next, prev) || next.level === 'privileged') return undefined;
    if (next.version === prev.version && compareLevels(next.level, prev.level) < 1) return undefined;
    if (this.config.exemptions.namespaces.has(name)) return this.exemptNamespaceVerdict(name, policy, labels);
    return { ...allowed(), warnings: this.evaluatePodsInNamespace(name, next) };
  }

  /** kube's exemptNamespaceWarning: a non-privileged policy set on an exempt namespace is ignored, and said so. */
  private exemptNamespaceVerdict(name: string, policy: Policy, labels: Readonly<Record<string, string>> | undefined): Verdict | undefined {
    if (!this.config.exemptions.namespaces.has(name)) return undefined;
    if (fullyPrivileged(policy) || equivalentPolicies(policy, this.config.defaults)) return undefined;
    const has = (l: string): boolean => labels?.[l] !== undefined;
    const parts: string[] = [];
    if (policy.enforce.level !== 'privileged' && (has(ENFORCE_LEVEL_LABEL) || has(ENFORCE_VERSION_LABEL))) parts.push(`enforce=${levelVersionString(policy.enforce)}`);
    if (policy.audit.level !== 'privileged' && (has(AUDIT_LEVEL_LABEL) || has(AUDIT_VERSION_LABEL))) parts.push(`audit=${levelVersionString(policy.audit)}`);
    if (policy.warn.level !== 'privileged' && (has(WARN_LEVEL_LABEL) || has(WARN_VERSION_LABEL))) parts.push(`warn=${levelVersionString(policy.warn)}`);
    return { ...allowed(), warnings: [`namespace ${JSON.stringify(name)} is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`] };
  }

  validatePod(a: AdmissionAttributes): Verdict | undefined {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return undefined;
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource)) return undefined;
    if (this.config.exemptions.namespaces.has(a.namespace)) return exempt('namespace');
    if (a.user.name && this.config.exemptions.usernames.has(a.user.name)) return exempt('user');
    const labels = this.lookups.namespaceLabels(a.namespace);
    if (labels === undefined) return { ...allowed(), error: internalError(`failed to lookup namespace ${JSON.stringify(a.namespace)}`) };
    const { policy, errors } = this.policyOf(labels);
    if (!errors.length && fullyPrivileged(policy)) return PRIVILEGED;
    const pod = asObject(a.object) ?? {};
    if (a.operation === 'UPDATE' && !isSignificantPodUpdate(pod, asObject(a.oldObject) ?? {})) return undefined;
    return this.evaluatePod(policy, errors.length ? fieldErrorsText(errors) : undefined, (asObject(pod.metadata) ?? {}) as PodMeta, (asObject(pod.spec) ?? {}) as PodSpec, a, true);
  }

  validatePodController(a: AdmissionAttributes, templateOf: (o: Record<string, unknown>) => unknown): Verdict | undefined {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return undefined;
    if (a.subresource) return undefined;
    if (this.config.exemptions.namespaces.has(a.namespace)) return exempt('namespace');
    if (a.user.name && this.config.exemptions.usernames.has(a.user.name)) return exempt('user');
    const labels = this.lookups.namespaceLabels(a.namespace);
    if (labels === undefined) return { ...allowed(), auditAnnotations: { error: `failed to lookup namespace ${JSON.stringify(a.namespace)}: namespace ${JSON.stringify(a.namespace)} not found` } };
    const { policy, errors } = this.policyOf(labels);
    if (!errors.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return undefined;
    const template = asObject(templateOf(asObject(a.object) ?? {}));
    if (!template) return undefined; // a controller without a pod template (an RC may have none)
    return this.evaluatePod(policy, errors.length ? fieldErrorsText(errors) : undefined, (asObject(template.metadata) ?? {}) as PodMeta, (asObject(template.spec) ?? {}) as PodSpec, a, false);
  }

  /** kube's EvaluatePod: enforce (pods only), then audit, then warn unless refused; equal level:versions evaluated once. */
  private evaluatePod(policy: Policy, policyError: string | undefined, meta: PodMeta, podSpec: PodSpec, a: AdmissionAttributes, enforce: boolean): Verdict {
    if (podSpec.runtimeClassName && this.config.exemptions.runtimeClasses.has(podSpec.runtimeClassName)) return exempt('runtimeClass');
    const verdict = allowed();
    if (policyError) verdict.auditAnnotations.error = `Failed to parse policy: ${policyError}`;
    const cache: { lv: LevelVersion; result: AggregateResult }[] = [];
    const evaluate = (lv: LevelVersion): AggregateResult => {
      const hit = cache.find((c) => sameLevelVersion(c.lv, lv));
      if (hit) return hit.result;
      const result = aggregate(this.evaluator.evaluatePod(lv, meta, podSpec));
      cache.push({ lv, result });
      return result;
    };
    if (enforce) {
      verdict.auditAnnotations[ENFORCED_POLICY_ANNOTATION] = levelVersionString(policy.enforce);
      const result = evaluate(policy.enforce);
      if (!result.allowed) verdict.error = forbidden(a.info.group, a.info.resource, requestName(a), `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${forbiddenDetail(result)}`);
    }
    const audit = evaluate(policy.audit);
    if (!audit.allowed) verdict.auditAnnotations[AUDIT_VIOLATIONS_ANNOTATION] = `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${forbiddenDetail(audit)}`;
    if (!verdict.error) {
      const warn = evaluate(policy.warn);
      if (!warn.allowed) verdict.warnings.push(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${forbiddenDetail(warn)}`);
    }
    return verdict;
  }

  /** kube's EvaluatePodsInNamespace: one warning per distinct set of reasons, named by its first pod. */
  evaluatePodsInNamespace(namespace: string, enforce: LevelVersion): string[] {
    const deadline = Date.now() + NAMESPACE_POD_CHECK_TIMEOUT_MS;
    const pods = this.prioritizePods(this.lookups.listPods(namespace));
    const total = pods.length;
    const toCheck = pods.slice(0, NAMESPACE_MAX_PODS_TO_CHECK);
    let checked = toCheck.length;
    const reasons: string[] = [];
    const counts = new Map<string, { podName: string; count: number }>();
    for (let i = 0; i < toCheck.length; i++) {
      const pod = toCheck[i];
      const podName = String(asObject(pod.metadata)?.name ?? '');
      const r = aggregate(this.evaluator.evaluatePod(enforce, (asObject(pod.metadata) ?? {}) as PodMeta, (asObject(pod.spec) ?? {}) as PodSpec));
      if (!r.allowed) {
        const reason = forbiddenReason(r);
        const c = counts.get(reason);
        if (!c) {
          counts.set(reason, { podName, count: 1 });
          reasons.push(reason);
        } else {
          if (podName < c.podName) c.podName = podName;
          c.count++;
        }
      }
      if (Date.now() > deadline) {
        checked = i + 1;
        break;
      }
    }
    const warnings: string[] = [];
    if (checked < total) warnings.push(`new PodSecurity enforce level only checked against the first ${checked} of ${total} existing pods`);
    if (reasons.length) warnings.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`);
    const decorated = reasons.map((reason) => {
      const c = counts.get(reason)!;
      if (c.count === 1) return `${c.podName}: ${reason}`;
      if (c.count === 2) return `${c.podName} (and 1 other pod): ${reason}`;
      return `${c.podName} (and ${c.count - 1} other pods): ${reason}`;
    });
    decorated.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    return [...warnings, ...decorated];
  }

  /** kube's prioritizePods: exempt runtime classes out; one pod per controller first, its siblings after. */
  private prioritizePods(raw: unknown[]): Record<string, unknown>[] {
    const first: Record<string, unknown>[] = [];
    const duplicates: Record<string, unknown>[] = [];
    const seenControllers = new Set<string>();
    for (const item of raw) {
      const pod = asObject(item);
      if (!pod) continue;
      const runtimeClass = asObject(pod.spec)?.runtimeClassName;
      if (typeof runtimeClass === 'string' && runtimeClass && this.config.exemptions.runtimeClasses.has(runtimeClass)) continue;
      const owners = asObject(pod.metadata)?.ownerReferences;
      const controller = Array.isArray(owners) ? owners.map(asObject).find((o) => o?.controller === true) : undefined;
      if (!controller) first.push(pod);
      else if (seenControllers.has(String(controller.uid))) duplicates.push(pod);
      else {
        seenControllers.add(String(controller.uid));
        first.push(pod);
      }
    }
    return [...first, ...duplicates];
  }
}

/**
 * The name kube's refusal gives: the request's; a create from generateName has none yet (its
 * admission attributes are made before the name is), and kube's refusal names the prefix.
 */
function requestName(a: AdmissionAttributes): string {
  if (a.name) return a.name;
  const meta = asObject(asObject(a.object)?.metadata);
  if (typeof meta?.generateName === 'string' && meta.generateName) return meta.generateName;
  return typeof meta?.name === 'string' ? meta.name : '';
}

function labelsOf(o: Record<string, unknown> | undefined): Readonly<Record<string, string>> | undefined {
  return asObject(asObject(o?.metadata)?.labels) as Readonly<Record<string, string>> | undefined;
}

/** kube's isSignificantPodUpdate: only a change of containers, images or seccomp annotations is evaluated again. */
function isSignificantPodUpdate(pod: Record<string, unknown>, oldPod: Record<string, unknown>): boolean {
  const s = (asObject(pod.spec) ?? {}) as PodSpec;
  const o = (asObject(oldPod.spec) ?? {}) as PodSpec;
  const ann = (asObject(asObject(pod.metadata)?.annotations) ?? {}) as Record<string, string>;
  const oldAnn = (asObject(asObject(oldPod.metadata)?.annotations) ?? {}) as Record<string, string>;
  const significant = (c: Container, oc: Container): boolean => {
    if (c.image !== oc.image) return true;
    const key = `container.seccomp.security.alpha.kubernetes.io/${c.name ?? ''}`;
    return ann[key] !== oldAnn[key];
  };
  const containers = s.containers ?? [];
  const oldContainers = o.containers ?? [];
  const inits = s.initContainers ?? [];
  const oldInits = o.initContainers ?? [];
  if (containers.length !== oldContainers.length || inits.length !== oldInits.length) return true;
  if (containers.some((c, i) => significant(c, oldContainers[i]))) return true;
  if (inits.some((c, i) => significant(c, oldInits[i]))) return true;
  for (const c of s.ephemeralContainers ?? []) {
    const oc = (o.ephemeralContainers ?? []).find((x) => x.name === c.name);
    if (!oc || significant(c, oc)) return true;
  }
  return false;
}
