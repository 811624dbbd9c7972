#!/bin/sh
# tests/ext/stacks.sh - allocation stacks (issue 36), in a real program
# (stacks_prog.rb: make_row called from KeepController, which keeps its
# rows, and from DropController, which drops them), traced with
# HeapDump.trace(stacks: true, sample: 1): the dumps carry STACK and
# FRAME lines and each object's "stack" (the second written by a forked
# child); stats --by stack and diff --by stack put the growth on the
# keeping controller's stack, not the other's; stats --by stack and
# --by frame equal an independent count over the JSON (stacks_count.rb),
# from the dump and from its store; the same dump without its stack lines
# gives the same plain stats; a dump without stacks says so (exit 1);
# Heap#flame returns heapdump flame's folded text; Leaks::Suspect#stacks
# and Leaks#as_json are leaks -f json's stacks; report's icicle is by
# stack; the frames' methods outlive their objects and classes;
# HeapDump.track(stacks: true) (stacks_track.rb).
SUITE=ext/stacks
. "$(dirname "$0")/lib.sh"
needs jq jq

d=$TMP/d
mkdir "$d"
if ruby "$TOP/tests/ext/stacks_prog.rb" "$d" >"$TMP/prog.out" 2>"$TMP/prog.err" &&
	grep -qx done "$TMP/prog.out"; then ok run; else
	notok run "stacks_prog.rb failed: $(tail -c 600 "$TMP/prog.err")"
	exit 0
fi
B=$d/before.json
A=$d/after.json

# the Ruby API: a kept row's stack, outermost first, ends in make_row
# called by KeepController#index
st=$(sed -n 's/^stack //p' "$TMP/prog.out")
case $st in
*KeepController#index*Helper.make_row) ok allocation-stack ;;
*) notok allocation-stack "got '$st'" ;;
esac

# the fork: dump has them (after.json was written by the child)
n=$(grep -c '"type":"STACK"' "$A")
s=$(grep -c '"stack":' "$A")
if [ "$n" -gt 0 ] && [ "$s" -gt 1000 ]; then ok fork-dump-has-stacks; else
	notok fork-dump-has-stacks "$n STACK lines, $s objects with a stack"
fi
# jq reads every line (a dump_all reader sees two more record types)
if jq -e . "$A" >/dev/null 2>&1; then ok jq-reads; else notok jq-reads "jq failed"; fi
check_rc strict-reads 0 "$HEAPDUMP" stats -q --strict "$A"

# stats --by stack: the top stack is make_row under KeepController
"$HEAPDUMP" stats -q "$A" --by stack -f json -n 0 >"$TMP/st.json" 2>"$TMP/err"
top=$(jq -r '.rows[0].frames | map(.label) | join(";")' "$TMP/st.json" 2>/dev/null)
case $top in
*KeepController#index*Helper.make_row) ok stats-top-is-keep ;;
*) notok stats-top-is-keep "top stack '$top' $(head -c 300 "$TMP/err")" ;;
esac
keep=$(jq '[.rows[] | select(any(.frames[]; .label == "KeepController#index")) | .count] | add // 0' "$TMP/st.json")
drop=$(jq '[.rows[] | select(any(.frames[]; .label == "DropController#index")) | .count] | add // 0' "$TMP/st.json")
# 210 rows kept, a Hash, 3 Strings and an Array each (at least 4)
if [ "$keep" -ge 840 ] && [ "$drop" -lt $((keep / 20)) ]; then ok stats-keep-not-drop; else
	notok stats-keep-not-drop "KeepController $keep objects, DropController $drop"
fi

# diff --by stack: what is new in AFTER is KeepController's
"$HEAPDUMP" diff -q "$B" "$A" --by stack -f json -n 0 >"$TMP/diff.json" 2>"$TMP/err"
dk=$(jq '[.stacks.rows[] | select(any(.frames[]; .label == "KeepController#index")) | .count] | add // 0' "$TMP/diff.json" 2>/dev/null)
dd=$(jq '[.stacks.rows[] | select(any(.frames[]; .label == "DropController#index")) | .count] | add // 0' "$TMP/diff.json" 2>/dev/null)
dtop=$(jq -r '.stacks.rows[0].frames | map(.label) | join(";")' "$TMP/diff.json" 2>/dev/null)
case $dtop in
*KeepController#index*Helper.make_row)
	if [ "${dk:-0}" -ge 800 ] && [ "${dd:-0}" -lt $((dk / 20)) ]; then ok diff-keep-not-drop; else
		notok diff-keep-not-drop "KeepController $dk new objects, DropController $dd"
	fi ;;
*) notok diff-keep-not-drop "top stack '$dtop' $(head -c 300 "$TMP/err")" ;;
esac
"$HEAPDUMP" diff -q "$B" "$A" --by stack >"$TMP/diff.txt" 2>&1
check_grep diff-text "<- KeepController#index" "$TMP/diff.txt"

# leaks: the suspect's allocation stacks, in text and JSON
"$HEAPDUMP" leaks -q "$B" "$A" >"$TMP/leaks.txt" 2>&1
check_grep leaks-text-stacks "allocation stacks of what it keeps alive" "$TMP/leaks.txt"
"$HEAPDUMP" leaks -q "$B" "$A" -f json >"$TMP/leaks.json" 2>"$TMP/err"
lk=$(jq -r '.suspects[0].stacks.rows[0].frames | map(.label) | join(";")' "$TMP/leaks.json" 2>/dev/null)
case $lk in
*KeepController#index*Helper.make_row) ok leaks-json-stacks ;;
*) notok leaks-json-stacks "suspect 1's first stack '$lk' $(head -c 300 "$TMP/err")" ;;
esac

# the Ruby API: each described suspect's stacks (Leaks::Suspect#stacks,
# every row) are leaks -f json --sites 0's, and its first 5 rows the
# default leaks -f json's and Leaks#as_json's; nil past the described
cat >"$TMP/lstacks.rb" <<'RB'
require "heapdump"
require "json"
b, a = ARGV.first(2).map { |f| HeapDump.load(f) }
l = b.leaks(a)
top = ->(st) { st && st.merge(rows: st[:rows].first(5)) }
all = l.shown.map(&:stacks)
puts JSON.generate(all)
puts JSON.generate(all.map(&top))
puts JSON.generate(l.as_json["suspects"].map { |s| s["stacks"] })
puts JSON.generate(l.suspects.drop(l.shown.size).map(&:stacks).uniq)
puts l.shown.first.stacks[:rows].first[:frames].map { |f| f[:label] }.join(";")
RB
cp "$B" "$TMP/lb.json"
cp "$A" "$TMP/la.json"
cp "$B.hdmeta" "$TMP/lb.json.hdmeta" 2>/dev/null
cp "$A.hdmeta" "$TMP/la.json.hdmeta" 2>/dev/null
if ruby "$TMP/lstacks.rb" "$TMP/lb.json" "$TMP/la.json" >"$TMP/lstacks.out" 2>"$TMP/lstacks.err"; then
	"$HEAPDUMP" leaks -q "$B" "$A" -f json --sites 0 >"$TMP/leaks0.json" 2>"$TMP/err"
	check ruby-leaks/stacks-all "$(jq -c '[.suspects[:.totals.shown][] | .stacks]' "$TMP/leaks0.json")" \
		"$(sed -n 1p "$TMP/lstacks.out" | jq -c .)"
	check ruby-leaks/stacks-first-5 "$(jq -c '[.suspects[:.totals.shown][] | .stacks]' "$TMP/leaks.json")" \
		"$(sed -n 2p "$TMP/lstacks.out" | jq -c .)"
	check ruby-leaks/as-json-stacks "$(jq -c '[.suspects[:.totals.shown][] | .stacks]' "$TMP/leaks.json")" \
		"$(sed -n 3p "$TMP/lstacks.out" | jq -c .)"
	check ruby-leaks/not-described "$(jq -c 'if .totals.groups > .totals.shown then [null] else [] end' "$TMP/leaks0.json")" \
		"$(sed -n 4p "$TMP/lstacks.out")"
	case $(sed -n 5p "$TMP/lstacks.out") in
	*KeepController#index*Helper.make_row) ok ruby-leaks/keep-stack ;;
	*) notok ruby-leaks/keep-stack "suspect 1's first stack '$(sed -n 5p "$TMP/lstacks.out")'" ;;
	esac
else
	notok ruby-leaks/run "$(tail -c 400 "$TMP/lstacks.err")"
fi

# the numbers equal an independent count over the JSON, by stack and by
# frame, from the dump and from its store
ruby "$TOP/tests/ext/stacks_count.rb" "$A" >"$TMP/count.json" 2>"$TMP/err" ||
	notok count "stacks_count.rb: $(head -c 300 "$TMP/err")"
"$HEAPDUMP" index -q "$A" -o "$TMP/a.hds" 2>"$TMP/err" || notok index "$(head -c 300 "$TMP/err")"
for src in "$A" "$TMP/a.hds"; do
	tag=dump
	[ "$src" = "$A" ] || tag=store
	"$HEAPDUMP" stats -q --all "$src" --by stack -f json -n 0 >"$TMP/s.json" 2>"$TMP/err"
	"$HEAPDUMP" stats -q --all "$src" --by frame -f json -n 0 >"$TMP/f.json" 2>"$TMP/err"
	got=$(jq -S -c '[.rows[] | {key: (.frames | map("\(.label // "\(.class)#\(.method)")|\(.file // "")|\(.line // "")") | join(" > ")), v: [.count, .memsize]}] | group_by(.key) | map({(.[0].key): [(map(.v[0]) | add), (map(.v[1]) | add)]}) | add' "$TMP/s.json")
	want=$(jq -S -c '.stacks' "$TMP/count.json")
	if [ -n "$got" ] && [ "$got" = "$want" ]; then ok $tag/by-stack-equals-count; else
		notok $tag/by-stack-equals-count "$(printf '%s\n%s' "$got" "$want" | cut -c1-300)"
	fi
	got=$(jq -S -c '[.rows[] | {key: (.frame | "\(.label // "\(.class)#\(.method)")|\(.file // "")|\(.line // "")"), v: [.count, .memsize]}] | group_by(.key) | map({(.[0].key): [(map(.v[0]) | add), (map(.v[1]) | add)]}) | add' "$TMP/f.json")
	want=$(jq -S -c '.frames' "$TMP/count.json")
	if [ -n "$got" ] && [ "$got" = "$want" ]; then ok $tag/by-frame-equals-count; else
		notok $tag/by-frame-equals-count "$(printf '%s\n%s' "$got" "$want" | cut -c1-300)"
	fi
done

# heapdump flame --by stack (folded, memsize) draws the store's stacks:
# what it puts under KeepController and Helper.make_row is what
# stats --by stack counts there
got=$("$HEAPDUMP" flame -q "$A" --by stack 2>"$TMP/err" | awk '/KeepController/ && / [0-9]+$/ { split($0, a, " "); st = substr($0, 1, length($0) - length(a[length(a)]) - 1); if (st ~ /Helper\.make_row$/) s += a[length(a)] } END { print s + 0 }')
want=$("$HEAPDUMP" stats -q "$A" --by stack -f json -n 0 | jq '[.rows[] | select((.frames | map(.label) | join(";")) | (test("KeepController") and test("Helper\\.make_row$"))) | .memsize] | add')
if [ "$got" -gt 0 ] && [ "$got" = "$want" ]; then ok flame-by-stack; else
	notok flame-by-stack "flame $got, stats $want: $(head -c 300 "$TMP/err")"
fi

# the Ruby API's flame graphs (Heap#flame) are heapdump flame -f folded's,
# byte for byte, by stack, site and path, counted, in bytes and retained;
# a bad argument is an ArgumentError
cat >"$TMP/flame.rb" <<'RB'
require "heapdump"
h = HeapDump.load(ARGV[0])
ARGV[1..].each_slice(2) { |by, m| File.binwrite(ARGV[0] + ".#{by}.#{m}", h.flame(by: by.to_sym, metric: m.to_sym)) }
print %i[by metric format].map { |k| begin; h.flame(k => :nope); "none"; rescue ArgumentError; "ArgumentError"; end }.join(" ")
RB
cp "$A" "$TMP/fa.json"
combos="stack memsize stack count stack retained site count path memsize path count"
check ruby-flame/bad-arguments "ArgumentError ArgumentError ArgumentError" \
	"$(ruby "$TMP/flame.rb" "$TMP/fa.json" $combos 2>"$TMP/flame.err" || head -c 300 "$TMP/flame.err")"
set -- $combos
while [ $# -gt 1 ]; do
	"$HEAPDUMP" flame -q -f folded --by "$1" -m "$2" "$TMP/fa.json" >"$TMP/want.folded" 2>"$TMP/err"
	if [ -s "$TMP/want.folded" ] && cmp -s "$TMP/want.folded" "$TMP/fa.json.$1.$2"; then ok "ruby-flame/$1-$2"; else
		notok "ruby-flame/$1-$2" "Heap#flame differs from heapdump flame: $(wc -l <"$TMP/want.folded") lines, $(cat "$TMP/fa.json.$1.$2" 2>/dev/null | wc -l) from Ruby $(head -c 200 "$TMP/flame.err")"
	fi
	shift 2
done

# report: the growth's icicle is by stack, its total heapdump flame's
# over the same dumps, and KeepController#index one of its frames
"$HEAPDUMP" report -q "$B" "$A" -o "$TMP/report.html" 2>"$TMP/err"
want=$("$HEAPDUMP" flame -q --by stack "$B" "$A" | awk '{ s += $NF } END { print "stack", s }')
got=$(sed -n 's/.*<svg id="growth-flame".* data-by="\([a-z]*\)" data-total="\([0-9]*\)".*/\1 \2/p' "$TMP/report.html")
check report-icicle-by-stack "$want" "$got"
check_grep report-icicle-keep '<title>KeepController#index ' "$TMP/report.html"
# the report's data (hd_leak_session_write_json) has each described
# suspect's stacks, the first 5 rows, as leaks -f json writes them
sed -n 's/.*<script type="application\/json" id="leak-data">\(.*\)<\/script>.*/\1/p' \
	"$TMP/report.html" >"$TMP/report.json"
check report-data-stacks "$(jq -c '[.suspects[:.totals.shown][] | .stacks]' "$TMP/leaks.json")" \
	"$(jq -c '[.suspects[] | .stacks]' "$TMP/report.json" 2>&1)"

# the STACK and FRAME lines last (another part of a parallel build than
# the objects): the same store on 1 and 3 threads, the same counts
{ grep -v '"type":"STACK"\|"type":"FRAME"' "$A"; grep '"type":"STACK"\|"type":"FRAME"' "$A"; } >"$TMP/moved.json"
"$HEAPDUMP" index -q -j1 "$TMP/moved.json" -o "$TMP/m1.hds"
"$HEAPDUMP" index -q -j3 "$TMP/moved.json" -o "$TMP/m3.hds"
check parallel/same-store "" "$(cmp "$TMP/m1.hds" "$TMP/m3.hds" 2>&1)"
check parallel/same-counts "$("$HEAPDUMP" stats -q --all "$A" --by frame -f json -n 0 | jq -c .rows)" \
	"$("$HEAPDUMP" stats -q --all "$TMP/m3.hds" --by frame -f json -n 0 | jq -c .rows)"

# the same dump without its stacks: the same plain stats
grep -v '"type":"STACK"\|"type":"FRAME"' "$A" | sed 's/, "stack":[0-9]*//' >"$TMP/nostack.json"
cp "$A.hdmeta" "$TMP/nostack.json.hdmeta" 2>/dev/null
"$HEAPDUMP" stats -q "$A" | sed "1d;/^process /d" >"$TMP/with.txt"
"$HEAPDUMP" stats -q "$TMP/nostack.json" | sed "1d;/^process /d" >"$TMP/without.txt"
if cmp -s "$TMP/with.txt" "$TMP/without.txt" && [ -s "$TMP/with.txt" ]; then ok same-stats-without-stacks; else
	notok same-stats-without-stacks "$(diff "$TMP/with.txt" "$TMP/without.txt" | head -5)"
fi

# a dump without stacks: said, exit 1, never an empty table
ruby "$TOP/tests/ext/stacks_prog.rb" "$d" plain >/dev/null 2>"$TMP/prog.err" ||
	notok run-plain "$(tail -c 300 "$TMP/prog.err")"
check_rc plain/by-stack-exit-1 1 "$HEAPDUMP" stats -q "$d/plain.json" --by stack
"$HEAPDUMP" stats -q "$d/plain.json" --by stack >"$TMP/out" 2>&1
check_grep plain/by-stack-says-so "has no allocation stacks" "$TMP/out"
check_rc plain/diff-by-stack-exit-1 1 "$HEAPDUMP" diff -q "$d/plain.json" "$d/plain.json" --by stack
"$HEAPDUMP" leaks -q "$d/plain.json" "$d/plain2.json" -f json >"$TMP/pl.json" 2>/dev/null
check plain/leaks-json-stacks-null "true null" "$(jq -r '"\(.suspects | length > 0) \(.suspects[0].stacks)"' "$TMP/pl.json" 2>/dev/null)"
# require "heapdump/signal" with HEAPDUMP_STACKS=1 traces with stacks;
# bad options raise ArgumentError
check signal-env "true" "$(HEAPDUMP_STACKS=1 HEAPDUMP_STACK_SAMPLE=1 ruby -rheapdump/signal -e 'x = "a" * 3; print HeapDump.tracing_stacks? && !HeapDump.allocation_stack(x).nil?' 2>&1)"
check bad-options "ArgumentError ArgumentError" "$(ruby -rheapdump -e 'r = [{ sample: 0 }, { depth: 257 }].map { |o| begin; HeapDump.trace(stacks: true, **o) {}; "none"; rescue ArgumentError; "ArgumentError"; end }; print r.join(" ")' 2>&1)"
check_rc by-stack-alone 2 "$HEAPDUMP" stats -q "$A" --by stack,class

# the frames' methods are kept alive by the table: 200 singleton methods,
# called once each, their objects and classes dropped and the GC run;
# the dump still names every frame (unmarked, a freed method's slot
# taken by another object made rb_profile_frame_path abort: frame2iseq)
cat >"$TMP/gone.rb" <<'RB'
require "heapdump"
HeapDump.trace(stacks: true, sample: 1) do
  200.times do |i|
    o = Object.new
    o.instance_eval("def tmp; Array.new(3) { |x| x.to_s }; end", "gone#{i}.rb", 1)
    o.tmp
  end
  4.times { GC.start(full_mark: true, immediate_sweep: true); Array.new(100_000) { Object.new } }
  HeapDump.dump(ARGV[0])
end
print "done"
RB
check frames-kept-alive/runs done "$(ruby "$TMP/gone.rb" "$TMP/gone.json" 2>"$TMP/gone.err" || head -c 300 "$TMP/gone.err")"
check frames-kept-alive/named 200 "$(grep '"type":"FRAME"' "$TMP/gone.json" 2>/dev/null | grep -o '"file":"gone[0-9]*\.rb"' | sort -u | wc -l)"

# HeapDump.track(stacks: true): counts by stack, split by caller
# (stacks_track.rb)
SUITE=$SUITE ruby "$TOP/tests/ext/stacks_track.rb" 2>"$TMP/track.err"
rc=$?
[ $rc -eq 0 ] || notok track/ruby-suite "stacks_track.rb exited $rc: $(tail -c 600 "$TMP/track.err")"
exit 0
