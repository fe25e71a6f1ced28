/*
 * test-config-template.c - the routes and templates of pipeline.json
 * (engine/format/config_template.c, SPEC §5 "Routes and templates"): what
 * a template's path holds, how a plan's header lines choose among them,
 * and every refusal with its field and reason, the gates at load included.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "test.h"

static int parse(const char *json, struct pfs_config **cfg, char *err, size_t errlen)
{
	return config_parse(json, strlen(json), cfg, err, errlen);
}

/* Parses json expecting -EINVAL with a message containing want. */
static void expect_bad(const char *json, const char *want)
{
	struct pfs_config *cfg = NULL;
	char err[512];

	memset(err, 'x', sizeof(err));
	ASSERT_EQ(parse(json, &cfg, err, sizeof(err)), -EINVAL);
	ASSERT(cfg == NULL);
	ASSERT_CONTAINS(err, want);
}

#define TOP "\"repo\": \"/r\", \"stages\": [{\"name\": \"plan\"}, {\"name\": \"print\"}]"
#define SAFE "[{\"name\": \"print\"}, {\"name\": \"validate\", \"recipes\": \"plan\"}, " \
	"{\"name\": \"review\", \"produces\": [\"review.md\"]}, {\"name\": \"publish\"}]"
#define DOC(x) "{" TOP ", " x "}"

TEST(paths)
{
	struct pfs_config *cfg = NULL;
	const struct pfs_config *path;
	const char *name = NULL;
	char err[256] = "";

	ASSERT_EQ(parse(DOC("\"templates\": {\"change\": {\"stages\": " SAFE "},"
			    " \"debug\": {\"stages\": [{\"name\": \"investigate\","
			    " \"produces\": [\"report.md\"]}]}, \"none\": {\"stages\": []}},"
			    " \"default_template\": \"change\","
			    " \"routes\": {\"implementation\": \"change\", \"bug\": \"debug\"}"),
			&cfg, err, sizeof(err)), 0);
	ASSERT_STREQ(err, "");
	ASSERT_EQ(cfg->ntemplates, 3);
	ASSERT_STREQ(cfg->default_template, "change");
	ASSERT_EQ(cfg->nroutes, 2);
	ASSERT_STREQ(cfg->routes[1].route, "bug");
	ASSERT_STREQ(cfg->routes[1].template, "debug");
	ASSERT(cfg->parent == NULL);

	ASSERT(config_path(cfg, NULL) == cfg);
	ASSERT(config_path(cfg, "") == cfg);
	ASSERT(config_path(cfg, "nope") == NULL);
	path = config_path(cfg, "change");
	ASSERT(path != NULL && path->parent == cfg);
	ASSERT_EQ(path->nstages, 5);
	ASSERT_STREQ(path->stages[0].name, "plan");
	ASSERT_STREQ(path->stages[4].name, "publish");
	ASSERT_STREQ(path->repo, "/r");
	ASSERT_EQ(path->ntemplates, 0);
	ASSERT(config_stage(path, "print", NULL) == &path->stages[1]);
	path = config_path(cfg, "debug");
	ASSERT_EQ(path->nstages, 2);
	ASSERT_STREQ(path->stages[1].produces[0], "report.md");
	ASSERT(config_stage(path, "print", NULL) == NULL);
	ASSERT_EQ(config_path(cfg, "none")->nstages, 1);

	/* Template, else Route through routes, else the default. */
	ASSERT_EQ(config_choose(cfg, "debug", "implementation", &name, err, sizeof(err)), 0);
	ASSERT_STREQ(name, "debug");
	ASSERT_EQ(config_choose(cfg, "", "bug", &name, err, sizeof(err)), 0);
	ASSERT_STREQ(name, "debug");
	ASSERT_EQ(config_choose(cfg, NULL, "unmapped", &name, err, sizeof(err)), 0);
	ASSERT_STREQ(name, "change");
	ASSERT_EQ(config_choose(cfg, NULL, NULL, &name, err, sizeof(err)), 0);
	ASSERT_STREQ(name, "change");
	ASSERT_EQ(config_choose(cfg, "debgu", "bug", &name, err, sizeof(err)), -ENOENT);
	ASSERT_STREQ(err, "Template: debgu: no such template (templates: change, debug, none)");
	config_free(cfg);

	/* Without a default: the top-level stages. */
	ASSERT_EQ(parse(DOC("\"templates\": {\"debug\": {\"stages\": []}}"), &cfg, err,
			sizeof(err)), 0);
	ASSERT_EQ(config_choose(cfg, NULL, "implementation", &name, err, sizeof(err)), 0);
	ASSERT_STREQ(name, "");
	config_free(cfg);
	ASSERT_EQ(parse("{" TOP "}", &cfg, err, sizeof(err)), 0);
	ASSERT_EQ(config_choose(cfg, "x", NULL, &name, err, sizeof(err)), -ENOENT);
	ASSERT_STREQ(err, "Template: x: no such template (templates: none)");
	config_free(cfg);
}

TEST(refused)
{
	expect_bad(DOC("\"templtes\": {}"), "templtes: unknown key (did you mean \"templates\"?)");
	expect_bad(DOC("\"route\": {}"), "route: unknown key (did you mean \"routes\"?)");
	expect_bad(DOC("\"templates\": []"), "templates: must be an object");
	expect_bad(DOC("\"templates\": {\"Big\": {\"stages\": []}}"),
		   "templates.Big: template name \"Big\" does not match");
	expect_bad(DOC("\"templates\": {\"t\": {\"stags\": []}}"),
		   "templates.t.stags: unknown key (did you mean \"stages\"?)");
	expect_bad(DOC("\"templates\": {\"t\": {}}"), "templates.t.stages: required");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": {}}}"),
		   "templates.t.stages: must be an array of stage objects");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": [{\"name\": \"a\", \"rn\": []}]}}"),
		   "templates.t.stages[0].rn: unknown key (did you mean \"run\"?)");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": [{\"name\": \"plan\"}]}}"),
		   "templates.t.stages[0].name: stage \"plan\" is defined twice");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": [{\"name\": \"a\"},"
		       " {\"name\": \"a\"}]}}"),
		   "templates.t.stages[1].name: stage \"a\" is defined twice");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": [{\"name\": \"a\","
		       " \"on_needs_changes\": \"b\"}, {\"name\": \"b\"}]}}"),
		   "templates.t.stages[0].on_needs_changes: \"b\" is not a stage before \"a\"");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": [], \"stages\": []}}"),
		   "templates.t.stages: duplicate key");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": []}, \"t\": {\"stages\": []}}"),
		   "templates.t: duplicate key");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": []}}, \"default_template\": \"u\""),
		   "default_template: \"u\" is not a template (templates: t)");
	expect_bad(DOC("\"default_template\": 3"), "default_template: must be the name of a template");
	expect_bad(DOC("\"default_template\": \"t\""),
		   "default_template: \"t\" is not a template (templates: none)");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": []}}, \"routes\": {\"bug\": \"u\"}"),
		   "routes.bug: \"u\" is not a template (templates: t)");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": []}}, \"routes\": {\"bug\": 1}"),
		   "routes.bug: must be the name of a template");
	expect_bad(DOC("\"templates\": {\"t\": {\"stages\": []}}, \"routes\": {\"\": \"t\"}"),
		   "a route must be a non-empty string");
	expect_bad(DOC("\"routes\": []"), "routes: must be an object");
}

/* The gates hold on every path (SPEC §5): refused at load, naming the
 * template and what its publish lacks. */
TEST(gates)
{
	struct pfs_config *cfg = NULL;
	char err[512];

	expect_bad(DOC("\"templates\": {\"fast\": {\"stages\": [{\"name\": \"print\"},"
		       " {\"name\": \"validate\", \"recipes\": \"plan\"}, {\"name\": \"publish\","
		       " \"push\": {\"remote\": \"origin\"}}]}}"),
		   "templates.fast.stages: stage 'publish' publishes, but no stage before it "
		   "produces review.md");
	expect_bad(DOC("\"templates\": {\"fast\": {\"stages\": [{\"name\": \"print\"},"
		       " {\"name\": \"review\", \"produces\": [\"review.md\"]},"
		       " {\"name\": \"ship\", \"push\": {\"remote\": \"origin\"}}]}}"),
		   "templates.fast.stages: stage 'ship' publishes, but no stage before it "
		   "validates");
	expect_bad(DOC("\"templates\": {\"late\": {\"stages\": [{\"name\": \"print\"},"
		       " {\"name\": \"publish\"}, {\"name\": \"validate\", \"recipes\": \"plan\"},"
		       " {\"name\": \"review\", \"produces\": [\"review.md\"]}]}}"),
		   "templates.late.stages: stage 'publish' publishes, but no stage before it "
		   "produces review.md");
	expect_bad(DOC("\"templates\": {\"r\": {\"stages\": [{\"name\": \"watch\", \"run\": [\"/x\"],"
		       " \"rounds\": {\"every_s\": 1, \"max\": 2}}]}}"),
		   "templates.r.stages: stage 'watch' has rounds, but no stage before it publishes");
	/* A review stage found through on_needs_changes counts, as at the top. */
	ASSERT_EQ(parse(DOC("\"templates\": {\"ok\": {\"stages\": [{\"name\": \"print\"},"
			    " {\"name\": \"validate\", \"recipes\": \"plan\"},"
			    " {\"name\": \"judge\", \"on_needs_changes\": \"print\"},"
			    " {\"name\": \"publish\", \"gate\": \"approve\"}]}}"),
			&cfg, err, sizeof(err)), 0);
	config_free(cfg);
}

int main(void)
{
	RUN(paths);
	RUN(refused);
	RUN(gates);
	return 0;
}
