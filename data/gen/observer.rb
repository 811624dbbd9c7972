# observer.rb - an observer leak beside a decoy, dumped three times, for
# the tests of `heapdump leaks BEFORE AFTER LATER` (which holder gets the
# leak when the dumps disagree on who holds it).
#
#   ruby --disable-gems observer.rb OUTDIR
#
# Writes, in order:
#   leak_observer_before.json   after a warm-up of 60 requests
#   leak_observer_after.json    after 400 more requests (phase A)
#   leak_observer_later.json    after 400 more requests (phase B)
#
# Every request allocates a Request holding a path String and a body
# String, then
#   - subscribes a block to BUS, an EventBus: the block closes over the
#     request, so BUS -> @subscribers Array -> Proc -> IMEMO/env -> Request
#     keeps every request forever. This is the leak.
#   - puts the request into RECENT, a ring of the last RING_SIZE requests.
#     This is the decoy: it holds requests, but lets each go RING_SIZE
#     requests later.
# In AFTER the ring holds the last 50 requests of phase A beside the bus;
# in LATER it holds phase B's, and the only holder of phase A's requests
# is the bus. A leak report on AFTER's graph gives the ring a share of the
# leak; on LATER's graph it gives everything to the bus.
#
# Allocation tracing is on from the start, GC.start runs before and after
# each phase (no compaction), and every dump goes through the same code path, so the
# only objects of phase A still alive in LATER are its requests, their
# strings, procs and environments (4 + 1 objects a request: Request, path,
# body, Proc, IMEMO/env).

require "objspace"

(HEAPDUMP = ENV["DUMPER"] == "heapdump") ? (require "heapdump"; HeapDump.trace_allocations_start) : ObjectSpace.trace_object_allocations_start

RING_SIZE = 50

class Request
  attr_reader :id, :path, :body

  def initialize(id)
    @id = id
    @path = "/orders/#{id}"
    @body = "payload #{id} " + ("x" * 40)
  end
end

class EventBus
  def initialize
    @subscribers = []
  end

  def subscribe(&block)
    @subscribers << block
  end

  def publish(event)
    @subscribers.each { |s| s.call(event) }
  end
end

# The decoy: a bounded ring buffer of the last RING_SIZE requests.
class RecentRequests
  def initialize(size)
    @ring = Array.new(size)
    @next = 0
  end

  def <<(req)
    @ring[@next % @ring.size] = req
    @next += 1
  end
end

BUS = EventBus.new
RECENT = RecentRequests.new(RING_SIZE)

def handle(id)
  req = Request.new(id)
  RECENT << req
  BUS.subscribe { |event| req.path if event == req.id } # the leak
  req.body.bytesize
end

PHASES = [
  [:before, (0...60)],     # warm-up: the ring is full of these
  [:after, (60...460)],    # phase A: 400 requests
  [:later, (460...860)],   # phase B: 400 more
]

# Output files opened and written once before the first dump, and one dump
# thrown away, as in leak.rb: a File's write lock and dump_all's inline
# caches are allocated on first use and would look new in the next dump.
def open_outputs(dir)
  files = PHASES.map do |name, _|
    f = File.open(File.join(dir, "leak_observer_#{name}.json"), "wb")
    f.write("warm-up\n")
    f.flush
    f
  end
  ObjectSpace.dump_all(output: files[0])
  files.each do |f|
    f.flush
    f.rewind
    f.truncate(0)
  end
  files
end

# GC.start before a phase's requests too: they then get a generation above
# the newest of the previous dump (the diff's rule 2, not the address).
def run_phase(range, out)
  GC.start
  range.each { |id| handle(id) }
  GC.start
  HEAPDUMP ? HeapDump._dump(out, false, false, nil, nil, true, TOTALS) : ObjectSpace.dump_all(output: out).flush
  # (nothing after the dump: a constant read here would be a new cache)
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
  fds = PHASES.map { |name, *| IO.sysopen(File.join(dir, "leak_observer_#{name}.json"), "w", 0o644) }
  HeapDump._dump(IO.sysopen("/dev/null", "w"), false, false, nil, nil, true, TOTALS)
  fds
end

dir = ARGV[0] or abort "usage: ruby observer.rb OUTDIR"
files = HEAPDUMP ? heapdump_outputs(dir) : open_outputs(dir)
PHASES.each_with_index { |(_, range), i| run_phase(range, files[i]) }
files.each { |f| f.close unless HEAPDUMP }
