// server/authentication/token-cache.ts as the cache in front of the token union (kube's token/cache with kube-apiserver's
// defaults): successes are reused for 10 s, per token and audiences; failures never; concurrent
// checks of one token share one; the number of entries is bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cachedTokenAuthenticator, TOKEN_SUCCESS_CACHE_TTL_MS } from '../../../server/authentication/token-cache.ts';
import type { TokenAuthenticator } from '../../../server/authentication/token.ts';
import type { AuthResult } from '../../../server/authentication/authenticator.ts';

/** A token authenticator that knows `good-*` tokens (and counts every call), refusing `revoked-*`. */
function counting() {
  const calls: { token: string; audiences?: readonly string[] }[] = [];
  const known = new Set<string>();
  const a: TokenAuthenticator = {
    name: 'counting',
    async authenticateToken(token, audiences) {
      calls.push({ token, audiences });
      if (token.startsWith('revoked-')) return { error: 'revoked' };
      if (token.startsWith('good-') || known.has(token)) return { user: { name: token, groups: [] }, audiences };
      return undefined;
    },
  };
  return { a, calls, known };
}

function clock() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const userOf = (r: AuthResult) => (r && 'user' in r ? r.user.name : undefined);

test('a success is reused until its 10 s are over, then checked again', async () => {
  const { a, calls } = counting();
  const c = clock();
  const cache = cachedTokenAuthenticator([a], { now: c.now });
  assert.equal(userOf(await cache.authenticateToken('good-1')), 'good-1');
  assert.equal(userOf(await cache.authenticateToken('good-1')), 'good-1');
  assert.equal(calls.length, 1);
  c.advance(TOKEN_SUCCESS_CACHE_TTL_MS - 1);
  await cache.authenticateToken('good-1');
  assert.equal(calls.length, 1);
  c.advance(1);
  await cache.authenticateToken('good-1');
  assert.equal(calls.length, 2);
  assert.equal(TOKEN_SUCCESS_CACHE_TTL_MS, 10_000);
});

test('a hit answers at once, without a promise (the request chain goes on synchronously)', async () => {
  const { a } = counting();
  const cache = cachedTokenAuthenticator([a]);
  const first = cache.authenticateToken('good-sync');
  assert.ok(first instanceof Promise);
  await first;
  const hit = cache.authenticateToken('good-sync');
  assert.ok(!(hit instanceof Promise));
  assert.equal(userOf(hit as AuthResult), 'good-sync');
});

test('failures and unknown tokens are never cached; an unknown token is the union\'s "invalid bearer token"', async () => {
  const { a, calls } = counting();
  const cache = cachedTokenAuthenticator([a]);
  assert.deepEqual(await cache.authenticateToken('revoked-1'), { error: 'revoked' });
  assert.deepEqual(await cache.authenticateToken('revoked-1'), { error: 'revoked' });
  assert.deepEqual(await cache.authenticateToken('nobody'), { error: 'invalid bearer token' });
  assert.deepEqual(await cache.authenticateToken('nobody'), { error: 'invalid bearer token' });
  assert.equal(calls.length, 4);
  assert.equal(cache.size, 0);
});

test('the audiences are part of the key; so is each token, exactly', async () => {
  const { a, calls } = counting();
  const cache = cachedTokenAuthenticator([a]);
  await cache.authenticateToken('good-2', ['api']);
  await cache.authenticateToken('good-2', ['other']);
  await cache.authenticateToken('good-2');
  await cache.authenticateToken('good-2', ['api']);
  assert.equal(calls.length, 3);
  // Length-prefixed: no two (audiences, token) pairs run together into one key.
  await cache.authenticateToken('good-b', ['a']);
  await cache.authenticateToken('good-', ['ab']);
  await cache.authenticateToken('good-ab');
  assert.equal(calls.length, 6);
});

test('concurrent checks of one token share one; authenticators added to the union later take part', async () => {
  const { a, calls } = counting();
  const union: TokenAuthenticator[] = [];
  const cache = cachedTokenAuthenticator(union);
  union.push(a);
  const results = await Promise.all([1, 2, 3, 4].map(() => cache.authenticateToken('good-3')));
  assert.deepEqual(results.map(userOf), ['good-3', 'good-3', 'good-3', 'good-3']);
  assert.equal(calls.length, 1);
});

test('bounded: past the limit the least recently used entries go', async () => {
  const { a, calls } = counting();
  const cache = cachedTokenAuthenticator([a], { maxEntries: 3 });
  for (const t of ['good-a', 'good-b', 'good-c']) await cache.authenticateToken(t);
  await cache.authenticateToken('good-a'); // (used again: now the newest)
  await cache.authenticateToken('good-d');
  assert.equal(cache.size, 3);
  const before = calls.length;
  await cache.authenticateToken('good-a');
  assert.equal(calls.length, before, 'good-a stayed');
  await cache.authenticateToken('good-b');
  assert.equal(calls.length, before + 1, 'good-b went');
});

test('an authenticator that throws: the error reaches the caller and nothing stays in flight', async () => {
  let fail = true;
  const flaky: TokenAuthenticator = {
    name: 'flaky',
    async authenticateToken() {
      if (fail) throw new Error('backend down');
      return { user: { name: 'u', groups: [] } };
    },
  };
  const cache = cachedTokenAuthenticator([flaky]);
  await assert.rejects(cache.authenticateToken('t') as Promise<AuthResult>, /backend down/);
  fail = false;
  assert.equal(userOf(await cache.authenticateToken('t')), 'u');
});

test("a connection's remembered token: the same answers as the cache, within its entry's time and while it is cached", async () => {
  const { a, calls } = counting();
  const c = clock();
  const cache = cachedTokenAuthenticator([a], { now: c.now, maxEntries: 1 });
  const conn = {};
  assert.equal(userOf(await cache.authenticateToken('good-x', undefined, conn)), 'good-x');
  const hit = cache.authenticateToken('good-x', undefined, conn);
  assert.ok(!(hit instanceof Promise));
  assert.equal(userOf(hit as AuthResult), 'good-x');
  assert.equal(calls.length, 1);
  // Another token on the same connection is that token's user, never the remembered one's.
  assert.equal(userOf(await cache.authenticateToken('good-y', undefined, conn)), 'good-y');
  assert.deepEqual(await cache.authenticateToken('revoked-z', undefined, conn), { error: 'revoked' });
  // good-x was evicted (one entry at most) when good-y came: checked again.
  await cache.authenticateToken('good-x', undefined, conn);
  assert.equal(calls.filter((x) => x.token === 'good-x').length, 2);
  // Its time over: checked again.
  c.advance(TOKEN_SUCCESS_CACHE_TTL_MS);
  await cache.authenticateToken('good-x', undefined, conn);
  assert.equal(calls.filter((x) => x.token === 'good-x').length, 3);
});
