# frozen_string_literal: false
#
# tests/bench/gen_chain.rb - a dump whose heap is one long linked list.
#
#   ruby tests/bench/gen_chain.rb OUT.json [NODES]
#
# NODES (default 300000) Node objects, each holding an Integer and the next
# node, hang from one global. Allocation tracing is off, as in the peers'
# fixture; the default gives 65 MB, almost all of it the list. This is the
# input on which peers broke (shared/reference/peers.md, section 3): a
# recursive walk overflows the stack, and subtree sizes computed per node
# are quadratic. The path from
# the root to the last node is NODES + 1 references long.
require "objspace"

out = ARGV[0] or abort "usage: ruby gen_chain.rb OUT.json [NODES]"
nodes = Integer(ARGV[1] || 300_000)
abort "gen_chain: NODES must be positive" unless nodes > 0

class Node
  def initialize(value, next_node)
    @value = value
    @next_node = next_node
  end
end

t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
head = nil
nodes.times { |i| head = Node.new(i, head) }
$chain = head
head = nil
GC.start
File.open(out, "w") { |f| ObjectSpace.dump_all(output: f) }
warn format("gen_chain: %d nodes in %.1f s, %.1f MB", nodes,
            Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0,
            File.size(out) / 1.0e6)
