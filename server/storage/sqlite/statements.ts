// The main thread's reads of the SQLite file, as statements prepared once on its connection:
// current objects, the state at an older resourceVersion (stateAt), events after a version, and
// a list's RowFilter turned into SQL (a name looked up by key, labels and fields read from the
// stored JSON by SQLite's JSON functions), so that rows it rules out are never decoded.
import type Database from 'better-sqlite3';
import type { Db } from './database.ts';
import type { RawRow } from '../log/backend.ts';
import type { RowFilter } from '../log/types.ts';

/**
 * The objects of @res as they were at @rv (then filtered by scope and the page's cursor): a key
 * not written after @rv is as the current table holds it (its rv is at or below @rv); a key
 * written after @rv was, at @rv, what its first later event replaced (prev_rv; none if that
 * event created it). Costs a read of the resource's events after @rv, not of its history.
 * SQLite's min() makes the bare prev_rv that of the first event after @rv.
 */
function stateAt(scope: string, cursor: string, data = 'data'): string {
  return `SELECT rv, uid, ${data}, ns, name, crc FROM objects WHERE res = @res ${scope} AND ${cursor} AND rv <= @rv
    UNION ALL
    SELECT p.rv, p.uid, ${data.replace('data', 'p.data')}, f.ns, f.name, p.crc FROM (
      SELECT ns, name, prev_rv, min(rv) FROM events WHERE res = @res ${scope} AND rv > @rv AND ${cursor} GROUP BY ns, name
    ) f JOIN events p ON p.rv = f.prev_rv`;
}

/**
 * A page's cursor: the keys after (@ns, @name) in key order, in one namespace or in all. Always
 * applied (a first page starts after the empty key, as no name is empty), and written so that
 * SQLite seeks to it in the primary key: a page costs its own rows, not those before it.
 */
export const NS_CURSOR = 'name > @name';
export const ALL_CURSOR = '(ns, name) > (@ns, @name)';
const AS_TEXT = 'CAST(data AS TEXT)';

export type Statements = ReturnType<typeof prepareStatements>;

export function prepareStatements(db: Db) {
  const p = (sql: string): Database.Statement => db.prepare(sql);
  return {
    get: p('SELECT rv, uid, data, crc FROM objects WHERE res = ? AND ns = ? AND name = ?'),
    rvOf: p('SELECT rv FROM objects WHERE res = ? AND ns = ? AND name = ?'),
    countAll: p(`SELECT count(*) AS n FROM objects WHERE res = @res AND ${ALL_CURSOR}`),
    countNs: p(`SELECT count(*) AS n FROM objects WHERE res = @res AND ns = @ns AND ${NS_CURSOR}`),
    eventsAfter: p(`SELECT e.rv, e.type, e.res, e.ns, e.name, e.data, e.crc, p.data AS prev, p.rv AS prevRv, p.crc AS prevCrc
      FROM events e LEFT JOIN events p ON p.rv = e.prev_rv WHERE e.rv > ? ORDER BY e.rv LIMIT ?`),
    eventsAfterOf: p(`SELECT e.rv, e.type, e.res, e.ns, e.name, e.data, e.crc, p.data AS prev, p.rv AS prevRv, p.crc AS prevCrc
      FROM events e LEFT JOIN events p ON p.rv = e.prev_rv WHERE e.res = ? AND e.rv > ? ORDER BY e.rv LIMIT ?`),
    changedSince: p('SELECT 1 FROM events WHERE res = ? AND rv > ? LIMIT 1'),
    firstEvent: p('SELECT min(rv) AS rv FROM events'),
    countNsAt: p(`SELECT count(*) AS n FROM (${stateAt('AND ns = @ns', NS_CURSOR)})`),
    // The current table, or its state at @rv, a page in key order (list, listAt, listJoined).
    rawAll: p(`SELECT rv, uid, data, ns, name, crc FROM objects WHERE res = @res AND ${ALL_CURSOR} ORDER BY ns, name LIMIT @limit`).raw(),
    rawNs: p(`SELECT rv, uid, data, ns, name, crc FROM objects WHERE res = @res AND ns = @ns AND ${NS_CURSOR} ORDER BY name LIMIT @limit`).raw(),
    rawAllAt: p(`${stateAt('', ALL_CURSOR)} ORDER BY ns, name LIMIT @limit`).raw(),
    rawNsAt: p(`${stateAt('AND ns = @ns', NS_CURSOR)} ORDER BY name LIMIT @limit`).raw(),
    // The same as text (textRows).
    textAll: p(`SELECT rv, uid, ${AS_TEXT}, ns, name, crc FROM objects WHERE res = @res AND ${ALL_CURSOR} ORDER BY ns, name LIMIT @limit`).raw(),
    textNs: p(`SELECT rv, uid, ${AS_TEXT}, ns, name, crc FROM objects WHERE res = @res AND ns = @ns AND ${NS_CURSOR} ORDER BY name LIMIT @limit`).raw(),
    textAllAt: p(`${stateAt('', ALL_CURSOR, AS_TEXT)} ORDER BY ns, name LIMIT @limit`).raw(),
    textNsAt: p(`${stateAt('AND ns = @ns', NS_CURSOR, AS_TEXT)} ORDER BY name LIMIT @limit`).raw(),
    eventRowsAfter: p('SELECT rv, type, data, crc, ns, name FROM events WHERE res = @res AND rv > @rv AND @ns = @ns ORDER BY rv LIMIT @limit').raw(),
    eventRowsAfterNs: p('SELECT rv, type, data, crc, ns, name FROM events WHERE res = @res AND rv > @rv AND ns = @ns ORDER BY rv LIMIT @limit').raw(),
    countAllAt: p(`SELECT count(*) AS n FROM (${stateAt('', ALL_CURSOR)})`),
    freePages: p('PRAGMA freelist_count').pluck(),
    pageCount: p('PRAGMA page_count').pluck(),
    lastRv: p(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`),
    meta: p('SELECT value FROM meta WHERE key = ?'),
    objectCount: p('SELECT count(*) AS n FROM objects'),
    objectKeys: p('SELECT res, ns, name FROM objects').raw(),
  };
}

/** Statements of lists narrowed by a RowFilter, made per shape of filter and kept. */
export class FilteredStatements {
  private readonly byShape = new Map<string, Database.Statement>();

  constructor(private readonly db: Db) {}

  /**
   * A list's rows narrowed in SQLite by a RowFilter, so rows it rules out are never decoded
   * here: a name is looked up by key; required labels and field values are read from the stored
   * JSON text by SQLite's JSON functions (rows stored as CBOR always pass: the caller matches
   * every row it gets).
   */
  rows(inNs: boolean, rv: number | undefined, only: RowFilter, params: Record<string, unknown>): RawRow[] {
    const labels = only.labels ?? [];
    let shape = `${inNs ? 'ns' : 'all'}:${rv === undefined ? 'now' : 'at'}:${only.name === undefined ? '' : 'name'}:${only.readLabels ? 'labels' : ''}`;
    const p: Record<string, unknown> = { ...params, rv, only: only.name };
    const tests: string[] = [];
    labels.forEach((l, i) => {
      p[`k${i}`] = `$.metadata.labels.${JSON.stringify(l.key)}`;
      const label = `json_extract(CAST(data AS TEXT), @k${i})`;
      if (l.values === undefined) {
        tests.push(`${label} IS NOT NULL`);
        shape += ':*';
        return;
      }
      l.values.forEach((v, j) => (p[`v${i}_${j}`] = v));
      tests.push(`${label} IN (${l.values.map((_, j) => `@v${i}_${j}`).join(', ')})`);
      shape += `:${l.values.length}`;
    });
    (only.fields ?? []).forEach((f, i) => {
      p[`fp${i}`] = f.path;
      p[`fv${i}`] = f.value;
      tests.push(`json_extract(CAST(data AS TEXT), @fp${i}) = @fv${i}`);
      shape += ':f';
    });
    let stmt = this.byShape.get(shape);
    if (stmt === undefined) {
      const scope = `${inNs ? 'AND ns = @ns' : ''} ${only.name === undefined ? '' : 'AND name = @only'}`;
      const cursor = inNs ? NS_CURSOR : ALL_CURSOR;
      // (a JSON text starts with "{"; CBOR maps never do)
      const narrowed = tests.length ? `AND (substr(data, 1, 1) <> X'7B' OR (${tests.join(' AND ')}))` : '';
      const rows =
        rv === undefined
          ? `SELECT rv, uid, data, ns, name, crc FROM objects WHERE res = @res ${scope} AND ${cursor} ${narrowed}`
          : `SELECT * FROM (${stateAt(scope, cursor)}) WHERE 1 ${narrowed}`;
      // (no labels column for CBOR rows: NULL, the row is decoded)
      const withLabels = only.readLabels
        ? `SELECT *, CASE WHEN substr(data, 1, 1) = X'7B' THEN coalesce(json_extract(CAST(data AS TEXT), '$.metadata.labels'), 'null') END FROM (${rows})`
        : rows;
      stmt = this.db.prepare(`${withLabels} ORDER BY ${inNs ? 'name' : 'ns, name'} LIMIT @limit`).raw();
      if (this.byShape.size >= 64) this.byShape.clear();
      this.byShape.set(shape, stmt);
    }
    // better-sqlite3 refuses parameters a statement does not name.
    if (rv === undefined) delete p.rv;
    if (only.name === undefined) delete p.only;
    return stmt.all(p) as RawRow[];
  }
}
