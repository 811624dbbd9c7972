#!/bin/sh
# cli_polish.sh - what a user meets in the first hour (issue 11, items 20
# and 21):
#  - drawings Graphviz cannot lay out in reasonable time are refused
#    before the layout (render and leaks --svg: nodes, then references),
#    and PNGs larger than cairo can hold are refused after it; the flags
#    lift the caps;
#  - one meaning per option letter (-n is --top everywhere);
#  - progress lines name the input and the phase;
#  - thousands separators in human-readable counts;
#  - a traced object without a method is "(none)", not "(untraced)".
# The dumps of the drawing tests are written by a real Ruby at test time.
. "$(dirname "$0")/../lib.sh"
needs ruby ruby
needs jq jq
needs script bsdutils

HD=$HEAPDUMP
# under ASan: what Graphviz's font stack keeps until exit is not ours
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS

# ---- item 20: drawings too large for Graphviz ----
# wide: one Array of 1,200 Strings (a star: 1,201 nodes at --depth 1);
# fan: one Array of 300 Strings (a graph dot lays out in a line far wider
# than 32,767 pixels); dense: an Array of 40 Arrays holding the same 60
# Strings (101 nodes, 2,440 references at --depth 2).
cat >"$TMP/draw.rb" <<'EOF'
require "objspace"
$wide = Array.new(1200) { |i| "w#{i}" }
$fan = Array.new(300) { |i| "f#{i}" }
$s = Array.new(60) { |i| "d#{i}" }
$dense = Array.new(40) { Array.new(60) { |j| $s[j] } }
GC.start
File.open(ARGV[0], "w") { |f| ObjectSpace.dump_all(output: f) }
EOF
ruby --disable-gems "$TMP/draw.rb" "$TMP/draw.json" 2>"$TMP/err" ||
	notok draw/ruby "$(head -c 300 "$TMP/err")"
arr() { # the address of the ARRAY of length $1
	jq -r "select(.type == \"ARRAY\" and .length == $1) | .address" \
		"$TMP/draw.json" 2>/dev/null | head -1
}
wide=$(arr 1200) fan=$(arr 300) dense=$(arr 40)
check draw/fixture "3" "$(printf '%s\n' "$wide" "$fan" "$dense" | grep -c '^0x')"

# nodes: refused before any layout, with the count, the limit and advice
t0=$(date +%s)
check_rc render/max-nodes-default 1 "$HD" render -q --address "$wide" --depth 1 -o "$TMP/w.svg" "$TMP/draw.json"
check_grep render/max-nodes-message "the graph has 1,20[0-9] nodes, more than --max-nodes 1,000;.*raise --max-nodes" "$TMP/err"
check render/max-nodes-nothing-written "" "$(ls "$TMP" | grep '^w\.svg')"
check render/max-nodes-fast 1 "$([ $(($(date +%s) - t0)) -le 5 ] && echo 1)"
"$HD" render --help >"$TMP/help"
check_grep render/max-nodes-help "--max-nodes N .*default 1000" "$TMP/help"
check_grep render/max-edges-help "--max-edges N .*default 2000" "$TMP/help"
# to-gml and to-dot keep their own, larger default
"$HD" to-gml --help >"$TMP/help"
check_grep to-gml/max-nodes-help "--max-nodes N .*default 50000" "$TMP/help"
check_rc to-gml/star-under-its-limit 0 "$HD" to-gml -q --address "$wide" --depth 1 -o "$TMP/w.gml" "$TMP/draw.json"

# the flag lifts it
check_rc render/max-nodes-raised 0 "$HD" render -q --max-nodes 1300 --address "$wide" --depth 1 -o "$TMP/w.svg" "$TMP/draw.json"
check_grep render/max-nodes-raised-svg "<svg" "$TMP/w.svg"

# references: 101 nodes but 2,440 references, refused before the layout
check_rc render/max-edges-default 1 "$HD" render -q --address "$dense" --depth 2 -o "$TMP/d.svg" "$TMP/draw.json"
check_grep render/max-edges-message "the graph has 2,4[0-9][0-9] references, more than --max-edges 2,000;.*raise --max-edges" "$TMP/err"
check render/max-edges-nothing-written "" "$(ls "$TMP" | grep '^d\.svg')"
check_rc render/max-edges-raised 0 "$HD" render -q --max-edges 0 --address "$dense" --depth 2 -o "$TMP/d.svg" "$TMP/draw.json"
check_grep render/max-edges-raised-svg "<svg" "$TMP/d.svg"

# pixels: a PNG wider than cairo's 32,767 is refused (Graphviz would
# shrink it to an unreadable strip); the same graph as SVG is drawn
check_rc render/png-too-wide 1 "$HD" render -q --address "$fan" --depth 1 -o "$TMP/f.png" "$TMP/draw.json"
check_grep render/png-too-wide-message "the picture would be [0-9,]+ x [0-9,]+ pixels.*32,767.*SVG or PDF" "$TMP/err"
check render/png-too-wide-no-graphviz-warning "" "$(grep -i 'too large for cairo' "$TMP/err")"
check render/png-too-wide-nothing-written "" "$(ls "$TMP" | grep '^f\.png')"
check_rc render/svg-wide-ok 0 "$HD" render -q --address "$fan" --depth 1 -o "$TMP/f.svg" "$TMP/draw.json"
check_rc render/png-small-ok 0 "$HD" render -q --address "$dense" -o "$TMP/s.png" "$TMP/draw.json"
check render/png-small-magic '89504e47' "$(od -An -tx1 -N4 "$TMP/s.png" 2>/dev/null | tr -d ' \n')"

# leaks --svg: the same guard. A linked list of 1,200 nodes grows at its
# tail: the path from a root to the holder is 1,200 objects long.
cat >"$TMP/chain.rb" <<'EOF'
require "objspace"
ObjectSpace.trace_object_allocations_start
class Link
  attr_accessor :nxt, :payload
end
$head = Link.new
tail = $head
1200.times { l = Link.new; tail.nxt = l; tail = l }
dump = lambda do |name|
  GC.start
  File.open(File.join(ARGV[0], name), "w") { |f| ObjectSpace.dump_all(output: f) }
end
grow = lambda do |n|
  n.times { |i| l = Link.new; l.payload = "p#{i}" * 3; tail.nxt = l; tail = l }
end
dump.call("before.json")
grow.call(10)
dump.call("after.json")
grow.call(10)
dump.call("later.json")
EOF
ruby --disable-gems "$TMP/chain.rb" "$TMP" 2>"$TMP/err" ||
	notok leaks/ruby "$(head -c 300 "$TMP/err")"
C="$TMP/before.json $TMP/after.json $TMP/later.json"
check_rc leaks/svg-max-nodes-default 1 "$HD" leaks -q -n 1 --svg "$TMP/pics" $C
check_grep leaks/svg-max-nodes-message "suspect-1\.svg.*the graph has 1,2[0-9][0-9] nodes, more than --max-nodes 1,000;.*raise --max-nodes" "$TMP/err"
check leaks/svg-max-nodes-nothing-written "" "$(ls "$TMP/pics" 2>/dev/null)"
check_grep leaks/svg-max-nodes-report-printed "^suspect 1:" "$TMP/out"
check_rc leaks/svg-max-nodes-raised 0 "$HD" leaks -q -n 1 --max-nodes 0 --svg "$TMP/pics" $C
check_grep leaks/svg-max-nodes-raised-svg "<svg" "$TMP/pics/suspect-1.svg"
