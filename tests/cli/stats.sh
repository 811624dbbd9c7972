#!/bin/sh
# heapdump stats against an independent count (Ruby's JSON, data/gen/count.rb)
# on every real fixture, from the dump and from its store; output formats,
# options and usage errors.
. "$(dirname "$0")/../lib.sh"
needs ruby ruby
needs jq jq

# field NAME JSON-FILE JQ-EXPR
field() { jq -r "$2" "$1"; }

set -- "$DATA"/ok_*.json "$DATA"/ok_*.json.gz
[ -e "$1" ] || { notok fixtures "no data/dumps/ok_* fixture found"; exit 1; }
for dump in "$@"; do
	n=$(basename "$dump")
	ruby "$TOP/data/gen/count.rb" "$dump" >"$TMP/want.json" 2>"$TMP/err" ||
		{ notok "$n/count.rb" "$(head -c 300 "$TMP/err")"; continue; }
	if ! "$HEAPDUMP" stats --all -q --format json --top 0 --by type "$dump" \
		>"$TMP/got.json" 2>"$TMP/err"; then
		notok "$n/stats" "exit $?: $(head -c 300 "$TMP/err")"
		continue
	fi
	for k in objects memsize roots shapes; do
		case $k in roots) q=.totals.roots ;; *) q=.totals.$k ;; esac
		check "$n/$k" "$(field "$TMP/want.json" ".$k")" \
			"$(field "$TMP/got.json" "$q")"
	done
	check "$n/references" "$(field "$TMP/want.json" .edges)" \
		"$(field "$TMP/got.json" .totals.references)"
	check "$n/by-type" \
		"$(jq -c '.by_type | to_entries | map([.key, .value.count, .value.memsize]) | sort' "$TMP/want.json")" \
		"$(jq -c '.groupings[0].rows | map([.type, .count, .memsize]) | sort' "$TMP/got.json")"
	check "$n/generations" "$(jq -c .generations "$TMP/want.json")" \
		"$(jq -c .totals.generations "$TMP/got.json")"
	# the same numbers from the store
	case $dump in *.gz) continue ;; esac
	if "$HEAPDUMP" index -q "$dump" -o "$TMP/s.hds" 2>"$TMP/err" &&
		"$HEAPDUMP" stats --all -q --format json --top 0 --by type \
			"$TMP/s.hds" >"$TMP/store.json" 2>"$TMP/err"; then
		check "$n/store-by-type" \
			"$(jq -c '.groupings[0].rows | map([.type, .count, .memsize]) | sort' "$TMP/got.json")" \
			"$(jq -c '.groupings[0].rows | map([.type, .count, .memsize]) | sort' "$TMP/store.json")"
		check "$n/store-totals" \
			"$(jq -c '.totals | [.objects, .memsize, .roots, .shapes, .references]' "$TMP/got.json")" \
			"$(jq -c '.totals | [.objects, .memsize, .roots, .shapes, .references]' "$TMP/store.json")"
	else
		notok "$n/store" "$(head -c 300 "$TMP/err")"
	fi
done

d="$DATA/ok_ruby3.1_traced.json"
# by class: the dump and its store agree on every class name
"$HEAPDUMP" stats -q --format tsv --top 0 --by class "$d" 2>/dev/null | sort >"$TMP/a"
"$HEAPDUMP" index -q "$d" -o "$TMP/c.hds"
"$HEAPDUMP" stats -q --format tsv --top 0 --by class "$TMP/c.hds" | sort >"$TMP/b"
check class-names-dump-vs-store "" "$(diff "$TMP/a" "$TMP/b" | head -5)"
check_grep class-named "^class	[0-9]+	[0-9]+	String$" "$TMP/a"
check_grep class-imemo "^class	[0-9]+	[0-9]+	IMEMO/iseq$" "$TMP/a"
check_grep class-singleton '^class	[0-9]+	[0-9]+	#<Class:' "$TMP/a"

# the tracer and dump_all's own objects are left out and said so
"$HEAPDUMP" stats -q "$d" 2>/dev/null >"$TMP/text"
check_grep excluded-said '^excluded +[0-9,]+ objects' "$TMP/text"
a=$("$HEAPDUMP" stats -q --format json "$d" 2>/dev/null | jq '.totals.objects + .totals.excluded')
b=$("$HEAPDUMP" stats -q --all --format json "$d" 2>/dev/null | jq .totals.objects)
check all-keeps-excluded "$b" "$a"

# location,class rows read like memprof's "file.rb:2:String"
"$HEAPDUMP" stats -q --by location,class --top 0 "$d" 2>/dev/null >"$TMP/loc"
check_grep location-class ' [^ ]+\.rb:[0-9]+:[A-Z]' "$TMP/loc"
# the rows of a grouping add up to the totals
tot=$("$HEAPDUMP" stats -q --format json --by gem --top 0 "$d" 2>/dev/null |
	jq '([.groupings[0].rows[].count] | add) == .totals.objects')
check gem-rows-add-up true "$tot"
# --top limits rows; --sort memsize orders them
n=$("$HEAPDUMP" stats -q --format json --by class --top 3 "$d" 2>/dev/null | jq '.groupings[0].rows | length')
check top-3 3 "$n"
s=$("$HEAPDUMP" stats -q --format json --by class --sort memsize --top 0 "$d" 2>/dev/null |
	jq '[.groupings[0].rows[].memsize] | . == (sort | reverse)')
check sort-memsize true "$s"
# --namespace totals
"$HEAPDUMP" stats -q --namespace LeakyCache --format json "$d" 2>/dev/null >"$TMP/ns.json"
check namespace-present true "$(jq '.namespaces | has("LeakyCache")' "$TMP/ns.json")"

# stdin and gzip give the same totals as the file
a=$("$HEAPDUMP" stats -q --format json "$d" 2>/dev/null | jq -c .totals)
b=$(gzip -c "$d" | "$HEAPDUMP" stats -q --format json - 2>/dev/null | jq -c .totals)
check stdin-gzip "$a" "$b"

# usage errors exit 2, runtime failures exit 1
check_rc usage-no-arg 2 "$HEAPDUMP" stats
check_rc usage-bad-key 2 "$HEAPDUMP" stats --by nope "$d"
check_rc usage-bad-format 2 "$HEAPDUMP" stats --format xml "$d"
check_rc usage-unknown-option 2 "$HEAPDUMP" stats --frobnicate "$d"
check_rc missing-file 1 "$HEAPDUMP" stats "$TMP/nope.json"
check_grep missing-file-message "cannot open '.*nope.json'" "$TMP/err"
check_rc help 0 "$HEAPDUMP" stats --help
check_grep help-lists-by "by KEYS" "$TMP/out"
