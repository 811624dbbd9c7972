#!/bin/sh
# leaks_kept.sh - heapdump leaks keeps its report (issue 40,
# lib/leak_keep.c, heapdump-leaks(1) KEPT REPORT): over three stores and
# over two, text and JSON, the second run prints the kept report byte
# for byte as --no-cache computes it, says so on stderr, and the file
# beside the last store is 0600 with no temporary left; other options
# (-n 1) are another report, the kept one said stale and replaced; a
# kept file damaged (a digit changed, a truncation), stale (LATER
# indexed again from its dump with another mtime) or a link is refused
# with a message and the report computed again, byte-identical, the
# link's target untouched and the report kept in the cache directory;
# over dumps nothing is written beside them (the cache directory holds
# it); --no-cache neither reads nor writes. On leak_* (3.1) and
# leak_ruby4.0.1_* (object ids read back from the dumps).
. "$(dirname "$0")/../lib.sh"

HD=$HEAPDUMP
XDG_CACHE_HOME=$TMP/xdg
export XDG_CACHE_HOME

# run NAME OUT ARGS...: leaks, stdout to OUT, stderr to $TMP/NAME.err
run() {
	n=$1 o=$2
	shift 2
	"$HD" leaks "$@" >"$o" 2>"$TMP/$n.err"
	rc=$?
	[ $rc = 0 ] || notok "$n/exit" "status $rc: $(head -c 300 "$TMP/$n.err")"
}

# refused NAME PATTERN: said, computed again, the same bytes ($n, $f,
# $IN of one)
refused() {
	run "$n-$1" "$TMP/$n.$1" -f "$f" $IN
	check_grep "$n/$1/said" "the kept report is $2.*: computed again" "$TMP/$n-$1.err"
	check "$n/$1/same-bytes" "" "$(cmp "$TMP/$n.fresh" "$TMP/$n.$1" 2>&1)"
}

# one: NAME FORMAT INPUTS...: the kept report of one format and set
one() {
	n=$1 f=$2
	shift 2
	IN="$*"
	last=$(eval echo "\${$#}")
	V=$last.leaks-$f.verdict
	run "$n-fresh" "$TMP/$n.fresh" -f "$f" --no-cache $IN
	check "$n/no-cache-keeps-nothing" no "$([ -e "$V" ] && echo yes || echo no)"
	run "$n-first" "$TMP/$n.first" -f "$f" $IN
	check "$n/first/same-bytes" "" "$(cmp "$TMP/$n.fresh" "$TMP/$n.first" 2>&1)"
	check "$n/first/not-kept-said" "" "$(grep 'kept in' "$TMP/$n-first.err")"
	check "$n/kept/file" yes "$([ -f "$V" ] && [ ! -L "$V" ] && echo yes)"
	check "$n/kept/mode" 600 "$(stat -c %a "$V" 2>/dev/null)"
	check "$n/kept/no-temporary-left" "" "$(ls "$(dirname "$V")" | grep '\.tmp')"
	run "$n-second" "$TMP/$n.second" -f "$f" $IN
	check "$n/second/same-bytes" "" "$(cmp "$TMP/$n.fresh" "$TMP/$n.second" 2>&1)"
	check_grep "$n/second/says-kept" "leaks: the report kept in .*\.leaks-$f\.verdict" "$TMP/$n-second.err"
	run "$n-quiet" "$TMP/$n.quiet" -q -f "$f" $IN
	check "$n/quiet/same-bytes-nothing-said" "0 " \
		"$(cmp "$TMP/$n.fresh" "$TMP/$n.quiet" >/dev/null 2>&1; echo $?) $(cat "$TMP/$n-quiet.err")"
	cp "$V" "$TMP/$n.good"

	# other options: another report; the kept one stale, replaced
	run "$n-top1" "$TMP/$n.top1" -f "$f" -n 1 $IN
	run "$n-top1-fresh" "$TMP/$n.top1-fresh" -f "$f" -n 1 --no-cache $IN
	check "$n/top1/same-as-fresh" "" "$(cmp "$TMP/$n.top1-fresh" "$TMP/$n.top1" 2>&1)"
	check_grep "$n/top1/said-stale" "the kept report is stale" "$TMP/$n-top1.err"
	check "$n/top1/replaced" 1 "$(grep -c "^leaks $f top 1 " "$V")"
	run "$n-back" "$TMP/$n.back" -f "$f" $IN
	check "$n/back/same-bytes" "" "$(cmp "$TMP/$n.fresh" "$TMP/$n.back" 2>&1)"

	# a digit of the report changed (the first after the json line)
	awk 'done != 1 && body && /[0-9]/ { sub(/[0-9]/, "&&"); done = 1 }
	     /^json [0-9]+ [0-9a-f]+$/ { body = 1 } { print }' "$TMP/$n.good" >"$V"
	check "$n/damaged-digit/edited" 1 "$(cmp -s "$TMP/$n.good" "$V"; echo $?)"
	refused damaged-digit 'damaged \(its length or sum differ\)'
	check "$n/damaged-digit/rewritten" "" "$(cmp "$TMP/$n.good" "$V" 2>&1)"
	head -c $(($(stat -c %s "$TMP/$n.good") - 20)) "$TMP/$n.good" >"$V"
	refused truncated 'damaged \(its length or sum differ\)'
	check "$n/truncated/rewritten" "" "$(cmp "$TMP/$n.good" "$V" 2>&1)"
	# a key line edited: stale
	sed 's/^options 0 /options 1 /' "$TMP/$n.good" >"$V"
	check "$n/options-edited/edited" 1 "$(cmp -s "$TMP/$n.good" "$V"; echo $?)"
	refused options-edited 'stale'
	check "$n/options-edited/rewritten" "" "$(cmp "$TMP/$n.good" "$V" 2>&1)"
}

# one set: NAME PREFIX EXT
run_set() {
	n=$1 pre=$2 ext=$3
	D=$TMP/$n
	mkdir -p "$D"
	for w in before after later; do
		cp "$DATA/${pre}_$w.$ext" "$D/$w.$ext"
		"$HD" index -q -o "$D/$w.hds" "$D/$w.$ext" || { notok "$n/index" "index $w failed"; return; }
	done
	one "$n/3-text" text "$D/before.hds" "$D/after.hds" "$D/later.hds"
	one "$n/3-json" json "$D/before.hds" "$D/after.hds" "$D/later.hds"
	one "$n/2-text" text "$D/before.hds" "$D/after.hds"
	one "$n/2-json" json "$D/before.hds" "$D/after.hds"
	V=$D/later.hds.leaks-text.verdict

	# LATER indexed again from its dump with another mtime: stale
	touch -d '2001-01-01' "$D/later.$ext"
	"$HD" index -q -o "$D/later.hds" "$D/later.$ext"
	run "$n-stale-fresh" "$TMP/$n.stale-fresh" --no-cache "$D/before.hds" "$D/after.hds" "$D/later.hds"
	run "$n-stale" "$TMP/$n.stale" "$D/before.hds" "$D/after.hds" "$D/later.hds"
	check_grep "$n/stale/said" "the kept report is stale \(the dumps, the options or the program changed since it was kept\): computed again" "$TMP/$n-stale.err"
	check "$n/stale/same-bytes" "" "$(cmp "$TMP/$n.stale-fresh" "$TMP/$n.stale" 2>&1)"
	check "$n/stale/rewritten" "$(stat -c %Y "$D/later.$ext")" "$(awk '$1 == "store" && $2 == 2 { print $6 }' "$V")"

	# a link at the name: neither read nor followed; kept in the cache
	rm -f "$V"
	echo victim >"$D/victim"
	ln -s "$D/victim" "$V"
	run "$n-link" "$TMP/$n.link" "$D/before.hds" "$D/after.hds" "$D/later.hds"
	check "$n/link/same-bytes" "" "$(cmp "$TMP/$n.stale-fresh" "$TMP/$n.link" 2>&1)"
	check "$n/link/victim-untouched" victim "$(cat "$D/victim")"
	check "$n/link/still-a-link" yes "$([ -L "$V" ] && echo yes)"
	check "$n/link/kept-in-cache" 1 "$(ls "$XDG_CACHE_HOME/heapdump/" | grep -c '^later\.hds\.leaks-text-[0-9a-f]*\.verdict$')"
	check "$n/link/cache-mode" 600 "$(stat -c %a "$XDG_CACHE_HOME"/heapdump/later.hds.leaks-text-*.verdict 2>/dev/null)"
	run "$n-link2" "$TMP/$n.link2" "$D/before.hds" "$D/after.hds" "$D/later.hds"
	check_grep "$n/link2/kept-from-cache" "the report kept in .*xdg/heapdump/later\.hds\.leaks-text-" "$TMP/$n-link2.err"
	check "$n/link2/same-bytes" "" "$(cmp "$TMP/$n.stale-fresh" "$TMP/$n.link2" 2>&1)"
	rm -rf "$XDG_CACHE_HOME"

	# over the dumps: kept in the cache directory, nothing beside them
	ls "$D" >"$TMP/$n.ls-before"
	run "$n-dumps-fresh" "$TMP/$n.dumps-fresh" -f json --no-cache "$D/before.$ext" "$D/after.$ext" "$D/later.$ext"
	run "$n-dumps" "$TMP/$n.dumps" -f json "$D/before.$ext" "$D/after.$ext" "$D/later.$ext"
	run "$n-dumps2" "$TMP/$n.dumps2" -f json "$D/before.$ext" "$D/after.$ext" "$D/later.$ext"
	check "$n/dumps/same-bytes" "" "$(cmp "$TMP/$n.dumps-fresh" "$TMP/$n.dumps2" 2>&1)"
	check "$n/dumps/first-same-bytes" "" "$(cmp "$TMP/$n.dumps-fresh" "$TMP/$n.dumps" 2>&1)"
	check_grep "$n/dumps/kept-from-cache" "the report kept in .*xdg/heapdump/later\.$ext\.leaks-json-[0-9a-f]*\.verdict" "$TMP/$n-dumps2.err"
	check "$n/dumps/nothing-beside" "" "$(ls "$D" | diff "$TMP/$n.ls-before" - )"
	check "$n/dumps/cache-dir-private" 700 "$(stat -c %a "$XDG_CACHE_HOME/heapdump")"
	rm -rf "$XDG_CACHE_HOME"
}

run_set v31 leak json
run_set v40 leak_ruby4.0.1 json.gz
