#!/bin/sh
# select_ux.sh - what a new user hits in the first hour with selections
# and names: to-gml names classes and modules as to-dot, path and the
# JSON output do; top and dominators leave the allocation tracer and
# dump_all's own objects out by default, as stats and diff do (-a/--all
# keeps them); --from selects by address, whatever else a line holds, and
# reports the lines it skips; a selection that picks nothing says why,
# with the nearest names, and fails; --name selects a class or module
# object itself; "did you mean" for commands and options; a flag given a
# value is named.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs python3 python3
python3 -c 'import networkx' 2>/dev/null || {
	notok needs-networkx "python3 cannot import networkx: apt-get install python3-networkx"
	exit 1
}

HD=$HEAPDUMP
LEAK="$DATA/leak_after.json"
TRACED="$DATA/ok_ruby3.1_traced.json"
REQ_CLASS=0x7f11285c9550 # the class Request of leak_after.json

# ---- item 4: one name for a node everywhere ----

# the class Request as a networkx node: its label and its name
"$HD" to-gml -q "$LEAK" --address $REQ_CLASS -o "$TMP/req.gml" 2>"$TMP/err"
check gml/class-rc 0 $?
python3 - "$TMP/req.gml" >"$TMP/out" 2>&1 <<'EOF'
import sys, networkx as nx
g = nx.read_gml(sys.argv[1])
(label, attrs), = g.nodes(data=True)
print(label, attrs["name"], attrs["class"], attrs["type"])
EOF
check gml/class-label "Request $REQ_CLASS Request Class CLASS" "$(cat "$TMP/out")"

# every class and module: the GML name, the DOT label and the name the
# text and JSON output give (dominators -f json) are one and the same
"$HD" to-gml -q "$LEAK" --type CLASS --type MODULE --max-nodes 0 \
	-o "$TMP/cm.gml" 2>"$TMP/err"
"$HD" to-dot -q "$LEAK" --type CLASS --type MODULE --max-nodes 0 \
	-o "$TMP/cm.dot" 2>"$TMP/err"
"$HD" dominators -q "$LEAK" --type CLASS --type MODULE -n 0 -f json \
	>"$TMP/cm.json" 2>"$TMP/err"
python3 - "$TMP/cm.gml" "$TMP/cm.dot" "$TMP/cm.json" >"$TMP/out" 2>&1 <<'EOF'
import sys, re, json, networkx as nx
g = nx.read_gml(sys.argv[1])
gml = {a["address"]: a["name"] for _, a in g.nodes(data=True) if "address" in a}
dot = {}
for m in re.finditer(r'label="((?:[^"\\]|\\.)*)\\n(0x[0-9a-f]+)"', open(sys.argv[2]).read()):
    dot[m.group(2)] = m.group(1).replace('\\"', '"').replace('\\\\', '\\')
js = {}
for line in open(sys.argv[3]):
    r = json.loads(line)
    if r["chain"]:
        js[r["target"]] = r["chain"][-1]["object"]["class"]
print(len(gml), len(dot), len(js), "same" if gml == dot and all(gml[a] == n for a, n in js.items()) else "differ",
      sorted(n for n in gml.values() if n in ("Class", "Module")))
EOF
# (571 of the 572 reached: each metaclass through its class's class edge,
# man 5 heapdump-store, CLASS REFERENCES; 282 before it)
check gml/names-as-dot "572 572 571 same ['Class', 'Module']" "$(cat "$TMP/out")"

# ---- item 5: the tracer is left out by top and dominators too ----

tracer_rows() { grep -c 'allocation_info_tracer' "$1"; }
"$HD" top -q "$TRACED" -n 0 >"$TMP/top" 2>"$TMP/err"
check top/rc 0 $?
check top/no-tracer 0 "$(tracer_rows "$TMP/top")"
check_grep top/says-excluded '^excluded +7 objects, .*--all keeps them' "$TMP/top"
"$HD" top -q "$TRACED" -n 0 --all >"$TMP/topall" 2>"$TMP/err"
check top/all-tracer 1 "$(tracer_rows "$TMP/topall")"
"$HD" top -q "$TRACED" -n 0 -a >"$TMP/topa" 2>"$TMP/err"
# (the time the tree took aside)
check top/a-is-all "" "$(grep -v '^dominators' "$TMP/topall" >"$TMP/x1"; grep -v '^dominators' "$TMP/topa" >"$TMP/x2"; cmp -s "$TMP/x1" "$TMP/x2" || echo differ)"
"$HD" top -q "$TRACED" --by class -n 0 >"$TMP/topc" 2>"$TMP/err"
check top/class-no-tracer 0 "$(tracer_rows "$TMP/topc")"
"$HD" top -q "$TRACED" --by class -n 0 --all >"$TMP/topc" 2>"$TMP/err"
check top/class-all-tracer 1 "$(tracer_rows "$TMP/topc")"
# reached memory without them: what --all reaches less the tracer's
# 58,376 bytes and the reached ones of dump_all's own objects
d=$("$HD" top -q "$TRACED" -f json -n 1 2>/dev/null | jq .reached_memsize)
a=$("$HD" top -q "$TRACED" -f json -n 1 --all 2>/dev/null | jq .reached_memsize)
ex=$("$HD" stats -q "$TRACED" -f json 2>/dev/null | jq .totals.excluded_memsize)
check top/reached-less "yes" "$([ $((a - d)) -ge 58376 ] && [ $((a - d)) -le "$ex" ] && echo yes || echo "$a - $d, excluded $ex")"
# the same default from a store indexed with --dominators, read from it
"$HD" index -q --dominators "$TRACED" -o "$TMP/t.hds" 2>"$TMP/err"
"$HD" top -q "$TMP/t.hds" -n 0 >"$TMP/tops" 2>"$TMP/err"
check_grep top/store-read 'read from the store' "$TMP/tops"
check top/store-same "" "$(sed 1,3d "$TMP/top" >"$TMP/a"; sed 1,3d "$TMP/tops" >"$TMP/b"; cmp "$TMP/a" "$TMP/b")"
# leak fixture, traced too
"$HD" top -q "$LEAK" -n 0 >"$TMP/top" 2>"$TMP/err"
check top/leak-no-tracer 0 "$(tracer_rows "$TMP/top")"

# dominators: a selection of DATA objects leaves the tracer out
"$HD" dominators -q "$TRACED" --type DATA -n 0 >"$TMP/dom" 2>"$TMP/err"
check dominators/rc 0 $?
check dominators/no-tracer 0 "$(tracer_rows "$TMP/dom")"
"$HD" dominators -q "$TRACED" --type DATA -n 0 --all >"$TMP/dom" 2>"$TMP/err"
check dominators/all-tracer 1 "$(grep -c '^  0x[0-9a-f]* DATA/ObjectTracing/allocation_info_tracer' "$TMP/dom")"
check_rc dominators/only-tracer 1 "$HD" dominators -q "$TRACED" \
	--class DATA/ObjectTracing/allocation_info_tracer
check_grep dominators/only-tracer-says 'allocation tracer.*--all' "$TMP/err"

# ---- item 6: --from selects by address ----

"$HD" subgraph-of -q "$LEAK" --class Request -o "$TMP/req.json" 2>/dev/null
jq -c '{address}' "$TMP/req.json" >"$TMP/addr.json"
"$HD" roots-of -q "$LEAK" --from "$TMP/req.json" -o "$TMP/r1.json" 2>/dev/null
"$HD" roots-of -q "$LEAK" --from "$TMP/addr.json" -o "$TMP/r2.json" 2>"$TMP/err"
check from/address-only-rc 0 $?
check from/address-only-same "$(wc -l <"$TMP/r1.json")" "$(cmp -s "$TMP/r1.json" "$TMP/r2.json" && wc -l <"$TMP/r2.json")"
check from/address-only-silent "" "$(cat "$TMP/err")"
# lines without an address are counted, the first one named (when they
# are fewer than the lines with one: else the file is no address list)
{
	head -1 "$TMP/addr.json"
	echo '{"id":1}'
	echo 'not json at all'
	head -3 "$TMP/addr.json" | tail -2
	echo '{"type":"STRING"}'
	head -4 "$TMP/addr.json" | tail -1
} >"$TMP/mixed.json"
check_rc from/skipped-rc 0 "$HD" dominators -q -n 0 -f json "$LEAK" --from "$TMP/mixed.json"
check from/skipped-selected 4 "$(wc -l <"$TMP/out")"
check_grep from/skipped-says "mixed.json: 3 lines? without an object address skipped \(first at line 2\)" "$TMP/err"
# mostly lines without an address: not an address list
{
	head -1 "$TMP/addr.json"
	echo '{"id":1}'
	echo '{"id":2}'
} >"$TMP/mostly.json"
check_rc from/mostly-junk-rc 1 "$HD" subgraph-of -q "$LEAK" --from "$TMP/mostly.json"
check_grep from/mostly-junk-says "not a heap dump \(line 2: .*2 of 3 lines are not heap records\)" "$TMP/err"
# a --from with no address at all
printf '{"id":1}\n' >"$TMP/none.json"
check_rc from/none-rc 1 "$HD" roots-of -q "$LEAK" --from "$TMP/none.json"
check_grep from/none-says "none.json: not a heap dump \(line 1: " "$TMP/err"
# an empty one (diff -o with nothing new): the selection picks nothing
: >"$TMP/empty.json"
check_rc from/empty-rc 1 "$HD" roots-of -q "$LEAK" --from "$TMP/empty.json"
check_grep from/empty-says "picks no object: the --from input gives no object address" "$TMP/err"

# an empty match fails everywhere, saying so
printf '{"address":"0x1"}\n' >"$TMP/nomatch.json"
check_rc empty/interface-with 1 "$HD" interface-with -q "$LEAK" "$TMP/nomatch.json"
check_grep empty/interface-with-says 'picks no object.*0x1|picks no object.*address' "$TMP/err"
check empty/interface-with-no-report "" "$(grep -c 'new' "$TMP/out" | grep -v '^0$')"
# an empty DIFF is diff -o's "nothing new": the empty report, said so
: >"$TMP/nothing.json"
check_rc empty/interface-with-empty-diff 0 "$HD" interface-with "$LEAK" "$TMP/nothing.json" --summary
check_grep empty/interface-with-empty-diff-says 'nothing.json: DIFF is empty: no object is new' "$TMP/err"
check_grep empty/interface-with-empty-diff-report '^new +0 objects' "$TMP/out"
for c in to-gml to-dot roots-of subgraph-of path dominators; do
	check_rc "empty/$c" 1 "$HD" "$c" -q "$LEAK" --class NoSuchClassAnywhere
	check_grep "empty/$c-says" "picks no object" "$TMP/err"
done
check_rc empty/render 1 "$HD" render -q "$LEAK" --class NoSuchClassAnywhere -o "$TMP/x.svg"
check empty/render-no-file "" "$(ls "$TMP/x.svg" 2>/dev/null)"

# ---- item 18: --name, and why a selection picks nothing ----

# (dominators -f json: one line per selected object, its chain last)
sel() { "$HD" dominators -q -n 0 -f json "$@" | jq -r '"\(.target) \(.chain[-1].object.type) \(.chain[-1].object.class)"'; }
sel "$LEAK" --name Request >"$TMP/out" 2>"$TMP/err"
check name/rc 0 $?
check name/the-class "$REQ_CLASS CLASS Request" "$(cat "$TMP/out")"
sel "$LEAK" --name '/^(Request|LeakyCache)$/' >"$TMP/out" 2>"$TMP/err"
check name/regex "CLASS LeakyCache CLASS Request" "$(cut -d' ' -f2- "$TMP/out" | sort | tr '\n' ' ' | sed 's/ $//')"
sel "$LEAK" --name Comparable >"$TMP/out" 2>"$TMP/err"
check name/module "MODULE Comparable" "$(cut -d' ' -f2- "$TMP/out")"
check_rc name/bad-regex 2 "$HD" roots-of -q "$LEAK" --name '/(a/'
check_rc name/path 0 "$HD" path -q "$LEAK" --name LeakyCache

# a class without instances: the class object is a --name away
check_rc why/no-instance 1 "$HD" subgraph-of -q "$LEAK" --class LeakyCache
check_grep why/no-instance-says "no object is an instance of 'LeakyCache'.*--name LeakyCache" "$TMP/err"
# a mistyped class: the nearest names
check_rc why/typo 1 "$HD" roots-of -q "$LEAK" --class Reqest
check_grep why/typo-says "no class is named 'Reqest'.*did you mean 'Request'" "$TMP/err"
check_rc why/case 1 "$HD" roots-of -q "$LEAK" --name leakycache
check_grep why/case-says "no class or module is named 'leakycache'.*did you mean 'LeakyCache'" "$TMP/err"
# conditions that each pick objects, but not together
check_rc why/together 1 "$HD" roots-of -q "$LEAK" --class Request --type STRING
check_grep why/together-says "class Request: 16 objects.*type STRING: [0-9,]+ objects.*no object meets them all" "$TMP/err"
check_rc why/generation 1 "$HD" roots-of -q "$LEAK" --generation 1000..
check_grep why/generation-says "no object was allocated in generation 1000\.\. \(generations 0 to 3 here\)" "$TMP/err"
check_rc why/file 1 "$HD" roots-of -q "$LEAK" --file lek.rb
check_grep why/file-says "no object was allocated in 'lek.rb'.*did you mean 'leak.rb'" "$TMP/err"
check_rc why/address 1 "$HD" roots-of -q "$LEAK" 0x10
check_grep why/address-says "no object is at 0x10" "$TMP/err"

# ---- did you mean: commands and options ----

check_rc mean/command 2 "$HD" stat "$LEAK"
check_grep mean/command-says "unknown command 'stat'; did you mean 'stats'\?" "$TMP/err"
check_rc mean/help-command 2 "$HD" help roots
check_grep mean/help-command-says "unknown command 'roots'; did you mean 'roots-of'\?" "$TMP/err"
check_rc mean/far-command 2 "$HD" xyzzy
check_grep mean/far-command-plain "unknown command 'xyzzy'; see 'heapdump --help'" "$TMP/err"
check_rc mean/option 2 "$HD" roots-of "$LEAK" --classs Request
check_grep mean/option-says "unknown option '--classs'; did you mean '--class'\?" "$TMP/err"
check_rc mean/option-value 2 "$HD" stats "$LEAK" --formta=json
check_grep mean/option-value-says "unknown option '--formta=json'; did you mean '--format'\?" "$TMP/err"

# ---- item 17: a flag given a value ----

check_rc flag/strict-value 2 "$HD" stats --strict=1 "$LEAK"
check_grep flag/strict-value-says "option '--strict' takes no value" "$TMP/err"
check flag/no-control-byte 0 "$(tr -d '\n' <"$TMP/err" | LC_ALL=C grep -c '[[:cntrl:]]')"
check_rc flag/ambiguous 2 "$HD" stats --s "$LEAK"
check_grep flag/ambiguous-says "option '--s' is ambiguous: --sort, --strict$" "$TMP/err"

# ---- hostile: suggestions over many long, near class names ----
# 20,000 classes named 'A' * 100 + a number, one instance each; a miss by
# one character is matched against every name (a banded edit distance:
# linear in names x length), and the message stays one line
awk 'BEGIN {
	p = sprintf("%100s", ""); gsub(/ /, "A", p)
	print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}"
	for (i = 0; i < 20000; i++) {
		printf "{\"address\":\"0x%x\", \"type\":\"CLASS\", \"name\":\"%s%06d\"}\n", 4096 + 40 * i, p, i
		printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x%x\"}\n", 268435456 + 40 * i, 4096 + 40 * i
	}
}' >"$TMP/many.json"
A100=$(awk 'BEGIN { p = sprintf("%100s", ""); gsub(/ /, "A", p); print p }')
check_rc hostile/many-names 1 timeout 120 "$HD" roots-of -q "$TMP/many.json" --name "${A100}00012x"
check hostile/many-names-one-line 1 "$(grep -c 'picks no object' "$TMP/err")"
check_grep hostile/many-names-suggests "no class or module is named 'A{100}00012x'; did you mean 'A{100}00012[0-9]', 'A{100}00012[0-9]' or 'A{100}00012[0-9]'\?$" "$TMP/err"
check_rc hostile/many-names-exact 0 timeout 120 "$HD" roots-of -q "$TMP/many.json" --name "${A100}000012"

# a suggested name holding a control byte is escaped as every text
# output escapes it (\u001b), never raw
printf '%s\n' \
	'{"type":"ROOT", "root":"vm", "references":["0x10"]}' \
	'{"address":"0x8", "type":"CLASS", "name":"Foo\u001b[31mRED"}' \
	'{"address":"0x10", "type":"OBJECT", "class":"0x8"}' >"$TMP/esc.json"
check_rc hostile/escape-suggestion 1 "$HD" roots-of -q "$TMP/esc.json" --class 'Foo[31mRED'
check_grep hostile/escape-suggestion-says "did you mean 'Foo\\\\u001b\[31mRED'\?" "$TMP/err"
check hostile/escape-no-raw 0 "$(tr -d '\n' <"$TMP/err" | LC_ALL=C grep -c "$(printf '\033')")"
