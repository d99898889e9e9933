// hearth's operator endpoint `POST /admin/compact` is a non-resource URL to RBAC, as kube's own
// operator paths are: cluster-admin's `nonResourceURLs: ["*"]` reaches it (the admin's
// system:masters certificate, or anyone bound to cluster-admin), and nobody else does — not
// the namespace admin, a user with `admin` across the cluster, a service account, or anonymous.
// A token that fails is 401, never anonymous.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { requester, type Credentials } from '../../helpers/identities.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';

let s: TestServer;
const requestAs = requester(() => s);
const who: Record<string, Credentials> = {};

/** POST /admin/compact as one identity (a certificate, a token, or neither). */
const compactAs = async (c: Credentials) => {
  const r = await requestAs(c, 'POST', '/admin/compact');
  return { status: r.status, body: r.json };
};

async function certUser(name: string): Promise<Credentials> {
  const issued = await issueClientCertificate(s.pki, { commonName: name, organizations: ['operators'] });
  return { cert: issued.certPem, key: issued.keyPem! };
}

before(async () => {
  s = await startTestServer();
  who.admin = { cert: s.pki.adminCertPem, key: s.pki.adminKeyPem };
  who.carol = await certUser('carol');
  who.alice = await certUser('alice');
  who.dave = await certUser('dave');
  assert.equal((await s.kubectl(['create', 'namespace', 'team-a'])).code, 0);
  for (const args of [
    ['create', 'clusterrolebinding', 'carol-cluster-admin', '--clusterrole=cluster-admin', '--user=carol'],
    ['create', 'clusterrolebinding', 'alice-admin-everywhere', '--clusterrole=admin', '--user=alice'],
    ['create', 'rolebinding', 'dave-admin', '-n', 'team-a', '--clusterrole=admin', '--user=dave'],
    ['create', 'serviceaccount', 'ops', '-n', 'team-a'],
    ['create', 'clusterrolebinding', 'ops-edit', '--clusterrole=edit', '--serviceaccount=team-a:ops'],
  ]) {
    const r = await s.kubectl(args);
    assert.equal(r.code, 0, r.stderr);
  }
  const token = await s.kubectl(['create', 'token', 'ops', '-n', 'team-a']);
  assert.equal(token.code, 0, token.stderr);
  who.ops = { token: token.stdout.trim() };
});

after(async () => {
  await s?.stop();
});

test('system:masters and a user bound to cluster-admin compact the log', async () => {
  for (const name of ['admin', 'carol']) {
    // The binding is in force once RBAC's index has seen it: ask a bounded number of times.
    let r = await compactAs(who[name]);
    for (let i = 0; i < 50 && r.status === 403; i++) r = await compactAs(who[name]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(String(r.body.compactedResourceVersion), /^\d+$/);
  }
});

test('anyone else gets kube\'s 403 for a non-resource path', async () => {
  for (const [name, user] of [['alice', 'alice'], ['dave', 'dave'], ['ops', 'system:serviceaccount:team-a:ops']]) {
    const r = await compactAs(who[name]);
    assert.equal(r.status, 403, name);
    assert.equal(r.body.reason, 'Forbidden');
    assert.equal(r.body.message, `forbidden: User "${user}" cannot post path "/admin/compact"`);
  }
  const anonymous = await compactAs({});
  assert.equal(anonymous.status, 403);
  assert.equal(anonymous.body.message, 'forbidden: User "system:anonymous" cannot post path "/admin/compact"');
});

test('a token that fails is 401, not anonymous', async () => {
  const r = await compactAs({ token: 'not-a-token' });
  assert.equal(r.status, 401);
  assert.equal(r.body.reason, 'Unauthorized');
});
