// The JWT authenticator on its own, against a loopback issuer (test/helpers/oidc-issuer.ts): which
// tokens are its own (iss) and which get no opinion; claim mappings as kube's getUsername,
// getGroups, getUID and getExtra read them; audiences (MatchAny, and the API audiences a
// TokenReview asks for); the errors kube words; and the success cache.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticationSetup, type JWTAuthenticatorConfig } from '../../../server/authentication/jwt/config.ts';
import { JwtAuthenticator } from '../../../server/authentication/jwt/jwt-authenticator.ts';
import { startOidcIssuer, type OidcIssuer } from '../../helpers/oidc-issuer.ts';
import type { AuthResult } from '../../../server/authentication/authenticator.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-jwt-unit-'));
let files = 0;
let issuer: OidcIssuer;
const started: JwtAuthenticator[] = [];
before(async () => {
  issuer = await startOidcIssuer();
});
after(async () => {
  for (const a of started) a.close();
  await issuer?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An authenticator of the issuer with these claim mappings (and rules), initialized. */
async function authenticator(jwt: Partial<JWTAuthenticatorConfig>, apiAudiences: string[] = ['https://kubernetes.default.svc']): Promise<JwtAuthenticator> {
  const config: JWTAuthenticatorConfig = { issuer: { url: issuer.url, audiences: [issuer.clientId], certificateAuthority: issuer.caPem }, claimMappings: { username: { claim: 'sub', prefix: '' } }, ...jwt };
  const spec = validated(config);
  const a = new JwtAuthenticator(spec, { apiAudiences, log: () => {}, timing: { discoveryRetryMs: 50, keysCooldownMs: 10_000 } });
  started.push(a);
  a.start();
  for (let i = 0; i < 200 && !a.initialized; i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(a.initialized, 'discovery succeeded');
  return a;
}

/** Through the same decoding, validation and CEL compilation as a config file. */
function validated(config: JWTAuthenticatorConfig) {
  const file = join(dir, `config-${files++}.json`);
  writeFileSync(file, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthenticationConfiguration', jwt: [config] }));
  return authenticationSetup({ configFile: file }).jwt[0]!;
}

const userOf = (r: AuthResult) => (r && 'user' in r ? r.user : assert.fail(`not authenticated: ${JSON.stringify(r)}`));
const errorOf = (r: AuthResult) => (r && 'error' in r ? r.error : assert.fail(`no error: ${JSON.stringify(r)}`));

test('a token of another issuer, or no JWT at all, gets no opinion (the union goes on); one of this issuer is judged', async () => {
  const a = await authenticator({});
  const other = await startOidcIssuer();
  try {
    assert.equal(await a.authenticateToken(await other.token({ aud: issuer.clientId })), undefined);
  } finally {
    await other.close();
  }
  for (const t of ['', 'abc', 'a.b', '{"iss":"x"}.b.c', 'a.b.c.d', `x.${Buffer.from('{"iss":1}').toString('base64url')}.y`]) assert.equal(await a.authenticateToken(t), undefined, t);
  assert.equal(await a.authenticateToken(`${'x'.repeat(70 * 1024)}.y.z`), undefined, 'too long to read');
  assert.deepEqual(userOf(await a.authenticateToken(await issuer.token({ sub: 'alice' }))), { name: 'alice', groups: [] });
});

test('claims as kube reads them: username prefix, email_verified, groups as string or list, uid', async () => {
  const a = await authenticator({ claimMappings: { username: { claim: 'email', prefix: 'corp:' }, groups: { claim: 'roles', prefix: 'r:' }, uid: { claim: 'oid' } } });
  assert.deepEqual(userOf(await a.authenticateToken(await issuer.token({ email: 'a@x.io', roles: ['x', 'y'], oid: 'u1' }))), { name: 'corp:a@x.io', groups: ['r:x', 'r:y'], uid: 'u1' });
  assert.deepEqual(userOf(await a.authenticateToken(await issuer.token({ email: 'b@x.io', email_verified: true, roles: 'solo', oid: 'u2' }))), { name: 'corp:b@x.io', groups: ['r:solo'], uid: 'u2' });
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ email: 'c@x.io', email_verified: false, oid: 'u' }))), 'oidc: email not verified');
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ email: 'c@x.io', email_verified: 'yes', oid: 'u' }))), "oidc: parse 'email_verified' claim: json: cannot unmarshal string into Go value of type bool");
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ oid: 'u' }))), 'oidc: parse username claims "email": claim not present');
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ email: 7, oid: 'u' }))), 'oidc: parse username claims "email": json: cannot unmarshal number into Go value of type string');
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ email: 'd@x.io', roles: [1], oid: 'u' }))), 'oidc: parse groups claim "roles": json: cannot unmarshal array into Go value of type string');
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ email: 'd@x.io' }))), 'oidc: parse uid claim "oid": claim not present');
});

test('CEL mappings: groups and extra as a string or a list of strings (empty ones dropped), results of the wrong type refused', async () => {
  const a = await authenticator({
    claimMappings: {
      username: { expression: 'claims.sub' },
      groups: { expression: 'claims.g' },
      extra: [
        { key: 'example.com/one', valueExpression: 'claims.one' },
        { key: 'example.com/none', valueExpression: '""' },
      ],
    },
  });
  assert.deepEqual(userOf(await a.authenticateToken(await issuer.token({ sub: 'x', g: ['a', '', 'b'], one: 'v' }))), { name: 'x', groups: ['a', 'b'], extra: { 'example.com/one': ['v'] } });
  assert.deepEqual(userOf(await a.authenticateToken(await issuer.token({ sub: 'y', g: 'only', one: ['p', 'q'] }))), { name: 'y', groups: ['only'], extra: { 'example.com/one': ['p', 'q'] } });
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ sub: 'z', g: 5, one: 'v' }))), 'oidc: error evaluating group claim expression: expression must return a string or a list of strings');
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ sub: 'z', g: 'a', one: [1] }))), 'oidc: error evaluating extra claim expression: claims.one: expression must return a string or a list of strings');
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ sub: 7, g: 'a', one: 'v' }))), 'oidc: error evaluating username claim expression: username claim expression must return a string');
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ sub: '', g: 'a', one: 'v' }))), 'oidc: empty username via CEL expression is not allowed');
  assert.deepEqual(userOf(await a.authenticateToken(await issuer.token({ sub: 'j', jti: 'token-1', g: [], one: '' }))), { name: 'j', groups: [], extra: { 'authentication.kubernetes.io/credential-id': ['JTI=token-1'] } }, 'the jti is the credential id');
});

test('audiences: MatchAny over several, and TokenReview audiences answered with the API audiences (audience-agnostic)', async () => {
  const a = await authenticator({ issuer: { url: issuer.url, audiences: ['one', 'two'], audienceMatchPolicy: 'MatchAny', certificateAuthority: issuer.caPem } }, ['api']);
  assert.deepEqual(userOf(await a.authenticateToken(await issuer.token({ sub: 's', aud: ['zero', 'two'] }))).name, 's');
  assert.equal(errorOf(await a.authenticateToken(await issuer.token({ sub: 's', aud: 'three' }))), 'oidc: verify token: oidc: expected audience in ["one" "two"] got ["three"]');
  const token = await issuer.token({ sub: 't', aud: 'one' });
  assert.deepEqual(await a.authenticateToken(token, ['api', 'other']), { user: { name: 't', groups: [] }, audiences: ['api'] });
  assert.equal(await a.authenticateToken(token, ['other']), undefined, 'not for an audience the API server does not have');
});

test('a verified token is remembered (its second use costs no fetch); an expired one is refused', async () => {
  const a = await authenticator({});
  const token = await issuer.token({ sub: 'cached' });
  assert.equal(userOf(await a.authenticateToken(token)).name, 'cached');
  const fetches = { ...issuer.fetches };
  assert.equal(userOf(await a.authenticateToken(token)).name, 'cached');
  assert.deepEqual(issuer.fetches, fetches);
  const expired = await issuer.token({ sub: 'late', exp: Math.floor(Date.now() / 1000) - 1 });
  assert.match(errorOf(await a.authenticateToken(expired)), /^oidc: verify token: oidc: token is expired \(Token Expiry: /);
});

test('a discovery document naming another issuer leaves the authenticator uninitialized (its tokens 401), as go-oidc does', async () => {
  // A discoveryURL that serves another issuer's document: go-oidc's "issuer did not match" keeps it uninitialized.
  const other = await startOidcIssuer();
  try {
    const spec = validated({ issuer: { url: issuer.url, discoveryURL: `${other.url}/.well-known/openid-configuration`, audiences: [issuer.clientId], certificateAuthority: `${issuer.caPem}\n${other.caPem}` }, claimMappings: { username: { claim: 'sub', prefix: '' } } });
    const lines: string[] = [];
    const a = new JwtAuthenticator(spec, { apiAudiences: [], log: (l) => lines.push(l), timing: { discoveryRetryMs: 10_000 } });
    started.push(a);
    a.start();
    for (let i = 0; i < 200 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.match(lines[0] ?? '', /oidc: issuer did not match the issuer returned by provider, expected "https:\/\/127\.0\.0\.1:\d+" got "https:\/\/127\.0\.0\.1:\d+"/);
    assert.equal(errorOf(await a.authenticateToken(await issuer.token({ sub: 'x' }))), 'oidc: authenticator not initialized');
  } finally {
    await other.close();
  }
});

test('while the issuer is down, new tokens of a key already fetched verify from the cached JWKS; an unknown kid is refused', async () => {
  const a = await authenticator({});
  assert.equal(userOf(await a.authenticateToken(await issuer.token({ sub: 'before' }))).name, 'before');
  await issuer.down();
  try {
    assert.equal(userOf(await a.authenticateToken(await issuer.token({ sub: 'during' }))).name, 'during');
    const unknownKid = await issuer.token({ sub: 'x' }, { key: await issuer.foreignKey() });
    assert.match(errorOf(await a.authenticateToken(unknownKid)), /^oidc: verify token: failed to verify signature: /, 'an unknown kid while the issuer is down is refused');
  } finally {
    await issuer.listen();
  }
});
