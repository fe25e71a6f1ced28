/*
 * store_gc.c - reclaiming space (store.h: store_gc, store_gc_temp_name;
 * SPEC §2: every revision is kept until the user reclaims space).
 *
 * What goes: the whole history (every revisions row, and a whole copy if
 * one is left) of a path that is no document now (no documents row) and
 * that is either
 *   - deleted: its last revision is an unlink tombstone made before the
 *     cutoff (a path renamed away is not deleted: its history is the
 *     history of the document under its new name, and stays), or
 *   - a temporary file's name (store_gc_temp_name), whatever its age: an
 *     editor's swap file, a save's temp file that was renamed over the
 *     document (the document's own revision holds what it held).
 * A path goes whole or not at all, so no delta loses its base: a delta's
 * base is an older revision of the same path (store_rev.c). A path stays,
 * whatever it is, while a revision of it is still in use elsewhere: the
 * content of a live name (hard links share a content revision,
 * store_link.c) or the base of another path's revision.
 *
 * What never goes: documents (live paths), runs, their logs, the
 * registry, events, items. Evidence is never reclaimed.
 *
 * The database then gives the pages back: the WAL is checkpointed, the
 * database VACUUMed (rewritten without its free pages) and the WAL
 * truncated, so the files shrink. VACUUM needs room for a copy of the
 * database while it runs.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* Whether s is n > 0 characters of set. */
static int all_of(const char *s, size_t n, const char *set)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!s[i] || !strchr(set, s[i]))
			return 0;
	return n > 0;
}

/* NAME.tmp.PID.HEX: an atomic save's temp file (an agent's Write tool,
 * Node's write-file-atomic and the like). */
static int tmp_pid_hex(const char *name)
{
	const char *t = strstr(name, ".tmp."), *dot;

	for (; t; t = strstr(t + 1, ".tmp.")) {
		const char *pid = t + 5;

		dot = strchr(pid, '.');
		if (t > name && dot && all_of(pid, (size_t)(dot - pid), "0123456789") &&
		    all_of(dot + 1, strlen(dot + 1), "0123456789abcdefABCDEF"))
			return 1;
	}
	return 0;
}

int store_gc_temp_name(const char *name)
{
	/* vim's swap files (.NAME.swp, then .swo, .swn and on for more, and
	 * .swx, its probe of the file system: the .s[uvw][a-z] its own
	 * recovery looks for), its probe of whether a directory is writable,
	 * Emacs's auto-save files, backup files, sed -i's temp file (sed and
	 * 6 characters). */
	static const char *const globs[] = { ".*.s[uvw][a-z]", "4913", "#*#", "*~", NULL };
	size_t i;

	for (i = 0; globs[i]; i++)
		if (fnmatch(globs[i], name, 0) == 0)
			return 1;
	if (strlen(name) == 9 && strncmp(name, "sed", 3) == 0 &&
	    all_of(name + 3, 6, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))
		return 1;
	return tmp_pid_hex(name);
}

/* The candidates: every path without a documents row, with its last
 * revision's op, whether that is a tombstone, and its time. */
#define GC_CANDIDATES                                                                         \
	"SELECT r.item_id, r.path, r.op, r.content IS NULL, r.created_at FROM revisions r "      \
	"WHERE r.rev = (SELECT MAX(q.rev) FROM revisions q WHERE q.item_id = r.item_id AND "   \
	"q.path = r.path) AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.item_id = "        \
	"r.item_id AND d.path = r.path)"

/* Paths a revision of which is used elsewhere: by a live name's content
 * or as the base of another path's revision. */
#define GC_PINNED                                                                             \
	"DELETE FROM gc_paths WHERE (item_id, path) IN (SELECT r.item_id, r.path FROM "        \
	"documents d JOIN revisions r ON r.id = d.rev_id UNION SELECT b.item_id, b.path FROM " \
	"revisions o JOIN revisions b ON b.id = o.base WHERE o.item_id <> b.item_id OR "       \
	"o.path <> b.path)"

#define GC_REVS "(SELECT r.id FROM revisions r JOIN gc_paths g ON g.item_id = r.item_id AND " \
		"g.path = r.path)"
/* Their rows of whole (schema/0015_whole_slots.sql; their pieces, 0019, go
 * with them: the trigger whole_pieces_gone). */
#define GC_SLOTS "(SELECT r.slot FROM revisions r JOIN gc_paths g ON g.item_id = r.item_id AND " \
		 "g.path = r.path WHERE r.slot IS NOT NULL)"

/* Fills gc_paths with what goes (the transaction is open). */
static int gc_choose(struct store *s, const char *before)
{
	sqlite3_stmt *st = NULL;
	int rc = store__prepare(s, &st, GC_CANDIDATES, "");
	char **paths = NULL;
	int64_t *items = NULL;
	size_t n = 0, cap = 0, i;

	while (rc == 0 && (rc = store__step(s, st)) == 1) {
		const char *path = (const char *)sqlite3_column_text(st, 1);
		const char *op = (const char *)sqlite3_column_text(st, 2);
		const char *at = (const char *)sqlite3_column_text(st, 4);
		const char *base = path ? strrchr(path, '/') : NULL;
		int tomb = sqlite3_column_int(st, 3);

		rc = 0;
		if (!path || !op || !at)
			continue;
		base = base ? base + 1 : path;
		if (!store_gc_temp_name(base) &&
		    !(tomb && strcmp(op, "unlink") == 0 && strcmp(at, before) < 0))
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 64;
			char **p = realloc(paths, c * sizeof(*p));
			int64_t *it = p ? realloc(items, c * sizeof(*it)) : NULL;

			if (p)
				paths = p;
			if (it)
				items = it;
			if (!p || !it) {
				rc = -ENOMEM;
				break;
			}
			cap = c;
		}
		items[n] = sqlite3_column_int64(st, 0);
		if (!(paths[n] = strdup(path))) {
			rc = -ENOMEM;
			break;
		}
		n++;
	}
	store__done(st);
	for (i = 0; rc == 0 && i < n; i++)
		rc = store__exec(s, "INSERT OR IGNORE INTO gc_paths(item_id, path) VALUES (?, ?)",
				 "Is", items[i], paths[i]);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(items);
	if (rc == 0)
		rc = store__script(s, GC_PINNED);
	return rc;
}

/* Reads one row of two integers into a and b. */
static int gc_count(struct store *s, const char *sql, int64_t *a, int64_t *b)
{
	sqlite3_stmt *st = NULL;
	int rc = store__first(s, &st, sql, "");

	if (rc == 0) {
		*a = sqlite3_column_int64(st, 0);
		if (b)
			*b = sqlite3_column_int64(st, 1);
	}
	store__done(st);
	return rc;
}

/* Hands the free pages back: checkpoint, VACUUM, checkpoint (truncating
 * the WAL). s->lock held. */
static int gc_shrink(struct store *s)
{
	int rc = store__script(s, "PRAGMA wal_checkpoint(TRUNCATE)");

	if (rc == 0)
		rc = store__script(s, "VACUUM");
	if (rc == 0)
		rc = store__script(s, "PRAGMA wal_checkpoint(TRUNCATE)");
	return rc;
}

int store_gc(struct store *s, const char *before, struct store_gc *out)
{
	int64_t whole = 0, none = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = store__txn_lock(s);
	if (rc)
		return rc;
	rc = store__script(s, "CREATE TEMP TABLE IF NOT EXISTS gc_paths (item_id INTEGER NOT "
			   "NULL, path TEXT NOT NULL, PRIMARY KEY (item_id, path)) WITHOUT ROWID; "
			   "DELETE FROM gc_paths");
	if (rc == 0)
		rc = gc_choose(s, before);
	if (rc == 0)
		rc = gc_count(s, "SELECT COUNT(*), 0 FROM gc_paths", &out->paths, NULL);
	if (rc == 0)
		rc = gc_count(s, "SELECT COUNT(*), COALESCE(SUM(length(content)), 0) FROM revisions "
			      "WHERE id IN " GC_REVS, &out->revisions, &out->bytes);
	if (rc == 0)
		rc = gc_count(s, "SELECT COALESCE(SUM(length(content)), 0) + (SELECT "
			      "COALESCE(SUM(length(content)), 0) FROM whole_pieces WHERE slot IN "
			      GC_SLOTS "), 0 FROM whole WHERE slot IN " GC_SLOTS, &whole, &none);
	out->bytes += whole;
	if (rc == 0)
		rc = store__script(s, "DELETE FROM whole WHERE slot IN " GC_SLOTS "; "
				   "DELETE FROM revisions WHERE id IN " GC_REVS "; "
				   "DELETE FROM xattrs WHERE (item_id, path) IN (SELECT item_id, path "
				   "FROM gc_paths); DELETE FROM gc_paths");
	rc = store__txn_unlock(s, rc);
	if (rc)
		return rc;
	pthread_mutex_lock(&s->lock);
	store__rev_forget(s);
	rc = gc_shrink(s);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
