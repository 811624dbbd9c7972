# leak.rb - a tiny "app" that leaks, dumped three times, for diff/graph tests.
#
#   ruby --disable-gems leak.rb OUTDIR     # native: writes the four files below
#   node run_wasm.mjs 3.4 leak.rb OUTDIR   # wasm: the script writes to /out
#                                          # (ENV["HEAPDUMP_OUT"]), copied to OUTDIR
#
# Writes, in order:
#   leak_before.json    after a warm-up of 21 requests
#   leak_after.json     after 40 more requests (phase A)
#   leak_later.json     after 40 more requests (phase B)
#   leak_expected.json  what a correct diff must find (written by this script)
#
# Every request allocates a Request object holding a path String, a params
# Hash with two fresh String values, and a body String: 6 heap objects. Every
# 4th request is kept forever in LeakyCache::CACHE; the others are released.
# Allocation tracing is on from the start, so each object has a generation.
#
# The "leak" is the classic three-dump answer: objects present in AFTER that
# were not in BEFORE and are still present in LATER. Identity across dumps is
# (address, generation), not the address alone: a session store that is alive
# in BEFORE is emptied at the start of phase A, so its slots are reused by
# phase A objects, and some leaked objects sit at addresses that BEFORE used
# for other objects. GC.start runs before every dump (no compaction).
#
# leak_expected.json lists, for phase A (before -> after, still in later) and
# phase B (after -> later), the count, types and addresses of the leaked
# objects, read from the live objects after the last dump.
#
# Options (ENV; none is set for leak_*.json, leak_ruby3.4_* and the native
# leak_rubyX.Y.Z_* sets), used for the 4.0 set leak_ruby4.0.1_ivar_*:
#   HOLDER=ivar  the cache is a class-level instance variable, @cache of
#                LeakyCache, not the constant CACHE: on 4.0 it hangs off
#                the class's IMEMO/fields object (class -> fields -> Hash)
#   OBJECT_ID=1  each request's objects are asked for their object_id, so
#                4.0 dumps carry flags.object_id (and each String and Hash
#                gets an IMEMO/fields of its own to keep it); the expected
#                objects get a 4th field, the object_id
#   COMPACT=1    GC.compact after the GC.start before every dump: live
#                objects move, so an address is no identity at all

require "objspace"

IVAR_HOLDER = ENV["HOLDER"] == "ivar"
OBJECT_IDS = ENV["OBJECT_ID"] == "1"
COMPACT = ENV["COMPACT"] == "1"

(HEAPDUMP = ENV["DUMPER"] == "heapdump") ? (require "heapdump"; HeapDump.trace_allocations_start) : ObjectSpace.trace_object_allocations_start

class Request
  attr_reader :id, :path, :params, :body

  def initialize(id)
    @id = id
    @path = "/items/#{id}"
    @params = { "user" => "user#{id % 3}", "page" => (id % 7).to_s }
    @body = "payload #{id} " + ("x" * 40)
  end

  # The heap objects one request owns (the Integer id is immediate).
  def objects
    [self, @path, @params, @params["user"], @params["page"], @body]
  end
end

class LeakyCache
  if IVAR_HOLDER
    @cache = {}

    def self.handle(id)
      req = Request.new(id)
      req.objects.each(&:object_id) if OBJECT_IDS
      @cache[id] = req if (id % 4).zero?       # the leak, through an ivar
      req.body.bytesize + req.params.size
    end

    def self.cache
      @cache
    end
  else
    CACHE = {}

    def self.handle(id)
      req = Request.new(id)
      req.objects.each(&:object_id) if OBJECT_IDS
      CACHE[id] = req if (id % 4).zero?          # the leak
      req.body.bytesize + req.params.size
    end

    def self.cache
      CACHE
    end
  end
end

class Session
  def initialize(n)
    @token = "session-token-#{n}"
    @data = ["cart #{n}", "prefs #{n}"]
  end
end

SESSIONS = []

# [name, request ids, sessions to create first]. All three dumps take the
# same code path, so call sites and inline caches are warm from the first one
# and the only objects retained between dumps are the cached requests.
# Each phase ends with a leaking request: conservative stack marking can keep
# the objects of the last request alive through GC.start (seen on wasm), and
# those should be objects that are retained anyway.
PHASES = [
  [:before, (0..20), 20],   # warm-up: 20 sessions, 21 requests (6 leak)
  [:after, (21..60), 0],    # phase A: sessions dropped, 40 requests (10 leak)
  [:later, (61..100), 0],   # phase B: 40 requests (10 leak)
]
GC_COUNTS = [nil, nil, nil]

# The output files are opened, and written to once, before anything is
# dumped: a File allocates its write lock on first write, and objspace.rb's
# dump_all allocates inline caches on first call. Done later, those objects
# would show up as "new" in the next dump.
def open_outputs(dir)
  files = PHASES.map do |name, _, _|
    f = File.open(File.join(dir, "leak_#{name}.json"), "wb")
    f.write("warm-up\n")
    f.flush
    f
  end
  ObjectSpace.dump_all(output: files[0])       # warm-up dump, thrown away
  files.each do |f|
    f.flush
    f.rewind
    f.truncate(0)
  end
  files
end

# Moves every live object that can move (GC.compact alone moves few: it only
# fills holes at the start of the heap). Done before a phase's requests, so
# what the compaction allocates itself is older than the phase's objects.
def compact
  GC.verify_compaction_references(toward: :empty, expand_heap: true)
end

def run_phase(i, out)
  _, range, sessions = PHASES[i]
  SESSIONS.clear                                # frees slots that phase A reuses
  GC.start
  sessions.times { |n| SESSIONS << Session.new(n) }
  compact if COMPACT
  range.each { |id| LeakyCache.handle(id) }
  GC.start
  GC_COUNTS[i] = GC.count
  # the inline caches of the two lines above, allocated on the first run,
  # would be the newest objects of BEFORE (generation G, which falls back
  # to the address, and they move): one more GC makes them older than G
  # (which leaves the constant cache of the line below at G)
  GC.start if COMPACT
  HEAPDUMP ? HeapDump._dump(out, false, false, nil, nil, true, TOTALS) : ObjectSpace.dump_all(output: out).flush
  # (nothing after the dump: a constant read here would be a new cache)
end

def leaked_objects(range)
  range.select { |id| (id % 4).zero? }.flat_map { |id| LeakyCache.cache.fetch(id).objects }
end

# A small JSON writer: enough for the ASCII strings, integers, arrays and
# hashes below. (Requiring the json library at this point would add it to no
# dump, but under node's WASI it crashes node after files have been closed.)
def json_text(v, indent = "")
  inner = indent + "  "
  case v
  when Hash
    return "{}" if v.empty?
    "{\n" + v.map { |k, x| "#{inner}#{json_text(k.to_s)}: #{json_text(x, inner)}" }.join(",\n") + "\n#{indent}}"
  when Array
    return "[]" if v.empty?
    if v.all? { |x| x.is_a?(Integer) || x.is_a?(String) }
      "[" + v.map { |x| json_text(x) }.join(", ") + "]"
    else
      "[\n" + v.map { |x| inner + json_text(x, inner) }.join(",\n") + "\n#{indent}]"
    end
  when String
    "\"" + v.gsub(/["\\]/) { |c| "\\" + c } + "\""
  when Integer
    v.to_s
  when nil
    "null"
  else
    raise ArgumentError, "json_text: #{v.class}"
  end
end

def generation_of(obj)
  HEAPDUMP ? HeapDump.allocation_site(obj)&.fetch(3) : ObjectSpace.allocation_generation(obj)
end

def leak_expected_json
  doc = {
    "ruby" => RUBY_VERSION,
    "platform" => RUBY_PLATFORM,
    "script" => "data/gen/leak.rb",
    "rule" => "leaked = objects in AFTER that are not in BEFORE and are still in LATER; " \
              "identity is (address, generation); GC.start before every dump",
    "gc_count_at_dump" => PHASES.each_with_index.map { |(k, _, _), i| [k.to_s, GC_COUNTS[i]] }.to_h,
    "requests" => PHASES.map { |k, r, _| [k.to_s, { "first" => r.first, "last" => r.max, "count" => r.size }] }.to_h,
    "objects_per_request" => 6,
    "object_fields" => %w[address type generation],
  }
  opts = { "HOLDER" => IVAR_HOLDER ? "ivar" : nil, "OBJECT_ID" => OBJECT_IDS ? "1" : nil,
           "COMPACT" => COMPACT ? "1" : nil, "DUMPER" => HEAPDUMP ? "heapdump" : nil }.compact
  unless opts.empty?
    doc["options"] = opts
    doc["object_fields"] << "object_id" if OBJECT_IDS
    doc["rule"] = doc["rule"].sub("identity is (address, generation)", "identity is the object_id") if OBJECT_IDS
    doc["rule"] += "; GC.compact before every dump" if COMPACT
  end
  { "leaked" => [PHASES[1][1], "before", "after"],
    "leaked_later" => [PHASES[2][1], "after", "later"] }.each do |key, (range, from, to)|
    objs = leaked_objects(range)
    by_type = Hash.new(0)
    objs.each { |o| by_type[ObjectSpace.dump(o)[/"type":"(\w+)"/, 1]] += 1 }
    doc[key] = {
      "between" => [from, to],
      "request_ids" => range.select { |id| (id % 4).zero? },
      "count" => objs.size,
      "by_type" => by_type.sort.to_h,
      "objects" => objs.map do |o|
        d = ObjectSpace.dump(o)
        e = [d[/"address":"(0x\h+)"/, 1], d[/"type":"(\w+)"/, 1], generation_of(o)]
        OBJECT_IDS ? e << o.object_id : e
      end,
    }
  end
  doc["released_requests_phase_a"] = PHASES[1][1].count { |id| !(id % 4).zero? }
  json_text(doc) + "\n"
end

# DUMPER=heapdump (the top of this file keeps its line count: its lines
# are allocation sites in the dumps): the dumps are written by the
# heapdump gem's walk with reference names and allocation sites from its
# own tracer (run with -I for the built extension and src/lib:
# data/README.md). Through the primitive under HeapDump.dump(names: true),
# on a file opened before, as dump_all(output:) is used above: the public
# method allocates a path, the process metadata and the sidecar on every
# call, which a three-dump diff would count as new objects (and the
# primitive fills the same TOTALS Hash each time). The outputs are file
# descriptors; one full HeapDump.dump is thrown away first (it loads json
# for the sidecar), then one primitive dump to /dev/null.
TOTALS = { objects: 0, roots: 0, memsize: 0, memsize_of_all: 0, bytes: 0 }

def heapdump_outputs(dir)
  warm = File.join(dir, "warm-up.json")
  HeapDump.dump(warm, names: true)
  File.unlink(warm, *HeapDump.sidecar_paths(warm).select { |p| File.exist?(p) })
  fds = PHASES.map { |name, *| IO.sysopen(File.join(dir, "leak_#{name}.json"), "w", 0o644) }
  HeapDump._dump(IO.sysopen("/dev/null", "w"), false, false, nil, nil, true, TOTALS)
  fds
end

dir = ARGV[0] || ENV["HEAPDUMP_OUT"]
abort "usage: ruby leak.rb OUTDIR" unless dir
files = HEAPDUMP ? heapdump_outputs(dir) : open_outputs(dir)
PHASES.each_index { |i| run_phase(i, files[i]) }
files.each { |f| f.close unless HEAPDUMP }
File.binwrite(File.join(dir, "leak_expected.json"), leak_expected_json)

