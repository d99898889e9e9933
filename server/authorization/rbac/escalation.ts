// RBAC's escalation prevention: nobody grants, through a Role, a ClusterRole or a binding, more
// than they hold themselves. kube does this in the RBAC registry (pkg/registry/rbac/escalation_check.go,
// role/ and clusterrole/policybased/storage.go, rolebinding/ and clusterrolebinding/
// policybased/storage.go, validation/rule.go's ConfirmNoEscalation, component-helpers' Covers,
// validation/policy_compact.go and rbacv1helpers.CompactString). hearth runs it as the last
// mutating admission step of the four kinds (after the other plugins have changed the object,
// before validation, where kube's policybased storage runs it): the store hands admission the
// requester, the object and the old object, which is all the check needs, and admission is
// below authorization, so authorization can plug this in without the registry or admission
// importing the authorizer or the RBAC index (server.ts adds it to the chain).
//
// The rules:
// - system:masters may do anything (EscalationAllowed).
// - A Role or ClusterRole: allowed with `escalate` on it (RoleEscalationAuthorized); otherwise
//   its rules must be covered by the requester's own in the namespace; an aggregationRule (new
//   or old) needs `*` on everything.
// - A binding: allowed with `bind` on the role it names (BindingAuthorized, resourceNames
//   honoured); otherwise that role must exist and its rules be covered.
// - An update that changes only what the garbage collector changes (ownerReferences,
//   finalizers) is not checked (IsOnlyMutatingGCFields).
import type { AdmissionAttributes, AdmissionPlugin } from '../../admission/types.ts';
import { authorize, type AuthorizationAttributes, type Authorizer } from '../authorizer.ts';
import type { UserInfo } from '../../authentication/user.ts';
import { forbidden } from '../../errors.ts';
import { goQuote } from '../../go/strconv.ts';
import { deepEqual } from '../../util/json.ts';
import { policyRulesOf, type PolicyRule } from './rules.ts';
import type { RbacPolicyIndex } from './policy-index.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const PRIVILEGED_GROUP = 'system:masters';

/** `*` on every resource and every path: what an aggregationRule needs. */
const FULL_AUTHORITY: PolicyRule[] = policyRulesOf([
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
]);

const one = (s: string): readonly string[] => [s];
const rule = (r: Partial<PolicyRule>): PolicyRule => ({ verbs: [], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [], ...r });

/** BreakdownRule: one rule per group, resource, verb and name (or path and verb). */
function breakdown(r: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of r.apiGroups) {
    for (const resource of r.resources) {
      for (const verb of r.verbs) {
        if (r.resourceNames.length) for (const name of r.resourceNames) out.push(rule({ apiGroups: one(group), resources: one(resource), verbs: one(verb), resourceNames: one(name) }));
        else out.push(rule({ apiGroups: one(group), resources: one(resource), verbs: one(verb) }));
      }
    }
  }
  for (const url of r.nonResourceURLs) for (const verb of r.verbs) out.push(rule({ nonResourceURLs: one(url), verbs: one(verb) }));
  return out;
}

const hasAll = (set: readonly string[], wanted: readonly string[]): boolean => wanted.every((w) => set.includes(w));

function resourcesCoverAll(owner: readonly string[], wanted: readonly string[]): boolean {
  if (owner.includes('*') || hasAll(owner, wanted)) return true;
  for (const path of wanted) {
    if (owner.includes(path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!owner.includes(`*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function urlCovers(owner: string, path: string): boolean {
  return owner === path || (owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, '')));
}

/** ruleCovers: whether an owner rule covers one broken-down rule. */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes('*') || hasAll(owner.verbs, sub.verbs);
  const groups = owner.apiGroups.includes('*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourcesCoverAll(owner.resources, sub.resources);
  const urls = sub.nonResourceURLs.every((p) => owner.nonResourceURLs.some((o) => urlCovers(o, p)));
  const names = sub.resourceNames.length === 0 ? owner.resourceNames.length === 0 : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, sub.resourceNames);
  return verbs && groups && resources && names && urls;
}

/** Covers: the broken-down rules of `servant` that no owner rule covers (none: covered). */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  return servant.flatMap(breakdown).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
}

/** CompactRules: rules of one group, one resource and at most one name, differing only by verb, merged. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule & { verbs: string[] }>();
  for (const r of rules) {
    const isSimple = r.resourceNames.length <= 1 && r.nonResourceURLs.length === 0 && r.apiGroups.length === 1 && r.resources.length === 1;
    if (!isSimple) {
      compacted.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups[0], r.resources[0], r.resourceNames.length > 0, r.resourceNames[0] ?? '']);
    const existing = simple.get(key);
    if (existing) {
      for (const v of r.verbs) if (!existing.verbs.includes(v)) existing.verbs.push(v);
    } else {
      simple.set(key, { ...r, verbs: [...r.verbs] });
    }
  }
  return [...compacted, ...simple.values()];
}

/** Go's %q of a []string. */
const goQuoteList = (list: readonly string[]): string => `[${list.map(goQuote).join(' ')}]`;

/** rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups.length) parts.push(`APIGroups:${goQuoteList(r.apiGroups)}`);
  if (r.resources.length) parts.push(`Resources:${goQuoteList(r.resources)}`);
  if (r.nonResourceURLs.length) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs)}`);
  if (r.resourceNames.length) parts.push(`ResourceNames:${goQuoteList(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** Go's sort of strings: by bytes (sets.String.List()). */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * ConfirmNoEscalation: undefined when the user's rules in the namespace cover `rules`, else
 * kube's message listing what is missing (compacted, each once, sorted).
 */
export function escalationError(index: RbacPolicyIndex, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const owner = index.rulesFor(user, namespace);
  const missing = uncoveredRules(owner.rules, rules);
  if (missing.length === 0) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort(byBytes);
  let msg = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (owner.errors.length) msg += `; resolution errors: [${owner.errors.join(' ')}]`;
  return msg;
}

type Obj = Record<string, unknown>;
const record = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** IsOnlyMutatingGCFields: the update changes nothing but ownerReferences, finalizers (or what the server keeps). */
function onlyGcFields(obj: unknown, old: unknown): boolean {
  if (old === undefined) return false;
  const strip = (o: unknown) => {
    const meta = { ...record(record(o).metadata) };
    for (const k of ['ownerReferences', 'finalizers', 'selfLink', 'managedFields', 'resourceVersion']) delete meta[k];
    return { ...record(o), metadata: meta };
  };
  return deepEqual(strip(obj), strip(old));
}

function hasAggregationRule(o: unknown): boolean {
  const selectors = record(record(o).aggregationRule).clusterRoleSelectors;
  return Array.isArray(selectors) && selectors.length > 0;
}

/** A request attribute set for the escalate and bind checks (kube's AttributesRecord). */
function resourceAttributes(user: UserInfo, verb: string, resource: string, namespace: string, name: string, apiVersion: string): AuthorizationAttributes {
  return { user, verb, isResourceRequest: true, path: '', apiGroup: RBAC_GROUP, apiVersion, resource, subresource: '', namespace, name };
}

/** The admission step: `authorizers` is the server's chain, `index` the RBAC policy. */
export function rbacEscalationCheck(index: RbacPolicyIndex, authorizers: readonly Authorizer[]): AdmissionPlugin {
  // The chain may answer later (a webhook): kube's EscalationAllowed and BindingAuthorized wait for it.
  const allowed = async (a: AuthorizationAttributes) => (await authorize(authorizers, a)).decision === 'allow';
  /** The check of an RBAC write (not async itself: every other write passes without a promise). */
  const check = async (attrs: AdmissionAttributes) => {
    const { user, namespace, name, object, oldObject } = attrs;
    if (user.groups.includes(PRIVILEGED_GROUP)) return;
    const resource = attrs.info.resource;
    const refuse = (message: string) => forbidden(RBAC_GROUP, resource, name, message);
    switch (resource) {
      case 'roles':
      case 'clusterroles': {
        if (await allowed(resourceAttributes(user, 'escalate', resource, namespace, name, '*'))) return;
        if (attrs.operation === 'UPDATE' && onlyGcFields(object, oldObject)) return;
        const error = escalationError(index, user, namespace, policyRulesOf(record(object).rules));
        if (error) throw refuse(error);
        if (resource === 'clusterroles' && (hasAggregationRule(object) || hasAggregationRule(oldObject)) && escalationError(index, user, namespace, FULL_AUTHORITY)) {
          throw refuse('must have cluster-admin privileges to use the aggregationRule');
        }
        return;
      }
      case 'rolebindings':
      case 'clusterrolebindings': {
        if (attrs.operation === 'UPDATE' && onlyGcFields(object, oldObject)) return;
        const ref = record(record(object).roleRef);
        const kind = str(ref.kind);
        // BindingAuthorized: `bind` on the role named, in the binding's namespace.
        const roleResource = kind === 'ClusterRole' ? 'clusterroles' : kind === 'Role' ? 'roles' : '';
        if (roleResource && (await allowed({ ...resourceAttributes(user, 'bind', roleResource, namespace, str(ref.name), ''), apiGroup: str(ref.apiGroup) }))) return;
        const rules = index.roleReferenceRules({ kind, name: str(ref.name) }, namespace);
        if (typeof rules === 'string') throw refuse(rules);
        const error = escalationError(index, user, namespace, rules);
        if (error) throw refuse(error);
        return;
      }
    }
  };
  return {
    name: 'RBACEscalationCheck',
    admit(attrs: AdmissionAttributes) {
      if (attrs.info.group !== RBAC_GROUP || (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') || attrs.subresource) return;
      return check(attrs);
    },
  };
}
