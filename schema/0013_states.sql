-- packetfs store, version 13: the item states and run statuses written into
-- the schema. items.state is one of the states of SPEC §4 and runs.status
-- one of the statuses of SPEC §6 (a recipe's run) or succeeded, failed (a
-- stage's run), exactly the names of store.h's enum item_state and enum
-- run_status (store_state.c); any other string is refused
-- (SQLITE_CONSTRAINT). SQLite cannot add a CHECK constraint to a column, so
-- both tables are made again, as SQLite's documentation says ("Making
-- Other Kinds Of Table Schema Changes"): a new table, every row copied
-- with its id, the old one dropped, the new one renamed, its indexes made
-- again (the UNIQUE ones come with the tables; neither has a trigger or a
-- view). store.c runs this with foreign keys off, in the migration's
-- transaction, after checking that every row holds a known state (a store
-- that does not fails the upgrade, naming the row, and keeps its data),
-- and checks the foreign keys before it commits. The columns keep their
-- order: those that 0002 to 0006 added come after the first ones.
CREATE TABLE items_v13 (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  title       TEXT NOT NULL DEFAULT '',
  state       TEXT NOT NULL DEFAULT 'new'
              CHECK (state IN ('new', 'queued', 'running', 'waiting', 'blocked', 'failed',
                               'done')),
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
  dir_mode    INTEGER NOT NULL DEFAULT 493 -- 0755
);
INSERT INTO items_v13(id, name, title, state, stage, stage_ok, iteration, branch, base, verdict,
                      assessment, hold, approved, last_error, last_result, archived, run_seq,
                      created_at, updated_at, dir_mtime_ns, dir_ctime_ns, dir_atime_ns,
                      verdict_head, assessment_head, round, disposition, dir_uid, dir_gid,
                      dir_mode)
  SELECT id, name, title, state, stage, stage_ok, iteration, branch, base, verdict, assessment,
         hold, approved, last_error, last_result, archived, run_seq, created_at, updated_at,
         dir_mtime_ns, dir_ctime_ns, dir_atime_ns, verdict_head, assessment_head, round,
         disposition, dir_uid, dir_gid, dir_mode
  FROM items ORDER BY id;
DROP TABLE items;
ALTER TABLE items_v13 RENAME TO items;

CREATE TABLE runs_v13 (
  id          INTEGER PRIMARY KEY,
  item_id     INTEGER NOT NULL REFERENCES items(id),
  run_no      INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('stage', 'recipe')),
  name        TEXT NOT NULL,
  iteration   INTEGER NOT NULL,
  status      TEXT NOT NULL
              CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'validated',
                                'failing', 'blocked', 'timed_out', 'cancelled', 'interrupted')),
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
INSERT INTO runs_v13(id, item_id, run_no, kind, name, iteration, status, command, log_path, pgid,
                     exit_code, signal, note, head, gpus, executor, started_at, finished_at,
                     duration_s, log_size, log_sha256, job_id, job_output, job_offset)
  SELECT id, item_id, run_no, kind, name, iteration, status, command, log_path, pgid, exit_code,
         signal, note, head, gpus, executor, started_at, finished_at, duration_s, log_size,
         log_sha256, job_id, job_output, job_offset
  FROM runs ORDER BY id;
DROP TABLE runs;
ALTER TABLE runs_v13 RENAME TO runs;
