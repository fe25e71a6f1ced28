-- packetfs store, version 4: a verdict and an assessment belong to the commit
-- they were made at (SPEC §5). When the item branch's head is no longer that
-- commit they are stale: status says so and no gate accepts them. '' where
-- none was made (or the store was made before version 4: such a verdict is
-- stale at once).
ALTER TABLE items ADD COLUMN verdict_head TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN assessment_head TEXT NOT NULL DEFAULT '';
