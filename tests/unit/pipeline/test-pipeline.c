/*
 * test-pipeline.c - the pipeline layer's handle without its loop
 * (pipeline.h): opening it over a store with and without a configuration,
 * replacing the configuration (refused with the reason and an event, old
 * pointers kept valid, stored for the next open), the recipe catalog
 * following its directory, events and the hooks that tell the layers
 * above, a read-only pipeline, and the refusals of a pipeline whose loop
 * does not run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline.h"
#include "test.h"

static char dir[] = "/tmp/pfs-pipeline-XXXXXX";
static char store_dir[256], repo[256], recipes[256];

/* What the hooks were told, as "ITEM:REL:WHAT" lines ("-" for a root path); a test
 * empties it with buf_free before the calls it watches. */
static struct buf told;

static void on_changed(void *arg, const char *item, const char *rel, enum pipeline_change what)
{
	static const char *const names[] = {"modified", "created", "archived", "times"};

	ASSERT(arg == &told);
	buf_printf(&told, "%s:%s:%s\n", item ? item : "-", rel, names[what]);
}

static void on_doc_written(void *arg, int64_t item_id, const char *rel)
{
	ASSERT(arg == &told);
	buf_printf(&told, "doc %lld:%s\n", (long long)item_id, rel);
}

static struct store *open_store(int readonly)
{
	struct store *s = NULL;
	char err[256] = "";

	ASSERT_EQ(store_open(store_dir, 0, readonly, &s, err, sizeof(err)), 0);
	return s;
}

static struct pipeline *open_pipeline(struct store *s, int readonly)
{
	struct pipeline_options o = {0};
	struct pipeline *pl = NULL;
	char err[256] = "";

	o.store = s;
	o.store_dir = store_dir;
	o.readonly = readonly;
	o.hooks.changed = on_changed;
	o.hooks.doc_written = on_doc_written;
	o.hooks.arg = &told;
	ASSERT_EQ(pipeline_open(&o, &pl, err, sizeof(err)), 0);
	return pl;
}

static void write_recipe(const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", recipes, name);
	f = fopen(path, "w");
	ASSERT(f != NULL);
	fprintf(f, "#!/bin/sh\n# %s: a recipe of the test\ntrue\n", name);
	ASSERT_EQ(fclose(f), 0);
	ASSERT_EQ(chmod(path, 0755), 0);
}

/* A store that holds no configuration cannot be opened as a pipeline. */
TEST(open_without_configuration)
{
	struct store *s = NULL;
	struct pipeline_options o = {0};
	struct pipeline *pl = NULL;
	char err[256] = "";

	ASSERT_EQ(store_open(store_dir, 1, 0, &s, err, sizeof(err)), 0);
	o.store = s;
	o.store_dir = store_dir;
	ASSERT(pipeline_open(&o, &pl, err, sizeof(err)) < 0);
	ASSERT(pl == NULL);
	ASSERT_CONTAINS(err, "store has no pipeline configuration");
	store_close(s);
}

/* Open, read the configuration and its JSON, replace it, reopen. */
TEST(configuration)
{
	struct store *s;
	struct pipeline *pl;
	struct pfs_config *first, *second;
	char *json = config_default_json(repo, "main", recipes), *meta = NULL;
	char err[512] = "";
	struct buf out, ev;

	ASSERT(json != NULL);
	s = open_store(0);
	ASSERT_EQ(store_meta_set(s, "pipeline", json), 0);
	pl = open_pipeline(s, 0);
	first = pipeline_config_get(pl);
	ASSERT(first != NULL);
	ASSERT_STREQ(first->repo, repo);
	buf_init(&out);
	ASSERT_EQ(pipeline_config_json(pl, &out), 0);
	ASSERT_STREQ(out.data, json);
	ASSERT(out.data[out.len - 1] == '\n');
	buf_free(&out);

	/* Refused: the reason, a config_rejected event, the old one kept. */
	buf_free(&told);
	ASSERT_EQ(pipeline_config_set(pl, "{\"repo\": 1}", 11, err, sizeof(err)), -EINVAL);
	ASSERT(err[0] != '\0');
	ASSERT(pipeline_config_get(pl) == first);
	ASSERT_CONTAINS(told.data, "-:events:modified\n");
	buf_init(&ev);
	ASSERT_EQ(store_events_render(s, 0, &ev), 0);
	ASSERT_CONTAINS(ev.data, "\"type\":\"config_rejected\"");
	buf_free(&ev);
	buf_free(&told);

	/* A repository that does not exist is refused by the world check. */
	free(json);
	json = config_default_json("/nonexistent", "main", NULL);
	err[0] = '\0';
	ASSERT_EQ(pipeline_config_set(pl, json, strlen(json), err, sizeof(err)), -EINVAL);
	ASSERT_CONTAINS(err, "/nonexistent");
	ASSERT(pipeline_config_get(pl) == first);

	/* Taken: a new configuration in force, the old pointer still valid. */
	free(json);
	json = config_default_json(repo, "main", NULL);
	ASSERT_EQ(pipeline_config_set(pl, json, strlen(json), err, sizeof(err)), 0);
	second = pipeline_config_get(pl);
	ASSERT(second != first);
	ASSERT(second->recipes_dir == NULL);
	ASSERT_STREQ(first->recipes_dir, recipes);
	ASSERT_EQ(store_meta_get(s, "pipeline", &meta), 0);
	ASSERT_STREQ(meta, json);
	free(meta);
	buf_init(&ev);
	ASSERT_EQ(store_events_render(s, 0, &ev), 0);
	ASSERT_CONTAINS(ev.data, "\"type\":\"config_changed\"");
	buf_free(&ev);
	pipeline_close(pl);

	/* The next open reads the stored one. */
	pl = open_pipeline(s, 0);
	ASSERT(pipeline_config_get(pl)->recipes_dir == NULL);
	pipeline_close(pl);
	store_close(s);
	free(json);
}

/* The catalog follows recipes_dir: a new recipe file is in the next hold. */
TEST(catalog)
{
	struct store *s = open_store(0);
	char *json = config_default_json(repo, "main", recipes);
	char err[512] = "";
	const struct recipe_catalog *cat;
	struct pipeline *pl;

	ASSERT_EQ(store_meta_set(s, "pipeline", json), 0);
	write_recipe("01-build");
	pl = open_pipeline(s, 0);
	cat = pipeline_recipes_hold(pl);
	ASSERT_EQ(cat->n, 1);
	ASSERT(recipe_find(cat, "01-build") != NULL);
	pipeline_recipes_release(pl);
	sleep(1); /* a new mtime for the directory, whatever its resolution */
	write_recipe("02-lint");
	cat = pipeline_recipes_hold(pl);
	ASSERT_EQ(cat->n, 2);
	ASSERT(recipe_find(cat, "02-lint") != NULL);
	pipeline_recipes_release(pl);
	ASSERT_EQ(pipeline_config_set(pl, json, strlen(json), err, sizeof(err)), 0);
	cat = pipeline_recipes_hold(pl);
	ASSERT_EQ(cat->n, 2);
	pipeline_recipes_release(pl);
	pipeline_close(pl);
	store_close(s);
	free(json);
}

/* An item's event reaches the store and tells the hooks which files show
 * it; a read-only pipeline records nothing and refuses what writes. */
TEST(events_and_hooks)
{
	struct store *s = open_store(0), *ro;
	struct pipeline *pl = open_pipeline(s, 0);
	char *json = config_default_json(repo, "main", NULL);
	char err[512] = "";
	struct buf ev;
	int64_t id;

	ASSERT_EQ(store_item_create_owned(s, "fix-1", "packetfs/fix-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
	buf_free(&told);
	pipeline_event(pl, id, "fix-1", "recipe_started", ",\"recipe\":\"01-build\"");
	ASSERT_CONTAINS(told.data, "-:events:modified\n");
	ASSERT_CONTAINS(told.data, "fix-1:events:modified\n");
	ASSERT_CONTAINS(told.data, "fix-1:status:modified\n");
	ASSERT_CONTAINS(told.data, "fix-1:status.json:modified\n");
	ASSERT_CONTAINS(told.data, "fix-1:validation/record:modified\n");
	buf_free(&told);
	pipeline_event(pl, id, "fix-1", "approved", NULL);
	ASSERT(strstr(told.data, "validation/record") == NULL);
	buf_free(&told);
	buf_init(&ev);
	ASSERT_EQ(store_events_render(s, id, &ev), 0);
	ASSERT_CONTAINS(ev.data, "\"item\":\"fix-1\",\"type\":\"recipe_started\",\"recipe\":\"01-build\"}");
	ASSERT_CONTAINS(ev.data, "\"type\":\"approved\"}");
	buf_free(&ev);
	pipeline_close(pl);

	ro = open_store(1);
	pl = open_pipeline(ro, 1);
	buf_free(&told);
	pipeline_event(pl, id, "fix-1", "ignored", NULL);
	ASSERT(told.data == NULL || told.len == 0);
	ASSERT_EQ(pipeline_config_set(pl, json, strlen(json), err, sizeof(err)), -EROFS);
	ASSERT_EQ(pipeline_start(pl), -EINVAL);
	ASSERT_EQ(pipeline_recover(pl), -EROFS);
	buf_free(&told);
	pipeline_close(pl);
	store_close(ro);
	buf_init(&ev);
	ASSERT_EQ(store_events_render(s, id, &ev), 0);
	ASSERT(strstr(ev.data, "ignored") == NULL);
	buf_free(&ev);
	store_close(s);
	free(json);
}

/* Without its loop: every call to it is refused, nothing runs. */
TEST(not_started)
{
	struct store *s = open_store(0);
	struct pipeline *pl = open_pipeline(s, 0);
	char *argv[] = {"true", NULL};
	struct record_req req = {"01-build", argv, -1, -1, 0, 0, NULL};
	struct pipe_cmd cmd;
	char why[256], log[256], out[64] = "x";
	int64_t run_id = -1;
	int run_no = -1;

	memset(&cmd, 0, sizeof(cmd));
	snprintf(cmd.item, sizeof(cmd.item), "fix-1");
	snprintf(cmd.verb, sizeof(cmd.verb), "advance");
	ASSERT_EQ(pipeline_call(pl, &cmd), -ENOTCONN);
	ASSERT_EQ(pipeline_record(pl, "fix-1", &req, &run_id, &run_no, log, sizeof(log), why,
				  sizeof(why)), -ENOTCONN);
	ASSERT_STREQ(why, "the pipeline is not running");
	ASSERT_EQ(run_id, -1);
	ASSERT_EQ(pipeline_record_cancel(pl, "fix-1", 1, why, sizeof(why)), -ENOTCONN);
	ASSERT_EQ(pipeline_active_item(pl, 1), 0);
	pipeline_active_running(pl, 1, out, sizeof(out));
	ASSERT_STREQ(out, "");
	pipeline_active_gpus(pl, 1, out, sizeof(out));
	ASSERT_STREQ(out, "");
	pipeline_active_stage_of(pl, getpid(), out, sizeof(out));
	ASSERT_STREQ(out, "");
	pipeline_close(pl);
	store_close(s);
}

int main(void)
{
	char cmd[1024];

	ASSERT(mkdtemp(dir) != NULL);
	snprintf(store_dir, sizeof(store_dir), "%s/store", dir);
	snprintf(repo, sizeof(repo), "%s/repo", dir);
	snprintf(recipes, sizeof(recipes), "%s/recipes", dir);
	ASSERT_EQ(mkdir(store_dir, 0700), 0);
	ASSERT_EQ(mkdir(recipes, 0755), 0);
	snprintf(cmd, sizeof(cmd),
		 "git init -q -b main %s && git -C %s -c user.name=t -c user.email=t@t "
		 "commit -q --allow-empty -m base",
		 repo, repo);
	ASSERT_EQ(system(cmd), 0);
	ASSERT_EQ(repo_global_init(), 0);
	RUN(open_without_configuration);
	RUN(configuration);
	RUN(catalog);
	RUN(events_and_hooks);
	RUN(not_started);
	buf_free(&told);
	return test_rmtree(dir);
}
