#!/usr/bin/env bash
# `meson install --destdir` puts everything SPEC section 9 lists in place: the binary, the
# recipes, the JSON Schemas, the examples, the man pages packetfs(1) and packetfs-pipeline(5)
# (each renders without a warning, and packetfs(1) names every command of `packetfs --help`,
# in its SYNOPSIS on a line of its own),
# the bash completion (it completes commands, options, mount options, items and directories in a
# bash that sources it), mount(8)'s helper mount.fuse.packetfs and the systemd unit (Type=notify,
# accepted by systemd-analyze verify where that runs), and the installed examples/demo.sh runs
# (where FUSE is). Uses the build directory of PACKETFS_BIN (default build/).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${PACKETFS_BIN:-$ROOT/build/cli/packetfs}
BUILD=$(cd "$(dirname "$BIN")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/install.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

[ -x "$BIN" ] || fail "no build at $BUILD (run tests/run.sh)"
meson install -C "$BUILD" --destdir "$T/root" --no-rebuild --quiet >"$T/install.log" 2>&1 ||
	fail "meson install failed: $(tail -n 20 "$T/install.log")"
prefix=$(meson introspect "$BUILD" --buildoptions |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
P=$T/root$prefix

for f in bin/packetfs share/packetfs/schema/pipeline.schema.json \
	share/packetfs/schema/registry-line.schema.json share/man/man1/packetfs.1 \
	share/man/man5/packetfs-pipeline.5 share/bash-completion/completions/packetfs \
	lib/systemd/system/packetfs@.service share/packetfs/examples/demo.sh \
	share/packetfs/examples/pipeline.json.in share/packetfs/examples/stages/agent-stage.sh; do
	[ -s "$P/$f" ] || fail "not installed: $prefix/$f"
done
for f in "$ROOT"/recipes/*; do
	[ -e "$P/share/packetfs/recipes/${f##*/}" ] || fail "recipe not installed: ${f##*/}"
done
[ -x "$P/share/packetfs/recipes/01-build.sh" ] || fail "an installed recipe lost its x bit"
"$P/bin/packetfs" --version | grep -q '^packetfs ' || fail "the installed binary does not run"
# mount(8)'s helper, where mount looks (-Dmounthelperdir, /sbin by default; empty: none), runs
# this installation's binary by its path (tests/fs/sys-mount-helper.sh mounts through it).
helperdir=$(meson introspect "$BUILD" --buildoptions |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "mounthelperdir"))')
if [ -n "$helperdir" ]; then
	helper=$T/root$helperdir/mount.fuse.packetfs
	[ -x "$helper" ] || fail "not installed: $helperdir/mount.fuse.packetfs"
	grep -qx "PACKETFS='$prefix/bin/packetfs'" "$helper" ||
		fail "mount.fuse.packetfs runs $(grep '^PACKETFS=' "$helper")"
	sh -n "$helper" || fail "mount.fuse.packetfs is no valid sh script"
fi

# Man pages: no warning from man/groff, no unreplaced @VARIABLE@, every command covered.
for page in "$P/share/man/man1/packetfs.1" "$P/share/man/man5/packetfs-pipeline.5"; do
	out=$(MANWIDTH=80 man -l --warnings "$page" 2>&1 >/dev/null) || fail "man -l $page failed: $out"
	[ -z "$out" ] || fail "${page##*/} renders with warnings: $out"
	! grep -n '@[A-Z]*@' "$page" || fail "${page##*/} keeps a @VARIABLE@"
done
man1=$(MANWIDTH=200 man -l "$P/share/man/man1/packetfs.1" 2>/dev/null)
for c in $("$BIN" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
	grep -Eq "^ +$c( |$)" <<<"$man1" || fail "packetfs(1) has no entry for the command $c"
	# and a SYNOPSIS line of its own (one command a line, none run together).
	sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' <<<"$man1" | grep -Eq "^ +packetfs $c( |$)" ||
		fail "packetfs(1) SYNOPSIS has no line of its own for the command $c"
done
man5=$(MANWIDTH=200 man -l "$P/share/man/man5/packetfs-pipeline.5" 2>/dev/null)
keys=$(python3 - "$ROOT/schema/pipeline.schema.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(" ".join(list(s["properties"]) + list(s["$defs"]["stage"]["properties"])))
PY
)
for k in $keys; do
	grep -Eq "^ +$k \(" <<<"$man5" || fail "packetfs-pipeline(5) has no entry for the key $k"
done

# The unit.
unit=$P/lib/systemd/system/packetfs@.service
grep -qx 'Type=notify' "$unit" || fail "the unit is not Type=notify"
grep -qx "ExecStart=$prefix/bin/packetfs mount -f \$PACKETFS_STORE \$PACKETFS_MOUNTPOINT \$PACKETFS_OPTIONS" "$unit" ||
	fail "the unit's ExecStart: $(grep ExecStart "$unit")"
if command -v systemd-analyze >/dev/null; then
	# verify looks for the binary at its installed path: check a copy pointing at the build.
	sed "s|^ExecStart=$prefix/bin/packetfs|ExecStart=$BIN|" "$unit" >"$T/packetfs@x.service"
	out=$(systemd-analyze verify --man=no "$T/packetfs@x.service" 2>&1) ||
		fail "systemd-analyze verify: $out"
	! grep -i 'packetfs@' <<<"$out" || fail "systemd-analyze verify: $out"
fi

# The completion, in a bash that sources it.
mkdir -p "$T/work/store/worktrees/fix-1" "$T/work/store/worktrees/fix-2" "$T/work/mnt"
touch "$T/work/brief.md"
cat >"$T/complete.sh" <<'SH'
. "$1"
cd "$2"
complete -p packetfs
# comp WORD... : the completions of the last word after the others.
comp()
{
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_packetfs
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
	echo
}
comp packetfs st
comp packetfs ''
comp packetfs --v
comp packetfs help um
comp packetfs mount --
comp packetfs mount st
comp packetfs mount store -o allow_other,no
comp packetfs status store fix
comp packetfs log store ''
comp packetfs new mnt fix-3 --brief bri
comp packetfs status --j
comp packetfs top --o
comp packetfs attest store fix
comp packetfs verify --k
SH
out=$(bash --norc "$T/complete.sh" "$P/share/bash-completion/completions/packetfs" "$T/work" 2>&1) ||
	fail "the completion script failed: $out"
expect=$(cat <<'EOF2'
complete -F _packetfs packetfs
status 
attest check ctl export follow gc help import init log mount new record status top umount verify 
--version 
umount 
--foreground --help --options 
store 
allow_other,noatime allow_other,nodev allow_other,noexec allow_other,nosuid 
fix-1 fix-2 
fix-1 fix-2 
brief.md 
--json 
--once 
fix-1 fix-2 
--key 
EOF2
)
[ "$out" = "$expect" ] || fail "completions differ: expected
$expect
got
$out"
# The demo runs from the install (the installed binary, nothing to build) where FUSE and its
# packages are here, and says where its directory went and how to keep it.
if [ -c /dev/fuse ] && command -v fusermount3 >/dev/null && dpkg -s fuse3 git python3 >/dev/null 2>&1; then
	out=$(cd "$T" && bash "$P/share/packetfs/examples/demo.sh" 2>&1) || fail "the installed demo failed: $out"
	grep -qx "==> using the installed $P/bin/packetfs" <<<"$out" ||
		fail "the installed demo did not use the installed binary: $out"
	grep -Eq '^==> demo directory /.* \(removed after a success; PACKETFS_DEMO_KEEP=1 keeps it\)$' \
		<<<"$out" || fail "the demo does not say how to keep its directory: $out"
	grep -Eq '^demo: removed /.* \(PACKETFS_DEMO_KEEP=1 keeps it\)$' <<<"$out" ||
		fail "the demo does not say it removed its directory: $out"
fi
echo "installed under $prefix: $(find "$T/root" -type f | wc -l) files"
