// A kubelet's TLS bootstrap, end to end, driven as a kubelet and `kubeadm join` drive it over
// HTTPS (seed 000 §3.2–3.3): the admin makes a bootstrap token; the joining node reads
// kube-public/cluster-info anonymously and checks its JWS with the token (kubeadm's discovery);
// with the token it creates a kubelet client CSR, which the in-process approver approves (the
// bootstrap token's group may create certificatesigningrequests/nodeclient through kubeadm's
// binding) and the signer signs; the node then authenticates with that certificate as
// system:node:<name>, and renews its certificate with it (selfnodeclient: the Node authorizer's
// rules for nodes and kubeadm's rotation binding).
// Identities: the admin (certificate), anonymous, a bootstrap token, the node's certificate.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import { startTestServer, KUBECTL, type TestServer, type TestResponse } from '../../helpers/server.ts';
import { x509 } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const TOKEN_ID = 'k8sjn1';
const TOKEN_SECRET = 'q2w3e4r5t6y7u8i9';
const TOKEN = `${TOKEN_ID}.${TOKEN_SECRET}`;
const NODE = 'worker-1';
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const WAIT_MS = 30_000;

const dir = mkdtempSync(join(tmpdir(), 'hearth-tls-bootstrap-'));
let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function asBootstrapToken(method: string, path: string, body?: unknown): Promise<TestResponse> {
  return s.request(method, path, { body, anonymous: true, headers: { authorization: `Bearer ${TOKEN}` } });
}

/** A key pair and a PKCS#10 request for a kubelet client certificate of this node, as the kubelet makes them. */
async function kubeletRequest(node: string): Promise<{ keyPem: string; requestB64: string }> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `O=system:nodes, CN=system:node:${node}`, keys, signingAlgorithm: EC });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n').trimEnd()}\n-----END PRIVATE KEY-----\n`;
  return { keyPem, requestB64: Buffer.from(csr.toString('pem')).toString('base64') };
}

function csrBody(name: string, requestB64: string): unknown {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: requestB64, signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
  };
}

/** Polls (bounded) a CSR with `read` until it carries a certificate; returns the CSR. */
async function issued(name: string, read: (path: string) => Promise<TestResponse>): Promise<{ status: { certificate: string; conditions: { type: string; reason: string }[] } }> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const r = await read(`${CSRS}/${name}`);
    assert.equal(r.status, 200, r.text);
    const csr = r.json();
    if (csr.status?.certificate) return csr;
    if (Date.now() > deadline) assert.fail(`CSR ${name} was not issued: ${r.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function kubectlWithCert(certPem: string, keyPem: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(kubeconfig, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, clientCertPem: certPem, clientKeyPem: keyPem, userName: NODE }));
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('bootstrap token → cluster-info → CSR → approved and signed → the node authenticates as system:node:<name> and renews itself', async () => {
  // The admin makes a token as `kubeadm token create` does.
  const secret = await s.request('POST', '/api/v1/namespaces/kube-system/secrets', {
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${TOKEN_ID}`, namespace: 'kube-system' },
      type: 'bootstrap.kubernetes.io/token',
      stringData: { 'token-id': TOKEN_ID, 'token-secret': TOKEN_SECRET, 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true', 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token' },
    },
  });
  assert.equal(secret.status, 201, secret.text);

  // Discovery: anonymous reads cluster-info and checks the token's JWS of its kubeconfig.
  const deadline = Date.now() + WAIT_MS;
  let clusterInfo: Record<string, string>;
  for (;;) {
    const r = await s.request('GET', '/api/v1/namespaces/kube-public/configmaps/cluster-info', { anonymous: true });
    assert.equal(r.status, 200, `anonymous reads cluster-info (kubeadm:bootstrap-signer-clusterinfo): ${r.text}`);
    clusterInfo = r.json().data;
    if (clusterInfo[`jws-kubeconfig-${TOKEN_ID}`] || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // A detached JWS (kube's jws.go): HS256 keyed by the token's secret, over the kubeconfig.
  const [header, detached, signature] = clusterInfo[`jws-kubeconfig-${TOKEN_ID}`]!.split('.');
  assert.equal(detached, '');
  const verified = await jose.compactVerify(`${header}.${Buffer.from(clusterInfo.kubeconfig!).toString('base64url')}.${signature}`, Buffer.from(TOKEN_SECRET), { algorithms: ['HS256'] });
  assert.match(Buffer.from(verified.payload).toString(), new RegExp(`server: ${s.url}`));

  // The bootstrap token is who it says, and no more than that.
  const who = await asBootstrapToken('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  assert.equal(who.status, 201, who.text);
  assert.equal(who.json().status.userInfo.username, `system:bootstrap:${TOKEN_ID}`);
  assert.equal((await asBootstrapToken('GET', '/api/v1/namespaces/kube-system/secrets')).status, 403);

  // The kubelet's CSR, made with the token: approved in-process, then signed.
  const first = await kubeletRequest(NODE);
  const created = await asBootstrapToken('POST', CSRS, csrBody('node-csr-first', first.requestB64));
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json().spec.username, `system:bootstrap:${TOKEN_ID}`);
  const csr = await issued('node-csr-first', (path) => asBootstrapToken('GET', path));
  assert.deepEqual(csr.status.conditions.map((c) => [c.type, c.reason]), [['Approved', 'AutoApproved']]);
  const certPem = Buffer.from(csr.status.certificate, 'base64').toString();

  // The node authenticates with its certificate (kubectl, as the kubelet's client would).
  const whoami = await kubectlWithCert(certPem, first.keyPem, ['auth', 'whoami', '-o', 'json']);
  assert.equal(whoami.code, 0, whoami.stderr);
  const userInfo = JSON.parse(whoami.stdout).status.userInfo;
  assert.equal(userInfo.username, `system:node:${NODE}`);
  assert.deepEqual(userInfo.groups, ['system:nodes', 'system:authenticated']);

  // With its certificate the node renews itself (the Node authorizer's NodeRules let nodes create
  // CSRs; kubeadm's rotation binding lets the approver approve a selfnodeclient request). A
  // request naming another node is NodeRestriction's 403, and would not be approved anyway:
  // nodes may not ask for nodeclient certificates, which is what the approver asks.
  const other = await kubeletRequest('worker-2');
  const otherPath = join(dir, 'other.json');
  writeFileSync(otherPath, JSON.stringify(csrBody('node-csr-other', other.requestB64)));
  const otherRefused = await kubectlWithCert(certPem, first.keyPem, ['create', '-f', otherPath]);
  assert.equal(otherRefused.code, 1);
  assert.match(otherRefused.stderr, /certificatesigningrequests\.certificates\.k8s\.io "node-csr-other" is forbidden: can only create a node CSR with CN=system:node:worker-1/);
  assert.equal((await s.request('GET', `${CSRS}/node-csr-other`)).status, 404);
  const mayNodeclient = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: `system:node:${NODE}`, groups: ['system:nodes', 'system:authenticated'], resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', subresource: 'nodeclient', verb: 'create' } } },
  });
  assert.equal(mayNodeclient.json().status.allowed, false, mayNodeclient.text);

  const renewal = await kubeletRequest(NODE);
  const renewalPath = join(dir, 'renewal.json');
  writeFileSync(renewalPath, JSON.stringify(csrBody('node-csr-renewal', renewal.requestB64)));
  const renewed = await kubectlWithCert(certPem, first.keyPem, ['create', '-f', renewalPath]);
  assert.equal(renewed.code, 0, renewed.stderr);
  // The node reads its own request back, as the kubelet's certificate manager does.
  const renewalCsr = await issued('node-csr-renewal', async (path) => {
    const got = await kubectlWithCert(certPem, first.keyPem, ['get', '--raw', path]);
    assert.equal(got.code, 0, got.stderr);
    return { status: 200, text: got.stdout, json: () => JSON.parse(got.stdout) } as TestResponse;
  });
  assert.deepEqual(renewalCsr.status.conditions.map((c) => [c.type, c.reason]), [['Approved', 'AutoApproved']]);
  const renewedWho = await kubectlWithCert(Buffer.from(renewalCsr.status.certificate, 'base64').toString(), renewal.keyPem, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
  assert.equal(renewedWho.stdout, `system:node:${NODE}`);
});
