// Storage threads. Plain JavaScript (type-checked through checkJs) so they do not load a
// TypeScript loader: it would cost ~25 MB of memory for a file this small.
//
// role "writer": owns the only write connection to the SQLite file and commits batches of row
// operations prepared by the main thread, and compaction slices. A batch is durable (WAL,
// synchronous=FULL) before it is answered; the fsync happens here, so the main thread keeps
// serving meanwhile.
//
// role "checkpointer": copies committed WAL frames into the database file (PASSIVE checkpoints)
// on its own connection, concurrently with the writer and at a lower CPU priority. SQLite's
// automatic checkpoint would run inside the commit that crosses its threshold, so that commit
// (and every write waiting behind it) would wait for megabytes of page copies and fsyncs.
//
// A PASSIVE checkpoint never blocks the writer, but the WAL only starts over from its beginning
// when a write transaction begins with every frame already copied; under a continuous stream
// of commits the checkpointer is always a little behind, so the WAL would grow without bound.
// Hence: once the WAL is large and the checkpointer keeps pace, it asks the writer to copy the
// small remaining tail itself between two commits (a few milliseconds); the writer's next commit
// then starts the WAL over. If it does not keep pace (compaction writes far more pages than
// writes do), it first has the writer hold compaction slices back for a moment.
//
// Reads on the main thread's connection hold a snapshot for one statement: a long one (a big
// list) lets the checkpointer copy only up to its snapshot and keeps the WAL from starting over
// until it ends (the request is repeated); neither ever makes a commit wait.
import { parentPort, workerData } from 'node:worker_threads';
import { setPriority } from 'node:os';
import { openSync, closeSync, fdatasyncSync, appendFileSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

/** @typedef {import('../log/backend.ts').RowOp} RowOp */
/** @typedef {import('./writer-protocol.ts').WriterRequest} WriterRequest */
/** @typedef {import('./writer-protocol.ts').WriterResponse} WriterResponse */
/** @typedef {import('./writer-protocol.ts').PeerMessage} PeerMessage */
/** @typedef {import('./writer-protocol.ts').WriterStats} WriterStats */
/** @typedef {import('./writer-protocol.ts').CheckpointStats} CheckpointStats */
/** @typedef {import('./writer-protocol.ts').StorageThreadLog} StorageThreadLog */
/** @typedef {import('../log/backend.ts').SliceRange} SliceRange */

const { file, synchronous, role, peer, walRestartFrames, committed } = /** @type {import('./writer-protocol.ts').StorageThreadData} */ (workerData);

/** Minimum time between two checkpointer runs: each costs an fsync, so not one per commit. */
const CHECKPOINT_INTERVAL_MS = 10;
/** WAL frames (pages) after which the WAL should start over (default 4096 frames of 4 KiB = 16 MiB). */
const RESTART_FRAMES = walRestartFrames ?? 4096;
/** A checkpointer run that copied at most this many frames keeps pace: the writer's tail copy is about as small (1 MiB, a few ms). */
const TAIL_FRAMES = 256;
/** Copied pages after which the checkpointer fsyncs the database file itself (2 MiB). */
const SYNC_FRAMES = 512;
/** The longest the writer holds compaction slices back so the checkpointer can catch up. */
const HOLD_MAX_MS = 250;
/** After asking the writer, wait at least this long before asking again (a long read can keep the WAL from restarting). */
const RESTART_RETRY_MS = 100;
/** When the WAL starts over, its file is cut back to this size. */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;
/** Nice value of the checkpointer thread: background copying yields the CPU to requests and commits. */
const CHECKPOINTER_NICE = 10;

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

// HEARTH_STORAGE_TRACE=PREFIX (benchmarks only): each thread appends one line per commit, slice
// and checkpoint to PREFIX.ROLE.log: kind, start (epoch ms), wall ms, then this thread's CPU and
// run-queue wait ms over it (/proc/thread-self/schedstat: wall time alone cannot tell a slow
// slice from a preempted one on a busy machine), then details.
const TRACE = process.env.HEARTH_STORAGE_TRACE;
/** @type {string[]} */
let traceLines = [];
const traceFlush = () => {
  if (!TRACE || traceLines.length === 0) return;
  appendFileSync(`${TRACE}.${role}.log`, traceLines.join('\n') + '\n');
  traceLines = [];
};
/** [cpu ms, run-queue wait ms] of this thread so far. The CPU time is only brought up to date at scheduler ticks; the wait is exact. */
const schedNow = () => {
  const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ');
  return [Number(run) / 1e6, Number(wait) / 1e6];
};
/** Run-queue wait of this thread so far (ms), or 0 where /proc does not tell. */
const waitedMs = (() => {
  try {
    schedNow();
    return () => schedNow()[1];
  } catch {
    return () => 0;
  }
})();
/** @type {(kind: string, ...details: unknown[]) => void} */
const untraced = () => {};
/** Starts a span; its end() appends the trace line. A no-op unless tracing. */
const span = TRACE
  ? () => {
      const t0 = performance.now();
      const [c0, w0] = schedNow();
      return (/** @type {string} */ kind, /** @type {unknown[]} */ ...details) => {
        const t1 = performance.now();
        const [c1, w1] = schedNow();
        traceLines.push([kind, (performance.timeOrigin + t0).toFixed(2), (t1 - t0).toFixed(2), (c1 - c0).toFixed(2), (w1 - w0).toFixed(2), ...details].join(' '));
        if (traceLines.length >= 256) traceFlush();
      };
    }
  : () => untraced;
if (TRACE) setInterval(traceFlush, 500).unref();

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
// Checkpoints are the checkpointer's job, never a committing writer's.
db.pragma('wal_autocheckpoint = 0');
db.pragma('busy_timeout = 5000');
// 4 MiB: a write touches a few b-tree paths (appends to events, inserts by key), and a miss is a
// read from the OS page cache; 16 MiB of cache here was that much more resident memory for good.
db.pragma('cache_size = -4096');

/** PASSIVE checkpoint: copies what it can without waiting for anyone. */
const checkpoint = () => {
  const row = /** @type {{ busy: number; log: number; checkpointed: number }[]} */ (db.pragma('wal_checkpoint(PASSIVE)'))[0];
  return { busy: row.busy, log: row.log, checkpointed: row.checkpointed };
};

if (role === 'checkpointer') runCheckpointer();
else runWriter();

function runWriter() {
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  const insertEvent = db.prepare('INSERT INTO events (rv, type, res, ns, name, uid, prev_rv, data, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const upsert = db.prepare(`INSERT INTO objects (res, ns, name, rv, uid, data, crc) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (res, ns, name) DO UPDATE SET rv = excluded.rv, uid = excluded.uid, data = excluded.data, crc = excluded.crc`);
  const remove = db.prepare('DELETE FROM objects WHERE res = ? AND ns = ? AND name = ?');
  const setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');

  const commitBatch = db.transaction((/** @type {RowOp[]} */ ops) => {
    for (const op of ops) {
      insertEvent.run(op.rv, op.type, op.res, op.ns, op.name, op.uid, op.prevRv, op.data, op.crc);
      if (op.type === 3) remove.run(op.res, op.ns, op.name);
      else upsert.run(op.res, op.ns, op.name, op.rv, op.uid, op.data, op.crc);
    }
  });
  const commitMeta = db.transaction((/** @type {[string, string][]} */ pairs) => {
    for (const [k, v] of pairs) setMeta.run(k, v);
  });
  // A slice visits the events in one rv range (all at or below the cutoff) and removes what each
  // one supersedes: its prev_rv (the key's previous event), and the event itself if it is a
  // deletion. Every event at or below the cutoff with a newer event of its key at or below the
  // cutoff goes once the slices have covered the range, and the current version of each key
  // stays. The removed rows sit where the visited ones' predecessors are, so a slice rewrites
  // few pages (an index by key would have one random leaf per removed row). Predecessors first:
  // the deletions in the range are among the visited events.
  const removePredecessors = db.prepare('DELETE FROM events WHERE rv IN (SELECT prev_rv FROM events WHERE rv > @from AND rv <= @to AND prev_rv IS NOT NULL)');
  const removeTombstones = db.prepare('DELETE FROM events WHERE rv > @from AND rv <= @to AND type = 3');
  const nthAfter = db.prepare('SELECT rv FROM events WHERE rv > ? ORDER BY rv LIMIT 1 OFFSET ?').pluck();
  const compactTx = db.transaction((/** @type {SliceRange} */ range) => {
    let to = range.to;
    if (range.rows !== undefined) {
      const nth = /** @type {number | undefined} */ (nthAfter.get(range.from, range.rows - 1));
      if (nth !== undefined && nth < to) to = nth;
    }
    const bounds = { from: range.from, to };
    return { removed: removePredecessors.run(bounds).changes + removeTombstones.run(bounds).changes, to };
  });
  // A slice commits without an fsync of its own: the next batch's commit fsyncs the WAL, and
  // with it the slice (a WAL is synced in order; a checkpoint syncs it before copying anything).
  // The batch that waited for the slice then waits for one fsync, not two. Losing the newest
  // slices in a crash is harmless: compacted_rv was durable before the first one, and the
  // next compaction removes what they had removed.
  const normalSync = `synchronous = ${synchronous.toUpperCase()}`;
  const compact = (/** @type {SliceRange} */ range) => {
    db.pragma('synchronous = OFF');
    try {
      return compactTx(range);
    } finally {
      db.pragma(normalSync);
    }
  };
  // A vacuum slice moves pages from the end of the file into free ones (and updates what points
  // at them), in one transaction; like a compaction slice it commits without an fsync of its own.
  const freePages = db.prepare('PRAGMA freelist_count').pluck();
  const vacuum = (/** @type {number} */ pages) => {
    db.pragma('synchronous = OFF');
    try {
      db.pragma(`incremental_vacuum(${Math.max(1, Math.floor(pages))})`);
    } finally {
      db.pragma(normalSync);
    }
    return /** @type {number} */ (freePages.get());
  };

  /** @type {WriterStats} */
  const stats = { tailCheckpoints: 0, caughtUp: 0, longestTailMs: 0, heldSlices: 0, longestBatchMs: 0 };
  /** The longest tail copy since the last compaction slice reported it. */
  let longestTailMs = 0;
  /**
   * While the checkpointer catches up, compaction slices wait (writes do not): a slice writes
   * far more pages than a batch. Bounded, in case a long read keeps the WAL from being copied.
   */
  let holdUntil = 0;
  /** @type {Extract<WriterRequest, { compact: unknown } | { vacuum: unknown }> | undefined} */
  let heldSlice;
  let holdTimer = /** @type {NodeJS.Timeout | undefined} */ (undefined);

  /** @param {WriterResponse} r */
  const reply = (r) => port.postMessage(r);
  /** @param {PeerMessage} m */
  const tell = (m) => peer.postMessage(m);

  const releaseSlice = () => {
    holdUntil = 0;
    if (holdTimer) clearTimeout(holdTimer);
    holdTimer = undefined;
    const msg = heldSlice;
    heldSlice = undefined;
    if (msg) handle(msg);
  };

  peer.on('message', (/** @type {PeerMessage} */ m) => {
    if ('hold' in m) {
      holdUntil = performance.now() + HOLD_MAX_MS;
      return;
    }
    if (!('finish' in m)) return;
    // Between two commits: copy the small tail the checkpointer left, so the next commit starts the WAL over.
    const started = performance.now();
    const end = span();
    let result;
    try {
      result = checkpoint();
    } catch {
      result = { busy: 1, log: -1, checkpointed: -1 };
    }
    const ms = performance.now() - started;
    end('tail', result.busy, result.log, result.checkpointed);
    stats.tailCheckpoints++;
    // Every frame copied: the next commit starts the WAL over (unless a read is still using it).
    if (result.busy === 0 && result.log === result.checkpointed) stats.caughtUp++;
    longestTailMs = Math.max(longestTailMs, ms);
    stats.longestTailMs = Math.max(stats.longestTailMs, ms);
    tell({ finished: { ...result, ms } });
    releaseSlice();
  });

  /** @param {WriterRequest} msg */
  const handle = (msg) => {
    if ('close' in msg) {
      traceFlush();
      db.close();
      reply({ id: msg.id, ok: true });
      return;
    }
    if ('stats' in msg) {
      reply({ id: msg.id, ok: true, writer: { ...stats } });
      return;
    }
    if ('maxPageCount' in msg) {
      db.pragma(`max_page_count = ${Math.floor(msg.maxPageCount)}`);
      reply({ id: msg.id, ok: true });
      return;
    }
    const started = performance.now();
    const end = span();
    try {
      if ('vacuum' in msg || 'compact' in msg) {
        // A slice (compaction, or giving pages back) writes far more pages than a batch.
        if (started < holdUntil) {
          stats.heldSlices++;
          heldSlice = msg;
          holdTimer = setTimeout(releaseSlice, holdUntil - started);
          return;
        }
        const waited = waitedMs();
        /** @type {Partial<WriterResponse & { ok: true }>} */
        let done;
        if ('vacuum' in msg) {
          const left = vacuum(msg.vacuum.pages);
          end('vacuum', msg.vacuum.pages, left);
          done = { freePages: left };
        } else {
          const { removed, to } = compact(msg.compact);
          end('slice', to - msg.compact.from, removed);
          done = { removed, to };
        }
        // Wait read first, then the clock: a preemption in between counts in both or only in
        // ms (busy overestimated: the next slice smaller, never larger than it should be).
        const waitedDuring = waitedMs() - waited;
        const ms = performance.now() - started;
        reply({ ...done, id: msg.id, ok: true, ms, busyMs: Math.max(0, ms - waitedDuring), tailMs: longestTailMs });
        longestTailMs = 0;
      } else {
        if ('ops' in msg) {
          commitBatch(msg.ops);
          Atomics.store(committed, 0, msg.id); // before the reply: SqliteBackend.pollCommitted reads it
        } else commitMeta(msg.meta);
        end('ops' in msg ? 'batch' : 'meta', 'ops' in msg ? msg.ops.length : msg.meta.length);
        const ms = performance.now() - started;
        stats.longestBatchMs = Math.max(stats.longestBatchMs, ms);
        // (a batch's ms, its fsync included, is hearth_storage_commit_duration_seconds)
        reply({ id: msg.id, ok: true, ms });
      }
      tell({ wrote: true });
    } catch (e) {
      reply({ id: msg.id, ok: false, error: /** @type {Error} */ (e).message, code: /** @type {{ code?: unknown }} */ (e).code === undefined ? undefined : String(/** @type {{ code?: unknown }} */ (e).code) });
    }
  };

  // One request per turn of the event loop. A MessagePort hands over up to 1,000 queued
  // messages in one go, and the main thread sends the next batch or slice as soon as the
  // previous one is answered: handled inline, a busy stream of them would keep the
  // checkpointer's messages (and the hold timer) waiting for hundreds of milliseconds.
  // A write batch that finds nothing queued is the exception: the main thread has one batch
  // out at a time, so it cannot start such a stream, and its writes wait for every turn lost
  // (A/B: creates +3-11%).
  /** @type {WriterRequest[]} */
  const queue = [];
  let draining = false;
  const drain = () => {
    const msg = queue.shift();
    if (msg) handle(msg);
    if (queue.length) setImmediate(drain);
    else draining = false;
  };
  port.on('message', (/** @type {WriterRequest} */ msg) => {
    if (!draining && 'ops' in msg) {
      handle(msg);
      return;
    }
    queue.push(msg);
    if (draining) return;
    draining = true;
    setImmediate(drain);
  });
}

function runCheckpointer() {
  // Checkpoints copy pages through their own buffer, not the page cache.
  db.pragma('cache_size = -512');
  try {
    // Per thread on Linux: only this one runs at the lower priority.
    setPriority(CHECKPOINTER_NICE);
  } catch {
    // Not permitted here: copying at normal priority works as well, with more CPU contention.
  }
  /** Commits not yet covered by a checkpoint run. */
  let dirty = false;
  let timer = /** @type {NodeJS.Timeout | undefined} */ (undefined);
  let lastRun = 0;
  /** A tail copy is with the writer: checkpointing meanwhile would only make it busy. */
  let waitingForWriter = false;
  let lastAsk = 0;
  /** When the writer was last asked to hold compaction slices (a hold ends by itself after HOLD_MAX_MS). */
  let holdAsked = -HOLD_MAX_MS;
  /** Frames copied so far (nBackfill) as of the last run. */
  let copiedBefore = 0;
  /** Frames copied into the database file since its last fsync. */
  let unsynced = 0;
  /** @type {CheckpointStats} */
  const stats = { runs: 0, longestMs: 0, largestWalFrames: 0 };
  /** The last checkpoint failure logged ('' after a run that worked). */
  let lastFailure = '';
  // SQLite fsyncs the database file only when a checkpoint reaches the end of the WAL, which
  // under a stream of commits is the writer's tail copy: that fsync would flush everything
  // copied since. Flushing here in small steps keeps it short (extra fsyncs cost no safety).
  const dbFd = openSync(file, 'r');
  const syncDb = () => {
    const end = span();
    fdatasyncSync(dbFd);
    end('dbsync', unsynced);
    unsynced = 0;
  };

  const schedule = () => {
    if (timer || waitingForWriter || !dirty) return;
    timer = setTimeout(run, Math.max(0, lastRun + CHECKPOINT_INTERVAL_MS - performance.now()));
  };

  const run = () => {
    timer = undefined;
    dirty = false;
    lastRun = performance.now();
    let r;
    const end = span();
    try {
      r = checkpoint();
      end('ckpt', r.busy, r.log, r.checkpointed);
      // The count starts again with the WAL.
      const copied = r.checkpointed >= copiedBefore ? r.checkpointed - copiedBefore : r.checkpointed;
      copiedBefore = r.checkpointed;
      unsynced += copied;
      if (unsynced >= SYNC_FRAMES) syncDb();
      const now = performance.now();
      stats.runs++;
      stats.longestMs = Math.max(stats.longestMs, now - lastRun);
      stats.largestWalFrames = Math.max(stats.largestWalFrames, r.log);
      if (r.log >= RESTART_FRAMES && now - lastAsk >= RESTART_RETRY_MS) {
        // A run with little to copy was short, so little was committed meanwhile. Past four
        // times the size, the WAL starts over even at the price of a longer copy: writes alone
        // (no slices to hold back) can outpace the checkpointer for good.
        if (copied <= TAIL_FRAMES || r.log >= 4 * RESTART_FRAMES) {
          if (unsynced > 0) syncDb();
          waitingForWriter = true;
          lastAsk = now;
          peer.postMessage(/** @type {PeerMessage} */ ({ finish: true }));
        } else if (now - holdAsked >= HOLD_MAX_MS) {
          holdAsked = now;
          peer.postMessage(/** @type {PeerMessage} */ ({ hold: true }));
        }
      }
      lastFailure = '';
    } catch (e) {
      // Once per kind of failure (a full disk fails every run until space is freed).
      const why = /** @type {Error} */ (e).message;
      if (why !== lastFailure) port.postMessage(/** @type {StorageThreadLog} */ ({ log: `checkpoint of ${file} failed (the WAL keeps every write meanwhile): ${why}` }));
      lastFailure = why;
    }
    schedule();
  };

  peer.on('message', (/** @type {PeerMessage} */ m) => {
    if ('wrote' in m) dirty = true;
    else if ('finished' in m) {
      waitingForWriter = false;
      holdAsked = -HOLD_MAX_MS;
    }
    schedule();
  });
  port.on('message', (/** @type {WriterRequest} */ msg) => {
    if ('close' in msg) {
      traceFlush();
      if (timer) clearTimeout(timer);
      closeSync(dbFd);
      db.close();
      peer.close();
      port.postMessage(/** @type {WriterResponse} */ ({ id: msg.id, ok: true }));
    } else if ('stats' in msg) {
      port.postMessage(/** @type {WriterResponse} */ ({ id: msg.id, ok: true, checkpointer: { ...stats } }));
    }
  });
}
