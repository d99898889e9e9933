// A client certificate from the cluster CA whose subject has no common name, as kube's x509
// authenticator takes it (CommonNameUserConversion: no CN, no user and no error): it names no
// one, so the chain goes on — a bearer token on the same request decides, else the request is
// anonymous's (403 for what anonymous may not do, not 401), and 401 with --anonymous-auth=false.
// The certificate is had the way a user would have it: a CSR for kube-apiserver-client,
// approved and signed by hearth.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { x509 } from '../../../server/pki/certificates.ts';

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const dir = mkdtempSync(join(tmpdir(), 'hearth-no-cn-'));
const tokenFile = join(dir, 'tokens.csv');
const dataDir = join(dir, 'data');
writeFileSync(tokenFile, 'carol-token,carol,carol-uid,"dev"\n');

let s: TestServer;
let certPem = '';
let keyPem = '';
before(async () => {
  s = await startTestServer({ dataDir, options: { tokenAuthFile: tokenFile } });
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: 'O=no-name-team', keys, signingAlgorithm: EC });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.replace(/.{64}/g, '$&\n')}\n-----END PRIVATE KEY-----\n`;
  const body = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'no-cn' }, spec: { request: Buffer.from(csr.toString('pem')).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] } };
  assert.equal((await s.request('POST', CSRS, { body })).status, 201);
  const approve = await s.kubectl(['certificate', 'approve', 'no-cn']);
  assert.equal(approve.code, 0, approve.stderr);
  for (let i = 0; i < 400 && !certPem; i++) {
    const issued = (await s.request('GET', `${CSRS}/no-cn`)).json().status?.certificate as string | undefined;
    if (issued) certPem = Buffer.from(issued, 'base64').toString();
    else await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(certPem, 'the certificate was issued');
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What the tests read of an answer: a Status, or a SelfSubjectReview. */
interface Answer {
  message?: string;
  reason?: string;
  status?: { userInfo: { username: string; groups: string[] } };
}

function withCertificate(server: TestServer, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; json: () => Answer }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = https.request(`${server.url}${path}`, { method, ca: server.pki.caCertPem, cert: certPem, key: keyPem, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: () => JSON.parse(Buffer.concat(chunks).toString()) as Answer }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };

test('no common name: the request is anonymous (403 where anonymous may not go, public paths 200), never 401', async () => {
  const version = await withCertificate(s, 'GET', '/version');
  assert.equal(version.status, 200);
  const pods = await withCertificate(s, 'GET', '/api/v1/namespaces/default/pods');
  assert.equal(pods.status, 403);
  assert.equal(pods.json().message, 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"');
  // kube's basic-user role lets only the authenticated ask who they are.
  assert.equal((await withCertificate(s, 'POST', WHOAMI, {}, review)).status, 403);
});

test('no common name and a bearer token: the token names the user', async () => {
  const r = await withCertificate(s, 'POST', WHOAMI, { authorization: 'Bearer carol-token' }, review);
  assert.equal(r.status, 201);
  assert.equal(r.json().status?.userInfo.username, 'carol');
  assert.deepEqual(r.json().status?.userInfo.groups, ['dev', 'system:authenticated']);
});

test('no common name with --anonymous-auth=false: 401 (the same data, restarted)', async () => {
  await s.stop();
  s = await startTestServer({ dataDir, options: { tokenAuthFile: tokenFile, anonymousAuth: false } });
  const r = await withCertificate(s, 'GET', '/version');
  assert.equal(r.status, 401);
  assert.equal(r.json().reason, 'Unauthorized');
  // A token on the same request still names its user.
  assert.equal((await withCertificate(s, 'POST', WHOAMI, { authorization: 'Bearer carol-token' }, review)).status, 201);
});
