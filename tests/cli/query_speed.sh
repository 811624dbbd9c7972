#!/bin/sh
# heapdump query's grouped walks (issue 17's speed): GROUP BY / ORDER BY
# class and type are served by the tables in name order (BINARY), so the
# plan has no sorter (no TEMP B-TREE), and the rows of a grouped walk
# carry the same class and type as a plain scan: the answers equal
# stats --by class -f json and the types jq counts in the dump, on a
# Ruby 3.1 dump and a Ruby 4.0 one (IMEMO/..., hidden classes).
. "$(dirname "$0")/../lib.sh"
needs jq jq

H=$HEAPDUMP

# q STORE SQL: the query's TSV rows, header dropped
q() {
	"$H" query -q -f tsv "$1" "$2" 2>"$TMP/qerr" | tail -n +2
}

# same NAME FILE1 FILE2: both non-empty and equal
same() {
	if [ -s "$2" ] && cmp -s "$2" "$3"; then ok "$1"; else
		notok "$1" "$(diff "$2" "$3" | head -5)"; fi
}

# noplan NAME STORE SQL: EXPLAIN QUERY PLAN shows no sorter
noplan() {
	plan=$(q "$2" "explain query plan $3")
	case $plan in
	*"TEMP B-TREE"*) notok "$1" "a sorter: $plan" ;;
	*SCAN*) ok "$1" ;;
	*) notok "$1" "no plan: $plan $(cat "$TMP/qerr")" ;;
	esac
}

for D in "$DATA/leak_after.json" "$DATA/leak_ruby4.0.1_after.json.gz"; do
	[ -f "$D" ] || { notok fixtures "$D is missing"; exit 1; }
	v=$(basename "$D" | sed 's/\.json.*//')
	S=$TMP/$v.hds
	"$H" index -q "$D" -o "$S" 2>"$TMP/err" || { notok "$v/index" "$(cat "$TMP/err")"; continue; }

	# GROUP BY class against stats --by class -f json (every class)
	"$H" stats -q --all -n 0 -f json --by class "$D" |
		jq -r '.groupings[0].rows[] | [.class, .count, .memsize] | @tsv' |
		sort >"$TMP/stats"
	q "$S" 'select class, count(*), sum(memsize) from objects group by 1' >"$TMP/sql"
	sort "$TMP/sql" >"$TMP/sqls"
	same "$v/class-equals-stats" "$TMP/stats" "$TMP/sqls"
	# ... in BINARY order of the names, as SQLite would sort them
	LC_ALL=C sort -t "$(printf '\t')" -k1,1 "$TMP/sql" >"$TMP/sqlo"
	same "$v/class-order" "$TMP/sqlo" "$TMP/sql"

	# GROUP BY type against the dump's types, in name order
	if [ "${D%.gz}" = "$D" ]; then cat "$D"; else gzip -dc "$D"; fi |
		jq -r 'select(.address and .type != "ROOT" and .type != "SHAPE") | .type' | LC_ALL=C sort | uniq -c |
		awk '{ print $2 "\t" $1 }' >"$TMP/types"
	q "$S" 'select type, count(*) from objects group by type' >"$TMP/sqltypes"
	same "$v/type-equals-dump" "$TMP/types" "$TMP/sqltypes"
	q "$S" 'select type, count(*) from objects group by type order by type desc' >"$TMP/desc"
	sort -r "$TMP/types" >"$TMP/typesr"
	same "$v/type-desc" "$TMP/typesr" "$TMP/desc"

	# no sorter for GROUP BY / ORDER BY class or type
	noplan "$v/plan-group-class" "$S" 'select class, count(*) from objects group by class'
	noplan "$v/plan-group-type" "$S" 'select type, count(*), sum(memsize) from objects group by type'
	noplan "$v/plan-order-type" "$S" 'select address from objects order by type'

	# every row of a grouped walk has the class and type of the plain
	# scan (the cursor's group, not the node's, answers)
	q "$S" 'select address, class, type, memsize from objects' | sort >"$TMP/scan"
	q "$S" 'select address, class, type, memsize from objects order by class' | sort >"$TMP/byclass"
	same "$v/rows-by-class" "$TMP/scan" "$TMP/byclass"
	q "$S" 'select address, class, type, memsize from objects order by type' | sort >"$TMP/bytype"
	same "$v/rows-by-type" "$TMP/scan" "$TMP/bytype"
	q "$S" "select address, class, type, memsize from objects where type = 'STRING'" |
		sort >"$TMP/string"
	awk -F '\t' '$3 == "STRING"' "$TMP/scan" >"$TMP/scanstring"
	same "$v/rows-type-eq" "$TMP/scanstring" "$TMP/string"
	q "$S" "select address, class, type, memsize from objects where class = 'String'" |
		sort >"$TMP/cstring"
	awk -F '\t' '$2 == "String"' "$TMP/scan" >"$TMP/scancstring"
	same "$v/rows-class-eq" "$TMP/scancstring" "$TMP/cstring"
	# two keys: by type then class (a sorter for the second key only)
	awk -F '\t' '{ n[$3 "\t" $2]++ } END { for (k in n) print k "\t" n[k] }' "$TMP/scan" |
		sort >"$TMP/tc"
	q "$S" 'select type, class, count(*) from objects group by 1, 2' | sort >"$TMP/sqltc"
	same "$v/type-class" "$TMP/tc" "$TMP/sqltc"
	# an address lookup still visits one row, and a type filter only
	# its own rows
	a=$(head -n 1 "$TMP/scanstring" | cut -f1)
	check "$v/address-visits" 1 \
		"$(q "$S" "select count(*) from objects where address = $a; select hd_rows_visited()" | tail -n 1)"
	check "$v/type-visits" "$(wc -l <"$TMP/scanstring" | tr -d ' ')" \
		"$(q "$S" "select count(class) from objects where type = 'STRING'; select hd_rows_visited()" | tail -n 1)"
done
