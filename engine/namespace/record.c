/*
 * record.c - the recorder's transaction file ITEM/validation/record (SPEC
 * §6 "The recorder"): its lines (record.h), applying them through
 * pipeline_record and pipeline_record_cancel, and the answer a handle reads.
 * packet_file.c owns the open files and calls in here; packet_int.h
 * documents the packet__record_* functions.
 *
 * Design. The file is a transaction: a handle writes one request line and
 * reads back its answer. A write appends to the handle's pending bytes and
 * applies each complete line in order, as ctl does (ctl.c): a request goes
 * to the loop thread through pipeline_record with the writer's uid and pid,
 * and the write returns once the run is queued (its row and log exist), or
 * fails with the refusal's errno. A fragment without newline waits: a
 * flush applies it when it is a whole line and keeps it while it can still
 * become one (record_line_open); the last close applies it whatever it is.
 * One run per handle at a time: a request while the handle's run is
 * queued or running is refused with EBUSY.
 *
 * The answer is rendered from the store at each read at offset 0: the
 * handle's run (run, recipe, log, status, exit_code or signal once it
 * ended, note) and the refusal of the handle's last refused line
 * ("error: ENAME: why"). A handle that applied no line reads the answer of
 * the item's latest request, kept in e->records (a table in memory, the
 * least recently stored slot reused; lost when the daemon stops), so that
 * `cat` tells a shell user what became of the request a redirection made.
 * A new answer, and every start and end of a run (pipeline_event), is
 * reported as a change of the file: watchers see it, and poll(2) on a
 * handle wakes (its readiness is packet_file.c's: the answer now differs
 * from the one last read).
 *
 * Invariants. A handle's answer changes only through its own lines; the
 * item's kept answer is a copy of the answer of the handle whose request
 * came last. Between calls the pending bytes hold no newline and at most
 * RECORD_LINE_MAX bytes.
 *
 * Threads: FUSE threads, never the loop thread (pipeline_record waits for
 * it). A handle's lock is held while its lines are applied, so the lines
 * of one handle never overlap; the loop thread takes no handle lock, so no
 * cycle can form. record_lock guards the table only and calls nothing.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <cjson/cJSON.h>

#include "packet_int.h"
#include "record.h"

struct record_handle {
	int64_t item_id;               /* constant */
	char item[ITEM_NAME_MAX + 1];  /* constant */
	pthread_mutex_t lock;
	struct buf pending;            /* protected by lock: what follows the last newline */
	struct record_answer a;        /* protected by lock */
	int asked;                     /* protected by lock: a line was applied through it */
};

/* What a file that never took a request reads. */
static const char usage_line[] =
	"usage: write one line, {\"recipe\": NAME, \"argv\": [COMMAND, ARG...], \"gpus\": N, "
	"\"timeout_s\": S, \"credential\": C} (gpus, timeout_s and credential optional) or cancel; "
	"then read the answer here\n";

static void say(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

/* ---- lines ---- */

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* s[*len] without the spaces around it: the new start, *len shortened. */
static const char *trim(const char *s, size_t *len)
{
	while (*len && is_space(*s))
		s++, (*len)--;
	while (*len && is_space(s[*len - 1]))
		(*len)--;
	return s;
}

enum record_line_kind record_line_kind(const char *s, size_t len)
{
	s = trim(s, &len);
	if (len == 0)
		return RECORD_BLANK;
	if (len == 6 && memcmp(s, "cancel", 6) == 0)
		return RECORD_CANCEL;
	return RECORD_REQUEST;
}

int record_line_open(const char *s, size_t len)
{
	int depth = 0, in_str = 0, esc = 0;
	size_t i;

	while (len && is_space(*s))
		s++, len--;
	if (len == 0)
		return 1;
	if (len < 6 && memcmp(s, "cancel", len) == 0)
		return 1;
	if (s[0] != '{')
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if ((c == '}' || c == ']') && --depth <= 0) {
			return 0; /* closed: whatever follows makes it no better */
		}
	}
	return 1;
}

/* Whether the JSON text s[len] holds the escape \u0000: cJSON would end
 * the string there, silently. */
static int has_nul_escape(const char *s, size_t len)
{
	size_t i, slashes = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '\\') {
			slashes++;
			continue;
		}
		if (s[i] == 'u' && slashes % 2 == 1 && len - i > 4 && memcmp(s + i + 1, "0000", 4) == 0)
			return 1;
		slashes = 0;
	}
	return 0;
}

/* Member v (named name) as a whole number in [0, max] into *out; null
 * means the recipe's own (-1). 0 or -EINVAL with why. */
static int whole(const cJSON *v, const char *name, int max, int *out, char *why, size_t size)
{
	if (cJSON_IsNull(v)) {
		*out = -1;
		return 0;
	}
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= max) ||
	    (double)(int)v->valuedouble != v->valuedouble) {
		say(why, size, "%s must be a whole number from 0 to %d", name, max);
		return -EINVAL;
	}
	*out = (int)v->valuedouble;
	return 0;
}

void record_request_clear(struct record_request *r)
{
	free(r->recipe);
	strv_free(r->argv);
	free(r->credential);
	r->recipe = NULL;
	r->argv = NULL;
	r->credential = NULL;
}

/* Checks the members of the request object root into out. 0 or -EINVAL
 * (why), -ENOMEM. */
static int take_members(const cJSON *root, struct record_request *out, char *why, size_t size)
{
	const cJSON *m, *recipe = NULL, *argv = NULL, *gpus = NULL, *timeout = NULL, *cred = NULL;
	int i, n, rc;

	cJSON_ArrayForEach(m, root) {
		const cJSON **slot = NULL;

		if (strcmp(m->string, "recipe") == 0)
			slot = &recipe;
		else if (strcmp(m->string, "argv") == 0)
			slot = &argv;
		else if (strcmp(m->string, "gpus") == 0)
			slot = &gpus;
		else if (strcmp(m->string, "timeout_s") == 0)
			slot = &timeout;
		else if (strcmp(m->string, "credential") == 0)
			slot = &cred;
		if (!slot) {
			say(why, size, "unknown member '%.64s' (a request has recipe, argv, gpus, "
				       "timeout_s, credential)", m->string);
			return -EINVAL;
		}
		if (*slot) {
			say(why, size, "member '%s' given twice", m->string);
			return -EINVAL;
		}
		*slot = m;
	}
	if (!recipe) {
		say(why, size, "recipe missing: name the catalog recipe this is a run of");
		return -EINVAL;
	}
	if (!cJSON_IsString(recipe) || !recipe->valuestring[0]) {
		say(why, size, "recipe must be a non-empty string");
		return -EINVAL;
	}
	if (!argv) {
		say(why, size, "argv missing: the command and its arguments, as an array of strings");
		return -EINVAL;
	}
	if (!cJSON_IsArray(argv)) {
		say(why, size, "argv must be an array of strings");
		return -EINVAL;
	}
	n = cJSON_GetArraySize(argv);
	if (n == 0) {
		say(why, size, "argv is empty: give the command to run");
		return -EINVAL;
	}
	for (i = 0, m = argv->child; m; m = m->next, i++) {
		if (!cJSON_IsString(m)) {
			say(why, size, "argv[%d] is not a string", i);
			return -EINVAL;
		}
	}
	if (!argv->child->valuestring[0]) {
		say(why, size, "argv[0] is empty: give the command to run");
		return -EINVAL;
	}
	if (gpus && (rc = whole(gpus, "gpus", RECORD_GPUS_MAX, &out->gpus, why, size)))
		return rc;
	if (timeout && (rc = whole(timeout, "timeout_s", RECORD_TIMEOUT_MAX, &out->timeout_s, why, size)))
		return rc;
	if (cred && (!cJSON_IsString(cred) || !cred->valuestring[0] ||
		     strlen(cred->valuestring) > RECORD_CREDENTIAL_MAX)) {
		say(why, size, "credential must be a non-empty string of at most %d characters "
			       "($PACKET_RUN_CREDENTIAL of the stage run)", RECORD_CREDENTIAL_MAX);
		return -EINVAL;
	}
	if (cred && !(out->credential = strdup(cred->valuestring)))
		return -ENOMEM;
	out->recipe = strdup(recipe->valuestring);
	if (!out->recipe)
		return -ENOMEM;
	for (m = argv->child; m; m = m->next)
		if (strv_push(&out->argv, m->valuestring))
			return -ENOMEM;
	return 0;
}

int record_parse(const char *s, size_t len, struct record_request *out, char *why, size_t whysize)
{
	const char *end = NULL;
	cJSON *root = NULL;
	char *text;
	int rc;

	memset(out, 0, sizeof(*out));
	out->gpus = out->timeout_s = -1;
	if (len > RECORD_LINE_MAX) {
		say(why, whysize, "request too long (%zu bytes, at most %d)", len, RECORD_LINE_MAX);
		return -EFBIG;
	}
	if (memchr(s, '\0', len)) {
		say(why, whysize, "NUL byte in the request");
		return -EINVAL;
	}
	if (has_nul_escape(s, len)) {
		say(why, whysize, "\\u0000 (a NUL character) in the request");
		return -EINVAL;
	}
	text = strndup(s, len);
	if (!text)
		return -ENOMEM;
	root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
	if (!root) {
		say(why, whysize, "not JSON (at byte %zu): write one JSON object such as "
				  "{\"recipe\": \"01-build\", \"argv\": [\"make\"]}, or cancel",
		    (size_t)(end && end >= text && end <= text + len ? end - text : 0) + 1);
		rc = -EINVAL;
	} else if (!cJSON_IsObject(root)) {
		say(why, whysize, "the request must be a JSON object such as "
				  "{\"recipe\": \"01-build\", \"argv\": [\"make\"]}");
		rc = -EINVAL;
	} else {
		rc = take_members(root, out, why, whysize);
	}
	cJSON_Delete(root);
	free(text);
	if (rc)
		record_request_clear(out);
	return rc;
}

/* ---- the item's latest answer ---- */

/* The kept answer of item into *a. 0, or -ENOENT when none is kept. */
static int kept_get(struct engine *e, int64_t item_id, struct record_answer *a)
{
	int i, rc = -ENOENT;

	pthread_mutex_lock(&e->record_lock);
	for (i = 0; i < RECORD_SLOTS && rc; i++) {
		if (e->records[i].item_id == item_id) {
			*a = e->records[i].a;
			rc = 0;
		}
	}
	pthread_mutex_unlock(&e->record_lock);
	return rc;
}

/* Keeps a as the item's latest answer, in its slot, a free one or the
 * one stored longest ago. */
static void kept_set(struct engine *e, int64_t item_id, const struct record_answer *a)
{
	struct record_slot *s = NULL;
	int i;

	pthread_mutex_lock(&e->record_lock);
	for (i = 0; i < RECORD_SLOTS; i++) {
		struct record_slot *c = &e->records[i];

		if (c->item_id == item_id) {
			s = c;
			break;
		}
		if (!s || (s->item_id && (!c->item_id || c->stamp < s->stamp)))
			s = c;
	}
	s->item_id = item_id;
	s->stamp = ++e->record_stamp;
	s->a = *a;
	pthread_mutex_unlock(&e->record_lock);
}

/* ---- answers ---- */

/* Appends "key: value\n" with value on one line (newlines as spaces). */
static int put_value(struct buf *out, const char *key, const char *value)
{
	size_t start = out->len, i;
	int rc = buf_printf(out, "%s: %s\n", key, value ? value : "");

	for (i = start + strlen(key) + 2; rc == 0 && i + 1 < out->len; i++)
		if (out->data[i] == '\n' || out->data[i] == '\r')
			out->data[i] = ' ';
	return rc;
}

static const char *errno_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "EIO";
}

/* Renders answer a: its run as the store has it now, then its refusal. */
static int render(struct engine *e, const struct record_answer *a, struct buf *out)
{
	struct run r;
	int rc = 0, ended;

	if (a->run_id) {
		rc = store_run_get(e->store, a->run_id, &r);
		if (rc == -ENOENT)
			rc = 0;
		else if (rc == 0) {
			ended = r.status != RUN_QUEUED && r.status != RUN_RUNNING;
			rc = buf_printf(out, "run: %d\n", r.run_no);
			if (rc == 0)
				rc = put_value(out, "recipe", r.name);
			if (rc == 0)
				rc = put_value(out, "log", r.log_path);
			if (rc == 0)
				rc = put_value(out, "status", run_status_name(r.status));
			if (rc == 0 && ended && r.has_exit_code)
				rc = buf_printf(out, "exit_code: %d\n", r.exit_code);
			else if (rc == 0 && ended && r.signal)
				rc = buf_printf(out, "signal: %d\n", r.signal);
			if (rc == 0)
				rc = put_value(out, "note", r.note);
			run_clear(&r);
		}
	}
	if (rc == 0 && a->err) {
		char line[300];

		snprintf(line, sizeof(line), "%s: %s", errno_name(a->err), a->why);
		rc = put_value(out, "error", line);
	}
	return rc;
}

int packet__record_render(struct engine *e, int64_t item_id, struct record_handle *h,
			  struct buf *out)
{
	struct record_answer a;
	int have = 0;

	if (h) {
		pthread_mutex_lock(&h->lock);
		if (h->asked) {
			a = h->a;
			have = 1;
		}
		pthread_mutex_unlock(&h->lock);
	}
	if (!have)
		have = kept_get(e, item_id, &a) == 0;
	return have ? render(e, &a, out) : buf_puts(out, usage_line);
}

/* ---- applying lines; h->lock held ---- */

/* Records the refusal rc (why, or strerror when empty) as h's answer and
 * logs it. Returns rc. */
static int refused(struct record_handle *h, int rc, const char *why)
{
	assert(util_mutex_held(&h->lock));
	h->a.err = -rc;
	snprintf(h->a.why, sizeof(h->a.why), "%s", why[0] ? why : strerror(-rc));
	util_log(LOG_WARNING, "%s/validation/record: refused: %s", h->item, h->a.why);
	return rc;
}

/* The status of run run_id into status, and whether it is queued or
 * running: 1, 0 (ended, or gone), or a negative errno of the store. */
static int run_live(struct engine *e, int64_t run_id, int *run_no, char *status, size_t size)
{
	struct run r;
	int rc = store_run_get(e->store, run_id, &r);

	if (rc)
		return rc == -ENOENT ? 0 : rc;
	*run_no = r.run_no;
	snprintf(status, size, "%s", run_status_name(r.status));
	rc = r.status == RUN_QUEUED || r.status == RUN_RUNNING;
	run_clear(&r);
	return rc;
}

/* A request line: queues its run, unless the handle's run still runs. */
static int apply_request(struct engine *e, struct record_handle *h, const char *s, size_t len,
			 const struct pfs_caller *who)
{
	struct record_request rq;
	struct record_req req;
	char why[256] = "", log[PATH_MAX], status[16];
	int64_t run_id = 0;
	int run_no = 0, rc = 0;

	if (h->asked && h->a.run_id) {
		rc = run_live(e, h->a.run_id, &run_no, status, sizeof(status));
		if (rc > 0) {
			say(why, sizeof(why), "run %d of this file is still %s: one run at a time "
					      "(write cancel, or open the file again)", run_no, status);
			rc = -EBUSY;
		}
	}
	if (rc == 0)
		rc = record_parse(s, len, &rq, why, sizeof(why));
	if (rc == 0) {
		memset(&req, 0, sizeof(req));
		req.recipe = rq.recipe;
		req.argv = rq.argv;
		req.gpus = rq.gpus;
		req.timeout_s = rq.timeout_s;
		req.uid = who->uid;
		req.pid = who->pid;
		req.credential = rq.credential;
		rc = pipeline_record(e->pl, h->item, &req, &run_id, &run_no, log, sizeof(log), why,
				   sizeof(why));
		record_request_clear(&rq);
	}
	if (rc == 0) {
		memset(&h->a, 0, sizeof(h->a));
		h->a.run_id = run_id;
	} else {
		if (rc != -EBUSY)
			h->a.run_id = 0; /* the answer is this request's */
		refused(h, rc, why);
	}
	h->asked = 1;
	kept_set(e, h->item_id, &h->a);
	engine_changed(e, h->item, "validation/record", ENGINE_MODIFIED);
	return rc;
}

/* cancel: of the handle's run, or for a handle that made no request, of
 * the run of the item's latest answer (the one a read shows). */
static int apply_cancel(struct engine *e, struct record_handle *h)
{
	char why[256] = "";
	int rc;

	if (!h->asked && kept_get(e, h->item_id, &h->a) == 0)
		h->a.err = 0;
	h->asked = 1;
	if (!h->a.run_id) {
		say(why, sizeof(why), "no run to cancel: no request was made through this file");
		rc = -ENOENT;
	} else {
		rc = pipeline_record_cancel(e->pl, h->item, h->a.run_id, why, sizeof(why));
	}
	if (rc)
		refused(h, rc, why);
	else
		h->a.err = 0;
	engine_changed(e, h->item, "validation/record", ENGINE_MODIFIED);
	return rc;
}

static int apply_line(struct engine *e, struct record_handle *h, const char *s, size_t len,
		      const struct pfs_caller *who)
{
	switch (record_line_kind(s, len)) {
	case RECORD_BLANK:
		return 0;
	case RECORD_CANCEL:
		return apply_cancel(e, h);
	default:
		return apply_request(e, h, s, len, who);
	}
}

/* Empties b. */
static void cut(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* ---- the handle ---- */

int packet__record_open(int64_t item_id, const char *item, struct record_handle **out)
{
	struct record_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->item_id = item_id;
	snprintf(h->item, sizeof(h->item), "%s", item);
	pthread_mutex_init(&h->lock, NULL);
	*out = h;
	return 0;
}

ssize_t packet__record_write(struct engine *e, struct record_handle *h, const char *data,
			     size_t size, const struct pfs_caller *who)
{
	size_t keep, pos = 0, applied_end = 0;
	ssize_t ret = (ssize_t)size;
	char *nl;
	int rc = 0, applied = 0;

	pthread_mutex_lock(&h->lock);
	keep = h->pending.len;
	rc = buf_append(&h->pending, data, size);
	while (rc == 0 && (nl = memchr(h->pending.data + pos, '\n', h->pending.len - pos))) {
		size_t end = (size_t)(nl - h->pending.data);

		rc = apply_line(e, h, h->pending.data + pos, end - pos, who);
		pos = end + 1;
		if (rc == 0) {
			applied = 1;
			applied_end = pos;
		}
	}
	/* A fragment already too long for a line is refused now (-EFBIG). */
	if (rc == 0 && h->pending.len - pos > RECORD_LINE_MAX)
		rc = apply_request(e, h, h->pending.data + pos, h->pending.len - pos, who);
	if (rc) {
		/* The caller writes the rest again, from the line refused. */
		cut(&h->pending);
		ret = applied ? (ssize_t)(applied_end - keep) : rc;
	} else {
		memmove(h->pending.data, h->pending.data + pos, h->pending.len - pos);
		h->pending.len -= pos;
		h->pending.data[h->pending.len] = '\0';
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

int packet__record_flush(struct engine *e, struct record_handle *h, const struct pfs_caller *who)
{
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	if (h->pending.len && !record_line_open(h->pending.data, h->pending.len)) {
		rc = apply_line(e, h, h->pending.data, h->pending.len, who);
		cut(&h->pending);
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

void packet__record_release(struct engine *e, struct record_handle *h, const struct pfs_caller *who)
{
	if (!h)
		return;
	if (h->pending.len)
		apply_line(e, h, h->pending.data, h->pending.len, who);
	buf_free(&h->pending);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
