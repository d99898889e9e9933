// The real start command (npm start's bundle, in a child process) on a data directory whose
// store is damaged, not a database, empty or missing beside an existing cluster's credentials,
// or in a directory this user cannot write: each is refused with a message that names the file
// and the way out, exits non-zero and changes nothing; --initialize starts an empty store on purpose.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminClient, freePort, startHearthProcess, stopHearthProcess, runHearth } from '../../helpers/hearth-process.ts';

/** A data directory a server has run on (with objects), stopped cleanly; removed after fn. */
async function withStoppedCluster(objects: number, fn: (dataDir: string, port: number) => Promise<void>): Promise<void> {
  const parent = mkdtempSync(join(tmpdir(), 'hearth-startup-'));
  // (other users may enter: a test run as root starts the server as one, see below)
  chmodSync(parent, 0o755);
  const dataDir = join(parent, 'data');
  const port = await freePort();
  try {
    const p = await startHearthProcess(dataDir, ['--secure-port', String(port)]);
    const req = adminClient(dataDir);
    for (let i = 0; i < objects; i += 25) {
      await Promise.all(Array.from({ length: Math.min(25, objects - i) }, (_, j) =>
        req('POST', `https://127.0.0.1:${port}/api/v1/namespaces/default/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i + j}` }, data: { v: 'x'.repeat(2000) } }).then((r) => assert.equal(r.status, 201))));
    }
    await stopHearthProcess(p, 'SIGTERM');
    await fn(dataDir, port);
  } finally {
    chmodSync(dataDir, 0o755);
    rmSync(parent, { recursive: true, force: true });
  }
}

const unchanged = (dataDir: string) => {
  const files = ['pki/ca.crt', 'pki/ca.key', 'admin.kubeconfig'];
  const before = files.map((f) => readFileSync(join(dataDir, f), 'utf8'));
  return () => files.forEach((f, i) => assert.equal(readFileSync(join(dataDir, f), 'utf8'), before[i], `${f} changed`));
};

test('16 KiB of garbage in the middle of the store: refused, naming the file and the restore command', async () => {
  await withStoppedCluster(200, async (dataDir) => {
    const file = join(dataDir, 'hearth.db');
    const size = statSync(file).size;
    const fd = openSync(file, 'r+');
    const garbage = Buffer.alloc(16 * 1024);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 131 + 7) & 0xff;
    writeSync(fd, garbage, 0, garbage.length, Math.floor(size / 2 / 4096) * 4096);
    closeSync(fd);
    const same = unchanged(dataDir);
    const r = await runHearth(['--data-dir', dataDir, '--secure-port', '0']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stderr.includes(`the store ${file} is damaged`), r.stderr);
    assert.match(r.stderr, /npm run restore -- --data-dir DIR --from BACKUP/);
    assert.doesNotMatch(r.stdout, /serving/);
    same();
  });
});

test('a store that is not a database: refused, naming the file', async () => {
  await withStoppedCluster(0, async (dataDir) => {
    const file = join(dataDir, 'hearth.db');
    writeFileSync(file, 'this is not a database, but it is long enough to have a header of 100 bytes: '.repeat(4));
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    const r = await runHearth(['--data-dir', dataDir, '--secure-port', '0']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stderr.includes(`${file} is not a hearth store`), r.stderr);
    assert.match(r.stderr, /npm run restore/);
  });
});

test('a store truncated to 0 bytes (or missing) beside the PKI: refused; --initialize starts an empty one with the same CA', async () => {
  await withStoppedCluster(3, async (dataDir, port) => {
    const file = join(dataDir, 'hearth.db');
    truncateSync(file, 0);
    rmSync(`${file}-wal`, { force: true });
    const same = unchanged(dataDir);
    const empty = await runHearth(['--data-dir', dataDir, '--secure-port', '0']);
    assert.equal(empty.code, 1, empty.stdout + empty.stderr);
    assert.ok(empty.stderr.includes(`has a cluster's credentials (pki, admin.kubeconfig) but its store ${file} is empty (0 bytes)`), empty.stderr);
    assert.match(empty.stderr, /npm run restore -- --data-dir DIR --from BACKUP/);
    assert.match(empty.stderr, /--initialize/);
    assert.equal(statSync(file).size, 0, 'the store is left as it was');
    same();

    rmSync(file);
    const missing = await runHearth(['--data-dir', dataDir, '--secure-port', '0']);
    assert.equal(missing.code, 1);
    assert.ok(missing.stderr.includes(`but its store ${file} is missing`), missing.stderr);
    same();

    const p = await startHearthProcess(dataDir, ['--secure-port', String(port), '--initialize']);
    try {
      const caAfter = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
      same();
      const list = await adminClient(dataDir)('GET', `https://127.0.0.1:${port}/api/v1/namespaces/default/configmaps`);
      assert.equal(list.status, 200, 'the same admin certificate is accepted');
      // An empty cluster: nothing but what the root CA publisher keeps there, with the kept CA.
      const items: { metadata: { name: string }; data?: Record<string, string> }[] = list.json.items;
      assert.deepEqual(items.filter((i) => i.metadata.name !== 'kube-root-ca.crt'), [], 'an empty cluster');
      for (const i of items) assert.equal(i.data?.['ca.crt'], caAfter);
      assert.ok(caAfter.length > 0);
    } finally {
      await stopHearthProcess(p, 'SIGTERM');
    }
    // Once it has a store, it starts without the flag.
    const again = await startHearthProcess(dataDir, ['--secure-port', String(port)]);
    await stopHearthProcess(again, 'SIGTERM');
  });
});

test('a data directory this user cannot write: refused, naming the directory and why', async () => {
  await withStoppedCluster(0, async (dataDir) => {
    chmodSync(dataDir, 0o555);
    // Root may write anywhere: then the server runs as another user, as it would in production.
    const r = await runHearth(['--data-dir', dataDir, '--secure-port', '0'], process.getuid?.() === 0 ? { uid: 65534 } : {});
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stderr.includes(dataDir), r.stderr);
    assert.match(r.stderr, /not writable/);
    assert.match(r.stderr, /permission denied/);
    assert.doesNotMatch(r.stderr, /unable to open database file/);
  });
});
