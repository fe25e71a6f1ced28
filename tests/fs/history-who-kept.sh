#!/usr/bin/env bash
# The command name recorded with a revision (packetfs log, SPEC §7) is the writer's when it
# wrote, although the daemon keeps the last writers' /proc/PID/comm open between commits
# (engine/namespace/packet_who.c). A process that writes, then execs another program and writes
# again, has each revision named for the program that made it (python3, then bash; one pid). A
# process that writes and is reaped, then a new process that is given the same pid
# (/proc/sys/kernel/ns_last_pid, as root) and writes, has its revision named for the new one.
. "$(dirname "$0")/../lib.sh"
mount_item

# line_of LOG REV : the line of LOG about notes.md@REV.
line_of()
{
	printf '%s\n' "$1" | grep -E "(^|[^[:alnum:]_./-])notes\.md@$2([^0-9]|\$)" ||
		fail "packetfs log has no line for notes.md@$2: $1"
}

# shows LINE PID COMM : LINE names pid PID and command COMM.
shows()
{
	printf '%s\n' "$1" | grep -Eq "(^|[^[:alnum:]_])pid[=: ]+$2([^[:alnum:]_.-]|\$)" &&
		printf '%s\n' "$1" | grep -Eq "(^|[^[:alnum:]_])comm[=: ]+$3([^[:alnum:]_.-]|\$)"
}

# python3 appends a line, then becomes bash (execv: the same pid) and appends another.
pid=$(python3 -c '
import os, sys
with open(sys.argv[1], "a") as f:
    f.write("by python\n")
print(os.getpid(), flush=True)
os.execv("/bin/bash", ["bash", "-c", "printf \"by bash\\n\" >>\"$0\"", sys.argv[1]])
' "$d/notes.md") || fail "the writer that execs could not write notes.md"
assert_file_eq "$d/notes.md" $'by python\nby bash\n'
r=$(last_rev "$d" notes.md)
log=$("$PFS" log "$STORE" fix-1 notes.md 2>&1) || fail "packetfs log failed: $log"
line=$(line_of "$log" $((r - 1)))
shows "$line" "$pid" python3 || fail "the write before the exec is not python3's (pid $pid): $line"
line=$(line_of "$log" "$r")
shows "$line" "$pid" bash || fail "the write after the exec is not bash's (pid $pid): $line"

# A pid given again to another process once its first owner is reaped.
if [ "$(id -u)" != 0 ] || [ ! -w /proc/sys/kernel/ns_last_pid ]; then
	echo "the pid given again needs root and /proc/sys/kernel/ns_last_pid: not checked"
	exit 0
fi
python3 - "$d/notes.md" <<'PY' || fail "the pid given again: see above"
import os, subprocess, sys

path = sys.argv[1]
for attempt in range(20):
    first = subprocess.run(["bash", "-c", 'printf "first\\n" >>"$0"; echo $$', path],
                           check=True, capture_output=True, text=True)
    pid = int(first.stdout)
    # The next fork gets pid (unless another process takes it first: then again).
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(pid - 1))
    second = subprocess.run(["python3", "-c",
                             'import os, sys\nwith open(sys.argv[1], "a") as f:\n'
                             '    f.write("second\\n")\nprint(os.getpid())', path],
                            check=True, capture_output=True, text=True)
    if int(second.stdout) == pid:
        print(pid)
        sys.exit(0)
sys.exit("no process was given pid %d again in 20 tries" % pid)
PY
log=$("$PFS" log "$STORE" fix-1 notes.md 2>&1) || fail "packetfs log failed: $log"
r=$(last_rev "$d" notes.md)
second=$(line_of "$log" "$r")
first=$(line_of "$log" $((r - 1)))
again=$(printf '%s\n' "$second" | grep -Eo '(^|[^[:alnum:]_])pid[=: ]+[0-9]+' | grep -Eo '[0-9]+$')
shows "$first" "$again" bash || fail "the first owner of pid $again is not shown as bash: $first"
shows "$second" "$again" python3 ||
	fail "the process given pid $again again is not shown as python3 (the first owner's name kept?): $second"
echo "pid $again: bash, then python3"
