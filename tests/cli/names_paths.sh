#!/bin/sh
# tests/cli/names_paths.sh - the paths heapdump prints on the gem's named
# fixtures (data/dumps/named_ruby{3.1,4.0.1}_*, the four-scenario set:
# data/README.md), asserted literally: for each scenario on each Ruby, the
# root line and the hop line of `heapdump path` to an object whose holder
# the script knows (a leaked request's body, the observer's last Proc,
# each kind of name of data/gen/names.rb), and the same path read back
# from `heapdump roots-of` (its records carry their ref_names; the
# sub-dump reads with --strict and gives the same names per hop).
. "$(dirname "$0")/../lib.sh"
needs jq jq
H=$HEAPDUMP
D=$TOP/data/dumps

# VERSION SCENARIO ADDRESS|ROOT LINE|HOP LINE (the later dump of each set)
while IFS='|' read -r key root hops; do
	[ -n "$key" ] || continue
	set -- $key
	v=$1 s=$2 a=$3
	f=$D/named_ruby${v}_${s%%:*}_later.json.gz
	t=$v/$s
	if [ ! -f "$f" ]; then notok "$t/fixture" "$f is missing (make fixtures-names)"; continue; fi
	"$H" path -q "$f" "$a" >"$TMP/p" 2>"$TMP/e"
	check "$t/path" "$root
  $hops" "$(grep -v '^  0x' "$TMP/p")"
	# roots-of writes the path's records, each with its ref_names: the
	# names per hop read back from its output are the same (the classes
	# are not in it: their names are not)
	check_rc "$t/roots-of" 0 "$H" roots-of -q "$f" "$a" -o "$TMP/sub.json"
	check_rc "$t/roots-of-strict" 0 "$H" stats -q --strict "$TMP/sub.json"
	want=$("$H" path -q -f json "$f" "$a" | jq -c '[.root_name, (.path[] | .name)]')
	check "$t/roots-of-names" "$want" "$("$H" path -q -f json "$TMP/sub.json" "$a" | jq -c '[.root_name, (.path[] | .name)]')"
	case $want in *'"'*) ok "$t/has-names" ;; *) notok "$t/has-names" "no name on the path: $want" ;; esac
done <<'TABLE'
3.1 leak 0x7f60823db780|root vm|Object ::LeakyCache -> LeakyCache ::CACHE -> Hash [64] -> Request @body -> String
3.1 leak_ivar 0x7fa61a947790|root vm|Object ::LeakyCache -> LeakyCache @cache -> Hash [64] -> Request @body -> String
3.1 observer 0x7f2bcfb03b80|root vm|Object ::BUS -> EventBus @subscribers -> Array [859] -> Proc
3.1 names:admin 0x7f3c92c29270|root vm|Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [:admin] -> String
3.1 names:fortytwo 0x7f3c92c29220|root vm|Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [42] -> String
3.1 names:entries 0x7f3c92c29d38|root vm|Object ::Registry -> Registry @entries -> Array
3.1 names:request_id 0x7f3c92c29810|root vm|Ractor -> Thread thread[:request_id] -> String
3.1 names:tenant 0x7f3c92c29798|root vm|Ractor -> Thread -> Hash thread_variable[:tenant] -> String
3.1 names:global 0x7f3c92c29888|root global_tbl $names_global|String
3.1 names:point_x 0x7f3c92c29630|root vm|Object ::POINT -> Point .x -> String
4.0.1 leak 0x7f223c7afa70|root vm|(hidden DATA) -> Object ::LeakyCache -> LeakyCache ::CACHE -> Hash [64] -> Request @body -> String
4.0.1 leak_ivar 0x7f0a530cf8c8|root vm|(hidden DATA) -> Object ::LeakyCache -> LeakyCache -> ivars of LeakyCache @cache -> Hash [64] -> Request @body -> String
4.0.1 observer 0x7f3e07220d98|root vm|(hidden DATA) -> Object ::BUS -> EventBus @subscribers -> Array [859] -> Proc
4.0.1 names:admin 0x7fa7aab11120|root machine_context|IMEMO/iseq -> IMEMO/constcache -> Hash [:admin] -> String
4.0.1 names:fortytwo 0x7fa7aab110d0|root machine_context|IMEMO/iseq -> IMEMO/constcache -> Hash [42] -> String
4.0.1 names:entries 0x7fa7aab11af8|root vm|(hidden DATA) -> Object ::Registry -> Registry -> ivars of Registry @entries -> Array
4.0.1 names:request_id 0x7fa7aab115d0|root vm|Ractor -> Thread thread[:request_id] -> String
4.0.1 names:tenant 0x7fa7aab11558|root vm|Ractor -> Thread -> ivars of Thread -> Hash thread_variable[:tenant] -> String
4.0.1 names:global 0x7fa7aab0ae10|root global_tbl $names_global|String
4.0.1 names:point_x 0x7fa7aab11418|root vm|(hidden DATA) -> Object ::POINT -> Point .x -> String
TABLE
exit 0
