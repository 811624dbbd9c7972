#!/bin/sh
# parallel.sh - stats -j N (the parallel scan of a plain dump file) says
# exactly what one reader says: the same output, the same problem reports
# (lines, columns, order), the same exit code, lenient and --strict, on
# every dump of data/dumps (the gzip ones unpacked to plain files) and on
# cases made to put a chunk cut where it hurts. With SIMD (HEAPDUMP_SIMD),
# also the portable scanner beside the AVX2 one.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../cut_inputs.sh"
needs gzip gzip

HD=$HEAPDUMP
unset HEAPDUMP_JOBS HEAPDUMP_SIMD

# run OUT FILE ARGS...: stdout, stderr and the exit code of stats in OUT
run() {
	o=$1 f=$2
	shift 2
	"$HD" stats -q "$@" "$f" >"$o.out" 2>"$o.err"
	echo $? >"$o.rc"
}

# same NAME FILE ARGS...: -j1 beside -j2, -j3, -j4 and -j7 (SAME_JOBS:
# the fixtures' sweep, -j2 and -j7: made dumps below put cuts everywhere), and beside
# -j1 with HEAPDUMP_SIMD=portable
same() {
	n=$1 f=$2
	shift 2
	run "$TMP/j1" "$f" -j1 "$@"
	bad=''
	for j in ${SAME_JOBS:-2 3 4 7}; do
		run "$TMP/jn" "$f" -j$j "$@"
		for x in out err rc; do
			cmp -s "$TMP/j1.$x" "$TMP/jn.$x" || bad="$bad -j$j:$x"
		done
	done
	# the portable scanner beside the AVX2 one (where the CPU has it)
	HEAPDUMP_SIMD=portable run "$TMP/jn" "$f" -j1 "$@"
	for x in out err rc; do
		cmp -s "$TMP/j1.$x" "$TMP/jn.$x" || bad="$bad portable:$x"
	done
	if [ -z "$bad" ]; then ok "$n"; else
		notok "$n" "differs from -j1 in$bad ($(head -c 200 "$TMP/jn.err"))"
	fi
}

BY='--by type --by class --by location,method --by gem --by generation
 --by imemo --by length --by file --format json --all'

# ---- every dump of data/dumps ----
SAME_JOBS='2 7'
for f in $(sweep_dumps); do
	b=$(basename "$f")
	case $b in
	*.gz)
		p="$TMP/plain-${b%.gz}"
		gzip -dc "$f" >"$p" 2>/dev/null || continue
		;;
	*) p=$f ;;
	esac
	# shellcheck disable=SC2086 # BY is a list of words
	same "dumps/$b" "$p" $BY
	# shellcheck disable=SC2086
	same "dumps/$b/strict" "$p" $BY --strict
	same "dumps/$b/text" "$p"
done
unset SAME_JOBS

# ---- cuts where they hurt ----
# 400 records, a record split by a raw newline every 7 lines, a garbage
# line every 11, a raw quote every 13: whatever the cut, the joins, skips
# and repairs of one reader.
awk 'BEGIN {
	for (i = 1; i <= 400; i++) {
		if (i % 7 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"value\":\"a\nb\", \"memsize\":40}\n", 4096 + i
		else if (i % 13 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"value\":\"a\"b\", \"memsize\":40}\n", 4096 + i
		else
			printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x10\", \"memsize\":%d}\n", 4096 + i, i
		if (i % 11 == 0)
			print "garbage line " i
	}
}' >"$TMP/mixed.json"
cut_inputs "$TMP"
for j in 2 3 4 5 6 7 8 9 10 16 31 64; do
	"$HD" stats -q -j1 --format json "$TMP/mixed.json" >"$TMP/a" 2>"$TMP/ae"
	"$HD" stats -q -j$j --format json "$TMP/mixed.json" >"$TMP/b" 2>"$TMP/be"
	if cmp -s "$TMP/a" "$TMP/b" && cmp -s "$TMP/ae" "$TMP/be"; then
		ok "cut/mixed-j$j"
	else
		notok "cut/mixed-j$j" "$(diff "$TMP/ae" "$TMP/be" | head -c 300)"
	fi
done
check_grep cut/mixed-reports 'mixed.json:7:.*lines joined' "$TMP/ae"
same cut/mixed "$TMP/mixed.json" --format json
same cut/mixed-strict "$TMP/mixed.json" --strict
check cut/mixed-strict-line 'heapdump: '"$TMP"'/mixed.json:7:47: unterminated string' \
	"$(cat "$TMP/j1.err")"

# CRLF line ends
same cut/crlf "$TMP/crlf.json" --format json

# no newline at the end, and a last record cut short
same cut/no-trailing-newline "$TMP/nonl.json" --format json
same cut/last-line-cut "$TMP/cut.json" --format json
same cut/last-line-cut-strict "$TMP/cut.json" --strict

# smaller than the chunks: one record, two records, one byte short
same cut/one-line "$TMP/one.json"
same cut/two-lines "$TMP/two.json"
same cut/one-byte "$TMP/brace.json"
same cut/empty "$TMP/empty.json"

# one giant line (8 MB of references) between small ones
same cut/giant-line "$TMP/giant.json" --format json
check cut/giant-line-references 450000 \
	"$("$HD" stats -q -j4 --format json "$TMP/giant.json" | sed 's/.*"references":\([0-9]*\).*/\1/')"

# garbage before the first record (held back by one reader), a not-a-dump
# and more skipped lines than records
same cut/junk-first "$TMP/junkfirst.json"
same cut/not-a-dump "$TMP/nodump.json"
same cut/mostly-garbage "$TMP/mostly.json"
# more problems than a chunk keeps (65536): read again by one reader
same cut/many-problems "$TMP/many.json"
check_grep cut/many-problems-summary '70,000 skipped' "$TMP/j1.err"

# a heap_dump framed dump, a gzip dump (streamed), standard input
same cut/framing "$DATA/edge_heap_dump_framing.json" --format json
gzip -c "$TMP/mixed.json" >"$TMP/mixed.json.gz"
"$HD" stats -q -j1 --format json "$TMP/mixed.json" >"$TMP/a" 2>/dev/null
"$HD" stats -q -j4 --format json "$TMP/mixed.json.gz" 2>/dev/null | sed 's/\.gz"/"/' >"$TMP/b"
check cut/gzip-streamed "$(cat "$TMP/a")" "$(cat "$TMP/b")"
"$HD" stats -q -j4 --format json - <"$TMP/mixed.json" 2>/dev/null >"$TMP/b"
sed 's/"dump":"[^"]*"/"dump":"x"/' "$TMP/a" >"$TMP/a2"
sed 's/"dump":"[^"]*"/"dump":"x"/' "$TMP/b" >"$TMP/b2"
check cut/stdin-streamed "$(cat "$TMP/a2")" "$(cat "$TMP/b2")"

# ---- -j and HEAPDUMP_JOBS ----
check_rc jobs/zero 2 "$HD" stats -q -j0 "$TMP/one.json"
check_grep jobs/zero-message '1 to 64' "$TMP/err"
check_rc jobs/too-many 2 "$HD" stats -q -j65 "$TMP/one.json"
check_rc jobs/env-bad 2 env HEAPDUMP_JOBS=two "$HD" stats -q "$TMP/one.json"
check_grep jobs/env-bad-message "HEAPDUMP_JOBS wants 1 to 64 threads, not 'two'" "$TMP/err"
check_rc jobs/env-ok 0 env HEAPDUMP_JOBS=3 "$HD" stats -q "$TMP/mixed.json"
check_rc simd/env-other 0 env HEAPDUMP_SIMD=whatever "$HD" stats -q "$TMP/mixed.json"
check_rc jobs/trend 0 "$HD" trend -q -j2 "$TMP/mixed.json" "$TMP/mixed.json"
"$HD" stats --help >"$TMP/help" 2>&1
check_grep jobs/help '-j, --jobs N' "$TMP/help"

# A named pipe is opened once, by the streaming reader: opened twice, what
# its writer wrote to the first open is lost and the second open waits
# for a writer that never comes (hostile.sh's pipe/stats hung so, now and
# then). strace counts the opens of its path.
needs strace strace
mkfifo "$TMP/once.fifo"
(timeout 20 sh -c 'cat "$1" >"$2"' sh "$DATA/edge_dangling_refs.json" "$TMP/once.fifo" &)
# (LeakSanitizer cannot run under ptrace: off for this one run)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	timeout 20 strace -f -qq -e trace=open,openat -o "$TMP/once.trace" \
	"$HEAPDUMP" stats -q -j2 "$TMP/once.fifo" >"$TMP/once.out" 2>"$TMP/once.err"
check fifo/exit "0 " "$? $(head -c 300 "$TMP/once.err")"
check fifo/opened-once 1 "$(grep -c "once.fifo\"" "$TMP/once.trace")"
check fifo/same "$("$HEAPDUMP" stats -q -j1 "$DATA/edge_dangling_refs.json" | sed 1d)" "$(sed 1d "$TMP/once.out")"
