#!/usr/bin/env bash
# The WAL stays proportional to what the store holds (SPEC §2), however much went through it:
# 500 appends of a 52-byte line through the mount, to a document and then to the registry, leave
# a WAL file of at most WAL_LIMIT once the checkpointer caught up, and a single 6 MiB write, whose one commit grows the WAL past
# that, is cut back to it with no further write. Each append writes to the WAL the pages of
# the document's content and a fixed few more, not more, in one pwrite64 call a commit (measured
# with strace on the daemon's pwrite64 calls to the -wal file; that part is skipped without
# strace).
. "$(dirname "$0")/../lib.sh"
mount_item
wal=$STORE/packetfs.db-wal

# engine/store/store.c: WAL_LIMIT (journal_size_limit), the file of a WAL of CKPT_PAGES frames.
WAL_LIMIT=$((32 + 1000 * (4096 + 24)))

wal_size()
{
	stat -c %s "$wal" 2>/dev/null || echo 0
}

tracing=0
if command -v strace >/dev/null 2>&1 &&
	strace -qq -e trace=none -o /dev/null true 2>/dev/null; then
	strace -f -qq -xx -s 8 -p "$DAEMON" -e trace=pwrite64 -y -o "$T/pwrite" &
	STRACE=$!
	BG_PIDS+=("$STRACE")
	# Attached once every thread of the daemon has a tracer.
	wait_for sh -c "! grep -L '^TracerPid:[[:space:]]*[1-9]' /proc/$DAEMON/task/*/status | grep -q ."
	tracing=1
else
	echo "SKIP: WAL bytes per append (no strace, or ptrace not permitted)"
fi

line='01234567890123456789012345678901234567890123456789'
for i in $(seq 500); do
	echo "$line$((i % 10))" >>"$d/notes.md" || fail "append $i refused"
done
assert_eq $((500 * 52)) "$(stat -c %s "$d/notes.md")" "size of notes.md after 500 appends"

if [ "$tracing" = 1 ]; then
	kill "$STRACE"
	wait "$STRACE" 2>/dev/null || true
	# Frames written: each is a 24-byte header and its page; the store's VFS gathers a commit's
	# frames (and the WAL's 32-byte header, at each start of the WAL) into one pwrite64 call
	# (engine/store/store_vfs.c), where SQLite makes two calls a frame.
	page=$(sqlite3 "$STORE/packetfs.db" 'PRAGMA page_size')
	grep '\\x2d\\x77\\x61\\x6c>, ' "$T/pwrite" | sed -n 's/.* = \([0-9]*\)$/\1/p' >"$T/wal-writes"
	frames=$(awk -v f=$((page + 24)) '{ n += int($1 / f) } END { print n + 0 }' "$T/wal-writes")
	calls=$(wc -l <"$T/wal-writes")
	note "pwrite64 calls to the WAL for 500 appends: $calls"
	[ "$calls" -le 550 ] || fail "500 appends took $calls pwrite64 calls to the WAL (one a commit expected)"
	# Per append: the page of the documents row, of the new and the retired revision rows
	# (mostly one leaf; 2 where they straddle a leaf boundary), of the unique index of
	# revisions, the leaf of table whole, the freelist trunk that its freed and reused overflow
	# pages pass through, page 1 (the freelist count): 7; then the pages of the content stored
	# whole, 4092 bytes an overflow page. Before secure_delete=FAST each freed overflow page
	# was written once more, zeroed (11.6 frames an append here, against 10.7 allowed).
	bound=0
	for i in $(seq 500); do
		bound=$((bound + 7 + (52 * i + 4091) / 4092))
	done
	note "WAL frames for 500 appends: $frames ($((frames * (page + 24) / 500)) bytes an append), bound $bound"
	[ "$frames" -gt 500 ] || fail "strace saw $frames WAL frames for 500 commits: not tracing the daemon?"
	[ "$frames" -le "$bound" ] ||
		fail "500 appends wrote $frames WAL frames ($((frames * (page + 24) / 500)) bytes an append), more than $bound"
fi

# Caught up: the file is cut back to WAL_LIMIT (polled, not timed: the checkpointer's pass
# that follows the last commit, then the next start of the WAL).
wait_for sh -c "[ \$(stat -c %s '$wal' 2>/dev/null || echo 0) -le $WAL_LIMIT ]" ||
	fail "WAL file is $(wal_size) bytes after 500 appends of 52 bytes, more than $WAL_LIMIT"
note "WAL file after 500 appends: $(wal_size) bytes"

# 500 registry lines (a commit of the line and its event each): the same bound.
for i in $(seq 500); do
	echo "{\"recipe\":\"01-build\",\"status\":\"validated\",\"note\":\"run $i\"}" >>"$r" ||
		fail "registry append $i refused"
done
assert_eq 500 "$(wc -l <"$r")" "registry lines after 500 appends"
wait_for sh -c "[ \$(stat -c %s '$wal' 2>/dev/null || echo 0) -le $WAL_LIMIT ]" ||
	fail "WAL file is $(wal_size) bytes after 500 registry appends, more than $WAL_LIMIT"
note "WAL file after 500 registry appends: $(wal_size) bytes"

# One commit of 6 MiB grows the WAL past the limit; with no write after it, the checkpointer
# alone brings the file back down.
head -c $((6 << 20)) /dev/urandom >"$T/big"
cp "$T/big" "$d/big.bin"
cmp -s "$T/big" "$d/big.bin" || fail "big.bin reads back different"
note "WAL file after a 6 MiB write: $(wal_size) bytes"
wait_for sh -c "[ \$(stat -c %s '$wal' 2>/dev/null || echo 0) -le $WAL_LIMIT ]" ||
	fail "WAL file stays at $(wal_size) bytes after a 6 MiB write, more than $WAL_LIMIT"
note "WAL file once caught up: $(wal_size) bytes"

# Nothing was lost on the way: the content survives a remount.
umount_store
mount_store
assert_eq $((500 * 52)) "$(stat -c %s "$M/fix-1/notes.md")" "size of notes.md after a remount"
assert_eq 500 "$(wc -l <"$M/fix-1/validation/registry.jsonl")" "registry lines after a remount"
cmp -s "$T/big" "$M/fix-1/big.bin" || fail "big.bin differs after a remount"
echo "PASS"
