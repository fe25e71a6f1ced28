/*
 * recipe.c - the recipe catalog and the plan's recipe list (see recipe.h).
 *
 * Design: the catalog is read from the directory in one pass (readdir, stat,
 * access X_OK), then sorted by name so recipe_find can bisect. A file name
 * must match ^[0-9]{2}-[a-z0-9][a-z0-9._-]*$; its recipe name drops one
 * extension ([a-z0-9]+ after the last '.') when what remains still matches,
 * so "03-unit-tests.sh" is "03-unit-tests" and "04-lint" is "04-lint". Two
 * files with the same recipe name (03-x.sh, 03-x.py): the first file name in
 * byte order wins and the other is skipped. Headers are read from the first
 * 30 lines (and at most HEAD_MAX bytes) of the file; the first occurrence of
 * each header counts, a value without leading digits keeps the default, and
 * numbers saturate at INT_MAX.
 *
 * recipe_plan_names follows CommonMark fences: a line of three or more '`'
 * or '~' (indented at most three spaces) opens a block whose first info word
 * names its kind; the block ends at a fence of the same character at least
 * as long, or at the end of the text. Blocks of other kinds are skipped
 * whole, so an example inside them does not count.
 *
 * No shared state: every function is thread-safe.
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

#include "recipe.h"
#include "util.h"

#define HEAD_LINES 30
#define HEAD_MAX 65536

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

/* If line is "# key: value", a pointer to the trimmed value (line is edited). */
static char *header_value(char *line, const char *key)
{
	size_t k = strlen(key), n;
	char *p = line;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != '#')
		return NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, key, k) != 0)
		return NULL;
	p += k;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != ':')
		return NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	n = strlen(p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		p[--n] = '\0';
	return p;
}

/* Reads the headers of r->path; an unreadable file keeps the defaults. */
static int read_headers(struct recipe *r)
{
	char *head, *line, *nl, *v;
	int fd, lines = 0, have_gpus = 0, have_timeout = 0;
	ssize_t got;
	size_t len = 0;

	head = malloc(HEAD_MAX + 1);
	if (!head)
		return -ENOMEM;
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
		if (!r->summary && (v = header_value(line, "summary")) != NULL) {
			r->summary = strdup(v);
			if (!r->summary)
				goto nomem;
		} else if (!have_gpus && (v = header_value(line, "gpus")) != NULL) {
			have_gpus = 1;
			if (leading_int(v) >= 0)
				r->gpus = leading_int(v);
		} else if (!have_timeout && (v = header_value(line, "timeout")) != NULL) {
			have_timeout = 1;
			if (leading_int(v) >= 0)
				r->timeout_s = leading_int(v);
		}
	}
	free(head);
	if (!r->summary && !(r->summary = strdup("")))
		return -ENOMEM;
	return 0;
nomem:
	free(head);
	return -ENOMEM;
}

static void recipe_clear(struct recipe *r)
{
	free(r->name);
	free(r->file);
	free(r->path);
	free(r->summary);
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

static int add_entry(struct recipe_catalog *cat, size_t *cap, const char *dir, const char *file,
		     size_t namelen)
{
	struct recipe *r, *nv;
	struct stat st;

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
	if (stat(r->path, &st) || !S_ISREG(st.st_mode) || access(r->path, X_OK)) {
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
	struct recipe_catalog cat = { NULL, 0 };
	struct dirent *de;
	size_t cap = 0, i, j, namelen;
	char *abs;
	DIR *d;
	int rc = 0;

	out->v = NULL;
	out->n = 0;
	if (!dir)
		return 0;
	abs = absolute_dir(dir);
	if (!abs)
		return -ENOMEM;
	d = opendir(abs);
	if (!d) {
		rc = errno == ENOENT ? 0 : -errno;
		free(abs);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		namelen = recipe_name_len(de->d_name);
		if (!namelen)
			continue;
		rc = add_entry(&cat, &cap, abs, de->d_name, namelen);
		if (rc)
			goto fail;
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
	closedir(d);
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
	cat->v = NULL;
	cat->n = 0;
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

/*
 * If the line [s, e) is a fence, its character, length and (for an opening
 * fence) the info word [*info, *info_end); 0 when it is not one.
 */
static int fence(const char *s, const char *e, char *ch, size_t *count, const char **info,
		 const char **info_end)
{
	const char *p = s;
	size_t n = 0;

	while (p < e && *p == ' ' && p - s < 3)
		p++;
	if (p == e || (*p != '`' && *p != '~'))
		return 0;
	*ch = *p;
	while (p < e && *p == *ch) {
		p++;
		n++;
	}
	if (n < 3)
		return 0;
	*count = n;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	*info = p;
	while (p < e && *p != ' ' && *p != '\t' && *p != '\r')
		p++;
	*info_end = p;
	return 1;
}

static int blank_from(const char *p, const char *e)
{
	for (; p < e; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return 0;
	return 1;
}

/* Adds the name on the line [s, e) to *names unless blank, a comment or a repeat. */
static int plan_line(const char *s, const char *e, char ***names)
{
	char *name;
	size_t i;
	int rc;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (e - s >= 2 && s[0] == '-' && s[1] == ' ') {
		s += 2;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
	}
	if (s == e || *s == '#')
		return 0;
	name = strndup(s, (size_t)(e - s));
	if (!name)
		return -ENOMEM;
	for (i = 0; *names && (*names)[i]; i++) {
		if (strcmp((*names)[i], name) == 0) {
			free(name);
			return 0;
		}
	}
	rc = strv_push(names, name);
	free(name);
	return rc;
}

int recipe_plan_names(const char *plan, size_t len, char ***names)
{
	static const char kind[] = "validation-recipes";
	const char *p = plan, *end = plan + len, *nl, *le, *info, *info_end;
	size_t open_count = 0, count;
	char open_ch = 0, ch;
	char **v = NULL;
	int state = 0; /* 0: outside a block, 1: in another block, 2: in ours */
	int rc;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		le = nl ? nl : end;
		if (state == 0) {
			if (fence(p, le, &ch, &count, &info, &info_end)) {
				open_ch = ch;
				open_count = count;
				state = (size_t)(info_end - info) == sizeof(kind) - 1 &&
					memcmp(info, kind, sizeof(kind) - 1) == 0 ? 2 : 1;
				if (state == 2 && !(v = calloc(1, sizeof(char *))))
					return -ENOMEM;
			}
		} else if (fence(p, le, &ch, &count, &info, &info_end) && ch == open_ch &&
			   count >= open_count && blank_from(info, le)) {
			if (state == 2)
				break;
			state = 0;
		} else if (state == 2) {
			rc = plan_line(p, le, &v);
			if (rc) {
				strv_free(v);
				return rc;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (!v)
		return -ENOENT;
	*names = v;
	return 0;
}
