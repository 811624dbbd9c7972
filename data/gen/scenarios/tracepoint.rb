# tracepoint.rb - a closure hung on the VM: a slow-call profiler enabled
# at boot keeps a TracePoint whose block closes over a samples Array,
# and every request's calls push a sample that is never trimmed. The
# TracePoint is held by the VM's event hooks, the samples by its block's
# environment.
#
#   ruby tracepoint.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the samples of phase A (an Array each, with its method name
# String and label), measured as they are made. Holder: the TracePoint
# (its block's environment).

require_relative "harness"

class Checkout
  def total(id) = (id * 37) % 1000
end

module Profiler
  def self.start
    samples = []
    tp = TracePoint.new(:return) do |t|
      next unless t.defined_class == Checkout
      sample = ["#{t.defined_class}##{t.method_id}", "order-#{t.return_value}-" + "t" * 60]
      samples << sample
      count(sample) if $counting
    end
    tp.enable
    tp
  end

  # the truth's count of one sample (the samples Array is reached by
  # the block alone: nothing else may hold it)
  def self.count(sample)
    n, bytes = Scenario.measure([sample, *sample])
    $leaked[0] += n
    $leaked[1] += bytes
  end
end

$counting = false
TP = Profiler.start
CHECKOUT = Checkout.new

$leaked = [0, 0]

def request(id, counting)
  $counting = counting
  CHECKOUT.total(id)
  CHECKOUT.total(id + 1)
  $counting = false
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["TracePoint"], holder_dump_all: ["TracePoint"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "800 samples of phase A (Array, name and label Strings) kept by a TracePoint block's environment")
