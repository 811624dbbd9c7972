#!/bin/sh
# threads.sh - heapdump.h's promise that distinct handles may be used
# from distinct threads: $(B)/tsan/t_threads (tests/tsan/t_threads.c,
# the library built with -fsanitize=thread) runs two threads over
# distinct stores of one leak's three dumps through every analysis, each
# step at once on both; any ThreadSanitizer report fails, and so do
# results that differ between the threads.
. "$(dirname "$0")/../lib.sh"

T=$TOP/$B/tsan/t_threads
case $B in /*) T=$B/tsan/t_threads ;; esac
if [ ! -x "$T" ]; then
	notok built "$T is missing: make $B/tsan/t_threads"
	exit 1
fi
D=$DATA
# halt_on_error=0: every report is printed; exitcode: any report fails
TSAN_OPTIONS="halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}" \
	timeout 300 "$T" "$D/leak_before.json" "$D/leak_after.json" \
	"$D/leak_later.json" >"$TMP/out" 2>"$TMP/err"
rc=$?
cat "$TMP/out"
races=$(grep -c 'WARNING: ThreadSanitizer' "$TMP/err")
where=$(grep -A2 'WARNING: ThreadSanitizer' "$TMP/err" | sed -n 's/^ *#0 \([^ ]*\) \([^ ]*\) .*/\1 (\2)/p' |
	sort -u | tr '\n' ' ')
check tsan-reports "0" "$races${where:+: $where}"
check exit "0" "$rc"
