#!/bin/sh
# gzip.sh - gzip dumps are inflated on a thread of their own (lib/gz.c)
# while the caller's thread scans, by ISA-L's igzip in the default build
# and by zlib in $B/gzzlib/heapdump (make ISAL=0's inflater). Both
# programs read every case the same, from a file and from a pipe: several
# members, an empty member, zero padding, data after the padding, bytes
# that are not a member after one, a bad CRC, a bad length, a bad
# method or flags, a bad block,
# a stream cut at a line boundary and inside a line (lenient and strict).
# Each error surfaces at the line it did before the thread, after the
# lines before it were read and reported. A pipe whose writer pauses
# hands on what was inflated, so --strict fails at once, and the reader
# stops its thread even while the writer still holds the pipe open.
# Every input is generated here, in a temporary directory.
. "$(dirname "$0")/../lib.sh"
needs gzip gzip
needs python3 python3
needs jq jq
needs ldd libc-bin

B=${B:-build}
case $B in
/*) ZLIB=$B/gzzlib/heapdump ;;
*) ZLIB=$TOP/$B/gzzlib/heapdump ;;
esac
HD=$HEAPDUMP
REAL=${HEAPDUMP_REAL:-$HEAPDUMP}
if [ ! -x "$ZLIB" ]; then
	notok built "$ZLIB is missing: make check builds it (make $B/gzzlib/heapdump)"
	exit 1
fi
ok built

# the default build inflates with ISA-L, which it loads (dlopen) at the
# first gzip dump and never links; the other inflates with zlib alone
gzip -c "$DATA/ok_ruby3.1_clean.json" >"$TMP/isal.json.gz"
isal_loads() {
	loaded "$@"
	printf '%s\n' "$libs" | grep -c '^libisal'
}
check isal-not-linked 0 "$(ldd "$REAL" | grep -c libisal)"
check isal-loaded-for-gzip 1 "$(isal_loads "$REAL" stats "$TMP/isal.json.gz")"
check isal-not-loaded-plain 0 "$(isal_loads "$REAL" stats "$DATA/ok_ruby3.1_clean.json")"
check zlib-build-no-isal 0 "$(isal_loads "$ZLIB" stats "$TMP/isal.json.gz")"

cd "$TMP" || exit 1
CLEAN="$DATA/ok_ruby3.1_clean.json"     # no problem, strict reads it
TRACED="$DATA/ok_ruby3.1_traced.json"   # repaired lines at 503 and 512
n=$(wc -l <"$TRACED")
lines_clean=$(wc -l <"$CLEAN")

# ---- the inputs ----
gzip -c "$TRACED" >t.gz
tsize=$(wc -c <t.gz)
{ head -n 100 "$TRACED" | gzip -c; gzip -c </dev/null
  tail -n +101 "$TRACED" | gzip -1 -c; } >members.gz
{ cat t.gz; head -c 100 /dev/zero; } >pad.gz
{ cat t.gz; head -c 100 /dev/zero; printf 'garbage'; } >padgarbage.gz
{ cat t.gz; printf 'garbage'; } >garbage.gz
python3 - "$CLEAN" <<'EOF'
import sys, zlib
t = open("t.gz", "rb").read()
b = bytearray(t); b[-8] ^= 0xff; open("crc.gz", "wb").write(b)
b = bytearray(t); b[-2] ^= 0xff; open("len.gz", "wb").write(b)
b = bytearray(t); b[2] = 7; open("method.gz", "wb").write(b)
b = bytearray(t); b[3] |= 0x40; open("flags.gz", "wb").write(b)
# a clean dump flushed (Z_SYNC_FLUSH) after its line 4000: a stream cut
# there ends at a line boundary, one cut later inside a line, and a
# reserved block type (3) written there is a damaged block
lines = open(sys.argv[1], "rb").read().split(b"\n")
c = zlib.compressobj(6, zlib.DEFLATED, 31)
a = c.compress(b"\n".join(lines[:4000]) + b"\n") + c.flush(zlib.Z_SYNC_FLUSH)
rest = c.compress(b"\n".join(lines[4000:])) + c.flush()
open("cut.gz", "wb").write(a)
open("cutmid.gz", "wb").write(a + rest[: len(rest) // 2])
open("block.gz", "wb").write(a + b"\xff\xff\xff\xff" + rest[4:])
print(len(a), file=open("flush_at", "w"))
EOF
flush_at=$(cat flush_at)

# run NAME PROGRAM INPUT [ARGS]: stats of INPUT as a file and piped; the
# output of both in NAME.file and NAME.pipe (stdout, stderr, exit), with
# the input's name made the same
run() {
	rn=$1 rp=$2 ri=$3
	shift 3
	"$rp" stats "$@" "$ri" >"$rn.json" 2>"$rn.err"
	echo "exit $?" >>"$rn.err"
	{ cat "$rn.json"; cat "$rn.err"; } >"$rn.file"
	"$rp" stats "$@" - <"$ri" >"$rn.out" 2>"$rn.err"
	echo "exit $?" >>"$rn.err"
	# the input's name is the only difference
	sed -e "s/(stdin)/$ri/g" -e "s/\"dump\":\"-\"/\"dump\":\"$ri\"/" \
		"$rn.out" "$rn.err" >"$rn.pipe"
}

# both NAME INPUT [ARGS]: runs both programs; the four outputs agree
both() {
	name=$1
	shift
	run "$name.isal" "$HD" "$@"
	run "$name.zlib" "$ZLIB" "$@"
	same=yes
	for o in "$name.isal.pipe" "$name.zlib.file" "$name.zlib.pipe"; do
		cmp -s "$name.isal.file" "$o" || same="$o differs"
	done
	check "$name/builds-and-pipe-agree" yes "$same"
}

# expect NAME PATTERN: every output of NAME has a line matching PATTERN
expect() {
	for o in "$1".isal.file "$1".isal.pipe "$1".zlib.file "$1".zlib.pipe; do
		check_grep "$1/$(echo "$o" | sed 's/^.*\.\([a-z]*\)\.\([a-z]*\)$/\1-\2/')-$2" "$3" "$o"
	done
}

totals() { jq -c .totals "$1" 2>/dev/null; }
want=$("$HD" stats -q --format json "$TRACED" 2>/dev/null | jq -c .totals)

# ---- what reads ----
both whole t.gz -q --format json
check whole/totals "$want" "$(totals whole.isal.json)"
both members members.gz -q --format json
check members/totals "$want" "$(totals members.isal.json)"
both pad pad.gz -q --format json
check pad/totals "$want" "$(totals pad.isal.json)"
check pad/exit 1 "$(grep -c '^exit 0$' pad.isal.file)"

# ---- what does not: the error at the line after the last, once the
# lines before were read (their reports come first) ----
last=$((n + 1))
both padgarbage padgarbage.gz
expect padgarbage message "^heapdump: padgarbage\.gz:$last:1: data after the zero padding of the gzip stream at compressed byte $((tsize + 100))\$"
expect padgarbage before "^heapdump: padgarbage\.gz:503:142: record split by a raw newline"
expect padgarbage exit '^exit 1$'
both garbage garbage.gz
expect garbage message "^heapdump: garbage\.gz:$last:1: corrupt gzip stream near compressed byte $((tsize + 2)): incorrect header check\$"
expect garbage exit '^exit 1$'
both crc crc.gz
expect crc message "^heapdump: crc\.gz:$last:1: corrupt gzip stream near compressed byte $((tsize - 4)): incorrect data check\$"
expect crc before "^heapdump: crc\.gz:512:94: unescaped quote"
expect crc exit '^exit 1$'
both len len.gz
expect len message "^heapdump: len\.gz:$last:1: corrupt gzip stream near compressed byte $tsize: incorrect length check\$"
expect len exit '^exit 1$'
both method method.gz
expect method message "^heapdump: method\.gz:1:1: corrupt gzip stream near compressed byte 4: unknown compression method\$"
expect method exit '^exit 1$'
both flags flags.gz
expect flags message "^heapdump: flags\.gz:1:1: corrupt gzip stream near compressed byte 4: unknown header flags set\$"
both block block.gz
expect block message "^heapdump: block\.gz:4001:1: corrupt gzip stream near compressed byte $((flush_at + 1)): invalid block type\$"
both block-strict block.gz --strict
expect block-strict message "^heapdump: block\.gz:4001:1: corrupt gzip stream near compressed byte $((flush_at + 1)): invalid block type\$"

# ---- cut short: lenient reads what is there and says so; strict fails
# at the cut, after the lines before ----
both cut cut.gz -q --format json
expect cut message "^heapdump: cut\.gz:4001:1: gzip stream is truncated: the dump is incomplete \(skipped\)\$"
expect cut exit '^exit 0$'
check cut/objects-read 1 "$(jq '.totals.objects > 3000' cut.isal.json | grep -c true)"
both cut-strict cut.gz --strict
bytes=$(head -n 4000 "$CLEAN" | wc -c)
expect cut-strict message "^heapdump: cut\.gz:4001:1: gzip stream is truncated after $bytes bytes\$"
expect cut-strict exit '^exit 1$'
both cutmid cutmid.gz -q
expect cutmid message "^heapdump: cutmid\.gz:[0-9]+:[0-9]+: gzip stream is truncated: the last line is cut short \(repaired\)\$"
expect cutmid exit '^exit 0$'
# strict: the byte count may differ by the last bits ISA-L cannot decode
# without the bytes after them; the line is the same
for v in isal zlib; do
	p=$HD && [ $v = zlib ] && p=$ZLIB
	"$p" stats --strict cutmid.gz >/dev/null 2>cutmid-strict.err
	echo "exit $?" >>cutmid-strict.err
	check_grep "cutmid-strict/$v" "^heapdump: cutmid\.gz:[0-9]+:1: gzip stream is truncated after [0-9]+ bytes\$" cutmid-strict.err
	check_grep "cutmid-strict/$v-exit" '^exit 1$' cutmid-strict.err
	sed -n 's/^heapdump: cutmid\.gz:\([0-9]*\):1: .*/\1/p' cutmid-strict.err >>cutmid-strict.lines
done
check cutmid-strict/same-line 1 "$(sort -u cutmid-strict.lines | wc -l)"
check cutmid-strict/line-of-cut "$(sed -n 's/^heapdump: cutmid\.gz:\([0-9]*\):.*cut short.*/\1/p' cutmid.isal.file)" "$(head -n 1 cutmid-strict.lines)"

# ---- every gzip fixture: both builds as the uncompressed dump ----
for f in "$DATA"/*.json.gz; do
	b=$(basename "$f" .json.gz)
	case $b in bad_gzip_*)
		# damaged (tests/cli/bad_inputs.sh): both builds say the same
		"$HD" stats "$f" >"$b.isal" 2>&1
		echo "exit $?" >>"$b.isal"
		"$ZLIB" stats "$f" >"$b.zlib" 2>&1
		echo "exit $?" >>"$b.zlib"
		check "fixture-$b/builds-agree" same "$(cmp -s "$b.isal" "$b.zlib" && echo same || diff "$b.isal" "$b.zlib" | head -4)"
		continue ;;
	esac
	a=$(gzip -dc "$f" | "$HD" stats -q --format json - 2>/dev/null | jq -c .totals)
	check "fixture-$b/isal" "$a" "$("$HD" stats -q --format json "$f" 2>/dev/null | jq -c .totals)"
	check "fixture-$b/zlib" "$a" "$("$ZLIB" stats -q --format json "$f" 2>/dev/null | jq -c .totals)"
done

# ---- a pipe whose writer pauses ----
# The inflater runs on a second thread; --strict fails on line 1 while
# the writer still holds the pipe open, and the reader's thread, blocked
# in its read, stops: heapdump exits at once, not when the writer ends.
{ printf '{"type":"ROOT", "root":"vm", "references":[]}\n{"address":"0x1", "type":"STRING" "x"}\n'; cat "$CLEAN"; } | gzip -c >strictbad.gz
for v in isal zlib; do
	p=$HD && [ $v = zlib ] && p=$ZLIB
	rm -f fifo && mkfifo fifo
	"$p" stats --strict - <fifo >/dev/null 2>strict.err &
	pid=$!
	exec 3>fifo
	cat strictbad.gz >&3
	k=0
	while kill -0 "$pid" 2>/dev/null && [ $k -lt 100 ]; do
		sleep 0.1
		k=$((k + 1))
	done
	alive=$(kill -0 "$pid" 2>/dev/null && echo running || echo exited)
	exec 3>&-
	wait "$pid"
	rc=$?
	check "pause-strict/$v-exits-while-the-writer-waits" exited "$alive"
	check "pause-strict/$v-exit" 1 "$rc"
	check_grep "pause-strict/$v-message" '^heapdump: \(stdin\):2:' strict.err
done
# two threads while reading a gzip pipe, one while reading a plain one
for kind in gz plain; do
	rm -f fifo && mkfifo fifo
	"$HD" stats -q - <fifo >/dev/null 2>&1 &
	pid=$!
	exec 3>fifo
	if [ $kind = gz ]; then gzip -c "$CLEAN" >&3; else head -n 10 "$CLEAN" >&3; fi
	sleep 0.5
	t=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
	exec 3>&-
	wait "$pid"
	rc=$?
	if [ $kind = gz ]; then check threads-gzip 2 "$t"; else check threads-plain 1 "$t"; fi
	check "threads-$kind-exit" 0 "$rc"
done
