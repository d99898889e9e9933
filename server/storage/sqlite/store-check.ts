// Start-up checks of the store (DATA_DIR/hearth.db), made before the server touches anything
// in the data directory: hearth never serves from a damaged store, and never quietly starts a
// new, empty cluster (resourceVersions from 1) beside an existing cluster's credentials. A
// refusal names the file and why, and says what to do (restore it, or --initialize).
import Database from 'better-sqlite3';
import { accessSync, constants, existsSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { unwritableReason } from '../data-dir/lock.ts';
import { PKI_DIR } from '../data-dir/layout.ts';

/** A store hearth will not start from; the message is for the user as it is. */
export class StoreRefusedError extends Error {}

export interface StoreCheckOptions {
  /** Create an empty store even though the directory holds a cluster's credentials (--initialize). */
  initialize?: boolean;
  log?: (line: string) => void;
}

/** What restores a store (another command of hearth's). */
const RESTORE = 'npm run restore -- --data-dir DIR --from BACKUP';

/**
 * Refuses (StoreRefusedError) a store that cannot be opened, is not a database, fails
 * PRAGMA quick_check, or is missing or empty while the directory has a PKI or an admin
 * kubeconfig (unless opts.initialize). Reads the whole file: quick_check visits every page.
 */
export function checkStore(file: string, opts: StoreCheckOptions = {}): void {
  const dir = dirname(file);
  const stat = statOf(file);
  if (stat && !stat.isFile()) refuse(`cannot open the store ${file}: it is not a regular file`);
  const wal = statOf(`${file}-wal`);
  if (!stat && wal && wal.size > 0) {
    refuse(`the store ${file} is missing but its write-ahead log ${file}-wal is there (it holds the newest writes of that store): restore the store (${RESTORE}), or move ${basename(file)}-wal away and start with --initialize to begin an empty cluster`);
  }
  if (!stat || (stat.size === 0 && !(wal && wal.size > 0))) {
    const credentials = [PKI_DIR, 'admin.kubeconfig'].filter((f) => existsSync(join(dir, f)));
    if (credentials.length && !opts.initialize) {
      refuse(
        `the data directory ${dir} has a cluster's credentials (${credentials.join(', ')}) but its store ${file} is ${stat ? 'empty (0 bytes)' : 'missing'}: ` +
          `starting would make a new, empty cluster whose resourceVersions start again from 1. Restore the store from a backup (${RESTORE}), ` +
          `or start with --initialize to create an empty store on purpose`,
      );
    }
    if (credentials.length) opts.log?.(`--initialize: creating an empty store ${file} beside the credentials already in ${dir}`);
    writable(dir, file);
    return;
  }
  writable(dir, file);
  readableAndWritable(file);
  const started = performance.now();
  verify(file);
  const seconds = (performance.now() - started) / 1000;
  // (it reads the whole file: worth a line when that is felt)
  if (seconds >= 1) opts.log?.(`checked the store ${file} (${(statSync(file).size / 1024 / 1024).toFixed(0)} MB) in ${seconds.toFixed(1)} s`);
}

function refuse(message: string): never {
  throw new StoreRefusedError(message);
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    refuse(`cannot open the store ${path}: ${(e as Error).message}`);
  }
}

/** SQLite creates FILE-wal and FILE-shm beside the store: the directory must take new files. */
function writable(dir: string, file: string): void {
  const why = unwritableReason(dir);
  if (why) {
    refuse(`cannot open the store ${file}: its directory ${dir} is not writable: ${why}; hearth keeps the store's write-ahead log (${basename(file)}-wal) and shared memory (${basename(file)}-shm) beside it`);
  }
}

function readableAndWritable(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    if (!existsSync(f)) continue;
    try {
      accessSync(f, constants.R_OK | constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'EROFS' ? 'it is on a read-only filesystem' : code === 'EACCES' || code === 'EPERM' ? 'it is not readable and writable by this user (permission denied)' : (e as Error).message;
      refuse(`cannot open the store ${file}: ${f === file ? 'the file' : f}: ${why}`);
    }
  }
}

/**
 * Opens the store as the server will (recovering its WAL, the way SQLite recovers from a crash
 * or a power cut) and runs PRAGMA quick_check: the b-trees, their pages and records, without
 * the cross-checks of indexes that integrity_check adds (several times slower).
 */
function verify(file: string): void {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    const problems = (db.pragma('quick_check') as { quick_check: string }[]).map((r) => r.quick_check).filter((r) => r !== 'ok');
    if (problems.length) damaged(file, `PRAGMA quick_check found ${problems.length === 100 ? '100 or more' : problems.length} problem(s): ${problems.slice(0, 3).join('; ')}`);
  } catch (e) {
    if (e instanceof StoreRefusedError) throw e;
    const code = String((e as { code?: unknown }).code ?? '');
    if (code === 'SQLITE_NOTADB') refuse(`${file} is not a hearth store (SQLite: ${(e as Error).message}): hearth will not serve from it. Restore the store from a backup (${RESTORE})`);
    if (code.startsWith('SQLITE_CORRUPT')) damaged(file, `SQLite: ${(e as Error).message}`);
    refuse(`cannot open the store ${file}: ${(e as Error).message}${code ? ` (${code})` : ''}`);
  } finally {
    db?.close();
  }
}

function damaged(file: string, why: string): never {
  refuse(
    `the store ${file} is damaged (${why}); hearth will not serve from it. Restore it from a backup (${RESTORE}); ` +
      `keep the damaged file (move it aside, with its -wal file) if you want to inspect it`,
  );
}
