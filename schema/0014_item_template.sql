-- packetfs store, version 13: routes and templates (SPEC §5).
-- The header lines of the item's plan.md as the last plan run read them
-- ('' when absent): route ("Route:"), engine ("Engine:"), review_request
-- ("Review request:"), and template, the template in effect (the one the
-- plan named, or the one its route or default_template chose; '' for the
-- top-level stages).
ALTER TABLE items ADD COLUMN route TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN template TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN engine TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN review_request TEXT NOT NULL DEFAULT '';
