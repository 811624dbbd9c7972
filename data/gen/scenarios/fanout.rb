# fanout.rb - issue 34, item 1: an ActiveSupport::Notifications-like
# Fanout whose @string_subscribers Hash of Arrays keeps every subscriber
# (each request subscribes a query counter and never unsubscribes), and a
# @listeners_for cache rebuilt, as new Arrays, at the first publish after
# every subscribe: objects born after AFTER reference the leaked ones too.
#
#   ruby fanout.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the subscribers of phase A (BEFORE -> AFTER), each a Timed
# subscriber, its QueryCounter, the counter's Request and the request's
# env Hash and strings, measured as they are made. Holder: Fanout
# @string_subscribers ["sql.active_record"] -> Array.

require_relative "harness"

class ListenerCache # a Concurrent::Map stand-in: a Hash behind a Mutex
  def initialize
    @map = {}
    @lock = Mutex.new
  end

  def [](key) = @lock.synchronize { @map[key] }
  def []=(key, value)
    @lock.synchronize { @map[key] = value }
  end

  def clear = @lock.synchronize { @map.clear }
end

class Fanout
  class Timed
    attr_reader :pattern, :delegate

    def initialize(pattern, delegate)
      @pattern = pattern
      @delegate = delegate
      @silenceable = false
    end

    def subscribed_to?(name) = @pattern == name
    def publish(name, started, finished, payload) = @delegate.call(name, started, finished, payload)
  end

  def initialize
    @mutex = Mutex.new
    @string_subscribers = Hash.new { |h, k| h[k] = [] }
    @other_subscribers = []
    @listeners_for = ListenerCache.new
  end

  def subscribe(pattern, listener)
    subscriber = Timed.new(pattern, listener)
    @mutex.synchronize do
      @string_subscribers[pattern] << subscriber
      @listeners_for.clear
    end
    subscriber
  end

  def listeners_for(name)
    @listeners_for[name] || @mutex.synchronize do
      @listeners_for[name] = @string_subscribers[name].select { |s| s.subscribed_to?(name) }
    end
  end

  def instrument(name, payload)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    result = yield
    finished = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    listeners_for(name).each { |s| s.publish(name, started, finished, payload) }
    result
  end
end

NOTIFIER = Fanout.new
SQL = "sql.active_record"

Request = Struct.new(:id, :env)

class QueryCounter
  def initialize(request)
    @request = request
    @count = 0
    @runtime = 0.0
  end

  def call(_name, started, finished, _payload)
    @count += 1
    @runtime = finished - started
  end
end

$leaked = [0, 0] # objects, bytes: Integers only, nothing kept alive

def handle(id, counting)
  env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/orders/#{id}",
          "QUERY_STRING" => "page=#{id % 9}&per=50", "HTTP_HOST" => "shop.example.com",
          "HTTP_USER_AGENT" => "Mozilla/5.0 (X11; Linux x86_64) client #{id}",
          "HTTP_ACCEPT" => "text/html,application/xhtml+xml;q=0.9",
          "REMOTE_ADDR" => "10.0.#{id % 250}.#{id % 7}", "rack.session.id" => "s#{id}" * 8,
          "HTTP_COOKIE" => "_shop_session=#{"c#{id}" * 20}" }
  request = Request.new("req-#{id}", env)
  counter = QueryCounter.new(request)
  sub = NOTIFIER.subscribe(SQL, counter) # the leak: never unsubscribed
  if counting
    own = [sub, counter, request, request.id, env] + env.values.reject(&:frozen?)
    n, bytes = Scenario.measure(own)
    $leaked[0] += n
    $leaked[1] += bytes
  end
  3.times { |q| NOTIFIER.instrument(SQL, { sql: "SELECT 1", q: q }) { q } }
end

Scenario.phases(n: 500) { |id, counting| handle(id, counting) } # warm-up, phase A (measured), phase B

Scenario.truth(leaks: true, holder_gem: ["@string_subscribers"], holder_dump_all: ["Fanout"],
               not_holder_gem: ["@listeners_for"], not_holder_dump_all: ["ListenerCache"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "500 Timed subscribers of phase A, each with its QueryCounter, Request and env")
