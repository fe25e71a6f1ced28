#!/usr/bin/env bash
# Concurrent appends with `>>` (O_APPEND) as on a local disk: four processes append 300 lines
# each to one document at the same time, two opening it anew for every line, two keeping it
# open for all their lines. Every line arrives intact, once, in its writer's order; none is
# lost, none overwritten, none interleaved with another; the size is the sum of the lines; the
# same after a remount.
. "$(dirname "$0")/../lib.sh"
mount_item
f=$d/log.md
N=300

printf 'header line\n' >"$f"

# writer.sh FILE ID MODE GO : waits for GO to exist, then appends N lines "wID NNN <80 x ID>"
# to FILE; MODE "each" opens FILE for every line, "once" keeps it open.
cat >"$T/writer.sh" <<'EOF'
f=$1 id=$2 mode=$3 go=$4 n=$5
pad=$(printf "%080d" 0 | tr 0 "$id")
end=$(( $(date +%s) + 60 ))
while [ ! -e "$go" ]; do
	[ "$(date +%s)" -lt "$end" ] || exit 3
	sleep 0.01
done
if [ "$mode" = each ]; then
	for i in $(seq -w 1 "$n"); do
		echo "w$id $i $pad" >>"$f" || exit 1
	done
else
	for i in $(seq -w 1 "$n"); do
		echo "w$id $i $pad" || exit 1
	done >>"$f"
fi
EOF

pids=()
for w in 1:each 2:each 3:once 4:once; do
	bg bash "$T/writer.sh" "$f" "${w%%:*}" "${w#*:}" "$T/go" "$N"
	pids+=("$BG")
done
touch "$T/go"
for p in "${pids[@]}"; do
	wait_gone "$p"
	wait "$p" || fail "writer $p failed with status $?"
done

# check FILE : the header, then 4 x N intact lines, each writer's in order, nothing else.
check()
{
	python3 - "$1" "$N" <<'PY' || fail "concurrent appends to $1 lost, broke or interleaved lines"
import re, sys
p, n = sys.argv[1], int(sys.argv[2])
data = open(p, "rb").read()
assert data.endswith(b"\n"), "does not end with a newline: %r" % data[-100:]
lines = data.decode().split("\n")[:-1]
assert lines[0] == "header line", "first line is %r" % lines[0]
seen = {w: [] for w in "1234"}
bad = []
for ln in lines[1:]:
    m = re.fullmatch(r"w([1-4]) (\d{3}) ([1-4]{80})", ln)
    if not m or set(m.group(3)) != {m.group(1)}:
        bad.append(ln)
        continue
    seen[m.group(1)].append(int(m.group(2)))
assert not bad, "%d broken lines, e.g. %r" % (len(bad), bad[:3])
for w, nums in seen.items():
    assert nums == list(range(1, n + 1)), "writer %s: %d lines, first out of order/missing near %r" % (
        w, len(nums), [x for i, x in enumerate(nums) if x != i + 1][:5])
want = len("header line\n") + 4 * n * len("w1 001 " + "1" * 80 + "\n")
assert len(data) == want, "size %d, want %d" % (len(data), want)
PY
}
check "$f"
assert_eq $((12 + 4 * N * 88)) "$(stat -c %s "$f")" "size of log.md"

umount_store
mount_store
check "$M/fix-1/log.md"
exit 0
