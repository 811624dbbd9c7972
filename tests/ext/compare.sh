#!/bin/sh
# tests/ext/compare.sh - HeapDump.dump beside ObjectSpace.dump_all on one
# heap (compare.rb): the same records, fields, values and order, except
# the named and bounded differences compare.rb asserts.
SUITE=ext/compare
. "$(dirname "$0")/lib.sh"
SUITE=$SUITE ruby "$TOP/tests/ext/compare.rb" "$TMP" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "compare.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"
exit 0
