# frozen_string_literal: false
#
# tests/bench/gen_big.rb - builds a large heap that looks like a real
# application's and writes it with ObjectSpace.dump_all.
#
#   ruby tests/bench/gen_big.rb OUT.json [TARGET_MB]
#
# TARGET_MB (default 1000) is the approximate size of the dump in 10^6
# bytes. The default gives 1.0 GB and about 3.1 million objects, close to
# the dump the peers were measured on (shared/reference/peers.md, section
# 3: 1.0 GB, 3.42 million lines; ours has slightly longer lines).
# Allocation tracing is on, so most objects carry file, line, method and
# generation. The content is deterministic for a given TARGET_MB (fixed
# random seed); addresses and generations are not.
#
# The heap is a small "shop" application in the middle of serving
# requests:
#   - Request objects with instance variables (path, params, headers,
#     body, user, tags, rendered fragments), indexed in a big Hash by id
#     and appended to a growing Array of events;
#   - a LeakyCache that never evicts, holding Record structs;
#   - 16 singly linked lists of Node;
#   - Users and Points (structs), sessions (a big string-keyed Hash),
#     settings keyed by dynamic symbols;
#   - many small strings, a good share of them duplicates of each other,
#     some long bodies; arrays and hashes of every size from empty to a
#     few thousand elements;
#   - heap floats, bignums, rationals, complexes, ranges, times, regexps,
#     procs with captured environments, exceptions;
#   - anonymous classes and structs, singleton classes;
#   - allocations from 256 "view templates" compiled with their own file
#     names, so grouping by location has a realistic number of sites.
# Short-lived garbage is made along the way so the GC runs and objects
# spread over many generations; GC.start runs before the dump.
require "objspace"

out = ARGV[0] or abort "usage: ruby gen_big.rb OUT.json [TARGET_MB]"
target_mb = Float(ARGV[1] || 1000)
abort "gen_big: TARGET_MB must be positive" unless target_mb > 0

# Calibrated on Ruby 3.1.2 (x86_64): one unit is about 10.6 KB of dump and
# 33 objects (lines average 325 bytes); an empty interpreter dumps 4.5 MB.
UNITS_PER_MB = 94.2
BASE_MB = 4.5
UNITS = [((target_mb - BASE_MB) * UNITS_PER_MB).round, 20].max

t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
ObjectSpace.trace_object_allocations_start

module Shop
  User = Struct.new(:id, :name, :email, :roles)
  Point = Struct.new(:x, :y)

  class Node
    attr_reader :value, :next_node

    def initialize(value, next_node)
      @value = value
      @next_node = next_node
    end
  end

  class Request
    attr_reader :id, :path, :params, :headers, :fragments
    attr_accessor :body, :status, :started_at, :elapsed

    def initialize(id, verb, path, params, headers, user, tags)
      @id = id
      @verb = verb
      @path = path
      @params = params
      @headers = headers
      @user = user
      @tags = tags
      @fragments = []
    end
  end

  class LeakyCache
    Record = Struct.new(:key, :payload, :tags, :created_at)

    attr_reader :size

    def initialize
      @records = {}
      @size = 0
    end

    # Never evicts: the leak the dump should make visible.
    def fetch(key)
      @records.fetch(key) do
        @size += 1
        @records[key] = yield
      end
    end
  end

  class Event
    def initialize(kind, request, at)
      @kind = kind
      @request = request
      @at = at
    end
  end

  # 256 template methods, each in its own "file" and at its own line.
  module Views
    256.times do |n|
      dir = %w[orders users products carts admin shared reports api][n % 8]
      file = "/srv/shop/app/views/#{dir}/_partial_#{n}.html.erb"
      line = 1 + (n * 7) % 60
      module_eval(("\n" * (line - 1)) + <<~RUBY, file, 1)
        def self.render_#{n}(req, word)
          "<div class=\\"p#{n}\\" data-id=\\"" + req.id.to_s + "\\">" + word + "</div>"
        end
      RUBY
    end
  end
end

rng = Random.new(20240601)
words = %w[alpha bravo charlie delta echo foxtrot golf hotel india juliet
           kilo lima mike november oscar papa quebec romeo sierra tango
           uniform victor whiskey xray yankee zulu]
verbs = %w[GET GET GET POST PUT DELETE].map(&:freeze)
agents = ["Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/115.0",
          "Mozilla/5.0 (Macintosh; Intel Mac OS X 13_4) Safari/605.1.15",
          "curl/7.88.1", "Ruby", "Faraday v2.7.4"]
statuses = %w[pending paid shipped delivered refunded]

users = Array.new([UNITS / 40, 10].max) do |i|
  Shop::User.new(i, "user#{i}", "user#{i}@example.com",
                 i % 10 == 0 ? [:admin, :staff] : [:customer])
end
lists = Array.new(16) { nil }
cache = Shop::LeakyCache.new
requests_by_id = {}
events = []
sessions = {}
settings = {}
misc = []
callbacks = []
errors = []
numbers = []
anon_node = Class.new(Shop::Node) { def tag; :anon; end }
anon_plain = Class.new { attr_accessor :a, :b }
anon_struct = Struct.new(:left, :right)
cached_tags = [:order, :cached].freeze

UNITS.times do |i|
  user = users[rng.rand(users.size)]
  word = words[rng.rand(words.size)]
  params = { "id" => i.to_s, "page" => (i % 7).to_s }
  params["q"] = word.dup if i.odd?
  headers = {
    "Accept" => "text/html",
    "User-Agent" => agents[i % agents.size].dup,
    "X-Request-Id" => format("%032x", rng.rand(1 << 128)),
    "Host" => "shop.example.com",
    "Cookie" => "_session=" + (i % 1000).to_s(16),
    "Accept-Language" => "en-US",
  }
  tags = Array.new(i % 5) { |k| k.even? ? words[k] : statuses[k % 5].dup }
  path = "/api/v1/users/#{user.id}/orders/#{i}"
  req = Shop::Request.new(i, verbs[i % verbs.size], path, params, headers,
                          user, tags)
  req.fragments << Shop::Views.send(:"render_#{i & 255}", req, word)
  req.fragments << statuses[i % 5].dup if i % 3 == 0
  req.status = statuses[(i >> 2) % 5].dup
  req.body = "{\"items\":[" + ("{\"sku\":\"#{word}\"}," * (2 + rng.rand(60))) + "]}" if i % 10 == 0
  req.started_at = (1.0 + rng.rand) * 1.0e200 if i.even?
  req.elapsed = Time.at(1_700_000_000 + i) if i % 20 == 0
  requests_by_id[i] = req
  events << Shop::Event.new(:request, req, (1.0 + i) * 1.0e250)

  # Three list nodes per unit, values alternating strings and integers.
  3.times do |k|
    l = (i * 3 + k) & 15
    val = k == 1 ? i : "item-#{i}-#{k}"
    lists[l] = (i % 997 == 0 ? anon_node : Shop::Node).new(val, lists[l])
  end

  if i.even?
    cache.fetch("order:#{i >> 1}") do
      Shop::LeakyCache::Record.new("order:#{i >> 1}",
                                   [i, i * 2, (1.0 + rng.rand) * 1.0e-300, word, nil],
                                   i % 4 == 0 ? tags : cached_tags,
                                   (2.0 + rng.rand) * 1.0e200)
    end
  end

  # Arrays and hashes of many sizes, mostly small.
  r = rng.rand(100)
  misc << case r
          when 0...25 then []
          when 25...50 then Array.new(1 + r % 3) { |k| words[(i + k) % 26].dup }
          when 50...62 then Array.new(4 + r % 17) { |k| i + k }
          when 62...70 then {}
          when 70...85 then Hash[Array.new(1 + r % 8) { |k| [words[k].to_sym, k] }]
          when 85...95 then Hash[Array.new(9 + r % 30) { |k| ["k#{k}", statuses[k % 5].dup] }]
          when 95...99 then Shop::Point.new((1.0 + rng.rand) * 1.0e200, rng.rand)
          else Array.new(100 + rng.rand(2000)) { |k| k }
          end
  misc << Array.new(1000 + rng.rand(4000)) { |k| "row #{k}" } if i % 25_000 == 0

  sessions["sess-#{i % (UNITS / 4 + 1)}"] = user if i % 3 == 0
  settings[:"feature_flag_#{i}"] = i.odd? if i % 40 == 0
  numbers << (2**64 + i) * 3 if i % 25 == 0
  numbers << Rational(i, 7) << Complex(i, 3) if i % 100 == 0
  numbers << (i..(i + 10)) if i % 50 == 0
  misc << Regexp.new("^/orders/#{i}/[a-z]+$") if i % 1000 == 0
  callbacks << -> { req.id + i } if i % 200 == 0
  if i % 500 == 0
    begin
      raise ArgumentError, "bad order #{i}"
    rescue ArgumentError => e
      errors << e
    end
  end
  if i % 5000 == 0
    obj = i.even? ? req : anon_plain.new
    obj.define_singleton_method(:audit) { i }
    misc << obj << anon_struct.new(i, obj)
  end

  # Short-lived garbage: the GC runs and generations advance.
  Array.new(8) { |k| "tmp #{i} #{k}" }.join(",") if i % 4 == 0
end

# The long-lived roots of the application.
$shop = {
  users: users, lists: lists, cache: cache, requests: requests_by_id,
  events: events, sessions: sessions, settings: settings, misc: misc,
  callbacks: callbacks, errors: errors, numbers: numbers,
}

# GEN_BIG_BUILD_ONLY=1: build the heap and stop here (names_bench.rb
# loads this file to dump the same heap with the gem)
return if ENV["GEN_BIG_BUILD_ONLY"] == "1"

t1 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
GC.start
File.open(out, "w") { |f| ObjectSpace.dump_all(output: f) }
t2 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
ObjectSpace.trace_object_allocations_stop
warn format("gen_big: %d units, built in %.1f s, GC + dump in %.1f s, %.1f MB",
            UNITS, t1 - t0, t2 - t1, File.size(out) / 1.0e6)
