# shellcheck shell=bash
# shellcheck disable=SC2154 # role, wt, pd, learn, dirs, pfs, offline, agent: agent-stage.sh's
# examples/stages/agent-claude.sh - what agent-stage.sh needs to know about Claude Code
# (`claude -p`), sourced by it when the agent CLI is claude. Tested with Claude Code 2.1.332
# (tests/agent-clis.sh pins it; docs/agents.md says what each role may do).
#
# The interface (agent-codex.sh defines the same functions for Codex):
#   agent_cli_args            appends to the array `args` the CLI's flags for $role
#   agent_cli_env             prints NAME=VALUE lines to export before the CLI runs
#   agent_cli_transcript RAW  prints the readable transcript of the raw stream RAW
#   agent_cli_refusals RAW    prints one line per refusal in RAW: TOOL<TAB>WHAT<TAB>WHY
# They run in agent-stage.sh's shell and read its variables: role, wt, pd, learn, dirs (the
# packet and the learnings), pfs (the packetfs command) and offline (1: no traffic but the
# model's).
#
# Confinement (Claude Code's permission system; checked before each tool call):
#   every role  --tools Bash,Read,Write,Edit,Glob,Grep (no web, sub-agent, schedule or
#               notebook tools), --setting-sources user (a .claude/settings*.json committed
#               on the item branch grants nothing), --permission-prompts none (what would
#               ask is denied), --add-dir for the packet and the learnings;
#   plan        --permission-mode dontAsk: only the allow rules run: Read/Glob/Grep, Edit of
#   review      the packet and learnings ("Edit(//DIR/**)", which covers Write), Bash
#               git log/show/diff/status;
#   validate    as plan, but Bash only "packetfs record" (and "$PACKETFS record");
#   print       --permission-mode acceptEdits (file edits in the worktree, packet and
#   babysit     learnings) and Bash of the AGENT_ALLOWED_BASH commands.
# Claude Code's Bash tool is not confined to directories (its sandbox needs bubblewrap and a
# settings entry), so agent-stage.sh checks the worktree afterwards.

# claude_bash_rules : the Bash allow rules of a printer or babysitter, from AGENT_ALLOWED_BASH
# (comma-separated, or blank-separated when it has no comma) or DEFAULT_BASH, one a line.
claude_bash_rules() {
	local list=${AGENT_ALLOWED_BASH:-$DEFAULT_BASH} e entries=()
	if [[ $list == *,* ]]; then
		IFS=, read -r -a entries <<<"$list"
	else
		read -r -a entries <<<"$list"
	fi
	for e in "${entries[@]}"; do
		e=$(printf '%s' "$e" | sed 's/^[[:space:]]*//;s/[[:space:]]*$//')
		[ -n "$e" ] || continue
		case $e in
		*'('*')') printf '%s\n' "$e" ;;
		*) printf 'Bash(%s:*)\n' "$e" ;;
		esac
	done
}

# agent_cli_args : appends to `args` (which holds AGENT_CMD's words) -p unless given, the
# stream-json output, the tool set, the --add-dir's and the permission mode and allow rules
# of $role (see the table above); --strict-mcp-config when $offline is 1.
agent_cli_args() {
	local have_p=0 w d rules=()
	for w in "${agent[@]:1}"; do
		case $w in -p | --print) have_p=1 ;; esac
	done
	[ "$have_p" = 1 ] || args+=(-p)
	args+=(--output-format stream-json --verbose)
	args+=(--tools "Bash,Read,Write,Edit,Glob,Grep" --setting-sources user --permission-prompts none)
	[ "$offline" != 1 ] || args+=(--strict-mcp-config)
	for d in "${dirs[@]}"; do
		args+=(--add-dir "$d")
	done
	case $role in
	plan | review | validate)
		args+=(--permission-mode dontAsk)
		rules+=(Read Glob Grep)
		for d in "${dirs[@]}"; do
			rules+=("Edit(/$d/**)")
		done
		if [ "$role" = validate ]; then
			rules+=("Bash(packetfs record:*)")
			[ "$pfs" = packetfs ] || rules+=("Bash($pfs record:*)")
		else
			rules+=("Bash(git log:*)" "Bash(git show:*)" "Bash(git diff:*)" "Bash(git status:*)")
		fi
		;;
	print | babysit)
		args+=(--permission-mode acceptEdits)
		rules+=(Read Glob Grep)
		mapfile -t -O "${#rules[@]}" rules < <(claude_bash_rules)
		;;
	esac
	args+=(--allowedTools "${rules[@]}")
}

# agent_cli_env : prints the NAME=VALUE lines to export before claude runs: the offline
# switch's variable when $offline is 1, nothing otherwise.
agent_cli_env() {
	# Measured with 2.1.332 through a counting proxy: without it every run opens connections
	# to api.anthropic.com (metrics, feature flags, update checks); with it, none. It covers
	# DISABLE_AUTOUPDATER, DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING and DISABLE_BUG_COMMAND.
	[ "$offline" != 1 ] || echo CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
	return 0
}

# claude_stream MODE RAW : the stream-json reader behind agent_cli_transcript (MODE
# transcript) and agent_cli_refusals (MODE refusals). RAW is read line by line as it grows
# (a pipe works); a line that is not JSON is printed as it is.
claude_stream() {
	python3 -u -c "$CLAUDE_STREAM_PY" "$1" "$2"
}
# The reader itself (a variable, so that RAW may be the caller's standard input).
CLAUDE_STREAM_PY=$(cat <<'PY'
import json, sys

mode, path = sys.argv[1], sys.argv[2]
calls = {}      # tool_use_id -> (tool, what)
denied = {}     # tool_use_id -> why
final = None
result = None


def what_of(name, inp):
    if name == "Bash":
        return inp.get("command", "")
    for k in ("file_path", "notebook_path", "path", "pattern", "url"):
        if k in inp:
            return str(inp[k])
    return json.dumps(inp, sort_keys=True)


def head(text, n=6):
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    out = ["     " + l[:200] for l in lines[:n]]
    if len(lines) > n:
        out.append("     [... %d more lines]" % (len(lines) - n))
    return out


def text_of(c):
    if isinstance(c, str):
        return c
    return "\n".join(b.get("text", "") for b in c or [] if isinstance(b, dict))


def short(why):
    """The first sentence of a refusal's reason, at most 200 characters."""
    why = why.strip().split("\n")[0]
    i = why.find(". ")
    if i > 0:
        why = why[:i + 1]
    return why[:200]


def say(*lines):
    if mode == "transcript":
        for l in lines:
            print(l, flush=True)


def call_line(name, inp):
    if name == "Bash":
        return "$ " + inp.get("command", "")
    if name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        verb = "write" if name == "Write" else "edit"
        extra = " (%d bytes)" % len(inp.get("content", "")) if name == "Write" else ""
        return "%s %s%s" % (verb, what_of(name, inp), extra)
    return "%s %s" % (name.lower(), what_of(name, inp))


f = open(path, encoding="utf-8", errors="replace")
while True:
    line = f.readline()
    if not line:
        break
    s = line.strip()
    if not s:
        continue
    try:
        o = json.loads(s)
    except ValueError:
        o = None
    if not isinstance(o, dict):
        say(s)
        continue
    t = o.get("type")
    if t == "system" and o.get("subtype") == "init":
        say("claude %s: model %s, permission mode %s, cwd %s" % (
            o.get("claude_code_version", "?"), o.get("model", "?"),
            o.get("permissionMode", "?"), o.get("cwd", "?")))
    elif t == "system" and o.get("subtype") == "permission_denied":
        denied[o.get("tool_use_id")] = o.get("message") or o.get("decision_reason") or "denied"
    elif t == "assistant":
        for b in (o.get("message") or {}).get("content") or []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                inp = b.get("input") or {}
                calls[b.get("id")] = (b.get("name", "?"), what_of(b.get("name", ""), inp))
                say(call_line(b.get("name", "?"), inp))
            elif b.get("type") == "text" and b.get("text", "").strip():
                final = b["text"]
    elif t == "user":
        c = (o.get("message") or {}).get("content")
        for b in c if isinstance(c, list) else []:
            if not isinstance(b, dict) or b.get("type") != "tool_result":
                continue
            tid = b.get("tool_use_id")
            text = text_of(b.get("content"))
            tool, what = calls.get(tid, ("?", "?"))
            if tid in denied:
                denied[tid] = text.split("\n")[0] if text.strip() else denied[tid]
                say("REFUSED: %s: %s: %s" % (tool, what, short(denied[tid])))
            elif b.get("is_error"):
                first, _, rest = text.partition("\n")
                if first.startswith("Exit code "):
                    say("  -> exit %s" % first[len("Exit code "):], *head(rest))
                else:
                    say("  -> error", *head(text))
            else:
                say("  -> %s" % ("exit 0" if tool == "Bash" else "ok"), *head(text, 4 if tool == "Bash" else 1))
    elif t == "result":
        result = o

refusals = []
seen = set()
if result is not None:
    for d in result.get("permission_denials") or []:
        tid = d.get("tool_use_id")
        name = d.get("tool_name", "?")
        refusals.append((name, what_of(name, d.get("tool_input") or {}), denied.get(tid, "denied")))
        seen.add(tid)
for tid, why in denied.items():
    if tid not in seen:
        tool, what = calls.get(tid, ("?", "?"))
        refusals.append((tool, what, why))

if mode == "refusals":
    for r in refusals:
        tool, what, why = r
        print("\t".join(x.replace("\t", " ").replace("\n", " ") for x in (tool, what, short(why))))
    sys.exit(0)
if result is None:
    say("claude: the stream has no result (the CLI ended early)")
else:
    if result.get("is_error"):
        say("claude: error: %s" % (result.get("result") or result.get("subtype") or "?"))
    say("claude: %s turns, %d refusal(s), %s" % (result.get("num_turns", "?"), len(refusals),
                                               result.get("terminal_reason") or result.get("subtype")))
    if isinstance(result.get("result"), str):
        final = result["result"]
if final is not None:
    say("final:", *["  " + l for l in final.rstrip("\n").split("\n")])
PY
)

# agent_cli_transcript RAW : prints the readable transcript of the stream-json file RAW as it
# grows (RAW may be /dev/stdin): the init line, "$ COMMAND" / "write PATH (N bytes)" /
# "edit PATH" / "read PATH" per tool call, then "  -> exit N" or "  -> ok" and a few lines of
# output, "REFUSED: TOOL: WHAT: WHY" per refusal, a summary line and "final:" with the
# closing message. Status 0.
agent_cli_transcript() { claude_stream transcript "$1"; }
# agent_cli_refusals RAW : prints one line per refusal in RAW (the result's
# permission_denials, and permission_denied events when the stream has no result):
# TOOL<TAB>WHAT (the command or path)<TAB>WHY (the first sentence of the reason). Status 0.
agent_cli_refusals() { claude_stream refusals "$1"; }

# agent_cli_failed RAW : true (0) when the CLI's own result in RAW says the run failed
# (is_error: an API error, a turn or budget limit), printing why; false when it did not.
agent_cli_failed() {
	python3 - "$1" <<'PY'
import json, sys
res = None
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if isinstance(o, dict) and o.get("type") == "result":
        res = o
if res is not None and res.get("is_error"):
    print((res.get("result") or res.get("subtype") or "error").split("\n")[0][:300])
    sys.exit(0)
sys.exit(1)
PY
}
