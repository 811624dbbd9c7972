#!/bin/sh
# tests/bench/bench.sh - times heapdump on a large generated dump, beside
# heapy, jq and the I/O floor (wc -l, cat). Run by "make bench"; see
# tests/bench/README.md for what is measured and how to read the table.
#
# Knobs (environment):
#   BENCH_MB=1000        size of the generated dump in MB (10^6 bytes)
#   BENCH_SKIP_PEERS=1   do not run heapy and jq
#   BENCH_DUMP=FILE      time this dump instead of generating one
#   BENCH_RUNS=N         run each heapdump row N times, keep the fastest (1)
#   BENCH_TIMEOUT=S      limit for each peer run, in seconds (600)
#   HEAPDUMP=PATH        the program to time (build/heapdump)
#   RUBY=PATH            the Ruby that generates the dumps (ruby)
#   HD_RUBIES="R1 R2"    the Rubies the gem is timed on (make bench: RUBIES)
#   BENCH_EXT_OBJECTS=N  objects in the gem's heap (2000000)
#   BENCH_EXT_RUNS=N     runs of each dumper per Ruby, best kept (3)
#   BENCH_ONLY=ext       only the gem's rows (HeapDump.dump, dump_all)
#   BENCH_ONLY=scan      only the scanner: stats -j1 / -jN beside wc -l,
#                        simdjson, heapy, jq, the targets and the scaling
#                        rows (0.1 and 1 GB; 6 GB too with BENCH_MB=6000)
#   BENCH_JOBS=N         the threads of the "-jN" rows (nproc)
#
# Exits 1 if any heapdump row failed, 2 if the benchmark could not run.
set -u
LC_ALL=C
export LC_ALL
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2

B=${B:-build}
HD=${HEAPDUMP:-$B/heapdump}
RUBY=${RUBY:-ruby}
MB=${BENCH_MB:-1000}
SKIP_PEERS=${BENCH_SKIP_PEERS:-0}
RUNS=${BENCH_RUNS:-1}
TMO=${BENCH_TIMEOUT:-600}
TIME=/usr/bin/time
OUT=$B/bench
LOG=$OUT/log
RES=$OUT/results-big.tsv

die() {
	echo "bench: $*" >&2
	exit 2
}

case $MB in '' | *[!0-9]* | 0) die "BENCH_MB must be a positive integer, not '$MB'" ;; esac
case $RUNS in '' | *[!0-9]* | 0) die "BENCH_RUNS must be a positive integer, not '$RUNS'" ;; esac
case $TMO in '' | *[!0-9]* | 0) die "BENCH_TIMEOUT must be a positive integer, not '$TMO'" ;; esac
[ -x "$TIME" ] || die "$TIME is missing: apt-get install time"
command -v "$RUBY" >/dev/null 2>&1 || die "'$RUBY' is missing: apt-get install ruby"
mkdir -p "$LOG" || die "cannot create $LOG"
tf=$(mktemp) || die "mktemp failed"
trap 'rm -f "$tf"' EXIT
: >"$RES"
hd_failed=0

# ensure_dump GENERATOR DUMP ARG: (re)generates DUMP with
# "ruby GENERATOR DUMP ARG" unless it exists and DUMP.sum says it came from
# the same generator text, argument and Ruby.
ensure_dump() {
	gen=$1 dump=$2 arg=$3
	want="$(sha256sum <"$gen" | cut -d' ' -f1) $arg $("$RUBY" -e 'print RUBY_VERSION')"
	if [ -s "$dump" ] && [ -f "$dump.sum" ] && [ "$(cat "$dump.sum")" = "$want" ]; then
		echo "using cached $dump"
		return 0
	fi
	rm -f "$dump" "$dump.sum"
	echo "generating $dump with $gen $arg ..."
	if ! "$TIME" -f '%e %M' -o "$tf" "$RUBY" "$gen" "$dump.tmp" "$arg"; then
		rm -f "$dump.tmp"
		die "$gen failed"
	fi
	mv "$dump.tmp" "$dump" || die "cannot write $dump"
	printf '%s\n' "$want" >"$dump.sum"
	echo "generated in $(cut -d' ' -f1 "$tf") s," \
		"generator peak RSS $(mb "$(cut -d' ' -f2 "$tf")") MB"
}

# mb KB: kibibytes (GNU time's %M) as decimal megabytes.
mb() {
	awk -v k="$1" 'BEGIN { printf "%.0f", k * 1024 / 1e6 }'
}

# row KIND LABEL STDOUT COMMAND...: times COMMAND with GNU time; STDOUT
# receives its output, $LOG/<label>.err its errors. KIND is "hd" (a
# heapdump row: a failure counts), "floor" (both: fastest of BENCH_RUNS)
# or "peer" (run once, limited to BENCH_TIMEOUT seconds; also the simdjson
# reference). Appends to $RES:
# label, kind, status (ok, FAILED, timeout), wall s, peak RSS KB,
# CPU s (user + system), note.
row() {
	kind=$1 label=$2 sout=$3
	shift 3
	err=$LOG/$(printf '%s' "$label" | tr -c 'A-Za-z0-9.-' '_').err
	n=1
	[ "$kind" != peer ] && n=$RUNS
	wall='' rss='' cpu='' status=ok note=''
	i=0
	while [ $i -lt "$n" ]; do
		i=$((i + 1))
		if [ "$kind" = peer ]; then
			"$TIME" -f '%e %M %U %S' -o "$tf" timeout "$TMO" "$@" >"$sout" 2>"$err"
		else
			"$TIME" -f '%e %M %U %S' -o "$tf" "$@" >"$sout" 2>"$err"
		fi
		rc=$?
		if [ "$kind" = peer ] && [ $rc -eq 124 ]; then
			status=timeout note="over ${TMO} s"
			wall='' rss='' cpu=''
			break
		fi
		if [ $rc -ne 0 ]; then
			status=FAILED
			note="exit $rc: $(grep -v '^Command exited' "$err" | head -n 1 | cut -c1-160)"
			wall='' rss='' cpu=''
			break
		fi
		t=$(tail -n 1 "$tf")
		w=$(echo "$t" | cut -d' ' -f1)
		if [ -z "$wall" ] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then
			wall=$w
			rss=$(echo "$t" | cut -d' ' -f2)
			cpu=$(echo "$t" | awk '{ printf "%.2f", $3 + $4 }')
		fi
	done
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$kind" "$status" \
		"$wall" "$rss" "$cpu" "$note" >>"$RES"
	case $status in
	ok) printf '  %-34s %8s s %8s MB %8s s CPU\n' "$label" "$wall" "$(mb "$rss")" "$cpu" ;;
	timeout) printf '  %-34s timeout (%s)\n' "$label" "$note" ;;
	*) printf '  FAILED: %s: %s\n' "$label" "$note" ;;
	esac
	if [ "$kind" = hd ] && [ "$status" != ok ]; then
		hd_failed=1
	fi
	[ "$status" = ok ]
}

# hd_missing LABEL: records a heapdump row that cannot run.
hd_missing() {
	printf '%s\thd\tFAILED\t\t\t\t%s\n' "$1" "$2" >>"$RES"
	printf '  FAILED: %s: %s\n' "$1" "$2"
	hd_failed=1
}

# table DUMP_BYTES BASE_LABEL: prints the rows of $RES with ratios against
# the row BASE_LABEL.
table() {
	awk -F '\t' -v bytes="$1" -v base="$2" '
	{ lab[NR] = $1; st[NR] = $3; w[NR] = $4; m[NR] = $5; c[NR] = $6; note[NR] = $7
	  if ($1 == base && $3 == "ok") { bw = $4; bm = $5 } }
	END {
		f = "%-30s %8s %7s %7s %7s  %s\n"
		printf f, "tool", "wall s", "RSS MB", "CPU s", "GB/s", "vs " base
		for (i = 1; i <= NR; i++) {
			if (st[i] != "ok") {
				if (st[i] == "timeout")
					printf f, lab[i], "timeout", "-", "-", "-", note[i]
				else
					printf f, lab[i], "-", "-", "-", "-", "FAILED: " note[i]
				continue
			}
			# %e counts hundredths: 0.00 means "under 0.01 s".
			gbs = w[i] > 0 ? sprintf("%.2f", bytes / 1e9 / w[i]) : \
				sprintf(">%.1f", bytes / 1e9 / 0.01)
			if (lab[i] == base)
				cmp = "baseline"
			else if (bw == "")
				cmp = "n/a (no baseline)"
			else if (w[i] == 0 || bw == 0)
				cmp = "n/a (under 0.01 s)"
			else {
				r = w[i] / bw
				if (r > 0.95 && r < 1.05)
					cmp = "same speed"
				else
					cmp = r >= 1 ? sprintf("%.1fx slower", r) : sprintf("%.1fx faster", 1 / r)
				cmp = cmp sprintf(", %.1fx the memory", bm > 0 ? m[i] / bm : 0)
			}
			printf f, lab[i], sprintf("%.2f", w[i]), sprintf("%.0f", m[i] * 1024 / 1e6),
				c[i], gbs, cmp
		}
	}' "$RES"
}

# store_ratios STORE_BYTES DOM_STORE_BYTES DUMP_BYTES: issue 14's store
# figures from this run's rows, as ratios: the store and index's time and
# RSS against the dump (targets: store <= 20%, RSS <= 30%, <= 2 s on the
# 1.26 GB dump), the store-backed rows against their store (targets:
# stats and top with a stored tree <= 50 ms, RSS <= the store + 20%).
store_ratios() {
	awk -F '\t' -v s="$1" -v ds="$2" -v d="$3" '
	$3 == "ok" { w[$1] = $4; m[$1] = $5 * 1024 }
	END {
		print "== store figures (one run; targets of issue 14 in brackets)"
		printf "  %-30s %7.1f MB  %5.1f%% of the dump [<= 20%%]\n", "store", s / 1e6, 100 * s / d
		if (ds > 0)
			printf "  %-30s %7.1f MB  %5.1f%% of the dump\n", "store with dominators", ds / 1e6, 100 * ds / d
		if ("heapdump index" in w)
			printf "  %-30s %7.2f s   RSS %5.1f%% of the dump [<= 2 s, <= 30%%]\n", "heapdump index", w["heapdump index"], 100 * m["heapdump index"] / d
		n = split("heapdump stats (store)|top (dominators of the heap)|top --by class", L, "|")
		for (i = 1; i <= n; i++)
			if (L[i] in w)
				printf "  %-30s %7.2f s   RSS %5.1f%% of the store [%s, <= 120%%]\n", L[i], w[L[i]], 100 * m[L[i]] / s, i == 1 ? "<= 0.05 s" : "<= 1 s"
		if (ds > 0 && ("top (stored dominators)" in w))
			printf "  %-30s %7.2f s   RSS %5.1f%% of the store [<= 0.05 s, <= 120%%]\n", "top (stored dominators)", w["top (stored dominators)"], 100 * m["top (stored dominators)"] / ds
	}' "$RES"
}

echo "== heapdump benchmark"
mem=$(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo)
echo "host: $(uname -srm), $(nproc) cores, $mem"
echo "cpu: $(awk -F ': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine slows every row)"
echo "ruby: $("$RUBY" -v)"
echo "heapdump: $HD ($(git log -1 --format='%h %cd' --date=short 2>/dev/null || echo 'no git'))"

# 0. The gem: HeapDump.dump beside ObjectSpace.dump_all in one process,
# once per Ruby of HD_RUBIES, each with its own build of the extension
# ($B/ext-VERSION, by make ext). Under 2x (CPU time) on one is a failure.
ext_failed=0
JOBS=${BENCH_JOBS:-$(nproc)}
if [ "${BENCH_ONLY:-}" != scan ]; then
echo "== gem: HeapDump.dump beside ObjectSpace.dump_all (tests/bench/ext_bench.rb ${BENCH_EXT_OBJECTS:-2000000}, best of ${BENCH_EXT_RUNS:-3})"
printf '  %-8s %10s %14s %14s %10s %10s\n' ruby "live slots" "dump_all s" "HeapDump s" "wall x" "cpu x"
for r in ${HD_RUBIES:-$RUBY}; do
	if ! v=$("$r" -e 'print RUBY_VERSION' 2>/dev/null); then
		echo "  FAILED: $r does not run"
		ext_failed=1
		continue
	fi
	ext=$B/ext-$v
	if [ ! -f "$ext/heapdump_ext.so" ]; then
		echo "  FAILED: $ext/heapdump_ext.so is missing (make ext RUBIES=$r)"
		ext_failed=1
		continue
	fi
	if ! RUNS=${BENCH_EXT_RUNS:-3} "$r" -I "$ext" -I src/lib tests/bench/ext_bench.rb \
		"${BENCH_EXT_OBJECTS:-2000000}" "$OUT" >"$LOG/ext-$v.out" 2>&1; then
		echo "  FAILED: $v: $(tail -n 1 "$LOG/ext-$v.out")"
		ext_failed=1
		continue
	fi
	set -- $(grep '^result ' "$LOG/ext-$v.out")
	printf '  %-8s %10s %14s %14s %10s %10s%s\n' "$2" "$3" "$4" "$5" "$6" "$7" \
		"$([ "$8" = true ] || echo '  (no native walk)')"
	if [ "$8" != true ] || awk -v c="$7" 'BEGIN { exit !(c < 2) }'; then
		echo "  FAILED: $v: HeapDump.dump is not 2x faster than dump_all (CPU)"
		ext_failed=1
	fi
done
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# 0b. What reference names cost the gem's dump (issue 13's budget: at
# most 15% more bytes, 20% more CPU), on gen_big.rb's application heap.
echo "== gem names: HeapDump.dump(names: true) beside names: false (tests/bench/names_bench.rb ${BENCH_NAMES_MB:-100}, best of ${BENCH_EXT_RUNS:-3})"
printf '  %-8s %10s %12s %12s %8s %9s %9s %8s\n' ruby records "bytes off" "bytes on" "size +%" "cpu off s" "cpu on s" "cpu +%"
for r in ${HD_RUBIES:-$RUBY}; do
	v=$("$r" -e 'print RUBY_VERSION' 2>/dev/null) || continue
	ext=$B/ext-$v
	[ -f "$ext/heapdump_ext.so" ] || continue
	if ! RUNS=${BENCH_EXT_RUNS:-3} "$r" -I "$ext" -I src/lib tests/bench/names_bench.rb \
		"${BENCH_NAMES_MB:-100}" "$OUT" >"$LOG/names-$v.out" 2>&1; then
		echo "  FAILED: $v: $(tail -n 1 "$LOG/names-$v.out")"
		ext_failed=1
		continue
	fi
	set -- $(grep '^names ' "$LOG/names-$v.out")
	printf '  %-8s %10s %12s %12s %8s %9s %9s %8s\n' "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9"
	if awk -v s="$6" -v c="$9" 'BEGIN { exit !(s > 15 || c > 20) }'; then
		echo "  FAILED: $v: over the names budget (15% bytes, 20% CPU)"
		ext_failed=1
	fi
done
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
fi
if [ "${BENCH_ONLY:-}" = ext ]; then
	exit $ext_failed
fi

# 1. The dumps.
if [ -n "${BENCH_DUMP:-}" ]; then
	DUMP=$BENCH_DUMP
	[ -r "$DUMP" ] || die "BENCH_DUMP=$DUMP is not readable"
else
	DUMP=$OUT/big-$MB.json
	ensure_dump tests/bench/gen_big.rb "$DUMP" "$MB"
fi
CHAIN=$OUT/chain.json
[ "${BENCH_ONLY:-}" = scan ] || ensure_dump tests/bench/gen_chain.rb "$CHAIN" 300000

bytes=$(wc -c <"$DUMP")
echo "warming the page cache ..."
cat "$DUMP" >/dev/null
lines=$(wc -l <"$DUMP")
echo "dump: $DUMP, $(awk -v b="$bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }'), $lines lines"
echo

# 2. The big dump.
echo "== rows (big dump)"
row floor "wc -l" /dev/null wc -l "$DUMP"
row floor "cat > /dev/null" /dev/null cat "$DUMP"

STORE=$OUT/big.hds
rm -f "$STORE"
if [ ! -x "$HD" ]; then
	for l in "heapdump stats" "heapdump stats --by location" \
		"heapdump index" "heapdump stats (store)"; do
		hd_missing "$l" "$HD not found (run make)"
	done
else
	row hd "heapdump stats" /dev/null "$HD" stats "$DUMP" -q
	# the scanner: one thread, N threads, and the portable code
	row hd "heapdump stats -j1" /dev/null "$HD" stats "$DUMP" -q -j1
	row hd "heapdump stats -j$JOBS" /dev/null "$HD" stats "$DUMP" -q -j"$JOBS"
	row hd "heapdump stats -j1 (portable)" /dev/null env HEAPDUMP_SIMD=portable \
		"$HD" stats "$DUMP" -q -j1
fi
if [ "${BENCH_ONLY:-}" = scan ]; then
	:
elif [ ! -x "$HD" ]; then
	:
else
	row hd "heapdump stats --by location" /dev/null "$HD" stats "$DUMP" --by location -q
	if row hd "heapdump index" /dev/null "$HD" index "$DUMP" -o "$STORE" -q; then
		if [ -s "$STORE" ]; then
			row hd "heapdump stats (store)" /dev/null "$HD" stats "$STORE" -q
			# SQL over the store (heapdump query): the GROUP BY the
			# issue times (<= 1 s), one address lookup, and 1 M
			# lookups through a join (the per-lookup cost)
			row hd "query group by class" /dev/null "$HD" query "$STORE" \
				'select class, count(*), sum(memsize) from objects group by 1'
			qa=$("$HD" query -f tsv "$STORE" 'select max(address) from objects' | tail -n 1)
			row hd "query address lookup" /dev/null "$HD" query "$STORE" \
				"select * from objects where address = $qa"
			row hd "query 1M address lookups" /dev/null "$HD" query "$STORE" \
				'select count(*) from (select address a from objects limit 1000000) join objects o on o.address = a'
			# graph queries on the store (gen_big.rb's classes)
			row hd "roots-of 46k LeakyCache records" /dev/null \
				"$HD" roots-of "$STORE" --class Shop::LeakyCache::Record -q
			row hd "roots-of --all-ancestors Requests" /dev/null \
				"$HD" roots-of "$STORE" --class Shop::Request --all-ancestors -q
			row hd "path (10 Nodes)" /dev/null \
				"$HD" path "$STORE" --class Shop::Node --max 10
			row hd "subgraph-of the LeakyCache" /dev/null \
				"$HD" subgraph-of "$STORE" --class Shop::LeakyCache -q
			# hostile: 82% of the heap is "new", one border
			row hd "interface-with generations 30.." /dev/null \
				"$HD" interface-with "$STORE" --generation 30.. -q
			row hd "top (dominators of the heap)" /dev/null \
				"$HD" top "$STORE" -q
			row hd "top --by class" /dev/null \
				"$HD" top "$STORE" --by class -q
			row hd "dominators (10 Nodes)" /dev/null \
				"$HD" dominators "$STORE" --class Shop::Node --max 10 -q
			domsize=0
			if row hd "index --dominators" /dev/null "$HD" index \
				--dominators "$DUMP" -o "$OUT/big-dom.hds" -q; then
				row hd "top (stored dominators)" /dev/null \
					"$HD" top "$OUT/big-dom.hds" -q
				domsize=$(wc -c <"$OUT/big-dom.hds")
			fi
			rm -f "$OUT/big-dom.hds"
			store_ratios "$(wc -c <"$STORE")" "$domsize" "$bytes"
		else
			hd_missing "heapdump stats (store)" "index exited 0 but wrote no $STORE"
		fi
	else
		hd_missing "heapdump stats (store)" "no store: index failed"
	fi
fi

# The scanner's yardstick: simdjson On-Demand doing stats by type. Not a
# heapdump row, so it cannot fail the run; skipped without libsimdjson-dev.
SJ=$OUT/simdjson_stats
if ! command -v c++ >/dev/null 2>&1 || ! pkg-config --exists simdjson 2>/dev/null; then
	echo "  (simdjson reference skipped: needs g++ and libsimdjson-dev)"
elif [ ! -x "$SJ" ] || [ -n "$(find tests/bench/simdjson_stats.cpp -newer "$SJ")" ]; then
	# shellcheck disable=SC2046 # pkg-config prints several words
	c++ -O2 -std=c++17 -o "$SJ" tests/bench/simdjson_stats.cpp \
		$(pkg-config --cflags --libs simdjson) 2>"$LOG/simdjson_build.err" ||
		echo "  (simdjson reference not built: see $LOG/simdjson_build.err)"
fi
if [ -x "$SJ" ]; then
	row peer "simdjson stats (reference)" "$LOG/simdjson_stats.out" "$SJ" "$DUMP"
fi

if [ "$SKIP_PEERS" = 1 ]; then
	echo "  (peers skipped: BENCH_SKIP_PEERS=1)"
else
	for p in heapy jq timeout; do
		command -v $p >/dev/null 2>&1 ||
			die "'$p' is missing (apt-get install ruby-heapy jq coreutils)," \
				"or set BENCH_SKIP_PEERS=1"
	done
	row peer "heapy read" "$LOG/heapy_read.out" heapy read "$DUMP"
	row peer "jq [.type, .memsize]" /dev/null \
		jq -c '[.type, (.memsize // 0)]' "$DUMP"
	# shellcheck disable=SC2016 # $o is jq's variable
	row peer "jq count by type" "$LOG/jq_count_by_type.out" \
		jq -n 'reduce inputs as $o ({}; .[$o.type] += 1)' "$DUMP"
fi

echo
echo "== results: $DUMP ($(awk -v b="$bytes" 'BEGIN { printf "%.2f GB", b / 1e9 }'), $lines lines)"
table "$bytes" "heapdump stats"
awk -F '\t' -v bytes="$bytes" '$1 == "heapdump stats" && $3 == "ok" {
	printf "heapdump stats peak RSS: %.1f%% of the dump\n", $5 * 1024 * 100 / bytes }' "$RES"
if [ -s "$STORE" ]; then
	awk -v s="$(wc -c <"$STORE")" -v b="$bytes" 'BEGIN {
		printf "store %s: %.1f MB, %.1f%% of the dump\n", ARGV[1], s / 1e6, s * 100 / b }' "$STORE"
fi

# The scanner's targets (issue 14), as ratios of this run: stats (all
# CPUs) within 4x wc -l and under simdjson On-Demand's CPU, heapy and jq
# 50x and 100x slower, peak RSS under 100 MB with and without -j. A
# "not met" does not fail the run: one run's ratios, not a timed test.
echo
echo "== scanner targets (this run)"
awk -F '\t' -v jn="heapdump stats -j$JOBS" '
	$3 == "ok" { w[$1] = $4; m[$1] = $5; c[$1] = $6 }
	function verdict(ok) { return ok ? "met" : "NOT met" }
	function line(what, val, goal, ok) {
		printf "  %-44s %10s  %-10s %s\n", what, val, goal, verdict(ok) }
	END {
		s = w["heapdump stats"]
		if (s == "" || s == 0) { print "  (no heapdump stats row)"; exit }
		if (w["wc -l"] > 0)
			line("heapdump stats / wc -l (wall)", sprintf("%.1fx", s / w["wc -l"]), "<= 4x", s / w["wc -l"] <= 4)
		if (c["simdjson stats (reference)"] != "")
			line("heapdump stats wall / simdjson CPU", sprintf("%.2f/%.2f s", s, c["simdjson stats (reference)"]), "< 1", s < c["simdjson stats (reference)"])
		if (w["heapy read"] != "")
			line("heapy read / heapdump stats", sprintf("%.0fx", w["heapy read"] / s), ">= 50x", w["heapy read"] / s >= 50)
		if (w["jq count by type"] != "")
			line("jq count by type / heapdump stats", sprintf("%.0fx", w["jq count by type"] / s), ">= 100x", w["jq count by type"] / s >= 100)
		if (w["heapdump stats -j1"] != "" && w[jn] != "")
			printf "  %-44s %10s\n", "-j1 / " substr(jn, 16) " (wall)", sprintf("%.2fx", w["heapdump stats -j1"] / w[jn])
		if (w["heapdump stats -j1 (portable)"] != "" && w["heapdump stats -j1"] != "")
			printf "  %-44s %10s\n", "portable / AVX2 scanner, -j1 (wall)", sprintf("%.2fx", w["heapdump stats -j1 (portable)"] / w["heapdump stats -j1"])
		for (k in m)
			if (k ~ /^heapdump stats( -j[0-9]+)?$/)
				line(k " peak RSS", sprintf("%.0f MB", m[k] * 1024 / 1e6), "< 100 MB", m[k] * 1024 / 1e6 < 100)
	}' "$RES"

# Scaling: time and peak RSS of stats on dumps of about 0.1 and 1 GB
# (and 6 GB with BENCH_MB=6000), made by gen_big.rb with real Ruby
# (cached beside the big dump, never committed): time linear, RSS flat.
echo
echo "== scaling: heapdump stats -j1 and -j$JOBS beside wc -l (gen_big.rb dumps)"
printf '  %8s %10s %8s %8s %8s %7s %8s %8s %7s %7s\n' MB lines "wc -l s" "-j1 s" "CPU s" "RSS MB" \
	"-j$JOBS s" "CPU s" "RSS MB" "GB/s"
sizes="100 1000"
[ "$MB" -ge 6000 ] && sizes="$sizes 6000"
for sz in $sizes; do
	sd=$OUT/big-$sz.json
	ensure_dump tests/bench/gen_big.rb "$sd" "$sz" >/dev/null
	cat "$sd" >/dev/null
	sres=$OUT/scaling-$sz.tsv
	RES_SAVE=$RES
	RES=$sres
	: >"$RES"
	row floor "wc -l ($sz)" /dev/null wc -l "$sd" >/dev/null
	row hd "stats -j1 ($sz)" /dev/null "$HD" stats "$sd" -q -j1 >/dev/null
	row hd "stats -j$JOBS ($sz)" /dev/null "$HD" stats "$sd" -q -j"$JOBS" >/dev/null
	RES=$RES_SAVE
	awk -F '\t' -v sz="$sz" -v b="$(wc -c <"$sd")" -v l="$(wc -l <"$sd")" '
		{ w[NR] = $4; m[NR] = $5; c[NR] = $6 }
		END {
			# parenthesized: a bare > among the arguments of printf redirects
			printf "  %8.0f %10d %8s %8s %8s %7.0f %8s %8s %7.0f %7.2f\n", b / 1e6, l,
				w[1], w[2], c[2], m[2] * 1024 / 1e6, w[3], c[3], m[3] * 1024 / 1e6,
				(w[3] > 0 ? b / 1e9 / w[3] : 0)
		}' "$sres"
done
if [ "${BENCH_ONLY:-}" = scan ]; then
	echo
	[ $hd_failed -ne 0 ] && { echo "bench: some heapdump rows FAILED (details in $LOG/*.err)"; exit 1; }
	echo "bench: all heapdump rows ran"
	exit 0
fi

# A diff of two dumps of one process (tests/bench/gen_pair.rb, ~500 MB
# each by default: BENCH_PAIR_MB=1000).
PAIR_MB=${BENCH_PAIR_MB:-1000}
BEFORE=$OUT/pair-before-$PAIR_MB.json
AFTER=$OUT/pair-after-$PAIR_MB.json
if [ ! -s "$BEFORE" ] || [ ! -s "$AFTER" ] ||
	[ -n "$(find tests/bench/gen_pair.rb -newer "$AFTER")" ]; then
	echo "generating the diff pair ($PAIR_MB MB each) ..."
	"$RUBY" tests/bench/gen_pair.rb "$BEFORE" "$AFTER" "$PAIR_MB" >/dev/null ||
		die "gen_pair.rb failed"
fi
echo
echo "== rows (diff: $(basename "$BEFORE") + $(basename "$AFTER"))"
RES=$OUT/results-diff.tsv
: >"$RES"
pbytes=$(($(wc -c <"$BEFORE") + $(wc -c <"$AFTER")))
cat "$BEFORE" "$AFTER" >/dev/null
if [ -x "$HD" ]; then
	row hd "heapdump diff" /dev/null "$HD" diff "$BEFORE" "$AFTER" -q
	row hd "heapdump diff -o new objects" /dev/null \
		"$HD" diff "$BEFORE" "$AFTER" -o "$OUT/pair-new.json" -q
	if row hd "index (after)" /dev/null \
		"$HD" index "$AFTER" -o "$OUT/pair-after.hds" -q; then
		row hd "interface-with the new objects" /dev/null "$HD" \
			interface-with "$OUT/pair-after.hds" "$OUT/pair-new.json" -q
	fi
	rm -f "$OUT/pair-after.hds"
	row hd "heapdump leaks" /dev/null "$HD" leaks "$BEFORE" "$AFTER" -q
else
	hd_missing "heapdump diff" "$HD not found (run make)"
fi
if [ "$SKIP_PEERS" != 1 ]; then
	row peer "heapy diff" "$LOG/heapy_diff.out" heapy diff "$BEFORE" "$AFTER"
fi
echo
table "$pbytes" "heapdump diff"

# 3. The 300 000-node chain: depth, not volume. Graph commands join here.
echo
echo "== rows (chain: $CHAIN, 300000-node linked list)"
RES=$OUT/results-chain.tsv
: >"$RES"
cbytes=$(wc -c <"$CHAIN")
cat "$CHAIN" >/dev/null
CSTORE=$OUT/chain.hds
rm -f "$CSTORE"
if [ ! -x "$HD" ]; then
	hd_missing "heapdump stats (chain)" "$HD not found (run make)"
	hd_missing "heapdump index (chain)" "$HD not found (run make)"
else
	row hd "heapdump stats (chain)" /dev/null "$HD" stats "$CHAIN" -q
	row hd "heapdump index (chain)" /dev/null "$HD" index "$CHAIN" -o "$CSTORE" -q
	# depth: every node of the list is a target, or on the path to one
	row hd "roots-of all 300k Nodes (chain)" /dev/null \
		"$HD" roots-of "$CSTORE" --class Node -q
	row hd "path of every Node (chain)" /dev/null \
		"$HD" path "$CSTORE" --class Node --max 1
	row hd "interface-with all Nodes (chain)" /dev/null \
		"$HD" interface-with "$CSTORE" --class Node -q
	row hd "top (chain)" /dev/null "$HD" top "$CSTORE" -q
	row hd "dominators of every Node (chain)" /dev/null \
		"$HD" dominators "$CSTORE" --class Node --max 1 -q
fi
echo
table "$cbytes" "heapdump stats (chain)"

echo
if [ $hd_failed -ne 0 ] || [ $ext_failed -ne 0 ]; then
	echo "bench: some heapdump rows FAILED (details in $LOG/*.err, $LOG/ext-*.out)"
	exit 1
fi
echo "bench: all heapdump rows ran"
