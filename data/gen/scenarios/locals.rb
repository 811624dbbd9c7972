# locals.rb - a per-request cache kept in thread locals that are never
# cleared: each request stores its parsed payload under a key of its own
# (Thread.current[:"payload_#{id}"]), so the main thread's locals grow
# by one entry a request. The payloads are held directly by the fiber's
# local storage, as a stack's values are, but no stack holds thousands
# of them: the leak must not be passed over as running code's.
#
#   ruby locals.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the payloads of phase A (a Hash, its key and value Strings),
# measured as they are made. Holder: the Fiber (its locals; the Thread
# on 3.1, whose locals are the thread's).

require_relative "harness"

$leaked = [0, 0]

def handle(id, counting)
  payload = { "id" => "req-#{id}", "body" => "x" * 200 + id.to_s }
  Thread.current[:"payload_#{id}"] = payload # the leak: never cleared
  return unless counting
  n, bytes = Scenario.measure([payload, *payload.values])
  $leaked[0] += n
  $leaked[1] += bytes
end

(0...30).each { |id| handle(id, false) }
Scenario.dump("before")
(30...1030).each { |id| handle(id, true) }
Scenario.dump("after")
(1030...2030).each { |id| handle(id, false) }
Scenario.dump("later")

Scenario.truth(leaks: true, holder_gem: ["Fiber", "Thread"], holder_dump_all: ["Fiber", "Thread"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "1,000 payloads of phase A kept in the main thread's locals")
