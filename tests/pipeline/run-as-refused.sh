#!/usr/bin/env bash
# A "run_as" that cannot be honoured is refused with its reason (SPEC §5, §8): a user that does
# not exist, by `packetfs init` (nothing left behind) and by a write of .packetfs/pipeline.json
# (EINVAL, a config_rejected event with the reason, the old configuration kept); another user
# named by a process that is not root (init run as USER); run_as with the slurm executor. A
# process that is not root may name itself. A mount makes an older store's database private.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
make_group TEAM
make_user U "$TEAM"
nosuch=pfs$$nosuchuser
getent passwd "$nosuch" >/dev/null && fail "user $nosuch exists"

# run_pfs EXPECTED_STATUS ARGS... : runs packetfs, checks the status, leaves stderr in $err.
run_pfs()
{
	local want=$1 rc=0
	shift
	err=$("$@" 2>&1 >/dev/null </dev/null) || rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, expected $want: $err"
}

# The repository and the recipes lie where USER reaches them (not in $T).
make_repo "$TEAM_DIR/repo"
copy_recipes
cp -r "$RECIPES" "$TEAM_DIR/recipes"
RECIPES=$TEAM_DIR/recipes
EXTRA="\"run_as\": \"$nosuch\"," pipeline_with "$T/nosuch.json" "$(plan_stage 01-build)"
run_pfs 1 "$PFS" init "$T/s1" --repo "$REPO" --pipeline "$T/nosuch.json"
assert_contains "$err" "packetfs: " "init with an unknown user"
assert_contains "$err" "run_as: $nosuch: no such user" "init with an unknown user"
[ ! -e "$T/s1" ] || fail "a refused init left $T/s1 behind"

EXTRA="\"run_as\": \"$U\", \"executor\": {\"kind\": \"slurm\"}," \
	pipeline_with "$T/slurm.json" "$(plan_stage 01-build)"
run_pfs 1 "$PFS" init "$T/s2" --repo "$REPO" --pipeline "$T/slurm.json"
assert_contains "$err" "run_as: not with the slurm executor" "init with run_as and slurm"
[ ! -e "$T/s2" ] || fail "a refused init left $T/s2 behind"

# Not root: USER may name itself, not root. USER's own directory for its stores.
mkdir "$TEAM_DIR/u"
chown "$U" "$TEAM_DIR/u"
EXTRA="\"run_as\": \"root\"," pipeline_with "$TEAM_DIR/root.json" "$(plan_stage 01-build)"
EXTRA="\"run_as\": \"$U\"," pipeline_with "$TEAM_DIR/self.json" "$(plan_stage 01-build)"
run_pfs 1 run_as "$U" "$PFS" init "$TEAM_DIR/u/s3" --repo "$REPO" --pipeline "$TEAM_DIR/root.json"
assert_contains "$err" "run_as: root: only a daemon running as root runs stages as another user" \
	"init by USER naming root"
[ ! -e "$TEAM_DIR/u/s3" ] || fail "a refused init left $TEAM_DIR/u/s3 behind"
run_pfs 0 run_as "$U" "$PFS" init "$TEAM_DIR/u/s4" --repo "$REPO" --pipeline "$TEAM_DIR/self.json"

# A store whose database others could read (made before init made it 0600) is made private
# by the mount.
make_store
chmod 0644 "$STORE/packetfs.db"
mount_store
assert_eq 600 "$(stat -c %a "$STORE/packetfs.db")" "mode of the database after a mount"
for f in "$STORE/packetfs.db-wal" "$STORE/packetfs.db-shm"; do
	[ ! -e "$f" ] || assert_eq 600 "$(stat -c %a "$f")" "mode of $f after a mount"
done

# Through the mount: refused on close, the reason in events, the old configuration kept.
p=$M/.packetfs/pipeline.json
cp "$p" "$T/orig.json"
python3 - "$T/orig.json" "$T/bad.json" "$nosuch" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
o["run_as"] = sys.argv[3]
json.dump(o, open(sys.argv[2], "w"))
PY
assert_fails_with EINVAL cp "$T/bad.json" "$p"
cmp -s "$T/orig.json" "$p" || fail "pipeline.json changed after a refused run_as: $(cat "$p")"
wait_for grep -q config_rejected "$M/events"
ev=$(grep config_rejected "$M/events" | tail -n 1)
assert_contains "$ev" "\"error\":\"run_as: $nosuch: no such user\"" "the config_rejected event"
mkdir "$M/fix-1" || fail "items cannot be made after the refused configuration"
assert_eq root "$(stat -c %U "$STORE/worktrees/fix-1")" "owner of a worktree without run_as"
exit 0
