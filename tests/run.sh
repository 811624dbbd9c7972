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
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# HEAPDUMP_WRAP (make check-valgrind): every heapdump the shell suites
# run goes through it, by a wrapper script named heapdump, each run
# logging to its own file under $wrapdir/log/SUITE; a suite whose runs
# logged anything fails, and so does a run in which no suite ran
# heapdump at all. HEAPDUMP_REAL names the binary itself, for the checks
# that must look at it (ldd).
wrapdir=""
if [ -n "${HEAPDUMP_WRAP:-}" ]; then
	wrapdir=$(mktemp -d)
	chmod 755 "$wrapdir" # some suites run heapdump as nobody (setpriv)
	trap 'rm -f "$log"; rm -rf "$wrapdir"' EXIT
	HEAPDUMP_REAL=$HEAPDUMP
	HEAPDUMP=$wrapdir/heapdump
	printf '#!/bin/sh\nexec %s --log-file="$HD_WRAP_LOG/%%p.log" "%s" "$@"\n' \
		"$HEAPDUMP_WRAP" "$HEAPDUMP_REAL" >"$HEAPDUMP"
	chmod +x "$HEAPDUMP"
	export HEAPDUMP_REAL
fi
export HEAPDUMP TOP="$top" B

want() {
	[ -z "$SELECT" ] && return 0
	for w in $SELECT; do
		case "$1" in *"$w"*) return 0 ;; esac
	done
	return 1
}
SELECT="$*"

# wrap_verdict SUITE: one line on the wrapped runs of SUITE, if it ran
# heapdump (the unit suites and some others do not)
wrap_verdict() {
	runs=$(ls "$HD_WRAP_LOG" | wc -l)
	[ "$runs" -eq 0 ] && return 0
	dirty=$(find "$HD_WRAP_LOG" -type f -size +0 | wc -l)
	if [ "$dirty" -gt 0 ]; then
		echo "not ok - wrapped/$1: $dirty of $runs runs logged errors" | tee -a "$log"
		find "$HD_WRAP_LOG" -type f -size +0 | head -3 | xargs head -40
	else
		echo "ok - wrapped/$1: $runs runs clean" | tee -a "$log"
	fi
}

run_suite() {
	name=$1
	shift
	want "$name" || return 0
	if [ -n "$wrapdir" ]; then
		HD_WRAP_LOG=$wrapdir/log/$(printf '%s' "$name" | tr '/' '_')
		mkdir -p "$HD_WRAP_LOG"
		chmod 1777 "$wrapdir/log" "$HD_WRAP_LOG"
		export HD_WRAP_LOG
	fi
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
	if [ -n "$wrapdir" ]; then wrap_verdict "$name"; fi
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
for s in tests/cli/*.sh tests/man/*.sh; do
	[ -f "$s" ] || continue
	case "$s" in */lib.sh) continue ;; esac
	run_suite "${s#tests/}" sh "$s"
done
# tests/ext once per Ruby of HD_RUBIES (make check passes RUBIES), as
# "ext/SUITE.sh[VERSION]"; a Ruby that does not run is a failure
for r in ${HD_RUBIES:-ruby}; do
	if ! v=$("$r" -e 'print RUBY_VERSION' 2>/dev/null); then
		want "ext/" && echo "not ok - ext[$r]: this Ruby does not run: install ruby and ruby-dev, or extract the trees into /opt/rubies (tests/README.md)" | tee -a "$log"
		continue
	fi
	for s in tests/ext/*.sh; do
		case "$s" in */lib.sh | */build.sh) continue ;; esac
		HD_RUBY=$r HD_RUBY_VERSION=$v run_suite "${s#tests/}[$v]" sh "$s"
	done
done

if [ -n "$wrapdir" ] && ! grep -q '^ok - wrapped/' "$log" &&
	! grep -q '^not ok - wrapped/' "$log"; then
	echo "not ok - wrapped: no suite ran heapdump under $HEAPDUMP_WRAP" | tee -a "$log"
fi
passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
