#!/usr/bin/env bash
# print.sh - the example printer stage (knows the strkit sample project).
#
# Runs with cwd = the item directory on the mount. Makes the change in
# $PACKET_WORKTREE, the item branch checked out, and commits it there as
# "packetfs printer <printer@example.invalid>"; then writes change.md, the
# narrative of the change.
#
#   iteration 1   adds str_reverse() to strkit, with unit tests
#   iteration 2+  refines: adds a palindrome case to the str_reverse tests
#
# Deterministic and idempotent: each edit is made only when it is not
# there yet, so running the stage again commits nothing new. Uncommitted
# edits a killed earlier run left in the touched files are discarded first.
# The change is built and its tests run in a scratch copy before it is
# committed; a change that does not pass is not committed.
# Backquotes in single-quoted strings are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

wt=${PACKET_WORKTREE:-}
[ -n "$wt" ] || die "PACKET_WORKTREE is not set"
[ -d "$wt" ] || die "$wt: no such worktree"
iteration=${PACKET_ITERATION:-1}
item_dir=$PWD

hdr=include/strkit.h
src=src/strkit.c
tst=tests/test_strkit.c
for f in "$hdr" "$src" "$tst"; do
	[ -f "$wt/$f" ] || die "$wt/$f: missing; this example printer only knows the strkit sample project"
done

export GIT_AUTHOR_NAME="packetfs printer" GIT_AUTHOR_EMAIL="printer@example.invalid"
export GIT_COMMITTER_NAME="packetfs printer" GIT_COMMITTER_EMAIL="printer@example.invalid"

cd "$wt"
git checkout -q HEAD -- "$hdr" "$src" "$tst" README.md 2>/dev/null ||
	git checkout -q HEAD -- "$hdr" "$src" "$tst"

# Inserts the text of file $2 into file $1 before the first line matching
# the regular expression $3.
insert_before() {
	awk -v pat="$3" -v add="$2" '
		!done && $0 ~ pat { while ((getline l < add) > 0) print l; done = 1 }
		{ print }
		END { if (!done) exit 1 }' "$1" >"$1.new" || {
		rm -f "$1.new"
		die "$1: no line matches /$3/"
	}
	mv "$1.new" "$1"
}

# Inserts the text of file $2 into file $1 after the first line matching $3.
insert_after() {
	awk -v pat="$3" -v add="$2" '
		{ print }
		!done && $0 ~ pat { while ((getline l < add) > 0) print l; done = 1 }
		END { if (!done) exit 1 }' "$1" >"$1.new" || {
		rm -f "$1.new"
		die "$1: no line matches /$3/"
	}
	mv "$1.new" "$1"
}

snip=$(mktemp -d)
trap 'rm -rf "$snip"' EXIT
did=()

if ! grep -q 'str_reverse' "$hdr"; then
	cat >"$snip/decl" <<'EOF'
/* Reverses s in place, byte by byte; returns s. */
char *str_reverse(char *s);

EOF
	insert_before "$hdr" "$snip/decl" '^#endif'
	cat >>"$src" <<'EOF'

char *str_reverse(char *s)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len / 2; i++) {
		char t = s[i];

		s[i] = s[len - 1 - i];
		s[len - 1 - i] = t;
	}
	return s;
}
EOF
	cat >"$snip/test" <<'EOF'
static void test_reverse(void)
{
	char a[] = "strkit";
	char b[] = "";
	char c[] = "x";
	char d[] = "ab";

	CHECK(strcmp(str_reverse(a), "tikrts") == 0);
	CHECK(strcmp(str_reverse(b), "") == 0);
	CHECK(strcmp(str_reverse(c), "x") == 0);
	CHECK(strcmp(str_reverse(d), "ba") == 0);
}

EOF
	insert_before "$tst" "$snip/test" '^int main\(void\)'
	printf '\ttest_reverse();\n' >"$snip/call"
	insert_before "$tst" "$snip/call" 'printf\("%d passed'
	if [ -f README.md ] && ! grep -q str_reverse README.md; then
		printf -- '- `str_reverse` — reverses a string in place\n' >>README.md
	fi
	did+=("added str_reverse() to strkit, with four unit tests (a word, the empty string, one character, two characters)")
	subject="strkit: add str_reverse"
fi

if [ "$iteration" -ge 2 ] && ! grep -q '"level"' "$tst"; then
	printf '\tchar e[] = "level";\n' >"$snip/decl2"
	insert_after "$tst" "$snip/decl2" 'char d\[\] = "ab";'
	printf '\tCHECK(strcmp(str_reverse(e), "level") == 0);\n' >"$snip/check2"
	insert_after "$tst" "$snip/check2" 'str_reverse\(d\), "ba"'
	did+=("iteration $iteration: added a palindrome case to the str_reverse tests")
	subject=${subject:-"strkit: test str_reverse on a palindrome"}
fi

if [ "${#did[@]}" -gt 0 ]; then
	# Build and test a scratch copy before committing anything.
	mkdir "$snip/tree"
	tar --exclude=.git -cf - . | tar -C "$snip/tree" -xf -
	if ! make -C "$snip/tree" -s clean check >"$snip/check.log" 2>&1; then
		cat "$snip/check.log" >&2
		git checkout -q HEAD -- .
		die "the change does not pass 'make check'; nothing committed"
	fi
	tail -n 1 "$snip/check.log"
	files=("$hdr" "$src" "$tst")
	[ -f README.md ] && files+=(README.md)
	git add -- "${files[@]}"
	git commit -q -m "$subject" -m "$(printf '%s\n' "${did[@]}")" -m "Item: ${PACKET_ITEM:-?}"
	printf 'print.sh: committed %s on %s\n' "$(git rev-parse --short HEAD)" \
		"$(git rev-parse --abbrev-ref HEAD)"
else
	printf 'print.sh: nothing to change at iteration %s; the branch already holds it\n' "$iteration"
fi

head=$(git rev-parse HEAD)
base=${PACKET_BASE:-main}
range="$base...HEAD"
git rev-parse -q --verify "$base^{commit}" >/dev/null || range="HEAD~1...HEAD"
{
	printf '# Change: str_reverse for strkit\n\n'
	printf 'Item `%s`, branch `%s`, iteration %s, head `%s`.\n\n' "${PACKET_ITEM:-?}" \
		"${PACKET_BRANCH:-$(git rev-parse --abbrev-ref HEAD)}" "$iteration" "$head"
	printf '## What changed\n\n'
	printf -- '- `str_reverse(char *s)` reverses a NUL-terminated string in place, byte by\n'
	printf '  byte, and returns it; the empty string and one-character strings stay as\n'
	printf '  they are. It allocates nothing and never writes past the terminator.\n'
	printf -- '- `tests/test_strkit.c` checks it on a word, the empty string, one and two\n'
	printf '  characters'
	if grep -q '"level"' "$tst"; then
		printf ', and a palindrome'
	fi
	printf '.\n\n'
	if [ "${#did[@]}" -gt 0 ]; then
		printf '## This run\n\n'
		printf -- '- %s\n' "${did[@]}"
		printf '\n'
	else
		printf '## This run\n\nNothing new: the branch already held the change.\n\n'
	fi
	printf '## Commits\n\n```\n'
	git log --format='%h %s (%an)' "${range/.../..}"
	printf '```\n\n## Files\n\n```\n'
	git diff --stat "$range"
	printf '```\n'
} >"$snip/change.md"
# One write of the whole text: a document on the mount gains a revision at
# every close of its file, including the closes of the commands above.
cat "$snip/change.md" >"$item_dir/change.md"
printf 'print.sh: wrote change.md\n'
