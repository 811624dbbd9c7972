#!/bin/sh
# tests/cli/mcp.sh - heapdump mcp (issue 39): the npm package
# @modelcontextprotocol/sdk's client (tests/tools/mcp_client.mjs) starts
# the server on the leak scenario data/dumps/named_ruby3.1_leak_*,
# negotiates, lists the tools and asks what leaks, through which path and
# which site made it: each answer equal to the command's -f json; hostile
# arguments (huge limits, bad addresses, options for addresses, SQL that
# writes or attaches, an unknown tool) get errors and the server stays up;
# then raw lines on its standard input (malformed JSON, not JSON-RPC, an
# unknown method, nesting past the bound, a 2 MiB line) get JSON-RPC
# errors, each with its id, and a ping after them its answer. The leaks
# tool's report is kept in the cache directory and read back by the
# command; with --no-cache nothing is kept.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs node node

H=$HEAPDUMP
D=$DATA/named_ruby3.1_leak
B=${D}_before.json.gz A=${D}_after.json.gz L=${D}_later.json.gz
SDK=$TOP/tests/node_modules/@modelcontextprotocol/sdk
if [ ! -d "$SDK" ]; then
	notok sdk "$SDK is missing: (cd tests && npm install), or make deps"
	exit 1
fi

mkdir -p "$TMP/o"
if ! node "$TOP/tests/tools/mcp_client.mjs" "$H" "$TMP/o" "$B" "$A" "$L" 2>"$TMP/err"; then
	notok client "$(head -c 300 "$TMP/err")"
	exit 1
fi
ok client
O=$TMP/o
check initialize "heapdump true" "$(jq -r '"\(.version.name) \(.capabilities.tools != null)"' "$O/server.json")"
check tools '["overview","stats","top","leaks","diff","trend","path","strings","waste","objects","object","domtree","search","query"]' \
	"$(cat "$O/tools.json")"

# same NAME FILE CMD...: the tool's answer is the command's JSON
same() {
	n=$1 f=$2
	shift 2
	"$H" "$@" 2>/dev/null | jq -S . >"$TMP/cli.json"
	jq -S . "$O/$f" >"$TMP/mcp.json" 2>/dev/null
	if [ -s "$TMP/cli.json" ] && cmp -s "$TMP/cli.json" "$TMP/mcp.json"; then
		ok "$n"
	else
		notok "$n" "$(diff "$TMP/cli.json" "$TMP/mcp.json" | head -c 300)"
	fi
}
# what leaks
same leaks leaks.json leaks -q -f json -- "$B" "$A" "$L"
case $(jq -r .verdict.text "$O/leaks.json") in
*LeakyCache*) ok leaks-verdict ;;
*) notok leaks-verdict "$(jq -r .verdict.text "$O/leaks.json")" ;;
esac
holder=$(jq -r '.suspects[0].holder.address' "$O/leaks.json")
# through which path
same path path.json path -q -f json -- "$L" "$holder"
check path-ends-at-holder "$holder" "$(jq -r '.path[-1].address' "$O/path.json")"
check object-is-holder "$holder" "$(jq -r '.object.address' "$O/object.json")"
check object-paged "5 true" "$(jq -r '"\(.refs | length) \(.refs_total > 5)"' "$O/object.json")"
# which site
same diff-sites diff.json diff -q -f json -n 5 --by location -- "$B" "$A" "$L"
check leak-site "leak.rb:55" "$(jq -r '.rows[0].location' "$O/diff.json")"
same stats stats.json stats -q -f json -n 10 --by class -- "$L"
same top top.json top -q -f json -n 5 -- "$L"
check query "$($H query -f json "$L" 'select count(*) as n from objects' | jq .n)" \
	"$(jq .n "$O/query.json")"
check overview-dumps "3" "$(jq '.dumps | length' "$O/overview.json")"

# hostile arguments: errors, the server up after them
for b in bad_limit bad_top bad_address bad_path bad_by bad_sql bad_sql2 bad_type; do
	check "$b" "true" "$(jq '.isError' "$O/$b.json")"
done
check bad_tool "-32602" "$(jq '.rpcError' "$O/bad_tool.json")"
check bad_path-no-file "no" "$([ -e /tmp/x ] && echo yes || echo no)"
check alive-after "{}" "$(cat "$O/ping.json")"

# raw lines: JSON-RPC errors with their ids, then a ping answered
deep=$(awk 'BEGIN { for (i = 0; i < 100; i++) printf "["; for (i = 0; i < 100; i++) printf "]" }')
big=$(head -c 2200000 /dev/zero | tr '\0' 'x')
{
	echo '{bad'
	echo '[]'
	echo '{"jsonrpc":"1.0","id":1,"method":"ping"}'
	echo '{"jsonrpc":"2.0","id":2,"method":"resources/list"}'
	printf '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":%s}\n' "$deep"
	printf '{"jsonrpc":"2.0","id":4,"method":"ping","x":"%s"}\n' "$big"
	echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"object","arguments":[1]}}'
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	echo '{"jsonrpc":"2.0","id":"last","method":"ping"}'
} | "$H" mcp "$L" >"$TMP/raw.out" 2>"$TMP/raw.err"
rc=$?
check raw-exit "0" "$rc"
check raw-codes '[null,-32700],[null,-32600],[1,-32600],[2,-32601],[null,-32700],[null,-32600],[5,-32602],["last",null]' \
	"$(jq -c '[.id, .error.code]' "$TMP/raw.out" | paste -sd, -)"

# the leaks tool's report kept (heapdump-leaks(1), KEPT REPORT): the
# client's call kept it in the cache directory (the dumps' directory is
# never written); the command then reads it back, the same bytes
check leaks-kept-in-cache 1 "$(ls "$XDG_CACHE_HOME/heapdump" 2>/dev/null | grep -c '^named_ruby3\.1_leak_later\.json\.gz\.leaks-json-[0-9a-f]*\.verdict$')"
"$H" leaks -f json -- "$B" "$A" "$L" 2>"$TMP/kept.err" | jq -S . >"$TMP/kept.json"
check_grep leaks-kept-read "leaks: the report kept in .*named_ruby3\.1_leak_later\.json\.gz\.leaks-json-" "$TMP/kept.err"
check leaks-kept-same "" "$(jq -S . "$O/leaks.json" | cmp - "$TMP/kept.json" 2>&1)"
# mcp --no-cache: its leaks neither keeps nor reads a report
mkdir -p "$TMP/xdg-none"
call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"leaks","arguments":{}}}'
echo "$call" | XDG_CACHE_HOME=$TMP/xdg-none "$H" mcp --no-cache "$B" "$A" "$L" >"$TMP/nc.out" 2>"$TMP/nc.err"
check no-cache-answers "$(jq -S -c .verdict "$O/leaks.json")" "$(jq -r '.result.content[0].text' "$TMP/nc.out" | jq -S -c .verdict)"
check no-cache-kept-nothing "" "$(ls -A "$TMP/xdg-none/heapdump" 2>/dev/null | grep leaks)"
echo "$call" | XDG_CACHE_HOME=$TMP/xdg-none "$H" mcp "$B" "$A" "$L" >"$TMP/c.out" 2>"$TMP/c.err"
check cache-kept 1 "$(ls -A "$TMP/xdg-none/heapdump" 2>/dev/null | grep -c '\.leaks-json-')"

# usage
check_rc usage-none 2 "$H" mcp
check_rc usage-four 2 "$H" mcp "$B" "$A" "$L" "$L"
