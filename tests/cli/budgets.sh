#!/bin/sh
# budgets.sh - the CI gate (issue 37): --fail-on and --budgets on leaks,
# diff, trend and report, exit status 3 with the budget, the measure and
# the excess on stderr and the output still written; --format junit
# valid against tests/cli/junit.xsd (xmllint). A leaking trio and a clean
# one are written at test time by Debian's Ruby with dump_all
# (data/gen/scenarios: registry, 400 customers each keeping an order,
# 248 KB; noleak_bounded, a cache at its bound).
. "$(dirname "$0")/../lib.sh"
needs xmllint libxml2-utils
RUBY=${RUBY:-/usr/bin/ruby}
XSD="$TOP/tests/cli/junit.xsd"
SC="$TOP/data/gen/scenarios"
mkdir -p "$TMP/leak" "$TMP/clean"
if ! "$RUBY" "$SC/registry.rb" dump_all "$TMP/leak" >"$TMP/gen.err" 2>&1 ||
	! "$RUBY" "$SC/noleak_bounded.rb" dump_all "$TMP/clean" >>"$TMP/gen.err" 2>&1; then
	notok gen "the scenarios did not run: $(head -c 300 "$TMP/gen.err")"
	exit 1
fi
L="$TMP/leak/before.json $TMP/leak/after.json $TMP/leak/later.json"
C="$TMP/clean/before.json $TMP/clean/after.json $TMP/clean/later.json"

# ---- leaks: exit 3 on the leak, 0 on the clean trio ----
# shellcheck disable=SC2086
check_rc leaks-over 3 "$HEAPDUMP" leaks -q $L --fail-on 'leak.bytes>100KB'
check_grep leaks-over-says '^heapdump leaks: budget leak\.bytes>100KB exceeded: measured 2[0-9.]+ KB, 1[0-9.]+ KB over the limit 100\.0 KB; cluster 1: 400 suspects .*99\.[0-9]% of the leak.*Customer -> Hash' "$TMP/err"
check_grep leaks-over-report-written '^verdict +cluster 1: 400 suspects' "$TMP/out"
# shellcheck disable=SC2086
check_rc leaks-under 0 "$HEAPDUMP" leaks -q $L --fail-on 'leak.bytes>10MB'
check leaks-under-silent "" "$(cat "$TMP/err")"
# shellcheck disable=SC2086
check_rc leaks-clean 0 "$HEAPDUMP" leaks -q $C --fail-on 'leak.bytes>100KB' \
	--fail-on 'suspect.share>50%' --fail-on 'leak.verdict=leak'
# shellcheck disable=SC2086
check_rc leaks-share 3 "$HEAPDUMP" leaks -q $L --fail-on 'suspect.share >= 99%'
check_grep leaks-share-says 'suspect\.share>=99% exceeded: measured 99\.[0-9]%' "$TMP/err"
# shellcheck disable=SC2086
check_rc leaks-verdict 3 "$HEAPDUMP" leaks -q -f json $L --fail-on 'leak.verdict=leak'
if jq -e .verdict "$TMP/out" >/dev/null 2>&1; then ok leaks-json-written; else
	notok leaks-json-written "no JSON document on stdout"; fi

# growth.class[X].objects is the leak's objects of class X: diff counts
# them by class on LATER's graph; the budget at that count less one is
# exceeded, at that count it is kept
# shellcheck disable=SC2086
"$HEAPDUMP" diff -q -b class -n 0 -f json $L >"$TMP/diff.json" 2>/dev/null
nstr=$(jq '[.rows[] | select(.class == "String") | .count] | add' "$TMP/diff.json" 2>/dev/null)
case $nstr in ''|null|*[!0-9]*) notok diff-count "no String row in diff -f json: $(head -c 300 "$TMP/diff.json")" ;; esac
# shellcheck disable=SC2086
check_rc diff-class-over 3 "$HEAPDUMP" diff -q $L --fail-on "growth.class[String].objects>$((nstr - 1))"
check_grep diff-class-says "growth\.class\[String\]\.objects>$((nstr - 1)) exceeded: measured $(echo "$nstr" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'), 1 over" "$TMP/err"
# shellcheck disable=SC2086
check_rc diff-class-kept 0 "$HEAPDUMP" diff -q $L --fail-on "growth.class[String].objects>$nstr"
# shellcheck disable=SC2086
check_rc diff-clean 0 "$HEAPDUMP" diff -q $C --fail-on 'leak.bytes>100KB'

# ---- a budget file ----
cat >"$TMP/budgets" <<'B'
# the nightly gate
leak.objects > 1000        # a thousand objects
suspect.share>50%
   growth.class[String].bytes > 1MB
B
# shellcheck disable=SC2086
check_rc file-leak 3 "$HEAPDUMP" leaks -q $L --budgets "$TMP/budgets"
check "file-two-exceeded" 2 "$(grep -c 'exceeded' "$TMP/err")"
check_grep file-objects 'budget leak\.objects>1000 exceeded: measured 3,[0-9]{3}, 2,[0-9]{3} over the limit 1,000' "$TMP/err"
# shellcheck disable=SC2086
check_rc file-clean 0 "$HEAPDUMP" leaks -q $C --budgets "$TMP/budgets"
printf 'leak.bytes>1MB\nleak.bites>2\n' >"$TMP/bad"
# shellcheck disable=SC2086
check_rc file-bad 2 "$HEAPDUMP" leaks -q $L --budgets "$TMP/bad"
check_grep file-bad-says 'line 2: budget: no metric' "$TMP/err"
# shellcheck disable=SC2086
check_rc file-missing 2 "$HEAPDUMP" leaks -q $L --budgets "$TMP/nope"

# ---- usage errors and failures keep their statuses ----
# shellcheck disable=SC2086
check_rc bad-expr 2 "$HEAPDUMP" leaks -q $L --fail-on 'leak.bytes 1MB'
check_grep bad-expr-says 'no comparison .* at column 12' "$TMP/err"
# shellcheck disable=SC2086
check_rc not-for-leaks 2 "$HEAPDUMP" leaks -q $L --fail-on 'trend.verdict=growing'
# shellcheck disable=SC2086
check_rc not-for-diff 2 "$HEAPDUMP" diff -q $L --fail-on 'suspect.share>1%'
check_rc tool-failed 1 "$HEAPDUMP" leaks -q "$TMP/leak/before.json" "$TMP/none.json" --fail-on 'leak.bytes>1'
check_rc report-one-dump 2 "$HEAPDUMP" report -q "$TMP/leak/before.json" --fail-on 'leak.bytes>1'

# ---- trend ----
# shellcheck disable=SC2086
check_rc trend-over 3 "$HEAPDUMP" trend -q $L --fail-on 'growth.class[String].bytes>100KB'
check_grep trend-over-says 'growth\.class\[String\]\.bytes>100KB exceeded: measured 3[0-9.]+ KB' "$TMP/err"
# shellcheck disable=SC2086
check_rc trend-clean 0 "$HEAPDUMP" trend -q $C --fail-on 'growth.class[String].bytes>100KB'
# shellcheck disable=SC2086
check_rc trend-verdict 3 "$HEAPDUMP" trend -q $L --fail-on 'trend.verdict=growing'
# shellcheck disable=SC2086
check_rc trend-by-type 2 "$HEAPDUMP" trend -q --by type $L --fail-on 'growth.class[String].bytes>1'

# ---- report: the page written, then exit 3 ----
# shellcheck disable=SC2086
check_rc report-over 3 "$HEAPDUMP" report -q --no-drawings $L -o "$TMP/r.html" --fail-on 'leak.bytes>100KB'
if [ -s "$TMP/r.html" ] && grep -q '</html>' "$TMP/r.html"; then ok report-written; else
	notok report-written "no page at $TMP/r.html"; fi
check_grep report-says '^heapdump report: budget leak\.bytes>100KB exceeded' "$TMP/err"

# ---- JUnit XML ----
# shellcheck disable=SC2086
check_rc junit-leak 3 "$HEAPDUMP" leaks -q -f junit $L --fail-on 'leak.bytes>100KB' --fail-on 'leak.objects>100000'
cp "$TMP/out" "$TMP/leak.xml"
if xmllint --noout --schema "$XSD" "$TMP/leak.xml" 2>"$TMP/xerr"; then ok junit-leak-valid; else
	notok junit-leak-valid "$(head -c 300 "$TMP/xerr")"; fi
check junit-leak-counts "2 1 1" "$(xmllint --xpath 'concat(//testsuite/@tests, " ", //testsuite/@failures, " ", count(//failure))' "$TMP/leak.xml")"
check_grep junit-leak-message 'failure type="budget" message="budget leak\.bytes&gt;100KB exceeded: .*99\.[0-9]% of the leak.*Customer -&gt; Hash' "$TMP/leak.xml"
# shellcheck disable=SC2086
check_rc junit-clean 0 "$HEAPDUMP" leaks -q -f junit $C
cp "$TMP/out" "$TMP/clean.xml"
if xmllint --noout --schema "$XSD" "$TMP/clean.xml" 2>"$TMP/xerr"; then ok junit-clean-valid; else
	notok junit-clean-valid "$(head -c 300 "$TMP/xerr")"; fi
check junit-clean-default "leak.verdict=leak 0" "$(xmllint --xpath 'concat(//testcase/@name, " ", count(//failure))' "$TMP/clean.xml")"
# shellcheck disable=SC2086
check_rc junit-trend 3 "$HEAPDUMP" trend -q -f junit $L --fail-on 'growth.class[String].bytes>100KB'
if xmllint --noout --schema "$XSD" "$TMP/out" 2>"$TMP/xerr"; then ok junit-trend-valid; else
	notok junit-trend-valid "$(head -c 300 "$TMP/xerr")"; fi
# shellcheck disable=SC2086
check_rc junit-trend-needs-budget 2 "$HEAPDUMP" trend -q -f junit $L
# control bytes in a budget are escaped in text and stay valid XML
# shellcheck disable=SC2086
check_rc junit-escape 3 "$HEAPDUMP" leaks -q -f junit $L --fail-on "$(printf 'growth.class[a\001<b].objects>=0')"
if xmllint --noout --schema "$XSD" "$TMP/out" 2>"$TMP/xerr" && grep -q 'a\\u0001&lt;b' "$TMP/out"; then
	ok junit-escape-valid; else notok junit-escape-valid "$(head -c 300 "$TMP/xerr") $(grep -o 'name="growth[^"]*"' "$TMP/out")"; fi
check_grep text-escape 'growth\.class\[a\\u0001<b\]' "$TMP/err"
