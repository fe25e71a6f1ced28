#!/usr/bin/env bash
# compute-env.md (SPEC §6, "The compute environment") in .packetfs/ and in an item: this host
# with its GPUs through the stand-in nvidia-smi (model, memory, driver, CUDA), then each probe of
# pipeline.json with its answer: present, absent (not on PATH, a failing command), absent (timed
# out), and one still pending, shown as such while a read goes on unblocked. A recipe whose
# "# requires:" probe is absent is blocked with that reason and runs nothing; one naming a probe
# pipeline.json lacks is blocked saying so; one whose probe answers later waits for it and runs.
# A new pipeline.json refreshes the file, and so does the ctl verb "probe", which inotifywait
# sees as a change of both files.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes

export PATH="$FIXTURES/bin:$PATH"
export FAKE_NVIDIA_SMI_STATE="$T/smi-state"
printf 'gpu 0 GPU-stand-in-0 100\ngpu 1 GPU-stand-in-1 120\n' >"$FAKE_NVIDIA_SMI_STATE"

# recipe NAME REQUIRES : a recipe that leaves $T/ran-NAME, requiring the probes REQUIRES.
recipe()
{
	printf '#!/usr/bin/env bash\n# summary: %s\n# requires: %s\n# needs: none\ntouch "%s/ran-%s"\necho ran\n' \
		"$1, a compute-env test recipe" "$2" "$T" "$1" >"$RECIPES/$1"
	chmod +x "$RECIPES/$1"
}
recipe 41-needs-slow "slow"
recipe 42-needs-tool "tool"
recipe 43-needs-typo "tool, nosuch"
recipe 44-needs-gate "gate tool"

# reg_at_least N : whether the registry has N lines or more (now, each time wait_for polls).
reg_at_least()
{
	[ "$(reg count "$r" 2>/dev/null || echo 0)" -ge "$1" ]
}

probes()
{
	printf '"probes": {"tool": %s, "nothere": ["packetfs-no-such-tool"], "broken": %s, "slow": {"run": ["sleep", "30"], "timeout_s": 1}, "gate": {"run": %s, "timeout_s": 120}%s},' \
		"$(argv_json sh -c 'echo; echo "  tool 1.2.3  "; echo second line')" \
		"$(argv_json sh -c 'echo "No module named torch" >&2; exit 3')" \
		"$(argv_json sh -c "while [ ! -e '$T/go' ]; do sleep 0.05; done; echo gate open")" "$1"
}
EXTRA=$(probes "") pipeline_with "$T/pipeline.json" \
	"$(plan_stage 41-needs-slow 42-needs-tool 43-needs-typo 44-needs-gate)" "$(print_stage)" \
	"$(validate_stage)"
mount_item "$T/pipeline.json"
env=$M/.packetfs/compute-env.md

# Before the gate opens: a read answers at once, with what is known and the gate pending.
wait_for grep -q '| slow | absent (timed out) |' "$env"
text=$(cat "$env")
assert_contains "$text" "some answers are still pending" "compute-env.md while probing"
assert_contains "$text" '| gate | pending |' "the gate probe before it answers"
assert_eq "-r--r--r--" "$(stat -c %A "$env")" "mode of compute-env.md"
assert_fails_with EACCES sh -c "echo x >'$env'"

# The recipes start; the gate's recipe waits for its answer, the others end.
ctl "$M" fix-1 advance
wait_for reg_at_least 3
[ ! -e "$T/ran-41-needs-slow" ] || fail "41-needs-slow ran, its probe timed out"
[ ! -e "$T/ran-43-needs-typo" ] || fail "43-needs-typo ran, it requires an unknown probe"
assert_eq 1 "$(reg count "$r" recipe=41-needs-slow status=blocked source=engine)" "blocked 41"
assert_eq "requires slow: absent (timed out)" "$(reg field "$r" 0 note recipe=41-needs-slow)" \
	"note of 41-needs-slow"
assert_eq 1 "$(reg count "$r" recipe=43-needs-typo status=blocked source=engine)" "blocked 43"
assert_eq "requires nosuch: not a probe of pipeline.json" \
	"$(reg field "$r" 0 note recipe=43-needs-typo)" "note of 43-needs-typo"
assert_eq 1 "$(reg count "$r" recipe=42-needs-tool status=validated source=engine)" "42 validated"
assert_eq 0 "$(reg count "$r" recipe=44-needs-gate)" "44-needs-gate ran before its probe answered"
[ ! -e "$T/ran-44-needs-gate" ] || fail "44-needs-gate ran before its probe answered"

touch "$T/go"
wait_for reg_at_least 4
assert_eq 1 "$(reg count "$r" recipe=44-needs-gate status=validated source=engine)" "44 validated"
wait_for grep -q 'requires slow: absent (timed out)' "$d/validation/evidence.md"
assert_contains "$(cat "$d/validation/junit.xml")" "blocked: requires nosuch: not a probe of pipeline.json" \
	"junit.xml"

# The whole file once every probe answered, the same in the item.
text=$(cat "$env")
assert_contains_each "$text" "# Compute environment" "Probed at " "## This host" "- OS: " \
	"- CPU: " "- Memory: " "- CUDA: 12.4" "| 0 | Stand-in GPU | 81920 MiB | 550.54.15 |" \
	"| 1 | Stand-in GPU | 81920 MiB | 550.54.15 |" "## Probes" "| tool | tool 1.2.3 |" \
	"| nothere | absent (not on PATH) | \`packetfs-no-such-tool\` |" \
	"| broken | absent (exit 3: No module named torch) |" "| slow | absent (timed out) |" \
	"| gate | gate open |"
assert_not_contains "$text" "pending" "compute-env.md once every probe answered"
assert_eq "$text" "$(cat "$d/compute-env.md")" "the item's compute-env.md"
ls "$d" | grep -qx compute-env.md || fail "the item does not list compute-env.md: $(ls "$d")"
ls -a "$M/.packetfs" | grep -qx compute-env.md || fail ".packetfs does not list compute-env.md"

# A new configuration: the file follows it (a probe added, the GPUs gone).
printf 'fail\n' >"$FAKE_NVIDIA_SMI_STATE"
EXTRA=$(probes ", \"added\": $(argv_json sh -c 'echo added-1')") pipeline_with "$T/pipeline2.json" \
	"$(plan_stage 42-needs-tool)" "$(print_stage)" "$(validate_stage)"
cp "$T/pipeline2.json" "$M/.packetfs/pipeline.json"
wait_for grep -q '| added | added-1 |' "$env"
wait_for grep -q '^- GPUs: none' "$env"
assert_not_contains "$(cat "$env")" "Stand-in GPU" "compute-env.md after the GPUs went"

# On request: the ctl verb "probe" asks again; watchers see both files change.
ev=$T/inotify.txt
bg inotifywait -m -r -e modify,close_write --format '%e %w%f' "$M" >"$ev" 2>"$T/inotify.err"
wait_for grep -q 'Watches established' "$T/inotify.err"
printf 'gpu 0 GPU-stand-in-0 100\n' >"$FAKE_NVIDIA_SMI_STATE"
ctl "$M" fix-1 probe
wait_for grep -q '| 0 | Stand-in GPU |' "$env"
assert_not_contains "$(cat "$env")" "| 1 | Stand-in GPU |" "compute-env.md after the request"
wait_for grep -qx "MODIFY $M/.packetfs/compute-env.md" "$ev"
wait_for grep -qx "MODIFY $M/fix-1/compute-env.md" "$ev"
check_status "$M" fix-1
exit 0
