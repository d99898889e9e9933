// One FlowSchema's rules, compiled for matching a request, as kube's
// k8s.io/apiserver/pkg/util/flowcontrol/match.go decides: a schema matches when any of its rules
// does; a rule when any subject matches the user and (for a resource request) any resource rule or
// (otherwise) any non-resource rule matches. A list that is just `*` is every verb, group,
// resource or namespace (containsString); a subject named `*` is every user, group or service
// account of its namespace; a non-resource URL is also the prefix of the paths below it. Compiled once
// per change of the schema (sets, not arrays); the subjects of every rule are indexed together
// (SubjectIndex), so that a request costs a few lookups.
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
const COLON = 0x3a;

/**
 * Which rules' subjects a user matches (kube's matchesASubject), for every rule at once: a bitset
 * over the rules, from one lookup per user name, group and service account namespace rather
 * than one per rule. The answer is a scratch array, valid until the next call.
 */
export class SubjectIndex {
  private readonly any: Uint32Array;
  private readonly byUser = new Map<string, Uint32Array>();
  private readonly byGroup = new Map<string, Uint32Array>();
  /** By full user name (`system:serviceaccount:ns:name`). */
  private readonly byServiceAccount = new Map<string, Uint32Array>();
  /** Namespaces whose every service account a rule names (subject name `*`): one or two. */
  private readonly byServiceAccountNamespace: { namespace: string; rules: Uint32Array }[] = [];
  private readonly scratch: Uint32Array;

  constructor(ruleSubjects: readonly (readonly Subject[])[]) {
    const words = Math.max(1, Math.ceil(ruleSubjects.length / 32));
    this.any = new Uint32Array(words);
    this.scratch = new Uint32Array(words);
    const bits = <K>(map: Map<K, Uint32Array>, key: K) => {
      let b = map.get(key);
      if (!b) map.set(key, (b = new Uint32Array(words)));
      return b;
    };
    ruleSubjects.forEach((subjects, i) => {
      const word = i >>> 5;
      const bit = 1 << (i & 31);
      for (const s of subjects) {
        if (s.kind === 'User' && s.user) {
          if (s.user.name === '*') this.any[word] |= bit;
          else bits(this.byUser, s.user.name)[word] |= bit;
        } else if (s.kind === 'Group' && s.group) {
          if (s.group.name === '*') this.any[word] |= bit;
          else bits(this.byGroup, s.group.name)[word] |= bit;
        } else if (s.kind === 'ServiceAccount' && s.serviceAccount) {
          const { namespace, name } = s.serviceAccount;
          if (name !== '*') bits(this.byServiceAccount, `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`)[word] |= bit;
          else {
            let entry = this.byServiceAccountNamespace.find((e) => e.namespace === namespace);
            if (!entry) this.byServiceAccountNamespace.push((entry = { namespace, rules: new Uint32Array(words) }));
            entry.rules[word] |= bit;
          }
        }
      }
    });
  }

  /** The bitset of the rules whose subjects match `user`. */
  match(user: RequestDigest['user']): Uint32Array {
    const m = this.scratch;
    m.set(this.any);
    or(m, this.byUser.get(user.name));
    for (const g of user.groups) or(m, this.byGroup.get(g));
    const name = user.name;
    if (name.startsWith(SERVICE_ACCOUNT_PREFIX)) {
      or(m, this.byServiceAccount.get(name));
      // kube's serviceAccountMatchesNamespace: the namespace, then ':' (compared in place).
      for (const e of this.byServiceAccountNamespace) {
        if (name.startsWith(e.namespace, SERVICE_ACCOUNT_PREFIX.length) && name.charCodeAt(SERVICE_ACCOUNT_PREFIX.length + e.namespace.length) === COLON) or(m, e.rules);
      }
    }
    return m;
  }
}

function or(into: Uint32Array, from: Uint32Array | undefined): void {
  if (from) for (let i = 0; i < into.length; i++) into[i] |= from[i];
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

/** One PolicyRulesWithSubjects: its subjects (matched by SubjectIndex) and what it matches of a request. */
export class RuleMatcher {
  readonly subjects: readonly Subject[];
  private readonly resourceRules: ResourceRuleMatcher[];
  private readonly nonResourceRules: NonResourceRuleMatcher[];
  constructor(rule: PolicyRulesWithSubjects) {
    this.subjects = rule.subjects ?? [];
    this.resourceRules = (rule.resourceRules ?? []).map((r) => new ResourceRuleMatcher(r));
    this.nonResourceRules = (rule.nonResourceRules ?? []).map((r) => new NonResourceRuleMatcher(r));
  }
  /** A resource request matches any resource rule; any other request any non-resource rule. */
  matchesRequest(d: RequestDigest): boolean {
    if (d.isResourceRequest) {
      for (const r of this.resourceRules) if (r.matches(d)) return true;
    } else {
      for (const r of this.nonResourceRules) if (r.matches(d)) return true;
    }
    return false;
  }
}

/** A FlowSchema's rules, compiled. */
export function compileRules(spec: FlowSchemaSpec): RuleMatcher[] {
  return (spec.rules ?? []).map((r) => new RuleMatcher(r));
}
