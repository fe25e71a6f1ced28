/*
 * pipe_record.c - recorded runs (SPEC §6 "The recorder"), on the loop
 * thread: a command that a validator chose, run by the engine as a run of
 * a catalog recipe.
 *
 * DESIGN. A recorded run is a batch of one recipe job whose command is the
 * caller's argv instead of the recipe's file (a procedure recipe has no
 * file: this is the only way it runs). It goes through the same queue,
 * needs, GPU pool, executor, clean-worktree check, log and registry line
 * as any recipe run (pipe_recipe.c), so it counts exactly like one; its
 * line adds recorded_by (the stage run that asked, found by its credential
 * or by ancestry, pipe_who.c; how it was found; the asking pid and its
 * uid). Its run row and log are made when the
 * request is accepted, with status "queued", so that the caller learns
 * the run number and log path at once and can follow the log from the
 * start. A recorded run leaves the item's state alone: a validator
 * records while its stage runs, a person while the item waits; when it
 * ends and no stage of the item runs, the verdict is recomputed at the
 * head as after a rerun.
 *
 * Invariants: a recorded job is on p->queue or p->jobs (or being
 * recorded) from acceptance to its registry line, exactly once; cancel
 * finds it by its run id on either list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"

/* Refuses cmd: -EINVAL (or rc) with the reason in cmd->msg. */
static int refuse(struct pipe_cmd *cmd, int rc, const char *fmt, const char *arg)
{
	snprintf(cmd->msg, sizeof(cmd->msg), fmt, arg);
	return rc;
}

static int record_start(struct pipe *p, struct pipe_cmd *cmd)
{
	const struct recipe_catalog *cat;
	const struct record_req *req = cmd->payload;
	const struct recipe *r;
	struct batch *b = NULL;
	struct job *j = NULL;
	char by_stage[64], by_via[16];
	struct item it;
	int rc;

	if (!req || !req->recipe)
		return refuse(cmd, -EINVAL, "%s", "no request");
	if (store_item_get(p->pl->store, cmd->item, &it))
		return refuse(cmd, -ENOENT, "no such item '%s'", cmd->item);
	if (it.archived)
		rc = refuse(cmd, -EINVAL, "item %s is archived", cmd->item);
	else if (!req->argv || !req->argv[0] || !req->argv[0][0])
		rc = refuse(cmd, -EINVAL, "%s", "empty command: give the command after --");
	else if (req->gpus < -1 || req->gpus > 16)
		rc = refuse(cmd, -EINVAL, "%s", "gpus must be 0 to 16");
	else if (req->timeout_s < -1)
		rc = refuse(cmd, -EINVAL, "%s", "timeout must be 0 (none) or more seconds");
	else if ((rc = pipeline_record_stage(p->pl, it.id, req->pid, req->credential, by_stage,
					     sizeof(by_stage), by_via, sizeof(by_via))) == -EACCES)
		rc = refuse(cmd, -EACCES, "the run credential is no active stage run's of item %s "
			    "(that run has ended, or the credential is not one the engine gave)",
			    cmd->item);
	else if (rc == 0 && !(b = calloc(1, sizeof(*b))))
		rc = -ENOMEM;
	if (rc) {
		item_clear(&it);
		return rc;
	}
	cat = pipeline_recipes_hold(p->pl);
	r = recipe_find(cat, req->recipe);
	if (!r)
		rc = refuse(cmd, -EINVAL, "no recipe '%s' in the catalog", req->recipe);
	if (rc == 0) {
		b->item_id = it.id;
		snprintf(b->item, sizeof(b->item), "%s", it.name);
		b->record = 1;
		b->next = p->batches;
		p->batches = b;
		rc = pipe__queue_recipe(p, &it, r, b, &j);
	}
	pipeline_recipes_release(p->pl);
	if (rc) {
		if (p->batches == b)
			pipe__batch_free(p, b);
		else
			free(b);
		item_clear(&it);
		return rc;
	}
	if (req->gpus >= 0)
		j->recipe.gpus = req->gpus;
	if (req->timeout_s >= 0)
		j->recipe.timeout_s = req->timeout_s;
	j->argv = strv_dup(req->argv);
	j->by_uid = req->uid;
	j->by_pid = req->pid;
	snprintf(j->by_stage, sizeof(j->by_stage), "%s", by_stage);
	snprintf(j->by_via, sizeof(j->by_via), "%s", by_via);
	rc = j->argv ? pipe__job_open_run(p, j, &it, "recipe", j->recipe.name, RUN_QUEUED) : -ENOMEM;
	if (rc == 0) {
		char *c = strv_join(j->argv, " ", 1);

		rc = c ? 0 : -ENOMEM;
		if (c) {
			free(j->run.command);
			j->run.command = c;
			/* The command as the run shows it; the row is written whole again
			 * when the run is sealed. */
			(void)store_run_update(p->pl->store, &j->run);
		}
	}
	if (rc) {
		/* Nothing was recorded: the job leaves the queue unseen. */
		pipe__job_unlink(&p->queue, j);
		pipe__job_free(j);
		pipe__batch_free(p, b);
		item_clear(&it);
		snprintf(cmd->msg, sizeof(cmd->msg), "cannot record the run in the store: %s",
			 strerror(-rc));
		return rc;
	}
	cmd->run_id = j->run.id;
	cmd->run_no = j->run.run_no;
	snprintf(cmd->log, sizeof(cmd->log), "%s", j->run.log_path);
	pipe__event(p, &it, "record_queued",
		    ",\"recipe\":\"%s\",\"run\":%d,\"log\":\"%s\",\"recorded_by\":{\"stage\":\"%s\","
		    "\"pid\":%d,\"uid\":%d,\"via\":\"%s\"}", j->recipe.name, j->run.run_no,
		    j->run.log_path, j->by_stage, (int)j->by_pid, (int)j->by_uid, j->by_via);
	item_clear(&it);
	pipe__batch_step(p, b);
	return 0;
}

static int record_cancel(struct pipe *p, struct pipe_cmd *cmd)
{
	struct item it;
	struct run r;
	struct job *j;

	if (store_item_get(p->pl->store, cmd->item, &it))
		return refuse(cmd, -ENOENT, "no such item '%s'", cmd->item);
	for (j = p->queue; j; j = j->next)
		if (j->item_id == it.id && j->run.id == cmd->run_id)
			break;
	if (j) {
		pipe__job_unlink(&p->queue, j);
		pipe__recipe_not_run(p, j, RUN_CANCELLED, "cancelled before it started");
		pipe__job_free(j);
		item_clear(&it);
		pipe__slot_freed(p);
		return 0;
	}
	for (j = p->jobs; j; j = j->next)
		if (j->item_id == it.id && j->run.id == cmd->run_id && !j->is_stage)
			break;
	if (j) {
		if (j->sjob)
			slurm_cancel(j->sjob);
		else
			runner_cancel(j->proc);
		item_clear(&it);
		return 0;
	}
	if (store_run_get(p->pl->store, cmd->run_id, &r) == 0) {
		int mine = r.item_id == it.id;

		snprintf(cmd->msg, sizeof(cmd->msg), "run %d has ended (%s)", r.run_no,
			 run_status_name(r.status));
		run_clear(&r);
		item_clear(&it);
		if (mine)
			return -EALREADY;
	} else {
		item_clear(&it);
	}
	snprintf(cmd->msg, sizeof(cmd->msg), "no such run of item %s", cmd->item);
	return -ENOENT;
}

int pipe_record_command(struct pipe *p, struct pipe_cmd *cmd)
{
	ASSERT_LOOP_THREAD(p->pl);
	if (strcmp(cmd->verb, "record") == 0)
		return record_start(p, cmd);
	if (strcmp(cmd->verb, "record-cancel") == 0)
		return record_cancel(p, cmd);
	snprintf(cmd->msg, sizeof(cmd->msg), "unknown command '%s'", cmd->verb);
	return -EINVAL;
}
