#!/bin/sh
# tests/cli/flame.sh - heapdump flame (man 1 heapdump-flame) on the leak
# fixtures (data/dumps/leak_*, named_ruby3.1_leak_*) and on a small
# program run at test time on every Ruby (HD_RUBIES, else Debian's and
# /opt/rubies/*): allocation sites traced, a helper called from two
# classes (one keeps what it made), a file name with ';' and a tab, and
# a 3,000-deep linked list.
#  - --by site: every line equals an independent count over the JSON
#    (flame_sites.py), by count and memsize, of one dump and of the
#    growth of two and three dumps (the objects the leak script says
#    leaked);
#  - --by path: the totals are top's reached count and memsize, and the
#    frames of top's ten largest objects total their retained sizes
#    (flame_paths.py, from dominators' chains);
#  - speedscope's own importer (npm speedscope) loads the speedscope
#    output and the folded one with the same totals, pprof-format
#    decodes the pprof output into the folded lines; Debian ships no
#    flamegraph.pl or inferno, so the folded lines are checked one by
#    one;
#  - --by stack on a dump without stacks fails and says so; usage
#    errors exit 2.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs python3 python3
needs node "nodejs (and npm, then: npm ci --prefix tests)"
for m in speedscope pprof-format; do
	[ -d "$TOP/tests/node_modules/$m" ] ||
		{ notok npm-$m "the npm package $m is missing: npm ci --prefix tests (or sh .ci/npm)"; exit 1; }
done

H=$HEAPDUMP
D=$DATA
SITES="python3 $TOP/tests/cli/flame_sites.py"
IMPORT="node $TOP/tests/tools/flame_import.mjs"
rubies=${HD_RUBIES:-/usr/bin/ruby $(ls /opt/rubies/*/bin/ruby 2>/dev/null)}
B3="$D/leak_before.json $D/leak_after.json $D/leak_later.json"

sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

# same NAME A B: the two files hold the same lines, in any order
same() {
	sort "$2" >"$TMP/same.a"
	sort "$3" >"$TMP/same.b"
	if cmp -s "$TMP/same.a" "$TMP/same.b"; then ok "$1"; else
		notok "$1" "$(diff "$TMP/same.a" "$TMP/same.b" | head -5 | tr '\n' '|')"
	fi
}

# folded_lines NAME FILE: each line a stack of nonempty frames and a
# positive count, no control byte, no stack twice
folded_lines() {
	bad=$(LC_ALL=C grep -anv '^[^;]\{1,\}\(;[^;]\{1,\}\)* [1-9][0-9]*$' "$2" | head -3)
	[ -z "$bad" ] && bad=$(LC_ALL=C grep -an '[[:cntrl:]]' "$2" | head -3)
	[ -z "$bad" ] && bad=$(sed 's/ [0-9]*$//' "$2" | sort | uniq -d | head -3)
	[ -s "$2" ] || bad="no line"
	check "$1" "" "$bad"
}

# ---- the program, on every Ruby ----

cat >"$TMP/prog.rb" <<'EOF'
require "objspace"
ObjectSpace.trace_object_allocations_start
KEEP = []
Link = Struct.new(:next)
def helper(n)
  Array.new(n) { |i| "item #{i} " * 3 }
end
class Keeper
  def run = KEEP << helper(50)
end
class Dropper
  def run = helper(20)
end
Keeper.new.run
Dropper.new.run
eval("KEEP << ('x' * 100)", binding, "we;ird\tfile.rb", 7)
chain = nil
3000.times { chain = Link.new(chain) }
KEEP << chain
GC.start
File.open(ARGV[0], "w") { |f| ObjectSpace.dump_all(output: f) }
EOF
for r in $rubies; do
	v=$("$r" -e 'print RUBY_VERSION') || { notok "ruby-$r" "cannot run $r"; continue; }
	P=$TMP/prog_$v.json
	if ! "$r" "$TMP/prog.rb" "$P" 2>"$TMP/err"; then
		notok "$v/dump" "$(head -c 300 "$TMP/err")"
		continue
	fi
	for m in count memsize; do
		check_rc "$v/site-$m-exit" 0 "$H" flame -q --by site -m $m "$P"
		$SITES "$P" $m >"$TMP/want"
		same "$v/site-$m" "$TMP/want" "$TMP/out"
		cp "$TMP/out" "$TMP/site-$m"
	done
	# the kept strings at the helper's line, whichever class called it
	check_grep "$v/site-helper" '/prog\.rb:6 in \* 50$' "$TMP/site-count"
	check_grep "$v/site-escaped" '^we\\x3bird\\x09file\.rb:7 in \* 1$' "$TMP/site-count"
	# the linked list: 3,000 frames deep, cut at 128, totals kept
	"$H" top -q -n 0 -f json "$P" >"$TMP/top.json"
	check_rc "$v/path-exit" 0 "$H" flame -q "$P"
	check "$v/path-total" "$(jq .reached_memsize "$TMP/top.json")" "$(sum "$TMP/out")"
	check "$v/path-deeper" "129" \
		"$(grep -a '(deeper) [0-9]*$' "$TMP/out" | awk -F';' '{ print NF }' | sort -u | tr '\n' ' ' | sed 's/ $//')"
	check_grep "$v/path-list" '^Link \(STRUCT\);Link \(STRUCT\);Link \(STRUCT\);' "$TMP/out"
	check_rc "$v/path-depth-exit" 0 "$H" flame -q --depth 2 "$P"
	check "$v/path-depth" "3" "$(awk -F';' '{ print NF }' "$TMP/out" | sort -n | tail -1)"
	check "$v/path-depth-total" "$(jq .reached_memsize "$TMP/top.json")" "$(sum "$TMP/out")"
	folded_lines "$v/folded-lines" "$TMP/out"
	# retained by site: every reached byte once
	check_rc "$v/retained-exit" 0 "$H" flame -q --by site -m retained "$P"
	check "$v/retained-total" "$(jq .reached_memsize "$TMP/top.json")" "$(sum "$TMP/out")"
done

# ---- retention paths against top ----

A=$D/leak_after.json
"$H" top -q -n 0 -f json "$A" >"$TMP/top.json"
jq -c '.objects[].object' "$TMP/top.json" >"$TMP/all.ndjson"
"$H" dominators -q -n 0 -f json --from "$TMP/all.ndjson" "$A" >"$TMP/dom.ndjson"
check_rc path/exit 0 "$H" flame -q "$A"
cp "$TMP/out" "$TMP/path.folded"
check path/memsize "$(jq .reached_memsize "$TMP/top.json")" "$(sum "$TMP/out")"
check_rc path/count-exit 0 "$H" flame -q -m count "$A"
check path/count "$(jq .reached "$TMP/top.json")" "$(sum "$TMP/out")"
check_rc path/top-frames 0 python3 "$TOP/tests/cli/flame_paths.py" \
	"$TMP/top.json" "$TMP/dom.ndjson" "$TMP/path.folded" 10
check_grep path/thread '^Ractor \(DATA\);Thread \(DATA\) 1048992$' "$TMP/path.folded"
folded_lines path/folded-lines "$TMP/path.folded"

# ---- the growth of two and three dumps ----

for m in count memsize; do
	check_rc growth3/$m-exit 0 "$H" flame -q --by site -m $m $B3
	$SITES "$D/leak_later.json" $m "$D/leak_expected.json" leaked >"$TMP/want"
	same growth3/$m "$TMP/want" "$TMP/out"
	[ $m = count ] &&
		check growth3/count-total "$(jq .leaked.count "$D/leak_expected.json")" "$(sum "$TMP/out")"
	check_rc growth2/$m-exit 0 "$H" flame -q --by site -m $m "$D/leak_before.json" "$A"
	$SITES "$A" $m "$D/leak_expected.json" leaked >"$TMP/want"
	same growth2/$m "$TMP/want" "$TMP/out"
done
N=$D/named_ruby3.1_leak
check_rc growth3/path-exit 0 "$H" flame -q "${N}_before.json.gz" "${N}_after.json.gz" "${N}_later.json.gz"
"$H" diff -q -f json "${N}_before.json.gz" "${N}_after.json.gz" "${N}_later.json.gz" >"$TMP/diff.json"
check growth3/path-total "$(jq .retained.memsize "$TMP/diff.json")" "$(sum "$TMP/out")"
check_grep growth3/path-named '^LeakyCache \(CLASS\);::CACHE Hash;\[\*\] Request;@body String [1-9][0-9]*$' "$TMP/out"

# ---- speedscope and pprof, read by their own readers ----

check_rc speedscope/exit 0 "$H" flame -q -f speedscope -o "$TMP/a.speedscope.json" "$A"
check_rc speedscope/import 0 $IMPORT speedscope "$TMP/a.speedscope.json"
cp "$TMP/out" "$TMP/ss.json"
check speedscope/total "$(sum "$TMP/path.folded")" "$(jq .total "$TMP/ss.json")"
check speedscope/unit '"bytes"' "$(jq .unit "$TMP/ss.json")"
check speedscope/name '"retention paths (dominator tree)"' "$(jq .name "$TMP/ss.json")"
# each outermost frame's total, as speedscope's call tree has it
jq -r '.top | to_entries[] | "\(.key) \(.value)"' "$TMP/ss.json" >"$TMP/ss.top"
awk '{ n = $NF; sub(/ [0-9]+$/, ""); split($0, f, ";"); t[f[1]] += n }
	END { for (k in t) print k, t[k] }' "$TMP/path.folded" >"$TMP/folded.top"
same speedscope/frames "$TMP/folded.top" "$TMP/ss.top"
# the folded output, through speedscope's importer of collapsed stacks
cp "$TMP/path.folded" "$TMP/a.folded.txt"
check_rc speedscope/folded-import 0 $IMPORT speedscope "$TMP/a.folded.txt"
check speedscope/folded-total "$(sum "$TMP/path.folded")" "$(jq .total "$TMP/out")"
for by in site path; do
	check_rc pprof/$by-exit 0 "$H" flame -q --by $by -m count -f pprof -o "$TMP/a.pb.gz" "$A"
	check_rc pprof/$by-decode 0 $IMPORT pprof "$TMP/a.pb.gz"
	check pprof/$by-type "objects count" "$(head -1 "$TMP/out")"
	tail -n +2 "$TMP/out" >"$TMP/pprof.folded"
	"$H" flame -q --by $by -m count "$A" >"$TMP/want"
	same pprof/$by-samples "$TMP/want" "$TMP/pprof.folded"
done
# -o is the same bytes as standard output
"$H" flame -q -f speedscope "$A" >"$TMP/stdout.json"
check speedscope/stdout-same "" "$(cmp "$TMP/stdout.json" "$TMP/a.speedscope.json" 2>&1)"

# ---- errors ----

check_rc stack/exit 1 "$H" flame -q --by stack -o "$TMP/none.folded" "$A"
check stack/message "heapdump: $A: this dump has no allocation stacks (record them with HeapDump.trace(stacks: true))" \
	"$(cat "$TMP/err")"
check stack/no-output "" "$(ls "$TMP"/none.folded* 2>/dev/null)"
check_rc usage/by 2 "$H" flame -q --by nothing "$A"
check_grep usage/by-message "--by takes path, site or stack, not 'nothing'" "$TMP/err"
check_rc usage/metric 2 "$H" flame -q -m bytes "$A"
check_rc usage/format 2 "$H" flame -q -f svg "$A"
check_rc usage/four 2 "$H" flame -q $B3 "$A"
check_rc usage/none 2 "$H" flame -q
check_rc usage/output-input 2 "$H" flame -q -o "$A" "$A"
check usage/input-intact "$(wc -c <"$D/leak_after.json")" "$(wc -c <"$A")"

# ---- an empty graph is said ----

grep -v '"type":"ROOT"' "$A" >"$TMP/noroot.json"
check_rc empty/partial-exit 0 "$H" flame -q "$TMP/noroot.json"
check empty/partial-out "" "$(cat "$TMP/out")"
check_grep empty/partial-message "the graph is empty: no object is reached from a GC root \(no ROOT lines: a partial dump; --by site counts every object\)" "$TMP/err"
check_rc empty/no-growth-exit 0 "$H" flame -q "$A" "$A"
check_grep empty/no-growth-message "the graph is empty: no object is new$" "$TMP/err"
