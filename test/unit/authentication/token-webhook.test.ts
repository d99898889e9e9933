// server/authentication/token-webhook.ts against a local TokenReview webhook (plain HTTP, named by
// a kubeconfig): kube's audience rules (checked before "authenticated"), what it makes of an
// answer's fields, and its decoder's errors for answers of the wrong shape.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import YAML from 'yaml';
import { loadTokenWebhookConfig, tokenWebhookAuthenticator, type TokenWebhookAuthenticator } from '../../../server/authentication/token-webhook.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-token-webhook-unit-'));
let server: http.Server;
/** The status the webhook answers next, and the reviews it received. */
let status: unknown = {};
const reviews: { spec: { token: string; audiences?: string[] } }[] = [];
let authn: TokenWebhookAuthenticator;
const logs: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      reviews.push(review);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const file = join(dir, 'webhook.kubeconfig');
  writeFileSync(
    file,
    YAML.stringify({
      clusters: [{ name: 'w', cluster: { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` } }],
      contexts: [{ name: 'w', context: { cluster: 'w', user: 'u' } }],
      users: [{ name: 'u', user: {} }],
      'current-context': 'w',
    }),
  );
  // No cache: every call reaches the webhook.
  authn = tokenWebhookAuthenticator(loadTokenWebhookConfig(file, 'v1'), { cacheTtlMs: 0, implicitAudiences: ['api', 'shared'], log: (l) => logs.push(l) });
});
after(async () => {
  authn.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const user = { username: 'alice', uid: 'u-1', groups: ['g'], extra: { k: ['v'] } };

test('the answer\'s user: username, uid, groups, extra (an extra key named __proto__ stays a key)', async () => {
  status = { authenticated: true, user: { ...user, extra: JSON.parse('{"__proto__": ["p"], "k": ["v"]}') } };
  const r = await authn.authenticateToken('t');
  assert.ok(r && 'user' in r);
  assert.equal(r.user.name, 'alice');
  assert.equal(r.user.uid, 'u-1');
  assert.deepEqual(r.user.groups, ['g']);
  assert.deepEqual(Object.keys(r.user.extra!), ['__proto__', 'k']);
  assert.equal(Object.getPrototypeOf(r.user.extra), Object.prototype);
  assert.deepEqual(r.audiences, ['api', 'shared'], 'a request without audiences has the API server\'s');
  assert.deepEqual(reviews.at(-1)!.spec, { token: 't', audiences: ['api', 'shared'] });
});

test('audiences: the answer\'s, else the implicit ones, must meet those asked for, and are checked before "authenticated"', async () => {
  status = { authenticated: true, user };
  let r = await authn.authenticateToken('t', ['shared', 'vault']);
  assert.ok(r && 'user' in r);
  assert.deepEqual(r.audiences, ['shared'], 'asked ∩ implicit');

  status = { authenticated: true, user, audiences: ['vault', 'other'] };
  r = await authn.authenticateToken('t', ['shared', 'vault']);
  assert.ok(r && 'user' in r);
  assert.deepEqual(r.audiences, ['vault'], 'asked ∩ the answer\'s');
  assert.equal(await authn.authenticateToken('t', ['api']), undefined, 'the answer names other audiences: not this token');

  // A refusal for other audiences is "not mine", not the refusal's error.
  status = { authenticated: false, error: 'revoked', audiences: ['elsewhere'] };
  assert.equal(await authn.authenticateToken('t', ['api']), undefined);
  status = { authenticated: false, error: 'revoked' };
  assert.deepEqual(await authn.authenticateToken('t', ['api']), { error: 'revoked' });
  status = { authenticated: false };
  assert.equal(await authn.authenticateToken('t', ['api']), undefined);
});

test('an answer of the wrong shape is an error in the decoder\'s words, and logged', async () => {
  const cases: [unknown, string][] = [
    [{ authenticated: 'yes' }, 'json: cannot unmarshal string into Go struct field TokenReviewStatus.status.authenticated of type bool'],
    [{ authenticated: true, user: { username: 7 } }, 'json: cannot unmarshal number into Go struct field UserInfo.status.user.username of type string'],
    [{ authenticated: true, user: { groups: 'admins' } }, 'json: cannot unmarshal string into Go struct field UserInfo.status.user.groups of type []string'],
    [{ authenticated: true, user: { extra: { k: 'v' } } }, 'json: cannot unmarshal string into Go struct field UserInfo.status.user.extra of type v1.ExtraValue'],
    [[], 'json: cannot unmarshal array into Go struct field TokenReview.status of type v1.TokenReviewStatus'],
  ];
  for (const [answer, message] of cases) {
    status = answer;
    assert.deepEqual(await authn.authenticateToken('t'), { error: message });
    assert.equal(logs.at(-1), `Failed to make webhook authenticator request: ${message}`);
  }
});

test('--authentication-token-webhook-version takes v1 and v1beta1 only', () => {
  assert.throws(() => loadTokenWebhookConfig(join(dir, 'webhook.kubeconfig'), 'v1alpha1'), { message: 'unsupported authentication webhook version "v1alpha1", supported versions are "v1", "v1beta1"' });
  assert.equal(loadTokenWebhookConfig(join(dir, 'webhook.kubeconfig')).version, 'v1beta1', 'kube\'s default');
});
