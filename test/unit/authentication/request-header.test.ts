// The request-header authenticator's reading of headers (kube's requestheader.go: first user
// header with a value, uid, every group value, extras by prefix with lower-cased %-unescaped
// keys, the headers removed afterwards), the flags' checks, and the chain's union semantics
// (an error does not stop the chain; it is a 401 only when nobody names the user).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import type Koa from 'koa';
import { requestHeaderOptionErrors, unescapeExtraKey, userFromRequestHeaders, type HeaderNames, type RequestHeaderSource } from '../../../server/authentication/request-header.ts';
import { authenticationMiddleware, type Authenticator, type AuthResult } from '../../../server/authentication/authenticator.ts';
import type { AuthenticatedState } from '../../../server/authentication/user.ts';
import { ApiError } from '../../../server/errors.ts';

const NAMES: HeaderNames = { username: ['x-remote-user', 'x-forwarded-user'], uid: ['x-remote-uid'], groups: ['x-remote-group', 'x-team'], extraPrefixes: ['x-remote-extra-'] };

/** A request as Node's HTTP/1.1 server gives it: lower-cased joined headers and the raw list. */
function request(raw: string[]): RequestHeaderSource & { headers: Record<string, string>; rawHeaders: string[] } {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i].toLowerCase();
    headers[n] = headers[n] === undefined ? raw[i + 1] : `${headers[n]}, ${raw[i + 1]}`;
  }
  return { headers, rawHeaders: [...raw], socket: {} as Socket };
}

test('the user: the first user header with a value; uid; every non-empty group value; extras under lower-cased, unescaped keys', () => {
  const req = request([
    'X-Remote-User', '',
    'X-Forwarded-User', 'alice',
    'X-Forwarded-User', 'ignored-second-value',
    'X-Remote-Uid', 'u-1',
    'X-Remote-Group', 'dev, ops',
    'X-Remote-Group', '',
    'X-Team', 'blue',
    'X-Remote-Extra-Scopes', 'read',
    'x-remote-extra-scopes', 'write',
    'X-Remote-Extra-Acme.com%2FProject', 'apollo',
    'X-Remote-Extra-Empty', '',
    'Accept', 'application/json',
  ]);
  const r = userFromRequestHeaders(req, NAMES);
  assert.deepEqual(r, {
    user: {
      name: 'alice',
      uid: 'u-1',
      // "dev, ops" is one header line, so one group, as Go reads it.
      groups: ['dev, ops', 'blue'],
      extra: { scopes: ['read', 'write'], 'acme.com/project': ['apollo'], empty: [''] },
    },
  });
  // The headers read are gone from the request (joined and raw); the others stay.
  assert.deepEqual(req.headers, { accept: 'application/json' });
  assert.deepEqual(req.rawHeaders, ['Accept', 'application/json']);
});

test('no user header with a value: no opinion, and the headers stay', () => {
  const req = request(['X-Remote-User', '', 'X-Remote-Group', 'system:masters']);
  assert.equal(userFromRequestHeaders(req, NAMES), undefined);
  assert.deepEqual(req.headers, { 'x-remote-user': '', 'x-remote-group': 'system:masters' });
});

test('a header two prefixes match counts under both keys (the user header too, as in kube); without a uid there is none', () => {
  const req = request(['X-Remote-User', 'bob', 'X-Remote-Extra-A', '1']);
  const r = userFromRequestHeaders(req, { ...NAMES, extraPrefixes: ['x-remote-extra-', 'x-remote-'] });
  assert.deepEqual(r, { user: { name: 'bob', groups: [], extra: { a: ['1'], user: ['bob'], 'extra-a': ['1'] } } });
});

test('without the raw header list (joined values), groups come from the joined value', () => {
  const r = userFromRequestHeaders({ headers: { 'x-remote-user': 'carol', 'x-remote-group': ['g1', 'g2'] }, socket: {} as Socket }, NAMES);
  assert.deepEqual(r, { user: { name: 'carol', groups: ['g1', 'g2'], extra: {} } });
});

test("extra keys are %-unescaped as Go's url.PathUnescape does; a malformed escape keeps the key as it came", () => {
  assert.equal(unescapeExtraKey('acme.com%2fproject'), 'acme.com/project');
  assert.equal(unescapeExtraKey('plain'), 'plain');
  assert.equal(unescapeExtraKey('a+b'), 'a+b');
  assert.equal(unescapeExtraKey('check%e2%9c%93'), 'check✓');
  assert.equal(unescapeExtraKey('bad%zzkey'), 'bad%zzkey');
  assert.equal(unescapeExtraKey('trailing%2'), 'trailing%2');
});

test("the flags' checks: a value of only white space is an error; a list without the standard header, a warning", () => {
  const warnings: string[] = [];
  const errors = requestHeaderOptionErrors({ usernameHeaders: ['X-User', ' '], groupHeaders: ['x-remote-group'], extraHeadersPrefix: ['X-Extra-'], allowedNames: [''], uidHeaders: [] }, (w) => warnings.push(w));
  assert.deepEqual(errors, ['empty value in "requestheader-username-headers"', 'empty value in "requestheader-allowed-names"']);
  assert.deepEqual(warnings, [
    '--requestheader-username-headers is set without specifying the standard X-Remote-User header - API aggregation will not work',
    '--requestheader-extra-headers-prefix is set without specifying the standard X-Remote-Extra- header prefix - API aggregation will not work',
  ]);
});

/** Runs the authentication middleware over these answers; the user it sets, or the ApiError it throws. */
async function chain(answers: AuthResult[], anonymous = true): Promise<string | ApiError> {
  const authenticators: Authenticator[] = answers.map((a, i) => ({ name: `a${i}`, authenticate: () => (i % 2 ? Promise.resolve(a) : a) }));
  const ctx = { req: { headers: {}, socket: {} }, state: {} } as unknown as Koa.ParameterizedContext<AuthenticatedState>;
  try {
    await authenticationMiddleware(authenticators, { anonymous })(ctx, async () => {});
    return ctx.state.user.name;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
}

test("the chain is kube's union: an error does not stop it, a later user wins; only errors (or nothing, without anonymous) are 401", async () => {
  const user = (name: string): AuthResult => ({ user: { name, groups: [] } });
  assert.equal(await chain([{ error: 'x509: certificate signed by unknown authority' }, user('admin')]), 'admin');
  assert.equal(await chain([{ error: 'refused' }, undefined, user('token-user')]), 'token-user');
  assert.equal(await chain([undefined, { error: 'a' }, { error: 'b' }, user('late')]), 'late');
  assert.equal(await chain([user('first'), user('second')]), 'first');
  assert.equal(await chain([undefined, undefined]), 'system:anonymous');
  for (const answers of [[{ error: 'a' }, undefined], [undefined, { error: 'b' }]]) {
    const r = await chain(answers);
    assert.ok(r instanceof ApiError && r.code === 401, String(r));
  }
  const strict = await chain([undefined], false);
  assert.ok(strict instanceof ApiError && strict.code === 401);
});
