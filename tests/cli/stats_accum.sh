#!/bin/sh
# stats_accum.sh - stats' caches of recent groups and classes (stats.c's
# recent_index, class_names.c's recent_of: unkeyed multiply hashes in front of
# the keyed tables) never answer for the wrong key and stay linear when
# every key is crafted to fall in one cache entry. The dump is generated
# at test time: classes whose addresses all land in cache entry 0 of the
# class table (family A) or of the by-class grouping (family B), and
# their instances interleaved so that every lookup follows a different
# class in the same entry.
. "$(dirname "$0")/../lib.sh"
needs ruby ruby

HD=$HEAPDUMP

# gen OUT EXPECTED N: N classes of each family, class i with i % 5 + 1
# instances; EXPECTED gets "count<TAB>name" for every class.
gen() {
	ruby - "$@" <<'EOF'
out, exp, n = ARGV
n = Integer(n)
M = (1 << 64) - 1
C = 0x9e3779b97f4a7c15 # the caches' multiplier
CI = (1..6).reduce(C) { |x, _| (x * (2 - C * x)) & M } # its inverse
raise unless (C * CI) & M == 1
OBJ = 2 # HD_T_OBJECT: the by-class key of an instance is (class, 2)
meta = 0x7f0000001000
# A: address * C = k, top bits 0: entry 0 of the class table's cache.
# B: (address * C ^ 2) * C = k: entry 0 of the grouping's cache.
a = (1..n).map { |k| (k * CI) & M }
b = (1..n).map { |k| ((((k * CI) & M) ^ OBJ) * CI) & M }
raise "A does not collide" unless a.all? { |x| ((x * C) & M) >> 54 == 0 }
raise "B does not collide" unless b.all? { |x| (((((x * C) & M) ^ OBJ) * C) & M) >> 54 == 0 }
classes = a.each_with_index.map { |x, i| [x, "A#{i}", i % 5 + 1] } +
          b.each_with_index.map { |x, i| [x, "B#{i}", i % 5 + 1] }
File.open(out, "w") do |f|
  f.puts %({"type":"ROOT", "root":"vm", "references":["0x#{meta.to_s(16)}"]})
  f.puts %({"address":"0x#{meta.to_s(16)}", "type":"CLASS", "class":"0x#{meta.to_s(16)}", "name":"Meta", "memsize":40})
  classes.each do |x, name, _|
    f.puts %({"address":"0x#{x.to_s(16)}", "type":"CLASS", "class":"0x#{meta.to_s(16)}", "name":"#{name}", "memsize":40})
  end
  addr = 0x100000000
  5.times do |round| # A0 B0 A1 B1 ...: consecutive objects never share a class
    a.size.times do |i|
      [classes[i], classes[a.size + i]].each do |x, _, count|
        next unless count > round
        f.puts %({"address":"0x#{addr.to_s(16)}", "type":"OBJECT", "class":"0x#{x.to_s(16)}", "memsize":24})
        addr += 40
      end
    end
  end
end
File.open(exp, "w") do |f|
  classes.each { |_, name, count| f.puts "#{count}\t#{name}" }
end
EOF
}

D="$TMP/collide.json"
gen "$D" "$TMP/expected" 3000 || notok gen "the generator failed"
"$HD" stats -q -j1 --by class -n 0 --format tsv "$D" >"$TMP/j1.tsv"
awk -F'\t' '$1 == "class" && $4 != "Meta" { print $2 "\t" $4 }' "$TMP/j1.tsv" | sort >"$TMP/got"
sort "$TMP/expected" >"$TMP/want"
check collide/class-counts "" "$(diff "$TMP/want" "$TMP/got" | head -5)"
check collide/classes 6000 "$(wc -l <"$TMP/got" | tr -d ' ')"
# the class records (6000 + Meta's own) are instances of Meta
check collide/meta "6001" "$(awk -F'\t' '$1 == "class" && $4 == "Meta" { print $2 }' "$TMP/j1.tsv")"
objs=$(awk -F'\t' '{ s += $1 } END { print s }' "$TMP/expected")
# parallel chunks merge their caches' tables into the same answer
"$HD" stats -q -j2 --by class -n 0 --format tsv "$D" >"$TMP/j2.tsv"
check collide/j2-same "" "$(cmp "$TMP/j1.tsv" "$TMP/j2.tsv" 2>&1)"
# by type and class at once (the default's two groupings) agree with it
"$HD" stats -q -j1 -n 0 --format tsv "$D" >"$TMP/def.tsv"
awk -F'\t' '$1 == "class"' "$TMP/j1.tsv" >"$TMP/c1"
awk -F'\t' '$1 == "class"' "$TMP/def.tsv" >"$TMP/c2"
check collide/object-type "$objs" "$(awk -F'\t' '$1 == "type" && $4 == "OBJECT" { print $2 }' "$TMP/def.tsv")"
check collide/default-classes "" "$(cmp "$TMP/c1" "$TMP/c2" 2>&1)"

# ---- linear: 40,000 colliding classes and their 120,000 instances ----
B="$TMP/big.json"
gen "$B" "$TMP/bexp" 20000 || notok gen-big "the generator failed"
cpu_le collide/linear 10 "$HD" stats -q -j1 -n 0 --format tsv "$B"
check collide/linear-classes 40000 "$(awk -F'\t' '$1 == "class" && $4 != "Meta"' "$TMP/out" | wc -l | tr -d ' ')"
