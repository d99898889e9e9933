// `kubectl auth whoami` (SelfSubjectReview) as each kind of caller hearth knows without tokens:
// the admin's certificate (with kube's credential-id extra), a certificate from a --client-ca-file
// CA, a certificate from an unknown CA (401), and anonymous (kube's basic-user role grants
// SelfSubjectReview to system:authenticated only, so anonymous is 403; with --anonymous-auth=false, 401).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate, createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { ensurePki, issueClientCertificate, type CaPair } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-whoami-'));
const CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';

/** kube's credential ID of a certificate: X509SHA256= and the hex SHA-256 of its DER. */
function credentialId(certPem: string): string {
  return `X509SHA256=${createHash('sha256').update(new X509Certificate(certPem).raw).digest('hex')}`;
}

/** A CA of its own (another data directory's PKI), as an outside CA would be. */
async function outsideCa(name: string): Promise<CaPair> {
  const pki = await ensurePki(join(dir, name));
  return { caCertPem: pki.caCertPem, caKeyPem: pki.caKeyPem };
}

let s: TestServer;
let external: CaPair;
let strict: TestServer;
before(async () => {
  external = await outsideCa('external-ca');
  const bundle = join(dir, 'client-ca.pem');
  writeFileSync(bundle, external.caCertPem);
  s = await startTestServer({ options: { clientCaFile: bundle } });
  strict = await startTestServer({ options: { anonymousAuth: false } });
});
after(async () => {
  await s?.stop();
  await strict?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** kubectl with a kubeconfig of this server's CA and the given client certificate, or none. */
function kubectlAs(server: TestServer, name: string, args: string[], cert?: { certPem: string; keyPem: string }): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = join(dir, `kubeconfig-${name}`);
  writeFileSync(kubeconfig, renderKubeconfig({ server: server.url, caCertPem: server.pki.caCertPem, clientCertPem: cert?.certPem, clientKeyPem: cert?.keyPem, userName: name }));
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('kubectl auth whoami as the admin: name, groups and the credential-id of its certificate', async () => {
  const r = await s.kubectl(['auth', 'whoami']);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
  assert.deepEqual(rows, [
    ['ATTRIBUTE', 'VALUE'],
    ['Username', 'hearth-admin'],
    ['Groups', '[system:masters system:authenticated]'],
    [`Extra: ${CREDENTIAL_ID}`, `[${credentialId(s.pki.adminCertPem)}]`],
  ]);
});

test('kubectl auth whoami -o yaml is the SelfSubjectReview kube answers', async () => {
  const r = await s.kubectl(['auth', 'whoami', '-o', 'yaml']);
  assert.equal(r.code, 0, r.stderr);
  const review = YAML.parse(r.stdout);
  assert.equal(review.apiVersion, 'authentication.k8s.io/v1');
  assert.equal(review.kind, 'SelfSubjectReview');
  assert.match(review.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(review.status, {
    userInfo: { username: 'hearth-admin', groups: ['system:masters', 'system:authenticated'], extra: { [CREDENTIAL_ID]: [credentialId(s.pki.adminCertPem)] } },
  });
});

const PINNED = (version: string) => `/usr/lib/google-cloud-sdk/bin/kubectl.${version}`;

test('pinned kubectl 1.28 and 1.33 ask authentication.k8s.io/v1 the same way', async () => {
  for (const version of ['1.28', '1.33']) {
    const r = await s.kubectl(['auth', 'whoami', '-o', 'json'], { binary: PINNED(version) });
    assert.equal(r.code, 0, `${version}: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout).status.userInfo.username, 'hearth-admin', version);
  }
});

test('kubectl 1.27 asks only v1alpha1/v1beta1, which kube 1.36 does not serve either: its own message', async () => {
  const r = await s.kubectl(['auth', 'whoami'], { binary: PINNED('1.27') });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /^error: the selfsubjectreviews API is not enabled in the cluster\n/);
});

test('a certificate from a --client-ca-file CA authenticates; one from an unknown CA is 401', async () => {
  const carol = await issueClientCertificate(external, { commonName: 'carol', organizations: ['outside', 'team-b'] });
  const r = await kubectlAs(s, 'carol', ['auth', 'whoami', '-o', 'json'], { certPem: carol.certPem, keyPem: carol.keyPem! });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).status.userInfo, {
    username: 'carol',
    groups: ['outside', 'team-b', 'system:authenticated'],
    extra: { [CREDENTIAL_ID]: [credentialId(carol.certPem)] },
  });

  const stranger = await issueClientCertificate(await outsideCa('unknown-ca'), { commonName: 'mallory', organizations: ['system:masters'] });
  const refused = await kubectlAs(s, 'mallory', ['auth', 'whoami'], { certPem: stranger.certPem, keyPem: stranger.keyPem! });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /You must be logged in to the server \(Unauthorized\)/);

  // The server without --client-ca-file does not know carol's CA.
  const elsewhere = await kubectlAs(strict, 'carol-elsewhere', ['auth', 'whoami'], { certPem: carol.certPem, keyPem: carol.keyPem! });
  assert.notEqual(elsewhere.code, 0);
  assert.match(elsewhere.stderr, /You must be logged in to the server \(Unauthorized\)/);
});

/** client-node with no credential at all (kubectl would prompt for a password instead). */
function anonymousClient(server: TestServer): k8s.AuthenticationV1Api {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hearth', server: server.url, caData: Buffer.from(server.pki.caCertPem).toString('base64') }],
    users: [{ name: 'nobody' }],
    contexts: [{ name: 'hearth', cluster: 'hearth', user: 'nobody' }],
    currentContext: 'hearth',
  });
  return kc.makeApiClient(k8s.AuthenticationV1Api);
}

test("anonymous may not ask who it is (kube's basic-user role is for system:authenticated); with --anonymous-auth=false it is 401", async () => {
  const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
  await assert.rejects(anonymousClient(s).createSelfSubjectReview({ body }), (e: unknown) => {
    assert.ok(e instanceof k8s.ApiException);
    assert.equal(e.code, 403);
    const status = JSON.parse(String(e.body));
    assert.equal(status.reason, 'Forbidden');
    assert.equal(status.message, 'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope');
    return true;
  });
  await assert.rejects(anonymousClient(strict).createSelfSubjectReview({ body }), (e: unknown) => {
    assert.ok(e instanceof k8s.ApiException);
    assert.equal(e.code, 401);
    return true;
  });
  const raw = await strict.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { anonymous: true, body });
  assert.equal(raw.status, 401);
  assert.equal(raw.json().reason, 'Unauthorized');
});

test("a --client-ca-file kube refuses stops the start with kube's message", async () => {
  const empty = join(dir, 'empty.pem');
  writeFileSync(empty, '');
  await assert.rejects(startTestServer({ dataDir: join(dir, 'refused'), options: { clientCaFile: empty } }), { message: `missing content for CA bundle "client-ca-bundle::${empty}"` });
  const notPem = join(dir, 'not.pem');
  writeFileSync(notPem, 'hello\n');
  await assert.rejects(startTestServer({ dataDir: join(dir, 'refused'), options: { clientCaFile: notPem } }), {
    message: `error reading client-ca-bundle::${notPem}: data does not contain any valid RSA or ECDSA certificates`,
  });
});
