#!/bin/sh
# tests/ext/gem.sh - the gem builds (gem build src/heapdump.gemspec),
# installs into a private directory (compiling the extension with mkmf as
# users will), and the installed copy dumps.
SUITE=ext/gem
. "$(dirname "$0")/lib.sh"
needs gem ruby
cd "$TOP/src" || exit 1
if gem build heapdump.gemspec -o "$TMP/heapdump.gem" >"$TMP/out" 2>"$TMP/err"; then
	ok build
else
	notok build "$(tail -c 400 "$TMP/err")"
	exit 1
fi
cd "$TMP" || exit 1
check_rc install 0 gem install --local --no-document --install-dir "$TMP/gems" "$TMP/heapdump.gem"
unset RUBYLIB
GEM_HOME="$TMP/gems" GEM_PATH="$TMP/gems" ruby -e '
require "heapdump"
abort "not the installed copy: #{$LOADED_FEATURES.grep(/heapdump_ext/)}" unless $LOADED_FEATURES.grep(/heapdump_ext/).first.start_with?(ARGV[0])
HeapDump.dump(ARGV[1])
' "$TMP/gems" "$TMP/g.json" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && [ -s "$TMP/g.json" ]; then ok installed-dumps; else
	notok installed-dumps "exit $rc: $(tail -c 300 "$TMP/err")"
fi
check_rc installed-dump-strict 0 "$HEAPDUMP" stats -q --strict "$TMP/g.json"
# the installed gem carries libheapdump: it reads back what it wrote
n=$(GEM_HOME="$TMP/gems" GEM_PATH="$TMP/gems" ruby -e 'require "heapdump"; print HeapDump.load(ARGV[0], cache: false).totals(all: true)[:objects]' "$TMP/g.json" 2>"$TMP/err")
check installed-loads "$("$HEAPDUMP" stats -q --all -f json "$TMP/g.json" | sed 's/.*"objects":\([0-9]*\).*/\1/')" "$n"
# the installed gem carries the malloc tracker, built and installed beside
# its extension, and it tracks: a snapshot from the installed copy
lib=$(GEM_HOME="$TMP/gems" GEM_PATH="$TMP/gems" ruby -rheapdump -e 'print HeapDump.malloc_library_path' 2>"$TMP/err")
case $lib in
"$TMP/gems/"*/libheapdump-malloc.so) [ -f "$lib" ] && ok installed-malloc-library || notok installed-malloc-library "'$lib' is no file" ;;
*) notok installed-malloc-library "'$lib' is not in the installed gem: $(tail -c 300 "$TMP/err")" ;;
esac
GEM_HOME="$TMP/gems" GEM_PATH="$TMP/gems" LD_PRELOAD="$lib" HEAPDUMP_MALLOC_AT_EXIT=0 \
	ruby -rheapdump -e 'HeapDump.malloc_snapshot(ARGV[0])' "$TMP/m.ndjson" >/dev/null 2>"$TMP/err"
check installed-malloc-tracks "true api" "$(head -1 "$TMP/m.ndjson" 2>/dev/null | sed 's/.*"tracking":\([a-z]*\).*"reason":"\([a-z]*\)".*/\1 \2/')"

# RUBIES naming a Ruby that is not there: make ext and the suites fail,
# saying what to install, never skip it
check_rc rubies/missing-build-fails 1 sh "$TOP/tests/ext/build.sh" "$TMP/no/bin/ruby" "$TMP/b"
check_grep rubies/missing-build-says-install 'install .*ruby-dev.*/opt/rubies' "$TMP/err"
HD_RUBIES="$TMP/no/bin/ruby" sh "$TOP/tests/run.sh" ext/ >"$TMP/run" 2>&1
check_grep rubies/missing-suite-fails '^not ok - ext\['"$TMP"'/no/bin/ruby\]: .*install' "$TMP/run"
check_grep rubies/missing-suite-total '^0 passed, 1 failed$' "$TMP/run"
exit 0
