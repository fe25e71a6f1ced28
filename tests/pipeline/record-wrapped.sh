#!/usr/bin/env bash
# test-timeout: 180
# recorded_by names the stage whatever its processes did to their process group, session or PID
# namespace (SPEC §6 "The recorder"): a validate stage records a procedure from behind timeout,
# setsid, nohup and unshare --pid (root), and those lines say stage validate, found by both the
# run credential and the ancestry; without $PACKET_RUN_CREDENTIAL (setsid) the ancestry alone
# finds it; a double-forked recorder reparented away from the stage is found by the credential
# alone. A forged credential is refused (EACCES, nothing recorded), in the stage and outside it,
# and so is the stage's own credential once its run has ended; a recorder outside any stage
# records stage "" (via none).
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
manual_procedure
out=$T/wrapped
mkdir -p "$out"
pipeline_item "$(plan_stage 10-manual)" "$(print_stage)" \
	"$(validate_stage record-wrapped.sh "$PFS" 10-manual "$out")" "$(review_stage sound)"

ctl "$M" fix-1 advance
assert_eq done "$(settled fix-1)" "state after the pipeline"
cases=$(cat "$out/cases")
unshare=0
grep -q '^unshare ' "$out/cases" && unshare=1
[ "$(id -u)" != 0 ] || [ "$unshare" = 1 ] || echo "note: unshare --pid is not available here" >&2

# Every case but the forged one exited 0; the forged one was refused with a precise reason.
for c in timeout setsid nohup ancestry orphan; do
	assert_contains "$cases" "$c 0" "exit status of the $c case ($(cat "$out/$c.err" 2>/dev/null))"
done
[ "$unshare" = 0 ] || assert_contains "$cases" "unshare 0" "exit status of the unshare case ($(cat "$out/unshare.err"))"
assert_contains "$cases" "forged 1" "exit status of the forged case"
assert_contains "$(cat "$out/forged.err")" "credential is no active stage run's of item fix-1" \
	"the forged request's error"

python3 - "$r" "$unshare" <<'PY' || fail "registry lines: $(cat "$r")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
want = {"timeout": "both", "setsid": "both", "nohup": "both", "ancestry": "ancestry",
        "orphan": "credential"}
if sys.argv[2] == "1":
    want["unshare"] = "both"
got = {}
for o in lines:
    if o["recipe"] != "10-manual":
        continue
    case = o["command"].split()[-1]
    assert case not in got, ("recorded twice", case, lines)
    got[case] = o["recorded_by"]
assert set(got) == set(want), ("recorded cases", sorted(got), sorted(want))
for case, via in want.items():
    assert got[case]["stage"] == "validate", (case, got[case])
    assert got[case]["via"] == via, (case, got[case], via)
PY
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
n=$(reg count "$r")

# Outside any stage: no stage, nothing established it.
(cd "$d" && exec "$PFS" record 10-manual -- echo outside) >/dev/null || fail "record from a shell failed"
assert_eq $((n + 1)) "$(reg count "$r")" "registry lines after a shell's record"
assert_eq '{"stage": "", "pid": '"$(reg field "$r" -1 recorded_by | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')"', "uid": '"$(id -u)"', "via": "none"}' \
	"$(reg field "$r" -1 recorded_by)" "recorded_by of a shell's record"

# The stage's own credential after its run ended, and a forged one, from a shell: refused.
cred=$(cat "$out/credential")
[ ${#cred} = 32 ] || fail "the stage's PACKET_RUN_CREDENTIAL: '$cred'"
for c in "$cred" feedfacefeedfacefeedfacefeedface; do
	err=$(cd "$d" && PACKET_RUN_CREDENTIAL=$c "$PFS" record 10-manual -- echo late 2>&1 >/dev/null) &&
		rc=0 || rc=$?
	assert_eq 1 "$rc" "exit status of a record with credential $c"
	assert_contains "$err" "credential is no active stage run's of item fix-1" "error for $c"
done
assert_fails_with EACCES sh_write "$d/validation/record" \
	'{"recipe": "10-manual", "argv": ["echo", "forged"], "credential": "'"$cred"'"}'$'\n'
assert_eq $((n + 1)) "$(reg count "$r")" "registry lines after refused credentials"
exit 0
