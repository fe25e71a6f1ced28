#!/usr/bin/env bash
# test-timeout: 300
# python3 -m venv inside a packet, pip included (it makes symlinks: bin/python3 ->
# /usr/bin/python3, lib64 -> lib), then running the venv's python and pip: sys.prefix is the
# venv, and a module written into its site-packages imports. A remount keeps the venv working.
. "$(dirname "$0")/../lib.sh"
python3 -c 'import venv, ensurepip' 2>/dev/null || { echo "SKIP: python3 venv/ensurepip missing" >&2; exit 77; }
mount_item

python3 -m venv "$d/venv" || fail "python3 -m venv in a packet"
"$d/venv/bin/pip" --version | grep -q "venv" || fail "the venv's pip"
[ -L "$d/venv/bin/python3" ] || fail "the venv's bin/python3 is not a symlink"
assert_eq "$d/venv" "$("$d/venv/bin/python" -c 'import sys; print(sys.prefix)')" "the venv's sys.prefix"
site=$("$d/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
case $site in "$d/venv/"*) ;; *) fail "site-packages outside the venv: $site" ;; esac
printf 'ANSWER = 42\n' >"$site/packetfs_probe.py"
assert_eq 42 "$("$d/venv/bin/python" -c 'import packetfs_probe; print(packetfs_probe.ANSWER)')" \
	"a module of the venv's site-packages"
"$d/venv/bin/python" -m venv --help >/dev/null || fail "python -m venv through the venv"

umount_store
mount_store
assert_eq "$d/venv" "$("$d/venv/bin/python3" -c 'import sys; print(sys.prefix)')" "sys.prefix after a remount"
assert_eq 42 "$("$d/venv/bin/python" -c 'import packetfs_probe; print(packetfs_probe.ANSWER)')" \
	"the venv's module after a remount"
echo ok
