// What the store does when its bytes or its disk fail, seen through the HTTP API: a row damaged
// on disk is a 500 for that object only (and a list that meets it names it instead of answering
// 200 with a broken body), the unsafe delete removes it; a full disk answers writes with a
// Status and leaves nothing behind while reads go on, and writes work again once space is back;
// deleting most objects and compacting gives the space back to the filesystem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startTestServer, WITHOUT_NAMESPACE_CONTENT, type TestServer } from '../../helpers/server.ts';
import { storageCounters } from '../../../server/storage/rows/corrupt-rows.ts';
import { checksum, tableCrc32 } from '../../../server/storage/rows/checksum.ts';
import { loadMigrations, migrate } from '../../../server/storage/sqlite/database.ts';
import { encodeObject } from '../../../server/storage/rows/codec.ts';
import { SqliteBackend } from '../../../server/storage/sqlite/backend.ts';

const configMap = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

/** Changes stored rows of a stopped server's file (as a damaged disk would). */
function editStore(dataDir: string, edit: (db: Database.Database) => void): void {
  const db = new Database(join(dataDir, 'hearth.db'));
  try {
    edit(db);
  } finally {
    db.close();
  }
}

/** The bytes of a stored row with 64 bytes in their middle overwritten (its JSON prefix intact, so only a check of its bytes tells). */
function damaged(data: Buffer): Buffer {
  const out = Buffer.from(data);
  const at = Math.floor(out.length / 2);
  for (let i = 0; i < 64 && at + i < out.length - 1; i++) out[at + i] = (i * 37 + 1) % 32; // control bytes: never valid inside JSON text
  return out;
}

test('the table CRC-32 (older Node) equals the native one', () => {
  for (const text of ['', 'a', 'hello world', '{"apiVersion":"v1"}'.repeat(50)]) {
    const b = Buffer.from(text);
    assert.equal(tableCrc32(b), checksum(b), text.slice(0, 20));
  }
});

test('a row damaged on disk: its GET and every list that meets it answer 500 naming it, other objects are served, the unsafe delete removes it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-corrupt-'));
  let s: TestServer | undefined;
  try {
    s = await startTestServer({ dataDir, options: { controllers: WITHOUT_NAMESPACE_CONTENT } });
    for (const ns of ['t', 'other']) assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
    for (const name of ['a-good', 'bad', 'z-good']) assert.equal((await s.request('POST', '/api/v1/namespaces/t/configmaps', { body: { ...configMap(name), metadata: { name, labels: { app: 'x' } } } })).status, 201);
    assert.equal((await s.request('POST', '/api/v1/namespaces/other/configmaps', { body: configMap('fine') })).status, 201);
    const uid = (await s.request('GET', '/api/v1/namespaces/t/configmaps/bad')).json().metadata.uid;
    await s.stop();
    s = undefined;
    editStore(dataDir, (db) => {
      const row = db.prepare(`SELECT data FROM objects WHERE res = 'configmaps' AND ns = 't' AND name = 'bad'`).get() as { data: Buffer };
      db.prepare(`UPDATE objects SET data = ? WHERE res = 'configmaps' AND ns = 't' AND name = 'bad'`).run(damaged(row.data));
      // Its event too: a watch replaying it must not stream the damaged bytes.
      db.prepare(`UPDATE events SET data = ? WHERE res = 'configmaps' AND ns = 't' AND name = 'bad'`).run(damaged(row.data));
    });

    s = await startTestServer({ dataDir, options: { controllers: WITHOUT_NAMESPACE_CONTENT } });
    const before = storageCounters.corruptObjectReads;
    const key = '/registry/configmaps/t/bad';
    const get = await s.request('GET', '/api/v1/namespaces/t/configmaps/bad');
    assert.equal(get.status, 500);
    assert.equal(get.json().kind, 'Status');
    assert.equal(get.json().reason, 'InternalError');
    assert.match(get.json().message, new RegExp(`^Internal error occurred: StorageError: corrupt object, Code: 7, Key: ${key}, ResourceVersion: \\d+, AdditionalErrorMsg: object not decodable: `));
    assert.ok(storageCounters.corruptObjectReads > before, 'the read is counted');

    // Lists that meet the row: plain JSON (served by joining stored rows), with a label
    // selector (read by SQLite), as a table (kubectl get), across namespaces: none answers 200.
    for (const path of ['/api/v1/namespaces/t/configmaps', '/api/v1/namespaces/t/configmaps?labelSelector=app%3Dx', '/api/v1/configmaps', '/api/v1/namespaces/t/configmaps?limit=2']) {
      const r = await s.request('GET', path);
      assert.equal(r.status, 500, path);
      assert.equal(r.json().reason, 'InternalError', path);
      assert.ok(r.json().message.includes(`Key: ${key}`), `${path}: ${r.text}`);
    }
    const table = await s.request('GET', '/api/v1/namespaces/t/configmaps', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.equal(table.status, 500);
    // A watch replaying its event says why in an ERROR event, and ends.
    const replay = await s.watch('/api/v1/namespaces/t/configmaps?watch=1&resourceVersion=1', () => false);
    assert.equal(replay.status, 200);
    assert.deepEqual(replay.events.map((e) => e.type), ['ERROR']);
    assert.equal(replay.events[0].object.code, 500);
    assert.ok(replay.events[0].object.message.includes(`Key: ${key}`), replay.events[0].object.message);
    // Everything else is served.
    assert.equal((await s.request('GET', '/api/v1/namespaces/t/configmaps/a-good')).status, 200);
    assert.equal((await s.request('GET', '/api/v1/namespaces/t/configmaps/z-good')).status, 200);
    assert.equal((await s.request('GET', '/api/v1/namespaces/other/configmaps')).json().items.length, 1);
    // An update of it cannot read what it would change: 500 as well, and nothing is written.
    const put = await s.request('PUT', '/api/v1/namespaces/t/configmaps/bad', { body: configMap('bad', { a: '2' }) });
    assert.equal(put.status, 500);

    // The unsafe delete: refused for a readable object and with the options it cannot take.
    const refused = await s.request('DELETE', '/api/v1/namespaces/t/configmaps/a-good?ignoreStoreReadErrorWithClusterBreakingPotential=true');
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.json().message, 'configmaps "a-good" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option');
    const withOptions = await s.request('DELETE', '/api/v1/namespaces/t/configmaps/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true&dryRun=All&gracePeriodSeconds=0');
    assert.equal(withOptions.status, 422, withOptions.text);
    assert.deepEqual(withOptions.json().details.causes.map((c: any) => c.message), ['Invalid value: true: cannot be set together with .dryRun', 'Invalid value: true: cannot be set together with .gracePeriodSeconds']);
    // A normal delete must read the object: 500.
    assert.equal((await s.request('DELETE', '/api/v1/namespaces/t/configmaps/bad')).status, 500);

    const rv = (await s.request('GET', '/api/v1/namespaces/other/configmaps')).json().metadata.resourceVersion;
    const watching = s.watch(`/api/v1/namespaces/t/configmaps?watch=1&resourceVersion=${rv}`, (e) => e.length >= 1);
    const removed = await s.request('DELETE', '/api/v1/namespaces/t/configmaps/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true');
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'bad', kind: 'configmaps' } });
    const { events } = await watching;
    assert.equal(events[0].type, 'DELETED');
    assert.equal(events[0].object.metadata.name, 'bad');
    assert.equal(events[0].object.metadata.uid, uid);
    assert.equal((await s.request('GET', '/api/v1/namespaces/t/configmaps/bad')).status, 404);
    const list = await s.request('GET', '/api/v1/namespaces/t/configmaps');
    assert.equal(list.status, 200);
    assert.deepEqual(list.json().items.map((i: any) => i.metadata.name), ['a-good', 'z-good']);
  } finally {
    await s?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a row whose bytes match their checksum but do not decode is a 500 naming it, and the server still starts and serves', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-undecodable-'));
  let s: TestServer | undefined;
  try {
    s = await startTestServer({ dataDir, options: { controllers: WITHOUT_NAMESPACE_CONTENT } });
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap('odd') })).status, 201);
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap('plain') })).status, 201);
    await s.stop();
    s = undefined;
    // Written wrong rather than damaged afterwards (its checksum matches): a truncated CBOR map.
    const bytes = Buffer.from([0xa3, 0x61, 0x61]);
    editStore(dataDir, (db) => db.prepare(`UPDATE objects SET data = ?, crc = ? WHERE res = 'configmaps' AND ns = 'default' AND name = 'odd'`).run(bytes, checksum(bytes)));
    s = await startTestServer({ dataDir, options: { controllers: WITHOUT_NAMESPACE_CONTENT } });
    const get = await s.request('GET', '/api/v1/namespaces/default/configmaps/odd');
    assert.equal(get.status, 500);
    assert.match(get.json().message, /StorageError: corrupt object, Code: 7, Key: \/registry\/configmaps\/default\/odd, .*object not decodable: /);
    const list = await s.request('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(list.status, 500, list.text);
    assert.match(list.json().message, /Key: \/registry\/configmaps\/default\/odd/);
    assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/plain')).status, 200);
    assert.equal((await s.request('DELETE', '/api/v1/namespaces/default/configmaps/odd?ignoreStoreReadErrorWithClusterBreakingPotential=true')).status, 200);
    assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
  } finally {
    await s?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a full disk: the write answers 500 with a Status, leaves no row and no event, reads go on, and writes work again once space is back', async () => {
  const s = await startTestServer({ options: { controllers: WITHOUT_NAMESPACE_CONTENT } });
  try {
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap('before') })).status, 201);
    const rv = (await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().metadata.resourceVersion;
    const watching = s.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`, (e) => e.some((x) => x.object.metadata.name === 'after'));
    const db = new Database(join(s.dataDir, 'hearth.db'), { readonly: true });
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.close();
    // The file may not grow past its size now: the writes that need new pages fail as on a full disk.
    const backend = s.eventLog.backend;
    assert.ok(backend instanceof SqliteBackend);
    await backend.limitFilePages(pages);
    const big = 'x'.repeat(256 * 1024);
    let failed: { name: string; status: number; body: any } | undefined;
    const stored: string[] = [];
    for (let i = 0; i < 64 && !failed; i++) {
      const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap(`full-${i}`, { big }) });
      if (r.status === 201) stored.push(`full-${i}`);
      else failed = { name: `full-${i}`, status: r.status, body: r.json() };
    }
    assert.ok(failed, 'a write failed once the file could not grow');
    assert.equal(failed.status, 500);
    assert.equal(failed.body.kind, 'Status');
    assert.equal(failed.body.status, 'Failure');
    assert.equal(failed.body.reason, undefined, 'no reason, as kube-apiserver answers etcd\'s "database space exceeded"');
    assert.equal(failed.body.message, 'storage write failed: database or disk is full (SQLITE_FULL)');
    // Reads go on; the failed write left nothing.
    assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/before')).status, 200);
    assert.equal((await s.request('GET', `/api/v1/namespaces/default/configmaps/${failed.name}`)).status, 404);
    const names = (await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().items.map((i: any) => i.metadata.name);
    assert.deepEqual(names.filter((n: string) => n.startsWith('full-')).sort(), [...stored].sort());

    await backend.limitFilePages(0);
    const after = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap('after') });
    assert.equal(after.status, 201, after.text);
    const retried = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap(failed.name) });
    assert.equal(retried.status, 201, 'the failed name is free');
    const { events } = await watching;
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), [...stored.map((n) => `ADDED ${n}`), 'ADDED after']);
    // Consecutive resourceVersions: the failed write took none.
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    for (let i = 1; i < rvs.length; i++) assert.equal(rvs[i], rvs[i - 1] + 1);
  } finally {
    await s.stop();
  }
});

test('deleting most objects and compacting gives the space back: the file ends within 3× of what the remaining rows hold', async () => {
  const s = await startTestServer({ options: { controllers: WITHOUT_NAMESPACE_CONTENT } });
  try {
    const file = join(s.dataDir, 'hearth.db');
    const value = 'v'.repeat(16 * 1024);
    const names = Array.from({ length: 200 }, (_, i) => `cm-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(names.slice(i, i + 20).map(async (name) => assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap(name, { value }) })).status, 201)));
    }
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(names.slice(i, i + 20).filter((_, j) => (i + j) % 10 !== 0).map(async (name) => assert.equal((await s.request('DELETE', `/api/v1/namespaces/default/configmaps/${name}`)).status, 200)));
    }
    // The WAL copied back, the file is at its largest: every row written is in it, none given back.
    const full = await sizeOnceCheckpointed(file);
    const compact = await s.request('POST', '/admin/compact');
    assert.equal(compact.status, 200, compact.text);
    assert.ok(compact.json().pagesReleased > 0, compact.text);
    assert.ok(compact.json().vacuumSlices > 0, compact.text);

    const db = new Database(file, { readonly: true });
    const rowBytes = (db.prepare('SELECT (SELECT coalesce(sum(length(data)), 0) FROM objects) + (SELECT coalesce(sum(length(data)), 0) FROM events)').pluck().get() as number);
    db.close();
    // The file is cut when the checkpointer next copies the WAL back (within milliseconds).
    const deadline = Date.now() + 20_000;
    let size = statSync(file).size;
    while (size > 3 * rowBytes && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      size = statSync(file).size;
    }
    assert.ok(size <= 3 * rowBytes, `file ${size} bytes, rows ${rowBytes} bytes (before: ${full})`);
    assert.ok(size < full / 3, `file ${size} bytes, before ${full}`);
    // What is left is intact and served.
    const list = await s.request('GET', '/api/v1/namespaces/default/configmaps');
    assert.deepEqual(list.json().items.map((i: any) => i.metadata.name), names.filter((_, i) => i % 10 === 0));
    const check = new Database(file, { readonly: true });
    assert.equal(check.pragma('integrity_check', { simple: true }), 'ok');
    check.close();
  } finally {
    await s.stop();
  }
});

/** The file's size once the checkpointer has copied every committed page into it (it stops growing). */
async function sizeOnceCheckpointed(file: string): Promise<number> {
  let last = -1;
  for (let i = 0; i < 400; i++) {
    const size = statSync(file).size;
    if (size === last) return size;
    last = size;
    await new Promise((r) => setTimeout(r, 50));
  }
  return last;
}

test('a store made by an older hearth (no auto-vacuum, no checksums) is converted at start: incremental auto-vacuum, checksums for its rows, a damaged JSON row caught', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-upgrade-'));
  let s: TestServer | undefined;
  try {
    // Schema as migrations 001-003 left it, in a file made without auto_vacuum, as hearth made them.
    const file = join(dataDir, 'hearth.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    migrate(db, loadMigrations().filter((m) => m.version <= 3));
    const insertEvent = db.prepare('INSERT INTO events (rv, type, res, ns, name, uid, prev_rv, data) VALUES (?, 1, ?, ?, ?, ?, NULL, ?)');
    const insertObject = db.prepare('INSERT INTO objects (res, ns, name, rv, uid, data) VALUES (?, ?, ?, ?, ?, ?)');
    const namespace = (name: string, rv: number) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: `uid-${name}`, resourceVersion: String(rv), creationTimestamp: '2024-01-01T00:00:00Z' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    const rows: [string, string, string, any][] = [
      ['namespaces', '', 'default', namespace('default', 1)],
      ['namespaces', '', 'old', namespace('old', 2)],
      ['configmaps', 'old', 'kept', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept', namespace: 'old', uid: 'uid-kept', resourceVersion: '3', creationTimestamp: '2024-01-01T00:00:00Z' }, data: { a: '1' } }],
      ['configmaps', 'old', 'broken', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'broken', namespace: 'old', uid: 'uid-broken', resourceVersion: '4', creationTimestamp: '2024-01-01T00:00:00Z' }, data: { a: '1' } }],
    ];
    db.transaction(() => {
      rows.forEach(([res, ns, name, obj], i) => {
        let data: Buffer = Buffer.from(encodeObject(obj));
        // Damaged before checksums existed: still JSON-looking, no longer JSON.
        if (name === 'broken') data = damaged(data);
        insertEvent.run(i + 1, res, ns, name, obj.metadata.uid, data);
        insertObject.run(res, ns, name, i + 1, obj.metadata.uid, data);
      });
    })();
    assert.equal(db.pragma('auto_vacuum', { simple: true }), 0);
    db.close();

    s = await startTestServer({ dataDir, options: { controllers: WITHOUT_NAMESPACE_CONTENT } });
    const check = new Database(file, { readonly: true });
    assert.equal(check.pragma('auto_vacuum', { simple: true }), 2, 'converted to incremental auto-vacuum');
    const crcs = check.prepare(`SELECT name, crc FROM objects WHERE res = 'configmaps' AND ns = 'old'`).all() as { name: string; crc: number }[];
    check.close();
    assert.deepEqual(Object.fromEntries(crcs.map((r) => [r.name, r.crc === -1 ? 'marked damaged' : 'checksummed'])), { broken: 'marked damaged', kept: 'checksummed' });
    assert.equal((await s.request('GET', '/api/v1/namespaces/old/configmaps/kept')).json().data.a, '1');
    const broken = await s.request('GET', '/api/v1/namespaces/old/configmaps/broken');
    assert.equal(broken.status, 500);
    assert.match(broken.json().message, /Key: \/registry\/configmaps\/old\/broken/);
    const list = await s.request('GET', '/api/v1/namespaces/old/configmaps');
    assert.equal(list.status, 500, 'never a 200 with the broken row joined in');
    // New writes continue the old sequence.
    const created = await s.request('POST', '/api/v1/namespaces/old/configmaps', { body: configMap('new') });
    assert.equal(created.status, 201);
    assert.ok(Number(created.json().metadata.resourceVersion) > 4);
  } finally {
    await s?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
