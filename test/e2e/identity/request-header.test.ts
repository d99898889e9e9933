// The authenticating proxy (--requestheader-*) through HTTPS, HTTP/1.1 and HTTP/2: a client
// certificate from the proxy CA with an allowed CN makes the X-Remote-* headers name the user
// (uid, repeated groups, %-escaped extra keys) and impersonation applies after it; a disallowed
// CN is 401; the same headers from the admin, anonymous, or a proxy certificate without the user
// header name nobody (the proxy CA is no client CA: that is 401 too); a refused proxy
// certificate leaves a bearer token to name the user (kube's union); the start-up checks kube
// makes; and the kube-system/extension-apiserver-authentication ConfigMap kube-apiserver keeps
// (its contents, written back when deleted or changed, merged as kube merges).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import http2 from 'node:http2';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { runHearth } from '../../helpers/hearth-process.ts';
import { startServer } from '../../../server/server.ts';
import { ensurePki, issueClientCertificate, type CaPair } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-requestheader-'));
const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const REVIEW = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
const CM_PATH = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';
const PROXY_CN = 'front-proxy-client';

interface Cert {
  certPem: string;
  keyPem: string;
}

async function caIn(name: string): Promise<CaPair> {
  const pki = await ensurePki(join(dir, name));
  return { caCertPem: pki.caCertPem, caKeyPem: pki.caKeyPem };
}

async function clientCert(ca: CaPair, commonName: string, organizations: string[] = []): Promise<Cert> {
  const c = await issueClientCertificate(ca, { commonName, organizations });
  return { certPem: c.certPem, keyPem: c.keyPem! };
}

let proxyCa: CaPair;
let proxy: Cert;
let intruder: Cert;
let s: TestServer;
const proxyCaFile = join(dir, 'front-proxy-ca.crt');
const tokenFile = join(dir, 'tokens.csv');
const DAVE_TOKEN = 'dave-static-token-0123456789';
const FLAGS = {
  requestHeaderClientCaFile: proxyCaFile,
  requestHeaderAllowedNames: [PROXY_CN],
  requestHeaderUsernameHeaders: ['X-Remote-User'],
  requestHeaderUidHeaders: ['X-Remote-Uid'],
  requestHeaderGroupHeaders: ['X-Remote-Group'],
  requestHeaderExtraHeadersPrefix: ['X-Remote-Extra-'],
};

before(async () => {
  proxyCa = await caIn('front-proxy-ca');
  writeFileSync(proxyCaFile, proxyCa.caCertPem);
  proxy = await clientCert(proxyCa, PROXY_CN);
  intruder = await clientCert(proxyCa, 'someone-else');
  writeFileSync(tokenFile, `${DAVE_TOKEN},dave,uid-dave,readers\n`);
  s = await startTestServer({ options: { ...FLAGS, tokenAuthFile: tokenFile } });
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What the tests read of an answer: a Status, a SelfSubjectReview or a list. */
interface Body {
  message?: string;
  reason?: string;
  status?: { userInfo: UserInfo } | string;
  items?: { metadata: { name: string } }[];
}
interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}
interface Answer {
  status: number;
  body: Body;
}

/** The user a SelfSubjectReview answer names. */
function userInfo(a: Answer): UserInfo | undefined {
  return typeof a.body.status === 'object' ? a.body.status.userInfo : undefined;
}

/** The ConfigMap as the tests read it. */
interface ConfigMap {
  metadata: { uid: string; resourceVersion: string; managedFields?: { manager: string }[] };
  data: Record<string, string>;
}

/** A request over HTTP/1.1 with this client certificate (or none) and these headers (an array value is sent as repeated lines). */
function requestH1(server: TestServer, method: string, path: string, cert: Cert | undefined, headers: Record<string, string | string[]>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = https.request(`${server.url}${path}`, {
      method,
      agent: false,
      ca: server.pki.caCertPem,
      cert: cert?.certPem,
      key: cert?.keyPem,
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
    }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The same over HTTP/2 (hearth's own HTTP/2: header fields as they came, repeated ones apart). */
function requestH2(server: TestServer, method: string, path: string, cert: Cert, headers: Record<string, string | string[]>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(server.url, { ca: server.pki.caCertPem, cert: cert.certPem, key: cert.keyPem });
    session.on('error', reject);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = session.request({ ':method': method, ':path': path, ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) });
    let status = 0;
    let text = '';
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      session.close();
      resolve({ status, body: text ? JSON.parse(text) : undefined });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const whoami = (cert: Cert | undefined, headers: Record<string, string | string[]>, server: TestServer = s) => requestH1(server, 'POST', WHOAMI, cert, headers, REVIEW);

const ALICE_HEADERS = {
  'X-Remote-User': 'alice',
  'X-Remote-Uid': 'alice-uid-1',
  'X-Remote-Group': ['dev', 'ops'],
  'X-Remote-Extra-Scopes': ['read', 'write'],
  'X-Remote-Extra-Acme.com%2FProject': 'apollo',
};
const ALICE = {
  username: 'alice',
  uid: 'alice-uid-1',
  groups: ['dev', 'ops', 'system:authenticated'],
  extra: { scopes: ['read', 'write'], 'acme.com/project': ['apollo'] },
};

test('the proxy names the user in headers: name, uid, every group, extras with lower-cased, unescaped keys (HTTP/1.1 and HTTP/2)', async () => {
  const h1 = await whoami(proxy, ALICE_HEADERS);
  assert.equal(h1.status, 201, JSON.stringify(h1.body));
  assert.deepEqual(userInfo(h1), ALICE);
  const h2 = await requestH2(s, 'POST', WHOAMI, proxy, ALICE_HEADERS, REVIEW);
  assert.equal(h2.status, 201, JSON.stringify(h2.body));
  assert.deepEqual(userInfo(h2), ALICE);
});

test('the first username header with a value wins; empty group values are left out', async () => {
  const server = await startTestServer({ options: { ...FLAGS, requestHeaderUsernameHeaders: ['X-Remote-User', 'X-Forwarded-User'], requestHeaderGroupHeaders: ['X-Remote-Group', 'X-Team'] } });
  try {
    const r = await whoami(proxy, { 'X-Remote-User': '', 'X-Forwarded-User': 'bob', 'X-Remote-Group': ['', 'qa'], 'X-Team': 'blue' }, server);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(userInfo(r), { username: 'bob', groups: ['qa', 'blue', 'system:authenticated'] });
  } finally {
    await server.stop();
  }
});

test('the proxied user is who authorization sees: alice may not list namespaces; a proxied system:masters member may, and may impersonate', async () => {
  const denied = await requestH1(s, 'GET', '/api/v1/namespaces', proxy, { 'X-Remote-User': 'alice' });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.message, 'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope');

  const root = { 'X-Remote-User': 'root-by-proxy', 'X-Remote-Group': 'system:masters' };
  const listed = await requestH1(s, 'GET', '/api/v1/namespaces', proxy, root);
  assert.equal(listed.status, 200);
  assert.ok(listed.body.items?.some((n) => n.metadata.name === 'kube-system'));

  const impersonated = await whoami(proxy, { ...root, 'Impersonate-User': 'carol', 'Impersonate-Group': 'auditors' });
  assert.equal(impersonated.status, 201, JSON.stringify(impersonated.body));
  assert.deepEqual(userInfo(impersonated), { username: 'carol', groups: ['auditors', 'system:authenticated'] });

  // alice (no system:masters) may not impersonate: the 403 names her, the proxied user.
  const refused = await whoami(proxy, { 'X-Remote-User': 'alice', 'Impersonate-User': 'carol' });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.message, 'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
});

test('a certificate from the proxy CA whose CN is not allowed is 401, headers or not', async () => {
  for (const headers of [ALICE_HEADERS, {}]) {
    const r = await whoami(intruder, headers);
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  }
});

test("the headers are ignored on the admin's certificate and on an anonymous request", async () => {
  const admin = await requestH1(s, 'POST', WHOAMI, { certPem: s.pki.adminCertPem, keyPem: s.pki.adminKeyPem }, ALICE_HEADERS, REVIEW);
  assert.equal(admin.status, 201);
  assert.equal(userInfo(admin)?.username, 'hearth-admin');
  assert.deepEqual(userInfo(admin)?.groups, ['system:masters', 'system:authenticated']);

  const anonymous = await requestH1(s, 'GET', '/api/v1/namespaces', undefined, ALICE_HEADERS);
  assert.equal(anonymous.status, 403);
  assert.equal(anonymous.body.message, 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope');
});

test('the proxy certificate without the user header is no user: the proxy CA is not a client CA (401, kubectl too)', async () => {
  const r = await whoami(proxy, { 'X-Remote-Group': 'system:masters' });
  assert.equal(r.status, 401);
  assert.equal(r.body.reason, 'Unauthorized');

  const kubeconfig = join(dir, 'kubeconfig-proxy');
  writeFileSync(kubeconfig, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, clientCertPem: proxy.certPem, clientKeyPem: proxy.keyPem, userName: 'proxy' }));
  const k = await new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, 'auth', 'whoami'], { timeout: 60_000 }, (err, _stdout, stderr) => resolve({ code: err ? 1 : 0, stderr }));
  });
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /You must be logged in to the server \(Unauthorized\)/);
});

test("kube's union: a refused proxy certificate does not end the chain, a bearer token on the same request still names its user", async () => {
  const bearer = { authorization: `Bearer ${DAVE_TOKEN}` };
  for (const [cert, headers] of [[intruder, { ...bearer, 'X-Remote-User': 'alice' }], [proxy, bearer]] as const) {
    const r = await whoami(cert, headers);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(userInfo(r), { username: 'dave', uid: 'uid-dave', groups: ['readers', 'system:authenticated'] });
  }
  // The proxy's headers win over a token, as the proxy comes first.
  const proxied = await whoami(proxy, { ...bearer, 'X-Remote-User': 'alice' });
  assert.equal(userInfo(proxied)?.username, 'alice');
});

/** The ConfigMap's data as kubectl prints it. */
async function authenticationConfigMap(server: TestServer): Promise<ConfigMap> {
  const r = await server.kubectl(['get', 'configmap', '-n', 'kube-system', 'extension-apiserver-authentication', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** The fingerprints of a PEM bundle's certificates, in order. */
function fingerprints(pem: string): string[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b).fingerprint256);
}

test('kube-system/extension-apiserver-authentication says which CAs are trusted and how the proxy names users', async () => {
  const cm = await authenticationConfigMap(s);
  assert.deepEqual(Object.keys(cm.data), [
    'client-ca-file',
    'requestheader-allowed-names',
    'requestheader-client-ca-file',
    'requestheader-extra-headers-prefix',
    'requestheader-group-headers',
    'requestheader-uid-headers',
    'requestheader-username-headers',
  ]);
  assert.deepEqual(fingerprints(cm.data['client-ca-file']), fingerprints(s.pki.caCertPem));
  assert.deepEqual(fingerprints(cm.data['requestheader-client-ca-file']), fingerprints(proxyCa.caCertPem));
  assert.match(cm.data['client-ca-file'], /^-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/);
  assert.equal(cm.data['requestheader-allowed-names'], '["front-proxy-client"]');
  assert.equal(cm.data['requestheader-username-headers'], '["X-Remote-User"]');
  assert.equal(cm.data['requestheader-uid-headers'], '["X-Remote-Uid"]');
  assert.equal(cm.data['requestheader-group-headers'], '["X-Remote-Group"]');
  assert.equal(cm.data['requestheader-extra-headers-prefix'], '["X-Remote-Extra-"]');
  // (kubectl leaves managedFields out)
  const stored: ConfigMap = (await s.request('GET', CM_PATH)).json();
  assert.deepEqual(stored.metadata.managedFields?.map((f) => f.manager), ['kube-apiserver']);
});

/** Waits (on a watch, no sleeping) for the ConfigMap's next write after resourceVersion rv. */
async function nextWrite(server: TestServer, rv: string, type: 'ADDED' | 'MODIFIED'): Promise<ConfigMap> {
  const { events } = await server.watch(
    `/api/v1/namespaces/kube-system/configmaps?watch=1&fieldSelector=metadata.name%3Dextension-apiserver-authentication&resourceVersion=${rv}`,
    (e) => e.some((x) => x.type === type),
  );
  return events.find((x) => x.type === type).object;
}

test('deleted, the ConfigMap is written again; changed, it is merged back as kube merges (lists joined, unknown keys dropped)', async () => {
  const before = await authenticationConfigMap(s);
  const del = await s.kubectl(['delete', 'configmap', '-n', 'kube-system', 'extension-apiserver-authentication']);
  assert.equal(del.code, 0, del.stderr);
  // (from before the deletion: the controller may have written it again already)
  const recreated = await nextWrite(s, before.metadata.resourceVersion, 'ADDED');
  assert.notEqual(recreated.metadata.uid, before.metadata.uid);
  assert.deepEqual(recreated.data, before.data);

  // Another API server's header and a key nobody knows: kube keeps the first, adds its own, drops the second.
  const patch = { data: { 'requestheader-username-headers': '["X-Other-User"]', junk: 'x' } };
  const patched = await s.request('PATCH', CM_PATH, { raw: JSON.stringify(patch), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  const merged = await nextWrite(s, patched.json().metadata.resourceVersion, 'MODIFIED');
  assert.equal(merged.data['requestheader-username-headers'], '["X-Other-User","X-Remote-User"]');
  assert.equal(merged.data.junk, undefined);
  assert.equal(merged.data['client-ca-file'], before.data['client-ca-file']);
});

test('without the proxy flags the ConfigMap holds only client-ca-file: hearth CA, then the --client-ca-file bundle', async () => {
  const outside = await caIn('outside-ca');
  const bundle = join(dir, 'client-ca.crt');
  writeFileSync(bundle, outside.caCertPem);
  const server = await startTestServer({ options: { clientCaFile: bundle } });
  try {
    const cm = await authenticationConfigMap(server);
    assert.deepEqual(Object.keys(cm.data), ['client-ca-file']);
    assert.deepEqual(fingerprints(cm.data['client-ca-file']), [...fingerprints(server.pki.caCertPem), ...fingerprints(outside.caCertPem)]);
  } finally {
    await server.stop();
  }
});

test("kube's start-up checks: an empty header name; a proxy CA that is also a client CA without allowed names", async () => {
  const opts = (more: object) => ({ dataDir: join(dir, `refused-${Math.random().toString(36).slice(2)}`), securePort: 0, bindAddress: '127.0.0.1', log: () => {}, ...more });
  await assert.rejects(startServer(opts({ ...FLAGS, requestHeaderUsernameHeaders: ['X-Remote-User', ' '] })), { message: 'empty value in "requestheader-username-headers"' });
  await assert.rejects(startServer(opts({ ...FLAGS, requestHeaderClientCaFile: join(dir, 'missing.crt') })), { message: `open ${join(dir, 'missing.crt')}: no such file or directory` });
  const overlap = /^--requestheader-client-ca-file and --client-ca-file contain overlapping certificates; --requestheader-allowed-names must be specified/;
  await assert.rejects(startServer(opts({ ...FLAGS, clientCaFile: proxyCaFile, requestHeaderAllowedNames: [] })), { message: overlap });
  // hearth's own CA is a client CA too.
  const dataDir = join(dir, 'own-ca');
  await ensurePki(dataDir);
  await assert.rejects(startServer({ ...opts({ ...FLAGS, requestHeaderClientCaFile: join(dataDir, 'pki', 'ca.crt'), requestHeaderAllowedNames: [] }), dataDir, initialize: true }), { message: overlap });
});

test('the flags through the command line: lists split on commas, an empty name refused with kube\'s message', async () => {
  const r = await runHearth(['--data-dir', join(dir, 'cli'), '--secure-port', '0', '--requestheader-client-ca-file', proxyCaFile, '--requestheader-group-headers', 'X-Remote-Group,,X-Team']);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /^hearth: empty value in "requestheader-group-headers"$/m);
});
