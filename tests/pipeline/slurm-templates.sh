#!/usr/bin/env bash
# Templates with the slurm executor (SPEC §5 "Routes and templates"): an item whose plan says
# "Template: check" runs that template's stages, and its recipes run as Slurm jobs whose
# environment holds the plan's header lines (PACKET_TEMPLATE, PACKET_ROUTE, PACKET_ENGINE,
# PACKET_REVIEW_REQUEST), as a local run's does.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
need_slurm
make_repo
copy_recipes slurm
check="[$(print_stage), $(validate_stage)]"
extra="\"executor\": {\"kind\": \"slurm\", \"poll_ms\": 200},
  \"templates\": {\"check\": {\"stages\": $check}},"
EXTRA=$extra pipeline_item "$(stage_json plan plan.md plan-header.sh 01-build 05-env)" "$(print_stage)" \
	"$(validate_stage)" "$(review_stage sound)" "$(publish_stage)"
printf '%s\n' 'Template: check' 'Route: perf' 'Engine: vllm' 'Review request: 9' >"$d/header"
ctl "$M" fix-1 advance
assert_eq done "$(settled fix-1)" "state after the template's last stage"
assert_eq check "$(status_field "$M" fix-1 template)" "template"
assert_eq validate "$(status_field "$M" fix-1 stage)" "stage: the template's last"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict"
for rec in 01-build 05-env; do
	assert_eq slurm "$(reg field "$r" 0 executor recipe=$rec)" "$rec executor"
done
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=05-env)")
assert_contains "$log" "# slurm: submitted job" "05-env log"
assert_contains_each "$log" "PACKET_TEMPLATE=check" "PACKET_ROUTE=perf" "PACKET_ENGINE=vllm" \
	"PACKET_REVIEW_REQUEST=9"
exit 0
