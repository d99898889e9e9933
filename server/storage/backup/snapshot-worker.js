// Copies a hearth store into a new SQLite file as it was at one resourceVersion, on a thread of
// its own with its own read connection: `backup` runs it in its own process against a running
// (or stopped) server's file, and the server runs it for scheduled snapshots, where a copy on
// the main thread would hold up requests. Plain JavaScript, like writer-worker.js, so the thread
// needs no TypeScript loader.
//
// SQLite's online backup API copies pages in steps; between steps a commit by another connection
// would make it start over (and under a steady stream of writes it might never finish). Holding
// one read transaction for the whole copy pins its snapshot: every step reads the same version of
// the file, the server's writer is never blocked (WAL readers do not block writers), and the
// resourceVersion read at the start is the copy's. The price is that the server's WAL cannot
// start over until the copy ends, so it grows by the writes made meanwhile.
import { parentPort, workerData } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { openSync, closeSync, fdatasyncSync, createReadStream, statSync } from 'node:fs';
import { setPriority } from 'node:os';
import Database from 'better-sqlite3';

/** @typedef {import('./backup.ts').SnapshotWorkerData} SnapshotWorkerData */
/** @typedef {import('./backup.ts').SnapshotWorkerMessage} SnapshotWorkerMessage */

const { source, dest } = /** @type {SnapshotWorkerData} */ (workerData);
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** Pages copied per step (4 KiB pages: 1 MiB); progress is reported after each. */
const PAGES_PER_STEP = 256;
/**
 * The copy is flushed to disk every this many pages (4 MiB) rather than all at once when it
 * ends: one fsync of hundreds of MB would hold up the server's own fsyncs on the same disk.
 */
const SYNC_PAGES = 1024;

/** Nice value of this thread: the copy yields the CPU to the server's requests and commits. */
const SNAPSHOT_NICE = 10;

/** @param {SnapshotWorkerMessage} m */
const post = (m) => port.postMessage(m);

try {
  // Per thread on Linux: only this one runs at the lower priority.
  setPriority(SNAPSHOT_NICE);
} catch {
  // Not permitted here: the copy runs at normal priority.
}

try {
  const db = new Database(source, { fileMustExist: true, timeout: 5000 });
  let rv;
  let schemaVersion;
  try {
    db.exec('BEGIN');
    // The first read starts the transaction's snapshot; everything after reads the same one.
    rv = /** @type {number | undefined} */ (db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`).pluck().get()) ?? 0;
    schemaVersion = /** @type {number | null} */ (db.prepare('SELECT max(version) FROM schema_migrations').pluck().get()) ?? 0;
    let destFd = /** @type {number | undefined} */ (undefined);
    let synced = 0;
    const copied = await db.backup(dest, {
      progress({ totalPages, remainingPages }) {
        const done = totalPages - remainingPages;
        destFd ??= openSync(dest, 'r');
        if (done - synced >= SYNC_PAGES) {
          fdatasyncSync(destFd);
          synced = done;
        }
        post({ progress: { done, total: totalPages } });
        return PAGES_PER_STEP;
      },
    });
    if (destFd !== undefined) closeSync(destFd);
    post({ progress: { done: copied.totalPages, total: copied.totalPages } });
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  // The copy carries the source's WAL mode in its header; a snapshot is one self-contained file
  // (the server turns WAL back on when it opens a restored store).
  const out = new Database(dest);
  out.pragma('journal_mode = DELETE');
  out.close();
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(dest)) hash.update(/** @type {Buffer} */ (chunk));
  post({ done: { rv, schemaVersion, size: statSync(dest).size, sha256: hash.digest('hex') } });
} catch (e) {
  post({ error: /** @type {Error} */ (e).message });
}
