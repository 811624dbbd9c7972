# noleak_bounded.rb - issue 34, item 14: a program that does not leak. A
# bounded LRU cache of rendered fragments (the Hash's insertion order is
# the recency order; over capacity the oldest goes), filled to capacity
# in the warm-up; each phase renders more distinct fragments than the
# cache holds, so by LATER none of phase A's entries is left, and the
# heap does not grow.
#
#   ruby noleak_bounded.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: no leak.

require_relative "harness"

class LRUCache
  def initialize(capacity)
    @capacity = capacity
    @entries = {}
    @hits = 0
    @misses = 0
  end

  def fetch(key)
    if @entries.key?(key)
      @hits += 1
      value = @entries.delete(key)
      @entries[key] = value # most recent last
    else
      @misses += 1
      value = yield
      @entries[key] = value
      @entries.delete(@entries.first[0]) while @entries.size > @capacity
      value
    end
  end

  def size = @entries.size
end

Fragment = Struct.new(:html, :etag)

CACHE = LRUCache.new(300)

def render(id)
  CACHE.fetch("product/#{id}/v3") do
    html = "<div class=\"product\"><h2>Product #{id}</h2><p>#{"In stock. " * (id % 5 + 1)}</p></div>"
    Fragment.new(html, "W/\"#{(id * 2654435761) % 2**32}\"")
  end.html.size
end

(0...600).each { |id| render(id % 300) } # warm-up: the cache is full
Scenario.dump("before")
(1000...1600).each { |id| render(id % 400 + 1000) } # 400 distinct fragments, hits among them
Scenario.dump("after")
(2000...2600).each { |id| render(id % 400 + 2000) } # phase A's all evicted
Scenario.dump("later")

Scenario.truth(leaks: false, objects: 0, bytes: 0,
               note: "an LRU cache of 300 fragments, full from the warm-up, every phase evicting the previous one's")
