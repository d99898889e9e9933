// The event log and the current-object table, written together in one transaction per
// batch. Writes that arrive while the previous batch commits share the next commit (group
// commit): one fsync for many writes, while each caller still waits for its own durability.
// Write functions run here, on the main thread, against the committed state plus the batch so
// far; a failing one is undone alone and emits nothing. The resulting row operations commit on
// a writer thread, so the fsync never blocks request handling.
import type { Db } from './sqlite/database.ts';
import { encodeObject, decodeObject, StoredRow, CHECK_STORED_JSON, EVENT_CLOSE, EVENT_OPEN, servedAsStored } from './rows/codec.ts';
import { deepFreeze } from '../util/json.ts';
import { MAX_OBJECT_BYTES, ObjectTooLargeError } from '../errors.ts';
import { KeyFilter } from './log/key-filter.ts';
import { checksum, intact } from './rows/checksum.ts';
import { corruptObjectsError, reportCorruptRow, storageKey, type CorruptRow } from './rows/corrupt-rows.ts';
import { ApiError } from '../errors.ts';
import type Database from 'better-sqlite3';
import { Worker, MessageChannel } from 'node:worker_threads';
import type { RowOp, WriterRequest, WriterResponse, WriterStats, CheckpointStats, StorageThreadData } from './writer-protocol.ts';

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
  /**
   * The object as this process committed it, when known: shared with every reader, so read it
   * and never change it (`object` is the caller's own copy).
   */
  committed?: any;
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

/**
 * What a list reads at most (the caller still matches each row against its selectors): only
 * objects of this name, only those carrying these labels (each with one of the values, when
 * given), only those holding these string values.
 */
export interface RowFilter {
  name?: string;
  labels?: readonly { key: string; values?: readonly string[] }[];
  /** String values at JSON paths of the object (`$.spec.nodeName`) it must hold. */
  fields?: readonly { path: string; value: string }[];
  /** Give each JSON row's metadata.labels (StoredRow.labelsJson) as SQLite reads them. */
  readLabels?: boolean;
  /**
   * Leave out rows whose bytes fail their checksum (each is reported) instead of failing the
   * whole read: for in-process readers at start, which must not be stopped by one damaged row.
   */
  skipCorrupt?: boolean;
}

/** Rows of recently written keys kept in memory (at most a few MB: rows are a few KB). */
const RECENT_ROWS = 1024;

/** How long one compaction slice may keep the writer thread from committing (its own cost: CPU and I/O, not time preempted). */
const SLICE_TARGET_MS = 2;
/** Bounds on the events one slice visits (the upper one bounds its WAL writes, and so the fsync of the batch after it). */
const SLICE_ROWS_MIN = 16;
const SLICE_ROWS_MAX = 2048;
/** Bounds on the pages one vacuum slice moves (each moved page is a WAL write, like a slice's rows). */
const VACUUM_PAGES_MIN = 16;
const VACUUM_PAGES_MAX = 4096;
/** Free pages kept for the writes to come rather than given back: this fraction of the pages in use. */
const FREE_PAGES_KEPT = 1 / 8;

export interface CompactionResult {
  compactedRv: number;
  removed: number;
  slices: number;
  /** The longest time one slice held the writer thread: how long a write batch could have waited for it. */
  longestSliceMs: number;
  /** The longest time the writer thread spent on anything but committing writes during the compaction (slices, vacuum slices, and copying a checkpoint's tail so the WAL could start over). */
  longestPauseMs: number;
  /** Pages given back to the filesystem after the compaction (incremental vacuum), in how many slices, the longest taking how long. */
  pagesReleased: number;
  vacuumSlices: number;
  longestVacuumMs: number;
}

export interface StorageStats {
  writer: WriterStats;
  checkpointer: CheckpointStats;
}

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

export interface EventLogOptions {
  /** The SQLite file; the writer thread opens its own connection to it. */
  file: string;
  synchronous?: 'full' | 'normal' | 'off';
  /** WAL size in pages at which the storage threads make it start over (default 4096, 16 MiB); for tests. */
  walRestartFrames?: number;
  /** Where storage failures are told (a full disk); console.error by default. */
  log?: (line: string) => void;
}

export class EventLog {
  private readonly db: Db;
  private readonly writer: Worker;
  /** Copies the WAL into the database file alongside the writer (see writer-worker.js). */
  private readonly checkpointer: Worker;
  /** Newest committed resourceVersion. */
  private lastRv: number;
  private pending: PendingWrite[] = [];
  private scheduled = false;
  /** One batch at a time is with the writer; the next one gathers meanwhile. */
  private inFlight = false;
  /** The writer request id of the batch in flight (0: none). */
  private inFlightId = 0;
  /** The id of the last batch the writer committed, shared with it (StorageThreadData.committed). */
  private readonly committedSignal = new Int32Array(new SharedArrayBuffer(4));
  private nextRequestId = 1;
  private readonly replies = new Map<number, (r: WriterResponse) => void>();
  private readonly listeners = new Set<EventListener>();
  private readonly stmts: ReturnType<typeof prepare>;
  /** filteredRows' statements, by the shape of their filter. */
  private readonly filteredStmts = new Map<string, Database.Statement>();
  private closed?: Promise<void>;
  /** Versions at or below this were compacted: lists and watches from them answer 410 Gone. */
  private compacted: number;
  private compacting?: Promise<CompactionResult>;
  /** A compaction set `compacted` but stopped (shutdown, crash) before removing every row it covers. */
  private unfinishedCompaction: boolean;
  private readonly rvWaiters = new Set<{ rv: number; resolve: () => void }>();
  /** Compaction waiting for the batch with the writer to finish: a batch waits for one slice at most. */
  private turnWaiters: (() => void)[] = [];
  /**
   * The committed rows of the keys written last (null: deleted), newest last. Every write goes
   * through this log, so an entry is the key's committed state: rereads of objects just written
   * (an update reads, then checks the version at commit; controllers and apply loops) skip SQLite,
   * whose page cache a connection loses each time another connection commits.
   */
  private readonly recentRows = new Map<string, { rv: number; uid: string; data: Uint8Array; committed: any } | null>();
  /** Every key in the objects table or being written (and some deleted ones): creates check it before SQLite. */
  private keyFilter: KeyFilter;
  private readonly file: string;
  private readonly report: (line: string) => void;
  /** Why writes fail (a full disk, a read-only file) while they do: told once, and again when they work. */
  private writesFailing?: string;

  /** db is the reading connection (this thread); writes go to a writer thread with its own connection. */
  constructor(db: Db, opts: EventLogOptions) {
    this.db = db;
    this.file = opts.file;
    this.report = opts.log ?? ((line) => console.error(line));
    this.stmts = prepare(db);
    const seq = db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`).get() as { seq: number } | undefined;
    this.lastRv = seq?.seq ?? 0;
    const c = db.prepare(`SELECT value FROM meta WHERE key = 'compacted_rv'`).get() as { value: string } | undefined;
    this.compacted = c ? Number(c.value) : 0;
    const done = db.prepare(`SELECT value FROM meta WHERE key = 'compaction_done_rv'`).get() as { value: string } | undefined;
    // No record: compacted by a hearth that set compacted_rv only when done.
    this.unfinishedCompaction = done !== undefined && Number(done.value) < this.compacted;
    this.keyFilter = this.buildKeyFilter();
    const { writer, checkpointer } = startStorageThreads({ file: opts.file, synchronous: opts.synchronous ?? 'full', walRestartFrames: opts.walRestartFrames, committed: this.committedSignal });
    this.writer = writer;
    this.checkpointer = checkpointer;
    this.writer.on('message', (r: WriterResponse) => this.deliver(r));
    this.checkpointer.on('message', (r: WriterResponse) => this.deliver(r));
    // Without it the WAL is no longer copied back (it grows), but every write still commits durably.
    this.checkpointer.on('error', (e) => console.error('storage checkpointer thread failed:', e));
    this.checkpointer.unref();
    this.writer.on('error', (e) => {
      console.error('storage writer thread failed:', e);
      for (const reply of this.replies.values()) reply({ id: 0, ok: false, error: `storage writer failed: ${e.message}` });
      this.replies.clear();
    });
    this.writer.unref();
  }

  /** Hands a storage thread's reply to its asker; a reply already taken (pollCommitted) is dropped. */
  private deliver(r: WriterResponse): void {
    const reply = this.replies.get(r.id);
    this.replies.delete(r.id);
    // Idle, the writer must not keep the process alive; awaiting a commit, it must.
    if (this.replies.size === 0) this.writer.unref();
    reply?.(r);
  }

  /**
   * Finishes the batch in flight now if the writer has committed it, without waiting for its
   * reply message: the main thread reads messages only between two of its tasks, and under
   * load a task (a socket read with many requests, a watch fan-out) runs for milliseconds.
   * Measured with 16 writers at once, the reply waited 1.5–2.2 ms on average there, as long as
   * the commit itself; the batch gathering meanwhile waited with it. The listener calls this
   * for each request that comes in, write() for each write. True when it finished one.
   */
  pollCommitted(): boolean {
    const id = this.inFlightId;
    if (id === 0 || Atomics.load(this.committedSignal, 0) !== (id | 0) || !this.replies.has(id)) return false;
    this.deliver({ id, ok: true });
    return true;
  }

  /** The newest resourceVersion written. */
  get currentRv(): number {
    return this.lastRv;
  }

  get(key: Key): StoredObject | undefined {
    const k = keyString(key);
    const recent = this.recentRows.get(k);
    if (recent !== undefined) return recent === null ? undefined : new StoredRow(recent.rv, recent.uid, recent.data, recent.committed);
    if (!this.keyFilter.mightHave(k)) return undefined;
    const row = this.stmts.get.get(key.res, key.ns, key.name) as { rv: number; uid: string; data: Buffer; crc: number | null } | undefined;
    if (!row) return undefined;
    if (!intact(row.data, row.crc)) throw corruptObjectsError([corruptRow(key.res, key.ns, key.name, row.rv)]);
    // Decoded on first use: an existence check never decodes.
    return new StoredRow(row.rv, row.uid, row.data, undefined, undefined, key);
  }

  /**
   * The key's current resourceVersion and uid, its bytes unread (they may be damaged): what an
   * unsafe delete of a corrupt object needs. Undefined when there is no such object.
   */
  currentRow(key: Key): { rv: number; uid: string; corrupt: boolean } | undefined {
    const row = this.stmts.get.get(key.res, key.ns, key.name) as { rv: number; uid: string; data: Buffer; crc: number | null } | undefined;
    return row && { rv: row.rv, uid: row.uid, corrupt: !intact(row.data, row.crc) };
  }

  /** Current objects of a resource, in (namespace, name) order, optionally after a key; one namespace or all. */
  list(res: string, ns: string | undefined, after?: { ns: string; name: string }, limit = -1, only?: RowFilter): StoredObject[] {
    // Decoded on first use: JSON lists transcode the stored bytes instead.
    return this.rawRows(res, ns, { after, limit, only }).map((r) => storedRow(res, r));
  }

  /**
   * list() — or listAt() when `rv` is given — as one JSON text: the rows' stored bytes joined by
   * commas, none decoded. Only when every row is served as stored (see servedAsStored);
   * undefined otherwise, for the caller to read rows. `last` is the last row's key.
   */
  listJoined(res: string, ns: string | undefined, prefix: Buffer, opts: { rv?: number; after?: { ns: string; name: string }; limit?: number; noNulls?: boolean }): JoinedRows | undefined {
    const rows = this.rawRows(res, ns, opts);
    const parts: Buffer[] = [];
    for (let i = 0; i < rows.length; i++) {
      const data = rows[i][2];
      if (!servedAsStored(data, prefix, opts.noNulls)) return undefined;
      if (i > 0) parts.push(COMMA);
      parts.push(data);
    }
    const last = rows[rows.length - 1];
    return { json: Buffer.concat(parts), count: rows.length, last: last && { ns: last[3], name: last[4] } };
  }

  /**
   * The current objects of a resource as a JSON watch stream's ADDED events, one line each in key
   * order (a watch's initial state), under listJoined's condition; undefined otherwise.
   */
  addedEventsJoined(res: string, ns: string | undefined, prefix: Buffer, noNulls: boolean): Buffer | undefined {
    const rows = this.rawRows(res, ns, {});
    const parts: Buffer[] = [];
    for (const row of rows) {
      if (!servedAsStored(row[2], prefix, noNulls)) return undefined;
      parts.push(EVENT_OPEN.ADDED, row[2], EVENT_CLOSE);
    }
    return Buffer.concat(parts);
  }

  /**
   * The rows of list() (or of listAt() when `rv` is given), as arrays: rv, uid, data, ns, name,
   * crc (and labels, see RowFilter.readLabels). Each row's bytes are checked against its
   * checksum: damaged ones fail the read, all of them named (or are left out: skipCorrupt).
   */
  private rawRows(res: string, ns: string | undefined, opts: { rv?: number; after?: { ns: string; name: string }; limit?: number; only?: RowFilter }): RawRow[] {
    const { rv, after, limit = -1, only } = opts;
    const params = { res, ns: ns ?? after?.ns ?? '', name: after?.name ?? '', after: after ? 1 : 0, limit };
    let rows: RawRow[] | undefined;
    if (only !== undefined && (only.name !== undefined || only.labels?.length || only.fields?.length || only.readLabels)) {
      try {
        rows = this.filteredRows(ns !== undefined, rv, only, params);
      } catch (e) {
        // SQLite read a row's labels or fields from JSON text that is not JSON (a damaged
        // row): read them all unfiltered, to name the damaged ones (the caller filters anyway).
        if (!/malformed JSON/.test((e as Error).message)) throw e;
      }
    }
    if (rows === undefined) {
      if (rv === undefined) rows = (ns === undefined ? this.stmts.rawAll : this.stmts.rawNs).all(params) as RawRow[];
      else rows = (ns === undefined ? this.stmts.rawAllAt : this.stmts.rawNsAt).all({ ...params, rv }) as RawRow[];
    }
    return this.intactRows(res, rows, only?.skipCorrupt ?? false);
  }

  /** The rows whose bytes match their checksum; the others fail the read (or are left out, reported). */
  private intactRows(res: string, rows: RawRow[], skipCorrupt: boolean): RawRow[] {
    let corrupt: CorruptRow[] | undefined;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (!intact(r[2], r[5])) (corrupt ??= []).push(corruptRow(res, r[3], r[4], r[0]));
    }
    if (corrupt === undefined) return rows;
    const error = corruptObjectsError(corrupt);
    if (!skipCorrupt) throw error;
    return rows.filter((r) => intact(r[2], r[5]));
  }

  /**
   * rawRows narrowed in SQLite by a RowFilter, so rows it rules out are never decoded here: a
   * name is looked up by key; required labels and field values are read from the stored JSON
   * text by SQLite's JSON functions (rows stored as CBOR always pass: the caller matches every
   * row it gets).
   * Statements are made per shape of filter and kept.
   */
  private filteredRows(inNs: boolean, rv: number | undefined, only: RowFilter, params: Record<string, unknown>): RawRow[] {
    const labels = only.labels ?? [];
    let shape = `${inNs ? 'ns' : 'all'}:${rv === undefined ? 'now' : 'at'}:${only.name === undefined ? '' : 'name'}:${only.readLabels ? 'labels' : ''}`;
    const p: Record<string, unknown> = { ...params, rv, only: only.name };
    const tests: string[] = [];
    labels.forEach((l, i) => {
      p[`k${i}`] = `$.metadata.labels.${JSON.stringify(l.key)}`;
      const label = `json_extract(CAST(data AS TEXT), @k${i})`;
      if (l.values === undefined) {
        tests.push(`${label} IS NOT NULL`);
        shape += ':*';
        return;
      }
      l.values.forEach((v, j) => (p[`v${i}_${j}`] = v));
      tests.push(`${label} IN (${l.values.map((_, j) => `@v${i}_${j}`).join(', ')})`);
      shape += `:${l.values.length}`;
    });
    (only.fields ?? []).forEach((f, i) => {
      p[`fp${i}`] = f.path;
      p[`fv${i}`] = f.value;
      tests.push(`json_extract(CAST(data AS TEXT), @fp${i}) = @fv${i}`);
      shape += ':f';
    });
    let stmt = this.filteredStmts.get(shape);
    if (stmt === undefined) {
      const scope = `${inNs ? 'AND ns = @ns' : ''} ${only.name === undefined ? '' : 'AND name = @only'}`;
      const cursor = inNs ? 'name > @name' : 'ns > @ns OR (ns = @ns AND name > @name)';
      // (a JSON text starts with "{"; CBOR maps never do)
      const narrowed = tests.length ? `AND (substr(data, 1, 1) <> X'7B' OR (${tests.join(' AND ')}))` : '';
      const rows =
        rv === undefined
          ? `SELECT rv, uid, data, ns, name, crc FROM objects WHERE res = @res ${scope} AND (@after = 0 OR ${cursor}) ${narrowed}`
          : `SELECT * FROM (${stateAt(scope, cursor)}) WHERE 1 ${narrowed}`;
      // (no labels column for CBOR rows: NULL, the row is decoded)
      const withLabels = only.readLabels
        ? `SELECT *, CASE WHEN substr(data, 1, 1) = X'7B' THEN coalesce(json_extract(CAST(data AS TEXT), '$.metadata.labels'), 'null') END FROM (${rows})`
        : rows;
      stmt = this.db.prepare(`${withLabels} ORDER BY ${inNs ? 'name' : 'ns, name'} LIMIT @limit`).raw();
      if (this.filteredStmts.size >= 64) this.filteredStmts.clear();
      this.filteredStmts.set(shape, stmt);
    }
    // better-sqlite3 refuses parameters a statement does not name.
    if (rv === undefined) delete p.rv;
    if (only.name === undefined) delete p.only;
    return stmt.all(p) as RawRow[];
  }

  /** How many current objects of a resource come after a key (remainingItemCount). */
  countAfter(res: string, ns: string | undefined, after: { ns: string; name: string }): number {
    const row = (ns === undefined ? this.stmts.countAll : this.stmts.countNs).get({ res, ns: ns ?? after.ns, name: after.name }) as { n: number };
    return row.n;
  }

  /** Whether a compaction stopped midway (shutdown, crash): compact() finishes it even with nothing new to compact. */
  get compactionUnfinished(): boolean {
    return this.unfinishedCompaction;
  }

  /** The newest compacted resourceVersion (0 before any compaction). */
  get compactedRv(): number {
    return this.compacted;
  }

  /**
   * The objects of a resource as they were at rv: for each key its newest event at or below rv,
   * unless that is a deletion (read as stateAt says). Same order and paging as list().
   */
  listAt(res: string, ns: string | undefined, rv: number, after?: { ns: string; name: string }, limit = -1, only?: RowFilter): StoredObject[] {
    return this.rawRows(res, ns, { rv, after, limit, only }).map((r) => storedRow(res, r));
  }

  /** remainingItemCount for a snapshot page. */
  countAfterAt(res: string, ns: string | undefined, rv: number, after: { ns: string; name: string }): number {
    const params = { res, ns: ns ?? after.ns, name: after.name, after: 1, limit: -1, rv };
    return ((ns === undefined ? this.stmts.countAllAt : this.stmts.countNsAt).get(params) as { n: number }).n;
  }

  /** Whether any object of the resource was written after rv (if not, the current table is the snapshot). */
  changedSince(res: string, rv: number): boolean {
    return this.stmts.changedSince.get(res, rv) !== undefined;
  }

  /** Resolves true once rv is committed, or false after timeoutMs. */
  waitForRv(rv: number, timeoutMs: number): Promise<boolean> {
    if (rv <= this.lastRv) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = { rv, resolve: () => resolve(true) };
      this.rvWaiters.add(w);
      setTimeout(() => {
        if (this.rvWaiters.delete(w)) resolve(false);
      }, timeoutMs).unref();
    });
  }

  /**
   * Removes history no list or watch at or above `upTo` can need: every event superseded by a
   * newer event of its key at or below upTo, and deletion tombstones at or below it. The
   * current version of every live object stays. Runs in small slices on the writer thread, so
   * writers wait for one slice at most.
   */
  compact(upTo: number): Promise<CompactionResult> {
    if (this.compacting) return this.compacting;
    let target = Math.min(upTo, this.lastRv);
    if (target <= this.compacted) {
      if (!this.unfinishedCompaction) return Promise.resolve({ compactedRv: this.compacted, removed: 0, slices: 0, longestSliceMs: 0, longestPauseMs: 0, pagesReleased: 0, vacuumSlices: 0, longestVacuumMs: 0 });
      // Finish the interrupted one.
      target = this.compacted;
    }
    this.compacting = (async () => {
      let removed = 0;
      let slices = 0;
      let longest = 0;
      let longestPause = 0;
      // The new compacted version is durable and in force before the first row goes: a list or
      // watch from an older version answers 410 from now on, instead of reading a history with
      // holes (also after a crash midway; the next compaction removes what this one left).
      if (target > this.compacted) {
        const saved = await this.ask({ id: this.nextRequestId++, meta: [['compacted_rv', String(target)], ['compaction_done_rv', String(this.unfinishedCompaction ? 0 : this.compacted)]] });
        if (!saved.ok) throw new Error(`compaction failed: ${saved.error}`);
        this.compacted = target;
        this.unfinishedCompaction = true;
      }
      const first = (this.stmts.firstEvent.get() as { rv: number | null }).rv ?? target;
      // Slices sized to take about SLICE_TARGET_MS each. A slice goes to the writer only once
      // the batch there is done: batches and slices alternate, so a batch waits for one slice
      // at most, and the compaction still advances under a continuous stream of writes.
      let sliceRows = 128;
      for (let from = Math.max(first - 1, 0); from < target; ) {
        if (this.inFlight) await new Promise<void>((resolve) => this.turnWaiters.push(resolve));
        // Shutting down: stop between slices; the next compaction removes the rest.
        if (this.closed) throw new Error('storage is closed');
        const r = await this.ask({ id: this.nextRequestId++, compact: { from, to: target, rows: sliceRows } });
        if (!r.ok) throw new Error(`compaction failed: ${r.error}`);
        removed += r.removed ?? 0;
        const ms = r.ms ?? 0;
        longest = Math.max(longest, ms);
        longestPause = Math.max(longestPause, ms, r.tailMs ?? 0);
        slices++;
        from = r.to ?? target;
        // Sized by the events a slice visits (not its rv span, which may be sparse).
        sliceRows = nextSliceSize(sliceRows, r, SLICE_ROWS_MIN, SLICE_ROWS_MAX);
        // Lets replies and requests that arrived meanwhile run first. No further pause is
        // needed: while writes come in, a slice waits for the batch before it, whose fsync also
        // flushes the slice before it (slices do not fsync), so the disk sets the pace.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const done = await this.ask({ id: this.nextRequestId++, meta: [['compaction_done_rv', String(target)]] });
      if (!done.ok) throw new Error(`compaction failed: ${done.error}`);
      this.unfinishedCompaction = false;
      const vacuum = await this.giveSpaceBack();
      return { compactedRv: target, removed, slices, longestSliceMs: longest, longestPauseMs: Math.max(longestPause, vacuum.longestPauseMs), pagesReleased: vacuum.pagesReleased, vacuumSlices: vacuum.slices, longestVacuumMs: vacuum.longestMs };
    })().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  /**
   * Gives the file's free pages back to the filesystem (PRAGMA incremental_vacuum) but for a
   * slack kept for the writes to come, in slices on the writer thread between write batches,
   * as compaction slices run: a batch waits for one slice at most. The file itself shrinks when
   * the checkpointer next copies the WAL back into it.
   */
  private async giveSpaceBack(): Promise<{ pagesReleased: number; slices: number; longestMs: number; longestPauseMs: number }> {
    const done = { pagesReleased: 0, slices: 0, longestMs: 0, longestPauseMs: 0 };
    let free = this.stmts.freePages.get() as number;
    // (a fraction of the pages in use, not of the file before it shrinks)
    const keep = Math.floor(((this.stmts.pageCount.get() as number) - free) * FREE_PAGES_KEPT);
    // (small at first: what a page move costs depends on the file, and the slices adapt from there)
    let pages = VACUUM_PAGES_MIN * 2;
    while (free > keep) {
      if (this.inFlight) await new Promise<void>((resolve) => this.turnWaiters.push(resolve));
      // Shutting down: the next compaction gives back the rest.
      if (this.closed) break;
      const r = await this.ask({ id: this.nextRequestId++, vacuum: { pages: Math.min(pages, free - keep) } });
      if (!r.ok) throw new Error(`giving space back failed: ${r.error}`);
      const left = r.freePages ?? free;
      // (nothing moved: a file without auto_vacuum, which openDatabase converts at start)
      if (left >= free) break;
      done.pagesReleased += free - left;
      free = left;
      done.slices++;
      done.longestMs = Math.max(done.longestMs, r.ms ?? 0);
      done.longestPauseMs = Math.max(done.longestPauseMs, r.ms ?? 0, r.tailMs ?? 0);
      pages = nextSliceSize(pages, r, VACUUM_PAGES_MIN, VACUUM_PAGES_MAX);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return done;
  }

  /** Events after rv, oldest first (watch replay); optionally of one resource only. */
  eventsAfter(rv: number, limit: number, res?: string): LogEvent[] {
    const rows = (res === undefined ? this.stmts.eventsAfter.all(rv, limit) : this.stmts.eventsAfterOf.all(res, rv, limit)) as { rv: number; type: number; res: string; ns: string; name: string; data: Buffer; crc: number | null; prev: Buffer | null; prevRv: number | null; prevCrc: number | null }[];
    const corrupt = rows.filter((r) => !intact(r.data, r.crc));
    if (corrupt.length) throw corruptObjectsError(corrupt.map((r) => corruptRow(r.res, r.ns, r.name, r.rv)));
    return rows.map((r) => ({
      type: CODE_TYPE[r.type],
      rv: r.rv,
      key: { res: r.res, ns: r.ns, name: r.name },
      object: decodeEvent(r.res, r.ns, r.name, r.rv, r.data),
      prevObject: r.prev ? previousObject(r.res, r.ns, r.name, r.prevRv ?? 0, r.prev, r.prevCrc) : undefined,
    }));
  }

  /**
   * eventsAfter() of one resource (and namespace) as a JSON watch stream's lines, each
   * `{"type":…,"object":…}` around the event's stored bytes, none decoded; undefined unless every
   * event is served as stored (see listJoined). `last` is the newest rv read.
   */
  framedEventsAfter(res: string, ns: string | undefined, rv: number, limit: number, prefix: Buffer, noNulls: boolean): { bytes: Buffer; count: number; last: number } | undefined {
    const params = { res, ns: ns ?? '', rv, limit };
    const rows = (ns === undefined ? this.stmts.eventRowsAfter : this.stmts.eventRowsAfterNs).all(params) as [number, number, Buffer, number | null, string, string][];
    const corrupt = rows.filter((r) => !intact(r[2], r[3]));
    if (corrupt.length) throw corruptObjectsError(corrupt.map((r) => corruptRow(res, r[4], r[5], r[0])));
    const parts: Buffer[] = [];
    for (const [, type, data] of rows) {
      if (!servedAsStored(data, prefix, noNulls)) return undefined;
      parts.push(EVENT_OPEN[CODE_TYPE[type]], data, EVENT_CLOSE);
    }
    return { bytes: Buffer.concat(parts), count: rows.length, last: rows.length ? rows[rows.length - 1][0] : rv };
  }

  onCommit(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs fn when the next batch is prepared. fn is synchronous: it reads and writes through tx
   * with nothing interleaving, so read-check-write is atomic. Resolves after the batch is durable.
   */
  write<T>(fn: (tx: WriteTx) => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('storage is closed'));
    this.pollCommitted();
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * What the writes of a batch the writer could not commit answer. A full disk, or a file that
   * became read-only or unwritable, answers as kube-apiserver answers etcd's "database space
   * exceeded" (an error that is no API status: 500, no reason), is told in the log once, and
   * lasts only as long as its cause: reads go on, and writes work again once space is freed.
   */
  private writeFailure(reply: { error: string; code?: string }): Error {
    const code = reply.code ?? '';
    if (!/^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/.test(code)) return new Error(`storage write failed: ${reply.error}`);
    const why = `${reply.error} (${code})`;
    if (this.writesFailing !== why) {
      this.report(`hearth: writes to ${this.file} fail: ${why}; reads are still served, and writes resume once the cause is gone (free some space, or make the file writable)`);
      this.writesFailing = why;
    }
    return new ApiError(500, '', `storage write failed: ${why}`);
  }

  /** Tests only: caps the file at this many pages on the writer's connection, as a full disk would (0 lifts the cap). */
  async limitFilePages(pages: number): Promise<void> {
    // SQLite's own ceiling when "lifted": max_page_count cannot go below the file's size.
    const r = await this.ask({ id: this.nextRequestId++, maxPageCount: pages > 0 ? pages : 0xfffffffe });
    if (!r.ok) throw new Error(r.error);
  }

  /** Counters of the writer and checkpointer threads (WAL checkpoints, tail copies). */
  async storageStats(): Promise<StorageStats> {
    const w = await this.ask({ id: this.nextRequestId++, stats: true });
    const c = await this.ask({ id: this.nextRequestId++, stats: true }, this.checkpointer);
    if (!w.ok || !c.ok || !w.writer || !c.checkpointer) throw new Error('storage stats unavailable');
    return { writer: w.writer, checkpointer: c.checkpointer };
  }

  /** Waits for queued writes, then stops the storage threads. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      while (this.inFlight || this.pending.length || this.compacting) await new Promise((r) => setTimeout(r, 1));
      await this.ask({ id: this.nextRequestId++, close: true }, this.checkpointer);
      await this.checkpointer.terminate();
      await this.ask({ id: this.nextRequestId++, close: true });
      await this.writer.terminate();
    })();
    return this.closed;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private buildKeyFilter(): KeyFilter {
    const { n } = this.db.prepare('SELECT count(*) AS n FROM objects').get() as { n: number };
    const filter = new KeyFilter(n);
    for (const [res, ns, name] of this.db.prepare('SELECT res, ns, name FROM objects').raw().iterate() as Iterable<[string, string, string]>) {
      filter.add(keyString({ res, ns, name }));
    }
    return filter;
  }

  /** Keeps a committed batch's rows in recentRows, dropping the oldest past RECENT_ROWS. */
  private rememberRows(ops: RowOp[], emitted: LogEvent[]): void {
    const recent = this.recentRows;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i];
      const k = keyString(op);
      recent.delete(k); // to the end: newest last
      if (op.type === TYPE_CODE.DELETED) {
        recent.set(k, null);
        continue;
      }
      // ops and emitted grow and shrink together: one event per row. The object is kept only
      // once it is updated: an object kept lives past the young generation, and a stream of
      // creates (rarely read back) would fill the old one with objects dying there.
      const committed = op.type === TYPE_CODE.MODIFIED ? emitted[i].object : undefined;
      // The tests make any later change of a committed object throw.
      if (CHECK_STORED_JSON && committed) deepFreeze(committed);
      recent.set(k, { rv: op.rv, uid: op.uid, data: op.data, committed });
    }
    for (const k of recent.keys()) {
      if (recent.size <= RECENT_ROWS) break;
      recent.delete(k);
    }
  }

  private ask(req: WriterRequest, to = this.writer): Promise<WriterResponse> {
    return new Promise((resolve) => {
      this.replies.set(req.id, resolve);
      this.writer.ref();
      to.postMessage(req);
    });
  }

  private flush(): void {
    this.scheduled = false;
    if (this.inFlight || this.pending.length === 0) return;
    // With no batch in flight the table holds every key written: rebuild from it.
    if (this.keyFilter.full) this.keyFilter = this.buildKeyFilter();
    const batch = this.pending;
    this.pending = [];
    const results: unknown[] = new Array(batch.length);
    const failed: boolean[] = new Array(batch.length).fill(false);
    const ops: RowOp[] = [];
    const emitted: LogEvent[] = [];
    // Writes earlier in this batch are not in the database yet: later ones see them here.
    const overlay = new Map<string, StoredObject | null>();
    let rv = this.lastRv;
    const touched: [string, StoredObject | null | undefined][] = [];
    const record = (key: Key, value: StoredObject | null) => {
      const k = keyString(key);
      touched.push([k, overlay.get(k)]);
      overlay.set(k, value);
    };
    const tx: WriteTx = {
      get: (key) => {
        const o = overlay.get(keyString(key));
        return o === undefined ? this.get(key) : o ?? undefined;
      },
      currentRv: (key) => {
        const k = keyString(key);
        const o = overlay.get(k);
        if (o !== undefined) return o?.rv;
        const recent = this.recentRows.get(k);
        if (recent !== undefined) return recent?.rv;
        if (!this.keyFilter.mightHave(k)) return undefined;
        return (this.stmts.rvOf.get(key.res, key.ns, key.name) as { rv: number } | undefined)?.rv;
      },
      put: (type, key, obj, prev) => {
        const r = rv + 1;
        obj.metadata.resourceVersion = String(r);
        const data = encodeObject(obj);
        // Before anything of the write is recorded: a refused one leaves nothing behind.
        if (data.length > MAX_OBJECT_BYTES) throw new ObjectTooLargeError(data.length);
        rv = r;
        const uid: string = obj.metadata.uid;
        if (type === 'ADDED') this.keyFilter.add(keyString(key));
        ops.push({ rv: r, type: TYPE_CODE[type], res: key.res, ns: key.ns, name: key.name, uid, prevRv: prev?.rv ?? null, data, crc: checksum(data) });
        emitted.push({ type, rv: r, key, object: obj, prevObject: prev ? (prev.committed ?? prev.object) : undefined });
        record(key, { rv: r, uid, object: obj, committed: obj });
        return r;
      },
      remove: (key, obj, prev) => {
        const r = ++rv;
        obj.metadata.resourceVersion = String(r);
        const data = encodeObject(obj);
        ops.push({ rv: r, type: TYPE_CODE.DELETED, res: key.res, ns: key.ns, name: key.name, uid: obj.metadata.uid, prevRv: prev.rv, data, crc: checksum(data) });
        emitted.push({ type: 'DELETED', rv: r, key, object: obj, prevObject: prev.object });
        record(key, null);
        return r;
      },
    };
    for (let i = 0; i < batch.length; i++) {
      const marks = { rv, ops: ops.length, emitted: emitted.length, touched: touched.length };
      try {
        results[i] = batch[i].fn(tx);
      } catch (e) {
        // Undo this write's part of the batch; it emits nothing and takes no resourceVersion.
        rv = marks.rv;
        ops.length = marks.ops;
        emitted.length = marks.emitted;
        while (touched.length > marks.touched) {
          const [k, before] = touched.pop()!;
          if (before === undefined) overlay.delete(k);
          else overlay.set(k, before);
        }
        results[i] = e;
        failed[i] = true;
      }
    }
    const settle = () => {
      for (let i = 0; i < batch.length; i++) {
        if (failed[i]) batch[i].reject(results[i]);
        else batch[i].resolve(results[i]);
      }
    };
    if (ops.length === 0) {
      settle();
      return;
    }
    this.inFlight = true;
    this.inFlightId = this.nextRequestId;
    void this.ask({ id: this.nextRequestId++, ops }).then((reply) => {
      this.inFlight = false;
      this.inFlightId = 0;
      // A waiting compaction slice goes next (posted from a microtask, before the next flush).
      const turns = this.turnWaiters.splice(0);
      for (const turn of turns) turn();
      if (!reply.ok) {
        // Nothing of this batch is stored: no row, no event, no resourceVersion taken.
        const err = this.writeFailure(reply);
        for (const w of batch) w.reject(err);
      } else {
        if (this.writesFailing) {
          this.report(`hearth: writes to ${this.file} succeed again`);
          this.writesFailing = undefined;
        }
        this.lastRv = rv;
        this.rememberRows(ops, emitted);
        for (const w of this.rvWaiters) {
          if (w.rv <= rv) {
            this.rvWaiters.delete(w);
            w.resolve();
          }
        }
        for (const l of this.listeners) {
          try {
            l(emitted);
          } catch (e) {
            console.error('event listener failed', e);
          }
        }
        settle();
      }
      // The next batch leaves at once, not a turn later: finished by pollCommitted, this runs in
      // the middle of a task that may last milliseconds (HTTP/2 creates: +10% in A/B runs).
      if (this.pending.length) {
        if (turns.length) this.schedule();
        else this.flush();
      }
    });
  }
}

/**
 * The next slice's size (rows or pages) from the last one's cost, aiming at SLICE_TARGET_MS:
 * its own cost, as a slice preempted by other threads says nothing about the next one's size.
 * It grows only after a slice that was hardly preempted: on a busy machine the CPU wait the
 * writer reads can be overstated, and the next slice would double for nothing.
 */
function nextSliceSize(size: number, r: { ms?: number; busyMs?: number }, min: number, max: number): number {
  const ms = r.ms ?? 0;
  const busy = r.busyMs ?? ms;
  const scale = SLICE_TARGET_MS / Math.max(busy, 0.01);
  if (scale >= 1 && ms - busy >= 1) return size;
  return Math.round(Math.min(max, Math.max(min, size * Math.min(2, Math.max(0.5, scale)))));
}

function startStorageThreads(data: Omit<StorageThreadData, 'role' | 'peer'>): { writer: Worker; checkpointer: Worker } {
  // The two threads talk over their own channel: a commit's notice to the checkpointer and the
  // checkpointer's tail requests never pass through (or wait for) the main thread.
  const { port1, port2 } = new MessageChannel();
  const url = new URL('./writer-worker.js', import.meta.url);
  // execArgv [] : these threads need no TypeScript loader (their entry is plain JavaScript).
  const writerData: StorageThreadData = { ...data, role: 'writer', peer: port1 };
  const checkpointerData: StorageThreadData = { ...data, role: 'checkpointer', peer: port2 };
  const writer = new Worker(url, { workerData: writerData, transferList: [port1], execArgv: [] });
  // The checkpointer allocates next to nothing in JavaScript: a small heap keeps its memory down.
  const checkpointer = new Worker(url, { workerData: checkpointerData, transferList: [port2], execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 } });
  return { writer, checkpointer };
}

function keyString(k: Key): string {
  return `${k.res}\u0000${k.ns}\u0000${k.name}`;
}

/**
 * The objects of @res as they were at @rv (then filtered by scope and the page's cursor): a key
 * not written after @rv is as the current table holds it (its rv is at or below @rv); a key
 * written after @rv was, at @rv, what its first later event replaced (prev_rv; none if that
 * event created it). Costs a read of the resource's events after @rv, not of its history.
 * SQLite's min() makes the bare prev_rv that of the first event after @rv.
 */
function stateAt(scope: string, cursor: string): string {
  return `SELECT rv, uid, data, ns, name, crc FROM objects WHERE res = @res ${scope} AND rv <= @rv AND (@after = 0 OR ${cursor})
    UNION ALL
    SELECT p.rv, p.uid, p.data, f.ns, f.name, p.crc FROM (
      SELECT ns, name, prev_rv, min(rv) FROM events WHERE res = @res ${scope} AND rv > @rv GROUP BY ns, name HAVING (@after = 0 OR ${cursor})
    ) f JOIN events p ON p.rv = f.prev_rv`;
}

/** A row of rawRows: rv, uid, data, ns, name, crc, and its labels' JSON text when asked for (null for a CBOR row). */
type RawRow = [number, string, Buffer, string, string, number | null, (string | null)?];

function storedRow(res: string, r: RawRow): StoredRow {
  return new StoredRow(r[0], r[1], r[2], undefined, r[6] ?? undefined, { res, ns: r[3], name: r[4] });
}

function corruptRow(res: string, ns: string, name: string, rv: number, detail = 'stored bytes do not match their checksum'): CorruptRow {
  return { key: storageKey(res, ns, name), rv, detail };
}

/**
 * What an event replaced, for a watch's selectors (a change into or out of them): a damaged
 * previous row is reported and read as unknown, as the event itself is intact (an unsafe
 * delete's event replaced a corrupt object).
 */
function previousObject(res: string, ns: string, name: string, rv: number, data: Buffer, crc: number | null): any {
  if (!intact(data, crc)) {
    reportCorruptRow(corruptRow(res, ns, name, rv));
    return undefined;
  }
  try {
    return decodeEvent(res, ns, name, rv, data);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return undefined; // (reported by decodeEvent)
  }
}

/** An event's object (watch replay): bytes that do not decode name the event's row. */
function decodeEvent(res: string, ns: string, name: string, rv: number, data: Buffer): any {
  try {
    return decodeObject(data);
  } catch (e) {
    throw corruptObjectsError([corruptRow(res, ns, name, rv, (e as Error).message)]);
  }
}

/** Rows joined by listJoined. */
export interface JoinedRows {
  json: Buffer;
  count: number;
  last: { ns: string; name: string } | undefined;
}

const COMMA = Buffer.from(',');

function prepare(db: Db) {
  const p = (sql: string): Database.Statement => db.prepare(sql);
  return {
    get: p('SELECT rv, uid, data, crc FROM objects WHERE res = ? AND ns = ? AND name = ?'),
    rvOf: p('SELECT rv FROM objects WHERE res = ? AND ns = ? AND name = ?'),
    countAll: p('SELECT count(*) AS n FROM objects WHERE res = @res AND (ns > @ns OR (ns = @ns AND name > @name))'),
    countNs: p('SELECT count(*) AS n FROM objects WHERE res = @res AND ns = @ns AND name > @name'),
    eventsAfter: p(`SELECT e.rv, e.type, e.res, e.ns, e.name, e.data, e.crc, p.data AS prev, p.rv AS prevRv, p.crc AS prevCrc
      FROM events e LEFT JOIN events p ON p.rv = e.prev_rv WHERE e.rv > ? ORDER BY e.rv LIMIT ?`),
    eventsAfterOf: p(`SELECT e.rv, e.type, e.res, e.ns, e.name, e.data, e.crc, p.data AS prev, p.rv AS prevRv, p.crc AS prevCrc
      FROM events e LEFT JOIN events p ON p.rv = e.prev_rv WHERE e.res = ? AND e.rv > ? ORDER BY e.rv LIMIT ?`),
    changedSince: p('SELECT 1 FROM events WHERE res = ? AND rv > ? LIMIT 1'),
    firstEvent: p('SELECT min(rv) AS rv FROM events'),
    countNsAt: p(`SELECT count(*) AS n FROM (${stateAt('AND ns = @ns', 'name > @name')}) WHERE @limit = @limit`),
    // The current table, or its state at @rv, a page in key order (list, listAt, listJoined).
    rawAll: p(`SELECT rv, uid, data, ns, name, crc FROM objects WHERE res = @res
      AND (@after = 0 OR ns > @ns OR (ns = @ns AND name > @name)) ORDER BY ns, name LIMIT @limit`).raw(),
    rawNs: p(`SELECT rv, uid, data, ns, name, crc FROM objects WHERE res = @res AND ns = @ns
      AND (@after = 0 OR name > @name) ORDER BY name LIMIT @limit`).raw(),
    rawAllAt: p(`${stateAt('', 'ns > @ns OR (ns = @ns AND name > @name)')} ORDER BY ns, name LIMIT @limit`).raw(),
    rawNsAt: p(`${stateAt('AND ns = @ns', 'name > @name')} ORDER BY name LIMIT @limit`).raw(),
    eventRowsAfter: p('SELECT rv, type, data, crc, ns, name FROM events WHERE res = @res AND rv > @rv AND @ns = @ns ORDER BY rv LIMIT @limit').raw(),
    eventRowsAfterNs: p('SELECT rv, type, data, crc, ns, name FROM events WHERE res = @res AND rv > @rv AND ns = @ns ORDER BY rv LIMIT @limit').raw(),
    countAllAt: p(`SELECT count(*) AS n FROM (${stateAt('', 'ns > @ns OR (ns = @ns AND name > @name)')}) WHERE @limit = @limit`),
    freePages: p('PRAGMA freelist_count').pluck(),
    pageCount: p('PRAGMA page_count').pluck(),
  };
}
