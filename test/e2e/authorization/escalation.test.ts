// RBAC's escalation prevention through HTTPS, as kube-apiserver's RBAC storage answers: `alice`
// (a client certificate in `developers`) may write Roles and RoleBindings in team-a, and
// grants only what she holds unless she has `escalate` on the role or `bind` on the role a
// binding names; a refusal is kube's 403 listing what she lacks, and leaves nothing behind;
// kubectl shows it; the admin (system:masters) is never checked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-escalation-'));
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const ALICE_IS = 'user "alice" (groups=["developers" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:';

type Json = Record<string, unknown>;
let s: TestServer;
let alice: { cert: string; key: string };
let aliceKubeconfig: string;

before(async () => {
  s = await startTestServer();
  const issued = await issueClientCertificate(s.pki, { commonName: 'alice', organizations: ['developers'] });
  alice = { cert: issued.certPem, key: issued.keyPem! };
  aliceKubeconfig = join(dir, 'alice.kubeconfig');
  writeFileSync(aliceKubeconfig, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, clientCertPem: alice.cert, clientKeyPem: alice.key, userName: 'alice', namespace: 'team-a' }));
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team-a' } } })).status, 201);
  // What alice holds in team-a: writing roles and bindings, reading pods.
  await asAdmin('POST', `${RBAC}/namespaces/team-a/roles`, role('role-manager', [
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'update', 'get'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
  ]));
  await asAdmin('POST', `${RBAC}/namespaces/team-a/rolebindings`, binding('alice-manages', { kind: 'Role', name: 'role-manager' }));
  await asAdmin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'secret-admin' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['*'] }] });
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const role = (name: string, rules: Json[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules });
const binding = (name: string, roleRef: Json) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }] });

async function asAdmin(method: string, path: string, body: unknown): Promise<Json> {
  const r = await s.request(method, path, { body });
  assert.ok(r.status === 200 || r.status === 201, `${method} ${path}: ${r.status} ${r.text}`);
  return r.json() as Json;
}

function asAlice(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const req = https.request(`${s.url}${path}`, { method, headers, agent: false, ca: s.pki.caCertPem, ...alice }, (res) => {
      let t = '';
      res.on('data', (d) => (t += d));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(t) as Json }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

test('a Role within what alice holds is created; one beyond it is kube\'s 403 listing what she lacks, and nothing is stored', async () => {
  const within = await asAlice('POST', `${RBAC}/namespaces/team-a/roles`, role('pod-lister', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]));
  assert.equal(within.status, 201, JSON.stringify(within.json));

  const beyond = role('too-much', [
    { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] },
  ]);
  for (const query of ['', '?dryRun=All']) {
    const r = await asAlice('POST', `${RBAC}/namespaces/team-a/roles${query}`, beyond);
    assert.equal(r.status, 403);
    assert.equal(r.json.reason, 'Forbidden');
    assert.equal(r.json.message, `roles.rbac.authorization.k8s.io "too-much" is forbidden: ${ALICE_IS}\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`);
    assert.deepEqual(r.json.details, { name: 'too-much', group: 'rbac.authorization.k8s.io', kind: 'roles' });
  }
  assert.equal((await s.request('GET', `${RBAC}/namespaces/team-a/roles/too-much`)).status, 404);
  // An update that adds a rule she lacks is refused the same way.
  const current = await asAlice('GET', `${RBAC}/namespaces/team-a/roles/pod-lister`);
  const update = await asAlice('PUT', `${RBAC}/namespaces/team-a/roles/pod-lister`, { ...current.json, rules: [{ apiGroups: [''], resources: ['pods', 'pods/exec'], verbs: ['list', 'create'] }] });
  assert.equal(update.status, 403);
  assert.equal(update.json.message, `roles.rbac.authorization.k8s.io "pod-lister" is forbidden: ${ALICE_IS}\n{APIGroups:[""], Resources:["pods"], Verbs:["create"]}\n{APIGroups:[""], Resources:["pods/exec"], Verbs:["list" "create"]}`);
});

test('escalate on the role (resourceNames honoured) lets alice grant more', async () => {
  await asAdmin('POST', `${RBAC}/namespaces/team-a/roles`, role('may-escalate', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'], resourceNames: ['too-much'] }]));
  await asAdmin('POST', `${RBAC}/namespaces/team-a/rolebindings`, binding('alice-escalates', { kind: 'Role', name: 'may-escalate' }));
  const r = await asAlice('POST', `${RBAC}/namespaces/team-a/roles`, role('too-much', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }]));
  assert.equal(r.status, 201, JSON.stringify(r.json));
  // Another name is not covered by the escalate rule.
  const other = await asAlice('POST', `${RBAC}/namespaces/team-a/roles`, role('also-too-much', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]));
  assert.equal(other.status, 403);
});

test('a binding to a role alice holds is created; to one she does not, refused unless she may bind it', async () => {
  const held = await asAlice('POST', `${RBAC}/namespaces/team-a/rolebindings`, binding('to-pod-lister', { kind: 'Role', name: 'pod-lister' }));
  assert.equal(held.status, 201, JSON.stringify(held.json));
  const notHeld = await asAlice('POST', `${RBAC}/namespaces/team-a/rolebindings`, binding('to-secret-admin', { kind: 'ClusterRole', name: 'secret-admin' }));
  assert.equal(notHeld.status, 403);
  assert.equal(notHeld.json.message, `rolebindings.rbac.authorization.k8s.io "to-secret-admin" is forbidden: ${ALICE_IS}\n{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}`);
  const missing = await asAlice('POST', `${RBAC}/namespaces/team-a/rolebindings`, binding('to-nothing', { kind: 'ClusterRole', name: 'nope' }));
  assert.equal(missing.status, 403);
  assert.equal(missing.json.message, 'rolebindings.rbac.authorization.k8s.io "to-nothing" is forbidden: clusterrole.rbac.authorization.k8s.io "nope" not found');
  assert.equal((await s.request('GET', `${RBAC}/namespaces/team-a/rolebindings/to-secret-admin`)).status, 404);

  await asAdmin('POST', `${RBAC}/namespaces/team-a/roles`, role('may-bind', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['secret-admin'] }]));
  await asAdmin('POST', `${RBAC}/namespaces/team-a/rolebindings`, binding('alice-binds', { kind: 'Role', name: 'may-bind' }));
  const bound = await asAlice('POST', `${RBAC}/namespaces/team-a/rolebindings`, binding('to-secret-admin', { kind: 'ClusterRole', name: 'secret-admin' }));
  assert.equal(bound.status, 201, JSON.stringify(bound.json));
  // She now holds secret-admin's rules in team-a, so a Role with them is no escalation.
  const r = await asAlice('POST', `${RBAC}/namespaces/team-a/roles`, role('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]));
  assert.equal(r.status, 201, JSON.stringify(r.json));
});

test('an aggregationRule needs every permission; the admin is never checked', async () => {
  await asAdmin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'clusterrole-writer' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['create'] }] });
  await asAdmin('POST', `${RBAC}/clusterrolebindings`, { metadata: { name: 'alice-writes-clusterroles' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'clusterrole-writer' }, subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'developers' }] });
  const aggregated = { metadata: { name: 'aggregated' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate': 'true' } }] }, rules: [] };
  const r = await asAlice('POST', `${RBAC}/clusterroles`, aggregated);
  assert.equal(r.status, 403);
  assert.equal(r.json.message, 'clusterroles.rbac.authorization.k8s.io "aggregated" is forbidden: must have cluster-admin privileges to use the aggregationRule');
  const plain = await asAlice('POST', `${RBAC}/clusterroles`, { metadata: { name: 'empty' }, rules: [] });
  assert.equal(plain.status, 201, JSON.stringify(plain.json));
  await asAdmin('POST', `${RBAC}/clusterroles`, aggregated);
  await asAdmin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'everything' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] });
});

test('kubectl create role shows kube\'s refusal', async () => {
  const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', aliceKubeconfig, 'create', 'role', 'node-deleter', '--verb=delete', '--resource=configmaps'], { timeout: 60_000 }, (err, _stdout, stderr) => resolve({ code: err ? 1 : 0, stderr }));
  });
  assert.equal(r.code, 1);
  assert.equal(r.stderr.trim(), `Error from server (Forbidden): roles.rbac.authorization.k8s.io "node-deleter" is forbidden: ${ALICE_IS}\n{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}`);
});
