/*
 * store_doc_list.c - a directory's entries in the store (store.h:
 * store_doc_list) and the count of its subdirectories (store_doc_subdirs),
 * its nlink. Documents rows are read as store_doc.c reads one
 * (store__doc_row); a directory's subtree is the range (dir "/", dir "0"),
 * its entries those with no '/' after "dir/".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

int store_doc_subdirs(struct store *s, int64_t item_id, const char *dir, uint32_t *n)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	if (dir[0] == '\0')
		rc = store__first(s, &st, "SELECT count(*) FROM documents WHERE item_id = ?1 AND "
				  "is_dir = 1 AND instr(path, '/') = 0", "I", item_id);
	else
		rc = store__first(s, &st, "SELECT count(*) FROM documents WHERE item_id = ?1 AND "
				  "path > ?2 || '/' AND path < ?2 || '0' AND is_dir = 1 AND "
				  "instr(substr(path, length(?2) + 2), '/') = 0", "Is", item_id, dir);
	if (rc == 0)
		*n = (uint32_t)sqlite3_column_int64(st, 0);
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

struct doc_entry {
	char *name;
	struct doc_meta m;
};

static int doc_entry_row(sqlite3_stmt *st, void *elem, void *ctx)
{
	struct doc_entry *d = elem;
	const char *p = (const char *)sqlite3_column_text(st, 0);
	size_t dlen = *(size_t *)ctx;

	d->name = strdup(dlen ? p + dlen + 1 : p);
	if (!d->name)
		return -ENOMEM;
	store__doc_row(st, 1, &d->m);
	return 0;
}

int store_doc_list(struct store *s, int64_t item_id, const char *dir,
		   int (*cb)(void *arg, const char *name, const struct doc_meta *m), void *arg)
{
	struct doc_entry *ents = NULL;
	size_t n = 0, i, dlen = strlen(dir);
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	if (dlen == 0)
		rc = store__prepare(s, &st, "SELECT d.path, " DOC_COLS " FROM documents d "
				    "WHERE d.item_id = ?1 AND instr(d.path, '/') = 0 ORDER BY d.path",
				    "I", item_id);
	else
		rc = store__prepare(s, &st, "SELECT d.path, " DOC_COLS " FROM documents d "
				    "WHERE d.item_id = ?1 AND d.path > ?2 || '/' AND d.path < ?2 || '0' "
				    "AND instr(substr(d.path, length(?2) + 2), '/') = 0 ORDER BY d.path",
				    "Is", item_id, dir);
	if (rc == 0)
		rc = store__collect(s, st, sizeof(*ents), doc_entry_row, &dlen, (void **)&ents, &n);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		if (rc == 0 && cb(arg, ents[i].name, &ents[i].m))
			rc = 1;
		free(ents[i].name);
	}
	free(ents);
	return rc < 0 ? rc : 0;
}

