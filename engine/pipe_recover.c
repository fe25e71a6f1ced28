/*
 * pipe_recover.c - crash recovery of the pipeline engine: at engine_open,
 * before the loop starts, what an earlier daemon left running is recorded
 * as interrupted.
 *
 * DESIGN. Every run still running or queued is sealed as interrupted (a
 * note in its log, a log sha256, and for a recipe an engine line in the
 * registry); a process group it left behind is killed first, when it is
 * still that run's. Items that were running become queued, or failed when
 * the pipeline says on_interrupt_fail, with an "interrupted" event.
 *
 * Invariants: works on the store alone (no struct pipe exists yet); runs
 * once, on the thread that opens the engine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine_int.h"
#include "registry.h"
#include "runner.h"

struct recover {
	struct engine *e;
	int rc;
	int64_t staged[256]; /* items whose stage run was interrupted */
	int nstaged;
};

/*
 * Whether process group pgid, recorded by an earlier daemon for a run
 * started at started_at, is still that run's. A live leader must have
 * started then (pids are reused after a reboot or a wrap); without a
 * leader, the kernel keeps the id from being reused while members remain,
 * so whoever is left is ours.
 */
static int group_is_ours(pid_t pgid, const char *started_at)
{
	char path[64], buf[1024], *p, *line = NULL;
	unsigned long long start_ticks = 0, btime = 0;
	size_t cap = 0;
	struct tm tm;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pgid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start_ticks) != 1)
		return 0;
	f = fopen("/proc/stat", "re");
	while (f && getline(&line, &cap, f) > 0)
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	free(line);
	if (f)
		fclose(f);
	memset(&tm, 0, sizeof(tm));
	if (!btime || !strptime(started_at, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	{
		long long started = (long long)timegm(&tm);
		long long leader = (long long)(btime + start_ticks / (unsigned long long)sysconf(_SC_CLK_TCK));

		return llabs(leader - started) <= 5;
	}
}

static int recover_run(void *arg, const struct run *r0)
{
	struct recover *rv = arg;
	struct engine *e = rv->e;
	struct pfs_config *cfg = engine_config_get(e);
	const char *msg = "the daemon stopped while this ran; recorded as interrupted on restart";
	struct run r;
	char line[256];
	int n;

	if (strcmp(r0->status, "running") != 0 && strcmp(r0->status, "queued") != 0)
		return 0;
	if (store_run_get(e->store, r0->id, &r))
		return 0;
	if (strcmp(r.kind, "stage") == 0 && rv->nstaged < 256)
		rv->staged[rv->nstaged++] = r.item_id;
	if (r.pgid > 0 && group_is_ours(r.pgid, r.started_at))
		runner_kill_group_sync(r.pgid, (unsigned)(cfg->cancel_grace_s ? cfg->cancel_grace_s : 1));
	n = snprintf(line, sizeof(line), "\n%s packetfs: %s\n", strcmp(r.kind, "recipe") == 0 ? "#" : "[packetfs]", msg);
	store_log_append(e->store, r.id, line, (size_t)n);
	snprintf(r.status, sizeof(r.status), "interrupted");
	free(r.note);
	r.note = strdup(msg);
	util_rfc3339(util_now_ns(), r.finished_at);
	store_log_sha256(e->store, r.id, r.log_sha256, &r.log_size);
	store_run_update(e->store, &r);
	if (strcmp(r.kind, "recipe") == 0) {
		struct registry_run rr;
		char *l;
		int gpus[16], ng = 0;
		const char *g = r.gpus;

		while (*g && ng < 16) {
			if (*g >= '0' && *g <= '9')
				gpus[ng++] = (int)strtol(g, (char **)&g, 10);
			else
				g++;
		}
		memset(&rr, 0, sizeof(rr));
		rr.run = r.run_no;
		rr.recipe = r.name;
		rr.status = "interrupted";
		rr.command = r.command;
		rr.evidence = r.log_path;
		rr.note = r.note ? r.note : "";
		rr.started_at = r.started_at;
		rr.finished_at = r.finished_at;
		rr.iteration = r.iteration;
		rr.head = r.head;
		rr.gpus = gpus;
		rr.ngpus = (size_t)ng;
		rr.log_sha256 = r.log_sha256;
		rr.executor = r.executor;
		l = registry_engine_line(&rr);
		if (l) {
			store_registry_append(e->store, r.item_id, l, "engine", r.id);
			free(l);
		}
	}
	run_clear(&r);
	return 0;
}

static int recover_item(void *arg, const struct item *it0)
{
	struct recover *rv = arg;
	struct engine *e = rv->e;
	struct pfs_config *cfg = engine_config_get(e);
	struct item it;
	int i, staged = 0;

	if (strcmp(it0->state, "running") != 0)
		return 0;
	if (store_item_get_id(e->store, it0->id, &it))
		return 0;
	for (i = 0; i < rv->nstaged; i++)
		staged |= rv->staged[i] == it.id;
	if (!staged) {
		/* Only a rerun of recipes was in progress: its runs are recorded as
		 * interrupted; the stages are where they were. */
		free(it.state);
		it.state = strdup("waiting");
		free(it.last_error);
		it.last_error = strdup("interrupted: the daemon stopped during a rerun");
		if (it.state && it.last_error) {
			store_item_update(e->store, &it);
			engine_event(e, it.id, it.name, "interrupted", ",\"state\":\"waiting\"");
		}
		item_clear(&it);
		return 0;
	}
	it.stage_ok = 0;
	free(it.state);
	it.state = strdup(cfg->on_interrupt_fail ? "failed" : "queued");
	free(it.last_error);
	it.last_error = strdup("interrupted: the daemon stopped while a stage ran");
	if (it.state && it.last_error) {
		store_item_update(e->store, &it);
		engine_event(e, it.id, it.name, "interrupted",
			     cfg->on_interrupt_fail ? ",\"state\":\"failed\"" : ",\"state\":\"queued\"");
	}
	item_clear(&it);
	return 0;
}

int pipe_recover(struct engine *e)
{
	struct recover rv = {.e = e};
	int rc;

	rc = store_run_each(e->store, 0, NULL, NULL, recover_run, &rv);
	if (rc == 0)
		rc = store_item_each(e->store, 0, recover_item, &rv);
	return rc;
}
