#!/bin/sh
# process_growth.sh - a native leak must not read as a Ruby leak (issue
# 34, item 9): when the gem's sidecars show the process growing far more
# than its Ruby heap, leaks (text, JSON, TSV), diff, trend, the
# three-dump report and serve's leaks page say so first, in the one
# sentence of the library (hd_process_judge), and never "no leak".
#
#  - dumps: data/gen/native_leak.rb under every Ruby of HD_RUBIES (make
#    check's RUBIES) with the gem of this build (build/ext-VERSION),
#    three gem dumps with sidecars a mode: "native" mallocs 52 MB a
#    phase that it never frees (Fiddle.malloc; on a Ruby without Fiddle,
#    4.0, NativeAlloc.malloc_touched of data/gen/native_alloc, built here
#    with mkmf), "ruby" keeps 52 MB of Strings a phase, "none" neither.
#  - native: the sentence is the first line of leaks, diff and trend, the
#    first member of their JSON (outside_ruby true, the RSS growth at
#    least 90% of the bytes the program says it leaked, the heap's under
#    a tenth of it), the first TSV lines, the first section of the
#    report; the same from the dumps' stores; no output says "no leak"
#    (the gem's dumps no longer leak themselves: the Ruby heap's verdict
#    is "the leak is not in the Ruby heap: ...").
#  - ruby and none: no sentence anywhere, outside_ruby false (ruby: the
#    RSS grew past the 16 MB threshold, so the heap share decided).
#  - the gem's API: Heap#leaks(...).process is leaks -f json's process,
#    Leaks#verdict its verdict (serve's /api/leaks too), and
#    Leaks#inspect begins with the sentence (native only).
#  - serve (first Ruby only): /api/leaks has leaks -f json's process,
#    and the leaks page in Debian's chromium shows its sentence first
#    (tests/tools/serve_process_browser.mjs).
. "$(dirname "$0")/../lib.sh"
needs jq jq

H=$HEAPDUMP
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
SENTENCE="the growth is outside Ruby objects"

# the Ruby's gem build directory, or "" (said) when it was not built
ext_of() {
	v=$("$1" -e 'print RUBY_VERSION')
	case ${B:-build} in
	/*) e=$B/ext-$v ;;
	*) e=$TOP/${B:-build}/ext-$v ;;
	esac
	if [ -f "$e/heapdump_ext.so" ]; then echo "$e"; else
		notok "$v/gem" "$e/heapdump_ext.so is missing: make ext RUBIES=$1"
	fi
}

# gen RUBY EXT DIR MODE: three dumps into DIR, the truth into DIR/truth.json
gen() {
	mkdir -p "$3"
	lib="$2:$TOP/src/lib"
	if [ "$4" = native ] && ! "$1" -e 'require "fiddle"' 2>/dev/null; then
		# Ruby 4.0 bundles Fiddle no more: the C extension instead
		if [ ! -f "$TMP/na-$v/native_alloc.so" ]; then
			mkdir -p "$TMP/na-$v"
			cp "$TOP"/data/gen/native_alloc/* "$TMP/na-$v/"
			(cd "$TMP/na-$v" && "$1" extconf.rb && make) >"$TMP/na.log" 2>&1 ||
				{ notok "$v/native_alloc" "build failed: $(tail -c 300 "$TMP/na.log")"; return 1; }
		fi
		lib="$lib:$TMP/na-$v"
	fi
	env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$lib" "$1" \
		"$TOP/data/gen/native_leak.rb" "$3" "$4" >"$3/truth.json" 2>"$TMP/gen.err" ||
		{ notok "$v/$4/gen" "native_leak.rb failed: $(head -c 300 "$TMP/gen.err")"; return 1; }
}

cat >"$TMP/api.rb" <<'RB'
require "heapdump"
require "json"
b, a, l = ARGV.map { |f| HeapDump.load(f) }
lk = b.leaks(a, l)
puts JSON.generate(lk.process)
puts lk.inspect
puts lk.verdict
RB

first_serve=1
for R in ${HD_RUBIES:-ruby}; do
	R=$(command -v "$R") || continue
	EXT=$(ext_of "$R")
	[ -n "$EXT" ] || continue
	v=$("$R" -e 'print RUBY_VERSION')
	for mode in native ruby none; do
		d="$TMP/$v-$mode"
		gen "$R" "$EXT" "$d" $mode || continue
		set -- "$d/before.json" "$d/after.json" "$d/later.json"
		t="$v/$mode"
		"$H" leaks -q "$@" >"$d/leaks.txt" 2>"$d/err" || notok "$t/leaks" "exit $?: $(head -c 200 "$d/err")"
		"$H" leaks -q -f json "$@" >"$d/leaks.json" 2>"$d/err" || notok "$t/leaks-json" "exit $?"
		"$H" leaks -q -f tsv "$@" >"$d/leaks.tsv" 2>"$d/err" || notok "$t/leaks-tsv" "exit $?"
		"$H" diff -q "$@" >"$d/diff.txt" 2>"$d/err" || notok "$t/diff" "exit $?"
		"$H" diff -q -f json "$@" >"$d/diff.json" 2>"$d/err" || notok "$t/diff-json" "exit $?"
		"$H" trend -q "$@" >"$d/trend.txt" 2>"$d/err" || notok "$t/trend" "exit $?"
		"$H" trend -q -f json "$@" >"$d/trend.json" 2>"$d/err" || notok "$t/trend-json" "exit $?"
		"$H" report -q "$@" -o "$d/report.html" 2>"$d/err" || notok "$t/report" "exit $?"
		text=$(jq -r '.process.text' "$d/leaks.json")
		if [ $mode = native ]; then
			check "$t/truth-via" true "$(jq '.via == "fiddle" or .via == "native_alloc"' "$d/truth.json")"
			native=$(jq .native_bytes "$d/truth.json")
			check "$t/leaks-json-outside" true "$(jq .process.outside_ruby "$d/leaks.json")"
			check "$t/leaks-json-rss-is-the-leak" true \
				"$(jq --argjson n "$native" '.process.rss_growth >= 0.9 * $n and .process.heap_growth < $n / 10' "$d/leaks.json")"
			check "$t/leaks-json-process-first" process "$(jq -r 'keys_unsorted[0]' "$d/leaks.json")"
			case $text in *"$SENTENCE") ok "$t/leaks-json-text" ;; *) notok "$t/leaks-json-text" "$text" ;; esac
			for f in leaks diff trend; do
				check "$t/$f-first-line" "process   $text" "$(head -1 "$d/$f.txt")"
			done
			check "$t/diff-json" "$text" "$(jq -r '.process.text' "$d/diff.json")"
			check "$t/trend-json" "$text" "$(jq -r '.process.text' "$d/trend.json")"
			check "$t/leaks-tsv-first" "process	outside_ruby	1" "$(head -1 "$d/leaks.tsv")"
			# stores: the sidecars beside their source dumps
			for k in before after later; do "$H" index -q "$d/$k.json" -o "$d/$k.hds"; done
			check "$t/stores-leaks-first-line" "process   $text" \
				"$("$H" leaks -q "$d/before.hds" "$d/after.hds" "$d/later.hds" | head -1)"
			check "$t/stores-trend-first-line" "process   $text" \
				"$("$H" trend -q "$d/before.hds" "$d/after.hds" "$d/later.hds" | head -1)"
			check "$t/leaks-tsv-text" "process	text	$text" "$(grep '^process	text	' "$d/leaks.tsv")"
			# the report: the sentence, capitalized, before the verdict
			p=$(grep -n 'id="process-growth"' "$d/report.html" | head -1 | cut -d: -f1)
			q=$(grep -n 'id="verdict"' "$d/report.html" | head -1 | cut -d: -f1)
			check "$t/report-sentence-first" true "$([ -n "$p" ] && [ -n "$q" ] && [ "$p" -lt "$q" ] && echo true)"
			check_grep "$t/report-sentence" "$SENTENCE" "$d/report.html"
			for f in leaks.txt leaks.json leaks.tsv diff.txt trend.txt report.html; do
				check "$t/$f-never-no-leak" 0 "$(grep -ci 'no leak\|no significant leak' "$d/$f")"
			done
		else
			check "$t/leaks-json-not-outside" false "$(jq .process.outside_ruby "$d/leaks.json")"
			[ $mode = ruby ] && check "$t/rss-grew-past-threshold" true \
				"$(jq '.process.rss_growth >= 16000000 and .process.heap_growth > 0.25 * .process.rss_growth' "$d/leaks.json")"
			for f in leaks.txt leaks.tsv diff.txt trend.txt report.html; do
				check "$t/$f-no-sentence" 0 "$(grep -c "$SENTENCE" "$d/$f")"
			done
		fi
		# the gem's API: the same object, the same sentence first
		env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$EXT:$TOP/src/lib" "$R" "$TMP/api.rb" "$@" >"$d/api.out" 2>"$d/err" ||
			notok "$t/api" "exit $?: $(head -c 300 "$d/err")"
		check "$t/api-process" "$(jq -cS .process "$d/leaks.json")" "$(head -1 "$d/api.out" | jq -cS .)"
		# the verdict too (native: "the leak is not in the Ruby heap" when
		# the Ruby heap's leak is under the threshold, never "no leak")
		check "$t/api-verdict" "$(jq -r .verdict.text "$d/leaks.json")" "$(sed -n 3p "$d/api.out")"
		if [ $mode = native ]; then
			check "$t/api-inspect-first" "#<HeapDump::Leaks $text; " "$(sed -n 2p "$d/api.out" | cut -c1-$((${#text} + 20)))"
		else
			check "$t/api-inspect-no-sentence" 0 "$(grep -c "$SENTENCE" "$d/api.out")"
		fi
		# serve's leaks page: the same object (once, on the native leak)
		if [ $mode = native ] && [ $first_serve = 1 ] && "$H" serve --help >/dev/null 2>&1; then
			first_serve=0
			if serve_start "serve-$v" 600 "$H" serve -q --no-cache "$@"; then
				curl -s "$BASE/api/leaks?token=$TOKEN" >"$d/api.json"
				check "$t/serve-api-leaks-process" "$(jq -c .process "$d/leaks.json")" "$(jq -c .process "$d/api.json")"
				check "$t/serve-api-leaks-verdict" "$(jq -c .verdict.text "$d/leaks.json")" "$(jq -c .verdict.text "$d/api.json")"
				# the page itself, in Debian's chromium (as serve.sh drives it)
				if [ -d "$TOP/tests/node_modules/puppeteer-core" ]; then
					(cd "$TOP/tests" && node tools/serve_process_browser.mjs "$SUITE/$t/serve-page" "$URL" "$text") 2>"$TMP/browser.err" ||
						notok "$t/serve-page" "exit $?: $(head -c 300 "$TMP/browser.err")"
				else
					notok "$t/serve-page" "the npm package puppeteer-core is missing: npm ci --prefix tests (or make deps)"
				fi
				kill "$SPID"
				wait "$SPID" 2>/dev/null
			fi
		fi
	done
done
