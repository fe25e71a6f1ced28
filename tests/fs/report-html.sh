#!/usr/bin/env bash
# report.html and index.html (SPEC §3, §9) over a live pipeline whose item ran stages and
# recipes, one validated and one failing, then a recorded run whose command holds markup: both
# pages are HTML that xmllint parses with no error but its HTML 4 parser's "Tag svg invalid"
# (and well-formed XML); the timeline has one bar per run, in the order and with the status
# class and colour of the runs table (but the validate stage's, failing for its failed batch);
# every link resolves to a file on the mount; nothing is loaded from a network and there is no
# script; markup from commands, documents and the diff is escaped; the pages are read-only
# views, listed where SPEC puts them; and index.html at the root is a name no item can take.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 03-fail
printf '# Fix <b>bold</b> & "quoted" greeting\n' >"$d/brief.md"
wt=$STORE/worktrees/fix-1
printf '<script>alert("diff")</script> & more\n' >"$wt/page.html"
git -C "$wt" add page.html
git -C "$wt" commit -q -m "add a page with markup"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked
(cd "$d" && "$PFS" record 01-build -- sh -c 'echo "<script>alert(1)</script> & ok"' \
	>"$T/rec.out" 2>&1 </dev/null) || fail "packetfs record failed: $(cat "$T/rec.out")"
wait_for grep -q 'script' "$r"

page=$d/report.html
cp "$page" "$T/report.html"
cp "$M/index.html" "$T/index.html"

# Listed where SPEC §3 puts them, read-only, and no document can take their names.
ls "$d" | grep -qx report.html || fail "report.html not listed in the item: $(ls "$d")"
ls "$M" | grep -qx index.html || fail "index.html not listed at the root: $(ls "$M")"
assert_eq "-r--r--r--" "$(stat -c %A "$page")" "mode of report.html"
assert_eq "$(cat "$page" | wc -c)" "$(stat -c %s "$page")" "size of report.html (stat against read)"
assert_fails_with EACCES sh_write "$page" "<p>overwritten</p>"
assert_fails_with EACCES sh_append "$M/index.html" "<p>appended</p>"
assert_fails_with EACCES rm "$page"
assert_fails_with EEXIST mkdir "$M/index.html"
assert_fails_with "index.html: item exists" "$PFS" new "$M" index.html

# xmllint --html: no error but the HTML 4 parser's unknown SVG tags; and well-formed XML.
for f in "$T/report.html" "$T/index.html"; do
	xmllint --html --noout "$f" 2>"$T/lint.err" || fail "xmllint --html exited non-zero on $f"
	bad=$(grep -E 'error|warning' "$T/lint.err" |
		grep -vE 'HTML parser error : Tag (svg|g|rect|line|text) invalid$' || true)
	[ -z "$bad" ] || fail "xmllint --html found errors in ${f##*/}: $bad"
	xmllint --noout "$f" 2>"$T/xml.err" || fail "${f##*/} is not well-formed XML: $(cat "$T/xml.err")"
done

# One bar per run, in run order, with the run's status as class and colour; each bar a link to
# its run's log, and each log linked.
python3 - "$T/report.html" "$STORE/packetfs.db" <<'PY' || fail "the timeline does not match the runs"
import re, sqlite3, sys
html = open(sys.argv[1], encoding="utf-8").read()
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
runs = db.execute("select run_no, kind, name, status, log_path from runs order by run_no").fetchall()
colour = {"validated": "#2e9d4f", "succeeded": "#2e9d4f", "failing": "#d93f3f", "failed": "#d93f3f"}
svg = re.search(r'<svg class="timeline".*?</svg>', html, re.S).group(0)
bars = re.findall(r'<a href="([^"]*)"><title>([^<]*)</title><rect class="bar s-([a-z_]+)" data-run="(\d+)"[^>]* fill="(#[0-9a-f]{6})"', svg)
assert len(bars) == len(runs), "bars %d, runs %d: %s" % (len(bars), len(runs), bars)
assert len(re.findall(r'<rect class="bar ', svg)) == len(runs), "stray bars"
for (href, title, cls, run_no, fill), (no, kind, name, status, log) in zip(bars, runs):
    assert int(run_no) == no, (run_no, no)
    # The validate stage succeeded, but 03-fail of its batch did not validate: it wears failing.
    worn = "failing" if (kind, name, status) == ("stage", "validate", "succeeded") else status
    if worn != status:
        assert "succeeded; 1 recipe failing: 03-fail" in title, title
    assert cls == worn, (no, cls, worn)
    assert href == log, (no, href, log)
    assert name in title and status in title, (title, name, status)
    if worn in colour:
        assert fill == colour[worn], (no, worn, fill)
    assert ('href="%s"' % log) in html.split("</svg>", 1)[1], "log %s not in the list of logs" % log
statuses = [r[3] for r in runs]
assert "validated" in statuses and "failing" in statuses and "succeeded" in statuses, statuses
assert [r[1] for r in runs].count("stage") >= 3 and [r[1] for r in runs].count("recipe") >= 3, runs
assert "iteration 1" in svg, "no iteration heading"
PY

# Every relative link resolves to a file on the mount; nothing loads from a network; no script.
python3 - "$T/report.html" "$d" "$T/index.html" "$M" <<'PY' || fail "a link does not resolve"
import html as H, os, re, sys, urllib.parse
for page, base in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    text = open(page, encoding="utf-8").read()
    links = re.findall(r'\shref="([^"]*)"', text)
    assert links, page
    for l in links:
        target = os.path.join(base, urllib.parse.unquote(H.unescape(l)))
        assert os.path.exists(target), "%s: %s -> %s" % (page, l, target)
PY
for f in "$T/report.html" "$T/index.html"; do
	grep -Eiq '(src|href|action|data)=["'"'"']?(https?:)?//' "$f" &&
		fail "${f##*/} refers to a network resource: $(grep -Eio '(src|href)=.{0,40}' "$f")"
	grep -Eiq '@import|url\(' "$f" && fail "${f##*/} loads a style resource"
	grep -iq '<script' "$f" && fail "${f##*/} has a script element"
done

# Escaped: the recorded command, the brief's title and the diff, as text.
report=$(cat "$T/report.html")
assert_contains "$report" '&lt;script&gt;alert(1)&lt;/script&gt; &amp; ok' "report.html (command)"
assert_contains "$report" 'Fix &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; greeting' \
	"report.html (title)"
assert_contains "$report" '<span class="add">+&lt;script&gt;alert(&quot;diff&quot;)&lt;/script&gt; &amp; more</span>' \
	"report.html (diff)"
assert_contains "$report" '<span class="del">-	printf(&quot;hello, old world\n&quot;);</span>' \
	"report.html (removed line)"
assert_contains "$report" "$(status_field "$M" fix-1 head)" "report.html (head)"
assert_contains "$report" '<td class="st s-blocked">blocked</td>' "report.html (state)"
# The evidence table holds evidence.md's rows: the latest run of each named recipe.
assert_contains "$report" '<td class="st s-failing">failing</td>' "report.html (evidence of 03-fail)"
assert_contains "$report" "<h3>$(head -n 1 "$d/validation/evidence.md" | sed 's/^# //')</h3>" \
	"report.html (evidence heading)"

index=$(cat "$T/index.html")
assert_contains "$index" '<a href="fix-1/report.html">fix-1</a>' "index.html (link)"
assert_contains "$index" '<td class="st s-blocked">blocked</td>' "index.html (state)"
assert_contains "$index" "<td>$(status_field "$M" fix-1 evidence)</td>" "index.html (evidence)"
assert_contains "$index" 'Fix &lt;b&gt;bold&lt;/b&gt;' "index.html (title)"
assert_eq "$(sqlite3 "$STORE/packetfs.db" 'select count(*) from runs')" \
	"$(grep -o '<rect class="run ' "$T/index.html" | wc -l)" "runs in the index strip"

# A second item is a second row; an archived one leaves the index and keeps its page.
new_item fix-2
assert_contains "$(cat "$M/index.html")" '<a href="fix-2/report.html">fix-2</a>' "index.html"
assert_contains "$(cat "$M/fix-2/report.html")" "No runs yet." "report.html of a new item"
ctl "$M" fix-2 archive
assert_not_contains "$(cat "$M/index.html")" 'fix-2/report.html' "index.html after archive"
xmllint --noout "$M/.archive/fix-2/report.html" || fail "the archived report.html is not XML"
exit 0
