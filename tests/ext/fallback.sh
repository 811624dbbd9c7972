#!/bin/sh
# tests/ext/fallback.sh - HeapDump.dump through ObjectSpace.dump_all, as
# on a Ruby the walker does not know (forced here by HEAPDUMP_FALLBACK=1
# on every Ruby): the same pipeline (0600, temp + rename, sidecar, gzip,
# fork, signal), said once on stderr, read by heapdump stats --strict.
SUITE=ext/fallback
. "$(dirname "$0")/lib.sh"
mkdir "$TMP/d"
HEAPDUMP_FALLBACK=1 SUITE=$SUITE ruby "$TOP/tests/ext/fallback_test.rb" "$TMP/d" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "fallback_test.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"
n=$(grep -c 'HeapDump.dump writes the heap with ObjectSpace.dump_all' "$TMP/rb.err")
check said-once-on-stderr 1 "$n"
check_grep names-the-cause 'HEAPDUMP_FALLBACK=1' "$TMP/rb.err"
for f in plain.json b.json.gz forked.json; do
	check_rc "stats-strict/$f" 0 "$HEAPDUMP" stats -q --strict "$TMP/d/$f"
done
objs=$("$HEAPDUMP" stats -q --all -f tsv "$TMP/d/plain.json" | awk -F '\t' '$1 == "total" && $2 == "objects" { print $3 }')
check sidecar-objects-as-stats "$(jq -r .objects "$TMP/d/plain.json.hdmeta")" "$objs"
"$HEAPDUMP" stats -q "$TMP/d/plain.json" >"$TMP/text"
check_grep sidecar-read '^process +pid [0-9]+, ruby' "$TMP/text"

# without HEAPDUMP_FALLBACK the walker decides, as built: the suite
# knows which Rubies it knows (extconf.rb WALKER_RUBIES)
want=false
case $HD_RUBY_VERSION in 3.0.* | 3.1.* | 3.3.* | 3.4.* | 4.0.*) want=true ;; esac
got=$(ruby -rheapdump -e 'print HeapDump.native_walk?' 2>"$TMP/err")
check native-walk-as-documented "$want" "$got"
# a Ruby the walker does not know: this Ruby, built as if its version
# were not in WALKER_RUBIES (a future 4.2 installs the same way): the gem
# builds, native_walk? is false, dumps go through dump_all, said once
unknown() {
	ruby -rheapdump -e 'print HeapDump.native_walk?; HeapDump.dump(ARGV[0]); HeapDump.dump(ARGV[0])' "$1" 2>"$TMP/err" >"$TMP/out"
	check unknown-ruby/native-walk-off false "$(cat "$TMP/out")"
	check unknown-ruby/said-once 1 "$(grep -c 'does not know Ruby' "$TMP/err")"
	check_rc unknown-ruby/dump-strict 0 "$HEAPDUMP" stats -q --strict "$1"
}
if [ "$want" = false ]; then
	unknown "$TMP/d/u.json"
else
	mkdir "$TMP/ext"
	if (cd "$TMP/ext" && HEAPDUMP_WALKER_RUBIES=9.9 ruby "$TOP/src/extconf.rb" && MAKEFLAGS= make V=0) >"$TMP/mkmf.out" 2>&1; then
		ok unknown-ruby/builds
		RUBYLIB="$TMP/ext:$TOP/src/lib" unknown "$TMP/d/u.json"
	else
		notok unknown-ruby/builds "$(tail -c 400 "$TMP/mkmf.out")"
	fi
fi
exit 0
