#!/usr/bin/env bash
# test-timeout: 180
# "run_as": USER, the daemon root: a print stage cut off by kill -9 after its first commit is
# rewound at the next mount as without run_as (tests/pipeline/interrupt-print.sh), and what git
# rewrote as root for that (the worktree's files, its index, the branch's ref) is USER's again:
# the rerun, as USER, edits the files the rewind restored and commits, and the branch holds exactly
# the commits of one run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
run_as_user
rgit() { git -c safe.directory='*' "$@"; }
mkdir -p "$TEAM_DIR/bin" "$TEAM_DIR/state" "$TEAM_DIR/recipes"
chown "$U:$TEAM" "$TEAM_DIR/state"
cat >"$TEAM_DIR/bin/print.sh" <<'EOS'
#!/usr/bin/env bash
set -euo pipefail
state=$1 item_dir=$PWD
cd "$PACKET_WORKTREE"
n=$(( $(cat "$state/runs" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$state/runs"
echo "f1 of run $n" >f1
git add f1
git commit -q --allow-empty -m "add f1"
if [ "$n" = 1 ]; then
	git rm -q Makefile # the rewind makes Makefile again
	git commit -q -m "drop Makefile"
	echo "unfinished" >>README.md # dropped by the rewind: README.md is written again
	sleep 300 &
	printf '%s\n%s\n' "$$" "$!" >"$state/pids.tmp"
	mv "$state/pids.tmp" "$state/pids"
	wait
fi
echo "run $n" >>README.md
echo "# run $n" >>Makefile
git add README.md Makefile
git commit -q -m "add f2"
cd "$item_dir"
echo "added f1 and edited README.md" >>change.md
EOS
chmod 0755 "$TEAM_DIR/bin/print.sh"

STORE=$TEAM_DIR/store
pipeline_json "$T/pipeline.json" "$REPO" "$TEAM_DIR/recipes" "\"gpus\": 0, \"run_as\": \"$U\"," \
	"{\"name\": \"print\", \"run\": $(argv_json /bin/bash "$TEAM_DIR/bin/print.sh" \
		"$TEAM_DIR/state"), \"produces\": [\"change.md\"]}"
out=$("$PFS" init "$STORE" --repo "$REPO" --pipeline "$T/pipeline.json" 2>&1) ||
	fail "packetfs init failed: $out"
chgrp "$TEAM" "$STORE"
mount_team
run_as "$U" mkdir -m 2775 "$M/fix-1" || fail "$U cannot make an item"
start=$(rgit -C "$REPO" rev-parse packetfs/fix-1)
ctl "$M" fix-1 advance
wait_for test -s "$TEAM_DIR/state/pids"
mapfile -t pids <"$TEAM_DIR/state/pids"

kill_daemon
mount_team "$M"
for p in "${pids[@]}"; do
	wait_gone "$p"
done
assert_eq done "$(settled fix-1)" "state after the rerun: $(cat "$M/fix-1/stages/2-print.log" 2>&1)"
assert_eq "$(printf 'add f2\nadd f1')" "$(rgit -C "$REPO" log --format=%s "$start..packetfs/fix-1")" \
	"commits on the branch"
rgit -C "$REPO" rev-parse -q --verify refs/packetfs/interrupted/fix-1/1 >/dev/null ||
	fail "no refs/packetfs/interrupted/fix-1/1"
for f in README.md Makefile .git; do
	assert_eq "$U" "$(stat -c %U "$STORE/worktrees/fix-1/$f")" "owner of $f"
done
exit 0
