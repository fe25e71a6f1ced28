#!/usr/bin/env bash
# A validate stage whose program succeeded while a recipe of its batch timed out: what a person
# sees. The stage run stays `succeeded` in the store (SPEC §5: its program exited 0), but
# report.html (the timeline bar, its tooltip, the list of logs) and index.html (the strip) show
# it as `succeeded; 1 recipe timed out: 10-flaky` in the failing colour, never a green bar for
# failed evidence; status and `packetfs status` show 0/1 validated and the gate's refusal naming
# the recipe. Once a rerun of the recipe validates, the stage's row is green again.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
cat >"$RECIPES/10-flaky.sh" <<EOF2
#!/usr/bin/env bash
# summary: runs past its timeout until $T/fast exists
# needs: none
# timeout: 2
[ -e "$T/fast" ] || sleep 60
echo fast
EOF2
chmod +x "$RECIPES/10-flaky.sh"
PLAN_RECIPES=10-flaky std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked
db=$STORE/packetfs.db
vrun=$(sqlite3 "$db" "select run_no from runs where kind = 'stage' and name = 'validate'")
assert_eq succeeded "$(sqlite3 "$db" "select status from runs where run_no = $vrun")" \
	"the validate stage run as stored"
assert_eq 1 "$(reg count "$r" recipe=10-flaky status=timed_out)" "timed_out lines"

# status and packetfs status: the evidence and the gate's refusal, naming the recipe.
assert_eq "0/1 validated" "$(status_field "$M" fix-1 evidence)" "status evidence"
assert_contains "$(status_field "$M" fix-1 last_error)" "10-flaky: latest run at" "status last_error"
assert_contains "$(status_field "$M" fix-1 last_error)" "is timed_out" "status last_error"
row=$(COLUMNS=200 "$PFS" status "$M" | grep '^fix-1 ')
assert_contains "$row" "0/1 validated" "packetfs status"
assert_contains "$row" "10-flaky: latest run at" "packetfs status"

shown="succeeded; 1 recipe timed out: 10-flaky"
red='#d93f3f'
# run_rect FILE PATTERN : the first match in FILE of the Python regular expression PATTERN, in
# which %s stands for the validate run's number and the groups c, f and t for the class, fill
# and title of its rect, as "CLASS FILL TITLE" ("none" without a match).
run_rect()
{
	python3 - "$1" "$vrun" "$2" <<'PY'
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(sys.argv[3] % sys.argv[2], page)
print("%s %s %s" % (m["c"], m["f"], html.unescape(m["t"])) if m else "none")
PY
}
# bar FILE : the timeline bar of the validate run in report.html FILE, as "CLASS FILL TITLE".
bar()
{
	run_rect "$1" '<title>(?P<t>[^<]*)</title><rect class="bar s-(?P<c>[a-z_]+)" data-run="%s"[^>]* fill="(?P<f>#[0-9a-f]{6})"'
}
# strip FILE : the strip square of the validate run in index.html FILE, as "CLASS FILL TITLE".
strip()
{
	run_rect "$1" '<rect class="run s-(?P<c>[a-z_]+)"[^>]* fill="(?P<f>#[0-9a-f]{6})"><title>#%s (?P<t>[^<]*)</title>'
}
cp "$d/report.html" "$T/report.html"
cp "$M/index.html" "$T/index.html"
assert_eq "failing $red stage validate (run $vrun, iteration 1): $shown" \
	"$(bar "$T/report.html" | sed 's/, [0-9.]* s$//')" "report.html: the validate bar"
assert_contains "$(cat "$T/report.html")" "<span class=\"st s-failing\">$shown</span>" \
	"report.html: the validate log in the list of logs"
assert_eq "failing $red stage validate: $shown" "$(strip "$T/index.html")" \
	"index.html: the validate run in the strip"

# The recipe validates on a rerun: its batch is whole again, and so is the stage's row.
touch "$T/fast"
ctl "$M" fix-1 "rerun 10-flaky"
wait_for test "$(reg count "$r" recipe=10-flaky status=validated)" = 1
wait_for test "$(status_field "$M" fix-1 evidence)" = "1/1 validated"
cp "$d/report.html" "$T/report2.html"
cp "$M/index.html" "$T/index2.html"
assert_eq "succeeded #2e9d4f stage validate (run $vrun, iteration 1): succeeded" \
	"$(bar "$T/report2.html" | sed 's/, [0-9.]* s$//')" "report.html: the validate bar after the rerun"
assert_eq "succeeded #2e9d4f stage validate: succeeded" "$(strip "$T/index2.html")" \
	"index.html: the validate run after the rerun"
exit 0
