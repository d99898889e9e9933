// Opens the one SQLite file, sets durability pragmas, and applies migrations in order.
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { checksum } from '../rows/checksum.ts';
import { MIGRATIONS_DIR } from '../paths.ts';

export type Db = Database.Database;

export interface OpenOptions {
  /** "full" (default) acknowledges a write only once it is durable; "normal" may lose the newest writes on power loss. */
  synchronous?: 'full' | 'normal' | 'off';
  /** Told about one-time conversions that take a while on a big file; silent without. */
  log?: (line: string) => void;
}

/** PRAGMA auto_vacuum's value for INCREMENTAL: freed pages can be given back (incremental_vacuum). */
const AUTO_VACUUM_INCREMENTAL = 2;

export function openDatabase(file: string, opts: OpenOptions = {}): Db {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  // A new file keeps the bookkeeping that lets compaction give freed pages back to the
  // filesystem (incremental_vacuum, on the writer thread). It can only be chosen before the
  // first table exists; an older file is converted below.
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${(opts.synchronous ?? 'full').toUpperCase()}`);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // Readers never wait on the single writer in WAL mode; keep checkpoints from growing the WAL without bound.
  db.pragma('wal_autocheckpoint = 4000');
  db.pragma('cache_size = -16384');
  // Migration 004 fills in the checksums of rows already stored.
  db.function('hearth_crc32', { deterministic: true }, (data: unknown) => (data instanceof Uint8Array ? checksum(data) : null));
  migrate(db, undefined, opts.log);
  convertToIncrementalVacuum(db, file, opts.log);
  return db;
}

/**
 * A file made before hearth set auto_vacuum never shrinks: rewrites it once (VACUUM) with
 * INCREMENTAL set. It copies every live page, so it takes a while on a big store: logged.
 */
function convertToIncrementalVacuum(db: Db, file: string, log: ((line: string) => void) | undefined): void {
  if (db.pragma('auto_vacuum', { simple: true }) === AUTO_VACUUM_INCREMENTAL) return;
  // (the store's own size: what the WAL holds of it too)
  const mb = () => (((db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number)) / 1024 / 1024).toFixed(1);
  const before = mb();
  log?.(`converting ${file} (${before} MB) to incremental auto-vacuum, so that compaction gives space back: a one-time VACUUM, which takes a while on a big store …`);
  const started = performance.now();
  db.exec('VACUUM');
  // The rewrite went through the WAL: copy it back and cut the WAL file down now.
  db.pragma('wal_checkpoint(TRUNCATE)');
  log?.(`converted ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${before} MB → ${mb()} MB`);
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .map((f) => ({ version: Number(f.split('_')[0]), name: f, sql: readFileSync(join(dir, f), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** Applies each pending migration in its own transaction, recording it; refuses a file written by a newer hearth. */
export function migrate(db: Db, migrations = loadMigrations(), log?: (line: string) => void): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const applied = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number | null };
  const current = applied.v ?? 0;
  const newest = migrations.length ? migrations[migrations.length - 1].version : 0;
  if (current > newest) {
    throw new Error(
      `the data file has schema version ${current}, but this hearth knows versions up to ${newest}: it was written by a newer hearth; upgrade hearth to open it`,
    );
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const m of migrations) {
    if (m.version <= current) continue;
    // (a new file takes every migration at once: only an upgrade is worth a line)
    if (current > 0) log?.(`applying migration ${m.name}`);
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
    })();
  }
}
