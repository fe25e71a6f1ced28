#!/usr/bin/env bash
# Revisions are stored compactly (SPEC §3): 2,000 appends of a 52-byte line through the mount
# (one `>>` each: one revision each) grow the store by a small multiple of the document's final
# size (104 KB; stored whole, the revisions would take 104 MB), both in pages in use and in the
# file after the unmount's checkpoint; every one of the 2,000 revisions in .history reads back
# byte for byte, before and after a remount, and each `>>` was committed as an append; 200
# editor-style saves (write a temporary file, rename it over) of a 64 KiB document with one
# line changed each stay as small.
# test-timeout: 300
. "$(dirname "$0")/../lib.sh"
command -v sqlite3 >/dev/null || exit 77
mount_item
DB=$STORE/packetfs.db

# used : bytes of the store's pages in use (a second connection sees the WAL's pages too).
used()
{
	sqlite3 "$DB" "SELECT (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size()) - (SELECT freelist_count FROM pragma_freelist_count()) * (SELECT page_size FROM pragma_page_size());"
}

# settled : waits (up to 10 s) until no revision waits to be retired (the mount's thread retires
# them once no commit came for a moment: engine/store/store_later.c), so that used() counts each
# revision as the store keeps it for good.
settled()
{
	local k=0
	while [ "$(sqlite3 "$DB" "SELECT count(*) FROM retire_later;")" != 0 ]; do
		k=$((k + 1))
		[ $k -le 100 ] || fail "revisions still wait to be retired after 10 s"
		sleep 0.1
	done
}

# check_history NAME COUNT : .history/NAME@1..COUNT exist, and revision k is the first k lines
# of the document's current content (the appends), byte for byte.
check_history()
{
	if ! python3 - "$d" "$1" "$2" >"$T/check.out" 2>&1 <<'PY'
import os, sys
d, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(os.path.join(d, name), "rb").read().splitlines(keepends=True)
assert len(lines) == n, "%d lines, expected %d" % (len(lines), n)
revs = sorted(int(f.split("@")[1]) for f in os.listdir(os.path.join(d, ".history"))
              if f.startswith(name + "@"))
assert revs == list(range(1, n + 1)), "revisions %s..%s (%d)" % (revs[:3], revs[-3:], len(revs))
want = b""
for k in range(1, n + 1):
    want += lines[k - 1]
    got = open(os.path.join(d, ".history", "%s@%d" % (name, k)), "rb").read()
    assert got == want, "%s@%d: %d bytes, expected %d" % (name, k, len(got), len(want))
PY
	then
		fail "the revisions of $1 do not read back: $(tail -n 3 "$T/check.out")"
	fi
}

start=$(used)
before=$start
for ((i = 1; i <= 2000; i++)); do
	printf 'line %04d of a log which grows by a line per close.\n' "$i" >>"$d/log.md"
done
size=$(stat -c %s "$d/log.md")
assert_eq "$size" 104000 "the document's size"
grown=$(($(used) - before))
note "2,000 appends: the store grew by $grown bytes for a $size-byte document"
[ "$grown" -le $((6 * size)) ] || fail "the store grew by $grown bytes for a $size-byte document"
check_history log.md 2000
# Each `>>` was committed as an append (one run from the first revision on), not as the whole
# document: only the first revision, written by the create, is no part of the run.
runs=$(sqlite3 "$DB" "SELECT count(*), count(DISTINCT grown_from) FROM revisions WHERE path = 'log.md' AND grown_from IS NOT NULL;")
assert_eq "1999|1" "$runs" "the appends' revisions in a run, and the runs"

# Editor saves of a 64 KiB document, one line changed each time.
before=$(used)
python3 - "$d" <<'PY' || fail "editor saves failed"
import os, sys
d = sys.argv[1]
lines = [b"%05d a line of the design document, which is edited in place\n" % i for i in range(1040)]
for k in range(200):
    lines[(k * 389) % len(lines)] = b"%05d edited in save %d\n" % (k, k)
    tmp = os.path.join(d, ".design.md.swp")
    with open(tmp, "wb") as f:
        f.write(b"".join(lines))
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, os.path.join(d, "design.md"))
PY
size=$(stat -c %s "$d/design.md")
settled
grown=$(($(used) - before))
note "200 saves: the store grew by $grown bytes for a $size-byte document"
[ "$grown" -le $((5 * size)) ] || fail "200 saves grew the store by $grown bytes for a $size-byte document"
assert_eq "$(revs "$d" design.md | wc -l)" 200 "revisions of design.md"

# After the unmount (which checkpoints), the file itself is small, and everything reads back. Its
# pages held at their peak up to 1 MiB of revisions waiting to be retired whole (LATER_BYTES of
# engine/store/store_later.c), reused since.
umount_store
file=$(stat -c %s "$DB")
note "the store file: $file bytes; $start in use before the appends"
[ "$file" -le $((start + 6 * 104000 + 4 * size + 1048576)) ] ||
	fail "the store file is $file bytes, $start in use before the appends"
mount_store
d=$M/fix-1
check_history log.md 2000
cmp -s "$d/design.md" "$d/.history/design.md@200" || fail "design.md@200 is not the current content"
exit 0
