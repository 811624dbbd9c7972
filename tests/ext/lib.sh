# tests/ext/lib.sh - shared by the extension suites (sourced; run.sh skips
# it). The extension is always the normal mkmf build ($B/ext), also under
# make SANITIZE=...: Debian's ruby is not an ASan build, so the extension
# is not instrumented; the heapdump program the suites run is.
. "$(dirname "$0")/../lib.sh"
needs ruby ruby
case ${B:-build} in
/*) EXT=$B/ext ;;
*) EXT=$TOP/${B:-build}/ext ;;
esac
if [ ! -f "$EXT/heapdump_ext.so" ]; then
	notok build "$EXT/heapdump_ext.so is missing: run make ext (needs ruby-dev)"
	exit 1
fi
RUBYLIB="$EXT:$TOP/src/lib${RUBYLIB:+:$RUBYLIB}"
export RUBYLIB
# ruby is not instrumented: keep ASan's options away from it
unset LD_PRELOAD
