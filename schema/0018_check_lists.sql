-- packetfs store, version 18: the same constraints, checked without a table.
-- SQLite evaluates `x IN ('a', 'b', ...)` in a CHECK by filling an ephemeral
-- table with the list at every row it checks (EXPLAIN shows OpenEphemeral):
-- about 1.5 µs a row on the hot paths (a registry line, a run, an item
-- written), where a chain of `x = 'a' OR x = 'b'` costs a few comparisons.
-- The values accepted are exactly those of 0011_carry (registry.source) and
-- 0013_states (items.state, runs.kind, runs.status); every stored row met
-- them, so none is refused. SQLite cannot change a CHECK constraint in place:
-- the three tables are made again as 0011 and 0013 made them (a new table,
-- every row copied with its id, the old one dropped, the new one renamed,
-- its index and triggers made again), with foreign keys off (store.c).
-- Columns keep their order.
CREATE TABLE items_v18 (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  title       TEXT NOT NULL DEFAULT '',
  state       TEXT NOT NULL DEFAULT 'new'
              CHECK (state = 'new' OR state = 'queued' OR state = 'running' OR
                     state = 'waiting' OR state = 'blocked' OR state = 'failed' OR
                     state = 'done'),
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
  updated_at  TEXT NOT NULL,
  dir_mtime_ns INTEGER NOT NULL DEFAULT 0,
  dir_ctime_ns INTEGER NOT NULL DEFAULT 0,
  dir_atime_ns INTEGER NOT NULL DEFAULT 0,
  verdict_head TEXT NOT NULL DEFAULT '',
  assessment_head TEXT NOT NULL DEFAULT '',
  round       INTEGER NOT NULL DEFAULT 0,
  disposition TEXT NOT NULL DEFAULT '',
  dir_uid     INTEGER NOT NULL DEFAULT -1,
  dir_gid     INTEGER NOT NULL DEFAULT -1,
  dir_mode    INTEGER NOT NULL DEFAULT 493, -- 0755
  route       TEXT NOT NULL DEFAULT '',
  template    TEXT NOT NULL DEFAULT '',
  engine      TEXT NOT NULL DEFAULT '',
  review_request TEXT NOT NULL DEFAULT ''
);
INSERT INTO items_v18(id, name, title, state, stage, stage_ok, iteration, branch, base, verdict,
                      assessment, hold, approved, last_error, last_result, archived, run_seq,
                      created_at, updated_at, dir_mtime_ns, dir_ctime_ns, dir_atime_ns,
                      verdict_head, assessment_head, round, disposition, dir_uid, dir_gid,
                      dir_mode, route, template, engine, review_request)
  SELECT id, name, title, state, stage, stage_ok, iteration, branch, base, verdict, assessment,
         hold, approved, last_error, last_result, archived, run_seq, created_at, updated_at,
         dir_mtime_ns, dir_ctime_ns, dir_atime_ns, verdict_head, assessment_head, round,
         disposition, dir_uid, dir_gid, dir_mode, route, template, engine, review_request
  FROM items ORDER BY id;
DROP TABLE items;
ALTER TABLE items_v18 RENAME TO items;

CREATE TABLE runs_v18 (
  id          INTEGER PRIMARY KEY,
  item_id     INTEGER NOT NULL REFERENCES items(id),
  run_no      INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind = 'stage' OR kind = 'recipe'),
  name        TEXT NOT NULL,
  iteration   INTEGER NOT NULL,
  status      TEXT NOT NULL
              CHECK (status = 'queued' OR status = 'running' OR status = 'succeeded' OR
                     status = 'failed' OR status = 'validated' OR status = 'failing' OR
                     status = 'blocked' OR status = 'timed_out' OR status = 'cancelled' OR
                     status = 'interrupted'),
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
  job_id      TEXT NOT NULL DEFAULT '',
  job_output  TEXT NOT NULL DEFAULT '',
  job_offset  INTEGER NOT NULL DEFAULT 0,
  UNIQUE (item_id, run_no)
);
INSERT INTO runs_v18(id, item_id, run_no, kind, name, iteration, status, command, log_path, pgid,
                     exit_code, signal, note, head, gpus, executor, started_at, finished_at,
                     duration_s, log_size, log_sha256, job_id, job_output, job_offset)
  SELECT id, item_id, run_no, kind, name, iteration, status, command, log_path, pgid, exit_code,
         signal, note, head, gpus, executor, started_at, finished_at, duration_s, log_size,
         log_sha256, job_id, job_output, job_offset
  FROM runs ORDER BY id;
DROP TABLE runs;
ALTER TABLE runs_v18 RENAME TO runs;

CREATE TABLE registry_v18 (
  id      INTEGER PRIMARY KEY,
  item_id INTEGER NOT NULL REFERENCES items(id),
  line    TEXT NOT NULL,
  source  TEXT NOT NULL
          CHECK (source = 'engine' OR source = 'external' OR source = 'imported'),
  run_id  INTEGER REFERENCES runs(id),
  why     TEXT NOT NULL DEFAULT ''
);
INSERT INTO registry_v18(id, item_id, line, source, run_id, why)
  SELECT id, item_id, line, source, run_id, why FROM registry ORDER BY id;
DROP TABLE registry;
ALTER TABLE registry_v18 RENAME TO registry;
CREATE INDEX registry_item ON registry(item_id, id);
CREATE TRIGGER registry_no_update BEFORE UPDATE ON registry
  BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;
CREATE TRIGGER registry_no_delete BEFORE DELETE ON registry
  BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;
