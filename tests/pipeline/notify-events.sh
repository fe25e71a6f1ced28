#!/usr/bin/env bash
# "notify" programs (SPEC §5): a recording notifier gets exactly the events its "on" names, each
# with the event's JSON on stdin (the events line plus state, stage, last_error and the mount
# point) and PACKET_ITEM, PACKET_STATE, PACKET_EVENT in its environment: one item goes waiting
# (at an approve gate) then done, another fails.
. "$(dirname "$0")/../lib.sh"
rec=$T/notified
make_repo
EXTRA="\"notify\": [{\"on\": [\"waiting\", \"failed\", \"done\"], \"run\": $(argv_json /bin/sh \
"$FIXTURES/notify/record.sh" "$rec")}]," \
	pipeline_store "$(plan_stage)" \
	"$(stage_json ship - plan.sh | sed 's/^{/{"gate": "approve", /')"

new_item fix-1
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
ctl "$M" fix-1 approve
wait_state "$M" fix-1 done

# The second item fails at plan: its program is replaced by one that fails.
new_item fix-2
python3 - "$M/.packetfs/pipeline.json" "$T/fail.json" "$FIXTURES/stages/fail.sh" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
o["stages"][0]["run"] = ["/bin/bash", sys.argv[3]]
json.dump(o, open(sys.argv[2], "w"))
PY
cp "$T/fail.json" "$M/.packetfs/pipeline.json" || fail "the failing pipeline was refused"
ctl "$M" fix-2 advance
WAIT_STATE_PATIENT=1 wait_state "$M" fix-2 failed

wait_for bash -c '[ "$(wc -l <"$1")" -ge 3 ]' _ "$rec"
# Give a stray notice the time to show itself before the count is checked.
sleep 1
python3 - "$rec" "$M" <<'PY' || fail "the notifications are not the expected ones: $(cat "$rec")"
import json, sys
rec, mnt = sys.argv[1], sys.argv[2]
got = []
for line in open(rec):
    item, state, event, stage, body = line.rstrip("\n").split("\t", 4)
    ev = json.loads(body)
    assert ev["item"] == item, (ev, item)
    assert ev["type"] == "state" == event, (ev, event)
    assert ev["state"] == state and ev["stage"] == stage, (ev, state, stage)
    assert ev["mountpoint"] == mnt, ev
    assert ev["ts"].endswith("Z"), ev
    assert isinstance(ev["last_error"], str), ev
    got.append((item, state, stage, ev["last_error"]))
want_ok = [("fix-1", "waiting", "ship"), ("fix-1", "done", "ship")]
assert [g[:3] for g in got if g[0] == "fix-1"] == want_ok, got
fails = [g for g in got if g[0] == "fix-2"]
assert len(fails) == 1 and fails[0][1:3] == ("failed", "plan"), got
assert "exit" in fails[0][3] or "3" in fails[0][3], fails
assert len(got) == 3, got
PY
# The same events, as the item's events file has them, in the same order.
assert_eq "waiting done" "$(grep -o '"state":"[a-z]*"' "$M/fix-1/events" | sed 's/.*:"//; s/"//' |
	grep -E 'waiting|done' | tr '\n' ' ' | sed 's/ $//')" "fix-1's waiting and done events"
exit 0
