# shellcheck shell=bash
# shellcheck disable=SC2154 # role, wt, pd, gitdir, dirs, offline, args: agent-stage.sh's
# examples/stages/agent-codex.sh - what agent-stage.sh needs to know of the Codex CLI
# (`codex exec`, tested with @openai/codex 0.171.0); sourced by agent-stage.sh, not a program.
#
# Confinement (docs/agents.md has the table): every role runs under
# `--sandbox workspace-write` with approval "never" (exec's default), which Codex enforces
# with bubblewrap (its own bwrap; it needs unprivileged user namespaces) and seccomp: writes
# outside the writable roots fail with "Read-only file system"; the commands get a network
# namespace of their own (loopback only) and may not open network sockets.
#   plan, review, validate  cwd = the packet (--cd $pd --skip-git-repo-check), so the worktree
#                           is not a writable root; /tmp and $TMPDIR are excluded too
#                           (sandbox_workspace_write.exclude_slash_tmp, exclude_tmpdir_env_var):
#                           the writable roots are the packet and the learnings only.
#   print, babysit          cwd = the worktree; writable roots: the worktree, the packet, the
#                           learnings, the git common dir and the worktree's own git dir (both:
#                           git commit takes index.lock in the latter and writes objects in the
#                           former) and a temporary directory of the run's own, its TMPDIR
#                           (compilers put their temporaries there); not /tmp.
# Codex has no command allow-list in exec, so the validator's "only packetfs record" rule is
# checked afterwards from the session (agent_cli_verify).
#
# Output: `codex exec --json` prints JSON lines (thread.started, item.completed with items
# command_execution, file_change, agent_message, error, turn.completed / turn.failed). Codex
# 0.171 may leave out of that stream a tool call its sandbox refused (a command that failed
# with a sandbox denial, a patch "rejected by user approval settings"); its session file
# ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-THREAD.jsonl) has them all, as the Responses
# API items function_call / custom_tool_call and their outputs. So the transcript and the
# refusals are read from that session file when it exists (agent_cli_transcript copies it
# beside RAW as RAW's name with .session.jsonl for .jsonl), from RAW otherwise.

# agent_cli_args : appends to the array `args` what follows the CLI's own words for $role:
# exec (unless AGENT_CMD has it), --json, the working directory, the sandbox, the writable
# roots, the offline switches when $offline is 1, and "-" (the prompt on stdin).
# The transcript is read after the run, from the session file (see above), not live.
# shellcheck disable=SC2034 # read by agent-stage.sh
agent_cli_live=0

agent_cli_args()
{
	local w have_exec=0 d owngit
	for w in "${args[@]:1}"; do
		case $w in exec | e) have_exec=1 ;; esac
	done
	[ "$have_exec" = 1 ] || args+=(exec)
	args+=(--json --sandbox workspace-write)
	case $role in
	plan | review | validate)
		args+=(--cd "$pd" --skip-git-repo-check
			-c sandbox_workspace_write.exclude_slash_tmp=true
			-c sandbox_workspace_write.exclude_tmpdir_env_var=true)
		for d in "${dirs[@]}"; do
			[ "$d" = "$pd" ] || args+=(--add-dir "$d")
		done
		;;
	print | babysit)
		owngit=$(git -C "$wt" rev-parse --absolute-git-dir)
		# A temporary directory of the run's own instead of /tmp and $TMPDIR (compilers and
		# tests need one): agent_cli_env makes it TMPDIR, agent_cli_cleanup removes it.
		codex_tmp=$(mktemp -d "${TMPDIR:-/tmp}/agent-codex.XXXXXX")
		args+=(--cd "$wt" --add-dir "$codex_tmp"
			-c sandbox_workspace_write.exclude_slash_tmp=true
			-c sandbox_workspace_write.exclude_tmpdir_env_var=true)
		for d in "${dirs[@]}"; do
			args+=(--add-dir "$d")
		done
		args+=(--add-dir "$gitdir")
		[ "$owngit" = "$gitdir" ] || args+=(--add-dir "$owngit")
		# The commands' network: only with the offline switch off.
		[ "$offline" = 1 ] || args+=(-c sandbox_workspace_write.network_access=true)
		;;
	esac
	if [ "$offline" = 1 ]; then
		# Measured with 0.171.0: the plugin sync reaches github.com, api.github.com and
		# chatgpt.com at start-up, analytics ab.chatgpt.com; feedback is sent only on
		# request (off all the same); web search is a tool the model endpoint runs on the web.
		args+=(--disable plugins -c analytics.enabled=false -c feedback.enabled=false
			-c web_search=disabled)
	fi
	args+=(-)
}

# agent_cli_env : prints the NAME=VALUE lines of environment codex needs: for print and
# babysit, TMPDIR=the run's temporary directory (codex_tmp, made by agent_cli_args); nothing
# else (the model provider and credentials are the user's $CODEX_HOME/config.toml).
agent_cli_env()
{
	[ -z "${codex_tmp:-}" ] || printf 'TMPDIR=%s\n' "$codex_tmp"
}

# agent_cli_cleanup : removes what agent_cli_args made for the run (its temporary
# directory); agent-stage.sh calls it once the CLI has exited.
agent_cli_cleanup()
{
	[ -z "${codex_tmp:-}" ] || rm -rf "$codex_tmp"
	codex_tmp=""
}

# codex_session RAW : prints the path of the session file of the thread RAW started, when
# it can be found under ${CODEX_HOME:-$HOME/.codex}/sessions; nothing otherwise.
codex_session()
{
	local id home=${CODEX_HOME:-${HOME:-}/.codex}
	id=$(sed -n 's/.*"type":"thread\.started","thread_id":"\([^"]*\)".*/\1/p' "$1" | head -n 1)
	[ -n "$id" ] && [ -d "$home/sessions" ] || return 0
	find "$home/sessions" -name "rollout-*-$id.jsonl" -type f 2>/dev/null | head -n 1
}

# codex_read MODE RAW : the reader of RAW (and of its session file, copied beside RAW when
# found); MODE transcript | refusals | verify (see the functions below).
codex_read()
{
	local raw=$2 s copy=${2%.jsonl}.session.jsonl
	s=$(codex_session "$raw")
	if [ -n "$s" ] && [ ! -e "$copy" ]; then
		cp "$s" "$copy" 2>/dev/null || copy=$s
	fi
	[ -e "$copy" ] || copy=""
	python3 - "$1" "$raw" "$copy" "${role:-}" "${pfs:-packetfs}" <<'PY'
import json, os, re, shlex, sys

mode, raw, session, role, pfs = sys.argv[1:6]
SHOWN = 6  # output lines shown per call
REFUSED = re.compile(r"Read-only file system|Operation not permitted|rejected by user approval "
                     r"settings|patch rejected|sandbox denied|Network is unreachable|"
                     r"Couldn't connect to server|"
                     r"Could not resolve host", re.I)


def lines(path):
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for l in f:
                try:
                    out.append(json.loads(l))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def patch_files(patch):
    return re.findall(r"^\*\*\* (Add|Update|Delete) File: (.*)$", patch or "", re.M)


def call_of(item):
    """(tool, what, command-or-None, [edit lines]) of a function_call/custom_tool_call."""
    name = item.get("name", "?")
    if item.get("type") == "custom_tool_call":
        body = item.get("input", "")
        a = {}
    else:
        try:
            a = json.loads(item.get("arguments") or "{}")
        except ValueError:
            a = {}
        body = a.get("input", "") if isinstance(a, dict) else ""
    if name == "apply_patch":
        fl = patch_files(body)
        return name, ", ".join(p for _, p in fl) or "(no file)", None, [
            "edit %s (%s)" % (p, k.lower()) for k, p in fl]
    cmd = None
    if isinstance(a, dict):
        c = a.get("cmd", a.get("command"))
        if isinstance(c, list):
            c = " ".join(shlex.quote(x) for x in c)
            c = re.sub(r"^(/bin/)?(ba)?sh -l?c ", "", c)
        cmd = c
        if cmd and a.get("workdir"):
            cmd = "(in %s) %s" % (a["workdir"], cmd)
    if cmd is not None:
        return name, cmd, cmd, ["$ " + cmd]
    return name, json.dumps(a)[:200], None, ["tool %s %s" % (name, json.dumps(a)[:200])]


def outcome(text):
    """(status word, output lines) of a tool output."""
    if isinstance(text, list):
        text = "\n".join(x.get("text", "") for x in text if isinstance(x, dict))
    if not isinstance(text, str):
        text = json.dumps(text)
    try:
        j = json.loads(text)
        if isinstance(j, dict) and "output" in j:
            text = j["output"]
            if isinstance(j.get("metadata"), dict) and "exit_code" in j["metadata"]:
                text = "Process exited with code %s\nOutput:\n%s" % (j["metadata"]["exit_code"], text)
    except ValueError:
        pass
    m = re.search(r"Process exited with code (-?\d+)", text)
    status = "exit %s" % m.group(1) if m else None
    body = text.split("\nOutput:\n", 1)[1] if "\nOutput:\n" in text else text
    if status is None:
        status = "done"
    return status, [l for l in body.splitlines() if l.strip()]


def from_session(items):
    """Events from the session file: ("call", ...), ("note", text), ("final", text)."""
    ev, calls = [], {}
    for o in items:
        if o.get("type") != "response_item":
            continue
        p = o.get("payload") or {}
        t = p.get("type")
        if t in ("function_call", "custom_tool_call", "local_shell_call"):
            if t == "local_shell_call":
                c = (p.get("action") or {}).get("command") or []
                p = {"type": "function_call", "name": "shell", "call_id": p.get("call_id"),
                     "arguments": json.dumps({"command": c})}
            e = {"kind": "call", "call": call_of(p), "status": None, "out": []}
            calls[p.get("call_id")] = e
            ev.append(e)
        elif t in ("function_call_output", "custom_tool_call_output"):
            e = calls.get(p.get("call_id"))
            if e is not None:
                e["status"], e["out"] = outcome(p.get("output"))
        elif t == "message" and p.get("role") == "assistant":
            text = "\n".join(c.get("text", "") for c in p.get("content") or [] if isinstance(c, dict))
            ev.append({"kind": "message", "text": text})
    return ev


def from_stream(items):
    ev = []
    for o in items:
        t = o.get("type")
        it = o.get("item") or {}
        if t == "item.completed" and it.get("type") == "command_execution":
            cmd = re.sub(r"^(/bin/)?(ba)?sh -l?c ", "", it.get("command", ""))
            try:
                w = shlex.split(cmd)
                if len(w) == 1:
                    cmd = w[0]
            except ValueError:
                pass
            ev.append({"kind": "call", "call": ("exec_command", cmd, cmd, ["$ " + cmd]),
                       "status": "exit %s" % it.get("exit_code"),
                       "out": [l for l in (it.get("aggregated_output") or "").splitlines() if l.strip()]})
        elif t == "item.completed" and it.get("type") == "file_change":
            ch = it.get("changes") or []
            ev.append({"kind": "call", "call": ("apply_patch", ", ".join(c.get("path", "?") for c in ch), None,
                                                ["edit %s (%s)" % (c.get("path"), c.get("kind")) for c in ch]),
                       "status": it.get("status", "?"), "out": []})
        elif t == "item.completed" and it.get("type") == "mcp_tool_call":
            ev.append({"kind": "call", "call": ("mcp", "%s %s" % (it.get("server"), it.get("tool")), None,
                                                ["tool %s.%s" % (it.get("server"), it.get("tool"))]),
                       "status": it.get("status", "?"), "out": []})
        elif t == "item.completed" and it.get("type") == "web_search":
            ev.append({"kind": "call", "call": ("web_search", it.get("query", ""), None,
                                                ["web search: %s" % it.get("query", "")]),
                       "status": "done", "out": []})
        elif t == "item.completed" and it.get("type") == "agent_message":
            ev.append({"kind": "message", "text": it.get("text", "")})
    return ev


def notes(items):
    """Errors the stream reports: error items, error events, a failed turn."""
    out = []
    for o in items:
        t = o.get("type")
        it = o.get("item") or {}
        if t == "item.completed" and it.get("type") == "error":
            if not REFUSED.search(it.get("message", "")):  # those are REFUSED lines
                out.append("note: " + it.get("message", ""))
        elif t == "error":
            out.append("error: " + o.get("message", ""))
        elif t == "turn.failed":
            out.append("turn failed: " + ((o.get("error") or {}).get("message") or "?"))
    return out


def refusal(e):
    for l in e["out"]:
        if REFUSED.search(l):
            return l.strip()
    return None


stream = lines(raw)
ses = lines(session) if session else []
events = from_session(ses) if ses else from_stream(stream)
calls = [e for e in events if e["kind"] == "call"]
final = [e["text"] for e in events if e["kind"] == "message"]

# Error items of the stream that report a refusal (no tool call of their own).
stream_refusals = [o["item"].get("message", "") for o in stream
                   if o.get("type") == "item.completed" and (o.get("item") or {}).get("type") == "error"
                   and REFUSED.search(o["item"].get("message", ""))]

if mode == "refusals":
    for e in calls:
        why = refusal(e)
        if why:
            print("%s\t%s\t%s" % (e["call"][0], e["call"][1].replace("\n", " ").replace("\t", " "),
                                  why.replace("\t", " ")))
    for m in stream_refusals:
        print("codex\t%s\t" % m.replace("\n", " ").replace("\t", " "))
    sys.exit(0)

if mode == "verify":
    # The validator may run `packetfs record` and commands that only read.
    READERS = {"cat", "head", "tail", "ls", "grep", "rg", "wc", "nl", "pwd", "echo", "printf",
               "cd", "stat", "file", "diff", "cmp", "sort", "uniq", "cut", "jq", "true", "test",
               "[", "sed", "find", "awk", "tr", "column", "less", "more", "basename", "dirname"}
    GIT_READ = {"log", "show", "diff", "status", "rev-parse", "ls-files", "cat-file", "blame",
                "grep", "branch", "describe", "shortlog", "merge-base", "ls-tree"}
    if role != "validate":
        sys.exit(0)
    for e in calls:
        cmd = e["call"][2]
        if cmd is None:
            continue
        cmd = re.sub(r"^\(in [^)]*\) ", "", cmd)
        bad = None
        cmd = re.sub(r"\s(\d?>&\d|&?\d?>\s*/dev/null)", " ", cmd)
        for part in re.split(r"&&|\|\||[;|\n]", cmd):
            try:
                w = shlex.split(part)
            except ValueError:
                w = part.split()
            while w and re.match(r"^\w+=", w[0]):
                w = w[1:]
            if not w:
                continue
            w[0] = os.path.expandvars(w[0])
            prog = w[0].rsplit("/", 1)[-1]
            if (prog == "packetfs" or w[0] == pfs) and "record" in w[1:3]:
                continue
            if prog == "git" and len(w) > 1 and w[1] in GIT_READ:
                continue
            if prog in READERS and not (prog == "sed" and "-i" in w) and \
                    not (prog == "find" and ({"-delete", "-exec", "-execdir"} & set(w))) and \
                    not any(x in part for x in (">", "tee ")):
                continue
            bad = part.strip()
            break
        if bad:
            print("%s (%s): not `%s record`" % (cmd.replace("\n", " "), e["status"] or "not run", pfs))
    sys.exit(0)

# transcript
for n in notes(stream):
    print(n)
for m in stream_refusals:
    print("REFUSED: codex: %s" % m.replace("\n", " "))
for e in calls:
    for l in e["call"][3]:
        print(l)
    st = e["status"] or "no result"
    why = refusal(e)
    print("  -> %s" % st)
    for l in e["out"][:SHOWN]:
        print("     " + l)
    if len(e["out"]) > SHOWN:
        print("     [... %d more lines]" % (len(e["out"]) - SHOWN))
    if why:
        print("REFUSED: %s: %s: %s" % (e["call"][0], e["call"][1].replace("\n", " "), why))
print("final:")
for l in (final[-1] if final else "(no final message)").splitlines() or [""]:
    print("  " + l)
PY
}

# agent_cli_transcript RAW : prints the readable transcript of the run whose `codex exec
# --json` output is the file RAW: notes and errors of the stream, then per tool call
# "$ COMMAND" or "edit PATH (add|update|delete)", "  -> exit N" (or the patch's status) and up
# to 6 lines of its output, "REFUSED: TOOL: WHAT: WHY" after a call the sandbox refused, and
# the last message of the agent under "final:". Copies the session file beside RAW.
agent_cli_transcript()
{
	codex_read transcript "$1"
}

# agent_cli_refusals RAW : one line "TOOL<tab>WHAT<tab>WHY" per tool call the sandbox refused
# (its output says "Read-only file system", "Operation not permitted", a rejected patch, a
# network that cannot be reached); nothing when none.
agent_cli_refusals()
{
	codex_read refusals "$1"
}

# agent_cli_verify RAW : what codex cannot prevent for $role, found afterwards: for validate,
# one line per command that is not `$pfs record` or a command that only reads (cat, ls,
# grep, git log/show/diff/status, ...); nothing for the other roles or when all is well.
agent_cli_verify()
{
	codex_read verify "$1"
}
