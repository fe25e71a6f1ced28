#!/usr/bin/env bash
# Routes and templates (SPEC §5): one store, items taking different paths by their plan's header
# lines. "Template: debug" runs the investigation template (no branch); "Route: implementation"
# goes through routes to the change template (print, validate, review, publish), end to end; no
# header line keeps the top-level stages. Every later stage and recipe gets PACKET_ROUTE,
# PACKET_TEMPLATE, PACKET_ENGINE and PACKET_REVIEW_REQUEST; status, status.json and `packetfs
# status` show the path. An unknown Template fails plan naming the templates; plan run again
# with another template changes the path, and the runs of the old one stay in the history. A
# template that would publish without a review is refused at load; a default_template is the
# path of a plan that names none.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
tr=$T/trace
plan=$(stage_json plan plan.md plan-header.sh 01-build 05-env)
trace_stage()
{
	printf '{"name": "%s", "run": %s, "produces": ["%s"]}' "$1" "$(stage_run trace.sh "$tr" "$2")" "$2"
}
change="[$(print_stage), $(trace_stage measure measure.md), $(validate_stage),
	$(review_stage sound), $(publish_stage)]"
debug="[$(trace_stage investigate report.md)]"
extra="\"templates\": {\"change\": {\"stages\": $change}, \"debug\": {\"stages\": $debug}},
  \"routes\": {\"implementation\": \"change\", \"bug\": \"debug\"},"
EXTRA=$extra pipeline_store "$plan" "$(print_stage)" "$(validate_stage)" "$(review_stage sound)" "$(publish_stage)"
base=$(git -C "$REPO" rev-parse main)

# header ITEM LINE... : makes ITEM whose plan.md will open with the LINEs.
header()
{
	local item=$1
	shift
	new_item "$item"
	printf '%s\n' "$@" >"$M/$item/header"
}
header inv 'Template: debug' 'Engine: vllm' 'Review request: 42'
header impl 'Route: implementation' 'Engine: sglang'
header plain
header typo 'Template: debgu' 'Route: bug'
for i in inv impl plain typo; do
	ctl "$M" "$i" advance
done

# The investigation: plan, then its one stage; no branch, nothing validated.
wait_state "$M" inv done
assert_eq investigate "$(status_field "$M" inv stage)" "inv: stage"
assert_eq debug "$(status_field "$M" inv template)" "inv: template"
assert_eq "" "$(status_field "$M" inv route)" "inv: route"
assert_eq vllm "$(status_field "$M" inv engine)" "inv: engine"
assert_eq 42 "$(status_field "$M" inv review_request)" "inv: review_request"
assert_contains "$(cat "$tr")" "inv investigate template=debug route= engine=vllm review_request=42" \
	"inv: the investigation's environment"
assert_eq "$base" "$(git -C "$REPO" rev-parse packetfs/inv)" "inv: the branch did not move"
assert_contains "$(cat "$M/inv/report.md")" "On template debug" "inv: report.md"
assert_contains "$(cat "$M/inv/status.json")" '"template":"debug"' "inv: status.json"
assert_contains "$(cat "$M/inv/report.html")" "<tr><th>template</th><td>debug</td></tr>" \
	"inv: report.html"
assert_contains "$(cat "$M/index.html")" "investigate<br /><small>template debug</small>" "index.html"

# The route through routes to the change template, end to end (published).
wait_state "$M" impl done
assert_eq publish "$(status_field "$M" impl stage)" "impl: stage"
assert_eq change "$(status_field "$M" impl template)" "impl: template chosen by the route"
assert_eq implementation "$(status_field "$M" impl route)" "impl: route"
assert_contains "$(cat "$tr")" "impl measure template=change route=implementation engine=sglang review_request=" \
	"impl: a template stage's environment"
assert_eq pass "$(status_field "$M" impl verdict)" "impl: verdict"
assert_eq sound "$(status_field "$M" impl assessment)" "impl: assessment"
assert_eq "$(git -C "$REPO" rev-parse packetfs/impl)" "$(git -C "$ORIGIN" rev-parse packetfs/impl)" \
	"impl: the published head"
# The recipes too (05-env prints its environment into its log).
assert_contains "$(cat "$M"/impl/validation/logs/*05-env*)" "PACKET_TEMPLATE=change" "impl: recipe env"
assert_contains "$(cat "$M"/impl/validation/logs/*05-env*)" "PACKET_ROUTE=implementation" \
	"impl: recipe env route"
assert_contains "$(cat "$M"/impl/validation/logs/*05-env*)" "PACKET_ENGINE=sglang" "impl: recipe env engine"

# run STAGE takes a stage of the item's own path only.
assert_fails_with EINVAL sh_write "$M/impl/ctl" $'run investigate\n'
assert_contains "$(cat "$M/impl/ctl")" "run: no stage 'investigate' in the pipeline of template change" \
	"impl: run of another template's stage"
assert_fails_with EINVAL sh_write "$M/impl/ctl" $'run nosuch\n'
assert_contains "$(cat "$M/impl/ctl")" "no stage 'nosuch' in the pipeline" "impl: run of no stage"

# No header line, no default: the top-level stages.
wait_state "$M" plain done
assert_eq "" "$(status_field "$M" plain template)" "plain: template"
assert_eq publish "$(status_field "$M" plain stage)" "plain: stage"
assert_not_contains "$(cat "$tr")" "plain " "plain: no template stage ran"

# An unknown Template fails plan, naming the templates (the route is not used instead).
wait_state "$M" typo failed
assert_contains "$(status_field "$M" typo last_error)" \
	"plan: plan.md: Template: debgu: no such template (templates: change, debug)" "typo: last_error"
assert_eq plan "$(status_field "$M" typo stage)" "typo: stage"
assert_eq "" "$(status_field "$M" typo template)" "typo: template"

# `packetfs status` shows the path of each.
out=$("$PFS" status "$M")
printf '%s\n' "$out" | sed -n 1p | grep -Eq '^ITEM +STATE +STAGE +TEMPLATE +ROUTE +RUNNING' ||
	fail "packetfs status header: $out"
printf '%s\n' "$out" | grep -Eq '^impl +done +publish +change +implementation' ||
	fail "packetfs status row of impl: $out"
printf '%s\n' "$out" | grep -Eq '^inv +done +investigate +debug ' || fail "packetfs status row of inv: $out"

# Plan again with another template: the item goes down the change path now; the investigation's
# run stays in its history, and the events name both paths.
printf 'Template: change\n' >"$M/inv/header"
ctl "$M" inv "run plan"
wait_state "$M" inv running
wait_state "$M" inv done
assert_eq change "$(status_field "$M" inv template)" "inv: template after plan again"
assert_eq "" "$(status_field "$M" inv engine)" "inv: engine after plan again"
assert_eq publish "$(status_field "$M" inv stage)" "inv: stage after plan again"
logs=$(ls "$M/inv/stages")
assert_contains "$logs" "-investigate.log" "inv: the investigation's log stays"
assert_contains "$logs" "-measure.log" "inv: the change path's logs"
assert_contains "$(grep '"type":"template"' "$M/inv/events")" '"template":"debug"' "inv: first path event"
assert_contains "$(grep '"type":"template"' "$M/inv/events")" '"template":"change"' "inv: second path event"
assert_contains "$(cat "$M/inv/report.html")" investigate "inv: the timeline keeps the investigation"

# The fixed plan of typo goes on.
printf 'Route: bug\n' >"$M/typo/header"
ctl "$M" typo "run plan"
wait_state "$M" typo done
assert_eq debug "$(status_field "$M" typo template)" "typo: template by route after the fix"

# A template that would publish without a review is refused at load, naming it and the stage.
python3 - "$M/.packetfs/pipeline.json" "$T/unreviewed.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
o["templates"]["fast"] = {"stages": [o["templates"]["change"]["stages"][0],
    {"name": "validate", "recipes": "plan"},
    {"name": "ship", "push": {"remote": "origin"}}]}
json.dump(o, open(sys.argv[2], "w"), indent=2)
PY
assert_fails_with EINVAL cp "$T/unreviewed.json" "$M/.packetfs/pipeline.json"
assert_contains "$(cat "$M/.packetfs/pipeline.error")" \
	"templates.fast.stages: stage 'ship' publishes, but no stage before it produces review.md" \
	"pipeline.error of an unreviewed template"
assert_not_contains "$(cat "$M/.packetfs/pipeline.json")" '"fast"' "the pipeline in force"

# With a default_template, an item whose plan names no path takes it.
python3 - "$M/.packetfs/pipeline.json" "$T/default.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
o["default_template"] = "debug"
json.dump(o, open(sys.argv[2], "w"), indent=2)
PY
cp "$T/default.json" "$M/.packetfs/pipeline.json"
header dflt
ctl "$M" dflt advance
wait_state "$M" dflt done
assert_eq debug "$(status_field "$M" dflt template)" "dflt: the default template"
assert_eq investigate "$(status_field "$M" dflt stage)" "dflt: stage"

# An export carries the path the plan chose: imported into another store (over a clone), the
# item keeps its template, route, engine and review request.
git clone -q "$REPO" "$T/repo2"
sed "s|\"$REPO\"|\"$T/repo2\"|" "$M/.packetfs/pipeline.json" >"$T/pipeline2.json"
out=$("$PFS" export "$STORE" impl "$T/impl-export" 2>&1) || fail "export of impl failed: $out"
out=$("$PFS" init "$T/store2" --repo "$T/repo2" --pipeline "$T/pipeline2.json" 2>&1) ||
	fail "init of the second store failed: $out"
out=$("$PFS" import "$T/store2" "$T/impl-export" 2>&1) || fail "import of impl failed: $out"
"$PFS" status "$T/store2" --json | python3 -c '
import json, sys
it = [i for i in json.load(sys.stdin) if i["item"] == "impl"][0]
got = {k: it.get(k) for k in ("template", "route", "engine", "review_request")}
want = {"template": "change", "route": "implementation", "engine": "sglang", "review_request": ""}
assert got == want, "imported impl: %r, want %r" % (got, want)' || fail "the import lost the path of impl"
exit 0
