// What the event log (event-log.ts) needs of a database, as kine's logstructured.Log is what
// its log needs of sqllog: the SQLite backend (../sqlite/backend.ts) implements it, and a second
// one (DESIGN.md's PostgreSQL) would, without touching the log's semantics.
//
// The log keeps the semantics: resourceVersions, group commit (one batch with the backend at a
// time, each write answered once durable), the current state plus the state at an older
// version, what compaction removes and when, checksums checked on every read, the fan-out of
// committed events. A backend stores and reads rows: the events table (row id = rv, each event
// pointing at its key's previous one) and the current-object table, written together in one
// transaction per batch. Reads are synchronous and hand back rows as the database gives them
// (no copies: lists join the stored bytes); writes are asynchronous, each answered once durable.
import type { Key, RowFilter } from './types.ts';

/** RowOp.type and the events' stored type: the codes of ADDED, MODIFIED and DELETED. */
export const EVENT_TYPE_CODE = { ADDED: 1, MODIFIED: 2, DELETED: 3 } as const;
/** EventType by stored code (0 reads as ADDED). */
export const EVENT_TYPE_OF_CODE = ['ADDED', 'ADDED', 'MODIFIED', 'DELETED'] as const;

/** One row operation of a batch: the event appended, and the current row it sets (or removes: DELETED). */
export interface RowOp {
  rv: number;
  /** 1 ADDED, 2 MODIFIED, 3 DELETED */
  type: number;
  res: string;
  ns: string;
  name: string;
  uid: string;
  prevRv: number | null;
  data: Uint8Array;
  /** checksum(data), checked whenever the row is read back. */
  crc: number;
}

/** A current object's row (an existence check reads no more). */
export interface CurrentRow {
  rv: number;
  uid: string;
  data: Buffer;
  crc: number | null;
}

/** A row of a list: rv, uid, data, ns, name, crc, and its labels' JSON text when asked for (null for a CBOR row). */
export type RawRow = [number, string, Buffer, string, string, number | null, (string | null)?];
/** rows() read as text: the stored bytes decoded as UTF-8 (JSON rows' text; meaningless for CBOR). */
export type TextRow = [number, string, string, string, string, number | null];

/** An event with what it replaced (watch replay). */
export interface EventRow {
  rv: number;
  type: number;
  res: string;
  ns: string;
  name: string;
  data: Buffer;
  crc: number | null;
  prev: Buffer | null;
  prevRv: number | null;
  prevCrc: number | null;
}

/** An event of one resource, as an array: rv, type code, data, crc, ns, name. */
export type EventTuple = [number, number, Buffer, number | null, string, string];

/** Which rows a list reads: the current ones or those at `rv`, in key order after `after`, at most `limit` (-1: all), narrowed by `only`. */
export interface RowsQuery {
  rv?: number;
  after?: { ns: string; name: string };
  limit?: number;
  only?: RowFilter;
}

/** A backend's answer to a write; `code` is the database's own name for the failure (SQLITE_FULL). */
export type BackendReply<T = object> = ({ ok: true } & T) | { ok: false; error: string; code?: string };

/**
 * Visit the events with rv in (from, to], to at or below the compaction cutoff, and delete what
 * they supersede (their previous event) and those that are deletions; with rows, only those in
 * (from, end] where end is the rv of the rows-th event after from (or to): the slice's work is
 * bounded by the rows it visits, however sparse the rv range.
 */
export interface SliceRange {
  from: number;
  to: number;
  rows?: number;
}

/** What a compaction slice did. */
export interface SliceReport {
  /** Events removed. */
  removed?: number;
  /** How long the slice took. */
  ms?: number;
  /** The slice's wall time less the time its thread waited for a CPU (Linux; else ms): its own cost, what its size is tuned on. */
  busyMs?: number;
  /** The rv the slice reached: the next one starts after it. */
  to?: number;
  /** The longest other pause of the writer since the previous slice (SQLite: a checkpoint's tail copy). */
  tailMs?: number;
}

/** Space given back to the filesystem after a compaction (SQLite: pages), in slices between write batches. */
export interface SpaceReleased {
  pagesReleased: number;
  slices: number;
  longestMs: number;
  longestPauseMs: number;
}

/** What the database holds about the log itself, read once at start. */
export interface StoredLogState {
  /** The newest resourceVersion ever written (0: none). */
  lastRv: number;
  /** Versions at or below this were compacted (0: never). */
  compactedRv: number;
  /** The version the last finished compaction reached; undefined when the store does not record it. */
  compactionDoneRv: number | undefined;
}

/**
 * Waits until no write batch is with the backend, so that work between batches (a compaction
 * or vacuum slice) goes next; false once the log is closing.
 */
export type NextTurn = () => Promise<boolean>;

export interface LogBackend {
  /** Where the log is stored, as the log's messages name it (a file). */
  readonly location: string;

  storedState(): StoredLogState;
  /** How many current objects there are, and their keys (res, ns, name): the key filter is built from them. */
  objectCount(): number;
  objectKeys(): Iterable<[string, string, string]>;

  /** A current object's row; its bytes are not checked here. */
  currentRow(key: Key): CurrentRow | undefined;
  /** A current object's resourceVersion, its bytes unread. */
  currentRv(key: Key): number | undefined;
  /**
   * The current rows of a resource (one namespace, or all) or, with query.rv, its rows as they
   * were at that version: for a key not written after rv its current row, for the others the
   * row their first later event replaced (none if that event created them). In (ns, name) order.
   * query.only narrows what the database reads; rows it cannot rule out are returned (the
   * caller matches them all). Bytes are not checked here.
   */
  rows(res: string, ns: string | undefined, query: RowsQuery): RawRow[];
  /**
   * rows() unfiltered (query.only is ignored), each row's bytes as text: a JSON row costs a
   * string on the heap rather than a Buffer of its own outside it (about half the time, and far
   * less for the garbage collector to free when a large list is served as it is stored).
   */
  textRows(res: string, ns: string | undefined, query: RowsQuery): TextRow[];
  /** How many current objects come after a key (remainingItemCount). */
  countAfter(res: string, ns: string | undefined, after: { ns: string; name: string }): number;
  /** countAfter at an older version (see rows). */
  countAfterAt(res: string, ns: string | undefined, rv: number, after: { ns: string; name: string }): number;
  /** Whether any object of the resource was written after rv. */
  changedSince(res: string, rv: number): boolean;
  /** The oldest event still stored. */
  firstEventRv(): number | undefined;
  /** Events after rv, oldest first, each with the event it replaced; optionally of one resource. */
  eventsAfter(rv: number, limit: number, res?: string): EventRow[];
  /** Events of one resource (and namespace) after rv, oldest first. */
  eventTuplesAfter(res: string, ns: string | undefined, rv: number, limit: number): EventTuple[];

  /** Appends a batch's rows in one transaction; answered once durable. The log sends one at a time. */
  commit(ops: RowOp[]): Promise<BackendReply>;
  /** Answers the batch being committed now if the database is known to have committed it: true when it did. */
  pollCommitted(): boolean;
  /**
   * Whether a failed commit's cause lies outside the store and lasts only as long as it does (a
   * full disk, a file made read-only or unwritable): writes resume once the cause is gone.
   */
  isOutage(failure: { error: string; code?: string }): boolean;
  /** Durably records a compaction's progress: the version it compacts to (when it starts), and the version it finished. */
  recordCompaction(record: { compactedRv?: number; doneRv: number }): Promise<BackendReply>;
  /** Removes one slice of compacted history (see SliceRange), between two write batches. */
  compactSlice(range: SliceRange): Promise<BackendReply<SliceReport>>;
  /** After a compaction: gives the space it freed back to the filesystem, in slices taken between write batches (nextTurn). */
  releaseSpace(nextTurn: NextTurn): Promise<SpaceReleased>;
  /** Stops what the backend runs; called once no batch or compaction is under way. */
  close(): Promise<void>;
}
