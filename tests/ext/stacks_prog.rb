# tests/ext/stacks_prog.rb DIR [plain] - allocation stacks from a real
# program (issue 36): a helper, make_row, called from two controllers, one
# of which keeps its rows (KeepController::KEPT, the leak) while the other
# drops them. Traced with every allocation's stack (sample: 1), it dumps
# DIR/before.json after a warm-up, then DIR/after.json from a forked
# child (fork: true: the stacks must survive the fork), both after a GC.
# "plain": traced without stacks, DIR/plain.json and plain2.json. Prints
# "stack FRAME;FRAME..." for a kept row (HeapDump.allocation_stack), then "done".
require "heapdump"
dir = ARGV.fetch(0)

module Helper
  def self.make_row(i)
    { id: i, name: "row #{i}", tags: ["a#{i}", "b#{i}"] }
  end
end

class KeepController
  KEPT = []
  def index(n)
    n.times { |i| KEPT << Helper.make_row(i) }
  end
end

class DropController
  def index(n)
    n.times { |i| Helper.make_row(i) }
  end
end

if ARGV[1] == "plain"
  HeapDump.trace_allocations do
    KeepController.new.index(50)
    HeapDump.dump(File.join(dir, "plain.json"), gc: true)
    KeepController.new.index(200)
    HeapDump.dump(File.join(dir, "plain2.json"), gc: true)
  end
  puts "done"
  exit
end

HeapDump.trace(stacks: true, sample: 1) do
  KeepController.new.index(10)
  DropController.new.index(10)
  HeapDump.dump(File.join(dir, "before.json"), gc: true)
  KeepController.new.index(200)
  DropController.new.index(200)
  HeapDump.dump(File.join(dir, "after.json"), gc: true, fork: true).wait
  st = HeapDump.allocation_stack(KeepController::KEPT.last) || []
  puts "stack #{st.map { |_f, _l, label| label }.join(";")}"
end
puts "done"
