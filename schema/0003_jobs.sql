-- packetfs store, version 3: runs handed to a batch system (the Slurm
-- executor). (Read-only opens of an older store see these columns through
-- temporary views instead; engine/store.c, compat.)

-- The batch system's id of the job that runs this run ('' for a local run),
-- the job's output file, which the daemon copies into the run's log as it
-- grows, and how many bytes of that file the log already holds: what a
-- restarted daemon needs to follow a job that is still queued or running.
ALTER TABLE runs ADD COLUMN job_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN job_output TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN job_offset INTEGER NOT NULL DEFAULT 0;
