#!/bin/sh
# tests/bench/names_same.sh RUBY EXT_A EXT_B [TARGET_MB] - whether two
# builds of the extension (directories holding heapdump_ext.so, built for
# RUBY: say before and after a change to the name writer) write the same
# dump of one heap, with names and without (names_same.rb, both builds in
# one process, in a temporary directory), which prints "same: ..." per
# pair and exits 0, else the first differences and exits 1.
set -u
ruby=$1 a=$2 b=$3 mb=${4:-8}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$ruby" "$here/names_same.rb" "$a" "$b" "$tmp" "$mb"
