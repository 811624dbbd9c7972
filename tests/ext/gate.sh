#!/bin/sh
# tests/ext/gate.sh - heapdump/minitest and heapdump/rspec (issue 37) in a
# real ruby, on gate_blocks.rb: the four leaking blocks (a class-level
# cache, a closure registry, a thread-local, string eval) fail
# assert_no_leaks and leak_memory with a message naming their holder and
# its share, the JSON report and the dumps written where the test said;
# the five clean ones (warm-up, a memo that saturates, a lazy require, a
# cache at its bound, GC.compact) pass GATE_RUNS times each (default 2
# per Ruby, 8 over the four) with no false failure; assert_allocations,
# assert_retained and their matchers. Debian's minitest and rspec through
# -I where a Ruby lacks them (minitest 5.15 needs mutex_m, no longer a
# default gem from 3.4: Debian's 3.1 copy through a directory of its own).
SUITE=ext/gate
. "$(dirname "$0")/lib.sh"
RUNS=${GATE_RUNS:-2}
REP="$TMP/reports"
mkdir -p "$REP" "$TMP/shim"
INC=""
if ! ruby -e 'require "minitest"' 2>/dev/null; then
	mt=$(ls -d /usr/lib/ruby/gems/*/gems/minitest-*/lib 2>/dev/null | head -1)
	[ -n "$mt" ] || { notok minitest "no minitest: apt-get install ruby (Debian's ships minitest)"; exit 1; }
	INC="-I$mt"
	mm=$(ls /usr/lib/ruby/3.*/mutex_m.rb 2>/dev/null | head -1)
	[ -n "$mm" ] && ln -s "$mm" "$TMP/shim/mutex_m.rb" && INC="$INC -I$TMP/shim"
fi
if ! ruby -e 'require "rspec/core"; require "rspec/expectations"' 2>/dev/null; then
	# Debian's ruby-rspec, under rubygems-integration: each gem's lib
	for g in rspec-core rspec-expectations rspec-support diff-lcs; do
		d=$(ls -d /usr/share/rubygems-integration/all/gems/$g-*/lib 2>/dev/null | tail -1)
		[ -n "$d" ] || { notok rspec "no $g: apt-get install ruby-rspec"; exit 1; }
		INC="$INC -I$d"
	done
fi

# ---- Minitest ----
# shellcheck disable=SC2086
GATE_RUNS=$RUNS GATE_REPORTS="$REP" ruby $INC "$TOP/tests/ext/gate_test.rb" >"$TMP/mt.out" 2>"$TMP/mt.err"
rc=$?
if [ $rc -eq 0 ]; then ok minitest; else
	notok minitest "gate_test.rb exited $rc: $(grep -A6 'Failure:\|Error:' "$TMP/mt.out" | head -c 900) $(tail -c 300 "$TMP/mt.err")"
fi
for c in class_cache:GateSessionCache closure_registry:GateHooks thread_local:Thread string_eval:GateTemplates; do
	name=${c%%:*} holder=${c#*:}
	check_grep "leaks-$name" "^message $name the block leaks: suspect 1 holds [0-9.]+% of the leak .*$holder" "$TMP/mt.out"
	if [ -s "$REP/$name.json" ] && grep -q '"verdict"' "$REP/$name.json" && [ -s "$REP/$name/d3.json" ]; then
		ok "report-$name"; else notok "report-$name" "no report or dumps at $REP/$name.json"; fi
done
for name in warm_up saturating_memo lazy_require bounded_cache gc_compact; do
	check_grep "clean-$name" "^clean $name $RUNS/$RUNS\$" "$TMP/mt.out"
done
if grep -q '^false-failure' "$TMP/mt.out"; then
	notok false-failures "$(grep '^false-failure' "$TMP/mt.out" | head -3)"; else ok false-failures; fi
# what an assert_no_leaks costs (the mean over every run of this suite)
mean=$(grep -o 'time [a-z_]* [0-9.]*' "$TMP/mt.out" | awk '{s += $3; n++} END {if (n) printf "%.2f", s / n}')
echo "# ext/gate[$HD_RUBY_VERSION]: assert_no_leaks takes $mean s on average ($(grep -o 'time [a-z_]* [0-9.]*' "$TMP/mt.out" | wc -l) runs)"

# ---- RSpec ----
# shellcheck disable=SC2086
GATE_REPORTS="$REP" ruby $INC -rrspec/autorun "$TOP/tests/ext/gate_spec.rb" >"$TMP/rs.out" 2>"$TMP/rs.err"
rc=$?
if [ $rc -eq 0 ]; then ok rspec; else
	notok rspec "gate_spec.rb exited $rc: $(grep -A8 'Failures:' "$TMP/rs.out" | head -c 900) $(tail -c 300 "$TMP/rs.err")"
fi
check_grep rspec-examples '^11 examples, 0 failures' "$TMP/rs.out"
exit 0
