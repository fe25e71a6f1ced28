#!/usr/bin/env bash
# demo.sh - packetfs end to end, on a fresh Debian 12 machine, in about a minute.
#
#   examples/demo.sh
#
# 1. installs the missing build and runtime packages with apt-get (only
#    those dpkg does not already know as installed);
# 2. builds packetfs (meson setup build && ninja -C build, in the
#    repository root; PACKETFS_BUILDDIR names another build directory), or,
#    run from an install (PREFIX/share/packetfs/examples/demo.sh), uses the
#    installed PREFIX/bin/packetfs (else packetfs on PATH) and needs only
#    fuse3, git and python3;
# 3. in a new temporary directory, makes the demo repository from
#    examples/sample-project (branch main, one commit) with a bare clone of
#    it as the remote "origin", a store and a mount point;
# 4. creates the item demo-1 with a brief whose "Route: implementation"
#    sends it down the change-build-deploy-measure template, advances it,
#    and follows its status through plan, print, validate and review to the
#    publish gate; approves; waits until it is done. The plan names the shipped script
#    recipes and the procedures 00-preflight and 06-change-review; validate
#    runs the scripts, then examples/stages/validate.sh, which records each
#    procedure's commands with `packetfs record` (the stage programs find
#    the binary in PACKETFS, exported before the mount) and writes
#    change-validation.md;
# 5. checks that the item branch arrived in the remote at the head the
#    verdict and the assessment were made at, and that the registry holds a
#    validated engine run of each procedure recorded by the validate stage;
#    shows the packet, its status, change-validation.md, the evidence and
#    the diff;
# 6. creates the item demo-2, whose brief says "Template:
#    debug-investigation": in the same store it takes the investigation
#    path (validate at the base, then report.md, no change); shows the
#    report;
# 7. puts somebody's pull request 1 on the remote the way a forge keeps
#    one (a commit under refs/pull/1/head of origin.git) and creates the
#    item demo-3, whose brief says "Route: review" and "Review request: 1":
#    it takes the existing-request path (adopt fetches the request's head,
#    validate and review judge it, publish answers with
#    answer-request.sh --dry-run, naming the commit judged), and nothing is
#    pushed; shows the answer;
# 8. shows the three items with their paths (packetfs status); unmounts.
#
# Exits 0 when every step worked. On a failure it prints the item's logs,
# exits 1, and keeps the temporary directory for inspection (it is removed
# after a success unless PACKETFS_DEMO_KEEP=1, as the demo says when it
# names the directory and when it removes it). The mount is always
# unmounted.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PACKETFS_BUILDDIR:-$ROOT/build}
# Run from an install (PREFIX/share/packetfs/examples/demo.sh): nothing to
# build; the installed PREFIX/bin/packetfs, else the one on PATH.
INSTALLED=0
[ -f "$ROOT/meson.build" ] || INSTALLED=1
ITEM=demo-1
T0=$SECONDS

if [ -t 1 ]; then
	say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
else
	say() { printf '==> %s\n' "$*"; }
fi
die() {
	printf 'demo: %s\n' "$*" >&2
	exit 1
}

# --- 1. packages ---------------------------------------------------------
packages=(build-essential meson ninja-build pkg-config libfuse3-dev fuse3 liburing-dev libsqlite3-dev
	libgit2-dev libcjson-dev libuv1-dev libssl-dev libxml2-dev libzstd-dev libmount-dev
	libsmartcols-dev libsystemd-dev libncurses-dev git clang-format python3)
[ "$INSTALLED" = 0 ] || packages=(fuse3 git python3)
if command -v dpkg >/dev/null 2>&1; then
	missing=()
	for p in "${packages[@]}"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		say "installing ${missing[*]}"
		sudo=()
		if [ "$(id -u)" -ne 0 ]; then
			command -v sudo >/dev/null 2>&1 ||
				die "not root and no sudo: install ${missing[*]} first"
			sudo=(sudo)
		fi
		"${sudo[@]}" apt-get update -q
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
	else
		say "packages: all present"
	fi
else
	say "no dpkg: assuming the build dependencies are installed (${packages[*]})"
fi

# --- 2. build ------------------------------------------------------------
if [ "$INSTALLED" = 1 ]; then
	PFS=$(cd "$ROOT/../.." && pwd)/bin/packetfs
	[ -x "$PFS" ] || PFS=$(command -v packetfs) ||
		die "run from an install ($ROOT), but neither $PFS nor packetfs on PATH exists"
	say "using the installed $PFS"
else
	say "building packetfs in $BUILD"
	if [ ! -f "$BUILD/build.ninja" ]; then
		(cd "$ROOT" && meson setup "$BUILD")
	fi
	ninja -C "$BUILD"
	PFS=$BUILD/cli/packetfs
	[ -x "$PFS" ] || die "$PFS: not built"
fi
"$PFS" --version

[ -c /dev/fuse ] || die "/dev/fuse is missing: FUSE is not available here (in a container, pass --device /dev/fuse)"
command -v fusermount3 >/dev/null 2>&1 || die "fusermount3 not found (package fuse3)"

# --- 3. repository, remote, store, mount -------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/packetfs-demo.XXXXXX")
MNT=$WORK/mnt
ok=0
cleanup() {
	if mountpoint -q "$MNT" 2>/dev/null || grep -qs " $MNT fuse" /proc/mounts; then
		fusermount3 -u -z "$MNT" || true
	fi
	if [ "$ok" = 1 ] && [ "${PACKETFS_DEMO_KEEP:-0}" != 1 ]; then
		rm -rf "$WORK"
		printf 'demo: removed %s (PACKETFS_DEMO_KEEP=1 keeps it)\n' "$WORK" >&2
	else
		printf 'demo: files kept in %s\n' "$WORK" >&2
	fi
}
trap cleanup EXIT

if [ "${PACKETFS_DEMO_KEEP:-0}" = 1 ]; then
	say "demo directory $WORK (kept at the end: PACKETFS_DEMO_KEEP=1)"
else
	say "demo directory $WORK (removed after a success; PACKETFS_DEMO_KEEP=1 keeps it)"
fi
bash "$ROOT/examples/sample-setup.sh" "$WORK"

say "packetfs init $WORK/store --repo $WORK/repo --pipeline $WORK/pipeline.json"
"$PFS" init "$WORK/store" --repo "$WORK/repo" --pipeline "$WORK/pipeline.json"
mkdir "$MNT"
# Stage programs inherit the daemon's environment: validate.sh runs
# "$PACKETFS record ..." for the procedures.
export PACKETFS=$PFS
say "packetfs mount $WORK/store $MNT"
"$PFS" mount "$WORK/store" "$MNT"
for _ in $(seq 100); do
	[ -e "$MNT/.packetfs/version" ] && break
	sleep 0.1
done
[ -e "$MNT/.packetfs/version" ] || die "the mount did not come up at $MNT"

# --- 4. the item -----------------------------------------------------------
say "packetfs new $MNT $ITEM --brief -"
"$PFS" new "$MNT" "$ITEM" --brief - <<'EOF'
# Add str_reverse to strkit

Route: implementation

strkit needs a function that reverses a string in place, byte by byte, and
returns it, with unit tests for the usual case, the empty string and a
one-character string.
EOF
P=$MNT/$ITEM

field() { sed -n "s/^$1: *//p" "$P/status" 2>/dev/null || true; }

# advance_to_done TEMPLATE: advances $ITEM (P is its directory from then on), waits until it
# is done, and checks that its plan sent it down TEMPLATE.
advance_to_done() {
	P=$MNT/$ITEM
	say "advance (: > $P/ctl)"
	: >"$P/ctl"
	wait_for "done" 150
	[ "$(field template)" = "$1" ] || die "$ITEM took template '$(field template)'"
}

dump_logs() {
	printf '\n----- status -----\n'
	cat "$P/status" || true
	for f in "$P"/stages/*.log "$P"/validation/logs/*.log; do
		[ -f "$f" ] || continue
		printf '\n----- %s -----\n' "${f#"$MNT"/}"
		cat "$f" || true
	done
	if [ -f "$P/validation/evidence.md" ]; then
		printf '\n----- validation/evidence.md -----\n'
		cat "$P/validation/evidence.md" || true
	fi
}

# wait_for STATE SECONDS: follows the status, printing each change, until
# the item's state is STATE; fails on failed or blocked or when time is up.
wait_for() {
	local want=$1 deadline=$((SECONDS + $2)) last="" now state
	while :; do
		state=$(field state)
		now="stage=$(field stage) state=$state iteration=$(field iteration)"
		now="$now verdict=$(field verdict) assessment=$(field assessment) evidence=$(field evidence)"
		if [ "$now" != "$last" ]; then
			printf '  [%3ds] %s\n' "$((SECONDS - T0))" "$now"
			last=$now
		fi
		[ "$state" = "$want" ] && return 0
		case $state in
		failed | blocked)
			printf 'demo: item %s is %s: %s\n' "$ITEM" "$state" "$(field last_error)" >&2
			dump_logs
			exit 1
			;;
		esac
		if [ "$SECONDS" -ge "$deadline" ]; then
			printf 'demo: item %s not %s after %ss\n' "$ITEM" "$want" "$2" >&2
			dump_logs
			exit 1
		fi
		sleep 0.5
	done
}

say "advance (: > $P/ctl)"
: >"$P/ctl"
wait_for waiting 150

say "approve (echo approve > $P/ctl)"
echo approve >"$P/ctl"
wait_for "done" 60

# --- 5. results ------------------------------------------------------------
branch=$(field branch)
head=$(field head)
pushed=$(git -C "$WORK/origin.git" rev-parse -q --verify "refs/heads/$branch") ||
	die "branch $branch is not in the remote $WORK/origin.git"
[ "$pushed" = "$head" ] || die "the remote has $branch at $pushed, the item's head is $head"
for key in verdict_head assessment_head; do
	at=$(field "$key")
	{ [ "${#at}" -ge 7 ] && [ "${pushed#"$at"}" != "$pushed" ]; } ||
		die "status $key is '$at', the pushed head is $pushed"
done
say "the remote has $branch at $pushed, the head the verdict ($(field verdict)) and the assessment ($(field assessment)) judged"

# Each procedure the plan names: its latest engine run is validated at the
# pushed head, and the validate stage recorded it.
procedures=()
# shellcheck disable=SC2016 # backquotes of the Markdown fence
while IFS= read -r name; do
	[ -f "$MNT/.packetfs/recipes/$name.md" ] && procedures+=("$name")
done < <(sed -n '/^```validation-recipes/,/^```$/p' "$P/plan.md" | sed '1d;$d')
[ "${#procedures[@]}" -gt 0 ] || die "plan.md names no procedure"
python3 - "$P/validation/registry.jsonl" "$pushed" "${procedures[@]}" <<'PY' ||
import json, sys

reg, head, names = sys.argv[1], sys.argv[2], sys.argv[3:]
latest = {}
for line in open(reg, encoding="utf-8"):
    o = json.loads(line)
    if o.get("source") == "engine":
        latest[o["recipe"]] = o
bad = 0
for name in names:
    o = latest.get(name)
    by = (o or {}).get("recorded_by") or {}
    if not o or o.get("status") != "validated" or o.get("head") != head or by.get("stage") != "validate":
        print("demo: %s: no validated engine run recorded by validate at %s: %r" % (name, head, o),
              file=sys.stderr)
        bad = 1
        continue
    print("  %s  %s  run %s, recorded by stage %s: %s" % (name, o["status"], o["run"], by["stage"],
                                                          o["command"]))
sys.exit(bad)
PY
	die "the registry lacks the procedures' recorded runs"
say "the procedures ${procedures[*]} were recorded by the validate stage"

say "the packet"
if command -v tree >/dev/null 2>&1; then
	tree -a --noreport "$P"
else
	find "$P" -not -path '*/worktree/*' | sort | sed "s|^$MNT/||"
fi
say "status"
cat "$P/status"
say "change-validation.md"
cat "$P/change-validation.md"
say "validation/evidence.md"
cat "$P/validation/evidence.md"
say "change.diff"
cat "$P/change.diff"

# --- 6. another path in the same store ------------------------------------
# The brief's "Template:" line, which plan.sh carries into plan.md, sends
# this item down the investigation template: validate at the base, then a
# report instead of a change (docs/routes.md).
ITEM=demo-2
say "packetfs new $MNT $ITEM --brief - (Template: debug-investigation)"
"$PFS" new "$MNT" "$ITEM" --brief - <<'BRIEF'
# str_count_char miscounts?

Template: debug-investigation

## Hypotheses

- str_count_char stops at the first match.
- The unit tests do not cover repeated characters.
BRIEF
advance_to_done debug-investigation
[ "$(field head)" = "$(git -C "$WORK/repo" rev-parse main)" ] ||
	die "$ITEM: the investigation moved its branch"
say "$ITEM took template $(field template): report.md"
cat "$P/report.md"

# --- 7. an existing pull request, judged ------------------------------------
# A forge keeps a pull request's head under refs/pull/N/head of the
# repository it targets: somebody's commit, on no branch of origin.
say "pull request 1 on $WORK/origin.git (refs/pull/1/head)"
contrib=$WORK/contrib
git clone -q "$WORK/origin.git" "$contrib"
sed -i '/str_count_char("banana", .a.) == 3/a\
\tCHECK(str_count_char("aaaa", '"'a'"') == 4);' "$contrib/tests/test_strkit.c"
git -C "$contrib" -c user.name="a contributor" -c user.email="contributor@example.invalid" \
	commit -q -am "strkit: test str_count_char on a run of one character"
git -C "$contrib" push -q origin HEAD:refs/pull/1/head
pr_head=$(git -C "$WORK/origin.git" rev-parse refs/pull/1/head)
git -C "$contrib" show --stat --format='  %h %s (%an)' HEAD

ITEM=demo-3
say "packetfs new $MNT $ITEM --brief - (Route: review, Review request: 1)"
"$PFS" new "$MNT" "$ITEM" --brief - <<'BRIEF'
# Review pull request 1: a str_count_char test

Route: review
Review request: 1

Judge the contributor's change like any other: build, unit tests, lint,
diff integrity and the change review, at the head of the request.
BRIEF
advance_to_done existing-request
[ "$(field head)" = "$pr_head" ] ||
	die "$ITEM: its head is $(field head), the request's head is $pr_head"
if [ "$(field verdict)" != pass ] || [ "$(field assessment)" != sound ]; then
	die "$ITEM: verdict '$(field verdict)', assessment '$(field assessment)'"
fi
grep -q "\"head\": \"$pr_head\"" "$P/answer.json" ||
	die "$ITEM: answer.json does not name $pr_head: $(cat "$P/answer.json")"
if git -C "$WORK/origin.git" rev-parse -q --verify "refs/heads/$(field branch)" >/dev/null; then
	die "$ITEM: its branch $(field branch) was pushed to origin"
fi
say "$ITEM took template $(field template): judged $pr_head, pushed nothing; the answer (dry run)"
sed -n '/^Answer to pull request/,$p' "$P"/stages/*-publish.log

# --- 8. the store ------------------------------------------------------------
# Each item ended on its own path, where that path ends.
"$PFS" status "$MNT" --json | python3 -c '
import json, sys
want = {"demo-1": ("change-build-deploy-measure", "publish"),
        "demo-2": ("debug-investigation", "investigate"),
        "demo-3": ("existing-request", "publish")}
got = {o["item"]: (o["template"], o["stage"], o["state"]) for o in json.load(sys.stdin)}
bad = [i for i, w in want.items() if got.get(i) != w + ("done",)]
for i in bad:
    print("demo: %s: template, stage, state %r, expected %r" % (i, got.get(i), want[i] + ("done",)),
          file=sys.stderr)
sys.exit(1 if bad else 0)
' || die "an item is not where its path ends"
say "packetfs status $MNT: three items, three paths"
COLUMNS=${COLUMNS:-120} "$PFS" status "$MNT"

ok=1
say "demo done in $((SECONDS - T0))s"
