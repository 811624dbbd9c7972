#!/bin/sh
# leaks_trust.sh - a leak report must not credit holders that let go, nor
# compare dumps given in the wrong order or of two processes without a
# word (issue 11, items 1, 3, 19, 21).
#
#  - observer: data/dumps/leak_observer_* (data/gen/observer.rb): an event
#    bus whose procs close over every request (the leak) beside a ring of
#    the last 50 requests (the decoy). With LATER, leaks, diff -o
#    --with-paths and interface-with --later work on LATER's graph: the
#    ring, which holds none of AFTER's requests in LATER, is no suspect
#    and the bus has all of the leak.
#  - order: reversed dumps are refused (exit 2) unless --force; dumps of
#    two processes (few shared addresses, sidecar pids) are reported on
#    stderr; sidecar times going backwards are refused.
#  - --min-share folds the small groups into one line (text, JSON and
#    TSV agree); --skip-weak; -f tsv.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs gzip gzip

H=$HEAPDUMP
OB="$DATA/leak_observer_before.json.gz"
OA="$DATA/leak_observer_after.json.gz"
OL="$DATA/leak_observer_later.json.gz"
for f in "$OB" "$OA" "$OL"; do
	[ -f "$f" ] || { notok fixtures "no $f (data/gen/make_fixtures.sh --native)"; exit 1; }
done

# ---- item 1: the leak as LATER holds it ----

# phase A: 400 requests, 5 objects each (Request, 2 Strings, Proc, env)
check_rc observer/exit 0 "$H" leaks -q -f json -n 100 "$OB" "$OA" "$OL"
cp "$TMP/out" "$TMP/o.json"
check observer/leaked-count 2000 "$(jq .leaked.count "$TMP/o.json")"
# the bus holds (nearly) all of it: >= 95% (on AFTER's graph: 93.7%)
check observer/real-holder-share true "$(jq '.suspects[0].share >= 0.95' "$TMP/o.json")"
check observer/real-holder-path-bus true \
	"$(jq '[.suspects[0].path.hops[].class] | index("EventBus") != null' "$TMP/o.json")"
check observer/real-holder-holds-procs '["Proc"]' \
	"$(jq -c '[.suspects[0].classes[].class]' "$TMP/o.json")"
# the decoy is no suspect: no suspect's path goes through the ring (on
# AFTER's graph it was suspect 2, holding 50 requests, 6.3% of the leak)
check observer/decoy-not-suspect 0 \
	"$(jq '[.suspects[] | select([.path.hops[].class] | index("RecentRequests"))] | length' "$TMP/o.json")"
check observer/decoy-holds-no-request 0 \
	"$(jq '[.suspects[].classes[] | select(.class == "Request")] | length' "$TMP/o.json")"
# not even among the groups folded away
check_rc observer/all-exit 0 "$H" leaks -q -f json -n 100 --min-share 0 "$OB" "$OA" "$OL"
check observer/all-decoy-not-suspect 0 \
	"$(jq '[.suspects[] | select([.path.hops[].class] | index("RecentRequests"))] | length' "$TMP/out")"
# shares are of the leak as LATER has it: they never add up past 1
check observer/shares-sum-at-most-1 true \
	"$(jq '([.suspects[].share] | add) <= 1.0001' "$TMP/out")"
# the retained sizes are LATER's: the leak's memsize is the sum of the
# leaked objects' memsize in LATER
check_rc observer/text-exit 0 "$H" leaks -q "$OB" "$OA" "$OL"
check_grep observer/text-suspect-1 '^suspect 1: 0x[0-9a-f]+ Array' "$TMP/out"
if grep -q 'RecentRequests' "$TMP/out"; then
	notok observer/text-no-decoy "$(grep -m1 RecentRequests "$TMP/out")"
else ok observer/text-no-decoy; fi
# two dumps: AFTER's graph, where the ring does hold 50 new requests
check_rc observer/two-exit 0 "$H" leaks -q -f json -n 100 --min-share 0 "$OB" "$OA"
check observer/two-ring-suspect 1 \
	"$(jq '[.suspects[] | select([.path.hops[].class] | index("RecentRequests"))] | length' "$TMP/out")"

# diff -o with LATER: the records as in LATER (byte for byte)
check_rc observer/diff-o-exit 0 "$H" diff -q -o "$TMP/ret.json" "$OB" "$OA" "$OL"
check observer/diff-o-count 2000 "$(wc -l <"$TMP/ret.json" | tr -d ' ')"
gzip -dc "$OL" | sort >"$TMP/later.sorted"
check observer/diff-o-lines-of-later 0 \
	"$(sort "$TMP/ret.json" | comm -23 - "$TMP/later.sorted" | wc -l | tr -d ' ')"
# diff --with-paths with LATER: LATER's paths, which do not pass the ring
ring_class=$(gzip -dc "$OL" | jq -r 'select(.type == "CLASS" and .name == "RecentRequests") | .address')
check observer/ring-class-found 1 "$(printf '%s\n' "$ring_class" | grep -c '^0x')"
check_rc observer/with-paths-exit 0 "$H" diff -q --with-paths -o "$TMP/wp.json" "$OB" "$OA" "$OL"
check observer/with-paths-no-ring 0 \
	"$(jq -r --arg c "$ring_class" 'select(.class == $c) | .address' "$TMP/wp.json" | wc -l | tr -d ' ')"
bus_class=$(gzip -dc "$OL" | jq -r 'select(.type == "CLASS" and .name == "EventBus") | .address')
check observer/with-paths-bus 1 \
	"$(jq -r --arg c "$bus_class" 'select(.class == $c) | .address' "$TMP/wp.json" | wc -l | tr -d ' ')"

# interface-with --later: the border as LATER has it (procs only), not
# AFTER's (procs and the ring's 50 requests)
"$H" diff -q -o "$TMP/new.json" "$OB" "$OA" >/dev/null 2>&1
check_rc observer/iw-after-exit 0 "$H" interface-with -q --summary -f json -n 0 "$OA" "$TMP/new.json"
check observer/iw-after-ring-requests 50 \
	"$(jq '[.diff_border[] | select(.class == "Request")] | length' "$TMP/out")"
check_rc observer/iw-later-exit 0 "$H" interface-with -q --summary -f json -n 0 --later "$OL" "$OA" "$TMP/new.json"
check observer/iw-later-diff 2000 "$(jq .totals.diff "$TMP/out")"
check observer/iw-later-no-request 0 \
	"$(jq '[.diff_border[] | select(.class == "Request")] | length' "$TMP/out")"
check observer/iw-later-procs 400 \
	"$(jq '[.diff_border[] | select(.class == "Proc")] | length' "$TMP/out")"

# ---- item 3: order and identity ----

B="$DATA/leak_before.json" A="$DATA/leak_after.json" L="$DATA/leak_later.json"
check_rc order/leaks-reversed 2 "$H" leaks -q "$L" "$A" "$B"
check_grep order/leaks-reversed-says 'wrong order' "$TMP/err"
check_grep order/leaks-reversed-generation 'generation' "$TMP/err"
check_rc order/leaks-reversed-force 0 "$H" leaks -q --force "$L" "$A" "$B"
check_grep order/leaks-force-warns 'wrong order' "$TMP/err"
check_rc order/diff-reversed 2 "$H" diff -q "$A" "$B"
check_grep order/diff-reversed-says 'wrong order' "$TMP/err"
check_rc order/diff-reversed-force 0 "$H" diff -q --force "$A" "$B"
check_rc order/diff-middle-swapped 2 "$H" diff -q "$B" "$L" "$A"
"$H" diff -q -o "$TMP/leak_new.json" "$B" "$A" >/dev/null 2>&1
check_rc order/iw-later-reversed 2 "$H" interface-with -q --summary --later "$B" "$A" "$TMP/leak_new.json"
check_grep order/iw-later-reversed-says 'wrong order' "$TMP/err"
# the right order says nothing
check_rc order/right-order-exit 0 "$H" leaks -q "$B" "$A" "$L"
check order/right-order-quiet "" "$(cat "$TMP/err")"
check_rc order/same-dump 0 "$H" diff -q "$A" "$A"
check order/same-dump-quiet "" "$(cat "$TMP/err")"

# two processes: almost no address in common (two native runs)
check_rc order/two-processes-exit 0 "$H" diff -q "$DATA/ok_ruby3.1_untraced.json" "$A"
check_grep order/two-processes-says 'two different processes' "$TMP/err"
check_rc order/two-processes-leaks 0 "$H" leaks -q "$DATA/ok_ruby3.1_untraced.json" "$A"
check_grep order/two-processes-leaks-says 'two different processes' "$TMP/err"

# sidecars (the gem's DUMP.meta.json): pid and time
mkdir "$TMP/sc"
cp "$B" "$TMP/sc/b.json"
cp "$A" "$TMP/sc/a.json"
meta() { # meta FILE PID TIME
	printf '{"heapdump_sidecar":1,"pid":%s,"time":"%s","ruby_version":"3.1.2","rss_bytes":1000000}\n' \
		"$2" "$3" >"$1.meta.json"
}
meta "$TMP/sc/b.json" 4242 2026-11-24T10:00:00.000000Z
meta "$TMP/sc/a.json" 4343 2026-11-24T10:05:00.000000Z
check_rc sidecar/other-pid-exit 0 "$H" diff -q "$TMP/sc/b.json" "$TMP/sc/a.json"
check_grep sidecar/other-pid-says 'pid 4242.*pid 4343' "$TMP/err"
meta "$TMP/sc/a.json" 4242 2026-11-24T09:55:00.000000Z
check_rc sidecar/time-backwards 2 "$H" diff -q "$TMP/sc/b.json" "$TMP/sc/a.json"
check_grep sidecar/time-backwards-says 'wrong order.*10:00:00' "$TMP/err"
meta "$TMP/sc/a.json" 4242 2026-11-24T10:05:00.000000Z
check_rc sidecar/in-order 0 "$H" diff -q "$TMP/sc/b.json" "$TMP/sc/a.json"
check sidecar/in-order-quiet "" "$(cat "$TMP/err")"
# a store finds the sidecar of its source dump
"$H" index -q "$TMP/sc/b.json" -o "$TMP/sc/b.hds"
meta "$TMP/sc/a.json" 4242 2026-11-24T09:55:00.000000Z
check_rc sidecar/store-time-backwards 2 "$H" diff -q "$TMP/sc/b.hds" "$TMP/sc/a.json"

# ---- item 19: --min-share ----

# BEFORE: a root holding 48 old arrays. AFTER: one of them holds 100 new
# 1,000-byte strings, each of the 47 others one new 160-byte string: 47
# groups of 0.7% (under 1% each), 7.0% in all.
gen_fold() { # gen_fold after?
	awk -v after="$1" 'BEGIN {
		refs = ""
		for (i = 0; i < 48; i++) refs = refs (i ? ", " : "") sprintf("\"0x%x\"", 65536 + 64 * i)
		printf "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[%s]}\n", refs
		s = 1048576
		for (i = 0; i < 48; i++) {
			r = ""
			if (after && i == 0)
				for (k = 0; k < 100; k++) r = r (k ? ", " : "") sprintf("\"0x%x\"", s + 64 * k)
			if (after && i > 0) r = sprintf("\"0x%x\"", s + 64 * (100 + i))
			printf "{\"address\":\"0x%x\", \"type\":\"ARRAY\", \"references\":[%s], \"generation\":1, \"memsize\":40}\n", 65536 + 64 * i, r
		}
		if (after) {
			for (k = 0; k < 100; k++)
				printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"generation\":5, \"memsize\":1000}\n", s + 64 * k
			for (i = 1; i < 48; i++)
				printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"generation\":5, \"memsize\":160}\n", s + 64 * (100 + i)
		}
	}'
}
gen_fold 0 >"$TMP/fb.json"
gen_fold 1 >"$TMP/fa.json"
check_rc fold/text-exit 0 "$H" leaks -q "$TMP/fb.json" "$TMP/fa.json"
cp "$TMP/out" "$TMP/fold.txt"
check fold/text-one-suspect 1 "$(grep -c '^suspect ' "$TMP/fold.txt")"
check_grep fold/text-folded-line '^47 more groups under 1% each: 47 objects, .*7\.0% of the growth' "$TMP/fold.txt"
check_rc fold/json-exit 0 "$H" leaks -q -f json "$TMP/fb.json" "$TMP/fa.json"
check fold/json '1 48 47 47 7520 0.0699' \
	"$(jq -r '[(.suspects | length), .groups, .folded.groups, .folded.retained_count, .folded.retained_memsize, (.folded.share * 10000 | floor / 10000)] | map(tostring) | join(" ")' "$TMP/out")"
check_rc fold/tsv-exit 0 "$H" leaks -q -f tsv "$TMP/fb.json" "$TMP/fa.json"
check fold/tsv-suspects 1 "$(grep -c '^suspect	' "$TMP/out")"
check fold/tsv-folded '47	47	7520' "$(awk -F'\t' '$1 == "folded" { print $2 "\t" $3 "\t" $4 }' "$TMP/out")"
check fold/tsv-groups 48 "$(awk -F'\t' '$1 == "total" && $2 == "groups" { print $3 }' "$TMP/out")"
# --min-share 0: every group (with --top large enough), no folded line
check_rc fold/all-exit 0 "$H" leaks -q -f json -n 100 --min-share 0 "$TMP/fb.json" "$TMP/fa.json"
check fold/all-suspects 48 "$(jq '.suspects | length' "$TMP/out")"
check fold/all-folded 0 "$(jq '.folded.groups' "$TMP/out")"
check_rc fold/all-text 0 "$H" leaks -q -n 100 --min-share 0 "$TMP/fb.json" "$TMP/fa.json"
check fold/all-text-suspects 48 "$(grep -c '^suspect ' "$TMP/out")"
check fold/all-text-no-fold 0 "$(grep -c 'more groups under' "$TMP/out")"
check_rc fold/all-tsv 0 "$H" leaks -q -f tsv -n 100 --min-share 0 "$TMP/fb.json" "$TMP/fa.json"
check fold/all-tsv-suspects 48 "$(grep -c '^suspect	' "$TMP/out")"
# a share given as a percentage, with or without %
check_rc fold/pct-exit 0 "$H" leaks -q -f json --min-share 0.1% "$TMP/fb.json" "$TMP/fa.json"
check fold/pct-keeps-0.149 48 "$(jq '(.suspects | length) + .more' "$TMP/out")"
check_rc fold/bad-share 2 "$H" leaks -q --min-share 101 "$TMP/fb.json" "$TMP/fa.json"
check_rc fold/bad-share-word 2 "$H" leaks -q --min-share lots "$TMP/fb.json" "$TMP/fa.json"

# ---- item 21: --skip-weak, -f tsv ----

# AFTER: an old Array and an old WeakMap (DATA weakmap) both reference a
# new 100-byte String; the WeakMap alone references a new 1,000-byte one.
printf '%s\n' \
	'{"type":"ROOT", "root":"vm", "references":["0x1000", "0x2000"]}' \
	'{"address":"0x1000", "type":"ARRAY", "references":[], "generation":1, "memsize":40}' \
	'{"address":"0x2000", "type":"DATA", "struct":"weakmap", "references":[], "generation":1, "memsize":40}' \
	>"$TMP/wb.json"
printf '%s\n' \
	'{"type":"ROOT", "root":"vm", "references":["0x1000", "0x2000"]}' \
	'{"address":"0x1000", "type":"ARRAY", "references":["0x3000"], "generation":1, "memsize":40}' \
	'{"address":"0x2000", "type":"DATA", "struct":"weakmap", "references":["0x3000", "0x4000"], "generation":1, "memsize":40}' \
	'{"address":"0x3000", "type":"STRING", "generation":5, "memsize":100}' \
	'{"address":"0x4000", "type":"STRING", "generation":5, "memsize":1000}' \
	>"$TMP/wa.json"
check_rc weak/exit 0 "$H" leaks -q -f json --min-share 0 "$TMP/wb.json" "$TMP/wa.json"
check weak/weakmap-suspect '"0x2000"' "$(jq '.suspects[0].holder.address' "$TMP/out")"
check_rc weak/skip-exit 0 "$H" leaks -q -f json --min-share 0 --skip-weak "$TMP/wb.json" "$TMP/wa.json"
check weak/skip-array-holds '"0x1000" 1' \
	"$(jq -r '"\"" + .suspects[0].holder.address + "\" " + (.suspects | length | tostring)' "$TMP/out")"
check weak/skip-border 1 "$(jq .border "$TMP/out")"

# tsv: totals, then one line a suspect; agrees with JSON
check_rc tsv/exit 0 "$H" leaks -q -f tsv "$B" "$A" "$L"
cp "$TMP/out" "$TMP/l.tsv"
"$H" leaks -q -f json "$B" "$A" "$L" >"$TMP/l.json" 2>/dev/null
check tsv/leaked "$(jq .leaked.count "$TMP/l.json")" \
	"$(awk -F'\t' '$1 == "total" && $2 == "leaked" { print $3 }' "$TMP/l.tsv")"
check tsv/suspect-1 "$(jq -r '.suspects[0] | [.holder.address, .holder.class, .border_count, .retained_count, .retained_memsize] | map(tostring) | join(" ")' "$TMP/l.json")" \
	"$(awk -F'\t' '$1 == "suspect" && $2 == 1 { print $3, $4, $5, $6, $7 }' "$TMP/l.tsv")"
check tsv/path-cache 1 "$(awk -F'\t' '$1 == "suspect" && $2 == 1' "$TMP/l.tsv" | grep -c 'LeakyCache')"
check_rc tsv/bad-format 2 "$H" leaks -q -f xml "$B" "$A"
