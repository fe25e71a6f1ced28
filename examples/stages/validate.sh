#!/usr/bin/env bash
# validate.sh - the example validator: the validate stage's own program.
#
# Runs with cwd = the item directory on the mount, after the engine has run
# the plan's script recipes (it skips procedures). For each recipe that
# plan.md's ```validation-recipes block names and that is a procedure (its
# file in MNT/.packetfs/recipes/ ends in .md), in numbered order, it
# chooses the commands the procedure needs for the project in the worktree
# and has the engine run them as one recorded run at the head:
#
#   ${PACKETFS:-packetfs} record NAME -- CMD            one command
#   ${PACKETFS:-packetfs} record NAME -- sh -c 'A && B'  several, in order;
#                                                       a failing one stops
#                                                       the rest
#
# Then it writes change-validation.md from validation/registry.jsonl: a
# table of every named recipe with the status, command and log of its
# latest engine run ("source":"engine"), counted only when that run is at
# the head this stage started at, and as the last line
#
#   ## Verdict: pass      every named recipe's latest engine run there is validated
#   ## Verdict: fail      one is failing or timed out
#   ## Verdict: blocked   otherwise (missing, blocked, cancelled, stale, or no
#                         recipe named)
#
# the same rule as the review gate's. The engine records what ran; this
# program only chooses commands and reads the registry.
#
# The rule that turns a procedure into commands. The words of its
# "# summary:" line decide (whole words, any case); when the summary has
# none of them, the words of its prose do. Each step below is taken when
# one of its words is there, and the steps run in this order:
#
#   toolchain  toolchain, compiler    ${CC:-cc} --version
#   diff       diff, whitespace,      git diff --check BASE...HEAD (BASE is
#              conflict               $PACKET_BASE, as a local branch or
#                                     origin's)
#   build      build, builds, built,  make: make clean && make ("clean" also
#              compile, configure     named and a clean target; make -B
#                                     without one; else make);
#                                     meson, cmake, ./configure: configure
#                                     and build afresh in
#                                     .packetfs-build/NAME/ (ignored by git)
#   tests      test, tests,           make: make check, else make test (the
#              testsuite              target the Makefile has); meson test;
#                                     ctest; ./configure: make check there
#
# The build system is the worktree's, found as 01-build finds it: meson.build,
# then a Makefile, then CMakeLists.txt, then an executable ./configure. A
# procedure that no step matches, or whose step the worktree cannot do (no
# build system, no test target, an unknown base), is not recorded: its row
# says why and the verdict is blocked. A procedure's "# needs:" is the
# engine's business: it records the run blocked, naming the need, when a
# recipe it needs did not validate at the head.
#
# For the demo's strkit (a Makefile with clean and check targets) and the
# shipped procedures this records
#
#   00-preflight       sh -c 'cc --version && make clean && make'
#   06-change-review   sh -c 'git diff --check main...HEAD && make check'
#
# Exit status: 0 when change-validation.md is written (whatever the
# verdict); 1 when it cannot do its work (no plan.md, no worktree, or a
# procedure to record and no packetfs command).
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PFS=${PACKETFS:-packetfs}
wt=${PACKET_WORKTREE:-}
{ [ -n "$wt" ] && [ -d "$wt" ]; } || die "PACKET_WORKTREE is not set or not a directory"
[ -r plan.md ] || die "plan.md: not readable in $PWD"
item_dir=$PWD
catalog=$item_dir/../.packetfs/recipes
[ -d "$catalog" ] || die "$catalog: no recipe catalog (is $PWD an item directory on a packetfs mount?)"
head=$(git -C "$wt" rev-parse HEAD) || die "$wt: cannot read the head commit"
base=${PACKET_BASE:-main}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names of plan.md's ```validation-recipes block, as the engine reads
# them: one a line, "- " allowed, blank and "#" lines skipped; sorted.
awk '
	state == 0 && /^ ? ? ?(```|~~~)/ {
		line = $0; sub(/^ +/, "", line)
		ch = substr(line, 1, 1); n = match(line, "[^" ch "]") ? RSTART - 1 : length(line)
		info = substr(line, n + 1); sub(/^[ \t]+/, "", info); sub(/[ \t\r].*$/, "", info)
		state = info == "validation-recipes" ? 2 : 1; fch = ch; fn = n; next
	}
	state != 0 && /^ ? ? ?(```|~~~)/ {
		line = $0; sub(/^ +/, "", line)
		ch = substr(line, 1, 1); n = match(line, "[^" ch "]") ? RSTART - 1 : length(line)
		rest = substr(line, n + 1)
		if (ch == fch && n >= fn && rest ~ /^[ \t\r]*$/) { if (state == 2) exit; state = 0; next }
	}
	state == 2 {
		line = $0; sub(/^[ \t]+/, "", line); sub(/[ \t\r]+$/, "", line)
		if (substr(line, 1, 2) == "- ") { line = substr(line, 3); sub(/^[ \t]+/, "", line) }
		if (line != "" && substr(line, 1, 1) != "#") print line
	}' plan.md | LC_ALL=C sort -u >"$tmp/names"

# kind NAME : script, procedure or unknown (not in the catalog).
kind() {
	local f
	if [ -f "$catalog/$1.md" ]; then
		echo procedure
		return
	fi
	for f in "$catalog/$1" "$catalog/$1".*; do
		if [ -f "$f" ]; then
			echo script
			return
		fi
	done
	echo unknown
}

# The worktree's build system, as 01-build finds it.
if [ -f "$wt/meson.build" ]; then
	system=meson
elif [ -f "$wt/Makefile" ] || [ -f "$wt/makefile" ] || [ -f "$wt/GNUmakefile" ]; then
	system="make"
elif [ -f "$wt/CMakeLists.txt" ]; then
	system=cmake
elif [ -x "$wt/configure" ]; then
	system=configure
else
	system=none
fi

# make_target NAME : whether the worktree's makefile has the target NAME.
make_target() {
	local f
	for f in GNUmakefile makefile Makefile; do
		[ -f "$wt/$f" ] || continue
		grep -Eq "^$1([[:space:]]+[^:=]*)?[[:space:]]*:([^=]|\$)" "$wt/$f" && return 0
		return 1
	done
	return 1
}

# The base as the diff step names it: the local branch, else origin's.
diff_base=""
if [[ $base =~ ^[A-Za-z0-9._/-]+$ ]]; then
	if git -C "$wt" rev-parse -q --verify "refs/heads/$base^{commit}" >/dev/null; then
		diff_base=$base
	elif git -C "$wt" rev-parse -q --verify "refs/remotes/origin/$base^{commit}" >/dev/null; then
		diff_base=origin/$base
	fi
fi

# procedure_text NAME : the words of the procedure's summary (first line),
# then of its prose (second line), lower case, one blank between words.
procedure_text() {
	local f=$catalog/$1.md
	awk '
		function words(s) { s = tolower(s); gsub(/[^a-z0-9]+/, " ", s); return s }
		{ line = $0; sub(/^[ \t]*<!--/, "", line); sub(/-->[ \t\r]*$/, "", line) }
		NR <= 30 && line ~ /^[ \t]*#[ \t]*summary[ \t]*:/ && summary == "" {
			sub(/^[^:]*:/, "", line); summary = words(line); next
		}
		NR <= 30 && line ~ /^[ \t]*#[ \t]*(gpus|timeout|needs|version)[ \t]*:/ { next }
		{ prose = prose " " words(line) }
		END { print " " summary " "; print " " prose " " }' "$f"
}

# derive NAME : sets steps (the shell commands, in order) and why (what
# was matched, or why nothing can be recorded).
derive() {
	local name=$1 text summary prose has_step=0 bdir=.packetfs-build/$1 setup=""
	local toolchain=0 diff=0 build=0 clean=0 tests=0
	{
		IFS= read -r summary
		IFS= read -r prose
	} < <(procedure_text "$name")
	steps=()
	why=""
	for text in "$summary" "$prose"; do
		case $text in *" toolchain "* | *" compiler "* | *" compilers "*) toolchain=1 ;; esac
		case $text in *" diff "* | *" whitespace "* | *" conflict "*) diff=1 ;; esac
		case $text in *" build "* | *" builds "* | *" built "* | *" compile "* | *" compiles "* | *" configure "*)
			build=1 ;;
		esac
		case $text in *" test "* | *" tests "* | *" testsuite "*) tests=1 ;; esac
		case $text in *" clean "*) clean=1 ;; esac
		if [ $((toolchain + diff + build + tests)) -gt 0 ]; then
			why="steps from its $([ "$text" = "$summary" ] && echo summary || echo prose):"
			break
		fi
		clean=0
	done
	if [ $((toolchain + diff + build + tests)) -eq 0 ]; then
		why="no step of the rule matches its summary or prose"
		return 1
	fi
	local sep=" "
	[ "$toolchain" = 0 ] || { why="$why${sep}toolchain" && sep=", "; }
	[ "$diff" = 0 ] || { why="$why${sep}diff" && sep=", "; }
	[ "$build" = 0 ] || { why="$why${sep}build$([ "$clean" = 1 ] && echo ' from clean')" && sep=", "; }
	[ "$tests" = 0 ] || why="$why${sep}tests"
	if [ "$build" = 1 ] || [ "$tests" = 1 ]; then
		case $system in
		none)
			why="$why; but the worktree has no meson.build, Makefile, CMakeLists.txt or configure"
			return 1
			;;
		meson | cmake | configure)
			setup="mkdir -p .packetfs-build && printf '*\\n' >.packetfs-build/.gitignore && rm -rf $bdir"
			;;
		esac
	fi

	[ "$toolchain" = 0 ] || steps+=("${CC:-cc} --version")
	if [ "$diff" = 1 ]; then
		if [ -z "$diff_base" ]; then
			why="$why; but the base '$base' names no branch in the worktree's repository"
			return 1
		fi
		steps+=("git diff --check $diff_base...HEAD")
	fi
	if [ "$build" = 1 ]; then
		case $system in
		make)
			if [ "$clean" = 1 ] && make_target clean; then
				steps+=("make clean" "make")
			elif [ "$clean" = 1 ]; then
				steps+=("make -B")
			else
				steps+=("make")
			fi
			;;
		meson) steps+=("$setup" "meson setup $bdir" "ninja -C $bdir") ;;
		cmake) steps+=("$setup" "cmake -S . -B $bdir" "cmake --build $bdir") ;;
		configure) steps+=("$setup" "mkdir -p $bdir" "(cd $bdir && ../../configure)" "make -C $bdir") ;;
		esac
		has_step=1
	fi
	if [ "$tests" = 1 ]; then
		case $system in
		make)
			if make_target check; then
				steps+=("make check")
			elif make_target test; then
				steps+=("make test")
			else
				why="$why; but the Makefile has neither a check nor a test target"
				return 1
			fi
			;;
		meson)
			[ "$has_step" = 1 ] || steps+=("$setup" "meson setup $bdir")
			steps+=("meson test -C $bdir")
			;;
		cmake)
			[ "$has_step" = 1 ] || steps+=("$setup" "cmake -S . -B $bdir" "cmake --build $bdir")
			steps+=("ctest --test-dir $bdir --output-on-failure")
			;;
		configure)
			[ "$has_step" = 1 ] || steps+=("$setup" "mkdir -p $bdir" "(cd $bdir && ../../configure)")
			steps+=("make -C $bdir check")
			;;
		esac
	fi
	return 0
}

# --- record each named procedure, in numbered order ----------------------
: >"$tmp/rows"
nproc=0
while IFS= read -r name; do
	k=$(kind "$name")
	note=""
	if [ "$k" = procedure ]; then
		nproc=$((nproc + 1))
		if derive "$name"; then
			if [ "${#steps[@]}" = 1 ] && [[ ${steps[0]} =~ ^[A-Za-z0-9_./:=+-]+( [A-Za-z0-9_./:=+-]+)*$ ]]; then
				read -r -a argv <<<"${steps[0]}"
			else
				script=${steps[0]}
				for s in "${steps[@]:1}"; do
					script="$script && $s"
				done
				argv=(sh -c "$script")
			fi
			command -v "$PFS" >/dev/null 2>&1 ||
				die "$PFS: not found (set PACKETFS to the packetfs binary, or put it on PATH)"
			say "$name: $why"
			printf 'validate.sh: $ packetfs record %s --' "$name"
			printf ' %q' "${argv[@]}"
			printf '\n'
			rc=0
			"$PFS" record "$name" -- "${argv[@]}" </dev/null || rc=$?
			say "$name: exit status $rc"
			note=$why
		else
			say "$name: not recorded: $why"
			note="not recorded: $why"
		fi
	fi
	printf '%s\t%s\t%s\n' "$name" "$k" "$note" >>"$tmp/rows"
done <"$tmp/names"
[ "$nproc" -gt 0 ] || say "the plan names no procedure: nothing to record"

# --- change-validation.md --------------------------------------------------
python3 - "$item_dir/validation/registry.jsonl" "$head" "$tmp/rows" \
	"${PACKET_ITEM:-?}" "${PACKET_ITERATION:-1}" >"$tmp/cv.md" <<'PY'
import json, sys

reg, head, rows_file, item, iteration = sys.argv[1:6]
rows = [l.rstrip("\n").split("\t", 2) for l in open(rows_file, encoding="utf-8") if l.strip()]
latest, external = {}, 0
try:
    with open(reg, encoding="utf-8") as f:
        for line in f:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if not isinstance(o, dict):
                continue
            if o.get("source") != "engine":
                external += 1
                continue
            latest[o.get("recipe")] = o  # lines are in order: the last one wins
except FileNotFoundError:
    pass


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def code(s):
    s = cell(s).replace("`", "'")
    return "`%s`" % s if s else ""


verdict = "pass" if rows else "blocked"
out, n_ok = [], 0
for name, kind, note in rows:
    o = latest.get(name)
    if kind == "unknown":
        status, cmd, ev = "unknown", "", ""
        note = "not in the recipe catalog"
    elif o is None:
        status, cmd, ev = "missing", "", ""
    else:
        cmd, ev = o.get("command", ""), o.get("evidence", "")
        status = o.get("status", "?")
        if o.get("head") != head:
            note = ("stale: ran at %s; " % str(o.get("head"))[:12]) + note
            status = "stale"
        extra = o.get("note") or ""
        by = o.get("recorded_by")
        if isinstance(by, dict) and by.get("stage"):
            extra = ("recorded by stage %s" % by["stage"]) + ("; " + extra if extra else "")
        note = "; ".join(x for x in (note, extra) if x)
    if status in ("failing", "timed_out"):
        verdict = "fail"
    elif status != "validated" and verdict == "pass":
        verdict = "blocked"
    n_ok += status == "validated"
    link = "[%s](%s)" % (ev, ev) if ev else ""
    out.append("| %s | %s | %s | %s | %s | %s |" % (name, kind, status, code(cmd), link, cell(note)))

print("# Change validation for %s\n" % item)
print("Iteration %s, head `%s`. Written by examples/stages/validate.sh from" % (iteration, head))
print("validation/registry.jsonl: the latest engine run of each recipe the plan names,")
print("counted only at this head. Procedures were run through `packetfs record`.\n")
print("%d of %d named recipes validated.\n" % (n_ok, len(rows)))
print("| Recipe | Kind | Status | Command | Evidence | Note |")
print("|---|---|---|---|---|---|")
for r in out:
    print(r)
if not rows:
    print("\nplan.md names no recipe in its validation-recipes block.")
if external:
    print("\n%d line(s) appended from outside (source external) are not evidence and were not counted." % external)
print("\n## Verdict: %s" % verdict)
PY
# One write of the whole text: a document on the mount gains a revision at
# every close of its file.
cat "$tmp/cv.md" >change-validation.md
say "wrote change-validation.md ($(tail -n 1 change-validation.md))"
