// One FlowSchema's rules, compiled for matching a request, as kube's
// k8s.io/apiserver/pkg/util/flowcontrol/match.go decides: a schema matches when any of its rules
// does; a rule when any subject matches the user and (for a resource request) any resource rule or
// (otherwise) any non-resource rule matches. A list that is just `*` is every verb, group,
// resource or namespace (containsString); a subject named `*` is every user, group or service
// account of its namespace; a non-resource URL is also the prefix of the paths below it. Compiled once
// per change of the schema (sets, not arrays), so that a request costs a few set lookups.
import type { RequestDigest } from '../types.ts';
import type { FlowSchemaSpec, NonResourcePolicyRule, PolicyRulesWithSubjects, ResourcePolicyRule, Subject } from './bootstrap.ts';

/** A list of names as kube's containsString reads it: `*` alone is every name (validation keeps it alone). */
class NameSet {
  readonly any: boolean;
  private readonly names: ReadonlySet<string>;
  constructor(names: readonly string[] | undefined) {
    this.names = new Set(names ?? []);
    this.any = names?.length === 1 && names[0] === '*';
  }
  has(name: string): boolean {
    return this.any || this.names.has(name);
  }
}

/** serviceaccount.ServiceAccountUsernamePrefix. */
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

class SubjectMatcher {
  private readonly anyUser: boolean;
  private readonly users = new Set<string>();
  private readonly anyGroup: boolean;
  private readonly groups = new Set<string>();
  /** Namespaces whose every service account matches (subject name `*`). */
  private readonly serviceAccountNamespaces = new Set<string>();
  /** Full user names (`system:serviceaccount:ns:name`) of the named service accounts. */
  private readonly serviceAccountUsers = new Set<string>();
  private readonly hasServiceAccounts: boolean;

  constructor(subjects: readonly Subject[]) {
    for (const s of subjects) {
      if (s.kind === 'User' && s.user) this.users.add(s.user.name);
      else if (s.kind === 'Group' && s.group) this.groups.add(s.group.name);
      else if (s.kind === 'ServiceAccount' && s.serviceAccount) {
        const { namespace, name } = s.serviceAccount;
        if (name === '*') this.serviceAccountNamespaces.add(namespace);
        else this.serviceAccountUsers.add(`${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`);
      }
    }
    this.anyUser = this.users.has('*');
    this.anyGroup = this.groups.has('*');
    this.hasServiceAccounts = this.serviceAccountNamespaces.size > 0 || this.serviceAccountUsers.size > 0;
  }

  matches(user: RequestDigest['user']): boolean {
    if (this.anyUser || this.anyGroup || this.users.has(user.name)) return true;
    for (const g of user.groups) if (this.groups.has(g)) return true;
    if (!this.hasServiceAccounts || !user.name.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
    if (this.serviceAccountUsers.has(user.name)) return true;
    // kube's serviceAccountMatchesNamespace: the namespace is what precedes the next ':'.
    const rest = user.name.slice(SERVICE_ACCOUNT_PREFIX.length);
    const colon = rest.indexOf(':');
    return colon > 0 && this.serviceAccountNamespaces.has(rest.slice(0, colon));
  }
}

class ResourceRuleMatcher {
  private readonly verbs: NameSet;
  private readonly apiGroups: NameSet;
  private readonly resources: NameSet;
  private readonly namespaces: NameSet;
  private readonly clusterScope: boolean;
  constructor(rule: ResourcePolicyRule) {
    this.verbs = new NameSet(rule.verbs);
    this.apiGroups = new NameSet(rule.apiGroups);
    this.resources = new NameSet(rule.resources);
    this.namespaces = new NameSet(rule.namespaces);
    this.clusterScope = rule.clusterScope === true;
  }
  matches(d: RequestDigest): boolean {
    if (!this.verbs.has(d.verb)) return false;
    // A subresource request matches only `res/sub` (or `*`), never `res` alone.
    if (!this.resources.any && !this.resources.has(d.subresource ? `${d.resource}/${d.subresource}` : d.resource)) return false;
    if (!this.apiGroups.has(d.apiGroup)) return false;
    return d.namespace ? this.namespaces.has(d.namespace) : this.clusterScope;
  }
}

class NonResourceRuleMatcher {
  private readonly verbs: NameSet;
  private readonly anyUrl: boolean;
  private readonly urls: ReadonlySet<string>;
  /** Each URL without its trailing `*`, ending in `/`: kube matches the paths below every URL so. */
  private readonly prefixes: string[];
  constructor(rule: NonResourcePolicyRule) {
    this.verbs = new NameSet(rule.verbs);
    const urls = rule.nonResourceURLs ?? [];
    this.anyUrl = urls.includes('*');
    this.urls = new Set(urls);
    this.prefixes = urls.map((u) => {
      const prefix = u.endsWith('*') ? u.slice(0, -1) : u;
      return prefix.endsWith('/') ? prefix : `${prefix}/`;
    });
  }
  matches(d: RequestDigest): boolean {
    if (!this.verbs.has(d.verb)) return false;
    if (this.anyUrl || this.urls.has(d.path)) return true;
    for (const p of this.prefixes) if (d.path.startsWith(p)) return true;
    return false;
  }
}

class RuleMatcher {
  private readonly subjects: SubjectMatcher;
  private readonly resourceRules: ResourceRuleMatcher[];
  private readonly nonResourceRules: NonResourceRuleMatcher[];
  constructor(rule: PolicyRulesWithSubjects) {
    this.subjects = new SubjectMatcher(rule.subjects ?? []);
    this.resourceRules = (rule.resourceRules ?? []).map((r) => new ResourceRuleMatcher(r));
    this.nonResourceRules = (rule.nonResourceRules ?? []).map((r) => new NonResourceRuleMatcher(r));
  }
  matches(d: RequestDigest): boolean {
    if (!this.subjects.matches(d.user)) return false;
    if (d.isResourceRequest) {
      for (const r of this.resourceRules) if (r.matches(d)) return true;
    } else {
      for (const r of this.nonResourceRules) if (r.matches(d)) return true;
    }
    return false;
  }
}

/** kube's matchesFlowSchema: does any of the schema's rules match the request? */
export class FlowSchemaMatcher {
  private readonly rules: RuleMatcher[];
  constructor(spec: FlowSchemaSpec) {
    this.rules = (spec.rules ?? []).map((r) => new RuleMatcher(r));
  }
  matches(d: RequestDigest): boolean {
    for (const r of this.rules) if (r.matches(d)) return true;
    return false;
  }
}
