#!/bin/sh
# interface_with.sh - heapdump interface-with on the leak fixtures: the
# cache Hash is the self border, the cached Requests the diff border, and
# the keepalive counts agree with an independent BFS in Ruby
# (interface_with.rb); records are the dump's bytes plus the counts.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
needs jq jq
AFTER=$DATA/leak_after.json
HD=$HEAPDUMP

# DIFF: the leaked objects leak.rb lists (address and type make a record)
jq -c '.leaked.objects[] | {address: .[0], type: .[1]}' \
	"$DATA/leak_expected.json" >"$TMP/diff.ndjson"

check_rc leak-exit 0 "$HD" interface-with "$AFTER" "$TMP/diff.ndjson"
cp "$TMP/out" "$TMP/border.ndjson"
cp "$TMP/err" "$TMP/summary.txt"
if jq -e . "$TMP/border.ndjson" >/dev/null 2>&1; then ok parses; else
	notok parses "jq cannot read the output"; fi
check border-count 10 "$(wc -l <"$TMP/border.ndjson" | tr -d ' ')"
check border-requests 10 "$(jq -r .type "$TMP/border.ndjson" | grep -c OBJECT)"
check summary-names-hash 1 "$(grep -c ' Hash$' "$TMP/summary.txt")"

if command -v ruby >/dev/null 2>&1; then
	ruby tests/cli/interface_with.rb "$AFTER" "$TMP/diff.ndjson" >"$TMP/want"
	check keepalive-sum "$(awk '$1 == "keepalive_sum" { print $2 }' "$TMP/want")" \
		"$(jq -s 'map(.keepalive_count) | add' "$TMP/border.ndjson")"
	check keepalive-memsize-sum \
		"$(awk '$1 == "keepalive_memsize_sum" { print $2 }' "$TMP/want")" \
		"$(jq -s 'map(.keepalive_memsize) | add' "$TMP/border.ndjson")"
	check keepalive-each "$(grep '^0x' "$TMP/want" | sort)" \
		"$(jq -r '"\(.address) \(.keepalive_count)"' "$TMP/border.ndjson" | sort)"
	check self-border "$(awk '$1 == "self" { print $2 }' "$TMP/want")" \
		"$(jq -r '.held_by[]' "$TMP/border.ndjson" | sort -u)"
else
	notok needs-ruby "ruby is missing: apt-get install ruby"
fi
# the leak: 10 requests of 6 objects, each only kept by its Request
check keepalive-six "6" "$(jq -r .keepalive_count "$TMP/border.ndjson" | sort -u)"
check retained-six "6" "$(jq -r .retained_count "$TMP/border.ndjson" | sort -u)"

# byte for byte: without the added members, each line is the dump's line
sed 's/, "keepalive_count":[0-9]*, "keepalive_memsize".*}$/}/' \
	"$TMP/border.ndjson" >"$TMP/stripped"
if grep -Fxvf "$AFTER" "$TMP/stripped" >"$TMP/notfound"; then
	notok byte-for-byte "not lines of the dump: $(head -c 300 "$TMP/notfound")"
else
	ok byte-for-byte
fi

# --self-border adds the cache Hash, flagged
"$HD" interface-with --self-border "$AFTER" "$TMP/diff.ndjson" \
	>"$TMP/both" 2>/dev/null
check self-record "HASH" "$(jq -r 'select(.border == "self") | .type' "$TMP/both")"
check self-record-count 11 "$(wc -l <"$TMP/both" | tr -d ' ')"

# the summary as JSON on stdout, records to a file
check_rc summary-json 0 "$HD" interface-with --summary -f json -o "$TMP/o.ndjson" \
	"$AFTER" "$TMP/diff.ndjson"
check summary-json-totals "60 10 1" \
	"$(jq -r '"\(.totals.diff) \(.totals.diff_border) \(.totals.self_border)"' "$TMP/out")"
check summary-json-self-class "Hash" "$(jq -r '.self_border[0].class' "$TMP/out")"
check summary-json-top "6" "$(jq -r '.diff_border[0].keepalive_count' "$TMP/out")"
check output-file "$(cat "$TMP/border.ndjson")" "$(cat "$TMP/o.ndjson")"
check_rc summary-only 0 "$HD" interface-with --summary -n 3 "$AFTER" "$TMP/diff.ndjson"
check summary-only-rows 3 "$(grep -c ' Request$' "$TMP/out")"

# the same from a store, and from standard input
"$HD" index -q -o "$TMP/after.hds" "$AFTER"
"$HD" interface-with "$TMP/after.hds" "$TMP/diff.ndjson" >"$TMP/s.ndjson" 2>/dev/null
check store-input "$(cat "$TMP/border.ndjson")" "$(cat "$TMP/s.ndjson")"
"$HD" interface-with - "$TMP/diff.ndjson" <"$AFTER" >"$TMP/i.ndjson" 2>/dev/null
check stdin-input "$(cat "$TMP/border.ndjson")" "$(cat "$TMP/i.ndjson")"

# a selection instead of DIFF: everything allocated after BEFORE's dump
g=$(jq -r '.gc_count_at_dump.before' "$DATA/leak_expected.json")
check_rc selection 0 "$HD" interface-with --generation "$((g + 1)).." "$AFTER"
if command -v ruby >/dev/null 2>&1; then
	jq -c "select(.generation != null and .generation > $g) | {address}" \
		"$AFTER" >"$TMP/gdiff.ndjson"
	ruby tests/cli/interface_with.rb "$AFTER" "$TMP/gdiff.ndjson" >"$TMP/gwant"
	check selection-keepalive "$(grep '^0x' "$TMP/gwant" | sort)" \
		"$(jq -r '"\(.address) \(.keepalive_count)"' "$TMP/out" | sort)"
fi

# the workflow: heapdump diff -o, then interface-with (when diff is built)
if "$HD" diff --help >/dev/null 2>&1; then
	"$HD" diff "$DATA/leak_before.json" "$AFTER" -o "$TMP/d.ndjson" >/dev/null 2>&1
	"$HD" interface-with "$AFTER" "$TMP/d.ndjson" >"$TMP/w.ndjson" 2>/dev/null
	check diff-workflow "$(jq -r '"\(.address) \(.keepalive_count)"' "$TMP/border.ndjson")" \
		"$(jq -r '"\(.address) \(.keepalive_count)"' "$TMP/w.ndjson")"
fi

# memdump's chain: old -> B -> C -> D; B keeps 3 alive (memdump says 2)
cat >"$TMP/chain.json" <<'J'
{"address":"0x100", "type":"OBJECT", "references":["0x200"], "memsize":40}
{"address":"0x200", "type":"OBJECT", "references":["0x300"], "memsize":40}
{"address":"0x300", "type":"OBJECT", "references":["0x400"], "memsize":40}
{"address":"0x400", "type":"OBJECT", "memsize":40}
J
"$HD" interface-with --address 0x200 --address 0x300 --address 0x400 \
	"$TMP/chain.json" >"$TMP/c.ndjson" 2>/dev/null
check chain "0x200 3 120 3" \
	"$(jq -r '"\(.address) \(.keepalive_count) \(.keepalive_memsize) \(.retained_count)"' "$TMP/c.ndjson")"

# usage errors exit 2, runtime failures 1
check_rc usage-none 2 "$HD" interface-with
check_rc usage-no-diff 2 "$HD" interface-with "$AFTER"
check_rc usage-three 2 "$HD" interface-with "$AFTER" "$TMP/diff.ndjson" x
check_rc usage-format 2 "$HD" interface-with -f xml "$AFTER" "$TMP/diff.ndjson"
check_rc usage-both-stdin 2 "$HD" interface-with - -
check_rc usage-generation 2 "$HD" interface-with --generation x "$AFTER"
check_rc usage-option 2 "$HD" interface-with --nope "$AFTER" "$TMP/diff.ndjson"
check_rc missing-after 1 "$HD" interface-with "$TMP/nope.json" "$TMP/diff.ndjson"
check_rc missing-diff 1 "$HD" interface-with "$AFTER" "$TMP/nope.ndjson"
check_rc help 0 "$HD" interface-with --help
