/*
 * test-run-begin.c - store_run_begin, the start of a run in one
 * transaction: the run number, the run row, the item row and the events
 * are stored together, and a failure at any step (here, the naming
 * callback's, or a run row the database refuses) stores none of them;
 * logs number themselves per kind (stage logs among stage logs, recipe
 * logs among recipe logs), after any number a store's older names used;
 * the events' size the store keeps follows what was stored. And
 * store__err's translation of a full disk: SQLITE_FULL is ENOSPC, an I/O
 * error without a system errno stays EIO (an I/O error whose errno is
 * ENOSPC is met on a real full disk: tests/bad/disk-full-*.sh).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store-old.h"
#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-run-begin-XXXXXX";

struct naming {
	int fail;       /* the callback's return */
	int events;     /* event lines it adds */
};

static int name_cb(void *arg, struct run *r, struct buf *event)
{
	struct naming *n = arg;
	char path[64];
	int i;

	if (strcmp(r->kind, "stage") == 0)
		snprintf(path, sizeof(path), "stages/%d-%s.log", r->log_no, r->name);
	else
		snprintf(path, sizeof(path), "validation/logs/T-%s-%d.log", r->name, r->log_no);
	free(r->log_path);
	r->log_path = strdup(path);
	for (i = 0; i < n->events; i++)
		buf_printf(event, "{\"type\":\"e%d\",\"run\":%d}\n", i, r->run_no);
	return n->fail;
}

static void fill_run(struct run *r, int64_t item_id)
{
	test_run_new(r, item_id, "stage", "plan");
	snprintf(r->head, sizeof(r->head), "%040d", 0);
	snprintf(r->started_at, sizeof(r->started_at), "2026-12-01T00:00:00Z");
}

/* The item's events as one text (freed by the caller). */
static char *events_of(struct store *s, int64_t id)
{
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(store_events_render(s, id, &b), 0);
	return b.data ? b.data : strdup("");
}

/* Sets the run sequence of every item behind the store's back. */
static void set_run_seq(struct store *s, int seq)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "UPDATE items SET run_seq = %d", seq);
	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__script(s, sql), 0);
	pthread_mutex_unlock(&s->lock);
}

/* What the first run's start left, and nothing more: the item running,
 * the run's two events, their size as counted. */
static void assert_after_run_1(struct store *s, int64_t id)
{
	struct item now;
	uint64_t size;
	char *ev;

	ASSERT_EQ(store_item_get_id(s, id, &now), 0);
	ASSERT_EQ(now.state, ITEM_RUNNING);
	item_clear(&now);
	ev = events_of(s, id);
	ASSERT_STREQ(ev, "{\"type\":\"e0\",\"run\":1}\n{\"type\":\"e1\",\"run\":1}\n");
	ASSERT_EQ(store_events_size(s, id, &size), 0);
	ASSERT_EQ(size, strlen(ev));
	free(ev);
}

TEST(atomic)
{
	struct naming n = { 0, 2 };
	struct item it;
	struct run r, got;
	uint64_t size;
	int64_t id;
	struct store *s = test_store_new_item(dir, "fix-1", &id);

	ASSERT_EQ(store_events_size(s, id, &size), 0); /* cached from here on */
	ASSERT_EQ(size, 0);

	/* Success: all of it. */
	ASSERT_EQ(store_item_get_id(s, id, &it), 0);
	it.state = ITEM_RUNNING;
	fill_run(&r, id);
	ASSERT_EQ(store_run_begin(s, &r, &it, name_cb, &n), 0);
	ASSERT_EQ(r.run_no, 1);
	ASSERT_STREQ(r.log_path, "stages/1-plan.log");
	ASSERT_EQ(store_run_get(s, r.id, &got), 0);
	ASSERT_STREQ(got.log_path, "stages/1-plan.log");
	run_clear(&got);
	assert_after_run_1(s, id);
	run_clear(&r);

	/* The callback fails after the run number was taken: nothing stays. */
	it.state = ITEM_FAILED;
	n.fail = -ENOSPC;
	fill_run(&r, id);
	ASSERT_EQ(store_run_begin(s, &r, &it, name_cb, &n), -ENOSPC);
	run_clear(&r);
	/* A run row the database refuses (its run number is taken: the item's
	 * sequence is set back) after the events were made: nothing stays. */
	set_run_seq(s, 0);
	n.fail = 0;
	fill_run(&r, id);
	ASSERT_EQ(store_run_begin(s, &r, &it, name_cb, &n), -EEXIST);
	run_clear(&r);
	set_run_seq(s, 1);
	assert_after_run_1(s, id);
	n.events = 0;
	fill_run(&r, id);
	ASSERT_EQ(store_run_begin(s, &r, NULL, name_cb, &n), 0);
	ASSERT_EQ(r.run_no, 2); /* the refused starts took no run number */
	run_clear(&r);
	item_clear(&it);
	store_close(s);
}

/* Starts a run of kind and name; returns its log number (the path checked
 * against it by the caller). */
static int start(struct store *s, int64_t id, const char *kind, const char *name,
		 const char *want_path)
{
	struct naming n = { 0, 0 };
	struct run r;
	int no;

	fill_run(&r, id);
	snprintf(r.kind, sizeof(r.kind), "%s", kind);
	free(r.name);
	r.name = strdup(name);
	ASSERT_EQ(store_run_begin(s, &r, NULL, name_cb, &n), 0);
	ASSERT_STREQ(r.log_path, want_path);
	no = r.log_no;
	run_clear(&r);
	return no;
}

TEST(log_numbers)
{
	struct store *s = NULL;
	struct run old;
	char err[256] = "";
	int64_t id, id2;

	ASSERT_EQ(store_open(dir, 1, 0, &s, err, sizeof(err)), 0);
	ASSERT_EQ(store_item_create_owned(s, "num-1", "packetfs/num-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
	ASSERT_EQ(store_item_create_owned(s, "num-2", "packetfs/num-2", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id2), 0);
	/* Stages and recipes interleaved: each kind counts 1, 2, 3. */
	ASSERT_EQ(start(s, id, "stage", "plan", "stages/1-plan.log"), 1);
	ASSERT_EQ(start(s, id, "recipe", "01-build", "validation/logs/T-01-build-1.log"), 1);
	ASSERT_EQ(start(s, id, "recipe", "02-lint", "validation/logs/T-02-lint-2.log"), 2);
	ASSERT_EQ(start(s, id, "stage", "print", "stages/2-print.log"), 2);
	ASSERT_EQ(start(s, id, "recipe", "01-build", "validation/logs/T-01-build-3.log"), 3);
	ASSERT_EQ(start(s, id, "stage", "review", "stages/3-review.log"), 3);
	/* Another item counts from 1. */
	ASSERT_EQ(start(s, id2, "stage", "plan", "stages/1-plan.log"), 1);
	/* Logs named by run number (an older store): the numbers go on after
	 * the largest, so no new name meets an old one (carried in as such
	 * a store left them). */
	fill_run(&old, id2);
	old.run_no = 40;
	old.log_path = strdup("stages/40-print.log");
	ASSERT_EQ(store_carry_run(s, &old, NULL, 0), 0);
	run_clear(&old);
	fill_run(&old, id2);
	old.run_no = 41;
	snprintf(old.kind, sizeof(old.kind), "recipe");
	old.log_path = strdup("validation/logs/2026-11-29T16-02-11Z-03-unit-2-tests-41.log");
	ASSERT_EQ(store_carry_run(s, &old, NULL, 0), 0);
	run_clear(&old);
	ASSERT_EQ(start(s, id2, "stage", "print", "stages/41-print.log"), 41);
	ASSERT_EQ(start(s, id2, "recipe", "01-build", "validation/logs/T-01-build-42.log"), 42);
	store_close(s);
}

TEST(full_disk_errno)
{
	struct store *s = NULL;
	char err[256] = "";

	ASSERT_EQ(store_open(dir, 0, 0, &s, err, sizeof(err)), 0);
	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__err(s, SQLITE_FULL), -ENOSPC);
	ASSERT_EQ(store__err(s, SQLITE_IOERR_WRITE), -EIO); /* no system errno: EIO */
	pthread_mutex_unlock(&s->lock);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(atomic), CASE(log_numbers), CASE(full_disk_errno))
