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
# lead back. Screenshot: build/serve/flame.png. By allocation stack, on
# a program traced with stacks (tests/ext/stacks_prog.rb, run with the
# gem of the first Ruby: make ext): /api/flame's totals are heapdump
# flame --by stack's folded and speedscope totals, every folded stack is
# a path of the served tree with its self weight, the leaking caller's
# frame (KeepController#index) has as many objects as the folded
# stacks through it; /api/leaks's suspects have leaks -f json's stacks;
# a dump without stacks answers 404 saying so; in
# chromium (tools/serve_flame_stack_browser.mjs) the stack view, that
# frame clicked, its objects listed. Screenshot:
# build/serve/flame-stack.png.
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
sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

serve_start serve 300 "$H" serve -q "$A" || exit 1
check api/no-token 403 "$(code "$BASE/api/flame")"
check api/bad-depth 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?depth=13")"
check api/bad-by 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?by=nope")"
# by stack on a dump without stacks: 404, saying so
check api/no-stacks 404 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?by=stack")"
check api/no-stacks-says "this dump has no allocation stacks (record them with HeapDump.trace(stacks: true))" \
	"$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/flame?by=stack" | jq -r .error)"
check api/stacks-none 0 "$(get "flame?depth=1" | jq .stacks)"
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

# ---- by allocation stack: a program traced with stacks ----
# tests/ext/stacks_prog.rb on the first Ruby (the gem built by make
# ext): make_row called from KeepController, which keeps its rows, and
# DropController; before.json and after.json served (the flame graph is
# after.json's)
R=$(command -v "${HD_RUBIES%% *}" 2>/dev/null || command -v ruby)
v=$("$R" -e 'print RUBY_VERSION')
case ${B:-build} in
/*) EXT=$B/ext-$v ;;
*) EXT=$TOP/${B:-build}/ext-$v ;;
esac
if [ ! -f "$EXT/heapdump_ext.so" ]; then
	notok stack/gem "$EXT/heapdump_ext.so is missing: make ext RUBIES=$R"
	exit 1
fi
mkdir "$TMP/st"
env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$EXT:$TOP/src/lib" "$R" \
	"$TOP/tests/ext/stacks_prog.rb" "$TMP/st" >"$TMP/st.out" 2>"$TMP/st.err" &&
	grep -qx done "$TMP/st.out" ||
	{ notok stack/run "stacks_prog.rb failed: $(tail -c 400 "$TMP/st.err")"; exit 1; }
SA=$TMP/st/after.json
serve_start serve-stack 300 "$H" serve -q --no-cache "$TMP/st/before.json" "$SA" || exit 1
# /api/leaks: each suspect described has its stacks, the first 5 rows
# as leaks -f json writes them (hd_leaks_suspect_stacks_json)
"$H" leaks -q -f json "$TMP/st/before.json" "$SA" >"$TMP/st.leaks.json"
check stack/api-leaks-stacks "$(jq -c '[.suspects[:.totals.shown][] | .stacks]' "$TMP/st.leaks.json")" \
	"$(get leaks | jq -c '[.suspects[:.totals.shown][] | .stacks]')"
check stack/api-leaks-has-stacks true "$(jq '.suspects[0].stacks.rows | length > 0' "$TMP/st.leaks.json")"
# the totals are heapdump flame --by stack's: folded and speedscope,
# counted and in bytes
for m in count memsize; do
	"$H" flame -q --by stack -m $m "$SA" >"$TMP/st.$m.folded"
	"$H" flame -q --by stack -m $m -f speedscope "$SA" >"$TMP/st.$m.speedscope"
	get "flame?by=stack&metric=$m&depth=12&min_share=0" >"$TMP/st.$m.json"
	check stack/$m-total "$(sum "$TMP/st.$m.folded") $(jq '.profiles[0].weights | add' "$TMP/st.$m.speedscope")" \
		"$(jq '.root.total, .root.total' "$TMP/st.$m.json" | tr '\n' ' ' | sed 's/ $//')"
	check stack/$m-by "stack true" "$(jq -r '"\(.by) \(.stacks > 0)"' "$TMP/st.$m.json")"
	# every stack of the folded output is a path of the tree with its
	# self weight (min_share 0, depth 12 reach the deepest: 8 frames)
	jq -r 'def walk(p): (if .self > 0 then "\(p)\t\(.self)" else empty end),
		(.children[] as $k | $k | walk(if p == "" then $k.name else p + ";" + $k.name end));
		.root | walk("")' "$TMP/st.$m.json" 2>/dev/null | sort >"$TMP/st.got"
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); print $0 "\t" n }' "$TMP/st.$m.folded" | sort >"$TMP/st.want"
	check stack/$m-stacks "" "$(diff "$TMP/st.want" "$TMP/st.got" | head -5)"
done
# the leaking caller's frame: the outermost KeepController#index; its
# objects are as many as its count, what the folded stacks through it sum
want=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = index($0, ";KeepController#index");
	if (k) { p = substr($0, 1, k - 1) ";KeepController#index"; t[p] += n } }
	END { for (p in t) if (t[p] > m) m = t[p]; print m + 0 }' "$TMP/st.count.folded")
kid=$(jq '[.. | objects | select(.name? == "KeepController#index")] | max_by(.total) | .id' "$TMP/st.count.json")
check stack/keep-total "$want" "$(jq '[.. | objects | select(.name? == "KeepController#index")] | max_by(.total) | .total' "$TMP/st.count.json")"
check stack/keep-objects "$want" "$(get "flame?by=stack&metric=count&frame=$kid&objects=1" | jq .count)"
check stack/keep-most "yes" "$([ "$want" -ge 840 ] && echo yes || echo "no: $want")"
jq -n --argjson t "$(jq .root.total "$TMP/st.count.json")" --argjson k "$want" \
	'{total: $t, frame: "KeepController#index", frame_total: $k, zoom: "<main>"}' >"$TMP/st.expect.json"
(cd "$TOP/tests" && node tools/serve_flame_stack_browser.mjs "$URL" "$TMP/st.expect.json" "$SHOTS") 2>"$TMP/sbrowser.err" ||
	notok stack-browser/run "the browser run failed: $(head -c 500 "$TMP/sbrowser.err")"
kill "$SPID"
