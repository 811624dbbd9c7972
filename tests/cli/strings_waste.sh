#!/bin/sh
# strings_waste.sh - heapdump strings and heapdump waste, each checked
# against an independent count (strings_waste.py reads the raw JSON
# itself) on the waste scenario (data/gen/waste.rb, Ruby 3.1 and 4.0.1)
# and on ordinary fixtures; a store gives the output of its dump; JSON
# parses; hostile values (control bytes, quotes, prefixes that agree,
# 200,000 distinct values) are escaped, kept apart and fast.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs python3 python3

HD=$HEAPDUMP
PY="python3 $TOP/tests/cli/strings_waste.py"
W31="$DATA/waste_ruby3.1.json.gz"
W40="$DATA/waste_ruby4.0.1.json.gz"

# ---- strings against the independent count ----
for f in "$W31" "$W40" "$DATA/ok_ruby3.1_traced.json" \
	"$DATA/ok_ruby3.4.8_traced.json.gz" "$DATA/ok_ruby4.0.1_traced.json.gz"; do
	n=$(basename "$f" | sed 's/\.json.*//')
	for by in value site holder; do
		$PY strings "$f" --by $by >"$TMP/want" 2>"$TMP/err" ||
			notok "strings/$n/$by/script" "$(head -c 300 "$TMP/err")"
		"$HD" strings -q --top 0 --by $by --format json "$f" >"$TMP/got.json" 2>"$TMP/err"
		check "strings/$n/$by/exit" 0 $?
		$PY norm <"$TMP/got.json" >"$TMP/got" 2>>"$TMP/err"
		if cmp -s "$TMP/want" "$TMP/got"; then ok "strings/$n/$by/independent"; else
			notok "strings/$n/$by/independent" "$(diff "$TMP/want" "$TMP/got" | head -c 400)$(head -c 200 "$TMP/err")"
		fi
	done
	$PY strings "$f" --min-count 1 >"$TMP/want"
	"$HD" strings -q --top 0 --min-count 1 --format json "$f" | $PY norm >"$TMP/got"
	if cmp -s "$TMP/want" "$TMP/got"; then ok "strings/$n/min-count-1"; else
		notok "strings/$n/min-count-1" "$(diff "$TMP/want" "$TMP/got" | head -c 400)"
	fi
done

# the scenario's own numbers, so that the script and heapdump cannot agree
# on nothing: 10,000 copies of one value from one line, 9,999 wasted
for f in "$W31" "$W40"; do
	n=$(basename "$f" .json.gz)
	SAME='.rows[] | select(.value == "the same string, made 10,000 times")'
	"$HD" strings -q --format json "$f" >"$TMP/s.json"
	check "scenario/$n/top-value" "10000 34 10000" \
		"$(jq -r "$SAME"' | "\(.count) \(.bytesize) \(.group_count)"' "$TMP/s.json")"
	# every copy has the same memsize here: all but one of them is waste
	check "scenario/$n/wasted-is-all-but-first" "$(jq "$SAME"' | .memsize / .count * 9999' "$TMP/s.json")" \
		"$(jq "$SAME"' | .wasted_memsize' "$TMP/s.json")"
	# 200 copies of "spare", each with 10,000 bytes of capacity, waste most
	check "scenario/$n/spare-first" "spare 200" \
		"$(jq -r '.rows[0] | "\(.value) \(.count - 1)"' "$TMP/s.json")"
	"$HD" strings -q --by site --format json "$f" >"$TMP/s.json"
	check "scenario/$n/by-site" "waste.rb:27 10000" \
		"$(jq -r "$SAME"' | "\(.site.file):\(.site.line) \(.count)"' "$TMP/s.json")"
	"$HD" strings -q --by holder --format json "$f" >"$TMP/s.json"
	check "scenario/$n/by-holder" "Array 10000" \
		"$(jq -r "$SAME"' | "\(.holder) \(.count)"' "$TMP/s.json")"
	"$HD" strings -q --min-count 10001 --format json "$f" >"$TMP/s.json"
	check "scenario/$n/min-count" 0 "$(jq '.rows | length' "$TMP/s.json")"
	"$HD" strings -q --top 2 --format json "$f" >"$TMP/s.json"
	check "scenario/$n/top" 2 "$(jq '.rows | length' "$TMP/s.json")"
	# the selection options narrow it: --location picks one line's strings
	"$HD" strings -q --location waste.rb:32 --format json "$f" >"$TMP/s.json"
	check "scenario/$n/location" "a frozen literal 400" \
		"$(jq -r '[.rows[] | "\(.value) \(.count)"] | join(",")' "$TMP/s.json")"
	check "scenario/$n/location-totals" 400 "$(jq .totals.strings "$TMP/s.json")"
	"$HD" strings -q "$f" >"$TMP/s.txt"
	check_grep "scenario/$n/text-row" '^ +10,000 .*"the same string, made 10,000 times"$' "$TMP/s.txt"
	check_grep "scenario/$n/text-totals" '^repeated +[0-9,]+ values' "$TMP/s.txt"
done

# ---- waste against the independent count ----
for f in "$W31" "$W40" "$DATA/ok_ruby3.1_traced.json" "$DATA/ok_ruby4.0.1_traced.json.gz" "$DATA/ok_ruby3.4_traced.json"; do
	n=$(basename "$f" | sed 's/\.json.*//')
	$PY waste "$f" >"$TMP/want"
	"$HD" waste -q --format json "$f" >"$TMP/got.json"
	check "waste/$n/exit" 0 $?
	$PY norm-waste <"$TMP/got.json" >"$TMP/got"
	if cmp -s "$TMP/want" "$TMP/got"; then ok "waste/$n/independent"; else
		notok "waste/$n/independent" "$(diff "$TMP/want" "$TMP/got" | head -c 600)"
	fi
done
for f in "$W31" "$W40"; do
	n=$(basename "$f" .json.gz)
	"$HD" waste -q --format json "$f" >"$TMP/w.json"
	# (the literal's own fstring comes first in the dump: the 400 copies
	# of line 32 are all duplicates of it)
	for c in empty-hashes:5000:28 empty-arrays:3000:29 string-capacity:200:30 \
		array-capacity:100:31 frozen-duplicates:400:32 duplicate-strings:9999:27; do
		name=${c%%:*} rest=${c#*:}
		check "scenario/$n/waste-$name" "${rest%%:*} waste.rb:${rest#*:}" \
			"$(jq -r --arg c "$name" '.categories[] | select(.name == $c) | .sites[] | select(.site.line == '"${rest#*:}"') | "\(.count) \(.site.file):\(.site.line)"' "$TMP/w.json")"
	done
	"$HD" waste -q "$f" >"$TMP/w.txt"
	check_grep "scenario/$n/waste-text" '^empty hashes +[0-9,]+ +[0-9.]+ [KM]?B +[0-9.]+%' "$TMP/w.txt"
	check_grep "scenario/$n/waste-text-site" '^ +5,000 .* waste\.rb:28$' "$TMP/w.txt"
done

# ---- a store gives the output of its dump ----
for f in "$W31" "$DATA/ok_ruby3.4.8_traced.json.gz"; do
	n=$(basename "$f" | sed 's/\.json.*//')
	gzip -dc "$f" >"$TMP/$n.json" 2>/dev/null || cp "$f" "$TMP/$n.json"
	"$HD" index -q "$TMP/$n.json" -o "$TMP/$n.hds"
	for a in "strings" "strings --by site --format tsv" "strings --by holder --format json" \
		"waste" "waste --format json" "waste --format tsv"; do
		# shellcheck disable=SC2086
		# (stdout: the dump's repaired lines are reported when read)
		"$HD" $a -q "$TMP/$n.json" >"$TMP/d.out" 2>/dev/null
		# shellcheck disable=SC2086
		"$HD" $a -q "$TMP/$n.hds" >"$TMP/s.out" 2>/dev/null
		if cmp -s "$TMP/d.out" "$TMP/s.out"; then ok "store/$n/$(echo "$a" | tr ' ' _)"; else
			notok "store/$n/$(echo "$a" | tr ' ' _)" "$(diff "$TMP/d.out" "$TMP/s.out" | head -c 300)"
		fi
	done
done
# a pipe works too (spooled)
gzip -dc "$W31" | "$HD" strings -q --format json - >"$TMP/p.json"
"$HD" strings -q --format json "$W31" >"$TMP/f.json"
if cmp -s "$TMP/p.json" "$TMP/f.json"; then ok "stdin/same"; else notok "stdin/same" "differs"; fi

# ---- JSON parses; TSV has one header and tabs ----
for a in "strings" "strings --by site" "strings --by holder" "waste"; do
	# shellcheck disable=SC2086
	"$HD" $a -q --format json "$W40" >"$TMP/j.json"
	if jq -e . "$TMP/j.json" >/dev/null 2>&1; then ok "json/$(echo "$a" | tr ' ' _)"; else
		notok "json/$(echo "$a" | tr ' ' _)" "jq refuses it"; fi
done
"$HD" strings -q --format tsv "$W40" >"$TMP/t.tsv"
check tsv/header "count	memsize	wasted_memsize	bytesize	wasted_bytesize	encoding	complete	value" "$(head -1 "$TMP/t.tsv")"
check tsv/columns 8 "$(awk -F'\t' 'NR == 2 { print NF }' "$TMP/t.tsv")"

# ---- usage ----
check_rc usage/by 2 "$HD" strings --by colour "$W31"
check_rc usage/format 2 "$HD" waste --format xml "$W31"
check_rc usage/operand 2 "$HD" strings
check_rc usage/min-count 2 "$HD" strings --min-count 0 "$W31"
check_rc notdump 1 "$HD" strings "$TOP/README.md"

# ---- hostile values ----
H="$TMP/h.json"
{
	echo '{"type":"ROOT", "root":"vm", "references":["0x10"]}'
	# a value with ESC, a quote, a backslash, a tab and a newline; twice
	for a in 10 18; do
		printf '{"address":"0x%s", "type":"STRING", "bytesize":10, "value":"a\\u001b[2J\\"\\\\\\t\\nb", "encoding":"UTF-8", "memsize":40}\n' $a
	done
	# prefixes that agree: bytesize 10 twice, bytesize 20 once
	printf '{"address":"0x20", "type":"STRING", "bytesize":10, "value":"abc", "memsize":40}\n'
	printf '{"address":"0x28", "type":"STRING", "bytesize":10, "value":"abc", "memsize":40}\n'
	printf '{"address":"0x30", "type":"STRING", "bytesize":20, "value":"abc", "memsize":40}\n'
	# no value: binary, and shared
	printf '{"address":"0x38", "type":"STRING", "bytesize":3, "memsize":40}\n'
	printf '{"address":"0x40", "type":"STRING", "shared":true, "references":["0x20"], "memsize":40}\n'
} >"$H"
"$HD" strings -q --min-count 1 "$H" >"$TMP/h.txt" 2>&1
check hostile/no-raw-esc 0 "$(tr -d '\n' <"$TMP/h.txt" | grep -c "$(printf '\033')")"
check_grep hostile/escaped '^ +2 .* "a\\u001b\[2J\\"\\\\\\t\\nb"$' "$TMP/h.txt"
"$HD" strings -q --min-count 1 --format json "$H" >"$TMP/h.out.json"
check hostile/json-value "$(printf 'a\033[2J"\\\t\nb')" "$(jq -r '.rows[] | select(.count == 2 and .bytesize == 10 and .complete) | .value' "$TMP/h.out.json")"
check hostile/prefix-groups "10:2:false 20:1:false" \
	"$(jq -r '[.rows[] | select(.value == "abc") | "\(.bytesize):\(.count):\(.complete)"] | sort | join(" ")' "$TMP/h.out.json")"
check_grep hostile/prefix-text '\(prefix only: 10 bytes\)' "$TMP/h.txt"
check hostile/no-value-shared "1 1" "$(jq -r '.totals | "\(.no_value) \(.shared)"' "$TMP/h.out.json")"
"$HD" strings -q --min-count 1 --format tsv "$H" >"$TMP/h.tsv"
check hostile/tsv-lines 4 "$(wc -l <"$TMP/h.tsv" | tr -d ' ')"

# 200,000 distinct values and 200,000 copies of one: near-linear
awk 'BEGIN { print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}";
	for (i = 0; i < 200000; i++) printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"bytesize\":%d, \"value\":\"v%d\", \"memsize\":40}\n", 16 + i * 40, length("v" i), i;
	for (i = 0; i < 200000; i++) printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"bytesize\":4, \"value\":\"same\", \"memsize\":40}\n", 16 + (i + 200000) * 40 }' >"$TMP/many.json"
cpu_le many/strings-fast 10 "$HD" strings -q --format json "$TMP/many.json"
cp "$TMP/out" "$TMP/many.out"
cpu_le many/waste-fast 10 "$HD" waste -q --format json "$TMP/many.json"
check many/values 200001 "$(jq .totals.values "$TMP/many.out")"
check many/top "same 200000" "$(jq -r '.rows[0] | "\(.value) \(.count)"' "$TMP/many.out")"

# a "capacity" inside a value is no capacity: only the field counts
C="$TMP/cap.json"
{
	echo '{"type":"ROOT", "root":"vm", "references":["0x10"]}'
	printf '{"address":"0x10", "type":"STRING", "bytesize":14, "value":"\\"capacity\\":99", "memsize":40}\n'
	printf '{"address":"0x18", "type":"STRING", "bytesize":3, "capacity":20, "value":"abc", "memsize":61}\n'
} >"$C"
check capacity/field-only "1 17" \
	"$("$HD" waste -q --format json "$C" | jq -r '.categories[] | select(.name == "string-capacity") | "\(.count) \(.bytes)"')"

# a store indexed from a pipe has no dump to read the values from
gzip -dc "$W31" | "$HD" index -q -o "$TMP/pipe.hds" -
check_rc pipe-store/strings 1 "$HD" strings -q "$TMP/pipe.hds"
check_grep pipe-store/message 'standard input' "$TMP/err"
check_rc pipe-store/waste 1 "$HD" waste -q "$TMP/pipe.hds"

# a 32-bit dump (wasm32: addresses below 2^32, 4-byte words, 20-byte
# slots): 100 elements in room for 250 are 600 spare bytes, not 200
A32="$TMP/a32.json"
{
	echo '{"type":"ROOT", "root":"vm", "references":["0x1000"]}'
	echo '{"address":"0x1000", "type":"ARRAY", "slot_size":20, "length":100, "memsize":1020}'
	echo '{"address":"0x7f0000001000", "type":"ARRAY", "slot_size":40, "length":100, "memsize":840}'
} >"$A32"
check array-capacity/word-size "1 600" \
	"$("$HD" waste -q --format json "$A32" | jq -r '.categories[] | select(.name == "array-capacity") | "\(.count) \(.bytes)"')"
