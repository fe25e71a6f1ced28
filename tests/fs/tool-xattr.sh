#!/usr/bin/env bash
# Extended attributes of the user namespace are kept as on a local disk (SPEC §3): on a document,
# a document in a subdirectory, a document subdirectory and the item directory, set/get/list/
# remove of a user.* attribute store it (get returns the value exactly, NUL bytes included;
# list shows it; XATTR_CREATE and XATTR_REPLACE as xattr(7); a size-0 get asks the length, a
# short buffer gets ERANGE; remove removes it); getting an absent attribute, a security.*,
# system.* or trusted.* one gives ENODATA, setting one outside user. gives ENOTSUP. The same
# through setfattr/getfattr. An attribute follows its document and directory through renames,
# goes with an unlinked document (a new one of that name has none), survives a remount, reads
# in an archived item and is refused there (EACCES); views keep none. Content is unchanged.
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
    os.setxattr(p, name, value)
    assert os.getxattr(p, name) == value, "%s: stored %r, got %r" % (p, value, os.getxattr(p, name))
    assert name in os.listxattr(p), "%s: listxattr %r" % (p, os.listxattr(p))
    os.setxattr(p, name, b"replaced", os.XATTR_REPLACE)
    assert os.getxattr(p, name) == b"replaced", "%s: XATTR_REPLACE" % p
    try:
        os.setxattr(p, name, b"again", os.XATTR_CREATE)
        raise AssertionError("%s: XATTR_CREATE over an existing attribute succeeded" % p)
    except OSError as e2:
        assert e2.errno == errno.EEXIST, "%s: XATTR_CREATE over an existing: %s" % (p, e2)
    _, e = call("replace", p, os.setxattr, "user.absent", b"x", os.XATTR_REPLACE)
    assert e is not None and e.errno == errno.ENODATA, "%s: XATTR_REPLACE of an absent: %s" % (p, e)
    os.setxattr(p, "user.empty", b"")
    assert os.getxattr(p, "user.empty") == b"", "%s: an empty value" % p
    os.removexattr(p, "user.empty")
    os.removexattr(p, name)
    _, e = call("get", p, os.getxattr, name)
    assert e is not None and e.errno == errno.ENODATA, "%s: get after remove: %s" % (p, e)
    _, e = call("remove", p, os.removexattr, name)
    assert e is not None and e.errno == errno.ENODATA, "%s: remove of an absent: %s" % (p, e)
    for other in ("security.test", "trusted.test"):
        _, e = call("set", p, os.setxattr, other, b"v")
        assert e is not None and e.errno in NOTSUP, "%s: setxattr %s: %s" % (p, other, e)
    for absent in ("user.absent", "system.posix_acl_access", "security.selinux",
                   "security.capability"):
        _, e = call("get", p, os.getxattr, absent)
        assert e is not None and e.errno == errno.ENODATA, "%s: getxattr %s: %s" % (p, absent, e)
# Sizes as getxattr(2): the raw calls through ctypes (os.getxattr retries with a larger buffer).
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
p = sys.argv[1].encode()
os.setxattr(p, b"user.sized", b"0123456789")
assert libc.getxattr(p, b"user.sized", None, 0) == 10, "size-0 getxattr"
buf = ctypes.create_string_buffer(4)
assert libc.getxattr(p, b"user.sized", buf, 4) == -1 and ctypes.get_errno() == errno.ERANGE, \
    "short getxattr buffer: want ERANGE"
assert libc.listxattr(p, None, 0) == len(b"user.sized\0"), "size-0 listxattr"
assert libc.listxattr(p, buf, 4) == -1 and ctypes.get_errno() == errno.ERANGE, \
    "short listxattr buffer: want ERANGE"
os.removexattr(p, b"user.sized")
PY

# The same through the attr tools (tests/run.sh installs them).
command -v setfattr >/dev/null && command -v getfattr >/dev/null ||
	fail "setfattr/getfattr missing: install the attr package"
for p in "${targets[@]}"; do
	setfattr -n user.tool -v tool-value "$p" || fail "setfattr on $p failed"
	assert_eq tool-value "$(getfattr --only-values -n user.tool "$p")" "getfattr of $p"
	assert_contains "$(getfattr -d "$p" 2>&1)" 'user.tool="tool-value"' "getfattr -d of $p"
	setfattr -x user.tool "$p" || fail "setfattr -x user.tool $p failed"
	out=$(getfattr -n user.tool "$p" 2>&1) && fail "getfattr after setfattr -x succeeded: $out"
	assert_contains "$out" "No such attribute" "getfattr of a removed attribute"
	out=$(setfattr -n security.tool -v v "$p" 2>&1) && fail "setfattr security.tool succeeded"
	assert_contains "$out" "Operation not supported" "setfattr security.tool on $p"
done

# Renames carry the attributes (a document, and a directory with a document in it), unlink
# drops them, a remount keeps them.
setfattr -n user.doc -v moved "$d/notes.md"
setfattr -n user.deep -v deep "$d/sub/deep.md"
setfattr -n user.dir -v dir "$d/sub"
setfattr -n user.item -v item "$d"
mv "$d/notes.md" "$d/renamed.md" || fail "mv notes.md"
mv "$d/sub" "$d/sub2" || fail "mv sub"
assert_eq moved "$(getfattr --only-values -n user.doc "$d/renamed.md")" "attribute after mv"
assert_eq deep "$(getfattr --only-values -n user.deep "$d/sub2/deep.md")" "attribute below a moved dir"
assert_eq dir "$(getfattr --only-values -n user.dir "$d/sub2")" "attribute of a moved dir"
printf 'scratch\n' >"$d/gone.md"
setfattr -n user.gone -v x "$d/gone.md"
rm "$d/gone.md"
printf 'again\n' >"$d/gone.md"
assert_eq "" "$(getfattr -d "$d/gone.md" 2>&1)" "attributes of a new document over an unlinked one"
umount_store
mount_store
assert_eq moved "$(getfattr --only-values -n user.doc "$d/renamed.md")" "attribute after remount"
assert_eq deep "$(getfattr --only-values -n user.deep "$d/sub2/deep.md")" "deep attribute after remount"
assert_eq item "$(getfattr --only-values -n user.item "$d")" "item attribute after remount"
# Views and the other generated entries keep none.
out=$(setfattr -n user.x -v 1 "$d/status" 2>&1) && fail "setfattr on status succeeded"
assert_contains "$out" "Operation not supported" "setfattr on a view"
assert_file_eq "$d/renamed.md" $'xattr content\n'
assert_file_eq "$d/sub2/deep.md" $'deep\n'
err=$(ls -la "$d" "$d/sub2" 2>&1 >/dev/null) || fail "ls -la of the item failed: $err"
assert_eq "" "$err" "errors of ls -la on the item"

# An archived item: attributes read back, writes refused.
rmdir "$d" || fail "rmdir (archive) of the item failed"
a=$M/.archive/fix-1
assert_eq moved "$(getfattr --only-values -n user.doc "$a/renamed.md")" "attribute in the archive"
out=$(setfattr -n user.doc -v changed "$a/renamed.md" 2>&1) && fail "setfattr in the archive succeeded"
assert_contains "$out" "Permission denied" "setfattr in the archive"
exit 0
