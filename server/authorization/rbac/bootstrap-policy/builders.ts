// The RBAC object shapes the bootstrap policy is written in, and small builders after kube's
// pkg/apis/rbac/v1/helpers.go (NewRule(...).Groups(...).Resources(...).RuleOrDie(),
// NewClusterBinding(...).Groups(...).BindingOrDie(), NewRoleBinding(...)): a rule's lists come out
// sorted, as RuleOrDie sorts them, so a policy reads like kube's and renders like its testdata.
// Every bootstrap object carries kube's label and autoupdate annotation (policy.go addDefaultMetadata).

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const RBAC_API_VERSION = `${RBAC_GROUP}/v1`;
/** kube's rbacv1.AutoUpdateAnnotationKey: "false" keeps the post-start reconciliation off an object. */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
/** bootstrappolicy.Label. */
export const BOOTSTRAP_LABELS: Readonly<Record<string, string>> = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
/** bootstrappolicy.Annotation. */
export const BOOTSTRAP_ANNOTATIONS: Readonly<Record<string, string>> = { [AUTOUPDATE_ANNOTATION]: 'true' };

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  /** rbac.authorization.k8s.io for users and groups; absent for service accounts. */
  apiGroup?: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: 'Role' | 'ClusterRole';
  name: string;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface AggregationRule {
  clusterRoleSelectors?: LabelSelector[];
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface ClusterRole {
  apiVersion: typeof RBAC_API_VERSION;
  kind: 'ClusterRole';
  metadata: ObjectMeta;
  aggregationRule?: AggregationRule;
  rules?: PolicyRule[];
}

export interface Role {
  apiVersion: typeof RBAC_API_VERSION;
  kind: 'Role';
  metadata: ObjectMeta & { namespace: string };
  rules?: PolicyRule[];
}

export interface ClusterRoleBinding {
  apiVersion: typeof RBAC_API_VERSION;
  kind: 'ClusterRoleBinding';
  metadata: ObjectMeta;
  roleRef: RoleRef;
  subjects?: Subject[];
}

export interface RoleBinding {
  apiVersion: typeof RBAC_API_VERSION;
  kind: 'RoleBinding';
  metadata: ObjectMeta & { namespace: string };
  roleRef: RoleRef;
  subjects?: Subject[];
}

/** A set of RBAC objects to keep in the store. */
export interface RbacPolicy {
  clusterRoles: ClusterRole[];
  clusterRoleBindings: ClusterRoleBinding[];
  /** Namespaced: kube-system's and kube-public's. */
  roles: Role[];
  roleBindings: RoleBinding[];
}

const sorted = (list: readonly string[]): string[] => [...list].sort();

/** kube's PolicyRuleBuilder: build with rule(verbs...).groups(...).resources(...).names(...) or .urls(...). */
export class RuleBuilder {
  private readonly r: Required<PolicyRule>;
  constructor(verbs: readonly string[]) {
    this.r = { verbs: [...verbs], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [] };
  }
  groups(...groups: string[]): this {
    this.r.apiGroups.push(...groups);
    return this;
  }
  resources(...resources: string[]): this {
    this.r.resources.push(...resources);
    return this;
  }
  names(...names: string[]): this {
    this.r.resourceNames.push(...names);
    return this;
  }
  urls(...urls: string[]): this {
    this.r.nonResourceURLs.push(...urls);
    return this;
  }
  /** RuleOrDie: a resource rule or a URL rule, never both; every list sorted, empty ones left out. */
  build(): PolicyRule {
    const { verbs, apiGroups, resources, resourceNames, nonResourceURLs } = this.r;
    if (!verbs.length) throw new Error(`verbs are required: ${JSON.stringify(this.r)}`);
    const isResource = apiGroups.length > 0 || resources.length > 0 || resourceNames.length > 0;
    if (isResource === nonResourceURLs.length > 0) throw new Error(`a rule is either a resource rule or a non-resource URL rule: ${JSON.stringify(this.r)}`);
    if (isResource && (!apiGroups.length || !resources.length)) throw new Error(`resource rules must supply at least one api group and one resource: ${JSON.stringify(this.r)}`);
    const out: PolicyRule = { verbs: sorted(verbs) };
    if (apiGroups.length) out.apiGroups = sorted(apiGroups);
    if (resources.length) out.resources = sorted(resources);
    if (resourceNames.length) out.resourceNames = sorted(resourceNames);
    if (nonResourceURLs.length) out.nonResourceURLs = sorted(nonResourceURLs);
    return out;
  }
}

export const rule = (...verbs: string[]): RuleBuilder => new RuleBuilder(verbs);

/** Subjects as kube's binding builders make them. */
export const users = (...names: string[]): Subject[] => names.map((name) => ({ apiGroup: RBAC_GROUP, kind: 'User', name }));
export const groups = (...names: string[]): Subject[] => names.map((name) => ({ apiGroup: RBAC_GROUP, kind: 'Group', name }));
export const serviceAccounts = (namespace: string, ...names: string[]): Subject[] => names.map((name) => ({ kind: 'ServiceAccount', name, namespace }));

function defaultMeta(name: string, labels?: Record<string, string>, namespace?: string): ObjectMeta {
  // (sorted, as Go writes a map)
  const all = { ...(labels ?? {}), ...BOOTSTRAP_LABELS };
  const sortedLabels = Object.fromEntries(Object.keys(all).sort().map((k) => [k, all[k]]));
  return { name, ...(namespace !== undefined ? { namespace } : {}), labels: sortedLabels, annotations: { ...BOOTSTRAP_ANNOTATIONS } };
}

export interface RoleSpec {
  name: string;
  /** Labels besides kube's bootstrapping one (the aggregate-to-* ones). */
  labels?: Record<string, string>;
  aggregationRule?: AggregationRule;
  rules?: RuleBuilder[];
}

export function clusterRole(spec: RoleSpec): ClusterRole {
  const role: ClusterRole = { apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', metadata: defaultMeta(spec.name, spec.labels) };
  if (spec.aggregationRule) role.aggregationRule = spec.aggregationRule;
  if (spec.rules?.length) role.rules = spec.rules.map((r) => r.build());
  return role;
}

export function role(namespace: string, spec: RoleSpec): Role {
  const meta = defaultMeta(spec.name, spec.labels, namespace) as ObjectMeta & { namespace: string };
  return { apiVersion: RBAC_API_VERSION, kind: 'Role', metadata: meta, ...(spec.rules?.length ? { rules: spec.rules.map((r) => r.build()) } : {}) };
}

/** NewClusterBinding(roleName): a binding named after its ClusterRole. */
export function clusterRoleBinding(roleName: string, subjects: Subject[], name = roleName): ClusterRoleBinding {
  const b: ClusterRoleBinding = { apiVersion: RBAC_API_VERSION, kind: 'ClusterRoleBinding', metadata: defaultMeta(name), roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName } };
  if (subjects.length) b.subjects = subjects;
  return b;
}

/** NewRoleBinding(roleName, namespace): a binding to the namespace's Role of that name. */
export function roleBinding(namespace: string, roleName: string, subjects: Subject[], name = roleName): RoleBinding {
  const meta = defaultMeta(name, undefined, namespace) as ObjectMeta & { namespace: string };
  const b: RoleBinding = { apiVersion: RBAC_API_VERSION, kind: 'RoleBinding', metadata: meta, roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: roleName } };
  if (subjects.length) b.subjects = subjects;
  return b;
}

/** A selector matching one label's value (the aggregate-to-* selectors). */
export const aggregateFrom = (...labels: string[]): AggregationRule => ({ clusterRoleSelectors: labels.map((l) => ({ matchLabels: { [l]: 'true' } })) });
