# shellcheck shell=bash
# shellcheck disable=SC2154 # tmp is the sourcing program's
# examples/stages/lib.sh - what the example stage programs of this directory share; each
# sources it (it is not a stage program itself):
#
#	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Their messages start with the program's file name ("babysit.sh: ..."), so that a stage log
# says which program wrote a line.

# die MESSAGE... : prints "PROGRAM: MESSAGE" on stderr and exits with status DIE_STATUS
# (default 1).
die() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
	exit "${DIE_STATUS:-1}"
}

# say MESSAGE... : prints "PROGRAM: MESSAGE" on stdout.
say() { printf '%s: %s\n' "${0##*/}" "$*"; }

# dry_run_arg [ARG] : sets dry_run to 1 for --dry-run, 0 for no argument; dies on any
# other argument (usage: "PROGRAM [--dry-run]").
dry_run_arg() {
	dry_run=0
	case ${1:-} in
	--dry-run) dry_run=1 ;;
	"") ;;
	*) die "$1: unknown argument (usage: ${0##*/} [--dry-run])" ;;
	esac
}

# need_gh : sets GH (default gh) and dies unless it is a command; passes when dry_run is 1
# (a dry run calls no gh).
need_gh() {
	GH=${GH:-gh}
	[ "${dry_run:-0}" = 1 ] || command -v "$GH" >/dev/null 2>&1 ||
		die "$GH: not found (install GitHub CLI, https://cli.github.com, or set GH)"
}

# gh_ ARG... : GitHub CLI (the command GH, default gh), run in the worktree unless GH_REPO
# names the repository; returns gh's status. Its standard error is kept in $tmp/err (tmp: the
# program's scratch directory), which err_text prints.
gh_() {
	if [ -z "${GH_REPO:-}" ] && [ -d "${PACKET_WORKTREE:-}" ]; then
		(cd "$PACKET_WORKTREE" && "${GH:-gh}" "$@") 2>"$tmp/err"
	else
		"${GH:-gh}" "$@" 2>"$tmp/err"
	fi
}

# err_text : the text of $tmp/err on one line, without trailing blanks.
err_text() { tr '\n' ' ' <"$tmp/err" | sed 's/[[:space:]]*$//'; }
