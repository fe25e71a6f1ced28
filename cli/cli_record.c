/*
 * cli_record.c - `packetfs record` (SPEC §6 "The recorder", §7): asks the
 * engine to run a command as a run of a catalog recipe, streams the run's
 * log and exits with the command's status. It is a client of the item's
 * validation/record on the mount and nothing else (docs/guide.md "Recording a
 * run" documents that file).
 *
 * Design.
 *  1. The item directory: -C ITEM_DIR, else the nearest directory at or
 *     above the current one holding ctl and validation/record, else
 *     $PACKET_DIR (stage programs have it, also when they work in the
 *     item's worktree, which lies outside the mount).
 *  2. One handle on validation/record (O_RDWR): the request is written as
 *     one JSON line (cJSON), with $PACKET_RUN_CREDENTIAL as its credential
 *     when set (a stage run's: it names the stage); its answer is read back from the same handle
 *     ("key: value" lines, rendered anew at every read at offset 0): the
 *     run number and its log, or "error: ENAME: why" for a refusal.
 *  3. The log is read as it grows: to its end, then poll(2) on the log
 *     (readable when it grew or its run ended) and on the record handle
 *     (readable when the answer moved on), bounded by POLL_MS in case a
 *     wake-up is missed. Once the answer says the run ended, the log is
 *     complete (the engine seals it before it records the end), so it is
 *     read to its end a last time.
 *  4. stdout gets the command's output only: the engine's header (the
 *     leading "#" lines, the blank line after them and the environment
 *     block up to "# env.end", engine/format/runenv.h) and footer (the trailing
 *     "# packetfs: " lines, with the newline the engine puts before them)
 *     are left out; they stay in the log. A footer-like tail is held back until the log shows whether it
 *     is the footer, so output may lag by those lines only.
 *  5. The exit status is the command's: its exit code, 128+N for signal
 *     N; 1 with a message when it has neither (blocked, interrupted, not
 *     run); the status is told on stderr when it is not what the exit
 *     code says (an exit 0 that is not validated, a timeout).
 * SIGINT, SIGTERM and SIGHUP are blocked except while waiting in ppoll:
 * the first one writes cancel to the handle, and streaming goes on until
 * the run ends (exit 128+N of that signal if the command left no status
 * of its own). A read that fails with ENOTCONN means the daemon died.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"

/* The longest wait for a wake-up before the answer is read again. */
#define POLL_MS 1000
/* The footer lines the engine appends to a log. */
#define FOOTER "# packetfs: "
#define FOOTER_LEN (sizeof(FOOTER) - 1)

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	if (!got_signal)
		got_signal = sig;
}

/* ---- the item directory ---- */

/* Whether dir is an item directory of a mount: it holds ctl and
 * validation/record. */
static int is_item_dir(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/ctl", dir) >= (int)sizeof(path) || stat(path, &st) ||
	    !S_ISREG(st.st_mode))
		return 0;
	return snprintf(path, sizeof(path), "%s/validation/record", dir) < (int)sizeof(path) &&
	       stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The item directory (absolute) into out: -C dir, else the nearest one at
 * or above the current directory, else $PACKET_DIR. 0, or 1 after
 * reporting. */
static int find_item(const char *dir, char *out, size_t size)
{
	char cwd[PATH_MAX], *slash;
	const char *env = getenv("PACKET_DIR");

	if (dir) {
		if (!realpath(dir, out))
			return cli_fail("record", "%s: %s", dir, strerror(errno));
		if (!is_item_dir(out))
			return cli_fail("record", "%s: not an item directory of a packetfs mount",
					dir);
		return 0;
	}
	if (getcwd(cwd, sizeof(cwd))) {
		for (;;) {
			if (is_item_dir(cwd)) {
				snprintf(out, size, "%s", cwd);
				return 0;
			}
			slash = strrchr(cwd, '/');
			if (!slash || slash == cwd)
				break;
			*slash = '\0';
		}
	}
	if (env && env[0] && realpath(env, out) && is_item_dir(out))
		return 0;
	return cli_fail("record", "not inside an item directory (use -C ITEM_DIR)");
}

/* ---- the answer ---- */

struct answer {
	int run;                 /* 0: none */
	char recipe[128];
	char log[512];           /* item-relative */
	char status[32];
	int has_exit_code, exit_code;
	int signal;
	char note[1024];
	char error[1024];        /* "ENAME: why", "" when none */
};

/* Reads the handle's answer (a read at offset 0 renders it anew) into a.
 * 0 or -errno. */
static int read_answer(int fd, struct answer *a)
{
	char text[65536], *line, *next, *colon, *v;
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(text) - 1) {
		n = util_pread(fd, text + len, sizeof(text) - 1 - len, len);
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	memset(a, 0, sizeof(*a));
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? (*next = '\0', next + 1) : line + strlen(line);
		colon = strstr(line, ": ");
		if (!colon)
			continue;
		*colon = '\0';
		v = colon + 2;
		if (strcmp(line, "run") == 0)
			a->run = atoi(v);
		else if (strcmp(line, "recipe") == 0)
			snprintf(a->recipe, sizeof(a->recipe), "%s", v);
		else if (strcmp(line, "log") == 0)
			snprintf(a->log, sizeof(a->log), "%s", v);
		else if (strcmp(line, "status") == 0)
			snprintf(a->status, sizeof(a->status), "%s", v);
		else if (strcmp(line, "exit_code") == 0)
			a->has_exit_code = 1, a->exit_code = atoi(v);
		else if (strcmp(line, "signal") == 0)
			a->signal = atoi(v);
		else if (strcmp(line, "note") == 0)
			snprintf(a->note, sizeof(a->note), "%s", v);
		else if (strcmp(line, "error") == 0)
			snprintf(a->error, sizeof(a->error), "%s", v);
	}
	return 0;
}

static int ended(const struct answer *a)
{
	return a->status[0] && strcmp(a->status, "queued") != 0 && strcmp(a->status, "running") != 0;
}

/* The reason of a's error ("ENAME: why" gives why), or fallback. */
static const char *error_why(const struct answer *a, const char *fallback)
{
	const char *sep = strstr(a->error, ": ");

	return sep ? sep + 2 : a->error[0] ? a->error : fallback;
}

/* ---- the log on stdout ---- */

/* Writes all of data to stdout; a failure (a closed pipe) ends the
 * output, not the run. */
static void out(const char *data, size_t len)
{
	(void)util_write_all(STDOUT_FILENO, data, len);
}

enum filter_state {
	HEADER,      /* in the engine's header lines */
	AFTER_BLANK, /* after the blank line that ends them: the environment block may follow */
	ENV,         /* in the environment block ("# env.KEY: VALUE" lines up to "# env.end") */
	BODY,        /* the command's output */
};

struct log_filter {
	enum filter_state state;
	struct buf line; /* before BODY: the line being read */
	struct buf held; /* BODY: output not printed yet, from a newline that may start the footer */
};

static int starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(s, prefix, n) == 0;
}

/*
 * Where the tail of held that may be the engine's footer begins, or
 * held.len when none. The footer is a newline (the engine's, which ends a
 * last line the command left open, or stands alone) followed by FOOTER
 * lines, each appended whole, the newline with the first. So at the end
 * of what the log held (short), only such a tail of complete FOOTER lines
 * is held back; after a read that filled its buffer (more at once), also
 * a newline followed by FOOTER lines and a last line that may still become
 * one.
 */
static size_t footer_start(const struct buf *b, int short_read)
{
	const char *d = b->data, *nl;
	size_t end = b->len, start, at, lines = 0;

	if (!d || !(nl = memrchr(d, '\n', end)))
		return b->len;
	/* The last line, maybe incomplete. */
	start = (size_t)(nl - d) + 1;
	if (start < end && (short_read || memcmp(d + start, FOOTER, end - start < FOOTER_LEN
								      ? end - start : FOOTER_LEN) != 0))
		return b->len;
	at = start - 1;
	/* Complete FOOTER lines before it, and the newline before them. */
	while (at > 0 && (nl = memrchr(d, '\n', at))) {
		start = (size_t)(nl - d) + 1;
		if (!starts_with(d + start, at - start, FOOTER))
			break;
		at = start - 1;
		lines++;
	}
	return lines || !short_read ? at : b->len;
}

/* Prints the output held back, up to where the footer may begin. */
static void release(struct log_filter *f, int short_read)
{
	size_t at = footer_start(&f->held, short_read);

	if (at == 0)
		return; /* nothing held, or all of it may be the footer */
	out(f->held.data, at);
	memmove(f->held.data, f->held.data + at, f->held.len - at);
	f->held.len -= at;
}

/* Output bytes of the command, held until release. */
static void body(struct log_filter *f, const char *data, size_t len)
{
	if (buf_append(&f->held, data, len)) {
		out(f->held.data, f->held.len); /* out of memory: unfiltered */
		out(data, len);
		f->held.len = 0;
	}
}

/* A whole line (newline excluded) before the command's output. */
static void header_line(struct log_filter *f, const char *s, size_t len)
{
	if (len == 9 && memcmp(s, "# env.end", 9) == 0) {
		f->state = BODY; /* the output follows at once */
	} else if (f->state == HEADER && len > 0 && s[0] == '#') {
		/* a header line (also a Slurm executor's, and an environment block
		 * without the blank line before it) */
	} else if (f->state == HEADER && len == 0) {
		f->state = AFTER_BLANK;
	} else if (f->state != HEADER && starts_with(s, len, "# env.")) {
		f->state = ENV;
	} else {
		f->state = BODY;
		body(f, s, len);
		body(f, "\n", 1);
	}
}

/* Bytes read from the log; short_read: the read found the log's end. */
static void filter_feed(struct log_filter *f, const char *data, size_t len, int short_read)
{
	const char *nl;

	while (len > 0 && f->state != BODY) {
		nl = memchr(data, '\n', len);
		if (!nl) {
			buf_append(&f->line, data, len);
			return;
		}
		buf_append(&f->line, data, (size_t)(nl - data));
		len -= (size_t)(nl - data) + 1;
		data = nl + 1;
		header_line(f, f->line.data ? f->line.data : "", f->line.len);
		f->line.len = 0;
	}
	if (len > 0)
		body(f, data, len);
	if (f->state == BODY)
		release(f, short_read);
}

/* The log is complete: what is held back is printed unless it is the
 * footer (a newline, then whole FOOTER lines). */
static void filter_end(struct log_filter *f)
{
	const struct buf *h = &f->held;

	if (f->state != BODY && f->line.len && f->line.data[0] != '#')
		out(f->line.data, f->line.len);
	if (f->state == BODY)
		release(f, 1);
	if (h->len && !(h->len > 1 && h->data[0] == '\n' && h->data[h->len - 1] == '\n' &&
			starts_with(h->data + 1, h->len - 1, FOOTER)))
		out(h->data, h->len);
	buf_free(&f->line);
	buf_free(&f->held);
}

/* ---- the request ---- */

/* The request line for recipe and command (NULL-terminated), with gpus and
 * timeout when >= 0, and the stage run's credential when the environment
 * has one ($PACKET_RUN_CREDENTIAL, docs/recorder.md). Caller frees; NULL on
 * ENOMEM. */
static char *request_line(const char *recipe, char **command, long gpus, long timeout)
{
	cJSON *o = cJSON_CreateObject(), *argv = cJSON_CreateArray();
	const char *cred = getenv("PACKET_RUN_CREDENTIAL");
	char *text = NULL, *line = NULL;
	int ok = o && argv;

	if (ok) {
		cJSON_AddItemToObject(o, "recipe", cJSON_CreateString(recipe));
		cJSON_AddItemToObject(o, "argv", argv);
		argv = NULL;
		while (*command)
			cJSON_AddItemToArray(cJSON_GetObjectItem(o, "argv"),
					     cJSON_CreateString(*command++));
		if (gpus >= 0)
			cJSON_AddNumberToObject(o, "gpus", (double)gpus);
		if (timeout >= 0)
			cJSON_AddNumberToObject(o, "timeout_s", (double)timeout);
		if (cred && cred[0])
			cJSON_AddItemToObject(o, "credential", cJSON_CreateString(cred));
		text = cJSON_PrintUnformatted(o);
	}
	if (text && asprintf(&line, "%s\n", text) < 0)
		line = NULL;
	free(text);
	cJSON_Delete(argv);
	cJSON_Delete(o);
	return line;
}

/* A whole number for option opt into *out. 0, or 2 after reporting. */
static int number(const char *opt, const char *s, long max, long *out)
{
	char *end, why[256];
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max) {
		snprintf(why, sizeof(why), "%s: not a whole number from 0 to %ld: '%s'", opt, max, s);
		return cli_usage_error("record", why);
	}
	*out = v;
	return 0;
}

/* ---- the run ---- */

struct session {
	char dir[PATH_MAX];   /* the item directory */
	char mnt[PATH_MAX];   /* its mount point */
	const char *recipe;
	int rec_fd, log_fd;
	struct answer a;
	int cancelled;        /* the signal that made us cancel, 0 none */
};

/* The daemon went away while run a->run was going on. Returns 1. */
static int daemon_gone(const struct session *s)
{
	return cli_fail("record",
			"run %d: the daemon of %s stopped; the run is recorded as interrupted "
			"when the store is mounted again",
			s->a.run, s->mnt);
}

/* Reads what the log holds past what was read into the filter. 0 at its
 * end, -errno on failure. */
static int drain(struct session *s, struct log_filter *f)
{
	char chunk[65536];
	ssize_t n;

	for (;;) {
		n = cli_read_some(s->log_fd, chunk, sizeof(chunk));
		if (n <= 0)
			return (int)n;
		filter_feed(f, chunk, (size_t)n, (size_t)n < sizeof(chunk));
	}
}

/* Asks for the run's cancellation, once, for signal sig. */
static void cancel(struct session *s, int sig)
{
	ssize_t n;

	s->cancelled = sig;
	fprintf(stderr, "packetfs: record: %s: cancelling run %d\n", s->recipe, s->a.run);
	do
		n = write(s->rec_fd, "cancel\n", 7);
	while (n < 0 && errno == EINTR);
}

/* Streams the log until the run ended. 0, or 1 after reporting. */
static int follow(struct session *s, const sigset_t *waitmask)
{
	struct log_filter f = { HEADER, { NULL, 0, 0 }, { NULL, 0, 0 } };
	struct timespec bound = { POLL_MS / 1000, (POLL_MS % 1000) * 1000000L };
	struct pollfd p[2];
	int r;

	for (;;) {
		r = drain(s, &f);
		if (r == 0)
			r = read_answer(s->rec_fd, &s->a);
		if (r == 0 && ended(&s->a))
			r = drain(s, &f);
		if (r < 0)
			break;
		if (ended(&s->a))
			break;
		if (got_signal && !s->cancelled) {
			cancel(s, got_signal);
			continue;
		}
		p[0].fd = s->log_fd;
		p[0].events = POLLIN;
		p[1].fd = s->rec_fd;
		p[1].events = POLLIN;
		if (ppoll(p, 2, &bound, waitmask) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
	}
	filter_end(&f);
	if (r == -ENOTCONN || r == -ECONNABORTED)
		return daemon_gone(s);
	if (r < 0)
		return cli_fail("record", "%s: %s: %s", s->recipe, s->a.log, strerror(-r));
	return 0;
}

/* The exit status for the ended run of s, telling on stderr what the
 * exit code alone does not say. */
static int outcome(const struct session *s)
{
	const struct answer *a = &s->a;
	int validated = strcmp(a->status, "validated") == 0;
	int failing = strcmp(a->status, "failing") == 0;

	if ((a->has_exit_code || a->signal) && !validated &&
	    !(failing && a->has_exit_code && a->exit_code != 0) &&
	    !(s->cancelled && strcmp(a->status, "cancelled") == 0))
		fprintf(stderr, "packetfs: record: %s: run %d: %s%s%s\n", s->recipe, a->run, a->status,
			a->note[0] ? ": " : "", a->note);
	if (a->has_exit_code)
		return a->exit_code;
	if (a->signal)
		return 128 + a->signal;
	if (s->cancelled && strcmp(a->status, "cancelled") == 0)
		return 128 + s->cancelled;
	return cli_fail("record", "%s: %s%s%s", s->recipe, a->status, a->note[0] ? ": " : "",
			a->note);
}

/* Writes the request and reads its answer. 0, or 1 after reporting. */
static int ask(struct session *s, const char *line)
{
	size_t len = strlen(line);
	ssize_t n;
	int err = 0;

	do
		n = write(s->rec_fd, line, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len)
		err = EIO;
	if (err == ENOTCONN || err == ECONNABORTED)
		return cli_fail("record", "%s: the daemon of %s is not running", s->dir, s->mnt);
	if (read_answer(s->rec_fd, &s->a) < 0)
		memset(&s->a, 0, sizeof(s->a));
	if (err)
		return cli_fail("record", "%s: %s", s->recipe, error_why(&s->a, strerror(err)));
	if (!s->a.run || !s->a.log[0])
		return cli_fail("record", "%s: the mount gave no run for the request", s->recipe);
	return 0;
}

int cli_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "gpus", required_argument, NULL, 'g' },
		{ "timeout", required_argument, NULL, 't' },
		CLI_OPTIONS_END,
	};
	struct session s = { .rec_fd = -1, .log_fd = -1 };
	const char *dir = NULL;
	long gpus = -1, timeout = -1;
	char path[PATH_MAX + 600], *line, *slash;
	sigset_t block, waitmask;
	struct sigaction sa;
	int c, r, dashes, archived;

	for (dashes = 1; dashes < argc && strcmp(argv[dashes], "--") != 0; dashes++)
		;
	cli_opts_reset();
	while ((c = cli_next_option("record", dashes, argv, ":hC:", longopts, &r)) > 0) {
		if (c == 'C') {
			dir = optarg;
		} else if (c == 'g') {
			if ((r = number("--gpus", optarg, 1024, &gpus)))
				return r;
		} else if (c == 't') {
			if ((r = number("--timeout", optarg, 365L * 24 * 3600, &timeout)))
				return r;
		}
	}
	if (c == CLI_OPT_EXIT)
		return r;
	if (optind >= dashes)
		return cli_usage_error("record", "missing RECIPE");
	if (dashes >= argc)
		return cli_usage_error("record", "missing '--' and the command after it");
	if (dashes - optind > 1)
		return cli_usage_error("record", "too many arguments before '--' (the command goes "
						 "after '--')");
	if (dashes + 1 >= argc || argv[dashes + 1][0] == '\0')
		return cli_usage_error("record", "no command after '--'");
	s.recipe = argv[optind];
	if (find_item(dir, s.dir, sizeof(s.dir)))
		return 1;
	/* The mount point: above the item, and above .archive/ for an archived one. */
	snprintf(s.mnt, sizeof(s.mnt), "%s", s.dir);
	slash = strrchr(s.mnt, '/');
	if (slash && slash != s.mnt)
		*slash = '\0';
	slash = strrchr(s.mnt, '/');
	archived = slash && strcmp(slash, "/.archive") == 0;
	if (archived && slash != s.mnt)
		*slash = '\0';
	line = request_line(s.recipe, argv + dashes + 1, gpus, timeout);
	if (!line)
		return cli_fail("record", "%s", strerror(ENOMEM));

	/* The signals that cancel are taken only while waiting (ppoll). */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGHUP);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	snprintf(path, sizeof(path), "%s/validation/record", s.dir);
	s.rec_fd = open(path, O_RDWR | O_CLOEXEC);
	if (s.rec_fd < 0) {
		if (errno == ENOTCONN)
			r = cli_fail("record", "%s: the daemon of %s is not running", s.dir, s.mnt);
		else if (errno == EACCES && archived)
			r = cli_fail("record", "%s: the item is archived: it takes no recorded runs",
				     s.dir);
		else
			r = cli_fail("record", "%s: %s", path, strerror(errno));
		free(line);
		return r;
	}
	r = ask(&s, line);
	free(line);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/%s", s.dir, s.a.log);
		s.log_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s.log_fd < 0)
			r = errno == ENOTCONN ? daemon_gone(&s) :
						cli_fail("record", "%s: %s", path, strerror(errno));
	}
	if (r == 0)
		r = follow(&s, &waitmask);
	if (r == 0)
		r = outcome(&s);
	if (s.log_fd >= 0)
		close(s.log_fd);
	close(s.rec_fd);
	return r;
}
