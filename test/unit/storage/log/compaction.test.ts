// Storage-level compaction and WAL checkpointing: compaction removes exactly the superseded
// versions and tombstones at or below its cutoff (also while writes keep coming, and across a
// shutdown midway), and the checkpointer thread copies the WAL into the database file and
// keeps the WAL bounded under a continuous stream of writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase, type Db } from '../../../../server/storage/sqlite/database.ts';
import { EventLog } from '../../../../server/storage/log/event-log.ts';
import type { Key } from '../../../../server/storage/log/types.ts';
import { SqliteBackend, type SqliteBackendOptions } from '../../../../server/storage/sqlite/backend.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function open(dir: string, opts: Partial<SqliteBackendOptions> = {}): { db: Db; log: EventLog; backend: SqliteBackend; file: string } {
  const file = join(dir, 'hearth.db');
  const db = openDatabase(file);
  const backend = new SqliteBackend(db, { file, ...opts });
  return { db, log: new EventLog(backend), backend, file };
}

async function shut(s: { db: Db; log: EventLog }): Promise<void> {
  await s.log.close();
  s.db.close();
}

const key = (name: string): Key => ({ res: 'configmaps', ns: 'c', name });
const cm = (name: string, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'c', uid: randomUUID() }, data });

/** Creates or updates (keeping the uid). */
function save(log: EventLog, name: string, data: Record<string, string>): Promise<number> {
  return log.write((tx) => {
    const prev = tx.get(key(name));
    if (!prev) return tx.put('ADDED', key(name), cm(name, data));
    return tx.put('MODIFIED', key(name), { ...prev.object, data }, prev);
  });
}

function del(log: EventLog, name: string): Promise<number> {
  return log.write((tx) => {
    const prev = tx.get(key(name))!;
    return tx.remove(key(name), prev.object, prev);
  });
}

interface Row {
  rv: number;
  type: number;
  name: string;
}

const rows = (db: Db): Row[] => db.prepare('SELECT rv, type, name FROM events ORDER BY rv').all() as Row[];

/** What compaction at cutoff must leave: every event above it, and at or below it each key's newest event unless that is a deletion. */
function expectedAfter(all: Row[], cutoff: number): number[] {
  const newest = new Map<string, Row>();
  for (const r of all) if (r.rv <= cutoff) newest.set(r.name, r);
  return all.filter((r) => r.rv > cutoff || (newest.get(r.name) === r && r.type !== 3)).map((r) => r.rv);
}

const snapshot = (log: EventLog, rv: number) => log.listAt('configmaps', 'c', rv).map((o) => [o.object.metadata.name, o.rv, JSON.stringify(o.object.data)]);

test('compaction removes exactly the superseded versions and tombstones at or below the cutoff', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-compaction-'));
  try {
    const s = open(dir);
    const { log } = s;
    await save(log, 'a', { v: '1' });
    await save(log, 'a', { v: '2' });
    await save(log, 'b', { v: '1' });
    await del(log, 'b');
    await save(log, 'c', { v: '1' });
    await del(log, 'c');
    await save(log, 'c', { v: 'again' }); // re-created: the tombstone and the first life go
    await save(log, 'd', { v: '1' }); // never changed: stays
    await save(log, 'e', { v: '1' });
    await save(log, 'a', { v: '3' });
    const cutoff = log.currentRv;
    // After the cutoff: all of these stay, including e's superseded version and f's tombstone.
    await save(log, 'e', { v: '2' });
    await save(log, 'e', { v: '3' });
    await save(log, 'f', { v: '1' });
    await del(log, 'f');
    await save(log, 'a', { v: '4' });
    const before = rows(s.db);
    const atCutoff = snapshot(log, cutoff);
    const current = log.list('configmaps', 'c').map((o) => [o.object.metadata.name, o.rv]);

    const r = await log.compact(cutoff);
    assert.equal(r.compactedRv, cutoff);
    assert.equal(log.compactedRv, cutoff);
    const want = expectedAfter(before, cutoff);
    assert.deepEqual(rows(s.db).map((x) => x.rv), want);
    assert.equal(r.removed, before.length - want.length);
    assert.equal(r.removed, 6, 'a v1, a v2, b v1, b tombstone, c v1, c tombstone');
    // The state at the cutoff and the current state read the same as before.
    assert.deepEqual(snapshot(log, cutoff), atCutoff);
    assert.deepEqual(log.list('configmaps', 'c').map((o) => [o.object.metadata.name, o.rv]), current);
    // Watch replay from the cutoff still has every later event.
    assert.deepEqual(log.eventsAfter(cutoff, 100).map((e) => `${e.type} ${e.key.name}`), ['MODIFIED e', 'MODIFIED e', 'ADDED f', 'DELETED f', 'MODIFIED a']);

    // Compacting again to the same version changes nothing; the compacted version survives a restart.
    assert.equal((await log.compact(cutoff)).removed, 0);
    await shut(s);
    const again = open(dir);
    assert.equal(again.log.compactedRv, cutoff);
    assert.equal(again.log.compactionUnfinished, false);
    assert.deepEqual(rows(again.db).map((x) => x.rv), want);
    await shut(again);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('compaction under a continuous stream of writes: every write commits, nothing above the cutoff or current is removed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-compaction-'));
  try {
    const s = open(dir);
    const { log } = s;
    // History: 200 keys, 20 versions each, every 7th key deleted at the end.
    for (let round = 0; round < 20; round++) {
      await log.write((tx) => {
        for (let k = 0; k < 200; k++) {
          const prev = tx.get(key(`k${k}`));
          if (!prev) tx.put('ADDED', key(`k${k}`), cm(`k${k}`, { round: String(round) }));
          else tx.put('MODIFIED', key(`k${k}`), { ...prev.object, data: { round: String(round) } }, prev);
        }
      });
    }
    await log.write((tx) => {
      for (let k = 0; k < 200; k += 7) {
        const prev = tx.get(key(`k${k}`))!;
        tx.remove(key(`k${k}`), prev.object, prev);
      }
    });
    const cutoff = log.currentRv;
    const before = rows(s.db);

    let stop = false;
    let writes = 0;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        // New keys and updates of history keys, both above the cutoff.
        await save(log, i % 2 ? `w${w}-${i}` : `k${(w * 25 + i) % 200}`, { w: String(w), i: String(i) });
        writes++;
      }
    });
    const r = await log.compact(cutoff);
    await sleep(20);
    stop = true;
    await Promise.all(writers);
    assert.ok(writes > 0);

    const after = rows(s.db);
    const cutoffKept = new Set(expectedAfter(before, cutoff));
    assert.deepEqual(after.filter((x) => x.rv <= cutoff).map((x) => x.rv), [...cutoffKept].sort((a, b) => a - b));
    // Every event above the cutoff is there: resourceVersions are consecutive.
    const above = after.filter((x) => x.rv > cutoff).map((x) => x.rv);
    assert.equal(above.length, log.currentRv - cutoff);
    assert.equal(above[0], cutoff + 1);
    assert.equal(r.removed, before.length - cutoffKept.size);
    // Each current object's own event is still in the log.
    const missing = s.db.prepare('SELECT count(*) AS n FROM objects o WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.rv = o.rv)').get() as { n: number };
    assert.equal(missing.n, 0);
    await shut(s);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a compaction stopped by shutdown has already raised the compacted version, and the next start finishes it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-compaction-'));
  try {
    const s = open(dir);
    for (let round = 0; round < 30; round++) {
      await s.log.write((tx) => {
        for (let k = 0; k < 100; k++) {
          const prev = tx.get(key(`k${k}`));
          if (!prev) tx.put('ADDED', key(`k${k}`), cm(`k${k}`, { round: String(round) }));
          else tx.put('MODIFIED', key(`k${k}`), { ...prev.object, data: { round: String(round) } }, prev);
        }
      });
    }
    const cutoff = s.log.currentRv;
    const before = rows(s.db);
    // close() right away: the compaction records its version, then stops before its first slice.
    const compaction = s.log.compact(cutoff);
    const closing = s.log.close();
    await assert.rejects(compaction, /storage is closed/);
    await closing;
    s.db.close();

    const again = open(dir);
    // Lists and watches below the new version must answer 410 even though rows are left.
    assert.equal(again.log.compactedRv, cutoff);
    assert.equal(again.log.compactionUnfinished, true);
    assert.equal(rows(again.db).length, before.length);
    const r = await again.log.compact(again.log.compactedRv);
    assert.equal(r.compactedRv, cutoff);
    assert.equal(r.removed, before.length - 100);
    assert.equal(again.log.compactionUnfinished, false);
    assert.deepEqual(rows(again.db).map((x) => x.rv), expectedAfter(before, cutoff));
    await shut(again);
    const third = open(dir);
    assert.equal(third.log.compactionUnfinished, false);
    await shut(third);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the checkpointer copies the WAL into the database file and keeps the WAL bounded under continuous writes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-compaction-'));
  try {
    // A WAL of 128 pages (512 KiB) should start over.
    const s = open(dir, { walRestartFrames: 128 });
    const wal = `${s.file}-wal`;
    const dbSizeBefore = statSync(s.file).size;
    const blob = 'x'.repeat(4000);
    let stop = false;
    let written = 0;
    let largestWal = 0;
    // 8 writers that never pause: the writer thread is never idle for long, so the WAL only
    // starts over because the checkpointer catches up and has the writer copy the tail.
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        await save(s.log, `w${w}-${i % 500}`, { blob, i: String(i) });
        written += 4000;
      }
    });
    while (written < 40 * 1024 * 1024) {
      await sleep(20);
      if (existsSync(wal)) largestWal = Math.max(largestWal, statSync(wal).size);
    }
    stop = true;
    await Promise.all(writers);
    const stats = await s.backend.storageStats();
    assert.ok(stats.checkpointer.runs > 0, 'checkpoints ran');
    assert.ok(stats.writer.caughtUp > 0, `the WAL started over (${JSON.stringify(stats)})`);
    // 40 MiB of objects went through a WAL that stayed far smaller (the index pages come on top).
    assert.ok(largestWal < 16 * 1024 * 1024, `WAL grew to ${largestWal} bytes (${JSON.stringify(stats)})`);
    // The checkpoints copied the pages into the database file (500 keys × 8 writers × 4 KB ≈ 16 MB live).
    await sleep(100);
    assert.ok(statSync(s.file).size - dbSizeBefore > 8 * 1024 * 1024, `database file grew by ${statSync(s.file).size - dbSizeBefore} bytes`);
    await shut(s);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a long read on the main connection blocks neither writes nor checkpoints; the WAL starts over once it ends', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-compaction-'));
  try {
    const s = open(dir, { walRestartFrames: 64 });
    const blob = 'y'.repeat(4000);
    const writeMb = async (mb: number) => {
      let written = 0;
      await Promise.all(
        Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; written < mb * 1024 * 1024; i++) {
            await save(s.log, `r${w}-${i % 200}`, { blob, i: String(i) });
            written += 4000;
          }
        }),
      );
    };
    await writeMb(1);
    // An unfinished statement keeps its read transaction (a snapshot) open, as a long list would.
    const it = s.db.prepare('SELECT rv FROM events ORDER BY rv').iterate();
    assert.equal(it.next().done, false);
    // Frames past the snapshot first: a tail copy already asked for could still reach the end of
    // the WAL as it was when the snapshot began; none can once the WAL has grown past it.
    await writeMb(0.1);
    await sleep(50);
    const before = (await s.backend.storageStats()).writer.caughtUp;
    await writeMb(4);
    await sleep(150);
    const during = await s.backend.storageStats();
    // The snapshot keeps the frames after it from being copied: no tail copy reaches the end of the WAL.
    assert.equal(during.writer.caughtUp, before, JSON.stringify(during));
    assert.ok(during.checkpointer.largestWalFrames > 512, JSON.stringify(during));
    it.return!();
    await writeMb(2);
    await sleep(150);
    const after = await s.backend.storageStats();
    assert.ok(after.writer.caughtUp > before, `the WAL starts over after the read (${JSON.stringify(after)})`);
    await shut(s);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
