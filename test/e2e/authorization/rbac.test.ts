// RBAC through HTTPS as kube-apiserver answers it, with several identities: the admin
// (system:masters), `alice` (a client certificate in the group `developers`), `bob` (a static
// token in the group `readers`) and the service account team-a/reader (a `kubectl create token`
// token). No binding is kube's 403; a RoleBinding to a ClusterRole grants one namespace; a
// ClusterRoleBinding to a group grants the cluster; resourceNames, subresources and
// nonResourceURLs match as kube's rules do; impersonation is RBAC's to allow; changes to roles
// and bindings decide the next request; the access reviews and `kubectl auth can-i` answer with
// kube's reasons.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { dig, requester, type Credentials, type Json } from '../../helpers/identities.ts';
import { startTestServer, kubectlsToTest, type TestServer } from '../../helpers/server.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-rbac-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'bob-token,bob,bob-uid,"readers"\n');



let s: TestServer;
const requestAs = requester(() => s);
let alice: Credentials;
const bob: Credentials = { token: 'bob-token' };
let reader: Credentials;
const kubeconfigs: Record<string, string> = {};

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile } });
  const issued = await issueClientCertificate(s.pki, { commonName: 'alice', organizations: ['developers'] });
  alice = { cert: issued.certPem, key: issued.keyPem! };
  for (const ns of ['team-a', 'team-b']) assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
  assert.equal((await s.request('POST', '/api/v1/namespaces/team-a/serviceaccounts', { body: { metadata: { name: 'reader' } } })).status, 201);
  const token = await s.kubectl(['create', 'token', 'reader', '-n', 'team-a']);
  assert.equal(token.code, 0, token.stderr);
  reader = { token: token.stdout.trim() };
  kubeconfigs.alice = join(dir, 'alice.kubeconfig');
  writeFileSync(kubeconfigs.alice, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, clientCertPem: alice.cert, clientKeyPem: alice.key, userName: 'alice', namespace: 'team-a' }));
  kubeconfigs.bob = join(dir, 'bob.kubeconfig');
  writeFileSync(kubeconfigs.bob, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, token: 'bob-token', userName: 'bob', namespace: 'team-a' }));
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});


/** A GET as one identity with extra headers (Impersonate-*). */
function requestWithHeaders(who: Credentials, path: string, extra: Record<string, string>): Promise<{ status: number; json: Json; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json', ...extra };
    if (who.token) headers.authorization = `Bearer ${who.token}`;
    const req = https.request(`${s.url}${path}`, { headers, agent: false, ca: s.pki.caCertPem, cert: who.cert, key: who.key }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) as Json, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Creates (or replaces) an object as the admin. */
async function apply(path: string, obj: Json): Promise<void> {
  const r = await s.request('POST', path, { body: obj });
  if (r.status === 409) {
    const name = String(dig(obj, 'metadata', 'name'));
    const current = await s.request('GET', `${path}/${name}`);
    const put = await s.request('PUT', `${path}/${name}`, { body: { ...obj, metadata: { ...(obj.metadata as Json), resourceVersion: dig(current.json(), 'metadata', 'resourceVersion') } } });
    assert.equal(put.status, 200, put.text);
    return;
  }
  assert.equal(r.status, 201, r.text);
}

async function remove(path: string): Promise<void> {
  const r = await s.request('DELETE', path);
  assert.equal(r.status, 200, r.text);
}

const clusterRole = (name: string, rules: Json[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules });
const role = (ns: string, name: string, rules: Json[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: ns }, rules });
const roleBinding = (ns: string, name: string, roleRef: Json, subjects: Json[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef }, subjects });
const clusterRoleBinding = (name: string, roleRef: Json, subjects: Json[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef }, subjects });
const user = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
const group = (name: string) => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name });

/** Asks until `ok` holds, a bounded number of times (the index follows the commit stream). */
async function eventually<T>(ask: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  let last = await ask();
  for (let i = 0; i < 50 && !ok(last); i++) {
    await new Promise((r) => setTimeout(r, 20));
    last = await ask();
  }
  return last;
}

/** A SubjectAccessReview as the admin. */
async function sar(spec: Json): Promise<Json> {
  const r = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

test('without a binding a user is refused with kube-apiserver\'s 403', async () => {
  const r = await requestAs(alice, 'GET', '/api/v1/namespaces/team-a/pods');
  assert.equal(r.status, 403);
  assert.equal(dig(r.json, 'reason'), 'Forbidden');
  assert.equal(dig(r.json, 'message'), 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-a"');
  assert.deepEqual(dig(r.json, 'details'), { kind: 'pods' });
  const t = await requestAs(bob, 'GET', '/api/v1/namespaces/team-a/secrets/x');
  assert.equal(dig(t.json, 'message'), 'secrets "x" is forbidden: User "bob" cannot get resource "secrets" in API group "" in the namespace "team-a"');
  const sa = await requestAs(reader, 'GET', '/apis/apps/v1/deployments');
  assert.equal(dig(sa.json, 'message'), 'deployments.apps is forbidden: User "system:serviceaccount:team-a:reader" cannot list resource "deployments" in API group "apps" at the cluster scope');
});

test('a RoleBinding to a ClusterRole grants its namespace only, and says so', async () => {
  await apply(`${RBAC}/clusterroles`, clusterRole('pod-reader', [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] }]));
  await apply(`${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'alice-reads', { kind: 'ClusterRole', name: 'pod-reader' }, [user('alice')]));
  const inA = await eventually(() => requestAs(alice, 'GET', '/api/v1/namespaces/team-a/pods'), (r) => r.status === 200);
  assert.equal(inA.status, 200, inA.text);
  assert.equal(dig(inA.json, 'kind'), 'PodList');
  const inB = await requestAs(alice, 'GET', '/api/v1/namespaces/team-b/pods');
  assert.equal(inB.status, 403);
  const everywhere = await requestAs(alice, 'GET', '/api/v1/pods');
  assert.equal(everywhere.status, 403);
  assert.equal(dig(everywhere.json, 'message'), 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope');
  // Not a verb the role has.
  const del = await requestAs(alice, 'DELETE', '/api/v1/namespaces/team-a/pods/p');
  assert.equal(del.status, 403);

  const review = await sar({ user: 'alice', groups: ['developers'], resourceAttributes: { namespace: 'team-a', verb: 'list', resource: 'pods' } });
  assert.deepEqual(dig(review, 'status'), { allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-reads/team-a" of ClusterRole "pod-reader" to User "alice"' });
  // pods/log is the rule's subresource; pods/exec is not.
  assert.equal(dig(await sar({ user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'pods', subresource: 'log', name: 'p' } }), 'status', 'allowed'), true);
  assert.deepEqual((await sar({ user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'pods', subresource: 'exec', name: 'p' } })).status, { allowed: false });
});

test('resourceNames allow the names listed only, and not list', async () => {
  for (const name of ['allowed-cm', 'other-cm']) assert.equal((await s.request('POST', '/api/v1/namespaces/team-a/configmaps', { body: { metadata: { name }, data: { a: 'b' } } })).status, 201);
  await apply(`${RBAC}/namespaces/team-a/roles`, role('team-a', 'one-configmap', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['allowed-cm'], verbs: ['get', 'update'] }]));
  await apply(`${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'bob-one-configmap', { kind: 'Role', name: 'one-configmap' }, [user('bob')]));
  const allowed = await eventually(() => requestAs(bob, 'GET', '/api/v1/namespaces/team-a/configmaps/allowed-cm'), (r) => r.status === 200);
  assert.equal(allowed.status, 200, allowed.text);
  assert.equal(dig(allowed.json, 'data', 'a'), 'b');
  const other = await requestAs(bob, 'GET', '/api/v1/namespaces/team-a/configmaps/other-cm');
  assert.equal(other.status, 403);
  assert.equal(dig(other.json, 'message'), 'configmaps "other-cm" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "team-a"');
  assert.deepEqual(dig(other.json, 'details'), { name: 'other-cm', kind: 'configmaps' });
  assert.equal((await requestAs(bob, 'GET', '/api/v1/namespaces/team-a/configmaps')).status, 403);
  const review = await sar({ user: 'bob', resourceAttributes: { namespace: 'team-a', verb: 'update', resource: 'configmaps', name: 'allowed-cm' } });
  assert.equal(dig(review, 'status', 'reason'), 'RBAC: allowed by RoleBinding "bob-one-configmap/team-a" of Role "one-configmap" to User "bob"');
});

test('a subresource rule (deployments/scale, */scale) grants the subresource, not its object', async () => {
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
  assert.equal((await s.request('POST', '/apis/apps/v1/namespaces/team-b/deployments', { body: deployment })).status, 201);
  await apply(`${RBAC}/namespaces/team-b/roles`, role('team-b', 'scaler', [{ apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['get'] }]));
  await apply(`${RBAC}/namespaces/team-b/rolebindings`, roleBinding('team-b', 'alice-scales', { kind: 'Role', name: 'scaler' }, [user('alice')]));
  const scale = await eventually(() => requestAs(alice, 'GET', '/apis/apps/v1/namespaces/team-b/deployments/web/scale'), (r) => r.status === 200);
  assert.equal(scale.status, 200, scale.text);
  assert.equal(dig(scale.json, 'kind'), 'Scale');
  const object = await requestAs(alice, 'GET', '/apis/apps/v1/namespaces/team-b/deployments/web');
  assert.equal(object.status, 403);
  const update = await requestAs(alice, 'PUT', '/apis/apps/v1/namespaces/team-b/deployments/web/scale', { ...scale.json, spec: { replicas: 2 } });
  assert.equal(update.status, 403);
  assert.equal(dig(update.json, 'message'), 'deployments.apps "web" is forbidden: User "alice" cannot update resource "deployments/scale" in API group "apps" in the namespace "team-b"');
  // `*/scale`: any resource's scale subresource, in any group the rule names.
  await apply(`${RBAC}/clusterroles`, clusterRole('any-scale', [{ apiGroups: ['*'], resources: ['*/scale'], verbs: ['update'] }]));
  await apply(`${RBAC}/namespaces/team-b/rolebindings`, roleBinding('team-b', 'alice-any-scale', { kind: 'ClusterRole', name: 'any-scale' }, [user('alice')]));
  const scaled = await eventually(() => requestAs(alice, 'PUT', '/apis/apps/v1/namespaces/team-b/deployments/web/scale', { ...scale.json, spec: { replicas: 2 } }), (r) => r.status === 200);
  assert.equal(scaled.status, 200, scaled.text);
  assert.equal(dig(scaled.json, 'spec', 'replicas'), 2);
  assert.equal(dig(await sar({ user: 'alice', resourceAttributes: { namespace: 'team-b', verb: 'update', group: 'apps', resource: 'deployments' } }), 'status', 'allowed'), false);
});

test('a ClusterRoleBinding to a group grants its members, and nonResourceURLs match exactly or by prefix', async () => {
  await apply(`${RBAC}/clusterroles`, clusterRole('paths-and-namespaces', [
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
    { nonResourceURLs: ['/custom/*', '/exact'], verbs: ['get'] },
  ]));
  await apply(`${RBAC}/clusterrolebindings`, clusterRoleBinding('readers-everywhere', { kind: 'ClusterRole', name: 'paths-and-namespaces' }, [group('readers')]));
  const list = await eventually(() => requestAs(bob, 'GET', '/api/v1/namespaces'), (r) => r.status === 200);
  assert.equal(list.status, 200, list.text);
  assert.ok((dig(list.json, 'items') as Json[]).some((n) => dig(n, 'metadata', 'name') === 'team-a'));
  // Allowed past authorization to a path nothing serves: kube's 404, not a 403.
  assert.equal((await requestAs(bob, 'GET', '/custom/any/thing')).status, 404);
  assert.equal((await requestAs(bob, 'GET', '/exact')).status, 404);
  const sub = await requestAs(bob, 'GET', '/exact/below');
  assert.equal(sub.status, 403);
  assert.equal(dig(sub.json, 'message'), 'forbidden: User "bob" cannot get path "/exact/below"');
  assert.equal((await requestAs(bob, 'POST', '/custom/x', {})).status, 403);
  const notMember = await requestAs(alice, 'GET', '/custom/x');
  assert.equal(notMember.status, 403);
  assert.equal(dig(notMember.json, 'message'), 'forbidden: User "alice" cannot get path "/custom/x"');
  const review = await sar({ user: 'someone', groups: ['readers'], nonResourceAttributes: { path: '/custom/y', verb: 'get' } });
  assert.deepEqual(dig(review, 'status'), { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "readers-everywhere" of ClusterRole "paths-and-namespaces" to Group "readers"' });
});

test('a ServiceAccount subject (its namespace defaulting to the RoleBinding\'s) is the service account\'s token', async () => {
  await apply(`${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'reader-reads', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'ServiceAccount', name: 'reader' }]));
  const pods = await eventually(() => requestAs(reader, 'GET', '/api/v1/namespaces/team-a/pods'), (r) => r.status === 200);
  assert.equal(pods.status, 200, pods.text);
  assert.equal((await requestAs(reader, 'GET', '/api/v1/namespaces/team-b/pods')).status, 403);
  // The service account asks about itself.
  const self = await requestAs(reader, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'team-a', verb: 'watch', resource: 'pods' } } });
  assert.equal(self.status, 201, self.text);
  assert.deepEqual(dig(self.json, 'status'), { allowed: true, reason: 'RBAC: allowed by RoleBinding "reader-reads/team-a" of ClusterRole "pod-reader" to ServiceAccount "reader/team-a"' });
  // A ClusterRoleBinding names the account's namespace.
  await apply(`${RBAC}/clusterrolebindings`, clusterRoleBinding('reader-namespaces', { kind: 'ClusterRole', name: 'paths-and-namespaces' }, [{ kind: 'ServiceAccount', name: 'reader', namespace: 'team-a' }]));
  const ns = await eventually(() => requestAs(reader, 'GET', '/api/v1/namespaces'), (r) => r.status === 200);
  assert.equal(ns.status, 200, ns.text);
});

test('impersonation is authorized by RBAC: impersonate on users (resourceNames honoured), then the request is the impersonated user\'s', async () => {
  const asAlice = { 'impersonate-user': 'alice' };
  const path = '/api/v1/namespaces/team-a/pods';
  const refused = await requestWithHeaders(bob, path, asAlice);
  assert.equal(refused.status, 403);
  assert.equal(dig(refused.json, 'message'), 'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope');
  await apply(`${RBAC}/clusterroles`, clusterRole('impersonate-alice', [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['alice'] }]));
  await apply(`${RBAC}/clusterrolebindings`, clusterRoleBinding('bob-impersonates-alice', { kind: 'ClusterRole', name: 'impersonate-alice' }, [user('bob')]));
  // As alice, bob reads what alice may read (her RoleBinding in team-a), and not what only he may.
  const allowed = await eventually(() => requestWithHeaders(bob, path, asAlice), (r) => r.status === 200);
  assert.equal(allowed.status, 200, allowed.text);
  assert.equal((await requestWithHeaders(bob, '/api/v1/namespaces/team-a/configmaps/allowed-cm', asAlice)).status, 403);
  // Another user is not in the rule's resourceNames.
  const other = await requestWithHeaders(bob, path, { 'impersonate-user': 'carol' });
  assert.equal(dig(other.json, 'message'), 'users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope');
});

test('changes to roles and bindings decide the next request, and a missing role is named in the 403', async () => {
  await apply(`${RBAC}/clusterroles`, clusterRole('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }]));
  await apply(`${RBAC}/namespaces/team-b/rolebindings`, roleBinding('team-b', 'alice-secrets', { kind: 'ClusterRole', name: 'secret-reader' }, [user('alice')]));
  const path = '/api/v1/namespaces/team-b/secrets';
  assert.equal((await eventually(() => requestAs(alice, 'GET', path), (r) => r.status === 200)).status, 200);
  // The role loses the verb: refused.
  await apply(`${RBAC}/clusterroles`, clusterRole('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]));
  assert.equal((await eventually(() => requestAs(alice, 'GET', path), (r) => r.status === 403)).status, 403);
  // The verb comes back, then the role goes: refused, with RBAC's reason naming the missing role.
  await apply(`${RBAC}/clusterroles`, clusterRole('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }]));
  assert.equal((await eventually(() => requestAs(alice, 'GET', path), (r) => r.status === 200)).status, 200);
  await remove(`${RBAC}/clusterroles/secret-reader`);
  const missing = await eventually(() => requestAs(alice, 'GET', path), (r) => r.status === 403);
  assert.equal(missing.status, 403);
  assert.equal(dig(missing.json, 'message'), 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team-b": RBAC: clusterrole.rbac.authorization.k8s.io "secret-reader" not found');
  // Two missing roles: kube's aggregate of both.
  await apply(`${RBAC}/namespaces/team-b/rolebindings`, roleBinding('team-b', 'alice-gone-role', { kind: 'Role', name: 'gone' }, [user('alice')]));
  const two = await eventually(() => requestAs(alice, 'GET', path), (r) => String(dig(r.json, 'message')).includes('role.rbac.authorization.k8s.io "gone"'));
  assert.match(String(dig(two.json, 'message')), /: RBAC: \[(cluster)?role\.rbac\.authorization\.k8s\.io "[a-z-]+" not found, (cluster)?role\.rbac\.authorization\.k8s\.io "[a-z-]+" not found\]$/);
  // The binding goes: the next request no longer hears of it.
  await remove(`${RBAC}/namespaces/team-b/rolebindings/alice-secrets`);
  await remove(`${RBAC}/namespaces/team-b/rolebindings/alice-gone-role`);
  const plain = await eventually(() => requestAs(alice, 'GET', path), (r) => !String(dig(r.json, 'message')).includes('RBAC'));
  assert.equal(dig(plain.json, 'message'), 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team-b"');
});

test('SubjectAccessReview, LocalSubjectAccessReview and SelfSubjectAccessReview validate as kube\'s', async () => {
  const post = (path: string, body: Json, who?: Credentials) => (who ? requestAs(who, 'POST', path, body) : s.request('POST', path, { body }).then((r) => ({ status: r.status, json: r.json() as Json, text: r.text })));
  const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
  const empty = await post(SAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: {} });
  assert.equal(empty.status, 422);
  assert.equal(dig(empty.json, 'message'), 'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]');
  const both = await post(SAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'x', resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/x', verb: 'get' } } });
  assert.equal(dig(both.json, 'message'), 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec: Invalid value: v1.NonResourceAttributes{Path:"/x", Verb:"get"}: exactly one of nonResourceAttributes or resourceAttributes must be specified');
  const selectors = await post(SAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'x', resourceAttributes: { verb: 'list', resource: 'pods', fieldSelector: { rawSelector: 'spec.nodeName=n', requirements: [{ key: 'spec.nodeName', operator: 'Exists', values: ['n'] }] }, labelSelector: { requirements: [{ key: '()foo', operator: 'In' }] } } } });
  assert.equal(selectors.status, 422);
  assert.equal(
    dig(selectors.json, 'message'),
    'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "spec.nodeName=n": may not specified at the same time as requirements, ' +
      "spec.resourceAttributes.fieldSelector.requirements[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist', " +
      "spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', " +
      "spec.resourceAttributes.labelSelector.requirements[0].key: Invalid value: \"()foo\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]",
  );
  // A selector is no limit RBAC knows of: the answer is RBAC's as without one.
  const withSelector = await post(SAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'list', resource: 'pods', fieldSelector: { rawSelector: 'spec.nodeName=n' } } } });
  assert.equal(dig(withSelector.json, 'status', 'allowed'), true);
  const named = await post(SAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: { name: 'n' }, spec: { user: 'x', resourceAttributes: { verb: 'get' } } });
  assert.equal(named.status, 422);
  assert.match(String(dig(named.json, 'message')), /^SubjectAccessReview\.authorization\.k8s\.io "" is invalid: metadata: Invalid value: v1\.ObjectMeta\{Name:"n", .*\}: must be empty$/);
  // Not the admin's to ask for alice.
  const asAlice = await post(SAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'x', resourceAttributes: { verb: 'get' } } }, alice);
  assert.equal(asAlice.status, 403);
  assert.equal(dig(asAlice.json, 'message'), 'subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope');

  const LSAR = '/apis/authorization.k8s.io/v1/namespaces/team-a/localsubjectaccessreviews';
  const lsar = await post(LSAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'pods' } } });
  assert.equal(lsar.status, 201, lsar.text);
  assert.equal(dig(lsar.json, 'metadata', 'namespace'), 'team-a');
  assert.equal(dig(lsar.json, 'status', 'allowed'), true);
  const mismatch = await post(LSAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'alice', resourceAttributes: { namespace: 'team-b', verb: 'get', resource: 'pods' } } });
  assert.equal(mismatch.status, 422);
  assert.equal(dig(mismatch.json, 'message'), 'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "team-b": must match metadata.namespace');
  const nonResource = await post(LSAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'alice', nonResourceAttributes: { path: '/x', verb: 'get' } } });
  assert.equal(dig(nonResource.json, 'message'), 'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: v1.NonResourceAttributes{Path:"/x", Verb:"get"}: disallowed on this kind of request');
  const otherNs = await post(LSAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'team-b' }, spec: { user: 'alice', resourceAttributes: { namespace: 'team-b', verb: 'get', resource: 'pods' } } });
  assert.equal(otherNs.status, 400);
  assert.equal(dig(otherNs.json, 'message'), 'the namespace of the provided object does not match the namespace sent on the request');
  assert.equal((await post('/apis/authorization.k8s.io/v1/localsubjectaccessreviews', { spec: {} })).status, 404);

  const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
  const self = await post(SSAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: {} });
  assert.equal(self.status, 422);
  assert.equal(dig(self.json, 'message'), 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified');
  // The admin's own question: system:masters, allowed before RBAC, with no reason.
  const admin = await post(SSAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'delete', resource: 'nodes' } } });
  assert.deepEqual(dig(admin.json, 'status'), { allowed: true });
  assert.deepEqual(dig(admin.json, 'metadata'), { creationTimestamp: null });
});

test('SelfSubjectRulesReview lists the rules that apply in a namespace', async () => {
  const SSRR = '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews';
  const r = await requestAs(alice, 'POST', SSRR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'team-a' } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(dig(r.json, 'spec'), {});
  // alice's RoleBinding, and what the bootstrap policy gives every authenticated user.
  const rules = dig(r.json, 'status', 'resourceRules') as Json[];
  const nonResource = dig(r.json, 'status', 'nonResourceRules') as Json[];
  assert.equal(dig(r.json, 'status', 'incomplete'), false);
  assert.ok(rules.some((x) => isDeepStrictEqual(x, { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'pods/log'] })), JSON.stringify(rules));
  assert.ok(rules.some((x) => isDeepStrictEqual(x, { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] })), "system:basic-user's");
  assert.ok(nonResource.some((x) => (dig(x, 'nonResourceURLs') as string[]).includes('/healthz')), "system:public-info-viewer's");
  assert.ok(!rules.some((x) => (dig(x, 'resources') as string[] | undefined)?.includes('secrets')), 'nothing alice was not given');
  const bobs = await requestAs(bob, 'POST', SSRR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'team-a' } });
  assert.ok((dig(bobs.json, 'status', 'nonResourceRules') as Json[]).some((x) => isDeepStrictEqual(x, { verbs: ['get'], nonResourceURLs: ['/custom/*', '/exact'] })));
  assert.ok((dig(bobs.json, 'status', 'resourceRules') as Json[]).some((x) => dig(x, 'resourceNames', 0) === 'allowed-cm'));
  const noNamespace = await requestAs(alice, 'POST', SSRR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: {} });
  assert.equal(noNamespace.status, 400);
  assert.equal(dig(noNamespace.json, 'message'), 'no namespace on request');
  // A binding to a missing role is the review's evaluationError.
  await apply(`${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'alice-missing', { kind: 'ClusterRole', name: 'not-there' }, [user('alice')]));
  const withError = await eventually(() => requestAs(alice, 'POST', SSRR, { spec: { namespace: 'team-a' } }), (x) => dig(x.json, 'status', 'evaluationError') !== undefined);
  assert.equal(dig(withError.json, 'status', 'evaluationError'), 'clusterrole.rbac.authorization.k8s.io "not-there" not found');
  await remove(`${RBAC}/namespaces/team-a/rolebindings/alice-missing`);
});

/** kubectl with a kubeconfig of this test's. */
function kubectlWith(binary: string, kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(binary, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

for (const { version, path: binary } of kubectlsToTest()) {
  test(`kubectl ${version} auth can-i: yes and no, --as, -n, --list`, async () => {
    // As alice herself.
    const yes = await kubectlWith(binary, kubeconfigs.alice, ['auth', 'can-i', 'list', 'pods']);
    assert.equal(yes.code, 0, yes.stderr);
    assert.equal(yes.stdout.trim(), 'yes');
    const no = await kubectlWith(binary, kubeconfigs.alice, ['auth', 'can-i', 'list', 'pods', '-n', 'team-b']);
    assert.equal(no.code, 1);
    assert.equal(no.stdout.trim(), 'no');
    // The admin asks for bob (impersonation, then SelfSubjectAccessReview as bob).
    const asBob = await s.kubectl(['auth', 'can-i', 'get', 'configmaps/allowed-cm', '-n', 'team-a', '--as', 'bob', '--as-group', 'readers'], { binary });
    assert.equal(asBob.stdout.trim(), 'yes', asBob.stderr);
    const asBobOther = await s.kubectl(['auth', 'can-i', 'get', 'configmaps/other-cm', '-n', 'team-a', '--as', 'bob'], { binary });
    assert.equal(asBobOther.stdout.trim(), 'no');
    const path = await kubectlWith(binary, kubeconfigs.bob, ['auth', 'can-i', 'get', '/custom/x']);
    assert.equal(path.stdout.trim(), 'yes', path.stderr);
    // --list: SelfSubjectRulesReview, printed as kubectl prints it.
    const list = await kubectlWith(binary, kubeconfigs.alice, ['auth', 'can-i', '--list', '-n', 'team-a']);
    assert.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
    assert.deepEqual(lines[0], ['Resources', 'Non-Resource', 'URLs', 'Resource', 'Names', 'Verbs']);
    assert.ok(lines.some((l) => l[0] === 'pods' && l.join(' ').endsWith('[get list watch]')), list.stdout);
    assert.ok(lines.some((l) => l[0] === 'pods/log'), list.stdout);
  });
}
