#!/bin/sh
# serve_bench.sh - heapdump serve on big heaps: the first and the second
# start (time to "serving on", RSS, what the cache did) and the server
# time (Server-Timing) and the time curl sees of every API call, the
# costliest arguments of each (man 1 heapdump-serve: every call within
# 200 ms on a 4 M-object store). Not a test: it prints figures.
#
#   sh tests/bench/serve_bench.sh DUMP|STORE [BEFORE AFTER [LATER]]
#       one serve, started twice (the first builds the cached stores of
#       dumps that have none, the second reuses them), then every call
#   sh tests/bench/serve_bench.sh --make DIR
#       (make bench-serve) in DIR, three dumps of one process of about
#       4.5 M objects each (tests/bench/gen_trio.rb, SERVE_BENCH_MB, 1000
#       MB by default), made once; their cached stores removed (the first
#       start builds them); then the above for LATER alone and for the
#       three
set -eu
HD=${HEAPDUMP:-build/heapdump}
if [ "${1:-}" = --make ]; then
	DIR=$2
	mkdir -p "$DIR"
	if [ ! -s "$DIR/later.json" ]; then
		echo "# generating three dumps in $DIR (ruby tests/bench/gen_trio.rb)"
		${RUBY:-ruby} tests/bench/gen_trio.rb "$DIR/before.json" "$DIR/after.json" \
			"$DIR/later.json" "${SERVE_BENCH_MB:-1000}"
	fi
	rm -f "$DIR/before.json.hds" "$DIR/after.json.hds" "$DIR/later.json.hds"
	echo "## one dump: $DIR/later.json"
	sh "$0" "$DIR/later.json"
	echo "## three dumps: before, after, later"
	sh "$0" "$DIR/before.json" "$DIR/after.json" "$DIR/later.json"
	exit 0
fi
TMP=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$TMP"' EXIT

# start N: serve started, the time to "serving on" and the RSS printed
start() {
	: >"$TMP/err" # (not the last start's lines while this one opens it)
	t0=$(date +%s.%N)
	"$HD" serve "$@" 2>"$TMP/err" &
	pid=$!
	while ! grep -q 'serving on' "$TMP/err"; do
		kill -0 $pid 2>/dev/null || { cat "$TMP/err"; exit 1; }
		sleep 0.1
	done
	t1=$(date +%s.%N)
	# the first answer: the time a page would wait for its overview
	# (the line may still be half written: read again each time)
	while url=$(grep -o 'http://[^ ]*token=[0-9a-f]\{32\}' "$TMP/err" | head -1)
		! curl -sf -o /dev/null -H "Authorization: Bearer ${url##*token=}" \
		"${url%%/?token=*}/api/overview"; do
		kill -0 $pid 2>/dev/null || { cat "$TMP/err"; exit 1; }
		sleep 0.05
	done
	t2=$(date +%s.%N)
	what=$(grep -o 'reusing its store\|indexed into\|indexed in memory' "$TMP/err" | sort | uniq -c | tr -s ' \n' '  ')
	printf '# start %s: %.2f s to serve, %.2f s to the first answer, RSS %s kB, peak %s kB (%s)\n' "$N" \
		"$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)" \
		"$(awk '/VmRSS/ { print $2 }' /proc/$pid/status)" \
		"$(awk '/VmHWM/ { print $2 }' /proc/$pid/status)" "${what:-a store}"
}
# the stores' size in kB: DUMP.hds beside a dump, or the store itself
store_kb() {
	kb=0
	for f in "$@"; do
		[ -f "$f.hds" ] && f=$f.hds
		kb=$((kb + $(stat -c %s "$f") / 1024))
	done
	echo $kb
}
N=1 start "$@"
kill $pid; wait $pid 2>/dev/null || true
N=2 start "$@"
echo "# stores: $(for f in "$@"; do [ -f "$f.hds" ] && ls -s --block-size=1M "$f.hds" | awk '{ printf "%s MB ", $1 }'; done)"
URL=$(grep -o 'http://[^ ]*' "$TMP/err" | head -1)
BASE=${URL%%/?token=*}
TOKEN=${URL##*token=}
call() {
	curl -s -D "$TMP/h" -o "$TMP/b" -w '%{time_total}' -H "Authorization: Bearer $TOKEN" "$BASE/api/$1" >"$TMP/t"
	st=$(sed -n 's/^Server-Timing: api;dur=\([0-9.]*\).*/\1/p' "$TMP/h" | tr -d '\r')
	printf '%8s ms server %8.1f ms curl %9d bytes  %s\n' "$st" \
		"$(awk '{ print $1 * 1000 }' "$TMP/t")" "$(wc -c <"$TMP/b")" "$1" |
		tee -a "$TMP/calls"
}
SKB=$(store_kb "$@")
echo "# RSS before the first call: $(awk '/VmRSS/ { print $2 }' /proc/$pid/status) kB, $(awk -v s=$SKB '/VmRSS/ { printf "%.0f", 100 * $2 / s }' /proc/$pid/status)% of the stores ($SKB kB)"
# the first search waits for the string values (read while starting)
call "search?q=zzzzqqqq&limit=1000"
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
	call "diff?limit=1000&offset=1000"
	call "leaks?limit=1000"
	sus=$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/leaks?limit=1" | jq -r '.suspects[0].holder.address // empty')
	[ -z "$sus" ] || call "object?address=$sus&limit=1000"
	call "graph.svg?suspect=1"
fi
echo "# RSS after the tour: $(awk '/VmRSS/ { print $2 }' /proc/$pid/status) kB, $(awk -v s=$SKB '/VmRSS/ { printf "%.0f", 100 * $2 / s }' /proc/$pid/status)% of the stores; peak $(awk '/VmHWM/ { print $2 }' /proc/$pid/status) kB"
echo "# slowest call: $(sort -g "$TMP/calls" | tail -1 | tr -s ' ')"
# one store: what query and the gem's HeapDump.load take to open it
# (best of 3, wall; issue 40: <= 100 ms at 4 M objects)
if [ $# -eq 1 ] && [ "${1%.hds}" != "$1" ]; then
	best() {
		b=
		for i in 1 2 3; do
			t0=$(date +%s.%N)
			"$@" >/dev/null 2>&1 || { echo failed; return; }
			t=$(echo "$(date +%s.%N) - $t0" | bc)
			[ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ] && b=$t
		done
		printf '%.3f s' "$b"
	}
	echo "# query open (select 1): $(best "$HD" query "$1" 'select 1')"
	EXT=${B:-build}/ext
	if [ -f "$EXT/heapdump_ext.so" ]; then
		echo "# HeapDump.load: $(best ${RUBY:-ruby} -I src/lib -I "$EXT" -e 'require "heapdump"; HeapDump.load(ARGV[0])' "$1") (ruby start and require included: $(best ${RUBY:-ruby} -I src/lib -I "$EXT" -e 'require "heapdump"'))"
	else
		echo "# HeapDump.load: not measured ($EXT: make ext)"
	fi
fi
