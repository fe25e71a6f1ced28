-- packetfs store, version 5: rounds after publish, dispositions, learnings
-- (SPEC §3, §5).
-- round: how many rounds of the item's rounds stage ran in its current
-- series (0: none). disposition: the word of plan.md's "Disposition:" line
-- when the plan ended the item without a change, else ''.
ALTER TABLE items ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN disposition TEXT NOT NULL DEFAULT '';
-- MOUNT/learnings/ keeps its documents, with their history, under this
-- row. archived = 2 marks it: no listing of items (archived = 0 or 1) and
-- no pipeline sees it. A store that already had an item called
-- "learnings" keeps it as an item (the INSERT is ignored) and has no
-- learnings directory.
INSERT OR IGNORE INTO items (name, branch, base, archived, created_at, updated_at)
  VALUES ('learnings', '', '', 2, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'),
          strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
