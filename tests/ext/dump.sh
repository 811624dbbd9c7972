#!/bin/sh
# tests/ext/dump.sh - HeapDump.dump in a real ruby (dump_test.rb: files,
# modes, JSON, escaping, tracing, gzip, full, since, fork, failures), and
# the dump read by heapdump stats, with its sidecar. compare.sh checks it
# against ObjectSpace.dump_all.
SUITE=ext/dump
. "$(dirname "$0")/lib.sh"

mkdir "$TMP/d"
SUITE=$SUITE ruby "$TOP/tests/ext/dump_test.rb" "$TMP/d" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "dump_test.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"

# read back by the library
a=$TMP/d/a.json
check_rc stats/plain 0 "$HEAPDUMP" stats -q "$a"
check_rc stats/strict 0 "$HEAPDUMP" stats -q --strict "$a"
if [ -s "$TMP/err" ]; then notok stats/clean "stderr: $(head -c 300 "$TMP/err")"; else ok stats/clean; fi
lines=$(grep -v '^{"type":"ROOT"' "$a" | grep -vc '"type":"SHAPE"')
objs=$("$HEAPDUMP" stats -q --all -f tsv "$a" | awk -F '\t' '$1 == "total" && $2 == "objects" { print $3 }')
check stats/every-object-counted "$lines" "$objs"
check_rc stats/strict-gzip 0 "$HEAPDUMP" stats -q --strict "$TMP/d/b.json.gz"
check_rc stats/strict-full 0 "$HEAPDUMP" stats -q --strict "$TMP/d/full.json"
check_rc stats/strict-forked 0 "$HEAPDUMP" stats -q --strict "$TMP/d/forked.json"

# heapy (a peer reader) takes it whole: no line it cannot parse
if command -v heapy >/dev/null 2>&1; then
	timeout 120 heapy read "$a" >"$TMP/heapy" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^Generation: *[0-9]' "$TMP/heapy" &&
		! grep -qi 'could not parse' "$TMP/heapy"; then
		ok heapy-reads-it
	else
		notok heapy-reads-it "exit $rc: $(head -c 300 "$TMP/heapy")"
	fi
else
	notok heapy-reads-it "'heapy' is missing: apt-get install ruby-heapy"
fi

# the sidecar: a process section in text, tsv and json
"$HEAPDUMP" stats -q "$a" >"$TMP/text"
check_grep sidecar/text-process '^process +pid [0-9]+, ruby' "$TMP/text"
check_grep sidecar/text-share '^in objects .*% of rss' "$TMP/text"
"$HEAPDUMP" stats -q -f json "$a" >"$TMP/json"
rss=$(jq -r '.process.rss' "$TMP/json" 2>/dev/null)
want=$(jq -r '.rss_bytes' "$a.hdmeta" 2>/dev/null)
check sidecar/json-rss "$want" "$rss"
check sidecar/json-objects-memsize "$(jq -r '.totals.memsize' "$TMP/json")" "$(jq -r '.process.objects_memsize' "$TMP/json")"
"$HEAPDUMP" stats -q -f tsv "$a" >"$TMP/tsv"
check_grep sidecar/tsv '^process	rss	[0-9]+$' "$TMP/tsv"
# without the sidecar: the output of before, no process section
cp "$a" "$TMP/alone.json"
"$HEAPDUMP" stats -q "$TMP/alone.json" | sed 's|alone.json|a.json|' >"$TMP/alone"
# (and the rss split's lines: heading, then indented buckets)
grep -v -e '^process ' -e '^rss ' -e '^in objects ' -e '^memsize_all ' -e '^malloc ' \
	-e '^rss split ' -e '^  [A-Za-z].*%$' "$TMP/text" |
	sed "s|$TMP/d/a.json|$TMP/a.json|" >"$TMP/text-nosc"
if cmp -s "$TMP/alone" "$TMP/text-nosc"; then ok sidecar/absent-no-section; else
	notok sidecar/absent-no-section "$(diff "$TMP/text-nosc" "$TMP/alone" | head -5 | tr '\n' '|')"
fi
echo '{"not":"ours"}' >"$TMP/alone.json.meta.json"
check_rc sidecar/foreign-ignored 0 "$HEAPDUMP" stats -q "$TMP/alone.json"
check_grep sidecar/foreign-warned 'not a heapdump sidecar' "$TMP/err"
exit 0
