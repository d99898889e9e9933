// Legacy (Secret-based) service-account tokens end to end: the admin makes a ServiceAccount and a
// `kubernetes.io/service-account-token` Secret with kubectl, the tokens controller fills the Secret
// (a token with kube's legacy claims, the CA, the namespace, the uid annotation), and the token
// authenticates as the ServiceAccount to kubectl and @kubernetes/client-node; its use stamps the
// `kubernetes.io/legacy-token-last-used` label, `kubernetes.io/legacy-token-invalid-since` refuses
// it, and it dies with its Secret or ServiceAccount. Bound tokens are untouched by all of it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader } from 'jose';
import YAML from 'yaml';
import { KUBECTL, startTestServer, type TestServer } from '../../helpers/server.ts';
import { runHearth } from '../../helpers/hearth-process.ts';

const NS = 'legacy-tokens';
const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const AUTO_GENERATED_WARNING = 'Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.';

let s: TestServer;
let dir: string;
before(async () => {
  // Each check sees the Secret as it is now: without the union's 10 s success cache (token-cache.ts).
  s = await startTestServer({ options: { tokenSuccessCacheTtlMs: 0 } });
  dir = mkdtempSync(join(tmpdir(), 'hearth-legacy-tokens-'));
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Asks until `check` answers something (the controllers act after the write that concerns them); 30 s at most. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await delay(50);
  }
}

const secretPath = (name: string) => `/api/v1/namespaces/${NS}/secrets/${name}`;

/** The Secret once the tokens controller has filled it in. */
function filledSecret(name: string): Promise<{ metadata: { uid: string; resourceVersion: string; labels?: Record<string, string>; annotations: Record<string, string> }; data: Record<string, string> }> {
  return eventually(`secret ${name} to hold a token`, async () => {
    const r = await s.request('GET', secretPath(name));
    return r.status === 200 && r.json().data?.token ? r.json() : undefined;
  });
}

/** `kubectl apply` as the admin of a ServiceAccount and its token Secret. */
async function createServiceAccountWithTokenSecret(sa: string, secret = `${sa}-token`): Promise<string> {
  const manifest = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: NS } },
    { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: secret, namespace: NS, annotations: { 'kubernetes.io/service-account.name': sa } } },
  ];
  const r = await s.kubectl(['apply', '-f', '-'], { input: manifest.map((o) => YAML.stringify(o)).join('---\n') });
  assert.equal(r.code, 0, r.stderr);
  return Buffer.from((await filledSecret(secret)).data.token, 'base64').toString('utf8');
}

/** kubectl with a kubeconfig whose only user is this bearer token. */
function kubectlAsToken(token: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = join(dir, `token-${Math.random().toString(36).slice(2)}.kubeconfig`);
  writeFileSync(file, YAML.stringify(tokenKubeconfig(token)));
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', file, ...args], { timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

function tokenKubeconfig(token: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'hearth', cluster: { server: s.url, 'certificate-authority-data': Buffer.from(s.pki.caCertPem).toString('base64') } }],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'sa', context: { cluster: 'hearth', user: 'sa' } }],
    'current-context': 'sa',
  };
}

/** A request with this bearer token and no client certificate. */
function asToken(token: string, path: string) {
  return s.request('GET', path, { anonymous: true, headers: { authorization: `Bearer ${token}` } });
}

/** The admin's TokenReview of a token. */
async function review(token: string): Promise<{ status: { authenticated?: boolean; user: Record<string, unknown>; audiences?: string[]; error?: string }; warnings: string | string[] | undefined }> {
  const r = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
  assert.equal(r.status, 201, r.text);
  return { status: r.json().status, warnings: r.headers.warning };
}

const utcToday = () => new Date().toISOString().slice(0, 10);

test('the tokens controller fills a Secret made with kubectl: a token with kube legacy claims, the CA, the namespace, the uid annotation', async () => {
  const token = await createServiceAccountWithTokenSecret('robot');
  const sa = (await s.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/robot`)).json();
  const secret = await filledSecret('robot-token');
  assert.equal(Buffer.from(secret.data['ca.crt'], 'base64').toString('utf8'), s.pki.caCertPem);
  assert.equal(Buffer.from(secret.data.namespace, 'base64').toString('utf8'), NS);
  assert.equal(secret.metadata.annotations['kubernetes.io/service-account.name'], 'robot');
  assert.equal(secret.metadata.annotations['kubernetes.io/service-account.uid'], sa.metadata.uid);

  // go-jose's sorted claims, no expiry, no audience; the signing key of bound tokens (its kid).
  const header = decodeProtectedHeader(token);
  assert.deepEqual(Object.keys(header), ['alg', 'kid']);
  assert.equal(header.alg, 'RS256');
  assert.deepEqual(decodeJwt(token), {
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': NS,
    'kubernetes.io/serviceaccount/secret.name': 'robot-token',
    'kubernetes.io/serviceaccount/service-account.name': 'robot',
    'kubernetes.io/serviceaccount/service-account.uid': sa.metadata.uid,
    sub: `system:serviceaccount:${NS}:robot`,
  });
  const jwks = (await s.request('GET', '/openid/v1/jwks')).json();
  assert.equal(header.kid, jwks.keys[0].kid);
  await compactVerify(token, createLocalJWKSet(jwks));

  // kubectl shows the filled Secret as kube's does.
  const described = await s.kubectl(['get', 'secret', 'robot-token', '-n', NS, '-o', 'jsonpath={.type} {.data.namespace}']);
  assert.equal(described.stdout, `kubernetes.io/service-account-token ${Buffer.from(NS).toString('base64')}`);
});

test('kubectl with the token: whoami as the service account (no extras: legacy tokens have no jti); pods are 403, not 401', async () => {
  const token = await createServiceAccountWithTokenSecret('whoami');
  const uid = (await s.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/whoami`)).json().metadata.uid;
  const r = await kubectlAsToken(token, ['auth', 'whoami', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).status.userInfo, { username: `system:serviceaccount:${NS}:whoami`, uid, groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'] });
  // kubectl --token on a kubeconfig that names only the cluster.
  const clusterOnly = join(dir, 'cluster-only.kubeconfig');
  writeFileSync(clusterOnly, YAML.stringify({ ...tokenKubeconfig(''), users: [{ name: 'sa', user: {} }] }));
  const flag = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', clusterOnly, '--token', token, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], { timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }));
  });
  assert.equal(flag.code, 0, flag.stderr);
  assert.equal(flag.stdout, `system:serviceaccount:${NS}:whoami`);
  const pods = await kubectlAsToken(token, ['get', 'pods', '-n', NS]);
  assert.notEqual(pods.code, 0);
  assert.match(pods.stderr, new RegExp(`User "system:serviceaccount:${NS}:whoami" cannot list resource "pods"`));

  // The admin's TokenReview: the user and the API server's audiences, no warning (a Secret made by hand).
  const reviewed = await review(token);
  assert.deepEqual(reviewed.status, { authenticated: true, user: { username: `system:serviceaccount:${NS}:whoami`, uid, groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'] }, audiences: [ISSUER] });
  assert.equal(reviewed.warnings, undefined);
});

test('@kubernetes/client-node with a legacy token: a SelfSubjectReview names the service account', async () => {
  const token = await createServiceAccountWithTokenSecret('client');
  const kc = new k8s.KubeConfig();
  kc.loadFromString(YAML.stringify(tokenKubeconfig(token)));
  const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  assert.equal(review.status?.userInfo?.username, `system:serviceaccount:${NS}:client`);
  assert.deepEqual(review.status?.userInfo?.groups, ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated']);
  await assert.rejects(kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: NS }), (e: { code?: number }) => e.code === 403);
});

test("a use stamps the Secret's legacy-token-last-used label with the UTC date", async () => {
  const token = await createServiceAccountWithTokenSecret('tracked');
  assert.equal((await filledSecret('tracked-token')).metadata.labels?.['kubernetes.io/legacy-token-last-used'], undefined);
  const before = utcToday();
  assert.equal((await asToken(token, '/version')).status, 200);
  const label = await eventually('the last-used label', async () => (await filledSecret('tracked-token')).metadata.labels?.['kubernetes.io/legacy-token-last-used']);
  assert.ok(label === before || label === utcToday(), label);
  // Found by the label selector kube's documentation gives.
  const listed = await s.kubectl(['get', 'secrets', '-n', NS, '-l', 'kubernetes.io/legacy-token-last-used', '-o', 'name']);
  assert.match(listed.stdout, /secret\/tracked-token/);
});

test('a Secret listed in its ServiceAccount (auto-generated, before kube 1.24) brings kube warning', async () => {
  const token = await createServiceAccountWithTokenSecret('old');
  const patched = await s.request('PATCH', `/api/v1/namespaces/${NS}/serviceaccounts/old`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { secrets: [{ name: 'old-token' }] } });
  assert.equal(patched.status, 200, patched.text);
  const r = await asToken(token, '/version');
  assert.equal(r.status, 200);
  assert.equal(r.headers.warning, `299 - "${AUTO_GENERATED_WARNING}"`);
  const kubectl = await kubectlAsToken(token, ['auth', 'whoami']);
  assert.equal(kubectl.code, 0, kubectl.stderr);
  assert.match(kubectl.stderr, /Warning: Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens\./);
  assert.equal((await review(token)).warnings, `299 - "${AUTO_GENERATED_WARNING}"`);

  // Deleting the Secret takes it out of the ServiceAccount's list (the tokens controller).
  assert.equal((await s.request('DELETE', secretPath('old-token'))).status, 200);
  await eventually('the reference to go', async () => ((await s.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/old`)).json().secrets?.length ? undefined : true));
});

test("legacy-token-invalid-since refuses the token with kube's message; removing the label allows it again", async () => {
  const token = await createServiceAccountWithTokenSecret('marked');
  assert.equal((await asToken(token, '/version')).status, 200);
  const label = await s.kubectl(['label', 'secret', 'marked-token', '-n', NS, 'kubernetes.io/legacy-token-invalid-since=2025-01-01']);
  assert.equal(label.code, 0, label.stderr);
  const refused = await asToken(token, '/version');
  assert.equal(refused.status, 401);
  assert.equal(refused.json().reason, 'Unauthorized');
  const whoami = await kubectlAsToken(token, ['auth', 'whoami']);
  assert.notEqual(whoami.code, 0);
  assert.match(whoami.stderr, /Unauthorized/);
  assert.deepEqual((await review(token)).status, {
    user: {},
    error: `the token in secret ${NS}/marked-token for service account ${NS}/marked has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token`,
  });
  const unlabel = await s.kubectl(['label', 'secret', 'marked-token', '-n', NS, 'kubernetes.io/legacy-token-invalid-since-']);
  assert.equal(unlabel.code, 0, unlabel.stderr);
  assert.equal((await asToken(token, '/version')).status, 200);
});

test('a token dies with its Secret', async () => {
  const token = await createServiceAccountWithTokenSecret('secretless');
  assert.equal((await asToken(token, '/version')).status, 200);
  assert.equal((await s.request('DELETE', secretPath('secretless-token'))).status, 200);
  assert.equal((await asToken(token, '/version')).status, 401);
  assert.deepEqual((await review(token)).status, { user: {}, error: 'Token has been invalidated' });
});

test("a token the Secret no longer holds is refused (kube's token comparison)", async () => {
  const token = await createServiceAccountWithTokenSecret('changed');
  assert.equal((await asToken(token, '/version')).status, 200);
  const changed = await s.request('PATCH', secretPath('changed-token'), { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { token: Buffer.from('another-token').toString('base64') } } });
  assert.equal(changed.status, 200, changed.text);
  assert.equal((await asToken(token, '/version')).status, 401);
  assert.deepEqual((await review(token)).status, { user: {}, error: "Token does not match server's copy" });
});

test('deleting the ServiceAccount deletes its token Secrets; a recreated one does not revive the token', async () => {
  const token = await createServiceAccountWithTokenSecret('mortal');
  assert.equal((await asToken(token, '/version')).status, 200);
  assert.equal((await s.request('DELETE', `/api/v1/namespaces/${NS}/serviceaccounts/mortal`)).status, 200);
  assert.equal((await asToken(token, '/version')).status, 401);
  await eventually('the token Secret to be deleted', async () => ((await s.request('GET', secretPath('mortal-token'))).status === 404 ? true : undefined));
  assert.equal((await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { metadata: { name: 'mortal' } } })).status, 201);
  assert.equal((await asToken(token, '/version')).status, 401);
});

test('a Secret naming a ServiceAccount that does not exist is deleted by the tokens controller', async () => {
  const r = await s.kubectl(['create', '-f', '-'], { input: YAML.stringify({ apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'ghost-token', namespace: NS, annotations: { 'kubernetes.io/service-account.name': 'ghost' } } }) });
  assert.equal(r.code, 0, r.stderr);
  await eventually('the Secret to be deleted', async () => ((await s.request('GET', secretPath('ghost-token'))).status === 404 ? true : undefined));
  // A token Secret needs its ServiceAccount's name (kube's validation).
  const unnamed = await s.request('POST', `/api/v1/namespaces/${NS}/secrets`, { body: { metadata: { name: 'unnamed' }, type: 'kubernetes.io/service-account-token' } });
  assert.equal(unnamed.status, 422);
});

test('a bound token (TokenRequest) of the same ServiceAccount works and leaves the legacy labels alone', async () => {
  await createServiceAccountWithTokenSecret('both');
  const created = await s.kubectl(['create', 'token', 'both', '-n', NS]);
  assert.equal(created.code, 0, created.stderr);
  const bound = created.stdout.trim();
  const r = await kubectlAsToken(bound, ['auth', 'whoami', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const info = JSON.parse(r.stdout).status.userInfo;
  assert.equal(info.username, `system:serviceaccount:${NS}:both`);
  assert.deepEqual(info.extra, { 'authentication.kubernetes.io/credential-id': [`JTI=${decodeJwt(bound).jti}`] });
  // TokenReview knows it too, with its audiences (kube's Response.Audiences).
  const reviewed = await review(bound);
  assert.equal(reviewed.status.authenticated, true, JSON.stringify(reviewed.status));
  assert.deepEqual(reviewed.status.audiences, [ISSUER]);
  // Bound tokens never touch the legacy labels: the token Secret was never used, and has none.
  assert.equal((await asToken(bound, '/version')).status, 200);
  assert.equal((await filledSecret('both-token')).metadata.labels, undefined);
});

test('kube-system/kube-apiserver-legacy-service-account-token-tracking says since when tracking runs', async () => {
  const cm = await eventually('the tracking ConfigMap', async () => {
    const r = await s.request('GET', '/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking');
    return r.status === 200 ? r.json() : undefined;
  });
  assert.deepEqual(Object.keys(cm.data), ['since']);
  assert.match(cm.data.since, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(cm.data.since <= utcToday());
  // A date that is no date is set again.
  const broken = await s.request('PATCH', '/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking', { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { since: 'yesterday' } } });
  assert.equal(broken.status, 200, broken.text);
  const repaired = await eventually('the date to be set again', async () => {
    const since = (await s.request('GET', '/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking')).json().data.since;
    return since === 'yesterday' ? undefined : since;
  });
  assert.match(repaired, /^\d{4}-\d{2}-\d{2}$/);
});

test('the legacy token cleaner: an unused auto-generated token Secret is marked invalid, then deleted; one made by hand or mounted by a pod is kept', async () => {
  // A clean-up period of a second, looked at ten times a second (kube: a year, daily).
  const c = await startTestServer({ options: { legacyServiceAccountTokenCleanUpPeriodMs: 1000, legacyTokenCleanerSyncIntervalMs: 100 } });
  try {
    const ns = 'cleaned';
    const api = `/api/v1/namespaces/${ns}`;
    assert.equal((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
    assert.equal((await c.request('POST', `${api}/serviceaccounts`, { body: { metadata: { name: 'app' } } })).status, 201);
    const tokenSecret = (name: string) => ({ metadata: { name, annotations: { 'kubernetes.io/service-account.name': 'app' } }, type: 'kubernetes.io/service-account-token' });
    // Made before the one that goes, so the pass that marks it has looked at them too.
    for (const name of ['mounted', 'by-hand', 'unused']) assert.equal((await c.request('POST', `${api}/secrets`, { body: tokenSecret(name) })).status, 201);
    const tokens: Record<string, string> = {};
    for (const name of ['mounted', 'by-hand', 'unused']) {
      tokens[name] = await eventually(`${name} to be filled`, async () => {
        const t = (await c.request('GET', `${api}/secrets/${name}`)).json().data?.token;
        return t ? Buffer.from(t, 'base64').toString('utf8') : undefined;
      });
    }
    // "Auto-generated": listed by the ServiceAccount, as kube before 1.24 listed its own.
    const listed = await c.request('PATCH', `${api}/serviceaccounts/app`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { secrets: [{ name: 'mounted' }, { name: 'unused' }] } });
    assert.equal(listed.status, 200, listed.text);
    const pod = await c.request('POST', `${api}/pods`, { body: { metadata: { name: 'user' }, spec: { serviceAccountName: 'app', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'legacy', secret: { secretName: 'mounted' } }] } } });
    assert.equal(pod.status, 201, pod.text);
    // Nothing happens until tracking has run for a whole period: say it began long ago.
    await eventually('the tracking ConfigMap', async () => ((await c.request('GET', '/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking')).status === 200 ? true : undefined));
    const since = await c.request('PATCH', '/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking', { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { since: '2020-01-01' } } });
    assert.equal(since.status, 200, since.text);

    const marked = await eventually('the invalid-since label', async () => (await c.request('GET', `${api}/secrets/unused`)).json().metadata.labels?.['kubernetes.io/legacy-token-invalid-since']);
    assert.match(marked, /^\d{4}-\d{2}-\d{2}$/);
    const refused = await c.request('GET', '/version', { anonymous: true, headers: { authorization: `Bearer ${tokens.unused}` } });
    assert.equal(refused.status, 401);
    // The refused use is recorded; once it and the mark are a period old, the Secret goes.
    await eventually('the last-used label', async () => (await c.request('GET', `${api}/secrets/unused`)).json().metadata.labels?.['kubernetes.io/legacy-token-last-used']);
    const aged = await c.request('PATCH', `${api}/secrets/unused`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { metadata: { labels: { 'kubernetes.io/legacy-token-invalid-since': '2020-06-01', 'kubernetes.io/legacy-token-last-used': '2020-05-01' } } } });
    assert.equal(aged.status, 200, aged.text);
    await eventually('the Secret to be deleted', async () => ((await c.request('GET', `${api}/secrets/unused`)).status === 404 ? true : undefined));

    // Passes have run since: the mounted Secret and the one made by hand were left alone.
    for (const name of ['mounted', 'by-hand']) {
      const kept = (await c.request('GET', `${api}/secrets/${name}`)).json();
      assert.equal(kept.metadata.labels?.['kubernetes.io/legacy-token-invalid-since'], undefined, name);
      assert.equal((await c.request('GET', '/version', { anonymous: true, headers: { authorization: `Bearer ${tokens[name]}` } })).status, 200, name);
    }
  } finally {
    await c.stop();
  }
});

test('--legacy-service-account-token-clean-up-period: a duration as kube-controller-manager reads it; none is refused', async () => {
  const refused = await runHearth(['--legacy-service-account-token-clean-up-period', '0']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /invalid CleanUpPeriod: 0/);
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-cleanup-flag-'));
  try {
    const started = await runHearth(['--data-dir', dataDir, '--secure-port', '0', '--legacy-service-account-token-clean-up-period', '720h', '--controllers', '*,-legacy-serviceaccount-token-cleaner-controller']);
    assert.equal(started.code, 0, started.stderr);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
