// Backup, restore and scheduled snapshots through the real commands (`hearth backup`,
// `restore`, `snapshots` and the server's --snapshot-interval): a backup taken under a write load
// restores to exactly the objects the source held at the backup's resourceVersion, with the same
// CA, and a resourceVersion sequence that continues above every one the old server could have
// handed out (older ones answer 410 Gone, as after etcdutl's --bump-revision --mark-compacted);
// restore refuses a held directory, an existing store without --force, a foreign CA, a bad
// checksum and a corrupt store, and leaves the directory as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync, statSync, readdirSync, writeFileSync, cpSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { startHearthProcess, stopHearthProcess, runHearth, adminClient, freePort, type HearthProcess, type AdminRequest } from '../../helpers/hearth-process.ts';

const configMap = (ns: string, name: string, i: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { i: String(i), payload: 'p'.repeat(1500) } });

async function createObjects(req: AdminRequest, url: string, count: number, prefix = 'seed'): Promise<void> {
  for (let i = 0; i < count; i++) {
    const r = await req('POST', `${url}/api/v1/namespaces/default/configmaps`, configMap('default', `${prefix}-${i}`, i));
    assert.equal(r.status, 201, JSON.stringify(r.json));
  }
}

/** Creates, updates and deletes configmaps from a few clients until stopped; counts acknowledged writes. */
function writeLoad(req: AdminRequest, url: string) {
  let running = true;
  let acked = 0;
  const loops = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; running; i++) {
      const name = `load-${w}-${i % 25}`;
      const path = `${url}/api/v1/namespaces/default/configmaps`;
      const op = Math.floor(i / 25) % 3;
      const r = op === 0 ? await req('POST', path, configMap('default', name, i)) : op === 1 ? await req('PUT', `${path}/${name}`, configMap('default', name, i)) : await req('DELETE', `${path}/${name}`);
      if (r.status < 300) acked++;
    }
  });
  return {
    get acked() {
      return acked;
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Every file under dir with its bytes' hash, but the lock (whose holder's pid restore records there). */
function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(dir)) return files;
  for (const f of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, f);
    if (statSync(p).isFile() && !f.startsWith('hearth.lock')) files.set(f, createHash('sha256').update(readFileSync(p)).digest('hex'));
  }
  return files;
}

const manifestOf = (backup: string) => JSON.parse(readFileSync(join(backup, 'manifest.json'), 'utf8'));

test('a backup taken under a write load restores to the objects the server held at its resourceVersion, with the same CA, and resourceVersions continue above every old one', async () => {
  const root = mkdtempSync(join(tmpdir(), 'hearth-backup-'));
  const source = join(root, 'source');
  const backup = join(root, 'backup');
  const restored = join(root, 'restored');
  let a: HearthProcess | undefined;
  let b: HearthProcess | undefined;
  try {
    // One address for both, as a restored control plane keeps its own: the URL kube-public/cluster-info
    // publishes stays, so the restored objects are the backed-up ones.
    const port = String(await freePort());
    a = await startHearthProcess(source, ['--secure-port', port]);
    const reqA = adminClient(source);
    await createObjects(reqA, a.url, 150);
    const load = writeLoad(reqA, a.url);
    const ackedBefore = load.acked;
    const r = await runHearth(['backup', '--data-dir', source, '--output', backup]);
    const ackedDuring = load.acked - ackedBefore;
    await load.stop();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`backing up the running server \\(pid ${a.child.pid}\\)`));
    assert.ok(ackedDuring > 0, 'writes went on while the backup ran');
    const manifest = manifestOf(backup);
    const rv = Number(manifest.resourceVersion);
    assert.equal(manifest.schemaVersion, readdirSync('migrations').filter((f) => f.endsWith('.sql')).length);
    // the service-account signing key travels with the CA: a restored server still verifies its tokens
    assert.deepEqual(Object.keys(manifest.files).sort(), ['hearth.db', 'pki/admin.crt', 'pki/admin.key', 'pki/apiserver.crt', 'pki/apiserver.key', 'pki/ca.crt', 'pki/ca.key', 'pki/sa.key', 'pki/sa.pub']);

    // What the source held at the backup's resourceVersion, read from its history.
    const at = async (req: AdminRequest, url: string, resource: string, query = `?resourceVersion=${rv}&resourceVersionMatch=Exact`) => {
      const list = await req('GET', `${url}${resource}${query}`);
      assert.equal(list.status, 200, JSON.stringify(list.json));
      return list.json.items;
    };
    const wantConfigMaps = await at(reqA, a.url, '/api/v1/configmaps');
    const wantNamespaces = await at(reqA, a.url, '/api/v1/namespaces');
    const newestOld = Number((await reqA('GET', `${a.url}/api/v1/configmaps?limit=1`)).json.metadata.resourceVersion);
    assert.ok(newestOld > rv, 'the source went on past the backup');
    await stopHearthProcess(a);
    a = undefined;

    const restore = await runHearth(['restore', '--data-dir', restored, '--from', backup]);
    assert.equal(restore.code, 0, restore.stderr);
    b = await startHearthProcess(restored, ['--secure-port', port]);
    assert.equal(readFileSync(join(restored, 'pki', 'ca.crt'), 'utf8'), readFileSync(join(source, 'pki', 'ca.crt'), 'utf8'));
    // The old admin certificate still works: same CA, same credentials.
    const reqB = adminClient(source);
    assert.deepEqual(await at(reqB, b.url, '/api/v1/configmaps', ''), wantConfigMaps);
    assert.deepEqual(await at(reqB, b.url, '/api/v1/namespaces', ''), wantNamespaces);

    const next = await reqB('POST', `${b.url}/api/v1/namespaces/default/configmaps`, configMap('default', 'after-restore', 0));
    assert.equal(next.status, 201);
    assert.ok(Number(next.json.metadata.resourceVersion) > newestOld, `${next.json.metadata.resourceVersion} is not above every resourceVersion the old server handed out (${newestOld})`);
    // A client that watched the old server is told to relist rather than resuming on history that never happened here.
    const stale = await reqB('GET', `${b.url}/api/v1/configmaps?resourceVersion=${newestOld}&resourceVersionMatch=Exact`);
    assert.equal(stale.status, 410);
    assert.equal(stale.json.reason, 'Expired');
  } finally {
    if (a) await stopHearthProcess(a);
    if (b) await stopHearthProcess(b);
    rmSync(root, { recursive: true, force: true });
  }
});

test('restore refuses a directory a server holds, an existing store without --force, a foreign CA, a bad checksum and a corrupt store, and leaves the directory as it was', async () => {
  const root = mkdtempSync(join(tmpdir(), 'hearth-restore-refusals-'));
  const source = join(root, 'source');
  const backup = join(root, 'backup');
  let a: HearthProcess | undefined;
  try {
    a = await startHearthProcess(source);
    await createObjects(adminClient(source), a.url, 20);
    assert.equal((await runHearth(['backup', '--data-dir', source, '--output', backup])).code, 0);
    assert.equal((await runHearth(['backup', '--data-dir', source, '--output', backup])).code, 1, 'a backup never overwrites one');

    // Held by a running server, even with --force.
    const held = await runHearth(['restore', '--data-dir', source, '--from', backup, '--force']);
    assert.equal(held.code, 1);
    assert.match(held.stderr, new RegExp(`in use by another hearth process \\(pid ${a.child.pid}\\)`));
    await createObjects(adminClient(source), a.url, 1, 'still-serving');
    await stopHearthProcess(a);
    a = undefined;

    // A store is there: not without --force.
    const before = filesOf(source);
    const existing = await runHearth(['restore', '--data-dir', source, '--from', backup]);
    assert.equal(existing.code, 1);
    assert.match(existing.stderr, /already has a store .*pass --force/);
    assert.deepEqual(filesOf(source), before);

    // A directory holding another CA (its store lost): not without --force.
    const other = join(root, 'other');
    await stopHearthProcess(await startHearthProcess(other));
    rmSync(join(other, 'hearth.db'));
    const otherBefore = filesOf(other);
    const foreign = await runHearth(['restore', '--data-dir', other, '--from', backup]);
    assert.equal(foreign.code, 1);
    assert.match(foreign.stderr, /is not the CA of the backup/);
    assert.deepEqual(filesOf(other), otherBefore);

    // A byte changed: the checksum says so.
    const tampered = join(root, 'tampered');
    cpSync(backup, tampered, { recursive: true });
    overwrite(join(tampered, 'hearth.db'), statSync(join(tampered, 'hearth.db')).size - 100, Buffer.from('x'));
    const fresh = join(root, 'fresh');
    const badSum = await runHearth(['restore', '--data-dir', fresh, '--from', tampered]);
    assert.equal(badSum.code, 1);
    assert.match(badSum.stderr, /does not match its checksum/);
    assert.deepEqual([...filesOf(fresh).keys()], []);

    // Damaged, with a manifest made to match: integrity_check finds it.
    const corrupt = join(root, 'corrupt');
    cpSync(backup, corrupt, { recursive: true });
    const db = join(corrupt, 'hearth.db');
    overwrite(db, Math.floor(statSync(db).size / 2 / 4096) * 4096, randomBytes(16384));
    const m = manifestOf(corrupt);
    m.files['hearth.db'].sha256 = createHash('sha256').update(readFileSync(db)).digest('hex');
    writeFileSync(join(corrupt, 'manifest.json'), JSON.stringify(m));
    const damaged = await runHearth(['restore', '--data-dir', fresh, '--from', corrupt]);
    assert.equal(damaged.code, 1);
    assert.match(damaged.stderr, /integrity_check|cannot be read/);
    assert.deepEqual([...filesOf(fresh).keys()], []);

    // Not a backup at all.
    const notBackup = await runHearth(['restore', '--data-dir', fresh, '--from', root]);
    assert.equal(notBackup.code, 1);
    assert.match(notBackup.stderr, /is not a hearth backup/);

    // With --force over the stopped source, after a stale WAL was left beside its store: the backup's objects, not the WAL's.
    writeFileSync(join(source, 'hearth.db-wal'), randomBytes(64 * 1024));
    const forced = await runHearth(['restore', '--data-dir', source, '--from', backup, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(existsSync(join(source, 'hearth.db-wal')), false);
    a = await startHearthProcess(source);
    const names = (await adminClient(source)('GET', `${a.url}/api/v1/namespaces/default/configmaps`)).json.items.map((i: any) => i.metadata.name);
    // (kube-root-ca.crt, which the root CA publisher keeps in every namespace, is not one of the test's)
    assert.equal(names.filter((n: string) => n !== 'kube-root-ca.crt').length, 20);
    assert.ok(!names.includes('still-serving-0'), 'written after the backup');
  } finally {
    if (a) await stopHearthProcess(a);
    rmSync(root, { recursive: true, force: true });
  }
});

test('a backup of a stopped data directory', async () => {
  const root = mkdtempSync(join(tmpdir(), 'hearth-backup-stopped-'));
  const source = join(root, 'source');
  try {
    const a = await startHearthProcess(source);
    await createObjects(adminClient(source), a.url, 5);
    const rv = (await adminClient(source)('GET', `${a.url}/api/v1/configmaps?limit=1`)).json.metadata.resourceVersion;
    await stopHearthProcess(a);
    const r = await runHearth(['backup', '--data-dir', source, '--output', join(root, 'backup')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /not in use: backing up the stopped store/);
    assert.equal(manifestOf(join(root, 'backup')).resourceVersion, rv);
    const missing = await runHearth(['backup', '--data-dir', join(root, 'nothing'), '--output', join(root, 'backup2')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /there is no store to back up/);
    assert.equal(existsSync(join(root, 'nothing')), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('scheduled snapshots: taken every --snapshot-interval, the newest --snapshot-retention kept, listed by `snapshots`, and restorable', async () => {
  const root = mkdtempSync(join(tmpdir(), 'hearth-snapshots-'));
  const dataDir = join(root, 'data');
  let p: HearthProcess | undefined;
  try {
    p = await startHearthProcess(dataDir, ['--snapshot-interval', '1s', '--snapshot-retention', '2']);
    await createObjects(adminClient(dataDir), p.url, 3);
    const lastRv = Number((await adminClient(dataDir)('GET', `${p.url}/api/v1/namespaces/default/configmaps/seed-2`)).json.metadata.resourceVersion);
    const server = p;
    // (hearth's log, which says when a snapshot is written, is on stderr)
    const written = () => [...server.stderr.matchAll(/snapshot (\S+) written at resourceVersion (\d+)/g)].map((m) => ({ name: m[1], rv: m[2] }));
    // Three snapshots or more, each after the objects above were written.
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (written().filter((s) => Number(s.rv) >= lastRv).length >= 3) resolve();
        else if (server.child.exitCode !== null) reject(new Error(server.stderr));
        else setTimeout(check, 100);
      };
      check();
    });
    await stopHearthProcess(p);
    p = undefined;
    const taken = written();
    const list = await runHearth(['snapshots', '--data-dir', dataDir]);
    assert.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trim().split('\n');
    assert.match(lines[0], /^NAME\s+CREATED\s+RESOURCEVERSION\s+SIZE$/);
    const rows = lines.slice(1).map((l) => l.split(/\s+/));
    assert.deepEqual(rows.map((r) => [r[0], r[2]]), taken.slice(-2).map((s) => [s.name, s.rv]));
    for (const r of rows) assert.equal(Number(r[3]), Object.values(manifestOf(join(dataDir, 'snapshots', r[0])).files).reduce((n: number, f: any) => n + f.size, 0));

    const newest = join(dataDir, 'snapshots', taken.at(-1)!.name);
    const restored = join(root, 'restored');
    assert.equal((await runHearth(['restore', '--data-dir', restored, '--from', newest])).code, 0);
    p = await startHearthProcess(restored);
    const names = (await adminClient(restored)('GET', `${p.url}/api/v1/namespaces/default/configmaps`)).json.items.map((i: any) => i.metadata.name);
    assert.deepEqual(names.filter((n: string) => n !== 'kube-root-ca.crt'), ['seed-0', 'seed-1', 'seed-2']);
  } finally {
    if (p) await stopHearthProcess(p);
    rmSync(root, { recursive: true, force: true });
  }
});

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}
