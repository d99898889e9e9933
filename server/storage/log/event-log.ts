// The event log and the current-object table, written together in one transaction per
// batch. Writes that arrive while the previous batch commits share the next commit (group
// commit): one fsync for many writes, while each caller still waits for its own durability.
// Write functions run here, on the main thread, against the committed state plus the batch so
// far; a failing one is undone alone and emits nothing. The resulting row operations commit
// through the backend (backend.ts; SQLite's commits on a writer thread, so the fsync never
// blocks request handling). This file is the log's semantics; what it stores and how is the
// backend's.
import { encodeObject, decodeObject, StoredRow, CHECK_STORED_JSON, EVENT_CLOSE, EVENT_OPEN, servedAsStored, textServedAsStored } from '../rows/codec.ts';
import { deepFreeze } from '../../util/json.ts';
import { MAX_OBJECT_BYTES, ObjectTooLargeError, ApiError } from '../../errors.ts';
import { KeyFilter } from './key-filter.ts';
import { checksum, intact } from '../rows/checksum.ts';
import { corruptObjectsError, reportCorruptRow, storageKey, type CorruptRow } from '../rows/corrupt-rows.ts';
import { nextSliceSize } from './slices.ts';
import { nextTurn } from '../../util/turns.ts';
import { EVENT_TYPE_CODE, EVENT_TYPE_OF_CODE, type LogBackend, type RawRow, type RowOp, type RowsQuery, type TextRow } from './backend.ts';
import type { Key, StoredObject, LogEvent, EventListener, RowFilter, WriteTx, CompactionResult, JoinedRows } from './types.ts';
import { fallbackLogger, type Logger } from '../../logging/logger.ts';

/** Rows of recently written keys kept in memory (at most a few MB: rows are a few KB). */
const RECENT_ROWS = 1024;

/** Bounds on the events one slice visits (the upper one bounds its WAL writes, and so the fsync of the batch after it). */
const SLICE_ROWS_MIN = 16;
const SLICE_ROWS_MAX = 2048;

interface PendingWrite {
  fn: (tx: WriteTx) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export interface EventLogOptions {
  /** Where storage failures are told (a full disk); stderr by default. */
  log?: (line: string) => void;
  /** Where the log's own measurements go (hearth_storage_* metrics). */
  metrics?: EventLogMetrics;
  /** Where a commit listener's failure (a bug) is logged with its stack; stderr by default. */
  logger?: Logger;
}

/** What the log measures of itself: each committed batch, each compaction and the vacuum after it. */
export interface EventLogMetrics {
  /** A batch committed: its writes, and how long the writer took to commit it, fsync included (when the backend says). */
  committed(writes: number, commitSeconds: number | undefined): void;
  /** A compaction's removal of history, and the vacuum that gave the space back. */
  compacted(compactionSeconds: number, vacuumSeconds: number): void;
}

export class EventLog {
  /** Where the log is stored; what a test may reach past the log for (the SQLite backend's test hooks). */
  readonly backend: LogBackend;
  /** Newest committed resourceVersion. */
  private lastRv: number;
  private pending: PendingWrite[] = [];
  private scheduled = false;
  /** One batch at a time is with the backend; the next one gathers meanwhile. */
  private inFlight = false;
  private readonly listeners = new Set<EventListener>();
  private closed?: Promise<void>;
  /** Versions at or below this were compacted: lists and watches from them answer 410 Gone. */
  private compacted: number;
  private compacting?: Promise<CompactionResult>;
  /** A compaction set `compacted` but stopped (shutdown, crash) before removing every row it covers. */
  private unfinishedCompaction: boolean;
  private readonly rvWaiters = new Set<{ rv: number; resolve: () => void }>();
  /** Compaction waiting for the batch with the backend to finish: a batch waits for one slice at most. */
  private turnWaiters: (() => void)[] = [];
  /**
   * The committed rows of the keys written last (null: deleted), newest last. Every write goes
   * through this log, so an entry is the key's committed state: rereads of objects just written
   * (an update reads, then checks the version at commit; controllers and apply loops) skip the
   * backend (SQLite: a connection loses its page cache each time another connection commits).
   */
  private readonly recentRows = new Map<string, { rv: number; uid: string; data: Uint8Array; committed: unknown } | null>();
  /** Every key in the objects table or being written (and some deleted ones): creates check it before the backend. */
  private keyFilter: KeyFilter;
  private readonly report: (line: string) => void;
  private readonly logger: Logger;
  /** Why writes fail (a full disk, a read-only file) while they do: told once, and again when they work. */
  private writesFailing?: string;

  private readonly metrics: EventLogMetrics | undefined;

  constructor(backend: LogBackend, opts: EventLogOptions = {}) {
    this.backend = backend;
    this.metrics = opts.metrics;
    this.report = opts.log ?? fallbackLogger().lines();
    this.logger = opts.logger ?? fallbackLogger();
    const stored = backend.storedState();
    this.lastRv = stored.lastRv;
    this.compacted = stored.compactedRv;
    // No record: compacted by a hearth that set compacted_rv only when done.
    this.unfinishedCompaction = stored.compactionDoneRv !== undefined && stored.compactionDoneRv < this.compacted;
    this.keyFilter = this.buildKeyFilter();
  }

  /**
   * Finishes the batch in flight now if the backend has committed it, without waiting for its
   * answer to come through (see SqliteBackend.pollCommitted). The listener calls this for each
   * request that comes in, write() for each write. True when it finished one.
   */
  pollCommitted(): boolean {
    return this.backend.pollCommitted();
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
    const row = this.backend.currentRow(key);
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
    const row = this.backend.currentRow(key);
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
    const rows = this.servedTextRows(res, ns, prefix, opts);
    if (!rows) return undefined;
    // Each row's text encoded straight into the page's one Buffer (no joined string to copy).
    let size = rows.length > 0 ? rows.length - 1 : 0;
    for (const r of rows) size += Buffer.byteLength(r[2]);
    const json = Buffer.allocUnsafe(size);
    let at = 0;
    for (let i = 0; i < rows.length; i++) {
      if (i > 0) json[at++] = 0x2c;
      at += json.write(rows[i][2], at);
    }
    const last = rows[rows.length - 1];
    return { json, count: rows.length, last: last && { ns: last[3], name: last[4] } };
  }

  /**
   * The current objects of a resource as a JSON watch stream's ADDED events, one line each in key
   * order (a watch's initial state), under listJoined's condition; undefined otherwise.
   */
  addedEventsJoined(res: string, ns: string | undefined, prefix: Buffer, noNulls: boolean): Buffer | undefined {
    const rows = this.servedTextRows(res, ns, prefix, { noNulls });
    if (!rows) return undefined;
    let text = '';
    for (const row of rows) text += `${ADDED_OPEN}${row[2]}${EVENT_CLOSE_TEXT}`;
    return Buffer.from(text);
  }

  /**
   * textRows when every row is served as stored (listJoined's condition), their checksums
   * checked: damaged ones fail the read, all of them named. Undefined when a row is not.
   */
  private servedTextRows(res: string, ns: string | undefined, prefix: Buffer, opts: RowsQuery & { noNulls?: boolean }): TextRow[] | undefined {
    const rows = this.backend.textRows(res, ns, opts);
    const prefixText = prefix.toString('latin1');
    let corrupt: CorruptRow[] | undefined;
    for (const r of rows) {
      // (first: a CBOR row's text is no JSON, and its checksum is of other bytes)
      if (!textServedAsStored(r[2], prefixText, opts.noNulls)) return undefined;
      if (!intact(r[2], r[5])) (corrupt ??= []).push(corruptRow(res, r[3], r[4], r[0]));
    }
    if (corrupt) throw corruptObjectsError(corrupt);
    return rows;
  }

  /**
   * The rows of list() (or of listAt() when `rv` is given), as arrays: rv, uid, data, ns, name,
   * crc (and labels, see RowFilter.readLabels). Each row's bytes are checked against its
   * checksum: damaged ones fail the read, all of them named (or are left out: skipCorrupt).
   */
  private rawRows(res: string, ns: string | undefined, opts: RowsQuery): RawRow[] {
    return this.intactRows(res, this.backend.rows(res, ns, opts), opts.only?.skipCorrupt ?? false);
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

  /** How many current objects of a resource come after a key (remainingItemCount). */
  countAfter(res: string, ns: string | undefined, after: { ns: string; name: string }): number {
    return this.backend.countAfter(res, ns, after);
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
   * unless that is a deletion (read as LogBackend.rows says). Same order and paging as list().
   */
  listAt(res: string, ns: string | undefined, rv: number, after?: { ns: string; name: string }, limit = -1, only?: RowFilter): StoredObject[] {
    return this.rawRows(res, ns, { rv, after, limit, only }).map((r) => storedRow(res, r));
  }

  /** remainingItemCount for a snapshot page. */
  countAfterAt(res: string, ns: string | undefined, rv: number, after: { ns: string; name: string }): number {
    return this.backend.countAfterAt(res, ns, rv, after);
  }

  /** Whether any object of the resource was written after rv (if not, the current table is the snapshot). */
  changedSince(res: string, rv: number): boolean {
    return this.backend.changedSince(res, rv);
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
   * current version of every live object stays. Runs in small slices between write batches
   * (on SQLite's writer thread), so writers wait for one slice at most; then the backend gives
   * the space back (releaseSpace), in slices as well.
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
      const started = performance.now();
      let removed = 0;
      let slices = 0;
      let longest = 0;
      let longestPause = 0;
      // The new compacted version is durable and in force before the first row goes: a list or
      // watch from an older version answers 410 from now on, instead of reading a history with
      // holes (also after a crash midway; the next compaction removes what this one left).
      if (target > this.compacted) {
        const saved = await this.backend.recordCompaction({ compactedRv: target, doneRv: this.unfinishedCompaction ? 0 : this.compacted });
        if (!saved.ok) throw new Error(`compaction failed: ${saved.error}`);
        this.compacted = target;
        this.unfinishedCompaction = true;
      }
      const first = this.backend.firstEventRv() ?? target;
      // Slices sized to take about SLICE_TARGET_MS each (slices.ts). A slice goes to the writer
      // only once the batch there is done: batches and slices alternate, so a batch waits for one
      // slice at most, and the compaction still advances under a continuous stream of writes.
      let sliceRows = 128;
      for (let from = Math.max(first - 1, 0); from < target; ) {
        // Shutting down: stop between slices; the next compaction removes the rest.
        if (!(await this.turnAfterBatch())) throw new Error('storage is closed');
        const r = await this.backend.compactSlice({ from, to: target, rows: sliceRows });
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
        await nextTurn();
      }
      const done = await this.backend.recordCompaction({ doneRv: target });
      if (!done.ok) throw new Error(`compaction failed: ${done.error}`);
      this.unfinishedCompaction = false;
      const vacuumStarted = performance.now();
      const vacuum = await this.backend.releaseSpace(() => this.turnAfterBatch());
      this.metrics?.compacted((vacuumStarted - started) / 1000, (performance.now() - vacuumStarted) / 1000);
      return { compactedRv: target, removed, slices, longestSliceMs: longest, longestPauseMs: Math.max(longestPause, vacuum.longestPauseMs), pagesReleased: vacuum.pagesReleased, vacuumSlices: vacuum.slices, longestVacuumMs: vacuum.longestMs };
    })().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  /** Waits for the batch with the backend, if any, so that a slice goes next (see NextTurn); false once closing. */
  private async turnAfterBatch(): Promise<boolean> {
    if (this.inFlight) await new Promise<void>((resolve) => this.turnWaiters.push(resolve));
    return this.closed === undefined;
  }

  /** Events after rv, oldest first (watch replay); optionally of one resource only. */
  eventsAfter(rv: number, limit: number, res?: string): LogEvent[] {
    const rows = this.backend.eventsAfter(rv, limit, res);
    const corrupt = rows.filter((r) => !intact(r.data, r.crc));
    if (corrupt.length) throw corruptObjectsError(corrupt.map((r) => corruptRow(r.res, r.ns, r.name, r.rv)));
    return rows.map((r) => ({
      type: EVENT_TYPE_OF_CODE[r.type],
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
    const rows = this.backend.eventTuplesAfter(res, ns, rv, limit);
    const corrupt = rows.filter((r) => !intact(r[2], r[3]));
    if (corrupt.length) throw corruptObjectsError(corrupt.map((r) => corruptRow(res, r[4], r[5], r[0])));
    const parts: Buffer[] = [];
    for (const [, type, data] of rows) {
      if (!servedAsStored(data, prefix, noNulls)) return undefined;
      parts.push(EVENT_OPEN[EVENT_TYPE_OF_CODE[type]], data, EVENT_CLOSE);
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
   * What the writes of a batch the backend could not commit answer. A full disk, or a file that
   * became read-only or unwritable, answers as kube-apiserver answers etcd's "database space
   * exceeded" (an error that is no API status: 500, no reason), is told in the log once, and
   * lasts only as long as its cause: reads go on, and writes work again once space is freed.
   */
  private writeFailure(reply: { error: string; code?: string }): Error {
    if (!this.backend.isOutage(reply)) return new Error(`storage write failed: ${reply.error}`);
    const why = `${reply.error} (${reply.code ?? ''})`;
    if (this.writesFailing !== why) {
      this.report(`hearth: writes to ${this.backend.location} fail: ${why}; reads are still served, and writes resume once the cause is gone (free some space, or make the file writable)`);
      this.writesFailing = why;
    }
    return new ApiError(500, '', `storage write failed: ${why}`);
  }

  /** Waits for queued writes, then stops the backend (SQLite: its storage threads). */
  close(): Promise<void> {
    this.closed ??= (async () => {
      while (this.inFlight || this.pending.length || this.compacting) await new Promise((r) => setTimeout(r, 1));
      await this.backend.close();
    })();
    return this.closed;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private buildKeyFilter(): KeyFilter {
    const filter = new KeyFilter(this.backend.objectCount());
    for (const [res, ns, name] of this.backend.objectKeys()) {
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
      if (op.type === EVENT_TYPE_CODE.DELETED) {
        recent.set(k, null);
        continue;
      }
      // ops and emitted grow and shrink together: one event per row. The object is kept only
      // once it is updated: an object kept lives past the young generation, and a stream of
      // creates (rarely read back) would fill the old one with objects dying there.
      const committed = op.type === EVENT_TYPE_CODE.MODIFIED ? emitted[i].object : undefined;
      // The tests make any later change of a committed object throw.
      if (CHECK_STORED_JSON && committed) deepFreeze(committed);
      recent.set(k, { rv: op.rv, uid: op.uid, data: op.data, committed });
    }
    for (const k of recent.keys()) {
      if (recent.size <= RECENT_ROWS) break;
      recent.delete(k);
    }
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
        return this.backend.currentRv(key);
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
        ops.push({ rv: r, type: EVENT_TYPE_CODE[type], res: key.res, ns: key.ns, name: key.name, uid, prevRv: prev?.rv ?? null, data, crc: checksum(data) });
        emitted.push({ type, rv: r, key, object: obj, prevObject: prev ? (prev.committed ?? prev.object) : undefined });
        record(key, { rv: r, uid, object: obj, committed: obj });
        return r;
      },
      remove: (key, obj, prev) => {
        const r = ++rv;
        obj.metadata.resourceVersion = String(r);
        const data = encodeObject(obj);
        ops.push({ rv: r, type: EVENT_TYPE_CODE.DELETED, res: key.res, ns: key.ns, name: key.name, uid: obj.metadata.uid, prevRv: prev.rv, data, crc: checksum(data) });
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
    void this.backend.commit(ops).then((reply) => {
      this.inFlight = false;
      // A waiting compaction slice goes next (posted from a microtask, before the next flush).
      const turns = this.turnWaiters.splice(0);
      for (const turn of turns) turn();
      if (!reply.ok) {
        // Nothing of this batch is stored: no row, no event, no resourceVersion taken.
        const err = this.writeFailure(reply);
        for (const w of batch) w.reject(err);
      } else {
        if (this.writesFailing) {
          this.report(`hearth: writes to ${this.backend.location} succeed again`);
          this.writesFailing = undefined;
        }
        this.lastRv = rv;
        this.metrics?.committed(ops.length, 'ms' in reply && typeof reply.ms === 'number' ? reply.ms / 1000 : undefined);
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
            this.logger.error(e, 'event listener failed');
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

function keyString(k: Key): string {
  return `${k.res}\u0000${k.ns}\u0000${k.name}`;
}

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
function previousObject(res: string, ns: string, name: string, rv: number, data: Buffer, crc: number | null): unknown {
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
function decodeEvent(res: string, ns: string, name: string, rv: number, data: Buffer): unknown {
  try {
    return decodeObject(data);
  } catch (e) {
    throw corruptObjectsError([corruptRow(res, ns, name, rv, (e as Error).message)]);
  }
}

const ADDED_OPEN = EVENT_OPEN.ADDED.toString();
const EVENT_CLOSE_TEXT = EVENT_CLOSE.toString();
