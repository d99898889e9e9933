import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { bearerToken, bearerTokenAuthenticator, INVALID_BEARER_TOKEN, type TokenAuthenticator } from '../../../server/authentication/token.ts';

const request = (authorization?: string | string[]) => ({ headers: { authorization }, socket: {} as Socket });

test("bearerToken reads the header as kube's bearertoken authenticator does", () => {
  assert.equal(bearerToken(request('Bearer abc')), 'abc');
  assert.equal(bearerToken(request('  bearer abc  ')), 'abc', 'trimmed, scheme in any case');
  assert.equal(bearerToken(request('BEARER abc extra')), 'abc', 'split at most three ways');
  assert.equal(bearerToken(request(['Bearer first', 'Bearer second'])), 'first');
  assert.equal(bearerToken(request('bEaReR abc')), 'abc', 'scheme in any case');
  for (const none of [undefined, '', 'Basic abc', 'Bearer', 'Bearer ', 'Bearer  abc', 'Bearer\tabc', 'Bearerx abc', 'Bear abc', ' Bearer', 'BearerBearer abc']) assert.equal(bearerToken(request(none)), undefined, String(none));
});

test('the first token authenticator to name a user wins; a token nobody knows is an error, not anonymous', async () => {
  const known = (name: string, token: string): TokenAuthenticator => ({ name, authenticateToken: (t) => (t === token ? { user: { name, groups: [] } } : undefined) });
  const refusing: TokenAuthenticator = { name: 'expired', authenticateToken: (t) => (t === 'old' ? { error: 'token has expired' } : undefined) };
  const chain = bearerTokenAuthenticator([refusing, known('static', 'a'), known('async', 'b')]);
  assert.deepEqual(await chain.authenticate(request('Bearer a')), { user: { name: 'static', groups: [] } });
  assert.deepEqual(await chain.authenticate(request('Bearer b')), { user: { name: 'async', groups: [] } });
  assert.deepEqual(await chain.authenticate(request('Bearer old')), { error: 'token has expired' });
  assert.deepEqual(await chain.authenticate(request('Bearer nobody')), { error: INVALID_BEARER_TOKEN });
  assert.equal(chain.authenticate(request()), undefined, 'no token: no opinion, the chain goes on');
});
