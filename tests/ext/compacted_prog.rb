# tests/ext/compacted_prog.rb DIR MODE - a program with a leak (a
# registry keeping a record per request) dumped three times by the gem
# (DIR/before.json, after.json, later.json, each with its sidecar), for
# compacted.sh. MODE: "plain" (untraced, GC.compact before each dump but
# the first), "traced" (the same with the gem's tracer on), "still"
# (untraced, no compaction).
dir, mode = ARGV.fetch(0), ARGV.fetch(1)
require "heapdump"
HeapDump.trace_allocations_start if mode == "traced"

class Registry
  def initialize = @records = []
  def add(r) = @records << r
end
REGISTRY = Registry.new
# old objects for compaction to move
BOOT = Array.new(3000) { |i| "boot #{i} #{"." * (i % 30)}" }

def phase(from, to)
  (from...to).each do |i|
    REGISTRY.add("record #{i} #{"x" * (i % 50)}")
    Array.new(20) { |k| "garbage #{i} #{k}" }
  end
end

def dump(dir, name, compact)
  GC.start
  GC.compact if compact
  HeapDump.dump(File.join(dir, "#{name}.json"), gc: true)
end

phase(0, 100)
dump(dir, "before", false)
phase(100, 600)
dump(dir, "after", mode != "still")
phase(600, 1100)
dump(dir, "later", mode != "still")
puts "done"
