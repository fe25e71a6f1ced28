/*
 * pipe_command.c - the ctl commands of SPEC §4 on the loop thread:
 * advance, run, rerun (also `rerun failed`, and rerun lines that join a
 * rerun in progress), cancel, approve, hold, release, archive, probe
 * (compute-env.md asked again, whatever the item's state). Each
 * command's outcome becomes the item's last_result (ctl's result): this
 * is its only writer. pipe.c starts and ends the stages they ask for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"
#include "plan.h"

static int stage_index_of(struct pipe *p, const struct item *it, const char *name, size_t *i)
{
	return config_stage(pipeline_config_item(p->pl, it), name, i) ? 0 : -ENOENT;
}

int pipe__next_stage(struct pipe *p, const struct item *it, size_t *i, char *why, size_t size)
{
	struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	size_t cur;

	if (!it->stage[0]) {
		*i = 0;
		return 0;
	}
	if (stage_index_of(p, it, it->stage, &cur)) {
		snprintf(why, size, "stage %s is not in the pipeline any more; use run STAGE", it->stage);
		return -EINVAL;
	}
	if (it->disposition[0]) {
		snprintf(why, size, "the plan ended the item (Disposition: %s); run %s to plan again",
			 it->disposition, it->stage);
		return -EINVAL;
	}
	if (!it->stage_ok) {
		*i = cur;
		return 0;
	}
	if (cur + 1 >= cfg->nstages) {
		snprintf(why, size, "the pipeline is finished (done)");
		return -EINVAL;
	}
	*i = cur + 1;
	return 0;
}

static int cancel_item(struct pipe *p, struct item *it)
{
	struct job *j, *next, *keep = NULL, **tail = &keep, *mine = NULL, **mtail = &mine;
	struct batch *b;
	int found = 0;

	for (b = p->batches; b; b = b->next)
		if (b->item_id == it->id) {
			b->cancelled = 1;
			found |= b->measure_git > 0; /* it ends once its git work is done */
		}
	/* A measured batch waiting for clean GPUs ends now. */
	for (j = p->measure_waiting; j; j = j->next)
		if (j->item_id == it->id) {
			found = 1;
			pipe__measure_gpu_recheck(p, 0);
			break;
		}
	/* Take the item's queued recipes off the queue first: recording each
	 * one pumps the queue. */
	for (j = p->queue; j; j = next) {
		next = j->next;
		j->next = NULL;
		if (j->item_id != it->id) {
			*tail = j;
			tail = &j->next;
		} else {
			*mtail = j;
			mtail = &j->next;
		}
	}
	p->queue = keep;
	/* They end as cancelled without running. */
	for (j = mine; j; j = next) {
		next = j->next;
		j->next = NULL;
		found = 1;
		pipe__recipe_not_run(p, j, RUN_CANCELLED, "cancelled before it started");
		pipe__job_free(j);
	}
	for (j = p->jobs; j; j = j->next) {
		if (j->item_id == it->id) {
			if (j->sjob)
				slurm_cancel(j->sjob);
			else
				runner_cancel(j->proc);
			found = 1;
		}
	}
	/* A validation whose recipes were all queued finishes now. */
	for (b = p->batches; b; b = b->next) {
		if (b->item_id == it->id && b->pending == 0) {
			pipe__batch_step(p, b);
			found = 1;
			break;
		}
	}
	return found;
}

/* The rerun batch of an item that runs now, or NULL. */
static struct batch *rerun_batch(struct pipe *p, int64_t item_id)
{
	struct batch *b;

	for (b = p->batches; b; b = b->next)
		if (b->item_id == item_id && b->rerun)
			return b;
	return NULL;
}

/* The recipes `rerun failed` means: every recipe the plan names whose
 * latest engine run at the head is not validated (a new strv), or NULL
 * with why. */
static char **failed_names(struct pipe *p, const struct item *it, char *why, size_t size)
{
	char **names = NULL, **lines = NULL, **out = NULL, head[41] = "", reason[256];
	size_t k, nl = 0;

	if (plan_names(p->pl->store, it->id, &names)) {
		snprintf(why, size, "rerun failed: plan.md names no recipes");
		return NULL;
	}
	if (repo_branch_head(pipeline_config_get(p->pl)->repo, it->branch, head) ||
	    store_registry_lines(p->pl->store, it->id, &lines, &nl)) {
		snprintf(why, size, "rerun failed: cannot read the evidence");
		strv_free(names);
		return NULL;
	}
	out = calloc(1, sizeof(char *));
	for (k = 0; out && names[k]; k++)
		if (registry_gate((char *[]){names[k], NULL}, lines, nl, head, reason,
				  sizeof(reason)) && strv_push(&out, names[k])) {
			strv_free(out);
			out = NULL;
		}
	if (out && !out[0]) {
		snprintf(why, size, "rerun failed: nothing to rerun: every recipe the plan names "
			 "validated at %.12s", head);
		strv_free(out);
		out = NULL;
	}
	strv_free(names);
	strv_free(lines);
	return out;
}

/*
 * `rerun RECIPE` and `rerun failed` (SPEC §4): queues the runs in a rerun
 * batch - a new one, or the one the item's earlier rerun lines made, so
 * that several rerun lines queue their runs - or refuses with why.
 */
static int rerun(struct pipe *p, struct item *it, const char *what, int busy, char *why,
		 size_t size)
{
	const struct recipe_catalog *cat;
	struct batch *b = rerun_batch(p, it->id);
	char **names = NULL;
	int rc = 0;
	size_t k;

	if (busy && !b) {
		snprintf(why, size, "rerun: something is running for this item");
		return -EINVAL;
	}
	if (strcmp(what, "failed") == 0)
		names = failed_names(p, it, why, size);
	else if (strv_push(&names, what))
		return -ENOMEM;
	if (!names)
		return -EINVAL;
	cat = pipeline_recipes_hold(p->pl);
	pipe__order_names(cat, names);
	for (k = 0; names[k] && rc == 0; k++) {
		const struct recipe *r = recipe_find(cat, names[k]);

		if (!r) {
			snprintf(why, size, "rerun: no recipe '%s' in the catalog", names[k]);
			rc = -EINVAL;
		} else if (r->procedure) {
			snprintf(why, size, "rerun: %s is a procedure: run its commands with "
				 "packetfs record %s -- COMMAND", names[k], names[k]);
			rc = -EINVAL;
		}
	}
	if (rc == 0 && !b) {
		b = calloc(1, sizeof(*b));
		if (b) {
			b->item_id = it->id;
			snprintf(b->item, sizeof(b->item), "%s", it->name);
			b->rerun = 1;
			b->prev_state = it->state;
			b->prev_error = strdup(it->last_error);
			/* The item runs before anything is queued: a state the
			 * store refuses (a full disk) refuses the command whole. */
			rc = pipe__state_write(p, it, ITEM_RUNNING, "");
			if (rc) {
				snprintf(why, size, "rerun: %s", strerror(-rc));
				free(b->prev_error);
				free(b);
				b = NULL;
			} else {
				b->next = p->batches;
				p->batches = b;
			}
		} else {
			rc = -ENOMEM;
		}
	}
	if (rc == 0)
		b->pending++; /* held until every recipe is queued */
	for (k = 0; rc == 0 && names[k]; k++)
		pipe__queue_recipe(p, it, recipe_find(cat, names[k]), b, NULL);
	pipeline_recipes_release(p->pl);
	strv_free(names);
	if (rc)
		return rc;
	pipe__pump(p);
	b->pending--;
	pipe__batch_step(p, b);
	return 0;
}

int pipe_command(struct pipe *p, struct pipe_cmd *cmd)
{
	const char *v = cmd->verb;
	struct item it;
	size_t i;
	int rc = 0, busy;

	ASSERT_LOOP_THREAD(p->pl);
	if (store_item_get(p->pl->store, cmd->item, &it)) {
		snprintf(cmd->msg, sizeof(cmd->msg), "no such item");
		return -ENOENT;
	}
	/* A state of the item that the store did not take (a full disk) is
	 * written first; while it cannot be, every command is refused. */
	if (!cmd->refused && (rc = pipe__unstored_flush(p, it.id)) != 0) {
		snprintf(cmd->msg, sizeof(cmd->msg), "%s: the item's last state (%s) is not stored "
			 "yet: %s", v, item_state_name(it.state), strerror(-rc));
		item_clear(&it);
		return rc;
	}
	item_clear(&it); /* read again: the flush may have written it */
	if (store_item_get(p->pl->store, cmd->item, &it)) {
		snprintf(cmd->msg, sizeof(cmd->msg), "no such item");
		return -ENOENT;
	}
	busy = pipe__item_busy(p, it.id);
	if (cmd->refused) {
		/* Refused by its sender (ctl.c): only its result is recorded. */
		snprintf(cmd->msg, sizeof(cmd->msg), "%s", cmd->refusal);
		rc = -EINVAL;
	} else if (strcmp(v, "advance") == 0 && !cmd->arg[0]) {
		if (busy || it.state == ITEM_RUNNING || it.state == ITEM_QUEUED) {
			snprintf(cmd->msg, sizeof(cmd->msg), "advance: a stage is running (%s)", it.stage);
			rc = -EINVAL;
		} else if ((rc = pipe__next_stage(p, &it, &i, cmd->msg, sizeof(cmd->msg))) == 0) {
			rc = pipe__start_stage(p, &it, i, 1);
			if (rc == -EBUSY)
				rc = 0;
		}
	} else if (strcmp(v, "run") == 0 && cmd->arg[0]) {
		if (busy) {
			snprintf(cmd->msg, sizeof(cmd->msg), "run: a stage is running (%s)", it.stage);
			rc = -EINVAL;
		} else if (stage_index_of(p, &it, cmd->arg, &i)) {
			snprintf(cmd->msg, sizeof(cmd->msg), "run: no stage '%s' in the pipeline%s%s",
				 cmd->arg, it.template[0] ? " of template " : "", it.template);
			rc = -EINVAL;
		} else {
			rc = pipe__start_stage(p, &it, i, 1);
			if (rc == -EBUSY)
				rc = 0;
		}
	} else if (strcmp(v, "rerun") == 0 && cmd->arg[0]) {
		rc = rerun(p, &it, cmd->arg, busy, cmd->msg, sizeof(cmd->msg));
	} else if (strcmp(v, "cancel") == 0 && !cmd->arg[0]) {
		if (!cancel_item(p, &it)) {
			if (it.state == ITEM_QUEUED) {
				rc = pipe__state_write(p, &it, ITEM_FAILED,
						       "cancelled while queued");
			} else {
				snprintf(cmd->msg, sizeof(cmd->msg), "cancel: nothing is running for this item");
				rc = -EINVAL;
			}
		}
	} else if (strcmp(v, "approve") == 0 && !cmd->arg[0]) {
		it.approved = 1;
		if ((rc = pipe__item_write(p, &it)) != 0)
			goto out;
		pipe__event(p, &it, "approved", NULL);
		if (it.state == ITEM_WAITING && !it.hold &&
		    pipe__next_stage(p, &it, &i, cmd->msg, sizeof(cmd->msg)) == 0 &&
		    pipeline_config_item(p->pl, &it)->stages[i].gate_approve) {
			rc = pipe__start_stage(p, &it, i, 1);
			if (rc == -EBUSY)
				rc = 0;
		}
		cmd->msg[0] = '\0';
	} else if (strcmp(v, "hold") == 0 && !cmd->arg[0]) {
		it.hold = 1;
		if ((rc = pipe__item_write(p, &it)) != 0)
			goto out;
		pipe__event(p, &it, "hold", NULL);
	} else if (strcmp(v, "release") == 0 && !cmd->arg[0]) {
		it.hold = 0;
		if ((rc = pipe__item_write(p, &it)) != 0)
			goto out;
		pipe__event(p, &it, "release", NULL);
		if (it.state == ITEM_WAITING &&
		    pipe__next_stage(p, &it, &i, cmd->msg, sizeof(cmd->msg)) == 0) {
			rc = pipe__start_stage(p, &it, i, 1);
			if (rc == -EBUSY)
				rc = 0;
		} else if (it.state == ITEM_QUEUED) {
			pipe_resume(p);
		}
		cmd->msg[0] = '\0';
	} else if (strcmp(v, "probe") == 0 && !cmd->arg[0]) {
		pipeline_cenv_refresh(p->pl);
	} else if (strcmp(v, "archive") == 0 && !cmd->arg[0]) {
		if (busy || it.state == ITEM_RUNNING) {
			snprintf(cmd->msg, sizeof(cmd->msg), "archive: a stage is running; cancel it first");
			rc = -EBUSY;
		} else {
			it.archived = 1;
			if ((rc = pipe__item_write(p, &it)) != 0)
				goto out;
			pipe__event(p, &it, "archived", NULL);
			pipe__changed(p->pl, NULL, it.name, PIPELINE_ARCHIVED);
		}
	} else {
		snprintf(cmd->msg, sizeof(cmd->msg), "unknown or malformed command '%s%s%s'", v,
			 cmd->arg[0] ? " " : "", cmd->arg);
		rc = -EINVAL;
	}
out:
	if (rc && !cmd->msg[0])
		snprintf(cmd->msg, sizeof(cmd->msg), "%s", strerror(-rc));
	{
		/* Remember the outcome for readers of ctl. */
		struct item now;
		char result[512];

		if (cmd->refused)
			snprintf(result, sizeof(result), "%s: error: %s", cmd->line, cmd->msg);
		else
			snprintf(result, sizeof(result), "%s%s%s: %s%s", v, cmd->arg[0] ? " " : "",
				 cmd->arg, rc ? "error: " : "ok", rc ? cmd->msg : "");
		if (store_item_get_id(p->pl->store, it.id, &now) == 0) {
			pipe__item_set(&now.last_result, result);
			/* status's "updated" moved; a full disk keeps the result
			 * in memory, where ctl still shows it */
			pipe__result_keep(p, it.id, pipe__item_write(p, &now) ? result : NULL);
			item_clear(&now);
		}
	}
	item_clear(&it);
	pipe__slot_freed(p);
	return rc;
}
