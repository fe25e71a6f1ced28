#!/usr/bin/env bash
# A print stage that committed and was then cut off is never run again on top of its own commits
# (SPEC §5 crash recovery): after a kill -9 of the daemon (re-queued, the default) and after a
# packetfs umount (with "on_interrupt": "fail"), the next mount finds the branch and the worktree
# back at the head the run started from, the interrupted commit kept under the ref that the run's
# log, the events and (while the item waits) status's last_error name, and the rerun leaves
# exactly the commits of one run.
# test-timeout: 240
. "$(dirname "$0")/../lib.sh"

# The print stage: commits f1; its first run then blocks (its pids in $1/pids), a later run goes
# on to commit f2 and writes change.md.
cat >"$T/print.sh" <<'EOS'
#!/usr/bin/env bash
set -euo pipefail
state=$1 item_dir=$PWD
cd "$PACKET_WORKTREE"
n=$(( $(cat "$state/runs" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$state/runs"
echo "f1 of run $n" >f1
echo "scratch of run $n" >scratch.txt # untracked: it stays where it is
git add f1
git commit -q --allow-empty -m "add f1"
if [ "$n" = 1 ]; then
	echo "unfinished" >>README.md # an uncommitted change to a tracked file: dropped
	sleep 300 &
	printf '%s\n%s\n' "$$" "$!" >"$state/pids.tmp"
	mv "$state/pids.tmp" "$state/pids"
	wait
fi
echo f2 >f2
git add f2
git commit -q -m "add f2"
cd "$item_dir"
echo "added f1 and f2" >>change.md
EOS

# one_case HOW : a fresh store under $T/HOW whose print stage is cut off by HOW (kill9, umount).
one_case()
{
	local how=$1 start cut ref log
	mkdir "$T/$how"
	make_repo "$T/$how/repo"
	local extra=""
	[ "$how" = umount ] && extra='"on_interrupt": "fail",'
	EXTRA=$extra pipeline_with "$T/$how/pipeline.json" \
		"$(printf '{"name": "print", "run": %s, "produces": ["change.md"]}' \
			"$(argv_json /bin/bash "$T/print.sh" "$T/$how")")"
	STORE=$T/$how/store
	"$PFS" init "$STORE" --repo "$REPO" --pipeline "$T/$how/pipeline.json" >/dev/null ||
		fail "$how: packetfs init failed"
	mount_store "$T/$how/mnt"
	new_item fix-1
	start=$(git -C "$REPO" rev-parse packetfs/fix-1)
	ctl "$M" fix-1 advance
	wait_for test -s "$T/$how/pids"
	mapfile -t pids <"$T/$how/pids"
	cut=$(git -C "$REPO" rev-parse packetfs/fix-1)
	[ "$cut" != "$start" ] || fail "$how: the first print made no commit"

	if [ "$how" = kill9 ]; then
		kill_daemon
	else
		umount_store
	fi
	mount_store "$M"
	for p in "${pids[@]}"; do
		wait_gone "$p"
	done
	if [ "$how" = umount ]; then
		# Failed, as configured: the branch waits at the start head; status names the ref.
		wait_state "$M" fix-1 failed
		assert_eq "$start" "$(git -C "$REPO" rev-parse packetfs/fix-1)" "$how: branch after the mount"
		assert_contains "$(status_field "$M" fix-1 last_error)" \
			"refs/packetfs/interrupted/fix-1/1" "$how: last_error"
		ctl "$M" fix-1 "run print"
	fi
	assert_eq done "$(settled fix-1)" "$how: state after the rerun"

	log=$(cat "$M/fix-1/stages/1-print.log")
	assert_contains "$log" "interrupted" "$how: the first print's log"
	ref=$(grep -o 'refs/packetfs/interrupted/[^ ;]*' <<<"$log" | head -n 1 || true)
	assert_eq "refs/packetfs/interrupted/fix-1/1" "$ref" "$how: the ref the log names"
	assert_eq "$cut" "$(git -C "$REPO" rev-parse "$ref")" "$how: the interrupted head under $ref"
	grep '"type":"rewound"' "$M/fix-1/events" | grep -q "\"ref\":\"$ref\"" ||
		fail "$how: no rewound event names $ref: $(cat "$M/fix-1/events")"
	grep '"type":"rewound"' "$M/fix-1/events" | grep -q "\"from\":\"$cut\",\"to\":\"$start\"" ||
		fail "$how: the rewound event does not name both heads"

	# Exactly the commits of one run, and a worktree at them.
	assert_eq "$(printf 'add f2\nadd f1')" "$(git -C "$REPO" log --format=%s "$start..packetfs/fix-1")" \
		"$how: commits on the branch"
	assert_eq "f1 of run 2" "$(cat "$STORE/worktrees/fix-1/f1")" "$how: f1 in the worktree"
	assert_eq "$(git -C "$REPO" rev-parse packetfs/fix-1)" "$(worktree_head fix-1)" "$how: worktree head"
	assert_eq "?? scratch.txt" "$(git -C "$STORE/worktrees/fix-1" status --porcelain)" \
		"$how: the worktree after the rerun"
	umount_store
	note "$how: the rerun left the commits of one run; $ref keeps the interrupted one"
}

one_case kill9
one_case umount
exit 0
