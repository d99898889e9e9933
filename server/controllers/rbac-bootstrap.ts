// kube-apiserver's rbac/bootstrap-roles post-start hook (pkg/registry/rbac/rest/storage_rbac.go,
// EnsureRBACPolicy): at every start the bootstrap policy (authorization/rbac/bootstrap-policy/) is
// reconciled into the store. Missing objects are created; existing ones get what they lack
// (labels, annotations, rules, aggregation selectors, subjects: a union, never a replacement,
// rbac-reconciliation.ts); a binding whose roleRef differs is recreated; objects annotated
// `rbac.authorization.kubernetes.io/autoupdate: "false"` are left alone. Before that, the hook's two
// migrations: a pre-aggregation admin/edit/view is copied to its system:aggregate-to-* role, and
// system:discovery's binding is copied to system:public-info-viewer's when that one is missing.
// The whole pass is retried every second for up to 30 s, as kube polls it. Then what kubeadm would
// have added (kubeadm.ts) is created where it is missing, and never changed.
//
// Written through the registry as the loopback identity with kube-apiserver's field manager (kube's
// loopback client's User-Agent is "kube-apiserver/..."; kubeadm's objects: "kubeadm"). The check
// poststarthook/rbac/bootstrap-roles (in /livez and /readyz, as kube lists its hooks) fails until
// a pass has succeeded.
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { ApiError } from '../errors.ts';
import { bootstrapPolicy, kubeadmPolicy, type RbacPolicy } from '../authorization/rbac/bootstrap-policy/index.ts';
import { reconcileRole, reconcileRoleBinding, type PolicyRule, type RbacObject } from './rbac-reconciliation.ts';
import { controllerWriteContext } from './queue-controller.ts';

export const BOOTSTRAP_ROLES_HOOK = 'poststarthook/rbac/bootstrap-roles';
const KUBE_APISERVER = 'kube-apiserver';
const KUBEADM = 'kubeadm';
/** kube's wait.Poll(1s, 30s) around the whole pass. */
const RETRY_INTERVAL_MS = 1000;
const RETRY_TIMEOUT_MS = 30_000;
const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** storage_rbac.go clusterRolesToAggregate: the roles aggregation split (1.9) and where their rules went. */
const CLUSTER_ROLES_TO_AGGREGATE: Record<string, string> = { admin: 'system:aggregate-to-admin', edit: 'system:aggregate-to-edit', view: 'system:aggregate-to-view' };
/** storage_rbac.go clusterRoleBindingsToSplit: system:discovery's binding gave rise to system:public-info-viewer's (1.14). */
const CLUSTER_ROLE_BINDINGS_TO_SPLIT: Record<string, string> = { 'system:discovery': 'system:public-info-viewer' };

type Kind = 'clusterroles' | 'clusterrolebindings' | 'roles' | 'rolebindings';
const SINGULAR: Record<Kind, string> = { clusterroles: 'clusterrole', clusterrolebindings: 'clusterrolebinding', roles: 'role', rolebindings: 'rolebinding' };

/** What a pass did, for the log and the tests. */
export interface BootstrapReport {
  created: number;
  updated: number;
  recreated: number;
  /** Protected objects that lacked something and were left so. */
  skipped: number;
}

export class RbacBootstrap {
  private readonly infos: Record<Kind, ResourceInfo>;
  private done = false;
  private stopped = false;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    private readonly log: (line: string) => void,
    private readonly policy: RbacPolicy = bootstrapPolicy(),
    private readonly kubeadm: RbacPolicy = kubeadmPolicy(),
  ) {
    const lookup = (resource: Kind) => catalog.lookup(RBAC_GROUP, 'v1', resource)!;
    this.infos = { clusterroles: lookup('clusterroles'), clusterrolebindings: lookup('clusterrolebindings'), roles: lookup('roles'), rolebindings: lookup('rolebindings') };
  }

  /** The /livez and /readyz check: kube's message for a post-start hook that has not finished. */
  healthCheck = (): string | undefined => (this.done ? undefined : 'not finished');

  /** Reconciles until a pass succeeds (retried for up to 30 s); throws the last error after that. */
  async run(): Promise<BootstrapReport> {
    const deadline = Date.now() + RETRY_TIMEOUT_MS;
    for (;;) {
      try {
        const report = await this.pass();
        this.done = true;
        if (report.created || report.updated || report.recreated) {
          this.log(`rbac/bootstrap-roles: created ${report.created}, updated ${report.updated}, recreated ${report.recreated} of the default RBAC objects`);
        }
        return report;
      } catch (e) {
        if (this.stopped || Date.now() >= deadline) throw new Error(`unable to initialize RBAC policy: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
        await new Promise((r) => setTimeout(r, RETRY_INTERVAL_MS));
      }
    }
  }

  /** Ends the retries of a pass still failing (the server is closing). */
  stop(): void {
    this.stopped = true;
  }

  private ctx(fieldManager: string): RequestContext {
    return controllerWriteContext(fieldManager);
  }

  private get(kind: Kind, ns: string, name: string): RbacObject | undefined {
    return this.store.tryGet(this.infos[kind], ns, name);
  }

  private async pass(): Promise<BootstrapReport> {
    const report: BootstrapReport = { created: 0, updated: 0, recreated: 0, skipped: 0 };
    await this.primeAggregatedClusterRoles();
    await this.primeSplitClusterRoleBindings();
    // (kube writes one after another; issued together, the log commits them in a few batches rather
    // than one transaction each: a fresh store's 131 objects take a fraction of the time)
    const writes = await Promise.allSettled([
      ...this.policy.clusterRoles.map((role) => this.ensureRole('clusterroles', role as unknown as RbacObject, report)),
      ...this.policy.clusterRoleBindings.map((binding) => this.ensureBinding('clusterrolebindings', binding as unknown as RbacObject, report)),
      ...this.policy.roles.map((role) => this.ensureRole('roles', role as unknown as RbacObject, report)),
      ...this.policy.roleBindings.map((binding) => this.ensureBinding('rolebindings', binding as unknown as RbacObject, report)),
    ]);
    // (all settled before the pass fails, so that a retry never overlaps writes of this one)
    for (const w of writes) if (w.status === 'rejected') throw w.reason;
    await this.ensureKubeadm();
    return report;
  }

  private async ensureRole(kind: Kind, expected: RbacObject, report: BootstrapReport): Promise<void> {
    const ns = expected.metadata.namespace ?? '';
    const name = expected.metadata.name;
    const result = reconcileRole(this.get(kind, ns, name), expected);
    if (result.operation === 'none') return;
    if (result.protected) {
      this.log(`warning: skipped reconcile-protected ${SINGULAR[kind]}.${RBAC_GROUP}/${name} with missing permissions: ${formatRules(result.missingRules)}`);
      report.skipped++;
      return;
    }
    await this.write(kind, ns, result.object, result.operation);
    if (result.operation === 'update') {
      this.log(`updated ${SINGULAR[kind]}.${RBAC_GROUP}/${name} with additional permissions: ${formatRules(result.missingRules)}`);
      report.updated++;
    } else {
      report.created++;
    }
  }

  private async ensureBinding(kind: Kind, expected: RbacObject, report: BootstrapReport): Promise<void> {
    const ns = expected.metadata.namespace ?? '';
    const name = expected.metadata.name;
    const result = reconcileRoleBinding(this.get(kind, ns, name), expected);
    if (result.operation === 'none') return;
    if (result.protected) {
      this.log(`warning: skipped reconcile-protected ${SINGULAR[kind]}.${RBAC_GROUP}/${name} with missing subjects: ${formatSubjects(result.missingSubjects)}`);
      report.skipped++;
      return;
    }
    if (result.operation === 'recreate') {
      await this.store.delete(this.infos[kind], ns, name, {}, this.ctx(KUBE_APISERVER));
      await this.write(kind, ns, result.object, 'create');
      this.log(`recreated ${SINGULAR[kind]}.${RBAC_GROUP}/${name}`);
      report.recreated++;
      return;
    }
    await this.write(kind, ns, result.object, result.operation);
    if (result.operation === 'update') {
      this.log(`updated ${SINGULAR[kind]}.${RBAC_GROUP}/${name} with additional subjects: ${formatSubjects(result.missingSubjects)}`);
      report.updated++;
    } else {
      report.created++;
    }
  }

  /** A create or a conditional update (the object read carries its resourceVersion); a lost race fails the pass, which is retried. */
  private async write(kind: Kind, ns: string, object: RbacObject, operation: 'create' | 'update' | 'recreate', fieldManager = KUBE_APISERVER): Promise<void> {
    if (operation === 'update') await this.store.update(this.infos[kind], ns, object.metadata.name, object, this.ctx(fieldManager));
    else await this.store.create(this.infos[kind], ns, object, this.ctx(fieldManager));
  }

  /** primeAggregatedClusterRoles: an admin/edit/view from before aggregation keeps its rules in the aggregate-to role. */
  private async primeAggregatedClusterRoles(): Promise<void> {
    for (const [oldName, newName] of Object.entries(CLUSTER_ROLES_TO_AGGREGATE)) {
      if (this.get('clusterroles', '', newName)) continue;
      const existing = this.get('clusterroles', '', oldName);
      // (one already aggregated has no rules of its own to move)
      if (!existing || existing.aggregationRule) continue;
      this.log(`migrating ${oldName} to ${newName}`);
      const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, managedFields: _mf, generation: _g, ...metadata } = existing.metadata;
      await this.write('clusterroles', '', { ...existing, metadata: { ...metadata, name: newName } }, 'create');
    }
  }

  /** primeSplitClusterRoleBindings: the new binding takes the subjects, labels and annotations of the one it was split from. */
  private async primeSplitClusterRoleBindings(): Promise<void> {
    for (const [existingName, newName] of Object.entries(CLUSTER_ROLE_BINDINGS_TO_SPLIT)) {
      const existing = this.get('clusterrolebindings', '', existingName);
      if (!existing || this.get('clusterrolebindings', '', newName)) continue;
      const template = this.policy.clusterRoleBindings.find((b) => b.metadata.name === newName);
      if (!template) continue;
      this.log(`copying subjects, labels, and annotations from ClusterRoleBinding "${existingName}" to template "${newName}"`);
      const copy: RbacObject = { ...structuredClone(template), metadata: { name: newName, labels: existing.metadata.labels, annotations: existing.metadata.annotations }, subjects: existing.subjects ?? undefined };
      await this.write('clusterrolebindings', '', copy, 'create');
    }
  }

  /** kubeadm's objects: created when missing, as `kubeadm init` (and `upgrade apply`) would; otherwise untouched. */
  private async ensureKubeadm(): Promise<void> {
    const all: [Kind, RbacObject][] = [
      ...this.kubeadm.clusterRoles.map((o): [Kind, RbacObject] => ['clusterroles', o as unknown as RbacObject]),
      ...this.kubeadm.clusterRoleBindings.map((o): [Kind, RbacObject] => ['clusterrolebindings', o as unknown as RbacObject]),
      ...this.kubeadm.roles.map((o): [Kind, RbacObject] => ['roles', o as unknown as RbacObject]),
      ...this.kubeadm.roleBindings.map((o): [Kind, RbacObject] => ['rolebindings', o as unknown as RbacObject]),
    ];
    for (const [kind, object] of all) {
      const ns = object.metadata.namespace ?? '';
      if (this.get(kind, ns, object.metadata.name)) continue;
      try {
        await this.write(kind, ns, structuredClone(object), 'create', KUBEADM);
      } catch (e) {
        if (!(e instanceof ApiError && e.reason === 'AlreadyExists')) throw e;
      }
    }
  }
}

/** The missing rules as kube's log prints them (a []PolicyRule with %v: each rule's CompactString, %q lists). */
function formatRules(rules: PolicyRule[]): string {
  const quoted = (list: string[]) => `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
  const compact = (r: PolicyRule) => {
    const parts: string[] = [];
    if (r.apiGroups?.length) parts.push(`APIGroups:${quoted(r.apiGroups)}`);
    if (r.resources?.length) parts.push(`Resources:${quoted(r.resources)}`);
    if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${quoted(r.nonResourceURLs)}`);
    if (r.resourceNames?.length) parts.push(`ResourceNames:${quoted(r.resourceNames)}`);
    if (r.verbs?.length) parts.push(`Verbs:${quoted(r.verbs)}`);
    return `PolicyRule{${parts.join(', ')}}`;
  };
  return `[${rules.map(compact).join(' ')}]`;
}

/** Subjects as Go's %v prints a []rbacv1.Subject: {Kind APIGroup Name Namespace}. */
function formatSubjects(subjects: unknown[]): string {
  const field = (s: unknown, k: string) => (s && typeof s === 'object' && typeof (s as Record<string, unknown>)[k] === 'string' ? ((s as Record<string, unknown>)[k] as string) : '');
  return `[${subjects.map((s) => `{${field(s, 'kind')} ${field(s, 'apiGroup')} ${field(s, 'name')} ${field(s, 'namespace')}}`).join(' ')}]`;
}
