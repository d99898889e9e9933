// The event log's vocabulary, shared by its users (the registry, watches, controllers) and by
// the backends that store it: keys, stored objects, events, what a list may leave out, what a
// write function may do, and what a compaction did.

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

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
  /** Give each JSON row's metadata.labels (StoredRow.labelsJson) as the backend reads them. */
  readLabels?: boolean;
  /**
   * Leave out rows whose bytes fail their checksum (each is reported) instead of failing the
   * whole read: for in-process readers at start, which must not be stopped by one damaged row.
   */
  skipCorrupt?: boolean;
}

/** What the log reads and writes of an object it stores: its uid, and the resourceVersion it gives it. */
export interface StorableObject {
  metadata: { uid: string; resourceVersion?: string };
}

/** What a write function may do inside the shared transaction. */
export interface WriteTx {
  get(key: Key): StoredObject | undefined;
  /** The current resourceVersion of a key, or undefined if absent; no decoding. */
  currentRv(key: Key): number | undefined;
  /** Stores obj as the new current version; sets obj.metadata.resourceVersion; returns the rv. */
  put(type: 'ADDED' | 'MODIFIED', key: Key, obj: StorableObject, prev?: StoredObject): number;
  /** Removes the object; obj is its final state (carried by the DELETED event). */
  remove(key: Key, obj: StorableObject, prev: StoredObject): number;
}

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

/** Rows joined by listJoined. */
export interface JoinedRows {
  json: Buffer;
  count: number;
  last: { ns: string; name: string } | undefined;
}
