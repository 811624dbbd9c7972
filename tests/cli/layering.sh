#!/bin/sh
# layering.sh - the library's structure rules that a compiler does not
# check: the store's reading side (store.o) never calls its building side
# (store_build.o); only store*.c touch struct hd_store's members (others
# attach sections with hd__store_attach); the graph algorithms and the
# allocation, bitmap and vector helpers exist once (graph.c, hd_int.h),
# and so do the WeakKeyMap test and the byte-count formatter.
. "$(dirname "$0")/../lib.sh"
needs nm binutils

L=$TOP/lib
O=$TOP/$B/lib
case $B in /*) O=$B/lib ;; esac

# defined DOTO / undefined DOTO: the global symbols of an object
defined() { nm -g --defined-only "$1" | awk '{ print $3 }' | sort -u; }
undefined() { nm -u "$1" | awk '{ print $2 }' | sort -u; }

defined "$O/store_build.o" >"$TMP/build.def"
undefined "$O/store.o" >"$TMP/store.undef"
check store/no-cycle "" "$(comm -12 "$TMP/build.def" "$TMP/store.undef" | tr '\n' ' ')"
# the other direction is the expected one
defined "$O/store.o" >"$TMP/store.def"
undefined "$O/store_build.o" >"$TMP/build.undef"
check store/build-uses-store yes \
	"$(comm -12 "$TMP/store.def" "$TMP/build.undef" | grep -qx hd__store_validate && echo yes)"

# members of struct hd_store (always an "s") written or read outside
# store*.c
members=$(grep -lE -- '(^|[^a-z_])s->(sec|len|own|own_len)\[|(^|[^a-z_])s->(map|buf)\b' "$L"/*.c "$L"/util/*.c |
	xargs -n1 basename | grep -v '^store' | tr '\n' ' ')
check store/members-private "" "$members"
check store/attach-used yes \
	"$(grep -q 'hd__store_attach(' "$L/dominators.c" && echo yes)"

# one set of array macros, one "none", one bitmap, one vector push
check graph/one-alloc-macros "" \
	"$(grep -lE '^#define (ALLOC|FREE|NONE)\b' "$L"/*.c "$L"/util/*.c | xargs -n1 basename 2>/dev/null | tr '\n' ' ')"
check graph/one-bitmap "" \
	"$(grep -lE 'static (inline )?(int|void) (bit|bit_get|get_bit|set_bit|bit_set)\(' "$L"/*.c "$L"/util/*.c | xargs -n1 basename 2>/dev/null | tr '\n' ' ')"
check graph/one-push "" \
	"$(grep -lE '^static int (push|push_u32|push_node|push_out)\(' "$L"/*.c "$L"/util/*.c | xargs -n1 basename 2>/dev/null | grep -v '^select' | tr '\n' ' ')"
# one SCC and one dominator algorithm, in graph.c
check graph/one-scc "graph.c" \
	"$(grep -lE 'lowlink|low\[[a-z]+\] == idx\[' "$L"/*.c "$L"/util/*.c | xargs -n1 basename | tr '\n' ' ' | sed 's/ $//')"
check graph/one-dominators "graph.c" \
	"$(grep -lE 'semi\[|intersect\(' "$L"/*.c "$L"/util/*.c | xargs -n1 basename | tr '\n' ' ' | sed 's/ $//')"
# one test of what a WeakKeyMap is (store_refnames.c's hd__wkmap, which
# the store's names, paths.c and leak_attr.c call), one formatter of
# byte counts (leaks.c's hd_bytes_text: its table of units)
check store/one-wkmap-test "store_refnames.c:1" \
	"$(grep -c '"weakkeymap"' "$L"/*.c "$L"/util/*.c | grep -v ':0$' | xargs -n1 basename | tr '\n' ' ' | sed 's/ $//')"
check text/one-bytes-text "leaks.c" \
	"$(grep -lE '"KB", *"MB"' "$L"/*.c "$L"/util/*.c | xargs -n1 basename | tr '\n' ' ' | sed 's/ $//')"

# ---- the layers: a file calls only files of its own layer or below ----
#
#   util -> read -> store -> select, stats -> graph -> out (-> cli)
#
# Every source of lib/ has one row here. A new file without one fails
# layers/known, naming it: add it to the layer whose files it calls and
# that calls it. Calls are read from the objects (nm): a global symbol a
# file uses and another defines.
cat >"$TMP/layers" <<'T'
util/alloc util
util/dynload util
util/error util
util/filemap util
util/hash util
util/intern util
util/json_out util
util/map util
util/outfile util
util/cachedir util
util/sort util
util/text util
util/thread util
scan read
simd read
gz read
reader read
pscan read
json_repair read
class_names read
msnap read
store store
store_check store
store_trust store
store_build store
store_write store
store_spill store
store_stats store
store_refnames store
store_stacks store
records store
nodes store
dumper store
select select
select_eval select
select_explain select
select_from select
select_regex select
text_search select
stats stats
stats_ns stats
stacks stats
strings stats
waste stats
graph graph
dominators graph
paths graph
pathfold graph
diff graph
order graph
growth graph
trend graph
process graph
interface graph
interface_report graph
leaks graph
leak_attr graph
clusters graph
mreport graph
memory graph
budget graph
domtree_children graph
views graph
leak_session graph
flame graph
flame_src graph
leak_json out
export out
subdump out
replace_class out
sql out
store_cache out
leak_keep out
redact out
T
rank() {
	case $1 in util) echo 0 ;; read) echo 1 ;; store) echo 2 ;;
	select | stats) echo 3 ;; graph) echo 4 ;; out) echo 5 ;; *) echo 9 ;; esac
}
: >"$TMP/ranked"
unknown=""
for c in "$L"/*.c "$L"/util/*.c; do
	f=${c#"$L"/}
	f=${f%.c}
	layer=$(awk -v f="$f" '$1 == f { print $2 }' "$TMP/layers")
	if [ -z "$layer" ]; then
		unknown="$unknown lib/$f.c"
		continue
	fi
	echo "$f $(rank "$layer") $layer" >>"$TMP/ranked"
done
check layers/known "" \
	"${unknown:+no layer in tests/cli/layering.sh's table for$unknown: add a row (util, read, store, select, stats, graph or out)}"

# FILE SYMBOL lines: what each file defines, and what it uses
: >"$TMP/defs"
: >"$TMP/uses"
while read -r f r layer; do
	[ -f "$O/$f.o" ] || continue
	defined "$O/$f.o" | sed "s|^|$f |" >>"$TMP/defs"
	undefined "$O/$f.o" | sed "s|^|$f |" >>"$TMP/uses"
done <"$TMP/ranked"
# CALLER CALLEE lines, then those against the order
awk 'FILENAME == ARGV[1] { def[$2] = $1; next }
	($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' \
	"$TMP/defs" "$TMP/uses" | sort -u >"$TMP/calls"
up=$(awk 'FILENAME == ARGV[1] { r[$1] = $2; l[$1] = $3; next }
	r[$1] < r[$2] { printf "%s (%s) calls %s (%s): %s; ", $1, l[$1], $2, l[$2], $3 }' \
	"$TMP/ranked" "$TMP/calls")
check layers/no-call-up "" "$up"
check layers/calls-read yes "$([ -s "$TMP/calls" ] && echo yes)"

# no two files call each other, directly or round a cycle (a file's
# cycle is one the files it reaches reach back): a depth-first search
# per file over the file graph
cycle=$(awk '{ e[$1] = e[$1] " " $2; f[$1] = 1; f[$2] = 1 }
	END {
		for (s in f) {
			delete seen; n = 0; st[++n] = s
			while (n) {
				v = st[n--]
				k = split(e[v], w, " ")
				for (i = 1; i <= k; i++) {
					if (w[i] == s) { print s; n = 0; break }
					if (!(w[i] in seen)) { seen[w[i]] = 1; st[++n] = w[i] }
				}
			}
		}
	}' "$TMP/calls" | sort | tr '\n' ' ')
check layers/no-cycle "" "$cycle"
