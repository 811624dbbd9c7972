#!/bin/sh
# native.sh - the native MRI 3.3.10, 3.4.8 and 4.0.1 fixtures of data/dumps
# (data/gen/make_fixtures.sh --rubies: ObjectSpace.dump_all of
# data/gen/scenario.rb and data/gen/leak.rb under each Ruby): stats, index
# (stats from the store equal stats from the dump), diff and leaks on each
# version, and what 4.0 writes that earlier versions do not:
#
#  - IMEMO objects of imemo_type "fields" (the ivars of a class, or of an
#    object that is no T_OBJECT) carry the OWNING object as their class:
#    never counted as an instance of the owner's class, and named on paths
#    as "ivars of OWNER" (man 1 heapdump-path);
#  - flags with values (age, object_id): parsed, never a malformed line;
#  - flags.object_id: the first identity rule of diff (a set compacted
#    between the dumps: every leaked object moved);
#  - the global_symbols root, and the categories each version has.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs gzip gzip
needs ruby ruby

H=$HEAPDUMP
VERSIONS="3.3.10 3.4.8 4.0.1"
# where leak.rb makes the cache: the constant, or (HOLDER=ivar) the ivar
CACHE_LINE=$(grep -n '^    CACHE = {}' "$TOP/data/gen/leak.rb" | cut -d: -f1)
IVAR_LINE=$(grep -n '^    @cache = {}' "$TOP/data/gen/leak.rb" | cut -d: -f1)
for v in $VERSIONS; do
	for f in ok_ruby${v}_traced.json.gz ok_ruby${v}_untraced.json.gz \
		ok_ruby${v}_since.json.gz leak_ruby${v}_before.json.gz \
		leak_ruby${v}_after.json.gz leak_ruby${v}_later.json.gz \
		leak_ruby${v}_expected.json; do
		[ -f "$DATA/$f" ] || { notok fixtures "no data/dumps/$f (make fixtures-rubies)"; exit 1; }
	done
done

# count CLASS_NAME DUMP: instances of the class the dump names so, by an
# independent reading (Ruby's JSON): records whose class is the address
# of the CLASS record of that name, IMEMOs left out (or not, with ALL=1)
cat >"$TMP/count.rb" <<'EOF'
require "json"
require "zlib"
name, path, all = ARGV
text = path.end_with?(".gz") ? Zlib.gunzip(File.binread(path)) : File.binread(path)
recs = text.each_line.map { |l| JSON.parse(l) rescue nil }.compact
klass = recs.find { |r| %w[CLASS MODULE].include?(r["type"]) && r["name"] == name }
abort "no class #{name}" unless klass
puts recs.count { |r| r["class"] == klass["address"] && (all == "all" || r["type"] != "IMEMO") }
EOF
count() { ruby "$TMP/count.rb" "$@"; }

# stats_class NAME DUMP|STORE [--all]: the count stats --by class gives NAME
stats_class() {
	"$H" stats -q --format tsv --top 0 --by class ${3:-} "$2" 2>/dev/null |
		awk -F'\t' -v n="$1" '$1 == "class" && $4 == n { print $2 }'
}

for v in $VERSIONS; do
	T="$DATA/ok_ruby${v}_traced.json.gz"
	U="$DATA/ok_ruby${v}_untraced.json.gz"
	S="$DATA/ok_ruby${v}_since.json.gz"

	# ---- stats: what scenario.rb made ----
	for d in "$T" "$U" "$S"; do
		n=$(basename "$d" .json.gz)
		# 50 ListNodes, every 3rd of 30 Requests cached (0, 3, ... 27)
		check "$n/stats-listnode" 50 "$(stats_class ListNode "$d")"
		check "$n/stats-request" 10 "$(stats_class Request "$d")"
		check_rc "$n/strict-or-quote" 0 "$H" stats -q "$d"
	done
	for d in "$T" "$U"; do
		n=$(basename "$d" .json.gz)
		check "$n/stats-bag" 4 "$(stats_class Bag "$d")"
		check "$n/stats-chaotic" 13 "$(stats_class Chaotic "$d")"
		check "$n/stats-point-vs-ruby" "$(count Point "$d")" "$(stats_class Point "$d")"
	done
	# the untraced dump is valid JSON on every line (flags and all)
	check_rc "ok_ruby${v}_untraced/strict" 0 "$H" stats -q --strict "$U"
	# the traced one has exactly the raw-quote line of we"ird.rb
	"$H" stats -q --format json "$T" >"$TMP/t.json" 2>"$TMP/err"
	check "ok_ruby${v}_traced/one-repaired" 1 \
		"$(grep -c 'unescaped quote in a string (repaired)' "$TMP/err")"
	check "ok_ruby${v}_traced/ruby" "${v%.*}$( [ "${v%.*}" = 4.0 ] && echo ' or later')" \
		"$(jq -r .ruby "$TMP/t.json")"
	check "ok_ruby${v}_since/partial" 0 \
		"$("$H" stats -q --format json "$S" 2>/dev/null | jq .totals.root_categories)"

	# ---- index: the store says what the dump says ----
	for d in "$T" "$U" "$S"; do
		n=$(basename "$d" .json.gz)
		if "$H" index -q "$d" -o "$TMP/$n.hds" 2>"$TMP/err"; then
			for k in type class location imemo; do
				"$H" stats -q --all --format tsv --top 0 --by $k "$d" 2>/dev/null | sort >"$TMP/a"
				"$H" stats -q --all --format tsv --top 0 --by $k "$TMP/$n.hds" 2>/dev/null | sort >"$TMP/b"
				check "$n/store-by-$k" "" "$(diff "$TMP/a" "$TMP/b" | head -5)"
			done
		else
			notok "$n/index" "$(head -c 300 "$TMP/err")"
		fi
	done

	# ---- diff and leaks: leak.rb's three dumps ----
	L="$DATA/leak_ruby${v}"
	want=$(jq .leaked.count "${L}_expected.json")
	"$H" diff -q -f json "${L}_before.json.gz" "${L}_after.json.gz" \
		"${L}_later.json.gz" >"$TMP/d.json" 2>"$TMP/err"
	check "leak_ruby$v/diff-retained" "$want" "$(jq .retained.count "$TMP/d.json")"
	check "leak_ruby$v/diff-rules" '["generation","address+fingerprint"]' \
		"$(jq -c .rules "$TMP/d.json")"
	check "leak_ruby$v/diff-requests" 10 \
		"$(jq '[.rows[] | select(.class == "Request") | .count] | add' "$TMP/d.json")"
	# the objects written are the expected ones, address and generation
	"$H" diff -q -o "$TMP/d.ndjson" "${L}_before.json.gz" "${L}_after.json.gz" \
		"${L}_later.json.gz" 2>/dev/null >/dev/null
	check "leak_ruby$v/diff-o-expected" \
		"$(jq -c '[.leaked.objects[] | [.[0], .[2]]] | sort' "${L}_expected.json")" \
		"$(jq -sc '[.[] | [.address, .generation]] | sort' "$TMP/d.ndjson")"
	"$H" leaks -q -f json "${L}_before.json.gz" "${L}_after.json.gz" \
		"${L}_later.json.gz" >"$TMP/l.json" 2>"$TMP/err"
	check "leak_ruby$v/leaks-suspect" "HASH leak.rb:$CACHE_LINE 1" \
		"$(jq -r '.suspects[0] | "\(.holder.type) \(.holder.file):\(.holder.line) \(.share)"' "$TMP/l.json")"
	check "leak_ruby$v/leaks-retained" "$want" "$(jq '.suspects[0].retained_count' "$TMP/l.json")"
	check "leak_ruby$v/leaks-path" "LeakyCache Hash" \
		"$(jq -r '.suspects[0].path.hops[-2:] | map(.class) | join(" ")' "$TMP/l.json")"
done

# ---- root categories, as each version writes them ----
roots() { gzip -dc "$1" | grep '"type":"ROOT"' | sed 's/.*"root":"\([^"]*\)".*/\1/' | sort -u | tr '\n' ' '; }
check roots-3.3 "global_list global_tbl machine_context vm " "$(roots "$DATA/ok_ruby3.3.10_traced.json.gz")"
check roots-3.4 "global_tbl machine_context vm " "$(roots "$DATA/ok_ruby3.4.8_traced.json.gz")"
check roots-4.0 "global_symbols global_tbl machine_context vm " "$(roots "$DATA/ok_ruby4.0.1_traced.json.gz")"
for v in $VERSIONS; do
	d="$DATA/ok_ruby${v}_traced.json.gz"
	check "ok_ruby$v/root-categories" "$(roots "$d" | wc -w)" \
		"$("$H" stats -q --format json "$d" 2>/dev/null | jq .totals.root_categories)"
done
# an object global_symbols holds: roots-of writes that root
D40="$DATA/ok_ruby4.0.1_traced.json.gz"
gs=$(gzip -dc "$D40" | grep '"root":"global_symbols"' | sed 's/.*"references":\["\(0x[0-9a-f]*\)".*/\1/')
"$H" index -q "$D40" -o "$TMP/t40.hds" 2>/dev/null
"$H" roots-of -q "$TMP/t40.hds" "$gs" -o "$TMP/r.json" 2>/dev/null
check_grep root-global-symbols-roots-of '"root":"global_symbols"' "$TMP/r.json"

# ---- 4.0: IMEMO/fields carry their owner as class ----
# Point (a Struct class) has ivars of its own: its IMEMO/fields has Point
# as class, beside the one instance POINT
check fields/point-records-with-class 2 "$(count Point "$D40" all)"
check fields/point-instances 1 "$(stats_class Point "$D40")"
check fields/point-instances-store 1 "$(stats_class Point "$TMP/t40.hds")"
check fields/point-instances-all 1 "$(stats_class Point "$D40" --all)"
nf=$(gzip -dc "$D40" | grep -c '"imemo_type":"fields"')
check fields/counted-as-imemo "$nf" "$(stats_class IMEMO/fields "$D40" --all)"
"$H" top -q -f json --by class --top 0 "$TMP/t40.hds" >"$TMP/top.json" 2>/dev/null
check fields/top-point 1 "$(jq '[.classes[] | select(.class == "Point") | .objects] | add' "$TMP/top.json")"
# on a path, the hop owner -> fields -> value reads as the owner's ivars
enc=$(gzip -dc "$D40" | ruby -rjson -e '
  recs = STDIN.each_line.map { |l| JSON.parse(l) rescue nil }.compact
  by = recs.to_h { |r| [r["address"], r] }
  f = recs.find { |r| r["imemo_type"] == "fields" && by[r["class"]] && by[r["class"]]["type"] == "DATA" && r["references"] }
  puts f["references"][0]')
"$H" path -q "$TMP/t40.hds" "$enc" >"$TMP/p" 2>&1
check_grep fields/path-names-owner '^  0x[0-9a-f]+ ivars of Encoding \(IMEMO\)' "$TMP/p"
check fields/path-no-mystery "" "$(grep 'IMEMO/fields' "$TMP/p")"

# ---- 4.0: object_id first; the cache is a class ivar; everything moved ----
C="$DATA/leak_ruby4.0.1_compact"
for f in before after later; do
	[ -f "${C}_$f.json.gz" ] || { notok compact/fixtures "no ${C}_$f.json.gz"; exit 1; }
done
"$H" diff -q -f json "${C}_before.json.gz" "${C}_after.json.gz" "${C}_later.json.gz" \
	>"$TMP/d.json" 2>"$TMP/err"
check compact/rules-object-id-first object_id "$(jq -r '.rules[0]' "$TMP/d.json")"
check compact/object-id-not-skipped false "$(jq .object_id_skipped "$TMP/d.json")"
"$H" diff -q "${C}_before.json.gz" "${C}_after.json.gz" "${C}_later.json.gz" \
	>"$TMP/d.txt" 2>/dev/null
check_grep compact/rule-said '^rule +object_id, generation, address\+fingerprint' "$TMP/d.txt"
# every leaked object moved between AFTER and LATER; each is retained,
# found by its object_id
"$H" diff -q -o "$TMP/c.ndjson" "${C}_before.json.gz" "${C}_after.json.gz" \
	"${C}_later.json.gz" 2>/dev/null >/dev/null
check compact/retained-by-object-id \
	"$(jq -c '[.leaked.objects[] | .[3]] | sort' "${C}_expected.json")" \
	"$(jq -sc '[.[] | .flags.object_id // empty] | sort' "$TMP/c.ndjson")"
# as AFTER has them: new there (by object_id), each at another address
"$H" diff -q -o "$TMP/a.ndjson" "${C}_before.json.gz" "${C}_after.json.gz" 2>/dev/null >/dev/null
check compact/all-moved 60 "$(jq -s --slurpfile e "${C}_expected.json" '
	(map({key: (.flags.object_id // 0 | tostring), value: .address}) | from_entries) as $a |
	[$e[0].leaked.objects[] | select($a[.[3] | tostring] and $a[.[3] | tostring] != .[0])] | length' "$TMP/a.ndjson")"
# each of the 50 Strings and Hashes given an id has an IMEMO/fields of its
# own (its class is the String or Hash), retained with it: by class they
# are IMEMO/fields, and the Strings are 40, the Hashes 10
check compact/fields-rows 50 "$(jq '[.rows[] | select(.class == "IMEMO/fields") | .count] | add' "$TMP/d.json")"
check compact/string-rows 40 "$(jq '[.rows[] | select(.class == "String") | .count] | add' "$TMP/d.json")"
check compact/hash-rows 10 "$(jq '[.rows[] | select(.class == "Hash") | .count] | add' "$TMP/d.json")"
"$H" leaks -q -f json "${C}_before.json.gz" "${C}_after.json.gz" "${C}_later.json.gz" \
	>"$TMP/l.json" 2>/dev/null
check compact/leaks-suspect "HASH leak.rb:$IVAR_LINE 110" \
	"$(jq -r '.suspects[0] | "\(.holder.type) \(.holder.file):\(.holder.line) \(.retained_count)"' "$TMP/l.json")"
check compact/leaks-share-over-95 true "$(jq '.suspects[0].share > 0.95' "$TMP/l.json")"
check compact/leaks-path-owner "LeakyCache,ivars of LeakyCache,Hash" \
	"$(jq -r '.suspects[0].path.hops[-3:] | map(.class) | join(",")' "$TMP/l.json")"
"$H" leaks -q "${C}_before.json.gz" "${C}_after.json.gz" "${C}_later.json.gz" \
	>"$TMP/l.txt" 2>/dev/null
check_grep compact/leaks-text-owner '^    0x[0-9a-f]+ ivars of LeakyCache \(IMEMO\), leak.rb:'"$IVAR_LINE"'$' "$TMP/l.txt"

# --skip-weak does not walk what a WeakRef instance holds; the IMEMO/fields
# of the class WeakRef (its class-level ivars, here the WeakMap weakref.rb
# keeps) is no WeakRef instance, and what it holds stays reachable
W=$(gzip -dc "$D40" | grep '"type":"CLASS"' | grep '"name":"WeakRef"' | sed 's/.*"address":"\([^"]*\)".*/\1/')
wm=$(gzip -dc "$D40" | grep "\"class\":\"$W\"" | grep '"imemo_type":"fields"' | sed 's/.*"references":\["\([^"]*\)".*/\1/')
"$H" path -q --skip-weak "$TMP/t40.hds" "$wm" >"$TMP/p" 2>&1
check_grep fields/skip-weak-reaches-class-ivar "^  $wm ObjectSpace::WeakMap" "$TMP/p"
check_grep fields/skip-weak-through-owner "ivars of WeakRef \\(IMEMO\\)" "$TMP/p"
