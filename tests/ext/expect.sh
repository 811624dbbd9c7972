#!/bin/sh
# tests/ext/expect.sh - what users expect of HeapDump.dump
# (expect_test.rb): ObjectSpace.trace_object_allocations' sites written
# when the gem's own tracer is off; gc: true runs a full GC first.
SUITE=ext/expect
. "$(dirname "$0")/lib.sh"
mkdir "$TMP/d"
SUITE=$SUITE ruby "$TOP/tests/ext/expect_test.rb" "$TMP/d" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "expect_test.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"
# where the walk is built, the reason is objspace's tracing; elsewhere
# every dump already goes through dump_all, said once for that reason
if ruby -rheapdump -e 'exit(HeapDump.native_walk? ? 0 : 1)'; then
	check objspace/said-once-why 1 "$(grep -c 'ObjectSpace.trace_object_allocations is on' "$TMP/rb.err")"
else
	check objspace/said-once-why 1 "$(grep -c 'does not know Ruby' "$TMP/rb.err")"
fi
check objspace/said-once 1 "$(grep -c 'writes the heap with ObjectSpace.dump_all' "$TMP/rb.err")"
exit 0
