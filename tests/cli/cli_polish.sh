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
cpu_le render/max-nodes-fast 5 "$HD" render -q --address "$wide" --depth 1 -o "$TMP/w.svg" "$TMP/draw.json"
check_rc render/max-nodes-default 1 "$HD" render -q --address "$wide" --depth 1 -o "$TMP/w.svg" "$TMP/draw.json"
check_grep render/max-nodes-message "the graph has 1,20[0-9] nodes, more than --max-nodes 1,000;.*raise --max-nodes" "$TMP/err"
check render/max-nodes-nothing-written "" "$(ls "$TMP" | grep '^w\.svg')"
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

# ---- item 21: one meaning per option letter ----
# every command's options, from its --help (made from its option table):
# a letter means the same long option everywhere, and -n is --top
"$HD" --help 2>&1 | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' >"$TMP/cmds"
: >"$TMP/letters"
while read -r cmd; do
	"$HD" "$cmd" --help 2>/dev/null </dev/null |
		sed -n "s/^ *-\([a-zA-Z]\), --\([a-z-]*\).*/\1 \2 $cmd/p" >>"$TMP/letters"
done <"$TMP/cmds"
check letters/commands-read 1 "$([ "$(wc -l <"$TMP/cmds")" -ge 15 ] && echo 1)"
clash=$(awk '{ if (($1 in long) && long[$1] != $2) print "-" $1 ": --" long[$1] " (" cmd[$1] ") and --" $2 " (" $3 ")"; else { long[$1] = $2; cmd[$1] = $3 } }' "$TMP/letters")
check letters/one-meaning-each "" "$clash"
check letters/n-is-top "" "$(awk '$1 == "n" && $2 != "top"' "$TMP/letters")"
check letters/path-has-n 1 "$(grep -c '^n top path$' "$TMP/letters")"
check letters/dominators-has-n 1 "$(grep -c '^n top dominators$' "$TMP/letters")"
# the long options stay: --max is --top in path and dominators
LA=$DATA/leak_after.json
for cmd in path dominators; do
	for o in "-n 2" "--top 2" "--max 2"; do
		"$HD" "$cmd" -q $o -f json --class Request "$LA" >"$TMP/out" 2>"$TMP/err"
		check "letters/$cmd-${o%% *}" 2 "$(grep -c . "$TMP/out")"
	done
done
"$HD" path -n 2 --class Request "$LA" >/dev/null 2>"$TMP/err"
check_grep letters/path-more-names-top "^heapdump: [0-9]+ more selected object\(s\) not shown \(--top\)" "$TMP/err"

# ---- item 21: thousands separators in human-readable counts ----
T31=$DATA/ok_ruby3.1_traced.json
# (IMEMO: since the class edges every STRING of it is reached, man 5
# heapdump-store, CLASS REFERENCES; some IMEMOs are garbage not yet swept)
"$HD" roots-of -q --type IMEMO -o "$TMP/r.json" "$T31" 2>"$TMP/err"
check_grep commas/roots-of-targets "^heapdump: [0-9]+ of 3,[0-9]{3} targets are unreached" "$TMP/err"
"$HD" path --type STRING "$T31" >/dev/null 2>"$TMP/err"
check_grep commas/path-more "^heapdump: 3,[0-9]{3} more selected object\(s\) not shown" "$TMP/err"
# interface-with: the Array of 1,200 Strings holds them all
"$HD" interface-with -q --summary --type STRING "$TMP/draw.json" >"$TMP/out" 2>"$TMP/err"
check_grep commas/interface-keepalive "^ +1,200 +1,2[0-9]{2}  0x" "$TMP/out"
check_grep commas/interface-top "diff border \(top 20 of [0-9],[0-9]{3}," "$TMP/out"
# 1,200 files: stats and diff count their rows
awk 'BEGIN { print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}"
	for (i = 0; i < 1200; i++)
		printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"file\":\"f%d.rb\", \"line\":1, \"generation\":5, \"memsize\":40}\n", 4096 + i * 40, i }' \
	</dev/null >"$TMP/files.json"
"$HD" stats -q --by file "$TMP/files.json" >"$TMP/out" 2>"$TMP/err"
check_grep commas/stats-rows "^by file \(top 20 of 1,200, by count\)" "$TMP/out"
head -1 "$TMP/files.json" >"$TMP/empty.json"
"$HD" diff -q --by file "$TMP/empty.json" "$TMP/files.json" >"$TMP/out" 2>"$TMP/err"
check_grep commas/diff-rows "\(top 20 of 1,200, by count\)" "$TMP/out"
# no 4-digit count without its comma in the text reports
for cmd in "stats --by location,method $T31" "top $T31" "leaks $DATA/leak_before.json $DATA/leak_after.json $DATA/leak_later.json" \
	"interface-with --summary --type STRING $TMP/draw.json"; do
	"$HD" $cmd -q 2>&1 | grep -v '0x[0-9a-f]' |
		grep -E '(^|[^0-9,.:a-z])[0-9]{4,}([^0-9,]|$)' >"$TMP/bare"
	check "commas/${cmd%% *}-none-bare" "" "$(head -3 "$TMP/bare")"
done

# ---- item 21: "(none)" for a traced object without a method ----
# traced (a generation, or a file) but no method or no file: "(none)";
# no allocation information at all: "(untraced)"
printf '%s\n' \
	'{"address":"0x10", "type":"STRING", "file":"a.rb", "line":3, "generation":4, "memsize":40}' \
	'{"address":"0x20", "type":"STRING", "generation":4, "memsize":40}' \
	'{"address":"0x30", "type":"STRING", "memsize":40}' \
	>"$TMP/traced.json"
"$HD" stats -q -f tsv --by method "$TMP/traced.json" | grep '^method' >"$TMP/out"
check_grep none/method-traced "^method	2	80	\(none\)$" "$TMP/out"
check_grep none/method-untraced "^method	1	40	\(untraced\)$" "$TMP/out"
"$HD" stats -q -f tsv --by file "$TMP/traced.json" | grep '^file' >"$TMP/out"
check_grep none/file-traced-no-file "^file	1	40	\(none\)$" "$TMP/out"
check_grep none/file-untraced "^file	1	40	\(untraced\)$" "$TMP/out"
"$HD" index -q -o "$TMP/traced.hds" "$TMP/traced.json"
"$HD" stats -q -f tsv --by method "$TMP/traced.hds" | grep '^method' >"$TMP/out2"
check_grep none/method-store "^method	2	80	\(none\)$" "$TMP/out2"

# ---- item 21: progress names the input and the phase ----
# progress shows only on a terminal: script(1) gives heapdump one
prog() { # prog FILE heapdump-arguments...: its terminal output in FILE
	f=$1
	shift
	script -qec "$(printf '%s ' "$HD" "$@")" /dev/null </dev/null >"$f" 2>&1
	tr '\r' '\n' <"$f" | sed 's/\x1b\[K//g' >"$f.lines"
}
prog "$TMP/p1" leaks -n 1 "$DATA/leak_before.json" "$DATA/leak_after.json" "$DATA/leak_later.json"
for k in before after later; do
	check_grep "progress/leaks-$k-reading" "leak_$k\.json: reading [0-9.]+ [kKMG]?B / [0-9.]+ [kKMG]?B \([0-9]+%\)" "$TMP/p1.lines"
	check_grep "progress/leaks-$k-indexing" "leak_$k\.json: indexing" "$TMP/p1.lines"
done
prog "$TMP/p2" stats "$DATA/ok_ruby3.1_traced.json.gz"
check_grep progress/stats-reading "ok_ruby3\.1_traced\.json\.gz: reading" "$TMP/p2.lines"
check progress/stats-no-indexing "" "$(grep 'indexing' "$TMP/p2.lines")"
prog "$TMP/p3" stats -q "$DATA/ok_ruby3.1_traced.json.gz"
check progress/quiet "" "$(grep 'reading' "$TMP/p3.lines")"

# --format: every command names the format it does not know, exit 2;
# ndjson only where it is written (stats, strings, trend)
B="$DATA/leak_before.json" A="$DATA/leak_after.json"
for c in diff dominators interface-with leaks path stats strings top trend waste; do
	case $c in
	diff | leaks | trend) set -- "$B" "$A" ;;
	interface-with) set -- "$A" --class String ;;
	*) set -- "$A" ;;
	esac
	"$HEAPDUMP" $c -f bogus "$@" >/dev/null 2>"$TMP/err"
	check "format/$c/exit" 2 "$?"
	check "format/$c/says" 1 "$(grep -c "unknown format 'bogus'" "$TMP/err")"
done
for c in diff leaks top waste; do
	case $c in diff | leaks) set -- "$B" "$A" ;; *) set -- "$A" ;; esac
	"$HEAPDUMP" $c -f ndjson "$@" >/dev/null 2>"$TMP/err"
	check "format/$c/no-ndjson" 2 "$?"
done
"$HEAPDUMP" top -f tsv "$DATA/leak_after.json" >"$TMP/out" 2>/dev/null
check format/top/tsv 0 "$?"

# ---- issue 34, item 15: leaks --svg with every suspect folded ----
# The clusters scenario's four suspects are each under 99% of the leak:
# all folded, nothing to draw. DIR stays empty and stderr says why; the
# exit status is that of a report without --svg (0).
CB="$DATA/leak_clusters_before.json.gz" CA="$DATA/leak_clusters_after.json.gz"
CL="$DATA/leak_clusters_later.json.gz"
check_rc leaks/svg-all-folded-exit 0 "$HD" leaks -q --min-share 99 --svg "$TMP/folded" "$CB" "$CA" "$CL"
check leaks/svg-all-folded-nothing-drawn 0 "$(ls "$TMP/folded" | wc -l)"
check_grep leaks/svg-all-folded-says "nothing drawn in '.*folded': the 4 suspects are all under --min-share 99%" "$TMP/err"
# one drawn: no such word
check_rc leaks/svg-drawn-exit 0 "$HD" leaks -q --min-share 1 -n 1 --svg "$TMP/drawn" "$CB" "$CA" "$CL"
check leaks/svg-drawn-silent 0 "$(grep -c 'nothing drawn' "$TMP/err")"
