# gemself.rb - the gem's own machinery at work between the dumps: an app
# behind HeapDump::Middleware (required lazily in phase A, made with
# stacks: true, so allocation tracing with stacks starts then, and
# tracking every request), whose handler keeps an access log entry per
# request in AccessLog @entries, never rotated. The gem's require, its
# middleware, its stack tables and its tracking must never be the
# suspect. With dump_all (no gem), the same app behind a timing
# middleware of its own.
#
#   ruby gemself.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the access log entries of phase A (a Hash each, its Strings),
# measured as they are made. Holder: AccessLog @entries; never HeapDump.

require_relative "harness"

class AccessLog
  def initialize
    @entries = []
  end

  def <<(entry)
    @entries << entry
  end
end

LOG = AccessLog.new
NULL = File.open(File::NULL, "w")

class Timing
  def initialize(app) = @app = app

  def call(env)
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    status, headers, body = @app.call(env)
    headers["x-runtime"] = format("%.6f", Process.clock_gettime(Process::CLOCK_MONOTONIC) - t)
    [status, headers, body]
  end
end

$leaked = [0, 0]
$counting = false

APP = lambda do |env|
  entry = { "path" => env["PATH_INFO"], "ip" => env["REMOTE_ADDR"], "agent" => "Mozilla/5.0 " + "k" * 60 }
  LOG << entry
  if $counting
    n, bytes = Scenario.measure([entry, *entry.values])
    $leaked[0] += n
    $leaked[1] += bytes
  end
  [200, { "content-type" => "text/plain" }, ["ok #{env["PATH_INFO"]}"]]
end

$stack = Timing.new(APP)

def request(id, counting)
  if id == 50 && Scenario.gem? # phase A's first request: the gem's middleware, loaded then
    require "heapdump/middleware"
    $stack = HeapDump::Middleware.new(Timing.new(APP), stacks: true, logger: NULL, top: 5)
  end
  $counting = counting
  env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/orders/#{id}", "REMOTE_ADDR" => "10.0.#{id / 256 % 256}.#{id % 256}",
          "rack.errors" => NULL }
  _, _, body = $stack.call(env)
  body.each { |_| nil }
  body.close if body.respond_to?(:close)
  $counting = false
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@entries"], holder_dump_all: ["AccessLog"],
               not_holder_gem: ["HeapDump"], not_holder_dump_all: ["HeapDump"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 access log entries of phase A (Hash, strings), with the gem's middleware loaded in phase A")
