/*
 * fuzz-scope.c - plan.md's ```scope block and its keep patterns (scope.h,
 * engine/format/scope.c): scope_parse on the whole input, then every keep
 * pattern matched against every planned path and the comparison of the
 * block with its own paths as a change.
 *
 * Contract checked: the parse answers 0, 1, -EINVAL with a "plan.md: line
 * N: " message or -ENOMEM; an entry's path is non-empty, holds no newline,
 * NUL or control byte and does not start with '/'; a planned path is not
 * planned twice; a plain keep path matches itself; the comparison of the
 * block with its planned paths as edits finds none outside the plan.
 */
#include <errno.h>

#include "fuzz.h"
#include "scope.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scope sc;
	struct scope_change *ch;
	struct scope_result res;
	struct buf md, kept;
	char err[256];
	size_t i, j, n = 0;
	int rc;

	rc = scope_parse((const char *)data, size, &sc, err, sizeof(err));
	CHECK(rc == 0 || rc == 1 || rc == -EINVAL || rc == -ENOMEM);
	if (rc == -EINVAL)
		CHECK(strncmp(err, "plan.md: line ", 14) == 0);
	if (rc == 0)
		CHECK(sc.n == 0);
	if (rc != 1) {
		scope_free(&sc);
		return 0;
	}
	ch = calloc(sc.n + 1, sizeof(*ch));
	for (i = 0; i < sc.n; i++) {
		const char *p = sc.v[i].path;

		CHECK(p[0] && p[0] != '/' && sc.v[i].line > 0);
		for (j = 0; p[j]; j++)
			CHECK((unsigned char)p[j] >= 0x20 && p[j] != 0x7f);
		if (sc.v[i].verb == SCOPE_KEEP && !strpbrk(p, "*?[\\"))
			CHECK(scope_match(p, p));
		for (j = 0; j < sc.n; j++) {
			if (sc.v[j].verb == SCOPE_KEEP)
				continue;
			CHECK(scope_match(sc.v[i].path, sc.v[j].path) >= 0);
			if (j < i && sc.v[i].verb != SCOPE_KEEP)
				CHECK(strcmp(sc.v[i].path, sc.v[j].path) != 0);
		}
		if (ch && sc.v[i].verb != SCOPE_KEEP)
			ch[n++] = (struct scope_change){ 'M', p, NULL };
	}
	if (ch) {
		buf_init(&md);
		buf_init(&kept);
		if (scope_check(&sc, ch, n, "", &md, &kept, &res) == 0) {
			CHECK(res.outside == 0 && res.kept <= n);
			CHECK(md.data && strstr(md.data, "## Keep (do not touch)"));
		}
		buf_free(&md);
		buf_free(&kept);
		free(ch);
	}
	scope_free(&sc);
	return 0;
}
