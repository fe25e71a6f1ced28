/*
 * pipe_push.c - the push of a publish stage (SPEC §5), on the loop thread.
 *
 * Publish pushes the item branch before its program runs, with the real
 * git command line, so that the user's transport setup applies as it does
 * to a `git push` typed in the repository (credential helpers, ssh config
 * and agent, url.<base>.insteadOf, pushurl, relative remote paths):
 *
 *	cd REPO && git push --porcelain -- REMOTE HEAD_SHA:refs/heads/BRANCH
 *
 * HEAD_SHA is the head the gates judged (the run's head), so a commit that
 * lands on the branch meanwhile is never pushed; a branch that moved before
 * the push starts is not pushed at all (the stage fails, saying so). The
 * push is not forced: a remote branch with commits the item branch lacks
 * refuses it (non-fast-forward).
 *
 * git runs as a process of the stage through the runner (runner.h): in its
 * own session, so neither git nor ssh has a terminal to prompt on, stdin
 * /dev/null, GIT_TERMINAL_PROMPT=0 (push_env), the stage's timeout_s, and
 * `cancel` and shutdown end its whole process tree like any stage
 * program's. The ssh command is left as the user set it (GIT_SSH_COMMAND,
 * core.sshCommand, ~/.ssh/config): without a terminal ssh cannot prompt
 * for a passphrase or a host key anyway, and an askpass program the user
 * configured is theirs to use. Its output goes to the stage log and, the
 * last PUSH_OUT_MAX bytes of it, to push_reason, whose one line becomes
 * the stage's last_error when the push fails.
 *
 * While it runs, the job is on p->jobs like a stage program (its run row
 * records git's process group); push_exit then starts the stage's program
 * on the same job, or ends the stage.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"

#define PUSH_OUT_MAX 16384

/* One push in flight: the runner's callback argument. */
struct push {
	struct pipe *p;
	struct job *j;
	pipe_push_done_cb done;       /* pipe__push_head: called at the end, or NULL */
	char remote[256], branch[160];
	size_t len;                   /* bytes in out */
	char out[PUSH_OUT_MAX + 1];   /* the last PUSH_OUT_MAX bytes of git's output */
};

static void push_output(void *arg, const char *data, size_t len)
{
	struct push *w = arg;

	pipe__log_append(w->p, w->j, data, len);
	if (len > PUSH_OUT_MAX) {
		data += len - PUSH_OUT_MAX;
		len = PUSH_OUT_MAX;
	}
	if (w->len + len > PUSH_OUT_MAX) {
		size_t drop = w->len + len - PUSH_OUT_MAX;

		memmove(w->out, w->out + drop, w->len - drop);
		w->len -= drop;
	}
	memcpy(w->out + w->len, data, len);
	w->len += len;
}

/* Sets the reason a failed stage of job j gives in last_error. */
static void set_why(struct job *j, const char *why)
{
	free(j->why);
	j->why = strdup(why);
}

static void push_exit(void *arg, const struct runner_result *res)
{
	struct push *w = arg;
	struct pipe *p = w->p;
	struct job *j = w->j;
	const struct pfs_stage *st = &j->cfg->stages[j->stage_index];
	int ran = res->spawn_error == 0 && res->term_signal == 0 && !res->timed_out &&
		  !res->cancelled;
	char why[768];
	struct item it;

	pipe__job_unlink(&p->jobs, j);
	pipe__active_remove(p->pl, j->run.id);
	j->proc = NULL;
	w->out[w->len] = '\0';
	if (res->spawn_error) {
		snprintf(why, sizeof(why), "push to %s failed: cannot run git: %s", w->remote,
			 strerror(-res->spawn_error));
		set_why(j, why);
	} else if (ran && push_reason(w->remote, w->branch, w->out, res->exit_code, why,
				       sizeof(why)) != PUSH_OK) {
		pipe__log_line(p, j, "[packetfs] %s\n", why);
		set_why(j, why);
	} else if (ran) {
		pipe__log_line(p, j, "[packetfs] pushed %s to %s\n", w->branch, w->remote);
	}
	if (w->done) {
		pipe_push_done_cb done = w->done;

		free(w);
		done(p, j, ran && res->exit_code == 0 ? 0 : -EIO,
		     j->why ? j->why : res->timed_out ? "the push timed out" :
		     res->cancelled ? "the push was cancelled" : "the push failed");
		return;
	}
	free(w);
	if (ran && res->exit_code == 0 && st->run && !p->shutting_down &&
	    store_item_get_id(p->pl->store, j->item_id, &it) == 0) {
		pipe__spawn_stage(p, j, st, &it);
		item_clear(&it);
		return;
	}
	pipe__stage_done(p, j, res);
	pipe__job_free(j);
	pipe__pump(p);
	pipe__slot_freed(p);
}

/* Ends the stage of job j before any push, failed with why. */
static void not_pushed(struct pipe *p, struct job *j, const char *why)
{
	struct runner_result res = {0};

	pipe__log_line(p, j, "[packetfs] %s\n", why);
	set_why(j, why);
	res.exit_code = 1;
	pipe__stage_done(p, j, &res);
	pipe__job_free(j);
}

/*
 * Runs git push of commit sha to refs/heads/branch on remote for job j,
 * with push_output and push_exit (done NULL: a publish stage). 0, or a
 * negative errno with nothing started.
 */
static int spawn_push(struct pipe *p, struct job *j, const char *remote, const char *branch,
		      const char *sha, unsigned timeout_s, pipe_push_done_cb done)
{
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	char spec[256];
	char *argv[] = { "git", "push", "--porcelain", "--", (char *)remote, spec, NULL };
	char **env, *cmd;
	struct push *w;
	int rc = -ENOMEM;

	snprintf(spec, sizeof(spec), "%s:refs/heads/%s", sha, branch);
	cmd = strv_join(argv, " ", 1);
	if (cmd) {
		free(j->run.command);
		j->run.command = cmd;
	}
	pipe__log_line(p, j, "[packetfs] pushing %s (%.12s) to %s\n[packetfs] $ cd %s && %s\n",
		       branch, sha, remote, cfg->repo, cmd ? cmd : "git push");
	w = calloc(1, sizeof(*w));
	env = push_env(environ);
	if (w && env) {
		w->p = p;
		w->j = j;
		w->done = done;
		snprintf(w->remote, sizeof(w->remote), "%s", remote);
		snprintf(w->branch, sizeof(w->branch), "%s", branch);
		rc = pipe__job_spawn(p, j, argv, env, cfg->repo, timeout_s, push_output, push_exit, w);
	}
	strv_free(env);
	if (rc)
		free(w);
	return rc;
}

void pipe__start_push(struct pipe *p, struct job *j, const struct item *it,
		       const struct pfs_stage *st)
{
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	const char *expect = j->run.head; /* the head the gates judged */
	char head[41] = "", why[512];
	int rc;

	if (repo_branch_head(cfg->repo, it->branch, head) != 0 || strlen(expect) != 40) {
		snprintf(why, sizeof(why), "cannot read the head of %s: not pushed", it->branch);
		not_pushed(p, j, why);
		return;
	}
	if (strcmp(head, expect) != 0) {
		snprintf(why, sizeof(why), "the head moved from %.12s (which the gates judged) to "
			 "%.12s: not pushed", expect, head);
		not_pushed(p, j, why);
		return;
	}
	rc = spawn_push(p, j, st->push_remote, it->branch, expect, (unsigned)st->timeout_s, NULL);
	if (rc) {
		snprintf(why, sizeof(why), "push to %s failed: cannot start git: %s",
			 st->push_remote, strerror(-rc));
		not_pushed(p, j, why);
	}
}

void pipe__push_head(struct pipe *p, struct job *j, const char *remote, const char *branch,
		     const char *sha, pipe_push_done_cb done)
{
	const struct pfs_stage *st = &j->cfg->stages[j->stage_index];
	char why[512];
	int rc = strlen(sha) == 40 ? spawn_push(p, j, remote, branch, sha,
						(unsigned)st->timeout_s, done) : -EINVAL;

	if (rc) {
		snprintf(why, sizeof(why), "push to %s failed: cannot start git: %s", remote,
			 strerror(-rc));
		done(p, j, rc, why);
	}
}
