#!/bin/sh
# stats --by length and heapdump trend, against an independent count
# (tests/cli/sizes_trend.py, Python's json over the raw dumps) on real
# Ruby 3.1 dumps: data/dumps/growth_{1..6}.json.gz (data/gen/growth.rb).
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs python3 python3
PY="python3 $TOP/tests/cli/sizes_trend.py"

G1="$DATA/growth_1.json.gz"
set -- "$DATA"/growth_1.json.gz "$DATA"/growth_2.json.gz "$DATA"/growth_3.json.gz \
	"$DATA"/growth_4.json.gz "$DATA"/growth_5.json.gz "$DATA"/growth_6.json.gz
for f in "$@"; do
	[ -e "$f" ] || { notok fixtures "missing $f (data/gen/growth.rb)"; exit 1; }
done
GROWTH="$*"

# ---- stats --by length ----

# rows [type, length, count, memsize] of a stats JSON, sorted
rows_tl() { jq -c '[.groupings[0].rows[] | [.type, .length, .count, .memsize]] | sort' "$1"; }

for d in "$DATA/ok_ruby3.1_clean.json" "$DATA/ok_ruby4.0.1_untraced.json.gz" \
	"$DATA/growth_6.json.gz"; do
	n=$(basename "$d")
	$PY length "$d" >"$TMP/want" 2>"$TMP/err" ||
		{ notok "$n/length-count" "$(head -c 300 "$TMP/err")"; continue; }
	if "$HEAPDUMP" stats --all -q --by type,length --top 0 --format json "$d" \
		>"$TMP/got.json" 2>"$TMP/err"; then
		check "$n/length-buckets" "$(cat "$TMP/want")" "$(rows_tl "$TMP/got.json")"
	else
		notok "$n/length-buckets" "exit $?: $(head -c 300 "$TMP/err")"
	fi
	gzip -dc "$d" >"$TMP/plain.json" 2>/dev/null || cp "$d" "$TMP/plain.json"
	if "$HEAPDUMP" index -q "$TMP/plain.json" -o "$TMP/l.hds" 2>"$TMP/err" &&
		"$HEAPDUMP" stats --all -q --by type,length --top 0 --format json \
			"$TMP/l.hds" >"$TMP/store.json" 2>"$TMP/err"; then
		check "$n/length-store" "$(cat "$TMP/want")" "$(rows_tl "$TMP/store.json")"
	else
		notok "$n/length-store" "$(head -c 300 "$TMP/err")"
	fi
done

d="$DATA/growth_6.json.gz"
# every power-of-two bucket has the objects growth.rb keeps: the strings
# of 1000 bytes (six steps) lie in 512-1023
"$HEAPDUMP" stats -q --by type,length --top 0 --format json "$d" >"$TMP/tl.json" 2>"$TMP/err"
check length-1000-strings true \
	"$(jq '[.groupings[0].rows[] | select(.type == "STRING" and .length == "512-1023") | .count] | add >= 6' "$TMP/tl.json")"
check length-labels true \
	"$(jq '[.groupings[0].rows[].length] | all(test("^(-|0|1|[0-9]+-[0-9]+)$"))' "$TMP/tl.json")"
# objects without a length are in "-", never in "0"
check length-dash-objects true \
	"$(jq '[.groupings[0].rows[] | select(.type == "OBJECT") | .length] | unique == ["-"]' "$TMP/tl.json")"
# combinable: class,length and length alone add up to the totals
"$HEAPDUMP" stats -q --by class,length --by length --top 0 --format json "$d" >"$TMP/cl.json" 2>"$TMP/err"
check length-class-adds-up true \
	"$(jq '([.groupings[0].rows[].count] | add) == .totals.objects and ([.groupings[1].rows[].count] | add) == .totals.objects' "$TMP/cl.json")"
check length-class-key true \
	"$(jq '[.groupings[0].rows[] | select(.class == "Array" and .length == "4-7")] | length == 1' "$TMP/cl.json")"
"$HEAPDUMP" stats -q --by length "$d" >"$TMP/lt" 2>&1
check_grep length-text '^ +[0-9,]+ +[0-9,]+  2-3$' "$TMP/lt"
"$HEAPDUMP" stats -q --by type,length --format tsv --top 0 "$d" >"$TMP/lt.tsv" 2>&1
check_grep length-tsv '^type,length	[0-9]+	[0-9]+	ARRAY	0$' "$TMP/lt.tsv"

# ---- trend ----

CLASSES=Growing,Wave,Steady,Fading,String,Array,Hash
# shellcheck disable=SC2086
$PY trend $CLASSES $GROWTH >"$TMP/want.json" 2>"$TMP/err" ||
	notok trend-count "$(head -c 300 "$TMP/err")"
# [class, counts, memsizes, count slope, memsize slope, verdict] of a trend JSON
sel() {
	jq -c --arg c "$CLASSES" '($c | split(",")) as $want |
		[.rows[] | select(.class as $k | $want | index($k)) |
		 [.class, .count, .memsize, (.count_slope * 1000 | round / 1000),
		  (.memsize_slope * 1000 | round / 1000), .verdict]] |
		sort_by(.[0] as $k | $want | index($k))' "$1"
}
# shellcheck disable=SC2086
if "$HEAPDUMP" trend -q --all --top 0 --format json $GROWTH >"$TMP/t.json" 2>"$TMP/err"; then
	check trend-numbers "$(cat "$TMP/want.json")" "$(sel "$TMP/t.json")"
else
	notok trend-numbers "exit $?: $(head -c 300 "$TMP/err")"
fi
# the counts Ruby itself saw before each dump
for c in Growing Wave Steady Fading; do
	check "trend-expected-$c" "$(jq -c ".$c" "$DATA/growth_expected.json")" \
		"$(jq -c --arg c "$c" '.rows[] | select(.class == $c) | .count' "$TMP/t.json")"
done
v() { jq -r --arg c "$1" '.rows[] | select(.class == $c) | .verdict' "$TMP/t.json"; }
check verdict-growing every-step "$(v Growing)"
check verdict-wave overall "$(v Wave)"
check verdict-steady flat "$(v Steady)"
check verdict-fading shrinks "$(v Fading)"
check trend-dumps 6 "$(jq '.dumps | length' "$TMP/t.json")"
check trend-dump-totals true \
	"$(jq '[.dumps[].objects] | length == 6 and all(. > 1000)' "$TMP/t.json")"
# sorted by growth: verdicts in rank order, then by memsize slope
check trend-sorted true "$(jq '[.rows[].verdict | {"every-step":0,"overall":1,"flat":2,"shrinks":3}[.]] | . == sort' "$TMP/t.json")"
check trend-sorted-slope true "$(jq '[.rows[] | select(.verdict == "every-step") | .memsize_slope] | . == (sort | reverse)' "$TMP/t.json")"
# --top N
# shellcheck disable=SC2086
check trend-top-3 3 "$("$HEAPDUMP" trend -q --top 3 --format json $GROWTH 2>/dev/null | jq '.rows | length')"

# --by site and --by type, as stats has them
# shellcheck disable=SC2086
"$HEAPDUMP" trend -q --by type --top 0 --format json $GROWTH >"$TMP/ty.json" 2>"$TMP/err"
check trend-by-type true \
	"$(jq '[.rows[] | select(.type == "OBJECT")] | length == 1' "$TMP/ty.json")"
# shellcheck disable=SC2086
"$HEAPDUMP" trend -q --by site --top 0 --format json $GROWTH >"$TMP/si.json" 2>"$TMP/err"
check trend-by-site true \
	"$(jq '[.rows[] | select(.location | test("growth.rb:[0-9]+$")) | .verdict] | index("every-step") != null' "$TMP/si.json")"
# shellcheck disable=SC2086
"$HEAPDUMP" trend -q --by class,length --top 0 --format json $GROWTH >"$TMP/cl.json" 2>"$TMP/err"
check trend-by-class-length true \
	"$(jq '[.rows[] | select(.class == "String" and .length == "512-1023") | .count] == [[1,2,3,4,5,6]] or ([.rows[] | select(.class == "String" and .length == "512-1023") | .count[5] >= 6] == [true])' "$TMP/cl.json")"

# stores and dumps give identical output (text and json), and a mix
i=0
for f in $GROWTH; do
	i=$((i + 1))
	gzip -dc "$f" >"$TMP/g$i.json"
	"$HEAPDUMP" index -q "$TMP/g$i.json" -o "$TMP/g$i.hds" 2>"$TMP/err" ||
		notok "index-$i" "$(head -c 300 "$TMP/err")"
done
S="$TMP/g1.hds $TMP/g2.hds $TMP/g3.hds $TMP/g4.hds $TMP/g5.hds $TMP/g6.hds"
P="$TMP/g1.json $TMP/g2.json $TMP/g3.json $TMP/g4.json $TMP/g5.json $TMP/g6.json"
M="$TMP/g1.json $TMP/g2.hds $TMP/g3.json $TMP/g4.hds $TMP/g5.json $TMP/g6.hds"
for fmt in json text tsv ndjson; do
	# shellcheck disable=SC2086
	"$HEAPDUMP" trend -q --top 0 --format $fmt $P 2>&1 | sed 's/\.hds/.json/g' >"$TMP/a.$fmt"
	# shellcheck disable=SC2086
	"$HEAPDUMP" trend -q --top 0 --format $fmt $S 2>&1 | sed 's/\.hds/.json/g' >"$TMP/b.$fmt"
	# shellcheck disable=SC2086
	"$HEAPDUMP" trend -q --top 0 --format $fmt $M 2>&1 | sed 's/\.hds/.json/g' >"$TMP/c.$fmt"
	check "store-vs-dump-$fmt" "" "$(diff "$TMP/a.$fmt" "$TMP/b.$fmt" | head -5)"
	check "mixed-vs-dump-$fmt" "" "$(diff "$TMP/a.$fmt" "$TMP/c.$fmt" | head -5)"
done
check store-vs-dump-nonempty true "$(jq '.rows | length > 40' "$TMP/a.json")"

# formats: ndjson one object a line, tsv rows of one width
check ndjson-parses true "$(jq -s 'length > 240 and all(has("step") and has("count"))' "$TMP/a.ndjson")"
check tsv-width 1 "$(awk -F'\t' '{print NF}' "$TMP/a.tsv" | sort -u | wc -l | tr -d ' ')"
check_grep tsv-header '^verdict	count_slope	memsize_slope	' "$TMP/a.tsv"
# text: sparklines of block characters, or ASCII with --ascii
check_grep text-sparkline '^▁▂▄▅▇█ ' "$TMP/a.text"
check_grep text-verdict 'grows in every step +Growing$' "$TMP/a.text"
# shellcheck disable=SC2086
"$HEAPDUMP" trend -q --ascii $GROWTH >"$TMP/ascii" 2>&1
check ascii-only "" "$(LC_ALL=C grep -n '[^ -~]' "$TMP/ascii" | head -3)"
check_grep ascii-sparkline '^[_.:=+*#-]{6} ' "$TMP/ascii"

# the order: a sequence that goes back is refused (exit 2), --force warns
check_rc reversed-refused 2 "$HEAPDUMP" trend -q "$DATA/growth_1.json.gz" \
	"$DATA/growth_3.json.gz" "$DATA/growth_2.json.gz"
check_grep reversed-message "'.*growth_3.json.gz' and '.*growth_2.json.gz' seem to be in the wrong order" "$TMP/err"
check reversed-message-no-pair-words 0 "$(grep -c "BEFORE AFTER" "$TMP/err")"
check_grep reversed-message-how "give the dumps oldest first, or --force" "$TMP/err"
# shellcheck disable=SC2086
check_rc reversed-all 2 "$HEAPDUMP" trend -q $(echo $GROWTH | tr ' ' '\n' | sort -r)
check_rc reversed-force 0 "$HEAPDUMP" trend -q --force "$DATA/growth_2.json.gz" "$DATA/growth_1.json.gz"
check_grep reversed-force-warns "warning: .* wrong order" "$TMP/err"
check_rc reversed-store 2 "$HEAPDUMP" trend -q "$TMP/g2.hds" "$TMP/g1.hds"

# nothing to judge: one dump, or a selection of nothing, says so
check_rc single-dump 2 "$HEAPDUMP" trend -q "$G1"
check_grep single-dump-message "at least two dumps" "$TMP/err"
check_rc no-dump 2 "$HEAPDUMP" trend
check_rc empty-selection 1 "$HEAPDUMP" trend -q --classes NoSuchClass "$G1" "$DATA/growth_2.json.gz"
check_grep empty-selection-message "picks no group.*NoSuchClass" "$TMP/err"
check empty-selection-no-verdict "" "$(grep -E 'grows|flat|shrinks' "$TMP/out")"
check_rc class-selection 0 "$HEAPDUMP" trend -q --format json --classes Growing,Wave "$G1" "$DATA/growth_2.json.gz"
check class-selection-rows '["Growing","Wave"]' "$(jq -c '[.rows[].class] | sort' "$TMP/out")"
check_rc class-needs-class-key 2 "$HEAPDUMP" trend -q --by type --classes Growing "$G1" "$DATA/growth_2.json.gz"

# usage errors
check_rc usage-format 2 "$HEAPDUMP" trend --format xml "$G1" "$DATA/growth_2.json.gz"
check_rc usage-key 2 "$HEAPDUMP" trend --by nope "$G1" "$DATA/growth_2.json.gz"
check_rc usage-two-by 2 "$HEAPDUMP" trend --by type --by class "$G1" "$DATA/growth_2.json.gz"
check_rc missing-file 1 "$HEAPDUMP" trend "$G1" "$TMP/nope.json"
check_grep missing-file-message "cannot open '.*nope.json'" "$TMP/err"
check_rc help 0 "$HEAPDUMP" trend --help
check_grep help-ascii "--ascii" "$TMP/out"
check_rc in-help 0 "$HEAPDUMP" help
check_grep in-command-table "^ +trend " "$TMP/out"
