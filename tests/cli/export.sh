#!/bin/sh
# heapdump to-gml, to-dot and render on leak_after.json: the GML loads in
# networkx with the node and edge counts jq computes from the dump; the DOT
# passes Graphviz's own dot; render writes real SVG, PNG and PDF files,
# atomically; the node limit and usage errors.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs dot graphviz
PY=/usr/bin/python3
if ! "$PY" -c 'import networkx' 2>/dev/null; then
	notok needs-networkx "$PY cannot import networkx: apt-get install python3-networkx"
	exit 1
fi
dump=$DATA/leak_after.json
# under ASan: what Graphviz's font stack keeps until exit is not ours
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS

# gml_counts FILE: "nodes edges" as networkx reads them
gml_counts() {
	"$PY" -c 'import sys, networkx as nx
g = nx.read_gml(sys.argv[1])
assert g.is_directed()
print(g.number_of_nodes(), g.number_of_edges())' "$1" 2>"$TMP/pyerr" ||
		echo "networkx: $(tail -1 "$TMP/pyerr")"
}

# The expected graph of the Request objects and what they reference
# (--depth 1), from the dump with jq: object nodes, root category nodes,
# distinct edges between nodes.
jq -s -r '
	(map(select(.address != null and .type != "ROOT"))
	 | map({key: .address, value: (.references // [])}) | from_entries) as $refs
	| (map(select(.type == "CLASS" and .name == "Request") | .address)) as $cls
	| (map(select(.type == "OBJECT" and .class == $cls[0])) | map(.address)) as $s0
	| ($s0 + [$s0[] as $a | $refs[$a][] | select($refs[.] != null)]
	   | unique) as $s1
	| ($s1 | map({key: ., value: true}) | from_entries) as $in
	| ([$s1[] as $a | $refs[$a][] | select($in[.]) | [$a, .]] | unique
	   | length) as $oe
	| ([.[] | select(.type == "ROOT") | .root as $r | .references[]
	    | select($in[.]) | [$r, .]] | unique) as $re
	| "\($s1 | length) \($re | map(.[0]) | unique | length) \($oe) \($re | length)"
' "$dump" >"$TMP/want" 2>"$TMP/err" || notok jq "$(head -c 300 "$TMP/err")"
read -r objs roots oedges redges <"$TMP/want"
want_gml="$((objs + roots)) $((oedges + redges))"

if "$HEAPDUMP" to-gml -q --class Request --depth 1 "$dump" \
	>"$TMP/r.gml" 2>"$TMP/err"; then
	check gml/networkx-counts "$want_gml" "$(gml_counts "$TMP/r.gml")"
	check gml/objects "$objs" "$(grep -c '^  node \[ id [0-9]* label "[^"]* 0x' "$TMP/r.gml")"
	check gml/roots "$roots" "$(grep -c 'type "ROOT"' "$TMP/r.gml")"
	check_grep gml/address-attr '^  node \[ id [0-9]+ label "Request 0x[0-9a-f]+" name "Request" address "0x[0-9a-f]+" class "Request" type "OBJECT" memsize [0-9]+ generation [0-9]+ file "[^"]*leak.rb" line [0-9]+' "$TMP/r.gml"
else
	notok gml/run "exit $?: $(head -c 300 "$TMP/err")"
fi

# the same through a store, and through --from an NDJSON of the selection
"$HEAPDUMP" index -q "$dump" -o "$TMP/a.hds" 2>"$TMP/err" ||
	notok index "$(head -c 300 "$TMP/err")"
"$HEAPDUMP" to-gml -q --class Request --depth 1 -o "$TMP/s.gml" "$TMP/a.hds" 2>"$TMP/err"
check gml/store-same "$(cat "$TMP/r.gml")" "$(cat "$TMP/s.gml" 2>/dev/null)"
cls=$(jq -r 'select(.type == "CLASS" and .name == "Request") | .address' "$dump")
jq -c --arg c "$cls" 'select(.class == $c and .type == "OBJECT")' "$dump" >"$TMP/req.ndjson"
"$HEAPDUMP" to-gml -q --from "$TMP/req.ndjson" --depth 1 "$TMP/a.hds" >"$TMP/f.gml" 2>"$TMP/err"
check gml/from-same "$(cat "$TMP/r.gml")" "$(cat "$TMP/f.gml")"
check gml/output-mode "$(stat -c %a "$dump")" "$(stat -c %a "$TMP/s.gml" 2>/dev/null)"

# --collapse over the whole heap: no IMEMO, no hidden array or hash left;
# every other object is a node (jq's count); networkx loads it
want_kept=$(jq -s '[.[] | select(.address != null and .type != "ROOT"
	and .type != "IMEMO"
	and ((.type == "ARRAY" or .type == "HASH") and (has("class") | not) | not))]
	| unique_by(.address) | length' "$dump")
if "$HEAPDUMP" to-gml -q --collapse --max-nodes 0 "$dump" >"$TMP/c.gml" 2>"$TMP/err"; then
	check collapse/objects "$want_kept" "$(grep -c '^  node .* address "0x' "$TMP/c.gml")"
	check collapse/no-imemo 0 "$(grep -c 'type "IMEMO"' "$TMP/c.gml")"
	check collapse/no-hidden 0 "$(grep -c 'class "(hidden \(ARRAY\|HASH\))' "$TMP/c.gml")"
	got=$(gml_counts "$TMP/c.gml")
	check collapse/networkx-nodes "$(grep -c '^  node' "$TMP/c.gml")" "${got%% *}"
	check collapse/networkx-edges "$(grep -c '^  edge' "$TMP/c.gml")" "${got##* }"
else
	notok collapse/run "exit $?: $(head -c 300 "$TMP/err")"
fi

# DOT: Graphviz's dot accepts it, silently
if "$HEAPDUMP" to-dot -q --class Request --depth 1 "$dump" >"$TMP/r.dot" 2>"$TMP/err"; then
	check dot/nodes "$((objs + roots))" "$(grep -c '^  n[0-9]* \[label=' "$TMP/r.dot")"
	check dot/edges "$((oedges + redges))" "$(grep -c '^  n[0-9]* -> n[0-9]*$' "$TMP/r.dot")"
	check_rc dot/graphviz-accepts 0 dot -Tsvg -o "$TMP/dot.svg" "$TMP/r.dot"
	check dot/graphviz-silent "" "$(cat "$TMP/err")"
else
	notok dot/run "exit $?: $(head -c 300 "$TMP/err")"
fi

# render: real pictures, by extension or --format
sel="--class Request --depth 1"
check_rc render/svg 0 "$HEAPDUMP" render -q $sel -o "$TMP/r.svg" "$dump"
check render/svg-xml '<?xml' "$(head -c 5 "$TMP/r.svg" 2>/dev/null)"
check_grep render/svg-svg '<svg' "$TMP/r.svg"
check_rc render/png 0 "$HEAPDUMP" render -q $sel -o "$TMP/r.png" "$dump"
check render/png-magic '89504e47' "$(od -An -tx1 -N4 "$TMP/r.png" 2>/dev/null | tr -d ' \n')"
check_rc render/pdf 0 "$HEAPDUMP" render -q $sel --format pdf -o "$TMP/r.out" "$dump"
check render/pdf-magic '%PDF-' "$(head -c 5 "$TMP/r.out" 2>/dev/null)"
check render/mode "$(stat -c %a "$dump")" "$(stat -c %a "$TMP/r.svg" 2>/dev/null)"
check render/no-temp "" "$(ls "$TMP" | grep tmp)"

# render into a directory it cannot write: exit 1, nothing left
mkdir "$TMP/ro"
chmod 555 "$TMP/ro"
if touch "$TMP/ro/probe" 2>/dev/null; then # root: use /proc instead
	rm -f "$TMP/ro/probe"
	rodir=/proc/self
else
	rodir=$TMP/ro
fi
check_rc render/read-only-dir 1 "$HEAPDUMP" render -q $sel -o "$rodir/x.svg" "$dump"
check_grep render/read-only-message "cannot create '$rodir/x.svg" "$TMP/err"
check render/read-only-nothing-left "" "$(ls "$TMP/ro")"
chmod 755 "$TMP/ro"

# the node limit: exit 1, how many nodes and how to narrow; the default
# (50,000) on a generated dump of 50,001 objects
awk 'BEGIN { for (i = 0; i < 50001; i++)
	printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\"}\n", 4096 + i * 40 }' \
	</dev/null >"$TMP/big.json"
check_rc to-gml/max-nodes-default 1 "$HEAPDUMP" to-gml -q -o "$TMP/big.gml" "$TMP/big.json"
check_grep to-gml/max-nodes-message "the graph has 50,001 nodes, more than --max-nodes 50,000; narrow it with a selection.*--collapse.*roots-of or subgraph-of with --from.*raise --max-nodes" "$TMP/err"
check_rc to-gml/max-nodes-raised 0 "$HEAPDUMP" to-gml -q --max-nodes 50001 -o "$TMP/big.gml" "$TMP/big.json"
check to-gml/max-nodes-raised-count 50001 "$(grep -c '^  node' "$TMP/big.gml")"
rm -f "$TMP/big.gml"
for cmd in to-gml to-dot render; do
	check_rc "$cmd/max-nodes" 1 "$HEAPDUMP" "$cmd" -q --max-nodes 3 $sel -o "$TMP/big.svg" "$dump"
	check_grep "$cmd/max-nodes-count" "the graph has $((objs + roots)) nodes, more than --max-nodes 3;" "$TMP/err"
done
check render/max-nodes-nothing-left "" "$(ls "$TMP" | grep 'big\.svg')"

# usage errors: exit 2
check_rc usage/no-operand 2 "$HEAPDUMP" to-gml
check_rc usage/two-operands 2 "$HEAPDUMP" to-dot "$dump" "$dump"
check_rc usage/bad-depth 2 "$HEAPDUMP" to-gml --depth x "$dump"
check_rc usage/unknown-option 2 "$HEAPDUMP" to-dot --colour "$dump"
check_rc usage/bad-type 2 "$HEAPDUMP" to-gml --type NOPE "$dump"
check_rc usage/render-no-output 2 "$HEAPDUMP" render "$dump"
check_rc usage/render-unknown-extension 2 "$HEAPDUMP" render -o "$TMP/x.jpg" "$dump"
check_rc usage/render-unknown-format 2 "$HEAPDUMP" render --format gif -o "$TMP/x.svg" "$dump"
check_rc help/to-gml 0 "$HEAPDUMP" to-gml --help
check_grep help/to-gml-collapse '--collapse' "$TMP/out"
check_rc help/render 0 "$HEAPDUMP" help render
check_grep help/render-format '--format' "$TMP/out"
