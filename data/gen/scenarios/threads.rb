# threads.rb - each request starts a watcher thread that waits forever
# on a queue of its own, holding the request's context: the threads
# leak, with their stacks. They are held by the VM's list of living
# threads (the Ractor), not by any Ruby collection.
#
#   ruby threads.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: per thread of phase A, its context (a Hash and its Strings),
# its Queue and the Thread itself, measured once the thread waits (its
# stack is then allocated); and their blocks' environments (T_IMEMO
# growth across phase A). Not counted: a few small Hashes per thread
# that Queue#pop makes (under 0.1% of the threads' stacks).

require_relative "harness"

$leaked = [0, 0]

def request(id, counting)
  ctx = { "id" => id.to_s, "body" => "c" * 500 + id.to_s }
  queue = Thread::Queue.new
  watcher = Thread.new(ctx, queue) { |c, q| q.pop && c } # the leak: never woken
  Thread.pass until watcher.status == "sleep"
  return unless counting

  n, bytes = Scenario.measure([ctx, *ctx.values, queue, watcher])
  $leaked[0] += n
  $leaked[1] += bytes
end

(0...10).each { |id| request(id, false) }
Scenario.dump("before")
h0 = Scenario.hidden(:T_IMEMO)
(10...110).each { |id| request(id, true) }
h1 = Scenario.hidden(:T_IMEMO)
Scenario.dump("after")
(110...210).each { |id| request(id, false) }
Scenario.dump("later")

imemo = Scenario.grown(h0, h1)
Scenario.truth(leaks: true, holder_gem: ["Ractor", "Thread"], holder_dump_all: ["Ractor", "Thread"],
               objects: $leaked[0] + imemo[0], bytes: $leaked[1] + imemo[1],
               note: "100 threads waiting forever with their contexts")
