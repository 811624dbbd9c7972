# flusher.rb - issue 34, item 1 (a chain): a log flusher hung on a
# constant, FLUSHER, whose on_flush wraps the previous hook in a new
# lambda each time (prev, then the block). Every request adds a hook
# that closes over its RequestLog, so the chain FLUSHER @on_flush ->
# lambda -> env -> prev lambda -> ... grows by one link a request, in
# phase A and still in phase B: the links of phase A are reached, in
# LATER, only through the hundreds of links born after AFTER.
#
#   ruby flusher.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: per link of phase A the lambda, the block's Proc, the RequestLog
# and its strings (measured as they are made), plus the environments of
# the closures (IMEMO/env, measured as the IMEMO memsize phase A added
# after a full GC). Holder: FLUSHER's @on_flush.

require_relative "harness"

class Flusher
  def initialize
    @on_flush = ->(lines) { lines }
    @flushes = 0
  end

  # Adds a hook run after the ones before it; returns the new chain.
  def on_flush(&hook)
    prev = @on_flush
    @on_flush = ->(lines) { hook.call(prev.call(lines)) }
  end

  def flush(lines)
    @flushes += 1
    @on_flush.call(lines)
  end
end

FLUSHER = Flusher.new

class RequestLog
  attr_reader :request_id, :lines

  def initialize(id)
    @request_id = "req-#{id}-#{"%08x" % (id * 2654435761 % 2**32)}"
    @lines = Array.new(6) { |i| "[#{@request_id}] step #{i}: took #{i * 3 + id % 5} ms" }
    @tags = { "controller" => "OrdersController", "action" => "show #{id}" }
  end

  def owned = [self, @request_id, @lines, *@lines, @tags, *@tags.values]
end

$leaked = [0, 0]

def handle(id, counting)
  log = RequestLog.new(id)
  # the leak: a per-request hook on a process-wide flusher
  chain = FLUSHER.on_flush { |lines| lines.size > 100 ? lines : lines + [log.request_id] }
  if counting
    hook = chain.binding.local_variable_get(:hook)
    n, bytes = Scenario.measure(log.owned + [chain, hook])
    $leaked[0] += n
    $leaked[1] += bytes
  end
  FLUSHER.flush([]) if id % 50 == 0
end

(0...50).each { |id| handle(id, false) }
Scenario.dump("before")
imemo0 = Scenario.hidden(:T_IMEMO)
(50...450).each { |id| handle(id, true) }
imemo1 = Scenario.hidden(:T_IMEMO)
Scenario.dump("after")
(450...850).each { |id| handle(id, false) }
Scenario.dump("later")

Scenario.truth(leaks: true, holder_gem: ["@on_flush", "FLUSHER"], holder_dump_all: ["Flusher"],
               objects: $leaked[0] + imemo1[0] - imemo0[0], bytes: $leaked[1] + imemo1[1] - imemo0[1],
               note: "400 links of phase A: lambda, hook Proc, RequestLog and its strings, plus the IMEMO (env) phase A added")
