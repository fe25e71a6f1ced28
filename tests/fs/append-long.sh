#!/usr/bin/env bash
# A document that `>>` grows past a few rows of the store (engine/store/store_whole.c: a long
# current revision goes on in pieces) reads back byte for byte through the mount: after 400
# appends of lines and of 20 KB blocks onto 300 KB written whole, its .history revisions (the
# first, one in the middle, the last), after a remount, after `mv` to another name, after a
# `sed -i` of its first line and more appends, and `packetfs check` finds the store sound.
. "$(dirname "$0")/../lib.sh"
mount_item
d=$M/fix-1
ref=$T/ref.log

head -c 300000 /dev/urandom | base64 -w 76 >"$T/orig.log"
cp "$T/orig.log" "$ref"
cp "$T/orig.log" "$d/run.log"
first=$(last_rev "$d" run.log)
for i in $(seq 1 400); do
	if ((i % 50 == 0)); then
		line=$(head -c 15000 /dev/urandom | base64 -w 0)
	else
		line="step $i of the run, $(date +%s%N)"
	fi
	printf '%s\n' "$line" >>"$d/run.log"
	printf '%s\n' "$line" >>"$ref"
	((i == 200)) && cp "$ref" "$T/mid.log" && mid=$(last_rev "$d" run.log)
done
cmp "$ref" "$d/run.log" || fail "run.log differs from what was appended"
last=$(last_rev "$d" run.log)
assert_eq $((first + 400)) "$last" "revisions of run.log after 400 appends"
cmp "$T/orig.log" "$d/.history/run.log@$first" || fail "run.log@$first differs from the copy"
cmp "$T/mid.log" "$d/.history/run.log@$mid" || fail "run.log@$mid differs from the 200th append"
cmp "$ref" "$d/.history/run.log@$last" || fail "run.log@$last differs from the document"

umount_store
mount_store
cmp "$ref" "$d/run.log" || fail "run.log differs after a remount"
cmp "$T/mid.log" "$d/.history/run.log@$mid" || fail "run.log@$mid differs after a remount"

mv "$d/run.log" "$d/moved.log"
cmp "$ref" "$d/moved.log" || fail "moved.log differs from run.log before the mv"
sed -i '1s/^/# /' "$d/moved.log"
sed -i '1s/^/# /' "$ref"
for i in $(seq 1 30); do
	printf 'after the save %d\n' "$i" >>"$d/moved.log"
	printf 'after the save %d\n' "$i" >>"$ref"
done
cmp "$ref" "$d/moved.log" || fail "moved.log differs after sed -i and 30 appends"
cmp "$T/mid.log" "$d/.history/run.log@$mid" || fail "run.log@$mid differs after the mv"

umount_store
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check: $out"
