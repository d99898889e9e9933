// Webhook token authentication (--authentication-token-webhook-*), through HTTPS with kubectl and
// @kubernetes/client-node against a real TokenReview webhook this file starts on loopback: HTTPS
// with its own CA, requiring a client certificate from that CA (named in the webhook kubeconfig by
// paths relative to the kubeconfig). The webhook answers by token and counts its calls, so the
// tests see what kube's webhook authenticator sends (the version's TokenReview, spec.audiences),
// what it makes of the answers (user, uid, groups, extra; refusals; audiences), its cache (users
// and plain refusals kept for the TTL, errors not), its retry of a 500, and an outage (401, the
// server stays up, kube's log line).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import YAML from 'yaml';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { runHearth } from '../../helpers/hearth-process.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';
import { ensurePki, type ServerPki } from '../../../server/pki/certificates.ts';
import { startServer } from '../../../server/server.ts';
import { logMessage } from '../../helpers/log-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-token-webhook-'));
const DEFAULT_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';
const REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';

// ---- the webhook ----

/** Parsed JSON, read field by field (the assertions check the shapes). */
interface Loose {
  [key: string]: Loose;
}

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  clientCN: string | undefined;
  review: Loose;
}

let webhookPki: ServerPki;
let webhookServer: https.Server;
let webhookPort = 0;
const received: Received[] = [];
const sockets = new Set<TLSSocket>();
/** Calls per token. */
const calls = new Map<string, number>();

/** What the webhook answers for a token: [HTTP status, body (an object is JSON), content type]. */
function answerFor(review: Loose): [number, unknown, string?] {
  const token = String(review.spec?.token ?? '');
  const n = calls.get(token) ?? 0;
  const status = (s: Record<string, unknown>) => ({ apiVersion: review.apiVersion, kind: 'TokenReview', status: s });
  switch (token) {
    case 'alice-token':
      // Echoes the audiences it was asked for, as an audience-aware webhook does.
      return [200, status({ authenticated: true, user: { username: 'alice@idp', uid: 'alice-uid', groups: ['idp:dev', 'idp:ops'], extra: { 'idp.example.com/tenant': ['t1', 't2'] } }, audiences: review.spec.audiences })];
    case 'carol-token':
      return [200, status({ authenticated: true, user: { username: 'carol@idp', groups: null } })];
    case 'dave-token':
      return [200, status({ authenticated: true, user: { username: 'dave@idp' } })];
    case 'eve-token':
      return [200, status({ authenticated: true, user: { username: 'eve@idp' } })];
    case 'denied-token':
      return [200, status({ authenticated: false, error: 'SECRET-IDP-DETAIL: token revoked' })];
    case 'aud-token':
      return [200, status({ authenticated: true, user: { username: 'aud@idp' }, audiences: ['https://some-other-api.example.com'] })];
    case 'flaky-token':
      // The first call fails as a crashed webhook does; kube's retry asks again.
      return n === 1 ? [500, 'webhook crashed', 'text/plain; charset=utf-8'] : [200, status({ authenticated: true, user: { username: 'flaky@idp' } })];
    case 'bad-answer-token':
      return [200, 'this is not json', 'application/json'];
    case 'other-version-token':
      return [200, { ...status({ authenticated: true, user: { username: 'x' } }), apiVersion: String(review.apiVersion) === 'authentication.k8s.io/v1' ? 'authentication.k8s.io/v1beta1' : 'authentication.k8s.io/v1' }];
    default:
      return [200, status({ authenticated: false })];
  }
}

async function listenWebhook(port: number): Promise<void> {
  webhookServer = https.createServer({ key: webhookPki.servingKeyPem, cert: webhookPki.servingCertPem, ca: webhookPki.caCertPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Loose;
      const token = String(review.spec?.token ?? '');
      calls.set(token, (calls.get(token) ?? 0) + 1);
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      received.push({ path: req.url ?? '', headers: req.headers, clientCN: peer?.subject?.CN === undefined ? undefined : String(peer.subject.CN), review });
      const [code, body, contentType] = answerFor(review);
      res.writeHead(code, { 'Content-Type': contentType ?? 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
  });
  webhookServer.on('secureConnection', (s: TLSSocket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => webhookServer.listen(port, '127.0.0.1', resolve));
  webhookPort = (webhookServer.address() as AddressInfo).port;
}

async function stopWebhook(): Promise<void> {
  const closed = new Promise<void>((resolve) => webhookServer.close(() => resolve()));
  for (const s of sockets) s.destroy();
  await closed;
}

/** A kubeconfig naming the webhook, its CA and client certificate by paths relative to itself. */
function writeWebhookKubeconfig(name: string): string {
  const file = join(dir, name);
  writeFileSync(join(dir, 'webhook-ca.crt'), webhookPki.caCertPem);
  writeFileSync(join(dir, 'webhook-client.crt'), webhookPki.adminCertPem);
  writeFileSync(join(dir, 'webhook-client.key'), webhookPki.adminKeyPem);
  writeFileSync(
    file,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'idp', cluster: { server: `https://127.0.0.1:${webhookPort}/authenticate`, 'certificate-authority': 'webhook-ca.crt' } }],
      users: [{ name: 'apiserver', user: { 'client-certificate': 'webhook-client.crt', 'client-key': 'webhook-client.key' } }],
      contexts: [{ name: 'webhook', context: { cluster: 'idp', user: 'apiserver' } }],
      'current-context': 'webhook',
    }),
  );
  return file;
}

// ---- hearth ----

let s: TestServer;
const logs: string[] = [];

before(async () => {
  const pkiDir = mkdtempSync(join(tmpdir(), 'hearth-token-webhook-pki-'));
  try {
    webhookPki = await ensurePki(pkiDir);
  } finally {
    rmSync(pkiDir, { recursive: true, force: true });
  }
  await listenWebhook(0);
  s = await startTestServer({ options: { authenticationTokenWebhookConfigFile: writeWebhookKubeconfig('webhook.kubeconfig'), log: (l) => logs.push(logMessage(l)) } });
});
after(async () => {
  await s?.stop();
  await stopWebhook();
  rmSync(dir, { recursive: true, force: true });
});

function kubectlWithToken(server: { url: string; pki: { caCertPem: string } }, token: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = join(dir, `kubectl-${token}-${server.url.replace(/\W/g, '')}`);
  writeFileSync(kubeconfig, renderKubeconfig({ server: server.url, caCertPem: server.pki.caCertPem, token, userName: 'token-user' }));
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A request with this bearer token and no client certificate. */
function requestWithToken(server: { url: string; pki: { caCertPem: string } }, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; text: string; json: () => Loose }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    const req = https.request(`${server.url}${path}`, { method, headers, ca: server.pki.caCertPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const whoamiBody = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };

function assertUnauthorized(r: { status: number; json: () => Loose }): void {
  assert.equal(r.status, 401);
  assert.deepEqual(r.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
}

// ---- the tests ----

test('kubectl auth whoami with a token the webhook accepts: its user, uid, groups and extra', async () => {
  const r = await kubectlWithToken(s, 'alice-token', ['auth', 'whoami', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).status.userInfo, {
    username: 'alice@idp',
    uid: 'alice-uid',
    groups: ['idp:dev', 'idp:ops', 'system:authenticated'],
    extra: { 'idp.example.com/tenant': ['t1', 't2'] },
  });

  // What kube sends: the default version's TokenReview, to the kubeconfig's path, with the API
  // server's audiences, authenticated by the kubeconfig's client certificate.
  const first = received.find((x) => String(x.review.spec?.token) === 'alice-token')!;
  assert.equal(first.path, '/authenticate');
  assert.equal(first.clientCN, 'hearth-admin', 'the client certificate the kubeconfig names (relative paths resolved against it)');
  assert.equal(first.headers['content-type'], 'application/json');
  assert.match(String(first.headers['user-agent']), /^kube-apiserver\/v\d+\.\d+\.\d+ \(/);
  assert.deepEqual(first.review, {
    kind: 'TokenReview',
    apiVersion: 'authentication.k8s.io/v1beta1',
    metadata: { creationTimestamp: null },
    spec: { token: 'alice-token', audiences: [DEFAULT_AUDIENCE] },
    status: { user: {} },
  });
});

test('the cache: the same token does not reach the webhook again within the TTL; another token does', async () => {
  const before = calls.get('alice-token') ?? 0;
  assert.ok(before >= 1);
  const again = await kubectlWithToken(s, 'alice-token', ['auth', 'whoami', '-o', 'json']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).status.userInfo.username, 'alice@idp');
  assert.equal(calls.get('alice-token'), before, 'answered from the cache');
  // Concurrent requests with one new token share one call.
  const all = await Promise.all([1, 2, 3, 4].map(() => requestWithToken(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', 'carol-token', whoamiBody)));
  for (const r of all) {
    assert.equal(r.status, 201, r.text);
    // groups: null in the answer is no groups.
    assert.deepEqual(r.json().status.userInfo, { username: 'carol@idp', groups: ['system:authenticated'] });
  }
  assert.equal(calls.get('carol-token'), 1);
  assert.equal(calls.get('alice-token'), before);
});

test('a token the webhook refuses is 401 with kube\'s bare Status: the webhook\'s reason is neither sent nor logged', async () => {
  const denied = await requestWithToken(s, 'GET', '/api/v1/namespaces/default', 'denied-token');
  assertUnauthorized(denied);
  assert.ok(!denied.text.includes('SECRET-IDP-DETAIL'));
  // A refusal with a reason is an error to kube's cache, which does not keep errors: asked again.
  assertUnauthorized(await requestWithToken(s, 'GET', '/api/v1/namespaces/default', 'denied-token'));
  assert.equal(calls.get('denied-token'), 2);
  // A plain "not authenticated" is kept for the TTL like a user.
  assertUnauthorized(await requestWithToken(s, 'GET', '/api/v1/namespaces/default', 'nobody-token'));
  assertUnauthorized(await requestWithToken(s, 'GET', '/api/v1/namespaces/default', 'nobody-token'));
  assert.equal(calls.get('nobody-token'), 1);
  assert.ok(!logs.some((l) => l.includes('SECRET-IDP-DETAIL') || l.includes('denied-token') || l.includes('nobody-token')), logs.join('\n'));

  const k = await kubectlWithToken(s, 'denied-token', ['get', 'namespaces']);
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)/);
  assert.ok(!k.stderr.includes('SECRET-IDP-DETAIL'));
});

test('audiences: spec.audiences goes to the webhook; its status.audiences must meet the ones asked for', async () => {
  // TokenReview for another audience: the webhook is asked for it and echoes it.
  const custom = await s.request('POST', REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'alice-token', audiences: ['https://vault.example.com', 'urn:x'] } } });
  assert.equal(custom.status, 201, custom.text);
  assert.equal(custom.json().status.authenticated, true);
  assert.deepEqual(custom.json().status.audiences, ['https://vault.example.com', 'urn:x']);
  assert.deepEqual(received.at(-1)!.review.spec, { token: 'alice-token', audiences: ['https://vault.example.com', 'urn:x'] });

  // A webhook that vouches for another API only: not this server's user.
  const other = await s.request('POST', REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'aud-token' } } });
  assert.equal(other.status, 201, other.text);
  assert.equal(other.json().status.authenticated, undefined);
  assertUnauthorized(await requestWithToken(s, 'GET', '/api', 'aud-token'));

  // TokenReview shows a refusal's reason (kube's status.error), to whoever may create TokenReviews.
  const denied = await s.request('POST', REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'denied-token' } } });
  assert.equal(denied.status, 201, denied.text);
  assert.equal(denied.json().status.authenticated, undefined);
  assert.match(denied.json().status.error, /SECRET-IDP-DETAIL: token revoked/);
});

test('a 500 from the webhook is retried with kube\'s backoff; an unreadable answer is not', async () => {
  const flaky = await requestWithToken(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', 'flaky-token', whoamiBody);
  assert.equal(flaky.status, 201, flaky.text);
  assert.equal(flaky.json().status.userInfo.username, 'flaky@idp');
  assert.equal(calls.get('flaky-token'), 2);

  assertUnauthorized(await requestWithToken(s, 'GET', '/api', 'bad-answer-token'));
  assert.equal(calls.get('bad-answer-token'), 1);
  assert.ok(logs.some((l) => /^Failed to make webhook authenticator request: couldn't get version\/kind; json parse error: /.test(l)), logs.join('\n'));
  // v1beta1 asked, v1 answered: kube's decoder does not convert between them.
  assertUnauthorized(await requestWithToken(s, 'GET', '/api', 'other-version-token'));
  assert.ok(logs.includes('Failed to make webhook authenticator request: converting (v1.TokenReview) to (v1beta1.TokenReview): unknown conversion'), logs.join('\n'));
});

test('@kubernetes/client-node with a webhook token: SelfSubjectReview names its user', async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hearth', server: s.url, caData: Buffer.from(s.pki.caCertPem).toString('base64') }],
    users: [{ name: 'alice', token: 'alice-token' }],
    contexts: [{ name: 'hearth', cluster: 'hearth', user: 'alice' }],
    currentContext: 'hearth',
  });
  const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: whoamiBody });
  assert.equal(review.status?.userInfo?.username, 'alice@idp');
  assert.equal(review.status?.userInfo?.uid, 'alice-uid');
  assert.deepEqual(review.status?.userInfo?.extra, { 'idp.example.com/tenant': ['t1', 't2'] });
  // Not an admin: RBAC is not here yet, so a webhook user is refused most things.
  await assert.rejects(kc.makeApiClient(k8s.CoreV1Api).listNamespace(), (e: unknown) => e instanceof k8s.ApiException && e.code === 403);
});

test('webhook down: 401 for its tokens, kube\'s log line, the server stays up; errors are not cached', async () => {
  const port = webhookPort;
  const dave = await requestWithToken(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', 'dave-token', whoamiBody);
  assert.equal(dave.status, 201, dave.text);
  await stopWebhook();
  const down = await requestWithToken(s, 'GET', '/api', 'eve-token');
  assertUnauthorized(down);
  assert.ok(logs.includes(`Failed to make webhook authenticator request: Post "https://127.0.0.1:${port}/authenticate": dial tcp 127.0.0.1:${port}: connect: connection refused`), logs.join('\n'));
  // Other credentials are unaffected, and a token the webhook already vouched for is still cached.
  assert.equal((await s.request('GET', '/readyz')).status, 200);
  const admin = await s.kubectl(['get', 'namespace', 'default', '-o', 'name']);
  assert.equal(admin.code, 0, admin.stderr);
  const cached = await requestWithToken(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', 'dave-token', whoamiBody);
  assert.equal(cached.status, 201, cached.text);
  assert.equal(cached.json().status.userInfo.username, 'dave@idp');

  // Back up on the same port: the failure was not cached, so the same token now authenticates.
  await listenWebhook(port);
  const back = await requestWithToken(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', 'eve-token', whoamiBody);
  assert.equal(back.status, 201, back.text);
  assert.equal(back.json().status.userInfo.username, 'eve@idp');
});

test('--authentication-token-webhook-version=v1 sends and expects v1; cache TTL 0 asks every time', async () => {
  const v1Logs: string[] = [];
  const v1 = await startTestServer({
    options: { authenticationTokenWebhookConfigFile: writeWebhookKubeconfig('webhook-v1.kubeconfig'), authenticationTokenWebhookVersion: 'v1', authenticationTokenWebhookCacheTtlMs: 0, apiAudiences: ['https://hearth.example.com'], log: (l) => v1Logs.push(logMessage(l)) },
  });
  try {
    const before = calls.get('eve-token') ?? 0;
    const r = await kubectlWithToken(v1, 'eve-token', ['auth', 'whoami', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).status.userInfo.username, 'eve@idp');
    const sent = received.filter((x) => String(x.review.spec?.token) === 'eve-token').at(-1)!;
    assert.equal(sent.review.apiVersion, 'authentication.k8s.io/v1');
    assert.deepEqual(sent.review.spec.audiences, ['https://hearth.example.com'], '--api-audiences are what the webhook is asked for');

    assert.ok(calls.get('eve-token')! > before);
    // A user is kept 10 s by the cache in front of the whole token union (kube-apiserver's), so
    // the webhook's own TTL of 0 shows on a token it does not know, which nothing keeps.
    const nobodyBefore = calls.get('nobody-token') ?? 0;
    for (let i = 0; i < 2; i++) assertUnauthorized(await requestWithToken(v1, 'GET', '/api', 'nobody-token'));
    assert.equal(calls.get('nobody-token'), nobodyBefore + 2, 'no cache with a TTL of 0');

    assertUnauthorized(await requestWithToken(v1, 'GET', '/api', 'other-version-token'));
    assert.ok(v1Logs.includes('Failed to make webhook authenticator request: converting (v1beta1.TokenReview) to (v1.TokenReview): unknown conversion'), v1Logs.join('\n'));
  } finally {
    await v1.stop();
  }
});

test('a webhook configuration kube refuses stops the start with kube\'s message, before anything is written', async () => {
  const start = (dataDir: string, options: Record<string, unknown>) => startServer({ dataDir, securePort: 0, bindAddress: '127.0.0.1', log: () => {}, ...options });
  const cases: [Record<string, unknown>, string | RegExp][] = [
    [{ authenticationTokenWebhookConfigFile: join(dir, 'missing.kubeconfig') }, `stat ${join(dir, 'missing.kubeconfig')}: no such file or directory`],
    [{ authenticationTokenWebhookConfigFile: join(dir, 'webhook.kubeconfig'), authenticationTokenWebhookVersion: 'v2' }, 'unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"'],
  ];
  const empty = join(dir, 'empty.kubeconfig');
  writeFileSync(empty, 'apiVersion: v1\nkind: Config\n');
  cases.push([{ authenticationTokenWebhookConfigFile: empty }, 'invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable']);
  const insecure = join(dir, 'insecure.kubeconfig');
  writeFileSync(
    insecure,
    YAML.stringify({
      clusters: [{ name: 'idp', cluster: { server: 'https://127.0.0.1:1', 'insecure-skip-tls-verify': true, 'certificate-authority-data': Buffer.from(webhookPki.caCertPem).toString('base64') } }],
      contexts: [{ name: 'c', context: { cluster: 'idp', user: 'u' } }],
      users: [{ name: 'u', user: { token: 't', username: 'u', password: 'p' } }],
      'current-context': 'c',
    }),
  );
  cases.push([{ authenticationTokenWebhookConfigFile: insecure }, 'invalid configuration: more than one authentication method found for u; found [token basicAuth], only one is allowed']);
  for (const [options, message] of cases) {
    const dataDir = join(dir, `data-${Math.random().toString(36).slice(2)}`);
    await assert.rejects(start(dataDir, options), (e: Error) => {
      if (typeof message === 'string') assert.equal(e.message, message);
      else assert.match(e.message, message);
      return true;
    });
    assert.ok(!existsSync(dataDir), 'nothing written');
  }
});

test('hearth refuses a bad --authentication-token-webhook-cache-ttl or version in kube\'s words', async () => {
  const ttl = await runHearth(['--data-dir', join(dir, 'never'), '--authentication-token-webhook-cache-ttl', 'soon']);
  assert.equal(ttl.code, 2);
  assert.match(ttl.stderr, /invalid argument "soon" for "--authentication-token-webhook-cache-ttl" flag: time: invalid duration "soon"/);
  const version = await runHearth(['--data-dir', join(dir, 'never'), '--secure-port', '0', '--authentication-token-webhook-config-file', join(dir, 'webhook.kubeconfig'), '--authentication-token-webhook-version', 'v3']);
  assert.equal(version.code, 1);
  assert.match(version.stderr, /hearth: unsupported authentication webhook version "v3", supported versions are "v1", "v1beta1"/);
  assert.ok(!existsSync(join(dir, 'never')));
});
