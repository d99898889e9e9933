// NodeRestriction admission through HTTPS, with kubectl (`--token`) and raw requests, as
// kube-apiserver answers a kubelet. Identities: the admin (system:masters); the nodes n1 and n2
// (static tokens `system:node:n1`/`system:node:n2` in `system:nodes`, and n1 once more with a
// client certificate hearth's signer issued from a kubelet CSR); carol, an ordinary user bound to
// cluster-admin; and `system:node:n3`, a user with a node's name but not in `system:nodes`.
// The server runs `--authorization-mode=RBAC` and the admin binds kube's `system:node` ClusterRole
// to the node users: RBAC lets them act, NodeRestriction is what narrows them. Under hearth's
// default Node,RBAC the Node authorizer refuses much of this before admission (another node's
// Lease, CSINode, PVC), as in kube, so that mode would not reach the plugin this file tests
// (kubelet-tls-bootstrap.test.ts and node-authorizer.test.ts run the default). Every refusal is kube's 403 and leaves nothing behind; a dry run is refused as the
// real request is; `--disable-admission-plugins=NodeRestriction` lifts it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dig, requester, type Credentials, type Json } from '../../helpers/identities.ts';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { x509 } from '../../../server/pki/certificates.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-node-restriction-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(
  tokenFile,
  ['n1-token,system:node:n1,uid-n1,"system:nodes"', 'n2-token,system:node:n2,uid-n2,"system:nodes"', 'carol-token,carol,uid-carol,"developers"', 'n3-token,system:node:n3,uid-n3,"developers"'].join('\n') + '\n',
);
const caFile = join(dir, 'ca.crt');
const emptyKubeconfig = join(dir, 'empty.kubeconfig');
writeFileSync(emptyKubeconfig, '');


const N1: Credentials = { token: 'n1-token' };
const N2: Credentials = { token: 'n2-token' };
const CAROL: Credentials = { token: 'carol-token' };
const N3_NOT_A_NODE: Credentials = { token: 'n3-token' };
const MIRROR = 'kubernetes.io/config.mirror';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const PODS = '/api/v1/namespaces/default/pods';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';

let s: TestServer;
const requestAs = requester(() => s);
let n1Uid = '';


/** kubectl with a bearer token and nothing from any kubeconfig. */
function kubectlAs(token: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      KUBECTL,
      ['--server', s.url, '--certificate-authority', caFile, '--token', token, ...args],
      { timeout: 60_000, env: { ...process.env, KUBECONFIG: emptyKubeconfig } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

function mirrorPod(name: string, node: string, nodeUid: string, spec: Json = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, annotations: { [MIRROR]: 'hash' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid: nodeUid, controller: true }] },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }], ...spec },
  };
}

function boundPod(name: string, node: string, spec: Json = {}): Json {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } }, spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }], ...spec } };
}

const forbiddenStatus = (r: { status: number; json: Json; text: string }, message: string) => {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json.kind, 'Status');
  assert.equal(r.json.reason, 'Forbidden');
  assert.equal(r.json.code, 403);
  assert.equal(r.json.message, message);
};

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile, authorizationModes: ['RBAC'] } });
  writeFileSync(caFile, s.pki.caCertPem);
  // RBAC lets the node users do what kube's system:node role grants; carol and n3 may do anything.
  const bind = (name: string, role: string, users: string[]) =>
    s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: users.map((u) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: u })) },
    });
  assert.equal((await bind('nodes', 'system:node', ['system:node:n1', 'system:node:n2'])).status, 201);
  assert.equal((await bind('carol-and-n3', 'cluster-admin', ['carol', 'system:node:n3'])).status, 201);
  // n2's Node and a pod bound to each node, as the admin and the scheduler would make them.
  assert.equal((await s.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'n2' } } })).status, 201);
  for (const [name, node] of [['on-n1', 'n1'], ['on-n2', 'n2']]) {
    const r = await s.request('POST', PODS, { body: boundPod(name, node) });
    assert.equal(r.status, 201, r.text);
  }
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a node creates and updates its own Node, not another; no node-restriction labels, no taint changes', async () => {
  const created = await kubectlAs('n1-token', ['create', '-f', '-', '-o', 'json'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } } }));
  assert.equal(created.code, 0, created.stderr);
  n1Uid = JSON.parse(created.stdout).metadata.uid;

  const other = await kubectlAs('n1-token', ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n9' } }));
  assert.notEqual(other.code, 0);
  assert.match(other.stderr, /Error from server \(Forbidden\).*nodes "n9" is forbidden: node "n1" is not allowed to modify node "n9"/);
  assert.equal((await s.request('GET', '/api/v1/nodes/n9')).status, 404);

  const relabel = await kubectlAs('n1-token', ['label', 'node', 'n2', 'foo=bar']);
  assert.notEqual(relabel.code, 0);
  assert.match(relabel.stderr, /nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"/);
  forbiddenStatus(await requestAs(N1, 'PATCH', '/api/v1/nodes/n2/status', { status: { phase: 'Running' } }, 'application/merge-patch+json'), 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');

  const restricted = await kubectlAs('n1-token', ['label', 'node', 'n1', 'node-restriction.kubernetes.io/pool=gold']);
  assert.notEqual(restricted.code, 0);
  assert.match(restricted.stderr, /nodes "n1" is forbidden: is not allowed to modify labels: node-restriction\.kubernetes\.io\/pool/);
  forbiddenStatus(
    await requestAs(N1, 'PATCH', '/api/v1/nodes/n1', { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }, 'application/merge-patch+json'),
    'nodes "n1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane',
  );
  forbiddenStatus(
    await requestAs(N1, 'PATCH', '/api/v1/nodes/n1', { spec: { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] } }, 'application/merge-patch+json'),
    'nodes "n1" is forbidden: node "n1" is not allowed to modify taints',
  );
  // What a kubelet may set on itself it sets.
  const allowed = await kubectlAs('n1-token', ['label', 'node', 'n1', 'kubernetes.io/os=linux', 'node.kubernetes.io/exclude-from-external-load-balancers=true', 'example.com/rack=r1']);
  assert.equal(allowed.code, 0, allowed.stderr);
  const n1 = (await s.request('GET', '/api/v1/nodes/n1')).json();
  assert.deepEqual(n1.metadata.labels, { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'node.kubernetes.io/exclude-from-external-load-balancers': 'true', 'example.com/rack': 'r1' });
  // Only the taint TaintNodesByCondition gave it at creation: the refused patch changed nothing.
  assert.deepEqual(n1.spec.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
});

test('a node creates only mirror pods bound to itself that reference nothing from the API', async () => {
  assert.ok(n1Uid, 'the Node test ran first');
  const mirror = await kubectlAs('n1-token', ['create', '-f', '-'], JSON.stringify(mirrorPod('static-web-n1', 'n1', n1Uid)));
  assert.equal(mirror.code, 0, mirror.stderr);
  assert.equal((await s.request('GET', `${PODS}/static-web-n1`)).json().metadata.annotations[MIRROR], 'hash');

  const plain = await kubectlAs('n1-token', ['create', '-f', '-'], JSON.stringify(boundPod('plain', 'n1')));
  assert.notEqual(plain.code, 0);
  assert.match(plain.stderr, /pods "plain" is forbidden: pod does not have "kubernetes\.io\/config\.mirror" annotation, node "n1" can only create mirror pods/);

  const n2Uid = (await s.request('GET', '/api/v1/nodes/n2')).json().metadata.uid;
  forbiddenStatus(await requestAs(N1, 'POST', PODS, mirrorPod('static-web-n2', 'n2', n2Uid)), 'pods "static-web-n2" is forbidden: node "n1" can only create pods with spec.nodeName set to itself');
  const withSecret = mirrorPod('static-secret', 'n1', n1Uid, { volumes: [{ name: 's', secret: { secretName: 'db-password' } }] });
  forbiddenStatus(await requestAs(N1, 'POST', PODS, withSecret), 'pods "static-secret" is forbidden: node "n1" can not create pods that reference secrets');
  const withClaim = mirrorPod('static-claim', 'n1', n1Uid, { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] });
  forbiddenStatus(await requestAs(N1, 'POST', PODS, withClaim), 'pods "static-claim" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims');
  const staleOwner = mirrorPod('static-stale', 'n1', 'not-the-uid');
  forbiddenStatus(await requestAs(N1, 'POST', PODS, staleOwner), `pods "static-stale" is forbidden: node n1 UID mismatch: expected not-the-uid got ${n1Uid}`);
  // A dry run is refused as the real request is.
  forbiddenStatus(await requestAs(N1, 'POST', `${PODS}?dryRun=All`, boundPod('dry', 'n1')), 'pods "dry" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods');
  const names = (await s.request('GET', PODS)).json().items.map((p: Json) => dig(p, 'metadata', 'name')).sort();
  assert.deepEqual(names, ['on-n1', 'on-n2', 'static-web-n1']);
});

test('a node updates the status of, deletes and evicts only pods bound to itself', async () => {
  const own = await requestAs(N1, 'PATCH', `${PODS}/on-n1/status`, { status: { phase: 'Running' } }, 'application/merge-patch+json');
  assert.equal(own.status, 200, own.text);
  assert.equal(dig(own.json, 'status', 'phase'), 'Running');
  forbiddenStatus(
    await requestAs(N1, 'PATCH', `${PODS}/on-n2/status`, { status: { phase: 'Failed' } }, 'application/merge-patch+json'),
    'pods "on-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
  );
  assert.notEqual((await s.request('GET', `${PODS}/on-n2`)).json().status?.phase, 'Failed');

  const del = await kubectlAs('n1-token', ['delete', 'pod', 'on-n2', '--wait=false']);
  assert.notEqual(del.code, 0);
  assert.match(del.stderr, /pods "on-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself/);
  forbiddenStatus(await requestAs(N1, 'DELETE', `${PODS}/on-n2?dryRun=All`), 'pods "on-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
  forbiddenStatus(
    await requestAs(N1, 'POST', `${PODS}/on-n2/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'on-n2' } }),
    'pods "on-n2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself',
  );
  // Binding is not a node's to do (system:node grants none; NodeRestriction would refuse it too).
  forbiddenStatus(
    await requestAs(N1, 'POST', `${PODS}/on-n2/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'on-n2' }, target: { kind: 'Node', name: 'n1' } }),
    'pods "on-n2" is forbidden: User "system:node:n1" cannot create resource "pods/binding" in API group "" in the namespace "default"',
  );
  const survivor = (await s.request('GET', `${PODS}/on-n2`)).json();
  assert.equal(survivor.metadata.deletionTimestamp, undefined);
  assert.equal(survivor.spec.nodeName, 'n2');

  // n2 may: its own pod goes.
  const evicted = await requestAs(N2, 'POST', `${PODS}/on-n2/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'on-n2' }, deleteOptions: { gracePeriodSeconds: 0 } });
  assert.equal(evicted.status, 201, evicted.text);
  const gone = await kubectlAs('n1-token', ['delete', 'pod', 'static-web-n1', '--grace-period=0', '--force']);
  assert.equal(gone.code, 0, gone.stderr);
});

test('a node asks tokens only for pods bound to itself, with an audience the pod uses', async () => {
  const ready = await s.request('POST', PODS, { body: boundPod('with-token', 'n1', { serviceAccountName: 'default' }) });
  assert.equal(ready.status, 201, ready.text);
  const onOther = await s.request('POST', PODS, { body: boundPod('other-token', 'n2', { serviceAccountName: 'default' }) });
  assert.equal(onOther.status, 201, onOther.text);
  const tokenRequest = (pod: Json, audiences?: string[]) => ({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { audiences, expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: dig(pod, 'metadata', 'name'), uid: dig(pod, 'metadata', 'uid') } },
  });
  const path = '/api/v1/namespaces/default/serviceaccounts/default/token';
  // The kube-api-access volume's token (the API audience): the kubelet's everyday request.
  const own = await requestAs(N1, 'POST', path, tokenRequest(ready.json()));
  assert.equal(own.status, 201, own.text);
  assert.ok(dig(own.json, 'status', 'token'));
  forbiddenStatus(await requestAs(N1, 'POST', path, tokenRequest(onOther.json())), 'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node');
  forbiddenStatus(
    await requestAs(N1, 'POST', path, tokenRequest(ready.json(), ['vault'])),
    'serviceaccounts "default" is forbidden: audience "vault" not found in pod spec volume, system:node:n1 is not authorized to request tokens for this audience',
  );
  // RBAC may grant it: verb request-serviceaccounts-token-audience, the audience as the resource, the ServiceAccount as the name.
  const role = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    body: { metadata: { name: 'vault-audience' }, rules: [{ verbs: ['request-serviceaccounts-token-audience'], apiGroups: [''], resources: ['vault'], resourceNames: ['default'] }] },
  });
  assert.equal(role.status, 201, role.text);
  const grant = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: { metadata: { name: 'vault-audience' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'vault-audience' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:node:n1' }] },
  });
  assert.equal(grant.status, 201, grant.text);
  let vault = await requestAs(N1, 'POST', path, tokenRequest(ready.json(), ['vault']));
  for (let i = 0; i < 100 && vault.status === 403; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    vault = await requestAs(N1, 'POST', path, tokenRequest(ready.json(), ['vault']));
  }
  assert.equal(vault.status, 201, vault.text);
  assert.deepEqual(dig(vault.json, 'spec', 'audiences'), ['vault']);
  forbiddenStatus(await requestAs(N2, 'POST', path, tokenRequest(onOther.json(), ['vault'])), 'serviceaccounts "default" is forbidden: audience "vault" not found in pod spec volume, system:node:n2 is not authorized to request tokens for this audience');
  forbiddenStatus(await requestAs(N1, 'POST', path, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }), 'serviceaccounts "default" is forbidden: node requested token not bound to a pod');
  // kubectl create token as n1, bound to n2's pod.
  const viaKubectl = await kubectlAs('n1-token', ['create', 'token', 'default', '--bound-object-kind', 'Pod', '--bound-object-name', 'other-token', '--bound-object-uid', onOther.json().metadata.uid]);
  assert.notEqual(viaKubectl.code, 0);
  assert.match(viaKubectl.stderr, /serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node/);
});

test('a node writes only its own Lease in kube-node-lease', async () => {
  const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } });
  const own = await kubectlAs('n1-token', ['create', '-n', 'kube-node-lease', '-f', '-'], JSON.stringify(lease('n1')));
  assert.equal(own.code, 0, own.stderr);
  forbiddenStatus(await requestAs(N1, 'POST', LEASES, lease('n2')), 'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
  forbiddenStatus(
    await requestAs(N1, 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', lease('n1')),
    'leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace',
  );
  assert.equal((await requestAs(N2, 'POST', LEASES, lease('n2'))).status, 201);
  forbiddenStatus(await requestAs(N1, 'DELETE', `${LEASES}/n2`), 'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
  assert.equal((await s.request('GET', `${LEASES}/n2`)).status, 200);
});

test('a node writes only its own CSINode, and only the capacity and conditions of a PVC status', async () => {
  const csiNode = (name: string) => ({ apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name }, spec: { drivers: [] } });
  const own = await requestAs(N1, 'POST', '/apis/storage.k8s.io/v1/csinodes', csiNode('n1'));
  assert.equal(own.status, 201, own.text);
  forbiddenStatus(await requestAs(N1, 'POST', '/apis/storage.k8s.io/v1/csinodes', csiNode('n2')), 'csinodes.storage.k8s.io "n2" is forbidden: can only access CSINode with the same name as the requesting node');
  assert.equal((await s.request('GET', '/apis/storage.k8s.io/v1/csinodes/n2')).status, 404);

  const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
  const created = await s.request('POST', claims, { body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } });
  assert.equal(created.status, 201, created.text);
  const resized = await requestAs(N1, 'PATCH', `${claims}/data/status`, { status: { capacity: { storage: '2Gi' }, conditions: [{ type: 'FileSystemResizePending', status: 'True' }] } }, 'application/merge-patch+json');
  assert.equal(resized.status, 200, resized.text);
  assert.deepEqual(dig(resized.json, 'status', 'capacity'), { storage: '2Gi' });
  const rebound = await requestAs(N1, 'PATCH', `${claims}/data/status`, { status: { phase: 'Lost' } }, 'application/merge-patch+json');
  assert.equal(rebound.status, 403, rebound.text);
  assert.match(String(rebound.json.message), /^persistentvolumeclaims "data" is forbidden: node "n1" is not allowed to update fields other than status\.quantity and status\.conditions: \.status\.phase/);
  assert.notEqual(dig((await s.request('GET', `${claims}/data`)).json(), 'status', 'phase'), 'Lost');
});

test('a node identified by a certificate hearth signed is restricted the same', async () => {
  const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: 'O=system:nodes, CN=system:node:n1', keys, signingAlgorithm: EC });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n').trimEnd()}\n-----END PRIVATE KEY-----\n`;
  // The kubelet asks as n1 (token) for its client certificate; n2 may not ask for one naming n1.
  const body = (name: string) => ({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(csr.toString('pem')).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
  });
  forbiddenStatus(await requestAs(N2, 'POST', CSRS, body('n2-for-n1')), 'certificatesigningrequests.certificates.k8s.io "n2-for-n1" is forbidden: can only create a node CSR with CN=system:node:n2');
  assert.equal((await s.request('GET', `${CSRS}/n2-for-n1`)).status, 404);
  const asked = await requestAs(N1, 'POST', CSRS, body('n1-client'));
  assert.equal(asked.status, 201, asked.text);
  const approved = await s.kubectl(['certificate', 'approve', 'n1-client']);
  assert.equal(approved.code, 0, approved.stderr);
  let certificate = '';
  for (let i = 0; i < 300 && !certificate; i++) {
    certificate = (await s.request('GET', `${CSRS}/n1-client`)).json().status?.certificate ?? '';
    if (!certificate) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(certificate, 'the CSR was signed');
  const n1Cert: Credentials = { cert: Buffer.from(certificate, 'base64').toString(), key: keyPem };
  const who = await requestAs(n1Cert, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  assert.equal(dig(who.json, 'status', 'userInfo', 'username'), 'system:node:n1');
  forbiddenStatus(await requestAs(n1Cert, 'POST', PODS, boundPod('cert-plain', 'n1')), 'pods "cert-plain" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods');
  forbiddenStatus(await requestAs(n1Cert, 'PATCH', '/api/v1/nodes/n2', { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json'), 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
});

test('the admin, an ordinary user and a user with a node name outside system:nodes are not restricted', async () => {
  for (const [who, name] of [
    [CAROL, 'by-carol'],
    [N3_NOT_A_NODE, 'by-n3'],
  ] as const) {
    const created = await requestAs(who, 'POST', PODS, boundPod(name, 'n2'));
    assert.equal(created.status, 201, created.text);
    const labeled = await requestAs(who, 'PATCH', '/api/v1/nodes/n2', { metadata: { labels: { [`node-restriction.kubernetes.io/${name}`]: 'yes' } } }, 'application/merge-patch+json');
    assert.equal(labeled.status, 200, labeled.text);
    const deleted = await requestAs(who, 'DELETE', `${PODS}/${name}?gracePeriodSeconds=0`);
    assert.equal(deleted.status, 200, deleted.text);
  }
  const admin = await s.kubectl(['taint', 'node', 'n2', 'dedicated=infra:NoSchedule']);
  assert.equal(admin.code, 0, admin.stderr);
  const plain = await s.request('POST', PODS, { body: boundPod('by-admin', 'n1') });
  assert.equal(plain.status, 201, plain.text);
});

test('--disable-admission-plugins=NodeRestriction lifts it', async () => {
  const open = await startTestServer({ options: { tokenAuthFile: tokenFile, authorizationModes: ['RBAC'], disableAdmissionPlugins: ['NodeRestriction'] } });
  try {
    const bound = await open.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: { metadata: { name: 'nodes' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:node:n1' }] },
    });
    assert.equal(bound.status, 201, bound.text);
    assert.equal((await open.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'n2' } } })).status, 201);
    const as = (method: string, path: string, body: unknown, contentType = 'application/json') =>
      open.request(method, path, { body, anonymous: true, headers: { authorization: 'Bearer n1-token', 'content-type': contentType } });
    const plain = await as('POST', PODS, boundPod('plain', 'n2', { automountServiceAccountToken: false }));
    assert.equal(plain.status, 201, plain.text);
    const relabeled = await as('PATCH', '/api/v1/nodes/n2', { metadata: { labels: { 'node-restriction.kubernetes.io/pool': 'gold' } } }, 'application/merge-patch+json');
    assert.equal(relabeled.status, 200, relabeled.text);
  } finally {
    await open.stop();
  }
});
