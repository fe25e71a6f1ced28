/*
 * cli_carry.c - `packetfs export` (copies an item out as plain files) and
 * `import` (makes an item of an export). export opens the store read-only,
 * so it also works while the store is mounted; import opens it read-write,
 * which the engine refuses (EBUSY) while it is mounted.
 *
 * What packetfs generates does not travel: export leaves out the worktree
 * link and .history, import skips the paths of generated[]. The names of
 * one file (hard links) travel as hard links both ways. The item's
 * evidence and history of work travel as its carry (engine.h,
 * engine_carry_*): export adds its logs, registry, branch bundle and
 * manifest; import checks all of it before it stores anything, then makes
 * the item at the carried head, restores them, copies the documents and
 * reads the verdict and assessment. Both are all or nothing: an export is
 * written into a temporary sibling of DIR and renamed into place when
 * whole (export_begin), and import takes nothing but a whole export (a
 * folder of files without the manifest, or with a missing or empty bundle
 * or hashes that do not match, is refused, naming which).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"

/* --- hard links ---------------------------------------------------------- */

/* The names export and import have made so far of files with several
 * names (hard links), one string "KEY\tPATH" each, KEY naming the file
 * (the engine's file_id; a local st_dev:st_ino), PATH its first name. */

/* The first name recorded for key, or NULL. */
static const char *links_find(char **seen, const char *key)
{
	size_t kl = strlen(key);

	for (; seen && *seen; seen++)
		if (strncmp(*seen, key, kl) == 0 && (*seen)[kl] == '\t')
			return *seen + kl + 1;
	return NULL;
}

/* Records path as the first name of key. 0 or -ENOMEM. */
static int links_add(char ***seen, const char *key, const char *path)
{
	char *entry;
	int r;

	if (asprintf(&entry, "%s\t%s", key, path) < 0)
		return -ENOMEM;
	r = strv_push(seen, entry);
	free(entry);
	return r;
}

/* --- export ------------------------------------------------------------- */

static int collect_all(void *arg, const char *name, const struct pfs_stat *st)
{
	char *entry;
	int r;

	/* One string per entry: a type letter ('d', 'f' or another: a symlink,
	 * FIFO, socket or device), then the name. */
	if (asprintf(&entry, "%c%s", S_ISDIR(st->mode) ? 'd' : S_ISREG(st->mode) ? 'f' : 'n',
		     name) < 0)
		return 1;
	r = strv_push(arg, entry);
	free(entry);
	return r < 0;
}

/* Copies the engine file at path to the local file dst. */
static int export_file(struct engine *e, const char *path, const char *dst)
{
	struct buf b = { NULL, 0, 0 };
	struct pfs_stat st;
	int r = engine_getattr(e, path, &st);

	if (r == 0)
		r = cli_engine_read_all(e, path, &b);
	if (r == 0)
		r = cli_write_file(dst, b.data ? b.data : "", b.len, (st.mode & 0777) | 0600);
	buf_free(&b);
	return r;
}

/* Makes at the local dst what the engine entry path is when it is no
 * document: the same symlink, or a FIFO, socket or device of the same
 * mode (and number). 0, a negative errno, or 1 when it was skipped (a
 * device, for a user who may not make one; said on stderr). */
static int export_node(struct engine *e, const char *path, const char *dst)
{
	char target[PATH_MAX];
	struct pfs_stat st;
	int r = engine_getattr(e, path, &st);

	if (r < 0)
		return r;
	if (S_ISLNK(st.mode)) {
		r = engine_readlink(e, path, target, sizeof(target));
		if (r == 0 && symlink(target, dst) < 0)
			r = -errno;
		return r;
	}
	if (mknod(dst, st.mode & (S_IFMT | 0777), (dev_t)st.rdev) == 0)
		return 0;
	if (errno == EPERM && (S_ISCHR(st.mode) || S_ISBLK(st.mode))) {
		fprintf(stderr, "packetfs: export: %s: skipped (a device node, which root alone "
				"makes)\n", path);
		return 1;
	}
	return -errno;
}

/* When the engine entry path is one of several names of a file and an
 * earlier one was exported, makes the local dst a hard link to it: 1.
 * Else 0 (the first name is recorded in seen), or a negative errno. */
static int export_link(struct engine *e, const char *path, const char *dst, char ***seen)
{
	char key[32];
	const char *first;
	struct pfs_stat st;
	int r = engine_getattr(e, path, &st);

	if (r < 0 || st.file_id == 0 || st.nlink < 2)
		return r;
	snprintf(key, sizeof(key), "%llu", (unsigned long long)st.file_id);
	first = links_find(*seen, key);
	if (first == NULL)
		return links_add(seen, key, dst);
	return link(first, dst) < 0 ? -errno : 1;
}

/* Copies the engine directory src (a packet path) into the local dst,
 * recursively; depth 0 is the item itself, whose .history is left out.
 * The names of one file are exported as hard links (seen: links_add). */
static int export_dir(struct engine *e, const char *src, const char *dst, int depth,
		      char ***seen)
{
	char **entries = NULL;
	size_t i;
	int r = engine_readdir(e, src, collect_all, &entries);

	if (r > 0)
		r = -ENOMEM;
	if (r < 0)
		return cli_fail("export", "%s: %s", src, strerror(-r));
	r = util_mkdirs(dst, 0777);
	if (r < 0) {
		strv_free(entries);
		return cli_fail("export", "%s: %s", dst, strerror(-r));
	}
	for (i = 0; entries && entries[i] && r == 0; i++) {
		const char *name = entries[i] + 1;
		char *from = NULL, *to = NULL;

		if (depth == 0 && (strcmp(name, ".history") == 0 || strcmp(name, "worktree") == 0))
			continue;
		if (asprintf(&from, "%s/%s", src, name) < 0 ||
		    asprintf(&to, "%s/%s", dst, name) < 0) {
			free(from);
			strv_free(entries);
			return cli_fail("export", "%s", strerror(ENOMEM));
		}
		if (entries[i][0] == 'd') {
			r = export_dir(e, from, to, depth + 1, seen);
		} else {
			r = export_link(e, from, to, seen);
			if (r == 0)
				r = entries[i][0] == 'f' ? export_file(e, from, to)
							 : export_node(e, from, to);
			if (r > 0)
				r = 0;
			if (r < 0)
				r = cli_fail("export", "%s: %s", from, strerror(-r));
		}
		free(from);
		free(to);
	}
	strv_free(entries);
	return r;
}

/*
 * An export is all or nothing: it is written into a temporary sibling of
 * DIR (".NAME.export-XXXXXX" in DIR's parent, on the same file system)
 * and renamed to DIR once whole, the manifest written last; after a
 * failure the temporary directory is removed, with the parents the export
 * made. DIR must not exist, or be an empty directory (which rename(2)
 * replaces; it keeps its permission bits): an export never mixes its files
 * with others. (A kill -9 in between leaves the temporary directory,
 * never DIR half written.)
 */
struct export_dest {
	char *dir;    /* DIR, without trailing slashes */
	char *parent; /* its parent directory */
	char *made;   /* the topmost parent the export made, or NULL */
	char *tmp;    /* the temporary sibling being written */
	mode_t mode;  /* DIR's permission bits */
};

static void export_dest_free(struct export_dest *d)
{
	free(d->dir);
	free(d->parent);
	free(d->made);
	free(d->tmp);
}

/* Removes what a failed export made: the temporary directory, and the
 * parents it made (only while they are empty). */
static void export_abandon(struct export_dest *d)
{
	char *p, *slash;

	if (d->tmp)
		util_remove_tree(d->tmp);
	if (!d->made || !(p = strdup(d->parent)))
		return;
	while (rmdir(p) == 0 && strcmp(p, d->made) != 0 && (slash = strrchr(p, '/')) && slash != p)
		*slash = '\0';
	free(p);
}

/* Checks DIR (dir) and makes its temporary sibling (d->tmp). 0, or 1
 * after saying why on stderr. */
static int export_begin(const char *dir, struct export_dest *d)
{
	const char *base;
	struct stat st;
	size_t len = strlen(dir);
	mode_t um = umask(0);
	char *slash;
	int r;

	umask(um);
	memset(d, 0, sizeof(*d));
	d->mode = 0777 & ~um;
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!(d->dir = strndup(dir, len)))
		return cli_fail("export", "%s", strerror(ENOMEM));
	if (lstat(d->dir, &st) == 0) {
		DIR *dd;
		struct dirent *de;
		int empty = 1;

		if (!S_ISDIR(st.st_mode))
			return cli_fail("export", "%s: exists and is not a directory", dir);
		if (!(dd = opendir(d->dir)))
			return cli_fail("export", "%s: %s", dir, strerror(errno));
		while (empty && (de = readdir(dd)))
			empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
		closedir(dd);
		if (!empty)
			return cli_fail("export", "%s: exists and is not empty (an export goes into a "
					"new or empty directory)", dir);
		d->mode = st.st_mode & 07777;
	} else if (errno != ENOENT) {
		return cli_fail("export", "%s: %s", dir, strerror(errno));
	}
	slash = strrchr(d->dir, '/');
	if (slash == NULL)
		d->parent = strdup(".");
	else
		d->parent = slash == d->dir ? strdup("/") : strndup(d->dir, (size_t)(slash - d->dir));
	base = slash ? slash + 1 : d->dir;
	if (!d->parent || base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return cli_fail("export", "%s: %s", dir, d->parent ? "not a directory name to make"
								      : strerror(ENOMEM));
	/* The parents DIR lacks: made now, removed again after a failure. */
	if (stat(d->parent, &st) < 0 && errno == ENOENT) {
		char *top = strdup(d->parent), *cut;

		while (top && (cut = strrchr(top, '/')) && cut != top) {
			*cut = '\0';
			if (stat(top, &st) == 0) {
				*cut = '/';
				break;
			}
		}
		d->made = top;
		r = util_mkdirs(d->parent, 0777);
		if (r < 0)
			return cli_fail("export", "%s: %s", d->parent, strerror(-r));
	}
	if (asprintf(&d->tmp, "%s/.%s.export-XXXXXX", d->parent, base) < 0) {
		d->tmp = NULL;
		return cli_fail("export", "%s", strerror(ENOMEM));
	}
	if (!mkdtemp(d->tmp)) {
		r = errno;
		free(d->tmp);
		d->tmp = NULL;
		return cli_fail("export", "%s: %s", d->parent, strerror(r));
	}
	return 0;
}

/* Puts the whole export in place: the temporary directory becomes DIR.
 * 0, or 1 after saying why. */
static int export_commit(struct export_dest *d)
{
	int fd;

	if (chmod(d->tmp, d->mode) < 0)
		return cli_fail("export", "%s: %s", d->tmp, strerror(errno));
	if (rename(d->tmp, d->dir) < 0)
		return cli_fail("export", "%s: %s", d->dir,
				errno == ENOTEMPTY || errno == EEXIST
					? "made by someone else while the export was written"
					: strerror(errno));
	free(d->tmp);
	d->tmp = NULL;
	/* The new name, on disk as the files below it are. */
	fd = open(d->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

int cli_export(int argc, char **argv)
{
	struct export_dest dest;
	struct pfs_stat st;
	struct engine *e;
	const char *item;
	char src[PATH_MAX], **seen = NULL;
	int r;

	if ((r = cli_no_options("export", argc, argv)) >= 0 ||
	    (r = cli_operands("export", argc, 3, 3, "missing STORE|MOUNTPOINT, ITEM or DIR")))
		return r;
	item = argv[optind + 1];
	if (item[0] == '\0' || item[0] == '.' || strchr(item, '/'))
		return cli_fail("export", "%s: no such item", item);
	if (cli_open_readonly("export", argv[optind], &e) != 0)
		return 1;
	/* A live item, else an archived one. */
	snprintf(src, sizeof(src), "/%s", item);
	r = engine_getattr(e, src, &st);
	if (r == -ENOENT) {
		snprintf(src, sizeof(src), "/.archive/%s", item);
		r = engine_getattr(e, src, &st);
	}
	if (r == 0 && !S_ISDIR(st.mode))
		r = -ENOENT;
	if (r < 0) {
		r = cli_fail("export", "%s: %s", item,
			     r == -ENOENT ? "no such item" : strerror(-r));
		engine_close(e);
		return r;
	}
	r = export_begin(argv[optind + 2], &dest);
	if (r == 0)
		r = export_dir(e, src, dest.tmp, 0, &seen);
	if (r == 0) {
		char err[1024];

		r = engine_carry_export(e, item, dest.tmp, err, sizeof(err));
		if (r < 0)
			r = cli_fail("export", "%s", err);
	}
	if (r == 0)
		r = export_commit(&dest);
	if (r != 0)
		export_abandon(&dest);
	export_dest_free(&dest);
	strv_free(seen);
	engine_close(e);
	return r;
}

/* --- import -------------------------------------------------------------- */

/* Packet paths the engine generates: an import never writes them. A name
 * ending in '/' covers a directory. */
static const char *const generated[] = {
	"ctl", "status", "status.json", "events", "change.diff", "stages/", "validation/logs/",
	"validation/evidence.md", "validation/junit.xml", "validation/scope.md", "validation/registry.jsonl",
	"validation/measurements.md",
	"validation/registry.error",
	"validation/record", ".history/",
	"report.html", "compute-env.md",
	"worktree", NULL,
};

/* The carry's own files (engine.h): never documents. */
static const char *const carried[] = { ENGINE_CARRY_MANIFEST, ENGINE_CARRY_BUNDLE, NULL };

/* Whether rel (a directory when dir) is one of list's paths. */
static int listed(const char *const *list, const char *rel, int dir)
{
	size_t i, rl = strlen(rel);

	for (i = 0; list[i]; i++) {
		size_t gl = strlen(list[i]);

		if (list[i][gl - 1] == '/') {
			if (dir && rl == gl - 1 && strncmp(rel, list[i], rl) == 0)
				return 1;
		} else if (!dir && strcmp(rel, list[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

/* Whether the local directory dir (the item path rel) holds the carry's
 * files and nothing else: it is not made in the item. */
static int carry_dir_only(const char *dir, const char *rel)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int only = 1;

	if (strncmp(ENGINE_CARRY_MANIFEST, rel, strlen(rel)) != 0 ||
	    ENGINE_CARRY_MANIFEST[strlen(rel)] != '/' || !(d = opendir(dir)))
		return 0;
	while (only && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name);
		only = listed(carried, sub, 0);
	}
	closedir(d);
	return only;
}

/* Copies the local file src into the engine document path. */
static int import_file(struct engine *e, const char *src, const char *path, mode_t mode)
{
	struct pfs_caller who = cli_caller();
	struct buf b = { NULL, 0, 0 };
	struct pfs_file *f;
	size_t off = 0;
	int r = util_read_path(src, MAX_READ, &b);

	if (r < 0)
		goto out;
	r = engine_file_open(e, path, O_CREAT | O_WRONLY | O_TRUNC, mode & 0777, &who, &f);
	if (r < 0)
		goto out;
	while (off < b.len) {
		ssize_t n = engine_file_write(f, b.data + off, b.len - off, off, &who);

		if (n < 0) {
			r = (int)n;
			break;
		}
		off += (size_t)n;
	}
	if (r == 0)
		r = engine_file_flush(f, &who);
	engine_file_release(f);
out:
	buf_free(&b);
	return r;
}

/* Makes the engine entry path what the local src (lstat as st) is when it
 * is no regular file or directory: the same symlink, or a FIFO, socket or
 * device node (a device: root alone, else -EPERM). 0 or a negative errno. */
static int import_node(struct engine *e, const char *src, const char *path,
		       const struct stat *st)
{
	struct pfs_caller who = cli_caller();
	char target[PATH_MAX];
	ssize_t n;

	if (!S_ISLNK(st->st_mode))
		return engine_mknod(e, path, st->st_mode, (uint64_t)st->st_rdev, &who);
	n = readlink(src, target, sizeof(target));
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(target))
		return -ENAMETOOLONG;
	target[n] = '\0';
	return engine_symlink(e, path, target, &who);
}

/* When the local file st (lstat) has several names and one was imported
 * already, gives the engine's file that name path too: 1. Else 0 (path is
 * recorded in seen as the file's first name), or a negative errno. */
static int import_link(struct engine *e, const struct stat *st, const char *path, char ***seen)
{
	struct pfs_caller who = cli_caller();
	char key[48];
	const char *first;
	int r;

	if (st->st_nlink < 2)
		return 0;
	snprintf(key, sizeof(key), "%ju:%ju", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino);
	first = links_find(*seen, key);
	if (first == NULL)
		return links_add(seen, key, path);
	r = engine_link(e, first, path, &who);
	return r < 0 ? r : 1;
}

/* Imports the local directory dir (rel: its path in the item, "" at the
 * top) into the item at base ("/name"); the names of one local file
 * become names of one file (seen: links_add). What the engine generates
 * and the carry restored is skipped. */
static int import_dir(struct engine *e, const char *dir, const char *base, const char *rel,
		      char ***seen)
{
	struct pfs_caller who = cli_caller();
	struct dirent **names;
	int n, i, r = 0;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return cli_fail("import", "%s: %s", dir, strerror(errno));
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char *src = NULL, *sub = NULL, *path = NULL;
		struct stat st;

		if (r != 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			goto next;
		if (asprintf(&src, "%s/%s", dir, name) < 0 ||
		    asprintf(&sub, "%s%s%s", rel, rel[0] ? "/" : "", name) < 0 ||
		    asprintf(&path, "%s/%s", base, sub) < 0) {
			r = cli_fail("import", "%s", strerror(ENOMEM));
			goto next;
		}
		if (lstat(src, &st) < 0) {
			r = cli_fail("import", "%s: %s", src, strerror(errno));
			goto next;
		}
		if (listed(generated, sub, S_ISDIR(st.st_mode)) ||
		    listed(carried, sub, S_ISDIR(st.st_mode)) ||
		    (S_ISDIR(st.st_mode) && carry_dir_only(src, sub)))
			goto next; /* restored from the carry, or made by the engine */
		if (S_ISDIR(st.st_mode)) {
			r = engine_mkdir(e, path, st.st_mode & 0777, &who);
			if (r == -EEXIST)
				r = 0;
			if (r < 0)
				r = cli_fail("import", "%s: %s", sub, strerror(-r));
			else
				r = import_dir(e, src, base, sub, seen);
		} else {
			r = import_link(e, &st, path, seen);
			if (r == 0)
				r = S_ISREG(st.st_mode) ? import_file(e, src, path, st.st_mode)
							: import_node(e, src, path, &st);
			if (r > 0)
				r = 0;
			if (r < 0)
				r = cli_fail("import", "%s: %s", sub, strerror(-r));
		}
next:
		free(src);
		free(sub);
		free(path);
		free(names[i]);
	}
	free(names);
	return r;
}

/* The last component of path, trailing slashes ignored, into out. */
static void base_name(const char *path, char *out, size_t len)
{
	size_t end = strlen(path), start;

	while (end > 1 && path[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	snprintf(out, len, "%.*s", (int)(end - start), path + start);
}

/* Whether name is an item name ([a-z0-9][a-z0-9._-]{0,63}, NAME_RULE; the
 * engine decides again when it makes the item): checked before an import
 * does anything. */
static int name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > 64 || !((name[0] >= 'a' && name[0] <= 'z') ||
				  (name[0] >= '0' && name[0] <= '9')))
		return 0;
	for (i = 1; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789._-", name[i]))
			return 0;
	return 1;
}

/* Whether an item, live or archived, has the name. */
static int item_taken(struct engine *e, const char *name)
{
	struct pfs_stat st;
	char path[NAME_MAX + 16];

	snprintf(path, sizeof(path), "/%s", name);
	if (engine_getattr(e, path, &st) == 0)
		return 1;
	snprintf(path, sizeof(path), "/.archive/%s", name);
	return engine_getattr(e, path, &st) == 0;
}

int cli_import(int argc, char **argv)
{
	struct pfs_caller who = cli_caller();
	struct engine_options eo = { NULL, NULL, 0 };
	char name[NAME_MAX + 1], item[NAME_MAX + 2], err[1024] = "", tmp[PATH_MAX + 64];
	struct engine_carry *carry = NULL;
	struct engine_carry_about about;
	char **seen = NULL;
	struct engine *e;
	const char *dir;
	struct stat st;
	mode_t um;
	int r;

	if ((r = cli_no_options("import", argc, argv)) >= 0 ||
	    (r = cli_operands("import", argc, 2, 3, "missing STORE or DIR")))
		return r;
	dir = argv[optind + 1];
	if (stat(dir, &st) < 0)
		return cli_fail("import", "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cli_fail("import", "%s: %s", dir, strerror(ENOTDIR));
	name[0] = '\0';
	if (argc - optind == 3)
		snprintf(name, sizeof(name), "%s", argv[optind + 2]);
	if (argc - optind == 3 && (name[0] == '\0' || strchr(name, '/')))
		return cli_fail("import", "%s: invalid item name (" NAME_RULE ")", name);
	eo.store = argv[optind];
	r = engine_open(&eo, &e, err, sizeof(err));
	if (r == -EBUSY)
		return cli_fail("import",
				"%s (the store is mounted: use `packetfs new` and copy the files "
				"onto the mount)",
				cli_why(err, r, eo.store, tmp, sizeof(tmp)));
	if (r < 0)
		return cli_fail("import", "%s", cli_why(err, r, eo.store, tmp, sizeof(tmp)));
	snprintf(item, sizeof(item), "/%s", name);
	/* As mkdir(2) would make it: the item directory's mode under the umask. */
	um = umask(0);
	umask(um);
	if (name[0] && !name_ok(name)) {
		r = cli_fail("import", "%s: invalid item name (" NAME_RULE ")", name);
		goto out;
	}
	if (name[0] && item_taken(e, name)) {
		r = cli_fail("import", "%s: item exists", name);
		goto out;
	}
	/* Only a whole export: a folder without its manifest, bundle or
	 * matching hashes is refused before anything is stored. */
	r = engine_carry_open(e, dir, &carry, err, sizeof(err));
	if (r < 0) {
		r = cli_fail("import", "%s: %s", dir, err);
		goto out;
	}
	engine_carry_describe(carry, &about);
	if (!name[0]) { /* the item's name in the export, else DIR's */
		if (about.item[0])
			snprintf(name, sizeof(name), "%s", about.item);
		else
			base_name(dir, name, sizeof(name));
		snprintf(item, sizeof(item), "/%s", name);
		if (!name_ok(name)) {
			r = cli_fail("import", "%s: invalid item name (" NAME_RULE "); give NAME",
				     name);
			goto out;
		}
		if (item_taken(e, name)) {
			r = cli_fail("import", "%s: item exists (give another NAME)", name);
			goto out;
		}
	}
	r = engine_carry_item(e, carry, name, 0777 & ~um, &who, err, sizeof(err));
	if (r == -EINVAL)
		r = cli_fail("import", "%s: invalid item name (" NAME_RULE ")", name);
	else if (r == -EEXIST)
		r = cli_fail("import", "%s: item exists", name);
	else if (r < 0)
		r = cli_fail("import", "%s", err);
	else
		r = import_dir(e, dir, item, "", &seen);
	if (r == 0 && engine_carry_finish(e, carry, name, err, sizeof(err)) < 0)
		r = cli_fail("import", "%s", err);
	if (r == 0) {
		engine_carry_describe(carry, &about);
		printf("imported %s from %s: the export of %s at %.12s, %zu run%s, registry lines: "
		       "%d counted, %d kept as imported\n",
		       name, dir, about.item[0] ? about.item : "an item", about.head, about.runs,
		       about.runs == 1 ? "" : "s", about.lines_counted, about.lines_imported);
	}
out:
	engine_carry_free(carry);
	strv_free(seen);
	engine_close(e);
	return r;
}
