-- The event log: one row per write. Its row id is the resourceVersion (AUTOINCREMENT so an
-- id is never reused, even after the newest rows are deleted by compaction).
CREATE TABLE events (
  rv       INTEGER PRIMARY KEY AUTOINCREMENT,
  type     INTEGER NOT NULL,          -- 1 ADDED, 2 MODIFIED, 3 DELETED
  res      TEXT    NOT NULL,          -- qualified resource: "pods", "deployments.apps"
  ns       TEXT    NOT NULL,          -- "" for cluster-scoped objects
  name     TEXT    NOT NULL,
  uid      TEXT    NOT NULL,
  prev_rv  INTEGER,                   -- previous event of the same key; NULL for a creation
  data     BLOB    NOT NULL           -- the object as CBOR, as it was after this write
);
-- Serves "the newest version of each key at or below rv" (lists at an older resourceVersion).
CREATE INDEX events_by_key ON events (res, ns, name, rv);

-- The current version of every live object; written in the same transaction as its event.
CREATE TABLE objects (
  res   TEXT    NOT NULL,
  ns    TEXT    NOT NULL,
  name  TEXT    NOT NULL,
  rv    INTEGER NOT NULL,
  uid   TEXT    NOT NULL,
  data  BLOB    NOT NULL,
  PRIMARY KEY (res, ns, name)
) WITHOUT ROWID;

-- Small server-wide facts (compacted resourceVersion, ...).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
