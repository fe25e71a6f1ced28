#!/usr/bin/env bash
# test-timeout: 300
# report.html's measurements chart in a real browser: headless Chromium loads the report of an
# item whose measured recipe ran (repeat 3) from the mount; its DOM holds, inside an <svg> of
# the SVG namespace, a dot a counted run of each side and a median bar a side, for each metric,
# and its console reports no error. Chromium is a test dependency (tests/run.sh installs it).
. "$(dirname "$0")/../lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || fail "chromium is not installed (tests/run.sh installs the package chromium)"
make_repo
copy_recipes
printf '%s\n' '#!/bin/sh' '# summary: the benchmark, base against head' '# needs: none' \
	'# measure: base' '# repeat: 3' "exec '$FIXTURES/measure/bench.sh'" >"$RECIPES/07-bench.sh"
chmod +x "$RECIPES/07-bench.sh"
export BENCH_ORDER=$T/order
PLAN_RECIPES="07-bench" std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"
verdict_is() { [ "$(status_field "$M" fix-1 verdict)" = "$1" ]; }
ctl "$M" fix-1 advance
wait_for verdict_is pass

timeout 150 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
	--user-data-dir="$T/chromium" --enable-logging=stderr --v=0 --dump-dom \
	"file://$d/report.html" >"$T/dom" 2>"$T/err" || fail "chromium failed: $(tail -n 5 "$T/err")"
python3 - "$T/dom" <<'PY' || fail "the chart is not in the DOM as it should be"
import sys
from html.parser import HTMLParser

class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs, self.stack, self.dots, self.bars = [], [], {}, {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and a.get("class") == "measure-chart":
            assert a.get("xmlns") == "http://www.w3.org/2000/svg", a
            self.svgs.append(a.get("aria-label"))
        if self.svgs and tag == "circle":
            self.dots[a["class"]] = self.dots.get(a["class"], 0) + 1
        if self.svgs and tag == "line":
            self.bars[a["class"]] = self.bars.get(a["class"], 0) + 1

p = P()
p.feed(open(sys.argv[1]).read())
assert p.svgs == ["07-bench wall_s base and head runs", "07-bench rps base and head runs"], p.svgs
assert p.dots == {"run-base": 6, "run-head": 6}, p.dots
assert p.bars == {"median-base": 2, "median-head": 2}, p.bars
PY
errors=$(grep -E 'CONSOLE|Uncaught' "$T/err" | grep -F report.html || true)
[ -z "$errors" ] || fail "console errors: $errors"
exit 0
