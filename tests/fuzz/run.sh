#!/usr/bin/env bash
# tests/fuzz/run.sh - builds the libFuzzer harnesses of the parsers and runs them.
#
#	bash tests/fuzz/run.sh [SECONDS] [HARNESS...]
#	bash tests/fuzz/run.sh --list | --build-only
#
# Builds with clang into build-fuzz/ at the root of the source tree (PFS_FUZZ_BUILD_DIR names
# another): `CC=clang meson setup build-fuzz -Dfuzz=true`, then only the harnesses. Runs each
# harness (all of them, or those named: config, registry, ...) for SECONDS (default 3600, the
# long run; tests/run.sh runs 10) over its seed corpus tests/fuzz/corpus/NAME (the recipe
# harness: the shipped catalog recipes/), with its
# dictionary tests/fuzz/dict/NAME.dict. Inputs that reached new code are kept in
# WORK/corpus/NAME, where a later run starts again from them; a crash, leak, timeout (an input
# that takes more than 10 s: a parser that stalls) or out-of-memory is saved as
# WORK/artifacts/NAME/KIND-SHA1, its report in WORK/NAME.log. WORK is PFS_FUZZ_WORK, default
# BUILD/fuzz-work. PFS_FUZZ_FLAGS adds libFuzzer options (e.g. "-max_len=65536 -jobs=4").
#
# libFuzzer also saves an input that took longer than 10 s of wall time as slow-unit-SHA1 without
# failing; on a busy machine that is often starvation, not a stall. Each such input is run again
# alone: if it finishes within the 10 s, it is moved to WORK/slow-under-load/NAME and reported on
# the PASS line with its time alone; if not, the harness fails. Only artifacts written by this run
# count; older ones stay where they are for inspection.
#
# Prints "PASS fuzz/NAME (runs, coverage)" or "FAIL fuzz/NAME (why)" with the report's tail per
# harness; exits 0 when none failed, 1 otherwise, 77 with a line "SKIP: why" when clang or
# libFuzzer is missing, 2 on a usage error. --list prints the harnesses' names; --build-only
# builds them and runs none.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
HARNESSES="config registry plan scope recipe testcount junit slurm record ctl metric metrics-json measure"

SECONDS_EACH=3600
BUILD_ONLY=0
NAMES=()
for arg in "$@"; do
	case "$arg" in
	--list)
		echo "$HARNESSES"
		exit 0
		;;
	--build-only) BUILD_ONLY=1 ;;
	-h | --help)
		sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "tests/fuzz/run.sh: unknown option: $arg" >&2
		exit 2
		;;
	*[!0-9]*)
		case " $HARNESSES " in
		*" $arg "*) NAMES+=("$arg") ;;
		*)
			echo "tests/fuzz/run.sh: no harness '$arg' (harnesses: $HARNESSES)" >&2
			exit 2
			;;
		esac
		;;
	*) SECONDS_EACH=$arg ;;
	esac
done
[ "${#NAMES[@]}" -gt 0 ] || read -ra NAMES <<<"$HARNESSES"

BUILD=${PFS_FUZZ_BUILD_DIR:-build-fuzz}
case "$BUILD" in
/*) ;;
*) BUILD=$ROOT/$BUILD ;;
esac

# clang with libFuzzer (Debian: clang and libclang-rt-dev), or a skip that says what is missing.
CC=${CC:-clang}
case "$CC" in
*clang*) ;;
*) CC=clang ;;
esac
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "SKIP: $CC not found (Debian: apt-get install clang libclang-rt-dev)"
	exit 77
fi
probe=$(mktemp -d "${TMPDIR:-/tmp}/packetfs-fuzz-probe.XXXXXX")
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' \
	>"$probe/probe.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$probe/probe.c" -o "$probe/probe" \
	>"$probe/log" 2>&1; then
	echo "SKIP: $CC cannot link libFuzzer with ASan and UBSan (Debian: apt-get install" \
		"libclang-rt-dev): $(grep -m 1 -i error "$probe/log")"
	rm -rf "$probe"
	exit 77
fi
rm -rf "$probe"

# The build: set up once, then only the harnesses (each run checks they are current).
if [ ! -f "$BUILD/build.ninja" ]; then
	[ ! -d "$BUILD/meson-private" ] || rm -rf "$BUILD"
	if ! (cd "$ROOT" && CC=$CC meson setup "$BUILD" -Dfuzz=true) >"${TMPDIR:-/tmp}/packetfs-fuzz-setup.log" 2>&1; then
		tail -n 30 "${TMPDIR:-/tmp}/packetfs-fuzz-setup.log"
		echo "FAIL fuzz/build (meson setup)"
		exit 1
	fi
fi
targets=()
for n in $HARNESSES; do
	targets+=("fuzz-$n")
done
if ! meson compile -C "$BUILD" "${targets[@]}" >"$BUILD/fuzz-build.log" 2>&1; then
	tail -n 30 "$BUILD/fuzz-build.log"
	echo "FAIL fuzz/build (meson compile)"
	exit 1
fi

[ "$BUILD_ONLY" = 0 ] || exit 0

WORK=${PFS_FUZZ_WORK:-$BUILD/fuzz-work}
# Reports name the sanitizers' findings; a leak fails as a crash does.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
for n in "${NAMES[@]}"; do
	corpus=$WORK/corpus/$n
	artifacts=$WORK/artifacts/$n
	log=$WORK/$n.log
	mkdir -p "$corpus" "$artifacts"
	# Seeds: corpus/NAME; the recipe harness's are the catalog the project ships, recipes/.
	seeds=()
	[ ! -d "$HERE/corpus/$n" ] || seeds+=("$HERE/corpus/$n")
	[ "$n" != recipe ] || seeds+=("$ROOT/recipes")
	stamp=$WORK/.start-$n
	: >"$stamp"
	rc=0
	# shellcheck disable=SC2086 # PFS_FUZZ_FLAGS is a list of options
	(cd "$WORK" && "$BUILD/tests/fuzz/fuzz-$n" -max_total_time="$SECONDS_EACH" -timeout=10 \
		-rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
		-dict="$HERE/dict/$n.dict" -artifact_prefix="$artifacts/" ${PFS_FUZZ_FLAGS:-} \
		"$corpus" "${seeds[@]}") >"$log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	# Slow units of this run: timed again alone (see above).
	slow_note=
	while IFS= read -r unit; do
		[ -n "$unit" ] || continue
		t0=$(date +%s%N)
		if timeout 10 "$BUILD/tests/fuzz/fuzz-$n" "$unit" >"$WORK/$n.retime.log" 2>&1; then
			ms=$((($(date +%s%N) - t0) / 1000000))
			mkdir -p "$WORK/slow-under-load/$n"
			mv "$unit" "$WORK/slow-under-load/$n/"
			slow_note="$slow_note; $(basename "$unit") slow under load, ${ms} ms alone"
		fi
	done < <(find "$artifacts" -maxdepth 1 -name 'slow-unit-*' -newer "$stamp")
	fresh=$(find "$artifacts" -maxdepth 1 -type f -newer "$stamp" -printf '%f\n')
	rm -f "$stamp"
	if [ "$rc" = 0 ] && [ -z "$fresh" ]; then
		echo "PASS fuzz/$n (${runs:-?} runs in ${SECONDS_EACH}s, ${cov:-cov: ?}$slow_note)"
	else
		failed=1
		why=$(grep -m 1 -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)|runtime error:|contract broken' "$log")
		echo "FAIL fuzz/$n (${why:-exit $rc}; $(echo "$fresh" | head -n 3 | tr '\n' ' ')in $artifacts)"
		if [ -n "$why" ]; then
			grep -m 1 -A 24 -E 'ERROR: |runtime error:|contract broken' "$log" | sed 's/^/    | /'
		else
			tail -n 30 "$log" | sed 's/^/    | /'
		fi
	fi
done
exit "$failed"
