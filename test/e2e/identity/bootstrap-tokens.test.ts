// Bootstrap tokens end to end, through HTTPS with kubectl and @kubernetes/client-node: the admin
// creates a token Secret as `kubeadm token create` does (stringData), and `<id>.<secret>`
// authenticates as system:bootstrap:<id> in system:bootstrappers and its extra groups; a token
// whose Secret refuses it (wrong secret, expired, not for authentication, a bad extra group, the
// wrong type, being deleted) is 401, never anonymous. The bootstrap signer publishes
// kube-public/cluster-info at start and keeps a `jws-kubeconfig-<id>` signature for each signing
// token, checked here with jose on its own; the token cleaner deletes expired token Secrets; and
// `--enable-bootstrap-token-auth=false` turns the tokens off.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import YAML from 'yaml';
import { compactVerify } from 'jose';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { startHearthProcess, stopHearthProcess, adminClient, type HearthProcess } from '../../helpers/hearth-process.ts';
import { formatRFC3339 } from '../../../server/go/time.ts';
import { logMessage } from '../../helpers/log-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-bootstrap-'));
const SELF_REVIEWS = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const SECRETS = '/api/v1/namespaces/kube-system/secrets';
const CLUSTER_INFO = '/api/v1/namespaces/kube-public/configmaps/cluster-info';
/** Long enough for a loaded machine, short enough that a broken controller fails the test. */
const WAIT_MS = 60_000;

// The cleaner is off here, so that an expired token's Secret stays and the authenticator's own
// expiry check is what refuses it (the cleaner has its own server below).
let s: TestServer;
before(async () => {
  // Each check sees the Secret as it is now: without the union's 10 s success cache (token-cache.ts).
  s = await startTestServer({ options: { controllers: ['*', '-token-cleaner-controller'], tokenSuccessCacheTtlMs: 0 } });
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A token Secret as `kubeadm token create` writes it (stringData), with these keys changed; null drops one. */
function tokenSecret(id: string, secret: string, data: Record<string, string | null> = {}, type = 'bootstrap.kubernetes.io/token'): Record<string, unknown> {
  const stringData: Record<string, string> = {
    description: 'made by the bootstrap-tokens test',
    'token-id': id,
    'token-secret': secret,
    expiration: formatRFC3339(Date.now() + 24 * 3600_000),
    'usage-bootstrap-authentication': 'true',
    'usage-bootstrap-signing': 'true',
    'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
  };
  for (const [k, v] of Object.entries(data)) {
    if (v === null) delete stringData[k];
    else stringData[k] = v;
  }
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' }, type, stringData };
}

async function createSecret(server: TestServer, body: Record<string, unknown>): Promise<{ metadata: { uid: string } }> {
  const r = await server.request('POST', SECRETS, { body });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

/** A SelfSubjectReview, or the Status of a refused request. */
interface ReviewOrStatus {
  kind?: string;
  status?: string | { userInfo?: { username?: string } };
  reason?: string;
  code?: number;
}

/** A kubeconfig with the cluster only (its URL and CA): the token comes from kubectl's --token. */
function clusterOnlyKubeconfig(url: string, caPem: string, name: string): string {
  const file = join(dir, `kubeconfig-${name}`);
  const cluster = { server: url, 'certificate-authority-data': Buffer.from(caPem).toString('base64') };
  writeFileSync(file, YAML.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster }], contexts: [{ name: 'c', context: { cluster: 'c', user: '' } }], 'current-context': 'c', users: [] }));
  return file;
}

function kubectlWithToken(kubeconfig: string, token: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, '--token', token, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A SelfSubjectReview (what `kubectl auth whoami` posts) with this bearer token and no client certificate. */
function whoamiWithBearer(url: string, caPem: string, token: string): Promise<{ status: number; json: ReviewOrStatus }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(payload.length) };
    const req = https.request(`${url}${SELF_REVIEWS}`, { method: 'POST', headers, ca: caPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function assertUnauthorized(token: string, why: string): Promise<void> {
  const r = await whoamiWithBearer(s.url, s.pki.caCertPem, token);
  assert.equal(r.status, 401, `${why}: ${JSON.stringify(r.json)}`);
  assert.deepEqual({ kind: r.json.kind, status: r.json.status, reason: r.json.reason, code: r.json.code }, { kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 }, why);
}

/** Polls fn until it returns something other than undefined, for at most WAIT_MS. */
async function eventually<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('kubectl --token <id>.<secret> auth whoami: system:bootstrap:<id> in system:bootstrappers and its extra groups', async () => {
  const manifest = join(dir, 'token.yaml');
  writeFileSync(manifest, YAML.stringify(tokenSecret('abcdef', '0123456789abcdef', { 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token,system:bootstrappers:worker,system:bootstrappers:worker' })));
  const applied = await s.kubectl(['apply', '-f', manifest]);
  assert.equal(applied.code, 0, applied.stderr);

  const kubeconfig = clusterOnlyKubeconfig(s.url, s.pki.caCertPem, 'main');
  const r = await kubectlWithToken(kubeconfig, 'abcdef.0123456789abcdef', ['auth', 'whoami', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  // kube's groups: sorted, without repeats; no uid.
  assert.deepEqual(JSON.parse(r.stdout).status.userInfo, {
    username: 'system:bootstrap:abcdef',
    groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:bootstrappers:worker', 'system:authenticated'],
  });

  // client-node with the token in its kubeconfig user.
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: s.url, caData: Buffer.from(s.pki.caCertPem).toString('base64') }],
    users: [{ name: 'bootstrap', token: 'abcdef.0123456789abcdef' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'bootstrap' }],
    currentContext: 'c',
  });
  const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  assert.equal(review.status?.userInfo?.username, 'system:bootstrap:abcdef');

  // Not an admin: the authorizer sees the bootstrap user (403 names it), not anonymous.
  const secrets = await kubectlWithToken(kubeconfig, 'abcdef.0123456789abcdef', ['get', 'secrets', '-n', 'kube-system']);
  assert.notEqual(secrets.code, 0);
  assert.match(secrets.stderr, /secrets is forbidden: User "system:bootstrap:abcdef" cannot list resource "secrets" in API group "" in the namespace "kube-system"/);
});

test('a token whose Secret refuses it is 401 Unauthorized, never anonymous (anonymous auth is on)', async () => {
  const past = formatRFC3339(Date.now() - 60_000);
  await createSecret(s, tokenSecret('wrongs', 'aaaaaaaaaaaaaaaa'));
  await createSecret(s, tokenSecret('expird', 'bbbbbbbbbbbbbbbb', { expiration: past }));
  await createSecret(s, tokenSecret('badexp', 'bbbbbbbbbbbbbbbb', { expiration: 'tomorrow' }));
  await createSecret(s, tokenSecret('nouse1', 'cccccccccccccccc', { 'usage-bootstrap-authentication': null }));
  await createSecret(s, tokenSecret('nouse2', 'cccccccccccccccc', { 'usage-bootstrap-authentication': 'yes' }));
  await createSecret(s, tokenSecret('badgrp', 'dddddddddddddddd', { 'auth-extra-groups': 'system:bootstrappers:ok,system:masters' }));
  await createSecret(s, tokenSecret('badgr2', 'dddddddddddddddd', { 'auth-extra-groups': 'system:bootstrappers:Upper' }));
  await createSecret(s, tokenSecret('mismat', 'eeeeeeeeeeeeeeee', { 'token-id': 'zzzzzz' }));
  await createSecret(s, { ...tokenSecret('opaque', 'ffffffffffffffff'), type: 'Opaque' });
  for (const [token, why] of [
    ['wrongs.0000000000000000', 'the token-secret does not match'],
    ['expird.bbbbbbbbbbbbbbbb', 'expired'],
    ['badexp.bbbbbbbbbbbbbbbb', 'an expiration Go cannot parse counts as expired'],
    ['nouse1.cccccccccccccccc', 'no usage-bootstrap-authentication'],
    ['nouse2.cccccccccccccccc', 'usage-bootstrap-authentication is not "true"'],
    ['badgrp.dddddddddddddddd', 'an extra group outside system:bootstrappers: refuses the token (kube does not drop the group)'],
    ['badgr2.dddddddddddddddd', "an extra group outside kube's pattern"],
    ['opaque.ffffffffffffffff', 'not of type bootstrap.kubernetes.io/token'],
    ['mismat.eeeeeeeeeeeeeeee', "the Secret's token-id is not the name's"],
    ['nosecr.0123456789abcdef', 'no Secret'],
    ['abcdef.0123456789abcde', 'not of the token shape (15 characters of secret)'],
    ['ABCDEF.0123456789ABCDEF', 'not of the token shape (upper case)'],
  ] as const) {
    await assertUnauthorized(token, why);
  }
  // kubectl shows kube's words.
  const r = await kubectlWithToken(clusterOnlyKubeconfig(s.url, s.pki.caCertPem, 'refused'), 'expird.bbbbbbbbbbbbbbbb', ['auth', 'whoami']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /You must be logged in to the server \(Unauthorized\)/);
});

test('the authenticator reads the Secret as it is now: fixed, it authenticates; being deleted or gone, it does not', async () => {
  const created = await createSecret(s, { ...tokenSecret('later1', '1111111111111111', { 'usage-bootstrap-authentication': 'false' }), metadata: { name: 'bootstrap-token-later1', namespace: 'kube-system', finalizers: ['example.com/hold'] } });
  await assertUnauthorized('later1.1111111111111111', 'not for authentication yet');

  const patched = await s.request('PATCH', `${SECRETS}/bootstrap-token-later1`, { body: { stringData: { 'usage-bootstrap-authentication': 'true' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  const ok = await whoamiWithBearer(s.url, s.pki.caCertPem, 'later1.1111111111111111');
  assert.equal(ok.status, 201, JSON.stringify(ok.json));
  assert.equal(typeof ok.json.status === 'object' && ok.json.status.userInfo?.username, 'system:bootstrap:later1');

  // Deleted but held by its finalizer: "is deleted and awaiting removal".
  assert.equal((await s.request('DELETE', `${SECRETS}/bootstrap-token-later1`)).status, 200);
  await assertUnauthorized('later1.1111111111111111', 'being deleted');
  const release = await s.request('PATCH', `${SECRETS}/bootstrap-token-later1`, { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(release.status, 200, release.text);
  assert.equal((await s.request('GET', `${SECRETS}/bootstrap-token-later1`)).status, 404, `gone (it was ${created.metadata.uid})`);
  await assertUnauthorized('later1.1111111111111111', 'gone');
});

test('TokenReview knows a bootstrap token, with the API audiences; one for other audiences is not authenticated', async () => {
  await createSecret(s, tokenSecret('review', '2222222222222222', { 'auth-extra-groups': null }));
  const good = await s.request('POST', TOKEN_REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'review.2222222222222222' } } });
  assert.equal(good.status, 201, good.text);
  assert.deepEqual(good.json().status, {
    authenticated: true,
    user: { username: 'system:bootstrap:review', groups: ['system:bootstrappers', 'system:authenticated'] },
    audiences: ['https://kubernetes.default.svc.cluster.local'],
  });
  const other = await s.request('POST', TOKEN_REVIEWS, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'review.2222222222222222', audiences: ['vault'] } } });
  assert.equal(other.status, 201);
  assert.deepEqual(other.json().status, { user: {}, error: 'invalid bearer token' });
});

/** The kubeconfig kubeadm writes into cluster-info for this server. */
function expectedClusterInfo(url: string, caPem: string): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
    `    server: ${url}`,
    '  name: ""',
    'contexts: null',
    'current-context: ""',
    'kind: Config',
    'preferences: {}',
    'users: null',
    '',
  ].join('\n');
}

test("kube-public/cluster-info exists after start: kubeadm's kubeconfig with this server's URL and hearth's CA", async () => {
  const r = await s.kubectl(['get', 'configmap', 'cluster-info', '-n', 'kube-public', '-o', 'json', '--show-managed-fields']);
  assert.equal(r.code, 0, r.stderr);
  const cm = JSON.parse(r.stdout);
  assert.equal(cm.data.kubeconfig, expectedClusterInfo(s.url, s.pki.caCertPem));
  const parsed = YAML.parse(cm.data.kubeconfig);
  assert.equal(Buffer.from(parsed.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), s.pki.caCertPem);
  assert.equal(parsed.clusters[0].name, '');
  assert.ok(cm.metadata.managedFields.some((m: { manager: string }) => m.manager === 'hearth'), JSON.stringify(cm.metadata.managedFields));
});

/** The ConfigMap's signature for this token id, once there is one. */
async function signatureOf(id: string): Promise<{ signature: string; kubeconfig: string }> {
  return eventually(`jws-kubeconfig-${id}`, async () => {
    const cm = (await s.request('GET', CLUSTER_INFO)).json();
    const signature = cm.data?.[`jws-kubeconfig-${id}`];
    return signature ? { signature, kubeconfig: cm.data.kubeconfig } : undefined;
  });
}

async function waitUnsigned(id: string): Promise<void> {
  await eventually(`jws-kubeconfig-${id} removed`, async () => ((await s.request('GET', CLUSTER_INFO)).json().data?.[`jws-kubeconfig-${id}`] === undefined ? true : undefined));
}

test('the signer signs cluster-info for each signing token (a detached HS256 JWS jose verifies) and removes the signature of a token gone', async () => {
  await createSecret(s, tokenSecret('signer', '3333333333333333'));
  await createSecret(s, tokenSecret('nosign', '4444444444444444', { 'usage-bootstrap-signing': null }));
  const { signature, kubeconfig } = await signatureOf('signer');

  // Detached: header..signature. Verified with jose on its own, the payload put back: HS256 keyed
  // with the token's secret (kube's jws.ComputeDetachedSignature; its zero padding to 32 bytes
  // changes nothing in HMAC), kid the token id.
  const [header, payload, sig] = signature.split('.');
  assert.equal(payload, '', 'the payload is left out');
  assert.deepEqual(JSON.parse(Buffer.from(header!, 'base64url').toString()), { alg: 'HS256', kid: 'signer' });
  const verified = await compactVerify(`${header}.${Buffer.from(kubeconfig).toString('base64url')}.${sig}`, Buffer.from('3333333333333333'), { algorithms: ['HS256'] });
  assert.equal(Buffer.from(verified.payload).toString(), kubeconfig);
  await assert.rejects(compactVerify(`${header}.${Buffer.from(kubeconfig).toString('base64url')}.${sig}`, Buffer.from('3333333333333334'), { algorithms: ['HS256'] }), 'another secret does not verify it');

  // A token without usage-bootstrap-signing gets no signature (the other token's came at once with it).
  assert.equal((await s.request('GET', CLUSTER_INFO)).json().data['jws-kubeconfig-nosign'], undefined);

  // The token gone, its signature goes.
  assert.equal((await s.request('DELETE', `${SECRETS}/bootstrap-token-signer`)).status, 200);
  await waitUnsigned('signer');
});

test('a signing token stops signing when it expires, though no cleaner deletes it', async () => {
  await createSecret(s, tokenSecret('shortl', '5555555555555555', { expiration: formatRFC3339(Date.now() + 3000) }));
  await signatureOf('shortl');
  await waitUnsigned('shortl');
  assert.equal((await s.request('GET', `${SECRETS}/bootstrap-token-shortl`)).status, 200, 'the Secret stays: the cleaner is off here');
});

test('across restarts: tokens stored before authenticate after; cluster-info is kept current while hearth alone wrote its kubeconfig, and an edited one is left alone', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-cluster-info-'));
  const logs: string[] = [];
  try {
    let server = await startTestServer({ dataDir, options: { log: (l) => logs.push(logMessage(l)) } });
    const firstUrl = server.url;
    await createSecret(server, tokenSecret('restrt', '8888888888888888'));
    await server.stop();
    server = await startTestServer({ dataDir, options: { log: (l) => logs.push(logMessage(l)) } });
    try {
      assert.notEqual(server.url, firstUrl, 'a new port');
      const cm = (await server.request('GET', CLUSTER_INFO)).json();
      assert.equal(cm.data.kubeconfig, expectedClusterInfo(server.url, server.pki.caCertPem), 'the new URL');
      // A token stored before the restart authenticates after it (the authenticator's Secrets are read at start).
      const whoami = await whoamiWithBearer(server.url, server.pki.caCertPem, 'restrt.8888888888888888');
      assert.equal(whoami.status, 201, JSON.stringify(whoami.json));

      // An admin's edit (kubectl edit's field manager) is theirs: a restart leaves it.
      const edited = expectedClusterInfo('https://lb.example.com:6443', server.pki.caCertPem);
      const patched = await server.request('PATCH', `${CLUSTER_INFO}?fieldManager=kubectl-edit`, { body: { data: { kubeconfig: edited } }, headers: { 'content-type': 'application/merge-patch+json' } });
      assert.equal(patched.status, 200, patched.text);
    } finally {
      await server.stop();
    }
    server = await startTestServer({ dataDir, options: { log: (l) => logs.push(logMessage(l)) } });
    try {
      const cm = (await server.request('GET', CLUSTER_INFO)).json();
      assert.equal(cm.data.kubeconfig, expectedClusterInfo('https://lb.example.com:6443', server.pki.caCertPem));
      assert.ok(logs.some((l) => /kube-public\/cluster-info: its kubeconfig was written by kubectl-edit; left as it is/.test(l)), logs.join('\n'));
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('--enable-bootstrap-token-auth=false: a good token is 401; the token cleaner (on by default) deletes expired token Secrets only', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bootstrap-off-'));
  let p: HearthProcess | undefined;
  try {
    p = await startHearthProcess(dataDir, ['--enable-bootstrap-token-auth=false']);
    const admin = adminClient(dataDir);
    const ca = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
    const create = async (body: Record<string, unknown>) => assert.equal((await admin('POST', `${p!.url}${SECRETS}`, body)).status, 201);
    await create(tokenSecret('offtok', '6666666666666666'));
    const off = await whoamiWithBearer(p.url, ca, 'offtok.6666666666666666');
    assert.equal(off.status, 401, JSON.stringify(off.json));

    // The cleaner: one expiring soon, one expired already, one whose expiration Go cannot parse
    // (expired, as kube reads it), one long-lived, and an Opaque Secret with an expired
    // `expiration` (not a token: kept).
    await create(tokenSecret('soonex', '7777777777777777', { expiration: formatRFC3339(Date.now() + 2000) }));
    await create(tokenSecret('pastex', '7777777777777777', { expiration: formatRFC3339(Date.now() - 1000) }));
    await create(tokenSecret('oddexp', '7777777777777777', { expiration: 'next week' }));
    await create({ ...tokenSecret('opaqex', '7777777777777777', { expiration: formatRFC3339(Date.now() - 1000) }), type: 'Opaque' });
    const get = (name: string) => admin('GET', `${p!.url}${SECRETS}/${name}`);
    for (const name of ['bootstrap-token-soonex', 'bootstrap-token-pastex', 'bootstrap-token-oddexp']) {
      await eventually(`${name} deleted`, async () => ((await get(name)).status === 404 ? true : undefined));
    }
    assert.equal((await get('bootstrap-token-offtok')).status, 200, 'not expired: kept');
    assert.equal((await get('bootstrap-token-opaqex')).status, 200, 'not a token Secret: kept');
  } finally {
    if (p) await stopHearthProcess(p);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
