// Messages between the event log (main thread) and the writer thread (writer-worker.js).

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
}

export type WriterRequest =
  | { id: number; ops: RowOp[] }
  | { id: number; meta: [string, string] }
  /** Delete superseded events and tombstones with rv in (from, to], given the compaction cutoff. */
  | { id: number; compact: { from: number; to: number; cutoff: number } }
  | { id: number; close: true };
export type WriterResponse = { id: number; ok: true; removed?: number; ms?: number } | { id: number; ok: false; error: string };
