#!/usr/bin/env bash
# Advisory locks on documents as on a local disk, between processes: while one process holds
# flock(1) LOCK_EX, another's LOCK_EX|LOCK_NB and LOCK_SH|LOCK_NB fail (and succeed on another
# document); shared locks coexist but exclude LOCK_EX; after release the lock is free. The same
# for fcntl locks (python fcntl.lockf): EAGAIN/EACCES while held, byte ranges conflict only
# where they overlap, free after release. Locking changes no content.
. "$(dirname "$0")/../lib.sh"
mount_item
f=$d/lock.md
printf 'locked content\n' >"$f"
printf 'other\n' >"$d/other.md"

# try_flock MODE FILE : flock -n MODE on FILE; prints 0 when it got the lock, 99 on conflict.
try_flock()
{
	local rc=0
	flock -n -E 99 "$1" "$2" true || rc=$?
	echo "$rc"
}

# hold_flock MODE NAME : a background flock MODE on $f that touches $T/NAME.held when it has
# the lock and holds it until $T/NAME.release exists. Sets HOLDER.
hold_flock()
{
	bg timeout 60 flock "$1" "$f" bash -c \
		'touch "$1.held"; while [ ! -e "$1.release" ]; do sleep 0.05; done' _ "$T/$2"
	HOLDER=$BG
	wait_for test -e "$T/$2.held"
}

# Exclusive flock.
hold_flock -x ex
assert_eq 99 "$(try_flock -x "$f")" "flock -n -x while another process holds LOCK_EX"
assert_eq 99 "$(try_flock -s "$f")" "flock -n -s while another process holds LOCK_EX"
assert_eq 0 "$(try_flock -x "$d/other.md")" "flock -n -x of another document"
pid_alive "$HOLDER" || fail "the flock holder ended early"
touch "$T/ex.release"
wait_gone "$HOLDER"
assert_eq 0 "$(try_flock -x "$f")" "flock -n -x after the holder released"

# Shared flocks coexist and exclude an exclusive one.
hold_flock -s sh
assert_eq 0 "$(try_flock -s "$f")" "flock -n -s while another process holds LOCK_SH"
assert_eq 99 "$(try_flock -x "$f")" "flock -n -x while another process holds LOCK_SH"
touch "$T/sh.release"
wait_gone "$HOLDER"
assert_eq 0 "$(try_flock -x "$f")" "flock -n -x after the LOCK_SH holder released"

# fcntl locks through python fcntl.lockf: a holder of the whole file, then of bytes 0-9.
cat >"$T/lockf-holder.py" <<'PY'
import fcntl, os, sys, time
path, length, flag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "r+b") as f:
    fcntl.lockf(f, fcntl.LOCK_EX, length, 0)
    open(flag + ".held", "w").close()
    end = time.time() + 60
    while not os.path.exists(flag + ".release") and time.time() < end:
        time.sleep(0.05)
PY
cat >"$T/lockf-try.py" <<'PY'
import errno, fcntl, sys
path, kind, length, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
op = (fcntl.LOCK_EX if kind == "ex" else fcntl.LOCK_SH) | fcntl.LOCK_NB
with open(path, "r+b") as f:
    try:
        fcntl.lockf(f, op, length, start)
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES):
            print("busy")
            sys.exit(0)
        raise
    fcntl.lockf(f, fcntl.LOCK_UN, length, start)
    print("locked")
PY
try_lockf()
{
	python3 "$T/lockf-try.py" "$@" || fail "lockf $* failed with an unexpected error"
}

bg python3 "$T/lockf-holder.py" "$f" 0 "$T/fl"
HOLDER=$BG
wait_for test -e "$T/fl.held"
assert_eq busy "$(try_lockf "$f" ex 0 0)" "lockf LOCK_EX|LOCK_NB while another process holds it"
assert_eq busy "$(try_lockf "$f" sh 0 0)" "lockf LOCK_SH|LOCK_NB while another process holds it"
assert_eq locked "$(try_lockf "$d/other.md" ex 0 0)" "lockf of another document"
touch "$T/fl.release"
wait_gone "$HOLDER"
assert_eq locked "$(try_lockf "$f" ex 0 0)" "lockf LOCK_EX|LOCK_NB after release"

bg python3 "$T/lockf-holder.py" "$f" 10 "$T/range"
HOLDER=$BG
wait_for test -e "$T/range.held"
assert_eq locked "$(try_lockf "$f" ex 10 10)" "lockf of bytes 10-19 while bytes 0-9 are held"
assert_eq busy "$(try_lockf "$f" ex 10 5)" "lockf of bytes 5-14 while bytes 0-9 are held"
assert_eq busy "$(try_lockf "$f" sh 1 9)" "lockf LOCK_SH of byte 9 while bytes 0-9 are held"
touch "$T/range.release"
wait_gone "$HOLDER"
assert_eq locked "$(try_lockf "$f" ex 10 5)" "lockf of bytes 5-14 after release"

assert_file_eq "$f" $'locked content\n'
assert_file_eq "$d/other.md" $'other\n'
exit 0
