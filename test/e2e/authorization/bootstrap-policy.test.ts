// kube's bootstrap RBAC policy in a running hearth (kube's rbac/bootstrap-roles post-start hook) and
// the ClusterRole aggregation controller, as clients see them: the defaults as kubectl and
// client-node read them (each object equal to test/fixtures/rbac-bootstrap-policy.json, normalized
// from kube's testdata; kubeadm's bindings beside them); /readyz's check; at a restart on the same
// data directory, a deleted object recreated, a protected one (autoupdate "false") left alone, a
// removed rule, subject or label given back; admin/edit/view aggregating the aggregate-to-* roles
// and a user's role labeled aggregate-to-view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { RbacBootstrap } from '../../../server/controllers/rbac-bootstrap.ts';
import { logMessage } from '../../helpers/log-lines.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const DEFAULTS = 'kubernetes.io/bootstrapping=rbac-defaults';

interface Rule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface FixtureObject {
  kind: string;
  name: string;
  namespace?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  rules?: Rule[];
  aggregationRule?: unknown;
  roleRef?: unknown;
  subjects?: unknown[];
}
const fixture: Record<string, FixtureObject[]> = JSON.parse(readFileSync(new URL('../../fixtures/rbac-bootstrap-policy.json', import.meta.url), 'utf8'));
const kubeClusterRoles = [...fixture.clusterRoles, ...fixture.controllerRoles];
const kubeClusterRoleBindings = [...fixture.clusterRoleBindings, ...fixture.controllerRoleBindings];
const fixtureOf = (name: string) => kubeClusterRoles.find((o) => o.name === name)!;

/** Polls until the check holds (the controllers work in the background); fails with what it saw last. */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  let last: T;
  for (;;) {
    last = await read();
    if (ok(last)) return last;
    if (Date.now() > deadline) assert.fail(`${what}: last seen ${JSON.stringify(last).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let s: TestServer;
let kc: k8s.KubeConfig;
let rbac: k8s.RbacAuthorizationV1Api;
before(async () => {
  s = await startTestServer();
  kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
});
after(async () => {
  await s?.stop();
});

const getJson = async (path: string) => {
  const r = await s.request('GET', path);
  assert.equal(r.status, 200, r.text);
  return r.json();
};
const rulesOf = async (name: string): Promise<Rule[]> => (await getJson(`${RBAC}/clusterroles/${name}`)).rules ?? [];

test('kubectl get clusterroles cluster-admin -o yaml: kube\'s rules, label and annotation, written by kube-apiserver', async () => {
  const r = await s.kubectl(['get', 'clusterroles', 'cluster-admin', '-o', 'yaml', '--show-managed-fields']);
  assert.equal(r.code, 0, r.stderr);
  const role = YAML.parse(r.stdout);
  assert.deepEqual(role.rules, [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, { nonResourceURLs: ['*'], verbs: ['*'] }]);
  assert.deepEqual(role.metadata.labels, { 'kubernetes.io/bootstrapping': 'rbac-defaults' });
  assert.deepEqual(role.metadata.annotations, { 'rbac.authorization.kubernetes.io/autoupdate': 'true' });
  assert.deepEqual(role.metadata.managedFields.map((m: { manager: string; operation: string }) => [m.manager, m.operation]), [['kube-apiserver', 'Update']]);
  const binding = await s.kubectl(['get', 'clusterrolebinding', 'cluster-admin', '-o', 'yaml']);
  assert.deepEqual(YAML.parse(binding.stdout).subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
});

test("every default object, listed by client-node with kube's label, is kube's: counts, rules, subjects, aggregation rules", async () => {
  const roles = (await rbac.listClusterRole({ labelSelector: DEFAULTS })).items;
  const bindings = (await rbac.listClusterRoleBinding({ labelSelector: DEFAULTS })).items;
  assert.equal(roles.length, kubeClusterRoles.length);
  assert.equal(bindings.length, kubeClusterRoleBindings.length);
  for (const role of roles) {
    const kube = fixtureOf(role.metadata!.name!);
    assert.ok(kube, role.metadata!.name);
    assert.deepEqual(role.metadata!.labels, kube.labels);
    assert.deepEqual(role.metadata!.annotations, kube.annotations);
    // (admin, edit and view get theirs from the aggregation controller: a test below)
    if (!kube.aggregationRule) assert.deepEqual(JSON.parse(JSON.stringify(role.rules ?? [])), kube.rules, role.metadata!.name);
    else assert.deepEqual(JSON.parse(JSON.stringify(role.aggregationRule)), kube.aggregationRule);
  }
  for (const binding of bindings) {
    const kube = kubeClusterRoleBindings.find((o) => o.name === binding.metadata!.name)!;
    assert.deepEqual(JSON.parse(JSON.stringify({ roleRef: binding.roleRef, subjects: binding.subjects ?? [] })), { roleRef: kube.roleRef, subjects: kube.subjects });
  }
  for (const ns of ['kube-system', 'kube-public']) {
    const nsRoles = (await rbac.listNamespacedRole({ namespace: ns, labelSelector: DEFAULTS })).items;
    const nsBindings = (await rbac.listNamespacedRoleBinding({ namespace: ns, labelSelector: DEFAULTS })).items;
    const kubeRoles = fixture.namespaceRoles.filter((o) => o.namespace === ns);
    const kubeBindings = fixture.namespaceRoleBindings.filter((o) => o.namespace === ns);
    assert.deepEqual(nsRoles.map((o) => o.metadata!.name).sort(), kubeRoles.map((o) => o.name).sort());
    assert.deepEqual(nsBindings.map((o) => o.metadata!.name).sort(), kubeBindings.map((o) => o.name).sort());
    for (const r of nsRoles) assert.deepEqual(JSON.parse(JSON.stringify(r.rules)), kubeRoles.find((o) => o.name === r.metadata!.name)!.rules);
    for (const b of nsBindings) assert.deepEqual(JSON.parse(JSON.stringify(b.subjects)), kubeBindings.find((o) => o.name === b.metadata!.name)!.subjects);
  }
});

test("kubeadm's bootstrap bindings are there, without kube's label", async () => {
  const all = (await rbac.listClusterRoleBinding()).items.filter((b) => b.metadata!.name!.startsWith('kubeadm:'));
  assert.deepEqual(
    all.map((b) => [b.metadata!.name, b.roleRef.name, b.subjects!.map((x) => `${x.kind}:${x.name}`), b.metadata!.labels]),
    [
      ['kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', ['Group:system:bootstrappers'], undefined],
      ['kubeadm:node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', ['Group:system:bootstrappers'], undefined],
      ['kubeadm:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', ['Group:system:nodes'], undefined],
    ],
  );
  const role = await rbac.readNamespacedRole({ name: 'kubeadm:bootstrap-signer-clusterinfo', namespace: 'kube-public' });
  assert.deepEqual(JSON.parse(JSON.stringify(role.rules)), [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['cluster-info'], verbs: ['get'] }]);
  const binding = await rbac.readNamespacedRoleBinding({ name: 'kubeadm:bootstrap-signer-clusterinfo', namespace: 'kube-public' });
  assert.deepEqual(JSON.parse(JSON.stringify(binding.subjects)), [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:anonymous' }]);
});

test('an anonymous client may not list the roles', async () => {
  const r = await s.request('GET', `${RBAC}/clusterroles`, { anonymous: true });
  assert.equal(r.status, 403);
  assert.equal(r.json().message, 'clusterroles.rbac.authorization.k8s.io is forbidden: User "system:anonymous" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope');
});

test('/readyz and /livez list poststarthook/rbac/bootstrap-roles; the hook is not ready until a pass is done, and a second pass writes nothing', async () => {
  const r = await s.request('GET', '/readyz?verbose');
  assert.equal(r.status, 200);
  assert.match(r.text, /^\[\+\]poststarthook\/rbac\/bootstrap-roles ok$/m);
  assert.match((await s.request('GET', '/livez?verbose')).text, /^\[\+\]poststarthook\/rbac\/bootstrap-roles ok$/m);
  const lines: string[] = [];
  const hook = new RbacBootstrap(s.store, s.catalog, (l) => lines.push(l));
  assert.equal(hook.healthCheck(), 'not finished');
  const rvBefore = (await getJson(`${RBAC}/clusterroles`)).metadata.resourceVersion;
  assert.deepEqual(await hook.run(), { created: 0, updated: 0, recreated: 0, skipped: 0 });
  assert.equal(hook.healthCheck(), undefined);
  assert.deepEqual(lines, []);
  assert.equal((await getJson(`${RBAC}/clusterroles`)).metadata.resourceVersion, rvBefore);
});

test("admin, edit and view aggregate the aggregate-to-* roles, in kube's order; a user's aggregate-to-view role joins view, edit and admin, and leaves them when deleted", async () => {
  const toView = fixtureOf('system:aggregate-to-view').rules!;
  const toEdit = fixtureOf('system:aggregate-to-edit').rules!;
  const toAdmin = fixtureOf('system:aggregate-to-admin').rules!;
  // by name: edit's selector matches system:aggregate-to-edit, then view; admin's edit, then system:aggregate-to-admin
  const view = toView;
  const edit = [...toEdit, ...view.filter((r) => !toEdit.some((e) => isDeepStrictEqual(e, r)))];
  const admin = [...edit, ...toAdmin];
  await eventually(() => rulesOf('view'), (r) => isDeepStrictEqual(r, view), 'view');
  await eventually(() => rulesOf('edit'), (r) => isDeepStrictEqual(r, edit), 'edit');
  await eventually(() => rulesOf('admin'), (r) => isDeepStrictEqual(r, admin), 'admin');
  const managers = (await getJson(`${RBAC}/clusterroles/view`)).metadata.managedFields.map((m: { manager: string; operation: string }) => `${m.manager} ${m.operation}`);
  assert.ok(managers.includes('clusterrole-aggregation-controller Apply'), managers.join(', '));

  const widgetRule = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] };
  const applied = await s.kubectl(['apply', '-f', '-'], {
    input: YAML.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widget-viewer', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [widgetRule] }),
  });
  assert.equal(applied.code, 0, applied.stderr);
  // after system:aggregate-to-view's ("widget-viewer" sorts after it)
  await eventually(() => rulesOf('view'), (r) => isDeepStrictEqual(r, [...view, widgetRule]), 'view with widgets');
  await eventually(() => rulesOf('edit'), (r) => r.some((x) => isDeepStrictEqual(x, widgetRule)), 'edit with widgets');
  await eventually(() => rulesOf('admin'), (r) => r.some((x) => isDeepStrictEqual(x, widgetRule)), 'admin with widgets');

  const deleted = await s.kubectl(['delete', 'clusterrole', 'widget-viewer']);
  assert.equal(deleted.code, 0, deleted.stderr);
  await eventually(() => rulesOf('view'), (r) => isDeepStrictEqual(r, view), 'view without widgets');
  await eventually(() => rulesOf('admin'), (r) => isDeepStrictEqual(r, admin), 'admin without widgets');

  // a user's aggregated role: its rules come and go with the one role it selects
  const created = await s.request('POST', `${RBAC}/clusterroles`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widget-all' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/widgets': 'true' } }] } } });
  assert.equal(created.status, 201, created.text);
  const part = await s.request('POST', `${RBAC}/clusterroles`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widget-part', labels: { 'example.com/widgets': 'true' } }, rules: [widgetRule] } });
  assert.equal(part.status, 201, part.text);
  await eventually(() => rulesOf('widget-all'), (r) => isDeepStrictEqual(r, [widgetRule]), 'widget-all');
  assert.equal((await s.request('DELETE', `${RBAC}/clusterroles/widget-part`)).status, 200);
  await eventually(() => rulesOf('widget-all'), (r) => r.length === 0, 'widget-all emptied');
});

test('a restart on the same data directory recreates what was deleted, gives back what was removed, and leaves autoupdate "false" alone', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-rbac-'));
  try {
    let r = await startTestServer({ dataDir });
    try {
      const ok = async (p: Promise<{ status: number; text: string }>) => {
        const res = await p;
        assert.ok(res.status < 300, res.text);
      };
      await ok(r.request('DELETE', `${RBAC}/clusterroles/system:heapster`));
      await ok(r.request('DELETE', `${RBAC}/clusterrolebindings/system:kube-dns`));
      await ok(r.request('DELETE', `${RBAC}/namespaces/kube-public/rolebindings/kubeadm:bootstrap-signer-clusterinfo`));
      // protected: no rules, autoupdate "false"
      await ok(r.request('PATCH', `${RBAC}/clusterroles/system:kube-aggregator`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { metadata: { annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, rules: [] } }));
      // system:node without its nodes/status rule (the 5th); system:basic-user without kube's label
      const node = await r.request('GET', `${RBAC}/clusterroles/system:node`);
      const nodeRules: Rule[] = node.json().rules;
      assert.deepEqual(nodeRules[4], { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch', 'update'] });
      await ok(r.request('PATCH', `${RBAC}/clusterroles/system:node`, { headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'remove', path: '/rules/4' }] }));
      await ok(r.request('PATCH', `${RBAC}/clusterroles/system:basic-user`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { metadata: { labels: { 'kubernetes.io/bootstrapping': null, team: 'a' } } } }));
      // system:public-info-viewer's binding gone, system:discovery's bound to alice too: kube's hook
      // makes the first from the second (it was split from it), then adds what it lacks
      await ok(r.request('DELETE', `${RBAC}/clusterrolebindings/system:public-info-viewer`));
      await ok(r.request('PATCH', `${RBAC}/clusterrolebindings/system:discovery`, { headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'add', path: '/subjects/-', value: { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' } }] }));
      // kubeadm's binding changed by the user: kept as it is
      await ok(r.request('PATCH', `${RBAC}/clusterrolebindings/kubeadm:kubelet-bootstrap`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:bootstrappers:kubeadm:default-node-token' }] } }));
    } finally {
      await r.stop();
    }

    const lines: string[] = [];
    r = await startTestServer({ dataDir, options: { log: (l) => lines.push(logMessage(l)) } });
    try {
      const get = async (path: string) => (await r.request('GET', `${RBAC}${path}`)).json();
      assert.deepEqual((await get('/clusterroles/system:heapster')).rules, fixtureOf('system:heapster').rules);
      assert.deepEqual((await get('/clusterrolebindings/system:kube-dns')).subjects, [{ kind: 'ServiceAccount', name: 'kube-dns', namespace: 'kube-system' }]);
      assert.deepEqual((await get('/namespaces/kube-public/rolebindings/kubeadm:bootstrap-signer-clusterinfo')).subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:anonymous' }]);

      const aggregator = await get('/clusterroles/system:kube-aggregator');
      assert.deepEqual(aggregator.rules ?? [], []);
      assert.equal(aggregator.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'false');
      assert.ok(lines.some((l) => l.startsWith('warning: skipped reconcile-protected clusterrole.rbac.authorization.k8s.io/system:kube-aggregator with missing permissions: [PolicyRule{APIGroups:[""], Resources:["endpoints"], Verbs:["get"]}')), lines.join('\n'));

      // kube's union: the missing rule comes back at the end, broken down one verb each
      const expected = [...fixtureOf('system:node').rules!];
      expected.splice(4, 1);
      expected.push({ apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] }, { apiGroups: [''], resources: ['nodes/status'], verbs: ['update'] });
      const node = await get('/clusterroles/system:node');
      assert.deepEqual(node.rules, expected);
      assert.deepEqual(node.metadata.managedFields.map((m: { manager: string }) => m.manager), ['kube-apiserver']);
      assert.ok(lines.includes('updated clusterrole.rbac.authorization.k8s.io/system:node with additional permissions: [PolicyRule{APIGroups:[""], Resources:["nodes/status"], Verbs:["patch"]} PolicyRule{APIGroups:[""], Resources:["nodes/status"], Verbs:["update"]}]'), lines.join('\n'));

      assert.deepEqual((await get('/clusterroles/system:basic-user')).metadata.labels, { 'kubernetes.io/bootstrapping': 'rbac-defaults', team: 'a' });
      assert.deepEqual((await get('/clusterrolebindings/system:public-info-viewer')).subjects, [
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' },
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' },
      ]);
      assert.ok(lines.includes('copying subjects, labels, and annotations from ClusterRoleBinding "system:discovery" to template "system:public-info-viewer"'), lines.join('\n'));
      assert.ok(lines.includes('updated clusterrolebinding.rbac.authorization.k8s.io/system:public-info-viewer with additional subjects: [{Group rbac.authorization.k8s.io system:unauthenticated }]'), lines.join('\n'));
      assert.deepEqual((await get('/clusterrolebindings/kubeadm:kubelet-bootstrap')).subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:bootstrappers:kubeadm:default-node-token' }]);
      assert.ok(lines.includes('rbac/bootstrap-roles: created 2, updated 3, recreated 0 of the default RBAC objects'), lines.join('\n'));
    } finally {
      await r.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('without the clusterrole-aggregation-controller (--controllers), view has no rules', async () => {
  const r = await startTestServer({ options: { controllers: ['*', '-clusterrole-aggregation-controller'] } });
  try {
    const view = (await r.request('GET', `${RBAC}/clusterroles/view`)).json();
    assert.deepEqual(view.rules ?? [], []);
    assert.deepEqual(view.aggregationRule, fixtureOf('view').aggregationRule);
  } finally {
    await r.stop();
  }
});
