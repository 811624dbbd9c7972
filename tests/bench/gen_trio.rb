# tests/bench/gen_trio.rb - three dumps of one process for timing the
# three-dump leak method (`heapdump diff`/`leaks`/`serve` BEFORE AFTER
# LATER): a heap of about TARGET_MB, dumped; then a third of it released,
# as many objects allocated again, one in ten of them kept (the "leak"),
# dumped; then the same once more (the leak grows, the rest is freed),
# dumped again.
#
#   ruby tests/bench/gen_trio.rb BEFORE.json AFTER.json LATER.json [TARGET_MB]
#
# Allocation tracing is on from the start, so every object of a later
# phase has a generation newer than any of the dump before it. The
# default TARGET_MB (1000) gives dumps of about 1.1 GB and 4.5 million
# objects each. Prints the number of objects kept by the later phases.
require "objspace"

before, after, later = ARGV[0], ARGV[1], ARGV[2]
abort "usage: ruby gen_trio.rb BEFORE.json AFTER.json LATER.json [TARGET_MB]" unless later
target_mb = Float(ARGV[3] || 1000)
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

# a phase: drop a third of the items (from start), put new items and as
# many Leaks in their place, keep 1 Leak in 10
def phase(start)
  (start...ITEMS).step(3) { |i| STORE[i] = nil }
  GC.start
  (start...ITEMS).step(3) do |i|
    STORE[i] = Item.new(i)
    l = Leak.new(i)
    KEEP << l if (i % 10).zero?
  end
  GC.start
end

phase(0)
File.open(after, "w") { |f| ObjectSpace.dump_all(output: f) }
phase(1)
File.open(later, "w") { |f| ObjectSpace.dump_all(output: f) }
puts "items=#{ITEMS} kept_leaks=#{KEEP.size} kept_objects=#{KEEP.size * 4}"
