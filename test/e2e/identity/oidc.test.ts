// OIDC / JWT authenticators against a real issuer (test/helpers/oidc-issuer.ts: HTTPS on loopback
// with its own CA, discovery and JWKS, tokens signed with jose): the --oidc-* options map a token's
// claims to a user as kube's flags do (username prefix `<issuer>#`, groups prefix, required
// claims); bad tokens are 401 and cost no fetch; the issuer's key rotation is followed; an issuer
// that is down at start is picked up later; an AuthenticationConfiguration maps claims with CEL and
// refuses with its rule's message; and the start refuses bad flags and files with kube's words.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { newSigningKey, startOidcIssuer, type OidcIssuer } from '../../helpers/oidc-issuer.ts';
import { runHearth, startHearthProcess, stopHearthProcess } from '../../helpers/hearth-process.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';
import { logMessage } from '../../helpers/log-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-oidc-'));
const REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
/** Short waits so the tests need not sit out kube's 10 s discovery retry or jose's 30 s cool-down. */
const TIMING = { discoveryRetryMs: 100, keysCooldownMs: 3000 };

let issuer: OidcIssuer;
let s: TestServer;
before(async () => {
  issuer = await startOidcIssuer();
  const caFile = join(dir, 'issuer-ca.pem');
  writeFileSync(caFile, issuer.caPem);
  s = await startTestServer({
    options: {
      oidc: { issuerURL: issuer.url, clientID: issuer.clientId, caFile, groupsClaim: 'groups', groupsPrefix: 'oidc:', requiredClaims: { hd: 'example.com' } },
      jwtTiming: TIMING,
    },
  });
});
after(async () => {
  await s?.stop();
  await issuer?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** kubectl with a kubeconfig that holds only this token and the cluster CA. */
let kubeconfigs = 0;
function kubectlWithToken(server: TestServer, token: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = join(dir, `kubeconfig-${kubeconfigs++}`);
  writeFileSync(kubeconfig, renderKubeconfig({ server: server.url, caCertPem: server.pki.caCertPem, token, userName: 'oidc-user' }));
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A request with only a bearer token (no client certificate). */
function withToken(server: TestServer, token: string, path = '/apis/authentication.k8s.io/v1/selfsubjectreviews') {
  return server.request('POST', path, { anonymous: true, headers: { authorization: `Bearer ${token}` }, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
}

/** TokenReview as the admin: what the authenticators say of a token (status.error when refused). */
async function review(server: TestServer, token: string): Promise<{ authenticated?: boolean; user?: Record<string, unknown>; error?: string }> {
  const r = await server.request('POST', REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
  assert.equal(r.status, 201, r.text);
  return r.json().status;
}

/** Polls (bounded) until the token authenticates: the issuer side changes asynchronously. */
async function eventuallyAuthenticates(server: TestServer, token: string): Promise<Record<string, unknown>> {
  let last = '';
  for (let i = 0; i < 150; i++) {
    const r = await withToken(server, token);
    if (r.status === 201) return r.json().status.userInfo;
    last = r.text;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.fail(`the token never authenticated: ${last}`);
}

const ok = (claims: Record<string, unknown> = {}) => issuer.token({ sub: 'alice-subject', groups: ['dev', 'ops'], hd: 'example.com', ...claims });

test('kubectl --token auth whoami maps the subject with the issuer# prefix and the groups claim with its prefix', async () => {
  const token = await ok();
  await eventuallyAuthenticates(s, token);
  const r = await kubectlWithToken(s, token, ['auth', 'whoami', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).status.userInfo, { username: `${issuer.url}#alice-subject`, groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'] });

  // kubectl's --token flag (it overrides the kubeconfig's token).
  const single = await ok({ sub: 'bob-subject', groups: 'admins' });
  const bob = await kubectlWithToken(s, 'not-this-one', ['--token', single, 'auth', 'whoami', '-o', 'json']);
  assert.equal(bob.code, 0, bob.stderr);
  assert.deepEqual(JSON.parse(bob.stdout).status.userInfo, { username: `${issuer.url}#bob-subject`, groups: ['oidc:admins', 'system:authenticated'] }, 'a string groups claim is one group');
});

test('client-node with an OIDC token is that user, and not an admin (403 names it)', async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: s.url, caData: Buffer.from(s.pki.caCertPem).toString('base64') }],
    users: [{ name: 'u', token: await ok() }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const api = kc.makeApiClient(k8s.CoreV1Api);
  await assert.rejects(api.listNamespace(), (e: { code?: number; body?: string }) => {
    assert.equal(e.code, 403);
    assert.ok(String(e.body).includes(`cannot list resource \\"namespaces\\"`) && String(e.body).includes('#alice-subject'), String(e.body));
    return true;
  });
});

test('bad tokens are 401, never anonymous, and TokenReview says why in kube words', async () => {
  const now = Math.floor(Date.now() / 1000);
  const other = await startOidcIssuer();
  const foreign = await issuer.foreignKey();
  const ecKey = await newSigningKey('ES256');
  try {
    const cases: [string, string, RegExp | undefined][] = [
      ['wrong audience', await ok({ aud: 'someone-else' }), /^oidc: verify token: oidc: expected audience "hearth-test-client" got \["someone-else"\]$/],
      ['expired', await ok({ exp: now - 120, iat: now - 600 }), /^oidc: verify token: oidc: token is expired \(Token Expiry: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC\)$/],
      ['not yet valid', await ok({ nbf: now + 3600 }), /before the nbf \(not before\) time/],
      ['unknown kid', await issuer.token({ hd: 'example.com' }, { key: foreign }), /^oidc: verify token: failed to verify signature: failed to verify id token signature$/],
      ['missing required claim', await issuer.token({ groups: ['dev'] }), /^oidc: required claim hd not present in ID token$/],
      ['wrong required claim', await ok({ hd: 'evil.com' }), /^oidc: required claim hd value does not match\. Got = evil\.com, want = example\.com$/],
      ['unsupported algorithm', await issuer.token({ hd: 'example.com' }, { key: ecKey }), /^oidc: verify token: oidc: id token signed with unsupported algorithm, expected \["RS256"\] got "ES256"$/],
      ['another issuer (no opinion: nobody knows it)', await other.token({ aud: issuer.clientId, hd: 'example.com' }), /^invalid bearer token$/],
    ];
    for (const [name, token, error] of cases) {
      const r = await withToken(s, token);
      assert.equal(r.status, 401, `${name}: ${r.text}`);
      assert.equal(r.json().reason, 'Unauthorized', name);
      const rv = await review(s, token);
      assert.equal(rv.authenticated, undefined, name);
      if (error) assert.match(rv.error ?? '', error, name);
    }
    assert.equal(other.fetches.discovery + other.fetches.jwks, 0, 'the other issuer is never asked');
  } finally {
    await other.close();
  }
});

test('alg none, a forged signature, garbage and oversized tokens are refused and fetch nothing from the issuer', async () => {
  await eventuallyAuthenticates(s, await ok());
  const before = { ...issuer.fetches };
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: issuer.url, aud: issuer.clientId, sub: 'mallory', hd: 'example.com', iat: now, exp: now + 600 };
  const algNone = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
  const valid = await ok({ sub: 'mallory' });
  const forged = `${valid.split('.').slice(0, 2).join('.')}.${Buffer.from('not the signature').toString('base64url')}`;
  const large = (bytes: number) => `${b64({ alg: 'RS256', kid: issuer.key.kid })}.${b64({ ...claims, pad: 'x'.repeat(bytes) })}.sig`;
  for (const [name, token] of [['alg none', algNone], ['forged signature', forged], ['garbage', 'a.b.c'], ['512 KiB', large(512 * 1024)]] as const) {
    const r = await withToken(s, token);
    assert.equal(r.status, 401, `${name}: ${r.text}`);
    assert.equal(r.json().reason, 'Unauthorized', name);
  }
  // A 1 MB Authorization header is past the request-header limit (kube's too: Go's 1 MiB): 431,
  // before authentication. Through TokenReview's body it reaches the authenticators, which do not read it.
  assert.equal((await withToken(s, large(1024 * 1024))).status, 431);
  assert.equal((await review(s, large(1024 * 1024))).error, 'invalid bearer token');
  assert.match((await review(s, algNone)).error ?? '', /^oidc: verify token: oidc: id token signed with unsupported algorithm, expected \["RS256"\] got "none"$/);
  assert.deepEqual(issuer.fetches, before, 'no discovery or JWKS fetch for any of them (the forged one is checked against the cached keys)');
});

test('a flood of tokens with unknown kids costs at most one JWKS fetch (cool-down, one fetch in flight)', async () => {
  await eventuallyAuthenticates(s, await ok());
  // Past the cool-down of the last fetch, so that the flood may cause one (and only one).
  const settled = issuer.fetches.jwks;
  await new Promise((res) => setTimeout(res, TIMING.keysCooldownMs + 100));
  const foreign = await issuer.foreignKey();
  const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => issuer.token({ hd: 'example.com', sub: `x${i}` }, { key: foreign })));
  const answers = await Promise.all(tokens.map((t) => withToken(s, t)));
  assert.deepEqual(answers.map((a) => a.status), tokens.map(() => 401));
  assert.ok(issuer.fetches.jwks - settled <= 1, `JWKS fetched ${issuer.fetches.jwks - settled} times for 20 unknown kids`);
});

test('key rotation: after the issuer rotates, a token of the new key works (the JWKS is refetched) and one of the old key does not', async () => {
  const oldKey = issuer.key;
  await eventuallyAuthenticates(s, await ok({ sub: 'before-rotation' }));
  const fetchesBefore = issuer.fetches.jwks;
  await issuer.rotateKey();
  const user = await eventuallyAuthenticates(s, await ok({ sub: 'after-rotation' }));
  assert.equal(user.username, `${issuer.url}#after-rotation`);
  assert.ok(issuer.fetches.jwks > fetchesBefore, 'the JWKS was fetched again for the new kid');
  const stale = await issuer.token({ sub: 'old-key', hd: 'example.com' }, { key: oldKey });
  assert.equal((await withToken(s, stale)).status, 401);
});

test('an issuer that is down at start: the server starts, its tokens are 401, and work once it is up', async () => {
  const late = await startOidcIssuer({ listen: false });
  const caFile = join(dir, 'late-ca.pem');
  writeFileSync(caFile, late.caPem);
  const logs: string[] = [];
  const s2 = await startTestServer({ options: { oidc: { issuerURL: late.url, clientID: late.clientId, caFile, usernameClaim: 'email' }, jwtTiming: TIMING, log: (l) => logs.push(logMessage(l)) } });
  try {
    const token = await late.token({ email: 'carol@example.com', email_verified: true });
    const early = await withToken(s2, token);
    assert.equal(early.status, 401);
    assert.equal((await review(s2, token)).error, 'oidc: authenticator not initialized');
    assert.equal((await s2.request('GET', '/api/v1/namespaces/default')).status, 200, 'the admin is served meanwhile');
    assert.ok(logs.some((l) => l.includes('oidc authenticator: initializing plugin')), logs.join('\n'));

    await late.listen();
    const user = await eventuallyAuthenticates(s2, token);
    assert.deepEqual(user, { username: 'carol@example.com', groups: ['system:authenticated'] }, 'the email claim has no prefix by default');
    const unverified = await late.token({ email: 'dave@example.com', email_verified: false });
    assert.equal((await withToken(s2, unverified)).status, 401);
    assert.equal((await review(s2, unverified)).error, 'oidc: email not verified');
  } finally {
    await s2.stop();
    await late.close();
  }
});

test('--authentication-config: CEL claim mappings, MatchAny audiences, rules refusing with their messages, anonymous conditions', async () => {
  const config = join(dir, 'authn.yaml');
  const indent = (pem: string) => pem.trim().split('\n').map((l) => `          ${l}`).join('\n');
  writeFileSync(
    config,
    `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
  - issuer:
      url: ${issuer.url}
      audiences: [${issuer.clientId}, second-audience]
      audienceMatchPolicy: MatchAny
      certificateAuthority: |
${indent(issuer.caPem)}
    claimValidationRules:
      - expression: 'claims.tenant != "blocked"'
        message: tenant is blocked
    claimMappings:
      username:
        expression: '"sso:" + claims.preferred_username'
      groups:
        expression: 'claims.roles.map(r, "role:" + r)'
      uid:
        claim: sub
      extra:
        - key: example.com/tenant
          valueExpression: claims.tenant
    userValidationRules:
      - expression: "!user.username.startsWith('sso:system')"
        message: username may not look like a system user
anonymous:
  enabled: true
  conditions:
    - path: /livez
`,
  );
  const s3 = await startTestServer({ options: { authenticationConfigFile: config, jwtTiming: TIMING } });
  try {
    const token = await issuer.token({ sub: 'u-123', preferred_username: 'alice', roles: ['admin', 'viewer'], tenant: 'acme', aud: ['second-audience'] });
    await eventuallyAuthenticates(s3, token);
    const r = await kubectlWithToken(s3, token, ['auth', 'whoami', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).status.userInfo, { username: 'sso:alice', uid: 'u-123', groups: ['role:admin', 'role:viewer', 'system:authenticated'], extra: { 'example.com/tenant': ['acme'] } });

    const blocked = await issuer.token({ sub: 'u-9', preferred_username: 'eve', roles: [], tenant: 'blocked' });
    assert.equal((await withToken(s3, blocked)).status, 401);
    assert.equal((await review(s3, blocked)).error, `oidc: error evaluating claim validation expression: validation expression 'claims.tenant != "blocked"' failed: tenant is blocked`);

    const system = await issuer.token({ sub: 'u-0', preferred_username: 'system:admin', roles: [], tenant: 'acme' });
    assert.equal((await withToken(s3, system)).status, 401);
    assert.equal((await review(s3, system)).error, `oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('sso:system')' failed: username may not look like a system user`);

    // anonymous.conditions: anonymous requests reach /livez only (/version, public otherwise, is 401).
    assert.equal((await s3.request('GET', '/livez', { anonymous: true })).status, 200);
    const version = await s3.request('GET', '/version', { anonymous: true });
    assert.equal(version.status, 401, version.text);
    assert.equal((await s.request('GET', '/version', { anonymous: true })).status, 200, 'without conditions anonymous may read /version');

    const noName = await issuer.token({ sub: 'u-1', roles: [], tenant: 'acme' });
    assert.equal((await withToken(s3, noName)).status, 401);
    assert.equal((await review(s3, noName)).error, `oidc: error evaluating username claim expression: expression '"sso:" + claims.preferred_username' resulted in error: no such key: preferred_username`);
  } finally {
    await s3.stop();
  }
});

test('hearth started with the --oidc-* flags (as main.ts reads them) authenticates the issuer\'s tokens', async () => {
  const dataDir = join(dir, 'flags');
  const caFile = join(dir, 'flags-ca.pem');
  writeFileSync(caFile, issuer.caPem);
  const p = await startHearthProcess(dataDir, [
    '--oidc-issuer-url', issuer.url,
    '--oidc-client-id', issuer.clientId,
    '--oidc-ca-file', caFile,
    '--oidc-username-claim', 'preferred_username',
    '--oidc-username-prefix', '-',
    '--oidc-groups-claim', 'groups',
    '--oidc-required-claim', 'hd=example.com',
    '--oidc-required-claim', 'tier=gold',
    '--oidc-signing-algs', 'RS256,ES256',
  ]);
  try {
    const kubeconfig = join(dir, 'flags.kubeconfig');
    const token = await issuer.token({ preferred_username: 'frank', groups: ['ops'], hd: 'example.com', tier: 'gold' });
    writeFileSync(kubeconfig, renderKubeconfig({ server: p.url, caCertPem: readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'), token, userName: 'oidc-user' }));
    const whoami = () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(KUBECTL, ['--kubeconfig', kubeconfig, 'auth', 'whoami', '-o', 'json'], { timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }));
      });
    // Discovery runs in the background from the start: poll (bounded) until the token is known.
    let r = await whoami();
    for (let i = 0; i < 50 && r.code !== 0; i++) {
      await new Promise((res) => setTimeout(res, 200));
      r = await whoami();
    }
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).status.userInfo, { username: 'frank', groups: ['ops', 'system:authenticated'] }, '"-": no prefix; groups unprefixed');
    const silver = await issuer.token({ preferred_username: 'frank', groups: ['ops'], hd: 'example.com', tier: 'silver' });
    writeFileSync(kubeconfig, renderKubeconfig({ server: p.url, caCertPem: readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'), token: silver, userName: 'oidc-user' }));
    const refused = await whoami();
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Unauthorized/);
  } finally {
    await stopHearthProcess(p);
  }
});

test('the start refuses bad --oidc-* flags and a config file beside them with kube-apiserver\'s messages', async () => {
  // (The file's own validation, field by field, is unit-tested: test/unit/authentication/jwt-config.test.ts.)
  const dataDir = join(dir, 'refused');
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const head = 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n';
  const cases: [string[], string][] = [
    [['--oidc-client-id', 'c'], 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set'],
    [['--oidc-issuer-url', 'http://idp.example.com', '--oidc-client-id', 'c', '--oidc-signing-algs', 'RS256'], 'invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://idp.example.com": URL scheme must be https'],
    [['--oidc-issuer-url', 'https://idp.example.com', '--oidc-client-id', 'c', '--oidc-signing-algs', 'HS256'], 'oidc: unsupported signing alg: "HS256"'],
    [['--oidc-issuer-url', 'https://idp.example.com', '--oidc-client-id', 'c', '--oidc-required-claim', 'nokey'], 'invalid argument "nokey" for "--oidc-required-claim" flag: malformed pair, expect string=string'],
    [['--authentication-config', file('x.yaml', `${head}jwt: []\n`), '--oidc-issuer-url', 'https://idp.example.com'], 'authentication-config file and oidc-* flags are mutually exclusive'],
    [['--authentication-config', file('anon.yaml', `${head}anonymous:\n  enabled: true\n`), '--anonymous-auth=false'], 'anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file'],
  ];
  for (const [args, message] of cases) {
    const r = await runHearth(['--data-dir', dataDir, '--secure-port', '0', ...args], { timeoutMs: 60_000 });
    assert.notEqual(r.code, 0, `${args.join(' ')} started: ${r.stdout}`);
    assert.ok(r.stderr.includes(message), `${args.join(' ')}:\n${r.stderr}`);
  }
});
