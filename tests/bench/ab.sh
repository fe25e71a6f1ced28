# shellcheck shell=bash
# tests/bench/ab.sh - the A/B harness of the on-demand measurements that compare builds in one
# run (daemon-cpu.sh, store-bytes.sh, fuse-requests.sh, recipe-cost.sh, big-docs.sh): their
# options, the builds to compare, the work directory and its cleanup, a store mounted per run
# and the daemon's CPU time. Sourced at the top of such a script; defines functions, ROOT (the
# source tree) and AB_NAME (the script's file name, which every message starts with).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AB_NAME=$(basename "$0")

# ab_die MESSAGE : prints "NAME: MESSAGE" on stderr and exits 2.
ab_die()
{
	echo "$AB_NAME: $1" >&2
	exit 2
}

# ab_args OPTIONS ARG... : parses the leading options of ARG...: --NAME VALUE for each NAME of
# the space-separated OPTIONS sets the variable NAME in capitals (--items 10: ITEMS=10), and
# -h or --help prints the script's header comment (from its second line up to its first line
# that is not a comment) and exits 0. Sets ARGS to what follows the options; the first
# argument that is none of them ends them.
ab_args()
{
	local opts=" $1 " o
	shift
	while [ $# -gt 0 ]; do
		case "$1" in
		-h | --help)
			awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
			exit 0
			;;
		--*)
			o=${1#--}
			[[ $opts == *" $o "* ]] || break
			[ $# -ge 2 ] || ab_die "$1: a value is needed"
			printf -v "${o^^}" '%s' "$2"
			shift 2
			;;
		*) break ;;
		esac
	done
	ARGS=("$@")
}

# ab_bins : checks that each of BINS is an executable (or exits 2).
ab_bins()
{
	local b
	for b in "${BINS[@]}"; do
		[ -x "$b" ] || ab_die "$b: not an executable"
	done
}

# ab_pair : BINS, the two builds to compare, from ARGS (BASELINE_BIN [BIN]; BIN defaults to
# ROOT's build/cli/packetfs), checked with ab_bins; exits 2 without a baseline.
ab_pair()
{
	[ ${#ARGS[@]} -ge 1 ] || ab_die "a baseline binary is needed (--help)"
	BINS=("${ARGS[0]}" "${ARGS[1]:-$ROOT/build/cli/packetfs}")
	ab_bins
}

# ab_need COMMAND... : exits 2 unless each COMMAND is on the PATH.
ab_need()
{
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || ab_die "$c is needed"
	done
}

# ab_cleanup : the EXIT trap of ab_start: calls the script's ab_on_exit if it defines one,
# unmounts (lazily) each of MNTS, removes W.
ab_cleanup()
{
	local m
	! declare -F ab_on_exit >/dev/null || ab_on_exit
	for m in "${MNTS[@]}"; do
		fusermount3 -u -z "$m" 2>/dev/null || true
	done
	rm -rf "$W"
}

# ab_start : W, a new work directory under TMPDIR (removed at exit, after the mounts in MNTS
# have been undone), with W/repo, a git repository of one commit on main; TICK, the clock
# ticks per second; exports a git identity.
ab_start()
{
	W=$(mktemp -d "${TMPDIR:-/tmp}/packetfs-${AB_NAME%.sh}.XXXXXX")
	MNTS=()
	trap ab_cleanup EXIT
	# shellcheck disable=SC2034 # used by the scripts that source this file
	TICK=$(getconf CLK_TCK)
	export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@packetfs.invalid
	export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@packetfs.invalid
	git init -q -b main "$W/repo"
	echo hello >"$W/repo/README"
	git -C "$W/repo" add README
	git -C "$W/repo" commit -q -m "initial commit"
}

# ab_mount [VAR=VALUE...] BIN N [INIT_ARG...] : a store W/store-N made by BIN (`init` with the
# repository W/repo-N, a clone of W/repo, and INIT_ARGs) mounted by BIN on W/mnt-N, with the
# VAR=VALUEs in the daemon's environment; adds the mount to MNTS and sets PID to the daemon's.
ab_mount()
{
	local envs=() bin n store mnt
	while [[ $1 == *=* ]]; do
		envs+=("$1")
		shift
	done
	bin=$1 n=$2 store=$W/store-$2 mnt=$W/mnt-$2
	shift 2
	git clone -q "$W/repo" "$W/repo-$n" # items make branches: a repository of its own
	"$bin" init "$store" --repo "$W/repo-$n" "$@" >/dev/null
	mkdir "$mnt"
	env "${envs[@]}" "$bin" mount "$store" "$mnt"
	MNTS+=("$mnt")
	PID=$(pgrep -f -- " mount $store $mnt\$" | head -n 1)
}

# ab_umount BIN N : unmounts W/mnt-N with BIN, waits until the daemon PID has exited, removes
# the store, the mount point and the repository of ab_mount BIN N.
ab_umount()
{
	local m mnts=()
	"$1" umount "$W/mnt-$2"
	for m in "${MNTS[@]}"; do
		[ "$m" = "$W/mnt-$2" ] || mnts+=("$m")
	done
	MNTS=("${mnts[@]}")
	ab_wait_gone "$PID"
	rm -rf "$W/store-$2" "$W/mnt-$2" "$W/repo-$2"
}

# ab_wait_gone PID : waits until PID has exited.
ab_wait_gone()
{
	while kill -0 "$1" 2>/dev/null; do
		sleep 0.1
	done
}

# ab_items MNT N : makes the items item-1 ... item-N in MNT, each a brief.md (holding the word
# zanzibar) and a plan.md naming one recipe.
ab_items()
{
	local i
	for ((i = 1; i <= $2; i++)); do
		mkdir "$1/item-$i"
		printf '# Item %d\n\nzanzibar\n' "$i" >"$1/item-$i/brief.md"
		printf '# Plan\n\n```validation-recipes\n01-build\n```\n' >"$1/item-$i/plan.md"
	done
}

# ab_runs : RUNS runs of `one_run BIN R-K` (the script's function) for each build K (0, 1) of
# BINS in turn, in this shell (so that its mounts are undone on exit); appends each line it
# prints to W/raw, with "K " before it.
ab_runs()
{
	local r k
	for ((r = 1; r <= RUNS; r++)); do
		for k in 0 1; do
			one_run "${BINS[k]}" "$r-$k" >"$W/one"
			sed "s|^|$k |" "$W/one" >>"$W/raw"
		done
	done
}

# ab_table TITLE RAW_LABEL NAME... : after ab_runs, the report of W/raw: the two builds (A, B),
# then a table of one row per NAME (the values of column 1, 2, ... after the build's number),
# the medians of A and of B and B/A, each to two decimals, headed TITLE; then every raw value
# of each build, RAW_LABEL (the columns' short names) after "raw".
ab_table()
{
	local title=$1 label=$2
	shift 2
	echo "# A: ${BINS[0]}"
	echo "# B: ${BINS[1]}"
	python3 - "$W/raw" "$title" "$label" "$@" <<'PY'
import statistics, sys
raw, title, label, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = [l.split() for l in open(raw)]
print("| %s | A | B | B/A |" % title)
print("|---|--:|--:|--:|")
for i, n in enumerate(names):
    a, b = (statistics.median(float(r[1 + i]) for r in rows if r[0] == k) for k in "01")
    print("| %s | %.2f | %.2f | %s |" % (n, a, b, "%.2f" % (b / a) if a else "-"))
print()
for k, ab in (("0", "A"), ("1", "B")):
    print("- %s raw (%s): %s" % (ab, label, "; ".join(" ".join(r[1:]) for r in rows
                                                    if r[0] == k)))
PY
}

# cpu_ticks PID : utime + stime of PID in clock ticks (fields 14 and 15 of /proc/PID/stat,
# counted after the command name, which may hold spaces).
cpu_ticks()
{
	local s
	s=$(cat "/proc/$1/stat")
	s=${s##*) }
	awk '{ print $12 + $13 }' <<<"$s"
}
