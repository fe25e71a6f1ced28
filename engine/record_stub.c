/*
 * record_stub.c - engine_record and engine_record_cancel (engine_int.h)
 * until the pipeline's recorded runs land: every request is refused with
 * -ENOSYS, so that the recorder's file and CLI build and their refusals
 * can be tested. Removed when the real functions arrive.
 */
#include <errno.h>
#include <stdio.h>

#include "engine_int.h"

int engine_record(struct engine *e, const char *item, const struct record_req *req,
		  int64_t *run_id, int *run_no, char *log, size_t logsize, char *why, size_t whysize)
{
	snprintf(why, whysize, "recorded runs are not implemented yet");
	return -ENOSYS;
}

int engine_record_cancel(struct engine *e, const char *item, int64_t run_id, char *why,
			 size_t whysize)
{
	snprintf(why, whysize, "recorded runs are not implemented yet");
	return -ENOSYS;
}
