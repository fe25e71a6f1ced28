#!/usr/bin/env bash
# summary: the project's benchmark, the item's base against its head (make bench)
# measure: base
# warmup: 1
# repeat: 5
# needs: none
# timeout: 600
# version: make --version
#
# A measured recipe (docs/measure.md): the engine runs it in clean checkouts
# of the item's merge-base and of its head, alternating, and compares the
# metrics the runs print. It runs `make bench` when the project's Makefile
# has a bench target (examples/sample-project has one), whose program prints
# "METRIC NAME VALUE [UNIT] [lower|higher]" lines; a project without one is
# blocked (exit 77): there is nothing to measure. Add "# budget: METRIC +P%"
# to fail the recipe when the head is worse beyond P% with confidence.
set -euo pipefail
if [ -f Makefile ] && make -n bench >/dev/null 2>&1; then
	exec make -s bench
fi
echo "07-bench: no Makefile with a 'bench' target here: nothing to measure"
exit 77
