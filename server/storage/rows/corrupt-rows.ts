// Stored rows that cannot be read back as objects: their bytes no longer match the checksum
// written with them (damaged on disk), or they do not decode. kube-apiserver answers such an
// object (KEP-3926, "handling undecryptable/corrupt resources") with a 500 InternalError whose
// message names its storage key; a list that meets some fails as a whole, naming each of them
// (at most 100), instead of serving a partial or broken body. Each is logged once and counted,
// and DELETE ...?ignoreStoreReadErrorWithClusterBreakingPotential=true removes one.
import { ApiError, internalError } from '../../errors.ts';
import { fallbackLogger } from '../../logging/logger.ts';

/** Reads that met a corrupt row since start (what a /metrics endpoint will expose). */
export const storageCounters = { corruptObjectReads: 0 };

/** A list names at most this many corrupt objects (kube's aggregator stops past 100). */
const MAX_NAMED = 100;
/** Rows already logged, so that a controller re-reading one does not flood the log; bounded. */
const logged = new Set<string>();
const MAX_LOGGED = 10_000;

export interface CorruptRow {
  /** The object's storage key (see storageKey). */
  key: string;
  rv: number;
  /** Why it cannot be read, after kube's "object not decodable: ". */
  detail: string;
}

/**
 * An object's key as kube-apiserver would name it in etcd: /registry/RESOURCE/NAMESPACE/NAME,
 * with the group as a path segment for a grouped resource (res is "deployments.apps").
 */
export function storageKey(res: string, ns: string, name: string): string {
  const dot = res.indexOf('.');
  const path = dot < 0 ? res : `${res.slice(dot + 1)}/${res.slice(0, dot)}`;
  return ns ? `/registry/${path}/${ns}/${name}` : `/registry/${path}/${name}`;
}

/** Counts and logs (once per row) a corrupt row that a read met. */
export function reportCorruptRow(row: CorruptRow): void {
  storageCounters.corruptObjectReads++;
  const id = `${row.key}@${row.rv}`;
  if (logged.has(id)) return;
  if (logged.size >= MAX_LOGGED) logged.clear();
  logged.add(id);
  fallbackLogger().lines()(
    `error: stored object ${row.key} (resourceVersion ${row.rv}) is corrupt: ${row.detail}; reads of it answer 500 until it is ` +
      `restored from a backup or removed with DELETE ...?ignoreStoreReadErrorWithClusterBreakingPotential=true`,
  );
}

/** kube's StorageError text for one corrupt object. */
function storageErrorText(row: CorruptRow): string {
  return `StorageError: corrupt object, Code: 7, Key: ${row.key}, ResourceVersion: ${row.rv}, AdditionalErrorMsg: object not decodable: ${row.detail}`;
}

/** The 500 a read of corrupt rows answers: the unsafe delete goes past it, nothing else does. */
export class CorruptObjectError extends ApiError {
  constructor(readonly rows: CorruptRow[]) {
    const named = rows.slice(0, MAX_NAMED);
    const text = named.length === 1 ? storageErrorText(named[0]) : `unable to transform or decode ${named.length} objects: {\n${named.map((r) => `\t${storageErrorText(r)}\n`).join('')}}`;
    const status = internalError(text);
    super(status.code, status.reason, status.message, status.details);
  }
}

/** The error a read of these corrupt rows answers, reported here: one names its key, several are listed as kube aggregates them. */
export function corruptObjectsError(rows: CorruptRow[]): CorruptObjectError {
  for (const row of rows) reportCorruptRow(row);
  return new CorruptObjectError(rows);
}
