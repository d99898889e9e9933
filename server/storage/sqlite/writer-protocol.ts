// Messages between the SQLite backend (backend.ts, on the main thread) and the storage threads
// (writer-worker.js), and between the writer and the checkpointer.

import type { MessagePort } from 'node:worker_threads';
import type { RowOp, SliceRange, SliceReport } from '../log/backend.ts';

/** workerData of writer-worker.js. */
export interface StorageThreadData {
  file: string;
  synchronous: string;
  role: 'writer' | 'checkpointer';
  /** The other thread's end of their channel. */
  peer: MessagePort;
  /** WAL size (frames) at which it should start over; tests make it small. */
  walRestartFrames?: number;
  /**
   * One Int32 shared with the main thread: the writer stores the id of each batch it committed
   * (ToInt32 of it) before it replies. The reply is a message, which the main thread reads only
   * between two of its tasks; it checks this instead whenever a request comes in.
   */
  committed: Int32Array;
}

export type WriterRequest =
  | { id: number; ops: RowOp[] }
  /** Upserts into the meta table, in one transaction. */
  | { id: number; meta: [string, string][] }
  /** A compaction slice (see SliceRange): the events the cutoff lets go, by their prev_rv, and deletions. */
  | { id: number; compact: SliceRange }
  /**
   * Give up to `pages` free pages back to the filesystem (PRAGMA incremental_vacuum): pages at
   * the end of the file move into free ones and the file is cut short (when the WAL is next
   * copied back into it). Sized like compaction slices; answered with what is left free.
   */
  | { id: number; vacuum: { pages: number } }
  /** Tests only: cap the file at this many pages (PRAGMA max_page_count), as a full disk would. */
  | { id: number; maxPageCount: number }
  | { id: number; stats: true }
  | { id: number; close: true };

export interface WriterStats {
  /** Tail checkpoints the writer ran for the checkpointer (so the WAL could start over). */
  tailCheckpoints: number;
  /** Of those, the ones that left every frame copied. */
  caughtUp: number;
  longestTailMs: number;
  /** Compaction slices held back until the checkpointer caught up. */
  heldSlices: number;
  /** The longest commit of a write batch (its fsync included). */
  longestBatchMs: number;
}

export interface CheckpointStats {
  runs: number;
  /** The longest checkpoint on the checkpointer thread (it blocks no writer). */
  longestMs: number;
  /** The most frames (pages) the WAL held at a checkpoint. */
  largestWalFrames: number;
}

export type WriterResponse =
  /** A slice's report (SliceReport: a vacuum slice's too, but for removed and to; its tailMs is the longest tail checkpoint the writer ran since the previous slice). */
  | ({
      id: number;
      ok: true;
      /** Vacuum: free pages still in the file after the slice. */
      freePages?: number;
      writer?: WriterStats;
      checkpointer?: CheckpointStats;
    } & SliceReport)
  /** code: SQLite's extended result code (SQLITE_FULL, SQLITE_IOERR_WRITE, …) when SQLite failed. */
  | { id: number; ok: false; error: string; code?: string };

/** Not a reply: a line for the server's log (a checkpoint that failed), which a storage thread has no logger to write. */
export interface StorageThreadLog {
  log: string;
}

/** Writer ↔ checkpointer, over their own channel. */
export type PeerMessage =
  /** writer → checkpointer: a commit happened. */
  | { wrote: true }
  /** checkpointer → writer: the WAL is large and too far ahead of the copy: hold compaction slices for a while. */
  | { hold: true }
  /** checkpointer → writer: copy the small remaining tail between two commits (and release held slices). */
  | { finish: true }
  /** writer → checkpointer: the tail copy's result. */
  | { finished: { busy: number; log: number; checkpointed: number; ms: number } };
