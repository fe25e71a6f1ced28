#!/usr/bin/env bash
# Concurrent writers are both kept: two processes open the same document, write and close at
# overlapping times (appending, and writing at offsets), and the mount behaves as a local disk
# given the same steps: the final content is the local disk's, each writer's close is a
# revision in .history holding what the document held at that close, and `packetfs log`
# names each writer's pid for its revision.
. "$(dirname "$0")/../lib.sh"
mount_item
mkdir -p "$T/local"

# The steps: two forked writers A and B, driven in lockstep by their parent. After each close
# the parent reads the document (the content a reader sees then). Prints one JSON object:
# the writers' pids, the content after A's close, after B's close, and at the end (hex).
cat >"$T/writers.py" <<'PY'
import json, os, sys

path, scenario = sys.argv[1], sys.argv[2]
SCENARIOS = {
    "append": (b"base\n", os.O_WRONLY | os.O_APPEND, [
        ("A", "write", b"A1\n"), ("B", "write", b"B1\n"), ("A", "write", b"A2\n"),
        ("A", "close"), ("B", "write", b"B2\n"), ("B", "close")]),
    "offsets": (b"0123456789\n", os.O_RDWR, [
        ("A", "pwrite", 0, b"AAA"), ("B", "pwrite", 5, b"BB"), ("A", "pwrite", 3, b"a"),
        ("A", "close"), ("B", "pwrite", 9, b"C"), ("B", "close")]),
}
initial, flags, steps = SCENARIOS[scenario]

def writer(rd, wr):
    fd = None
    while True:
        step = json.loads(os.read(rd, 65536))
        try:
            if step[0] == "open":
                fd = os.open(path, flags)
            elif step[0] == "write":
                assert os.write(fd, bytes.fromhex(step[1])) == len(step[1]) // 2
            elif step[0] == "pwrite":
                assert os.pwrite(fd, bytes.fromhex(step[2]), step[1]) == len(step[2]) // 2
            elif step[0] == "close":
                os.close(fd)
            os.write(wr, b"ok")
            if step[0] == "exit":
                os._exit(0)
        except Exception as e:
            os.write(wr, ("error: %r" % (e,)).encode())

def read():
    with open(path, "rb") as f:
        return f.read().hex()

procs = {}
for name in "AB":
    to_child, from_parent = os.pipe()
    to_parent, from_child = os.pipe()
    pid = os.fork()
    if pid == 0:
        writer(to_child, from_child)
    procs[name] = (pid, from_parent, to_parent)

def do(name, *step):
    pid, wr, rd = procs[name]
    step = [s.hex() if isinstance(s, bytes) else s for s in step]
    os.write(wr, json.dumps(step).encode())
    answer = os.read(rd, 65536).decode()
    if answer != "ok":
        sys.exit("%s %s: %s" % (name, step, answer))

with open(path, "wb") as f:
    f.write(initial)
do("A", "open")
do("B", "open")
after = {}
for step in steps:
    do(*step)
    if step[1] == "close":
        after[step[0]] = read()
for name in "AB":
    do(name, "exit")
    os.waitpid(procs[name][0], 0)
print(json.dumps({"pids": [procs["A"][0], procs["B"][0]], "after_a": after["A"],
                  "after_b": after["B"], "final": read()}))
PY

# field JSON KEY : one member of the writers' report.
field()
{
	python3 -c 'import json, sys; v = json.loads(sys.argv[1])[sys.argv[2]]; print(v if isinstance(v, str) else " ".join(map(str, v)))' "$1" "$2"
}

for scenario in append offsets; do
	doc=$scenario.md
	local_out=$(python3 "$T/writers.py" "$T/local/$doc" "$scenario") ||
		fail "$scenario on a local disk: $local_out"
	mount_out=$(python3 "$T/writers.py" "$d/$doc" "$scenario") || fail "$scenario on the mount: $mount_out"

	assert_eq "$(field "$local_out" final)" "$(field "$mount_out" final)" \
		"$scenario: final content read back (hex), local disk vs mount"
	assert_eq "$(hex_of "$T/local/$doc")" "$(hex_of "$d/$doc")" \
		"$scenario: final content (hex), local disk vs mount, read afresh"

	# The initial save, then one revision per writer's close, each holding what the
	# document held (on a local disk) at that close.
	mapfile -t r < <(revs "$d" "$doc")
	[ "${#r[@]}" = 3 ] || fail "$scenario: .history lists ${#r[@]} revisions of $doc (${r[*]}), expected 3"
	assert_eq "$(field "$local_out" after_a)" "$(hex_of "$d/.history/$doc@${r[1]}")" \
		"$scenario: revision at A's close (hex)"
	assert_eq "$(field "$local_out" after_b)" "$(hex_of "$d/.history/$doc@${r[2]}")" \
		"$scenario: revision at B's close (hex)"

	# Each writer is named for its revision.
	read -r pid_a pid_b <<<"$(field "$mount_out" pids)"
	log=$("$PFS" log "$STORE" fix-1 "$doc" 2>&1) || fail "packetfs log failed: $log"
	line_a=$(printf '%s\n' "$log" | grep -E "$doc@${r[1]}([^0-9]|\$)") ||
		fail "$scenario: packetfs log has no line for $doc@${r[1]}: $log"
	line_b=$(printf '%s\n' "$log" | grep -E "$doc@${r[2]}([^0-9]|\$)") ||
		fail "$scenario: packetfs log has no line for $doc@${r[2]}: $log"
	printf '%s\n' "$line_a" | grep -Eq "pid[=: ]+$pid_a\b" ||
		fail "$scenario: revision at A's close is not by A (pid $pid_a): $line_a"
	printf '%s\n' "$line_b" | grep -Eq "pid[=: ]+$pid_b\b" ||
		fail "$scenario: revision at B's close is not by B (pid $pid_b): $line_b"
done
exit 0
