/*
 * pipe_cenv.c - compute-env.md kept up to date (SPEC §6, "The compute
 * environment"), and the "# requires:" check of a recipe that is about to
 * start.
 *
 * Design: a refresh is asked for at the start of the loop, by a new
 * configuration (pipeline_config_set) and on request (pipeline_cenv_refresh,
 * the ctl verb "probe"); a request sets cenv_wanted and wakes the loop,
 * which starts one refresh at a time (a request while one runs makes
 * another follow it). The probing blocks on its programs (capture_exec:
 * nvidia-smi, sinfo, each probe to its deadline), so it runs on libuv's
 * thread pool (uv_queue_work), never on the loop thread, which must go on
 * serving runs, nor on a file system request's. The worker fills
 * cenv_cur piece by piece under cenv_lock: a read while it runs shows what
 * is known and "pending" for the rest (cur starts as the list of probes,
 * all pending). Each answer wakes the loop (cenv_news), which tells the
 * watchers and pumps the queue: a recipe waits only for its own probes'
 * answers, from this refresh or, while it has none yet, the last one of
 * the same configuration. When the refresh ends, on the loop thread, cur
 * becomes cenv_last, what later reads show; the watchers learn that
 * .packetfs/compute-env.md and every item's compute-env.md changed; and
 * the queue is pumped. At shutdown the worker starts no further probe
 * (the one that runs ends by its deadline).
 *
 * Threads: pipeline_cenv_render and pipeline_cenv_refresh any thread;
 * the rest the loop thread. cenv_lock takes no other lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"

/* The bytes of a word shown as it is in a probe's command. */
#define PLAIN_WORD "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+-@%"

/* A fresh skeleton of the probing of cfg into c: every probe pending. */
static int cenv_begin(const struct pfs_config *cfg, struct cenv *c)
{
	size_t i, k;

	memset(c, 0, sizeof(*c));
	c->slurm = cfg->executor.kind == EXECUTOR_SLURM;
	if (cfg->nprobes && !(c->probes = calloc(cfg->nprobes, sizeof(*c->probes))))
		return -ENOMEM;
	for (i = 0; i < cfg->nprobes; i++) {
		struct buf cmd;

		buf_init(&cmd);
		c->nprobes++;
		for (k = 0; cfg->probes[i].run[k]; k++) {
			const char *a = cfg->probes[i].run[k];

			/* A word as sh would read it back: quoted when it
			 * holds more than a plain word's bytes. */
			if ((k && buf_puts(&cmd, " ")) ||
			    (a[strspn(a, PLAIN_WORD)] || !a[0] ? runenv_sh_quote(a, &cmd)
							       : buf_puts(&cmd, a)))
				break;
		}
		c->probes[i].name = strdup(cfg->probes[i].name);
		c->probes[i].command = buf_steal(&cmd);
		if (!c->probes[i].name || !c->probes[i].command) {
			cenv_clear(c);
			return -ENOMEM;
		}
	}
	return 0;
}

/* The worker (libuv's thread pool): probes into pl->cenv_cur. */
static void cenv_work(uv_work_t *w)
{
	struct pipeline *pl = w->data;
	const struct pfs_config *cfg = pl->cenv_run_cfg;
	char *host = NULL, *rows = NULL, *error = NULL;
	size_t i;

	cenv_probe_host(&host);
	pthread_mutex_lock(&pl->cenv_lock);
	pl->cenv_cur.host = host;
	pthread_mutex_unlock(&pl->cenv_lock);
	if (cfg->executor.kind == EXECUTOR_SLURM && !__atomic_load_n(&pl->cenv_stop, __ATOMIC_ACQUIRE)) {
		cenv_probe_sinfo(&rows, &error);
		pthread_mutex_lock(&pl->cenv_lock);
		pl->cenv_cur.sinfo = rows;
		pl->cenv_cur.sinfo_error = error;
		pthread_mutex_unlock(&pl->cenv_lock);
	}
	for (i = 0; i < cfg->nprobes && !__atomic_load_n(&pl->cenv_stop, __ATOMIC_ACQUIRE); i++) {
		char *text = NULL;
		enum cenv_answer a = cenv_probe_run(cfg->probes[i].run, cfg->probes[i].timeout_s,
						    &text);

		pthread_mutex_lock(&pl->cenv_lock);
		pl->cenv_cur.probes[i].answer = a;
		pl->cenv_cur.probes[i].text = text;
		pl->cenv_news = 1;
		/* Recipes may wait for this answer. Under the lock: once
		 * pipe__cenv_stop ran, the wake handle may be closing. */
		if (!pl->cenv_stop)
			uv_async_send(&pl->wake);
		pthread_mutex_unlock(&pl->cenv_lock);
	}
}

static int changed_item(void *arg, const struct item *it)
{
	pipe__changed(arg, it->name, "compute-env.md", PIPELINE_MODIFIED);
	return 0;
}

/* Tells the watchers that compute-env.md changed, at the root and in
 * every item. */
static void cenv_changed(struct pipeline *pl)
{
	pipe__changed(pl, NULL, ".packetfs/compute-env.md", PIPELINE_MODIFIED);
	store_item_each(pl->store, 0, changed_item, pl);
}

static void cenv_poll(struct pipeline *pl);

/* The refresh ended (loop thread): its answers become the ones in force. */
static void cenv_done(uv_work_t *w, int status)
{
	struct pipeline *pl = w->data;

	(void)status;
	pthread_mutex_lock(&pl->cenv_lock);
	pl->cenv_cur.finished_ns = util_now_ns();
	cenv_clear(&pl->cenv_last);
	pl->cenv_last = pl->cenv_cur;
	memset(&pl->cenv_cur, 0, sizeof(pl->cenv_cur));
	pl->cenv_last_cfg = pl->cenv_run_cfg;
	pl->cenv_running = 0;
	pl->cenv_news = 0;
	pthread_mutex_unlock(&pl->cenv_lock);
	cenv_changed(pl);
	if (__atomic_load_n(&pl->cenv_stop, __ATOMIC_ACQUIRE))
		return;
	pipe__pump(pl->pipe);
	cenv_poll(pl);
}

/* Starts a refresh when one was asked for and none runs (loop thread). */
static void cenv_poll(struct pipeline *pl)
{
	struct pfs_config *cfg = pipeline_config_get(pl);
	struct cenv c;
	int rc;

	pthread_mutex_lock(&pl->cenv_lock);
	if (pl->cenv_running || !pl->cenv_wanted ||
	    __atomic_load_n(&pl->cenv_stop, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&pl->cenv_lock);
		return;
	}
	pthread_mutex_unlock(&pl->cenv_lock);
	if (cenv_begin(cfg, &c))
		return; /* out of memory: the next request tries again */
	c.started_ns = util_now_ns();
	pthread_mutex_lock(&pl->cenv_lock);
	pl->cenv_wanted = 0;
	pl->cenv_cur = c;
	pl->cenv_run_cfg = cfg;
	pl->cenv_running = 1;
	pl->cenv_work.data = pl;
	rc = uv_queue_work(&pl->loop, &pl->cenv_work, cenv_work, cenv_done);
	if (rc) {
		pl->cenv_running = 0;
		cenv_clear(&pl->cenv_cur);
	}
	pthread_mutex_unlock(&pl->cenv_lock);
	if (rc == 0)
		cenv_changed(pl);
}

void pipe__cenv_wake(struct pipeline *pl)
{
	int news;

	pthread_mutex_lock(&pl->cenv_lock);
	news = pl->cenv_news;
	pl->cenv_news = 0;
	pthread_mutex_unlock(&pl->cenv_lock);
	if (news) {
		cenv_changed(pl);
		pipe__pump(pl->pipe);
	}
	cenv_poll(pl);
}

void pipe__cenv_stop(struct pipeline *pl)
{
	pthread_mutex_lock(&pl->cenv_lock);
	__atomic_store_n(&pl->cenv_stop, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pl->cenv_lock);
}

void pipeline_cenv_refresh(struct pipeline *pl)
{
	pthread_mutex_lock(&pl->cenv_lock);
	pl->cenv_wanted = 1;
	if (pl->started && !pl->cenv_stop)
		uv_async_send(&pl->wake);
	pthread_mutex_unlock(&pl->cenv_lock);
}

int pipeline_cenv_render(struct pipeline *pl, struct buf *out)
{
	struct pfs_config *cfg = pipeline_config_get(pl);
	struct cenv skel;
	int rc;

	pthread_mutex_lock(&pl->cenv_lock);
	if (pl->cenv_running) {
		rc = cenv_render(&pl->cenv_cur, out);
	} else if (pl->cenv_last.started_ns) {
		rc = cenv_render(&pl->cenv_last, out);
	} else {
		rc = cenv_begin(cfg, &skel);
		if (rc == 0)
			rc = cenv_render(&skel, out);
		cenv_clear(&skel);
	}
	pthread_mutex_unlock(&pl->cenv_lock);
	return rc;
}

/* The answer of probe name in c (CENV_PENDING when c has none). */
static enum cenv_answer answer_of(const struct cenv *c, const char *name)
{
	size_t k;

	for (k = 0; k < c->nprobes; k++)
		if (strcmp(c->probes[k].name, name) == 0)
			return c->probes[k].answer;
	return CENV_PENDING;
}

int pipe__cenv_requires(struct pipeline *pl, const struct pfs_config *cfg, char *const *req,
			char *note, size_t size)
{
	size_t i;
	int rc = 0;

	for (i = 0; req && req[i]; i++) {
		if (!config_probe(cfg, req[i])) {
			snprintf(note, size, "requires %s: not a probe of pipeline.json", req[i]);
			return -1;
		}
	}
	pthread_mutex_lock(&pl->cenv_lock);
	for (i = 0; req && req[i] && rc == 0; i++) {
		enum cenv_answer a = CENV_PENDING;

		if (pl->cenv_running && pl->cenv_run_cfg == cfg)
			a = answer_of(&pl->cenv_cur, req[i]);
		if (a == CENV_PENDING && pl->cenv_last_cfg == cfg)
			a = answer_of(&pl->cenv_last, req[i]);
		if (a == CENV_PENDING) {
			rc = 1; /* not in yet: the recipe waits */
		} else if (a != CENV_PRESENT) {
			snprintf(note, size, "requires %s: %s", req[i], cenv_answer_word(a));
			rc = -1;
		}
	}
	pthread_mutex_unlock(&pl->cenv_lock);
	return rc;
}
