# scenario.rb - builds a fixed set of objects covering every object type and
# the known oddities of the ObjectSpace.dump_all format, then writes one dump.
#
# Runs unchanged on Ruby 3.1 .. 4.0 (no syntax newer than 3.1), both on the
# native Debian ruby and on the ruby.wasm builds (no threads, no host files).
#
#   ruby --disable-gems scenario.rb OUT.json      # native: writes OUT.json
#   (wasm) eval'd by run_wasm.mjs with no ARGV: the dump is left base64-encoded
#          in $heapdump_result and node writes the decoded bytes.
#
# Options come from ENV:
#   TRACE=1  ObjectSpace.trace_object_allocations_start before building, so
#            scenario objects carry file/line/method/generation
#   SINCE=1  partial dump: dump_all(since: G), G = GC.count taken half way
#   FULL=1   dump_all(full: true): free slots appear as NONE lines
#   CLEAN=1  leave out the two constructs that make real dumps invalid JSON:
#            the eval with a double quote in its file name (file is written
#            raw) and the non-ASCII method name allocating an object (garbled
#            by the 3.0/3.1 escaping bug). Everything else is identical.
#
# The objects are deterministic; addresses of course are not.

require "objspace"
require "weakref"

TRACE = ENV["TRACE"] == "1"
SINCE = ENV["SINCE"] == "1"
FULL = ENV["FULL"] == "1"
CLEAN = ENV["CLEAN"] == "1"

ObjectSpace.trace_object_allocations_start if TRACE

# ---------------------------------------------------------------- part 1 ---

# Strings
module Strings
  ASCII = "plain ascii string"
  UTF8 = "h\u00e9llo w\u00f6rld \u2713 \u65e5\u672c"          # valid UTF-8, no value in the dump
  BINARY = "\xff\x00\xfe\x01binary".b                          # ASCII-8BIT: no encoding field
  BROKEN = "bad \xff\xfe utf8".dup.force_encoding("UTF-8")     # broken coderange
  EMPTY = ""                                                   # 3.2+: no value field
  EMPTY_NEW = String.new
  FROZEN_LIT = "a frozen literal".freeze                       # fstring
  CHILLED = "a plain literal, chilled on 3.4+"
  ESCAPES = "tab\there \"quoted\" back\\slash nl\n cr\r nul\0 ctl\x01\x1b del\x7f slash/"
  LONG = ("0123456789abcdef" * 128).freeze                     # 2 KB value on one line
  BIG = "shared root " * 20
  SHARED_TAIL = BIG[12..-1]                                    # shares BIG's buffer
  SHARED_DUP = LONG.dup                                        # shares LONG's buffer
  UTF16 = "wide".encode("UTF-16LE")                            # ASCII-incompatible: never a value
  SJIS = "\u3042".encode("Shift_JIS")
  INTERP = 10.times.map { |i| "interpolated #{i}" }
end

# Symbols: static ones are not heap objects, dynamic ones are
DYN_SYMBOLS = 12.times.map { |i| "dynamic_symbol_#{i}".to_sym }
UTF8_SYMBOL = "s\u00fcmbol_#{DYN_SYMBOLS.size}".to_sym

# Arrays
module Arrays
  EMPTY = []
  EMBEDDED = [1, "two", :three]
  NESTED = [[1, [2, [3, [4]]]], {}, []]
  BIG = 100.times.map { |i| "element #{i}" }
  SHARED = BIG[10..-1]                                         # shared array
  INTS = (1..500).to_a                                         # immediates: no references
  FROZEN = %w[a b c].freeze
end

# Hashes
module Hashes
  EMPTY = {}
  SMALL = { "a" => 1, :b => "two", 3 => [3] }
  BIG = 40.times.each_with_object({}) { |i, h| h["key#{i}"] = "value#{i}" }
  DEFAULT_PROC = Hash.new { |h, k| h[k] = [] }
  DEFAULT_PROC["x"] << 1
  DEFAULT_VALUE = Hash.new(5)
  IDENTITY = {}.compare_by_identity
  IDENTITY["k"] = "v"
end

# Struct, numbers, regexp, match data, range
Point = Struct.new(:x, :y)
KwPoint = Struct.new(:x, :y, keyword_init: true)
POINT = Point.new(1, 2)
KW_POINT = KwPoint.new(x: "kx", y: "ky")

module Numbers
  FLOATS = [3.14, 1e300, -1e-300, 0.1, -0.0, Float::INFINITY, -Float::INFINITY, Float::NAN, 1.0 / 3]
  BIGNUM = 2**100
  NEG_BIGNUM = -(3**80)
  RATIONAL = Rational(1, 3)
  BIG_RATIONAL = Rational(2**70, 3)
  COMPLEX = Complex(1, 2)
  FLOAT_COMPLEX = Complex(1.5, 2**70)
end

REGEXP = /(?<num>\d+)-(?<word>\w+)/
DYN_REGEXP = Regexp.new("dyn[a-z]+#{DYN_SYMBOLS.size}", Regexp::IGNORECASE)
MATCH = REGEXP.match("order 123-abc done")
RANGES = [(1..10), ("a".."z"), (1.5...2**70), (nil..5), Range.new("aa", "zz", true)]

# File/IO: an open file and a closed one (fd -1 on the FILE line)
OBJSPACE_RB = $LOADED_FEATURES.find { |f| f.end_with?("/objspace.rb") }
OPEN_FILE = File.open(OBJSPACE_RB, "rb")
CLOSED_FILE = File.open(OBJSPACE_RB, "rb")
CLOSED_FILE.close

# Proc, lambda, method objects, enumerator, binding
PROC = proc { |a| a.to_s }
LAMBDA = ->(a, b = 2) { a + b }
CAPTURED = "captured by a closure"
CLOSURE = lambda { CAPTURED.size }
METHOD_OBJ = 1.method(:+)
UNBOUND = String.instance_method(:upcase)
ENUMERATOR = [1, 2, 3].each_slice(2)
BINDING = binding

# Classes and modules
module Greeter
  def greet
    "hello from #{self.class}"
  end
end

module Loud
  def greet
    super.upcase
  end
end

module Registry
  def registry
    @registry ||= []
  end
end

class Animal
  extend Registry                              # ICLASS in Animal's singleton chain
  def initialize(name)
    @name = name
  end
end

class Dog < Animal
  include Greeter                              # ICLASS
  prepend Loud                                 # ICLASS + origin
  def initialize(name, breed)
    super(name)
    @breed = breed
  end
end

class << Animal                                # singleton class of a class
  def create(*args)
    new(*args)
  end
end

module Outer
  module Middle
    class Inner
      VALUE = "deeply nested constant"
    end
  end
end

class Ünicode                                   # non-ASCII class name, raw UTF-8 in "name"
  LABEL = "stra\u00dfe"
end

# Anonymous classes must not be assigned to a constant (that names them), so
# they are kept in a Hash.
ANON = {}
ANON[:class] = Class.new(Animal) { def speak; "..."; end }
ANON[:module] = Module.new { def helper; end }
ANON[:outer] = Class.new
ANON[:outer].const_set(:Inner, Class.new)      # name "#<Class:0x...>::Inner"
ANON[:instance] = Class.new { attr_accessor :v }.new
ANON[:instance].v = "ivar of an anonymous-class instance"
ANON[:extended] = Object.new.extend(ANON[:module])   # ICLASS of an anonymous module
if Module.method_defined?(:set_temporary_name)  # 3.3+
  ANON[:temporary] = Class.new.set_temporary_name("temporary <named> class")
end

DOG = Dog.new("rex", "collie")
CAT = Animal.create("tom")
SINGLETON_OBJ = Object.new
def SINGLETON_OBJ.hello                         # singleton class of an object
  "hi"
end
EXTENDED_OBJ = Object.new.extend(Greeter)

# Objects with ivars
class Bag
  def initialize(n)
    n.times { |i| instance_variable_set("@iv#{i}", "ivar #{i}") }
  end
end
BAGS = [Bag.new(0), Bag.new(1), Bag.new(3), Bag.new(12)]   # 12 > embedded capacity

class Chaotic                                   # many shape variations -> too complex (3.2+)
end
CHAOS = 12.times.map do |i|
  o = Chaotic.new
  o.instance_variable_set("@first#{i}", i)
  o.instance_variable_set(:@common, i)
  o
end
REMOVED = Chaotic.new
REMOVED.instance_variable_set(:@a, 1)
REMOVED.instance_variable_set(:@b, 2)
REMOVED.remove_instance_variable(:@a)

FROZEN_OBJ = Object.new.freeze
WITH_ID = Object.new
WITH_ID.object_id                               # 4.0: flags.object_id

begin
  raise ArgumentError, "boom"
rescue ArgumentError => e
  EXCEPTION = e                                 # internal ivars (mesg, bt)
end

# Weak references
WEAK_TARGET = "weakly referenced"
WEAK_REF = WeakRef.new(WEAK_TARGET)
WEAK_MAP = ObjectSpace::WeakMap.new
WEAK_MAP[WEAK_TARGET] = Object.new
if defined?(ObjectSpace::WeakKeyMap)            # 3.3+
  WEAK_KEY_MAP = ObjectSpace::WeakKeyMap.new
  WEAK_KEY_MAP[WEAK_TARGET] = "wkm value"
end
SET = Set.new(%w[x y z]) if defined?(Set)          # core in 3.2+ (autoloaded), not loaded on 3.1

# ---------------------------------------------------------------- part 2 ---
# With SINCE=1 only the objects allocated from here on are dumped.

if SINCE
  GC.start
  SINCE_GEN = GC.count
end

# A linked list of 50 nodes kept alive by a constant
class ListNode
  attr_reader :value, :next_node
  def initialize(value, next_node)
    @value = value
    @next_node = next_node
  end
end
LIST_HEAD = (0...50).reverse_each.inject(nil) { |nxt, i| ListNode.new("node #{i}", nxt) }

# A little leak: a class-level cache keeps some per-request objects
class Request
  attr_reader :id, :body, :parts
  def initialize(id)
    @id = id
    @body = "request body #{id}"
    @parts = ["part a #{id}", "part b #{id}"]
  end
end

class LeakyCache
  CACHE = {}
  def self.handle(id)
    req = Request.new(id)
    CACHE[id] = req if id % 3 == 0             # requests 0, 3, 6, ... leak
    req.body.size
  end
end
30.times { |i| LeakyCache.handle(i) }

# Odd allocation sites
NEG_LINE = eval("Object.new", binding, "negative_line.rb", -5)      # line wraps to 2**64-5 (2**32-5 on wasm32)
EVAL_STRING = eval("'from eval ' + 'string'", binding, "(eval)", 1)
unless CLEAN
  WEIRD = eval("Object.new", binding, "we\"ird.rb", 7)              # file written raw: invalid JSON line
  class Object
    define_method(:"gr\u00fc\u00dfe_\u2603") { Object.new }          # 3.0/3.1: method name garbled
  end
  NON_ASCII_METHOD_RESULT = send(:"gr\u00fc\u00dfe_\u2603")
end

# ------------------------------------------------------------------ dump ---

GC.start
opts = {}
opts[:full] = true if FULL
opts[:since] = SINCE_GEN if SINCE
if ARGV[0] && !ARGV[0].empty?
  File.open(ARGV[0], "wb") { |f| ObjectSpace.dump_all(output: f, **opts) }
else
  $heapdump_result = [ObjectSpace.dump_all(output: :string, **opts)].pack("m0")
end
