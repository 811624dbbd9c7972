#!/bin/sh
# tests/cli/names_paths.sh - the paths heapdump prints on the gem's named
# fixtures (data/dumps/named_ruby{3.1,4.0.1}_*, the four-scenario set:
# data/README.md), asserted literally: for each scenario on each Ruby, the
# root line and the hop line of `heapdump path` to an object whose holder
# the script knows (a leaked request's body, the observer's last Proc,
# each kind of name of data/gen/names.rb, the closure's request through
# $keep), and the same path read back
# from `heapdump roots-of` (its records carry their ref_names; the
# sub-dump reads with --strict and gives the same names per hop). The
# same scenarios of names.rb on every Ruby (3.3.10 and 3.4.8 too) are
# asserted by tests/ext/names.sh on dumps it makes at test time.
. "$(dirname "$0")/../lib.sh"
needs jq jq
H=$HEAPDUMP
D=$DATA

# VERSION SCENARIO ADDRESS|ROOT LINE|HOP LINE (the later dump of each set);
# ADDRESS =KEY: the address names.rb wrote under KEY in
# named_rubyV_names_expected.json; =leaked: the first leaked String (the
# leak script's expectation, leaked_later.objects[5])
while IFS='|' read -r key root hops; do
	[ -n "$key" ] || continue
	set -- $key
	v=$1 s=$2 a=$3
	case $a in
	=leaked) a=$(jq -r '.leaked_later.objects[5][0]' "$D/named_ruby${v}_${s}_expected.json") ;;
	=*) a=$(jq -r ".objects.${a#=}" "$D/named_ruby${v}_names_expected.json") ;;
	esac
	f=$D/named_ruby${v}_${s%%:*}_later.json.gz
	t=$v/$s
	if [ ! -f "$f" ]; then notok "$t/fixture" "$f is missing (make fixtures-names)"; continue; fi
	"$H" path -q "$f" "$a" >"$TMP/p" 2>"$TMP/e"
	check "$t/path" "$root
  $hops" "$(grep -v -e '^  0x' -e '^  (.*; man 1 heapdump-path)$' "$TMP/p")"
	# roots-of writes the path's records, each with its ref_names: the
	# names per hop read back from its output are the same (the classes
	# are not in it: their names are not)
	check_rc "$t/roots-of" 0 "$H" roots-of -q "$f" "$a" -o "$TMP/sub.json"
	check_rc "$t/roots-of-strict" 0 "$H" stats -q --strict "$TMP/sub.json"
	want=$("$H" path -q -f json "$f" "$a" | jq -c '[.root_name, (.path[] | .name)]')
	check "$t/roots-of-names" "$want" "$("$H" path -q -f json "$TMP/sub.json" "$a" | jq -c '[.root_name, (.path[] | .name)]')"
	case $want in *'"'*) ok "$t/has-names" ;; *) notok "$t/has-names" "no name on the path: $want" ;; esac
done <<'TABLE'
3.1 leak =leaked|root vm|Object ::LeakyCache -> LeakyCache ::CACHE -> Hash [64] -> Request @body -> String
3.1 leak_ivar =leaked|root vm|Object ::LeakyCache -> LeakyCache @cache -> Hash [64] -> Request @body -> String
3.1 observer 0x7fba24e57a50|root vm|Object ::BUS -> EventBus @subscribers -> Array [859] -> Proc
3.1 names:admin =admin|root vm|Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [:admin] -> String
3.1 names:fortytwo =fortytwo|root vm|Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [42] -> String
3.1 names:entries =entries|root vm|Object ::Registry -> Registry @entries -> Array
3.1 names:request_id =request_id|root vm|Ractor -> Thread thread[:request_id] -> String
3.1 names:tenant =tenant|root vm|Ractor -> Thread -> Hash thread_variable[:tenant] -> String
3.1 names:global =global|root global_tbl $names_global|String
3.1 names:point_x =point_x|root vm|Object ::POINT -> Point .x -> String
3.1 names:request =request_body|root global_tbl $keep|Proc -> IMEMO/env request -> Request @body -> String
3.1 names:outer_local =outer_local|root vm|Object ::NESTED -> Proc -> IMEMO/env -> IMEMO/env outer_local -> String
3.1 names:bound_local =bound_local|root vm|Object ::BOUND -> Binding -> IMEMO/env bound_local -> String
4.0.1 leak =leaked|root vm|DATA/VM/pin_array_list -> Object ::LeakyCache -> LeakyCache ::CACHE -> Hash [64] -> Request @body -> String
4.0.1 leak_ivar =leaked|root vm|DATA/VM/pin_array_list -> Object ::LeakyCache -> LeakyCache -> ivars of LeakyCache @cache -> Hash [64] -> Request @body -> String
4.0.1 observer 0x7ff7fd8e0c68|root vm|DATA/VM/pin_array_list -> Object ::BUS -> EventBus @subscribers -> Array [859] -> Proc
4.0.1 names:admin =admin|root vm|DATA/VM/pin_array_list -> Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [:admin] -> String
4.0.1 names:fortytwo =fortytwo|root vm|DATA/VM/pin_array_list -> Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [42] -> String
4.0.1 names:entries =entries|root vm|DATA/VM/pin_array_list -> Object ::Registry -> Registry -> ivars of Registry @entries -> Array
4.0.1 names:request_id =request_id|root vm|Ractor -> Thread thread[:request_id] -> String
4.0.1 names:tenant =tenant|root vm|Ractor -> Thread -> ivars of Thread -> Hash thread_variable[:tenant] -> String
4.0.1 names:global =global|root global_tbl $names_global|String
4.0.1 names:point_x =point_x|root vm|DATA/VM/pin_array_list -> Object ::POINT -> Point .x -> String
4.0.1 names:request =request_body|root global_tbl $keep|Proc -> IMEMO/env request -> Request @body -> String
4.0.1 names:outer_local =outer_local|root vm|DATA/VM/pin_array_list -> Object ::NESTED -> Proc -> IMEMO/env -> IMEMO/env outer_local -> String
4.0.1 names:bound_local =bound_local|root vm|DATA/VM/pin_array_list -> Object ::BOUND -> Binding -> IMEMO/env bound_local -> String
TABLE

# on 4.0.1 the shortest path to CACHE[:admin] starts at machine_context
# and goes through the constant cache of an iseq (the table's rows above
# once said so): the path through the constant is chosen, and says why
a=$(jq -r .objects.admin "$D/named_ruby4.0.1_names_expected.json")
"$H" path -q "$D/named_ruby4.0.1_names_later.json.gz" "$a" >"$TMP/p" 2>&1
check 4.0.1/rule-note "  (program-level holders preferred to the shortest path, from machine_context through a VM cache; man 1 heapdump-path)" "$(sed -n 3p "$TMP/p")"
check 4.0.1/rule-json '["vm_cache","machine_context"]' "$("$H" path -q -f json "$D/named_ruby4.0.1_names_later.json.gz" "$a" | jq -c .passed_over)"
exit 0
