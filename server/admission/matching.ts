// Which requests an admission webhook or policy applies to, as kube's admission/plugin/webhook/
// predicates (rules, namespace, object) and the webhook and policy dispatchers' ShouldCallHook
// read it, shared by MutatingAdmissionWebhook, ValidatingAdmissionWebhook and the admission
// policies: rules by scope, operation, group, version and resource/subresource; matchPolicy
// Equivalent (a rule naming another version of the same resource matches, and the object is
// then sent at that version); the namespaceSelector over the namespace's labels (a Namespace's
// own, from the object, when it is what is being written); the objectSelector over the object's
// or the old object's labels.
import type { AdmissionAttributes } from './types.ts';
import type { LabelSelector } from '../registry/selectors.ts';
import { notFound } from '../errors.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';

/** admissionregistration's Rule/RuleWithOperations (absent lists match nothing, as in kube). */
export interface AdmissionRule {
  operations?: readonly string[];
  apiGroups?: readonly string[];
  apiVersions?: readonly string[];
  resources?: readonly string[];
  /** `*` (absent), `Cluster` or `Namespaced`. */
  scope?: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** What a matched webhook or policy is invoked with: the resource and kind it asked for (kube's WebhookInvocation). */
export interface Invocation {
  resource: GroupVersionResource;
  subresource: string;
  kind: GroupVersionKind;
}

/** Another version of the request's resource (kube's EquivalentResourceMapper entries). */
export interface EquivalentResource {
  resource: GroupVersionResource;
  /** The kind served there, for the request's subresource. */
  kind: GroupVersionKind;
}

const exactOrWildcard = (items: readonly string[] | undefined, requested: string): boolean => !!items && items.some((i) => i === '*' || i === requested);

/** Namespaces are cluster-scoped, yet their requests carry their own name as the namespace (kube's RequestInfo). */
const isNamespaceResource = (r: GroupVersionResource): boolean => r.group === '' && r.resource === 'namespaces';

/** The request's resource (group, version, resource) as rules see it. */
export function requestResource(attrs: AdmissionAttributes): GroupVersionResource {
  return { group: attrs.info.group, version: attrs.info.version, resource: attrs.info.resource };
}

/** rules.Matcher.Matches for one rule, against `resource` (the request's, or an equivalent). */
export function ruleMatches(rule: AdmissionRule, attrs: AdmissionAttributes, resource: GroupVersionResource = requestResource(attrs)): boolean {
  const scope = rule.scope ?? '*';
  if (scope === 'Namespaced') {
    if (isNamespaceResource(resource) || attrs.namespace === '') return false;
  } else if (scope === 'Cluster') {
    if (!isNamespaceResource(resource) && attrs.namespace !== '') return false;
  } else if (scope !== '*') return false;
  if (!exactOrWildcard(rule.operations, attrs.operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, resource.group)) return false;
  if (!exactOrWildcard(rule.apiVersions, resource.version)) return false;
  for (const r of rule.resources ?? []) {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    if ((res === '*' || res === resource.resource) && (sub === '*' || sub === attrs.subresource)) return true;
  }
  return false;
}

/**
 * The invocation the rules give, or undefined when none matches: the request's own resource
 * first; with matchPolicy Equivalent, then each rule in turn against the resource's other
 * versions (kube honours earlier rules first).
 */
export function matchingInvocation(
  rules: readonly AdmissionRule[],
  attrs: AdmissionAttributes,
  matchPolicy: string | undefined,
  equivalents: (attrs: AdmissionAttributes) => readonly EquivalentResource[],
): Invocation | undefined {
  const own = requestResource(attrs);
  for (const rule of rules) if (ruleMatches(rule, attrs, own)) return { resource: own, subresource: attrs.subresource, kind: attrs.kind };
  if (matchPolicy !== 'Equivalent') return undefined;
  const others = equivalents(attrs);
  for (const rule of rules) {
    for (const e of others) {
      if (e.resource.group === own.group && e.resource.version === own.version && e.resource.resource === own.resource) continue;
      if (ruleMatches(rule, attrs, e.resource)) return { resource: e.resource, subresource: attrs.subresource, kind: e.kind };
    }
  }
  return undefined;
}

/** Labels of an object, or undefined when it has none to read. */
function labelsOf(obj: unknown): Record<string, string> | undefined {
  if (typeof obj !== 'object' || obj === null) return undefined;
  const meta = (obj as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null) return {};
  const labels = (meta as { labels?: unknown }).labels;
  return typeof labels === 'object' && labels !== null ? (labels as Record<string, string>) : {};
}

/**
 * namespace.Matcher.MatchNamespaceSelector: cluster-scoped requests (but a Namespace's own) always
 * match; an empty selector matches; else the namespace's labels — the object's own when a
 * Namespace is being created or updated. A namespace that does not exist is kube's 404.
 */
export function namespaceSelectorMatches(selector: LabelSelector, attrs: AdmissionAttributes, namespaceLabels: (name: string) => Readonly<Record<string, string>> | undefined): boolean {
  const isNamespace = attrs.info.group === '' && attrs.info.resource === 'namespaces';
  if (attrs.namespace === '' && !isNamespace) return true;
  if (selector.empty) return true;
  let labels: Readonly<Record<string, string>> | undefined;
  if (isNamespace && attrs.subresource === '' && (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')) labels = labelsOf(attrs.object) ?? {};
  else {
    labels = namespaceLabels(attrs.namespace);
    if (!labels) throw notFound('', 'namespaces', attrs.namespace);
  }
  return selector.matches(labels);
}

/** object.Matcher.MatchObjectSelector: an empty selector matches; else the object's or the old object's labels. */
export function objectSelectorMatches(selector: LabelSelector, attrs: AdmissionAttributes): boolean {
  if (selector.empty) return true;
  const now = labelsOf(attrs.object);
  if (now && selector.matches(now)) return true;
  const old = labelsOf(attrs.oldObject);
  return !!old && selector.matches(old);
}

/**
 * The equivalent resources of a request (kube's EquivalentResourceMapper over the served API): the
 * same group and resource in every version the catalog serves, each with the kind served there
 * for the request's subresource. Kept per catalog generation (CRDs add and remove versions).
 */
export function equivalentResourcesIn(catalog: ResourceCatalog): (attrs: AdmissionAttributes) => readonly EquivalentResource[] {
  let generation = -1;
  const cache = new Map<string, readonly EquivalentResource[]>();
  return (attrs) => {
    if (catalog.generation !== generation) {
      cache.clear();
      generation = catalog.generation;
    }
    const { group, resource } = attrs.info;
    const key = `${group}/${resource}/${attrs.subresource}`;
    let found = cache.get(key);
    if (!found) {
      const list: EquivalentResource[] = [];
      for (const version of catalog.group(group)?.versions ?? []) {
        const info = catalog.lookup(group, version, resource);
        if (!info) continue;
        const sub = attrs.subresource ? info.subresources?.[attrs.subresource] : undefined;
        if (attrs.subresource && !sub) continue;
        const kind = sub?.kind ? { group: sub.group ?? group, version: sub.version ?? version, kind: sub.kind } : { group, version, kind: info.kind };
        list.push({ resource: { group, version, resource }, kind });
      }
      cache.set(key, (found = list));
    }
    return found;
  };
}
