#!/usr/bin/env bash
# The stand-in agent CLIs (tests/fixtures/agents/claude, codex) refuse what their documentation
# says the real ones refuse, so a test with too narrow a permission set fails:
#   codex exec   refuses a working directory outside git without --skip-git-repo-check (the
#                old agent-stage.sh ran it in the item directory); refuses writes outside the
#                cwd and --add-dir directories in workspace-write, and every write in read-only;
#                a commit in a linked worktree needs the git common dir as a writable root
#   claude -p    refuses a Bash command no --allowedTools rule matches (each part of a compound
#                command), an edit outside the cwd and --add-dir directories even in acceptEdits,
#                and an edit in default mode without an Edit rule for it
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/agents/lib.sh"
export AGENT_STUB_SCRIPT_DIR=$T/calls AGENT_STUB_LOG=$T/stub.log AGENT_STUB_TMP_ROOTS=
mkdir -p "$T/calls" "$T/plain" "$T/pkt" "$T/other"
make_repo
wt=$T/wt
git -C "$REPO" worktree add -q -b item "$wt"
common=$(git -C "$wt" rev-parse --path-format=absolute --git-common-dir)

# run_stub OUTFILE CLI ARG... : runs the stand-in in the cwd with "Role: t" on stdin; its
# status is the function's, its output (stdout and stderr) in OUTFILE.
run_stub()
{
	local out=$1 cli=$2
	shift 2
	echo "Role: t" | "$AGENTS/$cli" "$@" >"$out" 2>&1
}
calls()
{
	cat >"$T/calls/t.calls"
}

# --- codex exec: the git repository check ----------------------------------------------------
calls <<'E'
write note.md <<X
note
X
E
cd "$T/plain"
rc=0
run_stub "$T/out" codex exec --sandbox workspace-write - || rc=$?
assert_eq 1 "$rc" "codex exec outside git: status"
assert_eq "Not inside a trusted directory and --skip-git-repo-check was not specified." \
	"$(cat "$T/out")" "codex exec outside git: output"
[ ! -e note.md ] || fail "codex exec outside git wrote note.md"
run_stub "$T/out" codex exec --sandbox workspace-write --skip-git-repo-check - ||
	fail "codex exec --skip-git-repo-check: $(cat "$T/out")"
[ -s note.md ] || fail "codex exec --skip-git-repo-check did not write note.md"
# -C names the directory that is checked.
cd "$wt"
rc=0
run_stub "$T/out" codex exec -C "$T/pkt" --sandbox workspace-write - || rc=$?
assert_eq 1 "$rc" "codex exec -C outside git: status"
run_stub "$T/out" codex exec -C "$wt" --sandbox workspace-write - || fail "codex exec in a worktree: $(cat "$T/out")"

# --- codex exec: the sandbox's writable roots ------------------------------------------------
calls <<E
write $T/pkt/plan.md <<X
plan
X
E
rc=0
run_stub "$T/out" codex exec --sandbox workspace-write - || rc=$?
assert_eq 1 "$rc" "codex write outside the roots: status"
assert_contains "$(cat "$T/out")" "patch rejected: writing outside of the project" "codex write outside the roots"
[ ! -e "$T/pkt/plan.md" ] || fail "codex wrote outside its writable roots"
run_stub "$T/out" codex exec --sandbox workspace-write --add-dir "$T/pkt" - ||
	fail "codex write in an --add-dir: $(cat "$T/out")"
assert_eq plan "$(cat "$T/pkt/plan.md")" "the file codex wrote in an --add-dir"
# read-only (exec's default) writes nothing, not even in the cwd.
calls <<'E'
write inside.txt <<X
x
X
E
rc=0
run_stub "$T/out" codex exec - || rc=$?
assert_eq 1 "$rc" "codex read-only write: status"
[ ! -e "$wt/inside.txt" ] || fail "codex wrote in the read-only sandbox"
# A shell command that writes outside the roots is refused too.
calls <<E
bash echo x > $T/other/out.txt
E
rc=0
run_stub "$T/out" codex exec --sandbox workspace-write - || rc=$?
assert_eq 1 "$rc" "codex shell write outside the roots: status"
assert_contains "$(cat "$T/out")" "Read-only file system" "codex shell write outside the roots"
[ ! -e "$T/other/out.txt" ] || fail "codex's shell wrote outside its writable roots"

# A commit in a linked worktree writes the main repository's .git: refused unless that is a
# writable root.
calls <<'E'
write new.txt <<X
new
X
bash git add new.txt && git commit -q -m "stub commit"
E
head=$(git -C "$wt" rev-parse HEAD)
rc=0
run_stub "$T/out" codex exec --sandbox workspace-write - || rc=$?
assert_eq 1 "$rc" "codex commit without the git dir: status"
assert_contains "$(cat "$T/out")" "it writes $common" "codex commit without the git dir"
assert_eq "$head" "$(git -C "$wt" rev-parse HEAD)" "head after the refused commit"
run_stub "$T/out" codex exec --sandbox workspace-write --add-dir "$common" - ||
	fail "codex commit with the git dir: $(cat "$T/out")"
assert_eq "stub commit" "$(git -C "$wt" log -1 --format=%s)" "the commit codex made"

# --- claude -p: Bash rules --------------------------------------------------------------------
calls <<'E'
bash git status --short
E
rc=0
run_stub "$T/out" claude -p --permission-mode acceptEdits --allowedTools "Bash(git log:*)" || rc=$?
assert_eq 1 "$rc" "claude un-allowed Bash: status"
assert_contains "$(cat "$T/out")" "permission denied: Bash(git status --short)" "claude un-allowed Bash"
run_stub "$T/out" claude -p --allowedTools "Bash(git status:*)" || fail "claude allowed Bash: $(cat "$T/out")"
# Every part of a compound command needs a rule.
calls <<E
bash git status --short && touch $T/other/touched
E
rc=0
run_stub "$T/out" claude -p --allowedTools "Bash(git status:*)" || rc=$?
assert_eq 1 "$rc" "claude compound Bash: status"
[ ! -e "$T/other/touched" ] || fail "claude ran a compound command half of which no rule allows"
run_stub "$T/out" claude -p --dangerously-skip-permissions || fail "claude bypassPermissions: $(cat "$T/out")"
[ -e "$T/other/touched" ] || fail "claude bypassPermissions did not run the command"

# --- claude -p: edits -------------------------------------------------------------------------
calls <<E
write $T/other/x.md <<X
x
X
E
rc=0
run_stub "$T/out" claude -p --permission-mode acceptEdits --add-dir "$T/pkt" || rc=$?
assert_eq 1 "$rc" "claude edit outside the working directories: status"
assert_contains "$(cat "$T/out")" "outside the working directories" "claude edit outside the working directories"
[ ! -e "$T/other/x.md" ] || fail "claude wrote outside its working directories"
calls <<E
write $T/pkt/review.md <<X
review
X
E
rc=0
run_stub "$T/out" claude -p --add-dir "$T/pkt" || rc=$?
assert_eq 1 "$rc" "claude edit in default mode without a rule: status"
assert_contains "$(cat "$T/out")" "but you haven't granted it yet" "claude edit without a rule"
run_stub "$T/out" claude -p --permission-mode plan --add-dir "$T/pkt" --allowedTools "Edit(/$T/other/**)" &&
	fail "claude wrote with an Edit rule for another directory"
run_stub "$T/out" claude -p --add-dir "$T/pkt" --allowedTools "Edit(/$T/pkt/**)" ||
	fail "claude edit with an Edit rule: $(cat "$T/out")"
assert_eq review "$(cat "$T/pkt/review.md")" "the file claude wrote"

# --- the log ----------------------------------------------------------------------------------
n=$(stub_starts "$T/stub.log" | wc -l)
[ "$n" -ge 15 ] || fail "the stand-ins logged $n invocations"
last=$(stub_starts "$T/stub.log" cli=claude | tail -n 1)
assert_eq "$wt" "$(stub_field "$last" cwd)" "logged cwd"
assert_eq "Role: t" "$(stub_field "$last" prompt | head -n 1)" "logged prompt"
assert_contains "$(stub_field "$last" argv)" "Edit(/$T/pkt/**)" "logged argv"
exit 0
