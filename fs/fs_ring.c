/*
 * fs_ring.c - FUSE over io_uring (FUSE protocol 7.42, Linux 6.14 and
 * later; Documentation/filesystems/fuse/fuse-io-uring.rst): the kernel
 * hands requests to ring entries the daemon registered instead of queueing
 * them for read(2) of /dev/fuse, and takes each reply with the next fetch
 * in one io_uring_enter(2). fs_int.h: fs__ring_prepare, fs__ring_go,
 * fs__ring_reply, fs__ring_stop.
 *
 * Why. Served through /dev/fuse, a request costs the daemon a read(2) and
 * a writev(2), and the kernel wakes whichever worker has waited longest,
 * often on the other CPU from the process that asked. The kernel keeps one
 * queue of ring entries per possible CPU and gives a request to the queue
 * of the CPU its caller runs on, so a thread that waits on that queue,
 * bound to that CPU, serves it where the caller waits (the one-CPU rows of
 * tests/bench, docs/design.md).
 *
 * Shape. libfuse 3.14 has no io_uring transport, so the requests a ring
 * brings are handed to libfuse's own request processing
 * (fuse_session_process_buf) in the layout read(2) of /dev/fuse gives: the
 * fuse_in_header, then the operation's arguments. The kernel puts the
 * header and the operation's first argument in the entry's header buffer
 * and the rest in its payload buffer, so both are copied in front of the
 * payload (at most 40 + 128 bytes) and the payload is not moved. The reply
 * libfuse writes for it (fs_io.c's writev) is copied into the same entry
 * (fs__ring_reply), and the next io_uring_enter(2) commits it and fetches
 * the entry's next request.
 *
 * Threads. Each queue gets RING_THREADS threads bound to its CPU, each
 * with an io_uring of its own and one entry, so a request that waits (a
 * lock, the store) holds only its own thread, as a libfuse worker would.
 * Every handler replies before it returns (fs.c: no reply is deferred), so
 * the entry a reply belongs to is the one its thread serves. FORGETs,
 * INTERRUPTs and the kernel's requests before the ring is ready still come
 * through /dev/fuse to libfuse's workers.
 *
 * Setup. Off unless asked for (-o io_uring), and the kernel offers it only
 * when the fuse module's enable_uring parameter is set. Once an INIT reply
 * agrees to it, the kernel holds every request until each queue has an
 * entry, so everything that can fail here (memory, rings, threads) is done
 * before the reply asks for it (fs__ring_prepare); a failure then leaves
 * the flag out and the session on /dev/fuse. Only the registrations come
 * after the reply (fs__ring_go); a REGISTER the kernel refuses turns the
 * connection back to /dev/fuse (fc->io_uring cleared, fs/fuse/dev_uring.c).
 */
#include <assert.h>
#include <errno.h>
#include <linux/fuse.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include <liburing.h>

#include "fs_int.h"

/* The FUSE-over-io-uring ABI of linux/fuse.h 7.42 (Linux 6.14), which
 * Debian 12's kernel headers (7.38) predate. */
#define RING_IN_OUT_HEADER_SZ 128
#define RING_OP_IN_OUT_SZ 128

struct ring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* the request's id, for its commit */
	uint32_t payload_sz; /* bytes of the payload buffer in use */
	uint32_t padding;
	uint64_t reserved;
};

struct ring_req_header {
	char in_out[RING_IN_OUT_HEADER_SZ]; /* fuse_in_header / fuse_out_header */
	char op_in[RING_OP_IN_OUT_SZ]; /* the operation's first argument */
	struct ring_ent_in_out ring_ent_in_out;
};

enum { RING_CMD_REGISTER = 1, RING_CMD_COMMIT_AND_FETCH = 2 };

struct ring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

/* Threads (each with one entry) per queue: two, so that one waiting
 * request does not hold up the next from the same CPU. */
#define RING_THREADS 2
/* Room in front of the payload for the header and first argument. */
#define RING_FRONT 4096
/* user_data of the SQE that polls the stop eventfd. */
#define RING_STOP_TAG 1

/* One thread's ring and its entry. */
struct ring_thread {
	pthread_t tid;
	int started; /* tid is a thread to join */
	int qid;
	struct io_uring ring;
	int ring_up; /* ring is initialised */
	struct ring_req_header *hdr; /* page-aligned, RING_FRONT bytes */
	char *area; /* RING_FRONT bytes, then the payload buffer */
	struct iovec iov[2]; /* hdr and the payload, as registered */
	uint64_t unique; /* of the request being served; 0: none */
	uint64_t commit_id; /* of the request being served */
	int replied; /* its reply is in the entry */
	uint32_t last_cmd; /* the command to send again on EAGAIN */
};

/* What the threads do after their setup (R.state). */
enum { RING_WAIT, RING_GO, RING_STOP };

static struct {
	pthread_mutex_t lock; /* guards state */
	pthread_cond_t cond; /* signalled when state changes */
	int state;
	struct fuse_session *se;
	int fd; /* the session's /dev/fuse */
	size_t payload_sz; /* bytes of each entry's payload buffer */
	int stop_fd; /* eventfd that ends every thread */
	int nthreads;
	struct ring_thread *threads;
	atomic_ulong served; /* requests served through the rings */
} R = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .fd = -1,
	.stop_fd = -1 };

/* The thread's entry while it serves a request, for fs__ring_reply. */
static __thread struct ring_thread *serving;

/* The number of queues the kernel keeps: one per possible CPU (the
 * highest index in /sys/devices/system/cpu/possible, plus one). */
static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char line[256], *p;
	long n = 0;

	if (f && fgets(line, sizeof(line), f)) {
		p = line + strcspn(line, "\n");
		while (p > line && (p[-1] >= '0' && p[-1] <= '9'))
			p--;
		n = strtol(p, NULL, 10) + 1;
	}
	if (f)
		fclose(f);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_CONF);
	return n > 0 && n < 4096 ? (int)n : 1;
}

/* Fills sqe with cmd for t's entry (REGISTER hands the kernel the buffers;
 * COMMIT_AND_FETCH the reply in them, for commit_id). */
static void prep_cmd(struct ring_thread *t, struct io_uring_sqe *sqe, uint32_t cmd,
		     uint64_t commit_id)
{
	struct ring_cmd_req req = { .commit_id = commit_id, .qid = (uint16_t)t->qid };

	/* Two SQEs for one command and one poll: never full. */
	assert(sqe);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->fd = 0;
	sqe->cmd_op = cmd;
	if (cmd == RING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)t->iov;
		sqe->len = 2;
	}
	/* The command's arguments, in the second half of the 128-byte SQE. */
	memcpy((char *)sqe + offsetof(struct io_uring_sqe, cmd), &req, sizeof(req));
	io_uring_sqe_set_data64(sqe, 0);
	t->last_cmd = cmd;
}

/* Serves the request now in t's entry and queues its commit. */
static void serve_one(struct ring_thread *t)
{
	struct fuse_in_header *in = (struct fuse_in_header *)t->hdr->in_out;
	struct fuse_out_header *out = (struct fuse_out_header *)t->hdr->in_out;
	struct ring_ent_in_out *eio = &t->hdr->ring_ent_in_out;
	uint64_t unique = in->unique;
	size_t payload = eio->payload_sz, first;
	struct fuse_buf buf = { 0 };
	char *front;

	t->commit_id = eio->commit_id;
	/* The first argument's size is what the header's length leaves. */
	if (in->len < sizeof(*in) + payload ||
	    (first = in->len - sizeof(*in) - payload) > RING_OP_IN_OUT_SZ || payload > R.payload_sz) {
		util_log(LOG_ERR, "io_uring: request %llu: %u bytes with a %zu-byte payload",
			 (unsigned long long)unique, in->len, payload);
		memset(out, 0, sizeof(*out));
		out->error = -EIO;
		out->unique = unique;
		eio->payload_sz = 0;
	} else {
		front = t->area + RING_FRONT - sizeof(*in) - first;
		memcpy(front, in, sizeof(*in));
		memcpy(front + sizeof(*in), t->hdr->op_in, first);
		buf.mem = front;
		buf.size = in->len;
		t->unique = unique;
		t->replied = 0;
		serving = t;
		fs__io_note_request(front, buf.size);
		fuse_session_process_buf(R.se, &buf);
		serving = NULL;
		t->unique = 0;
		if (!t->replied) {
			/* Only FORGET and INTERRUPT go unanswered; neither
			 * comes through a ring. */
			util_log(LOG_ERR, "io_uring: request %llu (opcode %u) got no reply",
				 (unsigned long long)unique, in->opcode);
			memset(out, 0, sizeof(*out));
			out->error = -EIO;
			out->unique = unique;
			eio->payload_sz = 0;
		}
		atomic_fetch_add_explicit(&R.served, 1, memory_order_relaxed);
	}
	prep_cmd(t, io_uring_get_sqe(&t->ring), RING_CMD_COMMIT_AND_FETCH, t->commit_id);
}

int fs__ring_reply(const struct iovec *iov, int count)
{
	struct ring_thread *t = serving;
	const struct fuse_out_header *o = iov[0].iov_base;
	struct fuse_out_header *out;
	size_t len = 0;
	int i;

	if (!t || iov[0].iov_len < sizeof(*o) || o->unique != t->unique)
		return 0;
	for (i = 1; i < count; i++) {
		if (len + iov[i].iov_len > R.payload_sz) {
			util_log(LOG_ERR, "io_uring: reply to %llu larger than %zu bytes",
				 (unsigned long long)o->unique, R.payload_sz);
			len = 0;
			break;
		}
		/* A reply may point into the request it answers. */
		memmove(t->area + RING_FRONT + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	out = (struct fuse_out_header *)t->hdr->in_out;
	out->unique = o->unique;
	out->error = i < count ? -EIO : o->error;
	out->len = (uint32_t)(sizeof(*out) + len);
	t->hdr->ring_ent_in_out.payload_sz = (uint32_t)len;
	t->replied = 1;
	return 1;
}

/* Sets up t's ring (two SQEs: the entry's command and the stop poll, both
 * 128-byte for the command's arguments) and queues its registration and
 * the poll. 0 or a negative errno. */
static int thread_setup(struct ring_thread *t)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct io_uring_sqe *sqe;
	int r;

	r = io_uring_queue_init_params(2, &t->ring, &p);
	if (r < 0)
		return r;
	t->ring_up = 1;
	r = io_uring_register_files(&t->ring, &R.fd, 1);
	if (r < 0)
		return r;
	prep_cmd(t, io_uring_get_sqe(&t->ring), RING_CMD_REGISTER, 0);
	sqe = io_uring_get_sqe(&t->ring);
	io_uring_prep_poll_add(sqe, R.stop_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, RING_STOP_TAG);
	return 0;
}

static void *thread_main(void *arg)
{
	struct ring_thread *t = arg;
	struct io_uring_cqe *cqe;
	cpu_set_t cpus;
	int r, done;

	CPU_ZERO(&cpus);
	CPU_SET(t->qid, &cpus);
	/* A CPU that is possible but not online gets no requests; its queue
	 * is registered all the same, as the kernel waits for every queue. */
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	pthread_mutex_lock(&R.lock);
	while (R.state == RING_WAIT)
		pthread_cond_wait(&R.cond, &R.lock);
	done = R.state == RING_STOP;
	pthread_mutex_unlock(&R.lock);
	while (!done) {
		r = io_uring_submit_and_wait(&t->ring, 1);
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			util_log(LOG_ERR, "io_uring: queue %d: %s", t->qid, strerror(-r));
			break;
		}
		while (!done && io_uring_peek_cqe(&t->ring, &cqe) == 0) {
			uint64_t tag = io_uring_cqe_get_data64(cqe);
			int res = cqe->res;

			io_uring_cqe_seen(&t->ring, cqe);
			if (tag == RING_STOP_TAG) {
				done = 1;
			} else if (res == -EAGAIN || res == -EINTR) {
				/* Before the kernel finished INIT, or interrupted:
				 * the same command again. */
				prep_cmd(t, io_uring_get_sqe(&t->ring), t->last_cmd, t->commit_id);
			} else if (res < 0) {
				/* ENOTCONN and ECONNABORTED: the mount went away. A
				 * refused REGISTER turns the kernel back to /dev/fuse. */
				if (res != -ENOTCONN && res != -ECONNABORTED)
					util_log(LOG_WARNING, "io_uring: queue %d: %s%s", t->qid,
						 strerror(-res), t->last_cmd == RING_CMD_REGISTER
						 ? ": the session stays on /dev/fuse" : "");
				done = 1;
			} else {
				serve_one(t);
			}
		}
	}
	return NULL;
}

/* Maps n bytes of anonymous memory, page-aligned; NULL when it cannot. */
static void *map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Tells the threads to go on (RING_GO) or to end (RING_STOP). */
static void set_state(int state)
{
	pthread_mutex_lock(&R.lock);
	R.state = state;
	pthread_cond_broadcast(&R.cond);
	pthread_mutex_unlock(&R.lock);
}

int fs__ring_prepare(struct fuse_session *se, size_t payload_sz)
{
	int queues = possible_cpus(), i, r = 0;
	sigset_t all, old;

	R.se = se;
	R.fd = fuse_session_fd(se);
	R.payload_sz = payload_sz;
	R.state = RING_WAIT;
	R.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (R.stop_fd < 0)
		return -errno;
	R.nthreads = queues * RING_THREADS;
	R.threads = calloc((size_t)R.nthreads, sizeof(*R.threads));
	if (!R.threads)
		r = -ENOMEM;
	for (i = 0; r == 0 && i < R.nthreads; i++) {
		struct ring_thread *t = &R.threads[i];

		t->qid = i / RING_THREADS;
		t->hdr = map(RING_FRONT);
		t->area = map(RING_FRONT + payload_sz);
		if (!t->hdr || !t->area) {
			r = -ENOMEM;
			break;
		}
		t->iov[0] = (struct iovec){ t->hdr, sizeof(*t->hdr) };
		t->iov[1] = (struct iovec){ t->area + RING_FRONT, payload_sz };
		r = thread_setup(t);
	}
	/* Signals stay with libfuse's workers (fs.c). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; r == 0 && i < R.nthreads; i++) {
		r = -pthread_create(&R.threads[i].tid, NULL, thread_main, &R.threads[i]);
		R.threads[i].started = r == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		fs__ring_stop();
		return r;
	}
	util_log(LOG_INFO, "io_uring: %d queues, %d threads each", queues, RING_THREADS);
	return 0;
}

void fs__ring_go(int go)
{
	if (R.nthreads)
		set_state(go ? RING_GO : RING_STOP);
}

void fs__ring_stop(void)
{
	uint64_t one = 1;
	ssize_t w;
	int i, went;

	if (!R.threads)
		goto fd;
	/* Rings that served (not those a failed fs__ring_prepare undoes). */
	pthread_mutex_lock(&R.lock);
	went = R.state == RING_GO;
	pthread_mutex_unlock(&R.lock);
	set_state(RING_STOP);
	w = write(R.stop_fd, &one, sizeof(one));
	(void)w;
	for (i = 0; i < R.nthreads; i++) {
		struct ring_thread *t = &R.threads[i];

		if (t->started)
			pthread_join(t->tid, NULL);
		if (t->ring_up)
			io_uring_queue_exit(&t->ring);
		if (t->hdr)
			munmap(t->hdr, RING_FRONT);
		if (t->area)
			munmap(t->area, RING_FRONT + R.payload_sz);
	}
	if (went)
		util_log(LOG_INFO, "io_uring: %lu requests served", atomic_load(&R.served));
	free(R.threads);
	R.threads = NULL;
	R.nthreads = 0;
fd:
	if (R.stop_fd >= 0)
		close(R.stop_fd);
	R.stop_fd = -1;
}
