// One hearth process per data directory: the server (and restore, and a backup of a stopped
// directory) holds an exclusive lock on DIR/hearth.lock for as long as it runs.
//
// Node has no flock/fcntl API, so the lock is SQLite's: hearth.lock is a tiny SQLite file opened
// in locking_mode=EXCLUSIVE, whose first write transaction takes an fcntl write lock that the
// connection keeps until it closes. The kernel drops it when the process dies (kill -9
// included), so a lock is never stale and nothing has to clean one up. The holder's pid is the
// file's user_version: a field of the SQLite header (bytes 60-63, big-endian) that a refused
// process reads with a plain read, since SQLite itself cannot read a file another process holds
// exclusively.
import Database from 'better-sqlite3';
import { mkdirSync, openSync, readSync, closeSync, realpathSync, existsSync, accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { LOCK_FILE } from './layout.ts';

/** How long a second process waits for the lock before it gives up (a brief holder, such as another process's failed attempt, lets go well within it). */
const LOCK_WAIT_MS = 500;
/** Offset of user_version in the SQLite database header. */
const USER_VERSION_OFFSET = 60;

export class DataDirInUseError extends Error {
  constructor(readonly dataDir: string, readonly pid: number | undefined) {
    super(`the data directory ${dataDir} is in use by another hearth process (${pid ? `pid ${pid}` : 'pid unknown'}); stop it first, or use another --data-dir`);
  }
}

export interface DataDirLock {
  readonly dataDir: string;
  release(): void;
}

/**
 * Directories this process holds. A second lock from the same process is refused here, before
 * the file is opened: POSIX drops all of a process's fcntl locks on a file when any of its
 * descriptors for that file is closed, so this process must never read its own lock file.
 */
const heldHere = new Set<string>();

/** Creates the directory if needed and takes its lock; throws DataDirInUseError if another process (or this one) holds it. */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const key = realpathSync(dataDir);
  if (heldHere.has(key)) throw new DataDirInUseError(dataDir, process.pid);
  const unwritable = unwritableReason(dataDir);
  if (unwritable) throw new Error(`cannot lock the data directory ${dataDir}: it is not writable: ${unwritable}`);
  const file = join(dataDir, LOCK_FILE);
  const db = new Database(file, { timeout: LOCK_WAIT_MS });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.pragma(`user_version = ${process.pid}`);
    db.exec('COMMIT');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY') throw new DataDirInUseError(dataDir, recordedHolder(file));
    throw new Error(`cannot lock the data directory ${dataDir} (${file}): ${(e as Error).message}`);
  }
  heldHere.add(key);
  let released = false;
  return {
    dataDir,
    release() {
      if (released) return;
      released = true;
      db.close();
      heldHere.delete(key);
    },
  };
}

/** Why this process may not create files in dir (undefined when it may): the lock, the store's WAL and the PKI all go there. */
export function unwritableReason(dir: string): string | undefined {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'EROFS' ? 'it is on a read-only filesystem' : code === 'EACCES' || code === 'EPERM' ? 'this user may not create files in it (permission denied)' : (e as Error).message;
  }
}

/**
 * Whether a process holds the directory (and its pid), found without creating or changing
 * anything: a read-only connection, which the holder's exclusive lock refuses.
 */
export function dataDirHolder(dataDir: string): { pid: number | undefined } | undefined {
  const file = join(dataDir, LOCK_FILE);
  if (!existsSync(file)) return undefined;
  if (heldHere.has(realpathSync(dataDir))) return { pid: process.pid };
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 0 });
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code === 'SQLITE_BUSY' ? { pid: recordedHolder(file) } : undefined;
  } finally {
    db?.close();
  }
}

/** The pid the holder wrote, read without SQLite (see the file header). */
function recordedHolder(file: string): number | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const b = Buffer.alloc(4);
    if (readSync(fd, b, 0, 4, USER_VERSION_OFFSET) < 4) return undefined;
    return b.readUInt32BE(0) || undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
