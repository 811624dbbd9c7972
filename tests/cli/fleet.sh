#!/bin/sh
# fleet.sh - fleet summaries: stats --format ndjson writes one JSON object
# a group row with the dump's identity (path, pid, host, time, Ruby
# version), so that the summaries of many dumps concatenate into one file
# a database engine loads (issue 18, item 6).
#
#  - dumps: data/gen/fleet.rb, run at test time under Debian's ruby with
#    the gem (this tree's build, build/ext-VERSION): two workers of a
#    growing app, 6 dumps each (12 dumps with sidecars, under 1 s in
#    all), named so that file name order is not time order.
#  - the identity columns match the sidecars and the script's record;
#    without a sidecar pid, host and time are null and the Ruby version
#    is the dump's own ("3.1", ruby_version_from "dump").
#  - every row of stats -f json -n 0 is there, once, with the same count
#    and memsize; one "total" line a dump.
#  - DuckDB (npm package @duckdb/node-api, tests/package.json) loads the
#    concatenated summaries with the README's own recipe (the sh and sql
#    blocks of its "Fleet summaries" section, run as written); the growth
#    query's answer (per process and class: bytes in the first and the
#    last dump by time, what grew) equals the one computed with jq from
#    stats -f json of the first and last dump of each worker (ordered by
#    their sidecars' times), and the objects the script says it kept.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs gzip gzip
needs node "nodejs (and npm, then: npm ci --prefix tests)"

H=$HEAPDUMP
RUBY=${RUBY:-/usr/bin/ruby}
[ -x "$RUBY" ] || { notok ruby "no $RUBY: apt-get install ruby ruby-dev"; exit 1; }
V=$("$RUBY" -e 'print RUBY_VERSION')
case ${B:-build} in
/*) EXT=$B/ext-$V ;;
*) EXT=$TOP/${B:-build}/ext-$V ;;
esac
[ -f "$EXT/heapdump_ext.so" ] || { notok gem "$EXT/heapdump_ext.so is missing: make ext RUBIES=$RUBY"; exit 1; }
[ -d "$TOP/tests/node_modules/@duckdb/node-api" ] ||
	{ notok duckdb "the npm package @duckdb/node-api is missing: npm ci --prefix tests (or make deps)"; exit 1; }

# ---- 12 dumps of two growing workers, with sidecars ----

mkdir "$TMP/dumps"
start=$(date +%s)
for w in a b; do
	env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$EXT:$TOP/src/lib" "$RUBY" --disable-gems \
		"$TOP/data/gen/fleet.rb" "$TMP/dumps" $w 2>"$TMP/gen.err" ||
		{ notok gen "fleet.rb $w failed: $(head -c 300 "$TMP/gen.err")"; exit 1; }
done
echo "# fleet.rb: 12 dumps in $(($(date +%s) - start)) s" >&2
check gen/dumps 12 "$(ls "$TMP"/dumps/*.json.gz | wc -l)"
check gen/sidecars 12 "$(ls "$TMP"/dumps/*.json.gz.hdmeta | wc -l)"

# ---- the identity columns ----

host=$(jq -r .host "$TMP/dumps/a-kiwi.json.gz.hdmeta")
check identity/sidecar-host-is-the-host "$(hostname)" "$host"
for f in "$TMP"/dumps/*.json.gz; do
	"$H" stats -q -f ndjson "$f" >"$f.ndjson" 2>"$TMP/err" || notok "ndjson/$(basename "$f")" "exit $?: $(head -c 200 "$TMP/err")"
done
f="$TMP/dumps/a-mango.json.gz"
m="$f.hdmeta"
check identity/one-identity-a-file 1 \
	"$(jq -c '[.path, .pid, .host, .time, .ruby_version, .ruby_version_from]' "$f.ndjson" | sort -u | wc -l)"
check identity/columns \
	"$(jq -c --arg p "$f" '[$p, .pid, .host, .time, .ruby_version, "sidecar"]' "$m")" \
	"$(head -n 1 "$f.ndjson" | jq -c '[.path, .pid, .host, .time, .ruby_version, .ruby_version_from]')"
check identity/pid-is-the-workers "$(jq .pid "$TMP/dumps/a.record.json")" "$(head -n 1 "$f.ndjson" | jq .pid)"
check identity/ruby-version-is-the-rubys "$V" "$(head -n 1 "$f.ndjson" | jq -r .ruby_version)"

# without a sidecar: what the dump tells (a gem dump names its exact
# Ruby, "ruby_version" on its first ROOT record), null for the rest
cp "$f" "$TMP/alone.json.gz"
check_rc identity/no-sidecar-exit 0 "$H" stats -q -f ndjson "$TMP/alone.json.gz"
check identity/no-sidecar "[null,null,null,\"$V\",\"dump\"]" \
	"$(head -n 1 "$TMP/out" | jq -c '[.pid, .host, .time, .ruby_version, .ruby_version_from]')"
# a store: no sidecar either
"$H" index -q "$f" -o "$TMP/mango.hds" 2>/dev/null
check_rc identity/store-exit 0 "$H" stats -q -f ndjson "$TMP/mango.hds"
check identity/store "[null,\"$V\",\"dump\"]" "$(head -n 1 "$TMP/out" | jq -c '[.pid, .ruby_version, .ruby_version_from]')"
check identity/store-same-rows "$(sed 1d "$f.ndjson" | jq -c '[.grouping, .type, .class, .count, .memsize]' | sort | md5sum)" \
	"$(sed 1d "$TMP/out" | jq -c '[.grouping, .type, .class, .count, .memsize]' | sort | md5sum)"
# a hostile sidecar: control bytes in the host stay inside their JSON string
printf '{"heapdump_sidecar":1,"pid":7,"host":"evil\\u0001\\n\\"host","time":"2026-01-01T00:00:00.000000Z","ruby_version":"3.1.2","rss_bytes":1}\n' \
	>"$TMP/alone.json.gz.hdmeta"
check_rc identity/hostile-sidecar-exit 0 "$H" stats -q -f ndjson "$TMP/alone.json.gz"
check identity/hostile-sidecar-lines-parse "$(wc -l <"$TMP/out" | tr -d ' ')" "$(jq -c .pid "$TMP/out" | wc -l | tr -d ' ')"
check identity/hostile-sidecar-pid 7 "$(head -n 1 "$TMP/out" | jq .pid)"

# ---- every row, once ----

"$H" stats -q -f json -n 0 "$f" >"$TMP/mango.json"
check rows/type "$(jq -c '.groupings[0].rows[] | [.type, .count, .memsize]' "$TMP/mango.json" | sort)" \
	"$(jq -c 'select(.grouping == "type") | [.type, .count, .memsize]' "$f.ndjson" | sort)"
check rows/class "$(jq -c '.groupings[1].rows[] | [.class, .count, .memsize]' "$TMP/mango.json" | sort)" \
	"$(jq -c 'select(.grouping == "class") | [.class, .count, .memsize]' "$f.ndjson" | sort)"
check rows/total "$(jq -c '[.totals.objects, .totals.memsize]' "$TMP/mango.json")" \
	"$(jq -c 'select(.grouping == "total") | [.count, .memsize]' "$f.ndjson")"
check rows/one-schema 1 "$(jq -c 'keys' "$f.ndjson" | sort -u | wc -l)"
check_rc rows/top-still-applies 0 "$H" stats -q -f ndjson -n 2 "$f"
check rows/top-2 "1 2 2" "$(jq -r .grouping "$TMP/out" | sort | uniq -c | awk '{print $1}' | sort -n | tr '\n' ' ' | sed 's/ $//')"
check_rc rows/by-keys 0 "$H" stats -q -f ndjson -b location,class -b type "$f"
check rows/by-keys-columns '["class","count","grouping","host","location","memsize","path","pid","ruby_version","ruby_version_from","time","type"]' \
	"$(head -n 1 "$TMP/out" | jq -c 'keys')"
check rows/by-keys-null-where-not-a-key '[null,null]' \
	"$(jq -c 'select(.grouping == "type") | [.location, .class]' "$TMP/out" | sort -u)"
check_rc rows/namespace-refused 2 "$H" stats -q -f ndjson --namespace Foo "$f"

# ---- DuckDB: the README's recipe, as written ----

readme_block() { # LANG: the first ```LANG block of the Fleet summaries section
	awk -v lang="$1" '
		/^## / { on = ($0 == "## Fleet summaries") }
		on && !done && $0 == "```" lang { inb = 1; next }
		on && inb && $0 == "```" { inb = 0; done = 1; next }
		inb { print }' "$TOP/README.md"
}
readme_block sh >"$TMP/recipe.sh"
readme_block sql >"$TMP/recipe.sql"
[ -s "$TMP/recipe.sh" ] && [ -s "$TMP/recipe.sql" ] && ok recipe/in-readme ||
	notok recipe/in-readme "no sh and sql blocks under '## Fleet summaries' in README.md"
mkdir "$TMP/work"
ln -s "$TMP/dumps" "$TMP/work/dumps"
(cd "$TMP/work" && PATH="$(dirname "$H"):$PATH" sh "$TMP/recipe.sh") 2>"$TMP/err"
check recipe/sh-exit 0 $?
check recipe/all-dumps-in-one-file 12 "$(jq -r 'select(.grouping == "total") | .path' "$TMP/work/fleet.ndjson" | sort -u | wc -l)"
start=$(date +%s)
(cd "$TMP/work" && node "$TOP/tests/tools/duckdb.mjs" <"$TMP/recipe.sql" >"$TMP/duck.tsv" 2>"$TMP/err")
check recipe/duckdb-exit 0 "$?"
echo "# duckdb: $(($(date +%s) - start)) s" >&2
[ -s "$TMP/err" ] && notok recipe/duckdb-stderr "$(head -c 300 "$TMP/err")"

# The same answer from stats -f json of each worker's first and last
# dump by sidecar time: host pid class first last grew grew_objects
for w in a b; do
	set -- $(for m in "$TMP"/dumps/$w-*.hdmeta; do printf '%s %s\n' "$(jq -r .time "$m")" "${m%.hdmeta}"; done | sort | awk 'NR == 1 { f = $2 } { l = $2 } END { print f, l }')
	"$H" stats -q -f json -b class -n 0 "$1" >"$TMP/first.json"
	"$H" stats -q -f json -b class -n 0 "$2" >"$TMP/last.json"
	jq -r -n --slurpfile f "$TMP/first.json" --slurpfile l "$TMP/last.json" \
		--slurpfile m "$1.hdmeta" '
		def rows(d): d[0].groupings[0].rows | map({key: .class, value: .}) | from_entries;
		rows($f) as $a | rows($l) as $b |
		($a + $b | keys[]) as $c |
		(($a[$c].memsize // 0)) as $x | (($b[$c].memsize // 0)) as $y |
		select($y > $x) |
		[$m[0].host, $m[0].pid, $c, $x, $y, $y - $x, (($b[$c].count // 0) - ($a[$c].count // 0))] | @tsv'
done >"$TMP/jq.tsv"
check duckdb/rows-grew "$(wc -l <"$TMP/jq.tsv" | tr -d ' ')" "$(wc -l <"$TMP/duck.tsv" | tr -d ' ')"
check duckdb/same-answer-as-stats "$(sort "$TMP/jq.tsv" | md5sum)" "$(sort "$TMP/duck.tsv" | md5sum)"
sort "$TMP/jq.tsv" >"$TMP/a" && sort "$TMP/duck.tsv" >"$TMP/b" && diff "$TMP/a" "$TMP/b" | head -5 >&2
# ranked by bytes grown: never going up
check duckdb/ranked "$(cut -f6 "$TMP/duck.tsv" | sort -rn | md5sum)" "$(cut -f6 "$TMP/duck.tsv" | md5sum)"
# what the script kept: Order grew in worker a, Session in worker b
pa=$(jq .pid "$TMP/dumps/a.record.json")
pb=$(jq .pid "$TMP/dumps/b.record.json")
check duckdb/orders-grew "$(jq '.dumps[-1].orders - .dumps[0].orders' "$TMP/dumps/a.record.json")" \
	"$(awk -F'\t' -v p="$pa" '$2 == p && $3 == "Order" { print $7 }' "$TMP/duck.tsv")"
check duckdb/sessions-grew "$(jq '.dumps[-1].sessions - .dumps[0].sessions' "$TMP/dumps/b.record.json")" \
	"$(awk -F'\t' -v p="$pb" '$2 == p && $3 == "Session" { print $7 }' "$TMP/duck.tsv")"
check duckdb/no-session-growth-in-a "" "$(awk -F'\t' -v p="$pa" '$2 == p && $3 == "Session"' "$TMP/duck.tsv")"
check duckdb/scratch-did-not-grow "" "$(awk -F'\t' '$3 == "Scratch"' "$TMP/duck.tsv")"

# ---- trend and strings: the same identity columns ----

# trend -f ndjson of worker a's dumps in time order: each line carries
# the identity of the dump of its step
set -- $(for m in "$TMP"/dumps/a-*.hdmeta; do printf '%s %s\n' "$(jq -r .time "$m")" "${m%.hdmeta}"; done | sort | awk '{ print $2 }')
check_rc trend/ndjson-exit 0 "$H" trend -q -f ndjson -b class "$@"
check trend/lines-carry-identity "$(wc -l <"$TMP/out" | tr -d ' ')" "$(jq -c 'select(.pid != null and .host != null and .time != null and .ruby_version_from == "sidecar")' "$TMP/out" | wc -l | tr -d ' ')"
bad=0
for k in 1 2 3 4 5 6; do
	eval "p=\${$k}"
	want=$(jq -c --arg p "$p" '[$p, .pid, .host, .time, .ruby_version]' "$p.hdmeta")
	got=$(jq -c --argjson k "$k" 'select(.step == $k) | [.path, .pid, .host, .time, .ruby_version]' "$TMP/out" | sort -u)
	[ "$want" = "$got" ] || { bad=1; echo "# step $k: want $want got $got" >&2; }
done
check trend/step-k-is-the-kth-dumps-identity 0 "$bad"
check trend/one-schema 1 "$(jq -c 'keys' "$TMP/out" | sort -u | wc -l | tr -d ' ')"

# strings -f ndjson of all 12 dumps, concatenated, into DuckDB: six dumps
# a process, one host, every line one identity of its file
for f in "$TMP"/dumps/*.json.gz; do
	"$H" strings -q -f ndjson --min-count 1 "$f" || notok "strings-ndjson/$(basename "$f")" "exit $?"
done >"$TMP/work/strings.ndjson"
check strings/identity-per-file 12 "$(jq -c '[.path, .pid, .time]' "$TMP/work/strings.ndjson" | sort -u | wc -l | tr -d ' ')"
check strings/one-schema 1 "$(jq -c 'keys' "$TMP/work/strings.ndjson" | sort -u | wc -l | tr -d ' ')"
f="$TMP/dumps/a-mango.json.gz"
"$H" strings -q -f json --min-count 1 -n 0 "$f" >"$TMP/strings.json"
check strings/rows-as-json "$(jq -c '.rows[] | [.value, .count, .memsize]' "$TMP/strings.json" | sort | md5sum)" \
	"$(jq -c --arg p "$f" 'select(.path == $p) | [.value, .count, .memsize]' "$TMP/work/strings.ndjson" | sort | md5sum)"
printf "SELECT pid, count(DISTINCT path), count(DISTINCT host) FROM read_json_auto('strings.ndjson') GROUP BY pid ORDER BY pid;\n" >"$TMP/strings.sql"
(cd "$TMP/work" && node "$TOP/tests/tools/duckdb.mjs" <"$TMP/strings.sql" >"$TMP/duck2.tsv" 2>"$TMP/err")
check strings/duckdb-exit 0 "$?"
check strings/duckdb-six-dumps-a-process "$(printf '%s\t6\t1\n' $(printf '%s\n' "$pa" "$pb" | sort -n))" "$(cat "$TMP/duck2.tsv")"
