# tests/bench/shapes.sh - the write shapes a person or a tool really makes (W10-W16), and the
# daemon profiles (--profile); sourced by tests/bench/run.sh after lib.sh, whose globals and
# helpers (B, RUNS, TARGETS, PFS_PID, BIND_PID, scaled, timed, record, note, py, ...) they use.
#
# Where the files go inside an item (docs/guide.md, "The mount"): any file or directory an
# item holds besides its generated entries is a document, so every shape writes into a new
# directory of an item (MNT/ITEM/NAME/...), as a person keeps notes, a copy of a tree or a
# build there; the disk and bindfs targets write into a new directory of a plain tree.
# shellcheck shell=bash disable=SC2154

# --- shared -------------------------------------------------------------------------------------

# shape_mounts DIR ITEM : a mounted store in DIR (DIR/mnt, PFS_PID) with the item ITEM, a disk
# directory DIR/disk and bindfs over it on DIR/bind (BIND_PID).
shape_mounts()
{
	mounted_store "$1"
	mkdir -p "$1/disk"
	mkdir "$1/mnt/$2"
	bind_mount "$1/disk" "$1/bind"
}

# shape_umount DIR : undoes shape_mounts and removes DIR.
shape_umount()
{
	bind_umount "$1/bind"
	pfs_umount "$1/mnt"
	rm -rf "$1"
}

# shape_dir DIR ITEM TARGET NAME : the path of the new directory NAME on TARGET.
shape_dir()
{
	case $3 in
	disk) echo "$1/disk/$4" ;;
	bindfs) echo "$1/bind/$4" ;;
	packetfs) echo "$1/mnt/$2/$4" ;;
	esac
}

# fixture_bin NAME : compiles fixtures/NAME.c into $B/NAME once (cc -O2) and prints its path.
fixture_bin()
{
	[ -x "$B/$1" ] || cc -O2 -o "$B/$1" "$BENCH_SRC/fixtures/$1.c" || die "cc fixtures/$1.c failed"
	echo "$B/$1"
}

# source_tree : $B/src, the first scale x all files (git ls-tree order; all of them at scale 1,
# at least 20) of the commit HEAD of this source tree (git archive), and $B/srcrepo, a git
# repository of the same files committed 50 files per commit, packed (git gc). Made once;
# sets SRC_FILES (regular files), SRC_BYTES, SRC_COMMITS and SRC_PACK (the pack's bytes).
source_tree()
{
	[ -z "${SRC_FILES:-}" ] || return 0
	local all f files=() i
	all=$(git -C "$ROOT" ls-tree -r --name-only HEAD | wc -l)
	mapfile -t files < <(git -C "$ROOT" ls-tree -r --name-only HEAD | head -n "$(scaled "$all" 20)")
	mkdir -p "$B/src"
	git -C "$ROOT" archive HEAD -- "${files[@]}" | tar -x -C "$B/src" || die "git archive of $ROOT failed"
	SRC_FILES=$(find "$B/src" -type f | wc -l)
	SRC_BYTES=$(du -sb "$B/src" | cut -f1)
	git init -q -b main "$B/srcrepo"
	cp -a "$B/src/." "$B/srcrepo/"
	SRC_COMMITS=0
	for ((i = 0; i < ${#files[@]}; i += 50)); do
		git -C "$B/srcrepo" add -- "${files[@]:i:50}"
		git -C "$B/srcrepo" commit -q -m "files $i to $((i + 49))"
		SRC_COMMITS=$((SRC_COMMITS + 1))
	done
	git -C "$B/srcrepo" gc -q
	for f in "$B/srcrepo/.git/objects/pack/"*.pack; do
		SRC_PACK=$(stat -c %s "$f")
	done
}

# daemon_ticks PID : the CPU time (utime + stime) of PID's threads, those that have exited
# included (/proc/PID/stat), in clock ticks.
daemon_ticks()
{
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# with_cpu WL METRIC TARGET N CMD... : runs CMD (in this shell: timed, py, run...); on bindfs and
# packetfs it adds the CPU time of the target's daemon over CMD, and N units of work, to the
# sums of METRIC of WL (CPU_TICKS, CPU_UNITS) that cpu_record records. The daemon's CPU time is
# a measure the other load of the machine hardly moves; /proc gives it in clock ticks
# (1/CLK_TCK s), so it is summed over all the runs rather than taken per run.
with_cpu()
{
	local key="$1|$2|$3" n=$4 pid="" c0 rc=0
	shift 4
	case ${key##*|} in
	bindfs) pid=$BIND_PID ;;
	packetfs) pid=$PFS_PID ;;
	esac
	[ -z "$pid" ] || c0=$(daemon_ticks "$pid")
	"$@" || rc=$?
	if [ -n "$pid" ]; then
		CPU_TICKS[$key]=$((${CPU_TICKS[$key]:-0} + $(daemon_ticks "$pid") - c0))
		CPU_UNITS[$key]=$((${CPU_UNITS[$key]:-0} + n))
	fi
	return "$rc"
}
declare -A CPU_TICKS=() CPU_UNITS=()

# cpu_record WL : records the sums of with_cpu for WL (one value per metric and target: the
# daemon's CPU time over all the runs divided by all their units, in microseconds) and forgets
# them.
cpu_record()
{
	local key wl metric t
	while IFS='|' read -r wl metric t; do
		key="$wl|$metric|$t"
		[ "$wl" = "$1" ] || continue
		record "$wl" "$metric" "µs" lower "$t" \
			"$(div "${CPU_TICKS[$key]}" "${CPU_UNITS[$key]}" "$((1000000 / CLK_TCK))")"
		unset 'CPU_TICKS[$key]' 'CPU_UNITS[$key]'
	done < <(printf '%s\n' "${!CPU_TICKS[@]}" | sort -t '|' -k 1,2 -s)
}
CLK_TCK=$(getconf CLK_TCK)

# --- placement ----------------------------------------------------------------------------------

# A serial client and a FUSE daemon trade the CPU at every request. On this 2-CPU VM a request
# cost 2.5-8x more in 2026-12-04-vm.md when the two wake each other across CPUs (each request
# wakes a thread on the other, idle, virtual CPU) than when the daemon runs where the client
# waits, and which of the two the scheduler picks moves between runs: bindfs's creates ran at
# 3,000 and at 29,000 files/s in one report. The placed rows fix it: the client (this shell and what it starts) on CPU 0, the
# daemon (all its threads; those it starts later inherit it) on CPU 0 (`one CPU`) or CPU 1
# (`two CPUs`); the disk target pins the client alone.

# placed PLACE TARGET CMD... : runs CMD so placed (PLACE: one or two), then lets this shell run
# anywhere again and gives each of the daemon's threads back the CPUs it had (packetfs's
# io_uring threads are bound to one CPU each, fs/fs_ring.c; a thread started meanwhile may run
# anywhere). Returns CMD's status.
placed()
{
	local place=$1 t=$2 pid="" rc=0 all cpu=0 task saved=()
	shift 2
	all=0-$(($(nproc) - 1))
	[ "$place" = one ] || cpu=1
	case $t in
	bindfs) pid=$BIND_PID ;;
	packetfs) pid=$PFS_PID ;;
	esac
	if [ -n "$pid" ]; then
		for task in /proc/"$pid"/task/*; do
			saved+=("${task##*/}=$(taskset -p -c "${task##*/}" 2>/dev/null | sed 's/.*: //')")
		done
	fi
	taskset -p -c 0 "$BASHPID" >/dev/null || die "taskset of the bench shell failed"
	[ -z "$pid" ] || taskset -a -p -c "$cpu" "$pid" >/dev/null || die "taskset of $t's daemon failed"
	"$@" || rc=$?
	[ -z "$pid" ] || taskset -a -p -c "$all" "$pid" >/dev/null
	for task in "${saved[@]}"; do
		[ -z "${task#*=}" ] || taskset -p -c "${task#*=}" "${task%%=*}" >/dev/null 2>&1 || true
	done
	taskset -p -c "$all" "$BASHPID" >/dev/null
	return "$rc"
}

# placements : the placements this machine has (two needs a second CPU).
placements()
{
	if [ "$(nproc)" -ge 2 ]; then echo one two; else echo one; fi
}

# place_label PLACE : the words a placed row's metric ends with.
place_label()
{
	if [ "$1" = one ]; then echo "client and daemon on one CPU"; else echo "client and daemon on two CPUs"; fi
}

# --- profiles (--profile) ----------------------------------------------------------------------

# perf_top DATA PERCENT ARG... : the lines of `perf report ARG...` of DATA at or over PERCENT.
perf_top()
{
	perf report -i "$1" --stdio --percent-limit "$2" "${@:3}" 2>/dev/null |
		awk '/^ +[0-9.]+%/ { $1 = $1; print }'
}

# pfs_profile WL WHAT CMD... : with --profile, runs CMD once more (untimed) while `perf record
# --call-graph dwarf` samples the packetfs daemon (PFS_PID, every thread; DWARF because
# libfuse and SQLite are built without frame pointers), and writes a summary of the profile
# into WL's note: the share of the samples per binary, the symbols with the most samples of
# their own (self), and packetfs's functions and SQLite's API calls with the most samples
# with their callees (children: which handler, which store call).
# Without --profile it does nothing.
pfs_profile()
{
	[ "$PROFILE" = 1 ] || return 0
	local wl=$1 what=$2 data=$B/perf.data perf_pid i self dso children total c0 wall cpu rc
	shift 2
	rm -f "$data"
	# Not -q: what perf says at its end (its wake-ups, what it wrote, or why it stopped) goes
	# to perf.err, which the note quotes when perf ended early.
	perf record --call-graph dwarf,16384 -F 999 -p "$PFS_PID" -o "$data" 2>"$B/perf.err" &
	perf_pid=$!
	for ((i = 0; i < 100; i++)); do # perf opens the output file once it samples
		[ -s "$data" ] && break
		sleep 0.05
	done
	c0=$(daemon_ticks "$PFS_PID")
	timed "$@" >/dev/null || die "$wl: the profiled run of $what failed"
	wall=$(printf '%.2f' "$ELAPSED")
	cpu=$((($(daemon_ticks "$PFS_PID") - c0) * 1000 / CLK_TCK))
	# perf ends on its own now and then before the run does (W12 once in two full runs; W5,
	# W11 and W14 in one run, not when run alone): the note then says so, with perf's exit
	# status (128 + a signal's number) and what it said, and whether the daemon still runs;
	# the run goes on.
	if ! kill -INT "$perf_pid" 2>/dev/null; then
		rc=0
		wait "$perf_pid" || rc=$?
		note "$wl" "Profile of $what: none; perf record ended before the run did (exit status $rc; the daemon $(kill -0 "$PFS_PID" 2>/dev/null && echo 'still ran' || echo 'was gone'); perf said: $(tr '\n' ' ' <"$B/perf.err" | cut -c1-300))."
		return 0
	fi
	wait "$perf_pid" || true
	total=$(perf report -i "$data" --stdio --sort dso 2>/dev/null |
		sed -n 's/^# Samples: \([^ ]*\).*/\1/p' | head -n 1)
	dso=$(perf_top "$data" 3 --no-children -g none --sort dso | head -n 6 | paste -sd ';' |
		sed 's/;/; /g')
	self=$(perf_top "$data" 1.5 --no-children -g none --sort dso,sym | head -n 10 |
		sed 's/ \[[.k]\] / /' | paste -sd ';' | sed 's/;/; /g')
	children=$(perf_top "$data" 3 --children -g none --sort dso,sym |
		awk '$NF == "(inlined)" { next } $3 == "packetfs" || ($3 ~ /^libsqlite3/ && $NF ~ /^sqlite3_/) { print $1, $NF }' |
		head -n 14 | paste -sd ';' | sed 's/;/; /g')
	note "$wl" "Profile of $what (perf record --call-graph dwarf -F 999 of the packetfs daemon over one more run, untimed; ${total:-?} samples of the on-CPU time of all its threads, while the run took $wall s and the daemon $cpu ms of CPU: a daemon that uses little of the wall time waits, on round trips, fsync or the other load): per binary: $dso. Self (binary, symbol): $self. packetfs's functions and SQLite's API calls with their callees (children, DWARF call chains): $children."
}

# --- W10: creates from Python and from C ---------------------------------------------------------

w10()
{
	local d=$B/w10 n r t p dir prog
	n=$(scaled 2000)
	prog=$(fixture_bin creates)
	shape_mounts "$d" w10
	note W10 "Python: bench.py smallfiles, $n x (os.open O_WRONLY|O_CREAT|O_TRUNC, os.write of 4 KiB, os.close) into a new directory (on packetfs a new directory of an item); C: fixtures/creates.c (cc -O2), the same $n x (open, write 4 KiB, close) into another new directory; files/s, timed inside each program (the interpreter's start not counted). The C rows placed on one CPU and on two run the same program with the client on CPU 0 and the daemon's threads pinned (taskset) to CPU 0 or to CPU 1: the per-request cost without the scheduler's choice, which otherwise moves a FUSE peer's rate up to 8x between runs (see placement in shapes.sh)."
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			dir=$(shape_dir "$d" w10 "$t" "$t-$r")
			with_cpu W10 "daemon CPU per file (Python)" "$t" "$n" py smallfiles "$dir-py" "$n" ||
				die "W10 Python creates on $t failed"
			record W10 "create 4K (Python os.open/write/close)" files/s higher "$t" "$(div "$n" "$PY_OUT")"
			with_cpu W10 "daemon CPU per file (C)" "$t" "$n" run "$prog" "$dir-c" "$n" >"$B/c.out" ||
				die "W10 C creates on $t failed"
			[ "$(find "$dir-c" -type f | wc -l)" = "$n" ] || die "W10: $dir-c lacks files"
			record W10 "create 4K (C open/write/close)" files/s higher "$t" "$(div "$n" "$(<"$B/c.out")")"
			for p in $(placements); do
				placed "$p" "$t" run "$prog" "$dir-c-$p" "$n" >"$B/c.out" ||
					die "W10 C creates on $t ($p) failed"
				[ "$(find "$dir-c-$p" -type f | wc -l)" = "$n" ] || die "W10: $dir-c-$p lacks files"
				record W10 "create 4K (C), $(place_label "$p")" files/s higher "$t" \
					"$(div "$n" "$(<"$B/c.out")")"
			done
		done
	done
	cpu_record W10
	pfs_profile W10 "the Python creates" "${PY[@]}" smallfiles "$d/mnt/w10/profile-py" "$n"
	pfs_profile W10 "the C creates" "$prog" "$d/mnt/w10/profile-c" "$n"
	shape_umount "$d"
}

# --- W11: a shell >> loop into a plain document --------------------------------------------------

# append_json FILE N : N JSON lines, one `>>` (open, write, close) each, from this shell.
append_json()
{
	append_printf "$1" "$2" \
		'{"time":"2026-12-03T21:00:00Z","level":"info","msg":"step %d done","ms":12}\n'
}

# append_held FILE N : N JSON lines written by printf in a loop whose output is appended to FILE
# with one `>>` (one open, a write per line); FILE gets a line of its own first, so that the
# loop's `>>` opens a document that exists, as a log's does.
append_held()
{
	local i
	echo '{}' >>"$1"
	for ((i = 0; i < $2; i++)); do
		printf '{"time":"2026-12-03T21:00:00Z","level":"info","msg":"step %d done","ms":12}\n' "$i"
	done >>"$1"
}

w11()
{
	local d=$B/w11 n r t p f lines
	n=$(scaled 3000)
	shape_mounts "$d" w11
	note W11 "A bash loop appends $n JSON lines (\`printf '{\"time\":...,\"msg\":\"step %d done\",...}\\n' >>FILE\`, one open/write/close per line, 70-odd bytes each) to a new plain document ITEM/log-N.jsonl of an item (not the registry: that is W5), and to a new file on the disk and through bindfs; lines/s. The line count is checked afterwards. The placed rows run the same loop with the shell on CPU 0 and the daemon on CPU 0 or CPU 1 (as W10's). The row 'through one >>' writes the same lines from a loop whose output is appended once (\`for ...; do printf ...; done >>FILE\`: one open, a write per line) to a file made before it. The row '>> of nothing' runs the placed loop on one CPU with nothing printed (\`printf '' >>FILE\`: the open, the closes and the release of each \`>>\`, no write, and no commit but the first one's, which makes the file): the floor under a \`>>\` of each target, its round trips alone."
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			f=$(shape_dir "$d" w11 "$t" "log-$t-$r.jsonl")
			with_cpu W11 "daemon CPU per line" "$t" "$n" timed append_json "$f" "$n"
			lines=$(wc -l <"$f")
			[ "$lines" = "$n" ] || die "W11: $f has $lines lines, expected $n"
			record W11 "append >> JSON line (shell loop)" lines/s higher "$t" "$(div "$n" "$ELAPSED")"
			for p in $(placements); do
				f=$(shape_dir "$d" w11 "$t" "log-$t-$r-$p.jsonl")
				placed "$p" "$t" timed append_json "$f" "$n"
				lines=$(wc -l <"$f")
				[ "$lines" = "$n" ] || die "W11: $f has $lines lines, expected $n"
				record W11 "append >> JSON line, $(place_label "$p")" lines/s higher "$t" \
					"$(div "$n" "$ELAPSED")"
			done
			f=$(shape_dir "$d" w11 "$t" "empty-$t-$r.jsonl")
			placed one "$t" timed append_printf "$f" "$n" ''
			[ ! -s "$f" ] || die "W11: $f is not empty after >> of nothing"
			record W11 ">> of nothing (open and close alone), client and daemon on one CPU" \
				ops/s higher "$t" "$(div "$n" "$ELAPSED")"
			f=$(shape_dir "$d" w11 "$t" "held-$t-$r.jsonl")
			timed append_held "$f" "$n"
			lines=$(wc -l <"$f")
			[ "$lines" = $((n + 1)) ] || die "W11: $f has $lines lines, expected $((n + 1))"
			record W11 "append JSON lines through one >> (shell loop)" lines/s higher "$t" \
				"$(div "$n" "$ELAPSED")"
		done
	done
	cpu_record W11
	pfs_profile W11 "the >> loop" append_json "$d/mnt/w11/log-profile.jsonl" "$n"
	shape_umount "$d"
}

# --- W12: find -exec stat -------------------------------------------------------------------------

w12()
{
	local d=$B/w12 n r t np nd nb
	local -a roots
	n=$(scaled 1000)
	mounted_store "$d"
	say "W12: making $n items"
	fill "$d/mnt" item- 1 "$n"
	py docs "$d/mnt" item- 1 "$n" "$THREADS" || die "W12: writing the documents failed"
	mkdir -p "$d/disk/items"
	find "$d/mnt" -mindepth 1 -maxdepth 1 -name 'item-*' -printf '%f\n' >"$d/entries"
	run xargs -P "$THREADS" -I{} cp -r "$d/mnt/{}" "$d/disk/items/" <"$d/entries" ||
		die "W12: cp -r of the items failed"
	chmod -R u+w "$d/disk"
	bind_mount "$d/disk" "$d/bind"
	# The items are the root's item-* entries on packetfs; the other targets hold just them.
	np=$(find "$d/mnt"/item-* -type f | wc -l)
	nd=$(find "$d/disk/items" -type f | wc -l)
	nb=$(find "$d/bind/items" -type f | wc -l)
	[ "$nd" = "$np" ] && [ "$nb" = "$np" ] || die "W12: the trees differ: disk $nd, bindfs $nb, packetfs $np files"
	note W12 "$n items made by mkdir, each with its 4 documents (as W2), $np files under them (documents, views, validation/, .history revisions); the disk tree is \`cp -r\` of the items. Measured: \`find ITEMS -type f -exec stat {} + >/dev/null\` and \`find ITEMS -type f -exec stat {} \\; >/dev/null\` (one stat process per file) over those $np files, warm (one untimed find first); seconds."
	for ((r = 0; r <= RUNS; r++)); do # run 0: the untimed find that warms the caches
		for t in $TARGETS; do
			case $t in
			packetfs) roots=("$d/mnt"/item-*) ;;
			*) roots=("$(shape_dir "$d" "" "$t" items)") ;;
			esac
			if [ "$r" = 0 ]; then
				find "${roots[@]}" -type f >/dev/null
				continue
			fi
			with_cpu W12 "daemon CPU per file (-exec stat {} +)" "$t" "$np" \
				timed find "${roots[@]}" -type f -exec stat {} + >/dev/null || die "W12: find -exec stat + on $t failed"
			record W12 "find -type f -exec stat {} +" s lower "$t" "$ELAPSED"
			timed find "${roots[@]}" -type f -exec stat {} \; >/dev/null || die "W12: find -exec stat \\; on $t failed"
			record W12 "find -type f -exec stat {} \\;" s lower "$t" "$ELAPSED"
		done
	done
	cpu_record W12
	pfs_profile W12 "find -exec stat {} +" find "$d/mnt"/item-* -type f -exec stat {} +
	bind_umount "$d/bind"
	pfs_umount "$d/mnt"
	rm -rf "$d"
}

# --- W13 and W14: a tree written into a new directory ----------------------------------------------

# tree_runs WL D NAME LABEL CHECK CMD... : RUNS runs on each target of `CMD DIR`, DIR a new
# directory (shape_dir D wl TARGET NAME-TARGET-RUN), timed, with the daemon's CPU per file of
# the source tree (SRC_FILES); then CHECK DIR, which dies when DIR is not what CMD should have
# made; each run recorded as LABEL in seconds (lower is better), then the CPU (cpu_record).
tree_runs()
{
	local wl=$1 d=$2 name=$3 label=$4 check=$5 r t dir
	shift 5
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			dir=$(shape_dir "$d" "${wl,,}" "$t" "$name-$t-$r")
			with_cpu "$wl" "daemon CPU per file" "$t" "$SRC_FILES" timed "$@" "$dir" ||
				die "$wl: $label into $t failed"
			"$check" "$dir"
			record "$wl" "$label" s lower "$t" "$ELAPSED"
		done
	done
	cpu_record "$wl"
}

# has_source_tree DIR : dies unless DIR holds the source tree's SRC_FILES files.
has_source_tree()
{
	[ "$(find "$1" -type f | wc -l)" = "$SRC_FILES" ] || die "W13: $1 lacks files"
}

# clean_clone DIR : dies unless the git checkout DIR is clean.
clean_clone()
{
	git -C "$1" diff --quiet HEAD || die "W14: the clone in $1 is not clean"
}

# W13: rsync -a of a source tree.
w13()
{
	local d=$B/w13
	source_tree
	shape_mounts "$d" w13
	note W13 "\`rsync -a SRC/ DIR/\` of a source tree into a new directory (on packetfs a new directory of an item: what a person copies into a packet): SRC is the first $SRC_FILES files of this repository's HEAD (git archive; $SRC_BYTES bytes; all of it at scale 1) on the local disk; rsync writes each file to a temp name, sets its times and mode, renames it; seconds."
	tree_runs W13 "$d" copy "rsync -a source tree" has_source_tree rsync -a "$B/src/"
	pfs_profile W13 "rsync -a" rsync -a "$B/src/" "$d/mnt/w13/copy-profile/"
	shape_umount "$d"
}

# W14: git clone into an item.
w14()
{
	local d=$B/w14
	source_tree
	shape_mounts "$d" w14
	note W14 "\`git clone -q --no-hardlinks REPO DIR\` (a local clone: git copies the objects, then checks the tree out) into a new directory (on packetfs a new directory of an item: a checkout of another project kept in a packet; the item's own worktree is a git worktree on the local disk, not under the mount). REPO is on the local disk: W13's $SRC_FILES files in $SRC_COMMITS commits, packed (one pack of $SRC_PACK bytes); seconds."
	tree_runs W14 "$d" clone "git clone --no-hardlinks (local)" clean_clone \
		git clone -q --no-hardlinks "$B/srcrepo"
	pfs_profile W14 "git clone" git clone -q --no-hardlinks "$B/srcrepo" "$d/mnt/w14/clone-profile"
	shape_umount "$d"
}

# --- W15: make -j2 inside an item -----------------------------------------------------------------

# make_all DIR K : make -j2 in DIR/p1 ... DIR/pK, in turn.
make_all()
{
	local k
	for ((k = 1; k <= $2; k++)); do
		make -s -j2 -C "$1/p$k" >/dev/null || return
	done
}

w15()
{
	local d=$B/w15 k r t dir i
	k=$(scaled 10)
	shape_mounts "$d" w15
	cp -r "$ROOT/examples/sample-project" "$d/warm" # the compiler's files in the page cache
	make -s -j2 -C "$d/warm" >/dev/null || die "W15: make -j2 of the sample project failed"
	note W15 "\`make -j2\` (its default target: libstrkit.a and the test program, cc) of examples/sample-project, copied (\`cp -r\`, untimed) $k time(s) into a new directory (on packetfs a new directory of an item) and built in each copy in turn (after one untimed build on the disk, so that the toolchain is in the page cache); the compiler, assembler, ar and linker write their outputs there; seconds for the $k builds."
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			dir=$(shape_dir "$d" w15 "$t" "build-$t-$r")
			mkdir "$dir"
			for ((i = 1; i <= k; i++)); do
				cp -r "$ROOT/examples/sample-project" "$dir/p$i"
			done
			with_cpu W15 "daemon CPU per build" "$t" "$k" timed make_all "$dir" "$k" || die "W15: make -j2 on $t failed"
			[ -x "$dir/p$k/test-strkit" ] || die "W15: $dir/p$k/test-strkit was not built"
			record W15 "make -j2 of the sample project" s lower "$t" "$ELAPSED"
		done
	done
	mkdir "$d/mnt/w15/profile"
	for ((i = 1; i <= k; i++)); do
		cp -r "$ROOT/examples/sample-project" "$d/mnt/w15/profile/p$i"
	done
	cpu_record W15
	pfs_profile W15 "make -j2" make_all "$d/mnt/w15/profile" "$k"
	shape_umount "$d"
}

# --- W16: bytes written per append ------------------------------------------------------------------

# io_write_bytes PID : write_bytes of /proc/PID/io (bytes the process sent to the storage layer,
# counted when it dirties a page).
io_write_bytes()
{
	awk '/^write_bytes:/ { print $2 }' "/proc/$1/io"
}

# append52 FILE N : N lines of 52 bytes, one `>>` each (as W9).
append52()
{
	local i
	for ((i = 1; i <= $2; i++)); do
		printf 'line %05d of a log that grows by a line per close.\n' "$i" >>"$1"
	done
}

w16()
{
	local d=$B/w16 n r t f b0 b1 spid wal db i k
	n=$(scaled 2000)
	command -v strace >/dev/null 2>&1 || die "W16 needs strace"
	shape_mounts "$d" w16
	note W16 "A bash loop appends $n lines of 52 bytes (\`printf 'line %05d of a log ...\\n' >>F\`, one revision per close, as W9) to a new document of an item (disk, bindfs: a new file). write_bytes: the growth of write_bytes in /proc/PID/io of the daemon (packetfs, bindfs) over the loop, divided by $n (the kernel counts a page when the process dirties it: rewriting a page still dirty is not counted again); the disk column is the line's 52 bytes. WAL and db: on packetfs, the same loop under \`strace -f -y -e trace=pwrite64,write,pwritev,pwritev2\` of the daemon, the bytes written to STORE/packetfs.db-wal and to STORE/packetfs.db (the checkpoints) divided by $n. The goal is at most 8 KB (8,000 bytes) of WAL per append."
	for ((r = 1; r <= RUNS; r++)); do
		for t in $TARGETS; do
			f=$(shape_dir "$d" w16 "$t" "log-$t-$r.md")
			case $t in
			disk)
				append52 "$f" "$n"
				record W16 "write_bytes per append" B lower disk 52
				record W16 "WAL bytes per append" B lower disk 52
				record W16 "db file bytes per append" B lower disk 52
				continue
				;;
			bindfs) spid=$BIND_PID ;;
			packetfs) spid=$PFS_PID ;;
			esac
			sync
			b0=$(io_write_bytes "$spid")
			run append52 "$f" "$n"
			b1=$(io_write_bytes "$spid")
			record W16 "write_bytes per append" B lower "$t" "$(div $((b1 - b0)) "$n")"
			[ "$t" = packetfs ] || continue
			# The last run's files go first: its "attached" must not end
			# this run's wait before strace has opened them again.
			rm -f "$B/strace.out" "$B/strace.err"
			strace -f -y -s 0 -e trace=pwrite64,write,pwritev,pwritev2 -e signal=none \
				-o "$B/strace.out" -p "$spid" 2>"$B/strace.err" &
			i=$!
			# Up to five minutes: strace stops every thread of the daemon,
			# and one waiting on a slow disk stops late (10 s was too
			# short once, on a VM whose disk took 95 s for W12's stats;
			# 60 s once too, by a second). A run it never attaches to
			# has no WAL rows, and the note says so: the hour of
			# measurements before it is not lost to it.
			k=$SECONDS
			until grep -qs attached "$B/strace.err" || ((SECONDS - k >= 300)); do
				sleep 0.05
			done
			if ! grep -qs attached "$B/strace.err"; then
				kill "$i" 2>/dev/null
				wait "$i" || true
				note W16 "Run $r: strace did not attach to the daemon in $((SECONDS - k)) s ($(tr '\n' ' ' <"$B/strace.err" 2>/dev/null)), so it has no WAL or db file row."
				continue
			fi
			sleep 0.2
			run append52 "$f.strace" "$n"
			sleep 0.2
			kill -INT "$i"
			wait "$i" || true
			wal=$(awk '/\.db-wal>/ && / = [0-9]+$/ { s += $NF } END { print s + 0 }' "$B/strace.out")
			db=$(awk '/\.db>/ && / = [0-9]+$/ { s += $NF } END { print s + 0 }' "$B/strace.out")
			record W16 "WAL bytes per append" B lower packetfs "$(div "$wal" "$n")"
			record W16 "db file bytes per append" B lower packetfs "$(div "$db" "$n")"
		done
	done
	pfs_profile W16 "the 52-byte appends" append52 "$d/mnt/w16/log-profile.md" "$n"
	shape_umount "$d"
}
