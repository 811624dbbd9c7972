# interface_with.rb - the expected answer of `heapdump interface-with`,
# computed independently with Ruby's JSON: the border between the objects
# of DIFF (NDJSON, one record with an address a line) and the others in
# AFTER, and for each diff-border object a BFS within the diff.
#
#   ruby interface_with.rb AFTER DIFF
#
# Prints "border N", "keepalive_sum N", "keepalive_memsize_sum N",
# "self ADDR..." (sorted) and one "ADDR KEEPALIVE" line per border object.
require "json"
require "set"

after, diff = ARGV
norm = ->(a) { a.to_i(16) }
new = Set.new
File.foreach(diff) { |l| new << norm.(JSON.parse(l)["address"]) if l.strip != "" }
refs = {}
mem = {}
roots = []
File.foreach(after) do |l|
  next if l.strip.empty?
  r = JSON.parse(l)
  if r["type"] == "ROOT"
    roots.concat((r["references"] || []).map(&norm))
    next
  end
  next unless r["address"]
  a = norm.(r["address"])
  next if refs.key?(a) # the first record of an address wins
  refs[a] = (r["references"] || []).map(&norm)
  mem[a] = r["memsize"] || 0
end
new &= refs.keys.to_set
border = Set.new
self_border = Set.new
refs.each do |a, rs|
  next if new.include?(a)
  rs.each do |t|
    next unless new.include?(t)
    border << t
    self_border << a
  end
end
roots.each { |t| border << t if new.include?(t) }
sum = 0
msum = 0
lines = []
border.sort.each do |b|
  seen = Set[b]
  queue = [b]
  until queue.empty?
    v = queue.shift
    refs[v].each do |t|
      next unless new.include?(t) && !seen.include?(t)
      seen << t
      queue << t
    end
  end
  sum += seen.size
  msum += seen.sum { |v| mem[v] }
  lines << format("0x%x %d", b, seen.size)
end
puts "border #{border.size}"
puts "keepalive_sum #{sum}"
puts "keepalive_memsize_sum #{msum}"
puts "self " + self_border.sort.map { |a| format("0x%x", a) }.join(" ")
puts lines
