#!/usr/bin/env bash
# test-timeout: 300
# Readers hammering packet files while the engine rewrites them always see one consistent
# version, and nothing hangs. Three items run a full pipeline together (plan; print, which talks
# a lot; validate with 01-build, 02-lint and 08-stream, which prints 400 lines over ~4 s; review,
# which asks for changes once, so print, validate and review run twice) while reader processes
# loop over every item until the pipelines are done (with a hard bound):
#   status       every SPEC §4 key exactly once as `key: value`, a known state, sane values
#   status.json  one JSON object with the same keys (no duplicates), same checks
#   evidence.md  a whole table: heading [n/m validated] agreeing with the rows, header,
#                separator, complete rows, the "Generated from" line last, final newline
#   change.diff  empty only before print ran, else a whole diff that `git apply --check`
#                accepts on a checkout of the base
#   logs         stages/*.log, validation/logs/*.log, registry.jsonl, ITEM/events and
#                MOUNT/events: each read continues the previous one (never fewer or other
#                bytes); events and registry lines are whole JSON objects
#   notes.md     rewritten all the while by an editor, alternating `cat > notes.md` of a whole
#                version and `sed -i`: a read is exactly one version written, except that while
#                a `cat >` runs an empty file, a prefix of the new version, or a whole old
#                version followed by the new one's bytes past its end (cat's second read(2)
#                after the rewrite), or the old version's first pages followed by the new
#                one's bytes from that page on (the kernel reads a FUSE file page by page) is
#                accepted: the transient states of O_TRUNC then the write landing, which
#                reads do not see atomically;
#                sed -i (temp file renamed over) must show the old or the new version only
# and (all readers) no version older than one already seen. Every read is `timeout 10 cat`; a
# hang fails with the file's name. Reader and editor logic: tests/fixtures/stress.py. An
# inconsistent read is saved under $T/stress/bad/ ($T is kept then) and fails the test.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
RUN_RECIPES="01-build 02-lint 08-stream"
# shellcheck disable=SC2086
pipeline_store "$(plan_stage $RUN_RECIPES)" "$(stage_json print change.md chatty.sh 60 print.sh)" \
	"$(validate_stage)" "$(review_loop 3 chatty.sh 30 review-until.sh 2)"
git clone -q "$REPO" "$T/base"

ITEMS="fix-1 fix-2 fix-3"
STATUS_FILES=()
for i in $ITEMS; do
	new_item "$i"
	STATUS_FILES+=("$M/$i/status")
	printf 'Make the greeting of %s say "new".\n' "$i" >"$M/$i/brief.md"
done

W=$T/stress
mkdir -p "$W/bad" "$W/stats"
STRESS=$FIXTURES/stress.py
# The interpreter itself, first on PATH: a wrapper such as a pyenv shim costs a second a start
# on a loaded host (lib.sh's helpers run python3 too).
PY=$(python3 -c 'import sys; print(sys.executable)')
PATH=$(dirname "$PY"):$PATH
# Seconds the pipelines may take under load (a hang bound, not a speed goal: ~20 s here, 60 s was
# once too few on a loaded CI host); readers and editor stop by themselves later.
BOUND=150
common=(--dir "$W" --deadline $((BOUND + 20)))

# The editor writes its first version before the notes readers start.
bg "$PY" "$STRESS" edit --doc "$M/fix-1/notes.md" --stop "$W/stop-editor" \
	"${common[@]}"
EDITOR=$BG
wait_for test -s "$M/fix-1/notes.md"

READERS=()
reader()
{
	bg "$PY" "$STRESS" read "$1" --name "$2" --mount "$M" --stop "$W/stop" \
		"${common[@]}" "${@:3}"
	READERS+=("$BG")
}
all=$(echo $ITEMS | tr ' ' ,)
reader status status --items "$all"
reader json json --items "$all"
reader evidence evidence --items "$all" --recipes "$RUN_RECIPES"
reader diff diff --items "$all" --base "$T/base"
reader logs logs-1 --items fix-1 --root-events
reader logs logs-2 --items fix-2
reader logs logs-3 --items fix-3
reader notes notes-1 --items fix-1 --doc notes.md
reader notes notes-2 --items fix-1 --doc notes.md

readers_ready()
{
	local r
	for r in status json evidence diff logs-1 logs-2 logs-3 notes-1 notes-2; do
		[ -e "$W/ready.$r" ] || return 1
	done
}
wait_for readers_ready
for i in $ITEMS; do
	ctl "$M" "$i" advance
done

# Until every item is done (or one failed, or a reader or the editor quit early), bounded. The
# loop spawns little (one timeout+cat a turn), to leave the CPUs to the readers and the engine.
running()
{
	local st=""
	read -r _ _ st _ 2>/dev/null <"/proc/$1/stat" && [ "$st" != Z ]
}
end=$(($(date +%s) + BOUND))
while :; do
	out=$(timeout -k 5 10 cat "${STATUS_FILES[@]}") || fail "reading the status files hung or failed"
	ndone=0
	while IFS= read -r line; do
		case "$line" in
		"state: done") ndone=$((ndone + 1)) ;;
		"state: failed" | "state: blocked") fail "an item is ${line#state: }: $out" ;;
		esac
	done <<<"$out"
	[ "$ndone" = 3 ] && break
	quit=""
	for p in "${READERS[@]}" "$EDITOR"; do
		running "$p" || quit+=" $p"
	done
	[ -z "$quit" ] || break
	[ "$(date +%s)" -le "$end" ] || fail "pipelines not done after ${BOUND}s: $out"
	sleep 0.5
done

# Stop the editor first, so that the readers' last round sees its last version.
touch "$W/stop-editor"
rc=0
wait "$EDITOR" || rc=$?
[ "$rc" = 0 ] || fail "the editor failed (exit $rc)"
touch "$W/stop"
failed=0
for p in "${READERS[@]}"; do
	rc=0
	wait "$p" || rc=$?
	[ "$rc" = 0 ] || failed=$((failed + 1))
done
# What the readers did (printed first, also when they failed): reads, rounds, transients.
"$PY" - "$W/stats" <<'PY'
import glob, json, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/*.json")):
    s = json.load(open(p))
    print("# reader %-8s %5d reads in %5.1f s %s" % (os.path.basename(p)[:-5], s["reads"],
          s["seconds"], {k: v for k, v in s.items() if k not in ("reads", "seconds", "lengths")}))
PY
if [ "$failed" != 0 ] || [ -n "$(ls -A "$W/bad")" ]; then
	# shellcheck disable=SC2034 # read by the cleanup of lib.sh
	PFS_KEEP=1 # keep $T: the offending reads are in $W/bad
	fail "$failed readers saw inconsistent reads or hung (see above); saved in $W/bad"
fi
[ "$ndone" = 3 ] || fail "a reader or the editor quit before the pipelines were done: $out"

# Enough reads of each kind, and the logs were read while they grew.
"$PY" - "$W/stats" $ITEMS <<'PY' || fail "the readers did not see enough"
import glob, json, os, sys
st = {os.path.basename(p)[:-5]: json.load(open(p)) for p in glob.glob(sys.argv[1] + "/*.json")}
items = sys.argv[2:]
for name in ("status", "json", "evidence", "diff"):
    assert st[name]["rounds"] >= 5, "%s reader made only %d rounds" % (name, st[name]["rounds"])
for i in items:
    assert st["diff"].get("diff iteration " + i) == 2, "diff reader never saw iteration 2 of " + i
for n, i in enumerate(items, 1):
    lens = st["logs-%d" % n]["lengths"]
    grown = max((v for k, v in lens.items() if "-08-stream-" in k), default=0)
    assert grown >= 3, "no 08-stream log of %s was read while it grew: %s" % (i, lens)
for name in ("notes-1", "notes-2"):
    assert st[name].get("notes strict", 0) >= 5, "%s: few strict reads: %s" % (name, st[name])
    assert st[name].get("versions", 0) >= 2, "%s saw fewer than 2 versions" % name
PY

# The final state is whole and settled.
for i in $ITEMS; do
	d=$M/$i
	check_status "$M" "$i"
	assert_eq 2 "$(status_field "$M" "$i" iteration)" "$i iteration"
	assert_contains "$(cat "$d/validation/evidence.md")" "[3/3 validated]" "$i evidence.md"
	reg check "$d/validation/registry.jsonl" "$d" || fail "$i: registry lines or logs do not match"
	assert_eq 6 "$(reg count "$d/validation/registry.jsonl" status=validated source=engine)" \
		"$i validated runs"
	for log in "$d"/validation/logs/*-08-stream-*.log; do
		assert_eq 400 "$(grep -c "^stream $i line [0-9]* of 400" "$log")" "stream lines in $log"
	done
	(cd "$T/base" && git apply --check) <"$d/change.diff" || fail "$i: change.diff does not apply"
done
exit 0
