# shellcheck shell=bash
# tests/sweep.sh - the cleanup after one integration test, shared by the suite's two drivers
# (tests/run.sh and tests/tap.sh, which runs a test under meson test). Each runs a test with
# TMPDIR set to a directory of its own, then calls sweep on it. Defines functions only.
#
# Environment: SLURM_CONF (the test cluster's configuration; its jobs started under the directory
# are cancelled), PFS_KEEP=1 (the directory is kept).

# sweep DIR : what a test killed in mid-run may have left under DIR (its TMPDIR): mounts are
# lazily unmounted, processes working there are ended, the directory is removed.
sweep()
{
	local dir=$1 mnt p sig
	[ -d "$dir" ] || return 0
	while read -r _ mnt _; do
		case "$mnt/" in
		"$dir"/*) fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null ;;
		esac
	done </proc/mounts
	# Slurm jobs of the test (their working directory lies under DIR) end too.
	if [ -n "${SLURM_CONF:-}" ]; then
		squeue -h -o '%i %Z' 2>/dev/null | while read -r p mnt; do
			case "$mnt/" in
			"$dir"/*) scancel "$p" 2>/dev/null ;;
			esac
		done
	fi
	for sig in TERM KILL; do
		for p in $({
			find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$dir" -o -lname "$dir/*" \) 2>/dev/null
			grep -lsF -- "$dir/" /proc/[0-9]*/cmdline 2>/dev/null
		} | cut -d/ -f3 | sort -u); do
			[ "$p" = $$ ] || kill "-$sig" "$p" 2>/dev/null
		done
	done
	[ -n "${PFS_KEEP:-}" ] || rm -rf "$dir"
}
