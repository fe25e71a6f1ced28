/*
 * pipe_round.c - rounds after publish (SPEC §5 "After publish"), on the
 * loop thread: a stage with "rounds" babysits what publish put out (CI,
 * review threads). It runs after publish, then every every_s seconds and
 * on `run STAGE` or `advance`, until its program exits 0 (settled) or max
 * rounds ran; exit 75 means not settled yet, any other status fails the
 * item like any stage.
 *
 * DESIGN. One round is one run of the stage (its own log, the item's
 * `round` counts them). When the program exits 0 or 75, the round goes on
 * in a job of its own that keeps the round's log open: if the branch head
 * moved during the round, the plan's script recipes run at the new head
 * (a batch whose stage_job is that job), and only when every recipe the
 * plan names is validated there (and the head touches no path the plan's
 * scope keeps) is the new head pushed to the remote the publish pushed
 * to. Then the round ends: settled, the item advances (done
 * after the last stage); not settled, it waits for a timer (one uv_timer
 * per waiting item), or is blocked after max rounds; a new head that did
 * not validate or could not be pushed blocks the item with the reason.
 *
 * A series of rounds goes on while the item stands at the rounds stage
 * unsettled (stage_ok 0, round > 0); otherwise the next start begins a new
 * series at round 1. `hold` keeps the timer from starting a round; a
 * restart re-arms the timers of items waiting between rounds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"
#include "plan.h"

/* The exit status by which a round says "not settled yet" (sysexits.h
 * EX_TEMPFAIL). */
#define ROUND_NOT_SETTLED 75

struct round_timer {
	uv_timer_t t;
	struct pipe *p;
	int64_t item_id;
	struct round_timer *next;
};

static void timer_closed(uv_handle_t *h)
{
	free(h->data);
}

static struct round_timer **timer_slot(struct pipe *p, int64_t item_id)
{
	struct round_timer **pp;

	for (pp = &p->round_timers; *pp && (*pp)->item_id != item_id; pp = &(*pp)->next)
		;
	return pp;
}

void pipe__round_unschedule(struct pipe *p, int64_t item_id)
{
	struct round_timer **pp = timer_slot(p, item_id), *t = *pp;

	if (!t)
		return;
	*pp = t->next;
	uv_timer_stop(&t->t);
	uv_close((uv_handle_t *)&t->t, timer_closed);
}

static void timer_fired(uv_timer_t *h)
{
	struct round_timer *t = h->data;
	struct pipe *p = t->p;
	const struct pfs_config *cfg;
	int64_t id = t->item_id;
	struct item it;
	size_t i;

	pipe__round_unschedule(p, id);
	if (p->shutting_down || store_item_get_id(p->pl->store, id, &it))
		return;
	cfg = pipeline_config_item(p->pl, &it);
	/* Only an item still waiting between rounds, not held: advance, run
	 * or hold may have come first. */
	if (!it.archived && !it.hold && it.state == ITEM_WAITING && !it.stage_ok &&
	    config_stage(cfg, it.stage, &i) && cfg->stages[i].rounds_max &&
	    !pipe__item_busy(p, id))
		pipe__start_stage_auto(p, &it, i);
	item_clear(&it);
}

/* Starts the next round of item_id in secs seconds (a timer already set
 * for it is kept as it is). */
static void schedule(struct pipe *p, int64_t item_id, int secs)
{
	struct round_timer *t;

	if (*timer_slot(p, item_id) || p->shutting_down)
		return;
	t = calloc(1, sizeof(*t));
	if (!t)
		return;
	t->p = p;
	t->item_id = item_id;
	t->t.data = t;
	if (uv_timer_init(&p->pl->loop, &t->t)) {
		free(t);
		return;
	}
	t->next = p->round_timers;
	p->round_timers = t;
	uv_timer_start(&t->t, timer_fired, (uint64_t)secs * 1000, 0);
}

void pipe__round_begin(struct pipe *p, struct item *it, const struct pfs_stage *st)
{
	pipe__round_unschedule(p, it->id);
	if (!(strcmp(it->stage, st->name) == 0 && !it->stage_ok && it->round > 0))
		it->round = 0;
	it->round++;
}

void pipe__round_resume(struct pipe *p, const struct item *it)
{
	const struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	size_t i;

	if (it->state == ITEM_WAITING && !it->stage_ok && it->round > 0 && !it->hold &&
	    it->round < (config_stage(cfg, it->stage, &i) ? cfg->stages[i].rounds_max : 0))
		schedule(p, it->id, cfg->stages[i].rounds_every_s);
}

/* The remote the publish before stage index si pushed to, or NULL. */
static const char *publish_remote(const struct pfs_config *cfg, size_t si)
{
	const char *remote = NULL;
	size_t k;

	for (k = 0; k < si && k < cfg->nstages; k++)
		if (cfg->stages[k].push_remote)
			remote = cfg->stages[k].push_remote;
	return remote;
}

/*
 * Ends the round of job rj (its run still open): error NULL for a round
 * that did what it should (rj->round_exit says settled or not), else the
 * reason the item is blocked (or failed, when cancelled). Frees rj.
 */
static void round_end(struct pipe *p, struct job *rj, const char *error, int cancelled)
{
	const struct pfs_config *cfg = rj->cfg;
	const struct pfs_stage *st = &cfg->stages[rj->stage_index];
	/* The round: its program, then its recipes and push. */
	double secs = rj->round_prog_s + (double)(uv_now(&p->pl->loop) - rj->round_exit_ms) / 1000;
	char why[1024];
	struct item it;

	rj->run.status = cancelled ? RUN_CANCELLED : p->shutting_down ? RUN_INTERRUPTED :
			 error ? RUN_FAILED : RUN_SUCCEEDED;
	if (error)
		pipe__log_line(p, rj, "[packetfs] %s\n", error);
	if (store_item_get_id(p->pl->store, rj->item_id, &it)) {
		pipe__run_seal(p, &rj->run, secs);
		pipe__job_free(rj);
		return;
	}
	if (!error && rj->round_exit == 0)
		pipe__log_line(p, rj, "[packetfs] round %d: settled\n", it.round);
	else if (!error)
		pipe__log_line(p, rj, "[packetfs] round %d: not settled (exit %d)\n", it.round,
			       ROUND_NOT_SETTLED);
	pipe__run_seal(p, &rj->run, secs);
	pipe__event(p, &it, "stage_finished",
		    ",\"stage\":\"%s\",\"run\":%d,\"status\":\"%s\",\"log\":\"%s\",\"round\":%d",
		    st->name, rj->run.run_no, run_status_name(rj->run.status), rj->run.log_path,
		    it.round);
	it.stage_ok = 0;
	if (p->shutting_down) {
		pipe__set_state(p, &it, cfg->on_interrupt_fail ? ITEM_FAILED : ITEM_QUEUED,
				"interrupted: the daemon stopped while this ran");
	} else if (error) {
		snprintf(why, sizeof(why), "%s: round %d: %s", st->name, it.round, error);
		pipe__set_state(p, &it, cancelled ? ITEM_FAILED : ITEM_BLOCKED, why);
	} else if (rj->round_exit == 0) {
		it.stage_ok = 1;
		pipe__item_write(p, &it);
		pipe__stage_advance(p, &it, st->name);
	} else if (it.round >= st->rounds_max) {
		snprintf(why, sizeof(why), "%s: not settled after %d rounds (max %d); run %s for "
			 "another", st->name, it.round, st->rounds_max, st->name);
		pipe__set_state(p, &it, ITEM_BLOCKED, why);
	} else {
		pipe__set_state(p, &it, ITEM_WAITING, "");
		pipe__event(p, &it, "round_waiting", ",\"stage\":\"%s\",\"round\":%d,\"next_s\":%d",
			    st->name, it.round, st->rounds_every_s);
		schedule(p, it.id, st->rounds_every_s);
	}
	item_clear(&it);
	pipe__job_free(rj);
}

static void round_pushed(struct pipe *p, struct job *rj, int rc, const char *err)
{
	round_end(p, rj, rc ? err : NULL, 0);
	pipe__pump(p);
	pipe__slot_freed(p);
}

void pipe__round_validated(struct pipe *p, struct batch *b)
{
	struct job *rj = b->stage_job;
	const struct pfs_config *cfg = rj->cfg;
	char **names = NULL, **lines = NULL, head[41] = "", reason[512] = "", why[768];
	char branch[160];
	const char *remote = publish_remote(cfg, (size_t)rj->stage_index);
	int cancelled = b->cancelled;
	struct item it;
	size_t nl = 0;
	int rc;

	b->stage_job = NULL;
	pipe__batch_free(p, b);
	if (cancelled || p->shutting_down || store_item_get_id(p->pl->store, rj->item_id, &it)) {
		round_end(p, rj, "cancelled while the plan's recipes ran: not pushed", cancelled);
		return;
	}
	/* The verdict of the new head, from the engine's runs there. */
	pipe__verdict_update(p, &it);
	pipe__item_write(p, &it);
	rc = repo_branch_head(cfg->repo, it.branch, head);
	if (rc == 0)
		rc = plan_names(p->pl->store, it.id, &names);
	if (rc == 0)
		rc = store_registry_lines(p->pl->store, it.id, &lines, &nl);
	if (rc == 0)
		rc = registry_gate(names, lines, nl, head, reason, sizeof(reason));
	else
		snprintf(reason, sizeof(reason), "cannot read the plan or the evidence: %s",
			 strerror(-rc));
	strv_free(names);
	strv_free(lines);
	/* A kept path touched is refused like a failing recipe (SPEC §6 "Scope"). */
	if (rc == 0)
		rc = pipe__scope_refused(p, &it, head, reason, sizeof(reason));
	snprintf(branch, sizeof(branch), "%s", it.branch);
	item_clear(&it);
	if (rc) {
		snprintf(why, sizeof(why), "the new head %.12s did not validate (%s): not pushed",
			 head, reason);
		round_end(p, rj, why, 0);
		return;
	}
	pipe__log_line(p, rj, "[packetfs] every recipe the plan names validated at %.12s\n", head);
	if (!remote) {
		pipe__log_line(p, rj, "[packetfs] no stage before this one pushes: nothing to push\n");
		round_end(p, rj, NULL, 0);
		return;
	}
	pipe__push_head(p, rj, remote, branch, head, round_pushed);
}

int pipe__round_exit(struct pipe *p, struct job *j, struct item *it, int exit_code,
		     double duration_s)
{
	struct batch *b;
	struct job *rj;
	char head[41] = "";

	if (exit_code != 0 && exit_code != ROUND_NOT_SETTLED)
		return 0;
	rj = calloc(1, sizeof(*rj));
	if (!rj)
		return 0;
	/* rj carries the round on: its run (moved out of j) stays open. */
	rj->p = p;
	rj->item_id = j->item_id;
	snprintf(rj->item, sizeof(rj->item), "%s", j->item);
	rj->is_stage = 1;
	rj->stage_index = j->stage_index;
	rj->cfg = j->cfg;
	rj->run = j->run;
	memset(&j->run, 0, sizeof(j->run));
	rj->round_exit = exit_code;
	rj->round_prog_s = duration_s;
	rj->round_exit_ms = uv_now(&p->pl->loop);
	if (repo_branch_head(rj->cfg->repo, it->branch, head) || strcmp(head, rj->run.head) == 0) {
		round_end(p, rj, NULL, 0);
		return 1;
	}
	pipe__log_line(p, rj, "[packetfs] round %d moved the head from %.12s to %.12s: the "
		       "plan's recipes run at %.12s before it is pushed\n", it->round,
		       rj->run.head, head, head);
	pipe__set_state(p, it, ITEM_RUNNING, "");
	b = calloc(1, sizeof(*b));
	if (!b) {
		round_end(p, rj, "out of memory: the new head's recipes cannot run: not pushed", 0);
		return 1;
	}
	/* The gate after the batch (pipe__round_validated) names what is
	 * missing: recipes the plan names that the engine cannot run. */
	b->item_id = it->id;
	snprintf(b->item, sizeof(b->item), "%s", it->name);
	b->stage_job = rj;
	b->round = 1;
	pipe__batch_run_plan(p, it, b);
	return 1;
}

void pipe__round_shutdown(struct pipe *p)
{
	while (p->round_timers)
		pipe__round_unschedule(p, p->round_timers->item_id);
}
