/*
 * runner_tree.c - which processes are a run's, and the end of them (see
 * runner.h): the /proc sweeps that find a run's processes, the signals to
 * them, the subreaper and the reaping of the orphans it inherits, the
 * registry of live leaders that a sweep must not reap, and the process
 * groups an earlier daemon left (runner_kill_group_sync). Spawning and the
 * life of a run - when it sweeps and signals - are in runner.c.
 *
 * DESIGN: which processes are the run's. A process group is not enough: a
 * descendant may call setsid() or setpgid() (daemons, `setsid cmd &`, test
 * runners), and once its parent exits it is re-parented. So the daemon is a
 * child subreaper (runner_set_subreaper, from engine_start): orphans come
 * to it, never to init. Every run carries a marker in its environment,
 * RUNNER_MARKER_VAR=<daemon pid>.<n>, inherited by all its descendants. A
 * sweep (runner__sweep()) reads /proc/PID/stat of every process and takes as the
 * run's:
 *   - every process whose session or group is the run's (pid of the
 *     leader; not once that number was reused by an unrelated process,
 *     which the leader's start time tells);
 *   - every process seen as the run's by an earlier sweep (pid and start
 *     time, so a reused pid is not mistaken for it);
 *   - every orphan re-parented to the daemon (or to init, when the daemon
 *     is no subreaper) whose /proc/PID/environ holds the run's marker;
 *   - every descendant of those (ppid links, to a fixed point).
 * Signals go to the group at once (kill(-pgid), atomic against forks) and
 * then to each of these processes by pid. Sweeps run (runner.c) every
 * TRACK_MS while the leader runs (so that what is seen once stays known
 * even if it later loses the marker) and every POLL_MS while the run ends;
 * a process that appears while the run ends gets SIGTERM (once) or SIGKILL
 * (every sweep) as the run's stage demands. A descendant that both left
 * the session and dropped the marker before any sweep saw it, and was
 * orphaned, cannot be told apart and is left alone (its pipe end cannot
 * hold the run open: the drain deadline still runs).
 *
 * Reaping: as a subreaper the daemon inherits orphans and must wait for
 * them, but the leaders are reaped by their own runs (waitpid(pid)), and a
 * leader reaped by anyone else loses its exit status. So there is no
 * waitpid(-1): a sweep reaps, by pid, each zombie that is a child of this
 * process, lies outside this process's session (which every run left with
 * setsid, while popen and the like stay in it) and is not the leader of a
 * live run. The leaders of live runs of the whole process are kept in a
 * registry (leaders[], under leaders_lock). A leader starts on a thread of
 * libuv's pool (runner.c) and is registered once its spawn returns; while
 * any such spawn is under way (runner__spawn_begin to runner__spawn_end)
 * no sweep reaps, since a zombie might be that leader, dead before it was
 * registered. The lock is not held across the spawn, which waits for the
 * child's exec: a sweep on a loop never waits for one. An orphan that dies
 * after its run finished is reaped by the next sweep of any run.
 *
 * Invariants: no signal goes to a pid <= 1, to this process, or to a
 * process of our own group or session; a run's leader is reaped only by
 * its run.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner_int.h"

#define ENVIRON_MAX (4 << 20) /* bytes of /proc/PID/environ looked at */

/* A process of the run, as the last sweep saw it. */
struct member {
	pid_t pid;
	unsigned long long start; /* starttime of /proc/PID/stat: tells a reused pid apart */
	int termed;               /* has been sent SIGTERM */
};

/* What a sweep needs of one /proc/PID/stat. */
struct pstat {
	pid_t pid, ppid, pgid, sid;
	unsigned long long start;
	char state;  /* R, S, D, Z, ...; 'X' once reaped here */
	int member;  /* one of the run's processes */
};

/* Pids of the leaders of the live runs of this process, all loops
 * together: their runs reap them, a sweep never may. nreserved: room kept
 * for the spawns under way (runner__spawn_begin). leaders_lock also spans
 * each sweep's reaping. */
static pthread_mutex_t leaders_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *leaders;
static size_t nleaders, nreserved, leaders_cap;

/* Under leaders_lock. */
static int leaders_has(pid_t pid)
{
	size_t i;

	for (i = 0; i < nleaders; i++)
		if (leaders[i] == pid)
			return 1;
	return 0;
}

/*
 * The threads of this process that start leaders, under leaders_lock (see
 * surely_gone): a leader, and whatever a run's process makes its sibling
 * (clone's CLONE_PARENT), is a child of the thread that started it. busy:
 * the thread is inside the spawn of a leader whose pid is not registered
 * yet, so a child of that thread may be that leader; nbusy counts them.
 * SPAWNERS_MAX at most; beyond, spawners_over says the list is not whole,
 * and a thread not in it holds leaders_lock across its spawns. A thread
 * found gone leaves the list.
 */
#define SPAWNERS_MAX 64
struct spawner {
	pid_t tid;
	int busy;
};
static struct spawner spawners[SPAWNERS_MAX];
static size_t nspawners, nbusy;
static int spawners_over;

/* Under leaders_lock. */
static struct spawner *spawner_find(pid_t tid)
{
	size_t i;

	for (i = 0; i < nspawners; i++)
		if (spawners[i].tid == tid)
			return &spawners[i];
	return NULL;
}

int runner__spawn_begin(int *locked)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct spawner *s;
	size_t cap;
	pid_t *n;

	pthread_mutex_lock(&leaders_lock);
	if (nleaders + nreserved == leaders_cap) {
		cap = leaders_cap ? leaders_cap * 2 : 16;
		n = realloc(leaders, cap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&leaders_lock);
			return -ENOMEM;
		}
		leaders = n;
		leaders_cap = cap;
	}
	nreserved++;
	s = spawner_find(tid);
	if (!s && nspawners < SPAWNERS_MAX) {
		s = &spawners[nspawners++];
		s->tid = tid;
		s->busy = 0;
	}
	if (!s) {
		spawners_over = 1;
		*locked = 1;
		return 0;
	}
	assert(!s->busy);
	s->busy = 1;
	nbusy++;
	pthread_mutex_unlock(&leaders_lock);
	*locked = 0;
	return 0;
}

void runner__spawn_end(pid_t pid, int locked)
{
	struct spawner *s;

	if (!locked)
		pthread_mutex_lock(&leaders_lock);
	assert(nreserved > 0);
	nreserved--;
	if (pid > 0)
		leaders[nleaders++] = pid;
	s = spawner_find((pid_t)syscall(SYS_gettid));
	if (s && s->busy) {
		s->busy = 0;
		nbusy--;
	}
	pthread_mutex_unlock(&leaders_lock);
}

void runner__leaders_remove(pid_t pid)
{
	size_t i;

	pthread_mutex_lock(&leaders_lock);
	for (i = 0; i < nleaders; i++) {
		if (leaders[i] == pid) {
			leaders[i] = leaders[--nleaders];
			break;
		}
	}
	pthread_mutex_unlock(&leaders_lock);
}

/* Reads /proc/PID/stat into *ps (member 0). 0, -ENOENT when pid is gone,
 * or another negative errno when it cannot be told (no descriptor left). */
static int read_stat(pid_t pid, struct pstat *ps)
{
	char path[64], buf[1024], *rp;
	ssize_t n;
	int fd, ppid, pgid, sid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT; /* reaped between the open and the read */
	buf[n] = '\0';
	/* The command name may hold anything, ')' included: skip to the last. */
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %c %d %d %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			  "%*s %*s %*s %*s %llu", &ps->state, &ppid, &pgid, &sid, &ps->start) != 5)
		return -EINVAL;
	ps->pid = pid;
	ps->ppid = ppid;
	ps->pgid = pgid;
	ps->sid = sid;
	ps->member = 0;
	return 0;
}

int runner__start_time(pid_t pid, unsigned long long *start)
{
	struct pstat ps;

	if (read_stat(pid, &ps) < 0)
		return -1;
	*start = ps.start;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct pstat *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every process of /proc, sorted by pid, into *out (caller frees; NULL when
 * none). The count, or -1 when /proc cannot be read whole (a process that
 * is there but cannot be read: no descriptor left, no memory). */
static ssize_t snapshot(struct pstat **out)
{
	struct pstat *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int r, whole = 1;
	DIR *d;

	*out = NULL;
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || *end || pid <= 0)
			continue;
		if (n == cap) {
			nv = realloc(v, (cap ? cap * 2 : 512) * sizeof(*v));
			if (!nv) {
				whole = 0;
				break;
			}
			v = nv;
			cap = cap ? cap * 2 : 512;
		}
		r = read_stat((pid_t)pid, &v[n]);
		if (r == 0)
			n++;
		else if (r != -ENOENT) {
			whole = 0;
			break;
		}
	}
	closedir(d);
	if (!whole) {
		free(v);
		return -1;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_pid);
	*out = v;
	return (ssize_t)n;
}

static struct pstat *find_pstat(struct pstat *v, size_t n, pid_t pid)
{
	struct pstat key = { .pid = pid };

	return n ? bsearch(&key, v, n, sizeof(*v), cmp_pid) : NULL;
}

/* Whether the environment of pid holds the entry marker exactly. */
static int has_marker(pid_t pid, const char *marker)
{
	size_t len = 0, cap = 0, mlen = strlen(marker), s, e;
	char path[64], *buf = NULL, *nb;
	int fd, found = 0;
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= ENVIRON_MAX)
				break;
			nb = realloc(buf, cap ? cap * 2 : 65536);
			if (!nb)
				break;
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	for (s = 0; s < len && !found; s = e + 1) {
		for (e = s; e < len && buf[e]; e++)
			;
		found = e - s == mlen && memcmp(buf + s, marker, mlen) == 0;
	}
	free(buf);
	return found;
}

static const struct member *known_find(const struct runner_proc *p, pid_t pid,
				       unsigned long long start)
{
	size_t i;

	for (i = 0; i < p->nknown; i++)
		if (p->known[i].pid == pid && p->known[i].start == start)
			return &p->known[i];
	return NULL;
}

void runner__note_signal(struct runner_proc *p, int sig)
{
	if (sig == SIGKILL || p->res.kill_signal == 0)
		p->res.kill_signal = sig;
}

/* Whether the number p->pid still names the run's group and session: after
 * the leader was reaped, a live process with that pid is someone else (the
 * kernel reuses no pid that is still some group's or session's id, so
 * without such a process the id is still the run's). */
static int ids_ours(const struct runner_proc *p)
{
	struct pstat ps;

	if (p->pid <= 1 || p->pid == getpgrp())
		return 0;
	if (!p->leader_exited)
		return 1;
	return read_stat(p->pid, &ps) < 0;
}

int runner__signal_group(struct runner_proc *p, int sig)
{
	if (!ids_ours(p))
		return -ESRCH;
	return kill(-p->pid, sig) == 0 ? 0 : -errno;
}

/* Whether this process is a child subreaper. */
static int is_subreaper(void)
{
	int on = 0;

	return prctl(PR_GET_CHILD_SUBREAPER, &on, 0, 0, 0) == 0 && on;
}

/* Reaps the dead orphans of runs among the processes of v (see the top);
 * marks them 'X'. None while a leader is being started: it may be among
 * them, dead before it was registered; a later sweep reaps them. */
static void reap_orphans(struct pstat *v, size_t n)
{
	pid_t self = getpid(), mysid = getsid(0);
	size_t i;

	pthread_mutex_lock(&leaders_lock);
	for (i = 0; i < n && nbusy == 0; i++) {
		struct pstat *e = &v[i];

		if (e->state == 'Z' && e->ppid == self && e->sid != mysid && !leaders_has(e->pid) &&
		    waitpid(e->pid, NULL, WNOHANG) == e->pid)
			e->state = 'X';
	}
	pthread_mutex_unlock(&leaders_lock);
}

/*
 * Whether each child of thread tid of this process (dir: /proc/self/task,
 * open) is the leader of a live run or a process of our own session: 1
 * when so, 0 when not or when it cannot be told, -ENOENT when the thread
 * is gone. Under leaders_lock.
 */
static int children_ours(int dir, const char *tid, pid_t mysid)
{
	char path[320], buf[4096], *q, *end;
	struct pstat ps;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/children", tid);
	fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		/* A thread that just ended has no children left (they went to
		 * another thread); a thread without the file (a kernel without
		 * CONFIG_PROC_CHILDREN) tells nothing. */
		return faccessat(dir, tid, F_OK, 0) < 0 && errno == ENOENT ? -ENOENT : 0;
	/* One read: the kernel walks the list in one go. A list too long for
	 * buf is not worth the trouble. */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0 || n == (ssize_t)sizeof(buf) - 1)
		return 0;
	buf[n] = '\0';
	for (q = buf;; q = end) {
		long pid = strtol(q, &end, 10);

		if (end == q)
			return 1;
		if (pid <= 1 || leaders_has((pid_t)pid))
			continue;
		/* Ours (our session), or gone since (reaped by the code that
		 * started it). */
		if (read_stat((pid_t)pid, &ps) == 0 ? ps.sid != mysid : kill((pid_t)pid, 0) == 0)
			return 0;
	}
}

/* Whether this process's first thread is alive, not exiting ('Z' once it
 * ended while other threads live on). */
static int main_thread_alive(int dir, pid_t self)
{
	char path[64], buf[512], *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%d/stat", (int)self);
	fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] && !strchr("ZXx", rp[2]);
}

/*
 * Whether, without a look at all of /proc, none of the run's processes can
 * be alive and no dead orphan waits to be reaped. Only after the leader
 * was reaped, and only for a subreaper: then every live process that a
 * sweep would take for the run's - in its group or session, known, an
 * orphan with the marker, or a descendant of one of those - has a topmost
 * live ancestor that is a child of this process (its own parent died, or
 * it is the leader), and that child is not the leader of a live run (a
 * spawn of ours, never a descendant of a run) nor in our session (which no
 * run's process can join). So when every child of this process is one of
 * those two, the sweep would find nothing alive, and nothing to reap (a
 * dead orphan is a zombie child outside our session).
 *
 * Which threads to ask (/proc/self/task/TID/children): a child is its
 * spawning thread's, and the kernel gives an orphan (and the children of a
 * thread that ends) to the first live thread of the subreaper, the main
 * thread while it lives. So the thread that started the run's leader
 * (p->spawner, which also holds what the run's processes made their
 * siblings) and then the main thread - last, so that what the spawner's
 * end moves there meanwhile is seen - hold every child that can be the
 * run's; the other spawners' children are other runs' (their sweeps reap
 * what dies there). While the spawner starts another leader, a child of
 * it may be that leader, not yet registered: then it cannot be told. All
 * the threads are asked when the spawners' list is not whole or the main
 * thread has ended. 0 whenever that cannot be told (no /proc/.../children,
 * a child of another kind, the group's id in use).
 */
static int surely_gone(const struct runner_proc *p)
{
	pid_t self = getpid(), mysid = getsid(0);
	struct spawner *s;
	char tid[32];
	struct dirent *de;
	int fd, gone = 1, r;
	DIR *d;

	if (!p->leader_exited || !is_subreaper())
		return 0;
	/* The cheapest test first: a process of the run's group. */
	if (p->pid > 1 && (kill(-p->pid, 0) == 0 || errno != ESRCH))
		return 0;
	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	pthread_mutex_lock(&leaders_lock);
	if (!spawners_over && main_thread_alive(fd, self)) {
		s = p->spawner != self ? spawner_find(p->spawner) : NULL;
		if (s && s->busy) {
			gone = 0;
		} else if (s) {
			snprintf(tid, sizeof(tid), "%d", (int)s->tid);
			r = children_ours(fd, tid, mysid);
			if (r == -ENOENT) /* its children went to the main thread */
				*s = spawners[--nspawners];
			else
				gone = r == 1;
		}
		snprintf(tid, sizeof(tid), "%d", (int)self);
		if (gone)
			gone = children_ours(fd, tid, mysid) == 1;
		close(fd);
	} else if ((d = fdopendir(fd)) != NULL) {
		while (gone && (de = readdir(d))) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			s = spawner_find((pid_t)atoi(de->d_name));
			r = s && s->busy ? 0 : children_ours(dirfd(d), de->d_name, mysid);
			gone = r == 1 || r == -ENOENT;
		}
		closedir(d);
	} else {
		close(fd);
		gone = 0;
	}
	pthread_mutex_unlock(&leaders_lock);
	return gone;
}

/* The sweep (see the top and runner_int.h). */
int runner__sweep(struct runner_proc *p)
{
	pid_t self = getpid(), mysid = getsid(0), orphan_parent = is_subreaper() ? self : 1;
	struct pstat *v = NULL, *e, *par;
	struct member *known = NULL;
	size_t i, nk = 0, total = 0;
	int alive = 0, changed, ids;
	ssize_t n;

	if (p->pid <= 1)
		return 0;
	if (surely_gone(p)) {
		free(p->known);
		p->known = NULL;
		p->nknown = 0;
		return 0;
	}
	n = snapshot(&v);
	if (n < 0)
		return runner__signal_group(p, 0) != -ESRCH;
	/* As ids_ours(): a live process with the leader's pid after the leader
	 * was reaped is someone else, and so are that number's group and
	 * session. */
	ids = p->pid != getpgrp() && (!p->leader_exited || !find_pstat(v, (size_t)n, p->pid));
	/* No process of our own session is ever the run's: every run left it. */
	for (i = 0; i < (size_t)n; i++) {
		e = &v[i];
		if (e->pid <= 1 || e->pid == self || e->sid == mysid)
			continue;
		if ((ids && (e->sid == p->pid || e->pgid == p->pid)) ||
		    known_find(p, e->pid, e->start) ||
		    (e->ppid == orphan_parent && e->state != 'Z' && has_marker(e->pid, p->marker)))
			e->member = 1;
	}
	do {
		changed = 0;
		for (i = 0; i < (size_t)n; i++) {
			e = &v[i];
			if (e->member || e->pid <= 1 || e->pid == self || e->sid == mysid)
				continue;
			par = find_pstat(v, (size_t)n, e->ppid);
			if (par && par->member) {
				e->member = 1;
				changed = 1;
			}
		}
	} while (changed);
	reap_orphans(v, (size_t)n);

	for (i = 0; i < (size_t)n; i++)
		total += v[i].member && v[i].state != 'X';
	if (total)
		known = calloc(total, sizeof(*known));
	for (i = 0; i < (size_t)n; i++) {
		const struct member *old;
		struct member m;

		e = &v[i];
		if (!e->member || e->state == 'X')
			continue;
		old = known_find(p, e->pid, e->start);
		m.pid = e->pid;
		m.start = e->start;
		m.termed = old && old->termed;
		if (e->state != 'Z') {
			alive++;
			if (p->kill_sent) {
				if (kill(e->pid, SIGKILL) == 0)
					runner__note_signal(p, SIGKILL);
			} else if (p->term_sent && !m.termed) {
				/* The group's members had theirs from kill(-pgid). */
				if (!(p->group_termed && e->pgid == p->pid) &&
				    kill(e->pid, SIGTERM) == 0)
					runner__note_signal(p, SIGTERM);
				m.termed = 1;
			}
		}
		if (known)
			known[nk++] = m;
	}
	if (p->term_sent)
		p->group_termed = 0;
	/* Without memory for the list the old one is kept: better stale than
	 * empty. */
	if (known || total == 0) {
		free(p->known);
		p->known = known;
		p->nknown = nk;
	}
	free(v);
	return alive;
}

int runner_set_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -errno;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int runner_kill_group_sync(pid_t pgid, unsigned grace_s)
{
	uint64_t waited_ms = 0;

	if (pgid <= 1 || pgid == getpgrp())
		return -EINVAL;
	if (kill(-pgid, SIGTERM) < 0)
		return errno == ESRCH ? 0 : -errno;
	while (waited_ms < (uint64_t)grace_s * 1000) {
		sleep_ms(POLL_MS);
		waited_ms += POLL_MS;
		if (kill(-pgid, 0) < 0 && errno == ESRCH)
			return 0;
	}
	if (kill(-pgid, SIGKILL) < 0 && errno != ESRCH)
		return -errno;
	return 0;
}
