/*
 * fs_io.c - the session's reads and writes of /dev/fuse, through
 * fuse_session_custom_io (libfuse 3.14), for what libfuse 3.14 cannot
 * negotiate or pass on: FUSE_HANDLE_KILLPRIV_V2 (fs_int.h: fs__io_install,
 * fs__io_killpriv, fs__io_kill_suidgid, fs__io_note_request) and FUSE over
 * io_uring (the INIT reply asks for it; fs_ring.c serves the rings, and
 * the replies to their requests are handed to it here).
 *
 * Why. A FUSE mount clears SB_NOSEC, so before every write(2) the kernel
 * asks the file system for the file's security.capability attribute (a
 * GETXATTR round trip per write: one request in six of a `>>`, one in
 * seven of a create) unless the file system takes over clearing the
 * set-user-ID and set-group-ID bits itself (FUSE_HANDLE_KILLPRIV_V2, FUSE
 * protocol 7.33, linux/fuse.h). Then the kernel marks the superblock
 * SB_NOSEC, stops asking, and instead flags each write, truncate and
 * O_TRUNC open that must clear the bits (FUSE_WRITE_KILL_SUIDGID,
 * FATTR_KILL_SUIDGID, FUSE_OPEN_KILL_SUIDGID: set when the caller lacks
 * CAP_FSETID), and leaves a chown's clearing to the file system too.
 * libfuse 3.14 neither asks for the capability nor passes those flags to
 * the handlers, so the INIT reply is amended here when the kernel offers
 * the capability, and each request's flag is read here from the raw
 * request. packetfs keeps no security.* attribute (packet_xattr.c), so
 * there is no capability to remove: the bits are all there is.
 *
 * Threads. libfuse's worker thread that reads a request processes it
 * (fuse_session_loop_mt: receive, then process, on one thread), so the
 * flag of the request a handler serves is a thread-local set by the read
 * that brought it (or by the ring thread that serves it: fs_ring.c). The
 * INIT exchange happens once, before any other request; its unique id and
 * the kernel's flags are kept for the reply.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>
#include <syslog.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs_int.h"

/* FUSE_OVER_IO_URING (1ULL << 41 of the INIT flags, linux/fuse.h 7.42,
 * Linux 6.14), as a bit of flags2. Debian 12's headers predate it. */
#define FS_OVER_IO_URING_FLAGS2 (1u << 9)

/* The INIT request's unique id (0: none pending) and the flags the kernel
 * offered in it; written by the read of INIT, read by its reply's write,
 * both on the one thread that serves INIT before any other request. */
static uint64_t init_unique;
static uint32_t init_flags, init_flags2;
/* The session, and whether its rings were asked for (-o io_uring). */
static struct fuse_session *session;
static int ring_wanted;
/* Whether FUSE_HANDLE_KILLPRIV_V2 was agreed for the session. */
static atomic_int killpriv;
/* The flag of the request this thread serves: set by each read. */
static __thread int kill_suidgid;

/* The kernel's wish that the request at buf (n bytes read from /dev/fuse)
 * clear the set-user-ID and set-group-ID bits: 1 or 0. */
static int wants_kill(const void *buf, size_t n)
{
	const struct fuse_in_header *h = buf;
	const void *arg = h + 1;
	size_t left = n - sizeof(*h);

	switch (h->opcode) {
	case FUSE_WRITE:
		return left >= sizeof(struct fuse_write_in) &&
		       (((const struct fuse_write_in *)arg)->write_flags & FUSE_WRITE_KILL_SUIDGID);
	case FUSE_SETATTR:
		return left >= sizeof(struct fuse_setattr_in) &&
		       (((const struct fuse_setattr_in *)arg)->valid & FATTR_KILL_SUIDGID);
	case FUSE_OPEN:
		return left >= sizeof(struct fuse_open_in) &&
		       (((const struct fuse_open_in *)arg)->open_flags & FUSE_OPEN_KILL_SUIDGID);
	default:
		return 0;
	}
}

void fs__io_note_request(const void *buf, size_t n)
{
	const struct fuse_in_header *h = buf;
	const struct fuse_init_in *init = (const void *)(h + 1);

	kill_suidgid = 0;
	if (n < sizeof(*h))
		return;
	/* Kernels before 5.17 send the first 16 bytes of struct fuse_init_in. */
	if (h->opcode == FUSE_INIT &&
	    n >= sizeof(*h) + offsetof(struct fuse_init_in, flags) + sizeof(uint32_t)) {
		init_flags = init->flags;
		init_flags2 = 0;
		if ((init_flags & FUSE_INIT_EXT) &&
		    n >= sizeof(*h) + offsetof(struct fuse_init_in, flags2) + sizeof(uint32_t))
			init_flags2 = init->flags2;
		init_unique = h->unique;
	} else if (atomic_load_explicit(&killpriv, memory_order_relaxed)) {
		kill_suidgid = wants_kill(buf, n);
	}
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);

	(void)userdata;
	fs__io_note_request(buf, n > 0 ? (size_t)n : 0);
	return n;
}

/* The payload buffer a ring entry needs (the kernel refuses smaller ones):
 * the largest of FUSE_MIN_READ_BUFFER, max_write and max_pages pages, from
 * the INIT reply arg. */
static size_t ring_payload(const struct fuse_init_out *arg)
{
	size_t n = FUSE_MIN_READ_BUFFER, page = (size_t)sysconf(_SC_PAGESIZE);

	if (arg->max_write > n)
		n = arg->max_write;
	if ((arg->flags & FUSE_MAX_PAGES) && (size_t)arg->max_pages * page > n)
		n = (size_t)arg->max_pages * page;
	return n;
}

/* Asks for FUSE over io_uring in the INIT reply arg when the kernel
 * offered it and the rings could be made: 1 then, else 0 (logged). */
static int ring_ask(struct fuse_init_out *arg)
{
	int r;

	if (!(init_flags2 & FS_OVER_IO_URING_FLAGS2)) {
		util_log(LOG_WARNING, "mount: io_uring: the kernel does not offer it (Linux 6.14 or "
			 "later, with /sys/module/fuse/parameters/enable_uring set): the session "
			 "stays on /dev/fuse");
		return 0;
	}
	r = fs__ring_prepare(session, ring_payload(arg));
	if (r < 0) {
		util_log(LOG_WARNING, "mount: io_uring: %s: the session stays on /dev/fuse",
			 strerror(-r));
		return 0;
	}
	arg->flags2 |= FS_OVER_IO_URING_FLAGS2;
	return 1;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	ssize_t n;
	int r, ring = 0;

	(void)userdata;
	if (fs__ring_reply(iov, count)) {
		for (n = 0, r = 0; r < count; r++)
			n += (ssize_t)iov[r].iov_len;
		return n;
	}
	/* The INIT reply: a header, then struct fuse_init_out (libfuse sends
	 * them as two pieces). */
	if (init_unique && count >= 2 && iov[0].iov_len >= sizeof(struct fuse_out_header) &&
	    iov[1].iov_len >= offsetof(struct fuse_init_out, max_background)) {
		const struct fuse_out_header *o = iov[0].iov_base;
		struct fuse_init_out *arg = iov[1].iov_base;

		if (o->unique == init_unique) {
			init_unique = 0;
			if (o->error == 0 && (init_flags & FUSE_HANDLE_KILLPRIV_V2)) {
				arg->flags |= FUSE_HANDLE_KILLPRIV_V2;
				atomic_store(&killpriv, 1);
			}
			if (o->error == 0 && ring_wanted && (arg->flags & FUSE_INIT_EXT) &&
			    iov[1].iov_len >= offsetof(struct fuse_init_out, flags2) + sizeof(uint32_t))
				ring = ring_ask(arg);
		}
	}
	n = writev(fd, iov, count);
	/* The kernel has taken the INIT reply: the rings may register now. */
	if (ring)
		fs__ring_go(n >= 0);
	return n;
}

int fs__io_install(struct fuse_session *se, int ring)
{
	static const struct fuse_custom_io io = { .writev = io_writev, .read = io_read };

	session = se;
	ring_wanted = ring;
	return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}

int fs__io_killpriv(void)
{
	return atomic_load(&killpriv);
}

int fs__io_kill_suidgid(void)
{
	return kill_suidgid;
}
