// ResourceQuota (kube's staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota, on by
// default and last in the chain): a write that adds to what a namespace uses is checked against
// every ResourceQuota of the namespace that covers it (its resources and scopes), refused with
// kube's "exceeded quota" message when it would go past a hard limit, and charged: the quota's
// status.used is raised in admission, before the object is stored, as kube's quota evaluator does
// (the quota controller, controllers/resource-quota.ts, later measures it again from what is
// stored, which releases what deletes and failed writes leave). Checks and charges of one
// namespace run one at a time (kube's per-namespace queue); a charge lost to a concurrent status
// write is checked again against the new status. A dry run is checked and charges nothing.
import type { AdmissionAttributes, AdmissionPlugin } from '../types.ts';
import { ApiError, conflict } from '../../errors.ts';
import type { LimitedResource } from './config.ts';
import { newForbidden as refuse } from '../forbidden.ts';
import { evaluatorFor, scopesOf, type Evaluator, type ScopeRequirement } from './evaluators.ts';
import {
  addLists,
  equalLists,
  lessThanOrEqual,
  mask,
  negativeNames,
  prettyPrint,
  removeZeros,
  resourceListJson,
  resourceListOf,
  subtractNonNegative,
  type ResourceList,
} from './resource-lists.ts';

export interface QuotaView {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: { hard?: unknown; scopes?: unknown[]; scopeSelector?: unknown };
  status?: { hard?: unknown; used?: unknown };
}

export interface ResourceQuotaDeps {
  /** The namespace's ResourceQuotas, as last committed. */
  quotasIn(namespace: string): readonly QuotaView[];
  /**
   * Writes status.used of the quota as it was read (conditional on its resourceVersion);
   * false when it changed meanwhile (a 409), so the charge is checked again.
   */
  writeUsed(quota: QuotaView, used: Record<string, string>): Promise<boolean>;
  /** --admission-control-config-file's limitedResources (none by default). */
  limited?: readonly LimitedResource[];
}

/** kube's quota ignores events: they would exhaust a quota on counts. */
const IGNORED_RESOURCES = new Set(['events']);
/** How often a charge is tried, when lost to a concurrent status write (kube: once and 3 retries). */
const MAX_CHARGE_ATTEMPTS = 4;

export function resourceQuota(deps: ResourceQuotaDeps): AdmissionPlugin {
  const namespaceTails = new Map<string, Promise<void>>();

  /** Runs fn after the namespace's earlier checks, one at a time (kube's per-namespace work queue). */
  async function serialized(ns: string, fn: () => Promise<void>): Promise<void> {
    const before = namespaceTails.get(ns) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    namespaceTails.set(ns, tail);
    await before;
    try {
      await fn();
    } finally {
      release();
      if (namespaceTails.get(ns) === tail) namespaceTails.delete(ns);
    }
  }

  return {
    name: 'ResourceQuota',
    // Synchronous (no promise) for every write it does not count: the chain stays synchronous.
    validate(a) {
      // Subresources (but a pod's resize), cluster-scoped writes and ignored resources are not counted.
      if ((a.subresource !== '' && a.subresource !== 'resize') || !a.namespace) return;
      const limited = deps.limited ?? [];
      if (!deps.quotasIn(a.namespace).length && limited.length === 0) return;
      if (a.info.group === '' && IGNORED_RESOURCES.has(a.info.resource)) return;
      const evaluator = evaluatorFor(a.info.group, a.info.resource);
      if (!evaluator.handles(a)) return;
      // A refusal, or nothing to charge (no quota covers it, a dry run), is known at once; a
      // charge is checked again in the namespace's turn.
      if (checkRequest(deps.quotasIn(a.namespace), a, evaluator, limited).length === 0 || a.dryRun) return;
      return serialized(a.namespace, async () => {
        let pending: Set<string> | undefined;
        for (let attempt = 0; attempt < MAX_CHARGE_ATTEMPTS; attempt++) {
          const quotas = deps.quotasIn(a.namespace).filter((q) => !pending || pending.has(q.metadata.name));
          const charges = checkRequest(quotas, a, evaluator, limited);
          if (a.dryRun || charges.length === 0) return;
          const lost = new Set<string>();
          for (const { quota, used } of charges) {
            if (!(await deps.writeUsed(quota, resourceListJson(used)))) lost.add(quota.metadata.name);
          }
          if (lost.size === 0) return;
          pending = lost;
        }
        // kube's answer when its retries are spent: the last status write's conflict.
        throw conflict('', 'resourcequotas', [...(pending ?? [])][0] ?? '', 'the object has been modified; please apply your changes to the latest version and try again');
      });
    },
  };
}

export interface Charge {
  quota: QuotaView;
  /** The quota's status.used with this request counted. */
  used: ResourceList;
}

/**
 * kube's CheckRequest: the quotas that cover the request (their hard resources include one the
 * evaluator measures, and the object is in their scopes) must hold what it adds (on an update,
 * what it adds over the old object); returns the charges to write, or throws the refusal.
 */
export function checkRequest(quotas: readonly QuotaView[], a: AdmissionAttributes, evaluator: Evaluator, limited: readonly LimitedResource[] = []): Charge[] {
  const obj = a.object;
  // The configuration's limited scopes this object is in, and the resources it must find a quota for.
  const limitedScopes = limited.flatMap((l) => l.matchScopes.filter((s) => evaluator.matchesScope(s, obj)));
  const limitedHere = limited.filter((l) => l.apiGroup === a.info.group && l.resource === a.info.resource);
  const limitedNames = new Set<string>();
  if (limitedHere.length) {
    for (const [name, q] of evaluator.usage(obj)) {
      if (q.value.num > 0n && limitedHere.some((l) => l.matchContains.some((m) => name.includes(m)))) limitedNames.add(name);
    }
  }
  const covering: { quota: QuotaView; hard: ResourceList }[] = [];
  const restrictedNames = new Set<string>();
  const restrictedScopes: ScopeRequirement[] = [];
  for (const quota of quotas) {
    const scopes = scopesOf(quota as never);
    restrictedScopes.push(...scopes.filter((s) => evaluator.matchesScope(s, obj)));
    const hard = resourceListOf(quota.status?.hard);
    const hardNames = [...hard.keys()];
    const restricted = evaluator.matchingResources(hardNames);
    if (restricted.length === 0) continue;
    if (!scopes.every((s) => evaluator.matchesScope(s, obj))) continue;
    const unmet = evaluator.constraints(restricted, obj);
    if (unmet) throw refuse(a, `failed quota: ${quota.metadata.name}: ${unmet}`);
    const used = (quota.status?.used ?? {}) as Record<string, unknown>;
    const unknown = restricted.filter((r) => hard.has(r) && !(r in used));
    if (unknown.length) throw refuse(a, `status unknown for quota: ${quota.metadata.name}, resources: ${[...new Set(restricted)].sort().join(',')}`);
    covering.push({ quota, hard });
    for (const r of restricted) restrictedNames.add(r);
  }

  const input = evaluator.usage(obj);
  const negative = negativeNames(input);
  if (negative.length) throw refuse(a, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);
  // What each quota is charged: all the object uses, or on an update (not a create-on-update)
  // what it adds over the old object, where the old object was in the quota's scopes too.
  let overOld: ResourceList | undefined;
  const old = a.oldObject as { metadata?: { resourceVersion?: unknown } } | undefined;
  if (a.operation === 'UPDATE') {
    if (!old) throw refuse(a, 'unable to get previous usage since prior version of object was not found');
    if (old.metadata?.resourceVersion) overOld = subtractNonNegative(input, evaluator.usage(old));
  }

  const deltas = covering.map(({ quota }) => removeZeros(overOld && scopesOf(quota as never).every((s) => evaluator.matchesScope(s, old)) ? overOld : input));
  // Nothing added: nothing to check (kube's short cut, before the limited resources).
  if (covering.length ? deltas.every((d) => d.size === 0) : removeZeros(overOld ?? input).size === 0) return [];
  const uncovered = [...limitedNames].filter((n) => !restrictedNames.has(n)).sort();
  if (uncovered.length) throw refuse(a, `insufficient quota to consume: ${uncovered.join(',')}`);
  const uncoveredScopes = limitedScopes.filter((l) => !restrictedScopes.some((r) => r.scopeName === l.scopeName));
  // (kube returns this one as a plain error: a 500 with no reason)
  if (uncoveredScopes.length) throw new ApiError(500, '', `insufficient quota to match these scopes: [${uncoveredScopes.map((r) => `{${r.scopeName} ${r.operator} [${(r.values ?? []).join(' ')}]}`).join(' ')}]`);

  const charges: Charge[] = [];
  for (const [i, { quota, hard }] of covering.entries()) {
    const delta = deltas[i];
    if (delta.size === 0) continue;
    const used = resourceListOf(quota.status?.used);
    const requested = mask(delta, hard.keys());
    const newUsed = addLists(used, requested);
    const { allowed, exceeded } = lessThanOrEqual(mask(newUsed, requested.keys()), hard);
    if (!allowed) {
      throw refuse(
        a,
        `exceeded quota: ${quota.metadata.name}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(used, exceeded))}, limited: ${prettyPrint(mask(hard, exceeded))}`,
      );
    }
    // (a quota this request leaves as it was needs no write)
    if (!equalLists(newUsed, used)) charges.push({ quota, used: newUsed });
  }
  return charges;
}
