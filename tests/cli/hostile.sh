#!/bin/sh
# hostile.sh - broken and hostile input generated at test time (not
# committed): a dump truncated at every byte offset, a 10 MB string
# value, a 50 MB references array, a gzip dump of over 4 GiB, and stores
# whose source dump changed since indexing.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs gzip gzip

HD=$HEAPDUMP
# under ASan: what Graphviz's font stack keeps until exit (render) is not ours
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS
TOOLS="$TOP/$B/tests"
case $B in /*) TOOLS="$B/tests" ;; esac

# ---- a small dump cut at every byte ----
# Each prefix: lenient mode exits 0 with no more objects than the whole
# file and one reported line exactly when the cut breaks a record; strict
# mode exits 0 when the cut falls at a line end and 1 with FILE:LINE:COL
# on the cut line otherwise. Never a crash (a signal is an exit status >
# 128). (t_truncate does the same in the library on 6 KB of a real dump.)
# A prefix without any record is not a heap dump (exit 1, in both modes):
# the empty one, and the cuts in line 1 before the end of its root name
# (after it, the ROOT record is salvaged).
T="$TMP/t.json"
printf '%s\n' \
	'{"type":"ROOT", "root":"vm", "references":["0x10"]}' \
	'{"address":"0x10", "type":"STRING", "value":"a\"b", "flags":{"old":true}}' \
	'{"address":"0x20", "type":"ARRAY", "references":["0x10"]}' \
	>"$T"
size=$(wc -c <"$T")
full=$("$HD" stats --all -q --format json "$T" | jq .totals.objects)
check truncate/full-objects 2 "$full"
# for each cut k: "k broken line", broken when k is inside a line (not at
# its start nor right before its newline), line the cut line's number
awk '{ n = length($0) + 1; for (i = 0; i < n; i++) print k + i, (i > 0 && i < n - 1), NR; k += n }' "$T" >"$TMP/cuts"
check truncate/cuts "$size" "$(wc -l <"$TMP/cuts" | tr -d ' ')"
rootend=$(($(head -1 "$T" | grep -bo '"root":"vm"' | cut -d: -f1) + 11))
bad=""
P="$TMP/p.json"
while read -r k broken line && [ -z "$bad" ]; do
	head -c "$k" "$T" >"$P"
	nl=$((line - 1))
	"$HD" stats --all -q --format json "$P" >"$TMP/o" 2>"$TMP/e"
	rc=$?
	objs=$(sed -n 's/.*"objects":\([0-9]*\).*/\1/p' "$TMP/o" | head -1)
	reported=$(grep -cE '\((repaired|skipped)\)$' "$TMP/e")
	if [ "$k" -lt "$rootend" ]; then
		if [ $rc != 1 ] || [ "$reported" != 0 ] ||
			! grep -qE "^heapdump: $P: not a heap dump \((empty|line 1: )" "$TMP/e"; then
			bad="cut at $k (no record): lenient exit $rc: $(head -c 200 "$TMP/e")"
		fi
	elif [ $rc != 0 ]; then
		bad="cut at $k: lenient exit $rc: $(head -c 200 "$TMP/e")"
	elif [ -z "$objs" ] || [ "$objs" -gt "$full" ]; then
		bad="cut at $k: $objs objects, more than $full"
	elif [ "$reported" -ne $broken ]; then
		bad="cut at $k: $reported lines reported, expected $broken"
	fi
	"$HD" stats --strict -q "$P" >/dev/null 2>"$TMP/e"
	rc=$?
	if [ -n "$bad" ]; then
		:
	elif [ "$k" = 0 ]; then
		[ $rc = 1 ] || bad="cut at 0 (empty): strict exit $rc"
	elif [ $broken = 0 ] && [ $rc != 0 ]; then
		bad="cut at $k (a line end): strict exit $rc: $(head -c 200 "$TMP/e")"
	elif [ $broken = 1 ] && [ $rc != 1 ]; then
		bad="cut at $k: strict exit $rc, expected 1"
	elif [ $broken = 1 ] && ! grep -qE "^heapdump: $P:$((nl + 1)):[0-9]+: " "$TMP/e"; then
		bad="cut at $k: no $P:$((nl + 1)):COL: in $(head -c 200 "$TMP/e")"
	fi
done <"$TMP/cuts"
if [ -z "$bad" ]; then ok "truncate/every-byte ($size prefixes)"; else
	notok truncate/every-byte "$bad"
fi

# ---- huge values ----
# A 10 MB string value and a 50 MB references array, each on one line.
BIG="$TMP/big.json"
{
	printf '{"type":"ROOT", "root":"vm", "references":["0x7f0000001000"]}\n'
	printf '{"address":"0x7f0000001000", "type":"STRING", "bytesize":10485760, "value":"'
	head -c 10485760 /dev/zero | tr '\0' 'a'
	printf '", "memsize":10485801}\n'
	awk 'BEGIN {
		printf "{\"address\":\"0x7f0000002000\", \"type\":\"ARRAY\", \"length\":2800000, \"references\":["
		for (i = 0; i < 1400000; i++)
			printf "%s\"0x7f0000001000\", \"0x7f0000003000\"", i ? ", " : ""
		printf "], \"memsize\":22400040}\n"
	}'
	printf '{"address":"0x7f0000003000", "type":"OBJECT", "references":["0x7f0000002000"], "memsize":40}\n'
} >"$BIG"
check huge/string-10MB-array-50MB 1 \
	"$([ "$(sed -n 2p "$BIG" | wc -c)" -gt 10485760 ] &&
	   [ "$(sed -n 3p "$BIG" | wc -c)" -gt 50000000 ] && echo 1)"
"$HD" stats --strict -q --format json "$BIG" >"$TMP/o" 2>"$TMP/e"
check huge/stats-exit 0 $?
check huge/stats-counts "3 2800001 32885881" \
	"$(jq -r '.totals | "\(.objects) \(.references) \(.memsize)"' "$TMP/o")"
"$HD" index -q "$BIG" -o "$TMP/big.hds" 2>"$TMP/e"
check huge/index-exit 0 $?
"$HD" stats -q --format json "$TMP/big.hds" >"$TMP/o" 2>"$TMP/e"
check huge/store-counts "3 2800001" \
	"$(jq -r '.totals | "\(.objects) \(.references)"' "$TMP/o")"
# the 50 MB record read back from the dump, byte for byte
"$HD" subgraph-of -q "$TMP/big.hds" --address 0x7f0000002000 \
	-o "$TMP/sub.json" 2>"$TMP/e"
check huge/read-back-exit 0 $?
check huge/read-back-bytes "$(sed -n 3p "$BIG" | cksum)" \
	"$(grep -F '{"address":"0x7f0000002000"' "$TMP/sub.json" | cksum)"
"$HD" replace-class -q "$BIG" -o "$TMP/rc.json" 2>"$TMP/e"
check huge/replace-class-exit 0 $?
check huge/replace-class-same "$(cksum <"$BIG")" "$(cksum <"$TMP/rc.json")"
rm -f "$BIG" "$TMP/rc.json" "$TMP/sub.json"

# ---- deep nesting ----
# Unknown members nested a million deep (arrays, objects, an unclosed
# one): no recursion on dump data, so no stack to overflow; each record
# is repaired (lenient) or the first one stops strict mode.
awk 'BEGIN {
	printf "{\"address\":\"0x1\", \"type\":\"OBJECT\", \"x\":"
	for (i = 0; i < 1000000; i++) printf "["
	for (i = 0; i < 1000000; i++) printf "]"
	printf ", \"memsize\":40}\n"
	printf "{\"address\":\"0x2\", \"type\":\"OBJECT\", \"y\":"
	for (i = 0; i < 300000; i++) printf "{\"a\":"
	printf "1"
	for (i = 0; i < 300000; i++) printf "}"
	printf "}\n"
	printf "{\"address\":\"0x3\", \"type\":\"OBJECT\", \"z\":"
	for (i = 0; i < 1000000; i++) printf "["
	printf ", \"memsize\":40}\n"
}' >"$TMP/deep.json"
"$HD" stats --all -q --format json "$TMP/deep.json" >"$TMP/o" 2>"$TMP/e"
check deep/lenient "0 3 3" "$? $(jq .totals.objects "$TMP/o") $(grep -c 'nesting too deep (repaired)$' "$TMP/e")"
"$HD" stats --strict -q "$TMP/deep.json" >/dev/null 2>"$TMP/e"
check deep/strict 1 $?
check_grep deep/strict-position "deep.json:1:[0-9]+: nesting too deep" "$TMP/e"
"$HD" index -q "$TMP/deep.json" -o "$TMP/deep.hds" 2>/dev/null
check deep/index 0 $?
rm -f "$TMP/deep.json" "$TMP/deep.hds"

# ---- a dump over 4 GiB ----
# gzip members: two records, then 4.3 GB of blank lines (65 copies of
# one member of 64 MiB of spaces), then two more records, whose offsets
# are over 2^32: the store's u64 offsets must hold them exactly.
G="$TMP/huge.json.gz"
L1='{"type":"ROOT", "root":"vm", "references":["0x1000"]}'
L2='{"address":"0x1000", "type":"ARRAY", "references":["0x2000"], "memsize":40}'
L3='{"address":"0x2000", "type":"STRING", "value":"far away", "memsize":40}'
L4='{"address":"0x3000", "type":"OBJECT", "references":["0x1000", "0x2000"], "memsize":40}'
printf '%s\n%s\n' "$L1" "$L2" | gzip -1 >"$G"
awk 'BEGIN { s = sprintf("%1023s", ""); for (i = 0; i < 65536; i++) print s }' |
	gzip -9 >"$TMP/blank.gz"
i=0
while [ $i -lt 65 ]; do cat "$TMP/blank.gz"; i=$((i + 1)); done >>"$G"
rm -f "$TMP/blank.gz"
printf '%s\n%s\n' "$L3" "$L4" | gzip -1 >>"$G"
"$HD" index -q "$G" -o "$TMP/huge.hds" 2>"$TMP/e"
check over-4GiB/index-exit 0 $?
"$HD" stats -q --format json "$TMP/huge.hds" >"$TMP/o"
check over-4GiB/objects "3 3" \
	"$(jq -r '.totals | "\(.objects) \(.references)"' "$TMP/o")"
o3=$((${#L1} + ${#L2} + 2 + 65 * 67108864))
check over-4GiB/offsets "0x1000 ARRAY $((${#L1} + 1))
0x2000 STRING $o3
0x3000 OBJECT $((o3 + ${#L3} + 1))" \
	"$("$TOOLS/store_nodes" "$TMP/huge.hds" 2>&1)"
rm -f "$G" "$TMP/huge.hds"

# ---- hostile selections ----
# refused NAME PATTERN ARGS...: heapdump ARGS exits 2 saying PATTERN
refused() {
	n=$1 pat=$2
	shift 2
	"$HD" "$@" >/dev/null 2>"$TMP/e"
	check "$n-exit" 2 $?
	check_grep "$n-message" "$pat" "$TMP/e"
}
# The C library's regex parser recurses once per nested group: a deep
# one crashed it (found by review while writing fuzz_select, and kept in
# its corpus). Refused as a usage error.
deep=$(awk 'BEGIN { for (i = 0; i < 30000; i++) printf "("; printf "a"; for (i = 0; i < 30000; i++) printf ")" }')
refused regex/deep "longer than 1024 bytes" roots-of -q "$T" --class "/$deep/"
deep=$(awk 'BEGIN { for (i = 0; i < 33; i++) printf "("; printf "S"; for (i = 0; i < 33; i++) printf ")" }')
refused regex/nested "groups nested deeper than 32" roots-of -q "$T" --class "/$deep/"
"$HD" subgraph-of -q "$T" --type STRING \
	--class '/((((((((((((((((((((((((((((((((.*))))))))))))))))))))))))))))))))/' \
	>"$TMP/o" 2>"$TMP/e"
check regex/32-deep-works "0 1" "$? $(grep -c '^{"address":"0x10"' "$TMP/o")"
# A short regex can still hurt glibc: a back-reference sends its matcher
# into a recursion that never ends (CVE-2019-9192: a crash), and nested
# repetitions multiply the copies regcomp makes (23 nested "+" in 70
# bytes: 13 GB, 44 s; found by fuzz_select). Both are refused before
# the dump is read (here it does not even exist); a repetition within
# the bound works.
refused regex/backref "back-references .* are not supported" \
	roots-of -q "$T" --class '/(|)(\1\1)*/'
plus=$(awk 'BEGIN { for (i = 1; i < 23; i++) printf "("; printf "a+"; for (i = 1; i < 23; i++) printf ")+" }')
refused regex/repetitions "more than 4096 nodes once its repetitions are expanded" \
	subgraph-of -q "$TMP/no-such-dump.json" --class "/$plus/"
"$HD" interface-with -q "$TMP/no-such-dump.json" --class '/(Foo|Bar)*{5000}/' >/dev/null 2>"$TMP/e"
check regex/repetitions-before-input "2 0" "$? $(grep -c 'no-such-dump' "$TMP/e")"
"$HD" to-dot -q "$TMP/no-such-dump.json" --class '/(a)\1/' >/dev/null 2>"$TMP/e"
check regex/draw-before-input "2 0" "$? $(grep -c 'no-such-dump' "$TMP/e")"
"$HD" subgraph-of -q "$T" --type STRING --class '/a*{1000}/' >"$TMP/o" 2>"$TMP/e"
check regex/bounded-repetitions-work "0 1" "$? $(grep -c '^{"address":"0x10"' "$TMP/o")"

# ---- an output that is the input ----
# -o naming the dump would replace it with the output: refused (exit 2),
# the dump untouched (replace-class: tests/cli/replace_class.sh).
for c in "index" "to-gml" "to-dot" "roots-of --type STRING" \
	"subgraph-of --type STRING" "interface-with --type STRING" \
	"render --type STRING --format svg"; do
	cp "$T" "$TMP/self.json"
	"$HD" $c -q "$TMP/self.json" -o "$TMP/self.json" >/dev/null 2>"$TMP/e"
	rc=$?
	n="output-is-input/${c%% *}"
	if [ $rc = 2 ] && cmp -s "$T" "$TMP/self.json" &&
		grep -q "is the input: choose another output" "$TMP/e"; then
		ok "$n"
	else
		notok "$n" "exit $rc, same: $(cmp -s "$T" "$TMP/self.json" && echo yes || echo no): $(head -c 200 "$TMP/e")"
	fi
done
cp "$T" "$TMP/self.json"
"$HD" diff -q "$TMP/t.json" "$TMP/self.json" -o "$TMP/self.json" >/dev/null 2>"$TMP/e"
check output-is-input/diff "2 same" "$? $(cmp -s "$T" "$TMP/self.json" && echo same)"

# ---- named pipes ----
# A pipe can be read once: commands that read their input twice spool it
# (as standard input), and nothing opens it twice (a named pipe opened
# again waits for a writer forever). Same output as from the file.
F="$TMP/fifo"
mkfifo "$F"
# feed FILE PIPE: a writer in the background, which gives up after 30 s
# if nothing reads the pipe (so that a refusal cannot hang the test)
feed() { timeout 30 sh -c 'cat "$1" >"$2"' sh "$1" "$2" & }
IN=$DATA/edge_dangling_refs.json
for c in "stats" "index -o $TMP/fifo.hds" "replace-class" "to-gml" \
	"roots-of --type STRING" "subgraph-of --type STRING" \
	"interface-with --type STRING" "diff $DATA/edge_crlf.json"; do
	n="pipe/${c%% *}"
	feed "$IN" "$F"
	timeout 30 "$HD" $c -q "$F" >"$TMP/po" 2>"$TMP/e"
	rc=$?
	wait
	out=$(sed "s|$F|IN|g; s|$IN|IN|g" "$TMP/po")
	want=$("$HD" $c -q "$IN" 2>/dev/null | sed "s|$IN|IN|g")
	if [ $rc != 0 ] || [ "$out" != "$want" ]; then
		notok "$n" "exit $rc, $(printf '%s' "$out" | wc -l) lines for $(printf '%s' "$want" | wc -l): $(head -c 200 "$TMP/e")"
	else
		ok "$n"
	fi
done
# two pipes at once
mkfifo "$F.2"
feed "$DATA/edge_crlf.json" "$F"
feed "$IN" "$F.2"
timeout 30 "$HD" diff -q "$F" "$F.2" -o "$TMP/pd.json" >/dev/null 2>"$TMP/e"
rc=$?
wait
"$HD" diff -q "$DATA/edge_crlf.json" "$IN" -o "$TMP/fd.json" >/dev/null 2>&1
check pipe/diff-two "0 $(cksum <"$TMP/fd.json")" "$rc $(cksum <"$TMP/pd.json")"
feed "$IN" "$F"
timeout 30 "$HD" replace-class -q --in-place "$F" >/dev/null 2>"$TMP/e"
check pipe/no-in-place 2 $?
check_grep pipe/no-in-place-message "not a regular file" "$TMP/e"
timeout 30 cat "$F" >/dev/null # releases the writer
wait

# ---- stale stores ----
# A store remembers its dump's size and a fingerprint of its first and
# last 64 KiB; a record read back must also be the object indexed at
# that offset. Every command that reads records back refuses a changed
# dump (exit 1, "changed since it was indexed"), and a removed one (exit
# 1, "cannot open"); stats, which needs only the store, still works.
D="$TMP/d.json"
cp "$DATA/ok_ruby3.4_traced.json" "$D"
head -n $(($(wc -l <"$D") / 3)) "$D" >"$TMP/third.json"
"$HD" index -q "$D" -o "$TMP/d.hds" 2>"$TMP/e"
check stale/index 0 $?
READBACK="roots-of -q $TMP/d.hds --type STRING
subgraph-of -q $TMP/d.hds --type STRING
diff -q $TMP/third.json $TMP/d.hds -o $TMP/diff.json
interface-with -q $TMP/d.hds --type STRING"
# stale_cmds WANT CASE COMMANDS: WANT is 0 (works) or a message
stale_cmds() {
	printf '%s\n' "$3" | while read -r c; do
		"$HD" $c >/dev/null 2>"$TMP/e"
		rc=$?
		if [ "$1" = 0 ]; then
			check "stale/$2/${c%% *}" 0 $rc
		elif [ $rc = 1 ] && grep -q "$1" "$TMP/e"; then
			ok "stale/$2/${c%% *}"
		else
			notok "stale/$2/${c%% *}" "exit $rc: $(head -c 300 "$TMP/e")"
		fi
	done
}
stale_cmds 0 unchanged "$READBACK
replace-class -q $TMP/d.hds"
# the middle: the address of a STRING two thirds down, same size; the
# fingerprint cannot see it, the records read back do
mid=$(($(wc -l <"$D") * 2 / 3))
while ! sed -n "${mid}p" "$D" | grep -q '"type":"STRING"'; do mid=$((mid + 1)); done
addr=$(sed -n "${mid}p" "$D" | sed 's/^{"address":"0x\([0-9a-f]*\)".*/\1/')
new=$(printf '%s' "$addr" | tr '0-9a-f' '1-9a-f0')
sed -i "${mid}s/\"0x$addr\"/\"0x$new\"/" "$D"
check stale/middle-same-size "$(wc -c <"$DATA/ok_ruby3.4_traced.json")" \
	"$(wc -c <"$D")"
check stale/middle-changed 1 "$(cmp -s "$D" "$DATA/ok_ruby3.4_traced.json" || echo 1)"
stale_cmds "changed since it was indexed" middle "$READBACK"
check stale/stats-still-works 0 \
	"$("$HD" stats -q "$TMP/d.hds" >/dev/null 2>&1; echo $?)"
cp "$DATA/ok_ruby3.4_traced.json" "$D"
printf '\n' >>"$D"
stale_cmds "changed since it was indexed" grown "$READBACK
replace-class -q $TMP/d.hds"
cp "$DATA/ok_ruby3.4_traced.json" "$D"
sed -i '1s/"vm"/"VM"/' "$D"
stale_cmds "changed since it was indexed" head "$READBACK
replace-class -q $TMP/d.hds"
rm -f "$D"
stale_cmds "cannot open '$D'" removed "$READBACK
replace-class -q $TMP/d.hds"
