# tests/ext/lib.sh - shared by the extension suites (sourced; run.sh skips
# it). tests/run.sh runs each suite once per Ruby of RUBIES, with HD_RUBY
# (the ruby) and HD_RUBY_VERSION: "ruby" and "gem" are that Ruby's (its
# bin directory first in PATH), the extension is its mkmf build
# ($B/ext-VERSION), and every test line says which Ruby ("ext/dump[3.4.8]/...").
# Also under make SANITIZE=...: ruby is not an ASan build, so the
# extension is not instrumented; the heapdump program the suites run is.
: "${HD_RUBY:=$(command -v ruby || echo ruby)}"
: "${HD_RUBY_VERSION:=$("$HD_RUBY" -e 'print RUBY_VERSION' 2>/dev/null)}"
SUITE="${SUITE}[${HD_RUBY_VERSION:-unknown}]"
. "$(dirname "$0")/../lib.sh"
if [ -z "$HD_RUBY_VERSION" ]; then
	notok ruby "'$HD_RUBY' does not run: install ruby and ruby-dev (Debian), or extract the native trees into /opt/rubies"
	exit 1
fi
PATH="$(dirname "$HD_RUBY"):$PATH"
export PATH
case ${B:-build} in
/*) EXT=$B/ext-$HD_RUBY_VERSION ;;
*) EXT=$TOP/${B:-build}/ext-$HD_RUBY_VERSION ;;
esac
if [ ! -f "$EXT/heapdump_ext.so" ]; then
	notok build "$EXT/heapdump_ext.so is missing: run make ext RUBIES=$HD_RUBY (needs that Ruby's headers: ruby-dev for Debian's)"
	exit 1
fi
RUBYLIB="$EXT:$TOP/src/lib${RUBYLIB:+:$RUBYLIB}"
export RUBYLIB
# ruby is not instrumented: keep ASan's options away from it
unset LD_PRELOAD
