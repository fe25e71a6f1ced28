/*
 * refs_watch.c - the change count of a repository's refs (refs_watch.h).
 *
 * Why. A view's size is remembered under a stamp of what the view is made
 * of (namespace/view_size.c), and the item's branch head and base are part
 * of it. Looking both up at every stat cost two ref lookups, and a base
 * such as "main" is looked up as git does (libgit2's git_reference_dwim:
 * main, refs/main, refs/tags/main, refs/heads/main), a path walk and an
 * open for each: 18% of the daemon's processor while a sweep stat-ed the
 * views. A count that moves whenever a ref may have changed stands in for
 * the commits: equal counts mean equal refs, so equal commits.
 *
 * How. An inotify instance (inotify(7)) watches the git directory and the
 * common git directory (packed-refs, HEAD and the other one-level refs are
 * their entries) and every directory under refs/ of each, and is read
 * without blocking at each refs_watch_count: any event read, except for
 * lock files (git writes a ref as NAME.lock renamed over NAME: the rename
 * is the event that counts) and the git directory's index, moves the count.
 * A directory made under refs/ is watched as its event is read, and
 * everything below it scanned then, so a ref written into it before the
 * watch existed is read by whatever looks the refs up after this call. An
 * overflow of the event queue, a watched root removed or moved, or refs/
 * made anew set everything up again, and move the count.
 *
 * A path swapped for another gives no event on what is watched (a
 * directory renamed over the repository or one above it, a symbolic link
 * pointed elsewhere, a worktree's .git file rewritten): each count also
 * stats the path, its .git and both git directories, and sets everything
 * up again when one names something else than at the last setup.
 *
 * Why it is exact. The kernel queues an entry's event in the system call
 * that changes the entry, before the call returns (fsnotify), so a change
 * completed before refs_watch_count began is in the queue when it reads
 * it. Whoever took a count and then looked the refs up saw refs at least as
 * new as the count says; a change after the count moves the next one.
 * That holds only for changes made through this kernel, and for files
 * inotify sees: so the refs are not watched (the count is 0) on a file
 * system other than a local one (NFS, a cluster file system or FUSE may be
 * changed by another machine: a worktree shared with Slurm's nodes), nor
 * where a ref or a directory under refs/, packed-refs or a one-level ref
 * is a symbolic link (git follows it, inotify does not). What refs do not
 * decide (a reflog's @{n}, an abbreviated commit id) is the caller's to
 * keep out (repo_rev_is_ref).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>
#include <git2.h>

#include "refs_watch.h"

/* Directories watched at most (an instance's watches count against the
 * user's fs.inotify.max_user_watches); past it the refs are looked up. */
#define REFS_WATCH_MAX 4096
/* Nanoseconds to the first try to set the watches up again after a
 * failure; doubled at each failure after it, up to REFS_RETRY_MAX_NS. */
#define REFS_RETRY_NS 1000000000LL
#define REFS_RETRY_MAX_NS 64000000000LL
/* The paths whose identity is checked at each count (struct ident). */
#define IDENT_PATHS 4

#define DIR_EVENTS (IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | \
		    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

enum dir_kind { DIR_GIT, DIR_REFS };

struct watched {
	int wd;
	enum dir_kind kind;
	char *path;
};

/* What a path named when the watches were set up: a path swapped for
 * another (a directory renamed over it, a symlink pointed elsewhere, a
 * worktree's .git file rewritten) gives no event on what is watched. */
struct ident {
	char path[PATH_MAX];
	int exists;
	int repeated; /* the path of an earlier one (a repository's .git is its git
		       * directory and its common one): not stat-ed again */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
};

struct refs_watch {
	char *path;
	int fd;                /* the inotify instance; -1: none */
	struct watched *dirs;
	size_t n, cap;
	uint64_t count;
	int rebuild;           /* set everything up again before answering */
	int64_t retry_ns;      /* after a failure: no try before this time */
	int64_t backoff_ns;    /* the wait after the next failure */
	struct ident ident[IDENT_PATHS]; /* the path, its .git, the git dirs */
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void drop_all(struct refs_watch *w)
{
	size_t i;

	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	for (i = 0; i < w->n; i++)
		free(w->dirs[i].path);
	w->n = 0;
}

static struct watched *find_wd(struct refs_watch *w, int wd)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->dirs[i].wd == wd)
			return &w->dirs[i];
	return NULL;
}

/* Watches the directory path (a watch it has already is kept). 0, or -1
 * when it cannot (ENOENT: no such directory, which is not an error of the
 * watch: *missing is set). */
static int watch_dir(struct refs_watch *w, const char *path, enum dir_kind kind, int *missing)
{
	struct watched *grown;
	int wd;

	*missing = 0;
	wd = inotify_add_watch(w->fd, path, DIR_EVENTS);
	if (wd < 0) {
		*missing = errno == ENOENT || errno == ENOTDIR;
		return -1;
	}
	if (find_wd(w, wd))
		return 0;
	if (w->n == REFS_WATCH_MAX)
		return -1;
	if (w->n == w->cap) {
		grown = realloc(w->dirs, (w->cap ? 2 * w->cap : 16) * sizeof(*grown));
		if (!grown)
			return -1;
		w->dirs = grown;
		w->cap = w->cap ? 2 * w->cap : 16;
	}
	w->dirs[w->n].path = strdup(path);
	if (!w->dirs[w->n].path)
		return -1;
	w->dirs[w->n].wd = wd;
	w->dirs[w->n].kind = kind;
	w->n++;
	return 0;
}

/* Watches the refs directory path and every directory below it. 0 (also
 * when path does not exist) or -1 (also for a symbolic link below it). */
static int watch_tree(struct refs_watch *w, const char *path)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int missing, rc = 0;
	DIR *d;

	if (watch_dir(w, path, DIR_REFS, &missing) < 0)
		return missing ? 0 : -1;
	d = opendir(path);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= (int)sizeof(sub))
			continue; /* no ref has so long a name (PATH_MAX) */
		if (de->d_type == DT_UNKNOWN && lstat(sub, &st) == 0)
			de->d_type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		/* git follows a symbolic link under refs/, inotify does not:
		 * such refs cannot be watched. */
		if (de->d_type == DT_LNK)
			rc = -1;
		else if (de->d_type == DT_DIR)
			rc = watch_tree(w, sub);
	}
	closedir(d);
	return rc;
}

/* dir of the repository with its trailing slashes dropped, into out. */
static int dir_copy(char out[PATH_MAX], const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 0 || n >= PATH_MAX)
		return -1;
	memcpy(out, dir, n);
	out[n] = '\0';
	return 0;
}

static void ident_take(struct ident *id, const char *path)
{
	struct stat st;

	snprintf(id->path, sizeof(id->path), "%s", path);
	id->repeated = 0;
	id->exists = stat(path, &st) == 0;
	if (id->exists) {
		id->dev = st.st_dev;
		id->ino = st.st_ino;
		id->mtime = st.st_mtim;
		id->size = st.st_size;
	}
}

/* Whether the path still names what it named (for a directory: the same
 * one; for a file such as a worktree's .git: the same content as far as
 * its time and size tell). */
static int ident_same(const struct ident *id)
{
	struct stat st;
	int exists = stat(id->path, &st) == 0;

	if (exists != id->exists)
		return 0;
	if (!exists)
		return 1;
	return st.st_dev == id->dev && st.st_ino == id->ino &&
	       (S_ISDIR(st.st_mode) || (st.st_mtim.tv_sec == id->mtime.tv_sec &&
					st.st_mtim.tv_nsec == id->mtime.tv_nsec &&
					st.st_size == id->size));
}

/* Whether changes to dir can only be made through this kernel, which
 * inotify requires: a local file system. A network or cluster file
 * system (NFS, CIFS, Lustre, Ceph, FUSE: a worktree shared with Slurm's
 * nodes) changed elsewhere gives no event here. */
static int local_fs(const char *dir)
{
	struct statfs fs;

	if (statfs(dir, &fs) != 0)
		return 0;
	switch ((unsigned long)fs.f_type) {
	case EXT4_SUPER_MAGIC: /* also ext2 and ext3 */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
		return 1;
	default:
		return 0;
	}
}

/* Whether a one-level ref name or packed-refs of the git directory dir
 * (the names git_reference_dwim reads there: capitals and underscores) is
 * a symbolic link, which git follows and inotify would not. */
static int git_dir_links(const char *dir)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	const char *c;
	int found = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 1;
	while (!found && (de = readdir(d)) != NULL) {
		for (c = de->d_name; *c && ((*c >= 'A' && *c <= 'Z') || *c == '_'); c++)
			;
		if (*c && strcmp(de->d_name, "packed-refs") != 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) < (int)sizeof(sub) &&
		    lstat(sub, &st) == 0 && S_ISLNK(st.st_mode))
			found = 1;
	}
	closedir(d);
	return found;
}

/* Sets every watch up anew (the count moves). 0 or -1 (nothing watched). */
static int build(struct refs_watch *w)
{
	char gitdir[PATH_MAX], common[PATH_MAX], refs[PATH_MAX + 8];
	git_repository *repo = NULL;
	int rc = -1, missing, i, j;

	drop_all(w);
	w->count++;
	w->rebuild = 0;
	if (git_repository_open(&repo, w->path) < 0)
		goto out;
	if (dir_copy(gitdir, git_repository_path(repo)) < 0 ||
	    dir_copy(common, git_repository_commondir(repo)) < 0)
		goto out;
	if (!local_fs(gitdir) || !local_fs(common) || git_dir_links(gitdir) ||
	    git_dir_links(common))
		goto out;
	snprintf(refs, sizeof(refs), "%s/.git", w->path);
	ident_take(&w->ident[0], w->path);
	ident_take(&w->ident[1], refs);
	ident_take(&w->ident[2], gitdir);
	ident_take(&w->ident[3], common);
	for (i = 1; i < IDENT_PATHS; i++)
		for (j = 0; j < i; j++)
			if (strcmp(w->ident[i].path, w->ident[j].path) == 0)
				w->ident[i].repeated = 1;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		goto out;
	if (watch_dir(w, gitdir, DIR_GIT, &missing) < 0)
		goto out;
	snprintf(refs, sizeof(refs), "%s/refs", gitdir);
	if (watch_tree(w, refs) < 0)
		goto out;
	if (strcmp(gitdir, common) != 0) {
		if (watch_dir(w, common, DIR_GIT, &missing) < 0)
			goto out;
		snprintf(refs, sizeof(refs), "%s/refs", common);
		if (watch_tree(w, refs) < 0)
			goto out;
	}
	rc = 0;
out:
	git_repository_free(repo);
	if (rc < 0) {
		drop_all(w);
		w->backoff_ns = w->backoff_ns ? w->backoff_ns : REFS_RETRY_NS;
		w->retry_ns = mono_ns() + w->backoff_ns;
		if (w->backoff_ns < REFS_RETRY_MAX_NS)
			w->backoff_ns *= 2;
	} else {
		w->backoff_ns = 0;
	}
	return rc;
}

static int is_link(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static int is_lock(const char *name)
{
	size_t n = strlen(name);

	return n >= 5 && strcmp(name + n - 5, ".lock") == 0;
}

/* Reads every event queued; sets *changed when one may be a ref's. */
static void drain(struct refs_watch *w, int *changed)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	char sub[PATH_MAX];
	struct watched *dir;
	ssize_t len;
	char *p;

	for (;;) {
		len = read(w->fd, buf, sizeof(buf));
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			break;
		for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW) {
				*changed = 1;
				w->rebuild = 1;
				continue;
			}
			dir = find_wd(w, ev->wd);
			if (!dir || (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))) {
				/* A directory gone or moved: its path is no longer
				 * known, so every path is looked at again. */
				*changed = 1;
				w->rebuild = 1;
				continue;
			}
			if (ev->len == 0 || is_lock(ev->name))
				continue;
			if (dir->kind == DIR_GIT && strcmp(ev->name, "index") == 0)
				continue;
			*changed = 1;
			if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
				if (snprintf(sub, sizeof(sub), "%s/%s", dir->path, ev->name) >=
				    (int)sizeof(sub) || is_link(sub))
					w->rebuild = 1; /* which then finds the link */
			}
			if (dir->kind == DIR_GIT && strcmp(ev->name, "refs") == 0) {
				w->rebuild = 1;
			} else if (dir->kind == DIR_REFS && (ev->mask & IN_ISDIR) &&
				   (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
				if (snprintf(sub, sizeof(sub), "%s/%s", dir->path, ev->name) >=
				    (int)sizeof(sub) || watch_tree(w, sub) < 0)
					w->rebuild = 1;
			}
		}
	}
	/* EAGAIN: the queue is empty. Anything else: set up again. */
	if (len == 0 || errno != EAGAIN)
		w->rebuild = 1;
}

int refs_watch_open(const char *path, struct refs_watch **out)
{
	struct refs_watch *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->path = strdup(path);
	if (!w->path) {
		free(w);
		return -ENOMEM;
	}
	w->fd = -1;
	w->rebuild = 1;
	*out = w;
	return 0;
}

uint64_t refs_watch_count(struct refs_watch *w)
{
	int changed = 0;

	int i;

	if (w->fd >= 0) {
		drain(w, &changed);
		for (i = 0; i < IDENT_PATHS && !w->rebuild; i++)
			if (!w->ident[i].repeated && !ident_same(&w->ident[i]))
				w->rebuild = 1;
	}
	if (changed)
		w->count++;
	if (w->rebuild || w->fd < 0) {
		if (w->fd < 0 && !w->rebuild && mono_ns() < w->retry_ns)
			return 0;
		if (build(w) < 0)
			return 0;
	}
	return w->count;
}

const char *refs_watch_path(const struct refs_watch *w)
{
	return w->path;
}

void refs_watch_close(struct refs_watch *w)
{
	if (!w)
		return;
	drop_all(w);
	free(w->dirs);
	free(w->path);
	free(w);
}
