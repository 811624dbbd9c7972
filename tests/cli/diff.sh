#!/bin/sh
# heapdump diff on the leak fixtures (data/gen/leak.rb): the new objects
# and the three-dump answer must be exactly those of leak*_expected.json,
# on Ruby 3.1 and on the gzipped Ruby 3.4 set; -o output byte for byte;
# formats; stores as inputs; usage errors.
. "$(dirname "$0")/../lib.sh"
needs jq jq

# same_set NAME WANT-FILE GOT-FILE: two address lists, as sets
same_set() {
	sort -u "$2" >"$TMP/w.s"
	sort -u "$3" >"$TMP/g.s"
	if cmp -s "$TMP/w.s" "$TMP/g.s" && [ -s "$TMP/w.s" ]; then ok "$1"; else
		notok "$1" "want $(wc -l <"$TMP/w.s") got $(wc -l <"$TMP/g.s"): $(diff "$TMP/w.s" "$TMP/g.s" | head -5 | tr '\n' ' ')"
	fi
}

# byte_identical NAME OUT DUMP: every line of OUT is a line of DUMP and
# parses as JSON
byte_identical() {
	zcat -f "$3" >"$TMP/dump.txt"
	bad=0
	while IFS= read -r line; do
		grep -F -x -q -- "$line" "$TMP/dump.txt" || bad=$((bad + 1))
	done <"$2"
	check "$1/lines-as-in-after" 0 "$bad"
	if jq -e . "$2" >/dev/null 2>&1; then ok "$1/valid-json"; else
		notok "$1/valid-json" "jq rejects $(basename "$2")"
	fi
}

for set in leak leak_ruby3.4; do
	case $set in leak) ext=.json ;; *) ext=.json.gz ;; esac
	b="$DATA/${set}_before$ext" a="$DATA/${set}_after$ext"
	l="$DATA/${set}_later$ext" e="$DATA/${set}_expected.json"
	[ -f "$b" ] || { notok "$set/fixtures" "no $b"; continue; }
	jq -r '.leaked.objects[][0]' "$e" >"$TMP/leaked"
	jq -r '.leaked_later.objects[][0]' "$e" >"$TMP/leaked_later"

	# two dumps: the new objects are the leaked ones (nothing else
	# survives phase A)
	if "$HEAPDUMP" diff -q -o "$TMP/new.json" "$b" "$a" >"$TMP/out" \
		2>"$TMP/err"; then
		jq -r .address "$TMP/new.json" >"$TMP/got"
		same_set "$set/new-is-leaked" "$TMP/leaked" "$TMP/got"
		byte_identical "$set/new-output" "$TMP/new.json" "$a"
		check_grep "$set/rule-generation" '^rule +generation' "$TMP/out"
		check_grep "$set/header-new" "^new +$(wc -l <"$TMP/leaked") objects" "$TMP/out"
	else
		notok "$set/new" "exit $?: $(head -c 300 "$TMP/err")"
	fi

	# three dumps: new in AFTER and still alive in LATER
	if "$HEAPDUMP" diff -q -o "$TMP/ret.json" "$b" "$a" "$l" \
		--format json >"$TMP/ret.out" 2>"$TMP/err"; then
		jq -r .address "$TMP/ret.json" >"$TMP/got"
		same_set "$set/retained-is-leaked" "$TMP/leaked" "$TMP/got"
		check "$set/retained-count" "$(wc -l <"$TMP/leaked" | tr -d ' ')" \
			"$(jq .retained.count "$TMP/ret.out")"
		check "$set/retained-rows-sum" "$(jq .retained.count "$TMP/ret.out")" \
			"$(jq '[.rows[].count] | add' "$TMP/ret.out")"
		check "$set/by-type" "$(jq -c '.leaked.by_type' "$e")" \
			"$(jq -s -c 'group_by(.type) | map({(.[0].type): length}) | add' "$TMP/ret.json")"
	else
		notok "$set/retained" "exit $?: $(head -c 300 "$TMP/err")"
	fi

	# AFTER -> LATER: the objects leaked in phase B
	"$HEAPDUMP" diff -q -o "$TMP/l.json" "$a" "$l" >/dev/null 2>&1
	jq -r .address "$TMP/l.json" >"$TMP/got"
	same_set "$set/leaked-later" "$TMP/leaked_later" "$TMP/got"
	# the three-dump form over AFTER, LATER, LATER says the same
	"$HEAPDUMP" diff -q -o "$TMP/l3.json" "$a" "$l" "$l" >/dev/null 2>&1
	jq -r .address "$TMP/l3.json" >"$TMP/got"
	same_set "$set/leaked-later-3" "$TMP/leaked_later" "$TMP/got"
done

b="$DATA/leak_before.json" a="$DATA/leak_after.json" l="$DATA/leak_later.json"
jq -r '.leaked.objects[][0]' "$DATA/leak_expected.json" >"$TMP/leaked"
"$HEAPDUMP" diff -q -o "$TMP/new.json" "$b" "$a" >/dev/null 2>&1

# the identity rule's own view: 12 leaked objects sit in slots BEFORE used
# for other objects (data/README.md); the diff calls them reused
"$HEAPDUMP" diff -q --format json "$b" "$a" >"$TMP/j" 2>"$TMP/err"
check json/verdict-sum "$(jq '.objects.after' "$TMP/j")" \
	"$(jq '[.verdicts[]] | add' "$TMP/j")"
check json/rules '["generation","address+fingerprint"]' "$(jq -c .rules "$TMP/j")"
check json/generation 2 "$(jq .generation "$TMP/j")"
check json/new-memsize "$(jq '.new.memsize' "$TMP/j")" \
	"$(jq '[.rows[].memsize] | add' "$TMP/j")"

# tsv: totals, then one row per group
"$HEAPDUMP" diff -q --format tsv --top 0 "$b" "$a" >"$TMP/t" 2>"$TMP/err"
check_grep tsv/total-new '^total	new	60$' "$TMP/t"
check tsv/rows-sum 60 "$(awk -F'\t' '$1 == "new" { n += $2 } END { print n }' "$TMP/t")"
check_grep tsv/row 'new	[0-9]+	[0-9]+	Request	.*leak\.rb:[0-9]+$' "$TMP/t"
# --top, --sort
"$HEAPDUMP" diff -q --format json --top 1 --sort memsize "$b" "$a" >"$TMP/j1"
check top-1 1 "$(jq '.rows | length' "$TMP/j1")"
check sort-memsize "$(jq '[.rows[].memsize] | max' "$TMP/j")" \
	"$(jq '.rows[0].memsize' "$TMP/j1")"
"$HEAPDUMP" diff -q --format tsv --by type "$b" "$a" >"$TMP/t2"
check by-type "HASH OBJECT STRING" \
	"$(awk -F'\t' '$1 == "new" { print $4 }' "$TMP/t2" | sort | tr '\n' ' ' | sed 's/ $//')"

# stores give the same answer as dumps
"$HEAPDUMP" index -q "$b" -o "$TMP/b.hds" && "$HEAPDUMP" index -q "$a" -o "$TMP/a.hds" &&
	"$HEAPDUMP" index -q "$l" -o "$TMP/l.hds"
"$HEAPDUMP" diff -q --format tsv --top 0 "$b" "$a" "$l" >"$TMP/d.tsv"
"$HEAPDUMP" diff -q --format tsv --top 0 "$TMP/b.hds" "$TMP/a.hds" "$TMP/l.hds" >"$TMP/s.tsv"
check store-same-as-dump "" "$(diff "$TMP/d.tsv" "$TMP/s.tsv" | head -5)"
"$HEAPDUMP" diff -q -o "$TMP/s.json" "$TMP/b.hds" "$TMP/a.hds" >/dev/null 2>&1
check store-output-same "" "$(cmp "$TMP/new.json" "$TMP/s.json" 2>&1)"
# mixed, and one input on standard input
"$HEAPDUMP" diff -q --format tsv --top 0 "$TMP/b.hds" - "$l" <"$a" >"$TMP/m.tsv"
check stdin-same-as-file "" "$(diff "$TMP/d.tsv" "$TMP/m.tsv" | head -5)"
"$HEAPDUMP" diff -q -o "$TMP/in.json" "$b" - <"$a" >/dev/null
check stdin-output "" "$(cmp "$TMP/in.json" "$TMP/new.json" 2>&1)"

# untraced rule on the same pair: still 60 (generations still differ per
# slot), but the header says which rule
"$HEAPDUMP" diff -q --no-generation --format json "$b" "$a" >"$TMP/ng" 2>&1
check no-generation-rule '["address+fingerprint"]' "$(jq -c .rules "$TMP/ng")"
check no-generation-null null "$(jq .generation "$TMP/ng")"

# a dump against itself: nothing new, empty output file
"$HEAPDUMP" diff -q -o "$TMP/none.json" "$a" "$a" >"$TMP/o" 2>&1
check self-nothing-new 0 "$(wc -c <"$TMP/none.json" | tr -d ' ')"
check_grep self-header '^new +0 objects' "$TMP/o"

# --with-paths: the new objects plus what holds them, references kept
# inside the set
if "$HEAPDUMP" diff -q --with-paths -o "$TMP/p.json" "$b" "$a" >"$TMP/o" 2>"$TMP/err"; then
	jq -r .address "$TMP/p.json" | sort >"$TMP/p.addr"
	check with-paths-has-new "" "$(sort "$TMP/leaked" | comm -23 - "$TMP/p.addr" | head -3)"
	more=$(($(wc -l <"$TMP/p.addr") - 60))
	if [ "$more" -gt 0 ]; then ok with-paths-adds-holders; else
		notok with-paths-adds-holders "only $more more"
	fi
	check with-paths-refs-inside "" "$(jq -r '.references[]?' "$TMP/p.json" | sort -u | comm -23 - "$TMP/p.addr" | head -3)"
	check with-paths-valid 0 "$(jq -e . "$TMP/p.json" >/dev/null 2>&1; echo $?)"
	# the cache holding the requests is on the paths
	check_grep with-paths-cache '"type":"HASH"' "$TMP/p.json"
else
	notok with-paths "exit $?: $(head -c 300 "$TMP/err")"
fi

# atomic output: a failed run leaves nothing behind
check_rc missing-file-exit 1 "$HEAPDUMP" diff -q -o "$TMP/x.json" "$b" "$TMP/nope.json"
check missing-file-no-output "" "$(ls "$TMP" | grep -e '^x\.json')"

# usage errors
check_rc usage-one-input 2 "$HEAPDUMP" diff "$b"
check_rc usage-no-input 2 "$HEAPDUMP" diff
check_rc usage-four-inputs 2 "$HEAPDUMP" diff "$b" "$a" "$l" "$l"
check_rc usage-two-stdin 2 "$HEAPDUMP" diff - -
check_rc usage-format 2 "$HEAPDUMP" diff --format xml "$b" "$a"
check_rc usage-sort 2 "$HEAPDUMP" diff --sort name "$b" "$a"
check_rc usage-by 2 "$HEAPDUMP" diff --by nope "$b" "$a"
check_rc usage-with-paths-needs-o 2 "$HEAPDUMP" diff --with-paths "$b" "$a"
check_rc usage-option 2 "$HEAPDUMP" diff --nope "$b" "$a"
check_rc help 0 "$HEAPDUMP" diff --help
check_grep help-usage 'BEFORE AFTER \[LATER\]' "$TMP/out"
