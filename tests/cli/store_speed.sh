#!/bin/sh
# store_speed.sh - the stats summary section of a store (man 5
# heapdump-store, STATS SUMMARY): stats by type and class and top's
# excluded line read it instead of every node. On every fixture (a
# sample of them under HD_SWEEP=sample, as in lib.sh's sweep_dumps) the
# answers from it equal the ones streamed from the nodes (the same store
# without the section, which is exactly what earlier builds wrote); a
# damaged summary is a clear error, never a crash; a store of format 1
# (store_speed/main_since.hds, heapdump c7ed41b, index --dominators of
# data/dumps/ok_ruby3.1_since.json), whose graph has no class
# references, is refused by every command, saying to index again; the
# same dump gives the same store bytes.
. "$(dirname "$0")/../lib.sh"

HD=$HEAPDUMP
TOOLS="$TOP/$B/tests"
case $B in /*) TOOLS="$B/tests" ;; esac
SS="$TOOLS/store_sections"
SUM=34 # the section id of the stats summary
mkdir "$TMP/with" "$TMP/without"

# sec_field STORE ID FIELD: field 3 (offset) or 4 (size) of section ID
sec_field() {
	"$SS" list "$1" | awk -v id="$2" -v f="$3" '$1 == id { print $f }'
}

# poke FILE OFFSET BYTE(octal): overwrites one byte in place
poke() {
	printf "\\$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# ---- every fixture: the summary answers as the nodes do ----
# Each store with and without its summary, under one name in two
# directories (the outputs name the store).
# (sweep_dumps: every fixture, or a sample of them under HD_SWEEP=sample)
runs=0 bad="" nsum=0 nidx=0
for d in $(sweep_dumps); do
	b=$(basename "$d")
	"$HD" index -q -o "$TMP/with/s.hds" "$d" 2>/dev/null || continue
	nidx=$((nidx + 1))
	[ -n "$(sec_field "$TMP/with/s.hds" $SUM 4)" ] && nsum=$((nsum + 1))
	"$SS" strip "$TMP/with/s.hds" $SUM "$TMP/without/s.hds" ||
		{ bad="$bad $b(strip)"; continue; }
	for opts in "" "--all" "-f json" "-f tsv" "-f ndjson --sort memsize" \
		"-n 0 --namespace -f json" "--by class" "--by type,class -n 0" \
		"--by class --by type --all" "--by class,location"; do
		runs=$((runs + 1))
		# shellcheck disable=SC2086
		(cd "$TMP/with" && "$HD" stats -q $opts s.hds >o 2>&1; echo $? >>o)
		# shellcheck disable=SC2086
		(cd "$TMP/without" && "$HD" stats -q $opts s.hds >o 2>&1; echo $? >>o)
		cmp -s "$TMP/with/o" "$TMP/without/o" || bad="$bad $b[stats $opts]"
	done
	for opts in "-f json" "--all -f json -n 5" "-f text --by class"; do
		runs=$((runs + 1))
		# shellcheck disable=SC2086
		(cd "$TMP/with" && "$HD" top -q $opts s.hds 2>&1 |
			sed 's/computed in .*//' >o)
		# shellcheck disable=SC2086
		(cd "$TMP/without" && "$HD" top -q $opts s.hds 2>&1 |
			sed 's/computed in .*//' >o)
		cmp -s "$TMP/with/o" "$TMP/without/o" || bad="$bad $b[top $opts]"
	done
done
check fixtures/every-store-has-a-summary "$nidx" "$nsum"
check fixtures/summary-equals-streamed "" "$bad"
# (13 runs a fixture that indexes; the bad_ ones mostly do not)
swept=$(sweep_dumps | wc -l)
echo "# $runs runs on $nidx stores of $swept fixtures"
[ "$runs" -gt $((swept * 8)) ] && ok fixtures/runs ||
	notok fixtures/runs "only $runs runs for $swept fixtures"

# the excluded line really comes from somewhere: a dump with the tracer
"$HD" index -q -o "$TMP/t.hds" "$DATA/ok_ruby3.1_traced.json" 2>/dev/null
check_grep fixtures/excluded-shown '^excluded +[1-9]' \
	"$( "$HD" stats "$TMP/t.hds" >"$TMP/t.out" 2>&1; echo "$TMP/t.out")"

# ---- the summary without the rest: stripping it gives an earlier store ----
"$HD" index -q -o "$TMP/with/s.hds" "$DATA/leak_before.json"
"$SS" strip "$TMP/with/s.hds" $SUM "$TMP/without/s.hds"
size=$(wc -c <"$TMP/with/s.hds")
ssize=$(sec_field "$TMP/with/s.hds" $SUM 4)
check layout/strip-removes-only-it $((size - (ssize + 7) / 8 * 8 - 24)) \
	"$(wc -c <"$TMP/without/s.hds" | tr -d ' ')"
check_rc layout/stripped-opens 0 "$HD" stats -q "$TMP/without/s.hds"

# ---- the same dump, the same bytes ----
"$HD" index -q -o "$TMP/a.hds" "$DATA/ok_ruby3.4_traced.json" 2>/dev/null
"$HD" index -q -o "$TMP/b.hds" "$DATA/ok_ruby3.4_traced.json" 2>/dev/null
cmp -s "$TMP/a.hds" "$TMP/b.hds" && ok determinism/index ||
	notok determinism/index "two indexes of one dump differ"
"$HD" index -q --dominators -o "$TMP/a.hds" "$DATA/leak_after.json" 2>/dev/null
"$HD" index -q --dominators -o "$TMP/b.hds" "$DATA/leak_after.json" 2>/dev/null
cmp -s "$TMP/a.hds" "$TMP/b.hds" && ok determinism/dominators ||
	notok determinism/dominators "two indexes of one dump differ"

# ---- a store of an older build (format 1, without class references):
# refused for every command, saying to index the dump again ----
OLD="$TOP/tests/cli/store_speed/main_since.hds"
check old/has-no-summary "" "$(sec_field "$OLD" $SUM 4)"
cp "$OLD" "$TMP/without/s.hds"
for c in "stats" "stats --all -f json" "stats --by class,file" "top -f json" \
	"top --all" "dominators -n 5 --type STRING"; do
	# shellcheck disable=SC2086
	(cd "$TMP/without" && { "$HD" $c s.hds 2>&1; echo $?; } >o)
	check "old/refused:$c" "heapdump: store version 1 was written by an older heapdump (its graph has no class references): index the dump again
1" "$(cat "$TMP/without/o")"
done

# ---- a damaged summary: a clear error naming it, exit 1 ----
"$HD" index -q -o "$TMP/good.hds" "$DATA/leak_before.json"
off=$(sec_field "$TMP/good.hds" $SUM 3)
# damage NAME OFFSET-IN-SECTION BYTE PATTERN
damage() {
	cp "$TMP/good.hds" "$TMP/bad.hds"
	poke "$TMP/bad.hds" $((off + $2)) "$3"
	for c in stats top; do
		"$HD" "$c" -q "$TMP/bad.hds" >"$TMP/o" 2>"$TMP/e"
		rc=$?
		if [ $rc = 1 ] && grep -qE -- "$4" "$TMP/e"; then ok "damaged/$1/$c"
		else notok "damaged/$1/$c" "exit $rc: $(head -c 300 "$TMP/e")"; fi
	done
}
damage version 0 '002' 'stats summary section has an unknown version'
damage flags 24 '001' 'stats summary section has an unknown version or flags'
damage rows 8 '377' 'stats summary section is the wrong size'
damage name-bytes 17 '001' 'stats summary section is the wrong size'
damage type 32 '377' 'stats summary section has an invalid row'
damage row-flags 36 '010' 'stats summary section has an invalid row'
damage name-offset 43 '177' 'stats summary section has an invalid row'
damage count 49 '001' 'stats summary section does not match the nodes'
damage edges 65 '177' 'stats summary section does not match the nodes'
damage traced 79 '177' 'stats summary section has an invalid row'
damage order 96 '000' 'stats summary section is not sorted'
# a section table listing it twice is refused
cp "$TMP/good.hds" "$TMP/bad.hds"
ent=$("$SS" list "$TMP/good.hds" | awk -v id=$SUM '$1 == id { print NR - 1 }')
poke "$TMP/bad.hds" $((32 + 24 * ent - 24)) '042'
check_rc damaged/twice 1 "$HD" stats -q "$TMP/bad.hds"
check_grep damaged/twice-message 'stats summary section appears twice' "$TMP/err"
# a table whose count lost the summary's entry (the last) leaves its
# bytes held by no section: refused, not opened as a store without it
cp "$TMP/good.hds" "$TMP/bad.hds"
cnt=$("$SS" list "$TMP/good.hds" | wc -l)
poke "$TMP/bad.hds" 12 "$(printf '%03o' $((cnt - 1)))"
check_rc damaged/count-lowered 1 "$HD" stats -q "$TMP/bad.hds"
check_grep damaged/count-lowered-message 'store (file has [0-9]+ bytes no section holds|meta section is not where the table.s layout puts it)' "$TMP/err"
