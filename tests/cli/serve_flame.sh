#!/bin/sh
# tests/cli/serve_flame.sh - heapdump serve's flame graph (/api/flame and
# the page's icicle) on data/dumps/leak_after.json: 403 without the
# token, 400 on bad arguments, 404 for a frame the graph has not; the
# whole graph's total is top's reached memsize (by path) and the object
# count of `flame --by site -m count` (by site); the outermost frames and
# their totals are the folded output's of `heapdump flame`; a frame
# asked for is the root with its chain above it; then Debian's headless
# chromium (tools/serve_flame_browser.mjs): the widest frame drawn with
# its total, as wide as its share, a click zooms into it and the crumbs
# lead back. Screenshot: build/serve/flame.png.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl
needs node "nodejs (and npm, then: npm ci --prefix tests)"
needs chromium chromium
[ -d "$TOP/tests/node_modules/puppeteer-core" ] ||
	{ notok puppeteer "the npm package puppeteer-core is missing: npm ci --prefix tests"; exit 1; }
H=$HEAPDUMP
A=$DATA/leak_after.json
SHOTS=$TOP/${B:-build}/serve
case ${B:-build} in /*) SHOTS=$B/serve ;; esac
mkdir -p "$SHOTS"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
get() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/$1"; }

serve_start serve 300 "$H" serve -q "$A" || exit 1
check api/no-token 403 "$(code "$BASE/api/flame")"
check api/bad-depth 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?depth=13")"
check api/bad-by 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?by=stack")"
check api/no-frame 404 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?frame=99999999")"

"$H" top -q -n 1 -f json "$A" >"$TMP/top.json"
"$H" flame -q "$A" >"$TMP/path.folded"
get "flame?depth=1&min_share=0" >"$TMP/f.json"
check api/total "$(jq .reached_memsize "$TMP/top.json")" "$(jq .root.total "$TMP/f.json")"
check api/unit bytes "$(jq -r .unit "$TMP/f.json")"
# the outermost frames, as the folded output sums them
awk '{ n = $NF; sub(/ [0-9]+$/, ""); split($0, f, ";"); t[f[1]] += n }
	END { for (k in t) print k "\t" t[k] }' "$TMP/path.folded" | sort >"$TMP/want"
jq -r '.root.children[] | "\(.name)\t\(.total)"' "$TMP/f.json" | sort >"$TMP/got"
check api/outermost "" "$(diff "$TMP/want" "$TMP/got" | head -5)"
check api/not-folded "null" "$(jq -c .root.folded "$TMP/f.json")"
# by site, counted
"$H" flame -q --by site -m count "$A" >"$TMP/site.folded"
get "flame?by=site&metric=count&depth=1" >"$TMP/s.json"
check api/site-total "$(awk '{ s += $NF } END { print s }' "$TMP/site.folded")" "$(jq .root.total "$TMP/s.json")"
check api/site-unit objects "$(jq -r .unit "$TMP/s.json")"
# a frame asked for: Thread under Ractor, its chain above it
rid=$(jq '.root.children[] | select(.name == "Ractor (DATA)") | .id' "$TMP/f.json")
get "flame?frame=$rid&depth=1" >"$TMP/r.json"
check api/frame-name "Ractor (DATA)" "$(jq -r .root.name "$TMP/r.json")"
tid=$(jq '.root.children[] | select(.name == "Thread (DATA)") | .id' "$TMP/r.json")
get "flame?frame=$tid" >"$TMP/t.json"
check api/frame-total 1049072 "$(jq .root.total "$TMP/t.json")"
check api/frame-chain '["Ractor (DATA)"]' "$(jq -c '[.chain[].name]' "$TMP/t.json")"
# bounded: never more frames than max_nodes
get "flame?depth=12&min_share=0" >"$TMP/all.json"
n=$(jq '[.. | objects | select(has("total") and has("self"))] | length' "$TMP/all.json")
check api/bounded yes "$([ "$n" -le "$(jq .max_nodes "$TMP/all.json")" ] && [ "$n" -gt 100 ] && echo yes || echo "no: $n")"
# the objects of a frame: as many as its count, every one once, a frame
# above holds those of its children too, and bad arguments refused
get "flame?metric=count&depth=1&min_share=0" >"$TMP/c.json"
crid=$(jq '.root.children[] | select(.name == "Ractor (DATA)") | .id' "$TMP/c.json")
get "flame?metric=count&frame=$crid&depth=1&min_share=0" >"$TMP/cr.json"
ctid=$(jq '.root.children[] | select(.name == "Thread (DATA)") | .id' "$TMP/cr.json")
get "flame?metric=count&frame=$ctid&objects=1" >"$TMP/o.json"
crt=$(get "flame?metric=count&frame=$crid&objects=1" | jq .count)
check api/objects-count "$(jq '.root.total, (.root.children[] | select(.name == "Thread (DATA)") | .total)' "$TMP/cr.json")" \
	"$(printf '%s\n' "$crt"; jq .count "$TMP/o.json")"
check api/objects-listed "$(jq '[.count, 500] | min' "$TMP/o.json")" "$(jq '[.objects[].address] | unique | length' "$TMP/o.json")"
check api/objects-name "Thread (DATA)" "$(jq -r .name "$TMP/o.json")"
addr=$(jq -r '.objects[0].address' "$TMP/o.json")
check api/objects-link 200 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/object?address=$addr")"
# by site: the whole graph's objects are every counted object
get "flame?by=site&metric=count&objects=1" >"$TMP/so.json"
check api/objects-site "$(jq .root.total "$TMP/s.json")" "$(jq .count "$TMP/so.json")"
check api/objects-bad 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?objects=yes")"
check api/objects-no-frame 404 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?objects=1&frame=99999999")"

# ---- the page, in chromium ----
jq -n --argjson t "$(jq .root.total "$TMP/f.json")" --slurpfile f "$TMP/f.json" '
	{total: $t, widest_name: ($f[0].root.children | max_by(.total) | .name),
	 widest_total: ($f[0].root.children | max_by(.total) | .total)}' >"$TMP/expect.json"
(cd "$TOP/tests" && node tools/serve_flame_browser.mjs "$URL" "$TMP/expect.json" "$SHOTS") 2>"$TMP/browser.err" ||
	notok browser/run "the browser run failed: $(head -c 500 "$TMP/browser.err")"
kill "$SPID"
