#!/bin/sh
# index_par.sh - index -j N (the parallel build of a plain dump file)
# writes the store one reader writes: byte for byte, with the same problem
# reports (lines, columns, order), summary line and exit code, lenient and
# --strict, on every dump of data/dumps (the gzip ones unpacked to plain
# files) and on cases made to put a chunk cut where it hurts: strings,
# sites, classes, root categories and reference names first met in a
# later chunk, duplicate addresses across chunks, a class record whose
# address an earlier chunk holds (read again by one reader). -j1 is the
# sequential build (one streaming reader), as for stats.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../cut_inputs.sh"
needs gzip gzip
needs strace strace

HD=$HEAPDUMP
unset HEAPDUMP_JOBS HEAPDUMP_SIMD

# run OUT FILE ARGS...: the store, stdout, stderr (the summary's time cut)
# and exit code of index in OUT.*; the store is written under one name
# (the summary line names it) and moved
run() {
	o=$1 f=$2
	shift 2
	rm -f "$TMP/store.hds" "$o.hds"
	"$HD" index "$@" -o "$TMP/store.hds" "$f" >"$o.out" 2>"$o.err0"
	echo $? >"$o.rc"
	sed 's/, in [0-9.]*s$//' "$o.err0" >"$o.err"
	if [ -f "$TMP/store.hds" ]; then mv "$TMP/store.hds" "$o.hds"; else
		echo none >"$o.hds"
	fi
}

# same NAME FILE ARGS...: -j1 beside -j2, -j3, -j4 and -j7 (SAME_JOBS:
# the fixtures' sweep, -j2 and -j7: made dumps below put cuts everywhere)
same() {
	n=$1 f=$2
	shift 2
	run "$TMP/j1" "$f" -j1 "$@"
	bad=''
	for j in ${SAME_JOBS:-2 3 4 7}; do
		run "$TMP/jn" "$f" -j$j "$@"
		for x in hds out err rc; do
			cmp -s "$TMP/j1.$x" "$TMP/jn.$x" || bad="$bad -j$j:$x"
		done
	done
	if [ -z "$bad" ]; then ok "$n"; else
		notok "$n" "differs from -j1 in$bad ($(head -c 300 "$TMP/jn.err"))"
	fi
}

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
	same "dumps/$b" "$p"
	same "dumps/$b/strict" "$p" --strict
done
unset SAME_JOBS

# ---- the parallel build really runs: threads, and the store of one ----
p="$TMP/plain-named_ruby3.1_leak_after.json"
[ -f "$p" ] || gzip -dc "$DATA/named_ruby3.1_leak_after.json.gz" >"$p"
# (LeakSanitizer cannot run under ptrace: off for these runs)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -e trace=clone,clone3 -o "$TMP/clone2.trace" \
	"$HD" index -q -j2 -o "$TMP/t2.hds" "$p" 2>"$TMP/err"
# the scan's second part, then (index_speed.sh) the references' second
# half, the nodes beside the edges and the write's summary; the sort stays
# on one thread below 65536 records
check threads/j2 "4" "$(started 'clone3?' "$TMP/clone2.trace")"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -e trace=clone,clone3 -o "$TMP/clone1.trace" \
	"$HD" index -q -j1 -o "$TMP/t1.hds" "$p" 2>"$TMP/err"
check threads/j1 "0" "$(started 'clone3?' "$TMP/clone1.trace")"
check threads/same-store "" "$(cmp "$TMP/t1.hds" "$TMP/t2.hds" 2>&1)"
HEAPDUMP_JOBS=3 "$HD" index -q -o "$TMP/t3.hds" "$p"
check threads/env-jobs "" "$(cmp "$TMP/t1.hds" "$TMP/t3.hds" 2>&1)"

# ---- cuts where they hurt ----
# A dump whose every feature is first met all over it: ROOT lines of old
# and new categories, CLASS records (named, anonymous, singleton) and
# their instances, allocation sites, generations, reference names on
# objects and roots, memsizes past 32 bits, DATA and IMEMO names,
# duplicate addresses in far apart records, a record split by a raw
# newline every 17 lines, a garbage line every 23.
awk 'BEGIN {
	print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1010\", \"0x1020\"]}"
	for (i = 1; i <= 600; i++) {
		a = 4096 + i * 16
		if (i % 97 == 0)
			printf "{\"type\":\"ROOT\", \"root\":\"cat%d\", \"references\":[\"0x%x\", \"0x%x\"], \"ref_names\":[\"n%d\", null]}\n", i % 5, a - 16, a + 16, i
		if (i % 50 == 1)
			printf "{\"address\":\"0x%x\", \"type\":\"CLASS\", \"class\":\"0x%x\", \"name\":\"Class%d\", \"references\":[\"0x1010\"], \"memsize\":480}\n", a, a + 8, i
		else if (i % 50 == 2)
			printf "{\"address\":\"0x%x\", \"type\":\"CLASS\", \"class\":\"0x1010\", \"singleton\":true, \"references\":[], \"memsize\":480}\n", a
		else if (i % 17 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"value\":\"a\nb\", \"memsize\":40}\n", a
		else if (i % 11 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"DATA\", \"class\":\"0x%x\", \"struct\":\"s%d\", \"memsize\":%d}\n", a, 4096 + 16 * (i - i % 50 + 1), i % 7, 4294967296 * (i % 3) + i
		else if (i % 13 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"IMEMO\", \"imemo_type\":\"t%d\", \"memsize\":40, \"generation\":%d}\n", a, i % 4, 4294967296 + i
		else if (i % 29 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x%x\", \"memsize\":1}\n", 4096 + 16 * (i - 200), 4096 + 16 * (i - i % 50 + 1)
		else
			printf "{\"address\":\"0x%x\", \"type\":\"ARRAY\", \"class\":\"0x%x\", \"length\":2, \"references\":[\"0x%x\", \"0x%x\"], \"ref_names\":[0, \"k%d\"], \"file\":\"f%d.rb\", \"line\":%d, \"method\":\"m%d\", \"generation\":%d, \"memsize\":%d}\n", a, 4096 + 16 * (i - i % 50 + 1), a - 16, 65536 + i, i % 9, i % 31, i % 5, i % 37, i, i
		if (i % 23 == 0)
			print "garbage line " i
	}
	print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1030\"]}"
}' >"$TMP/mixed.json"
cut_inputs "$TMP"
for j in 2 3 4 5 6 7 8 9 10 16 31 64; do
	run "$TMP/a" "$TMP/mixed.json" -j1
	run "$TMP/b" "$TMP/mixed.json" -j$j
	if cmp -s "$TMP/a.hds" "$TMP/b.hds" && cmp -s "$TMP/a.err" "$TMP/b.err"; then
		ok "cut/mixed-j$j"
	else
		notok "cut/mixed-j$j" "$(cmp "$TMP/a.hds" "$TMP/b.hds"; diff "$TMP/a.err" "$TMP/b.err" | head -c 300)"
	fi
done
check_grep cut/mixed-reports 'mixed.json:[0-9]+:.*lines joined' "$TMP/a.err"
check_grep cut/mixed-duplicates ' [1-9][0-9]* duplicate addresses' "$TMP/a.err"
same cut/mixed "$TMP/mixed.json"
same cut/mixed-strict "$TMP/mixed.json" --strict
check_grep cut/mixed-strict-line 'mixed.json:[0-9]+:[0-9]+: ' "$TMP/j1.err"

# reference names, sites, generations, roots and wide memsizes only in
# the second half: the first chunk has none of them
awk 'BEGIN {
	for (i = 1; i <= 300; i++)
		printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"references\":[\"0x%x\"], \"memsize\":%d}\n", 4096 + i * 16, 4096 + i * 8, i
	print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1010\", \"0x1020\"], \"ref_names\":[\"a\", 1]}"
	for (i = 1; i <= 300; i++)
		printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"references\":[\"0x%x\", \"0x%x\"], \"ref_names\":[\"@x\", 3], \"file\":\"late.rb\", \"line\":%d, \"generation\":%d, \"memsize\":%d}\n", 65536 + i * 16, 4096 + i * 16, 65536 + i * 8, i % 7, i, 8589934592 + i
}' >"$TMP/late.json"
same cut/late-features "$TMP/late.json"
"$HD" query -f tsv "$TMP/j1.hds" "select count(*) from refs where name = '@x'" >"$TMP/q" 2>&1
check cut/late-features-names "300" "$(tail -1 "$TMP/q")"

# a CLASS record whose address an earlier chunk holds (one reader keeps
# the first and never interns the second's name): read again by one
awk 'BEGIN {
	print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}"
	print "{\"address\":\"0x10\", \"type\":\"CLASS\", \"name\":\"First\", \"references\":[]}"
	for (i = 1; i <= 300; i++)
		printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x10\", \"memsize\":%d}\n", 4096 + i * 16, i
	print "{\"address\":\"0x10\", \"type\":\"CLASS\", \"name\":\"SecondNeverSeen\", \"references\":[]}"
	for (i = 1; i <= 300; i++)
		printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x10\", \"memsize\":%d}\n", 65536 + i * 16, i
}' >"$TMP/dupclass.json"
same cut/duplicate-class "$TMP/dupclass.json"
"$HD" query -f tsv "$TMP/j1.hds" "select count(*) from objects where class = 'SecondNeverSeen'" >"$TMP/q" 2>&1
check cut/duplicate-class-first-wins "0" "$(tail -1 "$TMP/q")"

# CRLF line ends
same cut/crlf "$TMP/crlf.json"

# no newline at the end, and a last record cut short
same cut/no-trailing-newline "$TMP/nonl.json"
same cut/last-line-cut "$TMP/cut.json"
same cut/last-line-cut-strict "$TMP/cut.json" --strict

# smaller than the chunks: one record, two records, one byte, nothing
same cut/one-line "$TMP/one.json"
same cut/two-lines "$TMP/two.json"
same cut/one-byte "$TMP/brace.json"
same cut/empty "$TMP/empty.json"

# one giant line (8 MB of references) between small ones
same cut/giant-line "$TMP/giant.json"

# garbage before the first record (held back by one reader), a not-a-dump,
# more skipped lines than records, more problems than a chunk keeps
same cut/junk-first "$TMP/junkfirst.json"
same cut/not-a-dump "$TMP/nodump.json"
same cut/mostly-garbage "$TMP/mostly.json"
same cut/many-problems "$TMP/many.json"
check_grep cut/many-problems-summary '70,000 objects' "$TMP/j1.err"

# a heap_dump framed dump; gzip and standard input are read by one reader
same cut/framing "$DATA/edge_heap_dump_framing.json"
gzip -c "$TMP/mixed.json" >"$TMP/mixed.json.gz"
run "$TMP/g1" "$TMP/mixed.json.gz" -j1
run "$TMP/g4" "$TMP/mixed.json.gz" -j4
check cut/gzip-streamed "" "$(cmp "$TMP/g1.hds" "$TMP/g4.hds" 2>&1; cmp "$TMP/g1.err" "$TMP/g4.err" 2>&1)"
"$HD" index -q -j1 -o "$TMP/s1.hds" - <"$TMP/mixed.json" 2>"$TMP/s1.err"
"$HD" index -q -j4 -o "$TMP/s4.hds" - <"$TMP/mixed.json" 2>"$TMP/s4.err"
check cut/stdin-streamed "" "$(cmp "$TMP/s1.hds" "$TMP/s4.hds" 2>&1; cmp "$TMP/s1.err" "$TMP/s4.err" 2>&1)"

# ---- -j and HEAPDUMP_JOBS ----
check_rc jobs/zero 2 "$HD" index -q -j0 -o "$TMP/x.hds" "$TMP/one.json"
check_grep jobs/zero-message '1 to 64' "$TMP/err"
check_rc jobs/too-many 2 "$HD" index -q -j65 -o "$TMP/x.hds" "$TMP/one.json"
check_rc jobs/env-bad 2 env HEAPDUMP_JOBS=two "$HD" index -q -o "$TMP/x.hds" "$TMP/one.json"
check_grep jobs/env-bad-message "HEAPDUMP_JOBS wants 1 to 64 threads, not 'two'" "$TMP/err"
"$HD" index --help >"$TMP/help" 2>&1
check_grep jobs/help '-j, --jobs N' "$TMP/help"

# A named pipe is opened once, by the streaming reader (parallel.sh's
# fifo/opened-once for index): strace counts the opens of its path.
mkfifo "$TMP/once.fifo"
(timeout 20 sh -c 'cat "$1" >"$2"' sh "$DATA/edge_dangling_refs.json" "$TMP/once.fifo" &)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	timeout 20 strace -f -qq -e trace=open,openat -o "$TMP/once.trace" \
	"$HEAPDUMP" index -q -j2 -o "$TMP/fifo.hds" "$TMP/once.fifo" >"$TMP/once.out" 2>"$TMP/once.err"
check fifo/exit "0 " "$? $(head -c 300 "$TMP/once.err")"
check fifo/opened-once 1 "$(grep -c "once.fifo\"" "$TMP/once.trace")"
"$HEAPDUMP" stats -q "$TMP/fifo.hds" >"$TMP/fifo.stats" 2>&1
"$HEAPDUMP" stats -q "$DATA/edge_dangling_refs.json" >"$TMP/file.stats" 2>&1
check fifo/same "$(sed 1d "$TMP/file.stats")" "$(sed 1d "$TMP/fifo.stats")"
