# tests/bench/gen_pair.rb - two dumps of one process for timing `heapdump
# diff`: a heap of about TARGET_MB, dumped; then some of it released, more
# allocated (a part of it kept: the "leak"), optionally compacted, and
# dumped again.
#
#   ruby tests/bench/gen_pair.rb BEFORE.json AFTER.json [TARGET_MB] [compact]
#
# Allocation tracing is on from the start, so every object of the second
# phase has a generation newer than any of the first dump; slots freed in
# the second phase are reused by its objects. With "compact", GC.compact
# runs before the second dump (moved objects keep their generation).
# Prints the number of objects kept by the second phase.
before, after = ARGV[0], ARGV[1]
abort "usage: ruby gen_pair.rb BEFORE.json AFTER.json [TARGET_MB] [compact]" unless after
compact = ARGV[3] == "compact"
require_relative "gen_items"
gen_items(Float(ARGV[2] || 500))
GC.start
File.open(before, "w") { |f| ObjectSpace.dump_all(output: f) }

# phase 2: drop a third of the items, allocate as many again, keep 1 in 10
(0...ITEMS).step(3) { |i| STORE[i] = nil }
GC.start
(ITEMS / 3).times do |i|
  l = Leak.new(i)
  KEEP << l if (i % 10).zero?
end
GC.start
GC.compact if compact && GC.respond_to?(:compact)
File.open(after, "w") { |f| ObjectSpace.dump_all(output: f) }
puts "items=#{ITEMS} kept_leaks=#{KEEP.size} kept_objects=#{KEEP.size * 4}"
