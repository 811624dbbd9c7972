# interned.rb - issue 34, item 5: per-route statistics keyed by interned
# strings (String#-@, as a metrics library dedups its label values),
# where the route carries the record id: every request adds a key to
# RouteStats @by_label, which no one ever trims. On 4.0 the VM's table
# of interned strings (a DATA VM/concurrent_set) is reallocated as the
# keys come; it holds nothing (its references are weak): RouteStats does.
#
#   ruby interned.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the keys of phase A (each an interned String) and the Stat
# objects they map to, measured as they are made. Holder: RouteStats
# @by_label.

require_relative "harness"

Stat = Struct.new(:count, :total_ms, :max_ms, :digest)

class RouteStats
  def initialize
    @by_label = {}
  end

  # the leak: ids in the labels, so the Hashes only grow
  def record(verb, path, ms)
    label = -"#{verb} #{path}"
    stat = (@by_label[label] ||= Stat.new(0, 0.0, 0.0, "#{verb} #{path}".hash.to_s(16)))
    stat.count += 1
    stat.total_ms += ms
    stat.max_ms = ms if ms > stat.max_ms
    label
  end

  def [](label) = @by_label[label]
end

STATS = RouteStats.new
N = 4000 # enough new keys to make 4.0 reallocate its interned-string table in phase A

$leaked = [0, 0]

def request(id, counting)
  path = "/api/v2/warehouses/#{id % 5}/orders/#{id}/shipments/#{id * 7}"
  label = STATS.record("GET", path, (id % 13) * 1.5)
  return unless counting
  n, bytes = Scenario.measure([label, STATS[label], STATS[label].digest])
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases(n: N) { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@by_label"], holder_dump_all: ["RouteStats"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "#{N} routes of phase A: an interned String as the key, its Stat and the Stat's digest String")
