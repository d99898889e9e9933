// The data directory's life through the real program: one server per directory (a second one
// exits naming the directory and the holder's pid, and changes nothing), a taken port fails before
// the directory is created, a kill -9'd holder leaves no stale lock, admin.kubeconfig keeps the
// user's edits, and a clean stop leaves hearth.db complete (no WAL content) so a copy of a
// stopped server's hearth.db and pki/ is a backup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync, statSync, readdirSync, writeFileSync, cpSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { execFile } from 'node:child_process';
import YAML from 'yaml';
import Database from 'better-sqlite3';
import { freePort, startHearthProcess, stopHearthProcess, runHearth, adminClient } from '../../helpers/hearth-process.ts';
import { WITHOUT_NAMESPACE_CONTENT } from '../../helpers/server.ts';
import { KUBECTL } from '../../helpers/server.ts';

function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Every file under dir with its bytes (what "changes nothing" compares). */
function snapshotOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const f of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, f);
    if (statSync(p).isFile()) files.set(f, readFileSync(p).toString('base64'));
  }
  return files;
}

const configMap = (name: string, data: Record<string, string> = { k: name }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

test('a second server on the same data directory exits non-zero naming the directory and the pid, changes nothing, and the first keeps serving', async () => {
  const root = tempDir('hearth-lock-');
  const dataDir = join(root, 'data');
  const first = await startHearthProcess(dataDir);
  try {
    const req = adminClient(dataDir);
    assert.equal((await req('POST', `${first.url}/api/v1/namespaces/default/configmaps`, configMap('before'))).status, 201);
    // The store's own files change under the running server; the rest must not.
    const before = snapshotOf(dataDir);
    for (const f of before.keys()) if (f.startsWith('hearth.db')) before.delete(f);

    // On another port: refused by the lock.
    const second = await runHearth(['--data-dir', dataDir, '--secure-port', String(await freePort())]);
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, new RegExp(`data directory ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another hearth process \\(pid ${first.child.pid}\\)`));
    // On the first one's port: the same message, not only "address in use".
    const samePort = await runHearth(['--data-dir', dataDir, '--secure-port', new URL(first.url).port]);
    assert.notEqual(samePort.code, 0);
    assert.match(samePort.stderr, new RegExp(`in use by another hearth process \\(pid ${first.child.pid}\\)`));

    const after = snapshotOf(dataDir);
    for (const [f, bytes] of before) assert.equal(after.get(f), bytes, `${f} changed`);
    for (const f of after.keys()) assert.ok(before.has(f) || f.startsWith('hearth.db'), `${f} appeared`);
    // The first server still writes (the second one broke it before: UNIQUE constraint failed: events.rv).
    for (let i = 0; i < 5; i++) assert.equal((await req('POST', `${first.url}/api/v1/namespaces/default/configmaps`, configMap(`after-${i}`))).status, 201);
  } finally {
    await stopHearthProcess(first);
    rmSync(root, { recursive: true, force: true });
  }
});

test("a kill -9'd server's directory starts again: the lock dies with its holder", async () => {
  const dataDir = tempDir('hearth-lock-kill-');
  try {
    let p = await startHearthProcess(dataDir);
    assert.equal(await stopHearthProcess(p, 'SIGKILL'), null);
    p = await startHearthProcess(dataDir);
    assert.equal((await adminClient(dataDir)('POST', `${p.url}/api/v1/namespaces/default/configmaps`, configMap('again'))).status, 201);
    assert.equal(await stopHearthProcess(p), 0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a taken port fails before the data directory is created or touched', async () => {
  const root = tempDir('hearth-port-');
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    const fresh = join(root, 'fresh');
    const r = await runHearth(['--data-dir', fresh, '--secure-port', String(port)]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /EADDRINUSE/);
    assert.equal(existsSync(fresh), false, 'the data directory was created');

    const empty = join(root, 'empty');
    mkdirSync(empty);
    const again = await runHearth(['--data-dir', empty, '--secure-port', String(port)]);
    assert.notEqual(again.code, 0);
    assert.deepEqual(readdirSync(empty), []);
  } finally {
    blocker.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test("admin.kubeconfig: a user's edits survive a restart, the server address and admin credentials are kept correct", async () => {
  const dataDir = tempDir('hearth-kubeconfig-');
  const file = join(dataDir, 'admin.kubeconfig');
  try {
    let p = await startHearthProcess(dataDir);
    await adminClient(dataDir)('POST', `${p.url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    await adminClient(dataDir)('POST', `${p.url}/api/v1/namespaces/team/configmaps`, configMap('in-team'));
    await stopHearthProcess(p);

    const edited = YAML.parse(readFileSync(file, 'utf8'));
    // Context renamed and given a namespace; our own entries made wrong; entries of the user's own added.
    edited.contexts[0].name = 'mine';
    edited.contexts[0].context.namespace = 'team';
    edited['current-context'] = 'mine';
    edited.clusters[0].cluster.server = 'https://127.0.0.1:1';
    edited.users[0].user['client-key-data'] = Buffer.from('not a key').toString('base64');
    edited.clusters.push({ name: 'elsewhere', cluster: { server: 'https://10.0.0.1:6443' } });
    edited.users.push({ name: 'someone', user: { token: 'abc' } });
    edited.contexts.push({ name: 'other', context: { cluster: 'elsewhere', user: 'someone' } });
    writeFileSync(file, '# my notes\n' + YAML.stringify(edited));

    p = await startHearthProcess(dataDir);
    try {
      const text = readFileSync(file, 'utf8');
      const kc = YAML.parse(text);
      assert.match(text, /# my notes/);
      assert.equal(kc['current-context'], 'mine');
      assert.deepEqual(kc.contexts.map((c: any) => c.name), ['mine', 'other']);
      assert.equal(kc.contexts[0].context.namespace, 'team');
      assert.deepEqual(kc.clusters.map((c: any) => c.name), ['hearth', 'elsewhere']);
      assert.equal(kc.clusters[1].cluster.server, 'https://10.0.0.1:6443');
      assert.deepEqual(kc.users[1], { name: 'someone', user: { token: 'abc' } });
      assert.equal(kc.clusters[0].cluster.server, p.url);
      assert.equal(Buffer.from(kc.users[0].user['client-key-data'], 'base64').toString(), readFileSync(join(dataDir, 'pki', 'admin.key'), 'utf8'));
      // kubectl works with it, in the user's namespace.
      const out = await new Promise<string>((resolve, reject) =>
        execFile(KUBECTL, ['--kubeconfig', file, 'get', 'configmaps', '-o', 'name'], (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout))),
      );
      assert.match(out, /configmap\/in-team/);
    } finally {
      await stopHearthProcess(p);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** The store holds only what the test wrote: no namespace gets a ServiceAccount or kube-root-ca.crt. */
const STORE_ONLY_ARGS = ['--controllers', WITHOUT_NAMESPACE_CONTENT.join(',')];

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`a clean stop (${signal}) leaves no WAL content, even with another connection open on the store: hearth.db and pki/ copied from the stopped server are a complete backup`, async () => {
    const root = tempDir('hearth-clean-stop-');
    const dataDir = join(root, 'data');
    try {
      let p = await startHearthProcess(dataDir, STORE_ONLY_ARGS);
      const req = adminClient(dataDir);
      const written = new Map<string, string>();
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const r = await req('POST', `${p.url}/api/v1/namespaces/default/configmaps`, configMap(`cm-${i}`, { payload: 'x'.repeat(2000) }));
          assert.equal(r.status, 201);
          written.set(r.json.metadata.name, r.json.metadata.resourceVersion);
        }),
      );
      const wal = join(dataDir, 'hearth.db-wal');
      assert.ok(statSync(wal).size > 0, 'the writes went to the WAL first');
      // Another process looking at the store (a sqlite3 shell, a monitoring tool): with it open
      // the server's connection is not SQLite's last, which would otherwise empty the WAL itself.
      const onlooker = new Database(join(dataDir, 'hearth.db'));
      onlooker.prepare('SELECT count(*) FROM objects').get();
      try {
        assert.equal(await stopHearthProcess(p, signal), 0);
        assert.ok(!existsSync(wal) || statSync(wal).size === 0, 'the WAL still holds frames');
      } finally {
        onlooker.close();
      }

      const copy = join(root, 'copy');
      mkdirSync(copy);
      cpSync(join(dataDir, 'hearth.db'), join(copy, 'hearth.db'));
      cpSync(join(dataDir, 'pki'), join(copy, 'pki'), { recursive: true });
      p = await startHearthProcess(copy, STORE_ONLY_ARGS);
      try {
        const list = await adminClient(copy)('GET', `${p.url}/api/v1/namespaces/default/configmaps`);
        const got = new Map<string, string>(list.json.items.map((i: any) => [i.metadata.name, i.metadata.resourceVersion]));
        assert.deepEqual(got, written);
        assert.equal(readFileSync(join(copy, 'pki', 'ca.crt'), 'utf8'), readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'));
      } finally {
        await stopHearthProcess(p);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
}
