# tests/ext/expect_test.rb DIR - HeapDump.dump writes the allocation
# sites of ObjectSpace.trace_object_allocations when the gem's own tracer
# is off (today's users turn that one on); the sidecar says which dumper.
require_relative "t"
require "heapdump"
require "objspace"
require "json"

dir = ARGV.fetch(0)

def record_of(path, obj)
  addr = format("0x%x", ObjectSpace.dump(obj)[/"address":"0x(\h+)"/, 1].hex)
  File.foreach(path, mode: "rb") do |l|
    return JSON.parse(l) if l.include?(%("address":"#{addr}"))
  end
  nil
end

class Traced; end
ObjectSpace.trace_object_allocations_start
obj = Traced.new
line = __LINE__ - 1
path = HeapDump.dump(File.join(dir, "objspace.json"))
ObjectSpace.trace_object_allocations_stop
r = record_of(path, obj)
check "objspace/record-found", !r.nil?
check_eq "objspace/file", __FILE__, r && r["file"]
check_eq "objspace/line", line, r && r["line"]
check "objspace/generation", r && r["generation"].is_a?(Integer), r.inspect
check_eq "objspace/sidecar-dumper", "dump_all", JSON.parse(File.read("#{path}.hdmeta"))["dumper"]
ObjectSpace.trace_object_allocations_start
HeapDump.dump(File.join(dir, "objspace2.json")) # said once only
ObjectSpace.trace_object_allocations_stop

# tracing off again: the walker, where there is one
path = HeapDump.dump(File.join(dir, "after.json"))
want = HeapDump.native_walk? ? "heapdump" : "dump_all"
check_eq "objspace/off-back-to-#{want}", want, JSON.parse(File.read("#{path}.hdmeta"))["dumper"]

# both on: the gem's tracer wins (its sites are in the walk)
ObjectSpace.trace_object_allocations_start
HeapDump.trace_allocations { $both = Traced.new }
both_line = __LINE__ - 1
path = HeapDump.dump(File.join(dir, "both.json"))
ObjectSpace.trace_object_allocations_stop
r = record_of(path, $both)
check_eq "both/line", both_line, r && r["line"]

# gc: true runs a full GC before the dump; the default does not
def make_garbage(tag)
  2000.times { |i| "#{tag}-#{i}" }
  nil
end

def count_value(path, tag)
  n = 0
  File.foreach(path, mode: "rb") { |l| n += 1 if l.include?(%("value":"#{tag}-)) }
  n
end
GC.start
make_garbage("gcprobe-a")
majors = GC.stat(:major_gc_count)
path = HeapDump.dump(File.join(dir, "gc.json"), gc: true)
check "gc/ran-a-major-gc", GC.stat(:major_gc_count) > majors
left = count_value(path, "gcprobe-a")
check "gc/garbage-gone", left < 20, "#{left} of 2000 garbage strings in the dump"
GC.disable
make_garbage("gcprobe-b")
majors = GC.stat(:major_gc_count)
path = HeapDump.dump(File.join(dir, "nogc.json"))
GC.enable
check_eq "gc/default-no-gc", majors, GC.stat(:major_gc_count)
left = count_value(path, "gcprobe-b")
check "gc/default-garbage-kept", left > 1900, "#{left} of 2000"
