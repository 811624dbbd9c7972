#!/bin/sh
# tests/ext/api.sh - HeapDump.count_objects, track, track(retained: true)
# and allocation tracing in a real ruby (api_test.rb).
SUITE=ext/api
. "$(dirname "$0")/lib.sh"
SUITE=$SUITE ruby "$TOP/tests/ext/api_test.rb" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "api_test.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"
exit 0
