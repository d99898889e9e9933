// Whether a policy's matchConstraints or a binding's matchResources match a request (kube's
// policy/generic/policy_matcher.go over policy/matching/matching.go): the namespace selector, the
// object selector, excludeResourceRules, then resourceRules (each rule's resourceNames narrowing
// it) with matchPolicy Equivalent — on the shared admission/matching.ts. Selectors are parsed once
// per stored object.
import { labelSelectorFromObject, type LabelSelector } from '../../registry/selectors.ts';
import { matchingInvocation, namespaceSelectorMatches, objectSelectorMatches, requestResource, type AdmissionRule, type EquivalentResource } from '../matching.ts';
import type { AdmissionAttributes } from '../types.ts';
import type { PolicyMatcher } from './validating.ts';

type Obj = Record<string, unknown>;

interface ParsedMatchResources {
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  matchPolicy: string | undefined;
  resourceRules: (AdmissionRule & { resourceNames?: string[] })[];
  excludeResourceRules: (AdmissionRule & { resourceNames?: string[] })[];
}

const EVERYTHING: unknown = {};
const parsed = new WeakMap<object, ParsedMatchResources>();

function parse(m: Obj): ParsedMatchResources {
  let p = parsed.get(m);
  if (!p) {
    p = {
      namespaceSelector: labelSelectorFromObject(m.namespaceSelector ?? EVERYTHING),
      objectSelector: labelSelectorFromObject(m.objectSelector ?? EVERYTHING),
      matchPolicy: typeof m.matchPolicy === 'string' ? m.matchPolicy : undefined,
      resourceRules: Array.isArray(m.resourceRules) ? (m.resourceRules as ParsedMatchResources['resourceRules']) : [],
      excludeResourceRules: Array.isArray(m.excludeResourceRules) ? (m.excludeResourceRules as ParsedMatchResources['resourceRules']) : [],
    };
    parsed.set(m, p);
  }
  return p;
}

/** The rules that apply to this request's name (a rule with resourceNames names it among them). */
const forName = (rules: ParsedMatchResources['resourceRules'], name: string) => rules.filter((r) => !r.resourceNames?.length || r.resourceNames.includes(name));

export function policyMatcher(namespaceLabels: (name: string) => Readonly<Record<string, string>> | undefined, equivalents: (a: AdmissionAttributes) => readonly EquivalentResource[]): PolicyMatcher {
  /** matching.Matcher.Matches: the matched resource and kind, or undefined. */
  const matches = (m: Obj, a: AdmissionAttributes) => {
    const p = parse(m);
    let namespaceError: unknown;
    let namespaceMatch = false;
    try {
      namespaceMatch = namespaceSelectorMatches(p.namespaceSelector, a, namespaceLabels);
    } catch (e) {
      namespaceError = e;
    }
    if (!namespaceMatch && namespaceError === undefined) return undefined;
    if (!objectSelectorMatches(p.objectSelector, a)) return undefined;
    if (p.excludeResourceRules.length && matchingInvocation(forName(p.excludeResourceRules, a.name), a, p.matchPolicy, equivalents)) return undefined;
    let matched: { resource: ReturnType<typeof requestResource>; kind: AdmissionAttributes['kind'] } | undefined;
    if (!p.resourceRules.length) matched = { resource: requestResource(a), kind: a.kind };
    else matched = matchingInvocation(forName(p.resourceRules, a.name), a, p.matchPolicy, equivalents);
    if (!matched) return undefined;
    if (namespaceError !== undefined) throw namespaceError;
    return { resource: matched.resource, kind: matched.kind };
  };
  return {
    definitionMatches(constraints, a) {
      if (constraints === undefined || constraints === null || typeof constraints !== 'object') throw new Error('policy contained no match constraints, a required field');
      return matches(constraints as Obj, a);
    },
    bindingMatches(matchResources, a) {
      if (matchResources === undefined || matchResources === null || typeof matchResources !== 'object') return true;
      return matches(matchResources as Obj, a) !== undefined;
    },
  };
}
