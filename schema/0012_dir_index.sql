-- packetfs store, version 12: an index of the plain directories of each item,
-- so that a directory's link count (its subdirectories: store_doc_subdirs)
-- reads only the directories below it, not every document there. Without
-- it, every stat of a directory holding n documents read n rows, and making
-- n files in one directory cost time quadratic in n.
CREATE INDEX documents_dirs ON documents(item_id, is_dir, path) WHERE is_dir = 1;
-- (is_dir is in the key although the index holds directories only: with it,
-- SQLite's planner prefers the index to the primary key for those queries.)
