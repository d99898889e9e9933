// Compaction slices on the writer thread: a slice bounded by the events it visits (rows) stops at
// the rows-th event after its start however sparse the rv range, and slicing that way removes
// exactly what slicing by rv span (the reference) removes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, MessageChannel } from 'node:worker_threads';
import { openDatabase } from '../../../../server/storage/sqlite/database.ts';
import type { WriterRequest, WriterResponse, StorageThreadData } from '../../../../server/storage/sqlite/writer-protocol.ts';
import type { SliceRange } from '../../../../server/storage/log/backend.ts';

/** A writer thread on `file`, driven directly through its protocol. */
function startWriter(file: string) {
  const { port1, port2 } = new MessageChannel();
  const data: StorageThreadData = { file, synchronous: 'full', role: 'writer', peer: port1, committed: new Int32Array(new SharedArrayBuffer(4)) };
  const worker = new Worker(new URL('../../../../server/storage/sqlite/writer-worker.js', import.meta.url), { workerData: data, transferList: [port1], execArgv: [] });
  let id = 0;
  const ask = (req: Omit<WriterRequest, 'id'>) =>
    new Promise<WriterResponse>((resolve) => {
      const rid = ++id;
      const on = (r: WriterResponse) => {
        if (r.id !== rid) return;
        worker.off('message', on);
        resolve(r);
      };
      worker.on('message', on);
      worker.postMessage({ ...req, id: rid } as WriterRequest);
    });
  return {
    slice: async (range: SliceRange) => {
      const r = await ask({ compact: range });
      assert.ok(r.ok, r.ok ? '' : r.error);
      return r;
    },
    close: async () => {
      await ask({ close: true });
      port2.close();
      await worker.terminate();
    },
  };
}

/**
 * A log with holes (as an earlier compaction leaves): 40 keys, 30 versions each, every 3rd key
 * deleted halfway and re-created, and rv gaps of varying width between events.
 */
function buildLog(file: string): number {
  const db = openDatabase(file);
  const insert = db.prepare('INSERT INTO events (rv, type, res, ns, name, uid, prev_rv, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const last = new Map<string, number>();
  let rv = 0;
  db.transaction(() => {
    for (let round = 0; round < 30; round++) {
      for (let k = 0; k < 40; k++) {
        rv += 1 + ((round * 7 + k * 13) % 5 === 0 ? 40 : (k % 3));
        const name = `k${k}`;
        const prev = last.get(name);
        const type = prev === undefined ? 1 : k % 3 === 0 && round === 15 ? 3 : 2;
        insert.run(rv, type, 'configmaps', 'c', name, `uid-${k}`, prev ?? null, Buffer.from([round]));
        if (type === 3) last.delete(name);
        else last.set(name, rv);
      }
    }
  })();
  db.close();
  return rv;
}

const eventRvs = (file: string): number[] => {
  const db = openDatabase(file);
  try {
    return (db.prepare('SELECT rv FROM events ORDER BY rv').pluck().all() as number[]);
  } finally {
    db.close();
  }
};

const eventRows = (file: string): { rv: number; prev: number | null; type: number }[] => {
  const db = openDatabase(file);
  try {
    return db.prepare('SELECT rv, prev_rv AS prev, type FROM events ORDER BY rv').all() as { rv: number; prev: number | null; type: number }[];
  } finally {
    db.close();
  }
};

test('a slice bounded by rows stops at the rows-th event after its start, however sparse the range', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-slices-'));
  try {
    const file = join(dir, 'hearth.db');
    const top = buildLog(file);
    const rows = eventRows(file);
    const rvs = rows.map((e) => e.rv);
    const w = startWriter(file);
    try {
      const from = rvs[100];
      const r = await w.slice({ from, to: top, rows: 25 });
      // The 25th event after `from`; it removed what the 25 visited events supersede (their
      // predecessors, wherever they are) and the deletions among them, and nothing else.
      assert.equal(r.to, rvs[125]);
      const visited = rows.filter((e) => e.rv > from && e.rv <= r.to!);
      const superseded = new Set([...visited.flatMap((e) => (e.prev === null ? [] : [e.prev])), ...visited.filter((e) => e.type === 3).map((e) => e.rv)]);
      assert.deepEqual(eventRvs(file), rvs.filter((x) => !superseded.has(x)));
      assert.ok(superseded.size > 0);
      assert.equal(r.removed, superseded.size);
      assert.ok(typeof r.busyMs === 'number' && r.busyMs >= 0 && r.busyMs <= r.ms! + 0.001);
      // Fewer events than rows left: the slice ends at `to`.
      const end = await w.slice({ from: rvs[rvs.length - 5], to: top, rows: 1000 });
      assert.equal(end.to, top);
    } finally {
      await w.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('slicing by rows visited removes exactly what slicing by rv span removes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-slices-'));
  try {
    const a = join(dir, 'a.db');
    const top = buildLog(a);
    const b = join(dir, 'b.db');
    copyFileSync(a, b);
    const cutoff = Math.floor(top * 0.8);

    // Reference: fixed rv spans.
    const ref = startWriter(a);
    let refRemoved = 0;
    for (let from = 0; from < cutoff; from += 50) refRemoved += (await ref.slice({ from, to: Math.min(from + 50, cutoff) })).removed ?? 0;
    await ref.close();

    // Bounded by events visited, with varying sizes.
    const byRows = startWriter(b);
    let removed = 0;
    let slices = 0;
    for (let from = 0, n = 1; from < cutoff; n = (n * 3) % 37 + 1) {
      const r = await byRows.slice({ from, to: cutoff, rows: n });
      assert.ok(r.to! > from && r.to! <= cutoff);
      removed += r.removed ?? 0;
      from = r.to!;
      slices++;
    }
    await byRows.close();

    assert.ok(slices > 40, `${slices} slices`);
    assert.ok(refRemoved > 0);
    assert.equal(removed, refRemoved);
    assert.deepEqual(eventRvs(b), eventRvs(a));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
