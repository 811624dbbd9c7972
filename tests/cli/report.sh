#!/bin/sh
# report.sh - heapdump report writes one self-contained HTML page (issue
# 16): the leak report of two or three dumps, the overview of one.
#
#  - numbers: on the real leak scenarios of data/dumps (named_ruby3.1_leak
#    with reference names, leak_clusters with five suspects in two
#    clusters, the XSS set) the page, read with Python's html.parser
#    (report_check.py), gives the numbers of `heapdump leaks -f json`
#    (verdict, every suspect: counts, shares, holder, path with its
#    reference names, classes, sites; the clusters) and of `heapdump diff
#    -f json` (the tables by class and location); one dump gives those of
#    `stats -f json`, `top -f json` and `top --by class -f json`, and the
#    process memory of the gem's sidecar;
#  - XSS: class names, file names and method names holding
#    <script>alert(1)</script>, quotes, control bytes and an escape
#    sequence (data/gen/xss.rb, Ruby 3.4.8) come out as text: no element
#    or attribute but ours, no raw control byte, the markup readable;
#  - no network: no src/href out of the page, no url() in styles, a CSP
#    of default-src 'none';
#  - chromium (Debian's, headless) opens each page without a console
#    message (the CSP makes any load or script one: a page with both is
#    the control that the check sees them) and its screenshot, kept in
#    build/report/, has more than one colour;
#  - the caveats: two dumps (growth, not a leak), the dumps in the wrong
#    order (refused, exit 2; with --force said on the page), the same dump
#    twice (nothing new, and what was checked), one dump (no verdict);
#  - outputs: stdout by default and with -o -, -o over an input refused
#    (exit 2, input intact), a symlink followed, a regular file replaced
#    by rename, a failed run leaves the old file, a FIFO written in place;
#  - built without Graphviz (make GVC=0) the report is written and says
#    the drawings are unavailable. The suite draws, as leaks --svg does:
#    tests/cli/nogvc.sh leaves it out of its re-runs, and it runs the
#    GVC=0 program itself.
. "$(dirname "$0")/../lib.sh"
# under ASan: what Graphviz's font stack keeps until exit is not ours
# (the drawings link libgvc); the same suppressions as export.sh
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS
needs python3 python3
needs chromium chromium
cd "$TOP" || exit 1
B=${B:-build}
case $B in
/*) ART=$B/report NOGVC=$B/nogvc/heapdump ;;
*) ART=$TOP/$B/report NOGVC=$TOP/$B/nogvc/heapdump ;;
esac
mkdir -p "$ART"
H=$HEAPDUMP
PY="python3 $TOP/tests/cli/report_check.py"
export SUITE
D=$DATA

# ---- usage ----
check_rc usage/no-dump 2 "$H" report
# seventeen dumps: one more than a report takes
set -- "$D/leak_before.json" "$D/leak_after.json"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do set -- "$@" "$D/leak_later.json"; done
check_rc usage/seventeen-dumps 2 "$H" report "$@"
check_rc usage/top-0 2 "$H" report -n 0 "$D/leak_before.json" "$D/leak_after.json"
check_rc usage/help 0 "$H" report --help
check_grep usage/help-synopsis 'BEFORE AFTER \[STEP\.\.\.\] \[LATER\] \| DUMP' "$TMP/out"

# ---- the leak report: numbers of leaks, diff ----
# leak NAME DUMP... : report and the JSON of leaks and diff, compared
leak() {
	name=$1
	shift
	"$H" report -q "$@" -o "$ART/$name.html" 2>"$TMP/$name.err"
	check "$name/exit" 0 "$?"
	"$H" leaks -q -f json "$@" >"$TMP/$name.leaks.json" 2>/dev/null
	"$H" diff -q -f json -b class -s memsize "$@" >"$TMP/$name.dc.json" 2>/dev/null
	"$H" diff -q -f json -b location -s memsize "$@" >"$TMP/$name.dl.json" 2>/dev/null
	$PY leak "$name" "$ART/$name.html" "$TMP/$name.leaks.json" \
		"$TMP/$name.dc.json" "$TMP/$name.dl.json"
	$PY safe "$name" "$ART/$name.html"
}
leak named3 "$D/named_ruby3.1_leak_before.json.gz" "$D/named_ruby3.1_leak_after.json.gz" \
	"$D/named_ruby3.1_leak_later.json.gz"
leak clusters3 "$D/leak_clusters_before.json.gz" "$D/leak_clusters_after.json.gz" \
	"$D/leak_clusters_later.json.gz"
leak clusters2 "$D/leak_clusters_before.json.gz" "$D/leak_clusters_after.json.gz"
leak xss3 "$D/xss_ruby3.4.8_before.json.gz" "$D/xss_ruby3.4.8_after.json.gz" \
	"$D/xss_ruby3.4.8_later.json.gz"
# a name of the leak (ref_names: ::LeakyCache, ::CACHE) is on the page
check_grep named3/ref-names '::LeakyCache.*::CACHE' "$ART/named3.html"
$PY caveat clusters2/two-dumps "$ART/clusters2.html" two-dumps

# ---- XSS: the hostile names are text ----
MARK='<script>alert(1)</script>"'"'"'\u0001\u001b[2J&amp;'
SITE='<script>alert(2)</script>\u0001.rb:2'
$PY safe xss3-marks "$ART/xss3.html" "$MARK" "$SITE"
"$H" report -q "$D/xss_ruby3.4.8_after.json.gz" -o "$ART/xss1.html"
check xss1/exit 0 "$?"
$PY safe xss1 "$ART/xss1.html" "$MARK" "$SITE"
"$H" stats -q -f json -s memsize -b type -b class -b location "$D/xss_ruby3.4.8_after.json.gz" >"$TMP/x.stats.json"
"$H" top -q -f json "$D/xss_ruby3.4.8_after.json.gz" >"$TMP/x.top.json"
"$H" top -q -f json --by class "$D/xss_ruby3.4.8_after.json.gz" >"$TMP/x.topc.json"
$PY one xss1 "$ART/xss1.html" "$TMP/x.stats.json" "$TMP/x.top.json" "$TMP/x.topc.json"

# ---- one dump: stats, top, the sidecar ----
ONE="$D/ok_ruby3.1_traced.json"
"$H" report -q "$ONE" -o "$ART/one.html" 2>/dev/null
check one/exit 0 "$?"
"$H" stats -q -f json -s memsize -b type -b class -b location "$ONE" >"$TMP/s.json" 2>/dev/null
"$H" top -q -f json "$ONE" >"$TMP/t.json" 2>/dev/null
"$H" top -q -f json --by class "$ONE" >"$TMP/tc.json" 2>/dev/null
$PY one one "$ART/one.html" "$TMP/s.json" "$TMP/t.json" "$TMP/tc.json"
$PY safe one "$ART/one.html"
$PY caveat one/one-dump "$ART/one.html" one-dump
# with a sidecar (the gem's DUMP.meta.json) beside the dump
mkdir "$TMP/sc"
cp "$ONE" "$TMP/sc/d.json"
printf '{"heapdump_sidecar":1,"pid":4242,"time":"2026-11-24T10:00:00.000000Z","ruby_version":"3.1.2","rss_bytes":52428800,"memsize_of_all":9000000,"malloc_in_use":20000000}\n' \
	>"$TMP/sc/d.json.meta.json"
"$H" report -q "$TMP/sc/d.json" -o "$TMP/sc/r.html" 2>/dev/null
check sidecar/exit 0 "$?"
"$H" stats -q -f json -s memsize -b type -b class -b location "$TMP/sc/d.json" >"$TMP/sc/s.json" 2>/dev/null
$PY one sidecar "$TMP/sc/r.html" "$TMP/sc/s.json" "$TMP/t.json" "$TMP/tc.json" "$TMP/sc/s.json"
# a store: the same page
"$H" index -q "$ONE" -o "$TMP/one.hds" 2>/dev/null
"$H" report -q "$TMP/one.hds" -o "$TMP/store.html" 2>/dev/null
check store/same-page "$(sed "s|$ONE|X|g" "$ART/one.html" | cksum)" \
	"$(sed "s|$TMP/one.hds|X|g" "$TMP/store.html" | cksum)"

# ---- caveats ----
CB="$D/leak_clusters_before.json.gz"
CA="$D/leak_clusters_after.json.gz"
check_rc order/refused 2 "$H" report -q "$CA" "$CB" -o "$TMP/order.html"
check_grep order/refused-says 'wrong order.*--force' "$TMP/err"
check order/refused-nothing-written no "$([ -e "$TMP/order.html" ] && echo yes || echo no)"
check_rc order/forced 0 "$H" report -q --force "$CA" "$CB" -o "$ART/order.html"
$PY caveat order/forced-says "$ART/order.html" order
"$H" report -q "$CB" "$CB" -o "$ART/same.html" 2>/dev/null
check same/exit 0 "$?"
$PY caveat same/nothing-new "$ART/same.html" nothing-new
check_grep same/what-was-checked '<dt>checked</dt><dd>8,101 objects of <em>after</em> against 8,101' "$ART/same.html"
check same/not-no-leak 0 "$(grep -ci 'no leak' "$ART/same.html")"
# uncertain matches: the tip to trace allocations only on untraced dumps
# (the clusters dumps are traced, their uncertain objects older than
# the tracing; the names dumps are not traced)
"$H" report -q "$CB" "$CA" -o "$TMP/traced.html" 2>/dev/null
$PY caveat uncertain/traced-listed "$TMP/traced.html" uncertain
check uncertain/traced-no-tip 0 "$(grep -c 'allocation tracing in the dumps makes it certain' "$TMP/traced.html")"
"$H" report -q "$D/named_ruby3.1_names_before.json.gz" "$D/named_ruby3.1_names_after.json.gz" \
	-o "$TMP/untraced.html" 2>/dev/null
$PY caveat uncertain/untraced-listed "$TMP/untraced.html" uncertain
# once in the page (the leak's data, a JSON block, says it too)
check uncertain/untraced-tip 1 "$(grep -v 'id="leak-data"' "$TMP/untraced.html" | grep -c 'allocation tracing in the dumps makes it certain')"

# ---- outputs ----
cp "$D/leak_before.json" "$TMP/in.json"
cp "$D/leak_after.json" "$TMP/in2.json"
"$H" report -q "$TMP/in.json" "$TMP/in2.json" >"$TMP/stdout.html"
check out/stdout-exit 0 "$?"
"$H" report -q "$TMP/in.json" "$TMP/in2.json" -o - >"$TMP/dash.html"
check out/dash-is-stdout "$(cksum <"$TMP/stdout.html")" "$(cksum <"$TMP/dash.html")"
check_grep out/stdout-is-html '^<!DOCTYPE html>' "$TMP/stdout.html"
sum=$(cksum <"$TMP/in2.json")
check_rc out/input-refused 2 "$H" report -q "$TMP/in.json" "$TMP/in2.json" -o "$TMP/in2.json"
check_grep out/input-refused-says 'is the input' "$TMP/err"
check out/input-intact "$sum" "$(cksum <"$TMP/in2.json")"
ln -s "$TMP/in2.json" "$TMP/link.html"
check_rc out/link-to-input-refused 2 "$H" report -q "$TMP/in.json" "$TMP/in2.json" -o "$TMP/link.html"
echo old >"$TMP/target.html"
ln -s "$TMP/target.html" "$TMP/link2.html"
check_rc out/symlink-exit 0 "$H" report -q "$TMP/in.json" "$TMP/in2.json" -o "$TMP/link2.html"
check out/symlink-kept yes "$([ -L "$TMP/link2.html" ] && echo yes || echo no)"
check_grep out/symlink-followed '^<!DOCTYPE html>' "$TMP/target.html"
echo old >"$TMP/reg.html"
ino=$(stat -c %i "$TMP/reg.html")
check_rc out/regular-exit 0 "$H" report -q "$TMP/in.json" "$TMP/in2.json" -o "$TMP/reg.html"
check out/regular-renamed yes "$([ "$(stat -c %i "$TMP/reg.html")" != "$ino" ] && echo yes || echo no)"
echo old >"$TMP/keep.html"
check_rc out/failed-run-exit 1 "$H" report -q "$TMP/in.json" "$TMP/nosuch.json" -o "$TMP/keep.html"
check out/failed-run-keeps old "$(cat "$TMP/keep.html")"
check out/failed-run-no-temp 0 "$(ls -a "$TMP" | grep -c 'keep.html.')"
mkfifo "$TMP/fifo"
timeout 60 cat "$TMP/fifo" >"$TMP/fifo.out" &
"$H" report -q "$TMP/in.json" "$TMP/in2.json" -o "$TMP/fifo"
rc=$?
check out/fifo-exit 0 "$rc"
# a run that never opened the FIFO would leave the reader waiting
[ "$rc" = 0 ] || : >"$TMP/fifo"
wait
check out/fifo-in-place yes "$([ -p "$TMP/fifo" ] && echo yes || echo no)"
check out/fifo-content "$(cksum <"$TMP/stdout.html")" "$(cksum <"$TMP/fifo.out")"

# ---- several drawings in one process ----
# Each drawing once had its own Graphviz context, freed after it: the
# second one read what the first freed (a use after free under ASan, in
# report and in leaks --svg alike); one context now serves them all.
check_rc drawings/leaks-svg-four 0 "$H" leaks -q --svg "$TMP/svgs" "$D/leak_clusters_before.json.gz" \
	"$D/leak_clusters_after.json.gz" "$D/leak_clusters_later.json.gz"
check drawings/leaks-svg-files 4 "$(ls "$TMP/svgs" | grep -c '^suspect-[0-9]*\.svg$')"
check drawings/report-svgs 4 "$(grep -v 'id="growth-flame"' "$ART/clusters3.html" | grep -c '<svg')"

# ---- the growth's icicle (no stacks in these dumps: by retention path) ----
# icicle NAME DUMP...: the SVG's total and outermost frames are those of
# `heapdump flame` (folded) on the same dumps, the widest as wide as its
# share; no script in it, every frame's text as the tree names it
icicle() {
	name=$1
	shift
	"$H" flame -q "$@" >"$TMP/$name.folded"
	want=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); split($0, f, ";"); t[f[1]] += n; s += n }
		END { for (k in t) if (t[k] > m) { m = t[k]; w = k }; print s, w, m }' "$TMP/$name.folded")
	got=$(python3 - "$ART/$name.html" <<'PY'
import sys, html.parser
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.svg = None; s.g = None; s.frames = []; s.intitle = False; s.bad = 0
    def handle_starttag(s, t, a):
        a = dict(a)
        if t == "svg" and a.get("id") == "growth-flame": s.svg = a
        elif s.svg is not None and len(s.frames) >= 0 and t == "g" and not s.done():
            s.g = {"depth": a["data-depth"], "total": int(a["data-total"]), "title": ""}; s.frames.append(s.g)
        elif s.g is not None and t == "title": s.intitle = True
        elif s.g is not None and t == "rect": s.g["width"] = float(a["width"])
        elif s.svg is not None and not s.done() and t in ("script", "foreignobject", "a"): s.bad += 1
    def done(s): return getattr(s, "_done", False)
    def handle_endtag(s, t):
        if t == "title": s.intitle = False
        if t == "svg" and s.svg is not None: s._done = True; s.g = None
    def handle_data(s, d):
        if s.intitle and s.g is not None: s.g["title"] += d
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read())
if p.svg is None: print("no icicle"); sys.exit()
one = [f for f in p.frames if f["depth"] == "1"]
w = max(one, key=lambda f: f["width"])
total, W = int(p.svg["data-total"]), float(p.svg["width"])
share = "yes" if abs(w["width"] / W - w["total"] / total) < 0.001 else "no: %s" % w
print(total, w["title"].rsplit(" \u2014 ", 1)[0], w["total"], share, p.bad)
PY
)
	check "icicle/$name" "$want yes 0" "$got"
}
icicle named3 "$D/named_ruby3.1_leak_before.json.gz" "$D/named_ruby3.1_leak_after.json.gz" \
	"$D/named_ruby3.1_leak_later.json.gz"
icicle clusters2 "$D/leak_clusters_before.json.gz" "$D/leak_clusters_after.json.gz"
icicle xss3 "$D/xss_ruby3.4.8_before.json.gz" "$D/xss_ruby3.4.8_after.json.gz" \
	"$D/xss_ruby3.4.8_later.json.gz"

# ---- without Graphviz ----
if [ -x "$NOGVC" ]; then
	"$NOGVC" report -q "$D/named_ruby3.1_leak_before.json.gz" "$D/named_ruby3.1_leak_after.json.gz" \
		"$D/named_ruby3.1_leak_later.json.gz" -o "$TMP/nogvc.html" 2>"$TMP/nogvc.err"
	check nogvc/exit 0 "$?"
	check_grep nogvc/says 'class="nodrawing muted">Drawing unavailable: this heapdump was built without Graphviz' "$TMP/nogvc.html"
	check nogvc/no-svg 0 "$(grep -v 'id="growth-flame"' "$TMP/nogvc.html" | grep -c '<svg')"
	check nogvc/icicle 1 "$(grep -c '<svg id="growth-flame"' "$TMP/nogvc.html")"
	check nogvc/quiet "" "$(cat "$TMP/nogvc.err")"
else
	notok nogvc/built "$NOGVC is missing: make check builds it (make B=$B/nogvc GVC=0)"
fi

# ---- chromium: the pages open, cleanly, and draw ----
# shot NAME HTML: a screenshot into $ART/NAME.png, chromium's log in $TMP
shot() {
	rm -f "$ART/$1.png"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$TMP/chromium-profile" \
		--enable-logging=stderr --v=0 --window-size=1200,1800 \
		--screenshot="$ART/$1.png" "file://$2" >"$TMP/$1.chromium" 2>&1
	echo $?
}
# console: the lines of a chromium log that say a page misbehaved
console() {
	grep -E ':CONSOLE|Refused to|net::ERR_|Uncaught|Content Security Policy' "$1"
}
cat >"$TMP/bad.html" <<'EOF'
<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head>
<body><p>control</p><img src="missing.png"><script>document.title = "ran"</script></body></html>
EOF
check chromium/control-exit 0 "$(shot control "$TMP/bad.html")"
check chromium/control-seen yes "$([ "$(console "$TMP/control.chromium" | wc -l)" -ge 2 ] && echo yes || echo no)"
for p in named3 xss3 one; do
	check "chromium/$p-exit" 0 "$(shot "$p" "$ART/$p.html")"
	check "chromium/$p-no-console" "" "$(console "$TMP/$p.chromium" | head -3)"
	$PY png "chromium/$p-not-blank" "$ART/$p.png"
done
