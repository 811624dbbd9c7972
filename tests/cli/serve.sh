#!/bin/sh
# serve.sh - heapdump serve: the HTTP side with curl (token, 403, 405,
# loopback only, security headers, the JSON API equal to the CLI's JSON)
# and the page in Debian's headless chromium through puppeteer-core
# (tests/tools/serve_browser.mjs): a real leak scenario clicked through,
# and a dump of hostile names (data/gen/xss_page.rb) that must render as text.
# Screenshots: build/serve-*.png.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl
needs node "nodejs (and npm, then: npm ci --prefix tests)"
needs chromium chromium
[ -d "$TOP/tests/node_modules/puppeteer-core" ] ||
	{ notok puppeteer "the npm package puppeteer-core is missing: npm ci --prefix tests (or make deps)"; exit 1; }

HD=$HEAPDUMP
SHOTS="$TOP/${B:-build}"
case ${B:-build} in /*) SHOTS=$B ;; esac
mkdir -p "$SHOTS"
L="$DATA/named_ruby3.1_leak"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# start NAME ARGS...: serve in the background; sets URL, BASE, TOKEN, PORT
start() {
	name=$1
	shift
	serve_start "$name" 300 "$HD" serve -q --no-cache "$@" || exit 1
}

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
get() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/$1"; }

start leak "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz

# ---- security ----
check url/loopback "http://127.0.0.1:" "$(printf '%s' "$URL" | cut -c1-17)"
check url/token-128-bits 1 "$(printf '%s\n' "$TOKEN" | grep -cxE '[0-9a-f]{32}')"
check token/none-403 403 "$(code "$BASE/api/overview")"
check token/page-none-403 403 "$(code "$BASE/")"
check token/wrong-403 403 "$(code "$BASE/api/overview?token=00000000000000000000000000000000")"
check token/prefix-403 403 "$(code "$BASE/api/overview?token=$(printf '%s' "$TOKEN" | cut -c1-31)")"
check token/asset-none-403 403 "$(code "$BASE/app.js")"
check token/ok-200 200 "$(code "$BASE/api/overview?token=$TOKEN")"
check token/header-200 200 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/overview")"
check method/post-405 405 "$(code -X POST "$BASE/api/overview?token=$TOKEN")"
check method/put-405 405 "$(code -X PUT -d x "$BASE/?token=$TOKEN")"
check method/delete-405 405 "$(code -X DELETE "$BASE/api/overview?token=$TOKEN")"
check method/head-200 200 "$(code -I "$BASE/api/overview?token=$TOKEN")"
curl -s -D "$TMP/h" -o "$TMP/page.html" "$BASE/?token=$TOKEN"
check_grep headers/csp "^Content-Security-Policy: default-src 'none'; script-src 'self'" "$TMP/h"
check_grep headers/nosniff '^X-Content-Type-Options: nosniff' "$TMP/h"
check_grep headers/no-referrer '^Referrer-Policy: no-referrer' "$TMP/h"
check page/no-inline-script 0 "$(grep -c '<script>' "$TMP/page.html")"
check page/no-network-asset 0 "$(cat "$TMP/page.html" "$TOP/cli/serve/web/"*.js "$TOP/cli/serve/web/"*.css | grep -Ec 'https?://|//[a-z]')"
# the socket is bound to 127.0.0.1 only (/proc/net/tcp: 0100007F:PORT),
# not to any other address of the machine
hexport=$(printf '%04X' "$PORT")
check bind/loopback-only "0100007F:$hexport" "$(awk -v p=":$hexport" '$4 == "0A" && $2 ~ p"$" { print $2 }' /proc/net/tcp /proc/net/tcp6 | sort -u | tr '\n' ' ' | sed 's/ $//')"
check_rc bind/bad-address 2 "$HD" serve --bind nowhere "$L"_later.json.gz
check_grep bind/bad-address-says "no numeric IPv4 or IPv6 address" "$TMP/err"
# an address that is not loopback warns (TEST-NET-2: not on this
# machine, so nothing listens and no packet leaves)
check_rc bind/non-loopback-fails 1 "$HD" serve -q --no-cache --bind 198.51.100.7 "$L"_later.json.gz
check_grep bind/non-loopback-warns "warning: listening on 198.51.100.7, not on loopback" "$TMP/err"
# seventeen dumps: one more than serve takes
set -- "$L"_before.json.gz "$L"_after.json.gz
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do set -- "$@" "$L"_later.json.gz; done
check_rc args/seventeen-dumps 2 "$HD" serve "$@"
check_grep args/seventeen-says "at most sixteen dumps" "$TMP/err"
# --help shows the forms serve takes: one dump, or BEFORE AFTER, steps
# and LATER (each form of the usage line, split at " | ")
"$HD" serve --help >"$TMP/help" 2>&1
forms=$(sed -n 's/^usage: heapdump serve \[options\] //p' "$TMP/help" | sed 's/ | /\n/g')
check args/help-forms "DUMP|STORE
BEFORE AFTER [STEP...] [LATER]" "$forms"
# a build where pkg-config finds no libmicrohttpd stops, saying what to
# install (the Makefile's check, on an empty pkg-config path)
mkdir -p "$TMP/nopc"
(cd "$TOP" && PKG_CONFIG_LIBDIR="$TMP/nopc" PKG_CONFIG_PATH= make -s B="$TMP/b" "$TMP/b/.mhd-ok") >"$TMP/out" 2>"$TMP/err"
check build/no-libmicrohttpd-fails 2 "$?"
check_grep build/no-libmicrohttpd-says "install libmicrohttpd-dev" "$TMP/err"

# ---- the API equals the CLI's JSON ----
"$HD" stats -q -f json "$L"_later.json.gz >"$TMP/stats.json"
get overview >"$TMP/ov.json"
check api/overview-totals "$(jq -c .totals "$TMP/stats.json")" "$(jq -c .totals "$TMP/ov.json")"
check api/overview-ruby "$(jq -r .ruby "$TMP/stats.json")" "$(jq -r .ruby "$TMP/ov.json")"
"$HD" stats -q -f json --by class -n 0 "$L"_later.json.gz |
	jq -c '[.groupings[0].rows[] | [.class, .count, .memsize]] | sort' >"$TMP/cli_classes"
get "stats?by=class&limit=1000" | jq -c '[.rows[] | [.key, .count, .memsize]] | sort' >"$TMP/api_classes"
check api/stats-by-class "$(cat "$TMP/cli_classes")" "$(cat "$TMP/api_classes")"
"$HD" stats -q -f json --by location -n 0 "$L"_later.json.gz | jq -c '.groupings[0].rows_total' >"$TMP/cli_loc"
check api/stats-by-location-total "$(cat "$TMP/cli_loc")" "$(get 'stats?by=location&limit=1' | jq .rows_total)"
check api/stats-filter "Request" "$(get 'stats?by=class&filter=reQuest' | jq -r '.rows[].key')"
check api/stats-page "2 1" "$(get 'stats?by=class&offset=1&limit=2' | jq -r '[(.rows | length), .offset] | join(" ")')"
check api/stats-sort-asc 1 "$(get 'stats?by=class&sort=memsize&order=asc&limit=2' | jq '[.rows[].memsize] | if .[0] <= .[1] then 1 else 0 end')"
check api/stats-bad-by 400 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/stats?by=nope")"
"$HD" leaks -q -f json "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz >"$TMP/leaks.json"
get leaks >"$TMP/api_leaks.json"
check api/leaks-first-holder "$(jq -r '.suspects[0].holder.address' "$TMP/leaks.json")" "$(jq -r '.suspects[0].holder.address' "$TMP/api_leaks.json")"
check api/leaks-first-retained "$(jq -r '.suspects[0].retained_memsize' "$TMP/leaks.json")" "$(jq -r '.suspects[0].retained_memsize' "$TMP/api_leaks.json")"
check api/leaks-first-path "$(jq -c '[.suspects[0].path.hops[] | .address]' "$TMP/leaks.json")" "$(jq -c '[.suspects[0].path.hops[] | .address]' "$TMP/api_leaks.json")"
holder=$(jq -r '.suspects[0].holder.address' "$TMP/api_leaks.json")
"$HD" path -q -f json "$L"_later.json.gz "$holder" >"$TMP/path.json"
get "object?address=$holder" >"$TMP/obj.json"
check api/object-path "$(jq -c '[.path[] | .address]' "$TMP/path.json")" "$(jq -c '[.path.hops[] | .address]' "$TMP/obj.json")"
check api/object-path-names "$(jq -c '[.path[] | .name]' "$TMP/path.json")" "$(jq -c '[.path.hops[] | .name]' "$TMP/obj.json")"
"$HD" dominators -q -f json "$L"_later.json.gz "$holder" >"$TMP/dom.json"
check api/object-dominators "$(jq -c '[.chain[] | .object.address]' "$TMP/dom.json")" "$(jq -c '[.dominators.chain[] | .address]' "$TMP/obj.json")"
check api/object-refs "$(get "object?address=$holder" | jq .refs_total)" "$(jq .refs_total "$TMP/obj.json")"
check api/object-404 404 "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/object?address=0x1")"
"$HD" diff -q -f json "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz >"$TMP/diff.json"
check api/diff-retained "$(jq -c '[.retained.count, .retained.memsize]' "$TMP/diff.json")" "$(get diff | jq -c '[.retained.count, .retained.memsize]')"
"$HD" top -q -f json -n 3 "$L"_later.json.gz >"$TMP/top.json"
# the largest retainer of the heap is a child of the virtual root; the
# children come largest first
check api/domtree-top "$(jq -r '.objects[0].object.address' "$TMP/top.json")" "$(get 'domtree?limit=3' | jq -r '.children[0].address')"
check api/domtree-order 1 "$(get 'domtree?limit=1000' | jq '[.children[].retained_memsize] | if . == (sort | reverse) then 1 else 0 end')"
kid=$(get 'domtree?limit=1' | jq -r '.children[0].address')
check api/domtree-children "$(get "object?address=$kid" | jq .object.dominated)" "$(get "domtree?node=$kid&limit=1000" | jq '.children | length')"
check api/search-class Request "$(get 'search?q=request&kind=class' | jq -r '.classes.rows[].key')"
check api/search-address "$holder" "$(get "search?q=$holder" | jq -r .address.address)"
check api/objects-of-class "$(jq -r '[.[] | select(.[0] == "Request")][0][1]' "$TMP/cli_classes")" "$(get 'objects?by=class&key=Request' | jq .total)"
# every grouping's drill-down lists as many objects as stats counts
for by in type class file location gem generation imemo; do
	get "stats?by=$by&limit=1000" | jq -c '.rows[] | [.key, .count]' | head -3 >"$TMP/keys"
	bad=""
	while read -r row; do
		key=$(printf '%s' "$row" | jq -r '.[0]' | jq -Rr @uri)
		want=$(printf '%s' "$row" | jq '.[1]')
		got=$(get "objects?by=$by&key=$key&limit=1000" | jq '.objects | length')
		[ "$got" = "$want" ] || [ "$want" -gt 1000 ] || bad="$bad $row:$got"
	done <"$TMP/keys"
	check "api/objects-count-$by" "" "$bad"
done
# pages of 7 put together are the whole list, in order
get 'objects?by=type&key=STRING&limit=1000' | jq -c '[.objects[].address]' >"$TMP/all"
: >"$TMP/pages"
off=0
while [ $off -lt 70 ]; do
	get "objects?by=type&key=STRING&offset=$off&limit=7" | jq -c '.objects[].address' >>"$TMP/pages"
	off=$((off + 7))
done
check api/objects-pages "$(jq -c '.[:70]' "$TMP/all")" "$(jq -sc . "$TMP/pages")"

# ---- the page, in chromium ----
cnt=$(jq -r '[.[] | select(.[0] == "Request")][0][1]' "$TMP/cli_classes")
jq -n --slurpfile s "$TMP/stats.json" --arg a "$holder" --argjson n "$cnt" \
	'{totals: $s[0].totals, suspect_address: $a, path_word: "LeakyCache", request_count: $n}' >"$TMP/expect.json"
(cd "$TOP/tests" && node tools/serve_browser.mjs leak "$URL" "$TMP/expect.json" "$SHOTS") 2>"$TMP/browser.err" ||
	echo "# browser: $(head -c 500 "$TMP/browser.err")" >&2
kill "$SPID"
wait "$SPID" 2>/dev/null
check stop/sigterm-exits 1 "$(kill -0 "$SPID" 2>/dev/null; echo $?)"

# ---- hostile names and strings ----
X="$DATA/xss_ruby3.4.8.json.gz"
start xss "$X"
get 'search?q=PWNED' >"$TMP/xss.json"
check xss/json-escapes-markup 0 "$(grep -c '<' "$TMP/xss.json")"
check xss/json-valid 1 "$(jq '.strings.matched > 0 | if . then 1 else 0 end' "$TMP/xss.json")"
cname=$("$HD" stats -q -f json --by class -n 0 "$X" | jq -r '.groupings[0].rows[] | select(.class | test("PWNED")) | .class')
check xss/class-name-in-api "$cname" "$(get 'stats?by=class&filter=PWNED' | jq -r '.rows[0].key')"
check xss/control-bytes-escaped "\"\\\"quoted\\\" 'single' & <b>bold</b> \\u0001\\u0007\\u001b[2J\"" "$(get 'search?q=QUOTED&kind=string' | jq -c '.strings.rows[0].value')"
jq -n --arg c "$cname" '{class_name: $c}' >"$TMP/xexpect.json"
(cd "$TOP/tests" && node tools/serve_browser.mjs xss "$URL" "$TMP/xexpect.json" "$SHOTS") 2>"$TMP/browser.err" ||
	echo "# browser: $(head -c 500 "$TMP/browser.err")" >&2
kill "$SPID"
