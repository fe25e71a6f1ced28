/*
 * ctl.c - the command lines of an item's trigger file ctl (SPEC §4):
 * parsing and checking a line, the prefix test for a fragment at a flush,
 * and applying lines through the loop thread. packet_file.c owns the
 * handle and its pending buffer and calls in here; packet_int.h documents
 * the functions.
 *
 * Design. A ctl handle keeps what was written after its last newline in a
 * pending buffer. A write appends to it and takes every complete line in
 * two passes: first each one is parsed and checked (a known verb, the
 * right number of arguments, the stage or recipe exists), and one bad line
 * refuses the whole write with nothing applied; then the lines are applied
 * in order on the loop thread, where a line may still fail because of the
 * item's state (advance while a stage runs): the write then ends short,
 * just after the last line applied, and the caller's retry of the rest
 * fails. A fragment without newline waits. At a flush it is applied when
 * it is a whole valid command (`printf hold > ctl` acts before the shell's
 * close returns), kept when it is a strict prefix of one (bash closes
 * duplicates of an fd between the pieces it writes through it), and
 * refused otherwise. At release (the last close) it is applied whatever it
 * is. Writing nothing means advance: it is applied at the flush of the
 * writer's last close (packet__ctl_empty_close), so that the close fails
 * with the command's error (ENOSPC, EINVAL); release only applies it when
 * that close was not recognised (a descriptor passed to another process).
 * When the writer cannot be identified at all (pid 0 from outside the
 * daemon's pid namespace, /proc unreadable), the advance waits for the
 * release, which the kernel sends after close(2) returned: the handle is
 * then owed, and an open of the item's ctl, status or status.json waits
 * for its release (packet__ctl_settle), so that `: > ctl; head -1 ctl`
 * reads the answer.
 *
 * Invariants. ctl's last result (the item's last_result) has one writer,
 * pipe_command on the loop thread: a line refused here travels there as a
 * command marked refused, which is only recorded, so every refused line is
 * a result. A failed write empties the pending buffer: a fragment kept from
 * earlier writes was part of the line refused.
 * Between calls the pending buffer holds no newline and at most
 * CTL_LINE_MAX bytes.
 *
 * Threads: FUSE threads (any thread but the loop thread, which
 * pipeline_call waits for). Calls on one pending buffer must not overlap;
 * the recipe catalog is read under pipeline_recipes_hold.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "packet_int.h"

/* The longest an open of ctl waits for an owed handle's release: the
 * release follows the close at once unless the descriptor is still open
 * in another process. */
#define CTL_SETTLE_MS 2000

const char packet__ctl_verbs[] =
	"verbs: advance, run STAGE, rerun RECIPE, cancel, approve, hold, release, archive, "
	"probe\n";

/* Marks cmd refused with the message fmt. Returns -EINVAL. */
static int refuse(struct pipe_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct pipe_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd->refusal, sizeof(cmd->refusal), fmt, ap);
	va_end(ap);
	cmd->refused = 1;
	return -EINVAL;
}

/* Whether some path of cfg (its stages, or a template's) has stage name
 * (the item's own path is checked when the command runs). */
static int stage_known(const struct pfs_config *cfg, const char *name)
{
	size_t i;

	if (config_stage(cfg, name, NULL))
		return 1;
	for (i = 0; i < cfg->ntemplates; i++)
		if (config_stage(cfg->templates[i].path, name, NULL))
			return 1;
	return 0;
}

/*
 * Parses and checks the command line s[len] (no newline; need not be
 * NUL-terminated) into cmd, which the caller zeroed: cmd->line gets the
 * line as shown, and cmd->verb and cmd->arg the command, or cmd->refused
 * and cmd->refusal why the line is bad. Checks the syntax (ctlline.h), the
 * argument's length and that the stage (configuration in force, on some
 * path) or recipe
 * (catalog, pipeline_recipes_hold) exists; not the item's state. 0 or
 * -EINVAL (refused).
 */
/* Into hint[size]: ' (did you mean "NAME"?)' when word is likely a slip of
 * one of the n names at names (ctl_line_suggest), else "". Returns hint. */
static const char *did_you_mean(const char *word, const char *const *names, size_t n, char *hint,
				size_t size)
{
	const char *meant = ctl_line_suggest(word, names, n);

	if (meant)
		snprintf(hint, size, " (did you mean \"%s\"?)", meant);
	else
		hint[0] = '\0';
	return hint;
}

/*
 * did_you_mean over the names of n records at base, each stride bytes
 * long, whose char * name lies off bytes into it. Returns hint ("" when
 * there is no memory to gather the names).
 */
static const char *suggest_name(const char *word, const void *base, size_t n, size_t stride,
				size_t off, char *hint, size_t size)
{
	const char **names = n ? malloc(n * sizeof(*names)) : NULL;
	size_t i;

	hint[0] = '\0';
	if (!names)
		return hint;
	for (i = 0; i < n; i++)
		names[i] = *(char *const *)((const char *)base + i * stride + off);
	did_you_mean(word, names, n, hint, size);
	free(names);
	return hint;
}

/* did_you_mean over the stages of cfg (NULL: none). */
static const char *suggest_stage(const struct pfs_config *cfg, const char *word, char *hint,
				 size_t size)
{
	return suggest_name(word, cfg ? cfg->stages : NULL, cfg ? cfg->nstages : 0,
			    sizeof(struct pfs_stage), offsetof(struct pfs_stage, name), hint, size);
}

/* did_you_mean over the recipes of cat (held by the caller). */
static const char *suggest_recipe(const struct recipe_catalog *cat, const char *word, char *hint,
				  size_t size)
{
	return suggest_name(word, cat ? cat->v : NULL, cat ? cat->n : 0, sizeof(struct recipe),
			    offsetof(struct recipe, name), hint, size);
}

static int parse_line(struct engine *e, const char *s, size_t len, struct pipe_cmd *cmd)
{
	const struct recipe_catalog *cat;
	struct pfs_config *cfg;
	struct ctl_line l;
	const struct recipe *r;
	char why[sizeof(cmd->refusal)], hint[96] = "";
	int found, procedure;

	ctl_line_shown(s, len, cmd->line, sizeof(cmd->line));
	if (ctl_line_parse(s, len, &l, why, sizeof(why)))
		return refuse(cmd, "%s", why);
	snprintf(cmd->verb, sizeof(cmd->verb), "%s", l.verb);
	if (l.kind == CTL_ARG_NONE)
		return 0;
	if (l.arg_len >= sizeof(cmd->arg))
		return refuse(cmd, "%s name too long (%zu bytes, at most %zu)",
			      l.kind == CTL_ARG_STAGE ? "stage" : "recipe", l.arg_len,
			      sizeof(cmd->arg) - 1);
	memcpy(cmd->arg, l.arg, l.arg_len);
	cmd->arg[l.arg_len] = '\0';
	if (l.kind == CTL_ARG_STAGE) {
		cfg = pipeline_config_get(e->pl);
		if (!cfg || !stage_known(cfg, cmd->arg))
			return refuse(cmd, "no stage '%s' in the pipeline%s", cmd->arg,
				      suggest_stage(cfg, cmd->arg, hint, sizeof(hint)));
		return 0;
	}
	if (strcmp(cmd->arg, "failed") == 0)
		return 0; /* every named recipe not validated at the head */
	cat = pipeline_recipes_hold(e->pl);
	r = recipe_find(cat, cmd->arg);
	found = r != NULL;
	procedure = r && r->procedure;
	if (!found)
		suggest_recipe(cat, cmd->arg, hint, sizeof(hint));
	pipeline_recipes_release(e->pl);
	if (!found)
		return refuse(cmd, "no recipe '%s' in the catalog%s", cmd->arg, hint);
	if (procedure)
		return refuse(cmd, "%s is a procedure (no command of its own): run the commands it "
			      "asks for with packetfs record %s -- COMMAND", cmd->arg, cmd->arg);
	return 0;
}

/* Whether name begins with the n bytes at p. */
static int begins(const char *name, const char *p, size_t n)
{
	return strlen(name) >= n && memcmp(name, p, n) == 0;
}

/*
 * Whether the fragment s[len] (no newline) can still become a valid
 * command line as more bytes come (ctl_line_prefix), its name matched
 * against the configured stages for "run " and against "failed" and the
 * recipes in the catalog (pipeline_recipes_hold) for "rerun ".
 */
static int is_line_prefix(struct engine *e, const char *s, size_t len)
{
	const struct recipe_catalog *cat;
	struct pfs_config *cfg;
	struct ctl_line l;
	size_t i, k;
	int found = 0;

	switch (ctl_line_prefix(s, len, &l)) {
	case CTL_PREFIX_NO:
		return 0;
	case CTL_PREFIX_YES:
		return 1;
	case CTL_PREFIX_NAME:
		break;
	}
	if (l.kind == CTL_ARG_STAGE) {
		cfg = pipeline_config_get(e->pl);
		for (i = 0; cfg && i < cfg->nstages && !found; i++)
			found = begins(cfg->stages[i].name, l.arg, l.arg_len);
		for (k = 0; cfg && k < cfg->ntemplates && !found; k++) {
			const struct pfs_config *path = cfg->templates[k].path;

			for (i = 1; i < path->nstages && !found; i++)
				found = begins(path->stages[i].name, l.arg, l.arg_len);
		}
		return found;
	}
	if (begins("failed", l.arg, l.arg_len))
		return 1;
	cat = pipeline_recipes_hold(e->pl);
	for (i = 0; i < cat->n && !found; i++)
		found = begins(cat->v[i].name, l.arg, l.arg_len);
	pipeline_recipes_release(e->pl);
	return found;
}

/*
 * Hands cmd (parsed by parse_line) for item to the loop thread, which
 * applies it, or only records it as ctl's result when it is refused.
 * 0 or a negative errno (-EINVAL for a refused line); a failure is logged
 * to stderr with its reason.
 */
static int send_cmd(struct engine *e, const char *item, struct pipe_cmd *cmd, struct buf *reply)
{
	int rc;

	snprintf(cmd->item, sizeof(cmd->item), "%s", item);
	rc = pipeline_call(e->pl, cmd);
	if (rc == -ENOTCONN)
		snprintf(cmd->msg, sizeof(cmd->msg), "the pipeline engine is not running");
	if (cmd->refused)
		rc = -EINVAL;
	if (rc)
		util_log(LOG_WARNING, "%s: ctl %s: %s", item, cmd->line,
			cmd->refused ? cmd->refusal : cmd->msg);
	if (reply) {
		if (rc)
			buf_printf(reply, "%s: error: %s\n", cmd->line,
				   cmd->refused ? cmd->refusal : cmd->msg);
		else
			buf_printf(reply, "%s: ok\n", cmd->line);
	}
	return rc;
}

/* Shortens b to its first len bytes. */
static void cut(struct buf *b, size_t len)
{
	b->len = len;
	if (b->data)
		b->data[len] = '\0';
}

/* Drops the first n bytes of b. */
static void drop_front(struct buf *b, size_t n)
{
	if (n == 0)
		return;
	memmove(b->data, b->data + n, b->len - n);
	cut(b, b->len - n);
}

/* The next complete line of b at or after *pos: [*start, *end), newline
 * excluded; *pos moves past its newline. 0 when none is left. */
static int next_line(const struct buf *b, size_t *pos, size_t *start, size_t *end)
{
	const char *nl;

	if (*pos >= b->len)
		return 0;
	nl = memchr(b->data + *pos, '\n', b->len - *pos);
	if (!nl)
		return 0;
	*start = *pos;
	*end = (size_t)(nl - b->data);
	*pos = *end + 1;
	return 1;
}

int packet__ctl_apply(struct engine *e, const char *item, const char *line, char *msg, size_t size)
{
	struct pipe_cmd cmd;
	int rc;

	memset(&cmd, 0, sizeof(cmd));
	parse_line(e, line, strlen(line), &cmd);
	rc = send_cmd(e, item, &cmd, NULL);
	if (msg)
		snprintf(msg, size, "%s", cmd.refused ? cmd.refusal : cmd.msg);
	return rc;
}

ssize_t packet__ctl_write(struct engine *e, const char *item, struct buf *pending,
			  struct buf *reply, const char *data, size_t size)
{
	size_t keep = pending->len, pos = 0, start, end, applied_end = 0;
	struct pipe_cmd cmd;
	int rc, applied = 0;

	rc = buf_append(pending, data, size);
	if (rc)
		return rc;
	if (reply)
		cut(reply, 0);
	/* Every complete line is checked before any is applied. */
	while (next_line(pending, &pos, &start, &end)) {
		if (ctl_line_blank(pending->data + start, end - start))
			continue;
		memset(&cmd, 0, sizeof(cmd));
		if (parse_line(e, pending->data + start, end - start, &cmd))
			goto refused;
	}
	if (pending->len - pos > CTL_LINE_MAX) {
		memset(&cmd, 0, sizeof(cmd));
		parse_line(e, pending->data + pos, pending->len - pos, &cmd);
		goto refused;
	}
	/* Then applied in order; one the item's state refuses ends the write. */
	pos = 0;
	while (next_line(pending, &pos, &start, &end)) {
		if (ctl_line_blank(pending->data + start, end - start))
			continue;
		memset(&cmd, 0, sizeof(cmd));
		parse_line(e, pending->data + start, end - start, &cmd); /* refused: recorded */
		rc = send_cmd(e, item, &cmd, reply);
		if (rc) {
			if (!applied) {
				/* A fragment kept from earlier writes was part of
				 * the refused write: it goes with it. */
				cut(pending, 0);
				return rc;
			}
			/* The caller writes the rest again; this line ends that write. */
			cut(pending, 0);
			return (ssize_t)(applied_end - keep);
		}
		applied = 1;
		applied_end = pos;
	}
	drop_front(pending, pos);
	return (ssize_t)size;
refused:
	send_cmd(e, item, &cmd, reply);
	cut(pending, 0);
	return -EINVAL;
}

int packet__ctl_flush(struct engine *e, const char *item, struct buf *pending, struct buf *reply)
{
	struct pipe_cmd cmd;

	if (ctl_line_blank(pending->data, pending->len))
		return 0;
	memset(&cmd, 0, sizeof(cmd));
	if (parse_line(e, pending->data, pending->len, &cmd) &&
	    is_line_prefix(e, pending->data, pending->len))
		return 0;
	cut(pending, 0);
	if (reply)
		cut(reply, 0);
	return send_cmd(e, item, &cmd, reply);
}

void packet__ctl_release(struct engine *e, const char *item, struct buf *pending)
{
	struct pipe_cmd cmd;

	if (!ctl_line_blank(pending->data, pending->len)) {
		memset(&cmd, 0, sizeof(cmd));
		parse_line(e, pending->data, pending->len, &cmd);
		send_cmd(e, item, &cmd, NULL);
	}
	cut(pending, 0);
}

/* Whether the process pid holds no descriptor of a file whose path ends
 * with path (the file's path on the mount, "/ITEM/ctl"): its flush then
 * comes from its last close of that file (a shell moves the descriptor
 * with dup2 and closes the first one before it writes). 1 when it holds
 * none, 0 when it holds one, -1 when it cannot be told (pid unknown, /proc
 * unreadable: another user's process). */
static int last_close(pid_t pid, const char *path)
{
	char dir[64], link[PATH_MAX];
	size_t plen = strlen(path);
	struct dirent *de;
	ssize_t n;
	int last = 1;
	DIR *d;

	if (pid <= 0)
		return -1;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while (last && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n >= (ssize_t)plen && memcmp(link + n - plen, path, plen) == 0)
			last = 0;
	}
	closedir(d);
	return last;
}

int packet__ctl_empty_close(struct engine *e, const char *item, const char *path, pid_t pid)
{
	int last = last_close(pid, path);

	if (last <= 0)
		return last < 0 ? 2 : 1;
	return packet__ctl_apply(e, item, "advance", NULL, 0);
}

void packet__ctl_owe(struct pfs_file *f)
{
	struct engine *e = f->e;

	assert(util_mutex_held(&f->lock));
	pthread_mutex_lock(&e->owed_lock);
	if (!f->owed) {
		f->owed = 1;
		f->owed_next = e->owed;
		e->owed = f;
	}
	pthread_mutex_unlock(&e->owed_lock);
}

void packet__ctl_paid(struct pfs_file *f)
{
	struct engine *e = f->e;
	struct pfs_file **pp;

	assert(util_mutex_held(&f->lock));
	pthread_mutex_lock(&e->owed_lock);
	if (f->owed) {
		for (pp = &e->owed; *pp != f; pp = &(*pp)->owed_next)
			;
		*pp = f->owed_next;
		f->owed_next = NULL;
		f->owed = 0;
		e->owed_paid++;
		pthread_cond_broadcast(&e->owed_cond);
	}
	pthread_mutex_unlock(&e->owed_lock);
}

/* Whether a handle of item_id is owed; e->owed_lock held. */
static int item_owed(struct engine *e, int64_t item_id)
{
	const struct pfs_file *f;

	for (f = e->owed; f; f = f->owed_next)
		if (f->item_id == item_id)
			return 1;
	return 0;
}

uint64_t packet__ctl_paid_count(struct engine *e)
{
	uint64_t n;

	pthread_mutex_lock(&e->owed_lock);
	n = e->owed_paid;
	pthread_mutex_unlock(&e->owed_lock);
	return n;
}

int packet__ctl_settle(struct engine *e, int64_t item_id, uint64_t since)
{
	struct timespec until;
	int waited;

	pthread_mutex_lock(&e->owed_lock);
	waited = item_owed(e, item_id) || e->owed_paid != since;
	if (waited) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += CTL_SETTLE_MS / 1000;
		until.tv_nsec += (long)(CTL_SETTLE_MS % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while (item_owed(e, item_id) &&
		       pthread_cond_timedwait(&e->owed_cond, &e->owed_lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&e->owed_lock);
	return waited;
}

int packet__ctl_render_reply(const struct buf *reply, struct buf *out)
{
	int rc = reply->len ? buf_append(out, reply->data, reply->len) : 0;

	return rc ? rc : buf_puts(out, packet__ctl_verbs);
}
