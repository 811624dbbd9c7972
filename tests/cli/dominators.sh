#!/bin/sh
# heapdump top, dominators, leaks and index --dominators on the leak
# fixtures. The dominator tree is checked against networkx's
# immediate_dominators on the same dump (read with Python's json, one
# virtual root joined to every ROOT line's objects): every reached
# object's retained count and memsize must agree. leaks must name the
# leak by itself: LeakyCache's hash holding the cached requests.
. "$(dirname "$0")/../lib.sh"
# under ASan: what Graphviz's font stack keeps until exit (leaks --svg
# links libgvc) is not ours; the same suppressions as export.sh
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS
needs jq jq
needs python3 python3
python3 -c 'import networkx' 2>/dev/null || {
	notok needs-networkx "python3 cannot import networkx: apt-get install python3-networkx"
	exit 1
}

H=$HEAPDUMP
D="$DATA/leak_after.json"
[ -f "$D" ] || { notok fixtures "$D is missing"; exit 1; }

# ---- top: retained sizes against networkx ----

# (by default the allocation tracer and dump_all's own objects are not in
# the graph, by stats' rule; with --all they are)
check_rc top/json-exit 0 "$H" top -q -n 0 -f json "$D"
cp "$TMP/out" "$TMP/top.json"
check_rc top/json-all-exit 0 "$H" top -q -n 0 -f json --all "$D"
cp "$TMP/out" "$TMP/top-all.json"
cat >"$TMP/nx.py" <<'EOF'
import json, sys
import networkx as nx
dump, top, keep_all = sys.argv[1], sys.argv[2], sys.argv[3] == "all"
def dumper(r):
    f = r.get("file") or ""
    return (r.get("type") == "DATA" and
            r.get("struct") == "ObjectTracing/allocation_info_tracer") or \
        r.get("method") in ("dump_all", "_dump_all") or \
        f == "objspace.rb" or f.endswith("/objspace.rb")
g = nx.DiGraph()
mem = {}
refs = {}
roots = []
# the class edge (man 5 heapdump-store, CLASS REFERENCES): an instance
# references its class when that is a singleton or anonymous class or
# module
held = set()
klass = {}
for line in open(dump, encoding="utf-8", errors="surrogateescape"):
    r = json.loads(line)
    if r.get("type") == "ROOT":
        roots += r.get("references", [])
        continue
    a = r.get("address")
    if a is None or r.get("type") == "SHAPE":
        continue
    if r.get("type") in ("CLASS", "MODULE") and (
            r.get("singleton") or not r.get("name") or
            r["name"].startswith("#<")):
        held.add(a)
    if (not keep_all and dumper(r)):
        continue
    mem[a] = r.get("memsize", 0)
    refs[a] = r.get("references", [])
    if r.get("type") not in ("NONE", "IMEMO", "NODE", "ZOMBIE") and "class" in r:
        klass[a] = r["class"]
for a, c in klass.items():
    if c in held:
        refs[a] = refs[a] + [c]
g.add_node("ROOT")
for a in mem:
    g.add_node(a)
for a, rs in refs.items():
    for b in rs:
        if b in mem:
            g.add_edge(a, b)
for b in roots:
    if b in mem:
        g.add_edge("ROOT", b)
idom = nx.immediate_dominators(g, "ROOT")
# retained: sum over the dominator tree, children before parents
kids = {}
for v, p in idom.items():
    if v != p:
        kids.setdefault(p, []).append(v)
order, stack = [], ["ROOT"]
while stack:
    v = stack.pop()
    order.append(v)
    stack += kids.get(v, [])
cnt, msz = {}, {}
for v in reversed(order):
    cnt[v] = 1 + sum(cnt[k] for k in kids.get(v, []))
    msz[v] = (mem.get(v, 0)) + sum(msz[k] for k in kids.get(v, []))
got = json.load(open(top))
bad = 0
seen = 0
for o in got["objects"]:
    a = o["object"]["address"]
    seen += 1
    if cnt.get(a) != o["retained_count"] or msz.get(a) != o["retained_memsize"]:
        bad += 1
        if bad <= 3:
            print("mismatch", a, o["retained_count"], o["retained_memsize"],
                  cnt.get(a), msz.get(a), file=sys.stderr)
# (networkx 3.x leaves the start node out of idom, older ones map it to
# itself)
print(len([v for v in idom if v != "ROOT"]), got["reached"], seen, bad, msz["ROOT"], got["reached_memsize"])
EOF
for mode in default all; do
	t="$TMP/top.json" && [ $mode = all ] && t="$TMP/top-all.json"
	python3 "$TMP/nx.py" "$D" "$t" $mode >"$TMP/nx.out" 2>"$TMP/nx.err"
	read -r nx_reached hd_reached listed bad nx_mem hd_mem <"$TMP/nx.out"
	m=""
	[ $mode = all ] && m="-all"
	check top/reached-networkx$m "${nx_reached:-?}" "${hd_reached:-!}"
	check top/reached-memsize-networkx$m "${nx_mem:-?}" "${hd_mem:-!}"
	check top/listed-all$m "${hd_reached:-?}" "${listed:-!}"
	check top/retained-networkx$m 0 "${bad:-?}"
	[ "${bad:-1}" = 0 ] || sed 's/^/# /' "$TMP/nx.err" | head -5
done
hd_reached=$(jq .reached "$TMP/top.json")

# ranked by retained memsize
sorted=$(jq '[.objects[].retained_memsize] | . == (sort | reverse)' "$TMP/top.json")
check top/sorted true "$sorted"
check_rc top/text-exit 0 "$H" top -n 3 "$D"
check top/text-rows 3 "$(grep -c ' 0x' "$TMP/out")"
check_grep top/text-header '^reached +6,823 objects' "$TMP/out"
check_grep top/text-excluded '^excluded +8 objects, .*--all keeps them' "$TMP/out"
check_rc top/text-all-exit 0 "$H" top -n 3 --all "$D"
check_grep top/text-all-header '^reached +6,831 objects' "$TMP/out"

# --by class: MAT's histogram; instances add up to the reached objects
check_rc top/class-exit 0 "$H" top --by class -n 0 -f json "$D"
check top/class-objects "$hd_reached" "$(jq '[.classes[].objects] | add' "$TMP/out")"
# the class Request: 10 leaked + requests alive in after, none inside
# another Request, so its retained count is 6 per instance
jq -c '.classes[] | select(.class == "Request")' "$TMP/out" >"$TMP/req"
check top/class-request "true" \
	"$(jq '.retained_count == 6 * .objects and .objects >= 10' "$TMP/req")"
check_rc top/tsv-exit 0 "$H" top --by class -f tsv -n 4 "$D"
check top/tsv-lines 5 "$(wc -l <"$TMP/out" | tr -d ' ')"

# a partial dump reaches nothing, and says why
check_rc top/partial-exit 0 "$H" top -q "$DATA/ok_ruby3.1_since.json"
check_grep top/partial-says 'no object is reached from a GC root \(no ROOT lines' "$TMP/err"
check_grep top/partial-empty '^reached +0 objects' "$TMP/out"

# ---- index --dominators: the same answers, read from the store ----

check_rc index/dominators-exit 0 "$H" index -q --dominators -o "$TMP/a.hds" "$D"
check_rc index/plain-exit 0 "$H" index -q -o "$TMP/p.hds" "$D"
sa=$(wc -c <"$TMP/a.hds") sp=$(wc -c <"$TMP/p.hds")
nodes=$(jq -s '[.[] | select(.address and .type != "SHAPE")] | length' "$D")
# 4 sections: 24 bytes of info, two u32 and one u64 columns, each
# padded to 8 bytes, and 4 table entries of 24 bytes; then the children
# orders: nodes + 2 u32 row offsets and a u32 per reached node (those
# the tree reached but the virtual root), 2 more entries
TOOLS="$TOP/${B:-build}/tests"
case ${B:-build} in /*) TOOLS="$B/tests" ;; esac
kids=$("$TOOLS/store_sections" list "$TMP/a.hds" | awk '$1 == 37 { print $4 }')
check index/dominators-children-offsets "$((4 * (nodes + 2)))" \
	"$("$TOOLS/store_sections" list "$TMP/a.hds" | awk '$1 == 36 { print $4 }')"
check index/dominators-size \
	$((sp + 4 * 24 + 24 + 2 * ((4 * nodes + 7) / 8 * 8) + 8 * nodes + \
	   2 * 24 + (4 * (nodes + 2) + 7) / 8 * 8 + (kids + 7) / 8 * 8)) "$sa"
check index/dominators-children-reached 1 "$([ "$kids" -gt 0 ] && [ "$kids" -le $((4 * nodes)) ] && echo 1)"
check_rc top/store-exit 0 "$H" top -q -n 0 -f json "$TMP/a.hds"
check top/store-stored '"stored"' "$(jq .dominators "$TMP/out")"
check top/store-same "$(jq -c .objects "$TMP/top.json")" "$(jq -c .objects "$TMP/out")"
check_rc top/plain-store-exit 0 "$H" top -q -n 0 -f json "$TMP/p.hds"
check top/plain-store-computed '"computed"' "$(jq .dominators "$TMP/out")"
# a store with the tree still works for every other command
check_rc index/dominators-stats 0 "$H" stats "$TMP/a.hds"
check_rc index/skip-weak-alone 2 "$H" index --skip-weak -o "$TMP/x.hds" "$D"

# ---- dominators ----

check_rc dominators/exit 0 "$H" dominators -f json -n 0 "$D" --class Request
cp "$TMP/out" "$TMP/dom.json"
# every chain ends at its target, retained counts shrink down the chain
check dominators/ends-at-target 0 \
	"$(jq -s '[.[] | select(.reached) | select(.chain[-1].object.address != .target)] | length' "$TMP/dom.json")"
check dominators/shrinking 0 \
	"$(jq -s '[.[] | select(.reached) | .chain | [.[].retained_count] | select(. != (sort | reverse))] | length' "$TMP/dom.json")"
# the leaked requests are dominated by LeakyCache and its hash
jq -r '.leaked.objects[] | select(.[1] == "OBJECT") | .[0]' \
	"$DATA/leak_expected.json" >"$TMP/leaked-req"
check_rc dominators/leaked-exit 0 "$H" dominators -f json -n 0 "$D" \
	$(cat "$TMP/leaked-req")
check dominators/leaked-via-cache "$(wc -l <"$TMP/leaked-req" | tr -d ' ')" \
	"$(jq -s '[.[] | select([.chain[].object.class] | index("LeakyCache"))] | length' "$TMP/out")"
check_rc dominators/text-exit 0 "$H" dominators "$D" $(head -1 "$TMP/leaked-req")
check_grep dominators/text-cache 'LeakyCache .*retains' "$TMP/out"
check_rc dominators/partial 1 "$H" dominators "$DATA/ok_ruby3.1_since.json" --type STRING --max 1
check_grep dominators/partial-says 'no root reaches' "$TMP/err"
check_rc dominators/no-selection 2 "$H" dominators "$D"

# ---- leaks: names the leak by itself ----

L="$DATA/leak_before.json $DATA/leak_after.json $DATA/leak_later.json"
nleak=$(jq .leaked.count "$DATA/leak_expected.json")
# shellcheck disable=SC2086
check_rc leaks/exit 0 "$H" leaks -q -f json $L
cp "$TMP/out" "$TMP/leaks.json"
check leaks/leaked-count "$nleak" "$(jq .leaked.count "$TMP/leaks.json")"
check leaks/suspect-holder '"Hash"' "$(jq '.suspects[0].holder.class' "$TMP/leaks.json")"
check leaks/suspect-retains-all "$nleak" "$(jq '.suspects[0].retained_count' "$TMP/leaks.json")"
check leaks/suspect-share 1 "$(jq '.suspects[0].share' "$TMP/leaks.json")"
check leaks/suspect-border 10 "$(jq '.suspects[0].border_count' "$TMP/leaks.json")"
check leaks/suspect-path-cache true \
	"$(jq '[.suspects[0].path.hops[].class] | index("LeakyCache") != null' "$TMP/leaks.json")"
check leaks/suspect-path-ends-at-holder true \
	"$(jq '.suspects[0].path.hops[-1].address == .suspects[0].holder.address' "$TMP/leaks.json")"
check leaks/suspect-holds-requests '[{"class":"Request","count":10}]' \
	"$(jq -c '[.suspects[0].classes[] | {class, count}]' "$TMP/leaks.json")"
check leaks/suspect-site-request 10 \
	"$(jq '.suspects[0].sites[] | select(.class == "Request") | .count' "$TMP/leaks.json")"
# shellcheck disable=SC2086
check_rc leaks/text-exit 0 "$H" leaks $L
check_grep leaks/text-names-cache '^    0x[0-9a-f]+ LeakyCache' "$TMP/out"
check_grep leaks/text-suspect '^suspect 1: 0x[0-9a-f]+ Hash' "$TMP/out"
# Ruby 3.4 (wasm), gzipped
d=$DATA/leak_ruby3.4
check_rc leaks/ruby3.4-exit 0 "$H" leaks -q -f json "${d}_before.json.gz" \
	"${d}_after.json.gz" "${d}_later.json.gz"
check leaks/ruby3.4-names-cache true \
	"$(jq '[.suspects[0].path.hops[].class] | index("LeakyCache") != null' "$TMP/out")"
check leaks/ruby3.4-retains-all "$(jq .leaked.count "${d}_expected.json")" \
	"$(jq '.suspects[0].retained_count' "$TMP/out")"
# two dumps: the growth since BEFORE
check_rc leaks/two-exit 0 "$H" leaks -q -f json "$DATA/leak_before.json" "$D"
check leaks/two-has-suspect '"Hash"' "$(jq '.suspects[0].holder.class' "$TMP/out")"
# pictures through libgvc
# shellcheck disable=SC2086
check_rc leaks/svg-exit 0 "$H" leaks -q -n 1 --svg "$TMP/svg" $L
if [ -f "$TMP/svg/suspect-1.svg" ] &&
	python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == "svg"' \
		"$TMP/svg/suspect-1.svg" 2>/dev/null &&
	grep -q 'LeakyCache' "$TMP/svg/suspect-1.svg"; then
	ok leaks/svg-valid
else
	notok leaks/svg-valid "$TMP/svg/suspect-1.svg is missing, not SVG or does not show LeakyCache"
fi
check leaks/svg-no-temp "" "$(ls "$TMP/svg" | grep -v '^suspect-1\.svg$')"
: >"$TMP/file"
# shellcheck disable=SC2086
check_rc leaks/svg-not-dir 1 "$H" leaks -q --svg "$TMP/file" $L
check_rc leaks/one-dump 2 "$H" leaks "$D"
# shellcheck disable=SC2086
check_rc leaks/bad-format 2 "$H" leaks -f xml $L
check_rc leaks/missing-file 1 "$H" leaks "$TMP/nope.json" "$D"
