# tests/lib_trace.sh - FUSE requests counted with the kernel's fuse:fuse_request_send tracepoint
# (tracefs), for tests that check what the kernel caches. Source after tests/lib.sh:
#
#	. "$TESTS_DIR/lib_trace.sh"
#	n=$(requests_to "$M" FUSE_GETATTR stat "$M/x")
#
# Prints nothing when the kernel has no such tracepoint or tracefs is not writable (not root):
# the caller then checks what it can without counts. tracefs is mounted when the kernel has it
# and nobody mounted it; tracing is switched on for the command only (and back as it was).

TRACE=/sys/kernel/tracing
if [ ! -d "$TRACE/events" ] && [ -d "$TRACE" ] && [ "$(id -u)" = 0 ]; then
	mount -t tracefs nodev "$TRACE" 2>/dev/null || true
fi
[ -d "$TRACE/events/fuse" ] || TRACE=/sys/kernel/debug/tracing

# requests_to MNT OPCODE CMD... : the requests of OPCODE (FUSE_GETATTR, ...) the kernel sent to
# the mount MNT while CMD ran (its output discarded); requests to other mounts are not counted.
# OPCODE may name several, comma-separated: their counts are printed in that order, separated
# by spaces. REQUESTS_COMM, when set, counts only the requests of processes of that name (the
# trace names the task that sent each request).
requests_to()
{
	local mnt=$1 ops=$2 dev on op who='' out=()
	shift 2
	[ -w "$TRACE/events/fuse/fuse_request_send/enable" ] || return 0
	[ -z "${REQUESTS_COMM:-}" ] || who="^ *$REQUESTS_COMM-[0-9]+ "
	# The tracepoint names the connection by the kernel's dev_t: major << 20 | minor.
	dev=$(mountpoint -d "$mnt")
	dev=$((${dev%%:*} << 20 | ${dev##*:}))
	on=$(cat "$TRACE/tracing_on")
	echo >"$TRACE/trace"
	echo 1 >"$TRACE/tracing_on"
	echo 1 >"$TRACE/events/fuse/fuse_request_send/enable"
	"$@" >/dev/null
	echo 0 >"$TRACE/events/fuse/fuse_request_send/enable"
	echo "$on" >"$TRACE/tracing_on"
	for op in ${ops//,/ }; do
		out+=("$(grep -Ec "$who.*connection $dev .*\($op\)" "$TRACE/trace" || true)")
	done
	echo "${out[*]}"
}
