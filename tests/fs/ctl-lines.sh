#!/usr/bin/env bash
# ctl applies one command per complete line (SPEC §4): a last line without newline only when
# the file is closed, a command split over two write() calls once, when its newline arrives
# (also when a shell writes the pieces through a duplicated fd, closing its copies as it goes),
# and every command of a write holding several lines, in order. Each effect is seen in the
# item's events (hold/release) and in status.json's "hold".
. "$(dirname "$0")/../lib.sh"
mount_item

# ctl_types : the types of fix-1's hold/release events, one a line.
ctl_types()
{
	grep -oE '"type"[[:space:]]*:[[:space:]]*"(hold|release)"' "$d/events" | grep -oE '(hold|release)"$' |
		tr -d '"' || true
}

# held : status.json's "hold" (true or false).
held()
{
	grep -oE '"hold"[[:space:]]*:[[:space:]]*(true|false)' "$d/status.json" | grep -oE '(true|false)$'
}

assert_eq "" "$(ctl_types)" "hold/release events of a new item"
assert_eq false "$(held)" "hold of a new item"

# 1. A last line without newline is applied at close, not before. The python program writes
# "hold" with one write() and, before closing, reports what it saw through the mount.
python3 - "$d" <<'PY' >"$T/partial.out" || fail "writing 'hold' without newline: $(cat "$T/partial.out")"
import json, os, sys
d = sys.argv[1]
def events():
    return [json.loads(l)["type"] for l in open(d + "/events") if l.strip()]
fd = os.open(d + "/ctl", os.O_WRONLY)
assert os.write(fd, b"hold") == 4
print("open:", "hold" in events(), json.load(open(d + "/status.json"))["hold"])
os.close(fd)
print("closed:", events().count("hold"), json.load(open(d + "/status.json"))["hold"])
PY
assert_eq $'open: False False\nclosed: 1 True' "$(cat "$T/partial.out")" \
	"events/hold while 'hold' (no newline) is open, then after close"
assert_eq hold "$(ctl_types)" "events after the close"
# The close applied the written line; it did not also count as an empty write (advance).
assert_eq new "$(status_field "$M" fix-1 state)" "state after a written partial line"
[ -z "$(ls "$d/stages")" ] || fail "closing ctl after a written line started a stage: $(ls "$d/stages")"

# 2. A command split over two write() calls: nothing after the first piece, applied once
# when the newline arrives (before the close), and nothing more at the close.
python3 - "$d" <<'PY' >"$T/split.out" || fail "writing 'rel' + 'ease\n': $(cat "$T/split.out")"
import json, os, sys
d = sys.argv[1]
def state():
    ev = [json.loads(l)["type"] for l in open(d + "/events") if l.strip()]
    return "%d %s" % (ev.count("release"), json.load(open(d + "/status.json"))["hold"])
fd = os.open(d + "/ctl", os.O_WRONLY | os.O_APPEND)
os.write(fd, b"rel")
print("piece:", state())
os.write(fd, b"ease\n")
print("newline:", state())
os.close(fd)
print("closed:", state())
PY
assert_eq $'piece: 0 True\nnewline: 1 False\nclosed: 1 False' "$(cat "$T/split.out")" \
	"release events and hold after 'rel', after 'ease\\n', after close"
assert_eq $'hold\nrelease' "$(ctl_types)" "events after the split command"

# 3. Several commands in one write() are all applied, in order.
before=$(ctl_types)
python3 - "$d/ctl" <<'PY' || fail "one write of three commands failed"
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
data = b"hold\nrelease\nhold\n"
assert os.write(fd, data) == len(data)
os.close(fd)
PY
assert_eq "$before"$'\nhold\nrelease\nhold' "$(ctl_types)" "events after one write of hold, release, hold"
assert_eq true "$(held)" "hold after hold, release, hold"
before=$(ctl_types)
printf 'release\nhold\nrelease\n' >"$d/ctl" || fail "printf of three commands to ctl failed"
assert_eq "$before"$'\nrelease\nhold\nrelease' "$(ctl_types)" \
	"events after printf 'release\\nhold\\nrelease\\n'"
assert_eq false "$(held)" "hold after release, hold, release"

# 4. The same from a shell script writing the pieces through an fd it keeps open: bash
# duplicates and closes copies of the fd around each builtin (each close of a copy is a flush
# on the mount, not the last close). The command is applied once, when its newline arrives.
before=$(ctl_types)
exec 3>"$d/ctl"
printf 'ho' >&3 || fail "printf 'ho' to ctl failed"
assert_eq "$before" "$(ctl_types)" "events after the piece 'ho' from a shell"
printf 'ld\n' >&3 || fail "printf 'ld\\n' to ctl failed (was the piece 'ho' applied alone?)"
assert_eq "$before"$'\nhold' "$(ctl_types)" "events after 'ld\\n' from a shell"
exec 3>&- || fail "closing ctl from a shell failed"
assert_eq "$before"$'\nhold' "$(ctl_types)" "events after the shell closed ctl"
assert_eq true "$(held)" "hold after 'ho' + 'ld\\n' from a shell"

# None of this advanced the item.
assert_eq new "$(status_field "$M" fix-1 state)" "state at the end"
[ -z "$(ls "$d/stages")" ] || fail "a stage ran: $(ls "$d/stages")"
exit 0
