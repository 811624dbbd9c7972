#!/bin/sh
# stats_lean.sh - the caches in front of stats' tables answer as the
# tables do: the class names of objects that need no late resolution
# (IMEMO, NODE, free slots) come from a small direct-mapped cache whose
# hits are checked; hundreds of distinct names (more than it has
# entries, so many collide there) each get their own row, counted as
# the dump says, in one thread and in two.
. "$(dirname "$0")/../lib.sh"
needs awk mawk

# 300 IMEMOs of 150 imemo types, 300 NODEs of 70 node types, 300 free
# slots whose class pointers differ, 300 hidden strings, interleaved
awk 'BEGIN {
	for (i = 1; i <= 300; i++) {
		printf "{\"address\":\"0x%x\", \"type\":\"IMEMO\", \"imemo_type\":\"t%d\", \"memsize\":40}\n", 4096 + i, (i * 7) % 150
		printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"memsize\":40}\n", 8192 + i
		printf "{\"address\":\"0x%x\", \"type\":\"NODE\", \"node_type\":\"n%d\", \"memsize\":%d}\n", 16384 + i, (i * 13) % 70, 40 + i % 3
		printf "{\"address\":\"0x%x\", \"type\":\"NONE\", \"class\":\"0x%x\", \"memsize\":40}\n", 32768 + i, 65536 + (i % 90) * 8
	}
}' >"$TMP/fixed.json"
# what the rows must be, from the dump itself
awk -F'"' '
	/"IMEMO"/ { n["IMEMO/" $12]++; m["IMEMO/" $12] += 40 }
	/"NODE"/ { s = $15; gsub(/[^0-9]/, "", s); n["NODE/" $12]++; m["NODE/" $12] += s }
	END {
		for (k in n) printf "class\t%d\t%d\t%s\n", n[k], m[k], k
		print "class\t300\t12000\t(free slot)"
		print "class\t300\t12000\t(hidden STRING)"
	}' "$TMP/fixed.json" | sort >"$TMP/want"
check want-rows 222 "$(wc -l <"$TMP/want" | tr -d ' ')"
for j in 1 2; do
	check_rc "fixed-names-j$j-exit" 0 "$HEAPDUMP" stats -q -j$j -b class -n 0 -f tsv "$TMP/fixed.json"
	grep '^class	' "$TMP/out" | sort >"$TMP/got"
	check "fixed-names-j$j-rows" "" "$(diff "$TMP/want" "$TMP/got" | head -5)"
done
