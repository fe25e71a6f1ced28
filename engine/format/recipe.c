/*
 * recipe.c - the recipe catalog (see recipe.h); recipe_plan.c reads the
 * plan's recipe list and the stage documents' markers.
 *
 * Design: the catalog is read from the directory in one pass (readdir, stat,
 * access X_OK), then sorted by name so recipe_find can bisect. A file name
 * must match ^[0-9]{2}-[a-z0-9][a-z0-9._-]*$; its recipe name drops one
 * extension ([a-z0-9]+ after the last '.') when what remains still matches,
 * so "03-unit-tests.sh" is "03-unit-tests" and "04-lint" is "04-lint". A
 * file whose dropped extension is "md" is a procedure and need not be
 * executable; every other recipe must be. Two files with the same recipe
 * name (03-x.sh, 03-x.py, 03-x.md): the first file name in byte order wins
 * and the others are skipped. Headers are read from the first 30 lines
 * (and at most HEAD_MAX bytes) of the file; the first occurrence of summary,
 * gpus and timeout counts, a value without leading digits keeps the
 * default, and numbers saturate at INT_MAX. Every "# version:" line counts,
 * in order (an empty one is skipped). In a procedure a line may wrap its
 * header in an HTML comment: a leading "<!--" and a trailing "-->" are
 * dropped before the line is read.
 *
 * Needs: the words of every "# needs:" line (separated by blanks or
 * commas) are gathered. "none" names nothing; a word that is not a recipe
 * name (NN-name), the recipe's own name and a repeat are ignored. The
 * recipe has explicit needs (needs_default 0) when some needs line gave
 * "none" or a name; a needs line that gives neither (empty, or only bad
 * words) counts as absent, so a typo never lets a recipe start earlier
 * than it would without the line.
 *
 * Requires: the words of every "# requires:" line (separated by blanks or
 * commas) are the probes the recipe needs (SPEC §6), repeats dropped.
 * Unlike needs, a word is never dropped for its spelling: a typo must
 * block the run with a reason, not let it run where the probe is absent.
 *
 * Measure: "# measure:", "# repeat:", "# warmup:" and "# budget:" lines go
 * to measure.c, which keeps the first bad one's reason (measure.h).
 *
 * Freshness: the load records a stamp (struct recipe_stamp) before it
 * reads anything: the stat of the directory, then of each file whose name
 * is a recipe file name, the very stat that decides whether it is one.
 * A change made after a stat moves what that stat saw (a new entry moves
 * the directory's mtime; a rewrite, a chmod or a rename over a file the
 * file's times, mode or inode), except a rewrite within the timestamp
 * granularity of the file system (a jiffy on ext4 or tmpfs, a second or
 * two on others): so a stamp with any time less than RACY_NS older than
 * the load is racy, and a racy catalog is never fresh (as git treats its
 * racily clean index entries). Loading it again later gives a settled one.
 *
 * Lists of names (needs here, the plan's recipes in recipe_plan.c) drop
 * their repeats, each keeping its first place, by sorting (name, position)
 * pairs: n names cost O(n log n), never a comparison of each name with all
 * before it.
 *
 * No shared state: every function is thread-safe.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recipe.h"
#include "recipe_int.h"
#include "util.h"

#define HEAD_LINES 30
#define HEAD_MAX 65536
/* A stamp with a time less than this older than its load is racy. */
#define RACY_NS (2 * (int64_t)1000000000)

/* What one stat saw: err 0 and the fields, or the errno of the stat. */
struct seen {
	int err;
	dev_t dev;
	ino_t ino;
	off_t size;
	mode_t mode;
	struct timespec mtime, ctime;
};

struct stamp_file {
	char *file;     /* the entry's name in the directory */
	struct seen st;
};

struct recipe_stamp {
	char *dir;      /* as given to recipe_catalog_load; NULL: no directory */
	struct seen st; /* of dir */
	int racy;       /* a time seen was too recent to rely on (see above) */
	struct stamp_file *f;
	size_t n, cap;
};

static int lower_digit(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

/* s[0..n) matches ^[0-9]{2}-[a-z0-9][a-z0-9._-]*$ */
static int name_ok(const char *s, size_t n)
{
	size_t i;

	if (n < 4 || !(s[0] >= '0' && s[0] <= '9') || !(s[1] >= '0' && s[1] <= '9') ||
	    s[2] != '-' || !lower_digit(s[3]))
		return 0;
	for (i = 4; i < n; i++)
		if (!lower_digit(s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
			return 0;
	return 1;
}

/* The length of the recipe name of file, or 0 when file is not a recipe. */
static size_t recipe_name_len(const char *file)
{
	size_t n = strlen(file), k;
	const char *dot, *p;

	if (!name_ok(file, n))
		return 0;
	dot = strrchr(file, '.');
	if (!dot || !dot[1])
		return n;
	for (p = dot + 1; *p; p++)
		if (!lower_digit(*p))
			return n;
	k = (size_t)(dot - file);
	return name_ok(file, k) ? k : n;
}

/* Leading decimal digits of s (after blanks) saturated at INT_MAX, or -1. */
static int leading_int(const char *s)
{
	long long v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!(*s >= '0' && *s <= '9'))
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return INT_MAX;
	}
	return (int)v;
}

/* Where s goes on past blanks, the character c (not '\0') and the blanks
 * after it; NULL when c does not come after the blanks. */
static char *past(char *s, char c)
{
	s += strspn(s, " \t");
	if (*s != c)
		return NULL;
	s++;
	return s + strspn(s, " \t");
}

/* If line is "# key: value", a pointer to the trimmed value (line is edited). */
static char *header_value(char *line, const char *key)
{
	size_t k = strlen(key), n;
	char *p = past(line, '#');

	if (!p || strncmp(p, key, k) != 0)
		return NULL;
	p = past(p + k, ':');
	if (!p)
		return NULL;
	n = strlen(p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		p[--n] = '\0';
	return p;
}

/* A procedure's line without a leading "<!--" and a trailing "-->" (line is edited). */
static char *uncomment(char *line)
{
	size_t n;

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, "<!--", 4) == 0)
		line += 4;
	n = strlen(line);
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	if (n >= 3 && memcmp(line + n - 3, "-->", 3) == 0)
		n -= 3;
	line[n] = '\0';
	return line;
}

int recipe__names_take(struct recipe_names *l, char *s)
{
	if (l->n + 1 >= l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			free(s);
			return -ENOMEM;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
	return 0;
}

/* A string and its place in a list. */
struct slot {
	const char *s;
	size_t i;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* A sort of (string, position) pairs puts the first of each run of equal
 * strings first; the others are dropped. */
int recipe__names_dedupe(struct recipe_names *l)
{
	struct slot *s;
	const char *first;
	size_t i, k;

	if (l->n < 2)
		return 0;
	s = malloc(l->n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < l->n; i++)
		s[i] = (struct slot){ l->v[i], i };
	qsort(s, l->n, sizeof(*s), slot_cmp);
	for (i = 1, first = s[0].s; i < l->n; i++) {
		if (strcmp(s[i].s, first) != 0) {
			first = s[i].s;
			continue;
		}
		free(l->v[s[i].i]);
		l->v[s[i].i] = NULL;
	}
	free(s);
	for (i = k = 0; i < l->n; i++)
		if (l->v[i])
			l->v[k++] = l->v[i];
	l->n = k;
	l->v[k] = NULL;
	return 0;
}

/* Adds the recipe names of the needs value v to *needs (see the design
 * note; recipe__names_dedupe drops the repeats at the end); *named is set
 * when v gave "none" or a name. 0 or -ENOMEM. */
static int add_needs(const struct recipe *r, char *v, struct recipe_names *needs, int *named)
{
	char *word, *save = NULL, *copy;

	for (word = strtok_r(v, " \t,", &save); word; word = strtok_r(NULL, " \t,", &save)) {
		if (strcmp(word, "none") == 0) {
			*named = 1;
			continue;
		}
		if (!name_ok(word, strlen(word)) || strcmp(word, r->name) == 0)
			continue;
		*named = 1;
		copy = strdup(word);
		if (!copy || recipe__names_take(needs, copy))
			return -ENOMEM;
	}
	return 0;
}

/* Adds the words of the requires value v to *req (words cut to
 * REQUIRE_CUT bytes; recipe__names_dedupe drops the repeats). 0 or
 * -ENOMEM. */
#define REQUIRE_CUT 64
static int add_requires(char *v, struct recipe_names *req)
{
	char *word, *save = NULL, *copy;

	for (word = strtok_r(v, " \t,", &save); word; word = strtok_r(NULL, " \t,", &save)) {
		copy = strndup(word, REQUIRE_CUT);
		if (!copy || recipe__names_take(req, copy))
			return -ENOMEM;
	}
	return 0;
}

/* Takes line into r->measure when it is one of measure.h's header lines:
 * 1 when it was, 0 when not, -ENOMEM. */
static int measure_line(struct recipe *r, char *line)
{
	static const char *const keys[] = { "measure", "repeat", "warmup", "budget" };
	size_t i;
	char *v;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if ((v = header_value(line, keys[i])) != NULL)
			return measure_take(&r->measure, keys[i], v);
	return 0;
}

/* Reads the headers of r->path; an unreadable file keeps the defaults.
 * On -ENOMEM the caller clears r. */
static int read_headers(struct recipe *r)
{
	struct recipe_names needs = { NULL, 0, 0 }, req = { NULL, 0, 0 };
	char *head, *line, *nl, *v;
	int fd, lines = 0, have_gpus = 0, have_timeout = 0, named = 0, rc = -ENOMEM;
	ssize_t got;
	size_t len = 0;

	r->versions = calloc(1, sizeof(char *));
	head = malloc(HEAD_MAX + 1);
	if (!head || !r->versions)
		goto out;
	fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	while (fd >= 0 && len < HEAD_MAX) {
		got = read(fd, head + len, HEAD_MAX - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	if (fd >= 0)
		close(fd);
	head[len] = '\0';
	for (line = head; line < head + len && lines < HEAD_LINES; line = nl + 1, lines++) {
		nl = memchr(line, '\n', (size_t)(head + len - line));
		if (!nl)
			nl = head + len;
		*nl = '\0';
		if (r->procedure)
			line = uncomment(line);
		if (!r->summary && (v = header_value(line, "summary")) != NULL) {
			r->summary = strdup(v);
			if (!r->summary)
				goto out;
		} else if (!have_gpus && (v = header_value(line, "gpus")) != NULL) {
			have_gpus = 1;
			if (leading_int(v) >= 0)
				r->gpus = leading_int(v);
		} else if (!have_timeout && (v = header_value(line, "timeout")) != NULL) {
			have_timeout = 1;
			if (leading_int(v) >= 0)
				r->timeout_s = leading_int(v);
		} else if ((v = header_value(line, "needs")) != NULL) {
			if (add_needs(r, v, &needs, &named))
				goto out;
		} else if ((v = header_value(line, "requires")) != NULL) {
			if (add_requires(v, &req))
				goto out;
		} else if ((rc = measure_line(r, line)) != 0) {
			if (rc < 0)
				goto out;
			rc = -ENOMEM;
		} else if ((v = header_value(line, "version")) != NULL && *v) {
			if (strv_push(&r->versions, v))
				goto out;
		}
	}
	if (!r->summary && !(r->summary = strdup("")))
		goto out;
	if (measure_finish(&r->measure))
		goto out;
	r->needs_default = !named;
	if (named && (recipe__names_dedupe(&needs) ||
		      (!needs.v && !(needs.v = calloc(1, sizeof(char *))))))
		goto out;
	if (named) {
		r->needs = needs.v;
		needs.v = NULL;
	}
	if (recipe__names_dedupe(&req) || (!req.v && !(req.v = calloc(1, sizeof(char *)))))
		goto out;
	r->requires = req.v;
	req.v = NULL;
	rc = 0;
out:
	strv_free(req.v);
	strv_free(needs.v);
	free(head);
	return rc;
}

void recipe_clear(struct recipe *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->file);
	free(r->path);
	free(r->summary);
	strv_free(r->needs);
	strv_free(r->versions);
	strv_free(r->requires);
	measure_clear(&r->measure);
	memset(r, 0, sizeof(*r));
}

/* A copy of the list v (NULL gives NULL), or NULL with *failed set. */
static char **list_copy(char *const *v, int *failed)
{
	char **c = strv_dup(v);

	if (v && !c)
		*failed = 1;
	return c;
}

/* A copy of s (NULL gives NULL), or NULL with *failed set. */
static char *str_copy(const char *s, int *failed)
{
	char *c = s ? strdup(s) : NULL;

	if (s && !c)
		*failed = 1;
	return c;
}

int recipe_copy(struct recipe *dst, const struct recipe *src)
{
	static char *const empty[] = { NULL };
	int failed = 0;

	memset(dst, 0, sizeof(*dst));
	dst->name = str_copy(src->name, &failed);
	dst->file = str_copy(src->file, &failed);
	dst->path = str_copy(src->path, &failed);
	dst->summary = str_copy(src->summary, &failed);
	dst->gpus = src->gpus;
	dst->timeout_s = src->timeout_s;
	dst->procedure = src->procedure;
	dst->needs_default = src->needs_default;
	dst->needs = list_copy(src->needs, &failed);
	dst->versions = list_copy(src->versions ? src->versions : empty, &failed);
	dst->requires = list_copy(src->requires ? src->requires : empty, &failed);
	if (measure_copy(&dst->measure, &src->measure))
		failed = 1;
	if (failed) {
		recipe_clear(dst);
		return -ENOMEM;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct recipe *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->file, y->file);
}

/* The directory as an absolute path without a trailing '/' (caller frees). */
static char *absolute_dir(const char *dir)
{
	struct buf b;
	char *cwd;
	size_t n;
	int rc = 0;

	buf_init(&b);
	if (dir[0] != '/') {
		cwd = getcwd(NULL, 0);
		if (!cwd)
			return NULL;
		rc = buf_printf(&b, "%s/", strcmp(cwd, "/") ? cwd : "");
		free(cwd);
	}
	if (rc || buf_puts(&b, dir)) {
		buf_free(&b);
		return NULL;
	}
	n = b.len;
	while (n > 1 && b.data[n - 1] == '/')
		b.data[--n] = '\0';
	b.len = n;
	return buf_steal(&b);
}

/* ---- stamps ---- */

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* Stats path into *s; a result of stat(2) also for errors (s->err). */
static void look(const char *path, struct seen *s)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (stat(path, &st)) {
		s->err = errno;
		return;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->size = st.st_size;
	s->mode = st.st_mode;
	s->mtime = st.st_mtim;
	s->ctime = st.st_ctim;
}

static int same(const struct seen *a, const struct seen *b)
{
	if (a->err || b->err)
		return a->err == b->err;
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mode == b->mode &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* Marks the stamp racy when s saw a time less than RACY_NS before start_ns. */
static void settle(struct recipe_stamp *stamp, const struct seen *s, int64_t start_ns)
{
	if (!s->err && (ts_ns(&s->mtime) > start_ns - RACY_NS ||
			ts_ns(&s->ctime) > start_ns - RACY_NS))
		stamp->racy = 1;
}

static void stamp_free(struct recipe_stamp *stamp)
{
	size_t i;

	if (!stamp)
		return;
	for (i = 0; i < stamp->n; i++)
		free(stamp->f[i].file);
	free(stamp->f);
	free(stamp->dir);
	free(stamp);
}

/* Records what a stat of the entry file saw. 0 or -ENOMEM. */
static int stamp_add(struct recipe_stamp *stamp, const char *file, const struct seen *s)
{
	struct stamp_file *nf;

	if (stamp->n == stamp->cap) {
		size_t cap = stamp->cap ? stamp->cap * 2 : 16;

		nf = realloc(stamp->f, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		stamp->f = nf;
		stamp->cap = cap;
	}
	stamp->f[stamp->n].file = strdup(file);
	if (!stamp->f[stamp->n].file)
		return -ENOMEM;
	stamp->f[stamp->n].st = *s;
	stamp->n++;
	return 0;
}

int recipe_catalog_fresh(const char *dir, const struct recipe_catalog *cat)
{
	const struct recipe_stamp *stamp = cat ? cat->stamp : NULL;
	struct seen now;
	struct buf path;
	size_t i;
	int fresh = 1;

	if (!stamp || stamp->racy || !dir != !stamp->dir || (dir && strcmp(dir, stamp->dir)))
		return 0;
	if (!dir)
		return 1;
	look(dir, &now);
	if (!same(&now, &stamp->st))
		return 0;
	buf_init(&path);
	for (i = 0; i < stamp->n && fresh; i++) {
		path.len = 0;
		if (buf_printf(&path, "%s/%s", dir, stamp->f[i].file)) {
			fresh = 0;
			break;
		}
		look(path.data, &now);
		fresh = same(&now, &stamp->f[i].st);
	}
	buf_free(&path);
	return fresh;
}

/* ---- loading ---- */

static int add_entry(struct recipe_catalog *cat, size_t *cap, const char *dir, const char *file,
		     size_t namelen, int64_t start_ns)
{
	struct recipe *r, *nv;
	struct seen s;
	int rc;

	if (cat->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		nv = realloc(cat->v, *cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		cat->v = nv;
	}
	r = &cat->v[cat->n];
	memset(r, 0, sizeof(*r));
	r->name = strndup(file, namelen);
	r->file = strdup(file);
	if (r->name && r->file && asprintf(&r->path, "%s/%s", strcmp(dir, "/") ? dir : "",
					   file) < 0)
		r->path = NULL;
	if (!r->name || !r->file || !r->path) {
		recipe_clear(r);
		return -ENOMEM;
	}
	r->procedure = strcmp(file + namelen, ".md") == 0;
	look(r->path, &s);
	rc = stamp_add(cat->stamp, file, &s);
	if (rc) {
		recipe_clear(r);
		return rc;
	}
	settle(cat->stamp, &s, start_ns);
	if (s.err || !S_ISREG(s.mode) || (!r->procedure && access(r->path, X_OK))) {
		recipe_clear(r);
		return 0;
	}
	if (read_headers(r)) {
		recipe_clear(r);
		return -ENOMEM;
	}
	cat->n++;
	return 0;
}

int recipe_catalog_load(const char *dir, struct recipe_catalog *out)
{
	struct recipe_catalog cat = { NULL, 0, NULL };
	int64_t start_ns = util_now_ns();
	struct dirent *de;
	size_t cap = 0, i, j, namelen;
	char *abs = NULL;
	DIR *d;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	cat.stamp = calloc(1, sizeof(*cat.stamp));
	if (!cat.stamp)
		return -ENOMEM;
	if (!dir) {
		*out = cat;
		return 0;
	}
	cat.stamp->dir = strdup(dir);
	abs = absolute_dir(dir);
	if (!cat.stamp->dir || !abs)
		goto fail;
	look(abs, &cat.stamp->st);
	settle(cat.stamp, &cat.stamp->st, start_ns);
	d = opendir(abs);
	if (!d) {
		rc = -errno;
		if (rc != -ENOENT)
			goto fail;
		free(abs);
		*out = cat;
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		namelen = recipe_name_len(de->d_name);
		if (!namelen)
			continue;
		rc = add_entry(&cat, &cap, abs, de->d_name, namelen, start_ns);
		if (rc) {
			closedir(d);
			goto fail;
		}
	}
	closedir(d);
	free(abs);
	if (cat.n)
		qsort(cat.v, cat.n, sizeof(*cat.v), by_name);
	for (i = j = 0; i < cat.n; i++) {
		if (j && strcmp(cat.v[j - 1].name, cat.v[i].name) == 0)
			recipe_clear(&cat.v[i]);
		else
			cat.v[j++] = cat.v[i];
	}
	cat.n = j;
	*out = cat;
	return 0;
fail:
	free(abs);
	recipe_catalog_free(&cat);
	return rc;
}

void recipe_catalog_free(struct recipe_catalog *cat)
{
	size_t i;

	if (!cat)
		return;
	for (i = 0; i < cat->n; i++)
		recipe_clear(&cat->v[i]);
	free(cat->v);
	stamp_free(cat->stamp);
	cat->v = NULL;
	cat->n = 0;
	cat->stamp = NULL;
}

static int find_cmp(const void *key, const void *elem)
{
	const struct recipe *r = elem;

	return strcmp(key, r->name);
}

const struct recipe *recipe_find(const struct recipe_catalog *cat, const char *name)
{
	if (!cat || !cat->n || !name)
		return NULL;
	return bsearch(name, cat->v, cat->n, sizeof(*cat->v), find_cmp);
}
