# identitymemo.rb - a render memo keyed by request objects: a Renderer
# memoizes each request's rendered fragment in a Hash by identity
# (`{}.compare_by_identity`), keyed by the request object itself, and
# never evicts. Beside it, two things that tempt the verdict: a bounded
# LRU of recent query results, full from the warm-up (each request adds
# one and evicts the oldest: new objects at every dump, but no leak),
# and a ring of the last 50 presenters (born in each phase, so after
# AFTER too) each referencing a fragment of the memo, old or new.
#
#   ruby identitymemo.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the requests of phase A (a Request each, its params Hash and
# strings) and their fragments, measured as they are made. Holder:
# Renderer @memo; never the presenters' ring (RecentPresenters @ring).

require_relative "harness"

Request = Struct.new(:path, :params, :user_agent)

class Renderer
  def initialize
    @memo = {}.compare_by_identity
  end

  def render(req) = (@memo[req] ||= "<div class=\"page\">#{req.path} for #{req.params["user"]}</div>" + "<p>body</p>" * 6)

  # a fragment rendered before, for a "see also" box (one of the first 200)
  def related(id) = @memo.each_value.take(1 + id % 200).last
end

class QueryLRU
  CAP = 64

  def initialize
    @entries = {}
  end

  def fetch(key)
    if (v = @entries.delete(key))
      return @entries[key] = v
    end
    @entries.shift if @entries.size >= CAP
    @entries[key] = yield
  end
end

Presenter = Struct.new(:fragment, :title)

class RecentPresenters
  SIZE = 50

  def initialize
    @ring = Array.new(SIZE)
    @next = 0
  end

  def <<(presenter)
    @ring[@next] = presenter
    @next = (@next + 1) % SIZE
  end
end

RENDERER = Renderer.new
QUERIES = QueryLRU.new
RECENT = RecentPresenters.new

$leaked = [0, 0]

def request(id, counting)
  req = Request.new("/orders/#{id}", { "user" => "user-#{id}", "page" => (id % 9).to_s }, "Agent/#{id} " + "a" * 50)
  rows = QUERIES.fetch("orders-#{id}") { Array.new(4) { |i| "order #{id}/#{i}" } }
  html = RENDERER.render(req)
  # a presenter over an old fragment as often as over the new one
  RECENT << Presenter.new(id.odd? ? RENDERER.related(id) : html, "Orders (#{rows.size})")
  return unless counting

  n, bytes = Scenario.measure([req, req.path, req.params, *req.params.values, req.user_agent, html])
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@memo"], holder_dump_all: ["Renderer"],
               not_holder_gem: ["@ring", "@entries"], not_holder_dump_all: ["RecentPresenters", "QueryLRU"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 requests of phase A (Struct, params Hash, strings) and their fragments, in a memo by identity")
