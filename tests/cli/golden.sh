#!/bin/sh
# Golden-output tests: each tests/cli/golden/NAME.cmd holds one command line
# (run from the repo root, "heapdump" being the built program); its stdout
# must equal NAME.out byte for byte, and its exit status NAME.exit (0 when
# there is none). The inputs are the Ruby 3.2-4.0 wasm fixtures, which are
# byte-identical from one regeneration to the next.
#   UPDATE=1 sh tests/cli/golden.sh    rewrites the .out files
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
for cmd in tests/cli/golden/*.cmd; do
	name=$(basename "$cmd" .cmd)
	want_out=${cmd%.cmd}.out
	want_rc=0
	[ -f "${cmd%.cmd}.exit" ] && want_rc=$(cat "${cmd%.cmd}.exit")
	line=$(cat "$cmd")
	(
		heapdump() { "$HEAPDUMP" "$@"; }
		eval "$line"
	) >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$TMP/out" "$want_out"
		echo "$rc" >"${cmd%.cmd}.exit"
	fi
	if [ "$rc" != "$want_rc" ]; then
		notok "$name" "exit $rc, expected $want_rc: $(head -c 300 "$TMP/err")"
	elif ! cmp -s "$TMP/out" "$want_out"; then
		notok "$name" "output differs: $(diff "$want_out" "$TMP/out" | head -8 | tr '\n' '|')"
	else
		ok "$name"
	fi
done
