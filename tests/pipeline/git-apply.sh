#!/usr/bin/env bash
# change.diff is merge-base(base, head)..head of the item branch with a/ b/ prefixes whatever
# the git config says, binary changes as git binary patches, and it applies on the base.
. "$(dirname "$0")/../lib.sh"
make_repo
# A user configuration that changes prefixes must not change change.diff.
git -C "$REPO" config diff.noprefix true
git -C "$REPO" config diff.mnemonicPrefix true
pipeline_item "$(plan_stage 02-lint)" "$(print_stage binary)"
assert_eq "" "$(cat "$d/change.diff")" "change.diff of a new item"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
head=$(worktree_head fix-1)
assert_head "$head" "$(status_field "$M" fix-1 head)" "status head"
diff=$(cat "$d/change.diff")
assert_contains "$diff" "diff --git a/hello.c b/hello.c" "change.diff"
assert_contains "$diff" "diff --git a/data.bin b/data.bin" "change.diff"
assert_contains "$diff" "GIT binary patch" "change.diff"
printf '%s\n' "$diff" | grep -Eq '^index 0{40}\.\.[0-9a-f]{40}$' ||
	fail "the binary file has no full index line: $diff"

# The base moves on after the item branched: the diff stays merge-base..head.
git -C "$REPO" checkout -q main
echo "unrelated" >"$REPO/OTHER.md"
git -C "$REPO" add OTHER.md
git -C "$REPO" commit -q -m "unrelated change on main"
git -C "$REPO" worktree add -q --detach "$T/check" "$(git -C "$STORE/worktrees/fix-1" merge-base main HEAD)"
cp "$d/change.diff" "$T/change.diff"
assert_eq "$diff" "$(cat "$T/change.diff")" "change.diff after the base moved on"
git -C "$T/check" apply --check "$T/change.diff" || fail "git apply --check of change.diff failed"
git -C "$T/check" apply "$T/change.diff" || fail "git apply of change.diff failed"
cmp "$T/check/hello.c" "$STORE/worktrees/fix-1/hello.c" || fail "hello.c differs after apply"
cmp "$T/check/data.bin" "$STORE/worktrees/fix-1/data.bin" || fail "data.bin differs after apply"
exit 0
