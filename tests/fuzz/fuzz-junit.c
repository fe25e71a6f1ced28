/*
 * fuzz-junit.c - JUnit XML (testcount_junit, engine/format/testcount_junit.c):
 * the input as the file a run wrote to $PACKET_JUNIT. libxml2 reads it
 * streaming, without the network, DTDs or entity expansion.
 *
 * Contract checked: 0 with counts >= 0 and tool JUNIT, or -EINVAL/-EFBIG/
 * -ENOMEM with zeroed counts and a reason.
 */
#include <errno.h>

#include "fuzz.h"
#include "testcount.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct testcount tc;
	char err[256];
	int rc;

	err[0] = '\0';
	rc = testcount_junit((const char *)data, size, NULL, &tc, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -EFBIG || rc == -ENOMEM);
	if (rc == 0) {
		CHECK(tc.tool == TESTCOUNT_JUNIT);
		CHECK(tc.ran >= 0 && tc.failed >= 0 && tc.skipped >= 0 && tc.failed <= tc.ran);
	} else {
		CHECK(tc.tool == TESTCOUNT_NONE && !tc.ran && !tc.failed && !tc.skipped);
		CHECK(rc == -ENOMEM || err[0]);
	}
	return 0;
}
