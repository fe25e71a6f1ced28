/*
 * engine-harness.h - an offline engine on a new store, for the unit tests
 * of the namespace that go through engine_file_*: a git repository with
 * one commit, a store made for it, the engine open on it, and the item
 * fix-1 (engine-harness.c).
 */
#ifndef PFS_TEST_ENGINE_HARNESS_H
#define PFS_TEST_ENGINE_HARNESS_H

struct engine;
struct pfs_caller;

/* Makes all of that under dir, a mkdtemp(3) template that is changed in
 * place (remove it with test_rmtree after engine_close). *eng gets the
 * engine, *who this process's uid and gid as the caller. Fails the test
 * (exit 1) on any error. Main thread, once. */
void harness_engine_open(char *dir, struct engine **eng, struct pfs_caller *who);

#endif
