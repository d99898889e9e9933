// server/authentication/token-cache.ts: kube's token cache in front of a slow authenticator —
// users and "not mine" kept for their TTLs on a moved clock, errors kept only when asked,
// audiences part of the key, one call for identical lookups in flight, a bounded size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CachedTokenAuthenticator } from '../../../server/authentication/token-cache.ts';
import type { AuthResult } from '../../../server/authentication/authenticator.ts';
import type { TokenAuthenticator } from '../../../server/authentication/token.ts';

/** An authenticator that answers from a table and counts its calls; `gate` holds answers back. */
function counting(answers: Record<string, AuthResult>, gate?: Promise<void>): TokenAuthenticator & { calls: string[] } {
  const calls: string[] = [];
  return {
    name: 'counting',
    calls,
    async authenticateToken(token, audiences) {
      calls.push(`${token}|${(audiences ?? []).join(',')}`);
      await gate;
      return answers[token];
    },
  };
}

const alice: AuthResult = { user: { name: 'alice', groups: [] } };

test('a user is kept for the success TTL, "not mine" for the failure TTL, then asked again', async () => {
  let now = 1_000;
  const inner = counting({ alice, refused: undefined });
  const cache = new CachedTokenAuthenticator(inner, { successTtlMs: 120_000, failureTtlMs: 30_000, now: () => now });
  assert.deepEqual(await cache.authenticateToken('alice'), alice);
  assert.equal(await cache.authenticateToken('refused'), undefined);
  now += 29_999;
  assert.deepEqual(await cache.authenticateToken('alice'), alice);
  assert.equal(await cache.authenticateToken('refused'), undefined);
  assert.equal(inner.calls.length, 2);
  now += 1;
  assert.equal(await cache.authenticateToken('refused'), undefined);
  assert.equal(inner.calls.length, 3, 'the failure TTL is over');
  now += 90_000;
  await cache.authenticateToken('alice');
  assert.equal(inner.calls.length, 4, 'the success TTL is over');
});

test('errors are not kept unless cacheErrors; a TTL of 0 keeps nothing', async () => {
  const inner = counting({ broken: { error: 'webhook down' }, alice });
  const cache = new CachedTokenAuthenticator(inner, { successTtlMs: 60_000, failureTtlMs: 60_000 });
  assert.deepEqual(await cache.authenticateToken('broken'), { error: 'webhook down' });
  assert.deepEqual(await cache.authenticateToken('broken'), { error: 'webhook down' });
  assert.equal(inner.calls.length, 2);
  const keeping = new CachedTokenAuthenticator(counting({ broken: { error: 'x' } }), { successTtlMs: 1, failureTtlMs: 60_000, cacheErrors: true });
  await keeping.authenticateToken('broken');
  assert.equal(keeping.size, 1);
  const none = new CachedTokenAuthenticator(inner, { successTtlMs: 0, failureTtlMs: 0 });
  await none.authenticateToken('alice');
  await none.authenticateToken('alice');
  assert.equal(none.size, 0);
});

test('the key is the token and the audiences: other audiences are another lookup', async () => {
  const inner = counting({ alice });
  const cache = new CachedTokenAuthenticator(inner, { successTtlMs: 60_000, failureTtlMs: 60_000 });
  await cache.authenticateToken('alice', ['a']);
  await cache.authenticateToken('alice', ['a']);
  await cache.authenticateToken('alice', ['a', 'b']);
  await cache.authenticateToken('alice', ['ab']);
  await cache.authenticateToken('alice');
  assert.deepEqual(inner.calls, ['alice|a', 'alice|a,b', 'alice|ab', 'alice|']);
});

test('identical lookups in flight share one call', async () => {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const inner = counting({ alice }, gate);
  const cache = new CachedTokenAuthenticator(inner, { successTtlMs: 60_000, failureTtlMs: 60_000 });
  const pending = [cache.authenticateToken('alice'), cache.authenticateToken('alice'), cache.authenticateToken('alice', ['x'])];
  open();
  const results = await Promise.all(pending);
  assert.deepEqual(results, [alice, alice, alice]);
  assert.deepEqual(inner.calls, ['alice|', 'alice|x']);
});

test('the cache holds at most maxEntries answers, the oldest going first; no token is kept as a key', async () => {
  const inner = counting({ t1: alice, t2: alice, t3: alice });
  const cache = new CachedTokenAuthenticator(inner, { successTtlMs: 60_000, failureTtlMs: 60_000, maxEntries: 2 });
  for (const t of ['t1', 't2', 't3']) await cache.authenticateToken(t);
  assert.equal(cache.size, 2);
  await cache.authenticateToken('t3');
  await cache.authenticateToken('t2');
  assert.equal(inner.calls.length, 3, 't2 and t3 are kept');
  await cache.authenticateToken('t1');
  assert.equal(inner.calls.length, 4, 't1 was pushed out');
  const keys = [...(cache as unknown as { records: Map<string, unknown> }).records.keys()];
  assert.ok(keys.every((k) => !['t1', 't2', 't3'].includes(k) && Buffer.from(k, 'base64').length === 32), 'HMAC-SHA256 keys, not tokens');
});
