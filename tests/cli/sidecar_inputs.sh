#!/bin/sh
# sidecar_inputs.sh - a folder of gem dumps globbed as dumps/*.json
# (issue 34, item 15): the old sidecar name DUMP.meta.json matches the
# glob, and every command that takes many dumps (trend, diff, leaks,
# report, serve) passes over a sidecar given as an input, with a note on
# stderr, and answers as it does for the dumps alone; a sidecar under
# any name (DUMP.hdmeta, the gem's name now) is recognised by its content,
# and a JSON file that is not one is still refused.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl
HD=$HEAPDUMP
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

d=$TMP/dumps
mkdir "$d"
t=1
for k in before after later; do
	cp "$DATA/leak_$k.json" "$d/$t-$k.json"
	# what the gem wrote beside its dumps before it named them .hdmeta
	printf '{"heapdump_sidecar":1,"pid":4242,"host":"h","time":"2026-11-24T10:00:0%d.000000Z","ruby_version":"3.1.2","process":{"rss":1000},"gc_stat":{"count":3},"dump":"%s","objects":1,"rss_bytes":1000,"malloc_in_use_bytes":10}\n' \
		"$t" "$t-$k.json" >"$d/$t-$k.json.meta.json"
	t=$((t + 1))
done
set -- "$d"/*.json
check glob-catches-sidecars 6 "$#"
alone="$d/1-before.json $d/2-after.json $d/3-later.json"

# run NAME CMD ARGS...: CMD over the glob and over the dumps alone: exit
# 0, the same output, and a note for each sidecar passed over
run() {
	n=$1
	shift
	"$HD" "$@" "$d"/*.json >"$TMP/glob.out" 2>"$TMP/glob.err"
	rc=$?
	# shellcheck disable=SC2086
	"$HD" "$@" $alone >"$TMP/alone.out" 2>"$TMP/alone.err"
	if [ $rc -ne 0 ]; then
		notok "$n/exit" "exit $rc: $(head -c 300 "$TMP/glob.err")"
		return
	fi
	ok "$n/exit"
	notes=$(grep -c "note: passing over '.*\.meta\.json': the sidecar of a dump" "$TMP/glob.err")
	check "$n/one-note-each" 3 "$notes"
	if cmp -s "$TMP/glob.out" "$TMP/alone.out"; then ok "$n/as-the-dumps-alone"; else
		notok "$n/as-the-dumps-alone" "$(diff "$TMP/alone.out" "$TMP/glob.out" | head -4 | tr '\n' '|')"
	fi
}
run trend trend -q
run diff diff -q -f json
run leaks leaks -q -f json
"$HD" report -q -o "$TMP/r.html" "$d"/*.json 2>"$TMP/err"
rc=$?
check report/exit 0 "$rc"
check report/notes 3 "$(grep -c 'note: passing over' "$TMP/err")"
check report/three-dumps 1 "$(grep -c '3-later.json' "$TMP/r.html" | awk '{ print ($1 > 0) }')"

# serve: the three dumps, not six inputs
serve_start serve 300 "$HD" serve -q --no-cache "$d"/*.json || exit 1
n=$(curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/overview" | jq -r '.dumps | length' 2>/dev/null)
check serve/three-dumps 3 "$n"
check serve/notes 3 "$(grep -c 'note: passing over' "$TMP/serve.err")"

# the new name, given as an input, is passed over too (by its content)
cp "$d/1-before.json.meta.json" "$d/1-before.json.hdmeta"
check_rc hdmeta-passed-over 0 "$HD" trend -q "$d/1-before.json" "$d/1-before.json.hdmeta" "$d/2-after.json"
# a JSON file that is no sidecar is still no dump
echo '{"not":"a sidecar"}' >"$TMP/other.json"
check_rc other-json-refused 1 "$HD" trend -q "$d/1-before.json" "$TMP/other.json" "$d/2-after.json"
# stats still finds the old name beside a dump, and the new one first
"$HD" stats -q "$d/1-before.json" >"$TMP/out" 2>&1
check_grep stats-old-name '^process .*pid 4242' "$TMP/out"
sed 's/"pid":4242/"pid":4343/' "$d/1-before.json.meta.json" >"$d/1-before.json.hdmeta"
"$HD" stats -q "$d/1-before.json" >"$TMP/out" 2>&1
check_grep stats-new-name-first '^process .*pid 4343.*1-before\.json\.hdmeta' "$TMP/out"
exit 0
