# tests/ext/compare.rb DIR - HeapDump.dump and ObjectSpace.dump_all,
# taken in one process one after the other with GC disabled, on a heap
# with every kind of object: the same records, fields, values and field
# order, except a bounded set of differences, each named below with its
# reason and its bound, and each asserted. Run by compare.sh on every Ruby
# of RUBIES; prints "ok - ..." lines (t.rb).
require_relative "t"
require "heapdump"
require "objspace"
require "json"

dir = ARGV.fetch(0)
ours = File.join(dir, "ours.json")
theirs = File.join(dir, "theirs.json")
V = RUBY_VERSION[/\A\d+\.\d+/].split(".").map(&:to_i)
def at_least(major, minor) = (V <=> [major, minor]) >= 0
SHAPES = ObjectSpace.respond_to?(:dump_shapes) # dump_all(shapes:) from 3.2

# ---- a heap with every kind of object in it ----
class Foo; def initialize; @a = 1; @b = "x"; end; end
module Bar; class Baz < Foo; end; end
class Wide; def initialize; 12.times { |i| instance_variable_set(:"@w#{i}", i) }; end; end
# more shape variations than a class may have (8): later objects of the
# class are "too complex" (3.2+: too_complex_shape)
class Complexed; end
complexed = Array.new(12) { |i| Complexed.new.tap { |o| o.instance_variable_set(:"@v#{i}", i) } }
with_ivar = Hash.new { 2 }.tap { |h| h.instance_variable_set(:@x, Object.new) }
with_id = Object.new.tap(&:object_id) # 4.0: flags object_id:N, ivars counts it
str_ivar = +"has an ivar"
str_ivar.instance_variable_set(:@iv, 1) # 4.0: an IMEMO/fields whose class is the string
class Foo; @class_ivar = [1]; end
long = "y" * 300
shared = long[1..]                      # a shared string
cap = String.new("abc", capacity: 1000) # capacity != bytesize
big = Array.new(100) { |i| i }
$keep = [Foo.new, Bar::Baz.new, Wide.new, complexed, Hash.new { 1 }, with_ivar,
         Hash.new(0), Hash.new { 3 }.compare_by_identity, { a: 1 }, with_id, str_ivar,
         "caf\u00e9", "a\u0001\"\\", "\xff", "\xff".b, "chilled literal", :sym.to_s, :"dyn#{rand}",
         long, shared, cap, big, big[1..], [], Array.new(3),
         1.5, 1.5e300, 1e-320, -2.5e-300, Float::INFINITY, -Float::INFINITY, Float::NAN,
         2**100, 3r, Complex(1, 2), /re/, "abc".match(/b/), Struct.new(:a).new(1),
         Class.new, Module.new, Class.new.singleton_class, (1..3),
         Object.new.tap { |o| def o.x; end }, File.open(__FILE__)]
eval("def weird; 'w'; end", binding, "we\"ird\\path.rb", 1)

check "native-walk", HeapDump.native_walk?, "no native walk: #{HeapDump::NO_WALK_REASON}"
opts = SHAPES ? { shapes: true } : {}
out = File.open(theirs, "w") # before: File.open changes its path string
GC.start
GC.disable
# names: false, dump_all's fields only (ref_names is ours alone: names.sh
# checks that names: true changes nothing else)
HeapDump.dump(ours, names: false, **opts)
ObjectSpace.dump_all(output: out, **opts)
GC.enable
out.close
check_eq "dumper-is-the-walk", "heapdump", JSON.parse(File.read("#{ours}.hdmeta"))["dumper"]

# [records by address, roots [[category, refs]], shapes by id, kinds in file order]
def load(path)
  objs = {}
  roots = []
  shapes = {}
  kinds = []
  File.foreach(path) do |l|
    r = JSON.parse(l)
    case r["type"]
    when "ROOT" then roots << [r["root"], r["references"]]; kinds << "ROOT"
    when "SHAPE" then shapes[r["id"]] = r; kinds << "SHAPE"
    else objs[r["address"]] = r; kinds << "OBJ"
    end
  end
  [objs, roots, shapes, kinds.chunk_while { |x, y| x == y }.map(&:first)]
end

a, ra, sa, ka = load(ours)
b, rb, sb, kb = load(theirs)
puts "# Ruby #{RUBY_VERSION}: ours #{a.size} objects, dump_all #{b.size}"
check "sizeable-heap", a.size > 10_000, "only #{a.size} objects"
check_eq "record-kinds-in-dump_all-order", kb, ka
check_eq "same-root-categories-in-order", ra.map(&:first), rb.map(&:first)
# the first ROOT record adds the exact Ruby version (man 5 heapdump-dump)
first_root = JSON.parse(File.foreach(ours).first)
check_eq "root-record-fields", %w[type root references ruby_version], first_root.keys
check_eq "root-record-ruby-version", RUBY_VERSION, first_root["ruby_version"]
check_eq "other-root-records-fields", [%w[type root references]],
         File.foreach(ours).drop(1).take_while { |l| l.start_with?('{"type":"ROOT"') }.map { |l| JSON.parse(l).keys }.uniq

# Exception 1: objects only in dump_all's file. Reason: allocated after our
# walk, by the wrapper and dump_all (File, buffers, the sidecar's hashes).
# Bound: 300 (the dumpers allocate a fixed set, a few dozen to a few hundred).
only_a = a.keys - b.keys
only_b = b.keys - a.keys
check_eq "no-object-only-in-ours", [], only_a.first(3).map { |x| a[x] }
check "objects-only-in-dump_all-bounded", only_b.size <= 300, "#{only_b.size} > 300"
common = a.keys & b.keys
check_eq "same-heap-order", common, b.keys & a.keys

# Exception 2: fields dump_all reads from private struct layouts, left out
# by the walk (man 5 heapdump-dump). Bound: only these fields, only these
# types and IMEMO types, only these versions; everything else is compared.
OMITTED = []
if at_least(3, 3)
  OMITTED << ["mid", "IMEMO", "callinfo"] << ["called_id", "IMEMO", "callcache"] <<
    ["receiver_class", "IMEMO", "callcache"]
end
OMITTED << ["variation_count", "CLASS", nil] if at_least(3, 2) && !at_least(4, 0)
omitted = Hash.new(0)
# Exception 3: fields that change between the two dumps. Reason: the
# first dump's own method calls add call caches (references, memsize of
# classes and iseqs), age objects and set write-barrier bits (flags),
# compute a lazy coderange, open and close a scratch file (fd), grow the
# shape tree (edges, variation_count). Bound: 100 objects.
VOLATILE = %w[references memsize flags coderange fd edges variation_count].freeze
changed = []
diffs = []
order = []
common.each do |addr|
  x = a[addr]
  y = b[addr].dup
  OMITTED.each do |key, type, imemo|
    next unless y.key?(key) && !x.key?(key) && y["type"] == type && (imemo.nil? || y["imemo_type"] == imemo)

    omitted[key] += 1
    y.delete(key)
  end
  changed << addr if VOLATILE.any? { |k| x[k] != y[k] }
  order << addr if x.keys.sort == y.keys.sort && x.keys != y.keys
  x2 = x.reject { |k, _| VOLATILE.include?(k) }
  y2 = y.reject { |k, _| VOLATILE.include?(k) }
  diffs << [addr, x2, y2] if x2 != y2
end
check "same-fields-and-values", diffs.empty?,
      "#{diffs.size} objects differ, e.g. " + diffs.first(3).map { |_, x, y| "ours #{x} theirs #{y}" }.join(" / ")
check "same-field-order", order.empty?,
      "#{order.size} objects, e.g. ours #{a[order[0]]&.keys} theirs #{b[order[0]]&.keys}"
check "changed-between-dumps-bounded", changed.size <= 100,
      "#{changed.size} > 100: #{changed.map { |d| a[d]['type'] }.tally}"
puts "# omitted: #{omitted.inspect}; changed: #{changed.map { |d| a[d]['type'] }.tally}"
puts "# only in dump_all: #{only_b.map { |d| b[d]['type'] }.tally}"

# SHAPE records (3.2+, asked for with shapes: true). Exception 4: shapes
# only in dump_all's file (made after ours was written: the dumpers'
# objects). Bound: 50. Their edges and memsize grow in between (volatile).
if SHAPES
  check "shapes-written", sa.size > 10, "#{sa.size} SHAPE records"
  check_eq "no-shape-only-in-ours", [], sa.keys - sb.keys
  check "shapes-only-in-dump_all-bounded", (sb.keys - sa.keys).size <= 50, "#{(sb.keys - sa.keys).size} > 50"
  sdiff = (sa.keys & sb.keys).reject do |id|
    sa[id].reject { |k, _| %w[edges memsize].include?(k) } == sb[id].reject { |k, _| %w[edges memsize].include?(k) }
  end
  check "same-shape-records", sdiff.empty?, "#{sdiff.size} differ, e.g. #{sa[sdiff[0]]} / #{sb[sdiff[0]]}"
end

# What the heap above puts in the records, per version: the fields the
# walker writes by mirrored private flags are proven here, on this Ruby.
by_type = ->(h, type) { h.values.select { |r| r["type"] == type } }
hashes = by_type.(a, "HASH")
check "hash-default-written", hashes.count { |r| r.key?("default") } >= 3, "#{hashes.count { |r| r.key?('default') }} with default"
strings = by_type.(a, "STRING")
check "string-shared-written", strings.any? { |r| r["shared"] }
check "string-capacity-written", strings.any? { |r| r["capacity"] == 1000 }
check "string-chilled-written", strings.any? { |r| r["chilled"] } if at_least(3, 4)
if at_least(3, 2)
  check "too-complex-written", by_type.(a, "OBJECT").any? { |r| r["too_complex_shape"] }
  check "slot-size-everywhere", a.values.all? { |r| r["slot_size"].is_a?(Integer) }
end
if at_least(4, 0)
  fields = a.values.select { |r| r["imemo_type"] == "fields" }
  check "imemo-fields-with-owner-class", fields.any? { |r| r["class"] && r["shape_id"] }
  check "valued-flags", a.values.any? { |r| r.dig("flags", "age").is_a?(Integer) } &&
                        a.values.any? { |r| r.dig("flags", "object_id").is_a?(Integer) }
end

# The run-time proof of the private flag bits can fail (then the walk is
# not used): the same check on objects that do not have them.
why = HeapDump.send(:_self_check, [Hash.new(0), proc {}, Hash.new { 1 }, "x" * 5000, ("s" * 5000)[1..], +"x", +"y"])
check "self-check-rejects-wrong-bits", why.is_a?(String), why.inspect
check "self-check-passes-here", HeapDump.send(:self_check).nil?, HeapDump.send(:self_check).inspect
# shapes: true, an id, or nothing; elsewhere an ArgumentError
if SHAPES
  since_id = sa.keys.max
  HeapDump.dump(File.join(dir, "since.json"), shapes: since_id)
  n = File.foreach(File.join(dir, "since.json")).count { |l| l.include?('"type":"SHAPE"') }
  check "shapes-since-id", n >= 1 && n < sa.size, "#{n} SHAPE lines from id #{since_id} (#{sa.size} in all)"
  HeapDump.dump(File.join(dir, "none.json"))
  check "no-shapes-by-default", File.foreach(File.join(dir, "none.json")).none? { |l| l.include?('"type":"SHAPE"') }
  check_raises("shapes-bad-value", ArgumentError) { HeapDump.dump(File.join(dir, "bad.json"), shapes: -1) }
else
  check_raises("shapes-needs-3.2", ArgumentError) { HeapDump.dump(File.join(dir, "bad.json"), shapes: true) }
end
check_eq "bad-shapes-writes-nothing", false, File.exist?(File.join(dir, "bad.json"))
