/*
 * pipe_stage.c - the end of a stage on the loop thread (SPEC §5): its
 * exit and products, what it means for the item (a verdict, an
 * assessment, a loop back to print, a disposition) and the advance to the
 * next stage. Rounds stages end in pipe_round.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"
#include "plan.h"

void pipe__stage_advance(struct pipe *p, struct item *it, const char *name)
{
	struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	size_t i;

	if (it->template[0] && !config_path(pipeline_config_get(p->pl), it->template)) {
		char why[256];

		snprintf(why, sizeof(why), "template %s is no longer in the pipeline; run plan "
			 "again", it->template);
		pipe__set_state(p, it, ITEM_FAILED, why);
		return;
	}
	if (!config_stage(cfg, name, &i)) {
		char why[256];

		snprintf(why, sizeof(why), "stage %s is no longer in the pipeline; use run STAGE", name);
		pipe__set_state(p, it, ITEM_FAILED, why);
		return;
	}
	if (i + 1 >= cfg->nstages) {
		pipe__set_state(p, it, ITEM_DONE, "");
		return;
	}
	if (it->hold) {
		pipe__set_state(p, it, ITEM_WAITING, "");
		return;
	}
	pipe__start_stage_auto(p, it, i + 1);
}

/* Whether the pipeline validates the plan's recipes. */
static int has_validate(const struct pfs_config *cfg)
{
	size_t k;

	for (k = 0; k < cfg->nstages; k++)
		if (cfg->stages[k].recipes_from_plan)
			return 1;
	return 0;
}

/* Checks a stage's products; 0 or -EINVAL with the reason in why. A stage
 * that produces plan.md gets the plan's disposition (SPEC §5) into
 * disposition (size DISPOSITION_MAX), "" when it has none. The first
 * stage (first) chooses the item's path first (pipe__route), so that the
 * plan is checked against the stages it leads to. */
static int check_products(struct pipe *p, struct item *it, const struct pfs_stage *st,
			  int first, char *why, size_t size, char *disposition)
{
	struct doc_meta m;
	char **v;

	disposition[0] = '\0';
	for (v = st->produces; v && *v; v++) {
		if (store_doc_stat(p->pl->store, it->id, *v, &m) || m.is_dir || m.size == 0) {
			snprintf(why, size, "%s: did not produce %s (missing or empty)", st->name, *v);
			return -EINVAL;
		}
	}
	if (first && pipe__route(p, it, st->name, why, size))
		return -EINVAL;
	for (v = st->produces; v && *v; v++) {
		if (store_doc_stat(p->pl->store, it->id, *v, &m) || m.is_dir || m.size == 0) {
			snprintf(why, size, "%s: did not produce %s (missing or empty)", st->name, *v);
			return -EINVAL;
		}
		if (strcmp(*v, "plan.md") == 0) {
			char *plan = NULL, word[DISPOSITION_MAX];
			size_t len;
			int rc = store_doc_read(p->pl->store, it->id, "plan.md", &plan, &len);

			rc = rc ? rc : recipe_plan_disposition(plan, len, word, sizeof(word));
			free(plan);
			if (rc < 0) {
				snprintf(why, size, "%s: %s", st->name,
					 rc == -EINVAL ? word : strerror(-rc));
				return -EINVAL;
			}
			if (rc == 1)
				snprintf(disposition, DISPOSITION_MAX, "%s", word);
		}
		if (strcmp(*v, "plan.md") == 0) {
			struct scope sc;
			char err[320];
			int rc = plan_scope_read(p->pl->store, it->id, &sc, err, sizeof(err));

			scope_free(&sc);
			if (rc < 0) {
				snprintf(why, size, "%s: %s", st->name,
					 rc == -EINVAL ? err : strerror(-rc));
				return -EINVAL;
			}
		}
		/* A plan that ends the item needs no recipes. */
		if (strcmp(*v, "plan.md") == 0 && !disposition[0] &&
		    has_validate(pipeline_config_item(p->pl, it))) {
			const struct recipe_catalog *cat;
			char **names = NULL;
			size_t k;
			int rc = plan_names(p->pl->store, it->id, &names);

			if (rc) {
				snprintf(why, size, "%s: plan.md has no ```validation-recipes block", st->name);
				return -EINVAL;
			}
			cat = pipeline_recipes_hold(p->pl);
			for (k = 0; names[k]; k++) {
				if (!recipe_find(cat, names[k])) {
					snprintf(why, size, "%s: plan.md names unknown recipe '%s'", st->name,
						 names[k]);
					rc = -EINVAL;
					break;
				}
			}
			pipeline_recipes_release(p->pl);
			strv_free(names);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int pipe__is_print_stage(const struct pfs_config *cfg, const struct pfs_stage *st)
{
	size_t k;

	if (strcmp(st->name, "print") == 0)
		return 1;
	for (k = 0; k < cfg->nstages; k++)
		if (cfg->stages[k].on_needs_changes && strcmp(cfg->stages[k].on_needs_changes, st->name) == 0)
			return 1;
	return 0;
}

/* Reports uncommitted changes a print stage left (they are not committed
 * for it): a warning into warn, its log and the events. */
static void check_worktree(struct pipe *p, struct job *j, const struct item *it,
			   const struct pfs_stage *st, char *warn, size_t size)
{
	struct buf dirty;
	char wt[PATH_MAX];

	buf_init(&dirty);
	snprintf(wt, sizeof(wt), "%s/worktrees/%s", p->pl->store_dir, it->name);
	if (repo_worktree_dirty(wt, &dirty) == 1 && dirty.data) {
		snprintf(warn, size, "warning: %s: %s left in the worktree (packetfs does not commit "
			 "them)", st->name, dirty.data);
		pipe__log_line(p, j, "[packetfs] %s\n", warn);
		pipe__event(p, it, "uncommitted", ",\"stage\":\"%s\"", st->name);
	}
	buf_free(&dirty);
}

void pipe__drop_approve(struct pipe *p, struct item *it, const char *stage)
{
	if (!it->approved)
		return;
	it->approved = 0;
	pipe__event(p, it, "approve_dropped", ",\"stage\":\"%s\"", stage);
}

/* Tells watchers that change.diff (and evidence.md, whose runs went stale)
 * changed when the item's branch no longer points at old_head (stage
 * programs commit on it). */
static void notify_diff(struct pipe *p, const struct item *it, const char *old_head)
{
	char head[41] = "";

	repo_branch_head(pipeline_config_get(p->pl)->repo, it->branch, head);
	if (strcmp(head, old_head) != 0) {
		pipe__changed(p->pl, it->name, "change.diff", PIPELINE_MODIFIED);
		/* Runs at the old head are stale now: evidence.md says so. */
		pipe__changed(p->pl, it->name, "validation/evidence.md", PIPELINE_MODIFIED);
		pipe__changed(p->pl, it->name, "validation/junit.xml", PIPELINE_MODIFIED);
		pipe__changed(p->pl, it->name, "validation/measurements.md", PIPELINE_MODIFIED);
		pipe__changed(p->pl, it->name, "validation/scope.md", PIPELINE_MODIFIED);
	}
}

void pipe__stage_done(struct pipe *p, struct job *j, const struct runner_result *res)
{
	struct pfs_config *cfg = j->cfg;
	const struct pfs_stage *st = &cfg->stages[j->stage_index];
	char why[768] = "", warn[768] = "", disposition[DISPOSITION_MAX] = "", lost[256];
	struct item it;
	int ok = res && res->spawn_error == 0 && res->term_signal == 0 && res->exit_code == 0 &&
		 !res->timed_out && !res->cancelled;

	if (res && ok && pipe__log_lost(j, lost, sizeof(lost))) {
		/* A log that misses output shows no whole run: the stage fails. */
		ok = 0;
		free(j->why);
		j->why = strdup(lost);
	}
	if (res) {
		/* Before the footer, which stays the log's last line. */
		if (pipe__log_lost(j, lost, sizeof(lost)))
			pipe__log_line(p, j, "\n[packetfs] %s\n", lost);
		if (res->leftovers)
			pipe__log_line(p, j, "\n[packetfs] ended %d process(es) it left running "
				       "(signal %d)", res->leftovers, res->kill_signal);
		if (res->spawn_error)
			pipe__log_line(p, j, "\n[packetfs] could not start: %s\n",
				       strerror(-res->spawn_error));
		else if (res->term_signal && p->shutting_down)
			pipe__log_line(p, j, "\n[packetfs] interrupted: the daemon stopped; "
				       "ended by signal %d after %.1f s\n", res->term_signal,
				       res->duration_s);
		else if (res->term_signal)
			pipe__log_line(p, j, "\n[packetfs] ended by signal %d%s after %.1f s\n",
				       res->term_signal,
				       res->timed_out ? " (timeout)" : res->cancelled ? " (cancel)" : "",
				       res->duration_s);
		else
			pipe__log_line(p, j, "\n[packetfs] exit code %d after %.1f s\n",
				       res->exit_code, res->duration_s);
		j->run.has_exit_code = res->spawn_error == 0 && res->term_signal == 0;
		j->run.exit_code = res->exit_code;
		j->run.signal = res->term_signal;
	}
	if (store_item_get_id(p->pl->store, j->item_id, &it)) {
		pipe__run_seal(p, &j->run, res ? res->duration_s : 0);
		return;
	}
	notify_diff(p, &it, j->run.head);
	/* approve counts only when given after the last print ended: one given
	 * while print ran did not see the change it would let through. */
	if (pipe__is_print_stage(cfg, st))
		pipe__drop_approve(p, &it, st->name);
	if (p->shutting_down) {
		char ref[REWIND_REF_MAX], *rewound = NULL;

		j->run.status = RUN_INTERRUPTED;
		/* Never run again on top of its own commits (pipe_recover.c). */
		pipe__rewind(p->pl, &it, &j->run, ref, sizeof(ref));
		if (ref[0])
			rewound = pipe__rewound_why(ref);
		pipe__run_seal(p, &j->run, res ? res->duration_s : 0);
		pipe__set_state(p, &it, cfg->on_interrupt_fail ? ITEM_FAILED : ITEM_QUEUED,
				rewound ? rewound : "interrupted: the daemon stopped while this ran");
		free(rewound);
		item_clear(&it);
		return;
	}
	/* A round that exited 0 or 75 goes on in pipe_round.c. */
	if (st->rounds_max && res && !res->spawn_error && !res->term_signal && !res->timed_out &&
	    !res->cancelled && pipe__round_exit(p, j, &it, res->exit_code, res->duration_s)) {
		item_clear(&it);
		return;
	}
	if (res && (res->cancelled || res->timed_out)) {
		j->run.status = res->timed_out ? RUN_TIMED_OUT : RUN_CANCELLED;
		/* The signal that ended it, or else the one it was sent (a
		 * program may catch SIGTERM and exit). */
		snprintf(why, sizeof(why), "%s: %s (signal %d)", st->name,
			 res->timed_out ? "timed out" : "cancelled",
			 res->term_signal ? res->term_signal : res->kill_signal);
	} else if (!ok && res) {
		j->run.status = RUN_FAILED;
		if (j->why)
			snprintf(why, sizeof(why), "%s: %s", st->name, j->why);
		else if (res->spawn_error)
			snprintf(why, sizeof(why), "%s: cannot run %s: %s", st->name,
				 st->run ? st->run[0] : "?", strerror(-res->spawn_error));
		else if (res->term_signal)
			snprintf(why, sizeof(why), "%s: killed by signal %d (see %s)", st->name,
				 res->term_signal, j->run.log_path);
		else
			snprintf(why, sizeof(why), "%s: exited with code %d (see %s)", st->name,
				 res->exit_code, j->run.log_path);
	} else if (check_products(p, &it, st, j->stage_index == 0, why, sizeof(why),
				  disposition)) {
		j->run.status = RUN_FAILED;
		pipe__log_line(p, j, "[packetfs] %s\n", why);
	} else {
		j->run.status = RUN_SUCCEEDED;
		if (pipe__is_print_stage(cfg, st))
			check_worktree(p, j, &it, st, warn, sizeof(warn));
	}
	/* The log is complete: seal it (its sha256 is evidence). */
	pipe__run_seal(p, &j->run, res ? res->duration_s : 0);
	pipe__event(p, &it, "stage_finished",
		    ",\"stage\":\"%s\",\"run\":%d,\"status\":\"%s\",\"log\":\"%s\"", st->name,
		    j->run.run_no, run_status_name(j->run.status), j->run.log_path);
	if (j->run.status != RUN_SUCCEEDED) {
		it.stage_ok = 0;
		pipe__set_state(p, &it, ITEM_FAILED, why);
		item_clear(&it);
		return;
	}
	it.stage_ok = 1;
	pipe__item_set(&it.last_error, warn);
	if (disposition[0]) {
		/* The plan ends the item without a change (SPEC §5). */
		pipe__item_set(&it.disposition, disposition);
		pipe__log_line(p, j, "[packetfs] Disposition: %s: the item ends here\n", disposition);
		pipe__event(p, &it, "disposition", ",\"disposition\":\"%s\"", disposition);
		pipe__set_state(p, &it, ITEM_DONE, "");
		item_clear(&it);
		return;
	}
	/* An approve lets one run of its gated stage through. */
	if (st->gate_approve)
		pipe__drop_approve(p, &it, st->name);
	/* What the stage means for the item: a verdict or an assessment of
	 * the head the stage started at (pipe_gate.c). */
	if (st->recipes_from_plan && st->run) {
		char v[32];

		pipe__doc_marker(p, &it, "change-validation.md", "Verdict", v, sizeof(v));
		pipe__set_verdict(&it, v, j->run.head);
	}
	if (config_stage_reviews(st)) {
		char a[32];
		size_t back;

		pipe__doc_marker(p, &it, "review.md", "Assessment", a, sizeof(a));
		if (strcmp(a, "sound") != 0 && strcmp(a, "needs_changes") != 0) {
			it.stage_ok = 0;
			pipe__set_assessment(&it, "", NULL);
			snprintf(why, sizeof(why), "%s: review.md does not end with "
				 "\"## Assessment: sound|needs_changes\"", st->name);
			pipe__set_state(p, &it, ITEM_FAILED, why);
			item_clear(&it);
			return;
		}
		pipe__set_assessment(&it, a, j->run.head);
		if (strcmp(a, "needs_changes") == 0 && !st->on_needs_changes) {
			snprintf(why, sizeof(why), "%s: needs_changes at %.12s (the stage has no "
				 "on_needs_changes: change the branch, then run %s again)",
				 st->name, j->run.head, st->name);
			pipe__set_state(p, &it, ITEM_BLOCKED, why);
			item_clear(&it);
			return;
		}
		if (strcmp(a, "needs_changes") == 0) {
			if (it.iteration >= st->max_iterations) {
				snprintf(why, sizeof(why), "%s: needs_changes after %d iterations (max_iterations %d)",
					 st->name, it.iteration, st->max_iterations);
				pipe__set_state(p, &it, ITEM_BLOCKED, why);
				item_clear(&it);
				return;
			}
			if (!config_stage(pipeline_config_item(p->pl, &it), st->on_needs_changes,
					  &back)) {
				snprintf(why, sizeof(why), "%s: stage %s is no longer in the pipeline",
					 st->name, st->on_needs_changes);
				pipe__set_state(p, &it, ITEM_FAILED, why);
				item_clear(&it);
				return;
			}
			it.iteration++;
			pipe__set_verdict(&it, "", NULL);
			pipe__set_assessment(&it, "", NULL);
			pipe__item_write(p, &it);
			pipe__event(p, &it, "iteration", ",\"iteration\":%d,\"stage\":\"%s\"",
				    it.iteration, st->on_needs_changes);
			if (it.hold) {
				/* Held: release or advance resumes at the loop's target. */
				pipe__item_set(&it.stage, st->on_needs_changes);
				it.stage_ok = 0;
				pipe__set_state(p, &it, ITEM_WAITING, "");
			} else {
				pipe__start_stage_auto(p, &it, back);
			}
			item_clear(&it);
			return;
		}
	}
	pipe__item_write(p, &it);
	pipe__stage_advance(p, &it, st->name);
	item_clear(&it);
}

