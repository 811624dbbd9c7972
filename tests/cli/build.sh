#!/bin/sh
# build.sh - the build's plumbing. Test binaries depend on the headers
# they include (their .d files): make, asked what it would do if a test
# header changed (make -n -W), rebuilds exactly the tests that include
# it. One version: the file VERSION, and what carries it (heapdump
# --version and hd_version(), heapdump.h's HD_VERSION_*, the gem's
# version.rb and gemspec, every man page's .Os, the pkg-config file)
# agree; make version writes a new one into each of them, and compiling
# the library stops while the header says another.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
B=${B:-build}
REAL=${HEAPDUMP_REAL:-$HEAPDUMP}
needs ruby ruby
needs cc gcc
MAKE_CLEAN="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make"

# ---- test headers ----
# The test programs make check built, as make names them.
bins=""
for f in tests/unit/t_*.c; do
	n=$(basename "$f" .c)
	[ -x "$B/tests/$n" ] && bins="$bins $B/tests/$n"
done
for f in tests/fuzz/fuzz_*.c; do
	n=$(basename "$f" .c)
	[ -x "$B/tests/replay_$n" ] && bins="$bins $B/tests/replay_$n"
done
if [ -z "$bins" ]; then
	notok test-binaries "none under $B/tests: run make check"
	exit 1
fi

# rebuilt HEADER: the test programs make would rebuild were HEADER newer
# (flags and library held as they are: -o)
rebuilt() {
	$MAKE_CLEAN -n B="$B" -o "$B/.cflags" -o "$B/libheapdump.a" -W "$1" \
		$bins 2>&1 | sed -n 's|.* -o [^ ]*/tests/\([a-z0-9_]*\) .*|\1|p' |
		sort -u | tr '\n' ' '
}
# users HEADER: the unit tests and fuzz targets that include it (by its
# name)
users() {
	grep -l "#include \"$(basename "$1")\"" tests/unit/*.c tests/fuzz/*.c |
		while read -r f; do
			n=$(basename "$f" .c)
			case $f in tests/fuzz/*) n=replay_$n ;; esac
			[ -x "$B/tests/$n" ] && echo "$n"
		done | sort -u | tr '\n' ' '
}
check deps-up-to-date "" "$(rebuilt /dev/null)"
for h in tests/t.h tests/unit/tgraph.h tests/unit/store_fixture.h; do
	n=$(basename "$h" .h)
	want=$(users "$h")
	[ -n "$want" ] || notok "deps-$n-has-users" "no test includes $h"
	check "deps-$n-rebuilds-its-users" "$want" "$(rebuilt "$h")"
done
check deps-fuzz-replay "replay_fuzz_line replay_fuzz_mcp replay_fuzz_reader replay_fuzz_select replay_fuzz_store " \
	"$(rebuilt tests/fuzz/replay.c)"
check deps-store-format "$(users lib/store_format.h)" "$(rebuilt lib/store_format.h)"

# ---- one version ----
V=$(cat VERSION 2>/dev/null)
check version-file-form yes "$(echo "$V" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' && echo yes)"
check version-program "heapdump $V" "$("$REAL" --version)"
cat >"$TMP/v.c" <<'C'
#include <stdio.h>
#include "heapdump.h"
int main(void)
{
	printf("%s %d.%d.%d %s\n", HD_VERSION_STRING, HD_VERSION_MAJOR,
	       HD_VERSION_MINOR, HD_VERSION_PATCH, hd_version());
	return 0;
}
C
if cc ${SAN_FLAGS:-} -Ilib -o "$TMP/v" "$TMP/v.c" "$B/libheapdump.a" -lz -lm 2>"$TMP/cc.err"; then
	check version-header-and-library "$V $V $V" "$("$TMP/v")"
else
	notok version-header-and-library "cannot build: $(head -c 300 "$TMP/cc.err")"
fi
check version-rb "$V" "$(ruby -e 'require "./src/lib/heapdump/version"; print HeapDump::VERSION')"
check version-gemspec "$V" "$(ruby -e 'print Gem::Specification.load("src/heapdump.gemspec").version')"
check version-man-pages "" "$(grep -L "^\.Os heapdump $V\$" man/*.[1-8] | tr '\n' ' ')"
$MAKE_CLEAN -n install B="$B" DESTDIR="$TMP/i" >"$TMP/inst.n" 2>&1
check_grep version-pkg-config "s\\|@VERSION@\\|$V\\|g" "$TMP/inst.n"

# make version: a new VERSION into a copy of the files that carry it
t=$TMP/tree
mkdir -p "$t/lib/util" "$t/src/lib/heapdump" "$t/man"
cp Makefile "$t/"
cp lib/heapdump.h lib/hd_int.h "$t/lib/"
cp lib/util/*.h lib/util/error.c "$t/lib/util/"
cp src/heapdump.gemspec "$t/src/"
cp src/lib/heapdump/version.rb "$t/src/lib/heapdump/"
cp man/*.[1-8] "$t/man/"
echo 9.10.11 >"$t/VERSION"
check_rc version-mismatch-stops-the-build 2 $MAKE_CLEAN -s -C "$t" B=b b/lib/util/error.o
check_grep version-mismatch-message "differ from the file VERSION: run make version" "$TMP/err"
check_rc make-version 0 $MAKE_CLEAN -s -C "$t" version
check_rc version-builds-after 0 $MAKE_CLEAN -s -C "$t" B=b b/lib/util/error.o
check make-version-header '9 10 11 "9.10.11"' \
	"$(sed -n 's/^#define HD_VERSION_\(MAJOR\|MINOR\|PATCH\|STRING\) //p' "$t/lib/heapdump.h" | tr '\n' ' ' | sed 's/ $//')"
check make-version-gemspec 9.10.11 "$(cd "$t/src" && ruby -e 'print Gem::Specification.load("heapdump.gemspec").version')"
check make-version-man-pages "" "$(grep -L '^\.Os heapdump 9\.10\.11$' "$t"/man/*.[1-8] | tr '\n' ' ')"
check make-version-only-version "$(wc -l <lib/heapdump.h) 4" \
	"$(wc -l <"$t/lib/heapdump.h") $(diff lib/heapdump.h "$t/lib/heapdump.h" | grep -c '^>')"
echo 1.2 >"$t/VERSION"
check_rc make-version-bad-form 2 $MAKE_CLEAN -s -C "$t" version
check_grep make-version-bad-form-message "want MAJOR.MINOR.PATCH" "$TMP/err"
