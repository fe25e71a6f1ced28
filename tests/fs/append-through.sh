#!/usr/bin/env bash
# Write-through appends (engine/namespace/packet_through.c): once a process's last three O_APPEND
# handles of a document wrote at most once each, its next one commits each write before write(2)
# returns, and its close sends no FLUSH. What a write returned survives kill -9 of the daemon
# while the descriptor is still open; a handle's several writes leave one revision, as a close
# that commits does; a handle that wrote twice sets the count back (the process's next handles
# commit at their close: what one wrote before kill -9 is lost, as on any handle never closed);
# the count is the process's own. A truncate and a fallocate through such a descriptor commit
# before they return. registry.jsonl's handles too: a write-through one refuses a whole object
# without its newline at the write (a close would refuse it, and a shell does not report a
# close's error). Concurrent `>>` loops keep every line.
. "$(dirname "$0")/../lib.sh"
mount_item
f=$d/log.md

# held FILE : one `>>` of FILE kept open for two writes, without a close; the shell's descriptor
# 3 until `exec 3>&-`.
held()
{
	exec 3>>"$1"
	echo "held $2" >&3
	echo "held $2 again" >&3
}

echo one >>"$f"   # creates it: commits at its close
echo two >>"$f"
# Two handles that wrote once: not yet. A handle held open commits at its close, and sets the
# count back.
held "$f" a
exec 3>&-
echo three >>"$f"
echo four >>"$f"
echo five >>"$f"  # the third in a row
first=$(last_rev "$d" log.md)
# Write-through: one handle, two writes, one revision grown in place.
{
	echo six
	echo seven
} >>"$f"
assert_eq $((first + 1)) "$(last_rev "$d" log.md)" "revisions after one handle's two writes"
assert_file_eq "$d/.history/log.md@$((first + 1))" \
	$'one\ntwo\nheld a\nheld a again\nthree\nfour\nfive\nsix\nseven\n'
assert_file_eq "$d/.history/log.md@$first" $'one\ntwo\nheld a\nheld a again\nthree\nfour\nfive\n'

# That handle wrote twice: the next three commit at their close, then a descriptor held open
# commits each write before the write returns.
echo eight >>"$f"
echo nine >>"$f"
echo ten >>"$f"
held "$f" b
# Another process's handle is not this shell's: it commits at its close, and what it wrote
# without closing is not committed.
python3 - "$f" "$T/other-ready" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"not committed\n")
open(sys.argv[2], "w").close()
time.sleep(600)
PY
other=$!
wait_for test -e "$T/other-ready"
all=$'one\ntwo\nheld a\nheld a again\nthree\nfour\nfive\nsix\nseven\n'
all+=$'eight\nnine\nten\nheld b\nheld b again\n'
assert_file_eq "$f" "${all}not committed"$'\n'

# Three shells at once, each a `>>` loop (write-through after its third line): two to one
# document, one to another, while a fourth process reads both. Every line arrives, once, in its
# writer's order.
writers=()
for w in 1 2 3; do
	bash -c 'for i in $(seq 1 200); do echo "w$2 $i" >>"$1"; done' _ \
		"$d/conc-$(((w + 1) / 2)).md" "$w" &
	writers+=($!)
done
for i in $(seq 1 40); do
	cat "$d/conc-1.md" "$d/conc-2.md" >/dev/null 2>&1 || true
done
wait "${writers[@]}" || fail "a concurrent writer failed"
for w in 1 2 3; do
	assert_eq "$(seq 1 200 | sed "s/^/w$w /")" "$(grep "^w$w " "$d/conc-$(((w + 1) / 2)).md")" \
		"the lines of writer $w"
done
assert_eq 400 "$(wc -l <"$d/conc-1.md")" "lines of conc-1.md"

# registry.jsonl: its lines are stored at the write whatever the handle; a write-through one
# refuses at the write a whole object without its newline, which a close would refuse.
r=$d/validation/registry.jsonl
line='{"recipe":"01-build","status":"validated","command":"make"}'
for i in 1 2 3; do
	printf '%s\n' "$line" >>"$r"
done
printf '%s' "$line" 2>"$T/reg.err" >>"$r" && fail "a line without its newline was taken"
assert_contains "$(cat "$T/reg.err")" "Invalid argument" "error of a line without its newline"
printf '%s\n' "$line" >>"$r" || fail "a registry line through a write-through handle failed"
assert_eq 4 "$(wc -l <"$r")" "registry lines"

# A truncate and a fallocate through a write-through descriptor commit before they return too.
python3 - "$d" "$T/alloc-ready" <<'PY' &
import os, sys, time
d = sys.argv[1]
fds = []
for name in ("cut.md", "grown.md"):
    for i in range(3):
        fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, b"line %d\n" % i)
        os.close(fd)
    fds.append(os.open(os.path.join(d, name), os.O_WRONLY | os.O_APPEND))
os.ftruncate(fds[0], 4)
os.posix_fallocate(fds[1], 0, 100)
open(sys.argv[2], "w").close()
time.sleep(600)
PY
alloc=$!
wait_for test -e "$T/alloc-ready"

kill_daemon
kill "$alloc" 2>/dev/null || true
wait "$alloc" 2>/dev/null || true
exec 3>&- || true
kill "$other" 2>/dev/null || true
wait "$other" 2>/dev/null || true
mount_store "$M"
d=$M/fix-1
f=$d/log.md
assert_file_eq "$f" "$all"
assert_file_eq "$d/cut.md" "line"
assert_eq 4 "$(wc -l <"$d/validation/registry.jsonl")" "registry lines after kill -9"
assert_eq 100 "$(stat -c %s "$d/grown.md")" "size after a fallocate through a write-through handle"
assert_eq $'line 0\nline 1\nline 2' "$(tr -d '\0' <"$d/grown.md")" "grown.md without its zeros"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after kill -9 failed: $out"

# The remounted store takes appends as before.
exec 4>>"$f"
echo eleven >&4
echo twelve >&4
exec 4>&-
assert_file_eq "$f" "$all"$'eleven\ntwelve\n'
exit 0
