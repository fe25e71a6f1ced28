/*
 * test-cenv.c - compute-env.md's text (engine/format/cenv.c): before any
 * probing, while probing (what is known, the rest pending), and once done,
 * with GPUs or none, the Slurm section from sinfo's rows or its error, and
 * the probes' answers; table cells stay one cell.
 */
#include <stdlib.h>
#include <string.h>

#include "cenv.h"
#include "test.h"
#include "util.h"

static char *render(const struct cenv *c)
{
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(cenv_render(c, &b), 0);
	return buf_steal(&b);
}

/* Two probes: torch (present) and docker (absent), both pending. */
static void probes(struct cenv *c)
{
	c->probes = calloc(3, sizeof(*c->probes));
	ASSERT(c->probes != NULL);
	c->nprobes = 3;
	c->probes[0].name = strdup("torch");
	c->probes[0].command = strdup("python3 -c 'import torch; print(torch.__version__)'");
	c->probes[1].name = strdup("docker");
	c->probes[1].command = strdup("docker info");
	c->probes[2].name = strdup("slow");
	c->probes[2].command = strdup("sleep 30");
}

TEST(words)
{
	ASSERT_STREQ(cenv_answer_word(CENV_PENDING), "pending");
	ASSERT_STREQ(cenv_answer_word(CENV_PRESENT), "present");
	ASSERT_STREQ(cenv_answer_word(CENV_ABSENT), "absent");
	ASSERT_STREQ(cenv_answer_word(CENV_TIMED_OUT), "absent (timed out)");
}

TEST(pending)
{
	struct cenv c = {0};
	char *t;

	probes(&c);
	t = render(&c);
	ASSERT_CONTAINS(t, "# Compute environment\n\nNot probed yet: answers pending.\n\n"
			"## This host\n\nPending.\n\n## Probes\n\n| probe | answer | command |\n");
	ASSERT_CONTAINS(t, "| torch | pending | `python3 -c 'import torch; print(torch.__version__)'` |\n");
	ASSERT_CONTAINS(t, "| docker | pending | `docker info` |\n");
	ASSERT(strstr(t, "## Slurm") == NULL);
	free(t);
	/* Probing: the host known, one probe answered. */
	c.started_ns = 1764781200000000000LL;
	c.host = strdup("{\"os\":\"Debian GNU/Linux 12 (bookworm)\",\"kernel\":\"Linux 6.1 x86_64\","
			"\"cpu\":\"Xeon\",\"cpus\":2,\"memory_bytes\":2147483648,\"complete\":true}");
	c.probes[0].answer = CENV_PRESENT;
	c.probes[0].text = strdup("2.3.0");
	t = render(&c);
	ASSERT_CONTAINS(t, "Probing since 2025-12-03T17:00:00Z: some answers are still pending.\n");
	ASSERT_CONTAINS(t, "- OS: Debian GNU/Linux 12 (bookworm)\n- Kernel: Linux 6.1 x86_64\n"
			"- CPU: Xeon\n- CPUs: 2\n- Memory: 2.0 GiB (2147483648 bytes)\n"
			"- GPUs: none (nvidia-smi is not on PATH or did not answer)\n");
	ASSERT_CONTAINS(t, "| torch | 2.3.0 |");
	ASSERT_CONTAINS(t, "| docker | pending |");
	free(t);
	cenv_clear(&c);
	ASSERT(c.probes == NULL && c.nprobes == 0 && c.host == NULL);
	cenv_clear(NULL);
}

TEST(done)
{
	struct cenv c = {0};
	char *t;

	probes(&c);
	c.started_ns = 1764781200000000000LL;
	c.finished_ns = c.started_ns + 2500000000LL;
	c.host = strdup("{\"os\":\"Debian\",\"gpus\":[{\"index\":0,\"name\":\"NVIDIA H200\","
			"\"driver\":\"550.54.15\",\"memory_mib\":143771},{\"index\":1,\"name\":\"A|B\"}],"
			"\"cuda\":\"12.4\",\"complete\":true}");
	c.slurm = 1;
	c.sinfo = strdup("gpu*|up|2|idle|node[1-2]|gpu:h200:8\ncpu|up|4|mixed|c[1-4]|(null)\n\n"
			 "not a row\n");
	c.probes[0].answer = CENV_PRESENT;
	c.probes[0].text = strdup("");
	c.probes[1].answer = CENV_ABSENT;
	c.probes[1].text = strdup("exit 1: Cannot connect | daemon");
	c.probes[2].answer = CENV_TIMED_OUT;
	t = render(&c);
	ASSERT_CONTAINS(t, "Probed at 2025-12-03T17:00:02Z (in 2.5 s).\n");
	ASSERT_CONTAINS(t, "- OS: Debian\n- Kernel: unknown\n- CPU: unknown\n- CUDA: 12.4\n\n"
			"| GPU | model | memory | driver |\n|---|---|---|---|\n"
			"| 0 | NVIDIA H200 | 143771 MiB | 550.54.15 |\n| 1 | A\\|B | unknown |  |\n\n");
	ASSERT_CONTAINS(t, "## Slurm\n\n| partition | availability | nodes | state | node list | GRES |\n"
			"|---|---|---|---|---|---|\n| gpu* | up | 2 | idle | node[1-2] | gpu:h200:8 |\n"
			"| cpu | up | 4 | mixed | c[1-4] | (null) |\n\n## Probes");
	ASSERT(strstr(t, "not a row") == NULL);
	ASSERT_CONTAINS(t, "| torch |  | `");
	ASSERT_CONTAINS(t, "| docker | absent (exit 1: Cannot connect \\| daemon) | `docker info` |\n");
	ASSERT_CONTAINS(t, "| slow | absent (timed out) | `sleep 30` |\n");
	free(t);
	free(c.sinfo);
	c.sinfo = NULL;
	c.sinfo_error = strdup("not on PATH");
	t = render(&c);
	ASSERT_CONTAINS(t, "## Slurm\n\nsinfo did not answer: not on PATH.\n\n");
	free(t);
	cenv_clear(&c);
	/* No probes configured. */
	c.started_ns = 1;
	c.finished_ns = 2;
	t = render(&c);
	ASSERT_CONTAINS(t, "## Probes\n\nNone: pipeline.json names no \"probes\".\n");
	free(t);
}

int main(void)
{
	RUN(words);
	RUN(pending);
	RUN(done);
	return 0;
}
