/*
 * pipe_push.c - the push of a publish stage (SPEC §5), on the loop thread
 * and libuv's thread pool.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"
#include "repo.h"

/*
 * Publish pushes the branch before its program runs. A push may take as
 * long as the network does, so it runs on libuv's thread pool (libgit2
 * with a repository object of its own); the job waits on p->pushing, where
 * cancel and shutdown can see it, and goes on in push_done.
 */
struct push {
	uv_work_t req;
	struct pipe *p;
	struct job *j;
	int cancelled;
	int rc;
	char repo[PATH_MAX], remote[256], branch[160], err[512];
	char expect[41]; /* the head the gates judged */
};

static void push_work(uv_work_t *req)
{
	struct push *w = req->data;
	char head[41] = "";

	/* The gates judged expect: a branch that moved since is not pushed. */
	if (repo_branch_head(w->repo, w->branch, head) == 0 && strcmp(head, w->expect) != 0) {
		snprintf(w->err, sizeof(w->err), "the head moved from %.12s (which the gates "
			 "judged) to %.12s: not pushed", w->expect, head);
		w->rc = -EAGAIN;
		return;
	}
	w->rc = repo_push(w->repo, w->remote, w->branch, w->err, sizeof(w->err));
}

static void push_done(uv_work_t *req, int status)
{
	struct push *w = req->data;
	struct pipe *p = w->p;
	struct job *j = w->j;
	const struct pfs_stage *st = &j->cfg->stages[j->stage_index];
	struct runner_result res = {0};
	struct item it;

	pipe__job_unlink(&p->pushing, j);
	if (status == 0 && w->rc == 0)
		pipe__log_line(p, j, "[packetfs] pushed %s to %s\n", w->branch, w->remote);
	else
		pipe__log_line(p, j, "[packetfs] push failed: %s\n",
			       w->err[0] ? w->err : strerror(status ? -status : -w->rc));
	if (j->push_cancelled || p->shutting_down) {
		res.cancelled = 1;
		res.term_signal = SIGTERM;
	} else if (status || w->rc) {
		res.exit_code = 1;
	} else if (st->run && store_item_get_id(p->e->store, j->item_id, &it) == 0) {
		free(w);
		pipe__spawn_stage(p, j, st, &it);
		item_clear(&it);
		return;
	} else if (st->run) {
		res.exit_code = 1;
	}
	free(w);
	pipe__stage_done(p, j, &res);
	pipe__job_free(j);
	pipe__pump(p);
	pipe__slot_freed(p);
}

void pipe__start_push(struct pipe *p, struct job *j, const struct item *it,
		       const struct pfs_stage *st)
{
	struct pfs_config *cfg = engine_config_get(p->e);
	struct push *w = calloc(1, sizeof(*w));

	pipe__log_line(p, j, "[packetfs] pushing %s to %s\n", it->branch, st->push_remote);
	if (w) {
		w->req.data = w;
		w->p = p;
		w->j = j;
		snprintf(w->repo, sizeof(w->repo), "%s", cfg->repo);
		snprintf(w->remote, sizeof(w->remote), "%s", st->push_remote);
		snprintf(w->branch, sizeof(w->branch), "%s", it->branch);
		snprintf(w->expect, sizeof(w->expect), "%s", j->run.head);
		j->next = p->pushing;
		p->pushing = j;
		if (uv_queue_work(&p->e->loop, &w->req, push_work, push_done) == 0)
			return;
		pipe__job_unlink(&p->pushing, j);
		free(w);
	}
	{
		struct runner_result res = {0};

		pipe__log_line(p, j, "[packetfs] push failed: cannot start it\n");
		res.exit_code = 1;
		pipe__stage_done(p, j, &res);
		pipe__job_free(j);
	}
}
