#!/bin/sh
# clusters.sh - leaks clusters its suspects by the shape of their
# retention paths (issue 18, item 5).
#
#  - scenario: data/dumps/leak_clusters_* (data/gen/clusters.rb): three
#    caches of one class, each in a Service of an Array constant, leak
#    150 entries each in phase A (3 holders, one shape), and a global
#    audit Array leaks 250 records (1 holder, another shape). The audit
#    log is the biggest suspect, the three caches together the biggest
#    cluster. An independent Python count over the three dumps (the
#    objects of AFTER still in LATER and not in BEFORE, by address and
#    generation; their holders are the old objects that reference them)
#    and the script's own record (leak_clusters_expected.json) give the
#    clusters, their holders, counts and memsizes; text, JSON and TSV
#    agree with them.
#  - --top 1 shows one cluster and says how many more there are.
#  - a partial dump (no ROOT lines): the suspects no root reaches are one
#    cluster without a path, and say so.
#  - a deep chain (a real Ruby process: an old linked list of 20,000
#    nodes, each given one new object): 20,000 suspects of 20,000
#    different shapes, clustered in near-linear time.
#  - reference names: the same dumps with ref_names added (::SERVICES,
#    [0] [1] [2], @cache, @entries) give the shape with names, the array
#    index as [*] (one cluster still); one Service holding its cache as
#    @other splits the caches into two clusters.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs gzip gzip
needs python3 python3

H=$HEAPDUMP
CB="$DATA/leak_clusters_before.json.gz"
CA="$DATA/leak_clusters_after.json.gz"
CL="$DATA/leak_clusters_later.json.gz"
CE="$DATA/leak_clusters_expected.json"
for f in "$CB" "$CA" "$CL" "$CE"; do
	[ -f "$f" ] || { notok fixtures "no $f (data/gen/make_fixtures.sh --native)"; exit 1; }
done

# ---- the independent answer ----

# For each cluster of the script's record: the leaked objects allocated
# on its lines (count, memsize) and their old holders (addresses, class
# and line), one JSON line a cluster; then {"leaked": N}.
python3 - "$CB" "$CA" "$CL" "$CE" >"$TMP/py.jsonl" <<'EOF'
import gzip, json, sys

def load(path):
    objs = {}
    with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if "address" in r and r.get("type") not in ("ROOT", "SHAPE"):
                objs.setdefault(int(r["address"], 16), r)
    return objs

before, after, later = (load(p) for p in sys.argv[1:4])
expected = json.load(open(sys.argv[4]))

def key(a, r):
    return (a, r.get("generation"))

old = {key(a, r) for a, r in before.items()}
in_after = {key(a, r) for a, r in after.items()}
leaked = {a for a, r in later.items() if key(a, r) in in_after and key(a, r) not in old}
for c in expected["clusters"]:
    lines = set(c["lines"])
    mine = {a for a in leaked if later[a].get("line") in lines
            and later[a].get("file", "").endswith("clusters.rb")}
    holders = set()
    for a, r in later.items():
        if a in leaked:
            continue
        if any(int(x, 16) in mine for x in r.get("references", [])):
            holders.add(a)
    print(json.dumps({
        "count": len(mine),
        "memsize": sum(later[a].get("memsize", 0) for a in mine),
        "holders": sorted("0x%x" % a for a in holders),
        "holder_types": sorted({later[a]["type"] for a in holders}),
        "expected_objects": c["objects"],
        "expected_holders": c["holders"],
    }))
print(json.dumps({"leaked": len(leaked)}))
EOF
py1=$(sed -n 1p "$TMP/py.jsonl")
py2=$(sed -n 2p "$TMP/py.jsonl")
pyleaked=$(sed -n 3p "$TMP/py.jsonl" | jq .leaked)
# the script's record and the dumps agree, or nothing below means much
check independent/caches-objects "$(echo "$py1" | jq .expected_objects)" "$(echo "$py1" | jq .count)"
check independent/caches-holders "$(echo "$py1" | jq .expected_holders)" "$(echo "$py1" | jq '.holders | length')"
check independent/caches-holders-are-hashes '["HASH"]' "$(echo "$py1" | jq -c .holder_types)"
check independent/audit-objects "$(echo "$py2" | jq .expected_objects)" "$(echo "$py2" | jq .count)"
check independent/audit-holders "$(echo "$py2" | jq .expected_holders)" "$(echo "$py2" | jq '.holders | length')"
check independent/audit-holder-is-array '["ARRAY"]' "$(echo "$py2" | jq -c .holder_types)"
check independent/nothing-else-leaked "$pyleaked" \
	"$(($(echo "$py1" | jq .count) + $(echo "$py2" | jq .count)))"

# ---- JSON ----

check_rc json/exit 0 "$H" leaks -q -f json "$CB" "$CA" "$CL"
cp "$TMP/out" "$TMP/c.json"
check json/leaked "$pyleaked" "$(jq .leaked.count "$TMP/c.json")"
check json/clusters-total 2 "$(jq .clusters_total "$TMP/c.json")"
check json/clusters-listed 2 "$(jq '.clusters | length' "$TMP/c.json")"
# suspects rank the audit log first, clusters the three caches
check json/biggest-suspect-is-audit "$(echo "$py2" | jq -c .holders)" \
	"$(jq -c '[.suspects[0].holder.address]' "$TMP/c.json")"
check json/cluster1-suspects 3 "$(jq '.clusters[0].suspects' "$TMP/c.json")"
check json/cluster1-members "$(echo "$py1" | jq -c .holders)" \
	"$(jq -c '.clusters[0].members | sort' "$TMP/c.json")"
check json/cluster1-ranks '[2,3,4]' "$(jq -c '.clusters[0].suspect_ranks' "$TMP/c.json")"
check json/cluster1-border 450 "$(jq '.clusters[0].border_count' "$TMP/c.json")"
check json/cluster1-retained-count "$(echo "$py1" | jq .count)" \
	"$(jq '.clusters[0].retained_count' "$TMP/c.json")"
check json/cluster1-retained-memsize "$(echo "$py1" | jq .memsize)" \
	"$(jq '.clusters[0].retained_memsize' "$TMP/c.json")"
check json/cluster1-shape "vm -> Object -> Array -> Service -> LeakyCache -> Hash" \
	"$(jq -r '.clusters[0].shape' "$TMP/c.json")"
check json/cluster1-path-is-suspect2s \
	"$(jq -c '[.suspects[1].path.hops[].address]' "$TMP/c.json")" \
	"$(jq -c '[.clusters[0].path.objects[].address]' "$TMP/c.json")"
check json/cluster1-path-classes '["Object","Array","Service","LeakyCache","Hash"]' \
	"$(jq -c '[.clusters[0].path.objects[].class]' "$TMP/c.json")"
check json/cluster2-suspects 1 "$(jq '.clusters[1].suspects' "$TMP/c.json")"
check json/cluster2-members "$(echo "$py2" | jq -c .holders)" \
	"$(jq -c '.clusters[1].members' "$TMP/c.json")"
check json/cluster2-retained-count "$(echo "$py2" | jq .count)" \
	"$(jq '.clusters[1].retained_count' "$TMP/c.json")"
check json/cluster2-retained-memsize "$(echo "$py2" | jq .memsize)" \
	"$(jq '.clusters[1].retained_memsize' "$TMP/c.json")"
check json/cluster2-shape "global_tbl -> Array" "$(jq -r '.clusters[1].shape' "$TMP/c.json")"
check json/shares-add-up true \
	"$(jq '(.clusters | map(.share) | add) > 0.999 and (.clusters | map(.share) | add) < 1.001' "$TMP/c.json")"
check json/members-are-suspects true \
	"$(jq '([.clusters[].suspects] | add) == .groups' "$TMP/c.json")"

# ---- text and TSV say the same ----

check_rc text/exit 0 "$H" leaks -q "$CB" "$CA" "$CL"
cp "$TMP/out" "$TMP/c.txt"
check_grep text/summary '^clusters +4 suspect\(s\) in 2 cluster\(s\)' "$TMP/c.txt"
check_grep text/cluster1 "^cluster 1: 3 suspects that retain $(echo "$py1" | jq .count) objects" "$TMP/c.txt"
check_grep text/cluster1-ranks '^  suspects 2, 3, 4$' "$TMP/c.txt"
check_grep text/cluster1-shape '^  shape vm -> Object -> Array -> Service -> LeakyCache -> Hash$' "$TMP/c.txt"
check_grep text/cluster2 "^cluster 2: 1 suspect that retains $(echo "$py2" | jq .count) objects" "$TMP/c.txt"
check text/cluster1-path-ends-at-a-cache Hash \
	"$(sed -n '/^cluster 1:/,/^$/p' "$TMP/c.txt" | tail -n 2 | head -n 1 | sed 's/^ *0x[0-9a-f]* \([A-Za-z]*\).*/\1/')"

check_rc tsv/exit 0 "$H" leaks -q -f tsv "$CB" "$CA" "$CL"
check tsv/clusters "$(printf 'cluster\t1\t3\t2,3,4\t450\t%s\t%s\nvm -> Object -> Array -> Service -> LeakyCache -> Hash' \
	"$(echo "$py1" | jq .count)" "$(echo "$py1" | jq .memsize)")" \
	"$(grep '^cluster	1' "$TMP/out" | cut -f1-7; grep '^cluster	1' "$TMP/out" | cut -f9)"
check tsv/total "$(printf 'total\tclusters\t2')" "$(grep '^total	clusters' "$TMP/out")"

# ---- --top 1 ----

check_rc top1/exit 0 "$H" leaks -q -n 1 "$CB" "$CA" "$CL"
check top1/one-cluster 1 "$(grep -c '^cluster ' "$TMP/out")"
check_grep top1/says-more '^\(1 more clusters: --top N shows more\)$' "$TMP/out"
check_rc top1-json/exit 0 "$H" leaks -q -n 1 -f json "$CB" "$CA" "$CL"
check top1-json/total-and-listed "2 1" "$(jq -r '"\(.clusters_total) \(.clusters | length)"' "$TMP/out")"

# ---- a partial dump: no root, no shape ----

for f in before after later; do
	gzip -dc "$DATA/leak_clusters_$f.json.gz" | grep -v '"type":"ROOT"' >"$TMP/p_$f.json"
done
check_rc partial/exit 0 "$H" leaks -q -f json "$TMP/p_before.json" "$TMP/p_after.json" "$TMP/p_later.json"
check partial/one-unreached-cluster '1 4 false null null' \
	"$(jq -r '"\(.clusters_total) \(.clusters[0].suspects) \(.clusters[0].path != null) \(.clusters[0].shape) \(.clusters[0].path)"' "$TMP/out")"
check_rc partial-text/exit 0 "$H" leaks -q "$TMP/p_before.json" "$TMP/p_after.json" "$TMP/p_later.json"
check_grep partial-text/says-no-root '^  no GC root reaches them \(a partial dump\?\)$' "$TMP/out"

# ---- a deep chain: 20,000 suspects, each of its own shape ----

RUBY=${RUBY:-/usr/bin/ruby}
[ -x "$RUBY" ] || { notok deep/ruby "no $RUBY: apt-get install ruby"; exit 1; }
cat >"$TMP/chain.rb" <<'EOF'
require "objspace"
Node = Struct.new(:next_node, :payload)
N = 20_000
head = Node.new(nil, nil)
tail = head
(N - 1).times { tail = tail.next_node = Node.new(nil, nil) }
HEAD = head
out = ARGV[0]
GC.start
File.open("#{out}/before.json", "w") { |f| ObjectSpace.dump_all(output: f) }
n = HEAD
while n
  n.payload = "new #{n.object_id}" + ("p" * 30)
  n = n.next_node
end
GC.start
File.open("#{out}/after.json", "w") { |f| ObjectSpace.dump_all(output: f) }
EOF
env -i PATH="$PATH" HOME="$TMP" "$RUBY" --disable-gems "$TMP/chain.rb" "$TMP"
start=$(date +%s)
check_rc deep/exit 0 "$H" leaks -q -f json --min-share 0 "$TMP/before.json" "$TMP/after.json"
secs=$(($(date +%s) - start))
cp "$TMP/out" "$TMP/deep.json"
# every new String hangs off its own Node: one suspect and one shape each
# (beside a few of the process's own new objects)
check deep/suspects "20000 to 20050" \
	"$(jq -r 'if .groups >= 20000 and .groups <= 20050 then "20000 to 20050" else .groups end' "$TMP/deep.json")"
check deep/clusters "20000 to suspects" \
	"$(jq -r 'if .clusters_total >= 20000 and .clusters_total <= .groups then "20000 to suspects" else .clusters_total end' "$TMP/deep.json")"
echo "# deep chain: leaks in $secs s" >&2
check deep/fast "under 30 s" "$([ "$secs" -lt 30 ] && echo "under 30 s" || echo "$secs s")"
# the first shown cluster's shape ends where its path does, at a Node
check deep/shape-matches-path true \
	"$(jq '.clusters[0] | (.shape | split(" -> ") | length) == (.path.objects | length) + 1' "$TMP/deep.json")"

# ---- reference names are part of the shape ----

# The three dumps with ref_names added (man 5 heapdump-dump) as the gem's
# dumper writes them: Object ::SERVICES, the Array's elements [0] [1] [2],
# each Service's @cache, each LeakyCache's @entries. With SPLIT, the
# Service at index 2 holds its cache as @other: another shape.
name_dumps() { # OUTPREFIX SPLIT
	for f in before after later; do
		gzip -dc "$DATA/leak_clusters_$f.json.gz" | python3 -c '
import json, sys
split = sys.argv[1] == "1"
lines = sys.stdin.read().split("\n")
recs = {}
for i, line in enumerate(lines):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if "address" in r:
        recs[r["address"]] = (i, r)
def at(r, ln, t):
    return r.get("type") == t and r.get("line") == ln and r.get("file", "").endswith("clusters.rb")
services = [a for a, (i, r) in recs.items() if at(r, 71, "ARRAY")]
assert len(services) == 1, services
arr = recs[services[0]][1]
order = arr["references"]
for i, r in recs.values():
    refs = r.get("references", [])
    names = None
    if r is arr:
        names = list(range(len(refs)))
    elif at(r, 71, "OBJECT"):
        own = "@other" if split and order.index(r["address"]) == 2 else "@cache"
        names = [own if at(recs[x][1], 56, "OBJECT") else None for x in refs]
    elif at(r, 56, "OBJECT"):
        names = ["@entries" if at(recs[x][1], 45, "HASH") else None for x in refs]
    elif r.get("type") == "CLASS" and r.get("name") == "Object" and services[0] in refs:
        names = ["::SERVICES" if x == services[0] else None for x in refs]
    if names is not None:
        r["ref_names"] = names
        lines[i] = json.dumps(r, separators=(",", ":"))
sys.stdout.write("\n".join(lines))
' "$2" >"$1_$f.json" || notok "names/$1" "python3 failed on $f"
	done
}
name_dumps "$TMP/n" 0
check_rc names/exit 0 "$H" leaks -q -f json "$TMP/n_before.json" "$TMP/n_after.json" "$TMP/n_later.json"
cp "$TMP/out" "$TMP/n.json"
check names/clusters-total 2 "$(jq .clusters_total "$TMP/n.json")"
check names/shape-with-names "vm -> Object ::SERVICES -> Array [*] -> Service @cache -> LeakyCache @entries -> Hash" \
	"$(jq -r '.clusters[0].shape' "$TMP/n.json")"
check names/same-members "$(echo "$py1" | jq -c .holders)" "$(jq -c '.clusters[0].members | sort' "$TMP/n.json")"
check names/same-retained "$(echo "$py1" | jq .memsize)" "$(jq '.clusters[0].retained_memsize' "$TMP/n.json")"
name_dumps "$TMP/s" 1
check_rc names-split/exit 0 "$H" leaks -q -f json "$TMP/s_before.json" "$TMP/s_after.json" "$TMP/s_later.json"
cp "$TMP/out" "$TMP/s.json"
# held as @cache twice and as @other once: two shapes of caches now
check names-split/clusters-total 3 "$(jq .clusters_total "$TMP/s.json")"
check names-split/suspects '[2,1,1]' "$(jq -c '[.clusters[].suspects]' "$TMP/s.json")"
check names-split/shapes '["vm -> Object ::SERVICES -> Array [*] -> Service @cache -> LeakyCache @entries -> Hash","global_tbl -> Array","vm -> Object ::SERVICES -> Array [*] -> Service @other -> LeakyCache @entries -> Hash"]' \
	"$(jq -c '[.clusters[].shape]' "$TMP/s.json")"
