#!/bin/sh
# input_trust.sh - input that must never read as a right answer: a file
# that is not a heap dump (a source file, an empty file, mostly junk, a
# store on standard input) is refused by every command; gzip with zero
# padding is read; records without an address and out-of-range numbers
# are reported; memsize sums saturate and say so; generation 2^64-1 reads
# the same from a dump and from its store; replace-class writes no NUL.
# Every input is generated here, in a temporary directory.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs gzip gzip

HD=$HEAPDUMP
D="$DATA/ok_ruby3.1_traced.json"
cd "$TMP" || exit 1

# a small, valid dump in the Ruby 3.1 layout
base() {
	printf '%s\n' \
		'{"type":"ROOT", "root":"vm", "references":["0x7f0000000010"]}' \
		'{"address":"0x7f0000000010", "type":"ARRAY", "class":"0x7f00000000a0", "length":1, "references":["0x7f0000000020"], "memsize":40}' \
		'{"address":"0x7f0000000020", "type":"STRING", "class":"0x7f00000000b0", "bytesize":1, "value":"a", "memsize":40}'
}
base >base.json

# ---- not a heap dump (a wrong path must never read as "no leak") ----
cat >app.rb <<'EOF'
# frozen_string_literal: true
require "json"

class PriceCalculator
  CACHE = {}
  def price(item) = CACHE[item] ||= item.cost * 2
end
EOF
MSG='app\.rb: not a heap dump \(line 1: "# frozen_string_literal: true"\)$'
addr=0x7f0000000010
# every command that reads a dump refuses it, exit 1, with the one line
for cmd in "stats app.rb" "stats --strict app.rb" "index app.rb -o x.hds" \
	"diff app.rb app.rb" "diff base.json app.rb" "leaks app.rb app.rb" \
	"leaks base.json app.rb" "leaks base.json base.json app.rb" \
	"roots-of app.rb $addr" "path app.rb $addr" "subgraph-of app.rb $addr" \
	"interface-with app.rb --address $addr" "top app.rb" \
	"dominators app.rb $addr" "to-gml app.rb --address $addr" \
	"to-dot app.rb --address $addr" "replace-class app.rb -o rc.json" \
	"roots-of base.json --from app.rb" "interface-with base.json app.rb"; do
	n=$(echo "$cmd" | tr ' ' '_')
	# shellcheck disable=SC2086
	"$HD" $cmd -q >out 2>err
	rc=$?
	check "not-a-dump/$n/exit" 1 "$rc"
	case $cmd in
	"stats --strict"*) check_grep "not-a-dump/$n/message" 'app\.rb:1:1: ' err ;;
	*--from*|"interface-with base.json"*)
		check_grep "not-a-dump/$n/message" "^heapdump: --from app\.rb: $MSG" err ;;
	*) check_grep "not-a-dump/$n/message" "^heapdump: $MSG" err ;;
	esac
done
if [ -e x.hds ]; then notok not-a-dump/no-index-output "x.hds was written"; else
	ok not-a-dump/no-index-output
fi
# no table of zeros, no "no suspects": nothing on standard output
"$HD" stats -q app.rb >out 2>err
check not-a-dump/stats-stdout "" "$(cat out)"
"$HD" leaks -q app.rb app.rb >out 2>err
check not-a-dump/leaks-stdout "" "$(cat out)"
# the lines of a non-dump are not listed one by one: one error says it
check not-a-dump/one-line "1" "$(wc -l <err | tr -d ' ')"
cat app.rb | "$HD" stats -q - >out 2>err
check not-a-dump/stdin-exit 1 $?
check_grep not-a-dump/stdin-message '^heapdump: \(stdin\): not a heap dump \(line 1: ' err
gzip -c app.rb >app.rb.gz
check_rc not-a-dump/gzip 1 "$HD" stats -q app.rb.gz
check_grep not-a-dump/gzip-message 'app\.rb\.gz: not a heap dump \(line 1: ' "$TMP/err"

# the cited line is escaped and cut: no raw control byte on the terminal
{
	printf '\033[2J\033[31mred'
	head -c 300 /dev/zero | tr '\0' 'x'
	printf '\nmore\n'
} >esc.json
"$HD" stats -q esc.json >out 2>err
check escaped/exit 1 $?
check_grep escaped/message 'esc\.json: not a heap dump \(line 1: "\\x1b\[2J\\x1b\[31mredx+"\.\.\.\)$' err
check escaped/no-raw-escape 0 "$(tr -d '\n' <err | LC_ALL=C grep -c "$(printf '\033')")"
check escaped/cut "1" "$([ "$(wc -c <err)" -lt 200 ] && echo 1)"

# an empty file (a failed dump) is not "no leak"
: >empty.json
for cmd in "stats empty.json" "stats --strict empty.json" \
	"index empty.json -o e.hds" "leaks empty.json empty.json" \
	"diff base.json empty.json" "top empty.json"; do
	n=$(echo "$cmd" | tr ' ' '_')
	# shellcheck disable=SC2086
	"$HD" $cmd -q >out 2>err
	check "empty/$n/exit" 1 $?
	check_grep "empty/$n/message" '^heapdump: empty\.json: not a heap dump \(empty\)$' err
done
printf '\n\n\n' >blank.json
check_rc empty/blank 1 "$HD" stats -q blank.json
check_grep empty/blank-message 'blank\.json: not a heap dump \(only blank lines\)$' "$TMP/err"
gzip -c </dev/null >empty.json.gz
check_rc empty/gzip 1 "$HD" stats -q empty.json.gz
check_grep empty/gzip-message 'empty\.json\.gz: not a heap dump \(empty\)$' "$TMP/err"
# an empty selection file is fine: diff -o writes one when nothing is new
# (that it selects nothing is another message)
check_rc empty/from-selection 1 "$HD" roots-of -q base.json --from empty.json
check_grep empty/from-selection-message 'the selection picks no object' "$TMP/err"
check_rc empty/interface-diff 0 "$HD" interface-with -q base.json empty.json --summary

# a dump cut within its first record (a crash before the first flush
# completed a line): not a heap dump, and why
printf '{"address":"0x7f0000000010", "type":"ARR' >cut.json
check_rc cut-first-record/exit 1 "$HD" stats -q cut.json
check_grep cut-first-record/message 'cut\.json: not a heap dump \(line 1: "\{\\"address\\":\\"0x7f0000000010\\", \\"type\\":\\"ARR"; the last line is cut short: the dump is incomplete\)$' "$TMP/err"

# mostly not heap records
{ base; printf 'log line %s\n' 1 2 3 4; } >mostly.json
check_rc mostly/exit 1 "$HD" stats -q mostly.json
check_grep mostly/message 'mostly\.json: not a heap dump \(line 4: "log line 1"; 4 of 7 lines are not heap records\)$' "$TMP/err"
# a dump with a few bad lines stays lenient
{ base; printf 'log line 1\n'; } >some.json
check_rc some-bad/exit 0 "$HD" stats -q some.json
check_grep some-bad/reported 'some\.json:4:1: not a JSON object \(skipped\)$' "$TMP/err"
# program output before the records (dump_all(output: :stdout)):
# reported, in order, once a record shows it is a dump
{ printf 'Booting\nwarming up\n'; base; } >head.json
check_rc head-junk/exit 0 "$HD" stats -q --format json head.json
check head-junk/objects 2 "$(jq .totals.objects "$TMP/out")"
check head-junk/reported "head.json:1:1 head.json:2:1" \
	"$(sed -n 's/^heapdump: \(head\.json:[0-9]*:[0-9]*\): .*(skipped)$/\1/p' "$TMP/err" | tr '\n' ' ' | sed 's/ $//')"
# a real dump behind 32 lines of something else: refused at line 32
{ seq 1 40 | sed 's/^/output /'; cat "$D"; } >late.json
check_rc late-records/exit 1 "$HD" stats -q late.json
check_grep late-records/message 'late\.json: not a heap dump \(line 1: "output 1"; no record in its first 32 lines\)$' "$TMP/err"

# ---- a store on standard input: refused, with the way out ----
"$HD" index -q base.json -o base.hds 2>err || notok store/index "$(cat err)"
check_rc store/by-path 0 "$HD" stats -q base.hds
cat base.hds | "$HD" stats -q - >out 2>err
check store/stdin-exit 1 $?
check_grep store/stdin-message '^heapdump: \(stdin\): not a heap dump but a heapdump store' err
check store/stdin-no-output "" "$(cat out)"
check_rc store/from 1 "$HD" roots-of -q base.json --from base.hds
check_grep store/from-message 'base\.hds: not a heap dump but a heapdump store' "$TMP/err"

# ---- gzip followed by zero padding (gzip -t accepts it) ----
gzip -c "$D" >pad.json.gz
head -c 4096 /dev/zero >>pad.json.gz
if gzip -t pad.json.gz 2>/dev/null; then ok gzip-pad/gzip-accepts; else
	notok gzip-pad/gzip-accepts "gzip -t refuses the padded file"
fi
full=$("$HD" stats -q --all --format json "$D" 2>/dev/null | jq .totals.objects)
check_rc gzip-pad/exit 0 "$HD" stats -q --all --format json pad.json.gz
check gzip-pad/objects "$full" "$(jq .totals.objects "$TMP/out")"
check_rc gzip-pad/index 0 "$HD" index -q pad.json.gz -o pad.hds
# zeros then garbage is not padding
{ gzip -c "$D"; head -c 100 /dev/zero; printf 'garbage'; } >garbage.json.gz
check_rc gzip-pad/garbage 1 "$HD" stats -q garbage.json.gz
check_grep gzip-pad/garbage-message 'after the zero padding' "$TMP/err"

# ---- a record without an address ----
{ base | head -1; echo '{"type":"METADATA", "version":"9.9", "pid":4242}'; base | tail -2; } >noaddr.json
check_rc no-address/lenient 0 "$HD" stats -q --format json noaddr.json
check no-address/objects 2 "$(jq .totals.objects "$TMP/out")"
check_grep no-address/reported '^heapdump: noaddr\.json:2:1: record has no address \(skipped\)$' "$TMP/err"
check_rc no-address/strict 1 "$HD" stats -q --strict noaddr.json
check_grep no-address/strict-message '^heapdump: noaddr\.json:2:1: record has no address$' "$TMP/err"

# ---- replace-class: a salvaged ROOT line has no NUL byte ----
{ echo '{"type":"ROOT", "root":"vm", "references":["0x7f0000000010", }'; base | tail -2; } >root.json
check_rc replace-class/exit 0 "$HD" replace-class -q root.json -o named.json
check replace-class/no-nul "$(wc -c <named.json | tr -d ' ')" "$(tr -d '\000' <named.json | wc -c | tr -d ' ')"
check replace-class/root-line '{"type":"ROOT", "root":"vm", "references":["0x7f0000000010"]}' "$(head -1 named.json)"
check_rc replace-class/strict 0 "$HD" stats -q --strict named.json

# ---- numbers ----
# memsize past 2^64: saturated, reported with its line; strict fails
{ base | head -2; echo '{"address":"0x7f0000000020", "type":"STRING", "memsize":99999999999999999999}'; } >big.json
check_rc numbers/over-exit 0 "$HD" stats -q --format json big.json
check_grep numbers/over-reported '^heapdump: big\.json:3:57: number out of range: saturated at 2\^64-1 \(repaired\)$' "$TMP/err"
check numbers/over-saturated true "$(jq .totals.memsize_saturated "$TMP/out")"
check_rc numbers/over-strict 1 "$HD" stats -q --strict big.json
check_grep numbers/over-strict-message '^heapdump: big\.json:3:57: number out of range' "$TMP/err"
# sums stop at 2^64-1 and say so (JSON, text), from a dump and a store
{ base | head -2; echo '{"address":"0x7f0000000020", "type":"STRING", "memsize":18446744073709551615}'; } >sum.json
check_rc numbers/sum-exit 0 "$HD" stats -q --format json sum.json
check_grep numbers/sum-total '"totals":\{"objects":2,"memsize":18446744073709551615,' "$TMP/out"
check numbers/sum-flag true "$(jq .totals.memsize_saturated "$TMP/out")"
check numbers/sum-no-report "" "$(cat "$TMP/err")"
check_rc numbers/sum-text 0 "$HD" stats -q sum.json
check_grep numbers/sum-text-says '^memsize +.*saturated' "$TMP/out"
"$HD" index -q sum.json -o sum.hds
check_rc numbers/sum-store 0 "$HD" stats -q --format json sum.hds
check numbers/sum-store-flag true "$(jq .totals.memsize_saturated "$TMP/out")"
check_rc numbers/sum-exact 0 "$HD" stats -q --format json base.json
check numbers/sum-exact-flag false "$(jq '.totals|has("memsize_saturated")' "$TMP/out")"
# generation 2^64-1: reported and untraced, from the dump and the store
{ base | head -2; echo '{"address":"0x7f0000000020", "type":"STRING", "generation":18446744073709551615, "memsize":40}'; } >gen.json
check_rc numbers/gen-exit 0 "$HD" stats -q --by generation --format json gen.json
check_grep numbers/gen-reported '^heapdump: gen\.json:3:[0-9]+: generation out of range' "$TMP/err"
jq -c '[.totals.traced, .groupings[0].rows]' "$TMP/out" >gen-dump
"$HD" index -q gen.json -o gen.hds 2>/dev/null
"$HD" stats -q --by generation --format json gen.hds | jq -c '[.totals.traced, .groupings[0].rows]' >gen-store
check numbers/gen-dump '[0,[{"generation":"(untraced)","count":2,"memsize":80}]]' "$(cat gen-dump)"
check numbers/gen-same "$(cat gen-dump)" "$(cat gen-store)"
check_rc numbers/gen-strict 1 "$HD" stats -q --strict gen.json
