#!/bin/sh
# Reference names (issue 13) in the reader, the store, path, --via and
# the records written back: exact path text and JSON on a hand-made
# named dump and on the dump_all fixtures (inferred class constants
# only), dump vs store answers identical, damaged ref_names repaired or
# refused, sub-dumps re-read with --strict keep their names, and the
# store's growth on a generated dump (<= 15%; none without names).
. "$(dirname "$0")/../lib.sh"
needs jq jq
H=$HEAPDUMP

cat >"$TMP/n.json" <<'EOF'
{"type":"ROOT", "root":"global_tbl", "references":["0x100", "0x300"], "ref_names":["$LOADED_FEATURES", "$CALCULATOR"]}
{"type":"ROOT", "root":"vm", "references":["0x300"]}
{"address":"0x200", "type":"CLASS", "name":"Hash", "references":[]}
{"address":"0x210", "type":"CLASS", "name":"Array"}
{"address":"0x220", "type":"CLASS", "name":"Request"}
{"address":"0x230", "type":"CLASS", "name":"String"}
{"address":"0x300", "type":"CLASS", "name":"PriceCalculator", "references":["0x400", "0x100", "0xdead", "0x500"], "ref_names":["::CACHE", "@features", "@gone", null]}
{"address":"0x400", "type":"HASH", "class":"0x200", "references":["0x600", "0x100"], "ref_names":["[\"user_42\"]", "[:other]"], "memsize":40}
{"address":"0x600", "type":"ARRAY", "class":"0x210", "references":["0x650", "0x700"], "ref_names":[0, 3]}
{"address":"0x650", "type":"STRING", "class":"0x230", "value":"a"}
{"address":"0x700", "type":"OBJECT", "class":"0x220", "references":["0x800"], "ref_names":["@body"]}
{"address":"0x800", "type":"STRING", "class":"0x230", "value":"x"}
{"address":"0x500", "type":"STRING", "class":"0x230", "value":"y"}
{"address":"0x100", "type":"ARRAY", "class":"0x210", "references":["0x500"], "ref_names":[0]}
EOF

# ---- path: text and JSON, from the dump and from its store ----
check_rc path/exit 0 "$H" path -q "$TMP/n.json" 0x800
check path/text "root global_tbl \$CALCULATOR
  PriceCalculator ::CACHE -> Hash [\"user_42\"] -> Array [3] -> Request @body -> String
  0x300 PriceCalculator (CLASS) memsize 0
  0x400 Hash (HASH) memsize 40
  0x600 Array (ARRAY) memsize 0
  0x700 Request (OBJECT) memsize 0
  0x800 String (STRING) memsize 0" "$(cat "$TMP/out")"
"$H" path -q -f json "$TMP/n.json" 0x800 >"$TMP/j.json"
check path/json '{"target":"0x800","root":"global_tbl","root_name":"$CALCULATOR","length":5,"path":[{"address":"0x300","type":"CLASS","class":"PriceCalculator","memsize":0,"name":"::CACHE"},{"address":"0x400","type":"HASH","class":"Hash","memsize":40,"name":"[\"user_42\"]"},{"address":"0x600","type":"ARRAY","class":"Array","memsize":0,"name":"[3]"},{"address":"0x700","type":"OBJECT","class":"Request","memsize":0,"name":"@body"},{"address":"0x800","type":"STRING","class":"String","memsize":0}]}' "$(cat "$TMP/j.json")"
# the dangling 0xdead is dropped with its name @gone: 0x500, after it,
# keeps its null, and no object is reached through @gone
check path/dangling-dropped "" "$("$H" path -q -f json "$TMP/n.json" --via @gone 2>/dev/null)"
check path/dangling-no-shift "0x100" "$("$H" path -q -f json "$TMP/n.json" --via /^@/ --class Array | jq -r .target)"
# a path with no named hop prints no hop line, as before names
printf '%s\n' '{"type":"ROOT", "root":"vm", "references":["0x1"]}' \
	'{"address":"0x1", "type":"ARRAY", "references":["0x2"]}' \
	'{"address":"0x2", "type":"STRING"}' >"$TMP/plain.json"
check path/unnamed-as-before "root vm
  0x1 (hidden ARRAY) (ARRAY) memsize 0
  0x2 (hidden STRING) (STRING) memsize 0" "$("$H" path -q "$TMP/plain.json" 0x2)"
"$H" path -q -f json "$TMP/plain.json" 0x2 >"$TMP/pj.json"
check path/unnamed-json-no-name 0 "$(grep -c '"name"' "$TMP/pj.json")"

"$H" index -q "$TMP/n.json" -o "$TMP/n.hds"
"$H" path -q "$TMP/n.hds" 0x800 0x500 0x650 >"$TMP/s.txt"
"$H" path -q "$TMP/n.json" 0x800 0x500 0x650 >"$TMP/d.txt"
if cmp -s "$TMP/s.txt" "$TMP/d.txt"; then ok store/text-same; else
	notok store/text-same "$(diff "$TMP/d.txt" "$TMP/s.txt" | head -5)"; fi
"$H" path -q -f json "$TMP/n.hds" 0x800 0x500 0x650 >"$TMP/s.json"
"$H" path -q -f json "$TMP/n.json" 0x800 0x500 0x650 >"$TMP/d.json"
if cmp -s "$TMP/s.json" "$TMP/d.json"; then ok store/json-same; else
	notok store/json-same "$(diff "$TMP/d.json" "$TMP/s.json" | head -5)"; fi

# ---- --via ----
via() { "$H" path -q -f json "$@" 2>"$TMP/via.err" | jq -r .target | tr '\n' ' '; }
check via/ivar "0x800 " "$(via "$TMP/n.json" --via @body)"
check via/constant "0x400 " "$(via "$TMP/n.hds" --via ::CACHE)"
check via/global "0x300 " "$(via "$TMP/n.json" --via '$CALCULATOR')"
check via/index "0x500 0x650 " "$(via "$TMP/n.json" --via '[0]')"
check via/regex "0x100 0x500 0x650 0x700 " "$(via "$TMP/n.json" --via '/^\[[0-9]|^\$LOADED/')"
check via/and-class "0x650 " "$(via "$TMP/n.json" --via '[0]' --class String --type STRING --address 0x650)"
check_rc via/none-exit 1 "$H" path -q "$TMP/n.json" --via @nothing
check_grep via/none-explained "no object is referenced through a reference named '@nothing'" "$TMP/err"
check_rc via/no-names-exit 1 "$H" path -q "$TMP/plain.json" --via @x
check_grep via/no-names-said "the dump has no reference names" "$TMP/err"
check_rc via/bad-regex 2 "$H" path -q "$TMP/n.json" --via '/(/'

# ---- damaged ref_names: repaired with a line number, or --strict ----
cp "$TMP/n.json" "$TMP/bad.json"
echo '{"address":"0x900", "type":"ARRAY", "class":"0x210", "references":["0x500", "0x650"], "ref_names":["@a"]}' >>"$TMP/bad.json"
echo '{"address":"0x910", "type":"ARRAY", "class":"0x210", "references":["0x500"], "ref_names":[true]}' >>"$TMP/bad.json"
echo '{"address":"0x920", "type":"ARRAY", "class":"0x210", "ref_names":{"a":[1]}, "references":["0x500"]}' >>"$TMP/bad.json"
check_rc damaged/lenient 0 "$H" path -q "$TMP/bad.json" 0x800
check_grep damaged/line-15 "bad.json:15:.*ref_names and references differ in length" "$TMP/err"
check_grep damaged/line-16 "bad.json:16:.*invalid entry in ref_names" "$TMP/err"
check_rc damaged/strict 1 "$H" path -q --strict "$TMP/bad.json" 0x800
check_grep damaged/strict-line "bad.json:15" "$TMP/err"
check damaged/same-path "$("$H" path -q "$TMP/n.json" 0x800)" "$("$H" path -q "$TMP/bad.json" 0x800 2>/dev/null)"

# ---- records written back keep their names consistent ----
names_of() { # every record's address and ref_names, and the ROOT names
	jq -c '[.address // .root, (.references // []), (.ref_names // [])]' "$1"
}
# roots-of: each record's references restricted to the paths' objects,
# ref_names in parallel; the ROOT records with their names
check_rc roots-of/exit 0 "$H" roots-of -q -o "$TMP/r.json" "$TMP/bad.json" 0x800 0x650
check_rc roots-of/strict-reread 0 "$H" path -q --strict "$TMP/r.json" 0x800
check roots-of/parallel "[]" "$(jq -c 'select(.ref_names and ((.ref_names|length) != (.references|length))) | .address' "$TMP/r.json" | jq -sc .)"
"$H" path -q -f json "$TMP/r.json" 0x800 0x650 >"$TMP/w.json"
"$H" path -q -f json "$TMP/n.json" 0x800 0x650 >"$TMP/o.json"
check roots-of/json-names-equal "$(jq -c '[.root_name, [.path[].name]]' "$TMP/o.json")" \
	"$(jq -c '[.root_name, [.path[].name]]' "$TMP/w.json")"
check roots-of/restricted '["0x300",["0x400"],["::CACHE"]]
["0x400",["0x600"],["[\"user_42\"]"]]
["0x600",["0x650","0x700"],[0,3]]' "$(names_of "$TMP/r.json" | grep -E '^\["0x(300|400|600)"')"
check roots-of/root-names '["global_tbl",["0x300"],["$CALCULATOR"]]' \
	"$(names_of "$TMP/r.json" | grep global_tbl)"
# subgraph-of: the damaged names of 0x900 are left out, the rest kept
check_rc subgraph-of/exit 0 "$H" subgraph-of -q -o "$TMP/g.json" "$TMP/bad.json" 0x400 0x900 0x910 0x920
check_rc subgraph-of/strict-reread 0 "$H" stats -q --strict "$TMP/g.json"
check subgraph-of/names '["0x400",["0x600","0x100"],["[\"user_42\"]","[:other]"]]
["0x600",["0x650","0x700"],[0,3]]
["0x900",["0x500","0x650"],[]]
["0x910",["0x500"],[]]
["0x920",["0x500"],[]]' "$(names_of "$TMP/g.json" | grep -E '^\["0x(400|600|900|910|920)"')"
check subgraph-of/damaged-member-gone 0 "$(grep -c '"0x9[12]0".*ref_names' "$TMP/g.json")"
# a record whose kept references have no name loses the member
printf '%s\n' '{"type":"ROOT", "root":"vm", "references":["0x1"]}' \
	'{"address":"0x1", "type":"ARRAY", "references":["0x2", "0x3"], "ref_names":["@a", null]}' \
	'{"address":"0x2", "type":"STRING"}' '{"address":"0x3", "type":"STRING"}' >"$TMP/nul.json"
check roots-of/unnamed-kept-drops-member '{"address":"0x1", "type":"ARRAY", "references":["0x3"]}' \
	"$("$H" roots-of -q "$TMP/nul.json" 0x3 | grep '^{"address":"0x1"')"

# ---- inference on the dump_all fixtures ----
for f in "$DATA"/ok_ruby*_traced*.json*; do
	b=$(basename "$f")
	"$H" path -q "$f" --name Outer::Middle::Inner >"$TMP/inf.txt" 2>/dev/null
	# (3.4 and later reach Object through a class-less DATA first, named
	# by its struct: DATA/VM/pin_array_list)
	check "infer/$b/text" "Object -> Outer ::Middle -> Outer::Middle ::Inner -> Outer::Middle::Inner" \
		"$(sed -n 2p "$TMP/inf.txt" | sed 's/^  DATA\/VM\/pin_array_list -> /  /; s/^  //')"
	"$H" path -q -f json "$f" --name Outer::Middle::Inner 2>/dev/null >"$TMP/inf.json"
	check "infer/$b/json" '[null,{"name":"::Middle","inferred":true},{"name":"::Inner","inferred":true},null]' \
		"$(jq -c '[.path[-4:][] | if .name then {name, inferred} else null end]' "$TMP/inf.json")"
	# nothing but class constants, class edges (man 5 heapdump-store,
	# CLASS REFERENCES: each metaclass is held by its class) and a
	# WeakKeyMap's values (WEAK MAPS: 3.3 and later) is inferred
	"$H" path -q -n 0 -f json "$f" --via '/./' 2>/dev/null |
		jq -r '.path[] | select(.name) | "\(.name) \(.inferred)"' | sort -u >"$TMP/all.txt"
	check "infer/$b/only-constants" "" "$(grep -v -e '^::[A-Z][A-Za-z0-9_]* true$' -e '^(class) true$' -e '^(ephemeron value) true$' "$TMP/all.txt")"
	check "infer/$b/class-edges" "(class) true" "$(grep -x '(class) true' "$TMP/all.txt")"
done

# ---- the gem's named fixtures (data/gen/names.rb, HeapDump.dump names: true) ----
hop() { # hop NAME DUMP KEY: the hop line of the path to expected object KEY
	a=$(jq -r ".objects.$3" "${2%_after.json.gz}_expected.json")
	"$H" path -q "$2" "$a" 2>/dev/null | sed -n 2p
}
F31="$DATA/named_ruby3.1_names_after.json.gz"
F40="$DATA/named_ruby4.0.1_names_after.json.gz"
check fixture/3.1/hash-int "  Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [42] -> String" "$(hop x "$F31" fortytwo)"
check fixture/3.1/hash-sym "  Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [:admin] -> String" "$(hop x "$F31" admin)"
check fixture/3.1/array-ivar "  Binding -> IMEMO/env list -> Array [3] -> Request @body -> String" "$(hop x "$F31" body3)"
check fixture/3.1/thread-local "  Ractor -> Thread thread[:request_id] -> String" "$(hop x "$F31" request_id)"
check fixture/3.1/thread-variable "  Ractor -> Thread -> Hash thread_variable[:tenant] -> String" "$(hop x "$F31" tenant)"
check fixture/3.1/struct "  Object ::POINT -> Point .x -> String" "$(hop x "$F31" point_x)"
check fixture/3.1/class-ivar "  Object ::Registry -> Registry @entries -> Array" "$(hop x "$F31" entries)"
a=$(jq -r .objects.global "$DATA/named_ruby3.1_names_expected.json")
check fixture/3.1/global "root global_tbl \$names_global
  String" "$("$H" path -q "$F31" "$a" 2>/dev/null | sed -n 1,2p)"
check fixture/4.0.1/thread-variable "  Ractor -> Thread -> ivars of Thread -> Hash thread_variable[:tenant] -> String" "$(hop x "$F40" tenant)"
check fixture/4.0.1/class-ivar "  DATA/VM/pin_array_list -> Object ::Registry -> Registry -> ivars of Registry @entries -> Array" "$(hop x "$F40" entries)"
check fixture/4.0.1/struct "  DATA/VM/pin_array_list -> Object ::POINT -> Point .x -> String" "$(hop x "$F40" point_x)"
a=$(jq -r .objects.body3 "$DATA/named_ruby3.1_names_expected.json")
check fixture/3.1/json "[null,\"list\",\"[3]\",\"@body\",null]" \
	"$("$H" path -q -f json "$F31" "$a" 2>/dev/null | jq -c '[.path[].name]')"
# --via on the fixture: the 7 requests' bodies (names.rb adds one before
# the after dump, and the closure's request); the Array under "user_42"
check fixture/3.1/via-body 7 "$("$H" path -q -n 0 -f json "$F31" --via @body 2>/dev/null | wc -l | tr -d ' ')"
check fixture/3.1/via-hash-key "$(jq -r .objects.list "$DATA/named_ruby3.1_names_expected.json")" \
	"$("$H" path -q -f json "$F31" --via '["user_42"]' 2>/dev/null | jq -r .target)"
# roots-of -o on the fixture: re-read with --strict, the same names
check_rc fixture/3.1/roots-of 0 "$H" roots-of -q -o "$TMP/fr.json" "$F31" --via @body
check_rc fixture/3.1/roots-of-strict 0 "$H" stats -q --strict "$TMP/fr.json"
check fixture/3.1/roots-of-parallel "[]" "$(jq -c 'select(.ref_names and ((.ref_names|length) != (.references|length))) | .address' "$TMP/fr.json" | jq -sc .)"
"$H" path -q -n 0 -f json "$F31" --via @body 2>/dev/null | jq -c '[.root_name, [.path[].name]]' >"$TMP/fo.txt"
"$H" path -q -n 0 -f json "$TMP/fr.json" --via @body 2>/dev/null | jq -c '[.root_name, [.path[].name]]' >"$TMP/fw.txt"
if [ -s "$TMP/fo.txt" ] && cmp -s "$TMP/fo.txt" "$TMP/fw.txt"; then ok fixture/3.1/roots-of-names-equal; else
	notok fixture/3.1/roots-of-names-equal "$(diff "$TMP/fo.txt" "$TMP/fw.txt" | head -4)"; fi
# the gem dump's store: <= 15% over the same dump without ref_names
gzip -dc "$F31" >"$TMP/f31.json"
jq -c 'del(.ref_names)' "$TMP/f31.json" >"$TMP/f31s.json"
"$H" index -q "$TMP/f31.json" -o "$TMP/f31.hds" 2>/dev/null
"$H" index -q "$TMP/f31s.json" -o "$TMP/f31s.hds" 2>/dev/null
a=$(wc -c <"$TMP/f31s.hds") b=$(wc -c <"$TMP/f31.hds")
if [ "$b" -gt "$a" ] && [ $((b * 100)) -le $((a * 115)) ]; then
	ok fixture/3.1/growth-within-15pct
else
	notok fixture/3.1/growth-within-15pct "without names $a bytes, with $b"
fi
echo "# gem dump growth: $a -> $b bytes ($(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }'))"

# ---- store growth ----
needs ruby ruby
if ruby "$TOP/tests/bench/gen_big.rb" "$TMP/big.json" 6 >/dev/null 2>&1; then
	ok growth/generate
else
	notok growth/generate "tests/bench/gen_big.rb failed"
fi
ruby "$TOP/tests/bench/add_names.rb" "$TMP/big.json" >"$TMP/named.json"
jq -c 'del(.ref_names)' "$TMP/named.json" >"$TMP/stripped.json"
"$H" index -q "$TMP/named.json" -o "$TMP/named.hds"
"$H" index -q "$TMP/stripped.json" -o "$TMP/stripped.hds"
a=$(wc -c <"$TMP/stripped.hds") b=$(wc -c <"$TMP/named.hds")
if [ "$b" -gt "$a" ] && [ $((b * 100)) -le $((a * 115)) ]; then
	ok growth/named-within-15pct
else
	notok growth/named-within-15pct "without names $a bytes, with $b"
fi
echo "# growth: $a -> $b bytes ($(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }'))"
# a dump without names and nothing to infer: 26 sections and the stats
# summary (which every written store carries, heapdump-store(5)), no
# name one; with names, the three name sections more
sections() { od -A n -t u4 -j 12 -N 4 "$1" | tr -d ' '; }
"$H" index -q "$TMP/plain.json" -o "$TMP/plain.hds"
check growth/no-names-no-section 27 "$(sections "$TMP/plain.hds")"
check growth/named-three-sections 30 "$(sections "$TMP/named.hds")"
