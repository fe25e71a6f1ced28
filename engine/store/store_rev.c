/*
 * store_rev.c - how revisions are stored, their codec, and the one
 * function that reads one back (store_int.h: store__rev_content,
 * store__rev_compress, store__rev_keep; store.h's store_rev_* list and
 * read them through it: store_rev_list.c). Storing them (retire, the rows
 * of whole, appends) is store_retire.c's, after the format given here.
 *
 * Every close stores a revision, so a document written N times has N
 * revisions; stored whole, 10,000 appends of a 52-byte line would hold
 * 2.6 GB for a 520 KB file. SPEC §3 wants the store on the order of the
 * final size, and any revision read back whole and fast. So:
 *
 * - The current revision of a document (the one its documents row names)
 *   is kept whole, as written (enc REV_RAW): reading, mapping or appending
 *   to a document, by far the most frequent reads, costs what it did. Its
 *   bytes live in a table of their own, whole (slot, content), not in
 *   its revisions row: a row that held a large blob in a B-tree leaf and
 *   then shrank to a delta would leave that page mostly empty for good
 *   (rows are appended at the right edge; 300 appends left 700 KB of
 *   pages for 50 KB of revisions), while a row of whole (a slot, which
 *   revisions.slot of the current revision names) is passed on to the
 *   document's next revision: rewritten in place, where SQLite writes only
 *   the pages whose bytes changed (an append: the last page or two, not a
 *   new copy of the document), when the content fits the row's room
 *   (whole_room: padded with zeros, an eighth more than the content and
 *   512 bytes, once the content outgrew its row); else deleted, and its
 *   pages reused by the next write. Appends carry a content of 16 KiB and
 *   more on in pieces (rows of whole_pieces: store_whole.c), so that an
 *   append reads and writes the last piece, not a row as long as the
 *   document, whose chain of overflow pages SQLite would walk.
 * - When a revision stops being current (a newer write, an unlink, a
 *   rename away, a rename over it), store__rev_retire encodes it once, for
 *   good, with zstd: compressed against the content of an older revision of
 *   the same path as its prefix (zstd's "patch-from", ZSTD_CCtx_refPrefix:
 *   what is shared costs a few bytes, what is new is compressed), REV_DELTA,
 *   or compressed alone, REV_ZSTD, or left as it is, REV_KEPT, when neither
 *   is smaller (a few bytes). A retired revision never changes again, so a
 *   delta's base, once decoded, always gives the same bytes.
 * - A revision that is its base followed by more bytes (an append: `>>`,
 *   a log, a registry) is stored as those bytes alone, REV_APPEND:
 *   compressed against the last REV_APPEND_TAIL bytes of the base (the
 *   lines before them, whose keys and words the new ones repeat), not
 *   against all of it, so that retiring it costs what the suffix and 4 KiB
 *   cost, not a pass of zstd over the whole document (a 100 KB log: tens of
 *   microseconds a line less). It is decoded as the base's content and the
 *   suffix; it is a delta for everything else (base, depth, the skip list).
 * - An append that the namespace commits as one (store_doc_append: bytes
 *   written at the end through handles that only write, O_WRONLY, which
 *   never read the document) is stored without the document passing
 *   through memory: its bytes are written after the old content in the
 *   row of whole or its last piece (the last page or two), and the
 *   revision records the run of appends it continues
 *   (revisions.grown_from: the run's first revision). Every revision of a
 *   run is an earlier one's content followed by more bytes, so when the
 *   base chosen below is of the same run, retiring reads only the bytes the
 *   run added after the base (store_retire.c); other bases are compared
 *   as above. A run's revisions never change: an amend clears the mark.
 * - The direction is forward (a delta names an older revision), unlike
 *   Fossil's reverse deltas: there the newest is whole and each older one a
 *   delta against the next newer, so that every write re-encodes the
 *   previous head against the new one and chains grow by one at every
 *   write; Fossil leaves them unbounded, git packs bound them (depth 50) by
 *   storing a whole object where a chain would pass the limit. Whole copies
 *   every D revisions cost (N / D) whole documents: for 10,000 appends that
 *   is many times the final size whatever D is. Here the base is chosen as
 *   in a skip list (Subversion's skip-deltas): the content revisions of a
 *   path are numbered by seq (1, 2, ...; tombstones have none), and the one
 *   with index i = seq - 1 is a delta against index i & (i - 1), i.e. i with
 *   its lowest set bit cleared (index 0 is compressed alone). Reading index
 *   i decodes at most popcount(i) deltas (depth; 13 for 10,000 revisions,
 *   32 at most: REV_DEPTH_MAX), each as fast as zstd decompresses, and a
 *   delta spans lowbit(i) revisions of change: over N revisions the deltas
 *   hold about (N / 2) * log2(N) revisions' worth of changes, compressed
 *   (appends: a small multiple of the final size; small edits of a large
 *   document: a fraction of it), next to one whole current copy.
 * - The base is found without an index on seq: it is on the chain of the
 *   previous content revision P (seq - 1 = i - 1; clearing the lowest set
 *   bits of i - 1 one by one reaches i & (i - 1)), so retire walks P's
 *   bases back to the first of index <= i & (i - 1), or the first whole
 *   one. depth = 1 + the base's depth: a depth over REV_DEPTH_MAX (a store
 *   converted from an odd history) stores the revision alone instead.
 * - The write path: a write of a document that had content re-encodes the
 *   previous revision, which costs decoding its base (up to 13 steps, but
 *   the base is mostly one of the last revisions retired or decoded, whose
 *   content s->revs keeps) and one compression, both about the document's
 *   size (4 KiB: tens of microseconds; 1 MiB: about 10 ms), but for an
 *   append (a comparison with the base, and a compression of the suffix).
 *
 * Every read of a revision's content goes through store__rev_content, which
 * undoes the chain; nothing else reads revisions.content.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <zstd.h>

#include "store_int.h"

/* zstd's fastest level, with long-distance matching: about 4 ms to
 * compress a MiB against a prefix of the same size, 1 ms to decompress it.
 * Without long-distance matching libzstd 1.5.4 (levels 1 and 3 alike)
 * finds little of some prefixes of 32 to 128 KiB: one line appended to a
 * 52 KB log cost 874 bytes instead of 28. */
#define REV_LEVEL 1

/* The smallest window log that holds n bytes (prefix and content). */
static int window_log(size_t n)
{
	ZSTD_bounds b = ZSTD_cParam_getBounds(ZSTD_c_windowLog);
	int w = b.lowerBound;

	while (w < b.upperBound && ((size_t)1 << w) < n)
		w++;
	return w;
}

int store__rev_compress(struct store *s, const void *src, size_t len, const void *prefix,
			size_t plen, void **out, size_t *olen)
{
	size_t bound = ZSTD_compressBound(len), r;
	void *o;

	assert(util_mutex_held(&s->lock));
	if (!s->zc && !(s->zc = ZSTD_createCCtx()))
		return -ENOMEM;
	o = malloc(bound ? bound : 1);
	if (!o)
		return -ENOMEM;
	ZSTD_CCtx_reset(s->zc, ZSTD_reset_session_and_parameters);
	r = ZSTD_CCtx_setParameter(s->zc, ZSTD_c_compressionLevel, REV_LEVEL);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(s->zc, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(s->zc, ZSTD_c_windowLog, window_log(plen + len));
	if (!ZSTD_isError(r) && plen > REV_APPEND_TAIL)
		r = ZSTD_CCtx_setParameter(s->zc, ZSTD_c_enableLongDistanceMatching, 1);
	if (!ZSTD_isError(r) && plen)
		r = ZSTD_CCtx_refPrefix(s->zc, prefix, plen);
	if (!ZSTD_isError(r))
		r = ZSTD_compress2(s->zc, o, bound, src, len);
	if (ZSTD_isError(r)) {
		util_log(LOG_ERR, "store: zstd: %s", ZSTD_getErrorName(r));
		free(o);
		return -EIO;
	}
	*out = o;
	*olen = r;
	return 0;
}

/* Decompresses src (slen bytes) against prefix (plen bytes) into a new
 * NUL-terminated buffer *out that must come out exactly size bytes. Lock
 * held (s->zd). 0, -ENOMEM or -EIO (damaged, or not that revision's). */
static int rev_decompress_to(struct store *s, const void *src, size_t slen, const void *prefix,
			     size_t plen, char *o, size_t size)
{
	size_t r;

	assert(util_mutex_held(&s->lock));
	if (!s->zd && !(s->zd = ZSTD_createDCtx()))
		return -ENOMEM;
	ZSTD_DCtx_reset(s->zd, ZSTD_reset_session_and_parameters);
	r = ZSTD_DCtx_setParameter(s->zd, ZSTD_d_windowLogMax,
				   ZSTD_dParam_getBounds(ZSTD_d_windowLogMax).upperBound);
	if (!ZSTD_isError(r) && plen)
		r = ZSTD_DCtx_refPrefix(s->zd, prefix, plen);
	if (!ZSTD_isError(r))
		r = ZSTD_decompressDCtx(s->zd, o, size, src, slen);
	if (ZSTD_isError(r) || r != size) {
		util_log(LOG_ERR, "store: a stored revision does not decode: %s",
			ZSTD_isError(r) ? ZSTD_getErrorName(r) : "wrong size");
		return -EIO;
	}
	return 0;
}

static int rev_decompress(struct store *s, const void *src, size_t slen, const void *prefix,
			  size_t plen, size_t size, char **out)
{
	char *o = malloc(size + 1);
	int rc;

	if (!o)
		return -ENOMEM;
	rc = rev_decompress_to(s, src, slen, prefix, plen, o, size);
	if (rc) {
		free(o);
		return rc;
	}
	o[size] = '\0';
	*out = o;
	return 0;
}

/* The content of a REV_APPEND revision of size bytes (stored: src, slen
 * bytes) whose base's content is base (blen bytes): the base followed by
 * the suffix, which was compressed against the base's last
 * REV_APPEND_TAIL bytes. In a new NUL-terminated buffer *out. Lock held.
 * 0, -ENOMEM or -EIO (a size smaller than the base's, or damaged). */
static int rev_append_decode(struct store *s, const void *src, size_t slen, const char *base,
			     size_t blen, size_t size, char **out)
{
	size_t tail = blen < REV_APPEND_TAIL ? blen : REV_APPEND_TAIL;
	char *o;
	int rc;

	if (size < blen) {
		util_log(LOG_ERR, "store: an appended revision is shorter than its base");
		return -EIO;
	}
	o = malloc(size + 1);
	if (!o)
		return -ENOMEM;
	memcpy(o, base, blen);
	rc = rev_decompress_to(s, src, slen, base + blen - tail, tail, o + blen, size - blen);
	if (rc) {
		free(o);
		return rc;
	}
	o[size] = '\0';
	*out = o;
	return 0;
}


/* The kept content of retired revision id, or NULL. */
static struct rev_kept {
	int64_t id;
	char *data;
	size_t len;
	uint64_t used;
} *kept_get(struct store *s, int64_t id)
{
	int i;

	for (i = 0; i < REV_CACHE; i++)
		if (s->revs[i].id == id && id) {
			s->revs[i].used = ++s->rev_clock;
			return (struct rev_kept *)&s->revs[i];
		}
	return NULL;
}

/* Content over a quarter of this is not kept (store__rev_keep). */
#define REV_CACHE_BYTES (16u << 20)
void store__rev_keep_owned(struct store *s, int64_t id, char *data, size_t len)
{
	size_t total = 0;
	int i, old;

	if (len > REV_CACHE_BYTES / 4 || kept_get(s, id)) {
		free(data);
		return;
	}
	assert(data[len] == '\0');
	for (i = 0; i < REV_CACHE; i++)
		total += s->revs[i].id ? s->revs[i].len : 0;
	for (;;) {
		old = 0;
		for (i = 1; i < REV_CACHE; i++)
			if (s->revs[i].used < s->revs[old].used)
				old = i;
		if (!s->revs[old].id || total + len <= REV_CACHE_BYTES)
			break;
		total -= s->revs[old].len;
		free(s->revs[old].data);
		s->revs[old].data = NULL;
		s->revs[old].id = 0;
		s->revs[old].used = 0;
	}
	free(s->revs[old].data);
	s->revs[old].id = id;
	s->revs[old].data = data;
	s->revs[old].len = len;
	s->revs[old].used = ++s->rev_clock;
}

void store__rev_keep(struct store *s, int64_t id, const char *data, size_t len)
{
	char *copy;

	if (len > REV_CACHE_BYTES / 4 || kept_get(s, id))
		return;
	copy = malloc(len + 1);
	if (!copy)
		return;
	memcpy(copy, data, len);
	copy[len] = '\0';
	store__rev_keep_owned(s, id, copy, len);
}

void store__rev_forget(struct store *s)
{
	int i;

	for (i = 0; i < REV_CACHE; i++) {
		free(s->revs[i].data);
		s->revs[i].data = NULL;
		s->revs[i].id = 0;
		s->revs[i].used = 0;
	}
}

/* One link of a chain: a revision's stored form, copied out. */
struct rev_link {
	int enc;
	int64_t base;
	size_t size;
	char *data; /* as stored */
	size_t len;
};

/* Reads the stored form of revision id. 0, -ENOENT (no such revision, or a
 * tombstone) or a negative errno. Lock held. */
static int link_get(struct store *s, int64_t id, struct rev_link *l)
{
	sqlite3_stmt *st;
	int64_t slot = 0;
	int rc, pieces = 0;

	l->data = NULL;
	rc = store__first(s, &st, "SELECT r.enc, r.base, r.size, " WHOLE_CONTENT ", w.slot, "
			  WHOLE_PIECES " FROM revisions r LEFT JOIN whole w ON w.slot = r.slot "
			  "WHERE r.id = ? AND r.content IS NOT NULL", "I", id);

	if (rc == 0) {
		l->enc = sqlite3_column_int(st, 0);
		l->base = sqlite3_column_int64(st, 1);
		l->size = (size_t)sqlite3_column_int64(st, 2);
		rc = store__blob_out(st, 3, &l->data, &l->len);
		slot = sqlite3_column_int64(st, 4);
		pieces = sqlite3_column_int(st, 5);
	}
	store__done(st);
	/* A whole one's row is padded to its room, and a long one goes on in
	 * pieces (store_whole.c). */
	if (rc == 0 && l->enc == REV_RAW && slot)
		rc = store__whole_finish(s, slot, pieces, &l->data, &l->len, l->size);
	else if (rc == 0 && l->enc == REV_RAW && l->len > l->size) {
		l->len = l->size;
		l->data[l->len] = '\0';
	}
	if (rc) {
		free(l->data);
		l->data = NULL;
	}
	return rc;
}

int store__rev_content(struct store *s, int64_t id, char **data, size_t *len)
{
	struct rev_link chain[REV_DEPTH_MAX + 1];
	struct rev_kept *k = NULL;
	char *cur = NULL, *next;
	size_t cur_len = 0;
	int n = 0, rc = 0, i;

	/* Back to a kept content (n links above it) or to the first whole
	 * revision (chain[n - 1]). */
	for (;;) {
		int64_t at = n ? chain[n - 1].base : id;

		if ((k = kept_get(s, at)))
			break;
		if (n > REV_DEPTH_MAX) {
			util_log(LOG_ERR, "store: revision %lld: its chain of deltas is "
				"longer than %d", (long long)id, REV_DEPTH_MAX);
			rc = -EIO;
			goto out;
		}
		rc = link_get(s, at, &chain[n]);
		if (rc == -ENOENT && n)
			rc = -EIO; /* a base that is gone */
		if (rc)
			goto out;
		n++;
		if (chain[n - 1].enc != REV_DELTA && chain[n - 1].enc != REV_APPEND)
			break;
	}
	/* Whole, then each delta against the one before it. */
	i = n - 1;
	if (k) {
		cur = malloc(k->len + 1);
		rc = cur ? 0 : -ENOMEM;
		if (cur)
			memcpy(cur, k->data, k->len + 1);
		cur_len = k->len;
		i = n;
	} else if (chain[i].enc == REV_ZSTD) {
		rc = rev_decompress(s, chain[i].data, chain[i].len, NULL, 0, chain[i].size, &cur);
		cur_len = chain[i].size;
	} else if (chain[i].enc == REV_RAW || chain[i].enc == REV_KEPT) {
		cur = chain[i].data;
		cur_len = chain[i].len;
		chain[i].data = NULL;
	} else {
		util_log(LOG_ERR, "store: revision %lld: unknown encoding %d",
			(long long)id, chain[i].enc);
		rc = -EIO;
	}
	for (i = i - 1; rc == 0 && i >= 0; i--) {
		if (chain[i].enc == REV_APPEND)
			rc = rev_append_decode(s, chain[i].data, chain[i].len, cur, cur_len,
					       chain[i].size, &next);
		else
			rc = rev_decompress(s, chain[i].data, chain[i].len, cur, cur_len,
					    chain[i].size, &next);
		free(cur);
		cur = rc ? NULL : next;
		cur_len = chain[i].size;
	}
	/* What was decoded (not a whole current revision) is kept. */
	if (rc == 0 && n && (chain[0].enc != REV_RAW || k))
		store__rev_keep(s, id, cur, cur_len);
	if (rc == 0) {
		*data = cur;
		if (len)
			*len = cur_len;
	} else {
		free(cur);
	}
out:
	for (i = 0; i < n; i++)
		free(chain[i].data);
	return rc;
}
