#!/bin/sh
# layering.sh - the library's structure rules that a compiler does not
# check: the store's reading side (store.o) never calls its building side
# (store_build.o); only store*.c touch struct hd_store's members (others
# attach sections with hd__store_attach); the graph algorithms and the
# allocation, bitmap and vector helpers exist once (graph.c, hd_int.h).
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
