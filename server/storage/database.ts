// Opens the one SQLite file, sets durability pragmas, and applies migrations in order.
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Db = Database.Database;

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

export interface OpenOptions {
  /** "full" (default) acknowledges a write only once it is durable; "normal" may lose the newest writes on power loss. */
  synchronous?: 'full' | 'normal' | 'off';
}

export function openDatabase(file: string, opts: OpenOptions = {}): Db {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${(opts.synchronous ?? 'full').toUpperCase()}`);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // Readers never wait on the single writer in WAL mode; keep checkpoints from growing the WAL without bound.
  db.pragma('wal_autocheckpoint = 4000');
  db.pragma('cache_size = -16384');
  migrate(db);
  return db;
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
export function migrate(db: Db, migrations = loadMigrations()): void {
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
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
    })();
  }
}
