#!/bin/sh
# mapped.sh - a plain dump file and a store are read where they are
# mapped (lib/util/filemap.c):
#  - every fixture says the same read mapped (-j1, -j2) as read from a
#    pipe: output, problem reports, exit code, lenient and --strict;
#  - stats keeps only a window of the dump mapped (or reads it with
#    read(2), where the page cache holds it in small pages): its peak
#    resident size on an 80 MB dump stays far under the dump's size, -j1
#    and -j2;
#  - a dump (of 5 MB: under 8 MiB, always mapped) or a store that
#    another program truncates while it is read
#    (tests/faults/faultio.c cuts it right after it is mapped) ends the
#    program with exit 1 and one error naming it (control bytes escaped),
#    and the output being written is not left behind;
#  - a SIGBUS sent by another process still kills the program.
# Builds without mappings (HD_NO_MMAP: the sanitizers') read with
# read(2): nothing is mapped, so nothing is cut, and the reads succeed.
. "$(dirname "$0")/../lib.sh"

HD=$HEAPDUMP
unset HEAPDUMP_JOBS HEAPDUMP_SIMD
needs jq jq
TIME=/usr/bin/time
[ -x "$TIME" ] || { notok needs-time "/usr/bin/time is missing: apt-get install time"; exit 1; }
faultio_shim
SHIM_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
MAPS=yes
[ -n "${SAN_FLAGS:-}" ] && MAPS=no

# replaced FROM TO: standard input with every FROM (a string) made TO
replaced() {
	awk -v f="$1" -v t="$2" '{ out = ""
		while ((i = index($0, f)) > 0) {
			out = out substr($0, 1, i - 1) t
			$0 = substr($0, i + length(f))
		}
		print out $0 }'
}

# ---- the same mapped as from a pipe ----
BY='--by type --by class --by location,method --by gem --by generation
 --by imemo --by length --by file --format json --all'
bad='' n=0
for f in $(sweep_dumps); do
	case $f in *.gz) continue ;; esac
	for strict in '' --strict; do
		for j in 1 2; do
			# shellcheck disable=SC2086 # BY is a list of words
			"$HD" stats -q -j$j $BY $strict "$f" >"$TMP/m.out" 2>"$TMP/m.err"
			echo $? >"$TMP/m.rc"
			# shellcheck disable=SC2086
			"$HD" stats -q -j$j $BY $strict - <"$f" >"$TMP/p.out" 2>"$TMP/p.err"
			echo $? >"$TMP/p.rc"
			# the names differ: "-" in the output, (stdin) in errors
			replaced "\"dump\":\"$f\"" '"dump":"-"' <"$TMP/m.out" >"$TMP/m.out2"
			replaced "$f" '(stdin)' <"$TMP/m.err" >"$TMP/m.err2"
			n=$((n + 1))
			cmp -s "$TMP/m.out2" "$TMP/p.out" &&
				cmp -s "$TMP/m.err2" "$TMP/p.err" &&
				cmp -s "$TMP/m.rc" "$TMP/p.rc" ||
				bad="$bad ${f##*/}${strict:+ $strict} -j$j;"
		done
	done
done
check "same-as-a-pipe ($n reads)" "" "$bad"

# ---- a window of the dump mapped ----
# 80 MB of objects; the peak resident size less a tiny dump's stays
# under 48 MB (the 32 MiB the readers keep mapped, whole 2 MiB folios
# of the page cache at their ends, heap), -j1 and -j2
awk 'BEGIN {
	for (i = 0; i < 520000; i++)
		printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x%x\", \"references\":[\"0x%x\", \"0x%x\"], \"file\":\"app/models/f%d.rb\", \"line\":%d, \"generation\":%d, \"memsize\":%d}\n", 1048576 + i * 40, 1048576 + (i % 300) * 40, 1048576 + ((i * 31) % 520000) * 40, 1048576 + i * 40 + 40, i % 13, i % 97, i % 50, 40
}' >"$TMP/big.json"
"$TIME" -f %M -o "$TMP/m0" "$HD" stats -q "$DATA/leak_before.json" >/dev/null 2>&1
base=$(tail -1 "$TMP/m0")
size=$(($(wc -c <"$TMP/big.json") / 1024))
for j in 1 2; do
	"$TIME" -f %M -o "$TMP/m1" "$HD" stats -q -j$j "$TMP/big.json" >"$TMP/out" 2>&1
	rc=$?
	rss=$(tail -1 "$TMP/m1")
	if [ $rc != 0 ]; then
		notok "window/j$j" "exit $rc: $(head -c 200 "$TMP/out")"
	elif [ "$size" -lt 76800 ]; then
		notok "window/j$j" "the dump is only $size KiB"
	elif [ $((rss - base)) -le 49152 ]; then
		ok "window/j$j"
	else
		notok "window/j$j" "peak RSS $rss KiB, $((rss - base)) over a tiny dump's, for a dump of $size KiB"
	fi
done
check window/objects 520000 "$("$HD" stats -q --format json "$TMP/big.json" | jq '.totals.objects')"
rm -f "$TMP/big.json"

# ---- a dump truncated while it is read ----
# 30,000 objects (about 5 MB), cut to 100,000 bytes once mapped
awk 'BEGIN {
	print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x100000\"]}"
	for (i = 0; i < 30000; i++)
		printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x100000\", \"references\":[\"0x%x\"], \"file\":\"a.rb\", \"line\":%d, \"memsize\":40}\n", 1048576 + i * 40, 1048576 + ((i * 7) % 30000) * 40, i % 50
}' >"$TMP/whole.json"
"$HD" index -q -o "$TMP/whole.hds" "$TMP/whole.json" || notok setup "index failed"

# shrunk NAME FILE CMD...: CMD (naming FILE, a copy made here of
# whole.json or whole.hds) under the shim: with mappings it exits 1 with
# the error naming FILE, the shim having cut it, and $TMP/o (where an
# output goes) is left empty; without, it succeeds, nothing cut
shrunk() {
	n=$1 f=$2
	shift 2
	rm -rf "$TMP/o" "$TMP/report" && mkdir "$TMP/o"
	env LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" FAULTIO_SHRINK=100000 \
		FAULTIO_REPORT="$TMP/report" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cut=$(sed -n 's/.* shrunk \([0-9]*\)$/\1/p' "$TMP/report" 2>/dev/null)
	esc=$(printf '%s' "$f" | awk '{ s = ""; for (i = 1; i <= length($0); i++) {
		c = substr($0, i, 1)
		if (c == "\033") s = s "\\u001b"; else s = s c }
		print s }')
	want="heapdump: cannot read '$esc': the file shrank while it was read (another program truncated or rewrote it)"
	if [ $MAPS = no ]; then
		if [ $rc = 0 ] && [ "${cut:-0}" = 0 ]; then ok "shrunk/$n"; else
			notok "shrunk/$n" "without mappings: exit $rc, shrunk '${cut:-}': $(head -c 200 "$TMP/err")"
		fi
	elif [ "${cut:-0}" != 1 ]; then
		notok "shrunk/$n" "the shim cut nothing (report: $(cat "$TMP/report" 2>/dev/null))"
	elif [ $rc != 1 ]; then
		notok "shrunk/$n" "exit $rc, expected 1: $(head -c 200 "$TMP/err")"
	elif [ "$(cat "$TMP/err")" != "$want" ]; then
		notok "shrunk/$n" "said '$(head -c 300 "$TMP/err")'"
	elif [ -n "$(ls -A "$TMP/o")" ]; then
		notok "shrunk/$n" "left behind: $(ls -A "$TMP/o" | tr '\n' ' ')"
	else
		ok "shrunk/$n"
	fi
}
for j in 1 2; do
	cp "$TMP/whole.json" "$TMP/d.json"
	shrunk stats-j$j "$TMP/d.json" "$HD" stats -q -j$j "$TMP/d.json"
	cp "$TMP/whole.json" "$TMP/d.json"
	shrunk index-j$j "$TMP/d.json" "$HD" index -q -j$j -o "$TMP/o/d.hds" "$TMP/d.json"
done
cp "$TMP/whole.json" "$TMP/d.json"
shrunk subdump "$TMP/d.json" "$HD" subgraph-of -q --type OBJECT -o "$TMP/o/sub.json" "$TMP/d.json"
cp "$TMP/whole.hds" "$TMP/d.hds"
shrunk store "$TMP/d.hds" "$HD" stats -q "$TMP/d.hds"
# a name with an escape byte is said escaped as in every other message
# (the text escaper: \u001b)
e=$(printf 'x\033y.json')
cp "$TMP/whole.json" "$TMP/$e"
shrunk escaped-name "$TMP/$e" "$HD" stats -q "$TMP/$e"
rm -f "$TMP/$e"

# ---- a SIGBUS from elsewhere kills ----
# stats waits for a writer of a FIFO; kill -BUS is no lost page
mkfifo "$TMP/fifo"
"$HD" stats -q "$TMP/fifo" >/dev/null 2>"$TMP/err" &
pid=$!
sleep 0.3
kill -BUS $pid
wait $pid 2>/dev/null
check sigbus-kill/exit 135 $?
check sigbus-kill/silent "" "$(cat "$TMP/err")"
