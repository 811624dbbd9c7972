#!/bin/sh
# nogvc.sh - heapdump built without Graphviz (make GVC=0; make check
# builds it in $B/nogvc): no object is compiled with Graphviz's headers
# and the program does not load libgvc, while the default build still
# needs both (it loads libgvc when it draws); render and leaks --svg
# exit 1 before reading anything, saying how to get Graphviz, and write
# nothing; every suite of leaks, report or serve that does not draw
# passes with that program.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
B=${B:-build}
case $B in
/*) NOGVC=$B/nogvc/heapdump ;;
*) NOGVC=$TOP/$B/nogvc/heapdump ;;
esac
REAL=${HEAPDUMP_REAL:-$HEAPDUMP}
needs ldd libc-bin

if [ ! -x "$NOGVC" ]; then
	notok built "$NOGVC is missing: make check builds it (make B=$B/nogvc GVC=0)"
	exit 1
fi
ok built

# What each build would run, from scratch, in a scratch directory.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -B B="$TMP/off" GVC=0 "$TMP/off/heapdump" >"$TMP/off.n" 2>&1
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -B B="$TMP/on" "$TMP/on/heapdump" >"$TMP/on.n" 2>&1
gv='-lgvc|-lcgraph|/graphviz( |$)|pkg-config'
check off-no-graphviz-flags 0 "$(grep -cE -- "$gv" "$TMP/off.n")"
check_grep off-graphviz-o-stub 'HAVE_GVC=0 .*cli/graphviz\.c' "$TMP/off.n"
# the default build loads libgvc when it draws (cli/dynlib.c, startup.sh),
# by the file name the Makefile read from the library
check_grep on-loads-libgvc "HD_GVC_SONAME='\"libgvc\.so\.[0-9]+\"'.*cli/graphviz\.c" "$TMP/on.n"
check_grep on-checks-libgvc 'pkg-config --exists libgvc' "$TMP/on.n"
check on-headers-graphviz-o-only 1 "$(grep -E -- "$gv" "$TMP/on.n" | grep -c -- '-c -o ')"
check off-not-linked 0 "$(ldd "$NOGVC" | grep -c libgvc)"
check on-not-linked 0 "$(ldd "$REAL" | grep -c libgvc)"

msg='render needs Graphviz, and this heapdump was built without it \(make GVC=0\): install libgraphviz-dev \(apt-get install libgraphviz-dev\)'
for f in svg png pdf; do
	check_rc "render-$f-exit" 1 "$NOGVC" render "$DATA/ok_ruby3.1_since.json" -o "$TMP/r.$f"
	check_grep "render-$f-message" "^heapdump: $msg" "$TMP/err"
	check "render-$f-nothing-written" "no" "$([ -e "$TMP/r.$f" ] && echo yes || echo no)"
	check "render-$f-stdout-empty" "" "$(cat "$TMP/out")"
done
# before reading: a missing dump is not what it complains of
check_rc render-before-reading 1 "$NOGVC" render "$TMP/nosuch.json" -o "$TMP/r.svg"
check_grep render-before-reading-message "$msg" "$TMP/err"
check_rc render-usage-still-2 2 "$NOGVC" render "$DATA/ok_ruby3.1_since.json"
check_rc render-help 0 "$NOGVC" render --help
check_rc leaks-svg-exit 1 "$NOGVC" leaks "$DATA/leak_before.json" \
	"$DATA/leak_after.json" "$DATA/leak_later.json" --svg "$TMP/svgdir"
check_grep leaks-svg-message "^heapdump: leaks --svg needs Graphviz.*apt-get install libgraphviz-dev" "$TMP/err"
check leaks-svg-no-dir "no" "$([ -e "$TMP/svgdir" ] && echo yes || echo no)"
check leaks-svg-stdout-empty "" "$(cat "$TMP/out")"
# what does not draw works, the same as the default build's
"$NOGVC" to-dot -q "$DATA/ok_ruby3.1_since.json" --type STRING >"$TMP/a.dot" 2>&1
"$REAL" to-dot -q "$DATA/ok_ruby3.1_since.json" --type STRING >"$TMP/b.dot" 2>&1
check to-dot-same "same" "$(cmp -s "$TMP/a.dot" "$TMP/b.dot" && echo same || echo differ)"
check_rc leaks-text 0 "$NOGVC" leaks -q "$DATA/leak_before.json" \
	"$DATA/leak_after.json" "$DATA/leak_later.json"

# Every suite that runs leaks, report or serve (the commands that ask
# cli/graphviz.c whether they may draw) but draws nothing (none runs
# render or leaks --svg), with this program (but the long ones, below);
# their lines read "nogvc-SUITE/...". NOGVC_SUITES=0 leaves this loop
# out, said on stderr: .ci/run sets it for its sanitized stage only, as
# the normal stage runs the loop (the suites twice over under ASan took
# CI past its 30 minutes).
if [ "${NOGVC_SUITES:-1}" = 0 ]; then
	echo "# nogvc: NOGVC_SUITES=0: the other suites are not re-run with the program without Graphviz" >&2
	exit 0
fi
for s in tests/cli/*.sh; do
	n=$(basename "$s" .sh)
	case $n in nogvc | install) continue ;; esac # install: make install
	# the scanner's and the store's suites and the others of more than
	# ten seconds (half of this loop's time) never reach cli/graphviz.c,
	# the one object a build without Graphviz changes (on-headers-
	# graphviz-o-only above), and gzip.sh runs both inflaters itself:
	# they run once
	case $n in parallel | index_par | index_speed | store_mem | store_speed | \
		store_groups | gzip | strings_waste | hostile | replace_class | \
		report | stats | console | faults | bad_inputs | clusters | \
		process_growth | verdict | redact) continue ;; esac
	grep -qE '(^|[^-])\brender\b|--svg' "$s" && continue
	# nor does a suite that runs none of the commands that call into
	# it (cli_render_*: leaks, report, serve; render is left out above)
	grep -qwE 'leaks|report|serve' "$s" || continue
	out=$(SUITE="nogvc-$n" HEAPDUMP="$NOGVC" HEAPDUMP_REAL="$NOGVC" sh "$s" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^(ok|not ok) '
	if ! printf '%s\n' "$out" | grep -q '^ok '; then
		notok "suite-$n" "no result (exit $rc): $(printf '%s\n' "$out" | tail -3)"
	elif [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok '; then
		notok "suite-$n" "exit $rc"
	else
		ok "suite-$n"
	fi
done
