# compacting.rb - a rate limiter that never forgets a client, in an app
# that runs with GC.auto_compact = true (as some servers do, to share
# more pages between forked workers): every full GC compacts the heap, so
# between two dumps the old objects move. The limiter keeps a bucket per
# client key (a Struct of counters and the key's String) in a Hash
# that nothing prunes, while each request also makes garbage that leaves
# holes for the compaction to fill.
#
#   ruby compacting.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Compaction moves the objects allocated before tracing began (the
# interpreter's own, the program's constants), which have no allocation
# generation: found only at their new address, they looked new, and the
# leak was diluted among their holders (68% instead of 99% on 3.4 and
# 4.0). With the gem, its tracer lost the sites of moved objects, and the
# verdict named the wrong holder on 3.3 to 4.0. Ruby 3.3's objspace tracer
# loses them too: dump_all's dumps on 3.3 are said to be unreliable.
#
# Truth: per client of phase A its bucket and its key String.
# Holder: RateLimiter @buckets.

require_relative "harness"

Bucket = Struct.new(:key, :tokens, :stamp)

class RateLimiter
  def initialize
    @buckets = {}
  end

  def allow?(key, now)
    b = (@buckets[key] ||= Bucket.new(key, 10, now)) # the bug: never pruned
    b.tokens -= 1
    b.stamp = now
    b.tokens >= 0
  end

  def bucket(key) = @buckets[key]
end

LIMITER = RateLimiter.new
# old data of the app, made before the leak: what compaction moves
CATALOG = Array.new(4_000) { |i| "sku-#{i}-#{"x" * (i % 40)}" }.freeze

GC.auto_compact = true if GC.respond_to?(:auto_compact=)

$leaked = [0, 0]

def request(id, counting)
  # frozen, so that the Hash keeps this String as its key, not a copy
  key = "client:#{id * 7919 % 100_003}:#{CATALOG[id % CATALOG.size][0, 12]}".freeze
  LIMITER.allow?(key, 1_700_000_000 + id)
  Array.new(60) { |i| "tmp #{id} #{i}" } # garbage: holes to compact
  return unless counting
  b = LIMITER.bucket(key)
  n, bytes = Scenario.measure([b, b.key])
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

# Ruby 3.3's own tracer (objspace, which dump_all reads) loses the
# allocation of an object compaction moves: its dumps cannot tell the
# leak, and the report must say so (the gem's tracer follows them)
lost = !Scenario.gem? && RUBY_VERSION.start_with?("3.3.")
Scenario.truth(leaks: true, holder_gem: ["@buckets"], holder_dump_all: ["RateLimiter"],
               objects: $leaked[0], bytes: $leaked[1], warned: lost ? "trace-lost" : nil,
               note: "400 client buckets of phase A and their key Strings, in a heap that auto_compact moves at every full GC")
