#!/bin/sh
# tests/run.sh - runs every test suite and prints the total.
# Each suite prints TAP-like lines ("ok - name", "not ok - name: why");
# this script echoes them, counts them, and ends with
# "N passed, N failed". Arguments select suites by substring.
set -u
LC_ALL=C
export LC_ALL
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
B=${B:-build}
case $B in
/*) HEAPDUMP=$B/heapdump ;; # make B=/tmp/asan check
*) HEAPDUMP=$top/$B/heapdump ;;
esac
export HEAPDUMP TOP="$top" B
log=$(mktemp)
trap 'rm -f "$log"' EXIT

want() {
	[ -z "$SELECT" ] && return 0
	for w in $SELECT; do
		case "$1" in *"$w"*) return 0 ;; esac
	done
	return 1
}
SELECT="$*"

run_suite() {
	name=$1
	shift
	want "$name" || return 0
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | tee -a "$log" | grep -E '^(ok|not ok) ' || true
	if ! printf '%s\n' "$out" | grep -qE '^(ok|not ok) '; then
		echo "not ok - $name: suite printed no result (exit $rc)" | tee -a "$log"
		printf '%s\n' "$out" | tail -20
	elif [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok '; then
		echo "not ok - $name: suite exited $rc" | tee -a "$log"
		printf '%s\n' "$out" | tail -20
	fi
	if printf '%s\n' "$out" | grep -q '^not ok '; then
		printf '%s\n' "$out" | grep -vE '^(ok|not ok) ' | tail -20
	fi
}

for t in "$B"/tests/t_*; do
	[ -x "$t" ] || continue
	run_suite "unit/$(basename "$t")" ${TEST_WRAP:-} "$t"
done
for r in "$B"/tests/replay_fuzz_*; do
	[ -x "$r" ] || continue
	tgt=${r##*/replay_fuzz_}
	run_suite "fuzz/$tgt" ${TEST_WRAP:-} "$r" "tests/fuzz/corpus/$tgt"
done
for s in tests/cli/*.sh tests/man/*.sh tests/ext/*.sh; do
	[ -f "$s" ] || continue
	case "$s" in */lib.sh) continue ;; esac
	run_suite "${s#tests/}" sh "$s"
done

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
