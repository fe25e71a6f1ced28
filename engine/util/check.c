/*
 * check.c - what the engine's assert()s ask of locks and threads
 * (util.h, "Invariants"): whether the calling thread holds a mutex, and
 * whether it is the thread that owns a resource (the pipeline's libuv
 * loop). Only assert() calls these: a build with NDEBUG never does.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

int util_mutex_held(pthread_mutex_t *m)
{
#ifdef __GLIBC__
	/* glibc records the kernel thread id of the holder of every kind of
	 * mutex in __owner while it is locked (0 when free), for its own
	 * consistency checks; pthread_cond_wait clears and sets it again. */
	return m->__data.__owner == (int)syscall(SYS_gettid);
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
