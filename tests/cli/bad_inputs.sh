#!/bin/sh
# The catalogue of broken and odd dumps in data/dumps (bad_*, edge_*):
# each file's .expect says what a tolerant reading must recover, how many
# lines it must report, and where strict mode must stop.
. "$(dirname "$0")/../lib.sh"
needs jq jq

get() { sed -n "s/^$1=//p" "$2" | head -1; }
sums() { cat "$DATA"/* | cksum; }
before=$(sums)

for f in "$DATA"/bad_* "$DATA"/edge_*; do
	case $f in *.expect) continue ;; esac
	n=$(basename "$f")
	e="$f.expect"
	[ -f "$e" ] || { notok "$n" "no $n.expect"; continue; }
	want_exit=$(get exit "$e")
	"$HEAPDUMP" stats --all --format json "$f" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ -n "$want_exit" ]; then
		check "$n/exit" "$want_exit" "$rc"
		check_grep "$n/message" "^heapdump: " "$TMP/err"
		continue
	fi
	check "$n/exit" 0 "$rc"
	dups=$(get duplicates "$e")
	# a dump is streamed: every record counts; the store keeps the first
	check "$n/objects" "$(($(get objects "$e") + ${dups:-0}))" \
		"$(jq .totals.objects "$TMP/out")"
	check "$n/roots" "$(get roots "$e")" "$(jq .totals.roots "$TMP/out")"
	check "$n/reported" "$(get bad_lines "$e")" \
		"$(grep -cE '\((repaired|skipped)\)$' "$TMP/err")"
	first=$(get first_bad_line "$e")
	if [ "${first:-0}" -gt 0 ]; then
		check_grep "$n/first-line" "^heapdump: [^:]+:$first:[0-9]+: " "$TMP/err"
		# strict mode stops at that line with FILE:LINE:COLUMN and exit 1
		"$HEAPDUMP" stats --strict "$f" >/dev/null 2>"$TMP/serr"
		check "$n/strict-exit" 1 $?
		check_grep "$n/strict-position" ":$first:[0-9]+: " "$TMP/serr"
	else
		"$HEAPDUMP" stats --strict -q "$f" >/dev/null 2>"$TMP/serr"
		check "$n/strict-ok" 0 $?
	fi
	case $f in *.gz) continue ;; esac
	# the store agrees, and counts duplicates instead of keeping them
	if "$HEAPDUMP" index -q "$f" -o "$TMP/s.hds" 2>/dev/null; then
		check "$n/store-objects" "$(get objects "$e")" \
			"$("$HEAPDUMP" stats -q --all --format json "$TMP/s.hds" | jq .totals.objects)"
	else
		notok "$n/store" "index failed"
	fi
done
# no input file was modified by any of this
check inputs-untouched "$before" "$(sums)"
