# tests/ext/compare.rb - HeapDump.dump and ObjectSpace.dump_all, taken in
# one process one after the other with GC disabled, list the same objects
# with the same fields. Prints "key value" lines that compare.sh checks:
#   only_ours N        objects in our dump and not in dump_all's (0)
#   only_theirs N      objects in dump_all's and not in ours: those the
#                      two dumpers allocated after our walk
#   only_theirs_unexplained N  of those, not allocated by the dumpers
#   field_diffs N      common objects whose fields other than memsize,
#                      flags and references differ (0)
#   changed N          common objects whose references, memsize, GC
#                      flags (or coderange, fd, SHAPE edges,
#                      variation_count) differ: objects the first dump's own method
#                      calls changed (call caches added to classes and
#                      iseqs, write-barrier "marking" bits); a few dozen
#   roots_equal 0/1    the same ROOT categories
# Usage: ruby compare.rb OURS THEIRS
require "heapdump"
require "objspace"
require "json"

ours, theirs = ARGV
# a heap with every kind of object in it
class Foo; def initialize; @a = 1; @b = "x"; end; end
module Bar; class Baz < Foo; end; end
$keep = [Foo.new, Bar::Baz.new, Hash.new { 1 }, "caf\u00e9", "a\u0001\"\\", :"dyn#{rand}",
         1.5, 1.5e300, 1e-320, -2.5e-300, Float::INFINITY, -Float::INFINITY, Float::NAN, 2**100, 3r, Complex(1, 2), /re/, "abc".match(/b/), Struct.new(:a).new(1),
         Class.new, Module.new, (1..3), Object.new.tap { |o| def o.x; end },
         [1, 2, 3], Array.new(100) { |i| i.to_s }, { a: 1 }, File.open(__FILE__)]
eval("def weird; 'w'; end", binding, "we\"ird\\path.rb", 1)

GC.start
GC.disable
HeapDump.dump(ours)
ObjectSpace.dump_all(output: File.open(theirs, "w"))
GC.enable

def load(path)
  objs = {}
  roots = {}
  File.foreach(path) do |l|
    r = JSON.parse(l)
    if r["type"] == "ROOT"
      (roots[r["root"]] ||= []).concat(r["references"])
    else
      objs[r["address"]] = r
    end
  end
  [objs, roots]
end

a, ra = load(ours)
b, rb = load(theirs)
only_a = a.keys - b.keys
only_b = b.keys - a.keys
dumper = %w[_dump_all dump_all _dump dump write_dump process_meta default_path
            create_temp write_sidecar temp_path]
unexplained = only_b.reject do |addr|
  # dump_all's own objects carry its method only when traced: untraced,
  # the objects allocated after our walk are the dumpers' by construction
  r = b[addr]
  r["method"].nil? || dumper.include?(r["method"])
end
field_diffs = []
changed = []
# also volatile: a string's coderange, a lazy cache the first dump may
# compute ("unknown" -> "7bit"); the fd of a dumper's own scratch file,
# closed after it; a SHAPE's edges and a class's variation_count, grown
# by the dumpers' own objects
volatile = %w[references memsize flags coderange fd edges variation_count]
(a.keys & b.keys).each do |addr|
  x = a[addr]
  y = b[addr]
  changed << addr if volatile.any? { |k| x[k] != y[k] }
  x2 = x.reject { |k, _| volatile.include?(k) }
  y2 = y.reject { |k, _| volatile.include?(k) }
  field_diffs << [addr, x2, y2] if x2 != y2
end
puts "ours #{a.size}"
puts "theirs #{b.size}"
puts "only_ours #{only_a.size}"
puts "only_theirs #{only_b.size}"
puts "only_theirs_unexplained #{unexplained.size}"
puts "field_diffs #{field_diffs.size}"
puts "changed #{changed.size}"
puts "roots_equal #{ra.keys == rb.keys ? 1 : 0}"
field_diffs.first(5).each { |d, x, y| warn "field diff #{d}:\n  ours   #{x}\n  theirs #{y}" }
warn "changed: #{changed.map { |d| a[d]["type"] }.tally}"
only_a.first(5).each { |d| warn "only ours: #{a[d]}" }
