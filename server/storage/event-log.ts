// The event log and the current-object table, written together in one transaction per
// batch. Writes that arrive in the same tick share one commit (group commit): one fsync for
// many writes, while each caller still waits for its own durability. Each write runs in its
// own savepoint, so a failing write rolls back alone and emits nothing.
import type { Db } from './database.ts';
import { encodeObject, decodeObject } from './codec.ts';
import type Database from 'better-sqlite3';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';
const TYPE_CODE: Record<EventType, number> = { ADDED: 1, MODIFIED: 2, DELETED: 3 };
const CODE_TYPE: EventType[] = ['ADDED', 'ADDED', 'MODIFIED', 'DELETED'];

export interface Key {
  /** Qualified resource: "pods", "deployments.apps". */
  res: string;
  /** "" for cluster-scoped objects. */
  ns: string;
  name: string;
}

export interface StoredObject {
  rv: number;
  uid: string;
  object: any;
}

export interface LogEvent {
  type: EventType;
  rv: number;
  key: Key;
  object: any;
  /** The object before this write (undefined for ADDED); lets watchers with selectors turn a change into ADDED/DELETED. */
  prevObject?: any;
}

export type EventListener = (events: LogEvent[]) => void;

interface PendingWrite {
  fn: (tx: WriteTx) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** What a write function may do inside the shared transaction. */
export interface WriteTx {
  get(key: Key): StoredObject | undefined;
  /** The current resourceVersion of a key, or undefined if absent; no decoding. */
  currentRv(key: Key): number | undefined;
  /** Stores obj as the new current version; sets obj.metadata.resourceVersion; returns the rv. */
  put(type: 'ADDED' | 'MODIFIED', key: Key, obj: any, prev?: StoredObject): number;
  /** Removes the object; obj is its final state (carried by the DELETED event). */
  remove(key: Key, obj: any, prev: StoredObject): number;
}

export class EventLog {
  private readonly db: Db;
  private lastRv: number;
  private pending: PendingWrite[] = [];
  private scheduled = false;
  private readonly listeners = new Set<EventListener>();
  private readonly stmts: ReturnType<typeof prepare>;
  private readonly runInSavepoint: (w: PendingWrite, tx: WriteTx) => unknown;
  private readonly runBatch: (batch: PendingWrite[], tx: WriteTx, results: unknown[], failed: boolean[], emitted: LogEvent[]) => void;

  constructor(db: Db) {
    this.db = db;
    this.stmts = prepare(db);
    const seq = db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`).get() as { seq: number } | undefined;
    this.lastRv = seq?.seq ?? 0;
    // Nested better-sqlite3 transactions are savepoints.
    this.runInSavepoint = db.transaction((w: PendingWrite, tx: WriteTx) => w.fn(tx));
    this.runBatch = db.transaction((batch, tx, results, failed, emitted) => {
      for (let i = 0; i < batch.length; i++) {
        const rvBefore = this.lastRv;
        const emittedBefore = emitted.length;
        try {
          results[i] = this.runInSavepoint(batch[i], tx);
        } catch (e) {
          this.lastRv = rvBefore;
          emitted.length = emittedBefore;
          results[i] = e;
          failed[i] = true;
        }
      }
    });
  }

  /** The newest resourceVersion written. */
  get currentRv(): number {
    return this.lastRv;
  }

  get(key: Key): StoredObject | undefined {
    const row = this.stmts.get.get(key.res, key.ns, key.name) as { rv: number; uid: string; data: Buffer } | undefined;
    return row ? { rv: row.rv, uid: row.uid, object: decodeObject(row.data) } : undefined;
  }

  /** Current objects of a resource, in (namespace, name) order, optionally after a key; one namespace or all. */
  list(res: string, ns: string | undefined, after?: { ns: string; name: string }, limit = -1): StoredObject[] {
    const rows = (
      ns === undefined
        ? this.stmts.listAll.all({ res, ns: after?.ns ?? '', name: after?.name ?? '', after: after ? 1 : 0, limit })
        : this.stmts.listNs.all({ res, ns, name: after?.name ?? '', after: after ? 1 : 0, limit })
    ) as { rv: number; uid: string; data: Buffer }[];
    return rows.map((r) => ({ rv: r.rv, uid: r.uid, object: decodeObject(r.data) }));
  }

  /** How many current objects of a resource come after a key (remainingItemCount). */
  countAfter(res: string, ns: string | undefined, after: { ns: string; name: string }): number {
    const row = (ns === undefined ? this.stmts.countAll : this.stmts.countNs).get({ res, ns: ns ?? after.ns, name: after.name }) as { n: number };
    return row.n;
  }

  /** Events after rv, oldest first (watch replay). */
  eventsAfter(rv: number, limit: number): LogEvent[] {
    const rows = this.stmts.eventsAfter.all(rv, limit) as { rv: number; type: number; res: string; ns: string; name: string; data: Buffer; prev: Buffer | null }[];
    return rows.map((r) => ({
      type: CODE_TYPE[r.type],
      rv: r.rv,
      key: { res: r.res, ns: r.ns, name: r.name },
      object: decodeObject(r.data),
      prevObject: r.prev ? decodeObject(r.prev) : undefined,
    }));
  }

  onCommit(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs fn inside the next batch transaction. fn is synchronous: it reads and writes through tx
   * with nothing interleaving, so read-check-write is atomic. Resolves after the batch is durable.
   */
  write<T>(fn: (tx: WriteTx) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const results: unknown[] = new Array(batch.length);
    const failed: boolean[] = new Array(batch.length).fill(false);
    const emitted: LogEvent[] = [];
    const tx = this.makeTx(emitted);
    try {
      this.runBatch(batch, tx, results, failed, emitted);
    } catch (e) {
      // The commit itself failed (disk full, I/O error): nothing of this batch is durable.
      const seq = this.db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`).get() as { seq: number } | undefined;
      this.lastRv = seq?.seq ?? 0;
      for (const w of batch) w.reject(e);
      return;
    }
    if (emitted.length > 0) {
      for (const l of this.listeners) {
        try {
          l(emitted);
        } catch (e) {
          console.error('event listener failed', e);
        }
      }
    }
    for (let i = 0; i < batch.length; i++) {
      if (failed[i]) batch[i].reject(results[i]);
      else batch[i].resolve(results[i]);
    }
  }

  private makeTx(emitted: LogEvent[]): WriteTx {
    const s = this.stmts;
    return {
      get: (key) => this.get(key),
      currentRv: (key) => (s.rvOf.get(key.res, key.ns, key.name) as { rv: number } | undefined)?.rv,
      put: (type, key, obj, prev) => {
        const rv = ++this.lastRv;
        obj.metadata.resourceVersion = String(rv);
        const data = encodeObject(obj);
        const uid: string = obj.metadata.uid;
        s.insertEvent.run(rv, TYPE_CODE[type], key.res, key.ns, key.name, uid, prev?.rv ?? null, data);
        s.upsert.run(key.res, key.ns, key.name, rv, uid, data);
        emitted.push({ type, rv, key, object: obj, prevObject: prev?.object });
        return rv;
      },
      remove: (key, obj, prev) => {
        const rv = ++this.lastRv;
        obj.metadata.resourceVersion = String(rv);
        const data = encodeObject(obj);
        s.insertEvent.run(rv, TYPE_CODE.DELETED, key.res, key.ns, key.name, obj.metadata.uid, prev.rv, data);
        s.remove.run(key.res, key.ns, key.name);
        emitted.push({ type: 'DELETED', rv, key, object: obj, prevObject: prev.object });
        return rv;
      },
    };
  }
}

function prepare(db: Db) {
  const p = (sql: string): Database.Statement => db.prepare(sql);
  return {
    get: p('SELECT rv, uid, data FROM objects WHERE res = ? AND ns = ? AND name = ?'),
    rvOf: p('SELECT rv FROM objects WHERE res = ? AND ns = ? AND name = ?'),
    listAll: p(`SELECT rv, uid, data FROM objects WHERE res = @res
      AND (@after = 0 OR ns > @ns OR (ns = @ns AND name > @name)) ORDER BY ns, name LIMIT @limit`),
    listNs: p(`SELECT rv, uid, data FROM objects WHERE res = @res AND ns = @ns
      AND (@after = 0 OR name > @name) ORDER BY name LIMIT @limit`),
    countAll: p('SELECT count(*) AS n FROM objects WHERE res = @res AND (ns > @ns OR (ns = @ns AND name > @name))'),
    countNs: p('SELECT count(*) AS n FROM objects WHERE res = @res AND ns = @ns AND name > @name'),
    insertEvent: p('INSERT INTO events (rv, type, res, ns, name, uid, prev_rv, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    upsert: p(`INSERT INTO objects (res, ns, name, rv, uid, data) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (res, ns, name) DO UPDATE SET rv = excluded.rv, uid = excluded.uid, data = excluded.data`),
    remove: p('DELETE FROM objects WHERE res = ? AND ns = ? AND name = ?'),
    eventsAfter: p(`SELECT e.rv, e.type, e.res, e.ns, e.name, e.data, p.data AS prev
      FROM events e LEFT JOIN events p ON p.rv = e.prev_rv WHERE e.rv > ? ORDER BY e.rv LIMIT ?`),
  };
}
