/*
 * store_whole.c - the rows that hold current revisions whole (store_int.h:
 * store__whole_put, store__whole_append, store__whole_read,
 * store__whole_finish; schema/0015_whole_slots.sql, 0019_whole_pieces.sql).
 *
 * A current revision's content is in the row of whole its revisions row
 * names (slot), padded with zeros to the row's room, and, once appends
 * made it long, continued in pieces: rows of whole_pieces (slot, start,
 * content), each holding the bytes from its start up to the next piece's
 * start (the last: up to the revision's size), padded too. Reads join the
 * row and its pieces in order of start (store__whole_finish); the bytes
 * past each piece's span are padding and never read.
 *
 * Why pieces: SQLite reaches a byte of a row larger than a page by walking
 * the row's chain of overflow pages from its start, a page (1 KiB) at a
 * time, and an append reads the end of the row (the retire of the revision
 * before it) and writes after it. In one row, every append walked the whole
 * document: a `>>` of a line onto an 8 MiB document cost 3.2 ms of the
 * daemon's CPU, most of it preads of the pages the walk passed
 * (tests/bench/big-docs.sh). An append now writes into the last piece while
 * it has room; a last piece without room that holds less than WHOLE_PIECE
 * bytes is rewritten with room to grow (whole_room), one that holds more is
 * closed and a piece of WHOLE_PIECE bytes of room (or the append's size)
 * follows it. The walk is the last piece's, whatever the document's size;
 * a document that outgrew its room is no longer copied into a new row; and
 * closed pieces are padded no more than whole_room pads. A document
 * smaller than WHOLE_PIECE grows in its one row as before (a new row with
 * room to grow once it outgrew its room: whole_room); a larger row is never
 * appended into, even where it has room (a row rewritten shorter in place
 * keeps it), since that would walk it. A write of the whole
 * content (store__whole_put) makes one row again, dropping the pieces; a
 * row deleted takes its pieces with it (the trigger whole_pieces_gone).
 * Lock held, inside a transaction, for every function here.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* The room of a piece an append adds, in bytes: its walk is at most that
 * many pages' worth (16 at 1 KiB), and its padding, written once, is a
 * tenth of a KB of WAL an 86-byte line. Also the size below which a
 * document grows in its one row. */
#define WHOLE_PIECE 16384
_Static_assert(WHOLE_PIECE > REV_APPEND_TAIL, "a first piece starts inside its row's content");

/* The room of a row of whole for len bytes of content: room to grow, so
 * that a few appends later the row still holds the content in place. */
static size_t whole_room(size_t len)
{
	return len ? len + len / 8 + 512 : 0;
}

/* Stores len bytes of data, padded with zeros to room >= len, as a new row
 * of whole (slot 0: *out is its slot) or of whole_pieces (slot, at start),
 * or over the content of a row (rewrite 1): the row of whole slot (start
 * 0) or the row slot of whole_pieces (start > 0; SQLite rewrites a row of
 * the same key and size in place, page by page). */
static int row_put(struct store *s, int64_t slot, size_t start, int rewrite, const void *data,
		   size_t len, size_t room, int64_t *out)
{
	char *buf = NULL;
	int rc;

	/* The bytes as they are when there is no padding to add. */
	if (room != len) {
		buf = malloc(room);
		if (!buf)
			return -ENOMEM;
		memcpy(buf, data, len);
		memset(buf + len, 0, room - len);
	}
	if (rewrite)
		rc = store__exec(s, start ? "UPDATE whole_pieces SET content = ? WHERE id = ?"
				       : "UPDATE whole SET content = ? WHERE slot = ?",
				 "bI", buf ? buf : data, room, slot);
	else if (slot)
		rc = store__exec(s, "INSERT INTO whole_pieces(slot, start, content) VALUES (?, ?, ?)",
				 "IIb", slot, (int64_t)start, buf ? buf : data, room);
	else
		rc = store__exec(s, "INSERT INTO whole(content) VALUES (?)", "b", buf ? buf : data,
				 room);
	if (rc == 0 && !rewrite && !slot)
		*out = sqlite3_last_insert_rowid(s->db);
	free(buf);
	return rc;
}

int store__whole_put(struct store *s, const void *data, size_t len, int64_t slot, int64_t *out)
{
	sqlite3_stmt *st;
	size_t room = 0;
	int rc = 0, grew = 0;

	assert(util_mutex_held(&s->lock));
	*out = 0;
	if (slot) {
		rc = store__first(s, &st, "SELECT length(content) FROM whole WHERE slot = ?", "I",
				  slot);
		if (rc == 0)
			room = (size_t)sqlite3_column_int64(st, 0);
		store__done(st);
		if (rc == -ENOENT)
			slot = 0, rc = 0;
		/* The whole content is written: the pieces that continued the
		 * row go. */
		if (rc == 0 && slot)
			rc = store__exec(s, "DELETE FROM whole_pieces WHERE slot = ?", "I", slot);
		if (rc)
			return rc;
	}
	if (slot && (len > room || room > 2 * whole_room(len) || !room)) {
		rc = store__exec(s, "DELETE FROM whole WHERE slot = ?", "I", slot);
		grew = len > room;
		slot = 0;
	}
	/* Room to grow once the content did: most documents are written
	 * once, and padding theirs would only fill pages. */
	if (!slot)
		room = grew ? whole_room(len) : len;
	if (rc == 0 && room) {
		rc = row_put(s, slot, 0, slot != 0, data, len, room, &slot);
		if (rc == 0)
			*out = slot;
	}
	return rc;
}

/* One row holding part of a slot's content: the row of whole (piece 0) or
 * a row of whole_pieces, its span [start, end) of the content and its
 * length (room). */
struct piece {
	int64_t rowid;
	int more; /* a row of whole_pieces */
	size_t start, room;
};

/* Reads (write 0) or writes n bytes at buf at offset off of piece p
 * through SQLite's incremental blob I/O, which touches only the pages
 * holding those bytes (and walks the row's chain up to them). */
static int piece_io(struct store *s, const struct piece *p, void *buf, size_t n, size_t off,
		    int write)
{
	sqlite3_blob *b = NULL;
	int rc;

	if (n > INT_MAX || off > INT_MAX - n || off + n > p->room)
		return -EIO;
	rc = sqlite3_blob_open(s->db, "main", p->more ? "whole_pieces" : "whole", "content",
			       p->rowid, write, &b);
	if (rc == SQLITE_OK)
		rc = write ? sqlite3_blob_write(b, buf, (int)n, (int)off)
			   : sqlite3_blob_read(b, buf, (int)n, (int)off);
	if (sqlite3_blob_close(b) != SQLITE_OK && rc == SQLITE_OK)
		rc = sqlite3_errcode(s->db);
	return store__err(s, rc);
}

/* The piece of slot that holds offset off of its content (the last one
 * for an offset at or past the content's end), in *p, in one statement
 * (length() of a column reads no overflow page); when next is not NULL,
 * *next is the start of the piece after it (SIZE_MAX: none). 0, or -EIO
 * when the slot has no row of whole. */
static int piece_at(struct store *s, int64_t slot, size_t off, struct piece *p, size_t *next)
{
	sqlite3_stmt *st;
	int rc;

	rc = store__first(s, &st, "SELECT p.id, COALESCE(p.start, 0), CASE WHEN p.id IS NULL THEN "
			  "length(w.content) ELSE length(p.content) END FROM whole w LEFT JOIN "
			  "whole_pieces p ON p.id = (SELECT id FROM whole_pieces WHERE slot = ?1 AND "
			  "start <= ?2 ORDER BY start DESC LIMIT 1) WHERE w.slot = ?1", "II", slot,
			  (int64_t)off);
	if (rc == 0) {
		p->more = sqlite3_column_type(st, 0) != SQLITE_NULL;
		p->rowid = p->more ? sqlite3_column_int64(st, 0) : slot;
		p->start = (size_t)sqlite3_column_int64(st, 1);
		p->room = (size_t)sqlite3_column_int64(st, 2);
	}
	store__done(st);
	if (rc || !next)
		return rc == -ENOENT ? -EIO : rc;
	*next = SIZE_MAX;
	rc = store__first(s, &st, "SELECT start FROM whole_pieces WHERE slot = ? AND start > ? "
			  "ORDER BY start LIMIT 1", "II", slot, (int64_t)p->start);
	if (rc == 0)
		*next = (size_t)sqlite3_column_int64(st, 0);
	store__done(st);
	return rc == -ENOENT ? 0 : rc;
}

int store__whole_read(struct store *s, int64_t slot, size_t off, size_t n, void *buf)
{
	struct piece p;
	size_t next, take;
	int rc = 0;

	assert(util_mutex_held(&s->lock));
	while (rc == 0 && n) {
		rc = piece_at(s, slot, off, &p, &next);
		if (rc)
			break;
		take = next == SIZE_MAX || next - off > n ? n : next - off;
		rc = piece_io(s, &p, buf, take, off - p.start, 0);
		buf = (char *)buf + take;
		off += take;
		n -= take;
	}
	return rc;
}

int store__whole_finish(struct store *s, int64_t slot, int pieces, char **data, size_t *len,
			size_t size)
{
	sqlite3_stmt *st;
	char *out = NULL;
	size_t start, plen, covered = 0, last = 0;
	int rc;

	assert(util_mutex_held(&s->lock));
	/* One row, padded to its room. */
	if (!pieces) {
		if (*len < size)
			return -EIO;
		*len = size;
		(*data)[size] = '\0';
		return 0;
	}
	rc = store__prepare(s, &st, "SELECT start, content FROM whole_pieces WHERE slot = ? "
			    "ORDER BY start", "I", slot);
	while (rc == 0 && (rc = store__step(s, st)) > 0) {
		rc = 0;
		start = (size_t)sqlite3_column_int64(st, 0);
		plen = (size_t)sqlite3_column_bytes(st, 1);
		/* The row of whole first, up to the first piece's start. */
		if (!out) {
			covered = *len;
			out = malloc(size + 1);
			if (!out) {
				rc = -ENOMEM;
				break;
			}
			memcpy(out, *data, *len < size ? *len : size);
		}
		/* Each piece starts inside what the one before it holds, after
		 * that one's start, within the content; its bytes past the next
		 * one's start are padding, overwritten by the next. */
		if (start <= last || start > covered || start >= size) {
			rc = -EIO;
			break;
		}
		if (plen)
			memcpy(out + start, sqlite3_column_blob(st, 1),
			       plen < size - start ? plen : size - start);
		last = start;
		covered = start + plen;
	}
	if (rc == 0 && out && covered < size)
		rc = -EIO; /* the last piece ends before the content does */
	if (rc == 0 && !out)
		rc = -EIO; /* a row shorter than the content, and no piece */
	if (rc == 0) {
		out[size] = '\0';
		free(*data);
		*data = out;
		*len = size;
		out = NULL;
	}
	store__done(st);
	free(out);
	return rc;
}

/* Adds a piece to slot, whose content has size bytes, at start <= size:
 * the content's bytes from start on (read from the rows that hold them),
 * then len bytes of data, with room to grow. The first piece after a long
 * row of whole starts REV_APPEND_TAIL bytes before its end: the retire of
 * an append reads that much of its base before the bytes the run added
 * (store_retire.c), and would otherwise walk the row to reach them. */
static int piece_add(struct store *s, int64_t slot, size_t start, size_t size, const void *data,
		     size_t len, int64_t *out)
{
	size_t have = size - start, room = have + len > WHOLE_PIECE ? have + len : WHOLE_PIECE;
	char *buf = malloc(have + len);
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = have ? store__whole_read(s, slot, start, have, buf) : 0;
	if (rc == 0) {
		memcpy(buf + have, data, len);
		rc = row_put(s, slot, start, 0, buf, have + len, room, NULL);
	}
	free(buf);
	if (rc == 0)
		*out = slot;
	return rc;
}

/* Makes the last piece p of slot, which holds the content's bytes from its
 * start up to size, and is shorter than WHOLE_PIECE, hold len more bytes of
 * data after them, rewritten with room to grow: a piece is closed (a new
 * one follows it) only once it holds WHOLE_PIECE bytes, so that the
 * padding of closed pieces is at most what whole_room adds. */
static int piece_grow(struct store *s, int64_t slot, const struct piece *p, size_t size,
		      const void *data, size_t len, int64_t *out)
{
	size_t have = size - p->start;
	char *buf = malloc(have + len);
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = piece_io(s, p, buf, have, 0, 0);
	if (rc == 0) {
		memcpy(buf + have, data, len);
		rc = row_put(s, p->rowid, p->start, 1, buf, have + len, whole_room(have + len),
			     NULL);
	}
	free(buf);
	if (rc == 0)
		*out = slot;
	return rc;
}

int store__whole_append(struct store *s, int64_t slot, size_t size, const void *data, size_t len,
			int64_t *out)
{
	struct piece p;
	char *buf;
	int rc;

	assert(util_mutex_held(&s->lock));
	*out = 0;
	if (!slot)
		return size ? -EIO : store__whole_put(s, data, len, 0, out);
	/* The piece holding the content's end: the last one (a later one,
	 * starting past the end, would be a row's corruption that
	 * store__whole_finish reports when the content is read). */
	rc = piece_at(s, slot, size, &p, NULL);
	if (rc)
		return rc;
	/* In place when the last piece has room: the bytes after its content
	 * are its padding. Not in a row of whole of WHOLE_PIECE bytes or more
	 * (one rewritten shorter in place keeps its room): an append would
	 * walk it. */
	if ((p.more || size < WHOLE_PIECE) && size + len - p.start <= p.room) {
		rc = piece_io(s, &p, (void *)data, len, size - p.start, 1);
		if (rc == 0)
			*out = slot;
		return rc;
	}
	/* A long document gets a new piece once its last one is full; a
	 * short one a larger row. */
	if (p.more && size - p.start < WHOLE_PIECE)
		return piece_grow(s, slot, &p, size, data, len, out);
	if (p.more)
		return piece_add(s, slot, size, size, data, len, out);
	if (size >= WHOLE_PIECE)
		return piece_add(s, slot, size - REV_APPEND_TAIL, size, data, len, out);
	buf = malloc(size + len + 1);
	if (!buf)
		return -ENOMEM;
	rc = size ? piece_io(s, &p, buf, size, 0, 0) : 0;
	if (rc == 0) {
		memcpy(buf + size, data, len);
		rc = store__whole_put(s, buf, size + len, slot, out);
	}
	free(buf);
	return rc;
}
