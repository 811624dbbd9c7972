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
before, after, later = ARGV[0], ARGV[1], ARGV[2]
abort "usage: ruby gen_trio.rb BEFORE.json AFTER.json LATER.json [TARGET_MB]" unless later
require_relative "gen_items"
gen_items(Float(ARGV[3] || 1000))
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
