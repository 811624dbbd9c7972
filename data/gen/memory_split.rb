# memory_split.rb - a process whose RSS grows in one known part between
# two dumps of the heapdump gem (BEFORE, AFTER, each with its sidecar),
# for tests/cli/memory.sh (issue 35 section 1).
#
#   RUBYLIB=build/ext-VERSION:src/lib ruby memory_split.rb OUTDIR MODE
#
# MODE ruby: keeps MB MB more of Ruby Strings in an Array.
# MODE native: mallocs MB MB in 1 MB blocks, every byte written, never
#   freed (Fiddle.malloc; NativeAlloc.malloc_touched of native_alloc/
#   where Fiddle is missing, 4.0): malloc outside Ruby objects.
# MODE frag: mallocs 4 x MB MB in 1,500-byte blocks, then frees three of
#   every four: malloc held free (the freed blocks sit between kept ones,
#   so the allocator can give none of it back).
# MODE iseq: module_eval defines ISEQS methods from strings, allocation
#   tracing on: their instruction sequences at the module_eval line.
# MODE none: nothing but four threads waiting (their stacks).
#
# Prints one JSON line: the mode, the bytes it meant to add, and for iseq
# the module_eval line.
require "heapdump"

MB = 40
M = 1_000_000
ISEQS = 3000

dir, mode = ARGV
abort "usage: ruby memory_split.rb OUTDIR ruby|native|frag|iseq|none" unless
  dir && %w[ruby native frag iseq none].include?(mode)

fiddle = begin
  require "fiddle"
  true
rescue LoadError
  require "native_alloc"
  false
end

mal = fiddle ? ->(n) { Fiddle.malloc(n) } : ->(n) { NativeAlloc.malloc(n) }
fre = fiddle ? ->(a) { Fiddle.free(a) } : ->(a) { NativeAlloc.free(a) }
kept = []
blocks = []
ones = "\x01".b * M
line = nil
q = nil
GC.start
HeapDump.dump(File.join(dir, "before.json"))
case mode
when "ruby"
  (MB * 1000).times { kept << ("r" * 1000) }
when "native"
  MB.times do
    if fiddle
      a = Fiddle.malloc(M)
      Fiddle::Pointer.new(a, M)[0, M] = ones
    else
      a = NativeAlloc.malloc_touched(M)
    end
    blocks << a
  end
when "frag"
  n = 4 * MB * M / 1500
  all = Array.new(n) { mal.call(1500) }
  all.each_with_index { |a, i| i % 4 == 3 ? blocks << a : fre.call(a) }
  all = nil
when "iseq"
  mod = Module.new
  HeapDump.trace_allocations_start
  line = __LINE__ + 1
  ISEQS.times { |i| mod.module_eval("def m#{i}(a); [a, #{i}, :s#{i}].map { |x| x.to_s * 2 }.join; end") }
  HeapDump.trace_allocations_stop
  kept << mod
when "none"
  # four threads blocked in sleep: their stacks in the sidecar
  q = Queue.new
  4.times { kept << Thread.new { q.pop } }
  sleep 0.01 until kept.all? { |t| t.status == "sleep" }
end
GC.start
HeapDump.dump(File.join(dir, "after.json"))
puts "{\"mode\":\"#{mode}\",\"bytes\":#{mode == 'none' ? 0 : MB * M},\"line\":#{line || 'null'}}"
q&.close
