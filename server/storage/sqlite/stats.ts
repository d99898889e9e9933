// What the SQLite store holds, read when /metrics is scraped (not on any request's path): current
// objects per resource (the `res` key, kube's `<resource>.<group>`), rows in the event log, and
// the sizes of the database file and its WAL.
import { statSync } from 'node:fs';
import type { Db } from './database.ts';

export interface SqliteStats {
  /** Current objects by resource (`resource.group`, `resource` for the core group). */
  objectCounts(): Map<string, number>;
  /** Rows of the event log (history not yet compacted). */
  eventRows(): number;
  /** The database file's size in bytes (0 when it cannot be read). */
  fileBytes(): number;
  /** The WAL's size in bytes (0 when there is none). */
  walBytes(): number;
}

export function sqliteStats(db: Db, file: string): SqliteStats {
  const byResource = db.prepare<[], { res: string; n: number }>('SELECT res, count(*) AS n FROM objects GROUP BY res');
  const events = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM events');
  const size = (f: string) => {
    try {
      return statSync(f).size;
    } catch {
      return 0;
    }
  };
  return {
    objectCounts: () => new Map(byResource.all().map((r) => [r.res, r.n])),
    eventRows: () => events.get()?.n ?? 0,
    fileBytes: () => size(file),
    walBytes: () => size(`${file}-wal`),
  };
}
