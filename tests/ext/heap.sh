#!/bin/sh
# tests/ext/heap.sh - HeapDump.load and HeapDump::Heap, the gem's bindings
# to libheapdump (heap_test.rb): the same answers as the heapdump command
# on the fixtures and the leak scenarios, the cached store, bad inputs,
# flat memory over a big store; and the cache directory when the dump's
# directory is not writable (as nobody).
SUITE=ext/heap
. "$(dirname "$0")/lib.sh"
needs python3 python3-networkx
needs dot graphviz
case ${B:-build} in
/*) bdir=$B ;;
*) bdir=$TOP/${B:-build} ;;
esac
# a ~100 MB dump of tests/bench/gen_big.rb, made once by Debian's Ruby and
# kept in the build directory for every Ruby's run (and its .hds with it)
BIG=$bdir/tests/heap_big.json
if [ ! -s "$BIG" ]; then
	mkdir -p "$bdir/tests"
	if ! /usr/bin/ruby "$TOP/tests/bench/gen_big.rb" "$BIG.tmp" 100 >"$TMP/gen.out" 2>&1; then
		notok big-dump "gen_big.rb failed: $(tail -c 300 "$TMP/gen.out")"
		rm -f "$BIG.tmp"
	else
		mv "$BIG.tmp" "$BIG"
	fi
fi
mkdir -p "$TMP/work"
SUITE=$SUITE HEAPDUMP=$HEAPDUMP DATA=$DATA WORK=$TMP/work BIG=$BIG \
	ruby "$TOP/tests/ext/heap_test.rb" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "heap_test.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"

# The dump's directory is not writable: the store goes to
# $XDG_CACHE_HOME/heapdump, keyed by path, size and mtime, and is reused.
if ! setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	notok cache-dir/setpriv "setpriv cannot run as nobody: install util-linux"
	exit 0
fi
mkdir -p "$TMP/ro" "$TMP/cache"
cp "$DATA/ok_ruby3.1_untraced.json" "$TMP/ro/app.json"
chmod 755 "$TMP" && chmod 555 "$TMP/ro" && chmod 777 "$TMP/cache"
cat >"$TMP/cache.rb" <<'RB'
require "heapdump"
h = HeapDump.load(ARGV[0])
puts h.store_path, h.size, File.mtime(h.store_path).to_f
RB
as="setpriv --reuid=65534 --regid=65534 --clear-groups"
run_nobody() {
	env XDG_CACHE_HOME="$TMP/cache" HOME=/nonexistent RUBYLIB="$RUBYLIB" $as ruby "$TMP/cache.rb" "$TMP/ro/app.json"
}
run_nobody >"$TMP/c1" 2>"$TMP/c1.err"
check cache-dir/nothing-beside "" "$(ls "$TMP/ro" | grep hds)"
check_grep cache-dir/in-xdg-cache "^$TMP/cache/heapdump/app.json-[0-9a-f]{32}\.hds$" "$TMP/c1"
check cache-dir/objects "$("$HEAPDUMP" stats --all -f json -q "$DATA/ok_ruby3.1_untraced.json" | sed 's/.*"objects":\([0-9]*\).*/\1/')" "$(sed -n 2p "$TMP/c1")"
sleep 1
run_nobody >"$TMP/c2" 2>"$TMP/c2.err"
check cache-dir/reused "$(cat "$TMP/c1")" "$(cat "$TMP/c2")"
check cache-dir/private "700" "$(stat -c %a "$TMP/cache/heapdump")"
exit 0
