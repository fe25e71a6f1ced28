#!/usr/bin/env bash
# A full disk under the store (SPEC §8): writing and creating documents, making an item and
# appending to registry.jsonl fail with ENOSPC (never EIO) and keep what was stored (a
# write-through append's write fails, its bytes taken back); an append
# refused while another handle holds the document open stays pending there (its size and
# content show it) and is committed by the next close; once space is back the same operations
# work without a remount and the store checks clean.
# test-timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../loopfs.sh"

loopfs_make 64
loopfs_store
new_item fix-1
d=$M/fix-1
r=$d/validation/registry.jsonl
printf 'keep\n' >"$d/notes.md"
mkdir "$d/sub"
line='{"recipe":"01-build","status":"validated","command":"make"}'
printf '%s\n' "$line" >>"$r"
reg_before=$(cat "$r")
# After three `>>` of t.md that wrote once each, this shell's next one writes through
# (packet_through.c): it commits at its write.
echo one >>"$d/t.md"
echo two >>"$d/t.md"
echo three >>"$d/t.md"
events_before=$(cat "$d/events")
history_before=$(ls "$d/.history")

loopfs_full "$M/learnings/pad.md"

# Documents: an overwrite, an append, a new document, a large copy.
assert_fails_with "No space left on device" write_then_close "$d/notes.md" TRUNC "new text"
assert_doc "$d/notes.md" $'keep\n'
assert_fails_with "No space left on device" write_then_close "$d/notes.md" APPEND "more"
assert_doc "$d/notes.md" $'keep\n'
# The same append while another handle that only writes holds the document open: its bytes stay
# pending in the open document (reads and the size show them) and the next close commits them.
exec 7>>"$d/notes.md"
assert_fails_with "No space left on device" write_then_close "$d/notes.md" APPEND "more"
assert_eq 9 "$(stat -c %s "$d/notes.md")" "size with an append pending after a refused commit"
assert_eq $'keep\nmore' "$(cat "$d/notes.md")" "content with an append pending"
# A write-through append: the write fails, and its bytes are taken back (nothing left pending,
# its modification time as it was).
mtime=$(stat -c %y "$d/t.md")
echo four 2>"$T/through.err" >>"$d/t.md" && fail "a write-through append on a full disk succeeded"
assert_contains "$(cat "$T/through.err")" "No space left on device" \
	"error of a write-through append"
assert_eq 14 "$(stat -c %s "$d/t.md")" "size after a refused write-through append"
assert_doc "$d/t.md" $'one\ntwo\nthree\n'
assert_eq "$mtime" "$(stat -c %y "$d/t.md")" "mtime after a refused write-through append"
assert_fails_with "No space left on device" bash -c 'head -c 300000 /dev/urandom >"$1"' _ "$d/big.md"
printf x >"$T/small"
assert_fails_with "No space left on device" cp "$T/small" "$d/new.md"
[ ! -e "$d/new.md" ] || fail "new.md exists after its creation failed: $(ls -l "$d/new.md")"
# The kernel keeps the entry a create gave it; asked by that name, the daemon answers the inode
# -ESTALE and the kernel looks the name up again: every way of asking gets ENOENT, not ESTALE.
assert_eq "stat ENOENT; open ENOENT; open for writing ENOENT; chmod ENOENT" \
	"$(python3 - "$d/new.md" <<'PY'
import errno, os, sys
def ask(what, call):
    try:
        call()
        return what + " ok"
    except OSError as e:
        return what + " " + errno.errorcode[e.errno]
p = sys.argv[1]
print("; ".join([ask("stat", lambda: os.stat(p)),
                 ask("open", lambda: os.close(os.open(p, os.O_RDONLY))),
                 ask("open for writing", lambda: os.close(os.open(p, os.O_WRONLY))),
                 ask("chmod", lambda: os.chmod(p, 0o600))]))
PY
)" "a new document whose first commit failed, asked by its name"
[ ! -e "$d/big.md" ] || [ ! -s "$d/big.md" ] || fail "big.md holds $(stat -c %s "$d/big.md") bytes"
assert_eq "$history_before" "$(ls "$d/.history")" ".history after refused writes"

# A document created in a document directory whose first commit fails is hidden while its writer
# holds it open, and the kernel is not let keep that miss (the directory holds a document created
# and not stored): once space is back, the writer's last close stores it and it is found at once.
cat >"$T/held.py" <<'PY'
import errno, os, sys, time
path, freed = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"held\n")
try:
    os.close(os.dup(fd))
    print("first commit: ok")
except OSError as e:
    print("first commit:", errno.errorcode[e.errno])
for i in range(2):
    print("while held:", "found" if os.path.exists(path) else "missing")
print("ready", flush=True)
while not os.path.exists(freed):
    time.sleep(0.01)
os.close(fd)
print("after the close:", "found" if os.path.exists(path) else "missing", flush=True)
PY
bg python3 "$T/held.py" "$d/sub/held.md" "$T/freed" >"$T/held.out" 2>&1
held=$BG
wait_for grep -q ready "$T/held.out"

# mkdir of an item: ENOSPC, and nothing half made.
assert_fails_with "No space left on device" mkdir "$M/fix-2"
[ ! -e "$M/fix-2" ] || fail "fix-2 is on the mount after its mkdir failed"
assert_eq "events fix-1 index.html learnings" "$(ls "$M" | tr '\n' ' ' | sed 's/ $//')" "root listing"
[ ! -e "$STORE/worktrees/fix-2" ] || fail "a worktree of fix-2 was left behind"
git -C "$REPO" show-ref --verify -q refs/heads/packetfs/fix-2 &&
	fail "branch packetfs/fix-2 was left behind"
[ ! -e "$REPO/.git/worktrees/fix-2" ] || fail "git's worktree entry of fix-2 was left behind"

# registry.jsonl: one complete line appended, refused whole.
assert_fails_with "No space left on device" sh_append "$r" "$line"$'\n'
assert_eq "$reg_before" "$(cat "$r")" "registry after a refused append"
assert_eq "$events_before" "$(cat "$d/events")" "events after refused writes"

# Space again: everything works, without a remount.
loopfs_free
touch "$T/freed"
wait "$held" || fail "the holder of sub/held.md failed: $(cat "$T/held.out")"
assert_eq $'first commit: ENOSPC\nwhile held: missing\nwhile held: missing\nready\nafter the close: found' \
	"$(cat "$T/held.out")" "a document hidden until its writer's last close"
assert_doc "$d/sub/held.md" $'held\n'
echo five >>"$d/t.md" || fail "a write-through append after freeing space failed"
assert_doc "$d/t.md" $'one\ntwo\nthree\nfive\n'
printf 'tail\n' >&7
exec 7>&- || fail "the close that commits the pending append failed"
assert_doc "$d/notes.md" $'keep\nmoretail\n'
write_then_close "$d/notes.md" TRUNC "new text" || fail "overwrite after freeing space failed"
assert_doc "$d/notes.md" "new text"
cp "$T/small" "$d/new.md" || fail "cp new.md after freeing space failed"
assert_doc "$d/new.md" x
head -c 300000 /dev/urandom >"$T/big" && cp "$T/big" "$d/big.md" || fail "cp big.md failed"
cmp "$T/big" "$d/big.md" || fail "big.md differs"
printf '%s\n' "$line" >>"$r" || fail "registry append after freeing space failed"
assert_eq 2 "$(wc -l <"$r")" "registry lines"
new_item fix-2
[ -d "$STORE/worktrees/fix-2" ] || fail "fix-2 has no worktree"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check: $out"
out=$(sqlite3 "$STORE/packetfs.db" 'PRAGMA integrity_check' 2>&1)
assert_eq ok "$out" "integrity_check"
umount_store
mount_store "$T/mnt"
assert_doc "$M/fix-1/notes.md" "new text"
cmp "$T/big" "$M/fix-1/big.md" || fail "big.md differs after a remount"
exit 0
