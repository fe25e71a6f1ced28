#!/usr/bin/env bash
# The offline switch of agent-stage.sh with the real Codex CLI (tests/agent-clis.sh's pinned
# version) and the scripted model of tests/fixtures/agents/mock_openai.py, which is also the
# proxy of HTTPS_PROXY, HTTP_PROXY and ALL_PROXY (NO_PROXY: 127.0.0.1, the model endpoint):
#   - AGENT_NETWORK=1 (offline off): codex reaches out at start-up (its plugin sync to
#     github.com, chatgpt.com): the mock sees CONNECTs, which shows the count works;
#   - the default (AGENT_OFFLINE unset, no AGENT_NETWORK): no connection attempt but the
#     model's, and the run's log shows the offline flags;
#   - AGENT_OFFLINE=1 with AGENT_NETWORK=1: offline wins, still none.
# The plan role runs each time (scenarios/codex/plan.json) and writes plan.md.
# test-timeout: 180
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/agents/lib.sh"
. "$FIXTURES/agents/real_codex.sh"
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
codex_real_setup

codex_packet

# run_plan [VAR=VALUE...] : agent-stage.sh as the plan stage; the outside attempts the mock
# saw during the run (JSON lines) in $outside, its log in $log.
run_plan()
{
	local n0
	n0=$(wc -l <"$MOCK_LOG")
	rm -f "$pd/plan.md"
	codex_stage plan "$@"
	assert_eq 0 "$rc" "plan ($*): status ($log)"
	[ -s "$pd/plan.md" ] || fail "plan ($*): no plan.md"
	outside=$(tail -n +"$((n0 + 1))" "$MOCK_LOG" | grep '"event": "outside"' || true)
}

run_plan AGENT_NETWORK=1
[ -n "$outside" ] || fail "with the network on, codex made no outside connection attempt: the count sees nothing"
assert_contains "$outside" '"method": "CONNECT"' "outside attempts with the network on"
assert_not_contains "$log" "--disable plugins" "the command line with the network on"

run_plan
assert_eq "" "$outside" "outside connection attempts, offline by default"
assert_contains "$log" "--disable plugins -c analytics.enabled=false -c feedback.enabled=false -c web_search=disabled" \
	"the offline flags"

run_plan AGENT_NETWORK=1 AGENT_OFFLINE=1
assert_eq "" "$outside" "outside connection attempts with AGENT_OFFLINE=1"
exit 0
