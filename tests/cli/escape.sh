#!/bin/sh
# escape.sh - names from a dump reach people escaped, and a path has one
# spelling everywhere (issue 11, items 16 and 8).
#
# Terminal injection: real Ruby dumps (made at test time) with a method
# named "m\e[2J" and objects allocated in eval'd code whose file is
# "f\e[31mile<TAB>1.rb" (Ruby writes file raw: a real ESC and a real tab
# in the dump), and a class renamed in the dump to
# "Foo\u001b[31mRED\u0085\tX" plus a raw 0xff byte (as Ruby <= 3.3.6
# writes names raw). Every human-readable output (stats, path, top,
# dominators, leaks, interface-with --summary, diff) and every TSV output
# must hold no ESC, C1, CR or invalid UTF-8 byte, show the escaped forms,
# and keep TSV rows whole.
#
# Paths: a file 'we"ird\dir/x.rb', written raw by ObjectSpace.dump_all
# and escaped by HeapDump.dump (the gem); from the dump and from its
# store, text and JSON, the same path, and --file selects it by its bytes.
. "$(dirname "$0")/../lib.sh"
needs ruby ruby
needs jq jq

HD=$HEAPDUMP
D="$TMP/esc"
mkdir -p "$D"
EXT="$TOP/$B/ext"
case $B in /*) EXT="$B/ext" ;; esac

cat >"$TMP/gen.rb" <<'EOF'
require "objspace"
ObjectSpace.trace_object_allocations_start
class EscTarget; def initialize; @a = "x" * 100; end; end
$hold = []
class Holder
  define_method(:"m\e[2J") { $hold << [rand, EscTarget.new] }
end
dir = ARGV[0]
ObjectSpace.dump_all(output: File.open("#{dir}/before.json", "w"))
h = Holder.new
20.times { h.send(:"m\e[2J") }
eval('10.times { $hold << EscTarget.new }', binding, "f\e[31mile\t1.rb", 3)
GC.start
ObjectSpace.dump_all(output: File.open("#{dir}/after.json", "w"))
10.times { h.send(:"m\e[2J") }
GC.start
ObjectSpace.dump_all(output: File.open("#{dir}/later.json", "w"))
# the class renamed as a hostile dump would name it
%w[before after later].each do |n|
  f = "#{dir}/#{n}.json"
  s = File.binread(f)
  s.gsub!(%q("name":"EscTarget"), %q("name":"Foo\u001b[31mRED\u0085\tX).b + "\xff".b + %q("))
  File.binwrite(f, s)
end
EOF
if ! ruby "$TMP/gen.rb" "$D" 2>"$TMP/gen.err"; then
	notok gen "ruby failed: $(head -c 300 "$TMP/gen.err")"
	exit 1
fi

NAME='Foo\u001b[31mRED\u0085\tX\xff'
FILE='f\u001b[31mile\t1.rb'
METHOD='m\u001b[2J'

# clean NAME FILE: no ESC, C1 (0xc2 0x80-0x9f), CR or 0xff byte in FILE
clean() {
	bad=$(LC_ALL=C tr -d -c '\033\015\377' <"$2" | wc -c | tr -d ' ')
	c1=$(LC_ALL=C grep -c "$(printf '\302[\200-\237]')" "$2")
	if [ "$bad" = 0 ] && [ "$c1" = 0 ]; then ok "$1"; else
		notok "$1" "$bad ESC/CR/0xff and $c1 C1 byte(s) in the output"
	fi
}

# has NAME STRING FILE: FILE holds STRING (fixed string)
has() {
	if grep -qF -- "$2" "$3"; then ok "$1"; else
		notok "$1" "'$2' not in $(basename "$3"): $(head -c 300 "$3")"
	fi
}

# text NAME STRING... -- command...: exit 0, clean stdout and stderr,
# stdout holds every STRING
text() {
	n=$1
	shift
	set -- "$@"
	want=""
	while [ "$1" != "--" ]; do
		want="$want
$1"
		shift
	done
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" != 0 ]; then
		notok "$n/exit" "exit $rc: $(head -c 300 "$TMP/err")"
		return
	fi
	clean "$n/clean" "$TMP/out"
	clean "$n/clean-stderr" "$TMP/err"
	printf '%s\n' "$want" | while IFS= read -r w; do
		[ -n "$w" ] && has "$n/shows-$(printf '%s' "$w" | tr -c 'a-zA-Z0-9' '_' | cut -c1-12)" "$w" "$TMP/out"
	done
}

check_rc index 0 "$HD" index -q "$D/after.json" -o "$D/after.hds"
# every hash table has a random key of its own (item 15): nothing that is
# written may depend on it
"$HD" index -q "$D/after.json" -o "$D/again.hds"
check seed/store-identical 0 "$(cmp "$D/after.hds" "$D/again.hds" >/dev/null 2>&1; echo $?)"
"$HD" stats -q "$D/after.json" --by location,class --by method --top 0 -f tsv >"$TMP/s1"
"$HD" stats -q "$D/after.json" --by location,class --by method --top 0 -f tsv >"$TMP/s2"
check seed/stats-identical 0 "$(cmp "$TMP/s1" "$TMP/s2" >/dev/null 2>&1; echo $?)"

for src in after.json after.hds; do
	in="$D/$src"
	text "stats-text-$src" "$NAME" "$FILE" "$METHOD" -- \
		"$HD" stats -q "$in" --by class --by file --by method
	text "stats-tsv-$src" "$NAME" "$FILE" -- \
		"$HD" stats -q "$in" --by class,file -f tsv --top 0
	# every row: grouping, count, memsize and two keys
	rows=$(awk -F'\t' '$1 != "total" && NF != 5' "$TMP/out" | wc -l | tr -d ' ')
	check "stats-tsv-$src/rows-whole" 0 "$rows"
	addr=$(grep -a '"file":"f' "$D/after.json" | head -1 | sed 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/')
	text "path-$src" "$NAME" "$FILE" -- "$HD" path -q "$in" "$addr"
	arr=$(grep -a '"type":"ARRAY".*"method":"m' "$D/after.json" | head -1 | sed 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/')
	text "path-method-$src" "$METHOD" -- "$HD" path -q "$in" "$arr"
	text "dominators-$src" "$NAME" "$FILE" -- "$HD" dominators -q "$in" "$addr"
	text "top-class-$src" "$NAME" -- "$HD" top -q "$in" --by class --top 0
	text "top-tsv-$src" "$NAME" -- "$HD" top -q "$in" --by class --top 0 -f tsv
	rows=$(awk -F'\t' 'NF != 6' "$TMP/out" | wc -l | tr -d ' ')
	check "top-tsv-$src/rows-whole" 0 "$rows"
	text "top-objects-tsv-$src" "$FILE" -- "$HD" top -q "$in" --top 0 -f tsv
	rows=$(awk -F'\t' 'NF != 8' "$TMP/out" | wc -l | tr -d ' ')
	check "top-objects-tsv-$src/rows-whole" 0 "$rows"
done

text leaks "$NAME" -- "$HD" leaks -q "$D/before.json" "$D/after.json" "$D/later.json"
text leaks-tsv -- "$HD" leaks -q -f tsv --min-share 0 "$D/before.json" "$D/after.json" "$D/later.json"
rows=$(awk -F'\t' '$1 == "suspect" && NF != 11' "$TMP/out" | wc -l | tr -d ' ')
check leaks-tsv/rows-whole 0 "$rows"
text diff "$NAME" -- "$HD" diff -q "$D/before.json" "$D/after.json" --by class,method --top 0
text diff-tsv "$NAME" "$METHOD" -- "$HD" diff -q "$D/before.json" "$D/after.json" --by class,method --top 0 -f tsv
rows=$(awk -F'\t' '$1 != "total" && NF != 5' "$TMP/out" | wc -l | tr -d ' ')
check diff-tsv/rows-whole 0 "$rows"
"$HD" diff -q "$D/before.json" "$D/after.json" -o "$D/new.json" >/dev/null 2>&1
text interface-summary "$NAME" -- "$HD" interface-with -q --summary --top 0 "$D/after.json" "$D/new.json"

# messages quote what they are given: a file name with an ESC in it
bad="$D/$(printf 'no\033[2Jsuch').json"
"$HD" stats "$bad" >"$TMP/out" 2>"$TMP/err"
check message/exit 1 "$?"
clean message/clean "$TMP/err"
has message/escaped 'no\u001b[2Jsuch' "$TMP/err"

# JSON keeps the exact bytes, escaped as JSON once (jq reads the invalid
# 0xff byte as U+FFFD, hence the pattern stops before it)
"$HD" stats -q "$D/after.hds" --by class -f json >"$TMP/out"
check json/class-exact 1 "$(jq -r '.groupings[0].rows[].class' "$TMP/out" 2>/dev/null | LC_ALL=C grep -c "^$(printf 'Foo\033\\[31mRED\302\205\tX')")"

# ---- one spelling of a path (item 8) ----
WEIRD='we"ird\dir/x.rb'
cat >"$TMP/weird.rb" <<'EOF'
require "objspace"
gem = ARGV[1] == "gem"
require "heapdump" if gem
class Weird; end
if gem
  HeapDump.trace_allocations_start
else
  ObjectSpace.trace_object_allocations_start
end
$keep = eval('Array.new(3) { Weird.new }', binding, 'we"ird\dir/x.rb', 7)
if gem
  HeapDump.dump(ARGV[0])
else
  ObjectSpace.dump_all(output: File.open(ARGV[0], "w"))
end
EOF
if ! ruby "$TMP/weird.rb" "$D/raw.json" raw 2>"$TMP/gen.err" ||
	! RUBYLIB="$EXT:$TOP/src/lib" ruby "$TMP/weird.rb" "$D/gem.json" gem 2>"$TMP/gen.err"; then
	notok weird/gen "ruby failed (make ext builds the gem): $(head -c 300 "$TMP/gen.err")"
	exit 1
fi
# the two writers: raw (invalid JSON) and escaped
has weird/raw-written-raw '"file":"we"ird\dir/x.rb"' "$D/raw.json"
has weird/gem-written-escaped '"file":"we\"ird\\dir/x.rb"' "$D/gem.json"
for w in raw gem; do
	"$HD" index -q "$D/$w.json" -o "$D/$w.hds" 2>/dev/null
	addr=$(grep -a '"file":"we' "$D/$w.json" | grep -a '"type":"OBJECT"' | head -1 | sed 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/')
	for src in "$w.json" "$w.hds"; do
		in="$D/$src"
		"$HD" stats -q "$in" --by file >"$TMP/out" 2>/dev/null
		check "weird/$src/stats-text" 1 "$(grep -cF " $WEIRD" "$TMP/out")"
		"$HD" stats -q "$in" --by file -f json >"$TMP/out" 2>/dev/null
		check "weird/$src/stats-json" 1 "$(jq -r '.groupings[0].rows[].file' "$TMP/out" | grep -cxF "$WEIRD")"
		"$HD" path -q "$in" "$addr" >"$TMP/out" 2>/dev/null
		check "weird/$src/path-text" 1 "$(grep -cF "Weird (OBJECT) memsize 40, $WEIRD:7" "$TMP/out")"
		"$HD" path -q -f json "$in" "$addr" >"$TMP/out" 2>/dev/null
		check "weird/$src/path-json" "$WEIRD" "$(jq -r '.. | objects | select(.type? == "OBJECT") | .file' "$TMP/out" | head -1)"
		"$HD" roots-of -q "$in" --file "$WEIRD" >"$TMP/out" 2>/dev/null
		check "weird/$src/select-file" 3 "$(grep -ac '"type":"OBJECT"' "$TMP/out")"
		"$HD" roots-of -q "$in" --file 'we\"ird\\dir/x.rb' >"$TMP/out" 2>/dev/null
		check "weird/$src/select-escaped-spelling-no" 0 "$(grep -ac '"type":"OBJECT"' "$TMP/out")"
	done
done
