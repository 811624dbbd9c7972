# tests/ext/api_test.rb - count_objects, track and track(retained: true),
# trace_allocations start/stop, in a real ruby.
require_relative "t"
require "heapdump"

module NS
  class A; end
  module B
    class C; end
  end
end
class Outside; end

keep = Array.new(7) { NS::A.new } + Array.new(3) { NS::B::C.new } + Array.new(4) { Outside.new }
GC.start
GC.disable
c = HeapDump.count_objects("NS")
theirs = ObjectSpace.count_objects
GC.enable
check_eq "count/classes-in-namespace", { "NS::A" => 7, "NS::B::C" => 3 }, c["classes"]
check_eq "count/namespace-total", { "NS" => 10 }, c["namespaces"]
check_eq "count/total-slots", theirs[:TOTAL], c["total"]
check "count/free-slots", (c["free"] - theirs[:FREE]).abs < 100, "#{c['free']} vs #{theirs[:FREE]}"
%w[T_STRING T_ARRAY T_OBJECT T_CLASS].each do |t|
  mine = c["types"][t].to_i
  ref = theirs[t.to_sym].to_i
  check "count/types/#{t}", mine.positive? && (mine - ref).abs <= ref / 50 + 20, "#{mine} vs #{ref}"
end
all = HeapDump.count_objects
check "count/no-namespace-all-classes", all["classes"]["Outside"] == 4 && all["classes"]["NS::A"] == 7 && !all.key?("namespaces")
check_eq "count/module-argument", { "NS" => 10 }, HeapDump.count_objects(NS)["namespaces"]

# memprof-style tracking
class Widget; end
line = __LINE__ + 1
h = HeapDump.track { 5.times { Widget.new } }
check_eq "track/by-site-and-class", 5, h["#{__FILE__}:#{line}:Widget"]
check "track/most-first", h.values == h.values.sort.reverse
check "track/no-own-sites", h.keys.none? { |k| k.include?("lib/heapdump.rb") }, h.keys.first(5).inspect
$kept = []
line = __LINE__ + 1
r = HeapDump.track(retained: true) { 7.times { |i| w = Widget.new; "garbage #{i}"; $kept << w if i.even? } }
check_eq "track/retained-only-live", 4, r["#{__FILE__}:#{line}:Widget"]
check "track/retained-drops-garbage", !r.key?("#{__FILE__}:#{line}:String"), r.inspect[0, 300]
begin
  HeapDump.track(retained: true) { Widget.new; raise "boom" }
rescue RuntimeError
  nil
end
GC.start
check "track/raise-in-block-then-gc", HeapDump.track { Widget.new }.values.sum >= 1
strs = HeapDump.track { 3.times { |i| "s#{i}" } }
check "track/strings", strs.any? { |k, v| k.end_with?(":String") && v >= 3 }, strs.inspect[0, 200]

# tracing start/stop
HeapDump.trace_allocations_start
check "trace/tracing-on", HeapDump.tracing?
obj = Object.new
obj_line = __LINE__ - 1
HeapDump.trace_allocations_stop
check "trace/tracing-off", !HeapDump.tracing?
later = Object.new
site = HeapDump.allocation_site(obj)
check "trace/site-of-traced", site && site[0] == __FILE__ && site[1] == obj_line && site[2] == (RUBY_VERSION >= "3.5" ? nil : "new") && site[3].is_a?(Integer), site.inspect
check "trace/no-site-untraced", HeapDump.allocation_site(later).nil?
check "trace/block-form-value", HeapDump.trace_allocations { 42 } == 42 && !HeapDump.tracing?
HeapDump.trace_allocations_clear
check "trace/clear", HeapDump.allocation_site(obj).nil?

# compaction moves traced objects (nothing says so to a tracepoint): their
# sites follow them, so that a dump after GC.compact or auto_compact still
# tells old objects from new ones
if GC.respond_to?(:compact)
  require "objspace"
  addr = ->(o) { ObjectSpace.dump(o)[/"address":"(0x\h+)"/, 1] }
  HeapDump.trace_allocations_start
  moved_objs = []
  4000.times { |i| s = "moved #{i}"; moved_objs << s if i % 4 == 0 }
  moved_line = __LINE__ - 1
  HeapDump.trace_allocations_stop
  GC.start
  was = moved_objs.map(&addr)
  GC.compact
  moved = moved_objs.each_index.count { |i| addr.(moved_objs[i]) != was[i] }
  lines = moved_objs.map { |o| HeapDump.allocation_site(o)&.[](1) }
  check "trace/compaction-moved-some", moved > 0, "no traced object moved"
  check "trace/compaction-sites-follow", lines.all?(moved_line), "#{lines.count(moved_line)} of #{lines.size} sites kept (#{moved} moved)"
  HeapDump.trace_allocations_clear
  moved_objs = nil
end
keep.clear
