// What a data directory (--data-dir) holds, by name: the store (with SQLite's -wal and -shm
// files beside it), the lock, the PKI and the scheduled snapshots (the admin kubeconfig is
// pki/'s). A backup holds the store and the PKI under the same names, beside its manifest.

/** The SQLite file holding every object and the event log. */
export const STORE_FILE = 'hearth.db';
/** One hearth process per data directory (lock.ts). */
export const LOCK_FILE = 'hearth.lock';
/** The CA, serving and client certificates. */
export const PKI_DIR = 'pki';
/** Scheduled snapshots (--snapshot-interval), one directory each. */
export const SNAPSHOTS_DIR = 'snapshots';
