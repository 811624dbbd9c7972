#!/bin/sh
# leaks_kept.sh - heapdump leaks keeps its report (issue 40,
# lib/leak_keep.c, heapdump-leaks(1) KEPT REPORT): over three stores and
# over two, text and JSON, the second run prints the kept report byte
# for byte as --no-cache computes it, says so on stderr, and the file
# beside the last store is 0600 with no temporary left; other options
# (-n 1) are another report, the kept one stale and replaced (nothing
# said: routine); a kept file damaged (a digit changed, a truncation)
# is refused with a message, one stale (an edited key line, LATER
# indexed again from its dump with another mtime) or a link refused
# silently, and the report computed again, byte-identical, the link's
# target untouched and the report kept in the cache directory;
# over dumps nothing is written beside them (the cache directory holds
# it); --no-cache neither reads nor writes. On leak_* (3.1) and
# leak_ruby4.0.1_* (object ids read back from the dumps).
. "$(dirname "$0")/../lib.sh"

HD=$HEAPDUMP
XDG_CACHE_HOME=$TMP/xdg
export XDG_CACHE_HOME

# run NAME OUT ARGS...: leaks, stdout to OUT, stderr to $TMP/NAME.err
run() {
	rn=$1 ro=$2
	shift 2
	"$HD" leaks "$@" >"$ro" 2>"$TMP/$rn.err"
	rrc=$?
	[ $rrc = 0 ] || notok "$rn/exit" "status $rrc: $(head -c 300 "$TMP/$rn.err")"
}

# refused NAME PATTERN: said, computed again, the same bytes ($k, $f,
# $IN of one)
refused() {
	run "$k-$1" "$TMP/$k.$1" -f "$f" $IN
	check_grep "$k/$1/said" "the kept report is $2.*: computed again" "$TMP/$k-$1.err"
	check "$k/$1/same-bytes" "" "$(cmp "$TMP/$k.fresh" "$TMP/$k.$1" 2>&1)"
}

# one: NAME FORMAT INPUTS...: the kept report of one format and set
one() {
	k=$1 f=$2
	shift 2
	IN="$*"
	last=$(eval echo "\${$#}")
	V=$last.leaks-$f.verdict
	run "$k-fresh" "$TMP/$k.fresh" -f "$f" --no-cache $IN
	check "$k/no-cache-keeps-nothing" no "$([ -e "$V" ] && echo yes || echo no)"
	run "$k-first" "$TMP/$k.first" -f "$f" $IN
	check "$k/first/same-bytes" "" "$(cmp "$TMP/$k.fresh" "$TMP/$k.first" 2>&1)"
	check "$k/first/not-kept-said" "" "$(grep 'kept in' "$TMP/$k-first.err")"
	check "$k/kept/file" yes "$([ -f "$V" ] && [ ! -L "$V" ] && echo yes)"
	check "$k/kept/mode" 600 "$(stat -c %a "$V" 2>/dev/null)"
	check "$k/kept/no-temporary-left" "" "$(ls "$(dirname "$V")" | grep '\.tmp')"
	run "$k-second" "$TMP/$k.second" -f "$f" $IN
	check "$k/second/same-bytes" "" "$(cmp "$TMP/$k.fresh" "$TMP/$k.second" 2>&1)"
	check_grep "$k/second/says-kept" "leaks: the report kept in .*\.leaks-$f\.verdict" "$TMP/$k-second.err"
	run "$k-quiet" "$TMP/$k.quiet" -q -f "$f" $IN
	check "$k/quiet/same-bytes-nothing-said" "0 " \
		"$(cmp "$TMP/$k.fresh" "$TMP/$k.quiet" >/dev/null 2>&1; echo $?) $(cat "$TMP/$k-quiet.err")"
	cp "$V" "$TMP/$k.good"

	# other options: another report; the kept one stale, replaced
	run "$k-top1" "$TMP/$k.top1" -f "$f" -n 1 $IN
	run "$k-top1-fresh" "$TMP/$k.top1-fresh" -f "$f" -n 1 --no-cache $IN
	check "$k/top1/same-as-fresh" "" "$(cmp "$TMP/$k.top1-fresh" "$TMP/$k.top1" 2>&1)"
	check "$k/top1/stale-not-said" "" "$(cat "$TMP/$k-top1.err")"
	check "$k/top1/replaced" 1 "$(grep -c "^leaks $f top 1 " "$V")"
	run "$k-back" "$TMP/$k.back" -f "$f" $IN
	check "$k/back/same-bytes" "" "$(cmp "$TMP/$k.fresh" "$TMP/$k.back" 2>&1)"

	# a digit of the report changed (the first after the json line)
	awk 'done != 1 && body && /[0-9]/ { sub(/[0-9]/, "&&"); done = 1 }
	     /^json [0-9]+ [0-9a-f]+$/ { body = 1 } { print }' "$TMP/$k.good" >"$V"
	check "$k/damaged-digit/edited" 1 "$(cmp -s "$TMP/$k.good" "$V"; echo $?)"
	refused damaged-digit 'damaged \(its length or sum differ\)'
	check "$k/damaged-digit/rewritten" "" "$(cmp "$TMP/$k.good" "$V" 2>&1)"
	head -c $(($(stat -c %s "$TMP/$k.good") - 20)) "$TMP/$k.good" >"$V"
	refused truncated 'damaged \(its length or sum differ\)'
	check "$k/truncated/rewritten" "" "$(cmp "$TMP/$k.good" "$V" 2>&1)"
	# a key line edited: stale
	sed 's/^options 0 /options 1 /' "$TMP/$k.good" >"$V"
	check "$k/options-edited/edited" 1 "$(cmp -s "$TMP/$k.good" "$V"; echo $?)"
	run "$k-options-edited" "$TMP/$k.options-edited" -f "$f" $IN
	check "$k/options-edited/stale-not-said" "" "$(cat "$TMP/$k-options-edited.err")"
	check "$k/options-edited/same-bytes" "" "$(cmp "$TMP/$k.fresh" "$TMP/$k.options-edited" 2>&1)"
	check "$k/options-edited/rewritten" "" "$(cmp "$TMP/$k.good" "$V" 2>&1)"
}

# one set: NAME PREFIX EXT
run_set() {
	n=$1 pre=$2 ext=$3
	D=$TMP/$n
	index_trio "$D" "$pre" "$ext" || { notok "$n/index" "index failed"; return; }
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
	check "$n/stale/not-said" "" "$(cat "$TMP/$n-stale.err")"
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
