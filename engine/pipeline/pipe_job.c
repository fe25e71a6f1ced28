/*
 * pipe_job.c - jobs (see pipe.c): a stage program or a recipe, each a run
 * row whose log is streamed into the store as output arrives. Opening a
 * job's run (its row, its log, its start event), starting its process on
 * the runner (runner.h) with the active-run table kept in step, its
 * output into the log, its end, and the start of a stage's program.
 *
 * Everything here runs on the loop thread, but job_spawned, which the
 * runner calls on the pool thread that started the process.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "pipe_int.h"

static void now_text(char out[32])
{
	util_rfc3339(util_now_ns(), out);
}


void pipe__job_free(struct job *j)
{
	if (!j)
		return;
	run_clear(&j->run);
	free(j->exec_note);
	free(j->junit_path);
	free(j->why);
	recipe_clear(&j->recipe);
	strv_free(j->argv);
	buf_free(&j->start_head);
	free(j->metrics_json);
	pipe__measure_free(j->ms);
	free(j);
}

void pipe__job_unlink(struct job **list, struct job *j)
{
	struct job **pp;

	for (pp = list; *pp; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	}
	j->next = NULL;
}

static void on_output(void *arg, const char *data, size_t len)
{
	struct job *j = arg;

	pipe__log_append(j->p, j, data, len);
}

/* What store_run_begin's callback needs to name a job's run. */
struct run_naming {
	const struct item *it;
	const char *stamp;    /* a recipe log's UTC stamp; NULL for a stage */
	const char *event;    /* the event to add with the run (NULL: none) */
	int round, rounds_max;
	struct buf lines;     /* a copy of the event lines, for pipe__notify */
};

/* store_run_begin's callback: the log path from the log number (stage logs
 * count among stage logs, recipe logs among recipe logs) and the
 * stage_started event that names it with the run number. Under the store's lock. */
static int name_run(void *arg, struct run *r, struct buf *event)
{
	struct run_naming *n = arg;
	char path[PATH_MAX], extra[PATH_MAX + 1024], *q;

	if (n->stamp)
		snprintf(path, sizeof(path), "validation/logs/%s-%s-%d.log", n->stamp, r->name,
			 r->log_no);
	else
		snprintf(path, sizeof(path), "stages/%d-%s.log", r->log_no, r->name);
	free(r->log_path);
	r->log_path = strdup(path);
	if (!r->log_path)
		return -ENOMEM;
	if (!n->event)
		return 0;
	q = pipe__json_string(n->it->last_error);
	snprintf(extra, sizeof(extra), ",\"state\":\"%s\",\"stage\":\"%s\",\"last_error\":%s",
		 item_state_name(n->it->state), n->it->stage, q ? q : "\"\"");
	free(q);
	pipe__event_text(event, n->it->name, "state", extra);
	buf_append(event, "\n", 1);
	if (n->rounds_max)
		snprintf(extra, sizeof(extra), ",\"stage\":\"%s\",\"run\":%d,\"iteration\":%d,"
			 "\"log\":\"%s\",\"round\":%d", r->name, r->run_no, n->it->iteration, path,
			 n->round);
	else
		snprintf(extra, sizeof(extra), ",\"stage\":\"%s\",\"run\":%d,\"iteration\":%d,"
			 "\"log\":\"%s\"", r->name, r->run_no, n->it->iteration, path);
	pipe__event_text(event, n->it->name, n->event, extra);
	buf_append(event, "\n", 1);
	n->lines.len = 0;
	if (event->data)
		buf_append(&n->lines, event->data, event->len);
	return event->data ? 0 : -ENOMEM;
}

int pipe__job_begin(struct pipe *p, struct job *j, const struct item *it, struct item *write,
		    const char *kind, const char *name, enum run_status status)
{
	char stamp[32], head[41] = "";
	struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	struct run_naming n = { it, NULL, write ? "stage_started" : NULL, it->round, 0, {0} };
	char *line, *end;
	int rc;

	if (strcmp(kind, "stage") != 0) {
		util_stamp_file(util_now_ns(), stamp);
		n.stamp = stamp;
	} else {
		size_t i;

		if (config_stage(cfg, name, &i))
			n.rounds_max = cfg->stages[i].rounds_max;
	}
	repo_branch_head(cfg->repo, it->branch, head);
	j->run.item_id = it->id;
	snprintf(j->run.kind, sizeof(j->run.kind), "%s", kind);
	j->run.name = strdup(name);
	j->run.command = strdup("");
	j->run.note = strdup("");
	j->run.gpus = strdup("[]");
	if (!j->run.name || !j->run.command || !j->run.note || !j->run.gpus)
		return -ENOMEM;
	j->run.iteration = it->iteration;
	j->run.status = status;
	snprintf(j->run.head, sizeof(j->run.head), "%s", head);
	snprintf(j->run.executor, sizeof(j->run.executor), "%s",
		 strcmp(kind, "recipe") == 0 && cfg->executor.kind == EXECUTOR_SLURM ? "slurm"
										  : "local");
	now_text(j->run.started_at);
	snprintf(j->item, sizeof(j->item), "%s", it->name);
	rc = store_run_begin(p->pl->store, &j->run, write, name_run, &n);
	if (rc == 0 && write)
		util_log(LOG_INFO, "%s: stage_started %s (run %d)", it->name, name, j->run.run_no);
	for (line = n.lines.data; rc == 0 && line && (end = strchr(line, '\n')); line = end + 1) {
		*end = '\0';
		pipe__notify(p->pl, it->id, line);
	}
	buf_free(&n.lines);
	if (rc == 0)
		pipe__changed(p->pl, it->name, j->run.log_path, PIPELINE_CREATED);
	return rc;
}

int pipe__job_open_run(struct pipe *p, struct job *j, const struct item *it, const char *kind,
		       const char *name, enum run_status status)
{
	return pipe__job_begin(p, j, it, NULL, kind, name, status);
}

static void on_exit_cb(void *arg, const struct runner_result *res);

/* Job j's leader runs (runner_spec.on_spawned; a pool thread): its pid
 * and start time into its active run, where the recorder's lookups (any
 * thread) find it before the loop hears of the start. */
static void job_spawned(void *arg, pid_t pid, unsigned long long start_ticks)
{
	struct job *j = arg;

	pipe__active_set_leader(j->p->pl, j->run.id, pid, start_ticks);
}

/* Job j's start is over (runner_spec.on_started; the loop): pid, or 0 when
 * the program could not start. The process group goes into the run row
 * (for crash recovery; written whole again when the run is sealed), or,
 * for a recipe that starts later, with its header and start event in one
 * transaction (pipe__recipe_started). */
static void job_started(void *arg, pid_t pid)
{
	struct job *j = arg;
	struct pipe *p = j->p;

	j->run.pgid = pid;
	if (j->start_later) {
		pipe__recipe_started(p, j, &j->start_head, 1);
		buf_free(&j->start_head);
	} else {
		(void)store_run_update(p->pl->store, &j->run);
	}
}

/* Spawns argv for job j (its run row exists); registers it as active. */
int pipe__job_spawn(struct pipe *p, struct job *j, char *const *argv, char **env, const char *cwd,
		    unsigned timeout_s, runner_output_cb out_cb, runner_exit_cb exit_cb, void *arg)
{
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	struct runner_spec spec = {argv, env, cwd, timeout_s, (unsigned)cfg->cancel_grace_s, NULL,
				    NULL, 0, job_spawned, job_started, j};
	struct runner_user *user = NULL;
	struct active_run a;
	int rc;

	if (cfg->cancel_grace_s == 0)
		spec.grace_s = 1;
	/* run_as (SPEC §5): the user as the databases say now; a run_as that
	 * names this process's own user changes nothing. */
	if (cfg->run_as) {
		rc = runner_user_lookup(cfg->run_as, &user);
		if (rc) {
			pipe__log_line(p, j, "packetfs: run_as: %s: %s\n", cfg->run_as,
				       rc == -ENOENT ? "no such user" : strerror(-rc));
			return rc;
		}
		if (user->uid != geteuid())
			spec.user = user;
	}
	/* Active before it can run: its leader's pid comes from job_spawned. */
	memset(&a, 0, sizeof(a));
	a.item_id = j->item_id;
	a.run_id = j->run.id;
	a.kind = j->is_stage ? 's' : 'r';
	if (j->is_stage)
		memcpy(a.credential, j->credential, sizeof(a.credential));
	snprintf(a.name, sizeof(a.name), "%s", j->is_stage ? j->run.name : j->recipe.name);
	memcpy(a.gpus, j->gpus, sizeof(a.gpus));
	a.ngpus = j->ngpus;
	a.start_ns = util_now_ns();
	pipe__active_add(p->pl, &a);
	rc = exit_cb ? runner_start(&p->pl->loop, &spec, out_cb, exit_cb, arg, &j->proc)
		     : runner_start(&p->pl->loop, &spec, on_output, on_exit_cb, j, &j->proc);
	runner_user_free(user);
	if (rc) {
		pipe__active_remove(p->pl, j->run.id);
		return rc;
	}
	j->next = p->jobs;
	p->jobs = j;
	return 0;
}

/* Seals a run: finish time, duration, log sha256. */
void pipe__run_seal(struct pipe *p, struct run *r, double duration_s)
{
	int64_t size;

	now_text(r->finished_at);
	r->duration_s = duration_s;
	/* On a store error the checksum and size are of what was read: packetfs check
	 * reports the log. */
	(void)store_log_sha256(p->pl->store, r->id, r->log_sha256, &size);
	r->log_size = size;
	if (store_run_update(p->pl->store, r))
		pipe__unsealed_keep(p, r); /* written again (pipe_full.c) */
}

/* Something of an item ended, so a slot may have opened for a queued item
 * (max_parallel_items): called wherever an item can stop being busy - a
 * process exit, a push that ends its stage, a command (cancel) that ends a
 * validation whose recipes were all queued. */
void pipe__slot_freed(struct pipe *p)
{
	if (!p->shutting_down && pipeline_config_get(p->pl)->max_parallel_items > 0)
		pipe_resume(p);
}

static void on_exit_cb(void *arg, const struct runner_result *res)
{
	struct job *j = arg;
	struct pipe *p = j->p;

	pipe__job_unlink(&p->jobs, j);
	pipe__active_remove(p->pl, j->run.id);
	j->proc = NULL;
	if (j->is_stage) {
		pipe__stage_done(p, j, res);
		pipe__job_free(j);
	} else {
		pipe__recipe_exit(p, j, res);
		pipe__job_free(j);
	}
	pipe__pump(p);
	pipe__slot_freed(p);
}

/*
 * Runs a stage program for job j: its cwd is the item directory on the
 * mount, but the start must not wait on the mount (proc_start blocks its
 * thread until the child has exec'd, and a chdir into FUSE needs a worker
 * thread that may itself be waiting on this loop). So the child starts in
 * "/" and a shell enters $PACKET_DIR after exec.
 */
void pipe__spawn_stage(struct pipe *p, struct job *j, const struct pfs_stage *st,
		       const struct item *it)
{
	static char shell[] = "/bin/sh", dash_c[] = "-c",
		    script[] = "cd \"$PACKET_DIR\" || exit 126; exec \"$@\"",
		    name[] = "packetfs-stage";
	char **env = pipe__make_env(p, it, st->name, NULL, NULL), **argv = NULL, *cmd;
	char var[64];
	size_t i, n = strv_len(st->run);
	int rc = -ENOMEM;

	/* The run's credential (pipe_who.c): the recorder presents it. */
	if (pipe__credential_new(j->credential, sizeof(j->credential)) == 0) {
		snprintf(var, sizeof(var), "PACKET_RUN_CREDENTIAL=%s", j->credential);
		if (strv_push(&env, var)) {
			strv_free(env);
			env = NULL;
		}
	} else {
		j->credential[0] = '\0';
	}

	cmd = strv_join(st->run, " ", 1);
	if (cmd) {
		free(j->run.command);
		j->run.command = cmd;
	}
	pipe__log_line(p, j, "[packetfs] $ %s\n", j->run.command);
	argv = calloc(n + 5, sizeof(char *));
	if (argv && env) {
		argv[0] = shell;
		argv[1] = dash_c;
		argv[2] = script;
		argv[3] = name;
		for (i = 0; i < n; i++)
			argv[4 + i] = st->run[i];
		rc = pipe__job_spawn(p, j, argv, env, "/", (unsigned)st->timeout_s, NULL, NULL, NULL);
	}
	free(argv);
	strv_free(env);
	if (rc) {
		struct runner_result res = {0};

		res.spawn_error = rc;
		pipe__stage_done(p, j, &res);
		pipe__job_free(j);
	}
}
