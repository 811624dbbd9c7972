#!/bin/sh
# leaks_verdict.sh - the verdict of heapdump leaks on the fixtures
# (issue 34): what every front end prints first, the shares that add up,
# the threshold of no significant leak, the young objects of LATER
# walked through, and the collections that grow over N dumps.
#
#  - verdict: text, JSON and TSV say the same sentence, first; the JSON's
#    verdict names suspect 1 of the classic leak (LeakyCache's Hash);
#    its shares (suspects, folded, vm, unreached) add up to 1.
#  - --min-leak: the same leak under a higher threshold is no
#    significant leak, said with the figures; a dump against itself too.
#  - young: with LATER, the objects born since AFTER are counted apart
#    (the leak fixture's LATER has 60 of them) and are no suspect.
#  - growth: over data/dumps/growth_1..6 (data/gen/growth.rb) the Array
#    of Growing objects is found growing 40 -> 80 -> ... -> 240 and the
#    one of Sizes::KEEP 18 -> ... -> 108, and no collection whose length
#    went down (Wave, Fading); a usage error past 16 dumps.
#  - serve and report: /api/leaks and the report's headline say the
#    command's verdict; serve's clusters are the command's.
. "$(dirname "$0")/../lib.sh"
needs jq jq

H=$HEAPDUMP
B="$DATA/leak_before.json"
A="$DATA/leak_after.json"
L="$DATA/leak_later.json"

# ---- the verdict, first, in every format ----
check_rc verdict/exit 0 "$H" leaks -q -f json "$B" "$A" "$L"
cp "$TMP/out" "$TMP/l.json"
check verdict/leak true "$(jq .verdict.leak "$TMP/l.json")"
check verdict/first-suspect '"suspect" 0' \
	"$(jq -r '"\"" + .verdict.first.kind + "\" " + (.verdict.first.index | tostring)' "$TMP/l.json")"
check verdict/first-is-the-hash "Hash" \
	"$(jq -r '.verdict.first.path_text | split(" -> ") | last' "$TMP/l.json")"
check verdict/share-of-suspect-1 true \
	"$(jq '.verdict.first.share == .suspects[0].share' "$TMP/l.json")"
check verdict/shares-add-up true \
	"$(jq '.shares | (.suspects + .folded + .vm + .unreached - 1) | fabs < 0.001' "$TMP/l.json")"
text=$(jq -r .verdict.text "$TMP/l.json")
"$H" leaks -q "$B" "$A" "$L" >"$TMP/l.txt" 2>/dev/null
check verdict/text-line-4 "verdict   $text" "$(sed -n 4p "$TMP/l.txt")"
"$H" leaks -q -f tsv "$B" "$A" "$L" >"$TMP/l.tsv" 2>/dev/null
check verdict/tsv "verdict	leak	$text" "$(grep '^verdict' "$TMP/l.tsv")"

# ---- no significant leak ----
check_rc threshold/exit 0 "$H" leaks -q -f json --min-leak 100000 "$B" "$A" "$L"
cp "$TMP/out" "$TMP/t.json"
check threshold/no-leak false "$(jq .verdict.leak "$TMP/t.json")"
check threshold/first-null null "$(jq .verdict.first "$TMP/t.json")"
check threshold/says-figures true \
	"$(jq '.verdict.text | test("^no significant leak: 60 objects, 4.5 KB .* under the 100.0 KB threshold")' "$TMP/t.json")"
check threshold/suspects-still-listed 1 "$(jq '.suspects | length' "$TMP/t.json")"
check_rc threshold/self 0 "$H" leaks -q "$A" "$A"
check_grep threshold/self-says-none '^verdict   no significant growth: 0 objects' "$TMP/out"
check_rc threshold/bad-value 2 "$H" leaks -q --min-leak x "$B" "$A"

# ---- young objects: born since AFTER, no holder ----
check young/counted 60 "$(jq .young.count "$TMP/l.json")"
"$H" leaks -q -f json "$B" "$A" >"$TMP/two.json" 2>/dev/null
check young/none-with-two-dumps 0 "$(jq .young.count "$TMP/two.json")"
check young/same-holder-as-two-dumps \
	"$(jq -r '.suspects[0].holder.class' "$TMP/two.json")" \
	"$(jq -r '.suspects[0].holder.class' "$TMP/l.json")"

# ---- collections that grow at every step ----
G=""
for i in 1 2 3 4 5 6; do G="$G $DATA/growth_$i.json.gz"; done
# shellcheck disable=SC2086 # the six dumps
check_rc growth/exit 0 "$H" leaks -q -f json $G
cp "$TMP/out" "$TMP/g.json"
check growth/dumps 6 "$(jq .growing.dumps "$TMP/g.json")"
check growth/kept "$(jq -c .Growing "$DATA/growth_expected.json")" \
	"$(jq -c '[.growing.collections[] | select(.lengths[0] == 40) | .lengths][0]' "$TMP/g.json")"
check growth/sizes-keep "[18,36,54,72,90,108]" \
	"$(jq -c '[.growing.collections[] | select(.lengths[0] == 18) | .lengths][0]' "$TMP/g.json")"
check growth/only-growing true \
	"$(jq '[.growing.collections[].lengths | . as $l | range(1; length) | $l[.] > $l[. - 1]] | all' "$TMP/g.json")"
check growth/no-wave 0 \
	"$(jq '[.growing.collections[] | select(.lengths == [30,60,90,60,45,40])] | length' "$TMP/g.json")"
check growth/verdict-names-it true \
	"$(jq '.verdict.text | test("grows at every dump: ")' "$TMP/g.json")"
# shellcheck disable=SC2086
"$H" leaks -q $G >"$TMP/g.txt" 2>/dev/null
check_grep growth/text-step '^step 3 ' "$TMP/g.txt"
check_grep growth/text-line '^growing   [0-9]+ collections grow at every step of the 6 dumps' "$TMP/g.txt"
# three dumps: the growth of those three
"$H" leaks -q -f json "$DATA/growth_1.json.gz" "$DATA/growth_2.json.gz" \
	"$DATA/growth_3.json.gz" >"$TMP/g3.json" 2>/dev/null
check growth/three-dumps "[40,80,120]" \
	"$(jq -c '[.growing.collections[] | select(.lengths[0] == 40) | .lengths][0]' "$TMP/g3.json")"
check growth/two-dumps-none null "$(jq .growing "$TMP/two.json")"
# shellcheck disable=SC2086
check_rc growth/too-many 2 "$H" leaks -q $G $G $G

# ---- caveats (issue 38): what qualifies the verdict, in every format ----
# the library's caveat set (hd_leak_session_caveats), once only the
# report's HTML had it: two dumps are growth, uncertain matches counted,
# a dump against itself has nothing new
has_caveat() { jq --arg n "$1" '[.caveats[].name] | index($n) != null' "$2"; }
check caveats/two-dumps-json true "$(has_caveat two-dumps "$TMP/two.json")"
check caveats/three-dumps-json false "$(has_caveat two-dumps "$TMP/l.json")"
check caveats/uncertain-json 1 \
	"$(jq '[.caveats[] | select(.name == "uncertain" and .warning == false and (.text | test("^3,527 objects were judged old on an uncertain match")))] | length' "$TMP/l.json")"
check_grep caveats/uncertain-text '^caveat    3,527 objects were judged old on an uncertain match' "$TMP/l.txt"
check_grep caveats/uncertain-tsv '^caveat	uncertain	3,527 objects were judged old' "$TMP/l.tsv"
"$H" leaks -q -f tsv "$A" "$A" >"$TMP/self.tsv" 2>/dev/null
check_grep caveats/nothing-new-tsv '^caveat	nothing-new	no object of after' "$TMP/self.tsv"

# ---- every front end says the same verdict: serve, report ----
needs curl curl
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
serve_start serve 300 "$H" serve -q --no-cache "$B" "$A" "$L" || exit 1
curl -s "$BASE/api/leaks?token=$TOKEN" >"$TMP/api.json"
check serve/verdict-text "$text" "$(jq -r .verdict.text "$TMP/api.json")"
check serve/verdict-first '"suspect" 0' \
	"$(jq -r '"\"" + .verdict.first.kind + "\" " + (.verdict.first.index | tostring)' "$TMP/api.json")"
check serve/clusters "$(jq .clusters_total "$TMP/l.json")" "$(jq .clusters_total "$TMP/api.json")"
check serve/cluster-shape "$(jq .clusters[0].shape "$TMP/l.json")" "$(jq .clusters[0].shape "$TMP/api.json")"
check serve/suspect-kind holder "$(jq -r .suspects[0].kind "$TMP/api.json")"
# one path schema (issue 38): leaks -f json's suspect path has serve's
# "hops" (each node with its reference name) and "text", hop by hop
check serve/path-hops "$(jq -c .suspects[0].path.hops "$TMP/api.json")" "$(jq -c .suspects[0].path.hops "$TMP/l.json")"
check serve/path-text "$(jq -c .suspects[0].path.text "$TMP/api.json")" "$(jq -c .suspects[0].path.text "$TMP/l.json")"
check serve/path-objects-alias "$(jq -c .suspects[0].path.hops "$TMP/l.json")" "$(jq -c .suspects[0].path.objects "$TMP/l.json")"
check_rc report/exit 0 "$H" report -q -o "$TMP/r.html" "$B" "$A" "$L"
check_grep report/verdict "Verdict: $(printf '%s' "$text" | sed 's/[][\.*^$()+?{}|]/\\&/g' | sed 's/>/\&gt;/g')" "$TMP/r.html"
# the report over five dumps: the verdict of leaks over the same five
"$H" leaks -q -f json "$DATA/growth_1.json.gz" "$DATA/growth_2.json.gz" "$DATA/growth_3.json.gz" \
	"$DATA/growth_4.json.gz" "$DATA/growth_5.json.gz" >"$TMP/g5.json" 2>/dev/null
check_rc report/five-dumps 0 "$H" report -q -o "$TMP/g5.html" "$DATA/growth_1.json.gz" \
	"$DATA/growth_2.json.gz" "$DATA/growth_3.json.gz" "$DATA/growth_4.json.gz" "$DATA/growth_5.json.gz"
check report/five-dumps-verdict "Verdict: $(jq -r .verdict.text "$TMP/g5.json" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')." \
	"$(grep -o 'Verdict: [^<]*' "$TMP/g5.html")"
check report/five-dumps-steps "before after step 3 step 4 later" \
	"$(grep -o 'data-side="[^"]*"' "$TMP/g5.html" | sed 's/data-side="//; s/"$//' | tr '\n' ' ' | sed 's/ $//')"
# serve over four dumps: the verdict of leaks over the same four
G4="$DATA/growth_1.json.gz $DATA/growth_2.json.gz $DATA/growth_3.json.gz $DATA/growth_4.json.gz"
# shellcheck disable=SC2086 # the four dumps
"$H" leaks -q -f json $G4 >"$TMP/g4.json" 2>/dev/null
# shellcheck disable=SC2086
serve_start serve4 300 "$H" serve -q --no-cache $G4 || exit 1
curl -s "$BASE/api/leaks?token=$TOKEN" >"$TMP/api4.json"
check serve/four-dumps-verdict "$(jq -r .verdict.text "$TMP/g4.json")" "$(jq -r .verdict.text "$TMP/api4.json")"
curl -s "$BASE/api/overview?token=$TOKEN" >"$TMP/over4.json"
check serve/four-dumps-listed 4 "$(jq '.dumps | length' "$TMP/over4.json")"
