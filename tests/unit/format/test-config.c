/*
 * test-config.c - pipeline.json parsing and validation (engine/format/config.c).
 *
 * Data-driven cases live in tests/data/good/pipeline and tests/data/bad/pipeline
 * under $PACKETFS_SOURCE_ROOT: every good file must parse, every bad one must
 * be refused with -EINVAL and a message. The inline cases pin the defaults, the
 * parsed values, the wording of messages, and that the embedded JSON Schema
 * names exactly the keys the C validator knows.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "schema.h"
#include "test.h"
#include "util.h"

#ifndef PACKETFS_DEFAULT_MAX_DOC
#define PACKETFS_DEFAULT_MAX_DOC 67108864
#endif

static int parse(const char *json, struct pfs_config **cfg, char *err, size_t errlen)
{
	return config_parse(json, strlen(json), cfg, err, errlen);
}

/* Parses json expecting -EINVAL with a message containing want. */
static void expect_bad(const char *json, const char *want)
{
	struct pfs_config *cfg = NULL;
	char err[256];

	memset(err, 'x', sizeof(err));
	ASSERT_EQ(parse(json, &cfg, err, sizeof(err)), -EINVAL);
	ASSERT(cfg == NULL);
	ASSERT_CONTAINS(err, want);
}

/* Runs fn on every *.json file of tests/data/<kind>/pipeline; returns the count. */
static int for_each_case(const char *kind, void (*fn)(const char *path, const char *text,
							size_t len))
{
	const char *root = getenv("PACKETFS_SOURCE_ROOT");
	char dir[4096], path[8192];
	struct dirent *de;
	size_t len;
	char *text;
	int n = 0;
	DIR *d;

	if (!root)
		FAIL_AT("PACKETFS_SOURCE_ROOT is not set");
	snprintf(dir, sizeof(dir), "%s/tests/data/%s/pipeline", root, kind);
	d = opendir(dir);
	if (!d)
		FAIL_AT("cannot open %s", dir);
	while ((de = readdir(d)) != NULL) {
		size_t k = strlen(de->d_name);

		if (k < 6 || strcmp(de->d_name + k - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ASSERT_EQ(util_read_file(path, 1 << 20, &text, &len), 0);
		fn(path, text, len);
		free(text);
		n++;
	}
	closedir(d);
	return n;
}

static void check_good(const char *path, const char *text, size_t len)
{
	struct pfs_config *cfg = NULL;
	char err[256] = "";
	int rc = config_parse(text, len, &cfg, err, sizeof(err));

	if (rc != 0)
		FAIL_AT("%s: expected to parse, got %d: %s", path, rc, err);
	ASSERT(cfg->repo && cfg->repo[0] == '/');
	ASSERT(cfg->base && cfg->base[0]);
	ASSERT(cfg->nstages >= 1);
	ASSERT(cfg->stages[0].produces != NULL);
	config_free(cfg);
}

static void check_bad(const char *path, const char *text, size_t len)
{
	struct pfs_config *cfg = NULL;
	char err[256] = "";
	int rc = config_parse(text, len, &cfg, err, sizeof(err));

	if (rc != -EINVAL)
		FAIL_AT("%s: expected -EINVAL, got %d", path, rc);
	if (!err[0] || !strstr(err, ": "))
		FAIL_AT("%s: no \"field: why\" message: \"%s\"", path, err);
	ASSERT(cfg == NULL);
}

TEST(data_good)
{
	ASSERT(for_each_case("good", check_good) >= 5);
}

TEST(data_bad)
{
	ASSERT(for_each_case("bad", check_bad) >= 12);
}

TEST(defaults)
{
	struct pfs_config *cfg = NULL;
	const struct pfs_stage *st;

	ASSERT_EQ(parse("{\"repo\": \"/srv/repo\", \"stages\": [{\"name\": \"plan\"}]}", &cfg,
			NULL, 0), 0);
	ASSERT_STREQ(cfg->repo, "/srv/repo");
	ASSERT_STREQ(cfg->base, "main");
	ASSERT(cfg->recipes_dir == NULL);
	ASSERT_EQ(cfg->gpu_mode, GPU_AUTO);
	ASSERT(cfg->gpu_ids == NULL);
	ASSERT_EQ(cfg->max_parallel_recipes, 2);
	ASSERT_EQ(cfg->max_parallel_items, 0);
	ASSERT_EQ(cfg->on_interrupt_fail, 0);
	ASSERT_EQ(cfg->cancel_grace_s, 5);
	ASSERT_EQ(cfg->max_doc_size, PACKETFS_DEFAULT_MAX_DOC);
	ASSERT_EQ(cfg->nstages, 1);
	st = &cfg->stages[0];
	ASSERT_STREQ(st->name, "plan");
	ASSERT(st->run == NULL);
	ASSERT(st->produces != NULL && st->produces[0] == NULL);
	ASSERT_EQ(st->timeout_s, STAGE_TIMEOUT_DEFAULT_S);
	ASSERT_EQ(st->gate_approve, 0);
	ASSERT_EQ(st->recipes_from_plan, 0);
	ASSERT(st->on_needs_changes == NULL);
	ASSERT_EQ(st->max_iterations, 3);
	ASSERT(st->push_remote == NULL);
	config_free(cfg);
}

TEST(all_fields)
{
	static const char json[] =
		"{\"repo\": \"/abs/repo\", \"base\": \"develop\","
		" \"recipes_dir\": \"/abs/recipes\","
		" \"gpus\": [3, 1], \"max_parallel_recipes\": 4, \"max_parallel_items\": 6,"
		" \"on_interrupt\": \"fail\", \"cancel_grace_s\": 0, \"max_doc_size\": 1024,"
		" \"stages\": ["
		"  {\"name\": \"plan\", \"run\": [\"/bin/plan\", \"--fast\"],"
		"   \"produces\": [\"plan.md\", \"notes/a.md\"], \"timeout_s\": 3600},"
		"  {\"name\": \"print\"},"
		"  {\"name\": \"validate\", \"recipes\": \"plan\"},"
		"  {\"name\": \"review\", \"on_needs_changes\": \"print\", \"max_iterations\": 5},"
		"  {\"name\": \"publish\", \"gate\": \"approve\","
		"   \"push\": {\"remote\": \"origin\"}}"
		"]}";
	struct pfs_config *cfg = NULL;
	const struct pfs_stage *st;
	size_t index = 99;

	ASSERT_EQ(parse(json, &cfg, NULL, 0), 0);
	ASSERT_STREQ(cfg->base, "develop");
	ASSERT_STREQ(cfg->recipes_dir, "/abs/recipes");
	ASSERT_EQ(cfg->gpu_mode, GPU_LIST);
	ASSERT_EQ(cfg->gpu_count, 2);
	ASSERT_EQ(cfg->gpu_ids[0], 3);
	ASSERT_EQ(cfg->gpu_ids[1], 1);
	ASSERT_EQ(cfg->max_parallel_recipes, 4);
	ASSERT_EQ(cfg->max_parallel_items, 6);
	ASSERT_EQ(cfg->on_interrupt_fail, 1);
	ASSERT_EQ(cfg->cancel_grace_s, 0);
	ASSERT_EQ(cfg->max_doc_size, 1024);
	ASSERT_EQ(cfg->nstages, 5);

	st = &cfg->stages[0];
	ASSERT_EQ(strv_len(st->run), 2);
	ASSERT_STREQ(st->run[0], "/bin/plan");
	ASSERT_STREQ(st->run[1], "--fast");
	ASSERT_EQ(strv_len(st->produces), 2);
	ASSERT_STREQ(st->produces[1], "notes/a.md");
	ASSERT_EQ(st->timeout_s, 3600);
	ASSERT_EQ(cfg->stages[2].recipes_from_plan, 1);
	ASSERT_EQ(cfg->stages[1].recipes_from_plan, 0);

	st = config_stage(cfg, "review", &index);
	ASSERT(st == &cfg->stages[3]);
	ASSERT_EQ(index, 3);
	ASSERT_STREQ(st->on_needs_changes, "print");
	ASSERT_EQ(st->max_iterations, 5);

	st = config_stage(cfg, "publish", NULL);
	ASSERT(st != NULL);
	ASSERT_EQ(st->gate_approve, 1);
	ASSERT_STREQ(st->push_remote, "origin");
	ASSERT(st->run == NULL);

	ASSERT(config_stage(cfg, "deploy", &index) == NULL);
	ASSERT_EQ(index, 3);
	ASSERT(config_stage(cfg, "Plan", NULL) == NULL);
	config_free(cfg);
}

TEST(gpus_forms)
{
	struct pfs_config *cfg = NULL;

	ASSERT_EQ(parse("{\"repo\": \"/r\", \"gpus\": \"auto\", \"stages\": [{\"name\": \"a\"}]}",
			&cfg, NULL, 0), 0);
	ASSERT_EQ(cfg->gpu_mode, GPU_AUTO);
	config_free(cfg);
	ASSERT_EQ(parse("{\"repo\": \"/r\", \"gpus\": 4, \"stages\": [{\"name\": \"a\"}]}", &cfg,
			NULL, 0), 0);
	ASSERT_EQ(cfg->gpu_mode, GPU_SLOTS);
	ASSERT_EQ(cfg->gpu_count, 4);
	config_free(cfg);
	ASSERT_EQ(parse("{\"repo\": \"/r\", \"gpus\": 0, \"stages\": [{\"name\": \"a\"}]}", &cfg,
			NULL, 0), 0);
	ASSERT_EQ(cfg->gpu_mode, GPU_SLOTS);
	ASSERT_EQ(cfg->gpu_count, 0);
	config_free(cfg);
	ASSERT_EQ(parse("{\"repo\": \"/r\", \"gpus\": [], \"stages\": [{\"name\": \"a\"}]}", &cfg,
			NULL, 0), 0);
	ASSERT_EQ(cfg->gpu_mode, GPU_LIST);
	ASSERT_EQ(cfg->gpu_count, 0);
	ASSERT(cfg->gpu_ids != NULL);
	config_free(cfg);
}

TEST(messages)
{
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}, {\"name\": \"b\"},"
		   " {\"name\": \"c\", \"nmae\": \"d\"}]}", "stages[2].nmae: unknown key");
	expect_bad("{\"repo\": \"/r\", \"stagse\": []}", "stagse: unknown key");
	/* A did-you-mean for a slip, the position of the key in the text. */
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}, {\"name\": \"b\"},"
		   " {\"name\": \"c\", \"nmae\": \"d\"}]}",
		   "stages[2].nmae: unknown key (did you mean \"name\"?) at line 1, column 71");
	expect_bad("{\"repo\": \"/r\",\n \"stagse\": []}",
		   "stagse: unknown key (did you mean \"stages\"?) at line 2, column 2");
	expect_bad("{\"repo\": \"/r\", \"zzzzzz\": []}", "zzzzzz: unknown key at line 1");
	expect_bad("{\"repo\": \"/r\",\n \"stages\": [{\"name\": \"a\"},\n  {\"name\": \"b\","
		   " \"run\": \"/bin/true\"}]}",
		   "stages[1].run: must be an array of strings at line 3, column 17");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"run\": [\"x\",\n 3]}]}",
		   "stages[0].run[1]: must be a non-empty string at line 2, column 2");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}, {\"name\": \"b\","
		   " \"run\": \"/bin/true\"}]}", "stages[1].run: must be an array of strings");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"run\": [\"x\", 3]}]}",
		   "stages[0].run[1]: must be a non-empty string");
	expect_bad("{\"stages\": [{\"name\": \"a\"}]}", "repo: required");
	expect_bad("{\"repo\": \"src/repo\", \"stages\": [{\"name\": \"a\"}]}",
		   "repo: must be an absolute path");
	expect_bad("{\"repo\": \"/r\"}", "stages: required");
	expect_bad("{\"repo\": \"/r\", \"stages\": []}", "stages: must be a non-empty array");
	expect_bad("{\"repo\": \"/r\", \"repo\": \"/s\", \"stages\": [{\"name\": \"a\"}]}",
		   "repo: duplicate key");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}",
		   "stages[1].name: stage \"a\" is defined twice");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"gate\": \"auto\"}]}",
		   "stages[0].gate: must be \"approve\"");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"recipes\": \"all\"}]}",
		   "stages[0].recipes: must be \"plan\"");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"print\"}, {\"name\": \"review\","
		   " \"on_needs_changes\": \"publish\"}, {\"name\": \"publish\"}]}",
		   "stages[1].on_needs_changes: \"publish\" is not a stage before \"review\"");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"timeout_s\": -1}]}",
		   "stages[0].timeout_s: must be an integer >= 0");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"timeout_s\": 2.5}]}",
		   "stages[0].timeout_s: must be an integer");
	expect_bad("{\"repo\": \"/r\", \"gpus\": [0, 1, 1], \"stages\": [{\"name\": \"a\"}]}",
		   "gpus[2]: device 1 is listed twice");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"produces\": [\"x/../../y\"]"
		   "}]}", "stages[0].produces[0]: must be a path inside the item");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"push\": {\"remote\": \"o\","
		   " \"force\": true}}]}", "stages[0].push.force: unknown key");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"push\": {}}]}",
		   "stages[0].push.remote: required");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"Build\"}]}",
		   "stages[0].name: \"Build\" does not match");
	expect_bad("{\"repo\": \"/r\", \"max_parallel_recipes\": 0,"
		   " \"stages\": [{\"name\": \"a\"}]}",
		   "max_parallel_recipes: must be an integer >= 1");
	expect_bad("{\"repo\": \"/r\", \"on_interrupt\": \"retry\","
		   " \"stages\": [{\"name\": \"a\"}]}",
		   "on_interrupt: must be \"requeue\" or \"fail\"");
	expect_bad("{\"repo\": \"/r\",\n  \"stages\": [\n", "pipeline: malformed JSON at line 3");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}]} {}",
		   "pipeline: unexpected data after the JSON value at line 1, column 43");
	expect_bad("", "pipeline: empty document");
	expect_bad("[1, 2]", "pipeline: must be a JSON object");
}

TEST(executor)
{
	struct pfs_config *cfg = NULL;

	ASSERT_EQ(parse("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}]}", &cfg, NULL, 0), 0);
	ASSERT_EQ(cfg->executor.kind, EXECUTOR_LOCAL);
	ASSERT(cfg->executor.extra_args && !cfg->executor.extra_args[0]);
	config_free(cfg);
	ASSERT_EQ(parse("{\"repo\": \"/r\", \"executor\": {\"kind\": \"slurm\", \"partition\": "
			"\"gpu\", \"account\": \"ml\", \"extra_args\": [\"--qos=high\", \"-N1\"], "
			"\"shared_dir\": \"/shared/pfs\", \"poll_ms\": 500}, "
			"\"stages\": [{\"name\": \"a\"}]}", &cfg, NULL, 0), 0);
	ASSERT_EQ(cfg->executor.kind, EXECUTOR_SLURM);
	ASSERT_STREQ(cfg->executor.partition, "gpu");
	ASSERT_STREQ(cfg->executor.account, "ml");
	ASSERT_STREQ(cfg->executor.extra_args[1], "-N1");
	ASSERT(cfg->executor.extra_args[2] == NULL);
	ASSERT_STREQ(cfg->executor.shared_dir, "/shared/pfs");
	ASSERT_EQ(cfg->executor.poll_ms, 500);
	config_free(cfg);
	ASSERT_EQ(parse("{\"repo\": \"/r\", \"executor\": {\"kind\": \"slurm\"}, "
			"\"stages\": [{\"name\": \"a\"}]}", &cfg, NULL, 0), 0);
	ASSERT(cfg->executor.partition == NULL && cfg->executor.shared_dir == NULL);
	ASSERT_EQ(cfg->executor.poll_ms, 1000);
	config_free(cfg);
	expect_bad("{\"repo\": \"/r\", \"executor\": \"slurm\", \"stages\": [{\"name\": \"a\"}]}",
		   "executor: must be an object");
	expect_bad("{\"repo\": \"/r\", \"executor\": {}, \"stages\": [{\"name\": \"a\"}]}",
		   "executor.kind: required");
	expect_bad("{\"repo\": \"/r\", \"executor\": {\"kind\": \"pbs\"}, \"stages\": [{\"name\": "
		   "\"a\"}]}", "executor.kind: must be \"local\" or \"slurm\"");
	expect_bad("{\"repo\": \"/r\", \"executor\": {\"kind\": \"local\", \"partition\": \"p\"}, "
		   "\"stages\": [{\"name\": \"a\"}]}", "executor: the local executor takes no other key");
	expect_bad("{\"repo\": \"/r\", \"executor\": {\"kind\": \"slurm\", \"queue\": \"p\"}, "
		   "\"stages\": [{\"name\": \"a\"}]}", "executor.queue: unknown key");
	expect_bad("{\"repo\": \"/r\", \"executor\": {\"kind\": \"slurm\", \"partition\": \"\"}, "
		   "\"stages\": [{\"name\": \"a\"}]}", "executor.partition: must be a non-empty string");
	expect_bad("{\"repo\": \"/r\", \"executor\": {\"kind\": \"slurm\", \"extra_args\": "
		   "[\"-N1\", 2]}, \"stages\": [{\"name\": \"a\"}]}",
		   "executor.extra_args[1]: must be a non-empty string");
	expect_bad("{\"repo\": \"/r\", \"executor\": {\"kind\": \"slurm\", \"shared_dir\": "
		   "\"spool\"}, \"stages\": [{\"name\": \"a\"}]}",
		   "executor.shared_dir: must be an absolute path");
	expect_bad("{\"repo\": \"/r\", \"executor\": {\"kind\": \"slurm\", \"poll_ms\": 10}, "
		   "\"stages\": [{\"name\": \"a\"}]}", "executor.poll_ms: must be an integer >= 50");
}

/* "run_as": a user name (whether it exists is pipeline_config_check's),
 * not with the slurm executor. */
TEST(run_as)
{
	struct pfs_config *cfg = NULL;

	ASSERT_EQ(parse("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}]}", &cfg, NULL, 0), 0);
	ASSERT(cfg->run_as == NULL);
	config_free(cfg);
	ASSERT_EQ(parse("{\"repo\": \"/r\", \"run_as\": \"agent\", \"stages\": [{\"name\": \"a\"}]}",
			&cfg, NULL, 0), 0);
	ASSERT_STREQ(cfg->run_as, "agent");
	config_free(cfg);
	expect_bad("{\"repo\": \"/r\", \"run_as\": \"\", \"stages\": [{\"name\": \"a\"}]}",
		   "run_as: must be a non-empty string");
	expect_bad("{\"repo\": \"/r\", \"run_as\": 1000, \"stages\": [{\"name\": \"a\"}]}",
		   "run_as: must be a non-empty string");
	expect_bad("{\"repo\": \"/r\", \"run_as\": \"agent\", \"executor\": {\"kind\": "
		   "\"slurm\"}, \"stages\": [{\"name\": \"a\"}]}",
		   "run_as: not with the slurm executor (its jobs would run as the daemon's user)");
}

TEST(length_not_nul)
{
	static const char text[] = "{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}]}GARBAGE";
	static const char nul[] = "{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}]}\0{}";
	struct pfs_config *cfg = NULL;
	char err[128];

	ASSERT_EQ(config_parse(text, sizeof(text) - 1 - 7, &cfg, err, sizeof(err)), 0);
	ASSERT_STREQ(cfg->stages[0].name, "a");
	config_free(cfg);
	cfg = NULL;
	ASSERT_EQ(config_parse(nul, sizeof(nul) - 1, &cfg, err, sizeof(err)), -EINVAL);
	ASSERT(cfg == NULL);
	ASSERT_CONTAINS(err, "unexpected data");
}

TEST(small_error_buffer)
{
	struct pfs_config *cfg = NULL;
	char err[8];

	ASSERT_EQ(parse("{\"stages\": 1}", &cfg, err, sizeof(err)), -EINVAL);
	ASSERT_EQ(strlen(err), 7);
	ASSERT_EQ(parse("{\"stages\": 1}", &cfg, NULL, 0), -EINVAL);
	ASSERT_EQ(parse("{\"stages\": 1}", &cfg, err, 0), -EINVAL);
	config_free(NULL);
}

TEST(default_json)
{
	struct pfs_config *cfg = NULL;
	char *text;

	text = config_default_json("/srv/repo.git", "trunk", "/srv/recipes");
	ASSERT(text != NULL);
	ASSERT(text[strlen(text) - 1] == '\n');
	ASSERT_CONTAINS(text, "\n\t\"stages\":");
	ASSERT_EQ(parse(text, &cfg, NULL, 0), 0);
	ASSERT_STREQ(cfg->repo, "/srv/repo.git");
	ASSERT_STREQ(cfg->base, "trunk");
	ASSERT_STREQ(cfg->recipes_dir, "/srv/recipes");
	ASSERT_EQ(cfg->nstages, 5);
	ASSERT_STREQ(cfg->stages[0].name, "plan");
	ASSERT_STREQ(cfg->stages[1].name, "print");
	ASSERT_STREQ(cfg->stages[2].name, "validate");
	ASSERT_STREQ(cfg->stages[3].name, "review");
	ASSERT_STREQ(cfg->stages[4].name, "publish");
	ASSERT_EQ(cfg->stages[2].recipes_from_plan, 1);
	ASSERT_STREQ(cfg->stages[3].on_needs_changes, "print");
	ASSERT_EQ(cfg->stages[3].max_iterations, 3);
	ASSERT_EQ(cfg->stages[4].gate_approve, 1);
	for (size_t i = 0; i < cfg->nstages; i++) {
		ASSERT(cfg->stages[i].run == NULL);
		ASSERT_EQ(cfg->stages[i].gate_approve, i == 4);
		ASSERT_EQ(cfg->stages[i].recipes_from_plan, i == 2);
	}
	config_free(cfg);
	free(text);

	text = config_default_json("/r", NULL, NULL);
	ASSERT(text != NULL);
	ASSERT(strstr(text, "recipes_dir") == NULL);
	ASSERT_EQ(parse(text, &cfg, NULL, 0), 0);
	ASSERT_STREQ(cfg->base, "main");
	ASSERT(cfg->recipes_dir == NULL);
	config_free(cfg);
	free(text);
}

/* The message for obj with key set to null: must not call the key unknown. */
static void expect_known(cJSON *doc, cJSON *obj, const char *key, const char *field)
{
	struct pfs_config *cfg = NULL;
	char err[256] = "", *text;
	int rc;

	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddNullToObject(obj, key);
	text = cJSON_PrintUnformatted(doc);
	rc = parse(text, &cfg, err, sizeof(err));
	if (rc != -EINVAL || strncmp(err, field, strlen(field)) != 0 || strstr(err, "unknown key"))
		FAIL_AT("%s set to null: rc %d, \"%s\"", field, rc, err);
	free(text);
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
}

static cJSON *minimal_doc(void)
{
	return cJSON_Parse("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}]}");
}

/* The embedded schema names the keys the validator knows, and no others. */
TEST(schema_matches_validator)
{
	static const char *const top[] = { "repo", "base", "recipes_dir", "gpus",
		"max_parallel_recipes", "max_parallel_items", "on_interrupt", "cancel_grace_s",
		"max_doc_size", "run_as", "executor", "stages", "notify", "templates",
		"default_template", "routes", "probes", NULL };
	static const char *const stage[] = { "name", "run", "produces", "timeout_s", "gate",
		"recipes", "on_needs_changes", "max_iterations", "push", "env", "rounds", NULL };
	cJSON *schema = cJSON_Parse(schema_json_pipeline), *props, *p, *doc, *st, *req;
	char field[96];
	size_t n = 0;

	ASSERT(schema != NULL);
	props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	cJSON_ArrayForEach(p, props) {
		doc = minimal_doc();
		expect_known(doc, doc, p->string, p->string);
		cJSON_Delete(doc);
		n++;
	}
	ASSERT_EQ(n, strv_len((char **)top));
	for (n = 0; top[n]; n++)
		ASSERT(cJSON_GetObjectItemCaseSensitive(props, top[n]) != NULL);

	props = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(schema, "$defs"),
						 "stage"), "properties");
	n = 0;
	cJSON_ArrayForEach(p, props) {
		doc = minimal_doc();
		st = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "stages"), 0);
		snprintf(field, sizeof(field), "stages[0].%s", p->string);
		expect_known(doc, st, p->string, field);
		cJSON_Delete(doc);
		n++;
	}
	ASSERT_EQ(n, strv_len((char **)stage));
	for (n = 0; stage[n]; n++)
		ASSERT(cJSON_GetObjectItemCaseSensitive(props, stage[n]) != NULL);

	req = cJSON_GetObjectItemCaseSensitive(schema, "required");
	ASSERT_EQ(cJSON_GetArraySize(req), 2);
	cJSON_ArrayForEach(p, req) {
		struct pfs_config *cfg = NULL;
		char err[128], *text;

		doc = minimal_doc();
		cJSON_DeleteItemFromObjectCaseSensitive(doc, p->valuestring);
		text = cJSON_PrintUnformatted(doc);
		ASSERT_EQ(parse(text, &cfg, err, sizeof(err)), -EINVAL);
		snprintf(field, sizeof(field), "%s: required", p->valuestring);
		ASSERT_STREQ(err, field);
		free(text);
		cJSON_Delete(doc);
	}
	expect_bad("{\"repo\": \"/r\", \"bogus\": 1, \"stages\": [{\"name\": \"a\"}]}",
		   "bogus: unknown key");
	cJSON_Delete(schema);
}

/* A stage's "env" and "rounds": parsed in order, and each misuse refused
 * with the field and the reason. */
#define STAGES(x) "{\"repo\": \"/r\", \"stages\": [" x "]}"
#define PUBLISH "{\"name\": \"review\", \"produces\": [\"review.md\"]}, {\"name\": \"publish\"}, "
TEST(env_rounds)
{
	struct pfs_config *cfg = NULL;
	char err[256];

	ASSERT_EQ(parse(STAGES(PUBLISH "{\"name\": \"babysit\", \"run\": [\"/b\"], "
			       "\"env\": {\"AGENT_CLI\": \"codex\", \"PACKET_AGENT_CMD\": \"codex exec\", "
			       "\"EMPTY\": \"\"}, \"rounds\": {\"every_s\": 30, \"max\": 5}}"),
			&cfg, err, sizeof(err)), 0);
	ASSERT_STREQ(cfg->stages[2].env[0], "AGENT_CLI=codex");
	ASSERT_STREQ(cfg->stages[2].env[1], "PACKET_AGENT_CMD=codex exec");
	ASSERT_STREQ(cfg->stages[2].env[2], "EMPTY=");
	ASSERT(cfg->stages[2].env[3] == NULL);
	ASSERT_EQ(cfg->stages[2].rounds_every_s, 30);
	ASSERT_EQ(cfg->stages[2].rounds_max, 5);
	ASSERT(cfg->stages[0].env && cfg->stages[0].env[0] == NULL);
	ASSERT_EQ(cfg->stages[0].rounds_max, 0);
	config_free(cfg);

	expect_bad(STAGES("{\"name\": \"plan\", \"env\": [\"A=1\"]}"),
		   "stages[0].env: must be an object of strings");
	expect_bad(STAGES("{\"name\": \"plan\", \"env\": {\"A\": 1}}"),
		   "stages[0].env.A: must be a string");
	expect_bad(STAGES("{\"name\": \"plan\", \"env\": {\"1A\": \"x\"}}"),
		   "stages[0].env.1A: not a variable name");
	expect_bad(STAGES("{\"name\": \"plan\", \"env\": {\"A-B\": \"x\"}}"),
		   "stages[0].env.A-B: not a variable name");
	expect_bad(STAGES("{\"name\": \"plan\", \"env\": {\"PACKET_ITEM\": \"x\"}}"),
		   "stages[0].env.PACKET_ITEM: packetfs sets PACKET_ITEM for every stage");
	expect_bad(STAGES("{\"name\": \"plan\", \"env\": {\"A\": \"1\", \"A\": \"2\"}}"),
		   "stages[0].env.A: duplicate key");
	expect_bad(STAGES("{\"name\": \"plan\", \"run\": [\"/b\"], \"rounds\": {\"every_s\": 1, \"max\": 1}}"),
		   "stage 'plan' has rounds, but no stage before it publishes");
	expect_bad(STAGES(PUBLISH "{\"name\": \"b\", \"run\": [\"/b\"], \"rounds\": {\"every_s\": 1}}"),
		   "stages[2].rounds.max: required");
	expect_bad(STAGES(PUBLISH "{\"name\": \"b\", \"run\": [\"/b\"], \"rounds\": {\"every_s\": 0, \"max\": 1}}"),
		   "stages[2].rounds.every_s: must be an integer >= 1");
	expect_bad(STAGES(PUBLISH "{\"name\": \"b\", \"run\": [\"/b\"], \"rounds\": {\"every_s\": 1, \"max\": 1, \"x\": 1}}"),
		   "stages[2].rounds.x: unknown key");
	expect_bad(STAGES(PUBLISH "{\"name\": \"b\", \"rounds\": {\"every_s\": 1, \"max\": 1}}"),
		   "stages[2].rounds: a rounds stage needs a program");
	expect_bad(STAGES(PUBLISH "{\"name\": \"b\", \"run\": [\"/b\"], \"push\": {\"remote\": \"o\"}, "
			  "\"rounds\": {\"every_s\": 1, \"max\": 1}}"),
		   "stages[2].rounds: a rounds stage only runs its program");
}

/* "notify": entries parsed in order with their defaults, and each misuse
 * refused with the field, the reason and its line and column. */
#define NOTIFY(x) "{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}],\n \"notify\": " x "}"
TEST(notify)
{
	struct pfs_config *cfg = NULL;
	char err[256];

	ASSERT_EQ(parse(NOTIFY("[{\"on\": [\"failed\", \"done\"], \"run\": [\"/bin/n\", \"-x\"]}, "
			       "{\"on\": [\"stage_finished\"], \"run\": [\"/bin/m\"], \"timeout_s\": 5}]"),
			&cfg, err, sizeof(err)), 0);
	ASSERT_EQ(cfg->nnotify, 2);
	ASSERT_STREQ(cfg->notify[0].on[0], "failed");
	ASSERT_STREQ(cfg->notify[0].on[1], "done");
	ASSERT(cfg->notify[0].on[2] == NULL);
	ASSERT_STREQ(cfg->notify[0].run[1], "-x");
	ASSERT_EQ(cfg->notify[0].timeout_s, NOTIFY_TIMEOUT_DEFAULT_S);
	ASSERT_EQ(cfg->notify[1].timeout_s, 5);
	ASSERT(config_notify_wants(&cfg->notify[0], "state", "failed"));
	ASSERT(config_notify_wants(&cfg->notify[0], "state", "done"));
	ASSERT(!config_notify_wants(&cfg->notify[0], "state", "running"));
	ASSERT(!config_notify_wants(&cfg->notify[0], "failed", NULL));
	ASSERT(config_notify_wants(&cfg->notify[1], "stage_finished", NULL));
	ASSERT(!config_notify_wants(&cfg->notify[1], "state", "stage_finished"));
	config_free(cfg);
	cfg = NULL;
	ASSERT_EQ(parse(NOTIFY("[]"), &cfg, err, sizeof(err)), 0);
	ASSERT_EQ(cfg->nnotify, 0);
	config_free(cfg);

	expect_bad(NOTIFY("{\"on\": [\"done\"]}"), "notify: must be an array of objects");
	expect_bad(NOTIFY("[3]"), "notify[0]: must be an object");
	expect_bad(NOTIFY("[{\"run\": [\"/bin/n\"]}]"), "notify[0]: \"on\" is required at line 2, column 13");
	expect_bad(NOTIFY("[{\"on\": [\"done\"]}]"), "notify[0]: \"run\" is required at line 2");
	expect_bad(NOTIFY("[{\"on\": [], \"run\": [\"/bin/n\"]}]"),
		   "notify[0].on: must not be empty at line 2, column 14");
	expect_bad(NOTIFY("[{\"on\": \"done\", \"run\": [\"/bin/n\"]}]"),
		   "notify[0].on: must be an array of strings");
	expect_bad(NOTIFY("[{\"on\": [\"done\", \"faild\"], \"run\": [\"/bin/n\"]}]"),
		   "notify[0].on[1]: unknown state or event \"faild\" (did you mean \"failed\"?) "
		   "at line 2, column 29");
	expect_bad(NOTIFY("[{\"on\": [\"everything\"], \"run\": [\"/bin/n\"]}]"),
		   "notify[0].on[0]: unknown state or event \"everything\" (a state:");
	expect_bad(NOTIFY("[{\"on\": [\"done\", \"done\"], \"run\": [\"/bin/n\"]}]"),
		   "notify[0].on[1]: \"done\" is listed twice");
	expect_bad(NOTIFY("[{\"on\": [\"done\"], \"run\": []}]"), "notify[0].run: must not be empty");
	expect_bad(NOTIFY("[{\"on\": [\"done\"], \"run\": [\"notify-send\"]}]"),
		   "notify[0].run[0]: must be an absolute path");
	expect_bad(NOTIFY("[{\"on\": [\"done\"], \"run\": [\"/bin/n\", \"\"]}]"),
		   "notify[0].run[1]: must be a non-empty string");
	expect_bad(NOTIFY("[{\"on\": [\"done\"], \"run\": [\"/bin/n\"], \"timeout_s\": 0}]"),
		   "notify[0].timeout_s: must be an integer >= 1");
	expect_bad(NOTIFY("[{\"on\": [\"done\"], \"run\": [\"/bin/n\"], \"timeout\": 9}]"),
		   "notify[0].timeout: unknown key (did you mean \"timeout_s\"?) at line 2");
	expect_bad(NOTIFY("[{\"on\": [\"done\"], \"run\": [\"/bin/n\"]}, {\"onn\": [\"done\"]}]"),
		   "notify[1].onn: unknown key (did you mean \"on\"?)");
	expect_bad("{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}], \"notfy\": []}",
		   "notfy: unknown key (did you mean \"notify\"?)");
}

/*
 * Empties b, then writes head, the n entries "PREFIXi"SUFFIX (i from 0)
 * joined by ", ", and tail.
 */
static void many_json(struct buf *b, const char *head, const char *prefix, const char *suffix,
		      size_t n, const char *tail)
{
	size_t i;

	b->len = 0;
	ASSERT_EQ(buf_puts(b, head), 0);
	for (i = 0; i < n; i++)
		ASSERT_EQ(buf_printf(b, "%s\"%s%zu\"%s", i ? ", " : "", prefix, i, suffix), 0);
	ASSERT_EQ(buf_puts(b, tail), 0);
}

/*
 * A large pipeline.json costs time in proportion to its size: stage names,
 * env keys and argument lists are checked by sorting or in one pass, never
 * each against all before it (a 1 MiB file took 8 s to 18 s that way; the
 * 4 MB ones here would run past the suite's timeout). Messages still name
 * the first offender in the file's order.
 */
TEST(large)
{
	enum { STAGES_N = 150000, KEYS = 200000, ARGS = 300000 };
	struct pfs_config *cfg = NULL;
	struct buf b = { 0 };
	char err[256];
	size_t i;

	/* Stages, each looping back to the first. */
	ASSERT_EQ(buf_puts(&b, "{\"repo\": \"/r\", \"stages\": [{\"name\": \"s0\"}"), 0);
	for (i = 1; i < STAGES_N; i++)
		ASSERT_EQ(buf_printf(&b, ", {\"name\": \"s%zu\", \"on_needs_changes\": \"s%zu\"}", i,
				     i / 2), 0);
	ASSERT_EQ(buf_puts(&b, "]}"), 0);
	ASSERT_EQ(config_parse(b.data, b.len, &cfg, err, sizeof(err)), 0);
	ASSERT_EQ(cfg->nstages, STAGES_N);
	ASSERT_STREQ(cfg->stages[STAGES_N - 1].on_needs_changes, "s74999");
	config_free(cfg);
	cfg = NULL;
	/* The same with a repeated name and a loop forward: the first wins. */
	b.len = 0;
	ASSERT_EQ(buf_puts(&b, "{\"repo\": \"/r\", \"stages\": [{\"name\": \"s0\"}"), 0);
	for (i = 1; i < STAGES_N; i++)
		ASSERT_EQ(buf_printf(&b, ", {\"name\": \"s%zu\"%s}", i == 90000 ? 7 : i == 120000 ? 3 : i,
				     i == 100000 ? ", \"on_needs_changes\": \"s100001\"" : ""), 0);
	ASSERT_EQ(buf_puts(&b, "]}"), 0);
	expect_bad(b.data, "stages[90000].name: stage \"s7\" is defined twice");
	b.len = 0;
	ASSERT_EQ(buf_puts(&b, "{\"repo\": \"/r\", \"stages\": [{\"name\": \"s0\"}"), 0);
	for (i = 1; i < STAGES_N; i++)
		ASSERT_EQ(buf_printf(&b, ", {\"name\": \"s%zu\"%s}", i,
				     i == 100000 ? ", \"on_needs_changes\": \"s100001\"" : ""), 0);
	ASSERT_EQ(buf_puts(&b, "]}"), 0);
	expect_bad(b.data, "stages[100000].on_needs_changes: \"s100001\" is not a stage before");

	/* An env of many keys; a repeat is named where it first repeats. */
	many_json(&b, "{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"env\": {", "V",
		  ": \"x\"", KEYS, "}}]}");
	ASSERT_EQ(config_parse(b.data, b.len, &cfg, err, sizeof(err)), 0);
	ASSERT_STREQ(cfg->stages[0].env[KEYS - 1], "V199999=x");
	ASSERT(cfg->stages[0].env[KEYS] == NULL);
	config_free(cfg);
	cfg = NULL;
	b.len -= 4;
	ASSERT_EQ(buf_puts(&b, ", \"V5\": \"y\", \"V4\": \"y\"}}]}"), 0);
	expect_bad(b.data, "stages[0].env.V5: duplicate key");

	/* A long argument list. */
	many_json(&b, "{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\", \"run\": [", "a", "",
		  ARGS, "]}]}");
	ASSERT_EQ(config_parse(b.data, b.len, &cfg, err, sizeof(err)), 0);
	ASSERT_STREQ(cfg->stages[0].run[ARGS - 1], "a299999");
	ASSERT(cfg->stages[0].run[ARGS] == NULL);
	config_free(cfg);
	buf_free(&b);
}

int main(void)
{
	RUN(data_good);
	RUN(data_bad);
	RUN(defaults);
	RUN(all_fields);
	RUN(gpus_forms);
	RUN(messages);
	RUN(executor);
	RUN(run_as);
	RUN(length_not_nul);
	RUN(small_error_buffer);
	RUN(default_json);
	RUN(schema_matches_validator);
	RUN(env_rounds);
	RUN(notify);
	RUN(large);
	return 0;
}
