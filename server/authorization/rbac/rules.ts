// RBAC's policy rules and how one matches a request: kube's rbacv1 PolicyRule, the evaluation
// helpers of pkg/apis/rbac/v1/evaluation_helpers.go (VerbMatches, APIGroupMatches,
// ResourceMatches, ResourceNameMatches, NonResourceURLMatches) and RuleAllows of
// plugin/pkg/auth/authorizer/rbac/rbac.go. Pure functions over plain data.
import type { AuthorizationAttributes } from '../authorizer.ts';

/** rbacv1.PolicyRule, each list present (an absent list matches nothing, as an empty one). */
export interface PolicyRule {
  verbs: readonly string[];
  apiGroups: readonly string[];
  resources: readonly string[];
  resourceNames: readonly string[];
  nonResourceURLs: readonly string[];
}

const VERB_ALL = '*';
const API_GROUP_ALL = '*';
const RESOURCE_ALL = '*';
const NON_RESOURCE_ALL = '*';

function strings(v: unknown): readonly string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}

/** A stored Role's or ClusterRole's `rules` as PolicyRules (anything else in them is ignored). */
export function policyRulesOf(rules: unknown): PolicyRule[] {
  if (!Array.isArray(rules)) return [];
  return rules.map((r) => {
    const o = (r !== null && typeof r === 'object' ? r : {}) as Record<string, unknown>;
    return { verbs: strings(o.verbs), apiGroups: strings(o.apiGroups), resources: strings(o.resources), resourceNames: strings(o.resourceNames), nonResourceURLs: strings(o.nonResourceURLs) };
  });
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === VERB_ALL || v === verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return rule.apiGroups.some((g) => g === API_GROUP_ALL || g === group);
}

/**
 * `*`, the exact `resource` or `resource/subresource`, or `*\/subresource` for a request of that
 * subresource on any resource.
 */
export function resourceMatches(rule: PolicyRule, combinedResource: string, subresource: string): boolean {
  for (const r of rule.resources) {
    if (r === RESOURCE_ALL || r === combinedResource) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

/** No resourceNames matches every name (and none, for list and create); otherwise the name must be listed. */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

/** `*`, the exact path, or a prefix ending in `*`. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs) {
    if (u === NON_RESOURCE_ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** Whether one rule allows the request (kube's RuleAllows). */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (a.isResourceRequest) {
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return verbMatches(rule, a.verb) && apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name);
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
}
