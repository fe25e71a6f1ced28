#!/usr/bin/env bash
# The recipe queue is FIFO without starvation: on a pool of 2 declared slots, a 2-GPU recipe
# queued behind a running 1-GPU recipe waits for both devices, and the 1-GPU recipes queued
# after it do not overtake it although a device and a slot are free.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes

# output_is TEXT CMD... : whether CMD (run now, each time wait_for polls) prints TEXT.
output_is()
{
	[ "$("${@:2}" 2>/dev/null)" = "$1" ]
}

# recipe NAME GPUS BODY : an executable recipe in $RECIPES needing GPUS GPUs.
recipe()
{
	printf '#!/usr/bin/env bash\n# summary: %s\n# gpus: %s\n# timeout: 60\n%s\n' \
		"$1, a gpu-fifo test recipe" "$2" "$3" >"$RECIPES/$1"
	chmod +x "$RECIPES/$1"
}
# The first holds its device until the test says go (bounded).
recipe 51-first 1 'dir=$(dirname "$0")/..
touch "$dir/ran-51-first"
for _ in $(seq 600); do [ -e "$dir/go" ] && exit 0; sleep 0.05; done
exit 1'
mark='echo "$RECIPE_NAME on $CUDA_VISIBLE_DEVICES"'
recipe 52-two 2 "$mark"
recipe 53-one 1 "$mark"
recipe 54-one 1 "$mark"
recipe 55-one 1 "$mark"

GPUS=2 pipeline_item "$(plan_stage 51-first 52-two 53-one 54-one 55-one)" "$(print_stage)" \
	"$(validate_stage)"

ctl "$M" fix-1 advance
wait_for test -e "$T/ran-51-first"
# 51-first holds GPU 0; 52-two waits for two devices; nothing behind it may start.
started=$(grep -c '"type":"recipe_started"' "$d/events" || true)
assert_eq 1 "$started" "recipes started while the 2-GPU recipe waits ($(cat "$d/events"))"
touch "$T/go"
wait_for output_is 5 reg count "$r"
wait_state "$M" fix-1 done

for n in 51-first 52-two 53-one 54-one 55-one; do
	assert_eq 1 "$(reg count "$r" recipe=$n status=validated source=engine)" "validated $n"
done
assert_eq "[0, 1]" "$(reg field "$r" 0 gpus recipe=52-two)" "registry gpus of 52-two"
# Started in queue order: run numbers are given as recipes start.
first=$(reg field "$r" 0 run recipe=51-first)
two=$(reg field "$r" 0 run recipe=52-two)
[ "$two" -gt "$first" ] || fail "52-two (run $two) started before 51-first (run $first)"
for n in 53-one 54-one 55-one; do
	one=$(reg field "$r" 0 run recipe=$n)
	[ "$one" -gt "$two" ] || fail "$n (run $one) overtook 52-two (run $two)"
done
# The events say the same: recipe_started in queue order.
order=$(grep '"type":"recipe_started"' "$d/events" | sed 's/.*"recipe":"\([^"]*\)".*/\1/' |
	tr '\n' ' ')
assert_eq "51-first 52-two 53-one 54-one 55-one " "$order" "order of recipe_started events"
# 52-two started only after 51-first had finished.
[[ ! "$(reg field "$r" 0 started_at recipe=52-two)" < "$(reg field "$r" 0 finished_at recipe=51-first)" ]] ||
	fail "52-two started before 51-first finished"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
