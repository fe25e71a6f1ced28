/*
 * test-cenv-probe.c - compute-env.md's questions (engine/exec/cenv_probe.c):
 * a probe that answers (its first line that is not blank, trimmed, stderr
 * included), one not on PATH, one that fails (its status and first line),
 * one killed by a signal, one past its deadline; sinfo where there is none;
 * and this host read as runenv_parse's JSON.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cenv_probe.h"
#include "test.h"
#include "util.h"

static enum cenv_answer probe(const char *script, int timeout_s, char **text)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };

	return cenv_probe_run(argv, timeout_s, text);
}

/* Runs script as a probe with a 5 s deadline and checks its answer and
 * text. */
static void expect(const char *script, enum cenv_answer want, const char *want_text)
{
	char *text;

	ASSERT_EQ(probe(script, 5, &text), want);
	ASSERT_STREQ(text, want_text);
	free(text);
}

TEST(answers)
{
	char *argv[] = { (char *)"packetfs-no-such-probe", NULL }, *text;

	expect("echo; echo '  \t'; echo '  torch 2.3.0  '; echo more", CENV_PRESENT,
	       "torch 2.3.0");
	expect("echo 'on stderr' >&2", CENV_PRESENT, "on stderr");
	expect("true", CENV_PRESENT, "");
	ASSERT_EQ(cenv_probe_run(argv, 5, &text), CENV_ABSENT);
	ASSERT_STREQ(text, "not on PATH");
	free(text);
	expect("echo 'No module named torch' >&2; exit 3", CENV_ABSENT,
	       "exit 3: No module named torch");
	expect("exit 1", CENV_ABSENT, "exit 1");
	expect("kill -9 $$", CENV_ABSENT, "killed by signal 9");
	/* Past its deadline: its process group goes, children included. */
	ASSERT_EQ(probe("sleep 30 & wait", 1, &text), CENV_TIMED_OUT);
	ASSERT(text == NULL);
}

TEST(sinfo_absent)
{
	char *rows, *error, *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	ASSERT_EQ(setenv("PATH", "/nonexistent", 1), 0);
	ASSERT_EQ(cenv_probe_sinfo(&rows, &error), 0);
	ASSERT(rows == NULL);
	ASSERT_STREQ(error, "not on PATH");
	free(error);
	if (path)
		setenv("PATH", path, 1);
	free(path);
}

TEST(host)
{
	char *json;
	cJSON *h, *v;

	ASSERT_EQ(cenv_probe_host(&json), 0);
	h = cJSON_Parse(json);
	ASSERT(h != NULL);
	v = cJSON_GetObjectItemCaseSensitive(h, "kernel");
	ASSERT(cJSON_IsString(v) && strstr(v->valuestring, "Linux") != NULL);
	v = cJSON_GetObjectItemCaseSensitive(h, "memory_bytes");
	ASSERT(cJSON_IsNumber(v) && v->valuedouble > 0);
	ASSERT(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "complete")));
	cJSON_Delete(h);
	free(json);
}

int main(void)
{
	RUN(answers);
	RUN(sinfo_absent);
	RUN(host);
	return 0;
}
