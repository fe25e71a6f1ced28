#!/usr/bin/env bash
# hold stops automatic advancing after the running stage; release resumes it.
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(plan_stage 02-lint)" "$(print_stage)"

ctl "$M" fix-1 hold
ctl "$M" fix-1 advance
wait_for test -e "$d/plan.md"
settled()
{
	case "$(status_field "$M" fix-1 state)" in
	running | queued) return 1 ;;
	esac
}
wait_for settled
[ "$(status_field "$M" fix-1 state)" != done ] || fail "a held item ran to the end"
ls "$d/stages" | grep -Eq -- '-print\.log$' && fail "print ran while the item was held"

ctl "$M" fix-1 release
wait_state "$M" fix-1 done
ls "$d/stages" | grep -Eqx '[0-9]+-print\.log' || fail "print did not run after release"
exit 0
