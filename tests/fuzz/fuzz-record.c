/*
 * fuzz-record.c - the recorder's request lines (record.h,
 * engine/namespace/record.c): the input as what is written to an item's
 * validation/record, split at '\n' as the handle splits it; each line is
 * classified and a request parsed, and each fragment judged as the flush
 * judges a line still open.
 *
 * Contract checked: a request is parsed (recipe and non-empty argv[0],
 * gpus and timeout_s in range) or refused with -EINVAL and a reason, or
 * -EFBIG for a line over RECORD_LINE_MAX.
 */
#include <errno.h>

#include "fuzz.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *s, *nl;
	struct record_request r;
	size_t at = 0, len;
	char why[256];
	int rc;

	for (;;) {
		s = text + at;
		nl = memchr(s, '\n', size - at);
		len = nl ? (size_t)(nl - s) : size - at;
		(void)record_line_open(s, len);
		if (record_line_kind(s, len) == RECORD_REQUEST) {
			why[0] = '\0';
			rc = record_parse(s, len, &r, why, sizeof(why));
			CHECK(rc == 0 || rc == -EINVAL || rc == -EFBIG || rc == -ENOMEM);
			if (rc == 0) {
				CHECK(r.recipe && r.recipe[0] && r.argv && r.argv[0] && r.argv[0][0]);
				CHECK(r.gpus >= -1 && r.gpus <= RECORD_GPUS_MAX);
				CHECK(r.timeout_s >= -1 && r.timeout_s <= RECORD_TIMEOUT_MAX);
				record_request_clear(&r);
				record_request_clear(&r);
			} else {
				CHECK(rc == -ENOMEM || why[0]);
			}
		}
		if (!nl)
			break;
		at += len + 1;
	}
	return 0;
}
