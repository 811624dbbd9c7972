#!/bin/sh
# tests/bench/stacks_cg.sh - what allocation stacks cost (issue 36),
# counted, not timed, per Ruby of HD_RUBIES:
#   - allocation: instructions under cachegrind of stacks_bench.rb's
#     allocation-heavy loop (BENCH_STACKS_ROUNDS rounds, default 30,000,
#     of a 12-frame call chain that allocates 6 objects), untraced,
#     traced without stacks, with every allocation's stack (sample: 1)
#     and at the default sampling (HeapDump::STACK_SAMPLE); the
#     interpreter's start (the same program, 0 rounds) taken off each,
#     the slowdown is the loop's, against traced without stacks (the
#     issue's budget: at most 5% at the default sampling);
#   - size: gen_big.rb's application heap (BENCH_STACKS_MB, default 30 MB
#     of dump_all output) built traced without stacks and with stacks
#     at the default sampling (stacks_size.rb), its HeapDump.dump and
#     the store heapdump index makes of it (budget: at most 10% more
#     dump).
# On a shared machine a CPU-time ratio varies by 30% from run to run;
# these counts do not. Prints one table of each; exit 1 when a run fails
# or a budget is missed.
#   B=build HD_RUBIES="/usr/bin/ruby ..." sh tests/bench/stacks_cg.sh
# Needs valgrind.
set -u
LC_ALL=C
export LC_ALL
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
B=${B:-build}
HD=${HEAPDUMP:-$B/heapdump}
N=${BENCH_STACKS_ROUNDS:-30000}
MB=${BENCH_STACKS_MB:-30}
command -v valgrind >/dev/null || { echo "stacks_cg.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ -x "$HD" ] || { echo "stacks_cg.sh: $HD is missing: run make" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# instr RUBY EXT MODE ROUNDS: the instructions of the whole run, or FAIL
instr() {
	MODE=$3 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$1" -I "$2" -I src/lib tests/bench/stacks_bench.rb "$4" >/dev/null 2>"$tmp/cg" || { echo FAIL; return 1; }
	awk '/I *refs:/ { gsub(",", "", $NF); print $NF }' "$tmp/cg"
}

failed=0
rows=""
sizes=""
for r in ${HD_RUBIES:-ruby}; do
	v=$("$r" -e 'print RUBY_VERSION' 2>/dev/null) || { echo "  FAILED: $r does not run"; failed=1; continue; }
	ext=$B/ext-$v
	[ -f "$ext/heapdump_ext.so" ] || { echo "  FAILED: $ext/heapdump_ext.so is missing (make ext RUBIES=$r)"; failed=1; continue; }
	def=$("$r" -I "$ext" -I src/lib -rheapdump -e 'print HeapDump::STACK_SAMPLE')
	start=$(instr "$r" "$ext" untraced 0)
	un=$(instr "$r" "$ext" untraced "$N")
	tr=$(instr "$r" "$ext" traced "$N")
	s1=$(instr "$r" "$ext" sample=1 "$N")
	sd=$(instr "$r" "$ext" "sample=$def" "$N")
	case "$start $un $tr $s1 $sd" in *FAIL* | *"  "* | " "* | *" ")
		echo "  FAILED: $v: a cachegrind run failed: $(tail -n 3 "$tmp/cg" | tr '\n' ' ')"
		failed=1
		continue ;;
	esac
	row=$(awk -v v="$v" -v d="$def" -v z="$start" -v u="$un" -v t="$tr" -v a="$s1" -v s="$sd" 'BEGIN {
		u -= z; t -= z; a -= z; s -= z
		printf "  %-8s %10.1f %10.1f %10.1f %+8.1f%% %10.1f %+8.1f%%  (sample %d)\n", v, u / 1e6, t / 1e6,
			a / 1e6, (a / t - 1) * 100, s / 1e6, (s / t - 1) * 100, d }')
	rows="$rows$row
"
	if awk -v t="$tr" -v s="$sd" -v z="$start" 'BEGIN { exit !((s - z) / (t - z) > 1.05) }'; then
		rows="$rows  FAILED: $v: stacks at the default sampling cost over 5% more instructions than tracing
"
		failed=1
	fi
	# the dumps and their stores, traced without and with stacks
	ok=1
	for m in traced "sample=$def"; do
		if ! "$r" -I "$ext" -I src/lib tests/bench/stacks_size.rb "$m" "$tmp/$m.json" "$MB" >"$tmp/$m.out" 2>&1 ||
			! "$HD" index -q "$tmp/$m.json" -o "$tmp/$m.hds" 2>>"$tmp/$m.out"; then
			sizes="$sizes  FAILED: $v $m: $(tail -n 2 "$tmp/$m.out" | tr '\n' ' ')
"
			failed=1
			ok=0
		fi
	done
	if [ $ok -eq 1 ]; then
		set -- $(grep '^size ' "$tmp/traced.out") $(grep '^size ' "$tmp/sample=$def.out")
		st=$(wc -c <"$tmp/traced.hds")
		ss=$(wc -c <"$tmp/sample=$def.hds")
		row=$(awk -v v="$v" -v dt="$3" -v ds="$8" -v o="$9" -v k="${10}" -v st="$st" -v ss="$ss" 'BEGIN {
			printf "  %-8s %8d %7d %9.2f %9.2f %+7.2f%% %9.2f %9.2f %+7.2f%%\n", v, o, k, dt / 1e6, ds / 1e6,
				(ds / dt - 1) * 100, st / 1e6, ss / 1e6, (ss / st - 1) * 100 }')
		sizes="$sizes$row
"
		if awk -v dt="$3" -v ds="$8" 'BEGIN { exit !(ds / dt > 1.10) }'; then
			sizes="$sizes  FAILED: $v: the dump with stacks at the default sampling is over 10% larger
"
			failed=1
		fi
	fi
	rm -f "$tmp"/*.json "$tmp"/*.hds "$tmp"/*.hdmeta
done
echo "  allocation: millions of instructions of $N rounds (the interpreter's start taken off), cachegrind; + against traced"
printf '  %-8s %10s %10s %10s %9s %10s %9s\n' ruby untraced traced "sample 1" "+" default "+"
printf '%s' "$rows"
echo "  size: gen_big's $MB MB heap traced, without stacks and with them at the default sampling (objects: of the stacked dump)"
printf '  %-8s %8s %7s %9s %9s %8s %9s %9s %8s\n' ruby objects stacked "dump MB" "w/stacks" "+" "store MB" "w/stacks" "+"
printf '%s' "$sizes"
exit $failed
