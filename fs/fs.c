/*
 * fs.c - the life of a mount behind `packetfs mount`: the daemon, the
 * FUSE session and its loop, and the teardown. The operations the session
 * serves are fs_ops.c's (with fs_ops_file.c and fs_ops_dir.c), what the
 * kernel may cache of their replies fs_cache.c's, the session's reads and
 * writes of /dev/fuse fs_io.c's (FUSE_HANDLE_KILLPRIV_V2), its io_uring
 * rings fs_ring.c's; fs_int.h is what they share.
 *
 * DESIGN
 *
 * Threads. The FUSE session loop runs multithreaded (fuse_session_loop_mt)
 * on the main thread of the mount process; each request is handled on one
 * of its worker threads (at most max_threads: default_max_threads), which
 * calls the engine directly (every engine function may be called from any
 * thread). The engine runs its pipeline on a libuv loop thread of its own,
 * started by engine_start(); SIGINT, SIGTERM and SIGHUP are blocked while
 * it is created so that only FUSE threads take them (libfuse's handlers
 * end the session loop). So is a short-lived thread (ready_main) that
 * waits for the mount's first answer to report the mount up, to the
 * waiting parent and to systemd. No request handler calls a FUSE notify
 * function: a notification sent from inside a handler can deadlock against
 * the kernel, which holds locks until the reply. The engine makes its own
 * changes visible from its own threads (fs__changed, the notifier and the
 * poll wake-ups, fs__wake_polls).
 *
 * Teardown. When the loop ends, the mount is taken down before the engine
 * is closed: closing the FUSE device aborts the connection, so anything
 * still touching the mount (stage programs being cancelled, the engine's
 * own writes through it) fails at once instead of waiting for a server
 * that no longer answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <fuse_lowlevel.h>
#include <systemd/sd-daemon.h>
#include <linux/close_range.h>

#include "engine.h"
#include "fs.h"
#include "fs_int.h"
#include "inode.h"
#include "notify.h"

/* Reports a mount failure: to the waiting parent through the status pipe
 * (fd >= 0), or on stderr. */
static void report(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(int fd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "packetfs: mount: ");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(msg, "\n");
	if (fd >= 0) {
		ssize_t w = write(fd, msg, strlen(msg));

		(void)w;
	} else {
		fputs(msg, stderr);
	}
}

/* Makes the session with the fixed and the user's mount options and mounts
 * it; ring 1 asks for FUSE over io_uring (fs_ring.c). Returns 0 or -1
 * after reporting. */
static int session_open(struct fs *fs, const struct fs_mount_options *o, int ring, int status_fd)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	char fixed[2 * PATH_MAX + 64], *store = realpath(o->store, NULL), *w;
	const char *c;
	int r = -1;

	/* The source of the mount is the store (as sshfs shows user@host:), so
	 * that `packetfs umount` finds the daemon; ',' and '\' are escaped for
	 * libfuse's option parser. */
	w = fixed + snprintf(fixed, sizeof(fixed), "default_permissions,subtype=packetfs,fsname=");
	for (c = store ? store : "packetfs"; *c && w < fixed + sizeof(fixed) - 3; c++) {
		if (*c == ',' || *c == '\\')
			*w++ = '\\';
		*w++ = *c;
	}
	*w = '\0';
	free(store);
	if (fuse_opt_add_arg(&args, "packetfs") != 0 || fuse_opt_add_arg(&args, "-o") != 0 ||
	    fuse_opt_add_arg(&args, fixed) != 0 ||
	    (o->options && (fuse_opt_add_arg(&args, "-o") != 0 ||
			    fuse_opt_add_arg(&args, o->options) != 0))) {
		report(status_fd, "%s", strerror(ENOMEM));
		goto out;
	}
	fs->se = fuse_session_new(&args, &fs__ops, sizeof(fs__ops), fs);
	if (fs->se == NULL) {
		report(status_fd, "%s: invalid mount options", o->options ? o->options : "");
		goto out;
	}
	if (fuse_session_mount(fs->se, o->mountpoint) != 0) {
		report(status_fd, "%s: cannot mount (see the message above)", o->mountpoint);
		fuse_session_destroy(fs->se);
		fs->se = NULL;
		goto out;
	}
	if ((r = fs__io_install(fs->se, ring)) != 0)
		util_log(LOG_WARNING, "mount: FUSE_HANDLE_KILLPRIV_V2 and io_uring not asked for "
			 "(%s): the kernel asks for security.capability before each write",
			 strerror(-r));
	r = 0;
out:
	fuse_opt_free_args(&args);
	return r;
}

/* Whether the user's mount options opts (comma-separated; NULL: none) hold
 * allow_other: a mount a team shares (fs_team.c). */
static int shared_mount(const char *opts)
{
	size_t len = strlen("allow_other");
	const char *p = opts;

	while (p && *p) {
		if (strncmp(p, "allow_other", len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return 1;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return 0;
}

/* Detaches the daemon from the caller's terminal and directory, before the
 * engine starts processes that would inherit them. */
static void detach(void)
{
	int null = open("/dev/null", O_RDWR), r;

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	/* Keep no directory busy; "/" always exists. */
	r = chdir("/");
	(void)r;
}

/*
 * The FUSE worker threads that may wait for a request at once (libfuse's
 * max_idle_threads; more run while requests keep them busy, up to
 * max_threads, which also bounds this one). The kernel
 * hands each request to the worker that has waited longest, so every idle
 * worker is one more thread, likely on another CPU, that a serial client's
 * requests rotate through. Chosen by measurement (docs/design.md, "FUSE
 * session options and why"): with 4 against libfuse's 10, four parallel
 * cat(1)s ran 5-9% faster on 2 CPUs and serial creates and appends moved
 * less than the runs varied; 2 lost that gain, 1 is twice as slow (it
 * starts a thread per request that finds none waiting, where max_threads
 * allows more).
 */
#define IDLE_THREADS 4
#define THREADS_MAX 64 /* the most max_idle_threads and max_threads take */

/*
 * The FUSE worker threads that may run at once (libfuse's max_threads)
 * when -o max_threads=N does not say: as many as the daemon has CPUs to
 * run on, at least 2 and at most libfuse's default of 10. A worker more
 * than there are CPUs only adds context switches and lock handoffs while
 * requests come faster than they are served; measured on 2 CPUs
 * (tests/bench/HISTORY.md, 2026-12-07 fifteenth), 2 against 10: four
 * parallel Python create loops cost the daemon 228-268 µs of CPU a file
 * against 429-454, and W4, W10 and W11's rows rose by up to 41%. One
 * worker costs less still, but a request that waits (an fsync on a slow
 * disk, a trigger write waiting for the pipeline's loop) then holds up
 * every other: at least two.
 */
#define MAX_THREADS_MIN 2
#define MAX_THREADS_DEFAULT_MAX 10

/* The default max_threads (see above). */
static int default_max_threads(void)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	return n < MAX_THREADS_MIN ? MAX_THREADS_MIN
				   : n > MAX_THREADS_DEFAULT_MAX ? MAX_THREADS_DEFAULT_MAX : n;
}

/* The number of len bytes of decimal digits at v when it is from 1 to
 * THREADS_MAX, else -1. */
static int threads_of(const char *v, size_t len)
{
	size_t i;
	int n = 0;

	if (len == 0 || len > 2)
		return -1;
	for (i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (v[i] - '0');
	}
	return n >= 1 && n <= THREADS_MAX ? n : -1;
}

/*
 * Takes the daemon's own options out of the comma-separated mount options
 * opts (NULL: none): log=FILE into *log (NULL when not given; the last one
 * wins, malloc'd), max_idle_threads=N into *idle (IDLE_THREADS when not
 * given), max_threads=N into *max (default_max_threads() when not given)
 * and io_uring into *ring (1 when given, else 0); *rest gets the others
 * (malloc'd, NULL when none are left). The caller frees both. Returns 0, -ENOMEM, or
 * -EINVAL for a max_idle_threads or max_threads that is not a number from 1
 * to THREADS_MAX, with *bad pointing at that option in opts and
 * *bad_len its length (nothing to free then).
 */
static int split_daemon_options(const char *opts, char **rest, char **log, int *idle, int *max,
				int *ring, const char **bad, size_t *bad_len)
{
	struct buf other = { NULL, 0, 0 };
	const char *p = opts, *end;
	size_t len;
	int *count;

	*rest = NULL;
	*log = NULL;
	*idle = IDLE_THREADS;
	*max = default_max_threads();
	*ring = 0;
	while (p && *p) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		count = len >= 17 && strncmp(p, "max_idle_threads=", 17) == 0 ? idle
			: len >= 12 && strncmp(p, "max_threads=", 12) == 0   ? max
									       : NULL;
		if (len > 4 && strncmp(p, "log=", 4) == 0) {
			free(*log);
			*log = strndup(p + 4, len - 4);
			if (!*log)
				goto nomem;
		} else if (len == 8 && strncmp(p, "io_uring", 8) == 0) {
			*ring = 1;
		} else if (count) {
			const char *v = strchr(p, '=') + 1;

			*count = threads_of(v, len - (size_t)(v - p));
			if (*count < 0) {
				buf_free(&other);
				free(*log);
				*log = NULL;
				*bad = p;
				*bad_len = len;
				return -EINVAL;
			}
		} else if (len && ((other.len && buf_puts(&other, ",") < 0) ||
				   buf_append(&other, p, len) < 0)) {
			goto nomem;
		}
		p = end ? end + 1 : NULL;
	}
	*rest = other.len ? buf_steal(&other) : NULL;
	buf_free(&other);
	return 0;
nomem:
	buf_free(&other);
	free(*log);
	*log = NULL;
	return -ENOMEM;
}

/* What the thread that waits for the mount to answer needs. */
struct ready {
	const char *mountpoint;
	int status_fd; /* the waiting parent's pipe, or -1 in the foreground */
	int background; /* 1: this is a forked daemon (MAINPID for systemd) */
};

/*
 * Waits until the mount answers (a stat of its .packetfs/version, served by
 * the session loop once it runs), then tells the waiting parent ("OK"
 * through the status pipe) and systemd (READY=1, when NOTIFY_SOCKET is set;
 * with MAINPID when the daemon forked away from the process systemd
 * started).
 */
static void *ready_main(void *arg)
{
	struct ready *rd = arg;
	char path[PATH_MAX];
	struct stat st;
	int r;

	snprintf(path, sizeof(path), "%s/.packetfs/version", rd->mountpoint);
	while ((r = stat(path, &st)) < 0 && errno == EINTR)
		;
	if (r < 0) {
		/* The loop ended before it answered: fs_mount reports the end. */
		report(rd->status_fd, "%s: the mount does not answer: %s", rd->mountpoint,
		       strerror(errno));
		return NULL;
	}
	if (rd->status_fd >= 0) {
		ssize_t w = write(rd->status_fd, "OK", 2);

		(void)w;
		close(rd->status_fd);
	}
	if (rd->background)
		sd_notifyf(0, "READY=1\nMAINPID=%d", (int)getpid());
	else
		sd_notify(0, "READY=1");
	return NULL;
}

/* Opens the engine, mounts, serves until unmounted and tears down. With
 * status_fd >= 0 this is the daemon and reports through the pipe. Returns
 * the exit status. */
static int serve(const struct fs_mount_options *given, int status_fd)
{
	struct fs_mount_options opts = *given, *o = &opts;
	char *fuse_opts = NULL, *log_file = NULL;
	struct engine_options eo = { o->store, o->mountpoint, 0 };
	struct fuse_loop_config *lc = NULL;
	struct fs fs = { .store = o->store, .open_lock = PTHREAD_MUTEX_INITIALIZER,
			 .ns_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP,
			 .open_idle = PTHREAD_COND_INITIALIZER, .team.lock = PTHREAD_MUTEX_INITIALIZER };
	char err[1024] = "";
	struct ready rd = { NULL, -1, 0 };
	pthread_t ready;
	sigset_t block, old;
	int r, rc = 1, ready_err = 0, idle, max, ring;
	const char *bad = NULL;
	size_t bad_len = 0;

	/* The log is chosen before the engine opens, and its file opened
	 * while relative names still mean the caller's directory. */
	r = split_daemon_options(given->options, &fuse_opts, &log_file, &idle, &max, &ring, &bad,
				 &bad_len);
	if (r == -EINVAL) {
		report(status_fd, "%.*s: not a number from 1 to %d", (int)bad_len, bad,
		       THREADS_MAX);
		return 1;
	}
	if (r < 0) {
		report(status_fd, "%s", strerror(-r));
		return 1;
	}
	lc = fuse_loop_cfg_create();
	if (!lc) {
		report(status_fd, "%s", strerror(ENOMEM));
		free(fuse_opts);
		free(log_file);
		return 1;
	}
	fuse_loop_cfg_set_clone_fd(lc, 0);
	fuse_loop_cfg_set_max_threads(lc, (unsigned int)max);
	/* libfuse starts a thread for each request that finds none of the
	 * at most max waiting, and ends those above idle. */
	fuse_loop_cfg_set_idle_threads(lc, (unsigned int)(idle < max ? idle : max));
	opts.options = fuse_opts;
	if (log_file && (r = util_log_to_file(log_file)) < 0) {
		report(status_fd, "log=%s: %s", log_file, strerror(-r));
		goto close_engine; /* none opened yet */
	}
	r = engine_open(&eo, &fs.engine, err, sizeof(err));
	if (r < 0) {
		if (err[0])
			report(status_fd, "%s", err);
		else
			report(status_fd, "%s: %s", o->store, strerror(-r));
		goto close_engine;
	}
	fs__team_init(&fs);
	fs.shared = shared_mount(o->options);
	r = inode_table_new(&fs.inodes);
	if (r < 0) {
		report(status_fd, "%s", strerror(-r));
		goto close_engine;
	}
	if (session_open(&fs, o, ring, status_fd) < 0)
		goto free_inodes;
	if (fuse_set_signal_handlers(fs.se) != 0) {
		report(status_fd, "cannot install signal handlers");
		goto unmount;
	}
	if (status_fd >= 0) {
		detach();
		if (!log_file)
			util_log_to_syslog();
	}
	/* Nothing the caller handed down, nor the FUSE device or the database,
	 * may reach the stage programs and recipes the engine starts. */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r = notifier_start(fs.se, fs.inodes, o->mountpoint, fs__wake_polls, &fs, &fs.notifier);
	if (r == 0) {
		engine_watch(fs.engine, fs__changed, &fs);
		r = engine_start(fs.engine);
	}
	/* The thread that waits for the mount to answer blocks the signals too. */
	if (r == 0) {
		rd.mountpoint = o->mountpoint;
		rd.status_fd = status_fd;
		rd.background = status_fd >= 0;
		ready_err = pthread_create(&ready, NULL, ready_main, &rd);
		if (ready_err != 0)
			rd.mountpoint = NULL;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		report(status_fd, "%s: cannot start the pipeline: %s", o->store, strerror(-r));
		goto remove_handlers;
	}
	if (ready_err != 0) {
		report(status_fd, "cannot start a thread: %s", strerror(ready_err));
		goto remove_handlers;
	}
	util_log(LOG_NOTICE, "mounted %s on %s", o->store, o->mountpoint);
	r = fuse_session_loop_mt(fs.se, lc);
	sd_notify(0, "STOPPING=1");
	util_log(LOG_NOTICE, "unmounting %s", o->mountpoint);
	rc = r < 0 ? 1 : 0;
	if (rc && status_fd < 0)
		report(-1, "%s: %s", o->mountpoint, strerror(-r));
remove_handlers:
	fuse_remove_signal_handlers(fs.se);
unmount:
	/* Unmounting aborts the connection: a replay in flight fails, and the
	 * notifier can be stopped. The engine may still report changes while
	 * it closes; a stopped notifier drops them. Unmounting also closes the
	 * device: no notification may be sent on it from then on. */
	notifier_send_close(fs.notifier, 1000);
	fuse_session_unmount(fs.se);
	fs__ring_stop();
	if (rd.mountpoint)
		pthread_join(ready, NULL);
	notifier_stop(fs.notifier);
	engine_close(fs.engine);
	fs.engine = NULL;
	notifier_free(fs.notifier);
	fuse_session_destroy(fs.se);
free_inodes:
	inode_table_free(fs.inodes);
close_engine:
	engine_close(fs.engine);
	fuse_loop_cfg_destroy(lc);
	free(fuse_opts);
	free(log_file);
	return rc;
}

int fs_mount(const struct fs_mount_options *o)
{
	char msg[1024];
	size_t len = 0;
	int pfd[2], status;
	pid_t pid;

	if (o->foreground)
		return serve(o, -1);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		report(-1, "pipe: %s", strerror(errno));
		return 1;
	}
	fflush(NULL);
	/* Daemonization, not a program run: the child goes on as the daemon
	 * (programs start through proc_start of the engine; tests/tree/spawn.sh
	 * names this fork as an exception). */
	pid = fork();
	if (pid < 0) {
		report(-1, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return 1;
	}
	if (pid == 0) {
		close(pfd[0]);
		setsid();
		exit(serve(o, pfd[1]));
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], msg + len, sizeof(msg) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		msg[len] = '\0';
		/* Stop at "OK": the daemon's children might hold the pipe. */
		if (strcmp(msg, "OK") == 0) {
			close(pfd[0]);
			return 0;
		}
		if (len == sizeof(msg) - 1)
			break;
	}
	close(pfd[0]);
	msg[len] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (len > 0)
		fputs(msg, stderr);
	else
		report(-1, "%s: the daemon exited before the mount was up", o->mountpoint);
	return 1;
}
