// The Node authorizer (kube's node_authorizer.go with AuthorizeNodeWithSelectors), on by default
// as `Node,RBAC`: a node reads the Secret, ConfigMap and PVC its pod references and nothing else,
// loses them when the pod goes, lists pods only with its spec.nodeName selector, reads only its
// own Node; the 403s carry kube's reasons. Identities: the admin (certificate), nodes n1 and n2 by
// static token, node n1 by a certificate hearth signed from a CSR (through kubectl), an ordinary
// token user and a service account (on whom the Node authorizer has no opinion: RBAC decides).
// With `--authorization-mode=RBAC` a node has only what RBAC grants it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { execFile } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { x509 } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const NS = 'apps';
const WAIT_MS = 30_000;
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

const dir = mkdtempSync(join(tmpdir(), 'hearth-node-authz-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['n1-token,system:node:n1,n1-uid,"system:nodes"', 'n2-token,system:node:n2,n2-uid,"system:nodes"', 'alice-token,alice,alice-uid,"developers"', ''].join('\n'));

let s: TestServer;
/** kubectl as node n1, authenticated by the certificate hearth signed for it. */
let kubectlAsNodeCert: (args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

type Json = Record<string, unknown>;

/** A request with a bearer token, as a kubelet's client makes it (HTTPS, hearth's CA). */
function asToken(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { accept: 'application/json', authorization: `Bearer ${token}` };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const req = https.request(`${s.url}${path}`, { method, headers, agent: false, ca: s.pki.caCertPem }, (res) => {
      let t = '';
      res.on('data', (d) => (t += d));
      res.on('end', () => resolve({ status: res.statusCode!, json: t ? (JSON.parse(t) as Json) : {} }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function admin(method: string, path: string, body?: unknown): Promise<Json> {
  const r = await s.request(method, path, { body });
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
  return r.json();
}

/** kube's 403 Status for a refused request. */
function assertForbidden(r: { status: number; json: Json }, message: string): void {
  assert.equal(r.status, 403, JSON.stringify(r.json));
  assert.equal(r.json.kind, 'Status');
  assert.equal(r.json.reason, 'Forbidden');
  assert.equal(r.json.code, 403);
  assert.equal(r.json.message, message);
}

/** A client certificate for node n1 as the kubelet gets one: a CSR to the kubelet client signer, approved, signed by hearth. */
async function nodeCertificate(node: string): Promise<{ certPem: string; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `O=system:nodes, CN=system:node:${node}`, keys, signingAlgorithm: EC });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n').trimEnd()}\n-----END PRIVATE KEY-----\n`;
  const name = `node-csr-${node}`;
  await admin('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(csr.toString('pem')).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
  });
  const approved = await s.kubectl(['certificate', 'approve', name]);
  assert.equal(approved.code, 0, approved.stderr);
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const got = await admin('GET', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`);
    const certificate = (got.status as { certificate?: string } | undefined)?.certificate;
    if (certificate) return { certPem: Buffer.from(certificate, 'base64').toString(), keyPem };
    if (Date.now() > deadline) assert.fail(`CSR ${name} was not signed: ${JSON.stringify(got.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function podOn(name: string, nodeName: string, spec: Json = {}): Json {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }], ...spec } };
}

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile, tokenSuccessCacheTtlMs: 0 } });
  await admin('POST', '/api/v1/namespaces', { metadata: { name: NS } });
  for (const name of ['app-secret', 'pull-secret', 'unrelated']) await admin('POST', `/api/v1/namespaces/${NS}/secrets`, { metadata: { name }, stringData: { k: 'v' } });
  for (const name of ['app-config', 'other-config']) await admin('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name }, data: { k: 'v' } });
  await admin('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, { metadata: { name: 'app-data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  for (const name of ['n1', 'n2']) await admin('POST', '/api/v1/nodes', { metadata: { name } });
  // The pod on n1 references the secret (volume), the configmap (envFrom), the claim and a pull secret.
  await admin(
    'POST',
    `/api/v1/namespaces/${NS}/pods`,
    podOn('web', 'n1', {
      containers: [{ name: 'c', image: 'busybox', envFrom: [{ configMapRef: { name: 'app-config' } }] }],
      imagePullSecrets: [{ name: 'pull-secret' }],
      volumes: [
        { name: 'secret', secret: { secretName: 'app-secret' } },
        { name: 'data', persistentVolumeClaim: { claimName: 'app-data' } },
      ],
    }),
  );
  const { certPem, keyPem } = await nodeCertificate('n1');
  const kubeconfig = join(dir, 'n1-cert.kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, clientCertPem: certPem, clientKeyPem: keyPem, userName: 'n1' }));
  kubectlAsNodeCert = (args) =>
    new Promise((resolve) => {
      execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
    });
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a node reads what its pod references; another node is told there is no relationship', async () => {
  for (const path of [`secrets/app-secret`, `secrets/pull-secret`, `configmaps/app-config`, `persistentvolumeclaims/app-data`]) {
    const r = await asToken('n1-token', 'GET', `/api/v1/namespaces/${NS}/${path}`);
    assert.equal(r.status, 200, `n1 reads ${path}: ${JSON.stringify(r.json)}`);
    const other = await asToken('n2-token', 'GET', `/api/v1/namespaces/${NS}/${path}`);
    const [resource, name] = path.split('/');
    assertForbidden(other, `${resource} "${name}" is forbidden: User "system:node:n2" cannot get resource "${resource}" in API group "" in the namespace "${NS}": no relationship found between node 'n2' and this object`);
  }
  assertForbidden(
    await asToken('n1-token', 'GET', `/api/v1/namespaces/${NS}/secrets/unrelated`),
    `secrets "unrelated" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "${NS}": no relationship found between node 'n1' and this object`,
  );
  // A PVC is read, never written, by the node.
  assertForbidden(
    await asToken('n1-token', 'DELETE', `/api/v1/namespaces/${NS}/persistentvolumeclaims/app-data`),
    `persistentvolumeclaims "app-data" is forbidden: User "system:node:n1" cannot delete resource "persistentvolumeclaims" in API group "" in the namespace "${NS}": can only get individual resources of this type`,
  );

  // The same node by its certificate, through kubectl.
  const got = await kubectlAsNodeCert(['get', 'secret', 'app-secret', '-n', NS, '-o', 'jsonpath={.metadata.name}']);
  assert.equal(got.code, 0, got.stderr);
  assert.equal(got.stdout, 'app-secret');
  // The ServiceAccount admission gave the pod a projected token volume with the cluster's CA: readable too.
  const ca = await kubectlAsNodeCert(['get', 'configmap', 'kube-root-ca.crt', '-n', NS, '-o', 'name']);
  assert.equal(ca.code, 0, ca.stderr);
  const refused = await kubectlAsNodeCert(['get', 'configmap', 'other-config', '-n', NS]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /configmaps "other-config" is forbidden: User "system:node:n1" cannot get resource "configmaps" in API group "" in the namespace "apps": no relationship found between node 'n1' and this object/);
});

test("a token for the service account its pod runs as, and no other", async () => {
  const web = await admin('GET', `/api/v1/namespaces/${NS}/pods/web`);
  const request = (account: string) => ({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { audiences: [], boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: (web.metadata as { uid: string }).uid } },
    metadata: { name: account },
  });
  const issued = await asToken('n1-token', 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/default/token`, request('default'));
  assert.equal(issued.status, 201, JSON.stringify(issued.json));
  assertForbidden(
    await asToken('n2-token', 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/default/token`, request('default')),
    `serviceaccounts "default" is forbidden: User "system:node:n2" cannot create resource "serviceaccounts/token" in API group "" in the namespace "${NS}": no relationship found between node 'n2' and this object`,
  );
});

test('a single object by list and watch: the metadata.name selector names it, as kube\'s RequestInfo does', async () => {
  const listed = await asToken('n1-token', 'GET', `/api/v1/namespaces/${NS}/secrets?fieldSelector=metadata.name%3Dapp-secret`);
  assert.equal(listed.status, 200, JSON.stringify(listed.json));
  assert.deepEqual((listed.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name), ['app-secret']);
  assertForbidden(await asToken('n1-token', 'GET', `/api/v1/namespaces/${NS}/secrets`), `secrets is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" in the namespace "${NS}": No Object name found`);
  assertForbidden(
    await asToken('n1-token', 'GET', `/api/v1/namespaces/${NS}/secrets?fieldSelector=metadata.name%3Dunrelated`),
    `secrets "unrelated" is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" in the namespace "${NS}": no relationship found between node 'n1' and this object`,
  );
  // kubectl's watch of one object (what the kubelet's reflector does for a secret).
  const watched = await kubectlAsNodeCert(['get', 'configmap', '-n', NS, '--field-selector', 'metadata.name=app-config', '--watch', '--request-timeout=2s', '-o', 'name']);
  assert.match(watched.stdout, /configmap\/app-config/);
  assert.doesNotMatch(watched.stderr, /forbidden/);
});

test('pods: listed only with its own spec.nodeName selector, read only when on it', async () => {
  const mine = await kubectlAsNodeCert(['get', 'pods', '-A', '--field-selector', 'spec.nodeName=n1', '-o', 'name']);
  assert.equal(mine.code, 0, mine.stderr);
  assert.equal(mine.stdout.trim(), 'pod/web');
  const all = await kubectlAsNodeCert(['get', 'pods', '-A']);
  assert.equal(all.code, 1);
  assert.match(all.stderr, /pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list\/watch pods with spec.nodeName field selector/);
  assertForbidden(await asToken('n1-token', 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn2'), 'pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector');
  assert.equal((await asToken('n1-token', 'GET', `/api/v1/namespaces/${NS}/pods/web`)).status, 200);
  assertForbidden(await asToken('n2-token', 'GET', `/api/v1/namespaces/${NS}/pods/web`), `pods "web" is forbidden: User "system:node:n2" cannot get resource "pods" in API group "" in the namespace "${NS}": no relationship found between node 'n2' and this object`);
});

test('nodes: its own Node only', async () => {
  assert.equal((await asToken('n1-token', 'GET', '/api/v1/nodes/n1')).status, 200);
  assertForbidden(await asToken('n1-token', 'GET', '/api/v1/nodes/n2'), `nodes "n2" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope: node 'n1' cannot read 'n2', only its own Node object`);
  const own = await kubectlAsNodeCert(['get', 'nodes', '--field-selector', 'metadata.name=n1', '-o', 'name']);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(own.stdout.trim(), 'node/n1');
  const all = await kubectlAsNodeCert(['get', 'nodes']);
  assert.equal(all.code, 1);
  assert.match(all.stderr, /nodes is forbidden: User "system:node:n1" cannot list resource "nodes" in API group "" at the cluster scope: node 'n1' cannot read all nodes, only its own Node object/);
  // A node's permissions hang on the graph: it cannot list them (kube's RulesFor).
  const canI = await kubectlAsNodeCert(['auth', 'can-i', '--list', '-n', NS]);
  assert.equal(canI.code, 0, canI.stderr);
  assert.match(canI.stderr, /Warning: the list may be incomplete: node authorizer does not support user rule resolution/);
  // What is not subdivided follows NodeRules: services are readable, deployments are not (no reason).
  assert.equal((await asToken('n1-token', 'GET', '/api/v1/services')).status, 200);
  assertForbidden(await asToken('n1-token', 'GET', '/apis/apps/v1/deployments'), 'deployments.apps is forbidden: User "system:node:n1" cannot list resource "deployments" in API group "apps" at the cluster scope');
});

test('a SubjectAccessReview for a node with a field selector, raw or as requirements', async () => {
  const review = async (fieldSelector: Json, labelSelector?: Json) =>
    (
      await admin('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'], resourceAttributes: { verb: 'list', version: 'v1', resource: 'pods', fieldSelector, labelSelector } },
      })
    ).status;
  assert.deepEqual(await review({ rawSelector: 'spec.nodeName=n1' }), { allowed: true });
  assert.deepEqual(await review({ requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] }), { allowed: true });
  assert.deepEqual(await review({ rawSelector: 'spec.nodeName=n2' }), { allowed: false, reason: 'can only list/watch pods with spec.nodeName field selector' });
  assert.deepEqual(await review({ rawSelector: 'spec.nodeName' }), {
    allowed: false,
    reason: 'can only list/watch pods with spec.nodeName field selector',
    evaluationError: 'spec.resourceAttributes.fieldSelector ignored due to parse error',
  });
  assert.deepEqual(await review({ rawSelector: 'spec.nodeName=n1' }, { rawSelector: 'app in (' }), {
    allowed: true,
    evaluationError: 'spec.resourceAttributes.labelSelector ignored due to parse error',
  });
  assert.deepEqual(await review({ requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }, { key: 'x', operator: 'Exists' }] }), {
    allowed: true,
    evaluationError: 'spec.resourceAttributes.fieldSelector partially ignored due to parse error',
  });
});

test('an ordinary user and a service account: no opinion from the Node authorizer, RBAC decides', async () => {
  assertForbidden(await asToken('alice-token', 'GET', `/api/v1/namespaces/${NS}/secrets/app-secret`), `secrets "app-secret" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "${NS}"`);
  await admin('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'secret-reader' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
  await admin('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'reader' } });
  await admin('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    metadata: { name: 'secret-readers' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
    subjects: [
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
      { kind: 'ServiceAccount', name: 'reader', namespace: NS },
    ],
  });
  assert.equal((await asToken('alice-token', 'GET', `/api/v1/namespaces/${NS}/secrets/unrelated`)).status, 200);
  const token = await s.kubectl(['create', 'token', 'reader', '-n', NS]);
  assert.equal(token.code, 0, token.stderr);
  assert.equal((await asToken(token.stdout.trim(), 'GET', `/api/v1/namespaces/${NS}/secrets/unrelated`)).status, 200);
  assertForbidden(await asToken(token.stdout.trim(), 'GET', `/api/v1/namespaces/${NS}/configmaps/app-config`), `configmaps "app-config" is forbidden: User "system:serviceaccount:${NS}:reader" cannot get resource "configmaps" in API group "" in the namespace "${NS}"`);
});

test('when the pod is deleted, its node loses what it referenced', async () => {
  await admin('POST', `/api/v1/namespaces/${NS}/pods`, podOn('short-lived', 'n2', { volumes: [{ name: 's', secret: { secretName: 'unrelated' } }] }));
  assert.equal((await asToken('n2-token', 'GET', `/api/v1/namespaces/${NS}/secrets/unrelated`)).status, 200);
  // The kubelet's final delete: grace period 0 removes a pod on a node at once.
  await admin('DELETE', `/api/v1/namespaces/${NS}/pods/short-lived`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const r = await asToken('n2-token', 'GET', `/api/v1/namespaces/${NS}/secrets/unrelated`);
    if (r.status === 403) {
      assertForbidden(r, `secrets "unrelated" is forbidden: User "system:node:n2" cannot get resource "secrets" in API group "" in the namespace "${NS}": no relationship found between node 'n2' and this object`);
      break;
    }
    if (Date.now() > deadline) assert.fail(`n2 still reads the secret after its pod was deleted: ${r.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // n1's pod is untouched.
  assert.equal((await asToken('n1-token', 'GET', `/api/v1/namespaces/${NS}/secrets/app-secret`)).status, 200);
});

test('--authorization-mode=RBAC: a node has only what RBAC grants it', async () => {
  const rbacOnly = await startTestServer({ options: { tokenAuthFile: tokenFile, tokenSuccessCacheTtlMs: 0, authorizationModes: ['RBAC'] } });
  try {
    const ask = (path: string) =>
      new Promise<{ status: number; json: Json }>((resolve, reject) => {
        const req = https.request(`${rbacOnly.url}${path}`, { headers: { accept: 'application/json', authorization: 'Bearer n1-token' }, agent: false, ca: rbacOnly.pki.caCertPem }, (res) => {
          let t = '';
          res.on('data', (d) => (t += d));
          res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(t) as Json }));
        });
        req.on('error', reject);
        req.end();
      });
    const ok = async (method: string, path: string, body: unknown) => assert.ok([200, 201].includes((await rbacOnly.request(method, path, { body })).status), path);
    await ok('POST', '/api/v1/nodes', { metadata: { name: 'n1' } });
    await ok('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'app-secret' }, stringData: { k: 'v' } });
    await ok('POST', '/api/v1/namespaces/default/pods', podOn('web', 'n1', { volumes: [{ name: 's', secret: { secretName: 'app-secret' } }] }));
    // No Node authorizer, and kube's system:node binding has no subjects: nothing for the node.
    assertForbidden(await ask('/api/v1/namespaces/default/secrets/app-secret'), 'secrets "app-secret" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default"');
    assertForbidden(await ask('/api/v1/nodes/n1'), 'nodes "n1" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope');
    // Bound by RBAC to system:node, the node reads any secret and every node: no graph narrows it.
    await ok('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'nodes-by-rbac' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:nodes' }],
    });
    assert.equal((await ask('/api/v1/namespaces/kube-system/secrets')).status, 200);
    assert.equal((await ask('/api/v1/nodes')).status, 200);
  } finally {
    await rbacOnly.stop();
  }
});
