/*
 * store_run.c - runs with their logs, the registry and events in the store
 * (store.h).
 *
 * A log is a sequence of chunks keyed by (run, offset), appended as output
 * arrives; runs.log_size is the next offset. Registry rows are append-only,
 * enforced by triggers in the schema.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "store_int.h"

/* The string members of struct run and their columns in RUN_COLS. */
static const struct store_str_col run_strs[] = {
	{ offsetof(struct run, name), 4 },
	{ offsetof(struct run, command), 7 },
	{ offsetof(struct run, log_path), 8 },
	{ offsetof(struct run, note), 12 },
	{ offsetof(struct run, gpus), 14 },
	{ offsetof(struct run, job_output), 22 },
};
#define RUN_NSTRS (sizeof(run_strs) / sizeof(run_strs[0]))

void run_clear(struct run *r)
{
	store__str_cols_free(r, run_strs, RUN_NSTRS);
	memset(r, 0, sizeof(*r));
}

#define RUN_COLS                                                                              \
	"id, item_id, run_no, kind, name, iteration, status, command, log_path, pgid, exit_code, " \
	"signal, note, head, gpus, executor, started_at, finished_at, duration_s, log_size, "      \
	"log_sha256, job_id, job_output, job_offset"

static int run_row(sqlite3_stmt *st, struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->item_id = sqlite3_column_int64(st, 1);
	r->run_no = sqlite3_column_int(st, 2);
	store__col_copy(st, 3, r->kind, sizeof(r->kind));
	r->iteration = sqlite3_column_int(st, 5);
	r->pgid = sqlite3_column_int(st, 9);
	r->has_exit_code = sqlite3_column_type(st, 10) != SQLITE_NULL;
	r->exit_code = sqlite3_column_int(st, 10);
	r->signal = sqlite3_column_int(st, 11);
	store__col_copy(st, 13, r->head, sizeof(r->head));
	store__col_copy(st, 15, r->executor, sizeof(r->executor));
	store__col_copy(st, 16, r->started_at, sizeof(r->started_at));
	store__col_copy(st, 17, r->finished_at, sizeof(r->finished_at));
	r->duration_s = sqlite3_column_double(st, 18);
	r->log_size = sqlite3_column_int64(st, 19);
	store__col_copy(st, 20, r->log_sha256, sizeof(r->log_sha256));
	store__col_copy(st, 21, r->job_id, sizeof(r->job_id));
	r->job_offset = sqlite3_column_int64(st, 23);
	if (store__str_cols_read(st, r, run_strs, RUN_NSTRS)) {
		run_clear(r);
		return -ENOMEM;
	}
	/* A store of version 13 or later holds no other status (CHECK); an
	 * older one opened read-only might. */
	if (run_status_parse((const char *)sqlite3_column_text(st, 6), &r->status) != 0) {
		util_log(LOG_ERR, "store: run %lld has an unknown status '%s'", (long long)r->id,
			 sqlite3_column_text(st, 6) ? (const char *)sqlite3_column_text(st, 6) : "");
		run_clear(r);
		return -EIO;
	}
	return 0;
}

/* Writes the mutable fields of r (store_run_update) under the caller's
 * lock. 0 or a negative errno. */
static int run_write(struct store *s, const struct run *r)
{
	sqlite3_stmt *st;
	int rc;

	rc = store__prepare(s, &st, "UPDATE runs SET status = ?, pgid = ?, exit_code = ?, signal = ?, "
			    "note = ?, head = ?, gpus = ?, finished_at = NULLIF(?, ''), "
			    "duration_s = ?, log_sha256 = ?, command = ?, executor = ?, job_id = ?, "
			    "job_output = ?, job_offset = ? WHERE id = ?", "si-issssdsssssII",
			    run_status_name(r->status), r->pgid, r->signal, r->note ? r->note : "",
			    r->head, r->gpus ? r->gpus : "[]", r->finished_at, r->duration_s, r->log_sha256,
			    r->command ? r->command : "", r->executor[0] ? r->executor : "local",
			    r->job_id, r->job_output ? r->job_output : "", r->job_offset, r->id);
	/* exit_code: NULL ("-") until the run has one. */
	if (rc == 0 && r->has_exit_code)
		rc = store__err(s, sqlite3_bind_int(st, 3, r->exit_code));
	if (rc == 0)
		rc = store__step_done(s, st);
	store__done(st);
	return rc;
}

int store_run_update(struct store *s, const struct run *r)
{
	int rc;

	if ((unsigned)r->status >= RUN_NSTATUSES)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = run_write(s, r);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static int run_get_by(struct store *s, const char *sql, int64_t a, const char *b, struct run *out)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__first(s, &st, sql, b ? "Is" : "I", a, b);
	if (rc == 0)
		rc = run_row(st, out);
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_run_get(struct store *s, int64_t id, struct run *out)
{
	return run_get_by(s, "SELECT " RUN_COLS " FROM runs WHERE id = ?", id, NULL, out);
}

int store_run_by_log(struct store *s, int64_t item_id, const char *log_path, struct run *out)
{
	return run_get_by(s, "SELECT " RUN_COLS " FROM runs WHERE item_id = ? AND log_path = ?",
			  item_id, log_path, out);
}

static int run_row_cb(sqlite3_stmt *st, void *elem, void *ctx)
{
	(void)ctx;
	return run_row(st, elem);
}

int store_run_each(struct store *s, int64_t item_id, const char *kind, enum run_status status,
		   int (*cb)(void *arg, const struct run *r), void *arg)
{
	struct run *v = NULL;
	sqlite3_stmt *st;
	size_t n = 0, i;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__prepare(s, &st, "SELECT " RUN_COLS " FROM runs WHERE (?1 = 0 OR item_id = ?1) "
			    "AND (?2 IS NULL OR kind = ?2) AND (?3 IS NULL OR status = ?3) "
			    "ORDER BY item_id, run_no", "Iss", item_id, kind,
			    status == RUN_ANY ? NULL : run_status_name(status));
	if (rc == 0)
		rc = store__collect(s, st, sizeof(*v), run_row_cb, NULL, (void **)&v, &n);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		if (rc == 0 && cb(arg, &v[i]))
			rc = 1;
		run_clear(&v[i]);
	}
	free(v);
	return rc < 0 ? rc : 0;
}

/* Appends len bytes (not 0) to run_id's log under the caller's
 * transaction; job_offset >= 0 is written as the run's job_offset. */
static int log_insert(struct store *s, int64_t run_id, const void *data, size_t len,
		      int64_t job_offset)
{
	int rc = store__exec(s, "INSERT INTO log_chunks(run_id, off, data) "
			     "SELECT ?1, log_size, ?2 FROM runs WHERE id = ?1", "Ib", run_id, data,
			     len);

	if (rc == 0)
		rc = store__exec(s, "UPDATE runs SET log_size = log_size + ?1, job_offset = "
				 "CASE WHEN ?3 >= 0 THEN ?3 ELSE job_offset END WHERE id = ?2", "III",
				 (int64_t)len, run_id, job_offset);
	return rc;
}

/* Appends len bytes to run_id's log; job_offset >= 0 is written as the
 * run's job_offset in the same transaction. */
static int log_append(struct store *s, int64_t run_id, const void *data, size_t len,
		      int64_t job_offset)
{
	int rc;

	if (len == 0)
		return 0;
	rc = store__txn_lock(s);
	if (rc)
		return rc;
	rc = log_insert(s, run_id, data, len, job_offset);
	return store__txn_unlock(s, rc);
}

int store_log_append(struct store *s, int64_t run_id, const void *data, size_t len)
{
	return log_append(s, run_id, data, len, -1);
}

int store_log_append_job(struct store *s, int64_t run_id, const void *data, size_t len,
			 int64_t job_offset)
{
	return log_append(s, run_id, data, len, job_offset);
}

ssize_t store_log_read(struct store *s, int64_t run_id, uint64_t off, void *buf, size_t size)
{
	sqlite3_stmt *st;
	uint64_t end_off = off + size;
	ssize_t got = 0;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__prepare(s, &st, "SELECT off, data FROM log_chunks WHERE run_id = ?1 AND off >= "
			    "COALESCE((SELECT MAX(off) FROM log_chunks WHERE run_id = ?1 AND "
			    "off <= ?2), 0) AND off < ?3 ORDER BY off", "III", run_id, (int64_t)off,
			    (int64_t)end_off);
	while (rc == 0 && (rc = store__step(s, st)) > 0) {
		uint64_t coff, clen, from, to;
		const char *data;

		rc = 0;
		coff = (uint64_t)sqlite3_column_int64(st, 0);
		data = sqlite3_column_blob(st, 1);
		clen = (uint64_t)sqlite3_column_bytes(st, 1);
		from = off > coff ? off : coff;
		to = coff + clen < end_off ? coff + clen : end_off;
		if (from >= to)
			continue;
		/* Chunks are contiguous; stop at a hole rather than return garbage. */
		if (from != off + (uint64_t)got)
			break;
		memcpy((char *)buf + got, data + (from - coff), to - from);
		got += (ssize_t)(to - from);
	}
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc ? rc : got;
}

/* store_log_sha256 under the caller's lock. */
static int log_digest(struct store *s, int64_t run_id, char hex[65], int64_t *size)
{
	struct util_sha *sha = util_sha_new();
	sqlite3_stmt *st;
	int64_t total = 0;
	int rc;

	if (!sha)
		return -ENOMEM;
	rc = store__prepare(s, &st, "SELECT data FROM log_chunks WHERE run_id = ? ORDER BY off", "I",
			    run_id);
	while (rc == 0 && (rc = store__step(s, st)) > 0) {
		util_sha_update(sha, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
		total += sqlite3_column_bytes(st, 0);
		rc = 0;
	}
	store__done(st);
	util_sha_final(sha, hex);
	if (size)
		*size = total;
	return rc;
}

int store_log_sha256(struct store *s, int64_t run_id, char hex[65], int64_t *size)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = log_digest(s, run_id, hex, size);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* What a cached size is of: registry.jsonl of an item, or the events of
 * an item (0: every event, the root's events view). */
enum size_kind { SIZE_REGISTRY, SIZE_EVENTS };

/* A kept size (struct store's sizes). */
struct size_entry {
	struct lru_node node; /* key: size_key */
	uint64_t size;
};

static void free_size_entry(struct lru_node *node)
{
	free(node);
}

void store__sizes_init(struct store *s)
{
	lru_init(&s->sizes, SIZE_CACHE, SIZE_CACHE * sizeof(struct size_entry), free_size_entry);
}

/* The key of (kind, item_id) in the table of sizes. */
static int64_t size_key(enum size_kind kind, int64_t item_id)
{
	return (int64_t)((uint64_t)item_id << 1) | (int64_t)kind;
}

/* Adds len bytes to the cached size of (kind, item_id), if cached; under
 * the lock, after the row that added them was stored. */
static void size_add(struct store *s, enum size_kind kind, int64_t item_id, uint64_t len)
{
	struct size_entry *z = (struct size_entry *)lru_get(&s->sizes, size_key(kind, item_id));

	if (z)
		z->size += len;
}

/* ---- registry and events ---- */

int store_registry_append(struct store *s, int64_t item_id, const char *line, const char *source,
			  int64_t run_id)
{
	if (strcmp(source, "engine") != 0 && strcmp(source, "external") != 0)
		return -EEXIST;
	return store_carry_line(s, item_id, line, source, run_id, "");
}

int store_registry_append_event(struct store *s, int64_t item_id, const char *line,
				const char *event)
{
	int rc = store__txn_lock(s);

	if (rc)
		return rc;
	rc = store__exec(s, "INSERT INTO registry(item_id, line, source) VALUES (?, ?, 'external')",
			 "Is", item_id, line);
	if (rc == 0)
		rc = store__exec(s, "INSERT INTO events(item_id, line) VALUES (?, ?)", "Is", item_id,
				 event);
	if (rc == 0)
		rc = store__exec(s, "COMMIT", "");
	if (rc) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	} else {
		size_add(s, SIZE_REGISTRY, item_id, strlen(line) + 1);
		size_add(s, SIZE_EVENTS, 0, strlen(event) + 1);
		size_add(s, SIZE_EVENTS, item_id, strlen(event) + 1);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_carry_line(struct store *s, int64_t item_id, const char *line, const char *source,
		     int64_t run_id, const char *why)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__exec(s, "INSERT INTO registry(item_id, line, source, run_id, why) "
			 "VALUES (?, ?, ?, NULLIF(?, 0), ?)", "IssIs", item_id, line, source, run_id,
			 why ? why : "");
	if (rc == 0)
		size_add(s, SIZE_REGISTRY, item_id, strlen(line) + 1);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Calls cb(arg, id, text, len) for each row of sql (item_id bound to ?1,
 * after to ?2; columns id, text), under the lock; cb's non-zero return
 * stops the walk and is returned. */
static int rows_since(struct store *s, const char *sql, int64_t item_id, int64_t after,
		      int (*cb)(void *arg, int64_t id, const char *line, size_t len), void *arg)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__prepare(s, &st, sql, "II", item_id, after);
	while (rc == 0 && (rc = store__step(s, st)) > 0)
		rc = cb(arg, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
			(size_t)sqlite3_column_bytes(st, 1));
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* A strv grown by doubling (strv_push would count it at every push). */
struct line_list {
	char **v;
	size_t count, cap;
};

static int push_line(void *arg, int64_t id, const char *text, size_t len)
{
	struct line_list *l = arg;
	char *c;

	(void)id;
	if (l->count + 2 > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **nv = realloc(l->v, cap * sizeof(char *));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	c = malloc(len + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c, text, len);
	c[len] = '\0';
	l->v[l->count++] = c;
	l->v[l->count] = NULL;
	return 0;
}

/* Every line of the item above after into a new strv, by since (a
 * store_registry_since). */
static int registry_strv(struct store *s, int64_t item_id,
			 int (*since)(struct store *, int64_t, int64_t,
				      int (*)(void *, int64_t, const char *, size_t), void *),
			 char ***lines, size_t *n)
{
	struct line_list l = {NULL, 0, 0};
	char **v;
	size_t count;
	int rc;

	rc = since(s, item_id, 0, push_line, &l);
	v = l.v;
	count = l.count;
	if (rc == 0 && !v) {
		v = calloc(1, sizeof(char *));
		if (!v)
			rc = -ENOMEM;
	}
	if (rc) {
		strv_free(v);
		return rc;
	}
	*lines = v;
	if (n)
		*n = count;
	return 0;
}

int store_registry_lines(struct store *s, int64_t item_id, char ***lines, size_t *n)
{
	return registry_strv(s, item_id, store_registry_since, lines, n);
}

int store_registry_raw_lines(struct store *s, int64_t item_id, char ***lines, size_t *n)
{
	return registry_strv(s, item_id, store_registry_raw_since, lines, n);
}

/* A carried line that does not count (source 'imported', 0011_carry.sql)
 * as evidence reads it: "source" says "imported" and "note" the reason; a
 * line SQLite cannot parse reads as "" (no object: skipped). */
#define EVIDENCE_LINE                                                                      \
	"CASE WHEN source <> 'imported' THEN line WHEN json_valid(line) THEN "             \
	"json_set(line, '$.source', 'imported', '$.note', why) ELSE '' END"

int store_registry_since(struct store *s, int64_t item_id, int64_t after,
			 int (*cb)(void *arg, int64_t id, const char *line, size_t len), void *arg)
{
	return rows_since(s, "SELECT id, " EVIDENCE_LINE " FROM registry WHERE item_id = ?1 AND "
			  "id > ?2 ORDER BY id", item_id, after, cb, arg);
}

int store_registry_raw_since(struct store *s, int64_t item_id, int64_t after,
			     int (*cb)(void *arg, int64_t id, const char *line, size_t len),
			     void *arg)
{
	return rows_since(s, "SELECT id, line FROM registry WHERE item_id = ?1 AND id > ?2 ORDER BY id",
			  item_id, after, cb, arg);
}

int store_events_since(struct store *s, int64_t item_id, int64_t after,
		       int (*cb)(void *arg, int64_t id, const char *line, size_t len), void *arg)
{
	/* Two statements, so that each has its index (an OR would have none). */
	if (item_id == 0)
		return rows_since(s, "SELECT id, line FROM events WHERE id > ?2 ORDER BY id", 0, after,
				  cb, arg);
	return rows_since(s, "SELECT id, line FROM events WHERE item_id = ?1 AND id > ?2 ORDER BY id",
			  item_id, after, cb, arg);
}

int store_registry_each(struct store *s,
			int (*cb)(void *arg, int64_t item_id, const char *line, const char *source,
				  int64_t run_id),
			void *arg)
{
	sqlite3_stmt *st;
	int rc;

	/* Used by the offline check only: cb must not call the store. */
	pthread_mutex_lock(&s->lock);
	rc = store__prepare(s, &st, "SELECT item_id, line, source, COALESCE(run_id, 0) FROM registry "
			    "ORDER BY id", "");
	while (rc == 0 && (rc = store__step(s, st)) > 0)
		rc = cb(arg, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
			(const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 3)) ? 1 : 0;
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc < 0 ? rc : 0;
}

int store_event_add(struct store *s, int64_t item_id, const char *line)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__exec(s, "INSERT INTO events(item_id, line) VALUES (NULLIF(?, 0), ?)", "Is",
			 item_id, line);
	if (rc == 0) {
		size_add(s, SIZE_EVENTS, 0, strlen(line) + 1);
		if (item_id)
			size_add(s, SIZE_EVENTS, item_id, strlen(line) + 1);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static int append_line(void *arg, int64_t id, const char *text, size_t len)
{
	int rc = buf_append(arg, text, len);

	(void)id;
	return rc ? rc : buf_append(arg, "\n", 1);
}

int store_events_render(struct store *s, int64_t item_id, struct buf *out)
{
	return store_events_since(s, item_id, 0, append_line, out);
}

/* Runs the one-row, one-column size query sql with item_id bound. */
static int size_query(struct store *s, const char *sql, enum size_kind kind, int64_t item_id,
		      uint64_t *size)
{
	sqlite3_stmt *st;
	struct size_entry *z;
	int64_t key = size_key(kind, item_id);
	int rc;

	pthread_mutex_lock(&s->lock);
	z = s->writable ? (struct size_entry *)lru_get(&s->sizes, key) : NULL;
	if (z) {
		*size = z->size;
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	rc = store__first(s, &st, sql, "I", item_id);
	if (rc == 0) {
		*size = (uint64_t)sqlite3_column_int64(st, 0);
		if (s->writable && (z = calloc(1, sizeof(*z)))) {
			z->node.key = key;
			z->node.bytes = sizeof(*z);
			z->size = *size;
			lru_put(&s->sizes, &z->node);
		}
	}
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_registry_size(struct store *s, int64_t item_id, uint64_t *size)
{
	/* LENGTH of a BLOB counts bytes (of TEXT, characters). */
	return size_query(s, "SELECT COALESCE(SUM(LENGTH(CAST(line AS BLOB)) + 1), 0) "
			  "FROM registry WHERE item_id = ?1", SIZE_REGISTRY, item_id, size);
}

int store_events_size(struct store *s, int64_t item_id, uint64_t *size)
{
	return size_query(s, "SELECT COALESCE(SUM(LENGTH(CAST(line AS BLOB)) + 1), 0) "
			  "FROM events WHERE ?1 = 0 OR item_id = ?1", SIZE_EVENTS, item_id, size);
}

int store_run_begin(struct store *s, struct run *r, struct item *it,
		    int (*name)(void *arg, struct run *r, struct buf *event), void *arg)
{
	sqlite3_stmt *st;
	struct buf event;
	char now[32], *line, *end;
	int rc;

	if ((unsigned)r->status >= RUN_NSTATUSES)
		return -EINVAL;
	buf_init(&event);
	store__now(now);
	rc = store__txn_lock(s);
	if (rc)
		return rc;
	rc = store__first(s, &st, "UPDATE items SET run_seq = run_seq + 1 WHERE id = ? "
			  "RETURNING run_seq", "I", r->item_id);
	if (rc == 0)
		r->run_no = sqlite3_column_int(st, 0);
	store__done(st);
	/* The largest number in the item's log names of this kind: the digits
	 * after "stages/" of a stage's, those before ".log" of a recipe's. A
	 * store whose logs were named by run number goes on after them. */
	if (rc == 0)
		rc = store__first(s, &st, "SELECT COALESCE(MAX(CASE WHEN kind = 'stage' THEN "
				  "CAST(substr(log_path, 8) AS INTEGER) ELSE CAST(substr(stem, "
				  "length(rtrim(stem, '0123456789')) + 1) AS INTEGER) END), 0) "
				  "FROM (SELECT kind, log_path, substr(log_path, 1, length(log_path) - 4) "
				  "AS stem FROM runs WHERE item_id = ? AND kind = ?)",
				  "Is", r->item_id, r->kind);
	if (rc == 0)
		r->log_no = sqlite3_column_int(st, 0) + 1;
	store__done(st);
	if (rc == 0)
		rc = name(arg, r, &event);
	if (rc == 0)
		rc = store__exec(s, "INSERT INTO runs(item_id, run_no, kind, name, iteration, status, "
				 "command, log_path, pgid, note, head, gpus, executor, started_at) "
				 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "Iississsisssss",
				 r->item_id, r->run_no, r->kind, r->name, r->iteration,
				 run_status_name(r->status), r->command ? r->command : "", r->log_path, r->pgid,
				 r->note ? r->note : "", r->head, r->gpus ? r->gpus : "[]",
				 r->executor[0] ? r->executor : "local", r->started_at);
	if (rc == 0)
		r->id = sqlite3_last_insert_rowid(s->db);
	if (rc == 0 && it)
		rc = store__item_write(s, it, now);
	for (line = event.data; rc == 0 && line && (end = strchr(line, '\n')); line = end + 1) {
		*end = '\0';
		rc = store__exec(s, "INSERT INTO events(item_id, line) VALUES (?, ?)", "Is",
				 r->item_id, line);
		*end = '\n';
	}
	if (rc == 0)
		rc = store__exec(s, "COMMIT", "");
	if (rc)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	else if (event.data && event.len) {
		/* Each line stored counts its newline: event.len is their sum. */
		size_add(s, SIZE_EVENTS, 0, event.len);
		size_add(s, SIZE_EVENTS, r->item_id, event.len);
	}
	pthread_mutex_unlock(&s->lock);
	if (rc == 0 && it) {
		char *u = strdup(now);

		if (u) {
			free(it->updated_at);
			it->updated_at = u;
		}
	}
	buf_free(&event);
	return rc;
}

/* Adds event (one line; NULL: none) for item_id under the caller's
 * transaction. 0 or a negative errno. */
static int event_insert(struct store *s, int64_t item_id, const char *event)
{
	if (!event)
		return 0;
	return store__exec(s, "INSERT INTO events(item_id, line) VALUES (NULLIF(?, 0), ?)", "Is",
			   item_id, event);
}

/* Counts event, stored for item_id, in the kept sizes of the events views. */
static void event_sized(struct store *s, int64_t item_id, const char *event)
{
	if (!event)
		return;
	size_add(s, SIZE_EVENTS, 0, strlen(event) + 1);
	if (item_id)
		size_add(s, SIZE_EVENTS, item_id, strlen(event) + 1);
}

int store_run_start(struct store *s, const struct run *r, const void *log, size_t len,
		    const char *event)
{
	int rc;

	if ((unsigned)r->status >= RUN_NSTATUSES)
		return -EINVAL;
	rc = store__txn_lock(s);
	if (rc)
		return rc;
	rc = run_write(s, r);
	if (rc == 0 && len)
		rc = log_insert(s, r->id, log, len, -1);
	if (rc == 0)
		rc = event_insert(s, r->item_id, event);
	if (rc == 0)
		rc = store__exec(s, "COMMIT", "");
	if (rc)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	else
		event_sized(s, r->item_id, event);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_run_end(struct store *s, struct run *r, const struct store_log_piece *pieces, size_t n,
		  char *(*line)(void *arg, const struct run *r), void *arg, struct item *it,
		  const char *event)
{
	char now[32], *text = NULL;
	size_t i;
	int rc;

	if ((unsigned)r->status >= RUN_NSTATUSES)
		return -EINVAL;
	store__now(now);
	rc = store__txn_lock(s);
	if (rc)
		return rc;
	for (i = 0; rc == 0 && i < n; i++)
		if (pieces[i].len)
			rc = log_insert(s, pieces[i].run_id, pieces[i].data, pieces[i].len, -1);
	if (rc == 0)
		rc = log_digest(s, r->id, r->log_sha256, &r->log_size);
	if (rc == 0)
		rc = run_write(s, r);
	if (rc == 0 && line && !(text = line(arg, r)))
		rc = -ENOMEM;
	if (rc == 0 && text)
		rc = store__exec(s, "INSERT INTO registry(item_id, line, source, run_id, why) "
				 "VALUES (?, ?, 'engine', ?, '')", "IsI", r->item_id, text, r->id);
	if (rc == 0 && it)
		rc = store__item_write(s, it, now);
	if (rc == 0)
		rc = event_insert(s, r->item_id, event);
	if (rc == 0)
		rc = store__exec(s, "COMMIT", "");
	if (rc) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	} else {
		if (text)
			size_add(s, SIZE_REGISTRY, r->item_id, strlen(text) + 1);
		event_sized(s, r->item_id, event);
	}
	pthread_mutex_unlock(&s->lock);
	free(text);
	if (rc == 0 && it) {
		char *u = strdup(now);

		if (u) {
			free(it->updated_at);
			it->updated_at = u;
		}
	}
	return rc;
}
