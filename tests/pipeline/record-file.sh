#!/usr/bin/env bash
# validation/record without the CLI: a request written by a shell redirect queues a run and
# `cat` reads its answer as it goes (queued/running, then the status with its exit code); one
# open file takes one run at a time (EBUSY) and cancels its own; poll(2) wakes when the run
# ends; inotify sees IN_MODIFY when it ends; an unknown recipe is refused (EINVAL) with the
# reason.
. "$(dirname "$0")/../lib.sh"
std_item 01-build
rec=$d/validation/record

printf '%s\n' '{"recipe": "01-build", "argv": ["sh", "-c", "echo from the file; exit 4"]}' >"$rec" ||
	fail "a request written by a redirect was refused: $(cat "$rec")"
answer=$(cat "$rec")
assert_contains "$answer" "recipe: 01-build" "answer"
assert_contains "$answer" "log: validation/logs/" "answer"
log=$(sed -n 's/^log: //p' <<<"$answer")
run=$(sed -n 's/^run: //p' <<<"$answer")
wait_for grep -qx 'status: failing' "$rec"
answer=$(cat "$rec")
assert_contains "$answer" "exit_code: 4" "answer once ended"
assert_contains "$answer" "note: " "answer once ended"
assert_contains "$(cat "$d/$log")" "from the file" "the run's log"
assert_eq "$run" "$(reg field "$r" -1 run)" "registry run"
assert_eq engine "$(reg field "$r" -1 source)" "registry source"
assert_eq "sh -c 'echo from the file; exit 4'" "$(reg field "$r" -1 command)" "registry command"

# Unknown recipe: EINVAL, and the reason for the next reader.
lines=$(reg count "$r")
assert_fails_with EINVAL sh_write "$rec" '{"recipe": "09-no-such", "argv": ["true"]}'$'\n'
assert_contains "$(cat "$rec")" "error: EINVAL: no recipe '09-no-such' in the catalog" \
	"answer to an unknown recipe"
assert_eq "$lines" "$(reg count "$r")" "registry lines after a refused request"

# One open file: a second request while its run runs is EBUSY; cancel ends it; poll(2) wakes
# when the run ends; gpus and timeout_s are taken.
out=$(python3 - "$rec" <<'PY'
import os, select, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
os.write(fd, b'{"recipe": "01-build", "argv": ["sleep", "30"], "gpus": 0, "timeout_s": 60}\n')
try:
    os.write(fd, b'{"recipe": "01-build", "argv": ["true"]}\n')
    print("second request accepted")
except OSError as e:
    print("second:", os.strerror(e.errno))
print(os.pread(fd, 4096, 0).decode(), end="")
p = select.poll()
p.register(fd, select.POLLIN)
print("ready before any change:", p.poll(200))
os.write(fd, b"cancel\n")
end = time.time() + 30
while time.time() < end:
    a = os.pread(fd, 4096, 0).decode()
    if "status: cancelled" in a:
        break
    p.poll(int((end - time.time()) * 1000))
print(a, end="")
try:
    os.write(fd, b"cancel\n")
except OSError as e:
    print("cancel again:", os.strerror(e.errno))
PY
)
assert_contains "$out" "second: Device or resource busy" "second request on one file"
assert_contains "$out" "error: EBUSY: run " "answer after the second request"
assert_contains "$out" "ready before any change: []" "poll before the run changed"
assert_contains "$out" "status: cancelled" "answer after cancel"
assert_contains "$out" "signal: 15" "answer after cancel"
assert_contains "$out" "cancel again: Operation already in progress" "cancel of an ended run"
assert_eq cancelled "$(reg field "$r" -1 status)" "registry status after cancel"

# cancel through a file that made no request: the item's latest run.
printf '%s\n' '{"recipe": "01-build", "argv": ["sleep", "30"]}' >"$rec"
wait_for grep -qx 'status: running' "$rec"
echo cancel >"$rec"
wait_for grep -qx 'status: cancelled' "$rec"

# Watchers see the answer change when the run ends, not only when a request is written.
bg inotifywait -m -e modify --format '%e %f' "$d/validation" >"$T/inotify" 2>"$T/inotify.err"
wait_for grep -q 'Watches established' "$T/inotify.err"
printf '%s\n' "{\"recipe\": \"01-build\", \"argv\": [\"sh\", \"-c\", \"while [ ! -e '$T/go' ]; do sleep 0.05; done\"]}" >"$rec"
wait_for grep -qx 'status: running' "$rec"
wait_for grep -qx 'MODIFY record' "$T/inotify"
n=$(grep -cx 'MODIFY record' "$T/inotify")
touch "$T/go"
wait_for grep -qx 'status: validated' "$rec"
wait_for bash -c '[ "$(grep -cx "MODIFY record" "$1")" -gt "$2" ]' _ "$T/inotify" "$n"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
