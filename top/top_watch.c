/*
 * top_watch.c - how `packetfs top` learns of changes (top.h): inotify on
 * the mount, which reports the engine's own changes as it reports writes
 * (SPEC §3 "Watchers see everything"), and the root events file.
 *
 * A drain takes every inotify event there is, marking the items they name
 * (and adding or dropping items the root's events name), then reads the
 * events file from where it was left, marking the items its new lines
 * name. top_watch_read then reads each marked item once, the rows on the
 * screen first: a burst of changes to one item costs one read of its
 * status.json. Nothing is read on a timer.
 */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "top.h"

#define ITEM_MASK (IN_MODIFY | IN_CLOSE_WRITE | IN_ONLYDIR)
#define ROOT_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_ONLYDIR)

int top_watch_start(struct top_watch *w, const struct top_model *m)
{
	char path[PATH_MAX];
	struct stat st;

	memset(w, 0, sizeof(*w));
	w->events_fd = -1;
	buf_init(&w->rest);
	w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w->fd < 0)
		return -errno;
	w->root_wd = inotify_add_watch(w->fd, m->root, ROOT_MASK);
	if (w->root_wd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/events", m->root);
	w->events_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (w->events_fd < 0)
		return -errno;
	if (fstat(w->events_fd, &st) < 0)
		return -errno;
	w->events_off = (uint64_t)st.st_size;
	return 0;
}

int top_watch_alive(const struct top_watch *w)
{
	struct statfs sf;

	/* statfs is always asked of the daemon (the kernel caches none):
	 * a daemon gone answers ENOTCONN (ECONNABORTED once the connection
	 * is aborted). */
	if (w->events_fd >= 0 && fstatfs(w->events_fd, &sf) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

void top_watch_stop(struct top_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->events_fd >= 0)
		close(w->events_fd);
	buf_free(&w->rest);
	w->fd = w->events_fd = -1;
}

/* Watches item i of m. */
static void watch_item(struct top_watch *w, struct top_model *m, size_t i)
{
	char path[PATH_MAX];
	struct top_item *it = &m->items[i];

	if (it->wd != -1 ||
	    snprintf(path, sizeof(path), "%s/%s", m->root, it->name) >= (int)sizeof(path))
		return;
	it->wd = inotify_add_watch(w->fd, path, ITEM_MASK);
	if (it->wd < 0 && errno != ENOENT) {
		/* Refused (the limit of watches): not asked again. */
		it->wd = -2;
		w->unwatched++;
		w->unwatched_err = errno;
	}
}

/* Marks the item called name for a read: a known one by its mark, a new
 * one by adding it (read at once). Returns 1 when the model changed, 0 or
 * -ENOMEM. */
static int mark(struct top_watch *w, struct top_model *m, const char *name)
{
	long i = top_model_find(m, name);

	if (i >= 0) {
		m->items[i].dirty = 1;
		return 0;
	}
	if (name[0] == '\0' || name[0] == '.' || strchr(name, '/'))
		return 0;
	i = top_model_refresh(m, name);
	if (i == -ENOMEM)
		return -ENOMEM;
	if (i >= 0)
		watch_item(w, m, (size_t)i);
	return i >= 0;
}

/* Drops the item called name from m with its watch. 1 when it was there. */
static int drop(struct top_watch *w, struct top_model *m, const char *name)
{
	long i = top_model_find(m, name);
	int wd;

	if (i < 0)
		return 0;
	wd = top_model_drop(m, name);
	if (wd >= 0)
		inotify_rm_watch(w->fd, wd);
	else if (wd == -2 && w->unwatched)
		w->unwatched--;
	return 1;
}

/* Marks the items the new lines of the events file name. 1 when the model
 * changed (an item added), 0, or -errno. */
static int read_events(struct top_watch *w, struct top_model *m)
{
	char chunk[65536];
	int changed = 0, r;

	for (;;) {
		ssize_t n = util_pread(w->events_fd, chunk, sizeof(chunk), w->events_off);
		char *p, *nl;

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		w->events_off += (uint64_t)n;
		if (buf_append(&w->rest, chunk, (size_t)n) < 0)
			return -ENOMEM;
		for (p = w->rest.data; (nl = memchr(p, '\n', w->rest.len - (size_t)(p - w->rest.data)));
		     p = nl + 1) {
			cJSON *o, *item;

			*nl = '\0';
			o = cJSON_Parse(p);
			item = cJSON_GetObjectItemCaseSensitive(o, "item");
			r = cJSON_IsString(item) ? mark(w, m, item->valuestring) : 0;
			cJSON_Delete(o);
			if (r < 0)
				return r;
			changed |= r;
		}
		/* Keeps the part of a line still to come. */
		w->rest.len -= (size_t)(p - w->rest.data);
		memmove(w->rest.data, p, w->rest.len);
		w->rest.data[w->rest.len] = '\0';
	}
	return changed;
}

/* Reads item i again if it is marked. 1 when it was read, 0 when not
 * marked, or -ENOMEM. *next: the index after it (the array may move). */
static int read_one(struct top_watch *w, struct top_model *m, size_t i, size_t *next)
{
	char name[NAME_MAX + 1];
	long k;

	*next = i + 1;
	if (!m->items[i].dirty)
		return 0;
	/* The watch before the read: no change falls between. */
	watch_item(w, m, i);
	snprintf(name, sizeof(name), "%s", m->items[i].name);
	k = top_model_refresh(m, name);
	if (k == -ENOMEM)
		return -ENOMEM;
	if (k == -ENOENT) {
		drop(w, m, name);
		*next = i;
		return 1;
	}
	*next = (size_t)k + 1;
	return 1;
}

int top_watch_read(struct top_watch *w, struct top_model *m, size_t first, size_t n, size_t max)
{
	size_t i, next, done = 0, end;
	int r, changed = 0;

	/* The rows on the screen first, then from the top. */
	end = first + n < m->n ? first + n : m->n;
	for (i = first; i < end && done < max; i = next) {
		r = read_one(w, m, i, &next);
		if (r < 0)
			return r;
		done += (size_t)r;
		changed |= r;
		end = first + n < m->n ? first + n : m->n;
	}
	for (i = 0; i < m->n && done < max; i = next) {
		r = read_one(w, m, i, &next);
		if (r < 0)
			return r;
		done += (size_t)r;
		changed |= r;
	}
	return changed;
}

int top_model_unread(const struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->items[i].dirty)
			return 1;
	return 0;
}

/* Takes one inotify event. 1 when the model changed, 0, or -errno. */
static int take(struct top_watch *w, struct top_model *m, const struct inotify_event *ev)
{
	long i;

	if (ev->mask & IN_Q_OVERFLOW) {
		/* Events were lost: everything is read again. */
		int r = top_model_load(m, 0);

		/* The watches stay; each item finds its own at its read. */
		w->unwatched = 0;
		return r < 0 ? r : 1;
	}
	if (ev->wd == w->root_wd) {
		if (ev->mask & (IN_IGNORED | IN_UNMOUNT))
			return -ENODEV;
		if (ev->len == 0)
			return 0;
		if (strcmp(ev->name, "events") == 0 && (ev->mask & IN_MODIFY))
			return 0; /* read_events follows every drain */
		if (!(ev->mask & IN_ISDIR))
			return 0;
		if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
			return drop(w, m, ev->name);
		return mark(w, m, ev->name);
	}
	i = top_model_find_wd(m, ev->wd);
	if (i < 0)
		return 0;
	if (ev->mask & IN_IGNORED) {
		/* The directory went (archived): the read says so. */
		m->items[i].wd = -1;
		m->items[i].dirty = 1;
	} else if (ev->len && strcmp(ev->name, "status.json") == 0) {
		m->items[i].dirty = 1;
	}
	return 0;
}

int top_watch_drain(struct top_watch *w, struct top_model *m)
{
	char evbuf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	int changed = 0, r;

	for (;;) {
		ssize_t n = read(w->fd, evbuf, sizeof(evbuf));
		char *p;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0)
			return n < 0 ? -errno : -ENODEV;
		for (p = evbuf; p < evbuf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			r = take(w, m, ev);
			if (r < 0)
				return r;
			changed |= r;
			p += sizeof(*ev) + ev->len;
		}
	}
	r = read_events(w, m);
	if (r < 0)
		return r;
	return changed | (r > 0);
}
