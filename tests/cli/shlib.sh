#!/bin/sh
# libheapdump.so: its soname, its exports (exactly the HD_API functions
# of lib/heapdump.h, nothing internal), and a program linked against it
# alone (not the static library) that runs.
. "$(dirname "$0")/../lib.sh"
needs nm binutils
needs readelf binutils
B=${B:-build}
case $B in /*) so=$B/libheapdump.so ;; *) so=$TOP/$B/libheapdump.so ;; esac
if [ ! -f "$so" ]; then
	notok built "$so is missing: make"
	exit 1
fi
check soname "libheapdump.so.0" \
	"$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"

# the header's HD_API functions: every "HD_API ... name(" of the header
# read as one line (an extraction of its own, not the Makefile's awk)
tr '\n' ' ' <"$TOP/lib/heapdump.h" | grep -o 'HD_API[^(;]*(' |
	sed 's/ *($//; s/.*[^A-Za-z0-9_]//' | grep '^hd_' | sort -u >"$TMP/header"
nm -D --defined-only "$so" | awk '{ print $NF }' | sed 's/@.*//' |
	sort -u >"$TMP/exported"
n=$(wc -l <"$TMP/header")
if [ "$n" -lt 100 ]; then
	notok header-names "only $n HD_API names found in heapdump.h"
else
	ok header-names
fi
if cmp -s "$TMP/header" "$TMP/exported"; then
	ok exports-are-the-api
else
	notok exports-are-the-api "$(diff "$TMP/header" "$TMP/exported" | grep '^[<>]' | head -5 | tr '\n' ' ')"
fi
check no-internal-export "" "$(grep -E '^hd__|^[^h]' "$TMP/exported" | head -3)"

# a tiny program linked against the shared library alone
mkdir -p "$TMP/lib"
cp "$so" "$TMP/lib/libheapdump.so.0"
ln -s libheapdump.so.0 "$TMP/lib/libheapdump.so"
cat >"$TMP/use.c" <<'C'
#include <heapdump.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	hd_store *s = NULL;
	hd_select *sel = NULL;
	hd_nodes set = { NULL, 0, 0 }, out = { NULL, 0, 0 };
	hd_error err;
	uint64_t unreached = 0;

	if (argc < 2 || hd_store_build(&s, argv[1], NULL, &err) ||
	    hd_select_new(&sel, &err) ||
	    hd_select_add(sel, "type", "STRING", &err) ||
	    hd_select_nodes(&set, NULL, sel, s, &err) ||
	    hd_paths_union(&out, &unreached, s, &set, 0, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("%s %u %lu\n", hd_version(), hd_store_node_count(s),
	       (unsigned long)(out.n >= set.n));
	hd_nodes_free(&out);
	hd_nodes_free(&set);
	hd_select_free(sel);
	hd_store_close(s);
	return 0;
}
C
if ${CC:-cc} -std=c99 ${SAN_FLAGS:-} -I"$TOP/lib" -o "$TMP/use" "$TMP/use.c" \
	-L"$TMP/lib" -Wl,-rpath,"$TMP/lib" -lheapdump 2>"$TMP/err"; then
	ok links-against-so
	check uses-the-so "libheapdump.so.0" \
		"$(readelf -d "$TMP/use" | sed -n 's/.*(NEEDED).*\[\(libheapdump[^]]*\)\]/\1/p')"
	out=$("$TMP/use" "$DATA/ok_ruby3.4_traced.json" 2>&1)
	want="$("$HEAPDUMP" version 2>/dev/null | awk '{ print $NF }')"
	case $out in
	"$want "[1-9]*" 1") ok program-runs ;;
	*) notok program-runs "got '$out', expected '$want N 1'" ;;
	esac
else
	notok links-against-so "$(head -c 300 "$TMP/err")"
fi

# an internal function is not there to link against
cat >"$TMP/internal.c" <<'C'
#include <stddef.h>
void *hd__malloc(size_t n);
int main(void) { return hd__malloc(1) == NULL; }
C
if ${CC:-cc} -std=c99 ${SAN_FLAGS:-} -o "$TMP/internal" "$TMP/internal.c" \
	-L"$TMP/lib" -lheapdump 2>"$TMP/err"; then
	notok internal-not-linkable "a program calling hd__malloc linked"
else
	check_grep internal-not-linkable "undefined reference to .hd__malloc" "$TMP/err"
fi
