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
import { internalError } from '../../errors.ts';
import { refuse } from './forbidden.ts';
import { evaluatorFor, scopesOf, type Evaluator } from './evaluators.ts';
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
}

/** kube's quota ignores events: they would exhaust a quota on counts. */
const IGNORED_RESOURCES = new Set(['events']);
/** How often a charge lost to a concurrent status write is tried again. */
const MAX_CHARGE_ATTEMPTS = 5;

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
    async validate(a) {
      // Subresources (but a pod's resize), cluster-scoped writes and ignored resources are not counted.
      if ((a.subresource !== '' && a.subresource !== 'resize') || !a.namespace) return;
      if (!deps.quotasIn(a.namespace).length) return;
      if (a.info.group === '' && IGNORED_RESOURCES.has(a.info.resource)) return;
      const evaluator = evaluatorFor(a.info.group, a.info.resource);
      if (!evaluator.handles(a)) return;
      await serialized(a.namespace, async () => {
        let pending: Set<string> | undefined;
        for (let attempt = 0; attempt < MAX_CHARGE_ATTEMPTS; attempt++) {
          const quotas = deps.quotasIn(a.namespace).filter((q) => !pending || pending.has(q.metadata.name));
          const charges = checkRequest(quotas, a, evaluator);
          if (a.dryRun || charges.length === 0) return;
          const lost = new Set<string>();
          for (const { quota, used } of charges) {
            if (!(await deps.writeUsed(quota, resourceListJson(used)))) lost.add(quota.metadata.name);
          }
          if (lost.size === 0) return;
          pending = lost;
        }
        throw internalError(`resource quota evaluation timed out`);
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
export function checkRequest(quotas: readonly QuotaView[], a: AdmissionAttributes, evaluator: Evaluator): Charge[] {
  const obj = a.object;
  const covering: { quota: QuotaView; hard: ResourceList }[] = [];
  for (const quota of quotas) {
    const hard = resourceListOf(quota.status?.hard);
    const hardNames = [...hard.keys()];
    const restricted = evaluator.matchingResources(hardNames);
    if (restricted.length === 0) continue;
    if (!scopesOf(quota as never).every((s) => evaluator.matchesScope(s, obj))) continue;
    const unmet = evaluator.constraints(restricted, obj);
    if (unmet) throw refuse(a, `failed quota: ${quota.metadata.name}: ${unmet}`);
    const used = (quota.status?.used ?? {}) as Record<string, unknown>;
    const unknown = restricted.filter((r) => hard.has(r) && !(r in used));
    if (unknown.length) throw refuse(a, `status unknown for quota: ${quota.metadata.name}, resources: ${[...new Set(restricted)].sort().join(',')}`);
    covering.push({ quota, hard });
  }
  if (covering.length === 0) return [];

  let delta = evaluator.usage(obj);
  const negative = negativeNames(delta);
  if (negative.length) throw refuse(a, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);
  if (a.operation === 'UPDATE') {
    const old = a.oldObject as { metadata?: { resourceVersion?: unknown } } | undefined;
    if (!old) throw refuse(a, 'unable to get previous usage since prior version of object was not found');
    // Not a create-on-update: only what the update adds is charged.
    if (old.metadata?.resourceVersion) delta = subtractNonNegative(delta, evaluator.usage(old));
  }
  delta = removeZeros(delta);
  if (delta.size === 0) return [];

  const charges: Charge[] = [];
  for (const { quota, hard } of covering) {
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
