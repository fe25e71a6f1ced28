/*
 * fuzz-slurm.c - Slurm's answers (slurm.h, engine/exec/slurm_parse.c):
 * the input as the output of `scontrol -o -d show job` (each line through
 * slurm_parse_job) and of squeue in SLURM_QUEUE_FORMAT (each line through
 * slurm_parse_queue), lines split at '\n' as the executor splits them.
 *
 * Contract checked: what a parsed line gives is in range (run_s -1 or
 * 0..SLURM_RUN_S_MAX, counts and codes >= 0, at most 16 GPU indices >= 0,
 * strings terminated), and a refused line is -EINVAL.
 */
#include <errno.h>

#include "fuzz.h"
#include "slurm.h"

static void check_info(const struct slurm_info *in)
{
	CHECK(memchr(in->state, '\0', sizeof(in->state)));
	CHECK(memchr(in->reason, '\0', sizeof(in->reason)));
	CHECK(memchr(in->node, '\0', sizeof(in->node)));
	CHECK(in->run_s >= -1 && in->run_s <= SLURM_RUN_S_MAX);
	CHECK(in->restarts >= 0 && in->exit_code >= 0 && in->signal >= 0);
	CHECK(in->ngpus >= 0 && in->ngpus <= 16);
	for (int i = 0; i < in->ngpus; i++)
		CHECK(in->gpus[i] >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slurm_info in;
	char *text = fuzz_cstr(data, size), *line, *nl, id[32];
	int rc;

	if (!text)
		return 0;
	/* The whole text as one line, as scontrol -o prints a job. */
	rc = slurm_parse_job(text, &in);
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0)
		check_info(&in);
	for (line = text; line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		rc = slurm_parse_queue(line, id, &in);
		CHECK(rc == 0 || rc == -EINVAL);
		if (rc == 0) {
			CHECK(id[0] && strlen(id) < sizeof(id));
			CHECK(strspn(id, "0123456789_") == strlen(id));
			check_info(&in);
		}
		if (nl)
			*nl = '\0';
		rc = slurm_parse_job(line, &in);
		CHECK(rc == 0 || rc == -EINVAL);
		if (rc == 0)
			check_info(&in);
		CHECK(slurm_state_final(line) == 0 || slurm_state_final(line) == 1);
	}
	free(text);
	return 0;
}
