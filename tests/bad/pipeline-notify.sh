#!/usr/bin/env bash
# Bad "notify" entries in .packetfs/pipeline.json (SPEC §5, §8) are refused on close with EINVAL,
# .packetfs/pipeline.error gives the field, the reason and its line and column (with a "did you
# mean" for a misspelt key or name), and the configuration in force stays as it was; a good
# entry is then accepted.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
p=$M/.packetfs/pipeline.json
cp "$p" "$T/orig.json"
rec=$FIXTURES/notify/record.sh

# variant NAME NOTIFY_JSON : $T/NAME.json, the configuration with "notify": NOTIFY_JSON on
# a line of its own after the first line.
variant()
{
	{
		head -n 1 "$T/orig.json"
		printf '  "notify": %s,\n' "$2"
		tail -n +2 "$T/orig.json"
	} >"$T/$1.json"
}
variant on-missing '[{"run": ["/bin/true"]}]'
variant on-empty '[{"on": [], "run": ["/bin/true"]}]'
variant on-typo '[{"on": ["done", "faild"], "run": ["/bin/true"]}]'
variant on-unknown '[{"on": ["finished"], "run": ["/bin/true"]}]'
variant run-missing '[{"on": ["done"]}]'
variant run-empty '[{"on": ["done"], "run": []}]'
variant run-relative '[{"on": ["done"], "run": ["notify-send", "x"]}]'
variant run-missing-program '[{"on": ["done"], "run": ["/no/such/notifier"]}]'
variant key-typo '[{"on": ["done"], "run": ["/bin/true"], "timout_s": 5}]'
variant timeout-zero '[{"on": ["done"], "run": ["/bin/true"], "timeout_s": 0}]'
variant not-array '{"on": ["done"], "run": ["/bin/true"]}'

# refused NAME REASON : writing NAME.json fails with EINVAL, pipeline.error says REASON, and
# pipeline.json reads back as it was.
refused()
{
	assert_fails_with EINVAL cp "$T/$1.json" "$p"
	assert_contains "$(cat "$M/.packetfs/pipeline.error")" "$2" "pipeline.error after $1"
	cmp -s "$T/orig.json" "$p" || fail "pipeline.json changed after the refused $1: $(cat "$p")"
}
refused on-missing 'notify[0]: "on" is required at line 2, column 14'
refused on-empty 'notify[0].on: must not be empty at line 2, column 15'
refused on-typo 'notify[0].on[1]: unknown state or event "faild" (did you mean "failed"?) at line 2, column 30'
refused on-unknown 'notify[0].on[0]: unknown state or event "finished" (a state: queued, running, waiting, blocked, failed, done; or an item event type such as stage_finished) at line 2, column 22'
refused run-missing 'notify[0]: "run" is required at line 2, column 14'
refused run-empty 'notify[0].run: must not be empty at line 2, column 31'
refused run-relative 'notify[0].run[0]: must be an absolute path'
refused run-missing-program 'notify[0].run: /no/such/notifier: no such executable'
refused key-typo 'notify[0].timout_s: unknown key (did you mean "timeout_s"?) at line 2, column 53'
refused timeout-zero 'notify[0].timeout_s: must be an integer >= 1 at line 2, column 53'
refused not-array 'notify: must be an array of objects'

# A good entry is in force at once: the next event runs it.
variant good "[{\"on\": [\"item_created\"], \"run\": $(argv_json /bin/sh "$rec" "$T/notified")}]"
cp "$T/good.json" "$p" || fail "a good notify entry was refused: $(cat "$M/.packetfs/pipeline.error")"
new_item fix-1
wait_for test -s "$T/notified"
assert_contains "$(cat "$T/notified")" $'fix-1\tnew\titem_created' "the notifier's record"
exit 0
