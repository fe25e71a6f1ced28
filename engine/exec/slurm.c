/*
 * slurm.c - recipe runs as Slurm batch jobs (slurm.h): submission, the
 * poller and what each job's state means; slurm_parse.c reads Slurm's
 * answers, slurm_cmd.c runs its commands.
 *
 * A poller (struct slurm_poller) holds the jobs followed on one loop and
 * one repeating timer. At every tick it copies what each job's output file
 * gained, sends again a cancel that did not get through, and reads the
 * state of every job that has an id with one squeue (at most one in
 * flight): the cost of a poll does not grow with the number of jobs. What
 * squeue does not show comes from `scontrol -o -d show job ID`, run for one
 * job at an event only: when squeue first shows it running (the GPU
 * indices), when squeue shows it ended (the exit code, RunTime), and when
 * squeue does not show it, or fails calling its id invalid (asked for one
 * job only, squeue fails when Slurm does not know it): scontrol then says
 * whether Slurm still knows the job. While that scontrol runs, the job is
 * left out of the squeue.
 *
 * Each Slurm command is a struct cmd, a child process (slurm_cmd.c;
 * slurm_int.h holds what the two files share). A job's commands (sbatch, then
 * scontrol, and scancel; at most one of sbatch and scontrol) are on the
 * job's list, the squeue on the poller's. A job leaves the poller's list
 * when it finished or was detached, and is freed when no command of its is
 * left: commands of a detached job run to their end with nobody told. The
 * poller is freed once it was closed, its timer is closed and its squeue
 * ended.
 *
 * Callbacks may submit, attach, cancel and detach jobs. Walks over the
 * poller's jobs that call them mark each job visited (pass) and start
 * again from the head whenever a job left the list (gen), so that a job
 * freed by a callback is never touched again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurm_int.h"
#include "util.h"

/* Most output copied in one poll while the job runs, so that a job that
 * writes fast cannot hold the loop; its end reads everything. */
#define OUTPUT_PER_POLL (8u << 20)
/* Most bytes kept of a command's stdout or stderr; squeue's answer (one
 * line of about 40 bytes a job) may have more. */
#define CMD_OUTPUT_MAX (64u << 10)
#define QUERY_OUTPUT_MAX (16u << 20)
/* The first poll of a new job comes this soon (or after poll_ms when
 * shorter), so that a short job is seen ending without waiting poll_ms. */
#define FIRST_POLL_MS 200u
/* Failed reads of a job's state in a row after which the log says so
 * (once). */
#define FAILS_NOTED 10

static void poll_tick(uv_timer_t *t);

/* ---- jobs ---- */

void slurm__job_maybe_free(struct slurm_job *j)
{
	if ((j->finished || j->detached) && j->ncmds == 0) {
		if (j->fd >= 0)
			close(j->fd);
		free(j->output);
		free(j);
	}
}

void slurm__poller_maybe_free(struct slurm_poller *sp)
{
	if (sp->closing && !sp->timer_open && sp->ncmds == 0)
		free(sp);
}

/* Puts j on the poller's list. Its first poll comes within FIRST_POLL_MS
 * (poll_ms when shorter); the poller then polls every interval, the
 * shortest poll_ms of its jobs. */
static void poller_add(struct slurm_poller *sp, struct slurm_job *j, unsigned poll_ms)
{
	uint64_t first = poll_ms < FIRST_POLL_MS ? poll_ms : FIRST_POLL_MS, due = first;

	j->poller = sp;
	j->poll_ms = poll_ms;
	j->next = sp->jobs;
	sp->jobs = j;
	if (uv_is_active((uv_handle_t *)&sp->timer)) {
		if (poll_ms < sp->interval)
			sp->interval = poll_ms;
		due = uv_timer_get_due_in(&sp->timer);
		if (due > first)
			due = first;
	} else {
		sp->interval = poll_ms;
	}
	uv_timer_start(&sp->timer, poll_tick, due, sp->interval);
}

/* Takes j off its poller's list (it finished or was detached); the timer
 * stops when no job is left. */
static void job_stop(struct slurm_job *j)
{
	struct slurm_poller *sp = j->poller;
	struct slurm_job **pp, *k;

	if (!sp)
		return;
	for (pp = &sp->jobs; *pp; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	}
	j->poller = NULL;
	j->next = NULL;
	sp->gen++;
	if (!sp->jobs) {
		uv_timer_stop(&sp->timer);
		return;
	}
	if (j->poll_ms > sp->interval)
		return;
	sp->interval = UINT64_MAX;
	for (k = sp->jobs; k; k = k->next)
		if (k->poll_ms < sp->interval)
			sp->interval = k->poll_ms;
	uv_timer_set_repeat(&sp->timer, sp->interval);
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
	slurm__job_maybe_free(j);
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

/* ---- following a job ---- */

static void cancel_done(struct cmd *c)
{
	/* A job that already ended refuses, and its state says the rest; any
	 * other failure (the controller unreachable) is tried again at the
	 * next poll, until the job's state is final. */
	if (slurm__cmd_failed(c) &&
	    !(c->ebuf.data && (strstr(c->ebuf.data, "already completing or completed") ||
			       strstr(c->ebuf.data, "Invalid job id"))))
		c->job->cancel_sent = 0;
}

static void send_cancel(struct slurm_job *j)
{
	char *argv[] = {"scancel", j->id, NULL};

	if (!j->id[0] || j->cancel_sent || j->finished)
		return;
	j->cancel_sent = 1;
	slurm__cmd_run(j->loop, j, NULL, argv, NULL, CMD_OUTPUT_MAX, cancel_done);
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

/* Slurm does not know the job (purged after MinJobAge, or never known to
 * this controller): it ends, lost. */
static void job_lost(struct slurm_job *j)
{
	read_output(j, 1, 0);
	j->res.lost = 1;
	j->res.ran = j->started_ns || j->offset > 0;
	snprintf(j->res.reason, sizeof(j->res.reason), "Slurm does not know job %s", j->id);
	job_finish(j);
}

/* Reading the job's state failed (c: the squeue or scontrol, whose error
 * the note quotes): the FAILS_NOTED-th failure in a row is noted in the
 * log; the next poll tries again. */
static void job_read_failed(struct slurm_job *j, const struct cmd *c)
{
	char reason[256], line[512];

	if (++j->fail_streak != FAILS_NOTED)
		return;
	slurm__last_error_line(c, reason, sizeof(reason));
	snprintf(line, sizeof(line), "# slurm: cannot read the state of job %s: %s (trying again)\n",
		 j->id, reason);
	job_note(j, line);
}

static void job_update(struct slurm_job *j, const struct slurm_info *in, int detail);

static void detail_done(struct cmd *c)
{
	struct slurm_job *j = c->job;
	struct slurm_info in;

	j->state_busy = 0;
	if (j->detached)
		return;
	if (slurm__cmd_failed(c)) {
		if (c->ebuf.data && strstr(c->ebuf.data, "Invalid job id"))
			job_lost(j);
		else
			job_read_failed(j, c);
		return;
	}
	if (!c->obuf.data || slurm_parse_job(c->obuf.data, &in))
		return;
	job_update(j, &in, 1);
}

/* Reads the job with `scontrol -o -d show job ID` (detail_done), unless
 * sbatch or such a read is in flight. */
static void detail_fetch(struct slurm_job *j)
{
	char *argv[] = {"scontrol", "-o", "-d", "show", "job", j->id, NULL};

	if (j->state_busy || !j->id[0] || j->finished || j->detached)
		return;
	j->state_busy = 1;
	if (slurm__cmd_run(j->loop, j, NULL, argv, NULL, CMD_OUTPUT_MAX, detail_done))
		j->state_busy = 0;
}

/*
 * The job's state as squeue (detail = 0) or scontrol (detail = 1) showed
 * it: notes a requeue, starts the timeout clock when the job is first seen
 * running and ends the job with scancel when its timeout passed. squeue
 * shows neither a job's GPUs nor how it ended: when it shows the job first
 * running, or ended, scontrol reads the job and this runs again with its
 * answer, which tells the started callback and the end.
 */
static void job_update(struct slurm_job *j, const struct slurm_info *in, int detail)
{
	char node[256], line[512];
	int gpus[16], ngpus, ours, final = slurm_state_final(in->state);
	int64_t now = util_now_ns();

	j->fail_streak = 0;
	if (j->restarts < 0) {
		j->restarts = in->restarts;
	} else if (in->restarts > j->restarts) {
		/* Requeued (preemption, a node failure, scontrol requeue): the
		 * job runs again from the start; --open-mode=append keeps the
		 * output of every attempt in the file, one after the other. */
		j->restarts = in->restarts;
		j->started_ns = 0;
		j->tell_started = 0;
		read_output(j, 0, 0);
		snprintf(line, sizeof(line), "# slurm: job %s was requeued (restart %d); the output "
			 "of its next attempt follows\n", j->id, in->restarts);
		job_note(j, line);
	}
	if (!j->started_ns && (strcmp(in->state, "RUNNING") == 0 ||
			       strcmp(in->state, "COMPLETING") == 0 ||
			       (final && (in->run_s > 0 || in->node[0])))) {
		j->started_ns = now - (in->run_s > 0 ? (int64_t)in->run_s * 1000000000 : 0);
		j->res.ran = 1;
		j->tell_started = 1;
	}
	if (j->timeout_s && j->started_ns && !j->want_cancel && !final &&
	    now - j->started_ns >= (int64_t)j->timeout_s * 1000000000) {
		j->timed_out = 1;
		j->want_cancel = 1;
		send_cancel(j);
	}
	if (!detail && (j->tell_started || final)) {
		detail_fetch(j);
		return;
	}
	if (j->tell_started) {
		j->tell_started = 0;
		snprintf(node, sizeof(node), "%s", in->node);
		ngpus = in->ngpus;
		memcpy(gpus, in->gpus, sizeof(gpus));
		read_start_file(j, node, gpus, &ngpus);
		if (!j->detached && j->cb.started)
			j->cb.started(j->arg, node, gpus, ngpus);
	}
	if (!final)
		return;
	read_output(j, 1, 0);
	j->res.ran = j->res.ran || j->offset > 0;
	snprintf(j->res.state, sizeof(j->res.state), "%s", in->state);
	snprintf(j->res.reason, sizeof(j->res.reason), "%s", in->reason);
	j->res.r.exit_code = in->exit_code;
	j->res.r.term_signal = in->signal;
	/* Only a job that Slurm cancelled was ended by our scancel. */
	ours = j->want_cancel && strcmp(in->state, "CANCELLED") == 0;
	j->res.r.timed_out = ours && j->timed_out;
	j->res.r.cancelled = ours && !j->timed_out;
	j->res.cancel_missed = j->want_cancel && !ours;
	if (in->run_s > 0 || !j->started_ns)
		j->res.r.duration_s = in->run_s > 0 ? (double)in->run_s : 0;
	else
		j->res.r.duration_s = (double)(now - j->started_ns) / 1e9;
	job_finish(j);
}

/* ---- the poller ---- */

/* A line of squeue's answer: the job id and where the line starts. */
struct row {
	char id[32];
	const char *line;
};

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->id, ((const struct row *)b)->id);
}

static int row_find(const void *key, const void *b)
{
	return strcmp(key, ((const struct row *)b)->id);
}

/*
 * squeue answered for the jobs marked queried. A job it shows goes to
 * job_update; one it does not show (or, asked alone, the one it calls an
 * invalid job id) is read with scontrol, which says whether Slurm still
 * knows it. When squeue failed, every job counts a failed read.
 */
static void query_done(struct cmd *c)
{
	struct slurm_poller *sp = c->poller;
	struct row *rows = NULL, *row, *grown;
	struct slurm_info in;
	struct slurm_job *j;
	char id[32];
	const char *p;
	size_t n = 0, cap = 0;
	int failed = slurm__cmd_failed(c) || c->truncated, unknown;
	unsigned gen;

	sp->querying = 0;
	unknown = failed && !c->truncated && c->ebuf.data &&
		  strstr(c->ebuf.data, "Invalid job id");
	p = c->obuf.data && !failed ? c->obuf.data : "";
	while (*p) {
		if (slurm_parse_queue(p, id, &in) == 0) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				grown = realloc(rows, cap * sizeof(*rows));
				if (!grown) {
					failed = 1;
					break;
				}
				rows = grown;
			}
			memcpy(rows[n].id, id, sizeof(id));
			rows[n++].line = p;
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
	if (!failed && n > 1)
		qsort(rows, n, sizeof(*rows), row_cmp);
	sp->pass++;
again:
	for (j = sp->jobs; j; j = j->next) {
		if (!j->queried || j->pass == sp->pass)
			continue;
		j->pass = sp->pass;
		j->queried = 0;
		gen = sp->gen;
		row = failed ? NULL : bsearch(j->id, rows, n, sizeof(*rows), row_find);
		if (failed && !unknown)
			job_read_failed(j, c);
		else if (row && slurm_parse_queue(row->line, id, &in) == 0)
			job_update(j, &in, 0);
		else
			detail_fetch(j);
		if (sp->gen != gen)
			goto again;
	}
	free(rows);
}

/* Starts one squeue for every job with an id and no scontrol in flight,
 * unless one runs already. */
static void query_start(struct slurm_poller *sp)
{
	char *argv[] = {"squeue", "--noheader", "--all", "--states=all", NULL,
			"--Format=" SLURM_QUEUE_FORMAT, NULL};
	struct slurm_job *j;
	struct buf ids;
	int n = 0, rc;

	if (sp->querying || sp->closing)
		return;
	buf_init(&ids);
	rc = buf_puts(&ids, "--jobs=");
	for (j = sp->jobs; j && rc == 0; j = j->next) {
		if (!j->id[0] || j->state_busy || j->finish_pending)
			continue;
		rc = buf_printf(&ids, "%s%s", n++ ? "," : "", j->id);
		j->queried = 1;
	}
	if (rc == 0 && n > 0) {
		argv[4] = ids.data;
		sp->querying = 1;
		if (slurm__cmd_run(sp->loop, NULL, sp, argv, NULL, QUERY_OUTPUT_MAX, query_done))
			sp->querying = 0;
	}
	if (!sp->querying)
		for (j = sp->jobs; j; j = j->next)
			j->queried = 0;
	buf_free(&ids);
}

/* Every interval: ends a job whose submission failed, sends again a cancel
 * that did not get through, copies new output, then asks squeue. */
static void poll_tick(uv_timer_t *t)
{
	struct slurm_poller *sp = t->data;
	struct slurm_job *j;
	unsigned gen;

	sp->pass++;
again:
	for (j = sp->jobs; j; j = j->next) {
		if (j->pass == sp->pass)
			continue;
		j->pass = sp->pass;
		gen = sp->gen;
		if (j->finish_pending) {
			job_finish(j);
		} else if (j->id[0]) {
			if (j->want_cancel && !j->cancel_sent)
				send_cancel(j);
			read_output(j, 0, OUTPUT_PER_POLL);
		}
		if (sp->gen != gen)
			goto again;
	}
	query_start(sp);
}

int slurm_poller_new(uv_loop_t *loop, struct slurm_poller **out)
{
	struct slurm_poller *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return -ENOMEM;
	sp->loop = loop;
	uv_timer_init(loop, &sp->timer);
	sp->timer.data = sp;
	sp->timer_open = 1;
	*out = sp;
	return 0;
}

static void poller_timer_closed(uv_handle_t *h)
{
	struct slurm_poller *sp = h->data;

	sp->timer_open = 0;
	slurm__poller_maybe_free(sp);
}

void slurm_poller_close(struct slurm_poller *sp)
{
	struct cmd *c;

	if (!sp || sp->closing)
		return;
	while (sp->jobs)
		slurm_detach(sp->jobs);
	sp->closing = 1;
	for (c = sp->cmds; c; c = c->next)
		slurm__cmd_kill(c, SIGTERM);
	uv_close((uv_handle_t *)&sp->timer, poller_timer_closed);
}

static int job_new(struct slurm_poller *sp, const struct pfs_executor *ex,
		   const struct slurm_callbacks *cb, void *arg, unsigned timeout_s,
		   struct slurm_job **out)
{
	struct slurm_job *j;

	if (sp->closing)
		return -ESHUTDOWN;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->loop = sp->loop;
	j->cb = *cb;
	j->arg = arg;
	j->fd = -1;
	j->timeout_s = timeout_s;
	poller_add(sp, j, ex->poll_ms > 0 ? (unsigned)ex->poll_ms : 1000);
	*out = j;
	return 0;
}

/* Lets go of a job that slurm_submit or slurm_attach could not start. */
static void job_abandon(struct slurm_job *j)
{
	j->finished = 1;
	job_stop(j);
	slurm__job_maybe_free(j);
}

/* ---- submission ---- */

static void sbatch_done(struct cmd *c)
{
	struct slurm_job *j = c->job;
	const char *s = c->obuf.data ? c->obuf.data : "";
	size_t n = strspn(s, "0123456789_");

	j->state_busy = 0;
	if (slurm__cmd_failed(c) || n == 0 || n >= sizeof(j->id)) {
		j->res.refused = 1;
		slurm__last_error_line(c, j->res.reason, sizeof(j->res.reason));
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
 * and runs argv: 0 or -errno. */
static int write_script(const char *path, const char *start, char *const *argv)
{
	struct buf b;
	size_t k;
	int rc;

	buf_init(&b);
	buf_puts(&b, "#!/bin/sh\n# packetfs: a recipe run as a Slurm batch job. It notes its node "
		     "and GPUs, then runs\n# the recipe's command.\n"
		     "printf '%s %s\\n' \"${SLURMD_NODENAME:--}\" \"${SLURM_JOB_GPUS:-}\" >");
	sh_quote(&b, start);
	buf_puts(&b, " 2>/dev/null\nexec");
	for (k = 0; argv[k]; k++) {
		buf_puts(&b, " ");
		sh_quote(&b, argv[k]);
	}
	buf_puts(&b, "\n");
	if (!b.data)
		return -ENOMEM;
	rc = util_write_file(path, b.data, b.len);
	if (rc == 0 && chmod(path, 0755) < 0)
		rc = -errno;
	buf_free(&b);
	return rc;
}

int slurm_submit(struct slurm_poller *sp, const struct slurm_spec *spec,
		 const struct slurm_callbacks *cb, void *arg, struct slurm_job **out)
{
	char script[4096], opt[6][4200];
	char **argv = NULL;
	struct slurm_job *j;
	size_t k;
	int rc, n = 0;

	rc = job_new(sp, spec->ex, cb, arg, spec->timeout_s, &j);
	if (rc)
		return rc;
	if (asprintf(&j->output, "%s/%s.out", spec->dir, spec->stem) < 0) {
		j->output = NULL;
		job_abandon(j);
		return -ENOMEM;
	}
	/* Leftovers of the same names would be read as this job's. */
	unlink(j->output);
	start_file(j, script, sizeof(script));
	unlink(script);
	snprintf(opt[0], sizeof(opt[0]), "%s", script);
	snprintf(script, sizeof(script), "%s/%s.sh", spec->dir, spec->stem);
	rc = write_script(script, opt[0], spec->argv);
	if (rc) {
		job_abandon(j);
		return rc;
	}
	snprintf(opt[n++], sizeof(opt[0]), "--job-name=%s", spec->name);
	snprintf(opt[n++], sizeof(opt[0]), "--output=%s", j->output);
	snprintf(opt[n++], sizeof(opt[0]), "--chdir=%s", spec->cwd);
	if (spec->timeout_s)
		snprintf(opt[n++], sizeof(opt[0]), "--time=%u", (spec->timeout_s + 59) / 60 + 2);
	if (spec->gpus > 0)
		snprintf(opt[n++], sizeof(opt[0]), "--gres=gpu:%d", spec->gpus);
	if (spec->nodelist)
		snprintf(opt[n++], sizeof(opt[0]), "--nodelist=%s", spec->nodelist);
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
		rc = slurm__cmd_run(j->loop, j, NULL, argv, spec->env, CMD_OUTPUT_MAX, sbatch_done);
	}
	strv_free(argv);
	if (rc) {
		job_abandon(j);
		return rc;
	}
	*out = j;
	return 0;
}

int slurm_attach(struct slurm_poller *sp, const struct pfs_executor *ex, const char *job_id,
		 const char *output, int64_t offset, unsigned timeout_s,
		 const struct slurm_callbacks *cb, void *arg, struct slurm_job **out)
{
	struct slurm_job *j;
	int rc;

	rc = job_new(sp, ex, cb, arg, timeout_s, &j);
	if (rc)
		return rc;
	snprintf(j->id, sizeof(j->id), "%s", job_id);
	j->output = strdup(output);
	j->offset = offset;
	j->restarts = -1;
	if (!j->output) {
		job_abandon(j);
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
		slurm__cmd_kill(c, SIGTERM);
	job_stop(j);
	slurm__job_maybe_free(j);
}
