# shellcheck shell=bash disable=SC2154 # T, FIXTURES: tests/lib.sh
# tests/lib_gpu.sh - the stand-in nvidia-smi (tests/fixtures/bin/nvidia-smi: no GPU needed) with
# two clean devices, for the GPU leak tests (tests/pipeline/gpu-leak.sh, measure-gpu-leak.sh).
# Source after tests/lib.sh, before the store is mounted:
#
#	. "$TESTS_DIR/lib_gpu.sh"
#	smi_state "${CLEAN}app 4242 GPU-stand-in-0 500"
#
# Puts tests/fixtures/bin first on PATH (the daemon inherits it) and exports
# FAKE_NVIDIA_SMI_STATE, the stand-in's state file, set to CLEAN.

# CLEAN : the state of two devices, GPU 0 and GPU 1, with 100 MiB in use and no process.
CLEAN=$'gpu 0 GPU-stand-in-0 100\ngpu 1 GPU-stand-in-1 100\n'

# smi_state TEXT : the stand-in's state, replaced atomically.
smi_state()
{
	printf '%s' "$1" >"$FAKE_NVIDIA_SMI_STATE.tmp"
	mv "$FAKE_NVIDIA_SMI_STATE.tmp" "$FAKE_NVIDIA_SMI_STATE"
}

export PATH="$FIXTURES/bin:$PATH"
export FAKE_NVIDIA_SMI_STATE="$T/smi-state"
smi_state "$CLEAN"
