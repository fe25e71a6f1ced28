/*
 * pipe_junit.c - the directory of a recipe run's $PACKET_JUNIT, on the
 * loop thread.
 *
 * Each recipe run gets $PACKET_JUNIT: junit.xml in a directory of its own
 * (mode 0700, empty), <base>/junit/<run id>, made before the run and
 * removed with what is in it once the run is recorded; base is the store,
 * or the Slurm shared directory for the slurm executor (the job's node
 * writes it). The path follows from the run, so a restarted daemon that
 * follows a Slurm job again finds the file.
 *
 * Design: reuse. A directory made and removed for each run made ext4's
 * inode allocator step over every inode deleted in the last seconds, a
 * sixth of the loop thread's time at 1,000 recipes (W6 of tests/bench). So
 * a local run's directory that is empty when its run ends, of mode 0700
 * and ours (no run_as), is not removed but renamed into a spare,
 * <store>/junit-spare/<k> (at most JUNIT_SPARES), and the next run's
 * directory is a spare renamed into place and found again empty, 0700 and
 * ours; anything else is removed and made afresh as before. Either way the
 * run's path is its own and gone once the run is recorded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipe_int.h"

#define JUNIT_SPARES 64 /* empty directories kept for the next runs */

/* The directory of job j's JUnit file (see the top of this file): 0 or
 * -ENAMETOOLONG. */
static int junit_dir(struct pipe *p, const struct job *j, char *out, size_t size)
{
	char base[PATH_MAX];

	if (strcmp(j->run.executor, "slurm") == 0)
		pipe__slurm_dir(p, base, sizeof(base));
	else
		snprintf(base, sizeof(base), "%s", p->pl->store_dir);
	if ((size_t)snprintf(out, size, "%s/junit/%lld", base, (long long)j->run.id) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Spare k: <store>/junit-spare/<k>. */
static void spare_path(struct pipe *p, int k, char *out, size_t size)
{
	snprintf(out, size, "%s/junit-spare/%d", p->pl->store_dir, k);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* rm -rf dir, on its file system only, never following a link. */
static void remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* Whether dir is a directory (not a link) of this process's user, mode
 * 0700, with nothing in it: what mkdir(dir, 0700) makes. */
static int fresh_dir(const char *dir)
{
	struct dirent *de;
	struct stat st;
	int fd, fresh;
	DIR *d;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || (st.st_mode & 07777) != 0700 || st.st_uid != geteuid()) {
		close(fd);
		return 0;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	fresh = 1;
	while (fresh && (de = readdir(d)))
		fresh = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return fresh;
}

/* Puts the last spare at dir, found fresh: 0, or -1 (none, or not fresh:
 * then nothing is at dir that was not there). */
static int take_spare(struct pipe *p, const char *dir)
{
	char spare[PATH_MAX];

	if (p->junit_spares <= 0)
		return -1;
	spare_path(p, --p->junit_spares, spare, sizeof(spare));
	if (rename(spare, dir) < 0) {
		remove_tree(spare);
		return -1;
	}
	if (fresh_dir(dir))
		return 0;
	remove_tree(dir);
	return -1;
}

/* Keeps dir, a run's directory found fresh, as a spare: 0 or -1. */
static int keep_spare(struct pipe *p, const char *dir)
{
	char spare[PATH_MAX], *slash;
	int tries;

	if (p->junit_spares >= JUNIT_SPARES || !fresh_dir(dir))
		return -1;
	spare_path(p, p->junit_spares, spare, sizeof(spare));
	for (tries = 0; tries < 2; tries++) {
		if (rename(dir, spare) == 0) {
			p->junit_spares++;
			return 0;
		}
		if (errno == ENOENT) { /* junit-spare/ is not there yet */
			slash = strrchr(spare, '/');
			*slash = '\0';
			if (util_mkdirs(spare, 0700))
				return -1;
			*slash = '/';
		} else if (errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR) {
			remove_tree(spare); /* an earlier daemon's */
		} else {
			return -1;
		}
	}
	return -1;
}

/* The run's directory dir goes to the run_as user (SPEC §5), whose run
 * writes its JUnit file there. 0 or a negative errno. */
static int give_to_run_as(struct pipe *p, const char *dir)
{
	const char *name = pipeline_config_get(p->pl)->run_as;
	struct runner_user *u = NULL;
	int rc;

	if (!name)
		return 0;
	rc = runner_user_lookup(name, &u);
	if (rc == 0 && chown(dir, u->uid, u->gid) < 0)
		rc = -errno;
	runner_user_free(u);
	return rc;
}

int pipe__junit_open(struct pipe *p, struct job *j, int create)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], *slash;
	int rc;

	rc = junit_dir(p, j, dir, sizeof(dir));
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	if (create && (strcmp(j->run.executor, "slurm") == 0 || take_spare(p, dir) < 0) &&
	    mkdir(dir, 0700) < 0) {
		/* A run of the same id in a store made again left it, or
		 * junit/ is not there yet. */
		remove_tree(dir);
		slash = strrchr(dir, '/');
		*slash = '\0';
		rc = util_mkdirs(dir, 0755);
		*slash = '/';
		if (rc)
			return rc;
		if (mkdir(dir, 0700) < 0)
			return -errno;
	}
	if (create) {
		rc = give_to_run_as(p, dir);
		if (rc)
			return rc;
	}
	free(j->junit_path);
	j->junit_path = strdup(path);
	return j->junit_path ? 0 : -ENOMEM;
}

void pipe__junit_close(struct job *j)
{
	char *slash;

	if (!j->junit_path)
		return;
	/* Mostly the file alone, or nothing: the tree walk only for more. */
	unlink(j->junit_path);
	slash = strrchr(j->junit_path, '/');
	*slash = '\0';
	if ((!j->p || strcmp(j->run.executor, "slurm") == 0 ||
	     keep_spare(j->p, j->junit_path) < 0) &&
	    rmdir(j->junit_path) < 0 && errno != ENOENT)
		remove_tree(j->junit_path);
	free(j->junit_path);
	j->junit_path = NULL;
}
