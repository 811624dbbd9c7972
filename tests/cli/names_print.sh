#!/bin/sh
# names_print.sh - reference names (issue 13, man 5 heapdump-dump,
# REFERENCE NAMES) in every command that prints a path or an edge, other
# than path and roots-of: leaks, dominators, interface-with, to-dot,
# render and to-gml.
#
# Two kinds of input:
#  - real named dumps of data/gen/leak.rb and observer.rb written by the
#    gem with names (data/dumps/*names*): the leak held by a constant
#    (LeakyCache::CACHE), by a class-level ivar (@cache of LeakyCache)
#    and by an observer (EventBus's @subscribers): leaks names the holder
#    in its first line, in text, JSON and the --svg drawings;
#  - a small dump written here by hand (generated at test time), whose
#    names are known byte for byte: a constant, hash keys (one holding
#    '"', '\' and a control byte), an array index, an ivar and a global
#    on the global_tbl root. Its DOT goes through Graphviz's real dot, its
#    GML through networkx, edge by edge; the same dump without its
#    ref_names gives the DOT and GML of today (no label at all).
. "$(dirname "$0")/../lib.sh"
# under ASan: what Graphviz's font stack keeps until exit is not ours
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS
needs jq jq
needs dot graphviz
PY=/usr/bin/python3
if ! "$PY" -c 'import networkx' 2>/dev/null; then
	notok needs-networkx "$PY cannot import networkx: apt-get install python3-networkx"
	exit 1
fi
H=$HEAPDUMP

# has NAME STRING FILE: FILE holds STRING (a fixed string)
has() {
	if grep -qF -- "$2" "$3"; then ok "$1"; else
		notok "$1" "'$2' not in $(basename "$3"): $(head -c 400 "$3")"
	fi
}

# hasnt NAME STRING FILE: FILE does not hold STRING
hasnt() {
	if grep -qF -- "$2" "$3"; then
		notok "$1" "'$2' in $(basename "$3"): $(grep -F -- "$2" "$3" | head -c 300)"
	else ok "$1"; fi
}

# line NAME N EXPECTED FILE: line N of FILE is EXPECTED, exactly
line() {
	check "$1" "$3" "$(sed -n "$2p" "$4")"
}

# ---- the hand-made dump ----
#
# vm -> Holder (a class)  ::CACHE -> Hash  ["user_42"] -> String "abc"
#                                          ["q"b\c^Ad"] -> String 0x301
#                         @registry -> Array  [0] -> String 0x600
# global_tbl  $REGISTRY -> the same Array
N="$TMP/named.json"
cat >"$N" <<'EOF'
{"type":"ROOT","root":"vm","references":["0x100"]}
{"type":"ROOT","root":"global_tbl","references":["0x500"],"ref_names":["$REGISTRY"]}
{"address":"0x900","type":"CLASS","name":"Hash","references":[],"memsize":10}
{"address":"0x901","type":"CLASS","name":"String","references":[],"memsize":10}
{"address":"0x902","type":"CLASS","name":"Array","references":[],"memsize":10}
{"address":"0x100","type":"CLASS","name":"Holder","references":["0x200","0x500"],"ref_names":["::CACHE","@registry"],"memsize":100}
{"address":"0x200","type":"HASH","class":"0x900","size":2,"references":["0x300","0x301"],"ref_names":["[\"user_42\"]","[\"q\"b\\c\u0001d\"]"],"memsize":200}
{"address":"0x300","type":"STRING","class":"0x901","bytesize":3,"value":"abc","memsize":40}
{"address":"0x301","type":"STRING","class":"0x901","bytesize":3,"value":"def","memsize":40}
{"address":"0x500","type":"ARRAY","class":"0x902","length":1,"references":["0x600"],"ref_names":[0],"memsize":50}
{"address":"0x600","type":"STRING","class":"0x901","bytesize":4,"value":"ghij","memsize":4000}
EOF
# the same without names
U="$TMP/unnamed.json"
jq -c 'del(.ref_names)' "$N" >"$U"
jq -c . "$N" >"$TMP/n.json" && mv "$TMP/n.json" "$N"
check hand/unnamed-has-no-names 0 "$(grep -c ref_names "$U")"
check_rc hand/index 0 "$H" index -q "$N" -o "$TMP/named.hds"

# ---- dominators: the name on the child line, text and JSON ----

for in in "$N" "$TMP/named.hds"; do
	k=$(basename "$in")
	check_rc "dominators-$k/exit" 0 "$H" dominators -q "$in" 0x300
	line "dominators-$k/root" 1 "root vm" "$TMP/out"
	check_grep "dominators-$k/holder-line" '^  0x100 Holder \(CLASS\) retains ' "$TMP/out"
	check_grep "dominators-$k/cache-line" '^  0x200 Hash \(HASH\) via ::CACHE retains ' "$TMP/out"
	check_grep "dominators-$k/key-line" '^  0x300 String \(STRING\) via \["user_42"\] retains ' "$TMP/out"
	check_rc "dominators-$k/json-exit" 0 "$H" dominators -q -f json "$in" 0x300
	check "dominators-$k/json-names" '[null,"::CACHE","[\"user_42\"]"]' \
		"$(jq -c '[.chain[].name]' "$TMP/out")"
	check "dominators-$k/json-not-inferred" '[null,null,null]' \
		"$(jq -c '[.chain[].inferred]' "$TMP/out")"
	# the global: the root's name on the root line
	check_rc "dominators-$k/global-exit" 0 "$H" dominators -q "$in" 0x600
	line "dominators-$k/global-root" 1 'root global_tbl $REGISTRY' "$TMP/out"
	check_grep "dominators-$k/global-index" '^  0x600 String \(STRING\) via \[0\] retains ' "$TMP/out"
	check_rc "dominators-$k/global-json" 0 "$H" dominators -q -f json "$in" 0x600
	check "dominators-$k/global-json-root-name" '"$REGISTRY" "[0]"' \
		"$(jq -r '[.root_name, .chain[1].name] | map(tojson) | join(" ")' "$TMP/out")"
done
# no name, no change: the unnamed dump prints no "via"
check_rc dominators-unnamed/exit 0 "$H" dominators -q "$U" 0x300
hasnt dominators-unnamed/no-via " via " "$TMP/out"
check_rc dominators-unnamed/json 0 "$H" dominators -q -f json "$U" 0x300
check dominators-unnamed/json-no-name 0 "$(grep -c '"name"' "$TMP/out")"

# ---- to-dot and render: edge labels, escaped, through real Graphviz ----

check_rc dot/exit 0 "$H" to-dot -q "$N" -o "$TMP/named.dot"
# the control byte as the text \x01, quote and backslash escaped for DOT
# (objects numbered in address order: Holder n0, Hash n1, the Strings n2
# and n3, Array n4, its String n5; the roots vm n9, global_tbl n10)
has dot/label-escaped 'n1 -> n3 [label="[\"q\"b\\c\\x01d\"]", fontname="Helvetica", fontsize=9]' "$TMP/named.dot"
has dot/label-constant 'n0 -> n1 [label="::CACHE", fontname="Helvetica", fontsize=9]' "$TMP/named.dot"
has dot/label-key 'n1 -> n2 [label="[\"user_42\"]"' "$TMP/named.dot"
has dot/label-ivar 'n0 -> n4 [label="@registry"' "$TMP/named.dot"
has dot/label-index 'n4 -> n5 [label="[0]"' "$TMP/named.dot"
has dot/label-global 'n10 -> n4 [label="$REGISTRY"' "$TMP/named.dot"
check dot/root-edge-bare '  n9 -> n0' "$(grep -- '^  n9 ->' "$TMP/named.dot")"
check dot/no-control-byte 0 "$(LC_ALL=C tr -d -c '\001' <"$TMP/named.dot" | wc -c | tr -d ' ')"
if dot -Tsvg "$TMP/named.dot" -o "$TMP/named.svg" 2>"$TMP/doterr"; then
	ok dot/graphviz-accepts
else
	notok dot/graphviz-accepts "$(head -c 300 "$TMP/doterr")"
fi
check dot/graphviz-silent "" "$(cat "$TMP/doterr")"
has dot/svg-shows-label '>[&quot;q&quot;b\c\x01d&quot;]</text>' "$TMP/named.svg"
has dot/svg-shows-constant '>::CACHE</text>' "$TMP/named.svg"
check_rc render/exit 0 "$H" render -q "$N" -o "$TMP/render.svg"
has render/svg-shows-label '>[&quot;q&quot;b\c\x01d&quot;]</text>' "$TMP/render.svg"
has render/svg-shows-key '>[&quot;user_42&quot;]</text>' "$TMP/render.svg"
has render/svg-shows-global '>$REGISTRY</text>' "$TMP/render.svg"
# without names: not one label, and the DOT of the named dump minus its
# labels
check_rc dot-unnamed/exit 0 "$H" to-dot -q "$U" -o "$TMP/unnamed.dot"
check dot-unnamed/no-edge-label 0 "$(grep -c -- '-> n[0-9]* \[' "$TMP/unnamed.dot")"
sed 's/^\(  n[0-9]* -> n[0-9]*\) \[label=.*\]$/\1/' "$TMP/named.dot" >"$TMP/stripped.dot"
check dot-unnamed/same-but-labels 0 "$(cmp "$TMP/stripped.dot" "$TMP/unnamed.dot" >/dev/null 2>&1; echo $?)"

# ---- to-gml: an edge label attribute, read back by networkx ----

check_rc gml/exit 0 "$H" to-gml -q "$N" -o "$TMP/named.gml"
cat >"$TMP/edges.py" <<'EOF'
import sys, networkx as nx
g = nx.read_gml(sys.argv[1])
for u, v, d in sorted(g.edges(data=True)):
    print("%s | %s | %s%s" % (u, v, d.get("label", "-"),
                              " (inferred)" if d.get("inferred") else ""))
EOF
"$PY" "$TMP/edges.py" "$TMP/named.gml" >"$TMP/edges" 2>"$TMP/pyerr" ||
	notok gml/networkx "$(tail -1 "$TMP/pyerr")"
# networkx gives the control character back (&#1;)
{
	echo 'Hash 0x200 | String 0x300 | ["user_42"]'
	printf '%s\001%s\n' 'Hash 0x200 | String 0x301 | ["q"b\c' 'd"]'
	echo 'Holder 0x100 | Array 0x500 | @registry'
	echo 'Holder 0x100 | Hash 0x200 | ::CACHE'
	echo 'ROOT global_tbl | Array 0x500 | $REGISTRY'
	echo 'ROOT vm | Holder 0x100 | -'
	echo 'Array 0x500 | String 0x600 | [0]'
} >"$TMP/edges.want"
sort "$TMP/edges.want" >"$TMP/edges.want.s"
sort "$TMP/edges" >"$TMP/edges.s"
check gml/edge-labels "$(cat "$TMP/edges.want.s")" "$(cat "$TMP/edges.s")"
has gml/label-escaped 'label "[&quot;q&quot;b\c&#1;d&quot;]"' "$TMP/named.gml"
check_rc gml-unnamed/exit 0 "$H" to-gml -q "$U" -o "$TMP/unnamed.gml"
check gml-unnamed/no-edge-label 0 "$(grep -c 'edge .*label' "$TMP/unnamed.gml")"
sed 's/^\(  edge \[ source [0-9]* target [0-9]*\) label .* \]$/\1 ]/' "$TMP/named.gml" >"$TMP/stripped.gml"
check gml-unnamed/same-but-labels 0 "$(cmp "$TMP/stripped.gml" "$TMP/unnamed.gml" >/dev/null 2>&1; echo $?)"

# --collapse: an edge through folded objects (a hidden array) joins the
# names on its way
C="$TMP/collapse.json"
{
	jq -c 'if .address == "0x100" then .references += ["0x710"]
		| .ref_names += ["@table"] else . end' "$N"
	echo '{"address":"0x710","type":"ARRAY","length":2,"references":["0x300","0x720"],"ref_names":[0,1],"memsize":50}'
	echo '{"address":"0x720","type":"STRING","class":"0x901","bytesize":1,"value":"k","memsize":40}'
} >"$C"
check_rc collapse/gml 0 "$H" to-gml -q --collapse "$C" -o "$TMP/collapse.gml"
"$PY" "$TMP/edges.py" "$TMP/collapse.gml" >"$TMP/cedges" 2>"$TMP/pyerr" ||
	notok collapse/networkx "$(tail -1 "$TMP/pyerr")"
check collapse/joined 'Holder 0x100 | String 0x720 | @table [1]' \
	"$(grep '0x720' "$TMP/cedges")"
# a reference outside the fold keeps its own name: Holder -> 0x300 through
# the array is "@table [0]"; the hash's own is ["user_42"]
check collapse/through-fold 'Hash 0x200 | String 0x300 | ["user_42"]
Holder 0x100 | String 0x300 | @table [0]' "$(grep 'String 0x300' "$TMP/cedges" | sort)"
check_rc collapse/dot 0 "$H" to-dot -q --collapse "$C"
has collapse/dot-label 'label="@table [1]"' "$TMP/out"

# an inferred name (a dump without names: Outer's constant holding the
# class Outer::Inner): grey in DOT, inferred 1 in GML, "inferred" in JSON
I="$TMP/inferred.json"
cat >"$I" <<'EOF'
{"type":"ROOT","root":"vm","references":["0x100"]}
{"address":"0x100","type":"CLASS","name":"Outer","references":["0x200"],"memsize":100}
{"address":"0x200","type":"CLASS","name":"Outer::Inner","references":["0x300"],"memsize":100}
{"address":"0x300","type":"STRING","bytesize":1,"value":"x","memsize":40}
EOF
check_rc inferred/dot 0 "$H" to-dot -q "$I"
has inferred/dot-grey 'n0 -> n1 [label="::Inner", fontname="Helvetica", fontsize=9, fontcolor="#666666"]' "$TMP/out"
check inferred/dot-no-other-label 1 "$(grep -c 'fontsize=9' "$TMP/out")"
check_rc inferred/gml 0 "$H" to-gml -q "$I"
has inferred/gml-attr 'edge [ source 0 target 1 label "::Inner" inferred 1 ]' "$TMP/out"
check_rc inferred/dominators 0 "$H" dominators -q -f json "$I" 0x300
check inferred/dominators-json '{"name":"::Inner","inferred":true}' \
	"$(jq -c '.chain[1] | {name, inferred}' "$TMP/out")"
check_rc inferred/dominators-text 0 "$H" dominators -q "$I" 0x300
check_grep inferred/dominators-via '^  0x200 Outer::Inner \(CLASS\) via ::Inner retains ' "$TMP/out"

# ---- interface-with: holders and border objects with their names ----

printf '{"address":"0x300"}\n{"address":"0x301"}\n' >"$TMP/diff.json"
check_rc iw/exit 0 "$H" interface-with -q --summary "$N" "$TMP/diff.json"
check_grep iw/border-key ' 0x300 +Hash \["user_42"\] -> String$' "$TMP/out"
has iw/border-escaped ' 0x301              Hash ["q"b\c\u0001d"] -> String' "$TMP/out"
has iw/holder-names ' 0x200              Hash via ["user_42"], ["q"b\c\u0001d"]' "$TMP/out"
check_rc iw/json-exit 0 "$H" interface-with -q --summary -f json "$N" "$TMP/diff.json"
check iw/json-held-as '["[\"user_42\"]","[\"q\"b\\c\u0001d\"]"]' \
	"$(jq -c '[.diff_border | sort_by(.address)[] | .held_as[0].name]' "$TMP/out")"
check iw/json-via '["[\"user_42\"]","[\"q\"b\\c\u0001d\"]"] 2' \
	"$(jq -c '.self_border[0] | [.via, .via_count]' "$TMP/out" | jq -r '"\(.[0] | tojson) \(.[1])"')"
check_rc iw-unnamed/exit 0 "$H" interface-with -q --summary -f json "$U" "$TMP/diff.json"
check iw-unnamed/no-names 0 "$(grep -c 'held_as\|"via"' "$TMP/out")"

# ---- leaks on the hand-made dumps: before (empty cache), after, later ----

B="$TMP/hb.json"
jq -c 'select(.address != "0x300" and .address != "0x301")
	| if .address == "0x200" then .references = [] | del(.ref_names) else . end' "$N" >"$B"
check hand/before-has-no-cache-entry 0 "$(grep -c '0x300' "$B")"
check_rc hleaks/exit 0 "$H" leaks -q "$B" "$N" "$N"
check_grep hleaks/first-line '^suspect 1: Holder ::CACHE -> 0x200 Hash$' "$TMP/out"
check_grep hleaks/path '^  path from root vm: Holder ::CACHE -> Hash$' "$TMP/out"
check_rc hleaks/json 0 "$H" leaks -q -f json "$B" "$N" "$N"
check hleaks/json-names '["::CACHE",null]' \
	"$(jq -c '[.suspects[0].path.hops[].name]' "$TMP/out")"
check_rc hleaks/tsv 0 "$H" leaks -q -f tsv "$B" "$N" "$N"
check hleaks/tsv-path 'vm -> Holder ::CACHE -> Hash' \
	"$(awk -F'\t' '$1 == "suspect" {print $11}' "$TMP/out")"
check_rc hleaks-unnamed/exit 0 "$H" leaks -q "$B" "$U" "$U"
check_grep hleaks-unnamed/first-line '^suspect 1: 0x200 Hash$' "$TMP/out"
check_grep hleaks-unnamed/path '^  path from root vm:$' "$TMP/out"

# ---- leaks on the real named dumps of leak.rb and observer.rb ----
#
# named_rubyV_SCENARIO_{before,after,later}.json.gz: leak.rb (the cache a
# constant, LeakyCache::CACHE; with HOLDER=ivar @cache of LeakyCache,
# which 4.0 keeps in the class's IMEMO/fields) and observer.rb (EventBus's
# @subscribers), dumped by the gem with names on Ruby 3.1 and 4.0.1.

# leaks3 NAME SET [OPTION...]: heapdump leaks on the three dumps of SET
leaks3() {
	l3_name=$1 l3_set=$DATA/$2
	shift 2
	check_rc "$l3_name" 0 "$H" leaks -q "$@" "${l3_set}_before.json.gz" \
		"${l3_set}_after.json.gz" "${l3_set}_later.json.gz"
}
for v in 3.1 4.0.1; do
	for sc in leak leak_ivar observer; do
		[ -f "$DATA/named_ruby${v}_${sc}_before.json.gz" ] ||
			notok "fixture-$v-$sc" "$DATA/named_ruby${v}_${sc}_before.json.gz is missing"
	done
	case $v in 4.*) owner="ivars of LeakyCache" ;; *) owner=LeakyCache ;; esac
	cset=named_ruby${v}_leak
	leaks3 "const-$v/exit" "$cset"
	check_grep "const-$v/first-line" '^suspect 1: LeakyCache ::CACHE -> 0x[0-9a-f]+ Hash, leak\.rb:80$' "$TMP/out"
	check_grep "const-$v/path" '^  path from root vm: (DATA/VM/pin_array_list -> )?Object ::LeakyCache -> LeakyCache ::CACHE -> Hash$' "$TMP/out"
	leaks3 "const-$v/json" "$cset" -f json
	check "const-$v/json-hops" '["::LeakyCache","::CACHE",null]' \
		"$(jq -c '.suspects[0].path.hops | .[length - 3:] | map(.name)' "$TMP/out")"
	check "const-$v/json-not-inferred" 'null' \
		"$(jq -c '.suspects[0].path.hops | .[length - 2].inferred' "$TMP/out")"
	leaks3 "const-$v/tsv" "$cset" -f tsv
	check_grep "const-$v/tsv-path" '	vm -> .*Object ::LeakyCache -> LeakyCache ::CACHE -> Hash$' "$TMP/out"
	rm -rf "$TMP/svg"
	leaks3 "const-$v/svg" "$cset" -n 1 --svg "$TMP/svg"
	has "const-$v/svg-label" '>::CACHE</text>' "$TMP/svg/suspect-1.svg"

	leaks3 "ivar-$v/exit" "named_ruby${v}_leak_ivar"
	check_grep "ivar-$v/first-line" "^suspect 1: $owner @cache -> 0x[0-9a-f]+ Hash, leak\\.rb:67\$" "$TMP/out"
	leaks3 "ivar-$v/json" "named_ruby${v}_leak_ivar" -f json
	check "ivar-$v/json-last-hop" '"@cache"' \
		"$(jq -c '.suspects[0].path.hops | .[length - 2].name' "$TMP/out")"

	leaks3 "observer-$v/exit" "named_ruby${v}_observer"
	check_grep "observer-$v/first-line" '^suspect 1: EventBus @subscribers -> 0x[0-9a-f]+ Array, observer\.rb:49$' "$TMP/out"
	check_grep "observer-$v/path" '^  path from root vm: (DATA/VM/pin_array_list -> )?Object ::BUS -> EventBus @subscribers -> Array$' "$TMP/out"
	rm -rf "$TMP/svg"
	leaks3 "observer-$v/svg" "named_ruby${v}_observer" -n 1 --svg "$TMP/svg"
	has "observer-$v/svg-label" '>@subscribers</text>' "$TMP/svg/suspect-1.svg"
done

# the same dumps of the constant, without their names: the first line
# of today
D31=$DATA/named_ruby3.1_leak
for k in before after later; do
	gzip -dc "${D31}_$k.json.gz" | jq -c 'del(.ref_names)' >"$TMP/plain_$k.json"
done
check_rc plain/exit 0 "$H" leaks -q "$TMP/plain_before.json" "$TMP/plain_after.json" "$TMP/plain_later.json"
check_grep plain/first-line '^suspect 1: 0x[0-9a-f]+ Hash, leak\.rb:80$' "$TMP/out"
check_grep plain/path '^  path from root vm:$' "$TMP/out"

# ---- dominators, interface-with, to-gml on the real named leak ----

L=$DATA/named_ruby3.1_leak_later.json.gz
check_rc real-dominators/exit 0 "$H" dominators -q -n 1 "$L" --class Request
check_grep real-dominators/cache '^  0x[0-9a-f]+ Hash \(HASH\) via ::CACHE retains ' "$TMP/out"
check_grep real-dominators/key '^  0x[0-9a-f]+ Request \(OBJECT\) via \[[0-9]+\] retains ' "$TMP/out"
A=$DATA/named_ruby3.1_leak_after.json.gz
check_rc real-diff 0 "$H" diff -q -o "$TMP/new.ndjson" "$DATA/named_ruby3.1_leak_before.json.gz" "$A"
check_rc real-iw/exit 0 "$H" interface-with -q --summary -n 3 "$A" "$TMP/new.ndjson"
check_grep real-iw/holder '^ +10 +[0-9,]+  0x[0-9a-f]+ +Hash via \[[0-9]+\], \[[0-9]+\], \[[0-9]+\] \(10 names\)$' "$TMP/out"
check_grep real-iw/border ' Hash \[[0-9]+\] -> Request$' "$TMP/out"
check_rc real-gml/exit 0 "$H" to-gml -q --name LeakyCache --depth 1 -o "$TMP/cache.gml" "$A"
"$PY" "$TMP/edges.py" "$TMP/cache.gml" >"$TMP/cedges" 2>"$TMP/pyerr" ||
	notok real-gml/networkx "$(tail -1 "$TMP/pyerr")"
check_grep real-gml/cache-edge '^LeakyCache 0x[0-9a-f]+ \| Hash 0x[0-9a-f]+ \| ::CACHE$' "$TMP/cedges"

# ---- hostile: many named references from one object and one root ----
#
# 40,000 objects held by one array (names [0]..) and by global_tbl
# ($g0..), all drawn, then all on the border under one hash: each label
# is found in O(log references), never by a scan of the holder's
# references per edge (which would be 1.6e9 steps here).
BIG="$TMP/big.json"
awk 'BEGIN {
	n = 40000
	printf "{\"type\":\"ROOT\",\"root\":\"global_tbl\",\"references\":["
	for (i = 0; i < n; i++) printf "%s\"0x%x\"", i ? "," : "", 1048576 + i
	printf "],\"ref_names\":["
	for (i = 0; i < n; i++) printf "%s\"$g%d\"", i ? "," : "", i
	printf "]}\n{\"address\":\"0x10\",\"type\":\"ARRAY\",\"references\":["
	for (i = 0; i < n; i++) printf "%s\"0x%x\"", i ? "," : "", 1048576 + i
	printf "],\"ref_names\":["
	for (i = 0; i < n; i++) printf "%s%d", i ? "," : "", i
	printf "]}\n"
	for (i = 0; i < n; i++)
		printf "{\"address\":\"0x%x\",\"type\":\"OBJECT\"}\n", 1048576 + i
}' >"$BIG"
awk 'NR > 2 { sub(/,"type".*/, "}"); print }' "$BIG" >"$TMP/big.diff"
check_rc big/gml 0 timeout 60 "$H" to-gml -q "$BIG" -o "$TMP/big.gml"
check big/gml-labels 80000 "$(grep -c 'edge .* label ' "$TMP/big.gml")"
has big/gml-last-index 'label "[39999]" ]' "$TMP/big.gml"
has big/gml-last-global 'label "$g39999" ]' "$TMP/big.gml"
check_rc big/iw 0 timeout 60 "$H" interface-with -q --summary -n 0 -f json "$BIG" "$TMP/big.diff"
check big/iw-held-as '40000 [{"name":"[39999]"}]' \
	"$(jq -r '"\(.diff_border | length) \(.diff_border | map(select(.address == "0x109c3f"))[0].held_as | tojson)"' "$TMP/out")"
