/*
 * slurm.c - recipe runs as Slurm batch jobs (slurm.h).
 *
 * A job is a struct slurm_job with one repeating timer (the poll) and at
 * most two Slurm commands in flight: one that reads the job's state
 * (sbatch first, then scontrol) and one scancel. Each command is a struct
 * cmd: a uv_process_t with its stdout and stderr pipes, collected into
 * buffers; its done function runs once the process exited and both pipes
 * reached EOF. A job is freed when it finished (or was detached), its
 * timer is closed and no command is left: commands of a detached job run
 * to their end with nobody told.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurm.h"
#include "util.h"

/* Most output copied in one poll while the job runs, so that a job that
 * writes fast cannot hold the loop; its end reads everything. */
#define OUTPUT_PER_POLL (8u << 20)
/* Most bytes kept of a command's stdout or stderr. */
#define CMD_OUTPUT_MAX (64u << 10)

struct slurm_job;

struct cmd {
	struct slurm_job *job;
	uv_process_t proc;
	uv_pipe_t out, err;
	struct buf obuf, ebuf;
	int64_t exit_status;
	int term_signal;
	int spawn_error;     /* uv_spawn failed: negative errno */
	int exited, eofs;    /* the process exited; pipes at EOF (0..2) */
	int handles;         /* handles not yet closed */
	void (*done)(struct slurm_job *j, struct cmd *c);
	struct cmd *next;    /* the job's commands in flight */
};

struct slurm_job {
	uv_loop_t *loop;
	uv_timer_t timer;
	int timer_open;
	struct slurm_callbacks cb;
	void *arg;
	char id[32];
	char *output;
	int64_t offset;
	int fd;
	unsigned timeout_s;
	int64_t started_ns;  /* when the job started running (0: not seen) */
	int restarts;        /* Slurm's Restarts as last seen; -1 unknown (attached) */
	int fail_streak;     /* scontrol calls that failed in a row */
	int midline;         /* the output so far does not end with '\n' */
	int state_busy;      /* sbatch or scontrol in flight */
	int want_cancel, cancel_sent, timed_out;
	int finish_pending;  /* end at the next poll (a failed submission) */
	int finished, detached;
	int ncmds;
	struct cmd *cmds;    /* in flight */
	struct slurm_result res;
};

/* scontrol failures in a row after which the log says so (once). */
#define FAILS_NOTED 10

/* ---- jobs ---- */

static void job_maybe_free(struct slurm_job *j)
{
	if ((j->finished || j->detached) && !j->timer_open && j->ncmds == 0) {
		if (j->fd >= 0)
			close(j->fd);
		free(j->output);
		free(j);
	}
}

static void timer_closed(uv_handle_t *h)
{
	struct slurm_job *j = h->data;

	j->timer_open = 0;
	job_maybe_free(j);
}

static void job_stop(struct slurm_job *j)
{
	if (j->timer_open && !uv_is_closing((uv_handle_t *)&j->timer))
		uv_close((uv_handle_t *)&j->timer, timer_closed);
}

/* Copies what the output file gained (at most limit bytes, 0: no limit)
 * to the output callback. reopen: open the file again first, so that a
 * network file system shows its final size (close-to-open consistency). */
static void read_output(struct slurm_job *j, int reopen, size_t limit)
{
	char *chunk;
	size_t done = 0;
	ssize_t n;

	if (reopen && j->fd >= 0) {
		close(j->fd);
		j->fd = -1;
	}
	if (j->fd < 0) {
		j->fd = open(j->output, O_RDONLY | O_CLOEXEC);
		if (j->fd < 0)
			return; /* not made yet: the job has not started */
	}
	chunk = malloc(64 * 1024);
	if (!chunk)
		return;
	while (!limit || done < limit) {
		n = pread(j->fd, chunk, 64 * 1024, (off_t)j->offset);
		if (n <= 0)
			break;
		j->offset += n;
		done += (size_t)n;
		j->midline = chunk[n - 1] != '\n';
		if (!j->detached && j->cb.output)
			j->cb.output(j->arg, chunk, (size_t)n, j->offset);
	}
	free(chunk);
}

/* The job ended (or never started): reports res and lets go. */
static void job_finish(struct slurm_job *j)
{
	if (j->finished)
		return;
	j->finished = 1;
	job_stop(j);
	if (!j->detached && j->cb.exit)
		j->cb.exit(j->arg, &j->res);
	job_maybe_free(j);
}

/* Tells the log line (a '\n' first when the output stopped mid-line). */
static void job_note(struct slurm_job *j, const char *line)
{
	char text[600];

	if (j->detached || !j->cb.note)
		return;
	snprintf(text, sizeof(text), "%s%s", j->midline ? "\n" : "", line);
	j->midline = 0;
	j->cb.note(j->arg, text, j->offset);
}

/* ---- commands ---- */

static void cmd_closed(uv_handle_t *h)
{
	struct cmd *c = h->data;
	struct slurm_job *j = c->job;
	struct cmd **pp;

	if (--c->handles > 0)
		return;
	for (pp = &j->cmds; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	buf_free(&c->obuf);
	buf_free(&c->ebuf);
	free(c);
	j->ncmds--;
	job_maybe_free(j);
}

static void cmd_close(struct cmd *c, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, cmd_closed);
}

/* Runs the done function once the process exited and both pipes ended. */
static void cmd_check(struct cmd *c)
{
	if (!c->exited || c->eofs < 2)
		return;
	if (!c->job->finished)
		c->done(c->job, c);
	cmd_close(c, (uv_handle_t *)&c->out);
	cmd_close(c, (uv_handle_t *)&c->err);
	cmd_close(c, (uv_handle_t *)&c->proc);
}

static void cmd_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
	static char scratch[16 * 1024]; /* loop thread only */

	(void)h;
	(void)suggested;
	b->base = scratch;
	b->len = sizeof(scratch);
}

static void cmd_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct cmd *c = s->data;
	struct buf *into = s == (uv_stream_t *)&c->out ? &c->obuf : &c->ebuf;

	if (n > 0) {
		if (into->len + (size_t)n <= CMD_OUTPUT_MAX)
			buf_append(into, b->base, (size_t)n);
		return;
	}
	if (n < 0) {
		uv_read_stop(s);
		c->eofs++;
		cmd_check(c);
	}
}

static void cmd_exit(uv_process_t *p, int64_t status, int sig)
{
	struct cmd *c = p->data;

	c->exit_status = status;
	c->term_signal = sig;
	c->exited = 1;
	cmd_check(c);
}

/*
 * Starts argv (PATH is searched) with env (NULL: this process's) for job
 * j; done runs when it ended. When it cannot start, done runs at once
 * with spawn_error set. 0 or -ENOMEM.
 */
static int cmd_run(struct slurm_job *j, char *const *argv, char *const *env,
		   void (*done)(struct slurm_job *, struct cmd *))
{
	uv_process_options_t opt;
	uv_stdio_container_t stdio[3];
	struct cmd *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->job = j;
	c->done = done;
	buf_init(&c->obuf);
	buf_init(&c->ebuf);
	uv_pipe_init(j->loop, &c->out, 0);
	uv_pipe_init(j->loop, &c->err, 0);
	c->out.data = c->err.data = c->proc.data = c;
	c->handles = 3;
	j->ncmds++;
	c->next = j->cmds;
	j->cmds = c;
	memset(&opt, 0, sizeof(opt));
	memset(stdio, 0, sizeof(stdio));
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&c->out;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&c->err;
	opt.file = argv[0];
	opt.args = (char **)argv;
	opt.env = (char **)env;
	opt.stdio = stdio;
	opt.stdio_count = 3;
	opt.exit_cb = cmd_exit;
	rc = uv_spawn(j->loop, &c->proc, &opt);
	if (rc) {
		c->spawn_error = rc;
		c->exit_status = 127;
		buf_printf(&c->ebuf, "cannot run %s: %s", argv[0], uv_strerror(rc));
		c->exited = 1;
		c->eofs = 2;
		cmd_check(c);
		return 0;
	}
	uv_read_start((uv_stream_t *)&c->out, cmd_alloc, cmd_read);
	uv_read_start((uv_stream_t *)&c->err, cmd_alloc, cmd_read);
	return 0;
}

/* The last non-empty line of a command's stderr without Slurm's
 * "PROGRAM: error: " prefix, into out. */
static void last_error_line(const struct cmd *c, char *out, size_t size)
{
	const char *s = c->ebuf.data ? c->ebuf.data : "", *line = s, *p, *end;
	size_t len;

	for (p = s; *p; p++)
		if (*p == '\n' && p[1] && p[1] != '\n')
			line = p + 1;
	end = strchr(line, '\n');
	len = end ? (size_t)(end - line) : strlen(line);
	p = memmem(line, len, "error: ", 7);
	if (p) {
		len -= (size_t)(p + 7 - line);
		line = p + 7;
	}
	if (len == 0) {
		snprintf(out, size, "exit status %lld", (long long)c->exit_status);
		return;
	}
	snprintf(out, size, "%.*s", (int)len, line);
}

/* ---- parsing what scontrol and squeue print ---- */

/* The value of " KEY=" in line (up to the next space) into out. */
static int field(const char *line, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key), n;
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			p += kl + 1;
			n = strcspn(p, " \n");
			snprintf(out, size, "%.*s", (int)n, p);
			return 0;
		}
		p += kl;
	}
	return -ENOENT;
}

/* "IDX:0-1,3" after GRES= (or in TRES-less lines, GRES_IDX=gpu(IDX:0)). */
static void parse_idx(const char *line, int *gpus, int *ngpus)
{
	const char *p = strstr(line, "(IDX:");
	char *end;
	long a, b;

	*ngpus = 0;
	if (!p)
		return;
	p += 5;
	while (*ngpus < 16 && *p >= '0' && *p <= '9') {
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (; a <= b && *ngpus < 16; a++)
			gpus[(*ngpus)++] = (int)a;
		if (*end != ',')
			break;
		p = end + 1;
	}
}

/* "[D-]HH:MM:SS" or "MM:SS" into seconds, -1 when unknown. */
static long parse_duration(const char *s)
{
	long d = 0, part[3] = {0, 0, 0};
	int n = 0;
	char *end;

	if (strchr(s, '-')) {
		d = strtol(s, &end, 10);
		s = end + 1;
	}
	while (n < 3) {
		if (*s < '0' || *s > '9')
			return -1;
		part[n++] = strtol(s, &end, 10);
		if (*end != ':')
			break;
		s = end + 1;
	}
	if (n == 3)
		return d * 86400 + part[0] * 3600 + part[1] * 60 + part[2];
	if (n == 2)
		return d * 86400 + part[0] * 60 + part[1];
	return -1;
}

int slurm_parse_job(const char *line, struct slurm_info *info)
{
	char v[64];

	memset(info, 0, sizeof(*info));
	if (field(line, "JobState", info->state, sizeof(info->state)))
		return -EINVAL;
	if (field(line, "Reason", info->reason, sizeof(info->reason)) ||
	    strcmp(info->reason, "None") == 0)
		info->reason[0] = '\0';
	if (field(line, "BatchHost", info->node, sizeof(info->node)))
		info->node[0] = '\0';
	if (field(line, "ExitCode", v, sizeof(v)) == 0)
		sscanf(v, "%d:%d", &info->exit_code, &info->signal);
	info->run_s = field(line, "RunTime", v, sizeof(v)) == 0 ? parse_duration(v) : -1;
	info->restarts = field(line, "Restarts", v, sizeof(v)) == 0 ? atoi(v) : 0;
	parse_idx(line, info->gpus, &info->ngpus);
	return 0;
}

int slurm_parse_queue(const char *line, char id[32], struct slurm_info *info)
{
	const char *f[5], *p = line, *end;
	size_t len[5];
	char v[32];
	int i;

	/* Five fields end in '|'; the reason is the rest of the line less its
	 * last '|'. */
	for (i = 0; i < 5; i++) {
		f[i] = p;
		len[i] = strcspn(p, "|\n");
		if (p[len[i]] != '|')
			return -EINVAL;
		p += len[i] + 1;
	}
	end = p + strcspn(p, "\n");
	if (end == p || end[-1] != '|' || len[0] == 0 || len[0] >= 32 || len[1] == 0 ||
	    len[1] >= sizeof(info->state) || strspn(f[0], "0123456789_") != len[0] ||
	    len[2] == 0 || strspn(f[2], "0123456789") != len[2] || len[3] >= sizeof(v))
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	snprintf(id, 32, "%.*s", (int)len[0], f[0]);
	snprintf(info->state, sizeof(info->state), "%.*s", (int)len[1], f[1]);
	info->restarts = atoi(f[2]);
	snprintf(v, sizeof(v), "%.*s", (int)len[3], f[3]);
	info->run_s = parse_duration(v);
	if (!(len[4] == 3 && strncmp(f[4], "n/a", 3) == 0))
		snprintf(info->node, sizeof(info->node), "%.*s", (int)len[4], f[4]);
	if (!(end - 1 - p == 4 && strncmp(p, "None", 4) == 0))
		snprintf(info->reason, sizeof(info->reason), "%.*s", (int)(end - 1 - p), p);
	return 0;
}

int slurm_state_final(const char *state)
{
	static const char *const final[] = {
		"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "PREEMPTED",
		"OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", NULL,
	};
	int i;

	for (i = 0; final[i]; i++)
		if (strcmp(state, final[i]) == 0)
			return 1;
	return 0;
}

/* ---- following a job ---- */

static void cancel_done(struct slurm_job *j, struct cmd *c)
{
	/* A job that already ended refuses, and its state says the rest; any
	 * other failure (the controller unreachable) is tried again at the
	 * next poll, until the job's state is final. */
	if ((c->exit_status != 0 || c->spawn_error) &&
	    !(c->ebuf.data && (strstr(c->ebuf.data, "already completing or completed") ||
			       strstr(c->ebuf.data, "Invalid job id"))))
		j->cancel_sent = 0;
}

static void send_cancel(struct slurm_job *j)
{
	char *argv[] = {"scancel", j->id, NULL};

	if (!j->id[0] || j->cancel_sent || j->finished)
		return;
	j->cancel_sent = 1;
	cmd_run(j, argv, NULL, cancel_done);
}

/* The start file's path (DIR/STEM.start beside DIR/STEM.out) into out. */
static void start_file(const struct slurm_job *j, char *out, size_t size)
{
	size_t n = strlen(j->output);

	if (n > 4 && strcmp(j->output + n - 4, ".out") == 0)
		n -= 4;
	snprintf(out, size, "%.*s.start", (int)n, j->output);
}

/*
 * What the job script wrote when it started (SLURMD_NODENAME and
 * SLURM_JOB_GPUS, the global indices of its GPUs): the node and devices
 * of a job that ended before any poll saw it running, when scontrol no
 * longer shows GRES=...(IDX:...). Leaves node and gpus alone without it.
 */
static void read_start_file(const struct slurm_job *j, char node[256], int *gpus, int *ngpus)
{
	char path[4200], line[512], name[256], list[256] = "";
	const char *p;
	char *end;
	FILE *f;

	start_file(j, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && sscanf(line, "%255s %255s", name, list) >= 1 &&
	    strcmp(name, "-") != 0)
		snprintf(node, 256, "%s", name);
	fclose(f);
	if (!list[0])
		return;
	*ngpus = 0;
	for (p = list; *ngpus < 16 && *p >= '0' && *p <= '9'; p = end + 1) {
		gpus[(*ngpus)++] = (int)strtol(p, &end, 10);
		if (*end != ',')
			break;
	}
}

static void state_done(struct slurm_job *j, struct cmd *c)
{
	struct slurm_info in;
	char reason[256], line[512];
	int ours, final;
	int64_t now = util_now_ns();

	j->state_busy = 0;
	if (c->exit_status != 0 || c->spawn_error) {
		/* Purged after MinJobAge, or never known to this controller;
		 * other errors (the controller unreachable) are tried again. */
		if (c->ebuf.data && strstr(c->ebuf.data, "Invalid job id")) {
			read_output(j, 1, 0);
			j->res.lost = 1;
			j->res.ran = j->started_ns || j->offset > 0;
			snprintf(j->res.reason, sizeof(j->res.reason),
				 "Slurm does not know job %s", j->id);
			job_finish(j);
			return;
		}
		if (++j->fail_streak == FAILS_NOTED) {
			last_error_line(c, reason, sizeof(reason));
			snprintf(line, sizeof(line), "# slurm: cannot read the state of job %s: %s "
				 "(trying again)\n", j->id, reason);
			job_note(j, line);
		}
		return;
	}
	j->fail_streak = 0;
	if (!c->obuf.data || slurm_parse_job(c->obuf.data, &in))
		return;
	final = slurm_state_final(in.state);
	if (j->restarts < 0) {
		j->restarts = in.restarts;
	} else if (in.restarts > j->restarts) {
		/* Requeued (preemption, a node failure, scontrol requeue): the
		 * job runs again from the start; --open-mode=append keeps the
		 * output of every attempt in the file, one after the other. */
		j->restarts = in.restarts;
		j->started_ns = 0;
		read_output(j, 0, 0);
		snprintf(line, sizeof(line), "# slurm: job %s was requeued (restart %d); the output "
			 "of its next attempt follows\n", j->id, in.restarts);
		job_note(j, line);
	}
	if (!j->started_ns && (strcmp(in.state, "RUNNING") == 0 ||
			       strcmp(in.state, "COMPLETING") == 0 ||
			       (final && (in.run_s > 0 || in.node[0])))) {
		j->started_ns = now - (in.run_s > 0 ? (int64_t)in.run_s * 1000000000 : 0);
		j->res.ran = 1;
		read_start_file(j, in.node, in.gpus, &in.ngpus);
		if (!j->detached && j->cb.started)
			j->cb.started(j->arg, in.node, in.gpus, in.ngpus);
	}
	if (j->timeout_s && j->started_ns && !j->want_cancel && !final &&
	    now - j->started_ns >= (int64_t)j->timeout_s * 1000000000) {
		j->timed_out = 1;
		j->want_cancel = 1;
		send_cancel(j);
	}
	if (!final)
		return;
	read_output(j, 1, 0);
	j->res.ran = j->res.ran || j->offset > 0;
	snprintf(j->res.state, sizeof(j->res.state), "%s", in.state);
	snprintf(j->res.reason, sizeof(j->res.reason), "%s", in.reason);
	j->res.r.exit_code = in.exit_code;
	j->res.r.term_signal = in.signal;
	/* Only a job that Slurm cancelled was ended by our scancel. */
	ours = j->want_cancel && strcmp(in.state, "CANCELLED") == 0;
	j->res.r.timed_out = ours && j->timed_out;
	j->res.r.cancelled = ours && !j->timed_out;
	j->res.cancel_missed = j->want_cancel && !ours;
	if (in.run_s > 0 || !j->started_ns)
		j->res.r.duration_s = in.run_s > 0 ? (double)in.run_s : 0;
	else
		j->res.r.duration_s = (double)(now - j->started_ns) / 1e9;
	job_finish(j);
}

static void poll_state(struct slurm_job *j)
{
	char *argv[] = {"scontrol", "-o", "-d", "show", "job", j->id, NULL};

	if (j->state_busy || !j->id[0])
		return;
	j->state_busy = 1;
	if (cmd_run(j, argv, NULL, state_done))
		j->state_busy = 0;
}

static void tick(uv_timer_t *t)
{
	struct slurm_job *j = t->data;

	if (j->finished || j->detached)
		return;
	if (j->finish_pending) {
		job_finish(j);
		return;
	}
	if (!j->id[0])
		return; /* sbatch has not answered yet */
	if (j->want_cancel && !j->cancel_sent)
		send_cancel(j);
	read_output(j, 0, OUTPUT_PER_POLL);
	poll_state(j);
}

static int job_new(uv_loop_t *loop, const struct pfs_executor *ex, const struct slurm_callbacks *cb,
		   void *arg, unsigned timeout_s, struct slurm_job **out)
{
	struct slurm_job *j = calloc(1, sizeof(*j));
	uint64_t first;

	if (!j)
		return -ENOMEM;
	j->loop = loop;
	j->cb = *cb;
	j->arg = arg;
	j->fd = -1;
	j->timeout_s = timeout_s;
	uv_timer_init(loop, &j->timer);
	j->timer.data = j;
	j->timer_open = 1;
	first = ex->poll_ms < 200 ? (uint64_t)ex->poll_ms : 200;
	uv_timer_start(&j->timer, tick, first, (uint64_t)ex->poll_ms);
	*out = j;
	return 0;
}

/* ---- submission ---- */

static void sbatch_done(struct slurm_job *j, struct cmd *c)
{
	const char *s = c->obuf.data ? c->obuf.data : "";
	size_t n = strspn(s, "0123456789_");

	j->state_busy = 0;
	if (c->exit_status != 0 || c->spawn_error || n == 0 || n >= sizeof(j->id)) {
		j->res.refused = 1;
		last_error_line(c, j->res.reason, sizeof(j->res.reason));
		if (c->spawn_error)
			j->finish_pending = 1; /* inside slurm_submit: end from the loop */
		else
			job_finish(j);
		return;
	}
	memcpy(j->id, s, n);
	j->id[n] = '\0';
	if (j->detached) {
		/* Shut down while sbatch ran: nobody recorded the id, so nobody
		 * could follow the job after a restart; it must not run. */
		send_cancel(j);
		return;
	}
	if (j->cb.submitted)
		j->cb.submitted(j->arg, j->id, j->output);
	if (j->want_cancel)
		send_cancel(j);
}

/* Appends s to b in single quotes for sh. */
static void sh_quote(struct buf *b, const char *s)
{
	buf_puts(b, "'");
	for (; *s; s++) {
		if (*s == '\'')
			buf_puts(b, "'\\''");
		else
			buf_append(b, s, 1);
	}
	buf_puts(b, "'");
}

/* Writes the job script that records where it started (read_start_file)
 * and runs program: 0 or -errno. */
static int write_script(const char *path, const char *start, const char *program)
{
	struct buf b;
	int rc;

	buf_init(&b);
	buf_puts(&b, "#!/bin/sh\n# packetfs: a recipe run as a Slurm batch job. It notes its node "
		     "and GPUs, then runs\n# the recipe from its own path.\n"
		     "printf '%s %s\\n' \"${SLURMD_NODENAME:--}\" \"${SLURM_JOB_GPUS:-}\" >");
	sh_quote(&b, start);
	buf_puts(&b, " 2>/dev/null\nexec ");
	sh_quote(&b, program);
	buf_puts(&b, "\n");
	if (!b.data)
		return -ENOMEM;
	rc = util_write_file(path, b.data, b.len);
	if (rc == 0 && chmod(path, 0755) < 0)
		rc = -errno;
	buf_free(&b);
	return rc;
}

int slurm_submit(uv_loop_t *loop, const struct slurm_spec *spec, const struct slurm_callbacks *cb,
		 void *arg, struct slurm_job **out)
{
	char script[4096], opt[6][4200];
	char **argv = NULL;
	struct slurm_job *j;
	size_t k;
	int rc, n = 0;

	rc = job_new(loop, spec->ex, cb, arg, spec->timeout_s, &j);
	if (rc)
		return rc;
	if (asprintf(&j->output, "%s/%s.out", spec->dir, spec->stem) < 0) {
		j->output = NULL;
		j->finished = 1;
		job_stop(j);
		return -ENOMEM;
	}
	/* Leftovers of the same names would be read as this job's. */
	unlink(j->output);
	start_file(j, script, sizeof(script));
	unlink(script);
	snprintf(opt[0], sizeof(opt[0]), "%s", script);
	snprintf(script, sizeof(script), "%s/%s.sh", spec->dir, spec->stem);
	rc = write_script(script, opt[0], spec->program);
	if (rc) {
		j->finished = 1;
		job_stop(j);
		return rc;
	}
	snprintf(opt[n++], sizeof(opt[0]), "--job-name=%s", spec->name);
	snprintf(opt[n++], sizeof(opt[0]), "--output=%s", j->output);
	snprintf(opt[n++], sizeof(opt[0]), "--chdir=%s", spec->cwd);
	if (spec->timeout_s)
		snprintf(opt[n++], sizeof(opt[0]), "--time=%u", (spec->timeout_s + 59) / 60 + 2);
	if (spec->gpus > 0)
		snprintf(opt[n++], sizeof(opt[0]), "--gres=gpu:%d", spec->gpus);
	rc = strv_push(&argv, "sbatch");
	rc = rc ? rc : strv_push(&argv, "--parsable");
	rc = rc ? rc : strv_push(&argv, "--export=ALL");
	rc = rc ? rc : strv_push(&argv, "--open-mode=append");
	for (k = 0; rc == 0 && k < (size_t)n; k++)
		rc = strv_push(&argv, opt[k]);
	if (rc == 0 && spec->ex->partition) {
		snprintf(opt[0], sizeof(opt[0]), "--partition=%s", spec->ex->partition);
		rc = strv_push(&argv, opt[0]);
	}
	if (rc == 0 && spec->ex->account) {
		snprintf(opt[0], sizeof(opt[0]), "--account=%s", spec->ex->account);
		rc = strv_push(&argv, opt[0]);
	}
	for (k = 0; rc == 0 && spec->ex->extra_args && spec->ex->extra_args[k]; k++)
		rc = strv_push(&argv, spec->ex->extra_args[k]);
	rc = rc ? rc : strv_push(&argv, script);
	if (rc == 0) {
		j->state_busy = 1;
		rc = cmd_run(j, argv, spec->env, sbatch_done);
	}
	strv_free(argv);
	if (rc) {
		j->finished = 1;
		job_stop(j);
		return rc;
	}
	*out = j;
	return 0;
}

int slurm_attach(uv_loop_t *loop, const struct pfs_executor *ex, const char *job_id,
		 const char *output, int64_t offset, unsigned timeout_s,
		 const struct slurm_callbacks *cb, void *arg, struct slurm_job **out)
{
	struct slurm_job *j;
	int rc;

	rc = job_new(loop, ex, cb, arg, timeout_s, &j);
	if (rc)
		return rc;
	snprintf(j->id, sizeof(j->id), "%s", job_id);
	j->output = strdup(output);
	j->offset = offset;
	j->restarts = -1;
	if (!j->output) {
		j->finished = 1;
		job_stop(j);
		return -ENOMEM;
	}
	*out = j;
	return 0;
}

void slurm_cancel(struct slurm_job *j)
{
	if (j->finished || j->detached || j->want_cancel)
		return;
	j->want_cancel = 1;
	send_cancel(j);
}

void slurm_detach(struct slurm_job *j)
{
	struct cmd *c;

	if (j->finished || j->detached)
		return;
	j->detached = 1;
	for (c = j->cmds; c; c = c->next)
		if (!c->exited)
			uv_process_kill(&c->proc, SIGTERM);
	job_stop(j);
	job_maybe_free(j);
}

const char *slurm_job_id(const struct slurm_job *j)
{
	return j->id;
}

int slurm_find_job_by_output(const char *output, char id[32])
{
	char *line = NULL, want[4200];
	size_t cap = 0, wl;
	int rc = -ENOENT, status;
	FILE *f;

	wl = (size_t)snprintf(want, sizeof(want), " StdOut=%s", output);
	if (wl >= sizeof(want))
		return -ENOENT;
	f = popen("scontrol -o show job 2>/dev/null", "re");
	if (!f)
		return -EIO;
	while (getline(&line, &cap, f) > 0) {
		char *p = strstr(line, want);

		if (rc == 0 || !p || (p[wl] != ' ' && p[wl] != '\n' && p[wl] != '\0') ||
		    strncmp(line, "JobId=", 6) != 0)
			continue;
		snprintf(id, 32, "%.*s", (int)strspn(line + 6, "0123456789_"), line + 6);
		rc = id[0] ? 0 : -ENOENT;
	}
	free(line);
	status = pclose(f);
	if (rc != 0 && (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
		rc = -EIO;
	return rc;
}
