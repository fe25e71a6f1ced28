/*
 * top_model.c - the items `packetfs top` shows (top.h): listed from the
 * mount's root, each read from its status.json, kept sorted by name.
 *
 * Invariants: items[0..n-1] are sorted by name (strcmp) with no name twice;
 * name_w and stage_w are the longest name and stage among them (at least
 * the width of their column's title); template_w the longest template, or
 * 0 when none has one.
 */
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "top.h"

const char *const top_states[TOP_NSTATES] = {
	"running", "queued", "waiting", "blocked", "failed", "new", "done",
};

int64_t top_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int top_model_init(struct top_model *m, const char *root)
{
	memset(m, 0, sizeof(*m));
	m->root = strdup(root);
	m->name_w = 4;
	m->stage_w = 5;
	return m->root ? 0 : -ENOMEM;
}

static void item_free(struct top_item *it)
{
	free(it->name);
	free(it->last_error);
}

static void items_clear(struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		item_free(&m->items[i]);
	m->n = 0;
}

void top_model_free(struct top_model *m)
{
	items_clear(m);
	free(m->items);
	free(m->root);
	memset(m, 0, sizeof(*m));
}

static void widths(struct top_model *m)
{
	size_t i, l;

	m->name_w = 4;   /* "ITEM" */
	m->stage_w = 5;  /* "STAGE" */
	m->template_w = 0;
	for (i = 0; i < m->n; i++) {
		l = strlen(m->items[i].template);
		if (l && (int)l > m->template_w)
			m->template_w = (int)l < 8 ? 8 : (int)l; /* "TEMPLATE" */
		l = strlen(m->items[i].name);
		if ((int)l > m->name_w)
			m->name_w = (int)l;
		l = strlen(m->items[i].stage);
		if ((int)l > m->stage_w)
			m->stage_w = (int)l;
	}
}

/* The index where name is, or where it would go (*found: whether it is). */
static size_t locate(const struct top_model *m, const char *name, int *found)
{
	size_t lo = 0, hi = m->n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->items[mid].name, name);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long top_model_find(const struct top_model *m, const char *name)
{
	int found;
	size_t i = locate(m, name, &found);

	return found ? (long)i : -1;
}

long top_model_find_wd(const struct top_model *m, int wd)
{
	size_t i;

	for (i = 0; wd >= 0 && i < m->n; i++)
		if (m->items[i].wd == wd)
			return (long)i;
	return -1;
}

/* Copies the string member key of o into out (size bytes); "" when absent. */
static void copy_member(const cJSON *o, const char *key, char *out, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	snprintf(out, size, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* Parses "plan (12 s), 01-build (3 s)" into it's runs, started the
 * seconds given before now_ms. */
static void parse_running(struct top_item *it, const char *s, int64_t now_ms)
{
	it->nruns = 0;
	it->more_runs = 0;
	while (*s) {
		const char *open = strstr(s, " ("), *end;
		char *num_end;
		long long secs;

		if (!open)
			break;
		secs = strtoll(open + 2, &num_end, 10);
		if (num_end == open + 2 || strncmp(num_end, " s)", 3) != 0)
			break;
		end = num_end + 3;
		if (it->nruns < TOP_MAX_RUNS) {
			struct top_run *r = &it->runs[it->nruns++];

			snprintf(r->name, sizeof(r->name), "%.*s", (int)(open - s), s);
			r->start_ms = now_ms - secs * 1000;
		} else {
			it->more_runs++;
		}
		s = end;
		while (*s == ',' || *s == ' ')
			s++;
	}
}

int top_item_parse(struct top_item *it, const char *text, int64_t now_ms)
{
	cJSON *o = cJSON_Parse(text);
	const cJSON *v;
	char *err, evidence[64];

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return -EINVAL;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "last_error");
	err = strdup(cJSON_IsString(v) ? v->valuestring : "");
	if (!err) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	free(it->last_error);
	it->last_error = err;
	copy_member(o, "state", it->state, sizeof(it->state));
	copy_member(o, "stage", it->stage, sizeof(it->stage));
	copy_member(o, "template", it->template, sizeof(it->template));
	/* "3/4 validated": the counts are what a row has room for. */
	copy_member(o, "evidence", evidence, sizeof(evidence));
	snprintf(it->evidence, sizeof(it->evidence), "%.*s", (int)strcspn(evidence, " "), evidence);
	v = cJSON_GetObjectItemCaseSensitive(o, "running");
	parse_running(it, cJSON_IsString(v) ? v->valuestring : "", now_ms);
	it->hold = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "hold"));
	cJSON_Delete(o);
	return 0;
}

/* Reads root/name/status.json into it. 0 or -errno (-ENOENT: no item). */
static int item_read(const char *root, struct top_item *it)
{
	struct buf b;
	char path[PATH_MAX];
	ssize_t n;
	char chunk[16384];
	int fd, r = 0;

	if (snprintf(path, sizeof(path), "%s/%s/status.json", root, it->name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	buf_init(&b);
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		if (n <= 0)
			break;
		if (buf_append(&b, chunk, (size_t)n) < 0) {
			r = -ENOMEM;
			break;
		}
		/* A view comes whole in one read: a short one that ends its
		 * line spares the read that would find the end (a request to
		 * the daemon, which renders the view again). */
		if ((size_t)n < sizeof(chunk) && b.data[b.len - 1] == '\n')
			break;
	}
	close(fd);
	if (r == 0)
		r = top_item_parse(it, b.data ? b.data : "", top_now_ms());
	buf_free(&b);
	it->error = r;
	return r;
}

/* Inserts a new item called name at index i (no read yet). 0 or -ENOMEM. */
static int insert_at(struct top_model *m, size_t i, const char *name)
{
	struct top_item *it;

	if (util_grow(&m->items, &m->cap, m->n, sizeof(*m->items), 64))
		return -ENOMEM;
	memmove(&m->items[i + 1], &m->items[i], (m->n - i) * sizeof(*m->items));
	it = &m->items[i];
	memset(it, 0, sizeof(*it));
	it->wd = -1;
	it->name = strdup(name);
	it->last_error = strdup("");
	if (!it->name || !it->last_error) {
		item_free(it);
		memmove(&m->items[i], &m->items[i + 1], (m->n - i) * sizeof(*m->items));
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(((const struct top_item *)a)->name, ((const struct top_item *)b)->name);
}

int top_model_load(struct top_model *m, int read)
{
	struct dirent *de;
	size_t i, k;
	DIR *d;
	int r = 0;

	items_clear(m);
	d = opendir(m->root);
	if (!d)
		return -errno;
	/* Appended in the directory's order, sorted once at the end. */
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    strcmp(de->d_name, "learnings") == 0)
			continue;
		r = insert_at(m, m->n, de->d_name);
	}
	closedir(d);
	if (r < 0) {
		items_clear(m);
		return r;
	}
	qsort(m->items, m->n, sizeof(*m->items), cmp_item);
	for (i = 0, k = 0; i < m->n; i++) {
		m->items[i].dirty = !read;
		/* A directory without a status.json is no item. */
		if (read && item_read(m->root, &m->items[i]) == -ENOENT) {
			item_free(&m->items[i]);
			continue;
		}
		m->items[k++] = m->items[i];
	}
	m->n = k;
	widths(m);
	return 0;
}

long top_model_refresh(struct top_model *m, const char *name)
{
	int found, r;
	size_t i = locate(m, name, &found);

	if (!found && (r = insert_at(m, i, name)) < 0)
		return r;
	r = item_read(m->root, &m->items[i]);
	m->items[i].dirty = 0;
	if (r == -ENOENT) {
		/* No item: one just inserted goes again (it has no watch);
		 * one known stays for top_model_drop, which gives its watch. */
		if (!found) {
			item_free(&m->items[i]);
			memmove(&m->items[i], &m->items[i + 1], (m->n - i - 1) * sizeof(*m->items));
			m->n--;
		}
		return -ENOENT;
	}
	widths(m);
	return (long)i;
}

int top_model_drop(struct top_model *m, const char *name)
{
	int found, wd;
	size_t i = locate(m, name, &found);

	if (!found)
		return -1;
	wd = m->items[i].wd;
	item_free(&m->items[i]);
	memmove(&m->items[i], &m->items[i + 1], (m->n - i - 1) * sizeof(*m->items));
	m->n--;
	widths(m);
	return wd;
}

void top_model_counts(const struct top_model *m, size_t counts[TOP_NSTATES], size_t *other)
{
	size_t i;
	int k;

	memset(counts, 0, TOP_NSTATES * sizeof(counts[0]));
	*other = 0;
	for (i = 0; i < m->n; i++) {
		for (k = 0; k < TOP_NSTATES; k++)
			if (strcmp(m->items[i].state, top_states[k]) == 0)
				break;
		if (k < TOP_NSTATES)
			counts[k]++;
		else
			(*other)++;
	}
}
