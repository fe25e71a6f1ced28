#!/usr/bin/env bash
# tests/bench/run.sh - the on-demand benchmark suite of packetfs. Not part of the test suite:
# tests/run.sh and CI never run it. Run it on an idle machine, as root or a user with sudo
# (bindfs is installed when missing) and with /dev/fuse.
#
#	bash tests/bench/run.sh [--scale F] [--runs N] [--jobs N] [--dir DIR] [--out FILE]
#	                        [--drop-caches] [--profile] [--mount-options OPTS] [W1 ... W16]
#
#   --scale F       multiplies every size (default 1.0; 0.01 tries the suite in a few minutes)
#   --runs N        timed runs per measurement; the table shows their median (default 5)
#   --jobs N        W6's max_parallel_recipes and xargs -P (default: nproc * 2)
#   --dir DIR       where the temporary data lives (default ${TMPDIR:-/tmp}); it must be a
#                   local disk: it is the "disk" of the comparison
#   --out FILE      the report (default tests/bench/results/<date>-<host>[-scale<F>].md)
#   --drop-caches   sync and drop the page cache before each timed read (W1-W3; root only);
#                   by default every read workload runs warm (one untimed pass first)
#   --profile       after the timed runs of each write shape (W4, W5, W6, W10-W16), one more
#                   run on packetfs under `perf record --call-graph dwarf` of the daemon; its summary goes
#                   into the workload's note (needs perf)
#   --mount-options OPTS  packetfs is mounted with -o OPTS (e.g. io_uring, which also needs
#                   /sys/module/fuse/parameters/enable_uring set); the report names them
#   W1 ... W16      the workloads to run (default all), see tests/bench/README.md
#
# The same data is set up three ways: files on the local disk (the limit), the same files
# through bindfs (the FUSE passthrough peer) and packetfs; each workload prints the median
# of --runs runs per target and the ratios packetfs/disk and packetfs/bindfs. The report
# (machine, date, table, a note per workload on what exactly was measured, raw values) is
# printed and written to --out. Everything lives in one temporary directory that is removed
# at the end, also on Ctrl-C (mounts are undone first).
#
# Sizes at --scale 1: W1 1 GiB log; W2/W3 10,000 items with documents; W4 10,000 small
# files and 1,000 fsync'd saves; W5 10,000 registry lines; W6 100 items x 10 recipes;
# W7 1,000 triggers; W8 100,000 items; W9 10,000 appends to a document and 1,000 edits of a
# 1 MiB one. A full run takes hours (about 4 h extrapolated for two shared cores: W2+W3 ~2 h,
# W8 ~1 h, W5 ~30 min); see tests/bench/README.md.
#
# How items are made (W2, W6, W8, ...): by mkdir through the mount, from nproc threads, as
# users make them (fixtures/bench.py fill): the daemon makes each item's branch, worktree, store
# rows and item_created event. Each mkdir costs about 2 ms whatever the number of items (the
# engine writes a worktree's git admin files itself instead of letting libgit2 scan every
# worktree); disk: about 25 KiB per item (worktree, git admin files, store rows).
#
# Environment: PACKETFS_BIN overrides the binary (default build/cli/packetfs of the source
# tree). The suite never builds it.

set -euo pipefail
export LC_ALL=C
export GIT_AUTHOR_NAME="packetfs bench" GIT_AUTHOR_EMAIL="bench@packetfs.invalid"
export GIT_COMMITTER_NAME="packetfs bench" GIT_COMMITTER_EMAIL="bench@packetfs.invalid"
export GIT_CONFIG_NOSYSTEM=1

BENCH_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_SRC/../.." && pwd)
PFS=${PACKETFS_BIN:-$ROOT/build/cli/packetfs}
PY=(python3 "$BENCH_SRC/fixtures/bench.py")
# json_escape, argv_json, pid_alive, pid_of_cmdline
# shellcheck source=../common.sh
. "$ROOT/tests/common.sh"
ALL_WORKLOADS="W1 W2 W3 W4 W5 W6 W7 W8 W9 W10 W11 W12 W13 W14 W15 W16"

SCALE=1.0
RUNS=5
JOBS=$(($(nproc) * 2))
WORKDIR=${TMPDIR:-/tmp}
OUT=""
DROP=0
PROFILE=0
PFS_MOUNT_OPTS=
WORKLOADS=()
STATE_BOUND=3600 # seconds any wait for an item's state may take
THREADS=$(nproc) # parallel writers when setting up data (never while measuring)
[ "$THREADS" -ge 2 ] || THREADS=2

usage()
{
	sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
}

# die MESSAGE : stops the run with MESSAGE. Once workloads are running (REPORT_ON_DIE), what
# they measured so far is not thrown away: the report is written first, with the workload that
# stopped and why in its header.
REPORT_ON_DIE=0
die()
{
	echo "tests/bench/run.sh: $*" >&2
	if [ "$REPORT_ON_DIE" = 1 ] && [ -s "$RES" ]; then
		REPORT_ON_DIE=0
		printf 'stopped\tin %s: %s\n' "${w:-?}" "$*" >>"$META"
		write_report
	fi
	exit 1
}

# write_report : the report (table, notes, raw values) of $RES, $META and $NOTES, to $OUT.
write_report()
{
	printf 'load average at end\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$META"
	printf 'report\t%s\n' "$OUT" >>"$META"
	echo
	"${PY[@]}" table "$RES" "$META" "$NOTES" "$OUT"
	say "report written to $OUT"
}

# say TEXT : progress on stderr.
say()
{
	echo "# $(date +%H:%M:%S) $*" >&2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--scale) SCALE=${2:?--scale needs a value}; shift 2 ;;
	--scale=*) SCALE=${1#*=}; shift ;;
	--runs) RUNS=${2:?--runs needs a value}; shift 2 ;;
	--runs=*) RUNS=${1#*=}; shift ;;
	--jobs) JOBS=${2:?--jobs needs a value}; shift 2 ;;
	--jobs=*) JOBS=${1#*=}; shift ;;
	--dir) WORKDIR=${2:?--dir needs a value}; shift 2 ;;
	--dir=*) WORKDIR=${1#*=}; shift ;;
	--out) OUT=${2:?--out needs a value}; shift 2 ;;
	--out=*) OUT=${1#*=}; shift ;;
	--drop-caches) DROP=1; shift ;;
	--profile) PROFILE=1; shift ;;
	--mount-options) PFS_MOUNT_OPTS=${2:?--mount-options needs a value}; shift 2 ;;
	--mount-options=*) PFS_MOUNT_OPTS=${1#*=}; shift ;;
	-h | --help) usage; exit 0 ;;
	[Ww][1-9] | [Ww]1[0-6]) WORKLOADS+=("W${1#?}"); shift ;;
	*) echo "tests/bench/run.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done
[[ $SCALE =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v s="$SCALE" 'BEGIN { exit !(s > 0) }' ||
	{ echo "tests/bench/run.sh: --scale must be a positive number" >&2; exit 2; }
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "tests/bench/run.sh: --runs must be >= 1" >&2; exit 2; }
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "tests/bench/run.sh: --jobs must be >= 1" >&2; exit 2; }
[ "${#WORKLOADS[@]}" -gt 0 ] || read -r -a WORKLOADS <<<"$ALL_WORKLOADS"
if [ "$DROP" = 1 ] && [ "$(id -u)" != 0 ]; then
	die "--drop-caches needs root"
fi
if [ "$PROFILE" = 1 ]; then
	command -v perf >/dev/null 2>&1 || die "--profile needs perf"
fi

# --- prerequisites ---------------------------------------------------------------------------

[ -x "$PFS" ] || die "packetfs binary not found at $PFS (build first, or set PACKETFS_BIN)"
[ -e /dev/fuse ] || die "/dev/fuse is missing"
for tool in python3 git fusermount3 awk dd find grep; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is needed"
done

# install_bindfs : installs Debian's bindfs when missing (as tests/run.sh installs packages).
install_bindfs()
{
	command -v bindfs >/dev/null 2>&1 && return 0
	local sudo="" log
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "bindfs is missing and I am not root"
		sudo=sudo
	fi
	say "installing bindfs"
	log=$(mktemp)
	if ! { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
		--no-install-recommends bindfs; } >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		rm -f "$log"
		die "apt-get install bindfs failed"
	fi
	rm -f "$log"
}
install_bindfs
BINDFS=$(command -v bindfs)

# --- the temporary directory, mounts and cleanup ---------------------------------------------

mkdir -p "$WORKDIR"
B=$(mktemp -d "$WORKDIR/packetfs-bench.XXXXXX")
B=$(cd "$B" && pwd -P)
RES=$B/results.tsv # workload metric unit better target value, one line per run
NOTES=$B/notes.tsv # workload text
META=$B/meta.tsv   # key value
: >"$RES"
: >"$NOTES"
CHILD=""   # the child run() waits for
MOUNTS=()  # mount points made by this run (packetfs and bindfs)
DAEMONS=() # the pid serving each of MOUNTS (parallel array; "" when unknown)

# shellcheck source=lib.sh
. "$ROOT/tests/bench/lib.sh"
# shellcheck source=shapes.sh
. "$ROOT/tests/bench/shapes.sh"

trap 'rc=$?; trap - EXIT; cleanup; exit $rc' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

TARGETS="disk bindfs packetfs"

# --- W1: sequential read of a recipe log -----------------------------------------------------

w1()
{
	local d=$B/w1 bytes log size r t i
	local -a f=()
	bytes=$(scaled 1073741824 1048576)
	mkdir -p "$d/recipes" "$d/disk"
	cat >"$d/recipes/01-big" <<EOF
#!/bin/sh
# summary: prints $bytes bytes of text (benchmark W1)
# timeout: 7200
yes 'packetfs bench W1: 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ' | head -c $bytes
EOF
	chmod +x "$d/recipes/01-big"
	make_repo "$d/repo"
	write_pipeline "$d/pipeline.json" "$d/repo" "$d/recipes" 1 \
		'{"name": "validate", "recipes": "plan"}'
	"$PFS" init "$d/store" --repo "$d/repo" --pipeline "$d/pipeline.json" >/dev/null
	pfs_mount "$d/store" "$d/mnt"
	mkdir "$d/mnt/big"
	plan_doc 01-big >"$d/mnt/big/plan.md"
	say "W1: the recipe prints $bytes bytes into its log"
	timed eval 'printf "advance\n" >"$d/mnt/big/ctl" && wait_state "$d/mnt" big done'
	note W1 "The recipe 01-big prints $bytes bytes (yes | head -c) through the validate stage; packetfs stored its log in $(printf '%.1f' "$ELAPSED") s (untimed setup)."
	log=$(find "$d/mnt/big/validation/logs" -name '*-01-big-*.log' | head -n 1)
	[ -n "$log" ] || die "W1: no recipe log on the mount"
	size=$(stat -c %s "$log")
	cat "$log" >"$d/disk/big.log"
	[ "$(stat -c %s "$d/disk/big.log")" = "$size" ] ||
		die "W1: the log reads $(stat -c %s "$d/disk/big.log") bytes, stat says $size"
	sync
	bind_mount "$d/disk" "$d/bind"
	note W1 "Read: the whole log file ($size bytes: output plus the log's header and footer) as validation/logs/<UTC>-01-big-<run>.log on packetfs, and a byte-identical copy on the disk (and through bindfs over that disk directory). Two readers: \`cat F >/dev/null\` and \`dd if=F of=/dev/null bs=1M\`; MB/s = bytes / wall time / 10^6. Caches: $([ "$DROP" = 1 ] && echo "dropped before each read" || echo "warm (one untimed read of each first)")."
	for t in $TARGETS; do
		case $t in
		disk) f[0]=$d/disk/big.log ;;
		bindfs) f[1]=$d/bind/big.log ;;
		packetfs) f[2]=$log ;;
		esac
	done
	[ "$DROP" = 1 ] || for r in 0 1 2; do cat "${f[$r]}" >/dev/null; done
	for ((r = 1; r <= RUNS; r++)); do
		i=0
		for t in $TARGETS; do
			drop_caches
			timed cat "${f[$i]}" >/dev/null
			record W1 "cat" MB/s higher "$t" "$(div "$size" "$ELAPSED" 1e-6)"
			drop_caches
			timed dd if="${f[$i]}" of=/dev/null bs=1M status=none
			record W1 "dd bs=1M" MB/s higher "$t" "$(div "$size" "$ELAPSED" 1e-6)"
			i=$((i + 1))
		done
	done
	bind_umount "$d/bind"
	pfs_umount "$d/mnt"
	rm -rf "$d"
}

# --- W2/W3: the tree of items -----------------------------------------------------------------

TREE_PFS=""
TREE_DISK=""
TREE_BIND=""
TREE_FILES=""

# tree_setup : N items with documents on packetfs, and the same tree copied to the disk
# (cp -r of the mount) and shown through bindfs. Done once for W2 and W3.
tree_setup()
{
	[ -z "$TREE_PFS" ] || return 0
	local d=$B/tree n bytes nd nb np t
	n=$(scaled 10000)
	mounted_store "$d"
	say "W2/W3: making $n items"
	fill "$d/mnt" item- 1 "$n"
	note W2 "Tree: $n items made by mkdir through the mount in $(printf '%.1f' "$ELAPSED") s (see the script header)"
	t=$SECONDS
	py docs "$d/mnt" item- 1 "$n" "$THREADS" || die "writing the documents failed"
	bytes=$PY_OUT
	note W2 "plus 4 documents each (brief.md, plan.md, change.md, notes/design.md; $bytes bytes in all) written through the mount by $THREADS threads in $((SECONDS - t)) s."
	say "W2/W3: copying the mount to the disk"
	mkdir -p "$d/disk"
	# cp -r of each entry of the root, $THREADS at a time (the same as cp -r of the root).
	find "$d/mnt" -mindepth 1 -maxdepth 1 -printf '%f\n' >"$d/entries"
	t=$SECONDS
	run xargs -P "$THREADS" -I{} cp -r "$d/mnt/{}" "$d/disk/" <"$d/entries" ||
		die "cp -r of the mount failed"
	t=$((SECONDS - t))
	chmod -R u+w "$d/disk"
	sync
	bind_mount "$d/disk" "$d/bind"
	TREE_PFS=$d/mnt TREE_DISK=$d/disk TREE_BIND=$d/bind
	nd=$(find "$TREE_DISK" -type f | wc -l)
	nb=$(find "$TREE_BIND" -type f | wc -l)
	np=$(find "$TREE_PFS" -type f | wc -l)
	[ "$nd" = "$np" ] && [ "$nb" = "$np" ] ||
		die "the trees differ: disk $nd files, bindfs $nb, packetfs $np"
	TREE_FILES=$np
	note W2 "The disk tree is \`cp -r\` of the whole mount (documents, views such as status, events and change.diff, .history revisions, validation/, the worktree symlinks, not followed; $THREADS cp processes, $t s): $np files, $(find "$TREE_DISK" | wc -l) entries on each target."
}

# tree_target T : the root of the tree on target T.
tree_target()
{
	case $1 in
	disk) echo "$TREE_DISK" ;;
	bindfs) echo "$TREE_BIND" ;;
	packetfs) echo "$TREE_PFS" ;;
	esac
}

w2()
{
	local r t root
	tree_setup
	note W2 "Measured: \`find ROOT -type f -printf '%s\\n' >/dev/null\` (one stat per file) and \`ls -lR ROOT >/dev/null\`, wall time. Caches: $([ "$DROP" = 1 ] && echo "dropped before each run" || echo "warm (the setup has just copied and counted every file of each tree)"). packetfs caches entries and the attributes of stable files in the kernel (views and growing logs are asked for each time: README \"Performance\"), bindfs runs with its defaults."
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			root=$(tree_target "$t")
			drop_caches
			timed find "$root" -type f -printf '%s\n' >/dev/null
			record W2 "find -type f -printf %s" s lower "$t" "$ELAPSED"
			drop_caches
			timed ls -lR "$root" >/dev/null
			record W2 "ls -lR" s lower "$t" "$ELAPSED"
		done
	done
}

w3()
{
	local r t root out=$B/w3.out count want=""
	tree_setup
	note W3 "Measured: \`grep -r zanzibar ROOT >OUT\` over the whole tree of W2 ($TREE_FILES files: every document, view and .history revision of every item; the keyword is in each notes/design.md), wall time; the number of matching lines is checked to be equal on all targets. Caches as in W2."
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			root=$(tree_target "$t")
			drop_caches
			timed grep -r zanzibar "$root" >"$out" || die "W3: grep -r failed on $t"
			count=$(wc -l <"$out")
			[ -n "$want" ] || want=$count
			[ "$count" = "$want" ] || die "W3: grep found $count lines on $t, $want elsewhere"
			record W3 "grep -r" s lower "$t" "$ELAPSED"
		done
	done
	note W3 "($want matching lines.)"
}

# --- W4: small-file writes -----------------------------------------------------------------------

w4()
{
	local d=$B/w4 n m r t dir
	n=$(scaled 10000)
	m=$(scaled 1000)
	mounted_store "$d"
	mkdir -p "$d/disk"
	mkdir "$d/mnt/w4"
	bind_mount "$d/disk" "$d/bind"
	note W4 "One Python program for all targets (tests/bench/fixtures/bench.py). create: $n x (open O_CREAT|O_TRUNC, write 4 KiB, close) into a new directory (on packetfs a subdirectory of one item's documents), files/s. save: $m files of 4 KiB made first (untimed), then $m editor-style saves (write .NAME.swp, fsync, close, rename over NAME), files/s. save, 2 processes at once: the same in two processes started together, each in a directory of its own (2 x $m saves; files/s from the start until the last ends). Each run uses new directories."
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			case $t in
			disk) dir=$d/disk/$t-$r ;;
			bindfs) dir=$d/bind/$t-$r ;;
			packetfs) dir=$d/mnt/w4/$t-$r ;;
			esac
			py smallfiles "$dir-create" "$n" || die "W4 create on $t failed"
			record W4 "create+write 4K+close" files/s higher "$t" "$(div "$n" "$PY_OUT")"
			py saves "$dir-save" "$m" || die "W4 saves on $t failed"
			record W4 "save (tmp+fsync+rename)" files/s higher "$t" "$(div "$m" "$PY_OUT")"
			py saves_parallel "$dir-psave" "$m" 2 || die "W4 saves of 2 processes on $t failed"
			record W4 "save, 2 processes at once" files/s higher "$t" "$(div $((2 * m)) "$PY_OUT")"
		done
	done
	pfs_profile W4 "the creates" "${PY[@]}" smallfiles "$d/mnt/w4/profile-create" "$n"
	pfs_profile W4 "the saves (and the $m untimed creates before them)" "${PY[@]}" saves "$d/mnt/w4/profile-save" "$m"
	bind_umount "$d/bind"
	pfs_umount "$d/mnt"
	rm -rf "$d"
}

# --- W5: registry appends ----------------------------------------------------------------------

# append_lines FILE N : N valid external registry lines, one `>>` each, from this shell.
append_lines()
{
	append_printf "$1" "$2" \
		'{"recipe":"99-manual","status":"validated","command":"make check","note":"bench line %d","exit_code":0}\n'
}

w5()
{
	local d=$B/w5 n r t f lines
	n=$(scaled 10000)
	mounted_store "$d"
	mkdir -p "$d/disk"
	fill "$d/mnt" w5-r 1 "$RUNS"
	bind_mount "$d/disk" "$d/bind"
	note W5 "A bash loop appends $n lines (\`printf '{\"recipe\":\"99-manual\",\"status\":\"validated\",...}\\n' >>FILE\`, one open/write/close per line; a valid external line, SPEC §6) to validation/registry.jsonl of a new item per run on packetfs, and to a new plain file on the disk and through bindfs; lines/s. The line count is checked afterwards."
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			case $t in
			disk) f=$d/disk/$t-$r.jsonl ;;
			bindfs) f=$d/bind/$t-$r.jsonl ;;
			packetfs) f=$d/mnt/w5-r$(printf '%06d' "$r")/validation/registry.jsonl ;;
			esac
			timed append_lines "$f" "$n"
			lines=$(wc -l <"$f")
			[ "$lines" = "$n" ] || die "W5: $f has $lines lines, expected $n"
			record W5 "append >> (shell loop)" lines/s higher "$t" "$(div "$n" "$ELAPSED")"
		done
	done
	pfs_profile W5 "the registry appends (into run 1's registry)" append_lines "$d/mnt/w5-r000001/validation/registry.jsonl" "$n"
	bind_umount "$d/bind"
	pfs_umount "$d/mnt"
	rm -rf "$d"
}

# --- W9: revision storage -----------------------------------------------------------------------

# w9_read WL METRIC FILE COPY : RUNS timed `cat` of the revision FILE on packetfs and of COPY, a
# plain file of the same bytes on the disk (warm, after one untimed read each).
w9_read()
{
	local r
	cmp -s "$3" "$4" || die "W9: $3 does not read back as written"
	for ((r = 1; r <= RUNS; r++)); do
		timed cat "$4" >/dev/null
		record W9 "$2" ms lower disk "$(div "$ELAPSED" 1 1000)"
		timed cat "$3" >/dev/null
		record W9 "$2" ms lower packetfs "$(div "$ELAPSED" 1 1000)"
	done
}

w9()
{
	local d=$B/w9 n m size=1048576 before i deep k
	n=$(scaled 10000)
	m=$(scaled 1000)
	mounted_store "$d"
	mkdir -p "$d/disk"
	mkdir "$d/mnt/w9"
	note W9 "Revision storage (SPEC §3). appends: a bash loop appends $n lines of 52 bytes to one document (\`printf ... >>F\`, one revision per close); edits: a $size-byte text document, then $m edits of one 73-byte line each, each written whole (open O_TRUNC, write, close; bench.py edits). Store: the growth of the store's pages in use (page_count - freelist_count, as a second reader sees them) over each, in MB; the disk column is the document's final size. Reads: \`cat\` of .history/NAME@REV, warm; the disk column reads a plain file of the same bytes. The deepest revision is the one with the longest chain of deltas (revision 2^k, k = floor(log2(count))): the slowest to read."
	py store_bytes "$d/store/packetfs.db" || die "W9: store size"
	before=$PY_OUT
	say "W9: $n appends"
	for ((i = 1; i <= n; i++)); do
		printf 'line %05d of a log that grows by a line per close.\n' "$i" >>"$d/mnt/w9/log.md"
	done
	py store_bytes "$d/store/packetfs.db" || die "W9: store size"
	record W9 "store after $n appends" MB lower disk "$(div "$(stat -c %s "$d/mnt/w9/log.md")" 1e6)"
	record W9 "store after $n appends" MB lower packetfs "$(div $((PY_OUT - before)) 1e6)"
	before=$PY_OUT
	say "W9: $m edits of a $size-byte document"
	py edits "$d/mnt/w9/design.md" "$m" "$size" || die "W9: edits failed"
	note W9 "(The $m edits took $(printf '%.1f' "$PY_OUT") s through the mount.)"
	py store_bytes "$d/store/packetfs.db" || die "W9: store size"
	record W9 "store after $m edits of 1 MiB" MB lower disk "$(div "$(stat -c %s "$d/mnt/w9/design.md")" 1e6)"
	record W9 "store after $m edits of 1 MiB" MB lower packetfs "$(div $((PY_OUT - before)) 1e6)"
	cat "$d/mnt/w9/.history/design.md@1" >"$d/disk/design-1"
	w9_read W9 "read the oldest revision (1 MiB)" "$d/mnt/w9/.history/design.md@1" "$d/disk/design-1"
	for k in log.md:$n design.md:$((m + 1)); do
		deep=1
		while [ $((deep * 2)) -le "${k#*:}" ]; do deep=$((deep * 2)); done
		cat "$d/mnt/w9/.history/${k%%:*}@$deep" >"$d/disk/deep"
		w9_read W9 "read the deepest revision of ${k%%:*} (@$deep)" "$d/mnt/w9/.history/${k%%:*}@$deep" "$d/disk/deep"
	done
	pfs_umount "$d/mnt"
	rm -rf "$d"
}

# --- W6: engine overhead ---------------------------------------------------------------------

w6()
{
	local d=$B/w6 n k r i names=() all=() list
	n=$(scaled 100)
	mkdir -p "$d/recipes" "$d/limit"
	for k in 01 02 03 04 05 06 07 08 09 10; do
		printf '#!/bin/sh\n# summary: exits 0 (benchmark W6)\n# timeout: 600\n# needs: none\nexit 0\n' \
			>"$d/recipes/$k-ok"
		chmod +x "$d/recipes/$k-ok"
		names+=("$k-ok")
	done
	make_repo "$d/repo"
	write_pipeline "$d/pipeline.json" "$d/repo" "$d/recipes" "$JOBS" \
		'{"name": "validate", "recipes": "plan"}'
	"$PFS" init "$d/store" --repo "$d/repo" --pipeline "$d/pipeline.json" >/dev/null
	pfs_mount "$d/store" "$d/mnt"
	say "W6: making $((n * RUNS)) items"
	fill "$d/mnt" w6- 1 $((n * RUNS))
	for ((i = 1; i <= n * RUNS; i++)); do
		plan_doc "${names[@]}" >"$d/mnt/w6-$(printf '%06d' "$i")/plan.md"
	done
	list=$d/limit/list
	for ((i = 0; i < n; i++)); do
		for k in "${names[@]}"; do
			echo "$d/recipes/$k"
		done
	done >"$list"
	note W6 "$((n * 10)) recipes that exit 0 (/bin/sh scripts), over $n item(s) each with a plan naming the same 10 recipes; the pipeline is the validate stage alone, max_parallel_recipes $JOBS (--jobs; default nproc*2). packetfs: wall time from writing advance to each item's ctl (one after another) until MNT/events has said done for every item (read as tail -f does, poll(2) for POLLIN; each status is then checked once, untimed), new items each run. The disk column is the limit: \`xargs -P $JOBS -n 1 env <LIST\` running the same $((n * 10)) recipe files (env execs each; output to one file, cwd the repository). bindfs: not applicable."
	for ((r = 1; r <= RUNS; r++)); do
		cd "$d/repo"
		timed xargs -P "$JOBS" -n 1 env <"$list" >"$d/limit/out" 2>&1 ||
			die "W6: the xargs limit failed: $(tail -n 3 "$d/limit/out")"
		cd - >/dev/null
		record W6 "$((n * 10)) recipes, wall" s lower disk "$ELAPSED"
		all=()
		for ((i = (r - 1) * n + 1; i <= r * n; i++)); do
			all+=("w6-$(printf '%06d' "$i")")
		done
		py advance "$d/mnt" "${all[@]}" || die "W6: the pipeline run failed"
		record W6 "$((n * 10)) recipes, wall" s lower packetfs "$PY_OUT"
	done
	if [ "$PROFILE" = 1 ]; then
		fill "$d/mnt" w6p- 1 "$n"
		all=()
		for ((i = 1; i <= n; i++)); do
			all+=("w6p-$(printf '%06d' "$i")")
			plan_doc "${names[@]}" >"$d/mnt/${all[i - 1]}/plan.md"
		done
		pfs_profile W6 "the run of $((n * 10)) recipes (the recipes' processes included)" "${PY[@]}" advance "$d/mnt" "${all[@]}"
	fi
	pfs_umount "$d/mnt"
	rm -rf "$d"
}

# --- W7: trigger latency -----------------------------------------------------------------------

w7()
{
	local d=$B/w7 n r out stamp how
	n=$(scaled 1000 10)
	mkdir -p "$d/recipes"
	if command -v cc >/dev/null 2>&1 && cc -O2 -o "$d/stamp" "$BENCH_SRC/fixtures/stamp.c" 2>/dev/null; then
		stamp=$d/stamp
		how="a C program (fixtures/stamp.c) that reads CLOCK_REALTIME first and appends it to a file"
	else
		stamp=$d/stamp.sh
		printf '#!/bin/bash\nt=${EPOCHREALTIME/./}\necho "${t}000" >>"$1"\n' >"$stamp"
		chmod +x "$stamp"
		how="a bash script that reads \$EPOCHREALTIME first (no cc found; adds bash start-up)"
	fi
	make_repo "$d/repo"
	write_pipeline "$d/pipeline.json" "$d/repo" "$d/recipes" 1 \
		"{\"name\": \"plan\", \"run\": [$(json_escape "$stamp"), $(json_escape "$d/stamps")]}"
	"$PFS" init "$d/store" --repo "$d/repo" --pipeline "$d/pipeline.json" >/dev/null
	pfs_mount "$d/store" "$d/mnt"
	mkdir "$d/mnt/w7"
	note W7 "The stage program is $how. packetfs: $n times on one item, wait until its state is new/done, open ctl, take the time, write \"run plan\\n\", close; latency = the stage's stamp - that time; p50/p99 per run, median over runs. The disk column is the limit: posix_spawn of the same program from the measuring Python process, $n times. bindfs: not applicable."
	for ((r = 1; r <= RUNS; r++)); do
		py spawn "$stamp" "$d/spawn-stamps" "$n" || die "W7: spawn failed"
		out=$PY_OUT
		record W7 "trigger->start p50" ms lower disk "${out% *}"
		record W7 "trigger->start p99" ms lower disk "${out#* }"
		py latency "$d/mnt" w7 "$d/stamps" "$n" || die "W7: latency failed"
		out=$PY_OUT
		record W7 "trigger->start p50" ms lower packetfs "${out% *}"
		record W7 "trigger->start p99" ms lower packetfs "${out#* }"
	done
	pfs_umount "$d/mnt"
	rm -rf "$d"
}

# --- W8: scale -------------------------------------------------------------------------------------

# w8_mounted TARGET MNT PID : W8's measurements of TARGET (bindfs, packetfs) just mounted on MNT
# by its daemon PID: the time until stat answered (MOUNT_MS), a timed ls of MNT, the daemon's
# VmRSS after it, a timed ls -l of MNT.
w8_mounted()
{
	record W8 "mount until stat answers" ms lower "$1" "$MOUNT_MS"
	timed ls "$2" >/dev/null
	record W8 "ls root" s lower "$1" "$ELAPSED"
	record W8 "daemon VmRSS after ls" MiB lower "$1" "$(vmrss_mib "$3")"
	timed ls -l "$2" >/dev/null
	record W8 "ls -l root" s lower "$1" "$ELAPSED"
	timed ls -l "$2" >/dev/null
	record W8 "ls -l root, again" s lower "$1" "$ELAPSED"
}

# vmrss_mib PID
vmrss_mib()
{
	awk '/^VmRSS:/ { printf "%.2f", $2 / 1024 }' "/proc/$1/status"
}

w8()
{
	local d=$B/w8 n r first
	n=$(scaled 100000)
	mounted_store "$d"
	say "W8: making $n items"
	fill "$d/mnt" i 1 "$n"
	note W8 "$n items made by mkdir through the mount in $(printf '%.1f' "$ELAPSED") s (untimed; see the script header), store $(du -sh "$d/store" | cut -f1) with worktrees, database $(du -ch "$d/store"/*.db* | tail -n 1 | cut -f1)."
	# The root lists the items (i000001, ...) beside events, index.html and learnings/.
	[ "$(ls "$d/mnt" | grep -c '^i[0-9]*$')" = "$n" ] ||
		die "W8: the root lists $(ls "$d/mnt" | grep -c '^i[0-9]*$') items, want $n"
	[ "$(ls "$d/mnt" | wc -l)" = $((n + 3)) ] ||
		die "W8: the root lists $(ls "$d/mnt" | wc -l) entries, want $((n + 3)): $(ls "$d/mnt" | grep -v '^i[0-9]*$' | tr '\n' ' ')"
	pfs_umount "$d/mnt"
	py dirs "$d/disk" i 1 "$n" || die "W8: making the disk directories failed"
	first=i000001
	note W8 "Each run: mount (packetfs mount STORE MNT, which daemonizes, or bindfs over a disk directory holding $n empty directories of the same names), time until stat of MNT/.packetfs/version (packetfs) or MNT/$first (bindfs) answers; then \`ls MNT >/dev/null\` timed; then VmRSS of the daemon from /proc/PID/status; then \`ls -l MNT >/dev/null\` timed (stats every item), and once more on the same mount (what the daemon remembers between two: index.html's size); then unmount. The disk column lists the plain directory."
	for ((r = 1; r <= RUNS; r++)); do
		timed ls "$d/disk" >/dev/null
		record W8 "ls root" s lower disk "$ELAPSED"
		timed ls -l "$d/disk" >/dev/null
		record W8 "ls -l root" s lower disk "$ELAPSED"
		timed ls -l "$d/disk" >/dev/null
		record W8 "ls -l root, again" s lower disk "$ELAPSED"

		bind_mount "$d/disk" "$d/bind" "$first"
		w8_mounted bindfs "$d/bind" "$BIND_PID"
		bind_umount "$d/bind"

		pfs_mount "$d/store" "$d/mnt"
		w8_mounted packetfs "$d/mnt" "$PFS_PID"
		pfs_umount "$d/mnt"
	done
	rm -rf "$d"
}

# --- main ---------------------------------------------------------------------------------------------

host=$(hostname -s 2>/dev/null || hostname)
day=$(date -u +%Y-%m-%d)
if [ -z "$OUT" ]; then
	suffix=""
	awk -v s="$SCALE" 'BEGIN { exit !(s == 1) }' || suffix="-scale$SCALE"
	OUT=$ROOT/tests/bench/results/$day-$host$suffix.md
	i=2
	while [ -e "$OUT" ]; do
		OUT=$ROOT/tests/bench/results/$day-$host$suffix-$i.md
		i=$((i + 1))
	done
fi
{
	printf 'date\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	printf 'host\t%s\n' "$host"
	printf 'machine\t%s CPUs (nproc), %s, %s GiB RAM\n' "$(nproc)" \
		"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
		"$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)"
	printf 'kernel\t%s (%s)\n' "$(uname -r)" "$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
	printf 'disk\t%s (%s, %s)\n' "$B" "$(findmnt -n -o FSTYPE -T "$B" 2>/dev/null || stat -f -c %T "$B")" "$(df -P "$B" | awk 'NR == 2 { print $1 }')"
	printf 'packetfs\t%s (%s)%s\n' "$("$PFS" --version 2>&1 | head -n 1)" "$PFS" \
		"${PFS_MOUNT_OPTS:+, mounted with -o $PFS_MOUNT_OPTS}"
	printf 'bindfs\t%s, default options\n' "$("$BINDFS" --version 2>&1 | head -n 1)"
	printf 'parameters\tscale %s, %s runs, jobs %s, workloads %s, caches %s\n' "$SCALE" "$RUNS" \
		"$JOBS" "${WORKLOADS[*]}" "$([ "$DROP" = 1 ] && echo dropped || echo warm)"
	printf 'load average at start\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$META"

say "packetfs benchmark: scale $SCALE, $RUNS runs, workloads ${WORKLOADS[*]}, in $B"
REPORT_ON_DIE=1
for w in "${WORKLOADS[@]}"; do
	say "$w"
	start=$SECONDS
	case $w in
	W1) w1 ;;
	W2) w2 ;;
	W3) w3 ;;
	W4) w4 ;;
	W5) w5 ;;
	W6) w6 ;;
	W7) w7 ;;
	W8) w8 ;;
	W9) w9 ;;
	W10) w10 ;;
	W11) w11 ;;
	W12) w12 ;;
	W13) w13 ;;
	W14) w14 ;;
	W15) w15 ;;
	W16) w16 ;;
	esac
	note "$w" "(Workload wall time, setup included: $((SECONDS - start)) s.)"
done
REPORT_ON_DIE=0
write_report
