// A service-account token survives `hearth backup` and `restore`: the signing key travels with the
// CA (pki/sa.key, sa.pub), and the ServiceAccount with its uid with the store, so a token minted
// before the backup still authenticates against the restored server (as a kube cluster restored
// from an etcd snapshot with the same --service-account-key-file keeps accepting its tokens).
// Real processes and the real commands, as test/e2e/storage/backup-restore.test.ts runs them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHearthProcess, stopHearthProcess, runHearth, adminClient, type HearthProcess } from '../../helpers/hearth-process.ts';

/** SelfSubjectReview with a bearer token only (no client certificate): status and the user it names. */
function whoamiWithToken(url: string, caPem: string, token: string): Promise<{ status: number; username?: string; uid?: string }> {
  const body = Buffer.from(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
  return new Promise((resolve, reject) => {
    const req = https.request(`${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, { method: 'POST', ca: caPem, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      let t = '';
      res.on('data', (c) => (t += c));
      res.on('end', () => {
        const user = res.statusCode === 201 ? JSON.parse(t).status.userInfo : undefined;
        resolve({ status: res.statusCode!, username: user?.username, uid: user?.uid });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('a service-account token minted before a backup authenticates against the restored server', async () => {
  const root = mkdtempSync(join(tmpdir(), 'hearth-sa-restore-'));
  const source = join(root, 'source');
  const backup = join(root, 'backup');
  const restored = join(root, 'restored');
  let a: HearthProcess | undefined;
  let b: HearthProcess | undefined;
  try {
    a = await startHearthProcess(source);
    const reqA = adminClient(source);
    const sa = await reqA('POST', `${a.url}/api/v1/namespaces/default/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'keeper' } });
    assert.equal(sa.status, 201, JSON.stringify(sa.json));
    const tr = await reqA('POST', `${a.url}/api/v1/namespaces/default/serviceaccounts/keeper/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    assert.equal(tr.status, 201, JSON.stringify(tr.json));
    const token: string = tr.json.status.token;
    const ca = readFileSync(join(source, 'pki', 'ca.crt'), 'utf8');
    const before = await whoamiWithToken(a.url, ca, token);
    assert.deepEqual(before, { status: 201, username: 'system:serviceaccount:default:keeper', uid: sa.json.metadata.uid });

    const r = await runHearth(['backup', '--data-dir', source, '--output', backup]);
    assert.equal(r.code, 0, r.stderr);
    await stopHearthProcess(a);
    a = undefined;
    const restore = await runHearth(['restore', '--data-dir', restored, '--from', backup]);
    assert.equal(restore.code, 0, restore.stderr);
    b = await startHearthProcess(restored);
    assert.deepEqual(await whoamiWithToken(b.url, ca, token), before);
    // The restored ServiceAccount deleted: the token is refused there (a fresh process: nothing cached).
    const reqB = adminClient(restored);
    assert.equal((await reqB('DELETE', `${b.url}/api/v1/namespaces/default/serviceaccounts/keeper`)).status, 200);
    await stopHearthProcess(b);
    b = await startHearthProcess(restored);
    assert.equal((await whoamiWithToken(b.url, ca, token)).status, 401);
  } finally {
    if (a) await stopHearthProcess(a);
    if (b) await stopHearthProcess(b);
    rmSync(root, { recursive: true, force: true });
  }
});
