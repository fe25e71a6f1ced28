/*
 * packet_history.c - .history/ of an item: which revision files and
 * directories exist and who may read them.
 *
 * .history/ mirrors the item's directories; a directory of it exists
 * while some revision's path lies below it. Revision REV of the
 * document DIR/NAME is the file .history/DIR/NAME@REV, or, when NAME is
 * longer than HISTORY_AT_MAX bytes, the file .history/DIR/NAME/REV: every
 * name either form lists stays within NAME_MAX, so the kernel can look up
 * everything a listing shows (grep -r, find). The form depends on the
 * length of the name alone, not on how many revisions it has: bounded by
 * the digits of the latest revision, a 250-byte name would move from
 * NAME@9 to NAME/10 at its tenth save, and a path a reader took from a
 * listing would vanish. A revision file of either form has the same
 * content, size, mode and times; the directory form is read-only
 * like every directory of .history. NAME@REV still resolves for a long
 * name where the kernel lets it through (up to 253 bytes), as it did
 * before the directory form, but is not listed, and a listed directory of
 * the same name comes first. Where a listed name could mean two things
 * (the directory form of NAME and a directory NAME that once held
 * documents; a revision file REV and a subdirectory REV of that
 * directory), one directory holds both and the revision wins the name, as
 * NAME@REV wins over a directory of that name.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packet_int.h"

int packet__history_rev(const char *s)
{
	long long rev = 0;
	size_t i;

	if (s[0] < '1' || s[0] > '9')
		return 0;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i == 10)
			return 0;
		rev = rev * 10 + (s[i] - '0');
	}
	return rev <= INT_MAX ? (int)rev : 0;
}

int packet__history_path(const char *path, const char *rel, int rev, char **out)
{
	size_t plen = strlen(path), rlen = strlen(rel), dlen;
	const char *base = strrchr(rel, '/');
	struct buf b;

	*out = NULL;
	if (rlen == 0 || rlen >= plen || path[plen - rlen - 1] != '/' ||
	    strcmp(path + plen - rlen, rel) != 0)
		return -EINVAL;
	base = base ? base + 1 : rel;
	dlen = plen - rlen; /* the item directory, with its '/' */
	buf_init(&b);
	if (buf_printf(&b, "%.*s.history/%s%c%d", (int)dlen, path, rel,
		       strlen(base) > HISTORY_AT_MAX ? '/' : '@', rev)) {
		buf_free(&b);
		return -ENOMEM;
	}
	*out = buf_steal(&b);
	return 0;
}

/* Stops at the first revision that has content (not a tombstone), setting
 * *(int *)arg. */
static int find_content(void *arg, const struct rev_info *r)
{
	if (r->size < 0)
		return 0;
	*(int *)arg = 1;
	return 1;
}

/* Whether the document path of item has a revision with content: 1, 0 or a
 * negative errno. Revision 1 of a path always has content (a tombstone
 * only ends a document that was stored), so one probe answers; the walk
 * is for a store where that does not hold. */
static int has_content_rev(struct engine *e, int64_t item, const char *path)
{
	size_t len;
	int found = 0, rc = store_rev_size(e->store, item, path, 1, &len);

	if (rc != -ENOENT)
		return rc < 0 ? rc : 1;
	rc = store_rev_each(e->store, item, path, find_content, &found);
	return rc < 0 ? rc : found;
}

/* A revision file of .history: revision rev of the document path
 * (pathlen bytes of it), when it has content. 0 or -ENOENT. Who may read
 * it: as many as may read the document now (its owner, group and read
 * bits) and as its mode allowed then; a name that is gone, the revision's
 * writer and those its read bits then allowed, with the store's group. */
static int history_file(struct engine *e, struct node *n, const char *path, size_t pathlen,
			int rev)
{
	struct doc_meta now;

	snprintf(n->rel, sizeof(n->rel), "%.*s", (int)pathlen, path);
	if (store_rev_stat(e->store, n->item.id, n->rel, rev, &n->doc))
		return -ENOENT;
	n->doc.mode &= 0444;
	if (store_doc_stat(e->store, n->item.id, n->rel, &now) == 0 && !now.is_dir) {
		n->doc.mode &= now.mode;
		n->doc.uid = now.uid;
		n->doc.gid = now.gid;
	}
	n->kind = N_HISTORY_FILE;
	n->rev = rev;
	return 0;
}

int packet__resolve_history(struct engine *e, struct node *n, const char *rest)
{
	const char *base, *at;
	char *end;
	long rev;
	int rc;

	if (!*rest) {
		n->kind = N_HISTORY_DIR;
		n->rel[0] = '\0';
		return 0;
	}
	if (strlen(rest) >= sizeof(n->rel))
		return -ENAMETOOLONG;
	base = strrchr(rest, '/');
	base = base ? base + 1 : rest;
	/* A long name: the directory form, or a directory that held documents. */
	if (strlen(base) > HISTORY_AT_MAX) {
		rc = store_rev_dir_exists(e->store, n->item.id, rest);
		if (rc == 0)
			rc = has_content_rev(e, n->item.id, rest);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			n->kind = N_HISTORY_DIR;
			snprintf(n->rel, sizeof(n->rel), "%s", rest);
			return 0;
		}
	}
	/* A revision in the directory form: <path>/<rev>, <path> a long name. */
	if (base != rest) {
		const char *pbase = base - 1;

		while (pbase > rest && pbase[-1] != '/')
			pbase--;
		rev = packet__history_rev(base);
		if (rev && (size_t)(base - 1 - pbase) > HISTORY_AT_MAX &&
		    history_file(e, n, rest, (size_t)(base - 1 - rest), (int)rev) == 0)
			return 0;
	}
	/* A revision in the @ form: <path>@<rev>. */
	at = strrchr(rest, '@');
	if (at && !strchr(at, '/') && at[1]) {
		rev = strtol(at + 1, &end, 10);
		if (*end == '\0' && rev > 0 && rev <= INT_MAX &&
		    history_file(e, n, rest, (size_t)(at - rest), (int)rev) == 0)
			return 0;
	}
	if (strlen(base) > HISTORY_AT_MAX)
		return -ENOENT; /* looked for as a directory first */
	/* A directory of .history: some revision's path lies below it. */
	rc = store_rev_dir_exists(e->store, n->item.id, rest);
	if (rc <= 0)
		return rc < 0 ? rc : -ENOENT;
	n->kind = N_HISTORY_DIR;
	snprintf(n->rel, sizeof(n->rel), "%s", rest);
	return 0;
}
