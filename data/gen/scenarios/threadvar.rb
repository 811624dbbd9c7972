# threadvar.rb - a per-thread memo on a long-lived worker: a background
# job worker (one Thread, started at boot, waiting on its queue) keeps
# the results of the jobs it ran in a thread variable
# (Thread#thread_variable_set(:results, {})), meant for deduplicating
# retries within a batch and never cleared between batches.
#
#   ruby threadvar.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the results of phase A (a Hash each, its Strings and rows
# Array), measured by the worker as it makes them and handed back as
# Integers. Holder: the worker Thread (its thread variables).

require_relative "harness"

class Worker
  def initialize
    @jobs = Queue.new
    @done = Queue.new
    @thread = Thread.new { work }
  end

  # runs a job on the worker and waits for it: [objects, bytes] counted
  def run(id, counting)
    @jobs << [id, counting]
    @done.pop
  end

  private

  def work
    Thread.current.thread_variable_set(:results, {})
    while (job = @jobs.pop)
      id, counting = job
      result = { "job" => "invoice-#{id}", "rows" => Array.new(6) { |i| "line #{id}/#{i} " + "v" * 40 },
                 "status" => "sent to customer #{id}" }
      Thread.current.thread_variable_get(:results)[id] = result
      @done << (counting ? Scenario.measure([result, result["job"], result["rows"], *result["rows"], result["status"]]) : [0, 0])
    end
  end
end

WORKER = Worker.new

$leaked = [0, 0]

def request(id, counting)
  n, bytes = WORKER.run(id, counting)
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["Thread"], holder_dump_all: ["Thread"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 job results of phase A (Hash, rows Array, strings) in a worker thread's thread variable")
