// Static bearer tokens (--token-auth-file) and TokenReview, through HTTPS with kubectl and
// @kubernetes/client-node: a token user is who the file says, a wrong token is 401 (never
// anonymous, though anonymous is on), a file kube refuses stops the start, and TokenReview answers
// as kube's does — to system:masters only, until RBAC.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import YAML from 'yaml';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-tokens-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'alice-token,alice,alice-uid,"dev,ops"\nbob-token,bob,bob-uid\n');
const REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';

let s: TestServer;
before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile } });
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** kubectl with a kubeconfig that holds only this token (no client certificate) and the cluster CA. */
function kubectlWithToken(token: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = join(dir, `kubeconfig-${token}`);
  writeFileSync(kubeconfig, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, token, userName: 'token-user' }));
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A request with this Authorization header and no client certificate. */
function requestWithBearer(method: string, path: string, authorization: string, body?: unknown): Promise<{ status: number; json: () => Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { authorization };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    const req = https.request(`${s.url}${path}`, { method, headers, ca: s.pki.caCertPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: () => JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

test('kubectl auth whoami with a static token names the user, uid and groups of its record', async () => {
  const r = await kubectlWithToken('alice-token', ['auth', 'whoami', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const review = JSON.parse(r.stdout);
  assert.equal(review.kind, 'SelfSubjectReview');
  assert.deepEqual(review.status.userInfo, { username: 'alice', uid: 'alice-uid', groups: ['dev', 'ops', 'system:authenticated'] });

  const bob = await kubectlWithToken('bob-token', ['auth', 'whoami', '-o', 'json']);
  assert.equal(bob.code, 0, bob.stderr);
  assert.deepEqual(JSON.parse(bob.stdout).status.userInfo, { username: 'bob', uid: 'bob-uid', groups: ['system:authenticated'] }, 'no fourth column: no groups but system:authenticated');
});

test('a token user is not an admin: other requests are 403 with its name', async () => {
  const r = await kubectlWithToken('alice-token', ['get', 'namespaces']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope/);
});

test('a wrong token is 401 Unauthorized, never anonymous, though anonymous auth is on', async () => {
  const r = await kubectlWithToken('not-a-token', ['auth', 'whoami']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /You must be logged in to the server \(Unauthorized\)/);

  const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
  for (const authorization of ['Bearer not-a-token', 'Bearer alice-token-', `Bearer ${'x'.repeat(64 * 1024)}`]) {
    const res = await requestWithBearer('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', authorization, body);
    assert.equal(res.status, 401, authorization.slice(0, 30));
    const status = res.json();
    assert.equal(status.kind, 'Status');
    assert.equal(status.reason, 'Unauthorized');
    assert.equal(status.message, 'Unauthorized');
  }
  // Without a credential at all the same request is anonymous's (403, not 401).
  const anonymous = await s.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { anonymous: true, body });
  assert.equal(anonymous.status, 403);
});

test('@kubernetes/client-node with a token: SelfSubjectReview answers its user', async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hearth', server: s.url, caData: Buffer.from(s.pki.caCertPem).toString('base64') }],
    users: [{ name: 'alice', token: 'alice-token' }],
    contexts: [{ name: 'hearth', cluster: 'hearth', user: 'alice' }],
    currentContext: 'hearth',
  });
  const auth = kc.makeApiClient(k8s.AuthenticationV1Api);
  const review = await auth.createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  assert.equal(review.status?.userInfo?.username, 'alice');
  assert.deepEqual(review.status?.userInfo?.groups, ['dev', 'ops', 'system:authenticated']);

  // A TokenReview is a privileged act: alice may not create one.
  await assert.rejects(auth.createTokenReview({ body: { spec: { token: 'bob-token' } } }), (e: unknown) => {
    assert.ok(e instanceof k8s.ApiException);
    assert.equal(e.code, 403);
    assert.match(String(e.body), /tokenreviews.authentication.k8s.io is forbidden: User \\?"alice\\?" cannot create resource \\?"tokenreviews\\?" in API group \\?"authentication.k8s.io\\?" at the cluster scope/);
    return true;
  });
});

test("TokenReview by the admin: a good static token is authenticated with its user, a bad one says kube's error", async () => {
  const manifest = join(dir, 'review.yaml');
  writeFileSync(manifest, YAML.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'alice-token' } }));
  const created = await s.kubectl(['create', '-f', manifest, '-o', 'json']);
  assert.equal(created.code, 0, created.stderr);
  const good = JSON.parse(created.stdout);
  assert.equal(good.kind, 'TokenReview');
  // No spec.audiences: the review asks for the API audiences (the service-account issuer by
  // default), which an audience-agnostic static token answers with.
  assert.deepEqual(good.status, {
    authenticated: true,
    user: { username: 'alice', uid: 'alice-uid', groups: ['dev', 'ops', 'system:authenticated'] },
    audiences: ['https://kubernetes.default.svc.cluster.local'],
  });

  const bad = await s.request('POST', REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'wrong' } } });
  assert.equal(bad.status, 201);
  assert.deepEqual(bad.json().status, { user: {}, error: 'invalid bearer token' }, 'authenticated false (left out, as Go omits it)');
  assert.deepEqual(bad.json().spec, { token: 'wrong' });

  // Audiences the server does not have: static tokens are audience-agnostic and have none to give.
  const otherAudience = await s.request('POST', REVIEWS, { body: { kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1', spec: { token: 'alice-token', audiences: ['vault'] } } });
  assert.equal(otherAudience.status, 201);
  assert.deepEqual(otherAudience.json().status, { user: {}, error: 'invalid bearer token' });
});

test('TokenReview refuses a review without a token, and is create-only: no list, get or watch', async () => {
  const empty = await s.request('POST', REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: {} } });
  assert.equal(empty.status, 400);
  assert.equal(empty.json().reason, 'BadRequest');
  assert.equal(empty.json().message, 'token is required for TokenReview in authentication');

  const wrongKind = await s.request('POST', REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', spec: { token: 'x' } } });
  assert.equal(wrongKind.status, 400);
  assert.equal(wrongKind.json().message, 'the kind in the data (SelfSubjectReview) does not match the expected kind (TokenReview)');

  for (const path of [REVIEWS, `${REVIEWS}?watch=true`]) {
    const r = await s.request('GET', path);
    assert.equal(r.status, 405, path);
    assert.equal(r.json().reason, 'MethodNotAllowed');
  }
  assert.equal((await s.request('GET', `${REVIEWS}/anything`)).status, 404);
  assert.equal((await s.request('DELETE', REVIEWS)).status, 405);
});

test('discovery lists the reviews with the verb create only, and no storage version', async () => {
  const list = (await s.request('GET', '/apis/authentication.k8s.io/v1')).json();
  assert.deepEqual(list.resources, [
    { name: 'selfsubjectreviews', singularName: 'selfsubjectreview', namespaced: false, kind: 'SelfSubjectReview', verbs: ['create'] },
    { name: 'tokenreviews', singularName: 'tokenreview', namespaced: false, kind: 'TokenReview', verbs: ['create'] },
  ]);
  const r = await s.kubectl(['api-resources', '--api-group=authentication.k8s.io', '-o', 'wide', '--no-headers']);
  assert.equal(r.code, 0, r.stderr);
  // NAME, APIVERSION, NAMESPACED, KIND, VERBS (no short names, no categories).
  const rows = r.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
  assert.deepEqual(rows, [
    ['selfsubjectreviews', 'authentication.k8s.io/v1', 'false', 'SelfSubjectReview', 'create'],
    ['tokenreviews', 'authentication.k8s.io/v1', 'false', 'TokenReview', 'create'],
  ]);
});

test("a token file kube refuses stops the start with kube's message", async () => {
  const short = join(dir, 'short.csv');
  writeFileSync(short, 'tok,alice,uid\ntok2,bob\n');
  const dataDir = join(dir, 'refused');
  await assert.rejects(startTestServer({ dataDir, options: { tokenAuthFile: short } }), {
    message: `token file '${short}' must have at least 3 columns (token, user name, user uid), found 2`,
  });
  assert.equal(existsSync(join(dataDir, 'pki')), false, 'nothing was written');
  const missing = join(dir, 'missing.csv');
  await assert.rejects(startTestServer({ dataDir, options: { tokenAuthFile: missing } }), { message: `open ${missing}: no such file or directory` });
});
