/*
 * git-env.h - the isolated git environment of the git layer's unit tests.
 */
#ifndef PACKETFS_TEST_GIT_ENV_H
#define PACKETFS_TEST_GIT_ENV_H

#include <stdio.h>
#include <stdlib.h>

#include "git.h"
#include "test.h"

/* Makes git (the program and libgit2) see only dir: HOME and
 * XDG_CONFIG_HOME are dir, whose .gitconfig holds a test identity and then
 * extra (git config text, "" for none); no system configuration, no
 * GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE; then repo_global_init. Fails
 * the test on any error. Call from main, before any thread. */
static inline void test_git_env(const char *dir, const char *extra)
{
	char cfg[4200];
	FILE *f;

	snprintf(cfg, sizeof(cfg), "%s/.gitconfig", dir);
	f = fopen(cfg, "w");
	ASSERT(f != NULL);
	fprintf(f, "[user]\n\tname = packetfs test\n\temail = test@packetfs.invalid\n%s", extra);
	ASSERT_EQ(fclose(f), 0);
	setenv("HOME", dir, 1);
	setenv("XDG_CONFIG_HOME", dir, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	ASSERT_EQ(repo_global_init(), 0);
}

#endif
