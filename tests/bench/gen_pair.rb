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
require "objspace"

before, after = ARGV[0], ARGV[1]
abort "usage: ruby gen_pair.rb BEFORE.json AFTER.json [TARGET_MB] [compact]" unless after
target_mb = Float(ARGV[2] || 500)
compact = ARGV[3] == "compact"
# one item: an object, 3 strings, an array, a hash: about 6 lines of
# about 250 bytes
ITEMS = (target_mb * 1e6 / 1500).round

ObjectSpace.trace_object_allocations_start

class Item
  def initialize(i)
    @name = "item-#{i}"
    @tags = ["t#{i % 17}", "u#{i % 5}"]
    @attrs = { "id" => i, "kind" => (i % 3).to_s }
  end
end

class Leak
  def initialize(i)
    @payload = "leak-#{i} " + ("x" * (i % 50))
    @refs = [i, i.to_s]
  end
end

STORE = Array.new(ITEMS) { |i| Item.new(i) }
KEEP = []
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
