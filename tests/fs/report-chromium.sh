#!/usr/bin/env bash
# test-timeout: 420
# report.html in a real browser: headless Chromium loads file://MNT/fix-1/report.html from the
# mount after the item ran stages and recipes (one validated, one failing). Its DOM holds one
# timeline bar per run with the run's status class (failing for the validate stage, whose batch
# failed) and a link to the log; its console reports no error (checked against a page that
# does report one, so that the check can fail); and a screenshot shows the validated and the
# failing colours, the failing bar below the first validated ones, as the runs came. Chromium
# is a test dependency (tests/run.sh installs it): without it the test fails.
. "$(dirname "$0")/../lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || fail "chromium is not installed (tests/run.sh installs the package chromium)"

std_item 01-build 03-fail
ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked
page=$d/report.html
runs=$(sqlite3 "$STORE/packetfs.db" 'select count(*) from runs')
[ "$runs" -ge 5 ] || fail "only $runs runs"

# browser OUT ERR ARG... : headless Chromium (as root: no sandbox) with its own profile in $T.
browser()
{
	local out=$1 err=$2
	shift 2
	timeout 150 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chromium" --enable-logging=stderr --v=0 "$@" >"$out" 2>"$err" ||
		fail "chromium $* failed ($?): $(tail -n 5 "$err")"
}

# console_errors ERR PAGE : the lines of Chromium's log ERR that are console messages of PAGE.
console_errors()
{
	grep -E 'CONSOLE|Uncaught' "$1" | grep -F "$2" || true
}

# The console check can fail: a page with a script error is caught.
printf '<!DOCTYPE html><html><body><script>undefined_function();</script></body></html>\n' \
	>"$T/broken.html"
browser "$T/broken.dom" "$T/broken.err" --dump-dom "file://$T/broken.html"
[ -n "$(console_errors "$T/broken.err" "file://$T/broken.html")" ] ||
	fail "the console check sees no error in a broken page: $(cat "$T/broken.err")"

browser "$T/dom.html" "$T/dom.err" --dump-dom "file://$page"
bad=$(console_errors "$T/dom.err" "file://$page")
[ -z "$bad" ] || fail "console messages of report.html: $bad"
python3 - "$T/dom.html" "$STORE/packetfs.db" <<'PY' || fail "the timeline in Chromium's DOM does not match the runs"
import re, sqlite3, sys
dom = open(sys.argv[1], encoding="utf-8").read()
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
# The validate stage succeeded, but 03-fail of its batch did not validate: it wears failing.
runs = db.execute("select run_no, case when kind = 'stage' and name = 'validate' and "
                  "status = 'succeeded' then 'failing' else status end, log_path "
                  "from runs order by run_no").fetchall()
bars = re.findall(r'<a href="([^"]*)">\s*<title>[^<]*</title>\s*<rect class="bar s-([a-z_]+)" data-run="(\d+)"', dom)
assert [(int(n), s, h) for h, s, n in bars] == [(n, s, h) for n, s, h in runs], (bars, runs)
assert {"validated", "failing"} <= {s for _, s, _ in runs}, runs
assert "<script" not in dom.lower(), "a script element in the DOM"
PY

browser "$T/shot.out" "$T/shot.err" --hide-scrollbars --window-size=1200,900 \
	--screenshot="$T/shot.png" "file://$page"
[ -s "$T/shot.png" ] || fail "no screenshot: $(tail -n 5 "$T/shot.err")"
bad=$(console_errors "$T/shot.err" "file://$page")
[ -z "$bad" ] || fail "console messages of report.html: $bad"
python3 - "$T/shot.png" <<'PY' || fail "the screenshot does not show the runs' colours"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = ihdr[:4]
assert depth == 8 and ctype in (2, 6), ihdr
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, off = bytearray(stride), [], 0
for y in range(h):
    f, line = raw[off], bytearray(raw[off + 1:off + 1 + stride])
    off += 1 + stride
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
def find(rgb):
    ys = []
    for y, line in enumerate(rows):
        for x in range(0, stride, bpp):
            if all(abs(line[x + k] - rgb[k]) <= 4 for k in range(3)):
                ys.append(y)
    return ys
green, red = find((0x2e, 0x9d, 0x4f)), find((0xd9, 0x3f, 0x3f))
print("validated-colour pixels %d, failing-colour pixels %d" % (len(green), len(red)))
assert len(green) >= 100, "too few pixels of the validated colour: %d" % len(green)
assert len(red) >= 50, "too few pixels of the failing colour: %d" % len(red)
assert min(red) > min(green), "the failing bar is not below the first validated ones"
PY
exit 0
