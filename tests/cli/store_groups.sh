#!/bin/sh
# store_groups.sh - stats --by over a store groups the nodes by integers
# first (class, struct or imemo type, site, generation, length bucket)
# and names each group once (lib/store_stats.c, hd__store_groups); top
# --by class and serve's object order do the same for class names
# (hd_store_class_groups). The answers stay the dump's: on every real
# fixture, every --by alone and all of them together, from the store
# equal the same from the dump; serve, started on a store, gives the
# groupings `stats --by X -f json` gives, the retained sizes of `top --by
# class`, and as many objects of a class as stats counts.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl

HD=$HEAPDUMP
KEYS="type class file location method gem generation imemo length"
ALL="--by type --by class --by file --by location --by method --by gem --by generation --by imemo"
MULTI="--by length --by location,class --by gem,file --by generation,method --by imemo,type --by type,length"

# rows FILE OPTS...: stats -f tsv (totals and every row, not the name
# of the input) without the totals' references: the _since dumps'
# references to objects outside them count as dangling in the store's
TAB=$(printf '\t')
rows() {
	f=$1
	shift
	# shellcheck disable=SC2068
	"$HD" stats -q -f tsv --top 0 $@ "$f" 2>/dev/null | grep -v "^total${TAB}references"
}

# ---- every fixture: the store answers as the dump ----
# edge_duplicate_address keeps one record an address in the store, and
# edge_unknown_fields_types' unknown type names are not stored: their
# stores answer otherwise by design (man 5 heapdump-store).
# sweep_dumps (every fixture, or a sample under HD_SWEEP=sample) and
# the six fixtures each key is checked alone on, in both modes
ALONE="ok_ruby3.1_traced.json ok_ruby3.4_traced.json ok_ruby4.0_since.json
ok_ruby3.1_full.json named_ruby3.1_leak_later.json.gz
named_ruby4.0.1_names_later.json.gz"
runs=0 bad="" nidx=0 nalone=0
for d in $( (sweep_dumps; for a in $ALONE; do echo "$DATA/$a"; done) | sort -u); do
	b=$(basename "$d")
	case $b in bad_* | *_expected.json | edge_empty.json | \
		edge_duplicate_address.json | edge_unknown_fields_types.json) continue ;; esac
	"$HD" index -q -o "$TMP/s.hds" "$d" 2>/dev/null || { bad="$bad $b(index)"; continue; }
	nidx=$((nidx + 1))
	for opts in "$ALL --all" "$MULTI"; do
		runs=$((runs + 1))
		# shellcheck disable=SC2086
		rows "$d" $opts >"$TMP/a"
		# shellcheck disable=SC2086
		rows "$TMP/s.hds" $opts >"$TMP/b"
		[ -s "$TMP/a" ] && cmp -s "$TMP/a" "$TMP/b" || bad="$bad $b[$opts]"
	done
	# each key alone: the store keys its groups by what that key needs
	case " $(echo $ALONE) " in *" $b "*) nalone=$((nalone + 1)) ;;
	*) continue ;;
	esac
	for k in $KEYS; do
		for a in "" "--all"; do
			runs=$((runs + 1))
			# shellcheck disable=SC2086
			rows "$d" --by $k $a >"$TMP/a"
			# shellcheck disable=SC2086
			rows "$TMP/s.hds" --by $k $a >"$TMP/b"
			[ -s "$TMP/a" ] && cmp -s "$TMP/a" "$TMP/b" || bad="$bad $b[--by $k $a]"
		done
	done
done
# (the fixtures left out above are bad_, expected outputs and three)
swept=$(sweep_dumps | wc -l)
check fixtures/indexed 1 "$([ "$nidx" -ge $((swept * 2 / 3)) ] && echo 1 || echo "$nidx of $swept")"
check fixtures/keys-alone 6 "$nalone"
check fixtures/store-equals-dump "" "$bad"
echo "# $runs comparisons on $nidx fixtures"

# the text output too, byte for byte but the name of the input
d="$DATA/ok_ruby3.1_traced.json"
"$HD" index -q -o "$TMP/t.hds" "$d" 2>/dev/null
for k in file location method gem generation length; do
	"$HD" stats -q --top 0 --by "$k" "$d" 2>/dev/null | sed 1d >"$TMP/a"
	"$HD" stats -q --top 0 --by "$k" "$TMP/t.hds" 2>/dev/null | sed 1d >"$TMP/b"
	check "text/by-$k" "" "$(diff "$TMP/a" "$TMP/b" | head -5)"
done
check text/not-empty 1 "$([ "$(wc -l <"$TMP/b")" -gt 10 ] && echo 1)"

# ---- diff: the stats of a set of nodes (hd_stats_add_nodes) ----
# the classes of the retained objects, from stores and from dumps alike
L="$DATA/named_ruby3.1_leak"
for k in before after later; do "$HD" index -q -o "$TMP/$k.hds" "$L"_$k.json.gz 2>/dev/null; done
"$HD" diff -q -f json "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz 2>/dev/null |
	jq -c .rows >"$TMP/da"
"$HD" diff -q -f json "$TMP/before.hds" "$TMP/after.hds" "$TMP/later.hds" 2>/dev/null |
	jq -c .rows >"$TMP/ds"
check diff/rows-store-equals-dump "$(cat "$TMP/da")" "$(cat "$TMP/ds")"
check diff/has-Request 1 "$(jq '[.[] | select(.class == "Request")] | length' "$TMP/ds")"

# ---- serve on a store: the start's groupings are stats' ----
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
"$HD" index -q --dominators -o "$TMP/later.hds" "$L"_later.json.gz 2>/dev/null
serve_start serve 300 "$HD" serve -q "$TMP/later.hds" || exit 1
get() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/$1"; }
for by in type class file location gem generation imemo; do
	get "stats?by=$by&limit=1000" | jq -c '[.rows[] | [.key, .count, .memsize]]' >"$TMP/api"
	"$HD" stats -q -f json --top 1000 --by "$by" "$TMP/later.hds" |
		jq -c --arg k "$by" '[.groupings[0].rows[] | [.[$k], .count, .memsize]]' >"$TMP/cli"
	check "serve/stats-by-$by" "$(cat "$TMP/cli")" "$(cat "$TMP/api")"
	check "serve/stats-by-$by-rows" 1 "$(jq 'if length > 0 then 1 else 0 end' "$TMP/api")"
done
# the classes' retained sizes are top --by class's
get "stats?by=class&limit=1000" |
	jq -c '[.rows[] | select(.retained_count) | [.key, .retained_count, .retained_memsize]] | sort' >"$TMP/api"
"$HD" top -q -f json --by class --top 0 "$TMP/later.hds" |
	jq -c '[.classes[] | [.class, .retained_count, .retained_memsize]] | sort' >"$TMP/cli"
check serve/class-retained "" "$(jq -c --slurpfile c "$TMP/cli" '. - $c[0]' "$TMP/api" | sed 's/^\[\]$//')"
check serve/class-retained-rows 1 "$(jq 'if length > 10 then 1 else 0 end' "$TMP/api")"
# the object order's class of each node: every class lists as many
# objects as stats counts
bad=""
"$HD" stats -q -f json --top 0 --by class "$TMP/later.hds" |
	jq -r '.groupings[0].rows[] | select(.count <= 1000) | [.class, .count] | @tsv' >"$TMP/classes"
n=0
while IFS="$(printf '\t')" read -r cls cnt; do
	n=$((n + 1))
	key=$(printf '%s' "$cls" | jq -Rr @uri)
	got=$(get "objects?by=class&key=$key&limit=1000" | jq '.objects | length')
	[ "$got" = "$cnt" ] || bad="$bad $cls:$got/$cnt"
done <"$TMP/classes"
check serve/objects-of-every-class "" "$bad"
check serve/classes-checked 1 "$([ "$n" -gt 50 ] && echo 1 || echo "$n")"
