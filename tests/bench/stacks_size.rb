# tests/bench/stacks_size.rb MODE OUT [TARGET_MB] - the heap gen_big.rb
# builds (a shop application, TARGET_MB of dump_all output, default 30),
# built under HeapDump.trace_allocations without stacks (MODE "traced")
# or with stacks at sample: N (MODE "sample=N"), then written by
# HeapDump.dump(OUT, gc: true). Prints "size MODE BYTES OBJECTS
# STACKED": the dump's bytes, its object lines and how many of them
# carry a stack. stacks_cg.sh compares the modes and their stores.
require "heapdump"

mode, out, target = ARGV
abort "usage: stacks_size.rb traced|sample=N OUT [TARGET_MB]" unless out && mode =~ /\A(traced|sample=[1-9]\d*)\z/

if mode == "traced"
  HeapDump.trace_allocations_start
else
  HeapDump.trace_allocations_start(stacks: true, sample: Integer(mode.sub("sample=", "")))
end
ENV["GEN_BIG_BUILD_ONLY"] = "1"
ARGV.replace(["/dev/null", target || "30"])
load File.expand_path("gen_big.rb", __dir__)
ObjectSpace.trace_object_allocations_stop # gen_big's own; ours goes on
HeapDump.dump(out, gc: true)
objects = 0
stacked = 0
File.foreach(out) do |l|
  next if l.start_with?('{"type":"ROOT"', '{"type":"SHAPE"', '{"type":"FRAME"', '{"type":"STACK"')

  objects += 1
  stacked += 1 if l.include?(', "stack":')
end
puts "size #{mode} #{File.size(out)} #{objects} #{stacked}"
