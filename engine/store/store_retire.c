/*
 * store_retire.c - the write side of revisions (store_int.h:
 * store__rev_retire, store__rev_whole, store__rev_replace, store__rev_pass_on,
 * store__rev_append, store__rev_grow, store__rev_compact): a revision that stops being
 * current is encoded for good against its base (at once, or later for a
 * rename over it or an unlink: store_later.c), and the current one is
 * kept whole in its row of whole and its pieces (store_whole.c), rewritten
 * in place. store_rev.c's top comment gives the format and why; it reads
 * revisions back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* What retire needs of a revision: where it is, its encoding and place,
 * its size, the run of appends it belongs to (grown: revisions.grown_from)
 * and its row of whole (slot); 0 for none. */
struct rev_pos {
	int64_t id, base;
	int enc, depth;
	int64_t seq, size, grown, slot;
};

/* Where a revision belongs (pos_get_named): its item, path, number, and
 * whether its content column is set (not a tombstone's NULL). */
struct rev_name {
	int64_t item;
	char *path;
	int rev, content;
};

/* The columns pos_get reads, in rev_pos's order. */
#define POS_COLS "enc, base, depth, seq, size, COALESCE(grown_from, 0), COALESCE(slot, 0)"

static void pos_row(sqlite3_stmt *st, int64_t id, struct rev_pos *p)
{
	p->id = id;
	p->enc = sqlite3_column_int(st, 0);
	p->base = sqlite3_column_int64(st, 1);
	p->depth = sqlite3_column_int(st, 2);
	p->seq = sqlite3_column_int64(st, 3);
	p->size = sqlite3_column_int64(st, 4);
	p->grown = sqlite3_column_int64(st, 5);
	p->slot = sqlite3_column_int64(st, 6);
}

static int pos_get(struct store *s, int64_t id, struct rev_pos *p)
{
	sqlite3_stmt *st;
	int rc = store__first(s, &st, "SELECT " POS_COLS " FROM revisions WHERE id = ?", "I", id);

	if (rc == 0)
		pos_row(st, id, p);
	store__done(st);
	return rc;
}

/* pos_get, with the revision's item, path (malloc'd into n->path, NULL
 * when it fails: the caller frees it), number and whether it has content,
 * in one statement: what an append's retire needs of the revision it
 * replaces. */
static int pos_get_named(struct store *s, int64_t id, struct rev_pos *p, struct rev_name *n)
{
	sqlite3_stmt *st;
	int rc = store__first(s, &st, "SELECT " POS_COLS ", item_id, path, rev, content IS NOT NULL "
			      "FROM revisions WHERE id = ?", "I", id);

	n->path = NULL;
	if (rc == 0) {
		pos_row(st, id, p);
		n->item = sqlite3_column_int64(st, 7);
		n->path = store__col_dup(st, 8);
		n->rev = sqlite3_column_int(st, 9);
		n->content = sqlite3_column_int(st, 10);
		rc = n->path ? 0 : -ENOMEM;
	}
	store__done(st);
	return rc;
}

/* The base for the content revision (item, path, rev) of index i = seq - 1
 * >= 1 (see the top): in *base, or base->id 0 for none. Lock held. */
static int pick_base(struct store *s, int64_t item, const char *path, int rev, int64_t i,
		     struct rev_pos *base)
{
	int64_t target = i & (i - 1);
	sqlite3_stmt *st;
	int rc;

	base->id = 0;
	/* The latest content revision before rev, and where it is, in one
	 * statement. */
	rc = store__first(s, &st, "SELECT " POS_COLS ", id FROM revisions WHERE item_id = ? AND "
			  "path = ? AND rev < ? AND content IS NOT NULL ORDER BY rev DESC LIMIT 1",
			  "Isi", item, path, rev);
	if (rc == 0)
		pos_row(st, sqlite3_column_int64(st, 7), base);
	store__done(st);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	while (rc == 0 && base->seq - 1 > target &&
	       (base->enc == REV_DELTA || base->enc == REV_APPEND))
		rc = pos_get(s, base->base, base);
	if (rc == 0 && (base->seq < 1 || base->depth >= REV_DEPTH_MAX))
		base->id = 0;
	return rc == -ENOENT ? -EIO : rc;
}

/* store__rev_retire; when slot is not NULL, leaves revision id's row of
 * whole for the caller to take over (store__rev_replace) and names it in
 * *slot (0: none). */
static int rev_retire(struct store *s, int64_t id, int64_t *slot)
{
	struct rev_pos base = {0};
	sqlite3_stmt *st;
	char *raw = NULL, *prefix = NULL;
	void *enc = NULL;
	size_t len = 0, plen = 0, elen = 0, size = 0;
	int64_t item = 0, seq = 0, at = 0;
	char *path = NULL;
	int rc, rev = 0, kind = REV_KEPT, pieces = 0;

	if (slot)
		*slot = 0;

	rc = store__first(s, &st, "SELECT r.item_id, r.path, r.rev, r.seq, " WHOLE_CONTENT ", "
			  "r.size, w.slot, " WHOLE_PIECES " FROM revisions r LEFT JOIN whole w ON "
			  "w.slot = r.slot WHERE r.id = ? AND r.enc = 0 AND r.content IS NOT NULL",
			  "I", id);
	if (rc == 0) {
		item = sqlite3_column_int64(st, 0);
		rev = sqlite3_column_int(st, 2);
		seq = sqlite3_column_int64(st, 3);
		path = store__col_dup(st, 1);
		rc = path ? store__blob_out(st, 4, &raw, &len) : -ENOMEM;
		size = (size_t)sqlite3_column_int64(st, 5);
		at = sqlite3_column_int64(st, 6);
		pieces = sqlite3_column_int(st, 7);
	}
	store__done(st);
	/* Its row of whole is padded to its room, and may go on in pieces
	 * (store_whole.c). */
	if (rc == 0 && at)
		rc = store__whole_finish(s, at, pieces, &raw, &len, size);
	else if (rc == 0 && len > size)
		len = size;
	if (rc)
		goto out;
	if (seq > 1)
		rc = pick_base(s, item, path, rev, seq - 1, &base);
	/* A delta's depth counts its base's: a base still waiting to be
	 * retired (whole in its row, not current: store_later.c) is retired
	 * first, and the base picked again. */
	for (int k = 0; rc == 0 && base.id && base.enc == REV_RAW && base.slot && k < 4; k++) {
		rc = store__later_now(s, base.id);
		if (rc == 0)
			rc = pick_base(s, item, path, rev, seq - 1, &base);
	}
	if (rc == 0 && base.id)
		rc = store__rev_content(s, base.id, &prefix, &plen);
	/* An append to its base: the suffix alone, against the base's end. */
	if (rc == 0 && base.id && plen && len > plen && memcmp(raw, prefix, plen) == 0) {
		size_t tail = plen < REV_APPEND_TAIL ? plen : REV_APPEND_TAIL;

		rc = store__rev_compress(s, raw + plen, len - plen, prefix + plen - tail, tail, &enc,
				  &elen);
		if (rc == 0 && elen < len)
			kind = REV_APPEND;
	} else if (rc == 0) {
		rc = store__rev_compress(s, raw, len, prefix, plen, &enc, &elen);
		if (rc == 0 && elen < len)
			kind = base.id ? REV_DELTA : REV_ZSTD;
	}
	/* Out of whole, into the row (REV_KEPT: as it was). */
	if (rc == 0)
		rc = store__exec(s, "UPDATE revisions SET enc = ?1, base = NULLIF(?2, 0), depth = ?3, "
				 "content = ?4, slot = NULL WHERE id = ?5", "iIibI", kind,
				 kind >= REV_DELTA ? base.id : (int64_t)0,
				 kind >= REV_DELTA ? base.depth + 1 : 0, kind == REV_KEPT ? raw : enc,
				 kind == REV_KEPT ? len : elen, id);
	if (rc == 0 && slot)
		*slot = at;
	else if (rc == 0 && at)
		rc = store__exec(s, "DELETE FROM whole WHERE slot = ?", "I", at);
	/* raw has a NUL after len bytes: store__blob_out's, or the row's
	 * padding of zeros when len is its content's size. */
	if (rc == 0) {
		store__rev_keep_owned(s, id, raw, len);
		raw = NULL;
	}
out:
	free(path);
	free(raw);
	free(prefix);
	free(enc);
	return rc == -ENOENT ? 0 : rc;
}

int store__rev_retire(struct store *s, int64_t id)
{
	return rev_retire(s, id, NULL);
}

int store__rev_whole(struct store *s, int64_t id, const void *data, size_t len)
{
	sqlite3_stmt *st;
	int64_t slot = 0;
	int rc = store__first(s, &st, "SELECT slot FROM revisions WHERE id = ?", "I", id);

	if (rc == 0)
		slot = sqlite3_column_int64(st, 0);
	store__done(st);
	if (rc == 0)
		rc = store__whole_put(s, data, len, slot, &slot);
	if (rc == 0)
		rc = store__exec(s, "UPDATE revisions SET slot = NULLIF(?, 0) WHERE id = ?", "II",
				 slot, id);
	return rc;
}

int store__rev_replace(struct store *s, int64_t prev, const void *data, size_t len, int64_t *slot)
{
	int64_t at = 0;
	int rc = prev ? rev_retire(s, prev, &at) : 0;

	*slot = 0;
	return rc ? rc : store__whole_put(s, data, len, at, slot);
}

int store__rev_pass_on(struct store *s, int64_t prev, const void *data, size_t len, int64_t *slot)
{
	int64_t at = 0;
	int rc = rev_retire(s, prev, &at);

	*slot = 0;
	if (rc)
		return rc;
	/* A content that no row of whole held (empty, or an older store's
	 * kept in its revision) is stored as store__rev_replace stores it. */
	if (!at)
		return store__whole_put(s, data, len, 0, slot);
	*slot = at;
	return 0;
}

/*
 * rev_retire of revision pos, named n (pos_get_named), when the store knows
 * it is an append (revisions.grown_from names its run): when its base is an
 * earlier revision of the same run, its content is the base's followed by
 * more bytes, so only those bytes and the base's last REV_APPEND_TAIL are
 * read, from its row of whole and its pieces (store__whole_read: the last
 * piece or two of a long document), and stored as REV_APPEND, without reading or
 * comparing the rest. *done is 1 when it did so, with the row of whole
 * left in *slot as rev_retire leaves it; 0 leaves everything to rev_retire
 * (not an append, a base outside the run or empty, a suffix that would
 * not be stored smaller). Lock held, inside a transaction.
 */
static int rev_retire_grown(struct store *s, const struct rev_pos *pos, const struct rev_name *n,
			    int64_t *slot, int *done)
{
	struct rev_pos me = *pos, base = {0};
	int64_t at = me.slot, id = pos->id;
	char *bytes = NULL;
	void *enc = NULL;
	size_t tail, add, elen = 0;
	int rc = 0;

	*done = 0;
	if (me.enc != REV_RAW || !me.grown || me.seq <= 1 || !n->content)
		return 0;
	if (at)
		rc = pick_base(s, n->item, n->path, n->rev, me.seq - 1, &base);
	if (rc || !at || !base.id || base.id >= id || base.size <= 0 || base.size >= me.size ||
	    (base.id != me.grown && base.grown != me.grown))
		return rc == -ENOENT ? 0 : rc;
	/* The base's last bytes, then what the run added after them. */
	tail = (size_t)base.size < REV_APPEND_TAIL ? (size_t)base.size : REV_APPEND_TAIL;
	add = (size_t)(me.size - base.size);
	bytes = malloc(tail + add);
	if (!bytes)
		return -ENOMEM;
	rc = store__whole_read(s, at, (size_t)base.size - tail, tail + add, bytes);
	if (rc == 0)
		rc = store__rev_compress(s, bytes + tail, add, bytes, tail, &enc, &elen);
	if (rc == 0 && elen < (size_t)me.size) {
		rc = store__exec(s, "UPDATE revisions SET enc = ?1, base = ?2, depth = ?3, "
				 "content = ?4, slot = NULL WHERE id = ?5", "iIibI", REV_APPEND,
				 base.id, base.depth + 1, enc, elen, id);
		if (rc == 0) {
			*slot = at;
			*done = 1;
		}
	}
	free(bytes);
	free(enc);
	return rc;
}

int store__rev_append(struct store *s, int64_t prev, const void *data, size_t len,
		      struct rev_grown *g)
{
	struct rev_pos p;
	struct rev_name n;
	int64_t slot = 0;
	int rc, done = 0;

	assert(util_mutex_held(&s->lock));
	memset(g, 0, sizeof(*g));
	rc = pos_get_named(s, prev, &p, &n);
	if (rc == 0 && (p.enc != REV_RAW || p.size < 0))
		rc = -ESTALE; /* not a current revision, or a tombstone */
	/* Content kept elsewhere than a row of whole (a store converted from
	 * an old one): for the caller to write whole. */
	if (rc == 0 && p.size > 0 && !p.slot)
		rc = -ESTALE;
	if (rc == 0)
		rc = rev_retire_grown(s, &p, &n, &slot, &done);
	free(n.path);
	if (rc == 0 && !done)
		rc = rev_retire(s, prev, &slot);
	/* Retire leaves the row it read in slot, which is p.slot (0 for an
	 * empty content, which has none); the bytes go after its content. */
	assert(rc || !slot || slot == p.slot);
	if (rc)
		return rc == -ENOENT ? -ESTALE : rc;
	rc = store__whole_append(s, slot, (size_t)p.size, data, len, &g->slot);
	/* The new revision continues prev's run, or starts one at prev. */
	g->grown = p.grown ? p.grown : prev;
	g->size = (uint64_t)p.size + len;
	return rc;
}

int store__rev_grow(struct store *s, int64_t id, const void *data, size_t len,
		    struct rev_grown *g)
{
	struct rev_pos p;
	int rc;

	assert(util_mutex_held(&s->lock));
	memset(g, 0, sizeof(*g));
	rc = pos_get(s, id, &p);
	if (rc == 0 && (p.enc != REV_RAW || p.size < 0 || (p.size > 0 && !p.slot)))
		rc = -ESTALE; /* as store__rev_append's prev */
	if (rc)
		return rc == -ENOENT ? -ESTALE : rc;
	rc = store__whole_append(s, p.slot, (size_t)p.size, data, len, &g->slot);
	g->grown = p.grown;
	g->size = (uint64_t)p.size + len;
	if (rc == 0)
		rc = store__exec(s, "UPDATE revisions SET size = ?1, slot = ?2 WHERE id = ?3",
				 "III", (int64_t)g->size, g->slot, id);
	return rc;
}

int store__rev_compact(struct store *s)
{
	sqlite3_stmt *st;
	int64_t *ids = NULL, *grown;
	size_t n = 0, cap = 0, i;
	int rc;

	/* Every content revision no document names, oldest first within each
	 * path, so that each one's base is final before it is chosen. */
	rc = store__prepare(s, &st, "SELECT r.id FROM revisions r WHERE r.enc = 0 AND "
			    "r.content IS NOT NULL AND NOT EXISTS (SELECT 1 FROM documents d "
			    "WHERE d.item_id = r.item_id AND d.path = r.path AND d.rev_id = r.id) "
			    "ORDER BY r.item_id, r.path, r.rev", "");
	while (rc == 0 && (rc = store__step(s, st)) > 0) {
		rc = 0;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			grown = realloc(ids, cap * sizeof(*ids));
			if (!grown) {
				rc = -ENOMEM;
				break;
			}
			ids = grown;
		}
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	store__done(st);
	for (i = 0; rc == 0 && i < n; i++)
		rc = store__rev_retire(s, ids[i]);
	free(ids);
	return rc;
}
