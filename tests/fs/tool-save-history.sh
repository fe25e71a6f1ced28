#!/usr/bin/env bash
# test-timeout: 180
# A temp-file-then-rename save is one revision of the document it replaces (SPEC §3), and the
# temp file leaves no history of its own: after each save by vim (:w with its default backup
# settings: writebackup, backupcopy=auto), sed -i, python's tempfile + os.replace and a
# NAME.tmp.PID.HEX create + write + close + rename (an agent's Write tool), plan.md has exactly
# one more revision, holding the saved content, and neither .history nor `packetfs log` knows
# any other name (vim's "4913" probe included). A new document saved the same way has one
# revision; a document that another program moves (mv) keeps its history at its old name. All of
# it survives a remount.
. "$(dirname "$0")/../lib.sh"
command -v vim >/dev/null || { echo "SKIP: vim is missing" >&2; exit 77; }
mount_item

# history_names : every document name .history lists (NAME of NAME@REV), sorted, unique.
history_names()
{
	(cd "$d/.history" && find . -name '*@*' | sed -e 's|^\./||' -e 's|@[0-9]*$||') | sort -u | tr '\n' ' '
}

# log_paths : every path `packetfs log` shows a revision of, sorted, unique.
log_paths()
{
	"$PFS" log "$STORE" fix-1 | awk '/^# events/ { exit } /^#/ { next } { sub(/@[0-9]+$/, "", $2); print $2 }' |
		sort -u | tr '\n' ' '
}

# saved TOOL CONTENT : after TOOL's save plan.md holds CONTENT, has exactly one revision more
# than before (n), the latest holds CONTENT, and .history and packetfs log know plan.md only.
saved()
{
	local want=$((n + 1))
	assert_doc "$d/plan.md" "$2"
	assert_eq "$want" "$(revs "$d" plan.md | wc -l)" "revisions of plan.md after the $1 save ($(revs "$d" plan.md | tr '\n' ' '))"
	assert_eq "$want" "$(last_rev "$d" plan.md)" "latest revision of plan.md after the $1 save"
	assert_file_eq "$d/.history/plan.md@$want" "$2"
	assert_eq "plan.md " "$(history_names)" "names in .history after the $1 save"
	assert_eq "plan.md " "$(doc_names "$d")" "documents after the $1 save"
	assert_eq "plan.md " "$(log_paths)" "paths in packetfs log after the $1 save"
	n=$want
}

printf '# Plan\n\nsay old world\n' >"$d/plan.md"
n=$(revs "$d" plan.md | wc -l)
assert_eq 1 "$n" "revisions of plan.md at first"

# vim :w, its default backup settings (nobackup writebackup backupcopy=auto): the original is
# renamed to plan.md~, a new plan.md written, plan.md~ removed. backupskip is cleared (its
# default skips /tmp, where the mount lives) and the swap file kept off the mount.
(cd "$d" && timeout 60 vim -u NONE -N -i NONE -es -n -c "set backupskip= backupdir=." \
	-c '%s/old/new/' -c wq plan.md </dev/null) || fail "vim failed"
saved vim $'# Plan\n\nsay new world\n'

sed -i 's/new/sed/' "$d/plan.md"
saved "sed -i" $'# Plan\n\nsay sed world\n'

python3 - "$d/plan.md" <<'PY' || fail "python's atomic save failed"
import os, sys, tempfile
target = sys.argv[1]
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".plan.md.", suffix=".tmp")
with os.fdopen(fd, "w") as f:
    f.write("# Plan\n\nsay python world\n")
    f.flush()
    os.fsync(f.fileno())
os.replace(tmp, target)
PY
saved python $'# Plan\n\nsay python world\n'

# An agent's Write tool (Claude Code's, in node): PATH.tmp.PID.HEX created (O_EXCL), written,
# chmod'ed, fsync'ed and closed, then renamed over PATH, all by the one program; sync does it
# with node's synchronous calls (its main thread), async as Claude Code's asynchronous path does
# (fs.promises: each call on a thread of node's pool, so FUSE sees other thread ids).
agent_write() # agent_write sync|async PATH CONTENT
{
	node -e '
const fs = require("fs");
const [how, path, text] = process.argv.slice(1);
const tmp = `${path}.tmp.${process.pid}.${require("crypto").randomBytes(6).toString("hex")}`;
if (how === "sync") {
	const fd = fs.openSync(tmp, "wx", 0o644);
	fs.writeFileSync(fd, text, "utf8");
	fs.fchmodSync(fd, 0o644);
	fs.fsyncSync(fd);
	fs.closeSync(fd);
	fs.renameSync(tmp, path);
} else {
	(async () => {
		const h = await fs.promises.open(tmp, "wx", 0o644);
		await h.writeFile(text, { encoding: "utf8" });
		await h.chmod(0o644);
		await h.sync();
		await h.close();
		await fs.promises.rename(tmp, path);
	})().catch((e) => { console.error(e); process.exit(1); });
}
' "$1" "$2" "$3" || fail "node could not save $2 ($1)"
}
agent_write sync "$d/plan.md" $'# Plan\n\nsay agent world\n'
saved "agent Write (sync)" $'# Plan\n\nsay agent world\n'
agent_write async "$d/plan.md" $'# Plan\n\nsay async agent world\n'
saved "agent Write (async)" $'# Plan\n\nsay async agent world\n'

# The same save of a new document, in a subdirectory: one revision, no temp history.
mkdir "$d/notes"
agent_write async "$d/notes/n.md" $'first notes\n'
assert_doc "$d/notes/n.md" $'first notes\n'
assert_eq "1" "$(revs "$d" notes/n.md | xargs)" "revisions of the new notes/n.md"
assert_eq "notes/n.md plan.md " "$(history_names)" "names in .history after the new notes"

# A document moved by another program (mv) keeps its history where it was: the old name keeps
# its revisions and a tombstone, the new name starts with the move.
printf 'kept notes\n' >"$d/notes/keep.md"
mv "$d/notes/keep.md" "$d/notes/kept.md"
assert_eq "1" "$(revs "$d" notes/keep.md | xargs)" "revisions of notes/keep.md after mv"
assert_eq "1" "$(revs "$d" notes/kept.md | xargs)" "revisions of notes/kept.md after mv"
rm "$d/notes/kept.md"

umount_store
mount_store
d=$M/fix-1
assert_doc "$d/plan.md" $'# Plan\n\nsay async agent world\n'
assert_eq "$n" "$(revs "$d" plan.md | wc -l)" "revisions of plan.md after remount"
assert_file_eq "$d/.history/plan.md@1" $'# Plan\n\nsay old world\n'
assert_file_eq "$d/.history/plan.md@2" $'# Plan\n\nsay new world\n'
assert_eq "notes/keep.md notes/kept.md notes/n.md plan.md " "$(history_names)" \
	"names in .history after remount"
exit 0
