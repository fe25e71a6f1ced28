#!/usr/bin/env bash
# sample-setup.sh DIR - the demo's repository and pipeline, made in DIR (which must exist):
#
#   DIR/repo           a git repository of examples/sample-project (branch main, one commit)
#   DIR/origin.git     a bare clone of it, the repository's remote "origin"
#   DIR/pipeline.json  examples/pipeline.json.in filled in: the repository, the shipped
#                      recipes (recipes/), the example stage programs (examples/stages/) and
#                      "gpus" "auto" where nvidia-smi lists a GPU, else 0
#
# Run by examples/demo.sh and by tests/pipeline/seed-workflow.sh. Exits non-zero when a step
# fails (set -e); the commit's author is the environment's git identity, else "packetfs demo".
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# = 1 ] && [ -d "$1" ] || {
	echo "usage: sample-setup.sh DIR (an existing directory)" >&2
	exit 2
}
dir=$(cd "$1" && pwd)

cp -a "$ROOT/examples/sample-project" "$dir/repo"
git -C "$dir/repo" init -q -b main
git -C "$dir/repo" add -A
git -C "$dir/repo" -c user.name="packetfs demo" -c user.email="demo@example.invalid" \
	commit -q -m "strkit: string helpers"
git clone -q --bare "$dir/repo" "$dir/origin.git"
git -C "$dir/repo" remote add origin "$dir/origin.git"

gpus=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	gpus='"auto"'
fi
sed -e "s|@REPO@|$dir/repo|g" -e "s|@RECIPES@|$ROOT/recipes|g" \
	-e "s|@STAGES@|$ROOT/examples/stages|g" -e "s|@GPUS@|$gpus|g" \
	"$ROOT/examples/pipeline.json.in" >"$dir/pipeline.json"
