# tests/scope.sh - the plan's scope (SPEC §6 "Scope") for tests/pipeline/scope-*.sh and
# tests/bench/scope.sh; sourced after tests/lib.sh.
#
# scope_repo: make_repo, then on main a few files a plan may keep: docs/diagrams/flow.svg,
# docs/diagrams/deep/arch.svg, docs/old/x.svg and CHANGELOG.md.
#
# scope_item SCOPE_LINES CHANGE... : scope_repo, the fixture recipes, and a pipeline of plan
# (scope-plan.sh: plan.md names 01-build and holds a ```scope block of SCOPE_LINES, "-" for
# none), print (scope-print.sh with the CHANGEs: edit:PATH, rm:PATH, mv:FROM:TO), validate,
# review (sound) and publish (with the members $PUBLISH_GATE, e.g. '"gate": "approve",'),
# mounted on $M with the item fix-1 (d, r as mount_item sets them).

scope_repo()
{
	make_repo
	mkdir -p "$REPO/docs/diagrams/deep" "$REPO/docs/old"
	echo '<svg>flow</svg>' >"$REPO/docs/diagrams/flow.svg"
	echo '<svg>arch</svg>' >"$REPO/docs/diagrams/deep/arch.svg"
	echo '<svg>x: a diagram large enough to be found renamed when it moves</svg>' \
		>"$REPO/docs/old/x.svg"
	printf '# Changes\n\n- 1.0: hello\n' >"$REPO/CHANGELOG.md"
	git -C "$REPO" add -A
	git -C "$REPO" commit -q -m "docs and a changelog"
}

scope_item()
{
	local lines=$1 file=-
	shift
	scope_repo
	copy_recipes
	if [ "$lines" != - ]; then
		file=$T/scope.txt
		printf '%s\n' "$lines" >"$file"
	fi
	pipeline_with "$T/pipeline.json" "$(stage_json plan plan.md scope-plan.sh "$file" 01-build)" \
		"$(stage_json print change.md scope-print.sh "$@")" "$(validate_stage)" \
		"$(review_stage sound)" "$(publish_stage "${PUBLISH_GATE:-}")"
	mount_item "$T/pipeline.json"
}

# not_published : fails the test when the item branch reached the remote.
not_published()
{
	if git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null; then
		fail "the item branch was published"
	fi
}
