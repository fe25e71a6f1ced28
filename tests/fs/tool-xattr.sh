#!/usr/bin/env bash
# Extended attributes answer as on a local disk that either lacks them or stores them, never
# EPERM or EIO: on a document, a document in a subdirectory, a document subdirectory and the
# item directory, set/get/list/remove of a user.* attribute either all fail with ENOTSUP or
# store it (get returns the value exactly, list shows it, remove removes it); getting an absent
# attribute, system.posix_acl_access or security.selinux gives ENODATA or ENOTSUP. The same
# through setfattr/getfattr. Content is unchanged, and ls -l reports no error.
. "$(dirname "$0")/../lib.sh"
mount_item
printf 'xattr content\n' >"$d/notes.md"
mkdir "$d/sub"
printf 'deep\n' >"$d/sub/deep.md"
targets=("$d/notes.md" "$d/sub/deep.md" "$d/sub" "$d")

python3 - "${targets[@]}" <<'PY' || fail "xattr calls through python"
import errno, os, sys
NOTSUP = (errno.ENOTSUP, errno.EOPNOTSUPP)
ABSENT = NOTSUP + (errno.ENODATA,)
name, value = "user.packetfs-test", b"a value\0with a NUL"

def call(what, path, fn, *args):
    try:
        return fn(path, *args), None
    except OSError as e:
        return None, e

for p in sys.argv[1:]:
    r, e = call("set", p, os.setxattr, name, value)
    if e is None:
        got, e = call("get", p, os.getxattr, name)
        assert e is None and got == value, "%s: stored %r, got %r (%s)" % (p, value, got, e)
        names, e = call("list", p, os.listxattr)
        assert e is None and name in names, "%s: listxattr %r (%s)" % (p, names, e)
        os.setxattr(p, name, b"replaced", os.XATTR_REPLACE)
        assert os.getxattr(p, name) == b"replaced", "%s: XATTR_REPLACE" % p
        try:
            os.setxattr(p, name, b"again", os.XATTR_CREATE)
            raise AssertionError("%s: XATTR_CREATE over an existing attribute succeeded" % p)
        except OSError as e2:
            assert e2.errno == errno.EEXIST, "%s: XATTR_CREATE over an existing: %s" % (p, e2)
        os.removexattr(p, name)
        _, e = call("get", p, os.getxattr, name)
        assert e is not None and e.errno == errno.ENODATA, "%s: get after remove: %s" % (p, e)
        _, e = call("remove", p, os.removexattr, name)
        assert e is not None and e.errno == errno.ENODATA, "%s: remove of an absent: %s" % (p, e)
    else:
        assert e.errno in NOTSUP, "%s: setxattr: %s (want ENOTSUP or success)" % (p, e)
        _, e = call("get", p, os.getxattr, name)
        assert e is not None and e.errno in ABSENT, "%s: getxattr after refused set: %s" % (p, e)
        _, e = call("remove", p, os.removexattr, name)
        assert e is not None and e.errno in ABSENT, "%s: removexattr: %s" % (p, e)
        names, e = call("list", p, os.listxattr)
        assert (e is None and name not in names) or e.errno in NOTSUP, "%s: listxattr: %r %s" % (
            p, names, e)
    for absent in ("user.absent", "system.posix_acl_access", "security.selinux"):
        _, e = call("get", p, os.getxattr, absent)
        assert e is not None and e.errno in ABSENT, "%s: getxattr %s: %s" % (p, absent, e)
PY

# The same through the attr tools (tests/run.sh installs them).
command -v setfattr >/dev/null && command -v getfattr >/dev/null ||
	fail "setfattr/getfattr missing: install the attr package"
for p in "${targets[@]}"; do
	rc=0
	out=$(setfattr -n user.tool -v tool-value "$p" 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		assert_eq tool-value "$(getfattr --only-values -n user.tool "$p")" "getfattr of $p"
		assert_contains "$(getfattr -d "$p" 2>&1)" 'user.tool="tool-value"' "getfattr -d of $p"
		setfattr -x user.tool "$p" || fail "setfattr -x user.tool $p failed"
		out=$(getfattr -n user.tool "$p" 2>&1) && fail "getfattr after setfattr -x succeeded: $out"
		assert_contains "$out" "No such attribute" "getfattr of a removed attribute"
	else
		assert_contains "$out" "Operation not supported" "setfattr error on $p"
		out=$(getfattr -n user.tool "$p" 2>&1) && fail "getfattr of a refused attribute: $out"
		case "$out" in
		*"Operation not supported"* | *"No such attribute"*) ;;
		*) fail "getfattr error on $p: $out" ;;
		esac
	fi
	out=$(getfattr -d -m - "$p" 2>&1) ||
		assert_contains "$out" "Operation not supported" "getfattr -d -m - error on $p"
	assert_not_contains "$out" "Operation not permitted" "getfattr -d -m - on $p"
	assert_not_contains "$out" "Input/output error" "getfattr -d -m - on $p"
done

err=$(ls -la "$d" "$d/sub" 2>&1 >/dev/null) || fail "ls -la of the item failed: $err"
assert_eq "" "$err" "errors of ls -la on the item"
assert_file_eq "$d/notes.md" $'xattr content\n'
assert_file_eq "$d/sub/deep.md" $'deep\n'
exit 0
