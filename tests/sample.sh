# shellcheck shell=bash
# shellcheck disable=SC2034 # REPO and ORIGIN are the sourcing test's
# tests/sample.sh - the demo's sample project for the tests that source it after tests/lib.sh
# (tests/pipeline/seed-*.sh): sample_setup skips the test unless the tools the sample needs
# are installed, then makes the repository, remote and pipeline as examples/demo.sh does.

# sample_setup : exits 77 (skip) unless make, cc, git and python3 are installed; otherwise
# exports TMPDIR=$T/tmp (recipes and stages inherit the daemon's environment, so their
# temporary files stay in $T) and PACKETFS=$PFS (validate.sh runs it, with $CC if set, so CC
# is unset), runs examples/sample-setup.sh into $T and sets REPO ($T/repo) and ORIGIN
# ($T/origin.git); the pipeline is $T/pipeline.json.
sample_setup()
{
	local tool
	for tool in make cc git python3; do
		command -v "$tool" >/dev/null 2>&1 || {
			echo "SKIP: $tool is not installed" >&2
			exit 77
		}
	done
	export TMPDIR=$T/tmp PACKETFS=$PFS
	unset CC
	mkdir -p "$TMPDIR"
	bash "$ROOT/examples/sample-setup.sh" "$T"
	REPO=$T/repo
	ORIGIN=$T/origin.git
}
