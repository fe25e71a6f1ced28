/*
 * fuzz-testcount.c - test runners' closing summaries (testcount_scan,
 * engine/format/testcount.c): the input as the log of a recipe run.
 *
 * Contract checked: a summary is found (1, with a tool) or not (0, tool
 * NONE and zero counts); counts are never negative; the note and the
 * outcome agree with the counts.
 */
#include "fuzz.h"
#include "testcount.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct testcount tc;
	enum testcount_outcome o;
	char note[128];
	int found;

	memset(&tc, 0x55, sizeof(tc));
	found = testcount_scan((const char *)data, size, &tc);
	CHECK(found == 0 || found == 1);
	CHECK(found ? tc.tool != TESTCOUNT_NONE && tc.tool != TESTCOUNT_JUNIT
		    : tc.tool == TESTCOUNT_NONE && !tc.ran && !tc.failed && !tc.skipped);
	CHECK(tc.ran >= 0 && tc.failed >= 0 && tc.skipped >= 0);
	o = testcount_outcome(&tc);
	CHECK(!found || o == (tc.ran == 0 ? TESTCOUNT_NO_TESTS
				   : tc.failed > 0 ? TESTCOUNT_FAILED : TESTCOUNT_PASSED));
	CHECK(testcount_note(&tc, note, sizeof(note)) == note && strlen(note) < sizeof(note));
	CHECK(testcount_tool_name(tc.tool) != NULL);
	return 0;
}
