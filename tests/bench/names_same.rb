# tests/bench/names_same.rb EXT_A EXT_B DIR [TARGET_MB] - whether two
# builds of the extension (directories holding heapdump_ext.so: say the
# one before a change and the one after) write the same dump of one heap,
# with names and without. Both are loaded into this process (each exports
# only its Init function); the heap is the application heap of gen_big.rb
# plus objects that take every path of the name writer (hash keys printed
# or not, long and non-ASCII names, arrays with special constants, shared
# arrays, records with more than 16 names, repeated references, generic
# ivars, a thread's locals and variables, globals). Each build dumps it,
# through the primitive under HeapDump.dump, after a full GC, into
# DIR/{a,b}_{on,off}.json, and the two are compared: byte-identical
# records, but for what the call itself puts on the stack (the ROOT
# machine_context line, the C stack, is left out; the method entry of the
# running dumper, _dump_a or _dump_b, which the current thread and its
# fiber reference, is written as one address in both). Prints "same: ..."
# per pair and exits 0, else the first differences and exits 1.
a_ext, b_ext, dir, target = ARGV
abort "usage: names_same.rb EXT_A EXT_B DIR [TARGET_MB]" unless dir
target ||= "8"
$LOAD_PATH.unshift(File.expand_path("../../src/lib", __dir__), File.expand_path(b_ext))
require File.join(File.expand_path(a_ext), "heapdump_ext.so")
HeapDump.singleton_class.send(:alias_method, :_dump_a, :_dump)
verbose, $VERBOSE = $VERBOSE, nil # its constants again
require File.join(File.expand_path(b_ext), "heapdump_ext.so")
$VERBOSE = verbose
HeapDump.singleton_class.send(:alias_method, :_dump_b, :_dump)
require "heapdump"
ENV["GEN_BIG_BUILD_ONLY"] = "1"
ARGV.replace(["/dev/null", target])
load File.expand_path("gen_big.rb", __dir__)
ObjectSpace.trace_object_allocations_stop

module Same
  Pair = Struct.new(:left, :right, :"odd member")
  class Wide
    def initialize(n)
      n.times { |i| instance_variable_set(:"@v#{i}", "ivar #{i}") }
      @shared = "shared"
      @again = @shared
    end
  end
  class Holder
    CONST_A = "a constant"
    CONST_B = [1, 2, "three"]
    @class_ivar = { "k" => "v" }
    instance_variable_set(:"@ünï", "non-ASCII ivar")
  end
end

s = "shared element"
long = "x" * 40
$same = {
  hash: {
    "plain" => "a", "with \"quote\"" => "b", "back\\slash" => "c", long => "d",
    "ünïcode" => "e", :sym => "f", :"dyn #{"sym"}" => "g", :"quote\"sym" => "h",
    42 => "i", -7 => "j", 2**70 => "k", 1.5 => "l", nil => "m", ["array", "key"] => "n",
    "same1" => s, "same2" => s, sym2: s
  },
  big_hash: Array.new(40) { |i| ["key#{i}", "value #{i}"] }.to_h,
  array: [1, "a", nil, :s, "b", 2.5, s, s, true, "c"] + Array.new(30) { |i| i.even? ? i : "e#{i}" },
  shared: (Array.new(100) { |i| "shared #{i}" })[10, 50],
  dup_array: [s] * 20,
  wide: Same::Wide.new(30),
  narrow: Same::Wide.new(2),
  pair: Same::Pair.new("left", s, "odd"),
  exivar: "generic ivar holder".tap { |x| x.instance_variable_set(:@note, "note") },
  exivar_array: [1, 2].tap { |x| x.instance_variable_set(:@meta, "meta") },
  holder: Same::Holder,
  lam: (lambda { |captured = "captured"| captured }),
}
$same_alias = $same
Thread.current[:same_local] = "a fiber local"
Thread.current.thread_variable_set(:same_var, "a thread variable")
# the files first (each dump closes its own), and each build once (what
# its first run leaves, caches of the methods it calls, is then in the heap
# for every dump). The loop keeps only special constants in its frame: the
# thread's stack is part of the dump.
FILES = %w[a_on b_on a_off b_off].freeze
FDS = ([File::NULL] * 2 + FILES.map { |f| File.join(dir, "#{f}.json") }).map do |p|
  IO.sysopen(p, File::WRONLY | File::CREAT | File::TRUNC, 0o644)
end.freeze
DUMPERS = %i[_dump_a _dump_b _dump_a _dump_b _dump_a _dump_b].freeze
NAMES = [true, true, true, true, false, false].freeze
TOTALS = {} # filled by each dump, the same keys: no new Hash
6.times do |i| # the first two: the warm-up, to /dev/null
  (i == 2 ? 4 : 1).times { GC.start } # then every survivor as old as it gets
  HeapDump.send(DUMPERS[i], FDS[i], false, false, nil, nil, NAMES[i], TOTALS)
end
require "json"

rc = 0
%w[on off].each do |f|
  text = %w[a b].map do |x|
    File.readlines(File.join(dir, "#{x}_#{f}.json")).reject { |l| l.start_with?(%q({"type":"ROOT", "root":"machine_context")) }
  end
  recs = text.map { |t| t.to_h { |l| r = JSON.parse(l); [r["address"] || r["root"] || r["type"], r] } }
  # the dumper method entry on the stack: one position of the thread
  # references differs, an IMEMO ment in both
  swap = {}
  recs[0].each do |k, r|
    next unless %w[VM/thread fiber].include?(r["struct"]) && (r2 = recs[1][k]) && r2["references"]
    (r["references"] || []).zip(r2["references"]).each do |x, y|
      next if x == y
      if swap && recs[0][x] && recs[1][y] && recs[0][x]["imemo_type"] == "ment" && recs[1][y]["imemo_type"] == "ment"
        swap[y] = x
      else
        swap = nil
      end
    end
  end
  if swap.nil? || swap.size > 1
    puts "DIFFERENT: names #{f}: the current thread and fiber differ in more than the dumper method entry"
    rc = 1
  end
  stack = /"struct":"(VM\/thread|fiber)"/
  b = text[1].map { |l| l.match?(stack) ? (swap || {}).reduce(l) { |s, (y, x)| s.gsub(y, x) } : l }
  named = text[0].count { |l| l.include?(%q("ref_names":[)) }
  if text[0] == b
    puts "same: names #{f}, #{text[0].size} records, #{named} with ref_names"
  else
    n = text[0].zip(b).count { |x, y| x != y }
    puts "DIFFERENT: names #{f}, #{text[0].size} records, #{named} with ref_names; #{n} lines differ (#{text[0].size} and #{b.size} lines)"
    text[0].zip(b).select { |x, y| x != y }.first(2).each { |x, y| puts "  a: #{x.to_s[0, 700]}", "  b: #{y.to_s[0, 700]}" }
    rc = 1
  end
  if (f == "on") != (named >= 1000)
    puts "FAILED: names #{f}: #{named} records with ref_names"
    rc = 1
  end
end
exit rc
