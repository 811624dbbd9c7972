# cow.rb - a copy-on-write holder: a router keeps its middleware in a
# frozen Array that it replaces at every `use` (`@handlers = (@handlers +
# [h]).freeze`, so that readers never see it change), and a per-request
# handler is added by mistake on every request. No collection grows in
# place and the Array that holds phase A's handlers in AFTER is dead in
# LATER: its successor, born after AFTER, holds them. The growth is
# followed through the holder's slot (ROUTER @handlers), not one Array.
#
#   ruby cow.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the handlers of phase A, each with its name, options Hash and
# strings and its response template (measured as they are made).
# Holder: Router @handlers (the gem's path names it ::ROUTER: the
# Array of LATER is young, walked through). With three dumps the verdict
# says that the Array Router holds grows at every dump, a new one each
# time.

require_relative "harness"

class Router
  def initialize
    @handlers = [].freeze
    @calls = 0
  end

  # Adds a handler: a new frozen Array, the old one left to readers.
  def use(handler)
    @handlers = (@handlers + [handler]).freeze
  end

  def call(path)
    @calls += 1
    @handlers.reverse_each { |h| return h.render if h.match?(path) }
    nil
  end
end

class Handler
  def initialize(id)
    @name = "cache-headers-#{id}"
    @options = { "path" => "/api/v1/items/#{id}", "max_age" => 60 + id % 30,
                 "vary" => "Accept-Encoding, X-Request-#{id}" }
    @template = "HTTP/1.1 200 OK\r\nX-Handler: #{id}\r\n" + "Cache-Control: private\r\n" * 40
  end

  def match?(path) = path == @options["path"]
  def render = @template
  def owned = [self, @name, @options, *@options.values.grep(String), @template]
end

ROUTER = Router.new

$leaked = [0, 0]

def request(id, counting)
  handler = Handler.new(id)
  ROUTER.use(handler) # the bug: per request, not at boot
  ROUTER.call("/api/v1/items/#{id}")
  return unless counting
  n, bytes = Scenario.measure(handler.owned)
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@handlers", "::ROUTER"], holder_dump_all: ["Router"],
               says_3: ["that Router", "holds grows at every dump, a new one each time: 50 -> 450 -> 850"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 handlers of phase A (name, options, strings, template), held by the frozen Array replaced at each use")
