#!/usr/bin/env bash
# approve counts only when it is given after the last print ended, and it lets one publish
# through (docs/guide.md "Gates"):
#   a1  approve on a new item, before anything ran: the print that follows drops it;
#   a2  approve while print runs: dropped when that print ends, publish waits for another;
#   a3  approve while review runs (after the last print): publish goes on without waiting;
#   a4  approve during a review that says needs_changes: the new print drops it;
#   a5  run review after done: the approve was used by the publish, publish waits again;
#   a6  approve, then run review (no new print): the approve still counts.
# print and review are held on files under $T/go (wait-then.sh) while the test acts.
. "$(dirname "$0")/../lib.sh"
G=$T/go
mkdir -p "$G"
pipeline_store "$(plan_stage 01-build)" "$(stage_json print change.md wait-then.sh "$G/print-%i-%n" print.sh)" \
	"$(validate_stage)" "$(review_loop 3 wait-then.sh "$G/review-%i-%n" review-scripted.sh)" \
	"$(publish_stage '"gate": "approve",')"

# running_stage ITEM STAGE : waits until STAGE of ITEM runs and waits on its file.
running_stage()
{
	wait_for bash -c 'grep -qs "^waiting for" "$1"/stages/*-"$2".log &&
		[ "$(sed -n "s/^stage: *//p" "$1/status")" = "$2" ] &&
		[ "$(sed -n "s/^state: *//p" "$1/status")" = running ]' _ "$M/$1" "$2"
}

publishes()
{
	ls "$M/$1/stages" | grep -Ecx '[0-9]+-publish\.log' || true
}

# a1: approve before anything ran.
new_item a1
ctl "$M" a1 approve
touch "$G/print-a1-1" "$G/review-a1-1"
ctl "$M" a1 advance
assert_eq waiting "$(settled a1)" "a1: state at the publish gate"
assert_eq "publish: waiting for approve" "$(status_field "$M" a1 last_error)" "a1: last_error"
assert_eq 0 "$(publishes a1)" "a1: publish runs"
ctl "$M" a1 approve
assert_eq done "$(settled a1)" "a1: state after approve"

# a2: approve while print runs is dropped when it ends.
new_item a2
ctl "$M" a2 advance
running_stage a2 print
ctl "$M" a2 approve
touch "$G/print-a2-1" "$G/review-a2-1"
assert_eq waiting "$(settled a2)" "a2: approve given while print ran must not count"
assert_eq 0 "$(publishes a2)" "a2: publish runs"
ctl "$M" a2 approve
assert_eq done "$(settled a2)" "a2: state after approve"

# a3: approve while review runs counts: publish goes on.
new_item a3
touch "$G/print-a3-1"
ctl "$M" a3 advance
running_stage a3 review
ctl "$M" a3 approve
touch "$G/review-a3-1"
assert_eq done "$(settled a3)" "a3: approve given after the last print counts"
assert_eq 1 "$(publishes a3)" "a3: publish runs"

# a4: approve during a review that asks for changes; the new print drops it.
new_item a4
printf 'needs_changes\nsound\n' >"$M/a4/review-script"
touch "$G/print-a4-1" "$G/print-a4-2" "$G/review-a4-2"
ctl "$M" a4 advance
running_stage a4 review
ctl "$M" a4 approve
touch "$G/review-a4-1"
assert_eq waiting "$(settled a4)" "a4: state after the second review"
assert_eq 2 "$(status_field "$M" a4 iteration)" "a4: iteration"
assert_eq "publish: waiting for approve" "$(status_field "$M" a4 last_error)" "a4: last_error"
assert_eq 0 "$(publishes a4)" "a4: publish runs"

# a5: the approve is used by the publish it let through.
new_item a5
touch "$G/print-a5-1" "$G/review-a5-1"
ctl "$M" a5 advance
assert_eq waiting "$(settled a5)" "a5: state at the publish gate"
ctl "$M" a5 approve
assert_eq done "$(settled a5)" "a5: state after approve"
ctl "$M" a5 "run review"
assert_eq waiting "$(settled a5)" "a5: run review after done must wait for a new approve"
assert_eq "publish: waiting for approve" "$(status_field "$M" a5 last_error)" "a5: last_error"
assert_eq 1 "$(publishes a5)" "a5: publish runs"
assert_eq 2 "$(ls "$M/a5/stages" | grep -Ecx '[0-9]+-review\.log')" "a5: review runs"

# a6: approve after the last print survives a run review.
new_item a6
touch "$G/print-a6-1" "$G/review-a6-1"
ctl "$M" a6 hold
for stage in plan print validate review; do
	ctl "$M" a6 advance
	assert_eq waiting "$(settled a6)" "a6: state after $stage (held)"
	assert_eq "$stage" "$(status_field "$M" a6 stage)" "a6: stage"
done
ctl "$M" a6 approve
assert_eq waiting "$(settled a6)" "a6: a held item does not publish on approve"
ctl "$M" a6 "run review"
assert_eq waiting "$(settled a6)" "a6: state after run review (held)"
assert_eq 2 "$(ls "$M/a6/stages" | grep -Ecx '[0-9]+-review\.log')" "a6: review runs"
ctl "$M" a6 release
assert_eq done "$(settled a6)" "a6: approve given after the last print counts after run review"
assert_eq 1 "$(publishes a6)" "a6: publish runs"
exit 0
