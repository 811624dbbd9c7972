# names.rb - a program whose every reference of interest has a known name,
# dumped by the heapdump gem with names (HeapDump.dump(names: true)), for
# the reference-name tests (tests/ext/names.sh, tests/cli/names_paths.sh).
#
#   ruby -I BUILD/ext-VERSION -I src/lib data/gen/names.rb OUTDIR [NAMES]
#
# Writes OUTDIR/names_before.json, names_after.json, names_later.json
# (NAMES=0 in the environment: names: false), and OUTDIR/names_expected.json:
# the address of each object below, read from the live objects after the
# dumps. PAIR=1 writes instead names_plain.json and names_named.json: one
# heap dumped twice, back to back, without then with names (through the
# primitive under HeapDump.dump, on files opened before, GC disabled), so
# that the two must have the same objects and references.
#
# What holds what (the expected printed names):
#   PriceCalculator::CACHE        a Hash               ::CACHE on PriceCalculator
#   CACHE["user_42"]              an Array             ["user_42"] on the Hash
#   CACHE[:admin], CACHE[42]      Strings              [:admin], [42]
#   the Array's element 3         a Request            3 ([3]) on the Array
#   Request @body                 a String             @body on the Request
#   Registry @entries (on the class Registry itself) an Array: @entries on the class
#     (4.0: on the class's IMEMO/fields object, whose class is Registry)
#   $names_global                 a String             $names_global on ROOT global_tbl
#   Thread.current[:request_id]   a String             thread[:request_id] on the Thread
#   thread_variable_set(:tenant)  a String             thread_variable[:tenant] on the Thread
#                                 (or the Hash of thread variables, see man 5 heapdump-dump)
#   CLOSURE (a lambda)            captures local `captured`: captured on its IMEMO/env
#   $keep (a lambda)              captures local `request` (a Request): request on the env
#   NESTED (a lambda in a block)  inner_local on the block's env; outer_local and
#                                 alias_local (one String) on the method's env, in that order
#   BOUND (a Binding)             bound_local on its env
#   Child#child_method, Helpers#helper   #child_method on Child, #helper on Helpers
#   Point.new(PAYLOAD, nil) .x    a String             .x on the Struct
#   class Child < Base; include Helpers   Child: (superclass)/(include)
require "heapdump"
require "objspace"

NAMES = ENV["NAMES"] != "0"

module Helpers
  def helper; end
end

class Base; end

class Child < Base
  include Helpers

  def child_method; end
end

class Request
  attr_reader :body

  def initialize(id)
    @id = id
    @body = "body of request #{id}"
  end
end

class PriceCalculator
  CACHE = {}
end

class Registry
  @entries = []

  class << self
    attr_reader :entries
  end
end

Point = Struct.new(:x, :y)

def make_closure
  captured = "captured by the closure"
  -> { captured }
end

def make_handler
  request = Request.new(99)
  -> { request }
end

def make_nested
  outer_local = "outer local"
  alias_local = outer_local
  [1].map { inner_local = "inner local"; -> { [outer_local, alias_local, inner_local] } }.first
end

def make_binding
  bound_local = "bound local"
  binding
end

$names_global = "held by a global"
Thread.current[:request_id] = "request id 7"
Thread.current.thread_variable_set(:tenant, "tenant acme")
CLOSURE = make_closure
$keep = make_handler
NESTED = make_nested
BOUND = make_binding
POINT = Point.new("point x", nil)
list = Array.new(5) { |i| Request.new(i) }
PriceCalculator::CACHE["user_42"] = list
PriceCalculator::CACHE[:admin] = "admin entry"
PriceCalculator::CACHE[42] = "forty-two entry"
Registry.entries << "registry entry"
CHILD = Child.new

def addr(o)
  ObjectSpace.dump(o)[/"address":"(0x\h+)"/, 1]
end

dir = ARGV[0] or abort "usage: ruby names.rb OUTDIR"
if ENV["PAIR"] == "1"
  totals = { objects: 0, roots: 0, memsize: 0, memsize_of_all: 0, bytes: 0 }
  warm = File.join(dir, "warm-up.json")
  HeapDump.dump(warm, names: true) # loads what a dump loads
  File.unlink(warm, *HeapDump.sidecar_paths(warm).select { |p| File.exist?(p) })
  fds = %w[plain named].map { |n| IO.sysopen(File.join(dir, "names_#{n}.json"), "w", 0o600) }
  GC.start
  GC.disable
  fds.zip([false, true]).each { |fd, names| HeapDump._dump(fd, false, false, nil, nil, names, totals) }
  GC.enable
else
  %w[before after later].each do |phase|
    GC.start
    HeapDump.dump(File.join(dir, "names_#{phase}.json"), names: NAMES)
    # something changes between the dumps: one more request in the list
    list << Request.new(list.size)
  end
end

expected = {
  "ruby" => RUBY_VERSION,
  "script" => "data/gen/names.rb",
  "names" => NAMES,
  "objects" => {
    "PriceCalculator" => addr(PriceCalculator), "CACHE" => addr(PriceCalculator::CACHE),
    "list" => addr(list), "request3" => addr(list[3]), "body3" => addr(list[3].body),
    "admin" => addr(PriceCalculator::CACHE[:admin]), "fortytwo" => addr(PriceCalculator::CACHE[42]),
    "Registry" => addr(Registry), "entries" => addr(Registry.entries),
    "global" => addr($names_global), "thread" => addr(Thread.current),
    "request_id" => addr(Thread.current[:request_id]),
    "tenant" => addr(Thread.current.thread_variable_get(:tenant)),
    "closure" => addr(CLOSURE), "captured" => addr(CLOSURE.call),
    "handler" => addr($keep), "request" => addr($keep.call), "request_body" => addr($keep.call.body),
    "nested" => addr(NESTED), "outer_local" => addr(NESTED.call[0]), "inner_local" => addr(NESTED.call[2]),
    "bound" => addr(BOUND), "bound_local" => addr(BOUND.local_variable_get(:bound_local)),
    "point" => addr(POINT), "point_x" => addr(POINT.x),
    "Child" => addr(Child), "Base" => addr(Base), "Helpers" => addr(Helpers)
  }
}
require "json"
File.write(File.join(dir, "names_expected.json"), JSON.pretty_generate(expected) + "\n")
