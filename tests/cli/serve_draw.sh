#!/bin/sh
# serve_draw.sh - heapdump serve's drawings: /api/treemap (a bounded part
# of the dominator tree, equal to /api/domtree's and top's numbers) and
# /api/graph.svg (Graphviz's SVG of a leak suspect or of an object's path
# and neighbours: it parses, names the path leaks -f json names, a
# suspect's the same bytes as leaks --svg draws, has its
# own Content-Security-Policy, escapes the dump's markup), both behind
# the token; then the page in Debian's headless chromium through
# puppeteer-core (tests/tools/serve_draw_browser.mjs): the treemap's
# biggest rectangle, a click that zooms in, the drawings shown, a dump of
# hostile names (data/gen/xss_page.rb) as text. Screenshots:
# build/serve/*.png. It draws with Graphviz, as render and leaks --svg
# do: tests/cli/nogvc.sh leaves it out, and it checks the program built
# without Graphviz itself.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl
needs xmllint libxml2-utils
needs node "nodejs (and npm, then: npm ci --prefix tests)"
needs chromium chromium
[ -d "$TOP/tests/node_modules/puppeteer-core" ] ||
	{ notok puppeteer "the npm package puppeteer-core is missing: npm ci --prefix tests (or make deps)"; exit 1; }

HD=$HEAPDUMP
SHOTS="$TOP/${B:-build}/serve"
case ${B:-build} in /*) SHOTS=$B/serve ;; esac
mkdir -p "$SHOTS"
L="$DATA/named_ruby3.1_leak"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
# under ASan: what Graphviz's font stack keeps until exit is not ours
# (the suppressions of tests/cli/export.sh)
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
export LSAN_OPTIONS

# start NAME ARGS...: serve in the background; sets URL, BASE, TOKEN
start() {
	name=$1
	shift
	serve_start "$name" 300 "$HD" serve -q "$@" || exit 1
}

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
get() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/$1"; }
# the labels of a Graphviz SVG's nodes, one a line: their last text
# (an object's address), by python's XML parser (it fails on bad XML)
svg_addresses() {
	python3 -c '
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
for g in root.iter("{http://www.w3.org/2000/svg}g"):
    if g.get("class") == "node":
        t = [x.text for x in g.iter("{http://www.w3.org/2000/svg}text")]
        if t and t[-1] and t[-1].startswith("0x"):
            print(t[-1])
' "$1"
}

start leak "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz

# ---- the token, on both ----
check token/treemap-none-403 403 "$(code "$BASE/api/treemap")"
check token/graph-none-403 403 "$(code "$BASE/api/graph.svg?suspect=1")"
check token/graph-wrong-403 403 "$(code "$BASE/api/graph.svg?suspect=1&token=00000000000000000000000000000000")"
check token/treemap-ok 200 "$(code "$BASE/api/treemap?token=$TOKEN")"

# ---- /api/treemap equals top and /api/domtree ----
"$HD" top -q -f json -n 3 "$L"_later.json.gz >"$TMP/top.json"
get treemap >"$TMP/tm.json"
check treemap/json-valid 1 "$(jq '.root.children | if length > 0 then 1 else 0 end' "$TMP/tm.json")"
top=$(jq -r '.objects[0].object.address' "$TMP/top.json")
topret=$(jq -r '.objects[0].retained_memsize' "$TMP/top.json")
check treemap/first-is-top "$top $topret" "$(jq -r '.root.children[0] | "\(.address) \(.retained_memsize)"' "$TMP/tm.json")"
check treemap/root-is-reached "$(jq .reached_memsize "$TMP/top.json")" "$(jq .root.retained_memsize "$TMP/tm.json")"
# the children drawn are /api/domtree's, largest first, down to the
# smallest share; the rest folded with their sum
get 'domtree?limit=1000' >"$TMP/dt.json"
min=$(jq .min_retained "$TMP/tm.json")
check treemap/min-is-half-percent "$(jq '.reached_memsize * 0.005 | ceil' "$TMP/top.json")" "$min"
check treemap/children-are-domtree "$(jq -c --argjson m "${min:-null}" '[.children[] | select(.retained_memsize >= $m) | .address]' "$TMP/dt.json")" "$(jq -c '[.root.children[].address]' "$TMP/tm.json")"
# (the virtual root holds no bytes of its own: what is not drawn is folded)
check treemap/folded-sum "$(jq -c '[.total, .reached_memsize]' "$TMP/dt.json")" "$(jq -c '[(.root.children | length) + .root.folded.count, (.root.children | map(.retained_memsize) | add) + .root.folded.retained_memsize]' "$TMP/tm.json")"
get "treemap?root=$(jq -r '.objects[0].object.address' "$TMP/top.json")&min_share=5" >"$TMP/tm5.json"
get "domtree?node=$(jq -r '.objects[0].object.address' "$TMP/top.json")&limit=1000" >"$TMP/dt5.json"
m5=$(jq .min_retained "$TMP/tm5.json")
want=$(jq -c --argjson m "${m5:-null}" '[.children[] | select(.retained_memsize < $m)] | [length, (map(.retained_memsize) | add // 0)]' "$TMP/dt5.json")
check treemap/folded-small "$want" "$(jq -c '.root.folded // {count: 0, retained_memsize: 0} | [.count, .retained_memsize]' "$TMP/tm5.json")"
check treemap/depth-3 1 "$(jq '[.root.children[].children[]?.children[]?] | if length > 0 then 1 else 0 end' "$TMP/tm.json")"
check treemap/no-deeper-than-3 0 "$(jq '[.root.children[].children[]?.children[]?.children[]?] | length' "$TMP/tm.json")"
get "treemap?root=$top&min_share=0" >"$TMP/tm_top.json"
get "domtree?node=$top&limit=1000" >"$TMP/dt_top.json"
check treemap/zoom-children "$(jq -c '[.children[].address]' "$TMP/dt_top.json")" "$(jq -c '[.root.children[].address]' "$TMP/tm_top.json")"
check treemap/zoom-root "$top $topret" "$(jq -r '.root | "\(.address) \(.retained_memsize)"' "$TMP/tm_top.json")"
kid=$(jq -r '.root.children[0].address' "$TMP/tm_top.json")
check treemap/chain-up "$top" "$(get "treemap?root=$kid" | jq -r '.chain[-1].address')"
check treemap/bad-depth 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/treemap?depth=7")"
check treemap/bad-share 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/treemap?min_share=101")"
check treemap/no-object 404 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/treemap?root=0x1")"
# bounded: however small the share, at most 100 children a node and
# 3000 objects in all
check treemap/bounded 1 "$(get 'treemap?min_share=0&depth=6' | jq '[.root | .. | objects | select(has("address") and .address != null)] | length | if . <= 3000 then 1 else 0 end')"

# ---- /api/graph.svg ----
"$HD" leaks -q -f json "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz >"$TMP/leaks.json"
curl -s -D "$TMP/h" -o "$TMP/s1.svg" -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?suspect=1"
check_grep graph/status '^HTTP/1.1 200' "$TMP/h"
check_grep graph/svg-type '^Content-Type: image/svg\+xml' "$TMP/h"
check_grep graph/own-csp "^Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'" "$TMP/h"
check_grep graph/nosniff '^X-Content-Type-Options: nosniff' "$TMP/h"
check_rc graph/xmllint-parses 0 xmllint --noout "$TMP/s1.svg"
svg_addresses "$TMP/s1.svg" | sort >"$TMP/s1.addr"
jq -r '.suspects[0].path.hops[].address' "$TMP/leaks.json" | sort >"$TMP/p1.addr"
check graph/suspect-path-drawn "" "$(comm -23 "$TMP/p1.addr" "$TMP/s1.addr" | tr '\n' ' ')"
check graph/suspect-path-nonempty 1 "$([ "$(wc -l <"$TMP/p1.addr")" -gt 1 ] && echo 1)"
check graph/suspect-holder-drawn 1 "$(grep -cx "$(jq -r '.suspects[0].holder.address' "$TMP/leaks.json")" "$TMP/s1.addr")"
# the path's names, in the labels, as leaks says them
for c in $(jq -r '.suspects[0].path.hops[].class' "$TMP/leaks.json" | sort -u); do
	check "graph/suspect-label-$c" 1 "$(grep -c ">$c<" "$TMP/s1.svg" | sed 's/^[1-9][0-9]*$/1/')"
done
# the drawing comes from the export base serve keeps (hd_export_new_from,
# what the drawing touches), leaks --svg's from the whole store
# (hd_export_new): the same graph, the same bytes
"$HD" leaks -q --svg "$TMP/lsvg" "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz >/dev/null
check graph/suspect-as-leaks-svg 1 "$(cmp -s "$TMP/s1.svg" "$TMP/lsvg/suspect-1.svg" && echo 1)"
# the drawing of an object: its path from the roots and its neighbours
holder=$(jq -r '.suspects[0].holder.address' "$TMP/leaks.json")
"$HD" path -q -f json "$L"_later.json.gz "$holder" >"$TMP/path.json"
get "graph.svg?address=$holder" >"$TMP/o.svg"
check_rc graph/object-parses 0 xmllint --noout "$TMP/o.svg"
svg_addresses "$TMP/o.svg" | sort >"$TMP/o.addr"
jq -r '.path[].address' "$TMP/path.json" | sort >"$TMP/op.addr"
check graph/object-path-drawn "" "$(comm -23 "$TMP/op.addr" "$TMP/o.addr" | tr '\n' ' ')"
get "object?address=$holder&limit=12" | jq -r '.refs[].object.address' | sort -u >"$TMP/refs.addr"
check graph/object-refs-drawn "" "$(comm -23 "$TMP/refs.addr" "$TMP/o.addr" | tr '\n' ' ')"
check graph/bad-suspect 404 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?suspect=100000")"
check graph/neither 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg")"
check graph/both 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?suspect=1&address=$holder")"
check graph/bad-address 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?address=zz")"
check graph/error-is-json 1 "$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?suspect=0" | jq 'has("error") | if . then 1 else 0 end')"

# ---- the page, in chromium ----
jq -n --arg a "$top" --argjson r "$topret" --arg l "$(jq -r '.root.children[0].label' "$TMP/tm.json")" \
	--slurpfile k "$TMP/tm_top.json" --slurpfile lk "$TMP/leaks.json" --slurpfile p "$TMP/path.json" '
	{top_address: $a, top_retained: $r, top_label: $l,
	 top_children: [$k[0].root.children[] | select(.retained_memsize * 200 >= $r) | .address],
	 suspect_path: [$lk[0].suspects[0].path.hops[].address],
	 object_path: [$p[0].path[].address], path_word: "LeakyCache"}' >"$TMP/expect.json"
(cd "$TOP/tests" && node tools/serve_draw_browser.mjs leak "$URL" "$TMP/expect.json" "$SHOTS") 2>"$TMP/browser.err" ||
	notok browser/leak-run "the browser run failed: $(head -c 500 "$TMP/browser.err")"
kill "$SPID"

# one dump: no suspects to draw, an object still drawn
start one "$L"_later.json.gz
check graph/one-dump-no-suspect 404 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?suspect=1")"
check graph/one-dump-object 200 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?address=$holder")"
kill "$SPID"

# ---- built without Graphviz (make GVC=0; make check builds it in
# $B/nogvc): the treemap still, a drawing says what to install ----
case ${B:-build} in
/*) NOGVC=$B/nogvc/heapdump ;;
*) NOGVC=$TOP/${B:-build}/nogvc/heapdump ;;
esac
if [ -x "$NOGVC" ]; then
	HD_SAVE=$HD
	HD=$NOGVC
	start nogvc "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz
	HD=$HD_SAVE
	check nogvc/treemap 200 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/treemap")"
	check nogvc/graph-501 501 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?suspect=1")"
	check nogvc/graph-says "this heapdump was built without Graphviz (make GVC=0): install libgraphviz-dev and rebuild" \
		"$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/graph.svg?suspect=1" | jq -r .error)"
	kill "$SPID"
else
	notok nogvc/built "$NOGVC is missing: make check builds it (make B=${B:-build}/nogvc GVC=0)"
fi

# ---- hostile names ----
X="$DATA/xss_ruby3.4.8.json.gz"
start xss "$X"
cname=$("$HD" stats -q -f json --by class -n 0 "$X" | jq -r '.groupings[0].rows[] | select(.class | test("PWNED")) | .class')
key=$(printf '%s' "$cname" | jq -Rr @uri)
evil=$(get "objects?by=class&key=$key" | jq -r '.objects[0].address')
holder=$(get "object?address=$evil" | jq -r '.dominators.chain[-2].address')
get "treemap?root=$holder&min_share=0" >"$TMP/xtm.json"
check xss/treemap-json-escapes-markup 0 "$(grep -c '<' "$TMP/xtm.json")"
check xss/treemap-class-name "$cname" "$(jq -r --arg a "$evil" '.root.children[] | select(.address == $a) | .label' "$TMP/xtm.json")"
get "graph.svg?address=$evil" >"$TMP/x.svg"
check_rc xss/svg-parses 0 xmllint --noout "$TMP/x.svg"
check xss/svg-no-script-element 0 "$(grep -ci '<script' "$TMP/x.svg")"
check xss/svg-no-markup-from-dump 0 "$(grep -c '<img' "$TMP/x.svg")"
check xss/svg-label-escaped 1 "$(grep -c '&lt;script&gt;window.PWNED=1&lt;/script&gt;&lt;img src=x onerror=&quot;window.PWNED=2&quot;&gt;' "$TMP/x.svg" | sed 's/^[1-9][0-9]*$/1/')"
jq -n --arg c "$cname" --arg a "$evil" --arg h "$holder" '{class_name: $c, address: $a, holder: $h}' >"$TMP/xexpect.json"
(cd "$TOP/tests" && node tools/serve_draw_browser.mjs xss "$URL" "$TMP/xexpect.json" "$SHOTS") 2>"$TMP/browser.err" ||
	notok browser/xss-run "the browser run failed: $(head -c 500 "$TMP/browser.err")"
kill "$SPID"
