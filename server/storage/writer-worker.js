// The writer thread: owns the only write connection to the SQLite file and commits batches of
// row operations prepared by the main thread. Commits are durable (WAL, synchronous=FULL)
// before it answers, and the fsync happens here, so the main thread keeps serving meanwhile.
// Plain JavaScript (type-checked through checkJs) so this thread does not load a TypeScript
// loader: it would cost ~25 MB of memory for a file this small.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** @typedef {import('./writer-protocol.ts').RowOp} RowOp */
/** @typedef {import('./writer-protocol.ts').WriterRequest} WriterRequest */
/** @typedef {import('./writer-protocol.ts').WriterResponse} WriterResponse */

const { file, synchronous } = /** @type {{ file: string; synchronous: string }} */ (workerData);
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
db.pragma('wal_autocheckpoint = 4000');
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -16384');

const insertEvent = db.prepare('INSERT INTO events (rv, type, res, ns, name, uid, prev_rv, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
const upsert = db.prepare(`INSERT INTO objects (res, ns, name, rv, uid, data) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (res, ns, name) DO UPDATE SET rv = excluded.rv, uid = excluded.uid, data = excluded.data`);
const remove = db.prepare('DELETE FROM objects WHERE res = ? AND ns = ? AND name = ?');
const setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');

const commitBatch = db.transaction((/** @type {RowOp[]} */ ops) => {
  for (const op of ops) {
    insertEvent.run(op.rv, op.type, op.res, op.ns, op.name, op.uid, op.prevRv, op.data);
    if (op.type === 3) remove.run(op.res, op.ns, op.name);
    else upsert.run(op.res, op.ns, op.name, op.rv, op.uid, op.data);
  }
});
const commitMeta = db.transaction((/** @type {[string, string]} */ kv) => setMeta.run(kv[0], kv[1]));
const compactSlice = db.prepare(`DELETE FROM events WHERE rv > @from AND rv <= @to AND (type = 3 OR EXISTS (
  SELECT 1 FROM events n WHERE n.res = events.res AND n.ns = events.ns AND n.name = events.name AND n.rv > events.rv AND n.rv <= @cutoff))`);

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** @param {WriterResponse} r */
const reply = (r) => port.postMessage(r);

port.on('message', (/** @type {WriterRequest} */ msg) => {
  if ('close' in msg) {
    db.close();
    reply({ id: msg.id, ok: true });
    return;
  }
  try {
    if ('compact' in msg) {
      const started = performance.now();
      const removed = db.transaction(() => compactSlice.run(msg.compact).changes)();
      reply({ id: msg.id, ok: true, removed, ms: performance.now() - started });
      return;
    }
    if ('ops' in msg) commitBatch(msg.ops);
    else commitMeta(msg.meta);
    reply({ id: msg.id, ok: true });
  } catch (e) {
    reply({ id: msg.id, ok: false, error: /** @type {Error} */ (e).message });
  }
});
