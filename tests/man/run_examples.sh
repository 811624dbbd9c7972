#!/bin/sh
# tests/man/run_examples.sh - the examples of the manual really work.
#
# Section 1: every ".Dl $ COMMAND" line of man/*.1 is run from the top of
# the tree with sh -c, after its roff escapes are undone; the word
# heapdump in a command position stands for "$HEAPDUMP". Paths in the
# examples are relative to the top (data/dumps/...), and files they write
# go to ${TMPDIR:-/tmp}, here a scratch directory shared by the examples
# of one run. A command of EXAMPLES shown without the "$ "
# prompt fails: it would not be run. An example passes when it exits 0 and no heapdump
# in it failed (a pipeline's status is its last command's), or, when the
# line just before it is the comment
#	.\" exit N
# when it exits N. It must also read the same in the rendered page, so
# that mdoc did not eat a quote or move a punctuation mark.
#	man/example/PAGE:N          the Nth example of PAGE
#
# Section 3: the first literal block of EXAMPLES that holds a main() is
# compiled with -Wall -Wextra -Werror against $B/libheapdump.a and run on
# a fixture; the total it prints must equal heapdump stats --all.
#	man/example/PAGE:1          compiles and runs
#	man/example/PAGE:1/total    agrees with heapdump stats
SUITE=man/example
. "$(dirname "$0")/../lib.sh"
# under ASan: what Graphviz's font stack keeps until exit (render links
# libgvc) is not ours; the same suppressions as tests/cli/export.sh
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS
# the top seen by the examples: the tree's own entries, but data/dumps
# is the run's copy of the fixtures ($DATA), so that what an example
# writes beside a dump (a cached store, a kept verdict) stays out of the
# source tree
if [ "$DATA" != "$TOP/data/dumps" ]; then
	mkdir "$TMP/top" "$TMP/top/data" || exit 1
	for f in "$TOP"/* "$TOP"/data/*; do
		case $f in "$TOP/data" | "$TOP/data/dumps") continue ;; esac
		ln -s "$f" "$TMP/top/${f#"$TOP"/}" || exit 1
	done
	ln -s "$DATA" "$TMP/top/data/dumps" || exit 1
	cd "$TMP/top" || exit 1
else
	cd "$TOP" || exit 1
fi
B=${B:-build}
failures=0
notok() { failures=$((failures + 1)); echo "not ok - $SUITE/$1: $2"; }
needs groff groff
if [ ! -x "$HEAPDUMP" ]; then
	notok build "$HEAPDUMP is not built: run make"
	exit 1
fi

# roff escapes back to plain text (\e last: it makes backslashes)
unroff() {
	sed -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g" -e 's/\\(ga/`/g' \
	    -e 's/\\(ti/~/g' -e 's/\\(ha/^/g' -e 's/\\-/-/g' -e 's/\\&//g' \
	    -e 's/\\e/\\/g'
}

# squeeze runs of blanks and newlines into single spaces
squeeze() { tr -s ' \n\t' '   '; }

# A stand-in for heapdump that notes every failing run of the real one.
mkdir -p "$TMP/bin"
cat >"$TMP/bin/heapdump" <<EOF
#!/bin/sh
"$HEAPDUMP" "\$@"
rc=\$?
# 141: killed by SIGPIPE, the reader (head, grep -m) stopped early
[ \$rc -eq 0 ] || [ \$rc -eq 141 ] || echo "heapdump \$*: exit \$rc" >>"$TMP/failed"
exit \$rc
EOF
chmod +x "$TMP/bin/heapdump"
TIMEOUT=""
command -v timeout >/dev/null 2>&1 && TIMEOUT="timeout 300"

# ---- section 1 ----

total=0
for page in man/*.1; do
	[ -f "$page" ] || continue
	name=${page#man/}
	# "N<tab>WANT<tab>COMMAND" for every example line
	# (WANT is "-" for a command of EXAMPLES shown without its "$ ")
	awk '
		/^\.Sh / { ex = ($0 == ".Sh EXAMPLES") }
		/^\.\\" exit [0-9]+[ \t]*$/ { want = $3; next }
		/^\.Dl \$ / {
			n++
			sub(/^\.Dl \$ /, "")
			printf "%d\t%s\t%s\n", n, (want == "" ? 0 : want), $0
		}
		/^\.Dl / && !/^\.Dl \$ / && ex && /heapdump/ {
			n++
			sub(/^\.Dl /, "")
			printf "%d\t-\t%s\n", n, $0
		}
		{ want = "" }
	' "$page" >"$TMP/examples"
	groff -mdoc -Tascii -P-cbou "$page" 2>/dev/null | squeeze >"$TMP/rendered"
	while IFS='	' read -r n want cmd; do
		total=$((total + 1))
		cmd=$(printf '%s\n' "$cmd" | unroff)
		if [ "$want" = - ]; then
			notok "$name:$n" "not run: shown without the '\$ ' prompt that marks an example: $cmd"
			continue
		fi
		shown=$(printf '%s\n' "\$ $cmd" | squeeze | sed 's/ $//')
		if ! grep -qF -e "$shown" "$TMP/rendered"; then
			notok "$name:$n" "the page does not render it as written: $shown"
			continue
		fi
		run=$(printf '%s\n' "$cmd" |
			sed -e 's/^heapdump /"$HEAPDUMP" /' \
			    -e 's/\([|;&(]\) *heapdump /\1 "$HEAPDUMP" /g')
		rm -f "$TMP/failed"
		HEAPDUMP="$TMP/bin/heapdump" TMPDIR="$TMP" $TIMEOUT sh -c "$run" \
			</dev/null >"$TMP/out" 2>"$TMP/err"
		rc=$?
		why=""
		if [ "$rc" != "$want" ]; then
			why="exit $rc, expected $want"
		elif [ "$want" = 0 ] && [ -s "$TMP/failed" ]; then
			why=$(head -1 "$TMP/failed")
		fi
		if [ -z "$why" ]; then ok "$name:$n"; else
			notok "$name:$n" "$cmd: $why; stderr: $(head -c 300 "$TMP/err")"
		fi
	done <"$TMP/examples"
done
[ "$total" -gt 0 ] || notok section1 "no .Dl \$ example in man/*.1"

# ---- section 3 ----

fixture=$DATA/ok_ruby3.1_clean.json
if [ ! -f "$fixture" ]; then
	for f in "$DATA"/ok_*.json; do
		[ -f "$f" ] && { fixture=$f; break; }
	done
fi
for page in man/*.3; do
	[ -f "$page" ] || continue
	name=${page#man/}
	sed -n '/^\.Sh EXAMPLES$/,/^\.Sh /p' "$page" |
		awk '/^\.Bd -literal/ && !done { on = 1; next }
		     /^\.Ed/ && on { on = 0; done = 1; next }
		     on' | unroff >"$TMP/example.c"
	grep -q 'main(' "$TMP/example.c" || continue
	if [ ! -f "$fixture" ]; then
		notok "$name:1" "no data/dumps/ok_*.json fixture to run it on"
		continue
	fi
	# the LIBRARY section's flags: ISA-L and SQLite are loaded, not linked
	if ! ${CC:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -Ilib ${SAN_FLAGS:-} \
		-o "$TMP/example" "$TMP/example.c" "$B/libheapdump.a" -lz -lm \
		2>"$TMP/err"; then
		notok "$name:1" "does not compile: $(head -c 600 "$TMP/err")"
		continue
	fi
	if ! "$TMP/example" "$fixture" >"$TMP/out" 2>"$TMP/err"; then
		notok "$name:1" "exit $? on $(basename "$fixture"): $(head -c 300 "$TMP/err")"
		continue
	fi
	ok "$name:1"
	got=$(awk '$1 == "total" { print $2 }' "$TMP/out")
	want=$("$HEAPDUMP" stats --all -q -f tsv "$fixture" 2>/dev/null |
		awk -F '\t' '$1 == "total" && $2 == "objects" { print $3 }')
	if [ -z "$got" ] || [ -z "$want" ]; then
		notok "$name:1/total" "no total: the example printed '$got', heapdump stats '$want'"
	else
		check "$name:1/total" "$want" "$got"
		[ "$want" = "$got" ] || failures=$((failures + 1))
	fi
done
[ "$failures" -eq 0 ]
