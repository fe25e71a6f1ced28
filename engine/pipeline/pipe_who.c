/*
 * pipe_who.c - which active run a process belongs to (SPEC §6 "The
 * recorder"): by ancestry as the daemon sees it, and by the per-run
 * credential a stage finds in $PACKET_RUN_CREDENTIAL. docs/recorder.md
 * says what each proves and what it cannot.
 *
 * Design.
 *  - Ancestry: from the asking pid (in the daemon's PID namespace: the
 *    kernel translates the pid of a FUSE request made from a child
 *    namespace), /proc/PID/stat's ppid is followed up to ANCESTRY_MAX
 *    steps, until a pid that is an active run's leader (the process the
 *    runner started) with the start time (field 22, clock ticks since
 *    boot) recorded when it started. The start time makes a recycled pid
 *    harmless: a process that took the pid of a leader that ended has a
 *    later start. The walk reads /proc without any lock held; the active
 *    runs it compares with are a copy taken under active_lock. setsid,
 *    setpgid, timeout, nohup, sudo and unshare --pid keep the ancestry; a
 *    double fork that leaves the process reparented to init (or a
 *    subreaper) loses it.
 *  - The credential: every stage run gets CREDENTIAL_BYTES random bytes
 *    (getrandom), as hex, in its environment; the recorder presents them
 *    in its request and they name the run while it is active, for its item
 *    only. Environment variables survive a new session, process group and
 *    PID namespace, but not a sandbox that empties the environment.
 *
 *  - pipeline_active_stage_of (the writer of a revision) takes the
 *    ancestry, else the process group (the leader's pid is the group's id),
 *    as before there were credentials.
 *
 * Threads: pipe__credential_new on the loop thread; the lookups on any
 * thread (they take active_lock only to copy). A run's leader and its
 * start time come into the active runs from the thread that started it
 * (pipe__active_set_leader), as soon as its exec is done, not when the
 * loop gets to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "pipe_int.h"

/* The most parent steps a walk takes: deeper than any real process tree
 * between a stage and its recorder, short enough to stay cheap. */
#define ANCESTRY_MAX 64

/* What a walk compares with: one active run. */
struct cand {
	int64_t item_id;
	int64_t run_id;
	pid_t pid;
	unsigned long long start;
	char kind;
	char name[64];
	char credential[2 * CREDENTIAL_BYTES + 1];
};

/* Reads /proc/pid/stat: its parent into *ppid, its start time into
 * *start. 0 or -errno (-ENOENT: no such process, -EINVAL: unreadable). */
static int proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char path[64], text[1024], *p;
	unsigned long long v;
	long parent;
	size_t n;
	FILE *f;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold spaces and ')'. */
	p = strrchr(text, ')');
	if (!p || sscanf(p + 1, " %*c %ld", &parent) != 1)
		return -EINVAL;
	p += 2; /* field 3, the state */
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &v) != 1)
		return -EINVAL;
	*ppid = (pid_t)parent;
	*start = v;
	return 0;
}

int pipe__credential_new(char *out, size_t size)
{
	unsigned char raw[CREDENTIAL_BYTES];
	size_t got = 0, i;
	ssize_t n;

	if (size < 2 * CREDENTIAL_BYTES + 1)
		return -EINVAL;
	while (got < sizeof(raw)) {
		n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/* Compares two credentials in a time that does not depend on where they
 * differ. */
static int credential_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char d = la != lb;

	for (i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* Copies the active runs (stages only when stages) of item_id (any item
 * when < 0) into c[ACTIVE_MAX]; their number. */
static int snapshot(struct pipeline *pl, int64_t item_id, int stages, struct cand *c)
{
	int i, n = 0;

	pthread_mutex_lock(&pl->active_lock);
	for (i = 0; i < pl->nactive; i++) {
		const struct active_run *a = &pl->active[i];

		if ((item_id >= 0 && a->item_id != item_id) || (stages && a->kind != 's') ||
		    a->pid <= 0)
			continue;
		c[n].item_id = a->item_id;
		c[n].run_id = a->run_id;
		c[n].pid = a->pid;
		c[n].start = a->start_ticks;
		c[n].kind = a->kind;
		snprintf(c[n].name, sizeof(c[n].name), "%s", a->name);
		memcpy(c[n].credential, a->credential, sizeof(c[n].credential));
		n++;
	}
	pthread_mutex_unlock(&pl->active_lock);
	return n;
}

/* The first of the n candidates c whose leader is pid or one of its
 * ancestors, walking up from pid; NULL when none. */
static const struct cand *walk(pid_t pid, const struct cand *c, int n)
{
	unsigned long long start;
	pid_t ppid;
	int step, i;

	for (step = 0; n > 0 && pid > 1 && step < ANCESTRY_MAX; step++) {
		if (proc_stat(pid, &ppid, &start))
			return NULL;
		for (i = 0; i < n; i++)
			if (c[i].pid == pid && c[i].start == start)
				return &c[i];
		pid = ppid;
	}
	return NULL;
}

void pipeline_active_stage_of(struct pipeline *pl, pid_t pid, char *out, size_t size)
{
	const struct cand *hit;
	struct cand *c;
	pid_t pgid;
	int i, n;

	out[0] = '\0';
	if (pid <= 0)
		return;
	/* Nothing runs (the common case of a write): no walk. */
	pthread_mutex_lock(&pl->active_lock);
	n = pl->nactive;
	pthread_mutex_unlock(&pl->active_lock);
	if (n == 0 || !(c = malloc(ACTIVE_MAX * sizeof(*c))))
		return;
	n = snapshot(pl, -1, 0, c);
	hit = walk(pid, c, n);
	/* A process reparented away from its run (a daemonized helper) that
	 * kept the run's process group: asked only while something runs. */
	pgid = hit ? -1 : getpgid(pid);
	for (i = 0; !hit && pgid > 0 && i < n; i++)
		if (c[i].pid == pgid)
			hit = &c[i];
	if (hit)
		snprintf(out, size, "%s", hit->name);
	free(c);
}

int pipeline_record_stage(struct pipeline *pl, int64_t item_id, pid_t pid, const char *credential,
			  char *stage, size_t size, char *via, size_t vsize)
{
	struct cand *c = malloc(ACTIVE_MAX * sizeof(*c));
	const struct cand *hit, *named = NULL;
	int i, n;

	stage[0] = '\0';
	snprintf(via, vsize, "none");
	if (!c)
		return -ENOMEM;
	n = snapshot(pl, item_id, 1, c);
	hit = pid > 0 ? walk(pid, c, n) : NULL;
	if (credential && credential[0]) {
		for (i = 0; i < n && !named; i++)
			if (credential_eq(c[i].credential, credential))
				named = &c[i];
		if (!named) {
			free(c);
			return -EACCES;
		}
		snprintf(stage, size, "%s", named->name);
		snprintf(via, vsize, "%s", hit == named ? "both" : "credential");
	} else if (hit) {
		snprintf(stage, size, "%s", hit->name);
		snprintf(via, vsize, "ancestry");
	}
	free(c);
	return 0;
}
