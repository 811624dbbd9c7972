#!/bin/sh
# tests/bench/malloc_cg.sh - the malloc tracker's cost counted, not
# timed: cachegrind's instructions and simulated D1 and last-level (8 MB)
# misses of the whole run of malloc_bench.sh's two programs, made smaller
# (200,000 Strings; 100,000 object groups), with and without
# libheapdump-malloc.so, per Ruby of HD_RUBIES. On a shared machine a
# CPU-time ratio varies by 30% from run to run; these counts do not.
# The estimate weighs a D1 miss as 10 instructions and a last-level miss
# as 100. Kernel time (page faults) is not in these counts.
#   B=build HD_RUBIES="/usr/bin/ruby ..." sh tests/bench/malloc_cg.sh
# Needs valgrind. Exit 1 when a run fails.
set -u
LC_ALL=C
export LC_ALL
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
B=${B:-build}
command -v valgrind >/dev/null || { echo "malloc_cg.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ALLOC='200_000.times { "x" * 1000 }'
OBJS='a = 100_000.times.map { |i| [i.to_s, { a: i }, Object.new, [i, i]] }; a = nil; GC.start'

# counts ENV... RUBY -e PROG: "instructions d1-misses ll-misses"
counts() {
	env "$@" >/dev/null 2>"$tmp/cg" || { echo FAIL; return 1; }
	awk '/I *refs:/ { gsub(",", "", $NF); i = $NF }
	     /D1  misses:/ { gsub(",", "", $4); d = $4 }
	     /LL misses:/ { gsub(",", "", $4); l = $4 }
	     END { print i, d, l }' "$tmp/cg"
}

CG="valgrind --tool=cachegrind --cache-sim=yes --LL=8388608,16,64 --cachegrind-out-file=/dev/null"
failed=0
printf '  %-8s %-6s %14s %14s %8s %10s\n' ruby prog instructions "+tracker" "+%" "estimate"
for r in ${HD_RUBIES:-ruby}; do
	v=$("$r" -e 'print RUBY_VERSION' 2>/dev/null) || { echo "  FAILED: $r does not run"; failed=1; continue; }
	lib=$top/$B/ext-$v/libheapdump-malloc.so
	[ -f "$lib" ] || { echo "  FAILED: $lib is missing (make ext RUBIES=$r)"; failed=1; continue; }
	for p in ALLOC OBJS; do
		eval prog=\$$p
		off=$(counts $CG "$r" -e "$prog")
		on=$(counts LD_PRELOAD="$lib" HEAPDUMP_MALLOC_DIR="$tmp" HEAPDUMP_MALLOC_AT_EXIT=0 \
			HEAPDUMP_MALLOC_SIGNAL=none $CG "$r" -e "$prog")
		case "$off$on" in *FAIL*) echo "  FAILED: $v $p: $(tail -n 2 "$tmp/cg")"; failed=1; continue ;; esac
		echo "$off $on" | awk -v v="$v" -v p="$p" '{
			c0 = $1 + 10 * $2 + 100 * $3; c1 = $4 + 10 * $5 + 100 * $6
			printf "  %-8s %-6s %14d %14d %+7.1f%% %+9.1f%%\n", v, tolower(p), $1, $4, ($4 / $1 - 1) * 100, (c1 / c0 - 1) * 100 }'
	done
done
exit $failed
