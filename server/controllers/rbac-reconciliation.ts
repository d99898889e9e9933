// kube's RBAC reconciliation (pkg/registry/rbac/reconciliation: computeReconciledRole,
// computeReconciledRoleBinding) and its rule comparison (pkg/registry/rbac/validation
// policy_comparator.go: Covers, BreakdownRule, ruleCovers), as the bootstrap post-start hook and
// `kubectl auth reconcile` use them. Pure: it says what to write, rbac-bootstrap.ts writes it.
// In the union mode (the hook's): labels and annotations the object lacks are added, rules it does
// not cover are appended (broken down, one verb/resource/name each, as kube appends them), missing
// aggregation selectors and subjects are appended; nothing of the user's is taken away. An
// object whose autoupdate annotation is "false" is protected: the caller leaves it alone.
import { isDeepStrictEqual } from 'node:util';

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface RbacObject {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: unknown[] } | null;
  roleRef?: { apiGroup?: string; kind?: string; name?: string };
  subjects?: unknown[] | null;
  [k: string]: unknown;
}

export type ReconcileOperation = 'none' | 'create' | 'update' | 'recreate';

export interface RoleReconcileResult {
  /** The object to write (a copy of the existing one, changed), or the expected one to create. */
  object: RbacObject;
  operation: ReconcileOperation;
  /** autoupdate "false": kube's hook writes nothing and warns if something was missing. */
  protected: boolean;
  missingRules: PolicyRule[];
}

export interface BindingReconcileResult {
  object: RbacObject;
  operation: ReconcileOperation;
  protected: boolean;
  missingSubjects: unknown[];
}

const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const has = (set: readonly string[] | undefined, item: string) => (set ?? []).includes(item);
const hasAll = (set: readonly string[] | undefined, items: readonly string[] | undefined) => (items ?? []).every((i) => has(set, i));

/** BreakdownRule: one rule per API group × resource × verb (× resource name), then per URL × verb. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        if (rule.resourceNames?.length) {
          for (const name of rule.resourceNames) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        } else {
          out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

// A resource list covers another: "*", each one exactly, or "*/" and the subresource.
function resourceCoversAll(set: readonly string[] | undefined, covers: readonly string[] | undefined): boolean {
  if (has(set, '*') || hasAll(set, covers)) return true;
  for (const path of covers ?? []) {
    if (has(set, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!has(set, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

const nonResourceURLCovers = (owner: string, sub: string) => owner === sub || (owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, '')));
const nonResourceURLsCoverAll = (set: readonly string[] | undefined, covers: readonly string[] | undefined) => (covers ?? []).every((p) => (set ?? []).some((o) => nonResourceURLCovers(o, p)));

/** ruleCovers: the owner rule allows everything the (broken-down) sub rule does. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = nonResourceURLsCoverAll(owner.nonResourceURLs, sub.nonResourceURLs);
  const names = !sub.resourceNames?.length ? !owner.resourceNames?.length : !owner.resourceNames?.length || hasAll(owner.resourceNames, sub.resourceNames);
  return verbs && groups && resources && names && urls;
}

/** Covers: whether the owner's rules allow all the servant's, and the broken-down rules they do not. */
export function covers(ownerRules: readonly PolicyRule[], servantRules: readonly PolicyRule[]): { covered: boolean; uncovered: PolicyRule[] } {
  const uncovered: PolicyRule[] = [];
  for (const servant of servantRules) {
    for (const sub of breakdownRule(servant)) if (!ownerRules.some((o) => ruleCovers(o, sub))) uncovered.push(sub);
  }
  return { covered: uncovered.length === 0, uncovered };
}

/** kube's merge(expected, existing): the existing values win, the expected keys are added. */
function merge(expected: Record<string, string> | undefined, existing: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!expected && !existing) return undefined;
  return { ...(expected ?? {}), ...(existing ?? {}) };
}

const sameMap = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) => isDeepStrictEqual(a ?? null, b ?? null);
const isProtected = (o: RbacObject) => o.metadata.annotations?.[AUTOUPDATE] === 'false';

/** Labels and annotations: the expected ones added. Whether that changed anything. */
function reconcileMetadata(result: RbacObject, existing: RbacObject, expected: RbacObject): boolean {
  const labels = merge(expected.metadata.labels, existing.metadata.labels);
  const annotations = merge(expected.metadata.annotations, existing.metadata.annotations);
  if (labels) result.metadata.labels = labels;
  if (annotations) result.metadata.annotations = annotations;
  return !sameMap(labels, existing.metadata.labels) || !sameMap(annotations, existing.metadata.annotations);
}

/** The selectors of `servant` that `owner` lacks (equal ones cover). */
function missingSelectors(owner: RbacObject['aggregationRule'], servant: RbacObject['aggregationRule']): unknown[] {
  const have = owner?.clusterRoleSelectors ?? [];
  return (servant?.clusterRoleSelectors ?? []).filter((s) => !have.some((h) => isDeepStrictEqual(h, s)));
}

/** computeReconciledRole in the union mode (removeExtraPermissions false), or a create when there is none. */
export function reconcileRole(existing: RbacObject | undefined, expected: RbacObject): RoleReconcileResult {
  if (!existing) return { object: structuredClone(expected), operation: 'create', protected: false, missingRules: [...(expected.rules ?? [])] };
  const object = structuredClone(existing);
  let operation: ReconcileOperation = reconcileMetadata(object, existing, expected) ? 'update' : 'none';
  const missingRules = covers(existing.rules ?? [], expected.rules ?? []).uncovered;
  if (missingRules.length) {
    object.rules = [...(existing.rules ?? []), ...missingRules];
    operation = 'update';
  }
  const missing = missingSelectors(existing.aggregationRule, expected.aggregationRule);
  if (!expected.aggregationRule && existing.aggregationRule) {
    // not expected to be aggregated at all
    delete object.aggregationRule;
    operation = 'update';
  } else if (missing.length) {
    object.aggregationRule = { ...(existing.aggregationRule ?? {}), clusterRoleSelectors: [...(existing.aggregationRule?.clusterRoleSelectors ?? []), ...missing] };
    operation = 'update';
  }
  return { object, operation, protected: isProtected(existing), missingRules };
}

const sameRoleRef = (a: RbacObject['roleRef'], b: RbacObject['roleRef']) => a?.apiGroup === b?.apiGroup && a?.kind === b?.kind && a?.name === b?.name;

/** computeReconciledRoleBinding in the union mode: another roleRef is a recreate (roleRef cannot change). */
export function reconcileRoleBinding(existing: RbacObject | undefined, expected: RbacObject): BindingReconcileResult {
  if (!existing) return { object: structuredClone(expected), operation: 'create', protected: false, missingSubjects: [...(expected.subjects ?? [])] };
  const prot = isProtected(existing);
  if (!sameRoleRef(existing.roleRef, expected.roleRef)) return { object: structuredClone(expected), operation: 'recreate', protected: prot, missingSubjects: [] };
  const object = structuredClone(existing);
  let operation: ReconcileOperation = reconcileMetadata(object, existing, expected) ? 'update' : 'none';
  const have = existing.subjects ?? [];
  const missingSubjects = (expected.subjects ?? []).filter((s) => !have.some((h) => isDeepStrictEqual(h, s)));
  if (missingSubjects.length) {
    object.subjects = [...have, ...missingSubjects];
    operation = 'update';
  }
  return { object, operation, protected: prot, missingSubjects };
}
