#!/bin/sh
# serve_verdict.sh - the leak verdict computed once and kept (issue 40,
# lib/leak_keep.c): serve BEFORE AFTER LATER over three stores starts
# without running the leak hunt (it runs while serving); /api/verdict
# is the verdict document ("verdict", "totals", "caveats" of
# heapdump-json(5)), the same as leaks -f json's; the first start writes
# it to LATER.hds.verdict (0600), the second reads it back and answers
# the same bytes; a kept file gone stale (LATER indexed again from its
# dump with another mtime), damaged (a digit changed, a truncation, a
# key line edited) or a link is refused with a message and the verdict
# computed again, byte-identical; a link's target is left untouched and
# the verdict kept in the cache directory instead. On leak_* (3.1) and
# leak_ruby4.0.1_* (object ids read back from the dumps).
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl

HD=$HEAPDUMP
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
XDG_CACHE_HOME=$TMP/xdg
export XDG_CACHE_HOME
stop() { [ -n "$SPID" ] && kill "$SPID" && wait "$SPID" 2>/dev/null; SPID=""; }
get() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/$1"; }

# one set: NAME PREFIX EXT
run_set() {
	n=$1 pre=$2 ext=$3
	D=$TMP/$n
	index_trio "$D" "$pre" "$ext" || { notok "$n/index" "index failed"; return; }
	V=$D/later.hds.verdict
	"$HD" leaks -f json "$D/before.hds" "$D/after.hds" "$D/later.hds" 2>/dev/null |
		jq -S -c '{verdict, totals, caveats}' >"$D/leaks.json"

	# the first start computes it (while serving) and keeps it
	serve_start "$n-first" 600 "$HD" serve "$D/before.hds" "$D/after.hds" "$D/later.hds" || return
	check_grep "$n/first/says-lazy" "ready in [0-9.]+ s .*the leak hunt, " "$TMP/$n-first.err"
	check "$n/first/nothing-kept-said" "" "$(grep 'kept' "$TMP/$n-first.err")"
	get verdict >"$D/v1"
	check "$n/first/equals-leaks-json" "$(cat "$D/leaks.json")" "$(jq -S -c . "$D/v1")"
	get "leaks?limit=1" | jq -S -c '{verdict, totals, caveats}' >"$D/api-leaks"
	check "$n/first/equals-api-leaks" "$(cat "$D/leaks.json")" "$(cat "$D/api-leaks")"
	stop
	check "$n/kept/file" yes "$([ -f "$V" ] && [ ! -L "$V" ] && echo yes)"
	check "$n/kept/mode" 600 "$(stat -c %a "$V" 2>/dev/null)"
	check "$n/kept/no-temporary-left" "" "$(ls "$D" | grep 'verdict\.tmp')"
	check "$n/kept/holds-the-document" "$(jq -S -c . "$D/v1")" "$(tail -n 1 "$V" | jq -S -c .)"

	# the second reads it back: the same bytes
	serve_start "$n-second" 600 "$HD" serve "$D/before.hds" "$D/after.hds" "$D/later.hds" || return
	check_grep "$n/second/says-kept" "the verdict kept in .*later\.hds\.verdict" "$TMP/$n-second.err"
	get verdict >"$D/v2"
	check "$n/second/same-bytes" "" "$(cmp "$D/v1" "$D/v2" 2>&1)"
	get "diff?limit=5" >/dev/null
	check "$n/second/diff-answers" 0 $?
	stop
	# the diff asked first, while the leak session is still being made
	# (it read the session's result before waiting for it: a crash)
	serve_start "$n-diff-first" 600 "$HD" serve "$D/before.hds" "$D/after.hds" "$D/later.hds" || return
	get "diff?limit=5" >"$D/diff-first"
	check "$n/diff-first/answers" 0 $?
	check "$n/diff-first/server-alive" yes "$(kill -0 "$SPID" 2>/dev/null && echo yes)"
	stop

	# refused: NAME what-to-do pattern
	refused() {
		serve_start "$n-$1" 600 "$HD" serve "$D/before.hds" "$D/after.hds" "$D/later.hds" || return
		check_grep "$n/$1/said" "the kept verdict is $2.*: computed again" "$TMP/$n-$1.err"
		get verdict >"$D/v-$1"
		check "$n/$1/same-bytes" "" "$(cmp "$D/v1" "$D/v-$1" 2>&1)"
		stop
	}
	cp "$V" "$D/good.verdict"
	# a digit of the document changed
	sed '$ s/"leak_count":\([0-9]\)/"leak_count":9\1/' "$D/good.verdict" >"$V"
	refused damaged-digit 'damaged \(its length or sum differ\)'
	check "$n/damaged-digit/rewritten" "" "$(cmp "$D/good.verdict" "$V" 2>&1)"
	head -c $(($(stat -c %s "$D/good.verdict") - 20)) "$D/good.verdict" >"$V"
	refused truncated 'damaged \(its length or sum differ\)'
	sed 's/^options 0 /options 1 /' "$D/good.verdict" >"$V"
	refused options-edited 'stale'
	# LATER indexed again from its dump with another mtime
	touch -d '2001-01-01' "$D/later.$ext"
	"$HD" index -q -o "$D/later.hds" "$D/later.$ext"
	refused stale 'stale \(the dumps, the options or the program changed since it was kept\)'
	check "$n/stale/rewritten" "$(stat -c %Y "$D/later.$ext")" "$(awk '$1 == "store" && $2 == 2 { print $6 }' "$V")"

	# a link at the name: neither read nor followed; kept in the cache
	rm -f "$V"
	echo victim >"$D/victim"
	ln -s "$D/victim" "$V"
	serve_start "$n-link" 600 "$HD" serve "$D/before.hds" "$D/after.hds" "$D/later.hds" || return
	get verdict >"$D/v-link"
	check "$n/link/same-bytes" "" "$(cmp "$D/v1" "$D/v-link" 2>&1)"
	stop
	check "$n/link/victim-untouched" victim "$(cat "$D/victim")"
	check "$n/link/still-a-link" yes "$([ -L "$V" ] && echo yes)"
	check "$n/link/kept-in-cache" 1 "$(ls "$TMP/xdg/heapdump/" | grep -c '^later\.hds-[0-9a-f]*\.verdict$')"
	check "$n/link/cache-mode" 600 "$(stat -c %a "$TMP"/xdg/heapdump/later.hds-*.verdict 2>/dev/null)"
	serve_start "$n-link2" 600 "$HD" serve "$D/before.hds" "$D/after.hds" "$D/later.hds" || return
	check_grep "$n/link2/kept-from-cache" "the verdict kept in .*xdg/heapdump/later\.hds-" "$TMP/$n-link2.err"
	get verdict >"$D/v-link2"
	check "$n/link2/same-bytes" "" "$(cmp "$D/v1" "$D/v-link2" 2>&1)"
	stop
	rm -rf "$TMP/xdg"
}

run_set v31 leak json
run_set v40 leak_ruby4.0.1 json.gz
