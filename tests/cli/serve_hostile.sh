#!/bin/sh
# serve_hostile.sh - heapdump serve under hostile clients and a crafted
# dump (issue 41, items 5 to 7), on loopback only and bounded in count
# and time: a dump of 200,000 files in one gem, a 1 MB file name, a tree
# that takes Graphviz about a second and a clique of 3,600 references
# (serve_hostile.py dump); 64 sockets sending one header byte a second,
# reopened when closed, for 20 s (serve_hostile.py slow); 600 query
# parameters, a 9 KB URL, a 40 KB header. What a request with the token
# gets meanwhile: its answer within 1 s.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl
needs python3 python3

HD=$HEAPDUMP
PY="$TOP/tests/cli/serve_hostile.py"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
export LSAN_OPTIONS

# tget NAME PATH [curl args...]: GET with the token (at most 5 s);
# "CODE SECONDS" into $TMP/NAME.t, the body into $TMP/NAME
tget() {
	n=$1 p=$2
	shift 2
	curl -s -m 5 -H "Authorization: Bearer $TOKEN" -o "$TMP/$n" \
		-w '%{http_code} %{time_total}\n' "$@" "$BASE$p" >"$TMP/$n.t"
}
code_of() { cut -d' ' -f1 "$TMP/$1.t"; }
# fast NAME: the answer came within 5 s (wall time): what these checks
# catch took 200 s (a sort or a scan per request); 5 s, not less, as a
# sanitized build on a loaded machine is 10 times slower than a run alone
fast() { awk '{ print ($2 < 5.0) ? "yes" : "no " $2 " s" }' "$TMP/$1.t"; }
# the drawings: curl waits up to 120 s for them (two of them, one after
# the other, took more than 5 s under a sanitizer on a loaded machine,
# and the server then stayed busy for the next checks)
DRAW_WAIT="-m 120"
# ends_after A B: the request written to $TMP/A.end ended after B's
ended_before() { awk -v a="$(cat "$TMP/$1.end")" -v b="$(cat "$TMP/$2.end")" 'BEGIN { print (a < b) ? "yes" : "no" }'; }

python3 "$PY" dump "$TMP/big.json" 200000 || { notok dump "serve_hostile.py dump failed"; exit 1; }
# a file name of 1 MB of 'a': what a substring filter must not be
# quadratic over
awk 'BEGIN { s = "a"; while (length(s) < 1048576) s = s s;
	printf "{\"address\":\"0x40000000\", \"type\":\"STRING\", \"bytesize\":1, \"value\":\"l\", \"file\":\"/x/%s.rb\", \"line\":1, \"generation\":1, \"memsize\":40}\n", s }' >>"$TMP/big.json"
serve_start big 600 "$HD" serve -q --no-cache "$TMP/big.json" || exit 1

# ---- item 6: no request superlinear in what a dump holds ----
# 200,000 files in one gem, largest first in the reverse order of their
# names: the gem's objects were found by an insertion sort of its files
# on every request (200 s here)
tget gem '/api/objects?by=gem&key=big&limit=3'
check gem/objects-200 200 "$(code_of gem)"
check gem/objects-within-5s yes "$(fast gem)"
check gem/objects-total 200000 "$(jq .total "$TMP/gem" 2>/dev/null)"
check gem/objects-largest-first "0x107a11d8 0x107a11b0 0x107a1188" "$(jq -r '[.objects[].address] | join(" ")' "$TMP/gem" 2>/dev/null)"
tget gempage '/api/objects?by=gem&key=big&offset=199998&limit=5'
check gem/last-page "0x10000028 0x10000000" "$(jq -r '[.objects[].address] | join(" ")' "$TMP/gempage" 2>/dev/null)"
check gem/last-page-within-5s yes "$(fast gempage)"
# the groups sorted by key and filtered: computed once, not per request
tget bykey '/api/stats?by=file&sort=key&order=asc&limit=2'
check stats/by-key-within-5s yes "$(fast bykey)"
check stats/by-key-first "(untraced) /srv/gems/big-1.0/lib/f0000000.rb" "$(jq -r '[.rows[].key] | join(" ")' "$TMP/bykey" 2>/dev/null)"
tget filt '/api/stats?by=file&filter=F000000&limit=20'
check stats/filter-matched 10 "$(jq .rows_matched "$TMP/filt" 2>/dev/null)"
# a filter of 4,000 'a' and a 'b' against the 1 MB name: 4e9 steps for
# a comparison at every offset
long=$(awk 'BEGIN { s = "a"; while (length(s) < 4000) s = s "a"; print s "b" }')
tget longfilt "/api/stats?by=file&filter=$long"
check stats/long-filter-within-5s yes "$(fast longfilt)"
check stats/long-filter-none 0 "$(jq .rows_matched "$TMP/longfilt" 2>/dev/null)"
tget longsearch "/api/search?q=$long&kind=site"
check search/long-filter-within-5s yes "$(fast longsearch)"

# more than one request at a time: two drawings of the tree (about a
# second of Graphviz each, one after the other: they share its lock) and
# an overview asked meanwhile, answered before the second drawing is (a
# server answering one request at a time would answer it after both;
# the first alone can end before it on a fast run)
# (curl waits up to 120 s for a drawing: two of them one after the
# other took more than 5 s under a sanitizer on a loaded machine). When
# both drawings end before the overview is asked, the run shows nothing
# about it and is made again, up to 3 times.
try=0
while :; do
	(tget draw1 '/api/graph.svg?address=0x20000000&near=100&depth=2' -m 120; date +%s.%N >"$TMP/draw1.end") &
	d1=$!
	(tget draw2 '/api/graph.svg?address=0x20000000&near=100&depth=2' -m 120; date +%s.%N >"$TMP/draw2.end") &
	d2=$!
	sleep 0.2
	date +%s.%N >"$TMP/ovs.end" # (when the overview was asked)
	tget ov /api/overview
	date +%s.%N >"$TMP/ov.end"
	wait "$d1" "$d2"
	try=$((try + 1))
	{ [ "$(ended_before ovs draw2)" = yes ] || [ $try -ge 3 ]; } && break
done
check concurrent/drawing-200 "200 200" "$(code_of draw1) $(code_of draw2)"
check concurrent/overview-200 200 "$(code_of ov)"
check concurrent/overview-within-5s yes "$(fast ov)"
check concurrent/overview-before-drawing yes "$(ended_before ov draw2)"

# three drawings at once: two hold a thread (one laid out, one waiting
# for Graphviz), a third asked while they do is refused (503, busy), so
# drawings never hold them all (when the first is done before the third
# comes, as under a sanitizer, all three are drawn)
for i in 1 2 3; do
	(tget three$i '/api/graph.svg?address=0x20000000&near=100&depth=2' -m 120) &
	eval "t$i=\$!"
done
wait "$t1" "$t2" "$t3"
codes=$(for i in 1 2 3; do code_of three$i; done | sort | tr '\n' ' ' | sed 's/ $//')
case $codes in
"200 200 200") ok concurrent/third-drawing ;;
"200 200 503")
	check concurrent/third-drawing "busy" "$(for i in 1 2 3; do [ "$(code_of three$i)" = 503 ] && jq -r .error "$TMP/three$i" | cut -c1-4; done)" ;;
*) notok concurrent/third-drawing "codes $codes" ;;
esac

# ---- item 7: a drawing over the limits is the client's 413 ----
# a clique of 60: 3,601 references, more than the 2,000 a drawing may
# have (render's --max-edges)
: >"$TMP/big.err.mark"
tget clique '/api/graph.svg?address=0x30000000&near=100' -m 120
check draw/dense-413 413 "$(code_of clique)"
check draw/dense-says-limits 1 "$(jq -r .error "$TMP/clique" 2>/dev/null | grep -c '3,601 references, more than 2,000.*near=, depth=')"
check draw/dense-not-on-stderr 0 "$(grep -c 'cannot draw' "$TMP/big.err")"

# ---- item 5: oversized requests get a 4xx at once ----
params=$(awk 'BEGIN { for (i = 0; i < 600; i++) printf "&a%d=%d", i, i }')
tget params "/api/overview?x=1$params"
check params/600-4xx 1 "$(code_of params | grep -c '^4[0-9][0-9]$')"
check params/600-within-5s yes "$(fast params)"
tget params601 "/api/overview?token=$TOKEN$params"
check params/600-with-token-400 400 "$(code_of params601)"
check_grep params/600-says "too many" "$TMP/params601"
url=$(awk 'BEGIN { s = "x"; while (length(s) < 9000) s = s "x"; print s }')
tget longurl "/api/search?q=$url"
check oversized/url-414 414 "$(code_of longurl)"
check oversized/url-within-5s yes "$(fast longurl)"
hdr=$(awk 'BEGIN { s = "y"; while (length(s) < 40000) s = s "y"; print s }')
tget longhdr /api/overview -H "X-Big: $hdr"
check oversized/header-431 431 "$(code_of longhdr)"
check oversized/header-within-5s yes "$(fast longhdr)"
# without the token: 403, and the connection is closed
curl -s -D "$TMP/h403" -o /dev/null "$BASE/api/overview"
check_grep token/403-closes '^Connection: close' "$TMP/h403"

# ---- item 5: 64 slow clients do not starve the token's requests ----
python3 "$PY" slow "$PORT" 64 20 1 >"$TMP/slow.out" 2>"$TMP/slow.err" &
slow=$!
PIDS="$PIDS $slow"
sleep 2
i=0 bad=""
while [ $i -lt 15 ]; do
	tget during$i /api/overview
	[ "$(code_of during$i) $(fast during$i)" = "200 yes" ] || bad="$bad $i:$(cat "$TMP/during$i.t")"
	tget during$i.page '/?x=1'
	[ "$(code_of during$i.page)" = 200 ] || bad="$bad page$i:$(cat "$TMP/during$i.page.t")"
	i=$((i + 1))
	sleep 1
done
wait "$slow"
check slow/token-answered-within-5s "" "$bad"
read -r opened closed <"$TMP/slow.out"
# each header may take 5 s: in 20 s every one of the 64 was closed
# (and the slots of its kind are kept below the server's)
check slow/headers-cut 1 "$([ "${closed:-0}" -ge 64 ] && echo 1 || echo "0 (opened ${opened:-?}, closed ${closed:-?})")"
tget after /api/overview
check slow/after-200 200 "$(code_of after)"

kill "$SPID"
wait "$SPID" 2>/dev/null
check stop/sigterm-exits 0 "$?"
