#!/bin/sh
# index_speed.sh - the build and the write on two threads (index -j N,
# N >= 2): the addresses sorted in two halves and merged, the references
# resolved in two halves, the edges beside the nodes, and the store
# written into its temporary file with pwrite at each section's place
# (blocks reserved with fallocate first, no mapping of it), the stats
# summary made on a second thread. The store is byte for byte -j1's whatever the output is (a new
# file, a file replaced, standard output, /dev/stdout, a FIFO) and the
# dump (one record, dangling references, duplicate addresses, a shuffled
# heap big enough for the two-thread sort); the two-thread write really
# runs for a regular output and only there; the store keeps the dump's mode;
# HEAPDUMP_TIMING=1 prints every phase and nothing without it; a file size
# limit below the store (no blocks reserved) is written in order and fails
# cleanly.
. "$(dirname "$0")/../lib.sh"
needs strace strace

HD=$HEAPDUMP
unset HEAPDUMP_JOBS HEAPDUMP_SIMD HEAPDUMP_TIMING

# a shuffled heap past the two-thread sort's 65536 records: addresses in
# pages out of order, duplicates far apart, references (some dangling),
# classes, sites, generations and ROOT lines of two categories
awk 'function addr(k) { return 1048576 + ((int(k / 100) * 7919) % 700) * 4096 + (k % 100) * 40 }
BEGIN {
	srand(7)
	print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x100008\", \"0x2\"]}"
	for (i = 0; i < 70000; i++) {
		a = addr(i)
		if (i % 1000 == 999)
			a = addr(i % 97)
		if (i % 500 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"CLASS\", \"name\":\"C%d\", \"references\":[\"0x%x\"], \"memsize\":480}\n", a, i, addr(int(rand() * 70000))
		else
			printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x%x\", \"references\":[\"0x%x\", \"0x%x\"], \"file\":\"f%d.rb\", \"line\":%d, \"generation\":%d, \"memsize\":%d}\n", a, addr(i - i % 500), addr(int(rand() * 70000)), a + 8, i % 13, i % 97, i % 50, 40 + i % 3
		if (i % 20000 == 0)
			printf "{\"type\":\"ROOT\", \"root\":\"machine_context\", \"references\":[\"0x%x\"]}\n", a
	}
}' >"$TMP/shuffled.json"
gzip -dc "$DATA/named_ruby3.1_leak_after.json.gz" >"$TMP/leak.json"
head -n 1 "$DATA/edge_dangling_refs.json" >"$TMP/one.json"

# same NAME DUMP: -j2 and -j3 into a new file, -j1's bytes
same() {
	rm -f "$TMP/s1.hds" "$TMP/s2.hds" "$TMP/s3.hds"
	"$HD" index -q -j1 -o "$TMP/s1.hds" "$2" 2>"$TMP/e1"
	r1=$?
	"$HD" index -q -j2 -o "$TMP/s2.hds" "$2" 2>"$TMP/e2"
	r2=$?
	"$HD" index -q -j3 -o "$TMP/s3.hds" "$2" 2>"$TMP/e3"
	r3=$?
	if [ "$r1$r2$r3" = 000 ] && cmp -s "$TMP/s1.hds" "$TMP/s2.hds" &&
		cmp -s "$TMP/s1.hds" "$TMP/s3.hds" &&
		cmp -s "$TMP/e1" "$TMP/e2"; then ok "$1"; else
		notok "$1" "exit $r1 $r2 $r3; $(cmp "$TMP/s1.hds" "$TMP/s2.hds" 2>&1; cmp "$TMP/s1.hds" "$TMP/s3.hds" 2>&1; head -c 200 "$TMP/e2")"
	fi
}

same dump/shuffled-70000 "$TMP/shuffled.json"
same dump/leak "$TMP/leak.json"
same dump/dangling "$DATA/edge_dangling_refs.json"
same dump/one-record "$TMP/one.json"
"$HD" index -j2 -o "$TMP/x.hds" "$TMP/shuffled.json" 2>"$TMP/err"
check_grep dump/shuffled-duplicates ' 70 duplicate addresses' "$TMP/err"
check_grep dump/shuffled-objects ' 69,930 objects' "$TMP/err"
check_grep dump/shuffled-dangling '\([1-9][0-9,]* dangling\)' "$TMP/err"

# ---- every kind of output: the bytes of -j1's regular file ----
"$HD" index -q -j1 -o "$TMP/ref.hds" "$TMP/shuffled.json"
"$HD" index -q -j2 -o - "$TMP/shuffled.json" >"$TMP/o.stdout"
check output/stdout "" "$(cmp "$TMP/ref.hds" "$TMP/o.stdout" 2>&1)"
"$HD" index -q -j2 -o /dev/stdout "$TMP/shuffled.json" >"$TMP/o.devstdout"
check output/dev-stdout "" "$(cmp "$TMP/ref.hds" "$TMP/o.devstdout" 2>&1)"
mkfifo "$TMP/out.fifo"
(timeout 60 cat "$TMP/out.fifo" >"$TMP/o.fifo" &)
timeout 60 "$HD" index -q -j2 -o "$TMP/out.fifo" "$TMP/shuffled.json"
check output/fifo-exit 0 "$?"
sleep 1
check output/fifo "" "$(cmp "$TMP/ref.hds" "$TMP/o.fifo" 2>&1)"
check output/fifo-still-fifo yes "$([ -p "$TMP/out.fifo" ] && echo yes)"
printf 'old' >"$TMP/replaced.hds"
ln -s replaced.hds "$TMP/link.hds"
"$HD" index -q -j2 -o "$TMP/link.hds" "$TMP/shuffled.json"
check output/replaced-through-link "" "$(cmp "$TMP/ref.hds" "$TMP/replaced.hds" 2>&1)"
check output/link-kept yes "$([ -L "$TMP/link.hds" ] && echo yes)"
check output/no-temporary-left "" "$(ls "$TMP" | grep '\.tmp')"

# the store gets the dump's read and write bits, through the mapped path
cp "$TMP/leak.json" "$TMP/mode.json"
chmod 640 "$TMP/mode.json"
rm -f "$TMP/mode.hds"
"$HD" index -q -j2 -o "$TMP/mode.hds" "$TMP/mode.json"
check output/mode 640 "$(stat -c %a "$TMP/mode.hds")"

# ---- the two-thread write runs for a regular file with -j2, and only
# then: blocks reserved, the sections written with pwrite (section by
# section), the file never mapped for writing ----
# (LeakSanitizer cannot run under ptrace: off for these runs)
tr() {
	t=$1
	shift
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace=fallocate,mmap,clone,clone3,pwrite64 -o "$TMP/$t.trace" \
		"$HD" index -q "$@" 2>/dev/null
}
tr j2 -j2 -o "$TMP/t2.hds" "$TMP/shuffled.json"
check mapped/j2-fallocate 1 "$(grep -c '^[0-9]* *fallocate' "$TMP/j2.trace")"
check mapped/j2-pwrite yes "$([ "$(grep -c '^[0-9]* *pwrite64' "$TMP/j2.trace")" -ge 10 ] && echo yes)"
check mapped/j2-no-shared-map 0 "$(grep -c 'MAP_SHARED' "$TMP/j2.trace")"
# the scan, the two sorts, the references, the edges beside the nodes,
# the write: six threads started
check mapped/j2-threads 6 "$(started 'clone3?' "$TMP/j2.trace")"
tr j1 -j1 -o "$TMP/t1.hds" "$TMP/shuffled.json"
check mapped/j1-not 0 "$(grep -c 'fallocate\|MAP_SHARED\|pwrite64' "$TMP/j1.trace")"
check mapped/j1-no-threads 0 "$(started 'clone3?' "$TMP/j1.trace")"
tr stdout -j2 -o - "$TMP/shuffled.json" >/dev/null
check mapped/stdout-not 0 "$(grep -c 'fallocate\|MAP_SHARED\|pwrite64' "$TMP/stdout.trace")"

# ---- HEAPDUMP_TIMING ----
HEAPDUMP_TIMING=1 "$HD" index -q -j2 -o "$TMP/t.hds" "$TMP/leak.json" 2>"$TMP/timing"
for p in scan merge sort resolve build names meta validate write commit; do
	check_grep "timing/$p" "^heapdump: timing: $p +wall +[0-9.]+ s, cpu +[0-9.]+ s, this thread +[0-9.]+ s$" "$TMP/timing"
done
HEAPDUMP_TIMING=1 "$HD" index -q -j1 -o "$TMP/t.hds" "$TMP/leak.json" 2>"$TMP/timing1"
check_grep timing/j1-summary "^heapdump: timing: summary " "$TMP/timing1"
"$HD" index -q -j2 -o "$TMP/t.hds" "$TMP/leak.json" 2>"$TMP/notiming"
check timing/unset "" "$(cat "$TMP/notiming")"
HEAPDUMP_TIMING=0 "$HD" index -q -j2 -o "$TMP/t.hds" "$TMP/leak.json" 2>"$TMP/notiming"
check timing/zero "" "$(cat "$TMP/notiming")"

# ---- failures of the two-thread write ----
# A file size limit below the store: the blocks cannot be reserved
# (fallocate: EFBIG), so the store is written in order, which fails
# cleanly: exit 1, the error named, nothing left (SIGXFSZ ignored, as a
# shell that sets a limit would)
mkdir "$TMP/lim"
(
	trap '' XFSZ
	ulimit -f 64
	"$HD" index -q -j2 -o "$TMP/lim/s.hds" "$TMP/shuffled.json"
) 2>"$TMP/lim.err"
check fail/size-limit-exit 1 "$?"
check_grep fail/size-limit-message "^heapdump: cannot write .*: File too large$" "$TMP/lim.err"
check fail/size-limit-nothing-left "" "$(ls -A "$TMP/lim")"
# the same store fits under a limit above it
(
	trap '' XFSZ
	ulimit -f 100000
	"$HD" index -q -j2 -o "$TMP/lim/s.hds" "$TMP/shuffled.json"
) 2>"$TMP/lim.err"
check fail/size-limit-above "0 " "$? $(cmp "$TMP/ref.hds" "$TMP/lim/s.hds" 2>&1)"
