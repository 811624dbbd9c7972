#!/bin/sh
# serve_state.sh - heapdump serve's state (cli/serve/state.c): the start
# says what it leaves to the time after it (paths, retained by class,
# the objects' order, the string values); a tour of every API call answers the same
# bytes from a dump, from its store with the dominator tree, without
# it, from a store of the previous format's writer (a store written
# by this build without the optional sections), and from a store with
# the views (index --views: sections 43-48), whole, damaged or stale
# (refused, said, computed again); first calls that race for one lazy
# part answer as one call alone. Every group's page walks the objects'
# order (HEAPDUMP_SERVE_SELECT=never: mapped or computed, never a page
# selected before it is made), but in the tour that selects each
# (=always): the two compared.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl

HD=$HEAPDUMP
L="$DATA/named_ruby3.1_leak"
HEAPDUMP_SERVE_SELECT=never
export HEAPDUMP_SERVE_SELECT
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
start() {
	name=$1
	shift
	serve_start "$name" 600 "$HD" serve "$@" || exit 1
}
stop() { [ -n "$SPID" ] && kill "$SPID" && wait "$SPID" 2>/dev/null; SPID=""; }
get() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/$1"; }

# tour DIR [3] INPUT...: every API call of one dump (and of three, with
# 3) into DIR, one file per call, with the addresses the first answers
# give; the names of the inputs (which differ: a dump, a store) made
# input1... in the answers that echo them
tour() {
	d=$1
	mkdir -p "$d"
	get overview >"$d/overview"
	three=${2:-}
	shift 2
	k=0
	for f in "$@"; do
		k=$((k + 1))
		sed -i "s|$f|input$k|g" "$d/overview"
	done
	for by in type class file location gem generation imemo; do
		get "stats?by=$by&limit=1000" >"$d/stats-$by"
		get "stats?by=$by&sort=key&order=asc&filter=e" >"$d/stats-$by-e"
	done
	get "stats?by=class&sort=retained" >"$d/stats-retained"
	cls=$(jq -r '.rows[0].key' "$d/stats-class" | jq -Rr @uri)
	get "objects?by=class&key=$cls&limit=20" >"$d/objects-class"
	get "objects?by=class&key=$cls&offset=20&limit=20" >"$d/objects-class-2"
	get "objects?by=type&key=STRING&limit=50" >"$d/objects-type"
	loc=$(jq -r '.rows[0].key' "$d/stats-location" | jq -Rr @uri)
	get "objects?by=location&key=$loc" >"$d/objects-location"
	gem=$(jq -r '.rows[0].key' "$d/stats-gem" | jq -Rr @uri)
	get "objects?by=gem&key=$gem" >"$d/objects-gem"
	get "domtree?limit=100" >"$d/domtree"
	top=$(jq -r '.children[0].address' "$d/domtree")
	get "domtree?node=$top" >"$d/domtree-top"
	get "object?address=$top" >"$d/object-top"
	get "search?q=e&limit=1000" >"$d/search-e"
	get "search?q=$top" >"$d/search-address"
	get "search?q=leak&kind=string" >"$d/search-string"
	get "treemap?min_share=0&depth=6" >"$d/treemap"
	if [ "$three" = 3 ]; then
		get "diff?limit=1000" >"$d/diff"
		get "leaks?limit=1000" >"$d/leaks"
		k=0
		for f in "$@"; do
			k=$((k + 1))
			sed -i "s|$f|input$k|g" "$d/diff" "$d/leaks"
		done
	fi
}

# same NAME A B: every file of the tours A and B byte for byte
same() {
	n=0 bad=""
	for f in "$2"/*; do
		n=$((n + 1))
		cmp -s "$f" "$3/$(basename "$f")" || bad="$bad $(basename "$f")"
	done
	check "$1/calls" "$(ls "$2" | wc -l)" "$(ls "$3" | wc -l)"
	check "$1/same-bytes" "" "$bad"
	[ "$n" -ge 25 ] || notok "$1/tour" "only $n answers"
}

"$HD" index -q --dominators -o "$TMP/dom.hds" "$L"_later.json.gz
"$HD" index -q -o "$TMP/plain.hds" "$L"_later.json.gz

# ---- from the dump (indexed in memory): the reference tour ----
start dump --no-cache "$L"_later.json.gz
check_grep dump/says-lazy "ready in [0-9.]+ s .*paths, retained by class, the objects' order and string values follow while serving" "$TMP/dump.err"
tour "$TMP/t-dump" 1 "$L"_later.json.gz
check dump/answers-nonempty 0 "$(find "$TMP/t-dump" -empty | wc -l)"
check dump/search-found-strings 1 "$(jq '.strings.matched > 0' "$TMP/t-dump/search-string" | grep -c true)"
stop

# ---- from the stores ----
start dom "$TMP/dom.hds"
tour "$TMP/t-dom" 1 "$TMP/dom.hds"
stop
same dom "$TMP/t-dump" "$TMP/t-dom"
start plain "$TMP/plain.hds"
tour "$TMP/t-plain" 1 "$TMP/plain.hds"
stop
same plain "$TMP/t-dump" "$TMP/t-plain"

# ---- the children orders kept in the store (sections 36, 37) ----
TOOLS="$TOP/${B:-build}/tests"
case ${B:-build} in /*) TOOLS="$B/tests" ;; esac
SS="$TOOLS/store_sections"
KIDS_OFF=36 KIDS=37
# sect STORE ID: "offset size" of section ID
sect() { "$SS" list "$1" | awk -v id="$2" '$1 == id { print $3, $4 }'; }
check sections/written "2" "$("$SS" list "$TMP/dom.hds" | awk '$1 == 36 || $1 == 37' | wc -l)"
check sections/not-without-tree "0" "$("$SS" list "$TMP/plain.hds" | awk '$1 == 36 || $1 == 37' | wc -l)"
# the previous release's --dominators store: these two left out (on
# the 4 M-object bench dump, byte for byte the file main's build wrote)
"$SS" strip "$TMP/dom.hds" $KIDS_OFF "$TMP/o1.hds" &&
	"$SS" strip "$TMP/o1.hds" $KIDS "$TMP/old.hds" || notok old/strip "store_sections failed"
start old "$TMP/old.hds"
tour "$TMP/t-old" 1 "$TMP/old.hds"
stop
same old "$TMP/t-dump" "$TMP/t-old"
check old/quiet 0 "$(grep -c 'sorted again\|damaged' "$TMP/old.err")"
# damaged: two children of the virtual root's row swapped (each still
# in its row, out of order), then a child listed twice: refused, said,
# sorted again, the same answers
set -- $(sect "$TMP/dom.hds" $KIDS)
koff=$1
cp "$TMP/dom.hds" "$TMP/swap.hds"
# oct FILE AT N: the N bytes at AT as printf's octal escapes (dash's
# printf knows no \x)
oct() { od -An -to1 -v -j "$2" -N "$3" "$1" | tr -s ' \n' '  ' | sed 's/^ *//; s/ *$//; s/ /\\/g; s/^/\\/'; }
a=$(oct "$TMP/dom.hds" "$koff" 4)
b=$(oct "$TMP/dom.hds" $((koff + 4)) 4)
printf "$b$a" | dd of="$TMP/swap.hds" bs=1 seek="$koff" conv=notrunc 2>/dev/null
check swap/changed 1 "$(cmp -s "$TMP/dom.hds" "$TMP/swap.hds" || echo 1)"
cp "$TMP/dom.hds" "$TMP/twice.hds"
printf "$a" | dd of="$TMP/twice.hds" bs=1 seek=$((koff + 4)) conv=notrunc 2>/dev/null
for dmg in swap twice; do
	start "$dmg" "$TMP/$dmg.hds"
	check_grep "$dmg/refused" "dominator children section does not match its dominator tree: sorted again" "$TMP/$dmg.err"
	tour "$TMP/t-$dmg" 1 "$TMP/$dmg.hds"
	stop
	same "$dmg" "$TMP/t-dump" "$TMP/t-$dmg"
done
# truncated: the offsets end short of the children: the store refused
# as it is given, and a cached store indexed again
set -- $(sect "$TMP/dom.hds" $KIDS_OFF)
cp "$TMP/dom.hds" "$TMP/short.hds"
printf '\001\000\000\000' | dd of="$TMP/short.hds" bs=1 seek=$(($1 + $2 - 4)) conv=notrunc 2>/dev/null
"$HD" serve "$TMP/short.hds" 2>"$TMP/short.err" >/dev/null
check short/exit 1 "$?"
check_grep short/says "dominator children section is the wrong size" "$TMP/short.err"
mkdir "$TMP/c"
cp "$L"_later.json.gz "$TMP/c/later.json.gz"
start cached "$TMP/c/later.json.gz"
stop
check cached/written 2 "$("$SS" list "$TMP/c/later.json.gz.hds" | awk '$1 == 36 || $1 == 37' | wc -l)"
set -- $(sect "$TMP/c/later.json.gz.hds" $KIDS_OFF)
printf '\001\000\000\000' | dd of="$TMP/c/later.json.gz.hds" bs=1 seek=$(($1 + $2 - 4)) conv=notrunc 2>/dev/null
start recached "$TMP/c/later.json.gz"
check_grep recached/says-damaged "later.json.gz.hds was damaged" "$TMP/recached.err"
tour "$TMP/t-recached" 1 "$TMP/c/later.json.gz"
stop
same recached "$TMP/t-dump" "$TMP/t-recached"
check recached/rewritten 2 "$("$SS" list "$TMP/c/later.json.gz.hds" | awk '$1 == 36 || $1 == 37' | wc -l)"

# ---- the views kept in the store (sections 43 to 48) ----
"$HD" index -q --dominators --views -o "$TMP/views.hds" "$L"_later.json.gz ||
	notok views/index "index --views failed"
"$HD" index -q --views -o "$TMP/views-plain.hds" "$L"_later.json.gz ||
	notok views/index-plain "index --views failed"
views_in() { "$SS" list "$1" | awk '$1 >= 43 && $1 <= 50 { printf "%s ", $1 }'; }
check views/written "43 44 45 46 47 48 " "$(views_in "$TMP/views.hds")"
check views/no-classes-nor-order-without-tree "43 44 45 46 " "$(views_in "$TMP/views-plain.hds")"
check views/none-by-default "" "$(views_in "$TMP/dom.hds")"
check views/optional-flag 6 "$("$SS" list "$TMP/views.hds" | awk '$1 >= 43 && $1 <= 48 && $2 == 1' | wc -l)"
# from standard input: the string values kept as the dump is read, the
# same views as from the file (nothing read back)
gzip -dc "$L"_later.json.gz | "$HD" index -q --views -o "$TMP/views-stdin.hds" - 2>"$TMP/stdin.err"
check views/stdin 0 "$?"
check views/stdin-written "43 44 45 46 " "$(views_in "$TMP/views-stdin.hds")"
sec_sum() {
	"$SS" list "$1" | awk -v id="$2" '$1 == id { print $3, $4 }' |
		{ read -r off size; tail -c +$((off + 1)) "$1" | head -c "$size" | cksum; }
}
for id in 43 44 45 46; do
	check views/stdin-same-$id "$(sec_sum "$TMP/views-plain.hds" $id)" "$(sec_sum "$TMP/views-stdin.hds" $id)"
done
HEAPDUMP_TIMING=1
export HEAPDUMP_TIMING
start views "$TMP/views.hds"
unset HEAPDUMP_TIMING
check_grep views/says-kept "ready in [0-9.]+ s .*the group stats, retained by class, the objects' order and string values from the store; paths follow while serving" "$TMP/views.err"
tour "$TMP/t-views" 1 "$TMP/views.hds"
stop
check_grep views/order-mapped "objects' order \\(kept\\)" "$TMP/views.err"
same views "$TMP/t-dump" "$TMP/t-views"
check views/quiet 0 "$(grep -c 'computed again' "$TMP/views.err")"
# the string values come from the store: its dump gone, search finds
# the same strings
mkdir "$TMP/gone"
cp "$L"_later.json.gz "$TMP/gone/d.json.gz"
"$HD" index -q --views -o "$TMP/gone.hds" "$TMP/gone/d.json.gz"
rm "$TMP/gone/d.json.gz"
start gone "$TMP/gone.hds"
get "search?q=leak&kind=string" >"$TMP/gone-search"
stop
check views/strings-without-the-dump "$(cat "$TMP/t-dump/search-string")" "$(cat "$TMP/gone-search")"
start views-plain "$TMP/views-plain.hds"
check_grep views-plain/says "the group stats and string values from the store; paths, retained by class and the objects' order follow" "$TMP/views-plain.err"
tour "$TMP/t-views-plain" 1 "$TMP/views-plain.hds"
stop
same views-plain "$TMP/t-dump" "$TMP/t-views-plain"
# the previous release's --views store: the objects' order (48) left out
"$SS" strip "$TMP/views.hds" 48 "$TMP/views-old.hds" || notok views-old/strip "store_sections failed"
check views-old/stripped "43 44 45 46 47 " "$(views_in "$TMP/views-old.hds")"
start views-old "$TMP/views-old.hds"
check_grep views-old/says "retained by class and string values from the store; paths and the objects' order follow while serving" "$TMP/views-old.err"
tour "$TMP/t-views-old" 1 "$TMP/views-old.hds"
stop
same views-old "$TMP/t-dump" "$TMP/t-views-old"
check views-old/quiet 0 "$(grep -c 'computed again' "$TMP/views-old.err")"
# put STORE ID AT BYTES: printf-escaped bytes at byte AT of section ID
put() {
	set -- "$1" "$(sect "$1" "$2" | cut -d' ' -f1)" "$3" "$4"
	printf "$4" | dd of="$1" bs=1 seek=$(($2 + $3)) conv=notrunc 2>/dev/null
}
u64_2='\002\000\000\000\000\000\000\000'
# damaged or stale, one case a view: refused with what is wrong, said,
# computed again, and every answer the same
cp "$TMP/views.hds" "$TMP/v-lc.hds"     # a lowercased byte changed
set -- $(sect "$TMP/views.hds" 45)
put "$TMP/v-lc.hds" 45 $(($2 / 2)) '\001'
cp "$TMP/views.hds" "$TMP/v-svstale.hds" # a later layout
put "$TMP/v-svstale.hds" 43 0 "$u64_2"
cp "$TMP/views.hds" "$TMP/v-rows.hds"   # the group rows miscounted
put "$TMP/v-rows.hds" 46 24 '\377'
cp "$TMP/views.hds" "$TMP/v-gstale.hds"
put "$TMP/v-gstale.hds" 46 0 "$u64_2"
cp "$TMP/views.hds" "$TMP/v-tree.hds"   # made for another tree
put "$TMP/v-tree.hds" 47 40 '\377'
cp "$TMP/views.hds" "$TMP/v-name.hds"   # a name out of bounds
put "$TMP/v-name.hds" 47 88 '\377\377\377\377'
# the objects' order (48): a later layout; made for another tree; the
# first two objects swapped; an object out of range; one too few
cp "$TMP/views.hds" "$TMP/v-ostale.hds"
put "$TMP/v-ostale.hds" 48 0 "$u64_2"
cp "$TMP/views.hds" "$TMP/v-otree.hds"
put "$TMP/v-otree.hds" 48 32 '\377'
set -- $(sect "$TMP/views.hds" 48)
cp "$TMP/views.hds" "$TMP/v-oswap.hds"
put "$TMP/v-oswap.hds" 48 48 "$(oct "$TMP/views.hds" $(($1 + 52)) 4)$(oct "$TMP/views.hds" $(($1 + 48)) 4)"
cp "$TMP/views.hds" "$TMP/v-orange.hds"
put "$TMP/v-orange.hds" 48 $(($2 - 4)) '\377\377\377\377'
cp "$TMP/views.hds" "$TMP/v-ocount.hds"
put "$TMP/v-ocount.hds" 48 16 "$(awk -v v=$(( ($2 - 48) / 4 - 1 )) 'BEGIN { for (i = 0; i < 8; i++) { printf "\\%03o", v % 256; v = int(v / 256) } }')"
for c in "lc:string value view is damaged (the lowercased text differs)" \
	"svstale:string value view is stale (layout 2; this heapdump reads 1)" \
	"rows:group stats view is damaged (the wrong size)" \
	"gstale:group stats view is stale (layout 2; this heapdump reads 1)" \
	"tree:retained by class view is stale (made for another dominator tree)" \
	"name:retained by class view is damaged (a row is invalid)" \
	"ostale:objects' order view is stale (layout 2; this heapdump reads 1)" \
	"otree:objects' order view is stale (made for another dominator tree)" \
	"oswap:objects' order view is damaged (objects are out of order)" \
	"orange:objects' order view is damaged (a node is out of range)" \
	"ocount:objects' order view is damaged (the wrong size)"; do
	v=${c%%:*}
	check "v-$v/changed" 1 "$(cmp -s "$TMP/views.hds" "$TMP/v-$v.hds" || echo 1)"
	start "v-$v" "$TMP/v-$v.hds"
	tour "$TMP/t-v-$v" 1 "$TMP/v-$v.hds"
	stop
	check "v-$v/refused" 1 "$(grep -cF "store ${c#*:}: computed again" "$TMP/v-$v.err")"
	same "v-$v" "$TMP/t-dump" "$TMP/t-v-$v"
done
check cached/views-written "43 44 45 46 47 48 " "$(views_in "$TMP/c/later.json.gz.hds")"

# ---- three dumps ----
start three --no-cache "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz
tour "$TMP/t-three" 3 "$L"_before.json.gz "$L"_after.json.gz "$L"_later.json.gz
stop
"$HD" index -q -o "$TMP/before.hds" "$L"_before.json.gz
"$HD" index -q -o "$TMP/after.hds" "$L"_after.json.gz
start three-stores "$TMP/before.hds" "$TMP/after.hds" "$TMP/plain.hds"
tour "$TMP/t-three-stores" 3 "$TMP/before.hds" "$TMP/after.hds" "$TMP/plain.hds"
stop
same three "$TMP/t-three" "$TMP/t-three-stores"
check three/leaks-found 1 "$(jq '.suspects | length > 0' "$TMP/t-three/leaks" | grep -c true)"

# ---- a group's page selected before the objects' order is made: the
# same objects in the same order as the walk of the order ----
HEAPDUMP_SERVE_SELECT=always
start select "$TMP/dom.hds"
HEAPDUMP_SERVE_SELECT=never
tour "$TMP/t-select" 1 "$TMP/dom.hds"
stop
same select "$TMP/t-dump" "$TMP/t-select"
check select/objects-nonempty 1 "$(jq '.objects | length > 20' "$TMP/t-select/objects-type" | grep -c true)"

# ---- first calls racing for the lazy parts: as one call alone ----
start race "$TMP/dom.hds"
cls=$(jq -r '.rows[0].key' "$TMP/t-dump/stats-class" | jq -Rr @uri)
cpids=""
for i in 1 2 3 4; do
	get "objects?by=class&key=$cls&limit=20" >"$TMP/race-o$i" &
	cpids="$cpids $!"
	get "search?q=leak&kind=string" >"$TMP/race-s$i" &
	cpids="$cpids $!"
done
for p in $cpids; do wait "$p"; done
bad=0
for i in 1 2 3 4; do
	cmp -s "$TMP/race-o$i" "$TMP/t-dump/objects-class" || bad=$((bad + 1))
	cmp -s "$TMP/race-s$i" "$TMP/t-dump/search-string" || bad=$((bad + 1))
done
check race/same-answers 0 "$bad"
stop

exit 0
