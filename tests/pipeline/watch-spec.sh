#!/usr/bin/env bash
# examples/watch.sh sees every change of a full pipeline run (SPEC §3, "Watchers see
# everything"). The watcher starts on a fresh mount; one item then goes through plan, print,
# validate (recipes 01-build and 02-lint), review and the approved publish. sha256 snapshots of
# the item's files (but worktree/ and .history/) and of the root events, taken before and after
# the run, tell what the run changed: every file that is new or whose content differs must have
# at least one CREATE, MODIFY, CLOSE_WRITE or MOVED_TO line in the watcher's output since the
# run began, whether a stage program wrote it through the mount or the engine made it (logs,
# status, status.json, events, registry, evidence, change.diff). Fails with the list of the
# changes the watcher never reported. Also checks the watcher's line format
# "<UTC time> <event> <path relative to MOUNT>" and that it is still running.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
PLAN_RECIPES="01-build 02-lint" std_pipeline "$T/pipeline.json"
make_store "$T/pipeline.json"
mount_store

out=$T/watch.out
bg bash "$ROOT/examples/watch.sh" "$M" >"$out" 2>"$T/watch.err"
watcher=$BG
wait_for grep -q 'Watches established' "$T/watch.err"

new_item fix-1
d=$M/fix-1

# brief_written : (re)writes brief.md, then succeeds when the watcher has reported a
# CLOSE_WRITE of it. inotifywait -r watches a new directory's subdirectories before the
# directory itself, so a reported write in fix-1/ proves that fix-1/ and all it holds are
# watched. (A CREATE alone proves nothing: the watcher lists what a new directory holds.)
brief_written()
{
	printf 'Make the greeting say "new".\n' >"$d/brief.md"
	grep -Eq '^[^ ]+ ([A-Z_]+,)*CLOSE_WRITE(,[A-Z_]+)* fix-1/brief\.md$' "$out"
}
wait_for brief_written

# snapshot FILE : "sha256  path" of every file of the item (but worktree/ and .history/) and of
# the root events, paths relative to $M, sorted by path.
snapshot()
{
	(
		cd "$M" || exit
		find fix-1 \( -path fix-1/worktree -o -path fix-1/.history \) -prune -o -type f -print0 |
			xargs -0 sha256sum
		sha256sum events
	) | sort -k 2 >"$1"
}

mark=$(wc -l <"$out")
snapshot "$T/before"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
ctl "$M" fix-1 approve
wait_state "$M" fix-1 done

snapshot "$T/after"

# The changes of the run: "path (new)" or "path (changed)", and the bare paths.
awk 'NR == FNR { before[$2] = $1; next }
	!($2 in before) { print $2, "(new)"; next }
	before[$2] != $1 { print $2, "(changed)" }' \
	"$T/before" "$T/after" >"$T/changes"
cut -d' ' -f1 "$T/changes" | sort -u >"$T/expected"
for f in events fix-1/plan.md fix-1/status; do
	grep -qx "$f" "$T/expected" || fail "the run did not change $f? changes: $(cat "$T/changes")"
done

# reported : the paths the watcher reported created, modified, written or moved in since the
# run began (output lines after $mark), sorted, one a line.
reported()
{
	tail -n "+$((mark + 1))" "$out" | awk '{
		n = split($2, ev, ",")
		for (i = 1; i <= n; i++)
			if (ev[i] ~ /^(CREATE|MODIFY|CLOSE_WRITE|MOVED_TO)$/) {
				p = $0
				sub(/^[^ ]+ [^ ]+ /, "", p)
				print p
				break
			}
	}' | sort -u
}

missed()
{
	comm -23 "$T/expected" <(reported)
}

all_reported()
{
	[ -z "$(missed)" ]
}

# The watcher works on: still running, and every line in its format.
pid_alive "$watcher" || fail "watch.sh ended: $(cat "$T/watch.err")"
bad=$(grep -Evn '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z [A-Z_]+(,[A-Z_]+)* [^/ ].*$' \
	"$out" | head -n 5 || true)
[ -z "$bad" ] || fail "watch.sh lines not '<UTC time> <event> <path relative to MOUNT>': $bad"

# Wait (bounded) for the watcher to report every change; a subshell keeps wait_for's failure
# from ending the test before the list of misses is printed.
if ! (wait_for all_reported) 2>/dev/null; then
	missed_list=$(awk 'NR == FNR { m[$1]; next } $1 in m { print "  missed:   " $0 }' \
		<(missed) "$T/changes")
	reported_list=$(comm -12 "$T/expected" <(reported) | sed 's/^/  reported: /')
	fail "the watcher missed $(missed | wc -l) of $(wc -l <"$T/expected") changes of the run" \
		"(no CREATE/MODIFY/CLOSE_WRITE/MOVED_TO line within ${WAIT_BOUND}s):
$missed_list
$reported_list"
fi
pid_alive "$watcher" || fail "watch.sh ended: $(cat "$T/watch.err")"
exit 0
