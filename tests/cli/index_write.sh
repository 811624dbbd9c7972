#!/bin/sh
# index_write.sh - how index -j2 writes a store into a regular file
# (lib/store_write.c, write_direct): into a temporary file whose blocks
# are reserved (fallocate), every byte written with pwrite from the
# section images (the padding too, never left to what reserved blocks
# read as), the disk started on each 4 MiB written (sync_file_range,
# SYNC_FILE_RANGE_WRITE), then fsync, then the rename: so a crash never
# leaves a store renamed into place with blocks that were not written.
# The bytes are -j1's. A write that fails anywhere in the sections, the
# summary or the header (the Nth pwrite, a disk full half way) exits 1
# with the error and leaves nothing; so does SIGINT or SIGTERM in the
# middle of the writing.
. "$(dirname "$0")/../lib.sh"
needs strace strace

HD=$HEAPDUMP
unset HEAPDUMP_JOBS HEAPDUMP_SIMD HEAPDUMP_TIMING
faultio_shim
SHIM_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"

# 150,000 objects: a store of about 8 MB, two windows of writeback and
# more, with classes, sites, generations, wide memsizes and two roots
awk 'BEGIN {
	print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x100000\", \"0x2\"]}"
	for (i = 0; i < 150000; i++) {
		a = 1048576 + i * 40
		if (i % 1000 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"CLASS\", \"name\":\"C%d\", \"references\":[\"0x%x\"], \"memsize\":480}\n", a, i, 1048576 + ((i * 7919) % 150000) * 40
		else
			printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x%x\", \"references\":[\"0x%x\", \"0x%x\"], \"file\":\"f%d.rb\", \"line\":%d, \"generation\":%d, \"memsize\":%d}\n", a, 1048576 + (i - i % 1000) * 40, 1048576 + ((i * 31) % 150000) * 40, a + 40, i % 13, i % 97, i % 50, i % 777 == 0 ? 5000000000 : 40
	}
	print "{\"type\":\"ROOT\", \"root\":\"machine_context\", \"references\":[\"0x100028\"]}"
}' >"$TMP/heap.json"
"$HD" index -q -j1 -o "$TMP/ref.hds" "$TMP/heap.json" ||
	notok setup "index -j1 failed"
size=$(stat -c %s "$TMP/ref.hds")
check setup/store-over-8-MiB yes "$([ "$size" -gt 8388608 ] && echo yes)"

# ---- what the write does, in order ----
mkdir "$TMP/o"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -s 0 -o "$TMP/trace" \
	-e trace=fallocate,pwrite64,sync_file_range,fsync,rename,renameat,renameat2,mmap \
	"$HD" index -q -j2 -o "$TMP/o/s.hds" "$TMP/heap.json" 2>"$TMP/err"
check order/exit "0" "$?"
# two threads: a call cut by the other's is put back on one line
joined "$TMP/trace" >"$TMP/trace.j" && mv "$TMP/trace.j" "$TMP/trace"
check order/bytes "" "$(cmp "$TMP/ref.hds" "$TMP/o/s.hds" 2>&1)"
check order/fallocate 1 "$(started fallocate "$TMP/trace")"
# every byte of the file written: the pwrites add up to its size
check order/every-byte-written "$size" "$(grep -E '^[0-9]+ +pwrite64\(' "$TMP/trace" |
	sed -n 's/.*= \([0-9]*\)$/\1/p' | awk '{ s += $1 } END { print s + 0 }')"
# the disk started while writing: one call a 4 MiB window or so
nsync=$(grep -cE '^[0-9]+ +sync_file_range\(.*SYNC_FILE_RANGE_WRITE\) += 0$' "$TMP/trace")
check order/writeback-started "1 to 3 calls" "$([ "$nsync" -ge 1 ] && [ "$nsync" -le 3 ] &&
	echo "1 to 3 calls" || echo "$nsync calls")"
check order/not-mapped 0 "$(grep -c 'MAP_SHARED' "$TMP/trace")"
# the last pwrite, then the file's fsync, then the rename, then the
# directory's fsync: two in all
last_pw=$(grep -nE '^[0-9]+ +pwrite64\(' "$TMP/trace" | tail -1 | cut -d: -f1)
fs=$(grep -nE '^[0-9]+ +fsync\(' "$TMP/trace" | head -1 | cut -d: -f1)
fs2=$(grep -nE '^[0-9]+ +fsync\(' "$TMP/trace" | sed -n 2p | cut -d: -f1)
rn=$(grep -nE '^[0-9]+ +rename(at2?)?\(.*s\.hds' "$TMP/trace" | head -1 | cut -d: -f1)
check order/pwrite-fsync-rename yes "$([ -n "$last_pw" ] && [ -n "$fs" ] && [ -n "$rn" ] &&
	[ -n "$fs2" ] && [ "$last_pw" -lt "$fs" ] && [ "$fs" -lt "$rn" ] &&
	[ "$rn" -lt "$fs2" ] && echo yes)"
check order/fsyncs 2 "$(started fsync "$TMP/trace")"

# ---- a failed write leaves nothing ----
# faulty NAME ERRNO ENV...: index -j2 under the shim
faulty() {
	n=$1 e=$2
	shift 2
	rm -rf "$TMP/o" && mkdir "$TMP/o"
	env LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" FAULTIO_ERRNO="$e" \
		FAULTIO_REPORT="$TMP/report" "$@" \
		"$HD" index -q -j2 -o "$TMP/o/s.hds" "$TMP/heap.json" 2>"$TMP/err"
	rc=$?
	case $e in EIO) msg="Input/output error" ;; *) msg="No space left on device" ;; esac
	if [ $rc != 1 ]; then
		notok "fail/$n" "exit $rc, expected 1: $(head -c 300 "$TMP/err")"
	elif ! grep -q "^heapdump: cannot write '.*s\.hds': $msg\$" "$TMP/err"; then
		notok "fail/$n" "no 'cannot write': $(head -c 300 "$TMP/err")"
	elif ! grep -q 'faults [1-9]' "$TMP/report"; then
		notok "fail/$n" "the shim injected no fault"
	elif [ -n "$(ls -A "$TMP/o")" ]; then
		notok "fail/$n" "left behind: $(ls -A "$TMP/o" | tr '\n' ' ')"
	else
		ok "fail/$n"
	fi
}
rm -f "$TMP/report"
env LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" FAULTIO_REPORT="$TMP/report" \
	"$HD" index -q -j2 -o "$TMP/o/s.hds" "$TMP/heap.json"
w=$(sed -n 's/^writes \([0-9]*\).*/\1/p' "$TMP/report")
check fail/clean-writes yes "$([ "${w:-0}" -ge 10 ] && echo yes)"
# the first pwrite (META), the one after the 4 MiB window, the summary,
# the header (the last)
faulty pwrite-1-ENOSPC ENOSPC FAULTIO_OP=write FAULTIO_NTH=1
faulty pwrite-2-EIO EIO FAULTIO_OP=write FAULTIO_NTH=2
faulty pwrite-middle-ENOSPC ENOSPC FAULTIO_OP=write FAULTIO_NTH=$((w / 2))
faulty pwrite-summary-EIO EIO FAULTIO_OP=write FAULTIO_NTH=$((w - 2))
faulty pwrite-last-ENOSPC ENOSPC FAULTIO_OP=write FAULTIO_NTH="$w"
faulty full-half-way-EIO EIO FAULTIO_OP=write FAULTIO_BYTES=$((size / 2))
faulty full-one-short-ENOSPC ENOSPC FAULTIO_OP=write FAULTIO_BYTES=$((size - 1))

# ---- a signal while the sections are written leaves nothing ----
# (each write slowed to 50 ms: the signal comes once the blocks are
# reserved, so in the middle of the pwrites)
killed() {
	n=$1 sig=$2
	rm -rf "$TMP/o" && mkdir "$TMP/o"
	env LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" FAULTIO_DELAY_US=50000 \
		env --default-signal=INT,TERM \
		"$HD" index -q -j2 -o "$TMP/o/s.hds" "$TMP/heap.json" 2>"$TMP/err" &
	pid=$!
	i=0 seen=""
	while [ $i -lt 600 ]; do
		t=$(ls "$TMP/o" | grep 'tmp' | head -1)
		if [ -n "$t" ] && [ "$(stat -c %s "$TMP/o/$t" 2>/dev/null || echo 0)" -gt 0 ]; then
			seen=$t
			break
		fi
		sleep 0.02
		i=$((i + 1))
	done
	killed_check "$n" "$sig" $pid "$TMP/o" "$seen" "no reserved temporary file after 12 s"
}
killed TERM TERM
killed INT INT

# ---- a store written over an existing one, through a link ----
rm -rf "$TMP/o" && mkdir "$TMP/o"
printf 'old' >"$TMP/o/old.hds"
chmod 640 "$TMP/o/old.hds"
ln -s old.hds "$TMP/o/link.hds"
"$HD" index -q -j2 -o "$TMP/o/link.hds" "$TMP/heap.json"
check replace/bytes "" "$(cmp "$TMP/ref.hds" "$TMP/o/old.hds" 2>&1)"
check replace/link-kept yes "$([ -L "$TMP/o/link.hds" ] && echo yes)"
check replace/nothing-else "link.hds old.hds" "$(ls "$TMP/o" | tr '\n' ' ' | sed 's/ $//')"
