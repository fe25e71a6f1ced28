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
 * is.
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
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "packet_int.h"

/* The longest command line, newline excluded. */
#define CTL_LINE_MAX 4096
/* Bytes of a line shown in ctl's result and in the log before "...". */
#define SHOWN_MAX 60

/* The verbs of SPEC §4; "run" and "rerun" take one argument, the others none. */
static const char *const verbs[] = {
	"advance", "run", "rerun", "cancel", "approve", "hold", "release", "archive", NULL,
};

/* The first words of a line: verb, argument and whether more follow. */
struct words {
	const char *w[2]; /* w[0] the verb, w[1] the first argument */
	size_t len[2];
	int n;            /* words in the line, counted up to 3 (3: two arguments or more) */
};

/* Whether c separates words (a '\r' before the newline counts as one). */
static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Whether c may not stand in a command line: a control character other
 * than tab and CR (NUL included), or DEL. */
static int is_control(char c)
{
	unsigned char u = (unsigned char)c;

	return (u < 0x20 && !is_space(c)) || u == 0x7f;
}

/* Whether the len bytes at s are all spaces (also when len is 0). */
static int is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!is_space(s[i]))
			return 0;
	return 1;
}

/* Splits the len bytes at s (no newline) into words. */
static void split(const char *s, size_t len, struct words *out)
{
	size_t i = 0, start;

	memset(out, 0, sizeof(*out));
	while (out->n < 3) {
		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && !is_space(s[i]))
			i++;
		if (out->n < 2) {
			out->w[out->n] = s + start;
			out->len[out->n] = i - start;
		}
		out->n++;
	}
}

/* Whether word k of w is exactly s. */
static int word_is(const struct words *w, int k, const char *s)
{
	return w->n > k && w->len[k] == strlen(s) && memcmp(w->w[k], s, w->len[k]) == 0;
}

/* Copies the line s[len] into out[size] for showing it: outer spaces
 * trimmed, control characters as '?', cut to SHOWN_MAX bytes with "...". */
static void shorten(const char *s, size_t len, char *out, size_t size)
{
	size_t i, n = 0;

	while (len && is_space(*s))
		s++, len--;
	while (len && is_space(s[len - 1]))
		len--;
	for (i = 0; i < len && i < SHOWN_MAX && n + 4 < size; i++)
		out[n++] = is_control(s[i]) ? '?' : s[i];
	if (i < len && n + 4 <= size) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}

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

/*
 * Parses and checks the command line s[len] (no newline; need not be
 * NUL-terminated) into cmd, which the caller zeroed: cmd->line gets the
 * line as shown, and cmd->verb and cmd->arg the command, or cmd->refused
 * and cmd->refusal why the line is bad. Checks the verb, the number of
 * arguments, their length and that the stage (configuration in force) or
 * recipe (catalog, pipeline_recipes_hold) exists; not the item's state. 0 or
 * -EINVAL (refused).
 */
static int parse_line(struct engine *e, const char *s, size_t len, struct pipe_cmd *cmd)
{
	const struct recipe_catalog *cat;
	struct pfs_config *cfg;
	struct words w;
	const char *what;
	size_t i;
	const struct recipe *r;
	int wants, found, procedure;

	shorten(s, len, cmd->line, sizeof(cmd->line));
	if (len > CTL_LINE_MAX)
		return refuse(cmd, "line too long (%zu bytes, at most %d)", len, CTL_LINE_MAX);
	for (i = 0; i < len; i++)
		if (is_control(s[i]))
			return refuse(cmd, "control character (byte 0x%02x) in the line",
				      (unsigned char)s[i]);
	split(s, len, &w);
	if (w.n == 0)
		return refuse(cmd, "empty command");
	for (i = 0; verbs[i] && !word_is(&w, 0, verbs[i]); i++)
		;
	if (!verbs[i])
		return refuse(cmd, "unknown verb");
	snprintf(cmd->verb, sizeof(cmd->verb), "%s", verbs[i]);
	wants = word_is(&w, 0, "run") || word_is(&w, 0, "rerun");
	what = word_is(&w, 0, "run") ? "stage" : "recipe";
	if (!wants && w.n > 1)
		return refuse(cmd, "%s takes no argument", cmd->verb);
	if (wants && w.n == 1)
		return refuse(cmd, "%s needs a %s name", cmd->verb, what);
	if (wants && w.n > 2)
		return refuse(cmd, "%s takes one %s name, not more", cmd->verb, what);
	if (!wants)
		return 0;
	if (w.len[1] >= sizeof(cmd->arg))
		return refuse(cmd, "%s name too long (%zu bytes, at most %zu)", what, w.len[1],
			      sizeof(cmd->arg) - 1);
	memcpy(cmd->arg, w.w[1], w.len[1]);
	cmd->arg[w.len[1]] = '\0';
	if (strcmp(cmd->verb, "run") == 0) {
		cfg = pipeline_config_get(e->pl);
		if (!cfg || !config_stage(cfg, cmd->arg, NULL))
			return refuse(cmd, "no stage '%s' in the pipeline", cmd->arg);
		return 0;
	}
	if (strcmp(cmd->arg, "failed") == 0)
		return 0; /* every named recipe not validated at the head */
	cat = pipeline_recipes_hold(e->pl);
	r = recipe_find(cat, cmd->arg);
	found = r != NULL;
	procedure = r && r->procedure;
	pipeline_recipes_release(e->pl);
	if (!found)
		return refuse(cmd, "no recipe '%s' in the catalog", cmd->arg);
	if (procedure)
		return refuse(cmd, "%s is a procedure (no command of its own): run the commands it "
			      "asks for with packetfs record %s -- COMMAND", cmd->arg, cmd->arg);
	return 0;
}

/*
 * Whether the fragment s[len] (no newline) can still become a valid
 * command line as more bytes come: blank, a strict prefix of a verb, "run"
 * or "rerun" with the name to come, or "run " + a prefix of a configured
 * stage name, or "rerun " + a prefix of a recipe name in the catalog
 * (pipeline_recipes_hold).
 */
static int is_line_prefix(struct engine *e, const char *s, size_t len)
{
	const struct recipe_catalog *cat;
	struct pfs_config *cfg;
	struct words w;
	size_t i;
	int found = 0;

	for (i = 0; i < len; i++)
		if (is_control(s[i]))
			return 0;
	split(s, len, &w);
	if (w.n == 0)
		return 1;
	if (w.n == 1 && !is_space(s[len - 1]))
		for (i = 0; verbs[i]; i++)
			if (w.len[0] < strlen(verbs[i]) && memcmp(verbs[i], w.w[0], w.len[0]) == 0)
				return 1;
	if (!word_is(&w, 0, "run") && !word_is(&w, 0, "rerun"))
		return 0;
	if (w.n == 1)
		return 1;
	if (w.n > 2 || is_space(s[len - 1]))
		return 0; /* the name has ended */
	if (word_is(&w, 0, "run")) {
		cfg = pipeline_config_get(e->pl);
		for (i = 0; cfg && i < cfg->nstages && !found; i++)
			found = strlen(cfg->stages[i].name) >= w.len[1] &&
				memcmp(cfg->stages[i].name, w.w[1], w.len[1]) == 0;
		return found;
	}
	if (w.len[1] <= 6 && memcmp("failed", w.w[1], w.len[1]) == 0)
		return 1;
	cat = pipeline_recipes_hold(e->pl);
	for (i = 0; i < cat->n && !found; i++)
		found = strlen(cat->v[i].name) >= w.len[1] &&
			memcmp(cat->v[i].name, w.w[1], w.len[1]) == 0;
	pipeline_recipes_release(e->pl);
	return found;
}

/*
 * Hands cmd (parsed by parse_line) for item to the loop thread, which
 * applies it, or only records it as ctl's result when it is refused.
 * 0 or a negative errno (-EINVAL for a refused line); a failure is logged
 * to stderr with its reason.
 */
static int send_cmd(struct engine *e, const char *item, struct pipe_cmd *cmd)
{
	int rc;

	snprintf(cmd->item, sizeof(cmd->item), "%s", item);
	rc = pipeline_call(e->pl, cmd);
	if (rc == -ENOTCONN)
		snprintf(cmd->msg, sizeof(cmd->msg), "the pipeline engine is not running");
	if (cmd->refused)
		rc = -EINVAL;
	if (rc)
		fprintf(stderr, "packetfs: %s: ctl %s: %s\n", item, cmd->line,
			cmd->refused ? cmd->refusal : cmd->msg);
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
	rc = send_cmd(e, item, &cmd);
	if (msg)
		snprintf(msg, size, "%s", cmd.refused ? cmd.refusal : cmd.msg);
	return rc;
}

ssize_t packet__ctl_write(struct engine *e, const char *item, struct buf *pending, const char *data,
			  size_t size)
{
	size_t keep = pending->len, pos = 0, start, end, applied_end = 0;
	struct pipe_cmd cmd;
	int rc, applied = 0;

	rc = buf_append(pending, data, size);
	if (rc)
		return rc;
	/* Every complete line is checked before any is applied. */
	while (next_line(pending, &pos, &start, &end)) {
		if (is_blank(pending->data + start, end - start))
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
		if (is_blank(pending->data + start, end - start))
			continue;
		memset(&cmd, 0, sizeof(cmd));
		parse_line(e, pending->data + start, end - start, &cmd); /* refused: recorded */
		rc = send_cmd(e, item, &cmd);
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
	send_cmd(e, item, &cmd);
	cut(pending, 0);
	return -EINVAL;
}

int packet__ctl_flush(struct engine *e, const char *item, struct buf *pending)
{
	struct pipe_cmd cmd;

	if (is_blank(pending->data, pending->len))
		return 0;
	memset(&cmd, 0, sizeof(cmd));
	if (parse_line(e, pending->data, pending->len, &cmd) &&
	    is_line_prefix(e, pending->data, pending->len))
		return 0;
	cut(pending, 0);
	return send_cmd(e, item, &cmd);
}

void packet__ctl_release(struct engine *e, const char *item, struct buf *pending)
{
	struct pipe_cmd cmd;

	if (!is_blank(pending->data, pending->len)) {
		memset(&cmd, 0, sizeof(cmd));
		parse_line(e, pending->data, pending->len, &cmd);
		send_cmd(e, item, &cmd);
	}
	cut(pending, 0);
}
