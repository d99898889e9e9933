// The RBAC policy in memory: every Role, ClusterRole, RoleBinding and ClusterRoleBinding,
// kept current by whoever feeds it the commit stream of the four kinds (server.ts wires the
// event log to upsert/remove), so that a decision never reads storage. Bindings are indexed by
// the subjects they name (a user name, a group name, a service account's user name), so a
// request looks only at the bindings that could apply to its user and groups, however many
// bindings the cluster holds.
//
// visitRulesFor follows kube's DefaultRuleResolver.VisitRulesFor (pkg/registry/rbac/validation/
// rule.go): the ClusterRoleBindings that apply to the user, then the RoleBindings of the
// namespace; each binding's role resolved (a missing one is an error, as the lister's NotFound);
// appliesTo picks the first subject of a binding that names the user, for the describer's text.
//
// What a user's bindings resolve to in a namespace (the bindings that apply, in kube's order, each
// with its role's rules or its error) is worked out once per user object and namespace and kept
// until the policy next changes (any upsert or remove): requests on one connection (a client
// certificate) or with one cached token carry the same UserInfo object, so their decisions only
// match rules (kube resolves again at every request; the answer is the same). `npm run bench --
// --only=rbac` measures it.
import type { UserInfo } from '../../authentication/user.ts';
import { goQuote } from '../../go/strconv.ts';
import { policyRulesOf, type PolicyRule } from './rules.ts';

export type RbacKind = 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';

interface Subject {
  kind: string;
  name: string;
  namespace: string;
}

interface Binding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  namespace: string;
  name: string;
  roleRef: { kind: string; name: string };
  subjects: Subject[];
  /** The subject-index keys this binding is filed under. */
  keys: string[];
}

/** Where a rule came from: the binding and its subject that applied (kube's roleBindingDescriber). */
export interface RuleSource {
  binding: Binding;
  subject: Subject;
}

/** Returns false to stop visiting (kube's visitor). */
export type RuleVisitor = (source: RuleSource | undefined, rule: PolicyRule | undefined, error: string | undefined) => boolean;

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * kube's clusterRoleBindingDescriber / roleBindingDescriber: `ClusterRoleBinding "x" of
 * ClusterRole "y" to User "alice"`, `RoleBinding "x/ns" of Role "y" to ServiceAccount "sa/ns"`.
 */
export function describeSource({ binding, subject }: RuleSource): string {
  const name = binding.kind === 'RoleBinding' ? `${binding.name}/${binding.namespace}` : binding.name;
  return `${binding.kind} ${goQuote(name)} of ${binding.roleRef.kind} ${goQuote(binding.roleRef.name)} to ${describeSubject(subject, binding.kind === 'RoleBinding' ? binding.namespace : '')}`;
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${goQuote(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${goQuote(s.name)}`;
}

/** The index key a subject is found under, or none when it can never apply (kube's appliesToUser). */
function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return `u:${s.name}`;
    case 'Group':
      return `g:${s.name}`;
    case 'ServiceAccount': {
      // A RoleBinding's service account without a namespace is of the binding's namespace.
      const ns = s.namespace || bindingNamespace;
      return ns ? `u:${SERVICE_ACCOUNT_PREFIX}${ns}:${s.name}` : undefined;
    }
    default:
      return undefined;
  }
}

/** kube's appliesTo: the first of a binding's subjects that names the user. */
function firstApplyingSubject(user: UserInfo, b: Binding): Subject | undefined {
  for (const s of b.subjects) {
    const key = subjectKey(s, b.namespace);
    if (key === undefined) continue;
    if (key.startsWith('u:') ? key.slice(2) === user.name : user.groups.includes(key.slice(2))) return s;
  }
  return undefined;
}

/** The bindings of one scope (the cluster, or one namespace), filed by subject. */
class SubjectIndex {
  private readonly bySubject = new Map<string, Set<Binding>>();

  add(b: Binding): void {
    for (const key of b.keys) {
      let set = this.bySubject.get(key);
      if (!set) this.bySubject.set(key, (set = new Set()));
      set.add(b);
    }
  }

  remove(b: Binding): void {
    for (const key of b.keys) {
      const set = this.bySubject.get(key);
      if (!set) continue;
      set.delete(b);
      if (set.size === 0) this.bySubject.delete(key);
    }
  }

  get size(): number {
    return this.bySubject.size;
  }

  /** The bindings naming the user or one of its groups, each once. */
  candidates(user: UserInfo): Iterable<Binding> {
    const own = this.bySubject.get(`u:${user.name}`);
    let out: Set<Binding> | undefined;
    for (const g of user.groups) {
      const set = this.bySubject.get(`g:${g}`);
      if (!set) continue;
      out ??= new Set(own);
      for (const b of set) out.add(b);
    }
    return out ?? own ?? [];
  }
}

/** A binding that applies to a user, resolved: its role's rules, or the error resolving it. */
export interface ResolvedBinding {
  source: RuleSource;
  rules: readonly PolicyRule[];
  error: string | undefined;
  /** describeSource(source), made when a decision first needs it (an allowed request's reason). */
  described?: string;
}

/** What one user's bindings resolve to, per namespace ("" for cluster scope alone), at one policy generation. */
interface ResolvedForUser {
  generation: number;
  byNamespace: Map<string, readonly ResolvedBinding[]>;
}

export class RbacPolicyIndex {
  /** Bumped by every change, so that what was resolved before it is resolved again. */
  private generation = 0;
  private readonly resolvedByUser = new WeakMap<UserInfo, ResolvedForUser>();
  private readonly clusterRoles = new Map<string, PolicyRule[]>();
  /** Roles by `namespace/name`. */
  private readonly roles = new Map<string, PolicyRule[]>();
  /** Bindings by `kind/namespace/name`, to find the one an update or delete replaces. */
  private readonly bindings = new Map<string, Binding>();
  private readonly clusterBindings = new SubjectIndex();
  private readonly namespaceBindings = new Map<string, SubjectIndex>();

  /** An object of one of the four kinds was created or changed (or is there at start). */
  upsert(kind: RbacKind, obj: unknown): void {
    this.generation++;
    const o = record(obj);
    const meta = record(o.metadata);
    const name = str(meta.name);
    const namespace = kind === 'Role' || kind === 'RoleBinding' ? str(meta.namespace) : '';
    switch (kind) {
      case 'ClusterRole':
        this.clusterRoles.set(name, policyRulesOf(o.rules));
        return;
      case 'Role':
        this.roles.set(`${namespace}/${name}`, policyRulesOf(o.rules));
        return;
      default: {
        this.remove(kind, namespace, name);
        const ref = record(o.roleRef);
        const subjects = (Array.isArray(o.subjects) ? o.subjects : []).map((s: unknown) => {
          const r = record(s);
          return { kind: str(r.kind), name: str(r.name), namespace: str(r.namespace) };
        });
        const keys = [...new Set(subjects.map((s) => subjectKey(s, namespace)).filter((k): k is string => k !== undefined))];
        const b: Binding = { kind, namespace, name, roleRef: { kind: str(ref.kind), name: str(ref.name) }, subjects, keys };
        this.bindings.set(`${kind}/${namespace}/${name}`, b);
        this.scope(namespace, true)!.add(b);
      }
    }
  }

  /** An object of one of the four kinds was deleted. */
  remove(kind: RbacKind, namespace: string, name: string): void {
    this.generation++;
    switch (kind) {
      case 'ClusterRole':
        this.clusterRoles.delete(name);
        return;
      case 'Role':
        this.roles.delete(`${namespace}/${name}`);
        return;
      default: {
        const key = `${kind}/${namespace}/${name}`;
        const b = this.bindings.get(key);
        if (!b) return;
        this.bindings.delete(key);
        const scope = this.scope(namespace, false);
        scope?.remove(b);
        if (namespace && scope?.size === 0) this.namespaceBindings.delete(namespace);
      }
    }
  }

  private scope(namespace: string, create: boolean): SubjectIndex | undefined {
    if (!namespace) return this.clusterBindings;
    let s = this.namespaceBindings.get(namespace);
    if (!s && create) this.namespaceBindings.set(namespace, (s = new SubjectIndex()));
    return s;
  }

  /** kube's GetRoleReferenceRules: the rules of the role a binding names, or the error a lister gives. */
  roleReferenceRules(ref: { kind: string; name: string }, bindingNamespace: string): PolicyRule[] | string {
    switch (ref.kind) {
      case 'Role':
        return this.roles.get(`${bindingNamespace}/${ref.name}`) ?? `role.rbac.authorization.k8s.io ${goQuote(ref.name)} not found`;
      case 'ClusterRole':
        return this.clusterRoles.get(ref.name) ?? `clusterrole.rbac.authorization.k8s.io ${goQuote(ref.name)} not found`;
      default:
        return `unsupported role reference kind: ${goQuote(ref.kind)}`;
    }
  }

  /**
   * The bindings that apply to the user in the namespace ("" for cluster scope), in kube's order
   * (ClusterRoleBindings, then the namespace's RoleBindings), each with its role's rules or the
   * error resolving it. Kept per user object until the policy changes; not to be modified (but for
   * the `described` memo).
   */
  resolvedFor(user: UserInfo, namespace: string): readonly ResolvedBinding[] {
    let mine = this.resolvedByUser.get(user);
    if (!mine || mine.generation !== this.generation) this.resolvedByUser.set(user, (mine = { generation: this.generation, byNamespace: new Map() }));
    // A namespace without RoleBindings resolves as cluster scope does: kept under "", so that what
    // is kept is bounded by the namespaces that hold bindings, not by the names requests make up.
    const scope = namespace ? this.namespaceBindings.get(namespace) : undefined;
    const key = scope ? namespace : '';
    let resolved = mine.byNamespace.get(key);
    if (!resolved) {
      const out: ResolvedBinding[] = [];
      this.resolveScope(this.clusterBindings, user, '', out);
      if (scope) this.resolveScope(scope, user, namespace, out);
      mine.byNamespace.set(key, (resolved = out));
    }
    return resolved;
  }

  private resolveScope(scope: SubjectIndex, user: UserInfo, namespace: string, out: ResolvedBinding[]): void {
    for (const binding of scope.candidates(user)) {
      const subject = firstApplyingSubject(user, binding);
      if (!subject) continue;
      const rules = this.roleReferenceRules(binding.roleRef, namespace);
      out.push(typeof rules === 'string' ? { source: { binding, subject }, rules: [], error: rules } : { source: { binding, subject }, rules, error: undefined });
    }
  }

  /** Each rule that applies to the user in the namespace ("" for cluster scope), and each error, until the visitor says stop. */
  visitRulesFor(user: UserInfo, namespace: string, visit: RuleVisitor): void {
    for (const r of this.resolvedFor(user, namespace)) {
      if (r.error !== undefined) {
        if (!visit(undefined, undefined, r.error)) return;
        continue;
      }
      for (const rule of r.rules) if (!visit(r.source, rule, undefined)) return;
    }
  }

  /** kube's RulesFor: every rule that applies, and the errors met finding them. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(user, namespace, (_source, rule, error) => {
      if (rule) rules.push(rule);
      if (error) errors.push(error);
      return true;
    });
    return { rules, errors };
  }
}
