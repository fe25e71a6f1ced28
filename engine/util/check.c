/*
 * check.c - what the engine's assert()s ask of locks and threads
 * (util.h, "Invariants"): whether the calling thread holds a mutex, and
 * whether it is the thread that owns a resource (the pipeline's libuv
 * loop). Only assert() calls these: a build with NDEBUG never does.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "util.h"

#ifdef __GLIBC__
/* The calling thread's kernel thread id, kept so that an assert costs no
 * system call; 0 until asked, and again in the child after a fork (whose
 * one thread has a new id). */
static __thread pid_t self_tid;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void tid_forget(void)
{
	self_tid = 0;
}

static void atfork_init(void)
{
	pthread_atfork(NULL, NULL, tid_forget);
}
#endif

int util_mutex_held(pthread_mutex_t *m)
{
#ifdef __GLIBC__
	/* glibc records the kernel thread id of the holder of every kind of
	 * mutex in __owner while it is locked (0 when free), for its own
	 * consistency checks; pthread_cond_wait clears and sets it again. */
	if (self_tid == 0) {
		pthread_once(&atfork_once, atfork_init);
		self_tid = (pid_t)syscall(SYS_gettid);
	}
	return m->__data.__owner == self_tid;
#else
	/* Elsewhere the weaker question: does some thread hold m. */
	if (pthread_mutex_trylock(m) != 0)
		return 1;
	pthread_mutex_unlock(m);
	return 0;
#endif
}

void util_owner_enter(struct util_owner *o)
{
	o->thread = pthread_self();
	__atomic_store_n(&o->live, 1, __ATOMIC_RELEASE);
}

void util_owner_leave(struct util_owner *o)
{
	__atomic_store_n(&o->live, 0, __ATOMIC_RELEASE);
}

int util_owner_is_self(const struct util_owner *o)
{
	return __atomic_load_n(&o->live, __ATOMIC_ACQUIRE) && pthread_equal(o->thread, pthread_self());
}

int util_owner_here(const struct util_owner *o)
{
	return !__atomic_load_n(&o->live, __ATOMIC_ACQUIRE) || pthread_equal(o->thread, pthread_self());
}
