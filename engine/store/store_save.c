/*
 * store_save.c - the revisions of a temp-file-then-rename save (SPEC §3):
 * one revision of the document it replaces, no history of the temp name
 * (store_int.h: store__life_is_save, store__life_carry,
 * store__unlink_forget). store_doc.c calls in here from its rename and
 * unlink, inside their transactions.
 *
 * The life of a path is its revisions since its latest tombstone (all of
 * them when it has none): the revisions of the file that holds that name
 * now. Two saves keep their temp names out of history:
 *  - A temp file renamed over or onto the document (sed -i, Python's
 *    atomic writes, an agent's Write tool), when the temp name's life
 *    began with a create by the renaming process (STORE_RENAME_SAVE: a
 *    document made by one program and renamed by another, as mv of a
 *    document or vim's backup rename, keeps its history where it is) or
 *    the caller asks for it (STORE_RENAME_CARRY): the life of the temp
 *    name is moved to the document's name, after the revisions that name
 *    has, renumbered there (rev and seq); no tombstone is left at the temp
 *    name and no copy is added at the document's. The temp file's one
 *    revision (its create, amended by its writes) becomes the save's one
 *    revision. Nothing is encoded again: a revision's bytes and its delta
 *    base (by id) do not depend on its path.
 *  - A document renamed away to a backup name, a new document written at
 *    its name, the backup removed (vim's writebackup with backupcopy=auto
 *    or no): when the backup's life is the one revision that rename made
 *    (never changed since) and the document's name has a new life since
 *    the rename's tombstone, the unlink removes that copy and that
 *    tombstone, and renumbers the new life to follow the old one. The
 *    content stays where it was first written, in the document's history.
 *    A rename stores its copy at the new name, then its tombstone at the
 *    old one, in one transaction (store_doc.c move_one): the tombstone is
 *    the row after the copy.
 *  - A probe: a file a program creates and removes again without writing
 *    (vim's "4913", which tests whether it may create a file with the
 *    document's owner): a life of one empty create, unlinked by the process
 *    that made it, leaves no history. Anything with content, or removed by
 *    another process, keeps its history and gets a tombstone.
 * Lock held, inside the caller's transaction, for everything here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "store_int.h"

/* The rev of the latest tombstone at path (0: none) into *rev. */
static int last_tomb(struct store *s, int64_t item, const char *path, int *rev)
{
	sqlite3_stmt *st;
	int rc = store__first(s, &st, "SELECT COALESCE(MAX(rev), 0) FROM revisions WHERE "
			      "item_id = ? AND path = ? AND content IS NULL", "Is", item, path);

	*rev = rc == 0 ? sqlite3_column_int(st, 0) : 0;
	store__done(st);
	return rc;
}

int store__life_is_save(struct store *s, int64_t item, const char *path, pid_t pid, int *tomb)
{
	sqlite3_stmt *st;
	pid_t by = 0;
	int rc, create = 0;

	*tomb = -1;
	if (pid <= 0)
		return 0;
	/* The tombstone's rev a column too (SQLite runs the subquery once). */
	rc = store__first(s, &st, "SELECT op = 'create', pid, (SELECT COALESCE(MAX(rev), 0) FROM "
			  "revisions WHERE item_id = ?1 AND path = ?2 AND content IS NULL) AS tomb "
			  "FROM revisions WHERE item_id = ?1 AND path = ?2 AND rev > tomb ORDER BY "
			  "rev LIMIT 1", "Is", item, path);
	if (rc == 0) {
		create = sqlite3_column_int(st, 0);
		by = (pid_t)sqlite3_column_int64(st, 1);
		*tomb = sqlite3_column_int(st, 2);
	}
	store__done(st);
	if (rc == -ENOENT || (rc == 0 && (!create || by <= 0)))
		return 0;
	if (rc)
		return rc;
	if (by == pid)
		return 1;
	/* FUSE names the calling thread: another thread of the creator's
	 * process (a save from a thread pool) counts as the creator. */
	pid = util_tgid(pid);
	return pid > 0 && pid == util_tgid(by);
}

int store__life_carry(struct store *s, int64_t item, const char *from, const char *to, int tomb)
{
	sqlite3_stmt *st;
	int64_t ids[64];
	int rc = 0, n = 0, i;

	if (tomb < 0)
		rc = last_tomb(s, item, from, &tomb);
	if (rc)
		return rc;
	/* Ids first: the rows change path as they go. A longer life than
	 * ids holds is moved in several passes, oldest first. */
	do {
		n = 0;
		rc = store__prepare(s, &st, "SELECT id FROM revisions WHERE item_id = ? AND path = ? "
				    "AND rev > ? ORDER BY rev LIMIT 64", "Isi", item, from, tomb);
		while (rc == 0 && (rc = store__step(s, st)) > 0 && n < 64)
			ids[n++] = sqlite3_column_int64(st, 0);
		store__done(st);
		if (rc > 0)
			rc = 0;
		for (i = 0; rc == 0 && i < n; i++)
			rc = store__exec(s, "UPDATE revisions SET path = ?2, rev = (SELECT COALESCE("
					 "MAX(rev), 0) + 1 FROM revisions WHERE item_id = ?1 AND path = ?2), "
					 "seq = CASE WHEN content IS NULL THEN 0 ELSE COALESCE((SELECT seq "
					 "FROM revisions WHERE item_id = ?1 AND path = ?2 AND content IS NOT "
					 "NULL ORDER BY rev DESC LIMIT 1), 0) + 1 END WHERE id = ?3", "IsI",
					 item, to, ids[i]);
	} while (rc == 0 && n == 64);
	return rc;
}

/* The probe case of store__unlink_forget: path's life is one empty
 * create of a regular file, by the process that unlinks it. 1 when it removed that
 * revision, 0 when path is no probe. */
static int probe_forget(struct store *s, int64_t item, const char *path, const struct doc_meta *m,
			int tomb, pid_t pid)
{
	sqlite3_stmt *st;
	int rc, probe = 0;

	if (pid <= 0 || m->size != 0 || m->type != S_IFREG)
		return 0;
	rc = store__first(s, &st, "SELECT count(*), SUM(id = ?3 AND op = 'create' AND size = 0 AND "
			  "pid = ?5) FROM revisions WHERE item_id = ?1 AND path = ?2 AND rev > ?4",
			  "IsIiI", item, path, m->rev_id, tomb, (int64_t)pid);
	if (rc == 0)
		probe = sqlite3_column_int(st, 0) == 1 && sqlite3_column_int(st, 1) == 1;
	store__done(st);
	if (rc || !probe)
		return rc == -ENOENT ? 0 : rc;
	rc = store__exec(s, "DELETE FROM whole WHERE slot = (SELECT slot FROM revisions WHERE "
			 "id = ?)", "I", m->rev_id);
	if (rc == 0)
		rc = store__exec(s, "DELETE FROM revisions WHERE id = ?", "I", m->rev_id);
	store__rev_forget(s);
	return rc ? rc : 1;
}

int store__unlink_forget(struct store *s, int64_t item, const char *path, const struct doc_meta *m,
			 pid_t pid)
{
	sqlite3_stmt *st;
	char origin[4096];
	int rc, tomb, life = 0, tomb_rev = 0, later = 0;
	int64_t tomb_id = 0;

	if (m->is_dir || m->link != 0 || m->rev_id <= 0)
		return 0;
	rc = last_tomb(s, item, path, &tomb);
	if (rc == 0 && (rc = probe_forget(s, item, path, m, tomb, pid)) != 0)
		return rc;
	/* Its life: the one revision, the copy a rename made, still current. */
	if (rc == 0) {
		rc = store__first(s, &st, "SELECT count(*), SUM(id = ?3 AND op = 'rename') FROM "
				  "revisions WHERE item_id = ?1 AND path = ?2 AND rev > ?4", "IsIi",
				  item, path, m->rev_id, tomb);
		if (rc == 0)
			life = sqlite3_column_int(st, 0) == 1 && sqlite3_column_int(st, 1) == 1;
		store__done(st);
	}
	if (rc || !life)
		return rc == -ENOENT ? 0 : rc;
	/* The rename's tombstone at the old name, and a new life there since. */
	rc = store__first(s, &st, "SELECT id, path, rev FROM revisions WHERE id = ?1 + 1 AND "
			  "item_id = ?2 AND op = 'rename' AND content IS NULL AND path <> ?3", "IIs",
			  m->rev_id, item, path);
	if (rc == 0) {
		tomb_id = sqlite3_column_int64(st, 0);
		snprintf(origin, sizeof(origin), "%s", (const char *)sqlite3_column_text(st, 1));
		tomb_rev = sqlite3_column_int(st, 2);
	}
	store__done(st);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	rc = store__first(s, &st, "SELECT count(*) FROM documents d JOIN revisions r ON r.id = "
			  "d.rev_id WHERE d.item_id = ?1 AND d.path = ?2 AND d.is_dir = 0 AND "
			  "r.path = ?2 AND r.rev > ?3", "Isi", item, origin, tomb_rev);
	if (rc == 0)
		later = sqlite3_column_int(st, 0) == 1;
	store__done(st);
	if (rc || !later)
		return rc == -ENOENT ? 0 : rc;
	rc = store__exec(s, "DELETE FROM whole WHERE slot = (SELECT slot FROM revisions WHERE "
			 "id = ?)", "I", m->rev_id);
	if (rc == 0)
		rc = store__exec(s, "DELETE FROM revisions WHERE id = ? OR id = ?", "II", m->rev_id,
				 tomb_id);
	/* Two steps, so that no row takes a number another still holds. */
	if (rc == 0)
		rc = store__exec(s, "UPDATE revisions SET rev = -rev WHERE item_id = ? AND path = ? "
				 "AND rev > ?", "Isi", item, origin, tomb_rev);
	if (rc == 0)
		rc = store__exec(s, "UPDATE revisions SET rev = -rev - 1 WHERE item_id = ? AND "
				 "path = ? AND rev < 0", "Is", item, origin);
	/* The ids deleted may be given to new revisions. */
	store__rev_forget(s);
	return rc ? rc : 1;
}
