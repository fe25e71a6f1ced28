/*
 * test-run-end.c - store_run_start and store_run_end, a run's start and
 * end in one transaction each: the run row, the logs, the registry line
 * made from the sealed row, the item row and the event are stored
 * together, and a failure at any step (here, the registry line's callback,
 * or a registry line the database refuses) stores none of them; the sizes
 * of the registry and events views the store keeps follow what was stored.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-old.h"
#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-run-end-XXXXXX";

static int name_cb(void *arg, struct run *r, struct buf *event)
{
	(void)arg, (void)event;
	free(r->log_path);
	r->log_path = strdup("validation/logs/T-01-build-1.log");
	return 0;
}

/* The registry line of the sealed run: its status and log sha256, or NULL
 * (no memory) when arg says so. */
static char *line_cb(void *arg, const struct run *r)
{
	char *line;

	if (arg)
		return NULL;
	line = malloc(160);
	snprintf(line, 160, "{\"status\":\"%s\",\"log_sha256\":\"%s\",\"size\":%lld}",
		 run_status_name(r->status), r->log_sha256, (long long)r->log_size);
	return line;
}

/* A text of the store's (registry, events) as one string (caller frees). */
static char *text_of(struct store *s, int64_t id, int events)
{
	char **lines = NULL;
	struct buf b;
	size_t i, n = 0;

	buf_init(&b);
	if (events) {
		ASSERT_EQ(store_events_render(s, id, &b), 0);
	} else {
		ASSERT_EQ(store_registry_lines(s, id, &lines, &n), 0);
		for (i = 0; i < n; i++)
			buf_printf(&b, "%s\n", lines[i]);
		strv_free(lines);
	}
	return b.data ? b.data : strdup("");
}

/* The log of run id as text (caller frees). */
static char *log_of(struct store *s, int64_t id)
{
	char *b = calloc(1, 4096);
	ssize_t n = store_log_read(s, id, 0, b, 4095);

	ASSERT(n >= 0);
	return b;
}

/* The sizes the store keeps equal what it renders. */
static void assert_sizes(struct store *s, int64_t id)
{
	uint64_t size;
	char *t;

	t = text_of(s, id, 0);
	ASSERT_EQ(store_registry_size(s, id, &size), 0);
	ASSERT_EQ(size, strlen(t));
	free(t);
	t = text_of(s, id, 1);
	ASSERT_EQ(store_events_size(s, id, &size), 0);
	ASSERT_EQ(size, strlen(t));
	free(t);
}

TEST(start_and_end)
{
	struct run r, stage, got;
	struct item it, now;
	char *t, hex[65];
	uint64_t size;
	int64_t id;
	struct store *s = test_store_new_item(dir, "fix-1", &id);

	ASSERT_EQ(store_events_size(s, id, &size), 0); /* cached from here on */
	ASSERT_EQ(store_registry_size(s, id, &size), 0);
	test_run_new(&stage, id, "stage", "validate");
	ASSERT_EQ(store_run_begin(s, &stage, NULL, name_cb, NULL), 0);
	test_run_new(&r, id, "recipe", "01-build");
	ASSERT_EQ(store_run_begin(s, &r, NULL, name_cb, NULL), 0);

	/* The start: the process group, the header, the event. */
	r.pgid = 4242;
	ASSERT_EQ(store_run_start(s, &r, "# header\n", 9, "{\"type\":\"recipe_started\"}"), 0);
	ASSERT_EQ(store_run_get(s, r.id, &got), 0);
	ASSERT_EQ(got.pgid, 4242);
	ASSERT_EQ(got.log_size, 9);
	run_clear(&got);
	t = text_of(s, id, 1);
	ASSERT_STREQ(t, "{\"type\":\"recipe_started\"}\n");
	free(t);
	assert_sizes(s, id);

	/* An end whose registry line cannot be made: nothing of it stays. */
	ASSERT_EQ(store_item_get_id(s, id, &it), 0);
	it.state = ITEM_WAITING;
	r.status = RUN_VALIDATED;
	r.has_exit_code = 1;
	snprintf(r.finished_at, sizeof(r.finished_at), "2026-12-01T00:00:01Z");
	{
		struct store_log_piece logs[2] = {{r.id, "out\n# footer\n", 13},
						  {stage.id, "[packetfs] 01-build: validated\n", 31}};

		ASSERT_EQ(store_run_end(s, &r, logs, 2, line_cb, (void *)1, &it,
					"{\"type\":\"recipe_finished\"}"), -ENOMEM);
		ASSERT_EQ(store_run_get(s, r.id, &got), 0);
		ASSERT_EQ(got.status, RUN_RUNNING);
		ASSERT_EQ(got.log_size, 9);
		ASSERT_STREQ(got.log_sha256, "");
		run_clear(&got);
		t = log_of(s, stage.id);
		ASSERT_STREQ(t, "");
		free(t);
		t = text_of(s, id, 0);
		ASSERT_STREQ(t, "");
		free(t);
		t = text_of(s, id, 1);
		ASSERT_STREQ(t, "{\"type\":\"recipe_started\"}\n"); /* the start's only */
		free(t);
		ASSERT_EQ(store_item_get_id(s, id, &now), 0);
		ASSERT(now.state != ITEM_WAITING);
		item_clear(&now);
		assert_sizes(s, id);

		/* The end: all of it, the line made from the sealed row. */
		ASSERT_EQ(store_run_end(s, &r, logs, 2, line_cb, NULL, &it,
					"{\"type\":\"recipe_finished\"}"), 0);
	}
	ASSERT_EQ(store_log_sha256(s, r.id, hex, NULL), 0);
	ASSERT_STREQ(r.log_sha256, hex);
	ASSERT_EQ(r.log_size, 22);
	ASSERT_EQ(store_run_get(s, r.id, &got), 0);
	ASSERT_EQ(got.status, RUN_VALIDATED);
	ASSERT_STREQ(got.log_sha256, hex);
	ASSERT_EQ(got.log_size, 22);
	run_clear(&got);
	t = log_of(s, r.id);
	ASSERT_STREQ(t, "# header\nout\n# footer\n");
	free(t);
	t = log_of(s, stage.id);
	ASSERT_STREQ(t, "[packetfs] 01-build: validated\n");
	free(t);
	t = text_of(s, id, 0);
	ASSERT_CONTAINS(t, hex);
	ASSERT_CONTAINS(t, "\"status\":\"validated\"");
	free(t);
	t = text_of(s, id, 1);
	ASSERT_STREQ(t, "{\"type\":\"recipe_started\"}\n{\"type\":\"recipe_finished\"}\n");
	free(t);
	ASSERT_EQ(store_item_get_id(s, id, &now), 0);
	ASSERT_EQ(now.state, ITEM_WAITING);
	item_clear(&now);
	assert_sizes(s, id);
	item_clear(&it);
	run_clear(&r);
	run_clear(&stage);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(start_and_end))
