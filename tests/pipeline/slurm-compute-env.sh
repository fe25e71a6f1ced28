#!/usr/bin/env bash
# compute-env.md with the slurm executor (SPEC §6, "The compute environment"): its Slurm section
# shows the test cluster's partitions, nodes and GRES as sinfo gives them, and "# requires:" holds
# under Slurm as locally: a recipe whose probe is absent is blocked without a job, one whose
# probe answers runs as a job.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
need_slurm
make_repo
copy_recipes slurm
printf '#!/usr/bin/env bash\n# requires: nothere\n# needs: none\ntouch "%s/ran-41"\n' "$T" \
	>"$RECIPES/41-needs-absent"
printf '#!/usr/bin/env bash\n# requires: shell\n# needs: none\necho ran\n' >"$RECIPES/42-needs-shell"
chmod +x "$RECIPES/41-needs-absent" "$RECIPES/42-needs-shell"
EXTRA="\"probes\": {\"nothere\": [\"packetfs-no-such-tool\"], \"shell\": [\"sh\", \"-c\", \"echo sh here\"]}," \
	PLAN_RECIPES="41-needs-absent 42-needs-shell" slurm_pipeline "$T/pipeline.json" plan print validate
mount_item "$T/pipeline.json"
env=$M/.packetfs/compute-env.md

wait_for grep -q '| shell | sh here |' "$env"
text=$(cat "$env")
assert_contains "$text" "## Slurm" "compute-env.md with the slurm executor"
assert_contains "$text" "| partition | availability | nodes | state | node list | GRES |" "the table"
# Each partition sinfo lists, with its nodes and GRES, as sinfo gives them.
sinfo --noheader --format='%P|%a|%D|%T|%N|%G' >"$T/sinfo"
[ -s "$T/sinfo" ] || fail "sinfo listed nothing"
while IFS='|' read -r part avail nodes state list gres; do
	assert_contains "$text" "| $part | $avail | $nodes | $state | $list | $gres |" "row of $part"
done <"$T/sinfo"
grep -q 'gpu' "$T/sinfo" || fail "the test cluster shows no GPU GRES: $(cat "$T/sinfo")"

# validated42 : whether 42-needs-shell has its validated line (now, each time wait_for polls).
validated42()
{
	[ "$(reg count "$r" recipe=42-needs-shell status=validated 2>/dev/null)" = 1 ]
}
ctl "$M" fix-1 advance
wait_for validated42
assert_eq 1 "$(reg count "$r" recipe=41-needs-absent status=blocked source=engine)" "blocked 41"
assert_eq "requires nothere: absent" "$(reg field "$r" 0 note recipe=41-needs-absent)" "note of 41"
[ ! -e "$T/ran-41" ] || fail "41-needs-absent ran"
assert_eq slurm "$(reg field "$r" 0 executor recipe=42-needs-shell)" "executor of 42-needs-shell"
exit 0
