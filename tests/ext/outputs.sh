#!/bin/sh
# tests/ext/outputs.sh - what HeapDump.dump does to the path it is given
# (outputs_test.rb): a device or FIFO is written in place (ENOSPC from a
# full device raised), a symlink followed, never replaced; no sidecar left
# by a failed dump; since: out of range named as such.
SUITE=ext/outputs
. "$(dirname "$0")/lib.sh"
mkdir "$TMP/d"
SUITE=$SUITE ruby "$TOP/tests/ext/outputs_test.rb" "$TMP/d" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "outputs_test.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"
exit 0
