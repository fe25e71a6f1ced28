/*
 * store_carry.c - runs carried in from another store by `packetfs import`
 * (store.h, store_carry_run): a finished run restored as it was, with its
 * whole log. The registry lines that come with them are appended by
 * store_carry_line (store_run.c, beside the registry's other writers).
 *
 * A restored run is finished: it is never "running" (crash recovery would
 * kill its process group, which lives, if at all, on another machine); the
 * caller maps what was still running when exported to another status.
 * Its log is one chunk at offset 0, as the reader (store_log_read) takes
 * any chunking.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

int store_carry_run(struct store *s, struct run *r, const void *log, size_t len)
{
	char hex[65];
	sqlite3_stmt *st;
	int rc;

	if ((unsigned)r->status >= RUN_NSTATUSES)
		return -EINVAL;
	util_sha256_hex(log ? log : "", len, hex);
	rc = store__txn_lock(s);
	if (rc)
		return rc;
	rc = store__prepare(s, &st, "INSERT INTO runs(item_id, run_no, kind, name, iteration, "
			    "status, command, log_path, note, head, gpus, executor, started_at, "
			    "finished_at, duration_s, log_size, log_sha256, exit_code, signal) "
			    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''), ?, ?, ?, "
			    "?, NULLIF(?, 0))", "Iississsssssss" "dIs-i", r->item_id, r->run_no,
			    r->kind, r->name, r->iteration, run_status_name(r->status),
			    r->command ? r->command : "", r->log_path, r->note ? r->note : "",
			    r->head, r->gpus ? r->gpus : "[]", r->executor[0] ? r->executor : "local",
			    r->started_at, r->finished_at, r->duration_s, (int64_t)len, hex,
			    r->signal);
	if (rc == 0 && r->has_exit_code)
		rc = store__err(s, sqlite3_bind_int(st, 18, r->exit_code));
	if (rc == 0)
		rc = store__step_done(s, st);
	store__done(st);
	if (rc == 0) {
		r->id = sqlite3_last_insert_rowid(s->db);
		r->log_size = (int64_t)len;
		memcpy(r->log_sha256, hex, sizeof(hex));
	}
	if (rc == 0 && len)
		rc = store__exec(s, "INSERT INTO log_chunks(run_id, off, data) VALUES (?, 0, ?)",
				 "Ib", r->id, log, len);
	if (rc == 0)
		rc = store__exec(s, "UPDATE items SET run_seq = MAX(run_seq, ?) WHERE id = ?", "iI",
				 r->run_no, r->item_id);
	return store__txn_unlock(s, rc);
}
