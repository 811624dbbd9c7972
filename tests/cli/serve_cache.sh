#!/bin/sh
# serve_cache.sh - heapdump serve through the dump's cached store
# (hd_store_open_cached, the rule HeapDump.load uses too): built beside
# the dump on the first start and reused on the second (the file
# untouched, the message says so); a touched or changed dump and a
# damaged store indexed again; a file that is not a store left alone; a
# read-only dump directory (as nobody) served from $XDG_CACHE_HOME; a
# store cached by an earlier builder (its BUILDER section stripped)
# indexed again, said, while named as STORE it opens (the stripped
# store is what the earlier release wrote); and the answers of a cached start equal the
# CLI's JSON (stats, leaks).
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl

HD=$HEAPDUMP
L="$DATA/named_ruby3.1_leak"
D="$TMP/d"
mkdir -p "$D"
for k in before after later; do cp "$L"_$k.json.gz "$D/$k.json.gz"; done
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# start NAME [env...] -- ARGS...: serve in the background until it serves
# (then BASE, TOKEN are set) or exits (then it is not running: SPID empty)
start() {
	name=$1
	shift
	serve_start "$name" 600 "$@"
}
stop() { [ -n "$SPID" ] && kill "$SPID" && wait "$SPID" 2>/dev/null; SPID=""; }
get() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/$1"; }
mtime() { stat -c %y "$1" 2>/dev/null || echo none; }
magic() { head -c 8 "$1" 2>/dev/null | od -An -c | tr -d ' '; }
STORE_MAGIC=$(magic "$(ls "$DATA"/*.hds 2>/dev/null | head -1)")
[ -n "$STORE_MAGIC" ] || { "$HD" index -q -o "$TMP/m.hds" "$D/later.json.gz"; STORE_MAGIC=$(magic "$TMP/m.hds"); }

# the answers equal the CLI's JSON (as serve.sh checks them uncached)
answers() {
	get overview >"$TMP/ov.json"
	check "$1/overview-totals" "$(jq -c .totals "$TMP/stats.json")" "$(jq -c .totals "$TMP/ov.json")"
	get leaks >"$TMP/api_leaks.json"
	check "$1/leaks-first-holder" "$(jq -r '.suspects[0].holder.address' "$TMP/leaks.json")" "$(jq -r '.suspects[0].holder.address' "$TMP/api_leaks.json")"
	check "$1/leaks-first-retained" "$(jq -r '.suspects[0].retained_memsize' "$TMP/leaks.json")" "$(jq -r '.suspects[0].retained_memsize' "$TMP/api_leaks.json")"
	check "$1/leaks-count" "$(jq -c '.suspects | length' "$TMP/leaks.json")" "$(jq -c '.suspects | length' "$TMP/api_leaks.json")"
	check "$1/domtree-first" "$("$HD" top -q -f json -n 1 "$D/later.json.gz" | jq -r '.. | .address? // empty' | head -1)" "$(get 'domtree?limit=1' | jq -r '.children[0].address')"
}
"$HD" stats -q -f json "$D/later.json.gz" >"$TMP/stats.json"
"$HD" leaks -q -f json "$D/before.json.gz" "$D/after.json.gz" "$D/later.json.gz" >"$TMP/leaks.json"
THREE="$D/before.json.gz $D/after.json.gz $D/later.json.gz"

# ---- first start: built beside each dump ----
start first "$HD" serve $THREE || exit 1
for k in before after later; do
	check_grep "first/says-indexed-$k" "indexed into $D/$k.json.gz.hds" "$TMP/first.err"
	check "first/store-$k" "$STORE_MAGIC" "$(magic "$D/$k.json.gz.hds")"
done
answers first
stop
m1=$(mtime "$D/later.json.gz.hds")

# ---- second start: reused, untouched ----
sleep 1
start second "$HD" serve $THREE || exit 1
check_grep second/says-reused "reusing its store $D/later.json.gz.hds" "$TMP/second.err"
check second/not-rewritten "$m1" "$(mtime "$D/later.json.gz.hds")"
check second/no-indexing 0 "$(grep -c 'indexed into' "$TMP/second.err")"
answers second
stop

# ---- a store cached by an earlier builder (no BUILDER section, man 5
# heapdump-store; what the release before it wrote): indexed again,
# said; named as STORE it still opens ----
TOOLS="$TOP/${B:-build}/tests"
case ${B:-build} in /*) TOOLS="$B/tests" ;; esac
SS="$TOOLS/store_sections"
check builder/section "51 1 8" "$("$SS" list "$D/later.json.gz.hds" | awk '$1 == 51 { print $1, $2, $4 }')"
"$SS" strip "$D/later.json.gz.hds" 51 "$TMP/old.hds" || notok builder/strip "store_sections failed"
check builder/stripped "" "$("$SS" list "$TMP/old.hds" | awk '$1 == 51')"
cp "$TMP/old.hds" "$D/later.json.gz.hds"
chmod 644 "$D/later.json.gz.hds"
start builder "$HD" serve $THREE || exit 1
check_grep builder/says-rebuilt "later.json.gz.hds was built by another heapdump \(store builder 0, this one's [1-9][0-9]*\): indexed again" "$TMP/builder.err"
check builder/reused-others 2 "$(grep -c 'reusing its store' "$TMP/builder.err")"
answers builder
stop
check builder/section-again "51 1 8" "$("$SS" list "$D/later.json.gz.hds" | awk '$1 == 51 { print $1, $2, $4 }')"
start builder2 "$HD" serve $THREE || exit 1
check_grep builder2/reused "reusing its store $D/later.json.gz.hds" "$TMP/builder2.err"
stop
"$HD" stats -q -f json "$TMP/old.hds" >"$TMP/old.json" 2>"$TMP/old.err"
rc=$?
check builder/named-store-opens "0 $(jq -c .totals "$TMP/stats.json")" "$rc $(jq -c .totals "$TMP/old.json" 2>/dev/null)"
m1=$(mtime "$D/later.json.gz.hds")

# ---- the dump touched: indexed again ----
touch -d '2001-02-03 04:05:06' "$D/later.json.gz"
start touched "$HD" serve $THREE || exit 1
check_grep touched/says-stale "later.json.gz.hds was stale" "$TMP/touched.err"
check touched/rewritten 1 "$([ "$m1" != "$(mtime "$D/later.json.gz.hds")" ] && echo 1)"
check touched/reused-others 2 "$(grep -c 'reusing its store' "$TMP/touched.err")"
answers touched
stop

# ---- the dump changed (another dump in its place): indexed again ----
cp "$D/later.json.gz" "$TMP/later.keep"
cp "$DATA/ok_ruby3.1_untraced.json" "$D/later.json.gz"
start changed "$HD" serve "$D/later.json.gz" || exit 1
check_grep changed/says-stale "later.json.gz.hds was stale" "$TMP/changed.err"
check changed/objects "$("$HD" stats -q -f json "$DATA/ok_ruby3.1_untraced.json" | jq .totals.objects)" "$(get overview | jq .totals.objects)"
stop
cp "$TMP/later.keep" "$D/later.json.gz"

# ---- a damaged store: indexed again, never trusted ----
start again "$HD" serve -q "$D/later.json.gz" || exit 1
stop
size=$(stat -c %s "$D/later.json.gz.hds")
truncate -s $((size / 2)) "$D/later.json.gz.hds"
start damaged "$HD" serve $THREE || exit 1
check_grep damaged/says-damaged "later.json.gz.hds was damaged" "$TMP/damaged.err"
check damaged/rebuilt "$size" "$(stat -c %s "$D/later.json.gz.hds")"
answers damaged
stop

# ---- a file that is not a store beside the dump: left alone ----
mkdir -p "$TMP/n" "$TMP/xdg"
cp "$D/later.json.gz" "$TMP/n/app.json.gz"
echo "my notes" >"$TMP/n/app.json.gz.hds"
start notes env XDG_CACHE_HOME="$TMP/xdg" "$HD" serve "$TMP/n/app.json.gz" || exit 1
check notes/untouched "my notes" "$(cat "$TMP/n/app.json.gz.hds")"
check_grep notes/in-cache-dir "indexed into $TMP/xdg/heapdump/app.json.gz-[0-9a-f]{32}\.hds" "$TMP/notes.err"
check notes/objects "$(jq .totals.objects "$TMP/stats.json")" "$(get overview | jq .totals.objects)"
stop

# ---- --no-cache: nothing read or written ----
mkdir -p "$TMP/nc"
cp "$D/later.json.gz" "$TMP/nc/app.json.gz"
start nocache "$HD" serve --no-cache "$TMP/nc/app.json.gz" || exit 1
check nocache/nothing-written "app.json.gz" "$(ls "$TMP/nc")"
check nocache/no-message 0 "$(grep -c 'indexed into\|reusing' "$TMP/nocache.err")"
stop

# ---- a store given: opened as it is ----
start store "$HD" serve "$D/later.json.gz.hds" || exit 1
check store/objects "$(jq .totals.objects "$TMP/stats.json")" "$(get overview | jq .totals.objects)"
stop

# ---- a read-only dump directory (as nobody): $XDG_CACHE_HOME/heapdump ----
if ! setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	notok ro/setpriv "setpriv cannot run as nobody: install util-linux"
	exit 0
fi
mkdir -p "$TMP/ro" "$TMP/cache"
cp "$D/later.json.gz" "$TMP/ro/app.json.gz"
chmod 755 "$TMP" && chmod 555 "$TMP/ro" && chmod 777 "$TMP/cache"
as="setpriv --reuid=65534 --regid=65534 --clear-groups"
start ro1 env XDG_CACHE_HOME="$TMP/cache" HOME=/nonexistent $as "$HD" serve "$TMP/ro/app.json.gz" || exit 1
check ro/nothing-beside "app.json.gz" "$(ls "$TMP/ro")"
check_grep ro/in-xdg-cache "indexed into $TMP/cache/heapdump/app.json.gz-[0-9a-f]{32}\.hds" "$TMP/ro1.err"
check ro/private 700 "$(stat -c %a "$TMP/cache/heapdump")"
check ro/objects "$(jq .totals.objects "$TMP/stats.json")" "$(get overview | jq .totals.objects)"
stop
f=$(ls "$TMP/cache/heapdump"/*.hds)
m=$(mtime "$f")
start ro2 env XDG_CACHE_HOME="$TMP/cache" HOME=/nonexistent $as "$HD" serve "$TMP/ro/app.json.gz" || exit 1
check_grep ro/reused "reusing its store $f" "$TMP/ro2.err"
check ro/not-rewritten "$m" "$(mtime "$f")"
stop
# a cache directory others may write: not used, the dump indexed in memory
chmod 777 "$TMP/cache/heapdump"
start foreign env XDG_CACHE_HOME="$TMP/cache" HOME=/nonexistent $as "$HD" serve "$TMP/ro/app.json.gz" || exit 1
check_grep foreign/in-memory "indexed in memory .*not a private directory" "$TMP/foreign.err"
stop
exit 0
