# native_leak.rb - a process that grows outside its Ruby heap, or inside
# it, between three dumps of the heapdump gem (BEFORE, AFTER, LATER, each
# with its sidecar), for tests/cli/process_growth.sh (issue 34, item 9).
#
#   RUBYLIB=build/ext-VERSION:src/lib ruby native_leak.rb OUTDIR MODE
#
# MODE native: each phase (BEFORE to AFTER, AFTER to LATER) mallocs
#   PHASE_MB MB in 1 MB blocks that are never freed, every byte written
#   so that it is resident: Fiddle.malloc, or where Fiddle is not there
#   (Ruby 4.0 no longer bundles it) NativeAlloc.malloc_touched of
#   native_alloc/ (built by the test, on RUBYLIB). The Ruby heap does not
#   grow: the addresses are kept in one Array made before BEFORE.
# MODE ruby: each phase keeps PHASE_MB MB more of Ruby Strings.
# MODE none: neither (allocates and drops some garbage).
#
# Prints its own ground truth, one JSON line: the mode, how it leaked
# natively ("fiddle", "native_alloc" or null), the bytes leaked natively
# and the bytes held in Ruby Strings from BEFORE to LATER.
require "heapdump"

PHASE_MB = 52
BLOCK = 1_000_000

dir, mode = ARGV
abort "usage: ruby native_leak.rb OUTDIR native|ruby|none" unless dir && %w[native ruby none].include?(mode)

via = nil
if mode == "native"
  begin
    require "fiddle"
    via = "fiddle"
  rescue LoadError
    require "native_alloc"
    via = "native_alloc"
  end
end

# everything the phases use exists before BEFORE
blocks = []
kept = []
ones = "\x01".b * BLOCK
native = 0
held = 0

phase = lambda do
  case mode
  when "native"
    PHASE_MB.times do
      if via == "fiddle"
        addr = Fiddle.malloc(BLOCK)
        Fiddle::Pointer.new(addr, BLOCK)[0, BLOCK] = ones
      else
        addr = NativeAlloc.malloc_touched(BLOCK)
      end
      blocks << addr
      native += BLOCK
    end
  when "ruby"
    PHASE_MB.times do |i|
      s = "r" * BLOCK
      kept << s
      held += s.bytesize
    end
  else
    Array.new(1000) { |i| "garbage #{i}" }
  end
end

blocks.concat(Array.new(3 * PHASE_MB, 0))
blocks.clear
GC.start
HeapDump.dump(File.join(dir, "before.json"))
phase.call
GC.start
HeapDump.dump(File.join(dir, "after.json"))
phase.call
GC.start
HeapDump.dump(File.join(dir, "later.json"))
puts "{\"mode\":\"#{mode}\",\"via\":#{via ? "\"#{via}\"" : 'null'},\"native_bytes\":#{native},\"ruby_bytes\":#{held}}"
