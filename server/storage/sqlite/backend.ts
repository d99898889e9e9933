// The event log's SQLite backend (../log/backend.ts): reads on the main thread's connection;
// writes on a writer thread with its own connection (writer-worker.js), so the fsync of a
// commit never blocks request handling, and a checkpointer thread beside it that copies the
// WAL back into the database file, so no commit waits for a checkpoint.
import { Worker, MessageChannel } from 'node:worker_threads';
import type { Db } from './database.ts';
import { prepareStatements, FilteredStatements, type Statements } from './statements.ts';
import { releaseFreePages } from './vacuum.ts';
import type { WriterRequest, WriterResponse, StorageThreadLog, WriterStats, CheckpointStats, StorageThreadData } from './writer-protocol.ts';
import type { LogBackend, StoredLogState, CurrentRow, RawRow, TextRow, RowsQuery, EventRow, EventTuple, RowOp, BackendReply, SliceRange, SliceReport, NextTurn, SpaceReleased } from '../log/backend.ts';
import type { Key } from '../log/types.ts';
import { fallbackLogger, type Logger } from '../../logging/logger.ts';

export interface SqliteBackendOptions {
  /** The SQLite file; the writer thread opens its own connection to it. */
  file: string;
  synchronous?: 'full' | 'normal' | 'off';
  /** WAL size in pages at which the storage threads make it start over (default 4096, 16 MiB); for tests. */
  walRestartFrames?: number;
  /** Where a storage thread's failure is logged (default: stderr). */
  logger?: Logger;
}

export interface StorageStats {
  writer: WriterStats;
  checkpointer: CheckpointStats;
}

export class SqliteBackend implements LogBackend {
  readonly location: string;
  private readonly db: Db;
  /** Where the storage threads' failures go (and the lines they send: a failed checkpoint). */
  private readonly logger: Logger;
  private readonly stmts: Statements;
  private readonly filtered: FilteredStatements;
  private readonly writer: Worker;
  /** Copies the WAL into the database file alongside the writer (see writer-worker.js). */
  private readonly checkpointer: Worker;
  /** The writer request id of the batch being committed (0: none). */
  private inFlightId = 0;
  /** The id of the last batch the writer committed, shared with it (StorageThreadData.committed). */
  private readonly committedSignal = new Int32Array(new SharedArrayBuffer(4));
  private nextRequestId = 1;
  private readonly replies = new Map<number, (r: WriterResponse) => void>();
  /** Runs its function's reads in one read transaction: all of them see one committed state. */
  private readonly oneSnapshot: <T>(read: () => T) => T;

  /** db is the reading connection (this thread); writes go to a writer thread with its own connection. */
  constructor(db: Db, opts: SqliteBackendOptions) {
    this.db = db;
    const logger = (this.logger = opts.logger ?? fallbackLogger());
    this.location = opts.file;
    this.stmts = prepareStatements(db);
    this.filtered = new FilteredStatements(db);
    const tx = db.transaction((read: () => unknown) => read());
    this.oneSnapshot = <T>(read: () => T) => tx(read) as T;
    const { writer, checkpointer } = startStorageThreads({ file: opts.file, synchronous: opts.synchronous ?? 'full', walRestartFrames: opts.walRestartFrames, committed: this.committedSignal });
    this.writer = writer;
    this.checkpointer = checkpointer;
    this.writer.on('message', (r: WriterResponse) => this.deliver(r));
    this.checkpointer.on('message', (r: WriterResponse | StorageThreadLog) => this.deliver(r));
    // Without it the WAL is no longer copied back (it grows), but every write still commits durably.
    this.checkpointer.on('error', (e) => logger.error(e, 'storage checkpointer thread failed'));
    this.checkpointer.unref();
    this.writer.on('error', (e) => {
      logger.error(e, 'storage writer thread failed');
      for (const reply of this.replies.values()) reply({ id: 0, ok: false, error: `storage writer failed: ${e.message}` });
      this.replies.clear();
    });
    this.writer.unref();
  }

  storedState(): StoredLogState {
    const seq = this.stmts.lastRv.get() as { seq: number } | undefined;
    const compacted = this.stmts.meta.get('compacted_rv') as { value: string } | undefined;
    const done = this.stmts.meta.get('compaction_done_rv') as { value: string } | undefined;
    return { lastRv: seq?.seq ?? 0, compactedRv: compacted ? Number(compacted.value) : 0, compactionDoneRv: done === undefined ? undefined : Number(done.value) };
  }

  objectCount(): number {
    return (this.stmts.objectCount.get() as { n: number }).n;
  }

  objectKeys(): Iterable<[string, string, string]> {
    return this.stmts.objectKeys.iterate() as Iterable<[string, string, string]>;
  }

  currentRow(key: Key): CurrentRow | undefined {
    return this.stmts.get.get(key.res, key.ns, key.name) as CurrentRow | undefined;
  }

  currentRv(key: Key): number | undefined {
    return (this.stmts.rvOf.get(key.res, key.ns, key.name) as { rv: number } | undefined)?.rv;
  }

  rows(res: string, ns: string | undefined, query: RowsQuery): RawRow[] {
    const { after, limit = -1, only } = query;
    // (no cursor: after the empty key, see NS_CURSOR)
    const params = { res, ns: ns ?? after?.ns ?? '', name: after?.name ?? '', limit };
    return this.atVersion(res, query.rv, (rv) => {
      if (only !== undefined && (only.name !== undefined || only.labels?.length || only.fields?.length || only.readLabels)) {
        try {
          return this.filtered.rows(ns !== undefined, rv, only, params);
        } catch (e) {
          // SQLite read a row's labels or fields from JSON text that is not JSON (a damaged
          // row): read them all unfiltered, to name the damaged ones (the caller filters anyway).
          if (!/malformed JSON/.test((e as Error).message)) throw e;
        }
      }
      if (rv === undefined) return (ns === undefined ? this.stmts.rawAll : this.stmts.rawNs).all(params) as RawRow[];
      return (ns === undefined ? this.stmts.rawAllAt : this.stmts.rawNsAt).all({ ...params, rv }) as RawRow[];
    });
  }

  textRows(res: string, ns: string | undefined, query: RowsQuery): TextRow[] {
    const { after, limit = -1 } = query;
    const params = { res, ns: ns ?? after?.ns ?? '', name: after?.name ?? '', limit };
    return this.atVersion(res, query.rv, (rv) => {
      if (rv === undefined) return (ns === undefined ? this.stmts.textAll : this.stmts.textNs).all(params) as TextRow[];
      return (ns === undefined ? this.stmts.textAllAt : this.stmts.textNsAt).all({ ...params, rv }) as TextRow[];
    });
  }

  countAfter(res: string, ns: string | undefined, after: { ns: string; name: string }): number {
    return ((ns === undefined ? this.stmts.countAll : this.stmts.countNs).get({ res, ns: ns ?? after.ns, name: after.name }) as { n: number }).n;
  }

  countAfterAt(res: string, ns: string | undefined, at: number, after: { ns: string; name: string }): number {
    return this.atVersion(res, at, (rv) => {
      if (rv === undefined) return this.countAfter(res, ns, after);
      const params = { res, ns: ns ?? after.ns, name: after.name, rv };
      return ((ns === undefined ? this.stmts.countAllAt : this.stmts.countNsAt).get(params) as { n: number }).n;
    });
  }

  /**
   * A read of `res` as it was at version `at` (none: as it is): in one read transaction, from the
   * current table when no event of `res` came after `at` (read: undefined), else from the log
   * (read: at). One transaction, because the writer thread commits meanwhile, and what this
   * thread knows of the newest version lags what its reads already see.
   */
  private atVersion<T>(res: string, at: number | undefined, read: (rv: number | undefined) => T): T {
    if (at === undefined) return read(undefined);
    return this.oneSnapshot(() => read(this.changedSince(res, at) ? at : undefined));
  }

  changedSince(res: string, rv: number): boolean {
    return this.stmts.changedSince.get(res, rv) !== undefined;
  }

  firstEventRv(): number | undefined {
    return (this.stmts.firstEvent.get() as { rv: number | null }).rv ?? undefined;
  }

  eventsAfter(rv: number, limit: number, res?: string): EventRow[] {
    return (res === undefined ? this.stmts.eventsAfter.all(rv, limit) : this.stmts.eventsAfterOf.all(res, rv, limit)) as EventRow[];
  }

  eventTuplesAfter(res: string, ns: string | undefined, rv: number, limit: number): EventTuple[] {
    const params = { res, ns: ns ?? '', rv, limit };
    return (ns === undefined ? this.stmts.eventRowsAfter : this.stmts.eventRowsAfterNs).all(params) as EventTuple[];
  }

  commit(ops: RowOp[]): Promise<WriterResponse> {
    this.inFlightId = this.nextRequestId;
    return this.ask({ id: this.nextRequestId++, ops });
  }

  /**
   * Answers the batch being committed now if the writer has committed it, without waiting for
   * its reply message: the main thread reads messages only between two of its tasks, and under
   * load a task (a socket read with many requests, a watch fan-out) runs for milliseconds.
   * Measured with 16 writers at once, the reply waited 1.5–2.2 ms on average there, as long as
   * the commit itself; the batch gathering meanwhile waited with it.
   */
  pollCommitted(): boolean {
    const id = this.inFlightId;
    if (id === 0 || Atomics.load(this.committedSignal, 0) !== (id | 0) || !this.replies.has(id)) return false;
    this.deliver({ id, ok: true });
    return true;
  }

  /** A full disk, or a file that became read-only or unwritable. */
  isOutage(failure: { code?: string }): boolean {
    return /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/.test(failure.code ?? '');
  }

  recordCompaction(record: { compactedRv?: number; doneRv: number }): Promise<BackendReply> {
    const meta: [string, string][] = [];
    if (record.compactedRv !== undefined) meta.push(['compacted_rv', String(record.compactedRv)]);
    meta.push(['compaction_done_rv', String(record.doneRv)]);
    return this.ask({ id: this.nextRequestId++, meta });
  }

  compactSlice(range: SliceRange): Promise<BackendReply<SliceReport>> {
    return this.ask({ id: this.nextRequestId++, compact: range });
  }

  releaseSpace(nextTurn: NextTurn): Promise<SpaceReleased> {
    return releaseFreePages(
      {
        freePages: () => this.stmts.freePages.get() as number,
        pageCount: () => this.stmts.pageCount.get() as number,
        vacuum: (pages) => this.ask({ id: this.nextRequestId++, vacuum: { pages } }),
      },
      nextTurn,
    );
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

  /** Stops the storage threads. */
  async close(): Promise<void> {
    await this.ask({ id: this.nextRequestId++, close: true }, this.checkpointer);
    await this.checkpointer.terminate();
    await this.ask({ id: this.nextRequestId++, close: true });
    await this.writer.terminate();
  }

  /** Hands a storage thread's reply to its asker; a reply already taken (pollCommitted) is dropped. */
  private deliver(r: WriterResponse | StorageThreadLog): void {
    if ('log' in r) {
      this.logger.warning(r.log);
      return;
    }
    const reply = this.replies.get(r.id);
    this.replies.delete(r.id);
    if (r.id === this.inFlightId) this.inFlightId = 0;
    // Idle, the writer must not keep the process alive; awaiting a commit, it must.
    if (this.replies.size === 0) this.writer.unref();
    reply?.(r);
  }

  private ask(req: WriterRequest, to = this.writer): Promise<WriterResponse> {
    return new Promise((resolve) => {
      this.replies.set(req.id, resolve);
      this.writer.ref();
      to.postMessage(req);
    });
  }
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
