/*
 * pipe_recover.c - crash recovery of the pipeline: at pipeline_recover (engine_open),
 * before the loop starts, what an earlier daemon left running is recorded
 * as interrupted.
 *
 * DESIGN. Every run still running or queued is sealed as interrupted (a
 * note in its log, a log sha256, for a recipe an engine line in the
 * registry - a recorded run's with the recorded_by of its record_queued
 * event, which the run row does not keep - and its stage_finished or
 * recipe_finished event with status interrupted). The processes it left behind are ended first: the process
 * group the run row records, when it is still that run's, and any other
 * process that carries the run's environment (PACKET_WORKTREE of this
 * store and item, its PACKET_STAGE, PACKET_ITERATION and RECIPE_NAME): a
 * run killed before its group was recorded, or a validator or publish
 * program that started long after its stage row. Items that were running
 * become queued, or failed when the pipeline says on_interrupt_fail, with
 * an "interrupted" event; an item with only an interrupted rerun returns
 * to done or waiting (its stages stand where they were).
 *
 * A stage run that moved the item's branch (a print's commits) is never run
 * again on top of them (pipe__rewind): once its processes are ended, the
 * head it left is kept under refs/packetfs/interrupted/<item>/<run>, and
 * the branch and the worktree go back to the head the run started from
 * (the run row's head, recorded when it started). Its log, a "rewound"
 * event and the item's last_error name the ref. A daemon that stops while
 * the stage runs (umount) does the same when the stage has ended
 * (pipe_stage.c).
 *
 * Invariants: works on the store alone (no struct pipe exists yet); runs
 * once, on the thread that opens the engine, before the new daemon has
 * started any process of its own - so no process of a dead daemon's runs
 * is alive once it returns, and nothing of an item runs twice at once.
 * The exception is a Slurm job (pipe_run_reattaches): it runs in the
 * cluster, not under the daemon, so its run, its item's running stage run
 * and the item's state are left as they are for pipe_reattach.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pipe_int.h"

struct recover {
	struct pipeline *pl;
	int64_t followed[256]; /* items whose Slurm jobs the new daemon follows again */
	int nfollowed;
	int64_t staged[256]; /* items whose stage run was interrupted */
	char stage_name[256][64]; /* ... and that stage (the latest run's) */
	char rewound[256][REWIND_REF_MAX]; /* ... and the ref its commits went under, or "" */
	int nstaged;
	int64_t reran[256];  /* items with an interrupted recipe run */
	int nreran;
};

/* What a run's processes carry in their environment (pipe__make_env):
 * "NAME=value" entries. A stage program has its PACKET_STAGE and no
 * RECIPE_NAME (recipe ""); a recipe is known by its RECIPE_NAME (stage ""
 * matches any PACKET_STAGE). */
struct run_env {
	char worktree[PATH_MAX + 32];
	char stage[96];
	char iteration[48];
	char recipe[96];
};

/*
 * The environment process pid was started with (NUL-separated "NAME=value"
 * entries, at most 1 MiB) into *env (caller frees) and its size into *len.
 * 0, or a negative errno: gone, a zombie or kernel thread (-ENOENT), not
 * ours to read (-EACCES), -ENOMEM.
 */
static int read_environ(pid_t pid, char **env, size_t *len)
{
	char path[64], *buf = NULL, *nb;
	size_t cap = 0, n = 0, got;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 8192;
			nb = cap <= (1u << 20) ? realloc(buf, cap) : NULL;
			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	fclose(f);
	if (n == 0) {
		free(buf);
		return -ENOENT;
	}
	*env = buf;
	*len = n;
	return 0;
}

/* Whether env[0..len) has the entry want (prefix: an entry starting so). */
static int env_has(const char *env, size_t len, const char *want, int prefix)
{
	size_t off = 0, wl = strlen(want), l;

	while (off < len) {
		l = strnlen(env + off, len - off);
		if ((prefix ? l >= wl : l == wl) && memcmp(env + off, want, wl) == 0)
			return 1;
		off += l + 1;
	}
	return 0;
}

static int env_is_run(const char *env, size_t len, const struct run_env *re)
{
	if (!env_has(env, len, re->worktree, 0) || !env_has(env, len, re->iteration, 0) ||
	    (re->stage[0] && !env_has(env, len, re->stage, 0)))
		return 0;
	return re->recipe[0] ? env_has(env, len, re->recipe, 0) : !env_has(env, len, "RECIPE_NAME=", 1);
}

/* Whether process pid was started with run re's environment. */
static int proc_is_run(pid_t pid, const struct run_env *re)
{
	char *env = NULL;
	size_t len = 0;
	int yes;

	if (read_environ(pid, &env, &len))
		return 0;
	yes = env_is_run(env, len, re);
	free(env);
	return yes;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Whether process group pgid has a member that is not a zombie: an
 * earlier daemon's children are nobody's to reap once it died, and an init
 * that does not reap leaves their zombies in the group for good. */
static int group_has_live(pid_t pgid)
{
	char path[300], buf[512], *p, state;
	struct dirent *de;
	int live = 0, pg;
	DIR *d;
	FILE *f;

	if (kill(-pgid, 0) < 0 && errno == ESRCH)
		return 0;
	d = opendir("/proc");
	if (!d)
		return 1;
	while (!live && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && sscanf(p + 1, " %c %*d %d", &state, &pg) == 2 && pg == pgid &&
		    state != 'Z' && state != 'X')
			live = 1;
	}
	closedir(d);
	return live;
}

/*
 * Ends process group pgid: SIGTERM, then SIGKILL once grace_s seconds
 * passed with members still alive; returns when none is left alive (or,
 * for a member the kernel cannot end at once, a second after SIGKILL).
 * Blocks the caller; never our own group.
 */
static void end_group(pid_t pgid, unsigned grace_s)
{
	long waited;

	if (pgid <= 1 || pgid == getpgrp() || kill(-pgid, SIGTERM) < 0)
		return;
	for (waited = 0; waited < (long)grace_s * 1000; waited += 50) {
		sleep_ms(50);
		if (!group_has_live(pgid))
			return;
	}
	kill(-pgid, SIGKILL);
	for (waited = 0; waited < 1000 && group_has_live(pgid); waited += 50)
		sleep_ms(50);
}

/*
 * Whether process group pgid, recorded by an earlier daemon for a run
 * started at started_at, is still that run's. A live leader must carry the
 * run's environment, or (when it cleared that) have started then: pids are
 * reused after a reboot or a wrap. Without a leader, the kernel keeps the
 * id from being reused while members remain, so whoever is left is ours.
 */
static int group_is_ours(pid_t pgid, const char *started_at, const struct run_env *re)
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
	if (proc_is_run(pgid, re))
		return 1;
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

/*
 * Ends every process group that holds a process started with run re's
 * environment: what a dead daemon's run left behind without (or outside)
 * its recorded group. Never our own group or our parent's.
 */
static void end_run_processes(const struct run_env *re, unsigned grace_s)
{
	pid_t groups[64], self = getpid(), own = getpgrp(), parent = getpgid(getppid()), pg;
	struct dirent *de;
	int ng = 0, i;
	char *end;
	DIR *d;
	long pid;

	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 1 || pid == self || !proc_is_run((pid_t)pid, re))
			continue;
		pg = getpgid((pid_t)pid);
		if (pg <= 1 || pg == own || pg == parent)
			continue;
		for (i = 0; i < ng && groups[i] != pg; i++)
			;
		if (i == ng && ng < (int)(sizeof(groups) / sizeof(groups[0])))
			groups[ng++] = pg;
	}
	closedir(d);
	for (i = 0; i < ng; i++)
		end_group(groups[i], grace_s);
}

/* The header ends at its first blank line. */
const char *pipe__log_side(struct store *s, int64_t run_id)
{
	char head[4096], *end;
	ssize_t got = store_log_read(s, run_id, 0, head, sizeof(head) - 1);

	if (got <= 0)
		return NULL;
	head[got] = '\0';
	end = strstr(head, "\n\n");
	if (end)
		end[1] = '\0';
	if (strstr(head, "\n# side: base"))
		return "base";
	if (strstr(head, "\n# side: head"))
		return "head";
	return NULL;
}

/*
 * Who asked for recorded run run_no of item item_id (the run row does not
 * keep it; its record_queued event does) into *by, its stage into stage:
 * 1 when found, 0 for a run nobody recorded.
 */
static int recorded_by(struct pipeline *pl, int64_t item_id, int run_no, char *stage, size_t size,
		       char *via, size_t vsize, struct registry_run *by)
{
	struct buf ev;
	char *line, *next;
	int found = 0;

	buf_init(&ev);
	if (store_events_render(pl->store, item_id, &ev) == 0 && ev.data) {
		for (line = ev.data; !found && line && *line; line = next) {
			cJSON *o, *run, *who;

			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (!strstr(line, "\"type\":\"record_queued\"") || !(o = cJSON_Parse(line)))
				continue;
			run = cJSON_GetObjectItemCaseSensitive(o, "run");
			who = cJSON_GetObjectItemCaseSensitive(o, "recorded_by");
			if (cJSON_IsNumber(run) && run->valueint == run_no && cJSON_IsObject(who) &&
			    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(who, "stage"))) {
				snprintf(stage, size, "%s",
					 cJSON_GetObjectItemCaseSensitive(who, "stage")->valuestring);
				by->recorded_by_stage = stage;
				by->recorded_by_pid = (pid_t)cJSON_GetNumberValue(
					cJSON_GetObjectItemCaseSensitive(who, "pid"));
				by->recorded_by_uid = (uid_t)cJSON_GetNumberValue(
					cJSON_GetObjectItemCaseSensitive(who, "uid"));
				if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(who, "via"))) {
					snprintf(via, vsize, "%s", cJSON_GetObjectItemCaseSensitive(
									   who, "via")->valuestring);
					by->recorded_by_via = via;
				}
				found = 1;
			}
			cJSON_Delete(o);
		}
	}
	buf_free(&ev);
	return found;
}

int pipe__rewind(struct pipeline *pl, const struct item *it, const struct run *r, char *ref,
		 size_t size)
{
	struct pfs_config *cfg = pipeline_config_get(pl);
	char wt[PATH_MAX + 32], from[41] = "", err[256] = "", extra[512];
	struct runner_user *user = NULL;
	struct buf note;
	int rc, n;

	ref[0] = '\0';
	if (strcmp(r->kind, "stage") != 0 || strlen(r->head) != 40)
		return 0;
	n = snprintf(ref, size, "refs/packetfs/interrupted/%s/%d", it->name, r->run_no);
	if (n < 0 || (size_t)n >= size) {
		ref[0] = '\0';
		return -ENAMETOOLONG;
	}
	snprintf(wt, sizeof(wt), "%s/worktrees/%s", pl->store_dir, it->name);
	/* run_as (SPEC §5): the worktree stays that user's. */
	if (cfg->run_as && runner_user_lookup(cfg->run_as, &user) == 0 && user->uid == geteuid()) {
		runner_user_free(user);
		user = NULL;
	}
	rc = repo_rewind(cfg->repo, it->branch, r->head, it->name, wt, ref,
			 user ? user->uid : (uid_t)-1, user ? user->gid : (gid_t)-1, from, err,
			 sizeof(err));
	runner_user_free(user);
	buf_init(&note);
	if (rc == 0 || (rc < 0 && !from[0]))
		ref[0] = '\0';
	if (rc < 0 && !from[0])
		buf_printf(&note, "[packetfs] cannot return %s to %.12s, where this run started: %s\n",
			   it->branch, r->head, err[0] ? err : strerror(-rc));
	else if (rc < 0)
		buf_printf(&note, "[packetfs] this run's head %.12s is kept under %s; %s is back at "
			   "%.12s, where this run started, but its worktree could not be reset: %s\n",
			   from, ref, it->branch, r->head, err[0] ? err : strerror(-rc));
	else if (rc > 0)
		buf_printf(&note, "[packetfs] this run's head %.12s is kept under %s; %s and its "
			   "worktree are back at %.12s, where this run started\n", from, ref,
			   it->branch, r->head);
	/* A note in the log for the reader; the run's status and the events say
	 * what happened. */
	if (note.data)
		(void)store_log_append(pl->store, r->id, note.data, note.len);
	if (rc < 0)
		util_log(LOG_WARNING, "%s: run %d of %s: %.*s", it->name, r->run_no, r->name,
			 note.data ? (int)note.len - 12 : 0, note.data ? note.data + 11 : "");
	buf_free(&note);
	if (ref[0]) {
		n = snprintf(extra, sizeof(extra), ",\"stage\":\"%s\",\"run\":%d,\"from\":\"%s\","
			     "\"to\":\"%s\",\"ref\":\"%s\"", r->name, r->run_no, from, r->head, ref);
		if (n > 0 && (size_t)n < sizeof(extra))
			pipeline_event(pl, it->id, it->name, "rewound", extra);
	}
	return rc;
}

static int recover_run(void *arg, const struct run *r0)
{
	struct recover *rv = arg;
	struct pipeline *pl = rv->pl;
	struct pfs_config *cfg = pipeline_config_get(pl);
	/* Only a recorded run has a queued row: it never started. */
	const char *msg = r0->status == RUN_QUEUED ? "the daemon stopped before this started"
							    : "the daemon stopped while this ran";
	unsigned grace = (unsigned)(cfg->cancel_grace_s ? cfg->cancel_grace_s : 1);
	int recipe = strcmp(r0->kind, "recipe") == 0;
	struct run_env re;
	struct item it;
	struct run r;
	char line[256], ref[REWIND_REF_MAX] = "";
	int n;

	if (r0->status != RUN_RUNNING && r0->status != RUN_QUEUED)
		return 0;
	/* A Slurm job goes on without us, and its stage with it. */
	if (pipe_run_reattaches(pl->store, r0) ||
	    (strcmp(r0->kind, "stage") == 0 &&
	     pipe__id_has(rv->followed, rv->nfollowed, r0->item_id)))
		return 0;
	if (store_run_get(pl->store, r0->id, &r))
		return 0;
	if (store_item_get_id(pl->store, r.item_id, &it)) {
		run_clear(&r);
		return 0;
	}
	if (recipe) {
		pipe__id_add(rv->reran, &rv->nreran, 256, r.item_id);
	} else {
		for (n = 0; n < rv->nstaged && rv->staged[n] != r.item_id; n++)
			;
		if (n < 256) {
			rv->staged[n] = r.item_id;
			snprintf(rv->stage_name[n], sizeof(rv->stage_name[n]), "%s", r.name);
			rv->nstaged += n == rv->nstaged;
		}
	}
	/* Its processes end before anything of the item can start again. */
	snprintf(re.worktree, sizeof(re.worktree), "PACKET_WORKTREE=%s/worktrees/%s", pl->store_dir,
		 it.name);
	snprintf(re.iteration, sizeof(re.iteration), "PACKET_ITERATION=%d", r.iteration);
	if (recipe) {
		re.stage[0] = '\0';
		snprintf(re.recipe, sizeof(re.recipe), "RECIPE_NAME=%s", r.name);
	} else {
		snprintf(re.stage, sizeof(re.stage), "PACKET_STAGE=%s", r.name);
		re.recipe[0] = '\0';
	}
	if (r.pgid > 0 && group_is_ours(r.pgid, r.started_at, &re))
		end_group(r.pgid, grace);
	end_run_processes(&re, grace);
	/* A Slurm job left here is a measured run's (no other is not followed
	 * again and has an id): it ends, and its batch starts over. */
	if (recipe && strcmp(r.executor, "slurm") == 0 && r.job_id[0]) {
		int rc = slurm_cancel_job(r.job_id, SLURM_RECOVER_TIMEOUT_MS);

		n = snprintf(line, sizeof(line), "\n# packetfs: Slurm job %s of this measured run %s%s"
			     "\n", r.job_id, rc ? "could not be cancelled: " : "cancelled",
			     rc ? strerror(-rc) : "");
		if (n > 0 && (size_t)n < sizeof(line))
			(void)store_log_append(pl->store, r.id, line, (size_t)n);
		if (rc)
			util_log(LOG_WARNING, "crash recovery: run %d (item %lld): cannot cancel Slurm "
				 "job %s: %s", r.run_no, (long long)r.item_id, r.job_id, strerror(-rc));
	}
	n = snprintf(line, sizeof(line), recipe ? "\n# packetfs: status interrupted: %s (recorded on restart)\n"
						: "\n[packetfs] interrupted: %s (recorded on restart)\n", msg);
	/* A note in the log for the reader; the run's status says interrupted. */
	(void)store_log_append(pl->store, r.id, line, (size_t)n);
	/* Its processes are gone: the branch goes back to where it started. */
	if (!recipe) {
		pipe__rewind(pl, &it, &r, ref, sizeof(ref));
		for (n = 0; n < rv->nstaged && rv->staged[n] != r.item_id; n++)
			;
		if (n < rv->nstaged)
			snprintf(rv->rewound[n], sizeof(rv->rewound[n]), "%s", ref);
	}
	r.status = RUN_INTERRUPTED;
	free(r.note);
	r.note = strdup(msg);
	util_rfc3339(util_now_ns(), r.finished_at);
	/* On a store error the checksum and size are of what was read: packetfs check
	 * reports the log. */
	(void)store_log_sha256(pl->store, r.id, r.log_sha256, &r.log_size);
	/* Recovery goes on with the other runs; a row left running is recovered at the next
	 * mount. */
	(void)store_run_update(pl->store, &r);
	if (recipe) {
		struct registry_run rr;
		char *l, by_stage[64], by_via[16];
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
		rr.status = run_status_name(RUN_INTERRUPTED);
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
		rr.job_id = r.job_id;
		rr.side = pipe__log_side(pl->store, r.id);
		recorded_by(pl, r.item_id, r.run_no, by_stage, sizeof(by_stage), by_via,
			    sizeof(by_via), &rr);
		l = registry_engine_line(&rr);
		if (l) {
			/* Without its line the recipe counts as not run at this head; the
			 * run's row says interrupted. */
			(void)store_registry_append(pl->store, r.item_id, l, "engine", r.id);
			free(l);
		}
	}
	/* The end of the run, as a run that ends under a live daemon has. */
	n = snprintf(line, sizeof(line), ",\"%s\":\"%s\",\"run\":%d,\"status\":\"interrupted\",\"log\":\"%s\"",
		     recipe ? "recipe" : "stage", r.name, r.run_no, r.log_path);
	if (n > 0 && (size_t)n < sizeof(line))
		pipeline_event(pl, it.id, it.name, recipe ? "recipe_finished" : "stage_finished", line);
	item_clear(&it);
	run_clear(&r);
	return 0;
}

static int recover_item(void *arg, const struct item *it0)
{
	struct recover *rv = arg;
	struct pipeline *pl = rv->pl;
	struct pfs_config *cfg = pipeline_config_get(pl);
	enum item_state state = cfg->on_interrupt_fail ? ITEM_FAILED : ITEM_QUEUED;
	struct item it;
	int i;

	if (it0->state != ITEM_RUNNING || pipe__id_has(rv->followed, rv->nfollowed, it0->id))
		return 0;
	if (store_item_get_id(pl->store, it0->id, &it))
		return 0;
	if (!pipe__id_has(rv->staged, rv->nstaged, it.id) &&
	    pipe__id_has(rv->reran, rv->nreran, it.id)) {
		/* Only a rerun of recipes was in progress: its runs are recorded as
		 * interrupted; the stages are where they were, so the item is done
		 * when its last stage had succeeded, and waits for advance
		 * otherwise. */
		const struct pfs_config *path = pipeline_config_item(pl, &it);
		size_t k;
		enum item_state back = it.stage_ok && config_stage(path, it.stage, &k) &&
				       k + 1 == path->nstages ? ITEM_DONE : ITEM_WAITING;
		char extra[64];

		free(it.last_error);
		it.last_error = strdup("interrupted: the daemon stopped during a rerun");
		if (it.last_error && pipe__state_move(&it, back) == 0) {
			/* Recovery goes on; the event below still tells the watchers. */
			(void)store_item_update(pl->store, &it);
			snprintf(extra, sizeof(extra), ",\"state\":\"%s\"", item_state_name(back));
			pipeline_event(pl, it.id, it.name, "interrupted", extra);
		}
		item_clear(&it);
		return 0;
	}
	/* The interrupted stage runs again (advance starts it): the one whose
	 * run was cut off, even when the daemon died before the item said so.
	 * Without one, the daemon died between two steps: the item goes on
	 * from where its row stands. */
	free(it.last_error);
	it.last_error = strdup("interrupted: the daemon stopped while a stage ran");
	for (i = 0; i < rv->nstaged; i++) {
		if (rv->staged[i] == it.id) {
			free(it.stage);
			it.stage = strdup(rv->stage_name[i]);
			it.stage_ok = 0;
			if (rv->rewound[i][0]) {
				free(it.last_error);
				it.last_error = pipe__rewound_why(rv->rewound[i]);
			}
		}
	}
	if (it.last_error && it.stage && pipe__state_move(&it, state) == 0) {
		char extra[64];

		/* Recovery goes on; the event below still tells the watchers. */
		(void)store_item_update(pl->store, &it);
		snprintf(extra, sizeof(extra), ",\"state\":\"%s\"", item_state_name(state));
		pipeline_event(pl, it.id, it.name, "interrupted", extra);
	}
	item_clear(&it);
	return 0;
}

char *pipe__rewound_why(const char *ref)
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "interrupted: the daemon stopped while a stage ran; its commits are kept "
		   "under %s and the branch is back where that run started", ref);
	return b.data;
}

int pipe_recover(struct pipeline *pl)
{
	/* Too big for a thread's stack (the names of 256 refs). */
	struct recover *rv = calloc(1, sizeof(*rv));
	int rc;

	if (!rv)
		return -ENOMEM;
	rv->pl = pl;
	pipe_resolve_jobs(pl->store);
	rv->nfollowed = pipe_reattach_items(pl->store, rv->followed, 256);
	rc = store_run_each(pl->store, 0, NULL, RUN_ANY, recover_run, rv);
	if (rc == 0)
		rc = store_item_each(pl->store, 0, recover_item, rv);
	free(rv);
	return rc;
}
