#!/usr/bin/env bash
# test-timeout: 180
# A measured recipe with "run_as": USER (the daemon root): the checkouts of the base and of the
# head are USER's (every file, and git's administrative directory of each), so the runs, as
# USER, build in them and USER's git reads them; the batch alternates base and head and ends
# validated with the change; the checkouts are removed afterwards.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
run_as_user
rgit() { git -c safe.directory='*' "$@"; }
base=$(rgit -C "$REPO" rev-parse main)

RECIPES=$TEAM_DIR/recipes
BIN=$TEAM_DIR/bin
mkdir -p "$RECIPES" "$BIN"
cp "$FIXTURES/measure/bench.sh" "$FIXTURES/stages/plan.sh" "$FIXTURES/stages/print.sh" "$BIN/"
# Each run says who it is and who owns its checkout, builds a file there, then benchmarks.
printf '%s\n' '#!/bin/sh' '# summary: the benchmark, base against head, as USER' '# needs: none' \
	'# measure: base' '# repeat: 2' \
	'echo "$(id -u) $(stat -c %u .) $(stat -c %u .git) $(find . -path ./.git -prune -o ! -user "$(id -u)" -print | wc -l)" >>"$BENCH_ORDER.who"' \
	'touch built-here || exit 1' \
	"exec '$BIN/bench.sh'" >"$RECIPES/07-bench.sh"
chmod 0755 "$RECIPES"/* "$BIN"/*
export BENCH_ORDER=$TEAM_DIR/order
touch "$BENCH_ORDER" "$BENCH_ORDER.who" "$BENCH_ORDER.n"
chown "$U" "$BENCH_ORDER" "$BENCH_ORDER.who" "$BENCH_ORDER.n"

STORE=$TEAM_DIR/store
pipeline_json "$T/pipeline.json" "$REPO" "$RECIPES" "\"gpus\": 0, \"run_as\": \"$U\"," \
	"{\"name\": \"plan\", \"run\": $(argv_json /bin/bash "$BIN/plan.sh" 07-bench),
	  \"produces\": [\"plan.md\"]}" \
	"{\"name\": \"print\", \"run\": $(argv_json /bin/bash "$BIN/print.sh"), \"produces\": [\"change.md\"]}" \
	'{"name": "validate", "recipes": "plan"}'
out=$("$PFS" init "$STORE" --repo "$REPO" --pipeline "$T/pipeline.json" 2>&1) ||
	fail "packetfs init failed: $out"
chgrp "$TEAM" "$STORE"
mount_team
run_as "$U" mkdir -m 2775 "$M/fix-1" || fail "$U cannot make an item"
d=$M/fix-1
r=$d/validation/registry.jsonl

ctl "$M" fix-1 advance
assert_eq done "$(settled fix-1)" \
	"state after the pipeline (last_error: $(status_field "$M" fix-1 last_error))"
head=$(status_field "$M" fix-1 head)
uid=$(id -u "$U")
assert_eq "$(printf "$uid $uid $uid 0\n%.0s" 1 2 3 4)" "$(cat "$BENCH_ORDER.who")" \
	"each run's uid, its checkout's owner, its .git's owner, files not USER's"
assert_eq "base $base
head $head
base $base
head $head" "$(cat "$BENCH_ORDER")" "the runs' sides and commits (USER's git), in order"
assert_eq validated "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line"
assert_contains "$(reg field "$r" -1 note recipe=07-bench)" "wall_s 0.995 -> 1.507 s"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
[ -z "$(ls -A "$STORE/measure" 2>/dev/null)" ] || fail "checkouts left: $(ls "$STORE/measure")"
[ ! -e "$REPO/.git/worktrees/measure-fix-1-base" ] || fail "git's record of the base checkout is left"
exit 0
