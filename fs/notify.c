/*
 * notify.c - the notifier thread: replays the engine's own changes through
 * the mount (notify.h gives the design).
 *
 * Invariants: a path is queued at most once (the hash chains index the
 * queue); hide and reveal are non-NULL only while the notifier makes the
 * system call that needs them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "notify.h"
#include "replayer.h"

#define BUCKETS 1024

struct change {
	char *path;
	enum engine_change what;
	struct change *next;  /* in the queue */
	struct change *chain; /* in its hash bucket */
};

struct notifier {
	struct fuse_session *se;  /* constant */
	struct inode_table *inodes;
	notifier_wake_fn wake;    /* constant */
	void *wake_arg;
	pthread_t thread;
	int started;
	struct replayer *rp;      /* makes the system calls (replayer.h) */
	pid_t rp_pid;             /* constant: its process id */

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct change *head;      /* protected by lock: the queue, oldest first */
	struct change **tail;     /* protected by lock */
	struct change *bucket[BUCKETS]; /* protected by lock */
	int stopping;             /* protected by lock */
	const char *hide;         /* protected by lock: the name being made anew */
	const char *reveal;       /* protected by lock: the name being removed again */
	const char *reveal_as;    /* protected by lock: where what reveal named is now */
	pthread_cond_t sent;      /* with lock: sending dropped to 0 (notifier_send_close) */
	int sending;              /* protected by lock: notifications under way */
	int sends_closed;         /* protected by lock: the device is about to be closed */
	int write_bit;            /* atomic: 1 once a replay was refused (notifier_write_bit) */
};

static unsigned hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % BUCKETS;
}

static void change_free(struct change *c)
{
	free(c->path);
	free(c);
}

/* Takes the whole queue; lock held. */
static struct change *take_all(struct notifier *n)
{
	struct change *all = n->head;

	assert(util_mutex_held(&n->lock));
	n->head = NULL;
	n->tail = &n->head;
	memset(n->bucket, 0, sizeof(n->bucket));
	return all;
}

void notifier_changed(void *arg, const char *path, enum engine_change what)
{
	struct notifier *n = arg;
	struct change *c;
	unsigned h = hash(path);

	pthread_mutex_lock(&n->lock);
	if (n->stopping)
		goto out;
	for (c = n->bucket[h]; c; c = c->chain) {
		if (strcmp(c->path, path) == 0) {
			/* A new name stays new however often it changes after. */
			if (what != ENGINE_MODIFIED)
				c->what = what;
			goto out;
		}
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->path = strdup(path);
	if (!c || !c->path) {
		/* Out of memory: this change goes unreported; nothing else is hurt. */
		free(c);
		goto out;
	}
	c->what = what;
	c->chain = n->bucket[h];
	n->bucket[h] = c;
	*n->tail = c;
	n->tail = &c->next;
	pthread_cond_signal(&n->cond);
out:
	pthread_mutex_unlock(&n->lock);
}

int notifier_is_self(struct notifier *n, fuse_req_t req)
{
	return fuse_req_ctx(req)->pid == n->rp_pid;
}

enum notify_lookup notifier_lookup(struct notifier *n, fuse_req_t req, const char *path, char *as,
				   size_t size)
{
	enum notify_lookup how = NOTIFY_AS_IS;

	if (!notifier_is_self(n, req))
		return how;
	pthread_mutex_lock(&n->lock);
	if (n->hide && strcmp(n->hide, path) == 0) {
		how = NOTIFY_HIDE;
	} else if (n->reveal && strcmp(n->reveal, path) == 0) {
		how = NOTIFY_REVEAL;
		snprintf(as, size, "%s", n->reveal_as);
	}
	pthread_mutex_unlock(&n->lock);
	return how;
}

static void set_targets(struct notifier *n, const char *hide, const char *reveal,
			const char *reveal_as)
{
	pthread_mutex_lock(&n->lock);
	n->hide = hide;
	n->reveal = reveal;
	n->reveal_as = reveal_as;
	pthread_mutex_unlock(&n->lock);
}

/* Splits path into its parent's inode number (0 when the kernel has none)
 * and its last component. */
static uint64_t parent_ino(struct notifier *n, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	char parent[PATH_MAX];
	size_t len = slash && slash != path ? (size_t)(slash - path) : 1;

	*name = slash ? slash + 1 : path;
	if (len >= sizeof(parent))
		return 0;
	memcpy(parent, path, len);
	parent[len] = '\0';
	return inode_peek(n->inodes, parent);
}

int notifier_send_begin(struct notifier *n)
{
	int ok;

	if (!n)
		return 1;
	pthread_mutex_lock(&n->lock);
	ok = !n->sends_closed;
	n->sending += ok;
	pthread_mutex_unlock(&n->lock);
	return ok;
}

void notifier_send_end(struct notifier *n)
{
	if (!n)
		return;
	pthread_mutex_lock(&n->lock);
	if (--n->sending == 0 && n->sends_closed)
		pthread_cond_broadcast(&n->sent);
	pthread_mutex_unlock(&n->lock);
}

void notifier_send_close(struct notifier *n, long wait_ms)
{
	struct timespec until;

	if (!n)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&n->lock);
	n->sends_closed = 1;
	while (n->sending && pthread_cond_timedwait(&n->sent, &n->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&n->lock);
}

/* The name exists already: the kernel may hold a dentry for it (someone
 * looked it up before this ran). Drops it, so that making the name reaches
 * the mount. */
static void forget_entry(struct notifier *n, const char *path)
{
	const char *name;
	uint64_t parent = parent_ino(n, path, &name);

	if (parent && notifier_send_begin(n)) {
		fuse_lowlevel_notify_inval_entry(n->se, parent, name, strlen(name));
		notifier_send_end(n);
	}
}

int notifier_write_bit(struct notifier *n, fuse_req_t req)
{
	return notifier_is_self(n, req) && __atomic_load_n(&n->write_bit, __ATOMIC_SEQ_CST);
}

/* Has the replayer do op on path. The first refusal for want of
 * permission makes the notifier be told the owner's write bit from then
 * on (notifier_write_bit), and the call is made again. Notifier thread. */
static int call(struct notifier *n, enum replay_op op, const char *path)
{
	int r = replayer_call(n->rp, op, path);

	if (r == EACCES && !__atomic_exchange_n(&n->write_bit, 1, __ATOMIC_SEQ_CST)) {
		util_log(LOG_NOTICE,
			 "notifier: the replay of %s was refused (EACCES); from now on the notifier "
			 "alone is told that the owner may write what it replays (a daemon without "
			 "CAP_DAC_OVERRIDE needs that)",
			 path);
		r = replayer_call(n->rp, op, path);
	}
	return r;
}

static void replay_created(struct notifier *n, const char *path)
{
	forget_entry(n, path);
	set_targets(n, path, NULL, NULL);
	call(n, REPLAY_CREATE, path);
	set_targets(n, NULL, NULL, NULL);
}

/* path ("/<item>") was archived: its directory is removed again
 * (IN_DELETE|IN_ISDIR, as an rmdir through the mount gives) and made again
 * under .archive/ (IN_CREATE|IN_ISDIR). When the kernel no longer knows
 * the name (an rmdir through the mount archived it, and the kernel
 * reported that itself), only the new directory is made. (A rename would
 * say it better, but the kernel refuses it with ENOENT before asking the
 * mount; seen on Linux 6.18.) */
static void replay_archived(struct notifier *n, const char *path)
{
	char to[PATH_MAX];

	if ((size_t)snprintf(to, sizeof(to), "/.archive%s", path) >= sizeof(to))
		return;
	if (inode_peek(n->inodes, path) != 0) {
		set_targets(n, NULL, path, to);
		call(n, REPLAY_RMDIR, path);
		set_targets(n, NULL, NULL, NULL);
	}
	forget_entry(n, to);
	set_targets(n, to, NULL, NULL);
	call(n, REPLAY_MKDIR, to);
	set_targets(n, NULL, NULL, NULL);
}

static void replay(struct notifier *n, const struct change *c)
{
	switch (c->what) {
	case ENGINE_MODIFIED:
		call(n, REPLAY_WRITE, c->path);
		break;
	case ENGINE_CREATED:
		replay_created(n, c->path);
		break;
	case ENGINE_ARCHIVED:
		replay_archived(n, c->path);
		break;
	case ENGINE_TIMES:
		break; /* never queued (fs_changed): nothing for a watcher */
	}
}

/* Waits until ms have passed or the notifier stops; lock held. */
static void pace(struct notifier *n, long ms)
{
	struct timespec until;

	assert(util_mutex_held(&n->lock));
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += ms * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!n->stopping && pthread_cond_timedwait(&n->cond, &n->lock, &until) != ETIMEDOUT)
		;
}

/* Waits until changes are queued or the notifier stops; lock held, on the
 * notifier thread. Returns the queue, taken (the caller frees it), or NULL
 * when stopping. */
static struct change *next_batch(struct notifier *n)
{
	while (!n->stopping && !n->head)
		pthread_cond_wait(&n->cond, &n->lock);
	return n->stopping ? NULL : take_all(n);
}

/* Replays the changes of batch in their order, telling n->wake of each,
 * and frees them; on the notifier thread, lock not held. */
static void replay_batch(struct notifier *n, struct change *batch)
{
	struct change *c;

	/* Replaying blocks on the kernel: with the lock held, a request
	 * handler queueing a change would wait for it. */
	assert(!util_mutex_held(&n->lock));
	while ((c = batch) != NULL) {
		batch = c->next;
		replay(n, c);
		if (n->wake)
			n->wake(n->wake_arg, c->path);
		change_free(c);
	}
}

static void *notifier_main(void *arg)
{
	struct notifier *n = arg;
	struct change *batch;

	pthread_mutex_lock(&n->lock);
	while ((batch = next_batch(n)) != NULL) {
		pthread_mutex_unlock(&n->lock);
		replay_batch(n, batch);
		pthread_mutex_lock(&n->lock);
		pace(n, NOTIFY_PACE_MS);
	}
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

int notifier_start(struct fuse_session *se, struct inode_table *inodes, const char *mountpoint,
		   notifier_wake_fn wake, void *wake_arg, struct notifier **out)
{
	struct notifier *n = calloc(1, sizeof(*n));
	pthread_condattr_t ca;
	int r;

	if (!n)
		return -ENOMEM;
	n->se = se;
	n->inodes = inodes;
	n->wake = wake;
	n->wake_arg = wake_arg;
	n->tail = &n->head;
	r = replayer_start(mountpoint, &n->rp);
	if (r < 0) {
		free(n);
		return r;
	}
	n->rp_pid = replayer_pid(n->rp);
	pthread_mutex_init(&n->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&n->cond, &ca);
	pthread_cond_init(&n->sent, &ca);
	pthread_condattr_destroy(&ca);
	r = pthread_create(&n->thread, NULL, notifier_main, n);
	if (r) {
		notifier_free(n);
		return -r;
	}
	n->started = 1;
	*out = n;
	return 0;
}

/* Makes the notifier refuse further changes and tells its thread to end;
 * takes the lock (any thread but the notifier's). Returns the changes still
 * queued, which will not be replayed (the caller frees them). */
static struct change *close_queue(struct notifier *n)
{
	struct change *left;

	pthread_mutex_lock(&n->lock);
	n->stopping = 1;
	left = take_all(n);
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	return left;
}

void notifier_stop(struct notifier *n)
{
	struct change *left, *next;

	if (!n || !n->started)
		return;
	left = close_queue(n);
	pthread_join(n->thread, NULL);
	n->started = 0;
	replayer_stop(n->rp);
	n->rp = NULL;
	for (; left; left = next) {
		next = left->next;
		change_free(left);
	}
}

void notifier_free(struct notifier *n)
{
	if (!n)
		return;
	notifier_stop(n);
	replayer_stop(n->rp);
	pthread_cond_destroy(&n->cond);
	pthread_cond_destroy(&n->sent);
	pthread_mutex_destroy(&n->lock);
	free(n);
}
