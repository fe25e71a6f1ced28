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
#
# not_published: fails the test when the item branch reached the remote.

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

# scope_carried SCOPE OUTCOME [KEPT] : the evidence of fix-1 carries its scope SCOPE (status's
# words): evidence.md's line "Scope: SCOPE[ — kept paths touched: KEPT] (validation/scope.md)"
# before its footer, junit.xml's testcase "scope" with OUTCOME (passed or failure), report.html's
# scope fact, and the attestation's test "scope" among passedTests or failedTests.
scope_carried()
{
	local want="Scope: $1" ev
	[ -z "${3:-}" ] || want="$want — kept paths touched: $3"
	want="$want (validation/scope.md)"
	ev=$(cat "$d/validation/evidence.md")
	assert_contains "$ev" "$want

Generated from validation/registry.jsonl — do not edit by hand."
	assert_contains "$(cat "$d/report.html")" "<tr><th>scope</th>"
	"$PFS" attest "$STORE" fix-1 >"$T/scope-env.json" || fail "attest failed"
	python3 - "$d/validation/junit.xml" "$T/scope-env.json" "$2" "$1" <<'EOPY' ||
import base64, json, sys
import xml.etree.ElementTree as ET
junit, env, outcome, summary = sys.argv[1:5]
suite = ET.parse(junit).getroot().find("testsuite")
cases = [c for c in suite.findall("testcase") if c.get("name") == "scope"]
assert len(cases) == 1, "no testcase scope"
failure = cases[0].find("failure")
assert (failure is not None) == (outcome == "failure"), outcome
assert int(suite.get("failures")) >= (1 if failure is not None else 0)
st = json.loads(base64.b64decode(json.load(open(env))["payload"]))
pred = st["predicate"]
want = "failedTests" if outcome == "failure" else "passedTests"
assert "scope" in pred[want], pred
conf = [c for c in pred["configuration"] if c["name"] == "scope"]
assert conf and conf[0]["annotations"]["status"] == summary, conf
if outcome == "failure":
    assert pred["result"] == "FAILED", pred["result"]
EOPY
		fail "junit.xml or the attestation do not carry the scope"
}
