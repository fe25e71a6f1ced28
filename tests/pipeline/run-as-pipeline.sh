#!/usr/bin/env bash
# test-timeout: 180
# "run_as": USER (SPEC §5), the daemon root: plan, print and a stage after validate run as USER
# (uid, groups, HOME, USER, LOGNAME), and so do the recipes; print's commit, made by USER's git in
# the worktree the engine gave it, lands on the item branch; the evidence counts as without run_as
# (2/2 validated, verdict pass). A stage asks for a recorded run through the mount (`packetfs
# record`, as USER, behind timeout), which the engine runs as USER too; its line names that stage
# (found by its run credential and by ancestry). Publish's push runs as USER and lands the
# branch in the remote (USER's). The stage after validate tries to rewrite the evidence in the
# store's database, with the sqlite3 shell and with python3's sqlite3 module, and is refused by
# the file system (it cannot even open the database, which is 0600, the store owner's, as are its
# -wal and -shm); the registry, the runs and the verdict are unchanged.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is missing" >&2; exit 77; }
[ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 is missing" >&2; exit 77; }
# Everything USER reaches lies in TEAM_DIR: the repository (USER's), the recipes and the stage
# programs.
run_as_user
uid=$(id -u "$U")
gid=$(id -g "$U")
home=$(getent passwd "$U" | cut -d: -f6)
# The test's own git, as root, in USER's repository.
rgit() { git -c safe.directory='*' "$@"; }
base=$(rgit -C "$REPO" rev-parse main)

RECIPES=$TEAM_DIR/recipes
BIN=$TEAM_DIR/bin
mkdir -p "$RECIPES" "$BIN"
cp "$FIXTURES/recipes/01-build.sh" "$RECIPES/"
cat >"$RECIPES/02-whoami.sh" <<'EOF'
#!/usr/bin/env bash
# summary: says who runs it, and writes its JUnit file
set -euo pipefail
echo "recipe uid=$(id -u) gid=$(id -g) home=$HOME user=$USER logname=$LOGNAME"
printf '<testsuite tests="1" failures="0"><testcase name="whoami"/></testsuite>\n' >"$PACKET_JUNIT"
EOF
cp "$FIXTURES/stages/plan.sh" "$FIXTURES/stages/print.sh" "$FIXTURES/stages/review.sh" \
	"$FIXTURES/stages/publish.sh" "$BIN/"
cat >"$BIN/ident.sh" <<'EOF'
#!/usr/bin/env bash
# ident.sh PROGRAM ARG... : says who runs the stage, then runs the stage program PROGRAM.
echo "stage $PACKET_STAGE uid=$(id -u) gid=$(id -g) groups=$(id -G)" \
	"home=$HOME user=$USER logname=$LOGNAME"
exec bash "$(dirname "$0")/$1" "${@:2}"
EOF
cp "$PFS" "$BIN/packetfs"
cat >"$BIN/record.sh" <<'EOF'
#!/usr/bin/env bash
# record.sh : asks for a recorded run of 01-build, from the item directory (the cwd), behind
# timeout (a process group of its own).
set -euo pipefail
timeout 90 "$(dirname "$0")/packetfs" record 01-build -- \
	bash -c 'echo "recorded uid=$(id -u) home=$HOME"; cc -Wall -o hello hello.c'
EOF
cat >"$BIN/tamper.sh" <<'EOF'
#!/usr/bin/env bash
# tamper.sh DB : tries to read the store's database and to turn its evidence around; exits 0
# only when every attempt was refused for want of permission.
db=$1
refused() { case $1 in *"unable to open database"*) return 0 ;; esac; return 1; }
for sql in "select count(*) from runs" \
	"update runs set status = 'failing' where kind = 'recipe'" \
	"insert into registry (item_id, line, source) values (1, '{\"forged\":true}', 'engine')"; do
	if out=$(sqlite3 "$db" "$sql" 2>&1); then
		echo "sqlite3 went through: $sql: $out"
		exit 1
	fi
	echo "sqlite3 refused: $sql: $out"
	refused "$out" || exit 1
done
/usr/bin/python3 - "$db" <<'PY' || exit 1
import sqlite3, sys
try:
    c = sqlite3.connect(sys.argv[1])
    c.execute("update runs set status = 'failing' where kind = 'recipe'")
    c.commit()
except sqlite3.Error as e:
    print("python3 refused:", e)
    sys.exit(0 if "unable to open database" in str(e) else 1)
print("python3 went through")
sys.exit(1)
PY
for f in "$db" "$db-wal" "$db-shm"; do
	if head -c 1 "$f" >/dev/null 2>&1; then
		echo "read $f"
		exit 1
	fi
done
echo "tamper: every attempt refused"
EOF
chmod 0755 "$RECIPES"/* "$BIN"/*

STORE=$TEAM_DIR/store
ident() { argv_json /bin/bash "$BIN/ident.sh" "$@"; }
pipeline_json "$T/pipeline.json" "$REPO" "$RECIPES" "\"gpus\": 0, \"run_as\": \"$U\"," \
	"{\"name\": \"plan\", \"run\": $(ident plan.sh 01-build 02-whoami),
	  \"produces\": [\"plan.md\"]}" \
	"{\"name\": \"print\", \"run\": $(ident print.sh), \"produces\": [\"change.md\"]}" \
	'{"name": "validate", "recipes": "plan"}' \
	"{\"name\": \"record\", \"run\": $(argv_json /bin/bash "$BIN/record.sh")}" \
	"{\"name\": \"tamper\",
	  \"run\": $(argv_json /bin/bash "$BIN/tamper.sh" "$STORE/packetfs.db")}" \
	"{\"name\": \"review\", \"run\": $(ident review.sh sound), \"produces\": [\"review.md\"]}" \
	"{\"name\": \"publish\", \"push\": {\"remote\": \"origin\"}, \"run\": $(ident publish.sh)}"
out=$("$PFS" init "$STORE" --repo "$REPO" --pipeline "$T/pipeline.json" 2>&1) ||
	fail "packetfs init failed: $out"
chgrp "$TEAM" "$STORE"
mount_team

# What init made: the store directory reached, not listed, by others; the database private.
assert_eq "root:$TEAM 711" "$(owner_of "$STORE")" "the store directory"
for f in "$STORE/packetfs.db" "$STORE/packetfs.db-wal" "$STORE/packetfs.db-shm"; do
	[ ! -e "$f" ] || assert_eq "root:root 600" "$(owner_of "$f")" "$f"
done
assert_fails_with EACCES run_as "$U" ls "$STORE"

# USER makes the item (so the stages, as USER, may write in it) and root advances it.
run_as "$U" mkdir -m 2775 "$M/fix-1" || fail "$U cannot make an item"
d=$M/fix-1
r=$d/validation/registry.jsonl
wt=$STORE/worktrees/fix-1
assert_eq "$U:$TEAM" "$(stat -c %U:%G "$wt")" "owner of the worktree"
assert_eq "" "$(find "$wt" "$REPO/.git/worktrees/fix-1" ! -user "$U")" \
	"files of the worktree not USER's"
ctl "$M" fix-1 advance
assert_eq done "$(settled fix-1)" \
	"state after the pipeline (last_error: $(status_field "$M" fix-1 last_error))"

# Every program ran as USER, with USER's environment.
for log in stages/1-plan.log stages/2-print.log stages/*-review.log stages/*-publish.log; do
	assert_contains "$(cat "$d"/$log)" \
		"uid=$uid gid=$gid groups=$(id -G "$U") home=$home user=$U logname=$U" "identity in $log"
done
assert_eq 1 "$(reg count "$r" recipe=02-whoami status=validated source=engine)" "02-whoami lines"
assert_contains "$(cat "$d"/validation/logs/*-02-whoami-*.log)" \
	"recipe uid=$uid gid=$gid home=$home user=$U logname=$U" "identity of the recipe"
assert_contains "$(reg field "$r" 0 note recipe=02-whoami)" "ran (JUnit XML)" "note of 02-whoami"

# The recorded run: asked by USER through the mount, run as USER, counted.
assert_eq 2 "$(reg count "$r" recipe=01-build status=validated source=engine)" "01-build lines"
assert_eq "$uid" "$(reg field "$r" -1 recorded_by recipe=01-build | python3 -c \
	'import json, sys; print(json.load(sys.stdin)["uid"])')" "uid that asked for the record"
assert_eq "record both" "$(reg field "$r" -1 recorded_by recipe=01-build | python3 -c \
	'import json, sys; b = json.load(sys.stdin); print(b["stage"], b["via"])')" \
	"stage that asked for the record, and how it was found"
assert_contains "$(cat "$d"/stages/*-record.log)" "recorded uid=$uid home=$home" "the recorded run"

# print's commit (USER's git) is the branch head, and the evidence is at it.
head=$(rgit -C "$REPO" rev-parse packetfs/fix-1)
[ "$head" != "$base" ] || fail "the branch did not move: print's commit did not land"
assert_eq "print: iteration 1 of fix-1" "$(rgit -C "$REPO" log -1 --format=%s "$head")" "the commit"
assert_head "$head" "$(status_field "$M" fix-1 head)" "status head"
assert_head "$head" "$(reg field "$r" 0 head recipe=02-whoami)" "head of the evidence"
assert_eq "" "$(find "$REPO/.git/objects" -newer "$T/pipeline.json" ! -user "$U")" \
	"objects of print's commit not USER's"
assert_eq "$head" "$(rgit -C "$ORIGIN" rev-parse packetfs/fix-1)" "the branch pushed to origin"
assert_eq "" "$(find "$ORIGIN/objects" -newer "$T/pipeline.json" ! -user "$U")" \
	"objects pushed not USER's"
assert_eq "2/2 validated" "$(status_field "$M" fix-1 evidence)" "status evidence"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "status verdict"

# The stage that tampered was refused everything, and nothing changed.
tlog=$(cat "$d"/stages/*-tamper.log)
assert_contains "$tlog" "tamper: every attempt refused" "tamper's log"
assert_contains "$tlog" "python3 refused: unable to open database file" "tamper's log"
assert_eq 3 "$(reg count "$r")" "registry lines"
assert_eq 3 "$(sqlite3 "$STORE/packetfs.db" "select count(*) from registry")" "registry rows"
assert_eq 0 "$(sqlite3 "$STORE/packetfs.db" \
	"select count(*) from runs where kind = 'recipe' and status != 'validated'")" \
	"recipe runs changed"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict after the tampering"
assert_eq "2/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence after the tampering"
exit 0
