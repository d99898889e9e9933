// Impersonation through HTTPS as kube-apiserver answers it: kubectl --as / --as-group (1.27 and
// 1.33 and the default one) as the admin and as a user outside system:masters, the Impersonate-*
// headers sent by hand over HTTP/1.1 and HTTP/2, kube's 400 for groups without a user and its
// 403 naming the real caller and what it asked to impersonate.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import http2 from 'node:http2';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { startTestServer, kubectlsToTest, type TestServer } from '../../helpers/server.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';

let s: TestServer;
let dir: string;
/** A kubeconfig for "jane", a user with a client certificate from the cluster CA but outside system:masters. */
let janeKubeconfig: string;
let jane: { cert: string; key: string };

/** What a Status (or any JSON answer) holds, as far as these tests read it. */
type Json = Record<string, unknown>;

before(async () => {
  s = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'hearth-impersonation-'));
  const issued = await issueClientCertificate(s.pki, { commonName: 'jane', organizations: ['developers'] });
  jane = { cert: issued.certPem, key: issued.keyPem! };
  janeKubeconfig = join(dir, 'jane.kubeconfig');
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  writeFileSync(
    janeKubeconfig,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'hearth', cluster: { server: s.url, 'certificate-authority-data': b64(s.pki.caCertPem) } }],
      users: [{ name: 'jane', user: { 'client-certificate-data': b64(jane.cert), 'client-key-data': b64(jane.key) } }],
      contexts: [{ name: 'jane', context: { cluster: 'hearth', user: 'jane', namespace: 'default' } }],
      'current-context': 'jane',
    }),
  );
});

after(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A request over HTTP/1.1 with a client certificate (or none). */
function requestAs(creds: { cert: string; key: string } | null, method: string, path: string, headers: Record<string, string | string[]>): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${s.url}${path}`, { method, headers: { accept: 'application/json', ...headers }, agent: false, ca: s.pki.caCertPem, ...(creds ?? {}) }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(body) as Json }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The same over HTTP/2 with the admin certificate: an array value is sent as repeated header fields. */
async function h2AsAdmin(path: string, headers: Record<string, string | string[]>): Promise<{ status: number; json: Json }> {
  const c = http2.connect(s.url, { ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem });
  let done = false;
  // A reset of the connection while it closes after the answer is no failure; one before it is.
  const failed = new Promise<never>((_, reject) => c.on('error', (e) => (done ? undefined : reject(e))));
  failed.catch(() => {});
  try {
    const stream = c.request({ ':method': 'GET', ':path': path, accept: 'application/json', ...headers });
    let status = 0;
    let body = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (d) => (body += d));
    await Promise.race([
      failed,
      new Promise<void>((resolve, reject) => {
        stream.on('end', resolve);
        stream.on('error', reject);
      }),
    ]);
    return { status, json: JSON.parse(body) as Json };
  } finally {
    done = true;
    c.close();
  }
}

const kubectls = kubectlsToTest();

for (const k of kubectls) {
  test(`kubectl ${k.version}: the admin --as=jane is jane (403 naming jane); with --as-group=system:masters (and --as-uid) it is allowed`, async () => {
    const asJane = await s.kubectl(['--as=jane', 'get', 'pods', '-n', 'default'], { binary: k.path });
    assert.notEqual(asJane.code, 0);
    assert.match(asJane.stderr, /Error from server \(Forbidden\): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"/);

    const asMaster = await s.kubectl(['--as=jane', '--as-group=system:masters', 'get', 'pods', '-n', 'default', '-o', 'name'], { binary: k.path });
    assert.equal(asMaster.code, 0, asMaster.stderr);
    const withUid = await s.kubectl(['--as=jane', '--as-uid=u-1', '--as-group=system:masters', 'get', 'pods', '-n', 'default', '-o', 'name'], { binary: k.path });
    assert.equal(withUid.code, 0, withUid.stderr);

    // Without --as the admin is still the admin: impersonation lasts one request.
    assert.equal((await s.kubectl(['get', 'pods', '-n', 'default', '-o', 'name'], { binary: k.path })).code, 0);
  });

  test(`kubectl ${k.version}: jane (outside system:masters) may not impersonate: 403 with kube's impersonate message`, async () => {
    const asAdmin = await s.kubectl(['--kubeconfig', janeKubeconfig, '--as=hearth-admin', 'get', 'pods'], { binary: k.path });
    assert.notEqual(asAdmin.code, 0);
    assert.match(asAdmin.stderr, /Error from server \(Forbidden\): users "hearth-admin" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope/);

    const asSa = await s.kubectl(['--kubeconfig', janeKubeconfig, '--as=system:serviceaccount:kube-system:deployer', 'get', 'pods'], { binary: k.path });
    assert.notEqual(asSa.code, 0);
    assert.match(asSa.stderr, /serviceaccounts "deployer" is forbidden: User "jane" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"/);
  });
}

test('the admin impersonating a service account by its user name is that service account, an authenticated user', async () => {
  const r = await s.kubectl(['--as=system:serviceaccount:team-a:builder', 'get', 'configmaps', '-n', 'team-a']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /configmaps is forbidden: User "system:serviceaccount:team-a:builder" cannot list resource "configmaps" in API group "" in the namespace "team-a"/);
  // Its groups hold system:authenticated (added as for any impersonated user but anonymous): discovery is open to it.
  assert.equal((await s.kubectl(['--as=system:serviceaccount:team-a:builder', 'get', '--raw', '/api'])).code, 0);
});

test("impersonated groups: system:authenticated is added, system:anonymous gets system:unauthenticated, given groups decide", async () => {
  // Discovery is granted to system:authenticated only (kube's system:discovery role).
  const anonymous = await requestAs(null, 'GET', '/api', {});
  assert.equal(anonymous.status, 403, 'anonymous (no certificate) may not read /api');
  assert.equal((await s.request('GET', '/api', { headers: { 'Impersonate-User': 'jane' } })).status, 200, 'jane gets system:authenticated');

  const anon = await s.request('GET', '/api', { headers: { 'Impersonate-User': 'system:anonymous' } });
  assert.equal(anon.status, 403);
  assert.equal(anon.json().message, 'forbidden: User "system:anonymous" cannot get path "/api"');

  // A group list naming system:unauthenticated gets no system:authenticated added.
  const unauth = await s.request('GET', '/api', { headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:unauthenticated' } });
  assert.equal(unauth.status, 403);
  assert.equal(unauth.json().message, 'forbidden: User "jane" cannot get path "/api"');
});

test('Impersonate-Group, -Uid or -Extra-* without Impersonate-User: 400 BadRequest in kube\'s words', async () => {
  const groupOnly = await s.request('GET', '/api/v1/namespaces/default/pods', { headers: { 'Impersonate-Group': 'system:masters' } });
  assert.equal(groupOnly.status, 400);
  assert.deepEqual(groupOnly.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'requested [{Group  system:masters    }] without impersonating a user',
    reason: 'BadRequest',
    code: 400,
  });

  const uidOnly = await s.request('GET', '/api/v1/namespaces/default/pods', { headers: { 'Impersonate-Uid': 'u-1' } });
  assert.equal(uidOnly.status, 400);
  assert.equal(uidOnly.json().message, 'requested [{UID  u-1  authentication.k8s.io/v1  }] without impersonating a user');

  const extraOnly = await s.request('GET', '/api/v1/namespaces/default/pods', { headers: { 'Impersonate-Extra-Example.com%2fScopes': 'view' } });
  assert.equal(extraOnly.status, 400);
  assert.equal(extraOnly.json().message, 'requested [{UserExtra  view  authentication.k8s.io/v1  example.com/scopes}] without impersonating a user');

  // A user named but empty is no user.
  const emptyUser = await s.request('GET', '/api/v1/namespaces/default/pods', { headers: { 'Impersonate-User': '', 'Impersonate-Group': 'g' } });
  assert.equal(emptyUser.status, 400);
  // The anonymous caller gets the same answer: the request is malformed before anyone is asked.
  assert.equal((await requestAs(null, 'GET', '/api/v1/namespaces/default/pods', { 'Impersonate-Group': 'system:masters' })).status, 400);
});

test("a refused impersonation is a 403 Status naming the real caller (a certificate user, anonymous) and the user asked for", async () => {
  const asJane = (headers: Record<string, string | string[]>) => requestAs(jane, 'GET', '/api/v1/namespaces/default/pods', headers);

  const user = await asJane({ 'Impersonate-User': 'hearth-admin' });
  assert.equal(user.status, 403);
  assert.deepEqual(user.json, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'users "hearth-admin" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope',
    reason: 'Forbidden',
    details: { name: 'hearth-admin', kind: 'users' },
    code: 403,
  });

  // Anonymous callers are refused the same way, named as system:anonymous.
  const anon = await requestAs(null, 'GET', '/api/v1/namespaces/default/pods', { 'Impersonate-User': 'jane' });
  assert.equal(anon.status, 403);
  assert.equal(anon.json.message, 'users "jane" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope');

  // Names are quoted as Go's %q quotes them, and the message never looks like HTML.
  const odd = await asJane({ 'Impersonate-User': 'a"b<c>' });
  assert.equal(odd.status, 403);
  assert.equal(odd.json.message, 'users "a\\"b<c>" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope');
});

test('repeated Impersonate-Group fields are separate groups, one field with a comma is one group (HTTP/1.1 and HTTP/2)', async () => {
  const path = '/api/v1/namespaces/default/pods';
  // Two fields: groups "system:masters" and "extra": the admin acting as jane in system:masters may list.
  assert.equal((await requestAs({ cert: s.pki.adminCertPem, key: s.pki.adminKeyPem }, 'GET', path, { 'Impersonate-User': 'jane', 'Impersonate-Group': ['system:masters', 'extra'] })).status, 200);
  assert.equal((await h2AsAdmin(path, { 'impersonate-user': 'jane', 'impersonate-group': ['system:masters', 'extra'] })).status, 200);
  // One field "system:masters, extra" is a single group of that name: not a master.
  const h1 = await requestAs({ cert: s.pki.adminCertPem, key: s.pki.adminKeyPem }, 'GET', path, { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:masters, extra' });
  assert.equal(h1.status, 403);
  assert.match(String(h1.json.message), /User "jane" cannot list/);
  const h2 = await h2AsAdmin(path, { 'impersonate-user': 'jane', 'impersonate-group': 'system:masters, extra' });
  assert.equal(h2.status, 403);
  assert.match(String(h2.json.message), /User "jane" cannot list/);
});
