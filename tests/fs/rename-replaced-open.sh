#!/usr/bin/env bash
# A document a rename replaced stays readable through what a process took of it before the rename,
# as on a local disk: an O_PATH descriptor taken before a save by rename (temp file renamed over
# the document, as sed -i and editors save) still stats (link count 0, the old size) and, reopened
# through /proc/self/fd after the save, reads the old content, instead of ESTALE. The same holds
# for a file replaced twice, for a long name (.history's directory form) and in learnings/. A
# reader that looked the name up just before an editor saved it opens that inode in just this way
# (the kernel's path walk, then FUSE OPEN on the inode it found), and the kernel retries ESTALE
# only once: with a document saved by rename in a loop, cat failed with "Stale file handle".
# Writing through such a descriptor is refused with ESTALE (the write would reach no name); the
# document itself and its history are untouched by all of it.
. "$(dirname "$0")/../lib.sh"
mount_item

long=$(printf 'n%.0s' $(seq 1 250)).md
python3 - "$d" "$long" "$M/learnings" <<'PY' || fail "a replaced document was not readable as on a local disk (above)"
import errno, os, sys
d, long, learnings = sys.argv[1], sys.argv[2], sys.argv[3]

def save(path, data):
    tmp = os.path.join(os.path.dirname(path), ".save.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)

def check(name, d=d):
    path = os.path.join(d, name)
    save(path, b"version one, the old content\n")
    old = os.open(path, os.O_PATH)
    save(path, b"version two\n")
    st = os.fstat(old)
    assert st.st_nlink == 0, "%s: link count of the replaced file: %d" % (name, st.st_nlink)
    assert st.st_size == 29, "%s: size of the replaced file: %d" % (name, st.st_size)
    with open("/proc/self/fd/%d" % old, "rb") as f:
        got = f.read()
    assert got == b"version one, the old content\n", "%s: replaced file read %r" % (name, got)
    # replaced twice: each descriptor keeps its own content
    older = old
    old = os.open(path, os.O_PATH)
    save(path, b"version three, the newest\n")
    for fd, want in ((older, b"version one, the old content\n"), (old, b"version two\n")):
        with open("/proc/self/fd/%d" % fd, "rb") as f:
            got = f.read()
        assert got == want, "%s: replaced file read %r, not %r" % (name, got, want)
    # a write through it is refused: it would reach no name
    try:
        os.close(os.open("/proc/self/fd/%d" % old, os.O_WRONLY))
        raise AssertionError("%s: a write open of the replaced file was let through" % name)
    except OSError as e:
        assert e.errno == errno.ESTALE, "%s: write open: %s" % (name, e)
    with open(path, "rb") as f:
        assert f.read() == b"version three, the newest\n", "%s: document changed" % name
    os.close(older)
    os.close(old)

check("notes.md")
check(long)
check("lessons.md", learnings)  # project-wide documents have a .history too
PY
assert_doc "$d/notes.md" $'version three, the newest\n'
# The saves are three revisions of the document; nothing above added one.
assert_eq "1 2 3" "$(revs "$d" notes.md | tr '\n' ' ' | sed 's/ $//')" "revisions of notes.md"
assert_file_eq "$d/.history/notes.md@1" $'version one, the old content\n'
exit 0
