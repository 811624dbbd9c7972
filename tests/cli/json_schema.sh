#!/bin/sh
# json_schema.sh - the one JSON schema of the leak (issue 38, man 5
# heapdump-json), pinned across its four writers on the same three dumps
# (data/dumps/leak_before, leak_after, leak_later):
#
#  - heapdump leaks -f json, serve's /api/leaks, the report's embedded
#    data (<script type="application/json" id="leak-data">) and the
#    gem's Leaks#as_json (the first Ruby of HD_RUBIES) give the same
#    verdict, totals, caveats, suspects and clusters, once normalised
#    by jq (serve's own node fields, path runs and notes, leaks' own
#    classes, sites and stacks and deprecated names left out);
#  - every key that heapdump-json(5) lists for a node, a hop, a path, a
#    suspect, a cluster, the totals, the verdict and a caveat appears in
#    that object in every writer's output (the keys written only when
#    they apply: in at least one), and no writer leaves out a key of an
#    object that another writes;
#  - the names: holders is a list of nodes, holder_count and root_count
#    the counts, held_by_old only as the deprecated alias;
#  - serve's paths (/api/leaks, /api/object, and over leak_ruby3.4, whose
#    path goes around the machine context and so has a note) are the
#    library's path: its keys first, in its order, then serve's own
#    (note, runs) only;
#  - the gem's Leaks::Suspect Structs have the schema's suspect members
#    (border the gem's own), with leaks -f json's values.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl

H=$HEAPDUMP
D1="$DATA/leak_before.json"
D2="$DATA/leak_after.json"
D3="$DATA/leak_later.json"
MAN=$TOP/man/heapdump-json.5
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# ---- the four writers ----
check_rc leaks/exit 0 "$H" leaks -q -f json "$D1" "$D2" "$D3"
cp "$TMP/out" "$TMP/leaks.json"

serve_start serve 300 "$H" serve -q --no-cache "$D1" "$D2" "$D3" || exit 1
curl -s "$BASE/api/leaks?token=$TOKEN" >"$TMP/api.json"
check serve/json true "$(jq -e 'type == "object"' "$TMP/api.json" 2>&1)"

check_rc report/exit 0 "$H" report -q -o "$TMP/r.html" "$D1" "$D2" "$D3"
check report/one-data-block 1 "$(grep -c '<script type="application/json" id="leak-data">' "$TMP/r.html")"
sed -n 's/.*<script type="application\/json" id="leak-data">\(.*\)<\/script>.*/\1/p' \
	"$TMP/r.html" >"$TMP/report.json"
check report/json true "$(jq -e 'type == "object"' "$TMP/report.json" 2>&1)"

R=$(command -v "${HD_RUBIES%% *}" 2>/dev/null || command -v ruby)
v=$("$R" -e 'print RUBY_VERSION')
case ${B:-build} in
/*) EXT=$B/ext-$v ;;
*) EXT=$TOP/${B:-build}/ext-$v ;;
esac
if [ ! -f "$EXT/heapdump_ext.so" ]; then
	notok ruby/gem "$EXT/heapdump_ext.so is missing: make ext RUBIES=$R"
else
	cat >"$TMP/as_json.rb" <<'RB'
require "json"
require "heapdump"
b, a, l = ARGV.map { |p| HeapDump.load(p) }
puts JSON.generate(b.leaks(a, l).as_json)
RB
	env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$EXT:$TOP/src/lib" "$R" \
		"$TMP/as_json.rb" "$D1" "$D2" "$D3" >"$TMP/ruby.json" 2>"$TMP/ruby.err"
	check ruby/json true "$(jq -e 'type == "object"' "$TMP/ruby.json" 2>&1)"
	# a global that grows, dumped by the gem, which names the root's
	# reference ("root_name":"$REGISTRY")
	cat >"$TMP/global.rb" <<'RB'
require "heapdump"
$REGISTRY = []
def dump(p) = HeapDump.dump(p, gc: true)
dump(ARGV[0])
40.times { |i| $REGISTRY << "x#{i}" * 50 }
dump(ARGV[1])
40.times { |i| $REGISTRY << "y#{i}" * 50 }
dump(ARGV[2])
RB
	if env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$EXT:$TOP/src/lib" "$R" "$TMP/global.rb" \
		"$TMP/g1.json" "$TMP/g2.json" "$TMP/g3.json" 2>"$TMP/global.err"; then
		"$H" leaks -q -f json "$TMP/g1.json" "$TMP/g2.json" "$TMP/g3.json" >"$TMP/x1.json" 2>/dev/null
	else
		notok ruby/global-dumps "$(head -c 300 "$TMP/global.err")"
	fi
fi
# the others from the fixtures: passed_over (leak_ruby3.4: a path that
# goes around a VM cache), name and inferred (named_ruby3.1_names)
for x in leak_ruby3.4:x2 named_ruby3.1_names:x3; do
	"$H" leaks -q -f json "$DATA/${x%:*}_before.json.gz" "$DATA/${x%:*}_after.json.gz" \
		"$DATA/${x%:*}_later.json.gz" >"$TMP/${x#*:}.json" 2>/dev/null
done

# ---- the same objects ----
# a node: the schema's fields only; a path: root, root_name,
# passed_over, hops, text; a suspect without leaks' classes, sites and stacks
# and the deprecated names; the described suspects only
NORM='
def node: if type == "object" then
	{address, type, class, memsize, file, line, method, name, inferred}
	| with_entries(select(.value != null)) else . end;
def path: if type == "object" then
	{root, root_name, passed_over, hops: (.hops | map(node)), text}
	| with_entries(select(.value != null)) else . end;
{verdict, totals, caveats,
 suspects: [.suspects[:.totals.shown][]
	| del(.classes, .sites, .stacks, .held_by_old, .held_by_roots)
	| .holder |= node | .first_border |= node | .holders |= map(node)
	| .path |= path],
 clusters_total,
 clusters: [.clusters[] | .path |= path]}'
for w in leaks api report ruby; do
	[ -f "$TMP/$w.json" ] || continue
	jq -S "$NORM" "$TMP/$w.json" >"$TMP/$w.norm" 2>"$TMP/$w.jqerr" ||
		notok "$w/normalise" "$(head -c 300 "$TMP/$w.jqerr")"
done
check leaks/has-a-suspect true "$(jq '.suspects | length > 0' "$TMP/leaks.norm")"
check leaks/has-a-cluster true "$(jq '.clusters | length > 0' "$TMP/leaks.norm")"
for w in api report ruby; do
	[ -f "$TMP/$w.norm" ] || continue
	for part in verdict totals caveats suspects clusters_total clusters; do
		check "$w/same-$part" "$(jq -c ".$part" "$TMP/leaks.norm")" \
			"$(jq -c ".$part" "$TMP/$w.norm")"
	done
done

# ---- the names ----
for w in leaks api report ruby; do
	[ -f "$TMP/$w.json" ] || continue
	check "$w/holders-is-a-list-of-nodes" true \
		"$(jq '.suspects[0].holders | type == "array" and all(.[]; has("address"))' "$TMP/$w.json")"
	check "$w/holder-count-counts" true \
		"$(jq '.suspects[0] | (.holder_count | type == "number") and (.root_count | type == "number")' "$TMP/$w.json")"
	check "$w/held-by-old-only-without-holder" true \
		"$(jq '[.suspects[] | select(.holder != null) | has("held_by_old")] | any | not' "$TMP/$w.json")"
done

# ---- serve's paths are the library's, then serve's own ----
# a path's keys in order, serve's own (note, runs) and the deprecated
# objects left out; serve's own must come after the schema's
PKEYS='def pkeys: keys_unsorted - ["note", "runs", "objects"];
def own_last: pkeys as $p | keys_unsorted[:($p | length)] == $p;'
check serve/suspect-paths-are-leaks-paths \
	"$(jq -c "$PKEYS"' [.suspects[:.totals.shown][] | .path | objects | pkeys]' "$TMP/leaks.json")" \
	"$(jq -c "$PKEYS"' [.suspects[:.totals.shown][] | .path | objects | pkeys]' "$TMP/api.json")"
check serve/own-keys-last true \
	"$(jq "$PKEYS"' [(.suspects[], .clusters[]) | .path | objects | own_last] | all' "$TMP/api.json")"
check serve/own-keys-only true \
	"$(jq '[(.suspects[], .clusters[]) | .path | objects | keys_unsorted - ["root", "root_name", "passed_over", "hops", "text", "note", "runs"]] | flatten | length == 0' "$TMP/api.json")"
a=$(jq -r '.suspects[0].first_border.address' "$TMP/leaks.json")
curl -s "$BASE/api/object?token=$TOKEN&address=$a" >"$TMP/obj.json"
check serve/object-path-schema true \
	"$(jq "$PKEYS"' .path | (pkeys[:2] == ["root", "root_name"] or pkeys[:1] == ["root"]) and own_last and has("hops") and has("text") and has("runs")' "$TMP/obj.json" 2>&1)"
# the path that goes around the machine context: passed_over and a note
P1="$DATA/leak_ruby3.4_before.json.gz"
P2="$DATA/leak_ruby3.4_after.json.gz"
P3="$DATA/leak_ruby3.4_later.json.gz"
"$H" leaks -q -f json "$P1" "$P2" "$P3" >"$TMP/leaks34.json" 2>/dev/null
if serve_start serve34 300 "$H" serve -q --no-cache "$P1" "$P2" "$P3"; then
	curl -s "$BASE/api/leaks?token=$TOKEN" >"$TMP/api34.json"
	check serve34/has-a-note true \
		"$(jq '[(.suspects[], .clusters[]) | .path | objects | has("note") and has("passed_over")] | any' "$TMP/api34.json")"
	check serve34/paths-are-leaks-paths \
		"$(jq -c "$PKEYS"' [(.suspects[:.totals.shown][], .clusters[]) | .path | objects | pkeys]' "$TMP/leaks34.json")" \
		"$(jq -c "$PKEYS"' [(.suspects[:.totals.shown][], .clusters[]) | .path | objects | pkeys]' "$TMP/api34.json")"
	check serve34/own-keys-last true \
		"$(jq "$PKEYS"' [(.suspects[], .clusters[]) | .path | objects | own_last] | all' "$TMP/api34.json")"
fi

# ---- the gem's Suspect Structs: the schema's members and values ----
# (stacks null here: these dumps have none; tests/ext/stacks.sh compares
# them on a dump that has)
if [ -f "$EXT/heapdump_ext.so" ]; then
	cat >"$TMP/structs.rb" <<'RB'
require "json"
require "heapdump"
b, a, l = ARGV.map { |p| HeapDump.load(p) }
hex = ->(o) { format("0x%x", o.address) }
out = b.leaks(a, l).shown.map do |s|
  s.to_h.reject { |k, _| k == :border }.transform_values do |v|
    case v
    when HeapDump::HeapObject then hex.(v)
    when HeapDump::Selection then v.map(&hex).sort
    when HeapDump::Path then v.objects.map(&hex)
    when Symbol then v.to_s
    when Float then format("%.4f", v).to_f
    else v
    end
  end
end
puts JSON.generate(out)
RB
	env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$EXT:$TOP/src/lib" "$R" \
		"$TMP/structs.rb" "$D1" "$D2" "$D3" >"$TMP/structs.json" 2>"$TMP/structs.err"
	check ruby/structs-run true "$(jq -e 'type == "array" and length > 0' "$TMP/structs.json" 2>&1)"
	check ruby/suspect-structs \
		"$(jq -S -c '[.suspects[:.totals.shown][] | del(.classes, .sites, .held_by_old, .held_by_roots)
			| .holder |= (if . then .address else . end) | .first_border |= .address
			| .holders |= (map(.address) | sort) | .path |= (if . then [.hops[].address] else . end)]' "$TMP/leaks.json")" \
		"$(jq -S -c . "$TMP/structs.json")"
fi

# ---- every documented key, in every writer's object ----
# the keys of each subsection of heapdump-json(5): ".Ss Node" then
# ".It Dq address"...
awk '/^\.Ss /{s=$2} /^\.Bl/{inl=1} /^\.El/{inl=0} inl && /^\.It Dq /{print s, $3}' \
	"$MAN" >"$TMP/keys"
check man/lists-keys true "$([ "$(wc -l <"$TMP/keys")" -gt 60 ] && echo true || echo false)"
sel() {
	case $1 in
	Node) echo '[.. | objects | select(has("address") and has("memsize"))]' ;;
	Hop) echo '[(.suspects[], .clusters[]) | .path | objects | .hops[]]' ;;
	Path) echo '[(.suspects[], .clusters[]) | .path | objects]' ;;
	Suspect) echo '[.suspects[]]' ;;
	Cluster) echo '[.clusters[]]' ;;
	Totals) echo '[.totals]' ;;
	Verdict) echo '[.verdict]' ;;
	Caveats) echo '[.caveats[]]' ;;
	*) echo '[]' ;;
	esac
}
# written only when they apply (heapdump-json(5) says when)
optional=" Node/file Node/line Node/method Hop/name Hop/inferred Path/root_name Path/passed_over "
while read -r sec key; do
	q=$(sel "$sec")
	[ "$q" = '[]' ] && { notok "man/$sec" "no object for section $sec"; continue; }
	seen=0 missing=""
	for w in leaks api report ruby; do
		[ -f "$TMP/$w.json" ] || continue
		n=$(jq --arg k "$key" "$q | map(select(has(\$k))) | length" "$TMP/$w.json")
		all=$(jq "$q | length" "$TMP/$w.json")
		[ "$n" -gt 0 ] && seen=1
		case $optional in *" $sec/$key "*) ;; *)
			[ "$all" -gt 0 ] && [ "$n" = "$all" ] || missing="$missing $w" ;;
		esac
	done
	for w in x1 x2 x3; do
		[ -f "$TMP/$w.json" ] || continue
		n=$(jq --arg k "$key" "$q | map(select(has(\$k))) | length" "$TMP/$w.json")
		[ "$n" -gt 0 ] && seen=1
	done
	case $optional in
	*" $sec/$key "*) check "keys/$sec/$key" 1 "$seen" ;;
	*) check "keys/$sec/$key" "" "${missing# }" ;;
	esac
done <"$TMP/keys"
# no writer leaves out what another writes (the union of the keys of
# suspects and clusters, less the front ends' own members)
for part in suspects clusters; do
	for w in api report ruby; do
		[ -f "$TMP/$w.json" ] || continue
		check "$w/$part-keys" \
			"$(jq -c "[.$part[] | keys[]] | unique - [\"classes\",\"sites\",\"stacks\",\"held_by_old\",\"held_by_roots\"]" "$TMP/leaks.json")" \
			"$(jq -c "[.$part[] | keys[]] | unique - [\"classes\",\"sites\",\"stacks\",\"held_by_old\",\"held_by_roots\"]" "$TMP/$w.json")"
	done
done
