#!/bin/sh
# tests/ext/build.sh RUBY B - builds the extension (src/) for one Ruby
# with that Ruby's mkmf, out of tree in B/ext-VERSION, unless it is up to
# date. make ext runs it for every Ruby of RUBIES. A Ruby that is listed
# but missing, or that cannot build extensions, is an error that says
# what to install.
set -u
ruby=$1 b=$2
src=$(cd "$(dirname "$0")/../../src" && pwd)
if ! v=$("$ruby" -e 'print RUBY_VERSION' 2>/dev/null); then
	echo "heapdump: RUBIES names '$ruby', which does not run: install Debian's ruby and ruby-dev, or extract the native trees into /opt/rubies (see tests/README.md), or leave it out of RUBIES" >&2
	exit 1
fi
dir=$b/ext-$v
so=$dir/heapdump_ext.so
# the Ruby itself may have changed (a tree extracted again): it is in the stamp
want="$ruby $("$ruby" -e 'print RUBY_DESCRIPTION')"
if [ -f "$so" ] && [ -f "$dir/.ruby" ] && [ "$(cat "$dir/.ruby")" = "$want" ] &&
	[ -z "$(find "$src/extconf.rb" "$src"/*.c "$src"/*.h "$src"/libheapdump/*.[ch] "$src"/libheapdump/util/*.[ch] -newer "$so" 2>/dev/null)" ]; then
	exit 0
fi
mkdir -p "$dir" || exit 1
echo "  MKMF    $so"
cd "$dir" || exit 1
# mkmf's Makefile knows no header dependencies: after a header change,
# objects built against the old one would be linked with new ones
if [ ! -f heapdump_ext.so ] ||
	[ -n "$(find "$src"/*.h "$src"/libheapdump/*.h "$src"/libheapdump/util/*.h -newer heapdump_ext.so 2>/dev/null)" ]; then
	rm -f ./*.o
fi
if ! { "$ruby" "$src/extconf.rb" && MAKEFLAGS= make -j2 V=0; } >mkmf.out 2>&1; then
	cat mkmf.out mkmf.log 2>/dev/null | tail -40 >&2
	echo "heapdump: cannot build the extension for $ruby ($v): it needs that Ruby's headers (Debian: apt-get install ruby-dev) and zlib1g-dev" >&2
	exit 1
fi
printf '%s\n' "$want" >.ruby
