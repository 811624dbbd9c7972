# tests/bench/gen_items.rb - the heap gen_pair.rb and gen_trio.rb share:
# ITEMS items (an object, 3 strings, an array, a hash each: about 6 lines
# of about 250 bytes) for a dump of about target_mb, traced from the
# start, held by STORE; Leak objects to keep in KEEP.
require "objspace"

def gen_items(target_mb)
  Object.const_set(:ITEMS, (target_mb * 1e6 / 1500).round)
  ObjectSpace.trace_object_allocations_start
  Object.const_set(:STORE, Array.new(ITEMS) { |i| Item.new(i) })
  Object.const_set(:KEEP, [])
end

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
