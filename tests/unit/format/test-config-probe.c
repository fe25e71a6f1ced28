/*
 * test-config-probe.c - pipeline.json's "probes" (engine/format/config_probe.c):
 * both forms of a probe, the default and the bounds of its deadline, the
 * file's order, the lookup by name, and the messages of each refusal,
 * the did-you-mean ones included.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "test.h"
#include "util.h"

/* A minimal document with the members extra (", ..." or "") added. */
static char *doc(const char *extra)
{
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(buf_printf(&b, "{\"repo\": \"/r\", \"stages\": [{\"name\": \"a\"}]%s}", extra), 0);
	return buf_steal(&b);
}

static struct pfs_config *good(const char *extra)
{
	struct pfs_config *cfg = NULL;
	char err[256] = "", *text = doc(extra);

	if (config_parse(text, strlen(text), &cfg, err, sizeof(err)) != 0)
		FAIL_AT("%s refused: %s", text, err);
	free(text);
	return cfg;
}

/* The document with extra is refused with the message want, followed by
 * the field's place (a missing field has none). */
static void bad(const char *extra, const char *want)
{
	struct pfs_config *cfg = NULL;
	char err[256] = "", *text = doc(extra);

	ASSERT_EQ(config_parse(text, strlen(text), &cfg, err, sizeof(err)), -EINVAL);
	ASSERT(cfg == NULL);
	/* The message, then where the field stands when it is there. */
	if (strcmp(err, want) != 0 && (strncmp(err, want, strlen(want)) != 0 ||
				       strncmp(err + strlen(want), " at line 1, column ", 19) != 0))
		FAIL_AT("%s: \"%s\", want \"%s at line 1, column N\"", text, err, want);
	free(text);
}

TEST(none)
{
	struct pfs_config *cfg = good("");

	ASSERT_EQ(cfg->nprobes, 0);
	ASSERT(cfg->probes == NULL);
	ASSERT(config_probe(cfg, "torch") == NULL);
	config_free(cfg);
	cfg = good(", \"probes\": {}");
	ASSERT_EQ(cfg->nprobes, 0);
	config_free(cfg);
}

TEST(forms)
{
	struct pfs_config *cfg = good(", \"probes\": {\"torch\": [\"python3\", \"-c\", \"import torch\"],"
				      " \"docker\": {\"run\": [\"docker\", \"info\"], \"timeout_s\": 3},"
				      " \"a.b_c-9\": {\"run\": [\"x\"]}}");
	const struct pfs_probe *p;

	ASSERT_EQ(cfg->nprobes, 3);
	/* The file's order. */
	ASSERT_STREQ(cfg->probes[0].name, "torch");
	ASSERT_STREQ(cfg->probes[1].name, "docker");
	ASSERT_STREQ(cfg->probes[2].name, "a.b_c-9");
	p = config_probe(cfg, "torch");
	ASSERT(p == &cfg->probes[0]);
	ASSERT_STREQ(p->run[0], "python3");
	ASSERT_STREQ(p->run[2], "import torch");
	ASSERT(p->run[3] == NULL);
	ASSERT_EQ(p->timeout_s, CONFIG_PROBE_TIMEOUT_DEFAULT_S);
	ASSERT_EQ(CONFIG_PROBE_TIMEOUT_DEFAULT_S, 10);
	p = config_probe(cfg, "docker");
	ASSERT_EQ(p->timeout_s, 3);
	ASSERT_STREQ(p->run[1], "info");
	ASSERT_EQ(config_probe(cfg, "a.b_c-9")->timeout_s, 10);
	ASSERT(config_probe(cfg, "dock") == NULL);
	config_free(cfg);
	cfg = good(", \"probes\": {\"slow\": {\"run\": [\"x\"], \"timeout_s\": 600}}");
	ASSERT_EQ(cfg->probes[0].timeout_s, 600);
	config_free(cfg);
}

TEST(refused)
{
	bad(", \"probes\": [\"torch\"]",
	    "probes: must be an object from a probe's name to its command");
	bad(", \"probes\": {\"Torch\": [\"x\"]}",
	    "probes.Torch: a probe's name must match [a-z0-9][a-z0-9._-]{0,63}");
	bad(", \"probes\": {\"-x\": [\"x\"]}",
	    "probes.-x: a probe's name must match [a-z0-9][a-z0-9._-]{0,63}");
	bad(", \"probes\": {\"t\": []}",
	    "probes.t: must be a command, a non-empty array of strings such as [\"python3\", "
	    "\"--version\"], or {\"run\": [...], \"timeout_s\": N}");
	bad(", \"probes\": {\"t\": \"python3 -V\"}",
	    "probes.t: must be a command, a non-empty array of strings such as [\"python3\", "
	    "\"--version\"], or {\"run\": [...], \"timeout_s\": N}");
	bad(", \"probes\": {\"t\": [\"x\", \"\"]}",
	    "probes.t[1]: must be a non-empty string");
	bad(", \"probes\": {\"t\": {\"timeout_s\": 5}}", "probes.t.run: required");
	bad(", \"probes\": {\"t\": {\"run\": [\"x\"], \"timeout_s\": 0}}",
	    "probes.t.timeout_s: must be an integer >= 1");
	bad(", \"probes\": {\"t\": {\"run\": [\"x\"], \"timeout_s\": 601}}",
	    "probes.t: timeout_s: at most 600 seconds");
	/* Did you mean: a key of a probe, and the top-level key itself. */
	bad(", \"probes\": {\"t\": {\"run\": [\"x\"], \"timeout\": 5}}",
	    "probes.t.timeout: unknown key (did you mean \"timeout_s\"?)");
	bad(", \"probe\": {\"t\": [\"x\"]}",
	    "probe: unknown key (did you mean \"probes\"?)");
	bad(", \"probes\": {\"t\": [\"x\"], \"t\": [\"y\"]}",
	    "probes.t: duplicate key");
}

TEST(limits)
{
	struct buf b;
	char *names;
	int i;

	buf_init(&b);
	ASSERT_EQ(buf_puts(&b, ", \"probes\": {"), 0);
	for (i = 0; i <= CONFIG_PROBES_MAX; i++)
		ASSERT_EQ(buf_printf(&b, "%s\"p%d\": [\"x\"]", i ? ", " : "", i), 0);
	ASSERT_EQ(buf_puts(&b, "}"), 0);
	names = buf_steal(&b);
	bad(names, "probes: at most 64 probes");
	free(names);
	ASSERT(config_probe_name_ok("a", 1));
	ASSERT(config_probe_name_ok("0-9._x", 6));
	ASSERT(!config_probe_name_ok("", 0));
	ASSERT(!config_probe_name_ok("_a", 2));
	ASSERT(!config_probe_name_ok("a b", 3));
	ASSERT(config_probe_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64));
	ASSERT(!config_probe_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 65));
}

int main(void)
{
	RUN(none);
	RUN(forms);
	RUN(refused);
	RUN(limits);
	return 0;
}
