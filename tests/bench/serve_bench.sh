#!/bin/sh
# serve_bench.sh - the server time (Server-Timing) and the time curl sees
# of every API call of heapdump serve on a big store, the costliest
# arguments of each (man 1 heapdump-serve, API: every call within 200 ms
# on a 4 M-object store).
#
#   sh tests/bench/serve_bench.sh STORE [BEFORE AFTER]
#   (a store of tests/bench/gen_big.rb's dump: heapdump index --dominators)
set -eu
HD=${HEAPDUMP:-build/heapdump}
TMP=$(mktemp -d)
"$HD" serve -q "$@" 2>"$TMP/err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$TMP"' EXIT
t0=$(date +%s)
while ! grep -q 'serving on' "$TMP/err"; do
	kill -0 $pid || { cat "$TMP/err"; exit 1; }
	sleep 0.2
done
echo "# ready after $(($(date +%s) - t0)) s; RSS $(awk '/VmRSS/ { print $2, $3 }' /proc/$pid/status)"
URL=$(grep -o 'http://[^ ]*' "$TMP/err" | head -1)
BASE=${URL%%/?token=*}
TOKEN=${URL##*token=}
call() {
	curl -s -D "$TMP/h" -o "$TMP/b" -w '%{time_total}' -H "Authorization: Bearer $TOKEN" "$BASE/api/$1" >"$TMP/t"
	st=$(sed -n 's/^Server-Timing: api;dur=\([0-9.]*\).*/\1/p' "$TMP/h" | tr -d '\r')
	printf '%8s ms server %8.1f ms curl %9d bytes  %s\n' "$st" \
		"$(awk '{ print $1 * 1000 }' "$TMP/t")" "$(wc -c <"$TMP/b")" "$1"
}
call overview
for by in type class file location gem generation imemo; do
	call "stats?by=$by&limit=1000"
	call "stats?by=$by&sort=key&order=asc&filter=e&limit=1000"
done
call "stats?by=class&sort=retained&limit=1000"
big=$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/stats?by=class&limit=1" | jq -r '.rows[0].key')
call "objects?by=class&key=$big&limit=1000"
call "objects?by=class&key=$big&offset=100000&limit=1000"
loc=$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/stats?by=location&limit=1" | jq -r '.rows[0].key' | jq -Rr @uri)
call "objects?by=location&key=$loc&limit=1000"
call "objects?by=type&key=STRING&limit=1000"
call "objects?by=imemo&key=ment&limit=1000"
call "domtree?limit=1000"
top=$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/domtree?limit=1" | jq -r '.children[0].address')
call "domtree?node=$top&limit=1000"
call "object?address=$top&limit=1000"
hub=$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/domtree?node=$top&limit=1" | jq -r '.children[0].address')
call "object?address=$hub&limit=1000"
call "search?q=$top"
call "treemap"
call "treemap?min_share=0&depth=6"
call "treemap?root=$top&min_share=0&depth=6"
call "graph.svg?address=$hub"
call "search?q=e&limit=1000"
call "search?q=zzzzqqqq&limit=1000"
if [ $# -gt 1 ]; then
	call "diff?limit=1000"
	call "leaks?limit=1000"
	call "graph.svg?suspect=1"
fi
