-- packetfs store, version 1.
-- The single source of truth for packet content. Git holds code; the worktrees
-- under STORE/worktrees/ are checkouts of item branches, never read as truth.
-- Times are RFC 3339 UTC text ("2026-11-29T16:02:11Z") unless the column name
-- ends in _ns (nanoseconds since the Unix epoch).

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per work item. state is one of new, queued, running, waiting,
-- blocked, failed, done. stage is the stage that runs or ran last; stage_ok
-- says whether that run succeeded (advance then moves to the next stage).
CREATE TABLE items (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  title       TEXT NOT NULL DEFAULT '',
  state       TEXT NOT NULL DEFAULT 'new',
  stage       TEXT NOT NULL DEFAULT '',
  stage_ok    INTEGER NOT NULL DEFAULT 0,
  iteration   INTEGER NOT NULL DEFAULT 1,
  branch      TEXT NOT NULL,
  base        TEXT NOT NULL,
  verdict     TEXT NOT NULL DEFAULT '',
  assessment  TEXT NOT NULL DEFAULT '',
  hold        INTEGER NOT NULL DEFAULT 0,
  approved    INTEGER NOT NULL DEFAULT 0,
  last_error  TEXT NOT NULL DEFAULT '',
  last_result TEXT NOT NULL DEFAULT '',
  archived    INTEGER NOT NULL DEFAULT 0,
  run_seq     INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

-- Every revision of every document, keyed by path inside the item.
-- A NULL content is a tombstone (the path was unlinked or renamed away).
CREATE TABLE revisions (
  id         INTEGER PRIMARY KEY,
  item_id    INTEGER NOT NULL REFERENCES items(id),
  path       TEXT NOT NULL,
  rev        INTEGER NOT NULL,
  op         TEXT NOT NULL,
  content    BLOB,
  size       INTEGER NOT NULL,
  mode       INTEGER NOT NULL,
  uid        INTEGER NOT NULL,
  pid        INTEGER NOT NULL,
  comm       TEXT NOT NULL,
  stage      TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (item_id, path, rev)
);

-- The live tree of each item: documents (rev_id names their content) and
-- plain directories (is_dir = 1, rev_id NULL).
CREATE TABLE documents (
  item_id  INTEGER NOT NULL REFERENCES items(id),
  path     TEXT NOT NULL,
  is_dir   INTEGER NOT NULL DEFAULT 0,
  rev_id   INTEGER REFERENCES revisions(id),
  size     INTEGER NOT NULL DEFAULT 0,
  mode     INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  PRIMARY KEY (item_id, path)
) WITHOUT ROWID;

-- Stage and recipe runs. run_no counts per item, over stages and recipes.
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  item_id     INTEGER NOT NULL REFERENCES items(id),
  run_no      INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('stage', 'recipe')),
  name        TEXT NOT NULL,
  iteration   INTEGER NOT NULL,
  status      TEXT NOT NULL,
  command     TEXT NOT NULL DEFAULT '',
  log_path    TEXT NOT NULL,
  pgid        INTEGER NOT NULL DEFAULT 0,
  exit_code   INTEGER,
  signal      INTEGER,
  note        TEXT NOT NULL DEFAULT '',
  head        TEXT NOT NULL DEFAULT '',
  gpus        TEXT NOT NULL DEFAULT '[]',
  executor    TEXT NOT NULL DEFAULT 'local',
  started_at  TEXT NOT NULL,
  finished_at TEXT,
  duration_s  REAL,
  log_size    INTEGER NOT NULL DEFAULT 0,
  log_sha256  TEXT NOT NULL DEFAULT '',
  UNIQUE (item_id, run_no)
);

-- Log content of runs, appended in chunks as the output arrives.
CREATE TABLE log_chunks (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  off    INTEGER NOT NULL,
  data   BLOB NOT NULL,
  PRIMARY KEY (run_id, off)
) WITHOUT ROWID;

-- validation/registry.jsonl: append-only, enforced by triggers.
CREATE TABLE registry (
  id      INTEGER PRIMARY KEY,
  item_id INTEGER NOT NULL REFERENCES items(id),
  line    TEXT NOT NULL,
  source  TEXT NOT NULL CHECK (source IN ('engine', 'external')),
  run_id  INTEGER REFERENCES runs(id)
);
CREATE INDEX registry_item ON registry(item_id, id);
CREATE TRIGGER registry_no_update BEFORE UPDATE ON registry
  BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;
CREATE TRIGGER registry_no_delete BEFORE DELETE ON registry
  BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;

-- Events, all items (item_id NULL for store-wide events). line is one JSON object.
CREATE TABLE events (
  id      INTEGER PRIMARY KEY,
  item_id INTEGER REFERENCES items(id),
  line    TEXT NOT NULL
);
CREATE INDEX events_item ON events(item_id, id);
