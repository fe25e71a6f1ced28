/*
 * test-carry.c - what the store does for an item carried in from another
 * store (store.h: store_carry_run, store_carry_line; schema/0011_carry.sql):
 * a run restored with its whole log, its number kept and the item's next
 * run after it; registry lines kept byte for byte, the "imported" ones read
 * by evidence with "source":"imported" and their reason, and never by the
 * raw readers; "imported" refused to store_registry_append; and a store of
 * version 10 read as it was (read-only) and converted with its lines, ids
 * and append-only triggers (read-write).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store-old.h"
#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-carry-XXXXXX";

static const char engine_line[] =
	"{\"run\":7,\"recipe\":\"01-build\",\"status\":\"validated\",\"source\":\"engine\"}";
static const char old_line[] =
	"{\"run\":3,\"recipe\":\"01-build\",\"status\":\"validated\",\"note\":\"n\","
	"\"source\":\"engine\"}";

/* store_run_begin's naming callback: the stage log of its log number. */
static int name_log(void *arg, struct run *r, struct buf *event)
{
	char path[64];

	snprintf(path, sizeof(path), "stages/%d-%s.log", r->log_no, r->name);
	r->log_path = strdup(path);
	return r->log_path ? 0 : -ENOMEM;
}

TEST(carry)
{
	struct store *s = test_store_open(dir, 1, 0);
	char **lines = NULL, hex[65], buf[64];
	struct run r, got, next;
	int64_t id, size;
	size_t n;

	ASSERT_EQ(store_item_create_owned(s, "fix-1", "packetfs/fix-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
	test_run_new(&r, id, "recipe", "01-build");
	r.run_no = 7;
	r.log_path = strdup("validation/logs/T-01-build-1.log");
	r.status = RUN_VALIDATED;
	r.has_exit_code = 1;
	snprintf(r.started_at, sizeof(r.started_at), "2026-12-01T00:00:00Z");
	snprintf(r.finished_at, sizeof(r.finished_at), "2026-12-01T00:00:01Z");
	ASSERT_EQ(store_carry_run(s, &r, "the log\n", 8), 0);
	ASSERT_EQ(store_run_get(s, r.id, &got), 0);
	ASSERT_EQ(got.run_no, 7);
	ASSERT_EQ(got.has_exit_code, 1);
	ASSERT_EQ(got.exit_code, 0);
	ASSERT_EQ(got.status, RUN_VALIDATED);
	ASSERT_STREQ(got.finished_at, "2026-12-01T00:00:01Z");
	util_sha256_hex("the log\n", 8, hex);
	ASSERT_STREQ(got.log_sha256, hex);
	ASSERT_EQ(store_log_sha256(s, r.id, hex, &size), 0);
	ASSERT_STREQ(got.log_sha256, hex);
	ASSERT_EQ(size, 8);
	ASSERT_EQ(store_log_read(s, r.id, 0, buf, sizeof(buf)), 8);
	run_clear(&got);
	/* The same number again is refused; the next run comes after it. */
	ASSERT_EQ(store_carry_run(s, &r, "", 0), -EEXIST);
	test_run_new(&next, id, "stage", "plan");
	ASSERT_EQ(store_run_begin(s, &next, NULL, name_log, NULL), 0);
	ASSERT_EQ(next.run_no, 8);
	run_clear(&next);

	ASSERT_EQ(store_registry_append(s, id, old_line, "imported", 0), -EEXIST);
	ASSERT_EQ(store_carry_line(s, id, old_line, "imported", 0, "imported: ran elsewhere"), 0);
	ASSERT_EQ(store_carry_line(s, id, engine_line, "engine", r.id, ""), 0);
	ASSERT_EQ(store_registry_raw_lines(s, id, &lines, &n), 0);
	ASSERT_EQ(n, 2);
	ASSERT_STREQ(lines[0], old_line);
	ASSERT_STREQ(lines[1], engine_line);
	strv_free(lines);
	ASSERT_EQ(store_registry_lines(s, id, &lines, &n), 0);
	ASSERT_EQ(n, 2);
	ASSERT_CONTAINS(lines[0], "\"source\":\"imported\"");
	ASSERT_CONTAINS(lines[0], "\"note\":\"imported: ran elsewhere\"");
	ASSERT_STREQ(lines[1], engine_line);
	strv_free(lines);
	run_clear(&r);
	store_close(s);
}

TEST(version_10)
{
	struct store *s;
	struct item it;
	char **lines = NULL;
	size_t n;
	int ro;

	store_old_downgrade(dir, 10, NULL);
	for (ro = 1; ro >= 0; ro--) {
		s = test_store_item(dir, ro, "fix-1", &it);
		ASSERT_EQ(store_registry_lines(s, it.id, &lines, &n), 0);
		ASSERT_EQ(n, 1);
		ASSERT_STREQ(lines[0], engine_line);
		strv_free(lines);
		item_clear(&it);
		store_close(s);
	}
	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_carry_line(s, it.id, old_line, "imported", 0, "why"), 0);
	pthread_mutex_lock(&s->lock); /* store__ helpers run under the store's lock */
	ASSERT_EQ(store__exec(s, "UPDATE registry SET line = ''", ""), -EPERM);
	ASSERT_EQ(store__exec(s, "DELETE FROM registry", ""), -EPERM);
	pthread_mutex_unlock(&s->lock);
	ASSERT_EQ(store_registry_raw_lines(s, it.id, &lines, &n), 0);
	ASSERT_EQ(n, 2);
	strv_free(lines);
	item_clear(&it);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(carry), CASE(version_10))
