#!/bin/sh
# store_mem.sh - what a store-backed query costs in memory, and that its
# cheaper paths answer as the others do (issue 14):
#  - top and dominators give the same answer whether the dominator tree
#    is read from the store (index --dominators) or computed (the compact
#    Lengauer-Tarjan of lib/graph.c), on every fixture and a 300,000-long
#    chain;
#  - the store's validation with SSE2 and with the portable loops
#    (HEAPDUMP_SIMD=portable) opens, answers and refuses alike: every
#    fixture's store, and damaged ones whose damage lies in the vector
#    part of a column and in its scalar tail;
#  - top on the chain's store stays within the store's size plus 20%
#    plus what the program takes for a tiny store (the resident size
#    counts the store's mapped pages it touched).
. "$(dirname "$0")/../lib.sh"

HD=$HEAPDUMP
TOOLS="$TOP/$B/tests"
case $B in /*) TOOLS="$B/tests" ;; esac
SS="$TOOLS/store_sections"
TIME=/usr/bin/time
RUBY=${RUBY:-ruby}
[ -x "$TIME" ] || { notok needs-time "/usr/bin/time is missing: apt-get install time"; exit 1; }
needs "$RUBY" ruby
mkdir "$TMP/plain" "$TMP/tree"

# same NAME CMD...: CMD's stdout, stderr and exit in both directories
# (the tree's origin line and field left out) are the same bytes
same() {
	n=$1
	shift
	(cd "$TMP/plain" && { "$HD" "$@" s.hds 2>&1; echo "exit $?"; } |
		sed -e 's/^dominators  .*//' -e 's/"dominators":"[a-z]*",//' >o)
	(cd "$TMP/tree" && { "$HD" "$@" s.hds 2>&1; echo "exit $?"; } |
		sed -e 's/^dominators  .*//' -e 's/"dominators":"[a-z]*",//' >o)
	cmp -s "$TMP/plain/o" "$TMP/tree/o" || bad="$bad $n[$*]"
}

# ---- the tree computed equals the tree stored, on every fixture ----
runs=0 bad="" trees=0
for d in $(sweep_dumps); do
	b=$(basename "$d")
	"$HD" index -q -o "$TMP/plain/s.hds" "$d" 2>/dev/null || continue
	"$HD" index -q --dominators -o "$TMP/tree/s.hds" "$d" 2>/dev/null ||
		{ bad="$bad $b(index --dominators)"; continue; }
	"$HD" top -q -f json "$TMP/tree/s.hds" 2>/dev/null |
		grep -q '"dominators":"stored"' && trees=$((trees + 1))
	for opts in "top" "top -f json -n 0" "top --by class -n 0" \
		"top -f tsv --all" "top --skip-weak -f json"; do
		runs=$((runs + 1))
		# shellcheck disable=SC2086
		same "$b" $opts
	done
	runs=$((runs + 1))
	same "$b" dominators -n 5 --type STRING
done
check fixtures/tree-computed-equals-stored "" "$bad"
# (of every fixture about 5 runs and a stored tree read each)
swept=$(sweep_dumps | wc -l)
[ "$runs" -gt $((swept * 2)) ] && ok fixtures/runs ||
	notok fixtures/runs "only $runs runs for $swept fixtures"
[ "$trees" -gt $((swept * 2 / 5)) ] && ok fixtures/stored-trees-read ||
	notok fixtures/stored-trees-read "only $trees stores of $swept fixtures read their tree"

# ---- a 300,000-long chain: linear, no crash, the same tree ----
"$RUBY" "$TOP/tests/bench/gen_chain.rb" "$TMP/chain.json" 300000 >/dev/null ||
	notok chain/generate "gen_chain.rb failed"
"$HD" index -q -o "$TMP/plain/s.hds" "$TMP/chain.json"
"$HD" index -q --dominators -o "$TMP/tree/s.hds" "$TMP/chain.json"
bad=""
same chain top -f json -n 5
same chain top --by class
same chain dominators -f json --class Node -n 1
check chain/tree-computed-equals-stored "" "$bad"
# the head of the list retains the whole list: 300,000 Nodes and more
"$HD" top -q -f tsv -n 1 "$TMP/plain/s.hds" >"$TMP/o" 2>&1
check_grep chain/head-retains-all '^[0-9]+	[0-9]{6,}	' "$TMP/o"

# ---- memory: top computing the tree of 300,000 objects ----
# The fixed part: the program on a tiny store (libraries, stdio, the
# store's head). The store's pages count as they are touched.
"$HD" index -q -o "$TMP/tiny.hds" "$DATA/leak_before.json"
"$TIME" -f %M -o "$TMP/m0" "$HD" top -q "$TMP/tiny.hds" >/dev/null 2>&1
base=$(tail -1 "$TMP/m0")
size=$(wc -c <"$TMP/plain/s.hds")
# sanitizers read the store into memory (HD_NO_MMAP) and pad every
# allocation: the store counts whole, and its heap twice
if [ -n "${SAN_FLAGS:-}" ]; then
	limit=$((base + size * 25 / 10 / 1024))
else
	limit=$((base + size * 12 / 10 / 1024))
fi
"$TIME" -f %M -o "$TMP/m1" "$HD" top -q "$TMP/plain/s.hds" >/dev/null 2>&1
rss=$(tail -1 "$TMP/m1")
if [ "$rss" -le "$limit" ]; then ok memory/top-computed
else notok memory/top-computed "max RSS $rss KB over $limit KB (store $((size / 1024)) KB, fixed $base KB)"; fi
"$TIME" -f %M -o "$TMP/m1" "$HD" top -q "$TMP/tree/s.hds" >/dev/null 2>&1
rss=$(tail -1 "$TMP/m1")
size=$(wc -c <"$TMP/tree/s.hds")
if [ "$rss" -le "$((base + size * 12 / 10 / 1024))" ] || [ -n "${SAN_FLAGS:-}" ]
then ok memory/top-stored
else notok memory/top-stored "max RSS $rss KB, store $((size / 1024)) KB, fixed $base KB"; fi

# ---- SSE2 and portable validation: the same answers and refusals ----
bad=""
for d in $(sweep_dumps); do
	b=$(basename "$d")
	"$HD" index -q --dominators -o "$TMP/s.hds" "$d" 2>/dev/null || continue
	for c in "stats -f json" "top -f json" "query" ; do
		if [ "$c" = query ]; then
			set -- query -f tsv "$TMP/s.hds" \
				"select type, count(*), sum(memsize) from objects group by 1"
		else
			# shellcheck disable=SC2086
			set -- $c "$TMP/s.hds"
		fi
		{ "$HD" "$@" 2>&1; echo "exit $?"; } >"$TMP/v"
		{ HEAPDUMP_SIMD=portable "$HD" "$@" 2>&1; echo "exit $?"; } >"$TMP/p"
		cmp -s "$TMP/v" "$TMP/p" || bad="$bad $b[$c]"
	done
done
check simd/fixtures-same "" "$bad"

# damaged copies of one store: section ID's u32 entry K set to BYTES
"$HD" index -q --dominators -o "$TMP/good.hds" "$DATA/leak_after.json"
sec_field() {
	"$SS" list "$1" | awk -v id="$2" -v f="$3" '$1 == id { print $f }'
}
# damage NAME ID ENTRY-WIDTH K BYTES(printf octal escapes) PATTERN
damage() {
	off=$(sec_field "$TMP/good.hds" "$2" 3)
	len=$(sec_field "$TMP/good.hds" "$2" 4)
	case $4 in last) k=$((len / $3 - 1)) ;; mid) k=$((len / $3 / 2)) ;; *) k=$4 ;; esac
	cp "$TMP/good.hds" "$TMP/bad.hds"
	# shellcheck disable=SC2059
	printf "$5" | dd of="$TMP/bad.hds" bs=1 seek=$((off + k * $3)) conv=notrunc 2>/dev/null
	"$HD" stats -q "$TMP/bad.hds" >"$TMP/v" 2>&1
	rv=$?
	HEAPDUMP_SIMD=portable "$HD" stats -q "$TMP/bad.hds" >"$TMP/p" 2>&1
	rp=$?
	if [ $rv = 1 ] && [ $rp = 1 ] && cmp -s "$TMP/v" "$TMP/p" &&
		grep -qE -- "$6" "$TMP/v"; then ok "simd/damaged/$1"
	else notok "simd/damaged/$1" "exit $rv/$rp: $(head -c 200 "$TMP/v") / $(head -c 200 "$TMP/p")"; fi
}
# 5 type, 7 class, 9 memsize, 19 edge offset, 20 edge, 28 dominator,
# 29 retained count (man 5 heapdump-store)
for k in 0 mid last; do
	damage "type-$k" 5 1 $k '\377' 'store type section has an invalid value'
	damage "class-$k" 7 4 $k '\376\377\377\377' 'store class section points out of range'
	damage "memsize-$k" 9 4 $k '\377\377\377\377' 'store wide memsize section does not match its column'
	damage "edge-$k" 20 4 $k '\360\377\377\177' 'store edge section points out of range'
	damage "dominator-$k" 28 4 $k '\375\377\377\177' 'store dominator section is corrupt'
	damage "retained-$k" 29 4 $k '\377\377\377\177' 'store retained count section is corrupt'
done
for k in 1 mid; do
	damage "edge-offset-$k" 19 4 $k '\377\377\377\000' 'store edge offset section is not monotonic'
done
