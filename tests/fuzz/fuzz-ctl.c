/*
 * fuzz-ctl.c - the syntax of ctl's command lines (ctlline.h,
 * engine/format/ctlline.c): the input as what is written to an item's
 * ctl, split at '\n' as the handle splits it; each line is parsed, shown,
 * and, when short, each of its prefixes judged as a flush judges a
 * fragment. (Whether a named stage or recipe exists is checked against a
 * running engine by engine/namespace/ctl.c, over this syntax.)
 *
 * Contract checked: a line parses (a known verb; an argument exactly when
 * the verb takes one, inside the line, non-empty, with no space or control
 * byte) or is refused with -EINVAL and a reason; a line over CTL_LINE_MAX
 * is refused; the shown form is NUL-terminated within its buffer; every
 * strict prefix of a valid line either parses or is a prefix (never
 * CTL_PREFIX_NO), and a CTL_PREFIX_NAME names a piece of the fragment.
 */
#include <errno.h>

#include "ctlline.h"
#include "fuzz.h"

/* Lines up to this length have all their prefixes judged. */
#define PREFIX_CHECK_MAX 256

static int plain(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return 0;
	return 1;
}

static void check_line(const char *s, size_t len)
{
	struct ctl_line l, p;
	char why[256], shown[80];
	enum ctl_prefix pr;
	size_t k;
	int rc;

	why[0] = '\0';
	rc = ctl_line_parse(s, len, &l, why, sizeof(why));
	CHECK(rc == 0 || rc == -EINVAL);
	ctl_line_shown(s, len, shown, sizeof(shown));
	CHECK(memchr(shown, '\0', sizeof(shown)) != NULL);
	if (rc) {
		CHECK(why[0] != '\0');
		return;
	}
	CHECK(len <= CTL_LINE_MAX);
	CHECK(l.verb && l.verb[0]);
	CHECK((l.kind == CTL_ARG_STAGE) == (strcmp(l.verb, "run") == 0));
	CHECK((l.kind == CTL_ARG_RECIPE) == (strcmp(l.verb, "rerun") == 0));
	if (l.kind == CTL_ARG_NONE) {
		CHECK(l.arg == NULL && l.arg_len == 0);
	} else {
		CHECK(l.arg >= s && l.arg + l.arg_len <= s + len && l.arg_len > 0);
		CHECK(plain(l.arg, l.arg_len));
	}
	if (len > PREFIX_CHECK_MAX)
		return;
	for (k = 0; k < len; k++) {
		pr = ctl_line_prefix(s, k, &p);
		if (pr == CTL_PREFIX_NAME) {
			CHECK(p.kind != CTL_ARG_NONE && p.arg >= s && p.arg + p.arg_len <= s + k);
			CHECK(p.arg_len > 0 && plain(p.arg, p.arg_len));
		}
		CHECK(pr != CTL_PREFIX_NO || ctl_line_parse(s, k, &p, NULL, 0) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *s, *nl;
	size_t at = 0, len;

	for (;;) {
		s = text + at;
		nl = memchr(s, '\n', size - at);
		len = nl ? (size_t)(nl - s) : size - at;
		check_line(s, len);
		(void)ctl_line_blank(s, len);
		if (!nl)
			break;
		at += len + 1;
	}
	return 0;
}
