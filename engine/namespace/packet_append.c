/*
 * packet_append.c - the append-only files of the packet namespace:
 * writes to validation/registry.jsonl, which store only whole, checked
 * lines, and the live reads of registry.jsonl and events, so that tail -f
 * sees them grow. packet_file.c's handles call these with their own lock
 * held; packet_int.h documents them. Invariant: registry.jsonl never
 * shrinks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "packet_int.h"

uint64_t packet__registry_size(struct engine *e, int64_t item)
{
	uint64_t size = 0;

	/* A size the store cannot give counts as 0 (an empty registry). */
	(void)store_registry_size(e->store, item, &size);
	return size;
}

/*
 * A write to registry.jsonl: the bytes join the fragment held since the
 * last newline, and every line they complete is checked before any is
 * stored, so that all of them are stored or none (-EINVAL, or -EFBIG for a
 * line longer than REGISTRY_LINE_MAX); through a write-through handle, a
 * fragment left that is a whole object without its newline refuses the
 * write too. The held fragment holds no newline, so only the new bytes are
 * searched for one, and a write that would leave it longer than
 * REGISTRY_LINE_MAX is refused (-EFBIG): a line without its newline costs
 * neither time on every write nor memory without bound. A refused write
 * leaves the fragment as it was before it.
 */
ssize_t packet__registry_write(struct engine *e, int64_t item_id, const char *item_name,
			       int append, int through, struct buf *line, const char *buf,
			       size_t size, uint64_t off)
{
	size_t keep = line->len, start = 0, at;
	const char *nl, *p;
	struct buf ok;
	int rc = 0;

	if (!append && off != packet__registry_size(e, item_id) + line->len)
		return -EPERM;
	rc = buf_append(line, buf, size);
	if (rc)
		return rc;
	buf_init(&ok);
	for (at = keep; rc == 0 && (nl = memchr(line->data + at, '\n', line->len - at));
	     at = start) {
		char err[256], *norm = NULL;

		p = line->data + start;
		rc = registry_check_external(p, (size_t)(nl - p), &norm, err, sizeof(err));
		if (rc) {
			packet__refuse(e, item_id, item_name, "%s", err);
		} else {
			rc = buf_append(&ok, norm, strlen(norm) + 1);
			free(norm);
		}
		start = (size_t)(nl - line->data) + 1;
	}
	if (rc == 0 && line->len - start > REGISTRY_LINE_MAX) {
		packet__refuse(e, item_id, item_name, "line too long (more than %d bytes without "
			       "a newline)", REGISTRY_LINE_MAX);
		rc = -EFBIG;
	}
	/* What a close would refuse (engine_file_flush), where no close is
	 * seen. */
	if (rc == 0 && through && line->len > start) {
		char *norm = NULL, why[64];

		if (registry_check_external(line->data + start, line->len - start, &norm, why,
					    sizeof(why)) == 0) {
			free(norm);
			packet__refuse(e, item_id, item_name, "line without newline not stored");
			rc = -EINVAL;
		}
	}
	if (rc) {
		line->len = keep;
		line->data[keep] = '\0';
		buf_free(&ok);
		return rc == -ENOMEM || rc == -EFBIG ? rc : -EINVAL;
	}
	for (p = ok.data; p && p < ok.data + ok.len && rc == 0; p += strlen(p) + 1) {
		rc = pipeline_registry_external(e->pl, item_id, item_name, p);
		if (rc == 0) {
			engine_changed(e, item_name, "validation/evidence.md", ENGINE_MODIFIED);
			engine_changed(e, item_name, "validation/junit.xml", ENGINE_MODIFIED);
		}
	}
	buf_free(&ok);
	memmove(line->data, line->data + start, line->len - start);
	line->len -= start;
	line->data[line->len] = '\0';
	return rc ? rc : (ssize_t)size;
}

/* What tail_row needs: the bytes from keep on are kept, up to end. */
struct tail_fill {
	struct packet_tail *t;
	uint64_t keep, end;
};

static int tail_row(void *arg, int64_t id, const char *line, size_t len)
{
	struct tail_fill *fill = arg;
	struct packet_tail *t = fill->t;
	int rc = 0;

	if (t->bytes.len == 0 && t->off + len + 1 <= fill->keep) {
		t->off += len + 1; /* wholly before the read */
	} else {
		rc = buf_append(&t->bytes, line ? line : "", line ? len : 0);
		if (rc == 0)
			rc = buf_append(&t->bytes, "\n", 1);
		if (rc) {
			/* A row half taken: the next read starts over. */
			t->bytes.len = 0;
			t->off = 0;
			t->id = 0;
			return rc;
		}
	}
	t->id = id;
	return t->off + t->bytes.len >= fill->end;
}

/*
 * The bytes from the last read on and the id of the last row taken are
 * kept, so a read asks the store only for the rows after it, and only
 * until the read is covered: reading a file of n rows through costs O(n),
 * not a rendering of the whole file per read. A read before what is kept
 * starts over from the first row.
 */
ssize_t packet__tail_read(struct engine *e, enum kind kind, int64_t item_id, struct packet_tail *t,
			  char *buf, size_t size, uint64_t off)
{
	struct store *store = e->store;
	struct tail_fill fill = { t, off, off + size };
	size_t drop, n = 0;
	int rc = 0;

	if (off < t->off) {
		t->bytes.len = 0;
		t->off = 0;
		t->id = 0;
	}
	/* What lies before this read is not read again. */
	drop = off - t->off < t->bytes.len ? (size_t)(off - t->off) : t->bytes.len;
	if (drop) {
		memmove(t->bytes.data, t->bytes.data + drop, t->bytes.len - drop);
		t->bytes.len -= drop;
		t->off += drop;
	}
	if (t->off + t->bytes.len < fill.end) {
		if (kind == N_REGISTRY)
			rc = store_registry_raw_since(store, item_id, t->id, tail_row, &fill);
		else
			rc = store_events_since(store, kind == N_EVENTS_ALL ? 0 : item_id,
						t->id, tail_row, &fill);
	}
	if (rc >= 0 && off >= t->off && off - t->off < t->bytes.len) {
		n = t->bytes.len - (size_t)(off - t->off);
		if (n > size)
			n = size;
		memcpy(buf, t->bytes.data + (off - t->off), n);
	}
	return rc < 0 ? rc : (ssize_t)n;
}

