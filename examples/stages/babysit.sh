#!/usr/bin/env bash
# babysit.sh - the example babysitter: a rounds stage after publish that watches the pull
# request open-pr.sh opened until it is settled (CI green, every review thread answered).
#
#   {"name": "babysit", "run": ["/abs/examples/stages/babysit.sh"],
#    "rounds": {"every_s": 600, "max": 12}, "env": {"GH_REPO": "OWNER/REPO"}}
#
# One run is one round, number $PACKET_ROUND (unset: the next free number). cwd = the item
# directory on the mount. A round
#
#   1. reads the pull request's number from pull-request.json (written by open-pr.sh);
#   2. polls CI, gh pr checks N --json name,state,bucket,link, every $BABYSIT_POLL_S seconds
#      (default 30) until the set of (name, bucket) has been the same for
#      $BABYSIT_SETTLE_POLLS consecutive polls (default 3); after $BABYSIT_MAX_POLLS polls
#      (default 20) without that, it writes the round file and exits 75;
#   3. lists the open review threads: gh api repos/{owner}/{repo}/pulls/N/comments; a
#      thread is a top-level review comment; it is open when its last message is not the
#      babysitter's. The babysitter's messages are those whose body starts with the marker
#      line "<!-- packetfs-babysit -->" (hidden on GitHub), or whose author's login is
#      $BABYSIT_LOGIN when that is set;
#   4. writes rounds/round-N.md: the checks, each failing one with its link, each open thread
#      with its id, path:line, author, body and replies;
#   5. when a check fails or a thread is open, runs the agent for the role babysit (below),
#      then replies to each thread with the agent's answer,
#        gh api -X POST repos/{owner}/{repo}/pulls/N/comments/ID/replies -f body=...
#      as "<!-- packetfs-babysit -->\nVerdict: accepted — Action: ...";
#   6. appends a round summary to rounds/round-N.md (replies, commits, outcome).
#
# The agent: ${BABYSIT_AGENT:-<this directory>/agent-stage.sh} (split on white space, e.g.
# "bash /abs/fix.sh"), run with cwd = the item directory, stdin /dev/null and the stage's
# environment plus AGENT_ROLE=babysit, PACKET_ROUND, BABYSIT_ROUND_FILE=rounds/round-N.md,
# BABYSIT_ANSWERS_FILE=rounds/round-N-answers.json, BABYSIT_PR_NUMBER, BABYSIT_PR_URL. It
# reads the round file, may fix failing checks or accepted threads by committing on the item
# branch in $PACKET_WORKTREE (everything committed; the engine runs the plan's recipes at
# the new head and pushes it only when they validate), and writes the answers file: a JSON
# array (or JSON Lines) with one object per open thread,
#   {"thread": ID, "verdict": "accepted" | "declined", "action": "what was done, or why not"}
# and exits 0. A thread it leaves without an answer is an error of the round.
#
# gh runs in $PACKET_WORKTREE unless GH_REPO names the repository (as in open-pr.sh); GH
# names another gh command. Exit status: 0 settled (every check passed or was skipped, no
# open thread, nothing committed this round); 75 not settled yet (CI pending or failing or
# not steady, threads answered or commits made this round: a push and new CI follow); 1 on
# an error, with "babysit.sh: what: why".
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GH=${GH:-gh}
POLL_S=${BABYSIT_POLL_S:-30}
MAX_POLLS=${BABYSIT_MAX_POLLS:-20}
SETTLE_POLLS=${BABYSIT_SETTLE_POLLS:-3}
MARKER='<!-- packetfs-babysit -->'
read -r -a agent <<<"${BABYSIT_AGENT:-$(dirname "$0")/agent-stage.sh}"
[[ $MAX_POLLS =~ ^[1-9][0-9]*$ ]] || die "BABYSIT_MAX_POLLS: not a positive number: $MAX_POLLS"
[[ $SETTLE_POLLS =~ ^[1-9][0-9]*$ ]] || die "BABYSIT_SETTLE_POLLS: not a positive number: $SETTLE_POLLS"
command -v "$GH" >/dev/null 2>&1 ||
	die "$GH: not found (install GitHub CLI, https://cli.github.com, or set GH)"
[ -r pull-request.json ] || die "pull-request.json: not readable in $PWD (did open-pr.sh publish?)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The JSON work, one small program: bs.py COMMAND ARG...
cat >"$tmp/bs.py" <<'PY'
import json, sys

def load(path):
    """A JSON document, or several in a row (gh api --paginate prints one array a page)."""
    text, docs, i = open(path, encoding="utf-8").read(), [], 0
    dec = json.JSONDecoder()
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        doc, i = dec.raw_decode(text, i)
        docs.append(doc)
    if len(docs) == 1:
        return docs[0]
    return [x for d in docs for x in (d if isinstance(d, list) else [d])]

def one_line(s):
    return " ".join(str(s).split())

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "pr":  # pull-request.json -> "NUMBER URL"
    o = load(args[0])
    print(int(o["number"]), o.get("url", ""))
elif cmd == "signature":  # checks.json -> sorted "name bucket" lines
    print("\n".join(sorted("%s\t%s" % (c["name"], c["bucket"]) for c in load(args[0]))))
elif cmd == "threads":  # comments.json MARKER LOGIN -> open threads as JSON
    comments, marker, login = load(args[0]), args[1], args[2]
    mine = lambda c: c.get("body", "").startswith(marker) or bool(
        login and (c.get("user") or {}).get("login") == login)
    threads = []
    for top in comments:
        if top.get("in_reply_to_id") or mine(top):
            continue
        replies = [dict(c, babysitter=mine(c), body=c.get("body", "").replace(marker, ""))
                   for c in comments if c.get("in_reply_to_id") == top["id"]]
        last = max([top] + replies, key=lambda c: (c.get("created_at", ""), c["id"]))
        if not last.get("babysitter") and not mine(last):
            threads.append(dict(top, replies=replies))
    print(json.dumps(threads))
elif cmd == "round":  # checks.json threads.json N URL HEAD POLLS STEADY -> round-N.md
    checks, threads = load(args[0]), load(args[1])
    n, url, head, polls, steady = args[2:7]
    login = lambda c: (c.get("user") or {}).get("login", "?")
    L = ["# Round %s: pull request %s" % (n, url), "",
         "Head `%s`. CI polled %s times: %s." % (head or "?", polls, steady), "", "## Checks", ""]
    if checks:
        L += ["| Check | State | Bucket | Link |", "|---|---|---|---|"]
        L += ["| %s | %s | %s | %s |" % (c["name"], c.get("state", ""), c["bucket"],
                                         c.get("link", "")) for c in checks]
    else:
        L.append("No checks reported.")
    L += ["", "## Failing checks", ""]
    L += ["- %s (%s): %s" % (c["name"], c.get("state", ""), c.get("link", ""))
          for c in checks if c["bucket"] in ("fail", "cancel")] or ["None."]
    L += ["", "## Open review threads", ""]
    for t in threads:
        L += ["### Thread %s: %s:%s (%s)" % (t["id"], t.get("path", "?"), t.get("line") or "?",
                                             login(t)), ""]
        L += ["> " + l for l in t.get("body", "").splitlines()] + [""]
        L += ["- reply by %s%s: %s" % (login(r), " (the babysitter)" if r["babysitter"] else "",
                                       one_line(r["body"])) for r in t["replies"]]
        L += [""] if t["replies"] else []
    if threads:
        L += ["Answer every thread in rounds/round-%s-answers.json, a JSON array of" % n,
              '{"thread": ID, "verdict": "accepted" | "declined", "action": "..."}.']
    else:
        L.append("None.")
    print("\n".join(L))
elif cmd == "answers":  # answers.json threads.json -> "ID<TAB>reply text" lines, or exit 2
    threads = load(args[1])
    try:
        text = open(args[0], encoding="utf-8").read()
        try:
            answers = json.loads(text)
        except ValueError:
            answers = [json.loads(l) for l in text.splitlines() if l.strip()]
    except (OSError, ValueError) as e:
        sys.exit("%s: %s" % (args[0], e))
    answers = answers if isinstance(answers, list) else [answers]
    by_id = {}
    for a in answers:
        if not isinstance(a, dict) or "thread" not in a:
            sys.exit("%s: not an answer object: %s" % (args[0], json.dumps(a)))
        if a.get("verdict") not in ("accepted", "declined"):
            sys.exit("%s: thread %s: verdict %r is neither accepted nor declined"
                     % (args[0], a["thread"], a.get("verdict")))
        if not one_line(a.get("action", "")):
            sys.exit("%s: thread %s: no action" % (args[0], a["thread"]))
        by_id[str(a["thread"])] = a
    missing = [t for t in threads if str(t["id"]) not in by_id]
    if missing:
        sys.exit("%s: no answer for thread %s" % (args[0], ", ".join(
            "%s (%s:%s)" % (t["id"], t.get("path", "?"), t.get("line") or "?") for t in missing)))
    for t in threads:
        a = by_id[str(t["id"])]
        print("%s\t%s\tVerdict: %s \u2014 Action: %s" % (t["id"], a["verdict"], a["verdict"],
                                                     one_line(a["action"])))
elif cmd == "field":  # FILE KEY
    print(load(args[0])[args[1]])
elif cmd == "count":  # FILE: the length of its list
    print(len(load(args[0])))
PY
bs() { python3 "$tmp/bs.py" "$@"; }

worktree_head() {
	if [ -d "${PACKET_WORKTREE:-}" ]; then git -C "$PACKET_WORKTREE" rev-parse HEAD; fi
}

read -r number url < <(bs pr pull-request.json 2>"$tmp/err") ||
	die "pull-request.json: no pull request number in it ($(err_text))"
mkdir -p rounds
round=${PACKET_ROUND:-}
if [ -z "$round" ]; then
	round=1
	while [ -e "rounds/round-$round.md" ]; do round=$((round + 1)); done
fi
round_file=rounds/round-$round.md
answers_file=rounds/round-$round-answers.json
head_before=$(worktree_head) || die "$PACKET_WORKTREE: cannot read the head commit"
say "round $round: pull request #$number ($url), head ${head_before:-?}"
summary=()

# --- evidence of a head a round pushed -------------------------------------------------------
# The engine pushes a round's commits only once the plan's recipes validated them: when the
# pull request's head is the worktree's and not the head pull-request.json has evidence
# posted for, post the evidence of this head and record it.
posted=$(bs field pull-request.json head 2>/dev/null || true)
if [ -n "$head_before" ] && [ "$posted" != "$head_before" ] &&
	gh_ pr view "$number" --json headRefOid >"$tmp/view.json" &&
	[ "$(bs field "$tmp/view.json" headRefOid 2>/dev/null)" = "$head_before" ]; then
	{
		printf 'Evidence at `%s`, the head a babysitting round committed; packetfs ran the ' "$head_before"
		printf "plan's recipes there before pushing it.\n\n"
		if [ -s validation/evidence.md ]; then cat validation/evidence.md; else
			printf 'validation/evidence.md: none in the packet.\n'; fi
	} >"$tmp/evidence.md"
	ev_url=$(gh_ pr comment "$number" --body-file "$tmp/evidence.md") ||
		die "gh pr comment $number: $(err_text)"
	python3 -c 'import json, sys
o = json.load(open("pull-request.json")); o["head"] = sys.argv[1]
open("pull-request.json.tmp", "w").write(json.dumps(o) + "\n")' "$head_before" &&
		mv pull-request.json.tmp pull-request.json || die "pull-request.json: cannot record the head"
	say "posted the evidence of $head_before: $ev_url"
	summary+=("Posted the evidence of $head_before: $ev_url.")
fi

# --- CI: poll until the set of (name, bucket) holds still ---------------------------------
polls=0 same=0 prev="" steady=0
while :; do
	polls=$((polls + 1))
	if gh_ pr checks "$number" --json name,state,bucket,link >"$tmp/checks.json"; then
		:
	elif grep -q 'no checks reported' "$tmp/err"; then
		echo '[]' >"$tmp/checks.json"
	else
		die "gh pr checks $number: $(err_text)"
	fi
	sig=$(bs signature "$tmp/checks.json") || die "gh pr checks $number: unreadable JSON"
	if [ "$polls" -gt 1 ] && [ "$sig" = "$prev" ]; then same=$((same + 1)); else same=1; fi
	prev=$sig
	say "poll $polls/$MAX_POLLS: $(printf '%s\n' "$sig" | tr '\t\n' ': ' | sed 's/ $//')"
	if [ "$same" -ge "$SETTLE_POLLS" ]; then
		steady=1
		break
	fi
	[ "$polls" -lt "$MAX_POLLS" ] || break
	sleep "$POLL_S"
done
buckets=$(printf '%s\n' "$sig" | cut -f2)
failing=$(printf '%s\n' "$buckets" | grep -cx 'fail\|cancel' || true)
pending=$(printf '%s\n' "$buckets" | grep -cx 'pending' || true)

# --- review threads --------------------------------------------------------------------------
gh_ api --paginate "repos/{owner}/{repo}/pulls/$number/comments" >"$tmp/comments.json" ||
	die "gh api repos/{owner}/{repo}/pulls/$number/comments: $(err_text)"
bs threads "$tmp/comments.json" "$MARKER" "${BABYSIT_LOGIN:-}" >"$tmp/threads.json" ||
	die "gh api repos/{owner}/{repo}/pulls/$number/comments: unreadable JSON"
open_threads=$(bs count "$tmp/threads.json")

if [ "$steady" = 1 ]; then
	ci_words="the same for the last $SETTLE_POLLS polls, every ${POLL_S} s"
else
	ci_words="not steady after $polls polls, every ${POLL_S} s"
fi
bs round "$tmp/checks.json" "$tmp/threads.json" "$round" "$url" "$head_before" "$polls" \
	"$ci_words" >"$tmp/round.md"
cat "$tmp/round.md" >"$round_file"
say "wrote $round_file: $failing failing, $pending pending, $open_threads open threads"

if [ "$steady" = 0 ]; then
	summary+=("CI did not hold still in $polls polls; threads wait for the next round.")
elif [ "$failing" -gt 0 ] || [ "$open_threads" -gt 0 ]; then
	# --- the agent --------------------------------------------------------------------------
	rm -f "$answers_file"
	say "running the agent: ${agent[*]} (AGENT_ROLE=babysit)"
	rc=0
	AGENT_ROLE=babysit PACKET_ROUND=$round BABYSIT_ROUND_FILE=$round_file \
		BABYSIT_ANSWERS_FILE=$answers_file BABYSIT_PR_NUMBER=$number BABYSIT_PR_URL=$url \
		"${agent[@]}" </dev/null || rc=$?
	[ "$rc" = 0 ] || die "${agent[*]}: the agent exited with status $rc"
	summary+=("The agent (${agent[*]}) ran for $failing failing checks and $open_threads open threads.")
	if [ "$open_threads" -gt 0 ]; then
		[ -e "$answers_file" ] || die "$answers_file: the agent wrote no answers ($open_threads open threads)"
		bs answers "$answers_file" "$tmp/threads.json" >"$tmp/answers.tsv" 2>"$tmp/err" ||
			die "$(err_text)"
		while IFS=$'\t' read -r id verdict text; do
			gh_ api -X POST "repos/{owner}/{repo}/pulls/$number/comments/$id/replies" \
				-f "body=$MARKER"$'\n'"$text" >"$tmp/reply.json" ||
				die "gh api .../pulls/$number/comments/$id/replies: $(err_text)"
			reply_url=$(bs field "$tmp/reply.json" html_url 2>/dev/null || echo "?")
			say "thread $id: $verdict; replied $reply_url"
			summary+=("Thread $id: $verdict; replied $reply_url.")
		done <"$tmp/answers.tsv"
	fi
fi

head_after=$(worktree_head) || die "$PACKET_WORKTREE: cannot read the head commit"
if [ "$head_after" != "$head_before" ]; then
	commits=$(git -C "$PACKET_WORKTREE" log --format='%h %s' "$head_before..$head_after" | paste -sd ';' -)
	summary+=("Committed this round: $commits (the engine runs the plan's recipes at $head_after and pushes it when they validate).")
fi
if [ -d "${PACKET_WORKTREE:-}" ] && [ -n "$(git -C "$PACKET_WORKTREE" status --porcelain)" ]; then
	summary+=("Uncommitted changes are left in the worktree: $(git -C "$PACKET_WORKTREE" status --porcelain | paste -sd ' ' -).")
fi

why=()
[ "$steady" = 1 ] || why+=("CI is not steady")
plural() { [ "$1" = 1 ] && printf '%s %s' "$1" "$2" || printf '%s %ss' "$1" "$2"; }
[ "$pending" = 0 ] || why+=("$(plural "$pending" check) pending")
[ "$failing" = 0 ] || why+=("$(plural "$failing" check) failing")
[ "$open_threads" = 0 ] || why+=("$(plural "$open_threads" thread) answered this round")
[ "$head_after" = "$head_before" ] || why+=("new commits")
if [ "${#why[@]}" = 0 ]; then
	outcome="settled: every check passed, no open thread, nothing committed"
	status=0
else
	outcome="not settled: $(printf '%s, ' "${why[@]}" | sed 's/, $//')"
	status=75
fi
summary+=("Outcome: $outcome.")
{
	printf '\n## Round summary\n\n'
	printf -- '- %s\n' "${summary[@]}"
} >"$tmp/summary.md"
cat "$tmp/summary.md" >>"$round_file"
say "round $round: $outcome"
exit "$status"
