// Service-account tokens end to end: `kubectl create token` (the TokenRequest API) mints them,
// kubectl and @kubernetes/client-node call as the service account with them, `jose` verifies them
// offline against the issuer discovery documents, and a token stops working when it expires, was
// meant for another audience, or its ServiceAccount or bound pod is deleted or recreated.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { CompactSign, createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, importPKCS8 } from 'jose';
import YAML from 'yaml';
import { KUBECTL, KUBECTL_VERSIONS, availableKubectls, startTestServer, type TestServer } from '../../helpers/server.ts';

const NS = 'sa-tokens';
const ISSUER = 'https://kubernetes.default.svc.cluster.local';

let s: TestServer;
let dir: string;
before(async () => {
  s = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'hearth-sa-tokens-'));
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function createServiceAccount(name: string, server: TestServer = s): Promise<string> {
  const r = await server.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { metadata: { name } } });
  assert.equal(r.status, 201, r.text);
  return r.json().metadata.uid;
}

/** `kubectl create token` as the admin: the token, or the failure. */
async function kubectlCreateToken(args: string[], server: TestServer = s): Promise<string> {
  const r = await server.kubectl(['create', 'token', '-n', NS, ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

/** kubectl with a kubeconfig whose only user is this bearer token. */
function kubectlAsToken(token: string, args: string[], server: TestServer = s): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = join(dir, `token-${Math.random().toString(36).slice(2)}.kubeconfig`);
  writeFileSync(file, YAML.stringify(tokenKubeconfig(token, server)));
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', file, ...args], { timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

function tokenKubeconfig(token: string, server: TestServer = s): object {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'hearth', cluster: { server: server.url, 'certificate-authority-data': Buffer.from(server.pki.caCertPem).toString('base64') } }],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'sa', context: { cluster: 'hearth', user: 'sa' } }],
    'current-context': 'sa',
  };
}

/** A GET with this bearer token and no client certificate. */
function asToken(token: string, path: string, server: TestServer = s) {
  return server.request('GET', path, { anonymous: true, headers: { authorization: `Bearer ${token}` } });
}

/**
 * Polls (bounded) until a token that authenticated before is refused: as in kube-apiserver, a
 * success is cached for 10 s (the token cache), so a revoked token may keep working that long.
 */
async function refusedOnceUncached(token: string): Promise<number> {
  let status = 0;
  for (let i = 0; i < 80; i++) {
    status = (await asToken(token, '/version')).status;
    if (status !== 200) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return status;
}

test('kubectl create token: kube claims, a 3600 s default, and the token names the service account to kubectl', async () => {
  const uid = await createServiceAccount('robot');
  const token = await kubectlCreateToken(['robot']);
  const header = decodeProtectedHeader(token);
  assert.deepEqual(Object.keys(header), ['alg', 'kid']);
  assert.equal(header.alg, 'RS256');
  const claims = decodeJwt(token);
  // go-jose writes the claims sorted, as kube's tokens have them.
  assert.deepEqual(Object.keys(claims), ['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub']);
  assert.deepEqual(claims.aud, [ISSUER]);
  assert.equal(claims.iss, ISSUER);
  assert.equal(claims.sub, `system:serviceaccount:${NS}:robot`);
  assert.equal(claims.exp! - claims.iat!, 3600);
  assert.equal(claims.nbf, claims.iat);
  assert.match(claims.jti!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.deepEqual(claims['kubernetes.io'], { namespace: NS, serviceaccount: { name: 'robot', uid } });

  // The token is the service account's identity: discovery is open to it, pods are not (yet: RBAC).
  const version = await kubectlAsToken(token, ['get', '--raw', '/version']);
  assert.equal(version.code, 0, version.stderr);
  assert.ok(JSON.parse(version.stdout).gitVersion);
  const pods = await kubectlAsToken(token, ['get', 'pods', '-n', NS]);
  assert.notEqual(pods.code, 0);
  assert.match(pods.stderr, new RegExp(`User "system:serviceaccount:${NS}:robot" cannot list resource "pods"`));
});

test('kubectl create token from every kubectl on the machine', async () => {
  const kubectls = availableKubectls();
  assert.ok(kubectls.some((k) => k.path === KUBECTL_VERSIONS['1.27']), 'kubectl 1.27 is installed');
  for (const { version, path } of kubectls) {
    const r = await s.kubectl(['create', 'token', 'robot', '-n', NS, '--duration', '20m'], { binary: path });
    assert.equal(r.code, 0, `${version}: ${r.stderr}`);
    const claims = decodeJwt(r.stdout.trim());
    assert.equal(claims.exp! - claims.iat!, 1200, version);
    assert.equal((await asToken(r.stdout.trim(), '/version')).status, 200, version);
  }
});

test('the TokenRequest answer: its spec defaulted and its status, 201', async () => {
  await createServiceAccount('answer');
  const before = Math.floor(Date.now() / 1000);
  const r = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/answer/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['vault'], expirationSeconds: 700 } } });
  assert.equal(r.status, 201, r.text);
  const body = r.json();
  assert.equal(body.kind, 'TokenRequest');
  assert.equal(body.apiVersion, 'authentication.k8s.io/v1');
  assert.equal(body.metadata.name, 'answer');
  assert.equal(body.metadata.namespace, NS);
  assert.deepEqual(body.spec, { audiences: ['vault'], expirationSeconds: 700 });
  assert.deepEqual(Object.keys(body.status), ['token', 'expirationTimestamp']);
  const expires = Date.parse(body.status.expirationTimestamp) / 1000;
  assert.ok(expires >= before + 700 && expires <= Math.ceil(Date.now() / 1000) + 700, body.status.expirationTimestamp);
  assert.equal(decodeJwt(body.status.token).exp, expires);
  assert.deepEqual(decodeJwt(body.status.token).aud, ['vault']);
});

test('@kubernetes/client-node with a token: the service account, not the admin', async () => {
  await createServiceAccount('client');
  const token = await kubectlCreateToken(['client']);
  const kc = new k8s.KubeConfig();
  kc.loadFromString(YAML.stringify(tokenKubeconfig(token)));
  const version = await kc.makeApiClient(k8s.VersionApi).getCode();
  assert.ok(version.gitVersion);
  await assert.rejects(kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: NS }), (e: { code?: number; body?: string }) => {
    assert.equal(e.code, 403);
    assert.match(String(e.body), new RegExp(`User \\\\"system:serviceaccount:${NS}:client\\\\" cannot list resource \\\\"secrets\\\\"`));
    return true;
  });
});

test('issuer discovery: the OIDC configuration and the JWKS verify a token with jose, offline', async () => {
  await createServiceAccount('verified');
  const token = await kubectlCreateToken(['verified', '--audience', 'https://vault.example']);
  // Read as the service account itself (authenticated users may read them).
  const config = await asToken(await kubectlCreateToken(['verified']), '/.well-known/openid-configuration');
  assert.equal(config.status, 200, config.text);
  assert.equal(config.headers['content-type'], 'application/json');
  assert.equal(config.headers['cache-control'], 'public, max-age=3600');
  assert.deepEqual(config.json(), { issuer: ISSUER, jwks_uri: `${s.url}/openid/v1/jwks`, response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] });
  const keys = await s.request('GET', '/openid/v1/jwks');
  assert.equal(keys.status, 200);
  assert.equal(keys.headers['content-type'], 'application/jwk-set+json');
  assert.equal(keys.headers['cache-control'], 'public, max-age=3600');
  const jwks = keys.json();
  assert.equal(jwks.keys.length, 1);
  assert.deepEqual(Object.keys(jwks.keys[0]), ['use', 'kty', 'kid', 'alg', 'n', 'e']);
  assert.equal(jwks.keys[0].kid, decodeProtectedHeader(token).kid);
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: ISSUER, audience: 'https://vault.example' });
  assert.equal(payload.sub, `system:serviceaccount:${NS}:verified`);
  // Anonymous callers are not authenticated: the documents are not public.
  assert.equal((await s.request('GET', '/openid/v1/jwks', { anonymous: true })).status, 403);
});

test('refused tokens are 401, never anonymous: garbage, another audience, expired, a stranger key', async () => {
  await createServiceAccount('refused');
  const good = await kubectlCreateToken(['refused']);
  assert.equal((await asToken(good, '/version')).status, 200);
  const unauthorized = async (token: string) => {
    const r = await asToken(token, '/version');
    assert.equal(r.status, 401, `${r.status} ${r.text}`);
    assert.equal(r.json().reason, 'Unauthorized');
  };
  await unauthorized('garbage');
  // A big token naming hearth's issuer, with a signature that is no signature.
  const bigPayload = Buffer.from(JSON.stringify({ iss: ISSUER, pad: 'x'.repeat(8 * 1024) })).toString('base64url');
  await unauthorized(`${good.split('.')[0]}.${bigPayload}.${'A'.repeat(512)}`);
  await unauthorized(await kubectlCreateToken(['refused', '--audience', 'somebody-else']));
  // The same claims signed with hearth's own key but expired (beyond the minute of leeway).
  const key = await importPKCS8(readFileSync(join(s.dataDir, 'pki', 'sa.key'), 'utf8'), 'RS256');
  const claims = decodeJwt(good);
  const now = Math.floor(Date.now() / 1000);
  const sign = (payload: object, header: { alg: string; kid?: string } = decodeProtectedHeader(good) as { alg: string; kid: string }) =>
    new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader(header).sign(key);
  await unauthorized(await sign({ ...claims, iat: now - 7200, nbf: now - 7200, exp: now - 120 }));
  // A minute late is still in time (go-jose's leeway).
  assert.equal((await asToken(await sign({ ...claims, iat: now - 3600, nbf: now - 3600, exp: now - 30 }), '/version')).status, 200);
  // alg none, and a key hearth does not know.
  const [h, p] = good.split('.');
  await unauthorized(`${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${p}.`);
  await unauthorized(`${h}.${p}.${Buffer.from('forged').toString('base64url')}`);
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  await unauthorized(await new CompactSign(new TextEncoder().encode(JSON.stringify(claims))).setProtectedHeader({ alg: 'RS256' }).sign(stranger));
});

test('a token dies with its ServiceAccount, and a recreated one does not revive it', async () => {
  await createServiceAccount('mortal');
  const token = await kubectlCreateToken(['mortal']);
  assert.equal((await asToken(token, '/version')).status, 200);
  assert.equal((await s.request('DELETE', `/api/v1/namespaces/${NS}/serviceaccounts/mortal`)).status, 200);
  assert.equal(await refusedOnceUncached(token), 401);
  await createServiceAccount('mortal');
  assert.equal((await asToken(token, '/version')).status, 401);
  assert.equal((await asToken(await kubectlCreateToken(['mortal']), '/version')).status, 200);
});

test('a pod-bound token: the pod in its claims, dead with the pod, refused for another pod incarnation', async () => {
  const saUid = await createServiceAccount('runner');
  const pod = await s.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: { metadata: { name: 'job' }, spec: { serviceAccountName: 'runner', containers: [{ name: 'c', image: 'busybox' }] } } });
  assert.equal(pod.status, 201, pod.text);
  const podUid = pod.json().metadata.uid;
  const token = await kubectlCreateToken(['runner', '--bound-object-kind', 'Pod', '--bound-object-name', 'job', '--bound-object-uid', podUid]);
  assert.deepEqual(decodeJwt(token)['kubernetes.io'], { namespace: NS, pod: { name: 'job', uid: podUid }, serviceaccount: { name: 'runner', uid: saUid } });
  assert.equal((await asToken(token, '/version')).status, 200);

  // A stale uid in the reference is a conflict; a pod of another service account a bad request.
  const stale = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/runner/token`, { body: { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'job', uid: 'not-the-uid' } } } });
  assert.equal(stale.status, 409);
  assert.equal(stale.json().message, 'Operation cannot be fulfilled on Pod "job": the UID in the bound object reference (not-the-uid) does not match the UID in record. The object might have been deleted and then recreated');
  const otherSa = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`, { body: { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'job' } } } });
  assert.equal(otherSa.status, 400);
  assert.equal(otherSa.json().message, 'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.');

  assert.equal((await s.request('DELETE', `/api/v1/namespaces/${NS}/pods/job`)).status, 200);
  assert.equal(await refusedOnceUncached(token), 401);
  assert.equal((await s.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: { metadata: { name: 'job' }, spec: { serviceAccountName: 'runner', containers: [{ name: 'c', image: 'busybox' }] } } })).status, 201);
  assert.equal((await asToken(token, '/version')).status, 401);
});

test('secret- and node-bound tokens carry their object and die with it', async () => {
  await createServiceAccount('bound');
  const secret = await s.request('POST', `/api/v1/namespaces/${NS}/secrets`, { body: { metadata: { name: 'anchor' } } });
  const secretToken = await kubectlCreateToken(['bound', '--bound-object-kind', 'Secret', '--bound-object-name', 'anchor']);
  assert.deepEqual((decodeJwt(secretToken)['kubernetes.io'] as { secret: unknown }).secret, { name: 'anchor', uid: secret.json().metadata.uid });
  const node = await s.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'worker-1' } } });
  assert.equal(node.status, 201, node.text);
  const nodeToken = await kubectlCreateToken(['bound', '--bound-object-kind', 'Node', '--bound-object-name', 'worker-1']);
  assert.deepEqual((decodeJwt(nodeToken)['kubernetes.io'] as { node: unknown }).node, { name: 'worker-1', uid: node.json().metadata.uid });
  assert.equal((await asToken(secretToken, '/version')).status, 200);
  assert.equal((await asToken(nodeToken, '/version')).status, 200);

  // A pod on a node: its token names the node too. The projected volume's 3607 s lives a year,
  // stale after 3607 s (kube's --service-account-extend-token-expiration), its status says 3607 s.
  const placed = await s.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: { metadata: { name: 'placed' }, spec: { serviceAccountName: 'bound', nodeName: 'worker-1', containers: [{ name: 'c', image: 'busybox' }] } } });
  assert.equal(placed.status, 201, placed.text);
  const r = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/bound/token`, { body: { spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'placed' } } } });
  assert.equal(r.status, 201, r.text);
  const podClaims = decodeJwt(r.json().status.token);
  const k8sClaims = podClaims['kubernetes.io'] as { node: unknown; pod: unknown; warnafter: number };
  assert.deepEqual(k8sClaims.node, { name: 'worker-1', uid: node.json().metadata.uid });
  assert.deepEqual(k8sClaims.pod, { name: 'placed', uid: placed.json().metadata.uid });
  assert.equal(podClaims.exp! - podClaims.iat!, 365 * 24 * 3600);
  assert.equal(k8sClaims.warnafter - podClaims.iat!, 3607);
  assert.equal(Date.parse(r.json().status.expirationTimestamp) / 1000 - podClaims.iat!, 3607);
  assert.deepEqual(r.json().spec.boundObjectRef, { kind: 'Pod', apiVersion: 'v1', name: 'placed' });
  await s.request('DELETE', `/api/v1/namespaces/${NS}/secrets/anchor`);
  await s.request('DELETE', '/api/v1/nodes/worker-1');
  assert.equal(await refusedOnceUncached(secretToken), 401);
  assert.equal(await refusedOnceUncached(nodeToken), 401);
});

test('bad TokenRequests: kube statuses, and nothing issued', async () => {
  const short = await s.kubectl(['create', 'token', 'robot', '-n', NS, '--duration', '1m']);
  assert.notEqual(short.code, 0);
  assert.match(short.stderr, /TokenRequest\.authentication\.k8s\.io "" is invalid: spec\.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes/);
  const r = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`, { body: { spec: { expirationSeconds: 60 } } });
  assert.equal(r.status, 422);
  assert.equal(r.json().reason, 'Invalid');
  assert.deepEqual(r.json().details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: 60: may not specify a duration less than 10 minutes', field: 'spec.expirationSeconds' }]);

  const missing = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/nobody/token`, { body: {} });
  assert.equal(missing.status, 404);
  assert.equal(missing.json().message, 'serviceaccounts "nobody" not found');
  const kind = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`, { body: { spec: { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } } } });
  assert.equal(kind.status, 400);
  assert.equal(kind.json().message, 'cannot bind token to object of type /v1, Kind=ConfigMap');
  const gone = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`, { body: { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'absent' } } } });
  assert.equal(gone.status, 404);
  assert.equal(gone.json().message, 'pods "absent" not found');
  const name = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`, { body: { metadata: { name: 'other' } } });
  assert.equal(name.status, 422);
  assert.equal(name.json().message, 'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified');
  // A token user may not mint tokens (403 until RBAC grants serviceaccounts/token).
  const token = await kubectlCreateToken(['robot']);
  const denied = await s.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`, { anonymous: true, headers: { authorization: `Bearer ${token}` }, body: {} });
  assert.equal(denied.status, 403);
});

test('flags: an ECDSA signing key, several issuers (the first issues, all are accepted), the max expiration cap, the JWKS URI', async () => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyFile = join(dir, 'signing.key');
  writeFileSync(keyFile, privateKey.export({ type: 'sec1', format: 'pem' }));
  const other = await startTestServer({
    options: {
      serviceAccountSigningKeyFile: keyFile,
      serviceAccountIssuers: ['https://issuer.example', ISSUER],
      serviceAccountMaxTokenExpirationSeconds: 3600,
      serviceAccountJwksUri: 'https://keys.example/jwks',
    },
  });
  try {
    assert.equal((await other.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
    await createServiceAccount('robot', other);
    const r = await other.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`, { body: { spec: { expirationSeconds: 7200 } } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers.warning, '299 - "requested expiration of 7200 seconds shortened to 3600 seconds"');
    assert.equal(r.json().spec.expirationSeconds, 3600);
    const token = r.json().status.token;
    assert.equal(decodeProtectedHeader(token).alg, 'ES256');
    const claims = decodeJwt(token);
    assert.equal(claims.iss, 'https://issuer.example');
    // The API audiences default to every issuer.
    assert.deepEqual(claims.aud, ['https://issuer.example', ISSUER]);
    assert.equal(claims.exp! - claims.iat!, 3600);
    assert.equal((await asToken(token, '/version', other)).status, 200);
    const config = (await other.request('GET', '/.well-known/openid-configuration')).json();
    assert.equal(config.issuer, 'https://issuer.example');
    assert.equal(config.jwks_uri, 'https://keys.example/jwks');
    assert.deepEqual(config.id_token_signing_alg_values_supported, ['ES256']);
    const jwks = (await other.request('GET', '/openid/v1/jwks')).json();
    assert.deepEqual(Object.keys(jwks.keys[0]), ['use', 'kty', 'kid', 'crv', 'alg', 'x', 'y']);
    assert.equal(jwks.keys[0].crv, 'P-256');
    await jwtVerify(token, createLocalJWKSet(jwks), { issuer: 'https://issuer.example' });
    // A token naming the second issuer is accepted too.
    const second = await new CompactSign(new TextEncoder().encode(JSON.stringify({ ...claims, iss: ISSUER }))).setProtectedHeader(decodeProtectedHeader(token) as { alg: string }).sign(privateKey);
    assert.equal((await asToken(second, '/version', other)).status, 200);
    // No sa.key was generated: the signing key file is the key.
    assert.throws(() => readFileSync(join(other.dataDir, 'pki', 'sa.key')));
  } finally {
    await other.stop();
  }
});

function runMain(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], { timeout: 60_000 }, (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }));
  });
}

test("bad service-account flags stop hearth at start with kube-apiserver's message", async () => {
  const dataDir = join(dir, 'never');
  const cases: Array<[string[], number, string]> = [
    [['--service-account-max-token-expiration', '30m'], 2, 'the service-account-max-token-expiration must be between 1 hour and 2^32 seconds'],
    [['--service-account-jwks-uri', 'http://keys.example/jwks'], 2, 'service-account-jwks-uri requires https scheme, parsed as: http://keys.example/jwks'],
    [['--service-account-issuer', 'https://a', '--service-account-issuer', 'https://a'], 2, 'service-account-issuer "https://a" is already specified'],
    [['--service-account-issuer='], 2, 'service-account-issuer should not be an empty string'],
  ];
  for (const [args, code, message] of cases) {
    const r = await runMain(['--data-dir', dataDir, '--secure-port', '0', ...args]);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.split('\n')[0], `hearth: ${message}`);
  }
  // A signing key file without a private key: the start fails naming it.
  const notAKey = join(dir, 'not-a-key.pem');
  writeFileSync(notAKey, 'hello');
  const r = await runMain(['--data-dir', dataDir, '--secure-port', '0', '--service-account-signing-key-file', notAKey]);
  assert.equal(r.code, 1, r.stderr);
  // (after the start-up lines logged before the key is read)
  assert.equal(r.stderr.trim().split('\n').at(-1), `hearth: service account signing key ${notAKey}: no private key found`);
});
