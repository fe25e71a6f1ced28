#!/usr/bin/env bash
# test-timeout: 1500
# The concurrent tests under ThreadSanitizer: the daemon (and the CLI) built with
# -Db_sanitize=thread into build-tsan/ at the root of the source tree (set up and built here when
# missing, brought up to date otherwise: only cli/packetfs), then each test of TSAN_TESTS run with
# PACKETFS_BIN pointing at it and TSan writing its reports to files. The test fails when one of
# them fails, or when any report was written, naming the test and the report (copied to
# build-tsan/tsan-reports/). tests/tsan.supp lists what is suppressed (third-party frames only,
# each with its reason). Skipped (77) only where the compiler cannot build or run a
# ThreadSanitizer program. The reports of the last run stay in build-tsan/tsan-reports/.
# PFS_TSAN_BUILD_DIR names another build directory, PFS_TSAN_TESTS
# other tests (names as tests/run.sh prints them).
. "$(dirname "$0")/../lib.sh"

TSAN_TESTS=${PFS_TSAN_TESTS:-"fs/concurrent-handle-reads fs/tool-append-concurrent
fs/history-concurrent fs/poll-views fs/events-tail fs/ctl-read fs/tool-cp pipeline/notify-events
pipeline/stress-readers fs/rename-save-readers fs/doc-write-only fs/ring fs/negative-entries
fs/append-through"}
BUILD=${PFS_TSAN_BUILD_DIR:-$ROOT/build-tsan}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
REPORTS=$BUILD/tsan-reports

# Can this toolchain build and run a ThreadSanitizer program at all? A kernel whose address
# space layout TSan does not know (vm.mmap_rnd_bits too high for it) runs one without
# randomisation (setarch -R), which the test processes inherit.
cat >"$T/probe.c" <<'EOF'
#include <pthread.h>
static int x;
static void *run(void *a) { (void)a; __atomic_add_fetch(&x, 1, __ATOMIC_SEQ_CST); return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_join(t, 0); return 0; }
EOF
CC=${CC:-cc}
if ! out=$("$CC" -fsanitize=thread -pthread -o "$T/probe" "$T/probe.c" 2>&1); then
	echo "SKIP: $CC cannot build with -fsanitize=thread: $(echo "$out" | head -n 1)"
	exit 77
fi
NORAND=()
if ! out=$("$T/probe" 2>&1); then
	if setarch "$(uname -m)" -R "$T/probe" >/dev/null 2>&1; then
		NORAND=(setarch "$(uname -m)" -R)
		note "TSan programs need address space randomisation off here: $(echo "$out" | head -n 1)"
	else
		echo "SKIP: a ThreadSanitizer program cannot run here: $(echo "$out" | head -n 1)"
		exit 77
	fi
fi

if [ ! -f "$BUILD/build.ninja" ]; then
	[ ! -d "$BUILD/meson-private" ] || rm -rf "$BUILD"
	note "setting up $BUILD"
	out=$(cd "$ROOT" && meson setup "$BUILD" -Db_sanitize=thread -Db_lundef=false 2>&1) ||
		fail "meson setup of $BUILD with -Db_sanitize=thread failed: $(echo "$out" | tail -n 20)"
fi
s=$(date +%s)
out=$(ninja -C "$BUILD" cli/packetfs 2>&1) || fail "building $BUILD/cli/packetfs failed: $(echo "$out" | tail -n 30)"
note "$BUILD/cli/packetfs built in $(($(date +%s) - s)) s"
python3 - "$BUILD/meson-info/intro-buildoptions.json" <<'PY' || fail "$BUILD is not configured with -Db_sanitize=thread"
import json, sys
sys.exit(0 if any(o["name"] == "b_sanitize" and o["value"] == "thread" for o in json.load(open(sys.argv[1]))) else 1)
PY

rm -rf "$REPORTS"
mkdir -p "$REPORTS"
failed=""
for t in $TSAN_TESTS; do
	name=$(echo "$t" | tr / -)
	dir=$T/tsan/$name
	rm -rf "$dir"
	mkdir -p "$dir" "$T/tmp/$name"
	s=$(date +%s)
	rc=0
	TMPDIR=$T/tmp/$name PACKETFS_BIN=$BUILD/cli/packetfs MOUNT_OPTS=log=$dir.daemon.log \
		TSAN_OPTIONS="log_path=$dir/tsan halt_on_error=0 second_deadlock_stack=1 suppressions=$ROOT/tests/tsan.supp" \
		timeout -k 10 600 "${NORAND[@]}" bash "$ROOT/tests/$t.sh" </dev/null >"$dir.log" 2>&1 || rc=$?
	reports=$(grep -lE '(WARNING|ERROR): ThreadSanitizer' "$dir"/tsan.* 2>/dev/null || true)
	note "$t: exit $rc in $(($(date +%s) - s)) s, $(echo "$reports" | grep -c .) report file(s)"
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		echo "--- $t failed under ThreadSanitizer (exit $rc); its failures, then its last lines:" >&2
		grep -aE '^(FAIL|error|Traceback)' "$dir.log" | head -n 20 >&2
		tail -n 20 "$dir.log" >&2
		if [ -s "$dir.daemon.log" ]; then
			echo "--- the end of its daemons' log:" >&2
			tail -n 20 "$dir.daemon.log" >&2
		fi
		failed+=" $t"
	fi
	for r in $reports; do
		keep=$REPORTS/$name.$(basename "$r")
		cp "$r" "$keep"
		echo "--- ThreadSanitizer report of $t: $keep" >&2
		grep -E '^SUMMARY: ThreadSanitizer' "$r" | sort | uniq -c >&2
		head -n 60 "$r" >&2
		failed+=" $t($keep)"
	done
done
[ -z "$failed" ] || fail "under ThreadSanitizer:$failed"
exit 0
