#!/bin/sh
# startup.sh - what a command pays before it reads anything: libgvc and
# libmicrohttpd (and the TLS, codec and font libraries they need),
# libsqlite3, libedit and ISA-L are not linked but loaded (dlopen,
# cli/dynlib.c and lib/util/dynload.c) by the commands that draw, serve,
# query or read a gzip dump, so stats and the other dump-reading
# commands never map or relocate them; those commands still load and
# use them.
. "$(dirname "$0")/../lib.sh"
needs ldd libc-bin
needs curl curl
REAL=${HEAPDUMP_REAL:-$HEAPDUMP}
# under ASan: what Graphviz's font stack keeps until exit is not ours
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS
D="$DATA/ok_ruby3.1_since.json"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# the libraries that only drawing and serving need
LAZY='libgvc|libcgraph|libcdt|libpathplan|libltdl|libmicrohttpd|libgnutls|libp11-kit|libnettle|libhogweed|libgmp|libtasn1|libidn2|libunistring|libsqlite3|libedit|libtinfo|libbsd|libmd\.|libisal'

check not-linked 0 "$(ldd "$REAL" | grep -cE "$LAZY")"


i=0
for c in "stats" "stats --format json --by class" "top" "diff $D" \
	"to-dot -q" "strings" "waste" "leaks $D $D" "index -o $TMP/s.hds"; do
	i=$((i + 1))
	n="${c%% *}$i"
	# shellcheck disable=SC2086
	loaded "$REAL" $c "$D"
	check "$n-exit" 0 "$rc"
	check "$n-loads-no-lazy" "" "$(printf '%s\n' "$libs" | grep -E "$LAZY" | tr '\n' ' ')"
	check "$n-loads-libc" 1 "$(printf '%s\n' "$libs" | grep -c '^libc\.so')"
done

# query loads libsqlite3 and answers; a script on standard input (no
# terminal) needs no line editor
"$REAL" index -q -o "$TMP/q.hds" "$D" 2>"$TMP/err"
check query-index 0 "$?"
loaded "$REAL" query "$TMP/q.hds" "select count(*) > 0 as n from objects"
check query-exit 0 "$rc"
check query-loads-sqlite 1 "$(printf '%s\n' "$libs" | grep -c '^libsqlite3\.so')"
check query-answers 1 "$(tail -1 "$TMP/out" | tr -d ' ')"
loaded "$REAL" query "$TMP/q.hds" </dev/null
check query-script-exit 0 "$rc"
check query-script-no-libedit 0 "$(printf '%s\n' "$libs" | grep -c '^libedit')"

# render loads libgvc when it draws, and draws
loaded "$REAL" render "$D" --type STRING -o "$TMP/r.svg"
check render-exit 0 "$rc"
check render-loads-libgvc 1 "$(printf '%s\n' "$libs" | grep -c '^libgvc\.so')"
check render-svg 1 "$(grep -c '^<svg' "$TMP/r.svg")"
check render-no-mhd 0 "$(printf '%s\n' "$libs" | grep -c libmicrohttpd)"
# and not when it refuses before drawing
loaded "$REAL" render "$TMP/nosuch.json" -o "$TMP/n.svg"
check render-missing-exit 1 "$rc"

# serve maps libmicrohttpd once started, and answers
if serve_start serve 300 "$HEAPDUMP" serve -q --no-cache "$D"; then
	check serve-maps-mhd 1 "$(grep -c 'libmicrohttpd' "/proc/$SPID/maps" | sed 's/[1-9][0-9]*/1/')"
	check serve-answers 200 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/api/overview?token=$TOKEN")"
	kill "$SPID"
	wait "$SPID" 2>/dev/null
fi
