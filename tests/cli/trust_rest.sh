#!/bin/sh
# trust_rest.sh - the rest of issue 11, items 9 and 16.
#
# Item 9: memsize sums past 2^64 stop at 2^64-1 and say so in diff,
# leaks, interface-with and top/dominators as in stats (hand-written
# dumps whose objects weigh 2^63 bytes each: a wrapping sum gives a small
# number). Item 16: user-given paths, mistyped commands and options are
# escaped in messages (ESC from a file name or an argument), and the
# bidi override and isolate characters (U+202A-U+202E, U+2066-U+2069)
# are escaped as \u202e in text output.
. "$(dirname "$0")/../lib.sh"

needs jq jq
HD=$HEAPDUMP
D="$TMP/tr"
mkdir -p "$D"
ESC=$(printf '\033')
RLO=$(printf '\342\200\256')   # U+202E RIGHT-TO-LEFT OVERRIDE
FSI=$(printf '\342\201\250')   # U+2068 FIRST STRONG ISOLATE

# raw_esc NAME FILE: FILE holds no ESC byte
raw_esc() {
	if grep -q "$ESC" "$2"; then
		notok "$1" "a raw ESC: $(head -c 300 "$2" | od -c | head -5)"
	else
		ok "$1"
	fi
}

# ---- item 9: saturated sums ----

BIG=9223372036854775808
cat >"$D/before.json" <<J
{"type":"ROOT", "root":"vm", "references":["0x10"]}
{"address":"0x10", "type":"ARRAY", "references":[], "memsize":40}
{"address":"0x90", "type":"ARRAY", "references":[], "memsize":40}
J
cat >"$D/after.json" <<J
{"type":"ROOT", "root":"vm", "references":["0x10"]}
{"address":"0x10", "type":"ARRAY", "references":["0x20"], "memsize":40}
{"address":"0x90", "type":"ARRAY", "references":[], "memsize":40}
{"address":"0x20", "type":"ARRAY", "references":["0x30", "0x40"], "memsize":$BIG}
{"address":"0x30", "type":"STRING", "memsize":$BIG}
{"address":"0x40", "type":"STRING", "memsize":100}
J

check_rc sat/diff 0 "$HD" diff -q "$D/before.json" "$D/after.json" "$D/after.json"
check_grep sat/diff-text 'new .*18,446,744,073,709,551,615 bytes' "$TMP/out"
check_grep sat/diff-text-note 'saturated' "$TMP/out"
"$HD" diff -q -f json "$D/before.json" "$D/after.json" "$D/after.json" >"$TMP/out" 2>/dev/null
# (jq reads numbers as doubles: the exact ones are grepped)
check_grep sat/diff-json-sum '"new":\{"count":3,"memsize":18446744073709551615\}' "$TMP/out"
check sat/diff-json "true" "$(jq -r '.memsize_saturated' "$TMP/out" 2>&1)"
"$HD" diff -q -f tsv "$D/before.json" "$D/after.json" >"$TMP/out" 2>/dev/null
check_grep sat/diff-tsv '^total	memsize_saturated	1$' "$TMP/out"
"$HD" diff -q -f json "$D/before.json" "$D/before.json" >"$TMP/out" 2>/dev/null
check sat/diff-json-exact "false" "$(jq -r '.memsize_saturated' "$TMP/out" 2>&1)"

check_rc sat/leaks 0 "$HD" leaks -q "$D/before.json" "$D/after.json"
check_grep sat/leaks-text 'saturated' "$TMP/out"
if grep -qE '(^|[^0-9.])100 B' "$TMP/out"; then
	notok sat/leaks-no-wrap "a wrapped sum: $(head -c 400 "$TMP/out")"
else ok sat/leaks-no-wrap; fi
"$HD" leaks -q -f json "$D/before.json" "$D/after.json" >"$TMP/out" 2>/dev/null
check sat/leaks-json "true" "$(jq -r '.memsize_saturated' "$TMP/out" 2>&1)"

"$HD" diff -q "$D/before.json" "$D/after.json" -o "$D/new.json" 2>/dev/null
check_rc sat/interface 0 "$HD" interface-with -q --summary "$D/after.json" "$D/new.json"
check_grep sat/interface-text '^new .*saturated' "$TMP/out"
"$HD" interface-with -q --summary -f json "$D/after.json" "$D/new.json" >"$TMP/out" 2>/dev/null
check_grep sat/interface-json-sum '"diff_memsize":18446744073709551615,' "$TMP/out"
check sat/interface-json "true" "$(jq -r '.totals.memsize_saturated' "$TMP/out" 2>&1)"

check_rc sat/top 0 "$HD" top -q "$D/after.json"
check_grep sat/top-text '^reached .*saturated' "$TMP/out"
"$HD" top -q -f json "$D/after.json" >"$TMP/out" 2>/dev/null
check_grep sat/top-json-sum '"reached_memsize":18446744073709551615,' "$TMP/out"
check sat/top-json "true" "$(jq -r '.memsize_saturated' "$TMP/out" 2>&1)"
check_rc sat/dominators 0 "$HD" dominators -q "$D/after.json" 0x20
check_grep sat/dominators-text 'saturated' "$TMP/out"

# ---- item 16: paths, commands and options escaped ----

EF="$D/a${ESC}[31mb.json"
{ cat "$D/before.json"; echo 'not json'; } >"$EF"
check_rc esc/input-summary 0 "$HD" stats -q "$EF"
raw_esc esc/input-summary-raw "$TMP/err"
check_grep esc/input-summary-shown 'a\\u001b\[31mb\.json: 0 line\(s\) repaired, 1 skipped' "$TMP/err"

check_rc esc/index-summary 0 "$HD" index -q "$D/before.json" -o "$D/o${ESC}[2J.hds"
"$HD" index "$D/before.json" -o "$D/o${ESC}[2J.hds" >"$TMP/out" 2>"$TMP/err"
raw_esc esc/index-summary-raw "$TMP/err"
check_grep esc/index-summary-shown 'o\\u001b\[2J\.hds: ' "$TMP/err"

check_rc esc/command 2 "$HD" "st${ESC}[2Jats"
raw_esc esc/command-raw "$TMP/err"
check_grep esc/command-shown "unknown command 'st\\\\u001b\\[2Jats'" "$TMP/err"

check_rc esc/option 2 "$HD" stats "--cla${ESC}[2Jss" "$D/before.json"
raw_esc esc/option-raw "$TMP/err"
check_grep esc/option-shown "unknown option '--cla\\\\u001b\\[2Jss'" "$TMP/err"
check_rc esc/option-value 2 "$HD" stats "--strict=${ESC}[2J" "$D/before.json"
raw_esc esc/option-value-raw "$TMP/err"

# bidi: a class and a file name with U+202E and U+2068
cat >"$D/bidi.json" <<J
{"type":"ROOT", "root":"vm", "references":["0x10"]}
{"address":"0x100", "type":"CLASS", "name":"Foo${RLO}DER${FSI}X"}
{"address":"0x10", "type":"OBJECT", "class":"0x100", "file":"a${RLO}b.rb", "line":1, "memsize":40}
J
check_rc bidi/stats 0 "$HD" stats -q --by class,file "$D/bidi.json"
if grep -q "$RLO\|$FSI" "$TMP/out"; then
	notok bidi/stats-raw "a raw bidi control: $(grep -a Foo "$TMP/out")"
else ok bidi/stats-raw; fi
check_grep bidi/stats-class 'Foo\\u202eDER\\u2068X' "$TMP/out"
check_grep bidi/stats-file 'a\\u202eb\.rb' "$TMP/out"
"$HD" stats -q -f json --by class "$D/bidi.json" >"$TMP/out" 2>/dev/null
check bidi/json-keeps-bytes "Foo${RLO}DER${FSI}X" \
	"$(jq -r '.groupings[0].rows[0].class' "$TMP/out" 2>&1)"
check_rc bidi/message 1 "$HD" stats "$D/no${RLO}such.json"
check_grep bidi/message-shown 'no\\u202esuch\.json' "$TMP/err"
