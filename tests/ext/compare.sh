#!/bin/sh
# tests/ext/compare.sh - HeapDump.dump beside ObjectSpace.dump_all on one
# heap (compare.rb): the same records, fields, values and order, except
# the named and bounded differences compare.rb asserts.
SUITE=ext/compare
. "$(dirname "$0")/lib.sh"
SUITE=$SUITE ruby "$TOP/tests/ext/compare.rb" "$TMP" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "compare.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"
# src/'s internal C symbols have their own prefix (hdx_): none is named
# like the library's API (hd_, lib/heapdump.h), with which a program
# linking both would collide. libheapdump itself is compiled in (hidden,
# HD_API empty): its hd_ functions are local symbols, which cannot
# collide; no global symbol is named hd_, and the extension exports
# nothing but Init_heapdump_ext.
if command -v nm >/dev/null 2>&1; then
	clash=$(nm -g --defined-only "$EXT/heapdump_ext.so" | awk '$3 ~ /^hd_/ { print $3 }' | head -5 | tr '\n' ' ')
	check symbols-not-hd_ "" "$clash"
	check exports-only-init Init_heapdump_ext "$(nm -D --defined-only "$EXT/heapdump_ext.so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | tr '\n' ' ' | sed 's/ $//')"
else
	notok symbols-not-hd_ "nm is missing: apt-get install binutils"
fi
exit 0
