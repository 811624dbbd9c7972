#!/bin/sh
# index_cache.sh - the caches the build reads through (class pointers,
# allocation sites, the strings of files, methods, imemo types and struct
# names: store_build.c) give the ids the tables would. A made dump with
# far more of each than the caches hold (3000 classes, 700 files, 900
# methods, 50 lines, 14 imemo types, 400 struct names, met in a random
# order), some written escaped so that two spellings are one string
# ("lib\/f7.rb" is "lib/f7.rb", "m\u0062" is "mb") and some holding a
# backslash ("s\\12"): what the store says, grouped by class, location,
# method and imemo type, is what the dump says (stats on the dump reads
# it without the store), with -j1 and -j2 (then byte for byte -j1's).
. "$(dirname "$0")/../lib.sh"

HD=$HEAPDUMP
unset HEAPDUMP_JOBS HEAPDUMP_SIMD HEAPDUMP_TIMING

awk 'BEGIN {
	srand(11)
	for (c = 0; c < 3000; c++)
		printf "{\"address\":\"0x%x\", \"type\":\"CLASS\", \"name\":\"C%d\", \"memsize\":480}\n", 65536 + c * 36864, c
	split("env ment iseq cref svar throw_data ifunc memo callinfo callcache constcache tmpbuf ast parser_strterm", im, " ")
	for (i = 0; i < 60000; i++) {
		a = 268435456 + i * 40
		c = int(rand() * 3000)
		if (rand() < 0.5)
			c = c % 37
		f = int(rand() * 700); m = int(rand() * 900); l = int(rand() * 50)
		fs = (f % 7 == 0) ? sprintf("lib\\/f%d.rb", f) : sprintf("lib/f%d.rb", f)
		ms = (m % 5 == 0) ? sprintf("m\\u0062%d", m) : sprintf("mb%d", m)
		if (i % 9 == 0)
			printf "{\"address\":\"0x%x\", \"type\":\"IMEMO\", \"imemo_type\":\"%s\", \"file\":\"%s\", \"line\":%d, \"method\":\"%s\", \"memsize\":40}\n", a, im[1 + int(rand() * 14)], fs, l, ms
		else if (i % 9 == 1)
			printf "{\"address\":\"0x%x\", \"type\":\"DATA\", \"class\":\"0x%x\", \"struct\":\"s%s%d\", \"memsize\":80}\n", a, 65536 + c * 36864, (i % 4 == 0) ? "\\\\" : "", int(rand() * 400)
		else
			printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x%x\", \"file\":\"%s\", \"line\":%d, \"method\":\"%s\", \"memsize\":%d}\n", a, 65536 + c * 36864, fs, l, ms, 40 + i % 3
	}
}' >"$TMP/d.json"

"$HD" index -q -j1 -o "$TMP/s1.hds" "$TMP/d.json" 2>"$TMP/e1"
check index/j1 "0 " "$? $(head -c 200 "$TMP/e1")"
"$HD" index -q -j2 -o "$TMP/s2.hds" "$TMP/d.json" 2>"$TMP/e2"
check index/j2-same-bytes "0 " "$? $(cmp "$TMP/s1.hds" "$TMP/s2.hds" 2>&1)"

# the dump must really have what the caches cannot all hold
"$HD" stats -q -j1 -b method -n 0 -f tsv "$TMP/d.json" >"$TMP/m"
check dump/methods-merged 900 "$(grep -cE '^method	[0-9]+	[0-9]+	mb[0-9]+$' "$TMP/m")"

for by in class location method imemo; do
	"$HD" stats -q -j1 -b $by -n 0 -f tsv "$TMP/d.json" >"$TMP/dump.$by"
	"$HD" stats -q -b $by -n 0 -f tsv "$TMP/s1.hds" >"$TMP/store.$by"
	if [ -s "$TMP/dump.$by" ] && cmp -s "$TMP/dump.$by" "$TMP/store.$by"; then
		ok "by-$by/store-is-dump"
	else
		notok "by-$by/store-is-dump" "$(diff "$TMP/dump.$by" "$TMP/store.$by" | head -c 300)"
	fi
done
