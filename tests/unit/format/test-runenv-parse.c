/*
 * test-runenv-parse.c - the parser of a run's environment block
 * (engine/format/runenv.c: runenv_parse) on hand-written logs: the header
 * before the block, nothing read after "# env.end", a truncated block, a
 * block started again, no block, and values that are not clean.
 * test-runenv.c runs the probe script itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runenv-json.h"
#include "runenv.h"
#include "test.h"
#include "util.h"

static const char header[] = "# packetfs recipe log\n# recipe: 01-build\n# summary: builds\n"
			     "# command: ./01-build\n# cwd: /s/worktrees/x\n# host: h\n"
			     "# gpus: none\n# head: 0123abc\n# iteration: 1\n"
			     "# started: 2026-12-01T10:00:00Z\n\n";

static cJSON *parse_text(const char *body)
{
	struct buf b;
	cJSON *env;

	buf_init(&b);
	ASSERT_EQ(buf_puts(&b, header), 0);
	ASSERT_EQ(buf_puts(&b, body), 0);
	env = parse_ok(b.data, b.len);
	buf_free(&b);
	return env;
}

static void expect_enoent(const char *text)
{
	char *json = (char *)"untouched";

	ASSERT_EQ(runenv_parse(text, strlen(text), &json), -ENOENT);
	ASSERT_STREQ(json, "untouched");
}

TEST(parse_exact)
{
	char *json = NULL;
	const char *log = "# packetfs recipe log\n# recipe: 03-gpu\n\n"
			  "# env.os: Debian GNU/Linux 12 (bookworm)\n"
			  "# env.kernel: Linux 6.1.0-18-amd64 x86_64\n"
			  "# env.cpu: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
			  "# env.cpus: 2\n"
			  "# env.memory: 25165824000\n"
			  "# env.gpu: 0, NVIDIA H200, 550.54.15, 143771\n"
			  "# env.cuda: 12.4\n"
			  "# env.version: cmake --version => cmake version 3.25.1\n"
			  "# env.end\n"
			  "output\n";

	ASSERT_EQ(runenv_parse(log, strlen(log), &json), 0);
	ASSERT_STREQ(json, "{\"os\":\"Debian GNU/Linux 12 (bookworm)\","
			   "\"kernel\":\"Linux 6.1.0-18-amd64 x86_64\","
			   "\"cpu\":\"Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\",\"cpus\":2,"
			   "\"memory_bytes\":25165824000,\"gpus\":[{\"index\":0,\"name\":"
			   "\"NVIDIA H200\",\"driver\":\"550.54.15\",\"memory_mib\":143771}],"
			   "\"cuda\":\"12.4\",\"versions\":[{\"command\":\"cmake --version\","
			   "\"output\":\"cmake version 3.25.1\"}],\"complete\":true}");
	free(json);
}

TEST(parse_after_end_ignored)
{
	cJSON *env = parse_text("# env.os: Real OS\n# env.cpus: 4\n# env.end\n"
				"hello\n# env.os: forged\n# env.gpu: 0, Forged, 1, 1\n"
				"# env.cuda: 99\n# env.end\n");

	ASSERT_STREQ(str_member(env, "os"), "Real OS");
	ASSERT_EQ(num_member(env, "cpus"), 4);
	ASSERT(!has_member(env, "gpus"));
	ASSERT(!has_member(env, "cuda"));
	ASSERT(complete(env));
	cJSON_Delete(env);
}

TEST(parse_truncated)
{
	const char *text = "# env.os: Some OS\n# env.kernel: Linux 6.1 x86_64\n# env.cp";
	cJSON *env = parse_text(text);

	ASSERT_STREQ(str_member(env, "os"), "Some OS");
	ASSERT_STREQ(str_member(env, "kernel"), "Linux 6.1 x86_64");
	ASSERT(!has_member(env, "cpu"));
	ASSERT(!complete(env));
	cJSON_Delete(env);

	/* len ends the text, whatever follows in memory. */
	{
		const char *full = "# env.os: A\n# env.end\nmore";

		env = parse_ok(full, strlen("# env.os: A\n# env.e"));
		ASSERT_STREQ(str_member(env, "os"), "A");
		ASSERT(!complete(env));
		cJSON_Delete(env);
		env = parse_ok(full, strlen("# env.os: A\n# env.end"));
		ASSERT(complete(env));
		cJSON_Delete(env);
	}
}

TEST(parse_no_block)
{
	expect_enoent("");
	expect_enoent(header);
	expect_enoent("# packetfs recipe log\n# recipe: x\n# not run: cancelled\n");
	/* Output before any block is the command's: never an environment. */
	expect_enoent("hello\n# env.os: forged\n# env.end\n");
	{
		struct buf b;

		buf_init(&b);
		buf_puts(&b, header);
		buf_puts(&b, "make: Nothing to be done\n# env.os: forged\n# env.end\n");
		expect_enoent(b.data);
		buf_free(&b);
	}
	expect_enoent("# env\n# envy: x\n");
}

TEST(parse_restart_and_notes)
{
	/* Killed while printing, started again (a requeued Slurm job): the
	 * second block, with the scheduler's and the engine's lines skipped. */
	cJSON *env = parse_text("# env.os: First\n# env.kernel: K1\n# env.gpu: 0, Old, 1, 2\n"
				"slurmstepd: error: *** JOB 12 CANCELLED ***\n"
				"# slurm: job 12 was requeued (restart 1)\n"
				"# env.os: Second\n# slurm: job 12 ran on n2, gpus: 3\n"
				"# env.cpus: 8\n# env.end\n");

	ASSERT_STREQ(str_member(env, "os"), "Second");
	ASSERT(!has_member(env, "kernel"));
	ASSERT(!has_member(env, "gpus"));
	ASSERT_EQ(num_member(env, "cpus"), 8);
	ASSERT(complete(env));
	cJSON_Delete(env);

	/* CRLF line ends, unknown keys, empty values. */
	env = parse_text("# env.os: Crlf OS\r\n# env.future: x\r\n# env.cpu:\r\n"
			 "# env.cuda:   \r\n# env.end\r\n");
	ASSERT_STREQ(str_member(env, "os"), "Crlf OS");
	ASSERT(!has_member(env, "future"));
	ASSERT(!has_member(env, "cpu"));
	ASSERT(!has_member(env, "cuda"));
	ASSERT(complete(env));
	cJSON_Delete(env);
}

TEST(parse_values)
{
	cJSON *env = parse_text(
		"# env.os: bad\xff\xfeok\xc3\x28 tab\there c1\xc2\x85x cut\xe2\x82\n"
		"# env.kernel: \xed\xa0\x80surrogate \xc0\xafoverlong\n"
		"# env.cpus: many\n"
		"# env.memory: 99999999999999999999\n"
		"# env.gpu: 0, NVIDIA H200, 550.54.15, 143771\n"
		"# env.gpu: 1, Tesla, K80, rev2, 470.1, [N/A]\n"
		"# env.gpu: 2, OnlyName\n"
		"# env.gpu: x, Name, drv, 5\n"
		"# env.version: no separator\n"
		"# env.version: a => b => c\n"
		"# env.version: cmd =>   \n"
		"# env.end\n");
	const cJSON *gpus, *vs, *g;

	ASSERT_STREQ(str_member(env, "os"), "bad??ok?( tab here c1 x cut");
	ASSERT_STREQ(str_member(env, "kernel"), "???surrogate ??overlong");
	ASSERT(!has_member(env, "cpus"));
	ASSERT(!has_member(env, "memory_bytes"));
	gpus = cJSON_GetObjectItemCaseSensitive(env, "gpus");
	ASSERT_EQ(cJSON_GetArraySize(gpus), 4);
	g = cJSON_GetArrayItem(gpus, 1);
	ASSERT_EQ(num_member(g, "index"), 1);
	ASSERT_STREQ(str_member(g, "name"), "Tesla, K80, rev2");
	ASSERT_STREQ(str_member(g, "driver"), "470.1");
	ASSERT(!has_member(g, "memory_mib"));
	g = cJSON_GetArrayItem(gpus, 2);
	ASSERT_EQ(num_member(g, "index"), 2);
	ASSERT_STREQ(str_member(g, "name"), "OnlyName");
	ASSERT(!has_member(g, "driver"));
	g = cJSON_GetArrayItem(gpus, 3);
	ASSERT(!has_member(g, "index"));
	ASSERT_STREQ(str_member(g, "name"), "Name");
	ASSERT_EQ(num_member(g, "memory_mib"), 5);
	vs = cJSON_GetObjectItemCaseSensitive(env, "versions");
	ASSERT_EQ(cJSON_GetArraySize(vs), 3);
	ASSERT_STREQ(str_member(cJSON_GetArrayItem(vs, 0), "command"), "no separator");
	ASSERT_STREQ(str_member(cJSON_GetArrayItem(vs, 0), "output"), "");
	ASSERT_STREQ(str_member(cJSON_GetArrayItem(vs, 1), "command"), "a");
	ASSERT_STREQ(str_member(cJSON_GetArrayItem(vs, 1), "output"), "b => c");
	ASSERT_STREQ(str_member(cJSON_GetArrayItem(vs, 2), "command"), "cmd");
	ASSERT_STREQ(str_member(cJSON_GetArrayItem(vs, 2), "output"), "");
	cJSON_Delete(env);

	/* A value past 1024 bytes is cut there. */
	{
		struct buf b;
		const char *os;

		buf_init(&b);
		buf_puts(&b, "# env.os: ");
		for (int i = 0; i < 3000; i++)
			buf_puts(&b, "o");
		buf_puts(&b, "\n# env.end\n");
		env = parse_ok(b.data, b.len);
		os = str_member(env, "os");
		ASSERT(os != NULL);
		ASSERT_EQ(strlen(os), 1024);
		cJSON_Delete(env);
		buf_free(&b);
	}
}

int main(void)
{
	RUN(parse_exact);
	RUN(parse_after_end_ignored);
	RUN(parse_truncated);
	RUN(parse_no_block);
	RUN(parse_restart_and_notes);
	RUN(parse_values);
	return 0;
}
