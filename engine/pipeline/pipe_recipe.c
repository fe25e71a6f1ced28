/*
 * pipe_recipe.c - one recipe run of the pipeline engine (SPEC §5, §6), on
 * the libuv loop thread: from the queue (pipe_queue.c) to its registry
 * line - the clean-worktree check, the environment script (runenv.h), the
 * process or Slurm job, GPUs and their leak check, JUnit XML and test
 * counts. Batches are pipe_batch.c's.
 *
 * DESIGN. Every recipe that ends (or cannot start) leaves a
 * sealed log and a line in the item's registry (a recipe that exits 0 but
 * whose JUnit XML says that no test ran or that a test failed, or, without
 * JUnit XML, whose log's last test summary says that no test ran, is
 * failing, see testcount.h). A run starts only on a worktree that holds
 * exactly its head commit; otherwise it is blocked without running.
 *
 * Invariants: GPUs granted to a job are released once, when it exits or fails to
 * start; after an exit, a leak check (gpu.h) first notes on the registry
 * line what the recipe left on its devices and holds those back; a libuv
 * timer looks at held-back devices every GPU_RECHECK_MS until they are
 * clean, then pumps the queue. nvidia-smi runs synchronously on the loop
 * thread, each call bounded by GPU_SMI_TIMEOUT_MS.
 *
 * Each recipe run gets $PACKET_JUNIT: junit.xml in a directory of its own
 * (pipe_junit.c). It is read (testcount_junit_file, at most
 * TESTCOUNT_JUNIT_MAX bytes) on the loop thread when the run ends.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipe_int.h"

/* Queues recipe r for item it in batch b. */
int pipe__queue_recipe(struct pipe *p, const struct item *it, const struct recipe *r,
		       struct batch *b, struct job **out)
{
	struct job *j = calloc(1, sizeof(*j)), **pp;

	if (!j)
		return -ENOMEM;
	j->p = p;
	j->item_id = it->id;
	snprintf(j->item, sizeof(j->item), "%s", it->name);
	j->batch = b;
	if (recipe_copy(&j->recipe, r) || strv_push(&b->names, r->name)) {
		pipe__job_free(j);
		return -ENOMEM;
	}
	for (pp = &p->queue; *pp; pp = &(*pp)->next)
		;
	*pp = j;
	b->pending++;
	if (out)
		*out = j;
	return 0;
}

/* The command a job runs, as the registry shows it (caller frees). */
static char *job_command(const struct job *j)
{
	return j->argv ? strv_join(j->argv, " ", 1) : strdup(j->recipe.path);
}

void pipe__recipe_not_run(struct pipe *p, struct job *j, enum run_status status,
			  const char *note)
{
	struct item it = {0};

	if (j->run.id == 0) {
		if (store_item_get_id(p->pl->store, j->item_id, &it) ||
		    pipe__job_open_run(p, j, &it, "recipe", j->recipe.name, status)) {
			if (it.name)
				item_clear(&it);
			if (j->batch) {
				j->batch->pending--;
				pipe__batch_step(p, j->batch);
			}
			return;
		}
		item_clear(&it);
		free(j->run.command);
		j->run.command = job_command(j);
	}
	pipe__log_line(p, j, "# packetfs recipe log\n# recipe: %s\n# command: %s\n# not run: %s\n",
		       j->recipe.name, j->run.command ? j->run.command : "", note);
	pipe__recipe_done(p, j, status, note, NULL);
}

/* The environment block at the head of job j's log as JSON text (caller
 * frees), or NULL (runenv.h). */
static char *run_env(struct pipe *p, const struct job *j)
{
	enum { HEAD = 64 * 1024 };
	char *head = malloc(HEAD), *json = NULL;
	ssize_t got = head ? store_log_read(p->pl->store, j->run.id, 0, head, HEAD) : -ENOMEM;

	if (got > 0 && runenv_parse(head, (size_t)got, &json))
		json = NULL;
	free(head);
	return json;
}

/* Records a finished recipe run: log footer, registry line, batch. */
void pipe__recipe_done(struct pipe *p, struct job *j, enum run_status status, const char *note,
		       const struct runner_result *res)
{
	const char *name = run_status_name(status);
	struct registry_run rr;
	char host_note[512], *env_json = NULL, footer[720] = "", last[2048], told[2048];

	if (res) {
		/* A Slurm job's node line that came after its output is the
		 * footer's first line: the output stays the command's alone. */
		char node[600] = "";

		if (j->exec_note)
			snprintf(node, sizeof(node), "# packetfs: %s",
				 j->exec_note + (strncmp(j->exec_note, "# ", 2) ? 0 : 2));
		if (res->term_signal)
			snprintf(footer, sizeof(footer),
				 "\n%s# packetfs: ended by signal %d after %.1f s\n", node,
				 res->term_signal, res->duration_s);
		else
			snprintf(footer, sizeof(footer), "\n%s# packetfs: exit code %d after %.1f s\n",
				 node, res->exit_code, res->duration_s);
		j->run.has_exit_code = res->spawn_error == 0 && res->term_signal == 0;
		j->run.exit_code = res->exit_code;
		j->run.signal = res->term_signal;
	}
	/* The footer's lines in one append (at most a log line's 2047 bytes). */
	snprintf(last, sizeof(last), "%s# packetfs: status %s%s%s\n", footer, name,
		 note[0] ? ": " : "", note);
	j->run.status = status;
	snprintf(host_note, sizeof(host_note), "%s", note);
	free(j->run.note);
	j->run.note = strdup(host_note);
	memset(&rr, 0, sizeof(rr));
	rr.run = j->run.run_no;
	rr.recipe = j->recipe.name;
	rr.status = name;
	rr.command = j->run.command;
	rr.evidence = j->run.log_path;
	rr.note = j->run.note ? j->run.note : "";
	rr.has_exit_code = j->run.has_exit_code;
	rr.exit_code = j->run.exit_code;
	rr.signal = j->run.signal;
	rr.started_at = j->run.started_at;
	rr.finished_at = j->run.finished_at;
	rr.duration_s = res ? res->duration_s : 0;
	rr.iteration = j->run.iteration;
	rr.head = j->run.head;
	rr.gpus = j->gpus;
	rr.ngpus = (size_t)j->ngpus;
	rr.log_sha256 = j->run.log_sha256;
	rr.executor = j->run.executor[0] ? j->run.executor : "local";
	rr.job_id = j->run.job_id;
	if (res && !res->spawn_error)
		env_json = run_env(p, j);
	rr.env_json = env_json;
	if (j->measure_parent) {
		rr.side = j->side ? "head" : "base";
		rr.metrics_json = j->metrics_json;
	}
	if (j->argv) {
		rr.recorded_by_stage = j->by_stage;
		rr.recorded_by_pid = j->by_pid;
		rr.recorded_by_uid = j->by_uid;
		rr.recorded_by_via = j->by_via;
	}
	/* The stage's log tells of it (at most a log line's 2047 bytes). */
	snprintf(told, sizeof(told), "[packetfs] %s: %s%s%s\n", j->recipe.name, name,
		 note[0] ? " - " : "", note);
	pipe__recipe_seal(p, j, last, told, &rr);
	free(env_json);
	pipe__junit_close(j);
	if (j->batch) {
		j->batch->pending--;
		pipe__batch_step(p, j->batch);
	} else if (j->measure_parent) {
		pipe__measure_ran(p, j, status);
	}
}

/* How often held-back GPUs are looked at again, in milliseconds. */
#define GPU_RECHECK_MS 2000

/* Every GPU_RECHECK_MS while a GPU is held back: devices found clean
 * return to service (a gpu_released event), and the queue is pumped. */
static void gpu_recheck(uv_timer_t *t)
{
	struct pipe *p = t->data;
	char list[16 * 8 + 1], extra[sizeof(list) + 16];
	int back[16], n;

	if (p->shutting_down)
		return;
	pipe__measure_gpu_recheck(p, 0);
	n = gpu_pool_recheck(p->gpus, back, 16);
	if (n > 0) {
		gpu_format_list(back, n < 16 ? n : 16, list, sizeof(list));
		snprintf(extra, sizeof(extra), ",\"gpus\":[%s]", list);
		pipeline_event(p->pl, 0, NULL, "gpu_released", extra);
		pipe__pump(p);
	}
	if (gpu_pool_held(p->gpus, NULL, 0) == 0)
		uv_timer_stop(t);
}

/* Starts the recheck timer (loop thread) unless it runs already. */
static void gpu_watch(struct pipe *p)
{
	if (!p->shutting_down)
		pipe__timer_repeat(p, &p->gpu_timer, &p->gpu_timer_init, gpu_recheck,
				   GPU_RECHECK_MS);
}

void pipe__gpu_stop(struct pipe *p)
{
	if (!p->gpu_timer_init)
		return;
	uv_close((uv_handle_t *)&p->gpu_timer, NULL);
	p->gpu_timer_init = 0;
}

/*
 * The leak check after recipe j, whose GPUs are still granted (declared
 * slots are never checked): what it finds goes to note ("leak check: GPU 1:
 * 2 compute processes, 3.2 GiB above baseline"); leaking devices are held
 * back (gpu.h), a gpu_held event names them, and the recheck timer runs
 * until they are clean.
 */
static void leak_check(struct pipe *p, struct job *j, char *note, size_t size)
{
	char found[400], list[16 * 8 + 1] = "";
	int held[16], nheld, mine[16], nmine = 0, k, m;
	struct item it;

	if (!gpu_pool_checks(p->gpus))
		return;
	if (gpu_pool_leak_check(p->gpus, j->gpus, j->ngpus, found, sizeof(found)) <= 0) {
		if (found[0]) /* nvidia-smi did not answer: nothing is held back */
			snprintf(note, size, "leak check: %s", found);
		return;
	}
	snprintf(note, size, "leak check: %s", found);
	nheld = gpu_pool_held(p->gpus, held, 16);
	for (k = 0; k < j->ngpus; k++)
		for (m = 0; m < nheld && m < 16; m++)
			if (held[m] == j->gpus[k])
				mine[nmine++] = j->gpus[k];
	gpu_format_list(mine, nmine, list, sizeof(list));
	if (store_item_get_id(p->pl->store, j->item_id, &it) == 0) {
		pipe__event(p, &it, "gpu_held",
			    ",\"recipe\":\"%s\",\"run\":%d,\"gpus\":[%s],\"reason\":\"%s\"",
			    j->recipe.name, j->run.run_no, list, found);
		item_clear(&it);
	}
	gpu_watch(p);
}

/* ---- JUnit XML: the directory is pipe_junit.c's ---- */

/* Appends text to note (size bytes), after "; " when it holds something. */
static void note_add(char *note, size_t size, const char *text)
{
	size_t used = strlen(note);

	snprintf(note + used, size - used, "%s%s", used ? "; " : "", text);
}

/*
 * Whether job j's run, which exited 0, is failing after all; what its
 * counts say goes into note (after what it holds). The JUnit file comes
 * first: no test ran, or a test failed, is failing ("no tests ran (JUnit
 * XML)", "2 of 7 tests failed (JUnit XML)"), and so is a file that cannot
 * be read ("JUnit XML unreadable: ..."): the evidence it claims is not
 * there; tests that ran and passed are noted ("7 tests ran, 1 skipped
 * (JUnit XML)"). Without the file, the last test summary in the tail of
 * the log decides: one that says that no test ran is failing. A recipe
 * that exits 0 on such a run is failing, not validated: its test runner
 * proved nothing (docs/guide.md "Recipes").
 */
int pipe__no_tests_ran(struct pipe *p, const struct job *j, char *note, size_t size)
{
	enum { TAIL = 64 * 1024 };
	struct testcount tc;
	struct run r;
	uint64_t off = 0;
	ssize_t got;
	size_t used;
	char *tail, why[320], text[384];
	int none, rc;

	if (j->junit_path) {
		rc = testcount_junit_file(j->junit_path, &tc, why, sizeof(why));
		if (rc == 0) {
			note_add(note, size, testcount_note(&tc, text, sizeof(text)));
			return testcount_outcome(&tc) != TESTCOUNT_PASSED;
		}
		if (rc != -ENOENT) {
			snprintf(text, sizeof(text), "JUnit XML unreadable: %s", why);
			note_add(note, size, text);
			return 1;
		}
	}
	if (store_run_get(p->pl->store, j->run.id, &r))
		return 0;
	if (r.log_size > TAIL)
		off = (uint64_t)(r.log_size - TAIL);
	run_clear(&r);
	tail = malloc(TAIL);
	if (!tail)
		return 0;
	got = store_log_read(p->pl->store, j->run.id, off, tail, TAIL);
	none = got > 0 && testcount_scan(tail, (size_t)got, &tc) && tc.ran == 0;
	free(tail);
	if (!none)
		return 0;
	used = strlen(note);
	snprintf(note + used, size - used, "%sno tests ran (%s)", used ? "; " : "",
		 testcount_tool_name(tc.tool));
	return 1;
}

void pipe__recipe_exit(struct pipe *p, struct job *j, const struct runner_result *res)
{
	enum run_status status;
	char note[512] = "", leak[448] = "";

	if (j->ngpus) {
		if (!p->shutting_down && !res->spawn_error)
			leak_check(p, j, leak, sizeof(leak));
		if (!j->measure_parent) /* a measured run's are its holder's */
			gpu_pool_release(p->gpus, j->gpus, j->ngpus);
	}
	assert(p->running_recipes > 0);
	p->running_recipes--;
	if (p->shutting_down)
		status = RUN_INTERRUPTED, snprintf(note, sizeof(note), "the daemon stopped while this ran");
	else if (res->cancelled) /* the signal that ended it, or else the one sent */
		status = RUN_CANCELLED, snprintf(note, sizeof(note), "cancelled (signal %d)",
					       res->term_signal ? res->term_signal : res->kill_signal);
	else if (res->timed_out)
		status = RUN_TIMED_OUT, snprintf(note, sizeof(note), "timed out after %d s (signal %d)",
					       j->recipe.timeout_s,
					       res->term_signal ? res->term_signal : res->kill_signal);
	else if (res->spawn_error)
		status = RUN_FAILING, snprintf(note, sizeof(note), "cannot run: %s", strerror(-res->spawn_error));
	else if (res->term_signal)
		status = RUN_FAILING;
	else if (res->exit_code == 0)
		status = RUN_VALIDATED;
	else if (res->exit_code == 77)
		status = RUN_BLOCKED;
	else
		status = RUN_FAILING;
	if (leak[0])
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%s",
			 note[0] ? "; " : "", leak);
	if (res->leftovers)
		snprintf(note + strlen(note), sizeof(note) - strlen(note),
			 "%sended %d process(es) it left running (signal %d)", note[0] ? "; " : "",
			 res->leftovers, res->kill_signal);
	if (status == RUN_VALIDATED && !j->measure_parent &&
	    pipe__no_tests_ran(p, j, note, sizeof(note)))
		status = RUN_FAILING;
	/* A log that misses output is no evidence of a pass. */
	if (pipe__log_lost(j, leak, sizeof(leak))) {
		note_add(note, sizeof(note), leak);
		if (status == RUN_VALIDATED)
			status = RUN_FAILING;
	}
	if (j->measure_parent)
		pipe__measure_collect(p, j, &status, note, sizeof(note));
	pipe__recipe_done(p, j, status, note, res);
}

/* s as one line of at most size - 1 bytes, control characters as spaces
 * (a header line of the log must stay one line); returns out. */
static const char *one_line(const char *s, char *out, size_t size)
{
	size_t i;

	snprintf(out, size, "%s", s ? s : "");
	for (i = 0; out[i]; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = ' ';
	return out;
}

/* The PATH of environment env (NULL-terminated "NAME=VALUE"), or NULL. */
static const char *env_path(char *const *env)
{
	size_t i;

	for (i = 0; env && env[i]; i++)
		if (strncmp(env[i], "PATH=", 5) == 0)
			return env[i] + 5;
	return NULL;
}

/* Gives back what a job that will not run holds (its GPUs). */
static void job_release(struct pipe *p, struct job *j)
{
	if (j->ngpus && !j->measure_parent)
		gpu_pool_release(p->gpus, j->gpus, j->ngpus);
	j->ngpus = 0;
}

/*
 * Ends job j, which could not start (its item or its run row could not be
 * had): gives back its GPUs, counts it done in its batch (or tells its
 * measure parent it failed), and frees j. Loop thread only.
 */
static void job_abandon(struct pipe *p, struct job *j)
{
	job_release(p, j);
	if (j->batch) {
		j->batch->pending--;
		pipe__batch_step(p, j->batch);
	} else if (j->measure_parent) {
		pipe__measure_ran(p, j, RUN_FAILING);
	}
	pipe__job_free(j);
}

/*
 * Whether the worktree at wt holds exactly its head commit (SPEC §5:
 * evidence describes exactly the commit it names): 0 when it does;
 * otherwise -EAGAIN and why, naming the paths that differ.
 */
static int worktree_clean(const char *wt, const char *head, char *why, size_t size)
{
	struct buf dirty;
	int rc;

	buf_init(&dirty);
	rc = repo_worktree_dirty(wt, &dirty);
	if (rc == 1)
		snprintf(why, size, "the worktree differs from its head %.12s: %s (commit them, "
			 "or make git ignore what recipes build: evidence describes one commit)",
			 head, dirty.data ? dirty.data : "uncommitted changes");
	else if (rc < 0)
		snprintf(why, size, "cannot check the worktree against its head: %s",
			 strerror(-rc));
	buf_free(&dirty);
	return rc == 0 ? 0 : -EAGAIN;
}

void pipe__recipe_start(struct pipe *p, struct job *j)
{
	char cuda[160] = "", host[256] = "", cwd[PATH_MAX], why[768];
	static char sh[] = "/bin/sh", dash_c[] = "-c", arg0[] = RUNENV_ARG0;
	char *file_argv[2] = {j->recipe.path, NULL};
	char *const *argv = j->argv ? j->argv : file_argv;
	char **env, **run_argv, command[512];
	struct buf script, head;
	struct item it;
	int rc, slurm, direct = 0, later;

	if (store_item_get_id(p->pl->store, j->item_id, &it)) {
		job_abandon(p, j);
		return;
	}
	if (j->run.id == 0) {
		rc = pipe__job_open_run(p, j, &it, "recipe", j->recipe.name, RUN_RUNNING);
	} else {
		/* A recorded run, queued with its row: it starts now, at the
		 * head the branch has now. */
		rc = 0;
		j->run.status = RUN_RUNNING;
		util_rfc3339(util_now_ns(), j->run.started_at);
		repo_branch_head(pipeline_config_get(p->pl)->repo, it.branch, j->run.head);
		/* Its start (status, time, head); the row is written whole again when the
		 * run is sealed. */
		(void)store_run_update(p->pl->store, &j->run);
	}
	if (rc) {
		item_clear(&it);
		job_abandon(p, j);
		return;
	}
	free(j->run.command);
	j->run.command = job_command(j);
	snprintf(cwd, sizeof(cwd), "%s/worktrees/%s", p->pl->store_dir, it.name);
	/* A measured run's checkout is the engine's own, made clean at its
	 * commit for the batch: its runs share what they build. */
	if (j->measure_parent)
		pipe__measure_place(j, cwd, sizeof(cwd));
	else if (worktree_clean(cwd, j->run.head, why, sizeof(why))) {
		job_release(p, j);
		item_clear(&it);
		pipe__recipe_not_run(p, j, RUN_BLOCKED, why);
		pipe__job_free(j);
		return;
	}
	slurm = strcmp(j->run.executor, "slurm") == 0;
	gpu_format_list(j->gpus, j->ngpus, cuda, sizeof(cuda));
	{
		struct buf g;
		int k;

		buf_init(&g);
		buf_puts(&g, "[");
		for (k = 0; k < j->ngpus; k++)
			buf_printf(&g, "%s%d", k ? "," : "", j->gpus[k]);
		buf_puts(&g, "]");
		free(j->run.gpus);
		j->run.gpus = buf_steal(&g);
	}
	gethostname(host, sizeof(host) - 1);
	if (slurm) { /* the node and the devices are Slurm's choice: see below */
		snprintf(host, sizeof(host), "a Slurm node (below)");
		if (j->recipe.gpus)
			snprintf(cuda, sizeof(cuda), "%d, granted by Slurm (below)", j->recipe.gpus);
	}
	if (j->argv)
		snprintf(why, sizeof(why), "# recorded_by: stage %s, pid %d, uid %d, via %s\n",
			 j->by_stage[0] ? j->by_stage : "-", (int)j->by_pid, (int)j->by_uid,
			 j->by_via);
	else if (j->measure_parent)
		snprintf(why, sizeof(why), "# side: %s%s\n", j->side ? "head" : "base",
			 j->warm ? " (warmup, discarded)" : "");
	else
		why[0] = '\0';
	/* The header, any note on $PACKET_JUNIT and the engine's part of
	 * the environment block go into the log in one append. */
	buf_init(&head);
	buf_printf(&head,
		   "# packetfs recipe log\n# recipe: %s\n# summary: %s\n# command: %s\n# cwd: %s\n"
		   "# host: %s\n# gpus: %s\n# head: %s\n# iteration: %d\n# started: %s\n%s%s",
		   j->recipe.name, j->recipe.summary, one_line(j->run.command, command, sizeof(command)),
		   cwd, host, cuda[0] ? cuda : "none", j->run.head, it.iteration, j->run.started_at, why,
		   slurm ? "# executor: slurm\n" : "\n");
	if (slurm)
		cuda[0] = '\0';
	env = pipe__make_env(p, &it, "validate", j->recipe.name, cuda);
	if (env && j->measure_parent) { /* a measured run's worktree is its side's checkout */
		size_t k;
		char *w;

		for (k = 0; env[k]; k++)
			if (strncmp(env[k], "PACKET_WORKTREE=", 16) == 0 &&
			    (w = malloc(strlen(cwd) + 17)) != NULL) {
				snprintf(w, strlen(cwd) + 17, "PACKET_WORKTREE=%s", cwd);
				free(env[k]);
				env[k] = w;
			}
	}
	rc = pipe__junit_open(p, j, 1);
	if (rc == 0 && env) {
		char var[PATH_MAX + 32];

		snprintf(var, sizeof(var), "PACKET_JUNIT=%s", j->junit_path);
		strv_push(&env, var);
		if (j->measure_parent && pipe__measure_metrics_path(j, var + 15, sizeof(var) - 15) == 0) {
			memcpy(var, "PACKET_METRICS=", 15);
			strv_push(&env, var);
		}
	} else if (rc) {
		buf_printf(&head, "# packetfs: no $PACKET_JUNIT: %s\n", strerror(-rc));
	}
	/* The command runs behind a script that first prints, where it
	 * runs, the environment it runs in (runenv.h); for a local run the
	 * engine reads the machine's part itself, into the log first. */
	buf_init(&script);
	if (slurm) {
		rc = runenv_script(j->recipe.versions, 1, &script);
	} else {
		rc = runenv_local(j->recipe.versions, env_path(env), &head, &script);
		direct = rc == 1;
		rc = rc < 0 ? rc : 0;
	}
	/* A local run that may start at once writes its header, its start
	 * event and its process group in one transaction once it runs
	 * (pipe__recipe_started); with run_as, a failure to become the user is
	 * logged after the header (pipe__job_spawn). */
	later = !slurm && !pipeline_config_get(p->pl)->run_as;
	if (head.len && !later)
		pipe__log_append(p, j, head.data, head.len);
	run_argv = rc == 0 ? calloc(strv_len(argv) + 5, sizeof(char *)) : NULL;
	if (run_argv) {
		size_t k, o = 0;

		if (!direct) {
			run_argv[o++] = sh;
			run_argv[o++] = dash_c;
			run_argv[o++] = script.data;
			run_argv[o++] = arg0;
		}
		for (k = 0; argv[k]; k++)
			run_argv[o + k] = argv[k];
	}
	if (!later)
		pipe__event(p, &it, "recipe_started",
			    ",\"recipe\":\"%s\",\"run\":%d,\"gpus\":%s,\"log\":\"%s\"",
			    j->recipe.name, j->run.run_no, j->run.gpus, j->run.log_path);
	p->running_recipes++;
	if (slurm) {
		if (run_argv)
			pipe__slurm_start(p, j, &it, run_argv, env, cwd);
		item_clear(&it);
		strv_free(env);
		free(run_argv);
		buf_free(&script);
		buf_free(&head);
		if (!run_argv) {
			struct runner_result res = {0};

			res.spawn_error = -ENOMEM;
			pipe__recipe_exit(p, j, &res);
			pipe__job_free(j);
		}
		return;
	}
	item_clear(&it);
	j->start_later = later;
	if (later) { /* pipe__job_spawn's start (job_started) writes it */
		j->start_head = head;
		buf_init(&head);
	}
	rc = run_argv ? pipe__job_spawn(p, j, run_argv, env, cwd, (unsigned)j->recipe.timeout_s,
					NULL, NULL, NULL)
		      : -ENOMEM;
	if (later && rc) {
		pipe__recipe_started(p, j, &j->start_head, 0);
		buf_free(&j->start_head);
	}
	buf_free(&head);
	strv_free(env);
	free(run_argv);
	buf_free(&script);
	if (rc) {
		struct runner_result res = {0};

		res.spawn_error = rc;
		pipe__recipe_exit(p, j, &res);
		pipe__job_free(j);
	}
}
