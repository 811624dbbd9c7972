# auditstruct.rb - a constant Struct holding per-request data: an audit
# trail hung on a constant (AUDIT = Audit.new([], {}, 0)) whose entries
# list keeps every request's params and whose `by_ip` Hash counts
# requests by client address (a new key per client). Meant to be
# flushed to disk by a job that was never scheduled.
#
#   ruby auditstruct.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the entries of phase A (an Entry Struct each, its params Hash,
# its strings), measured as they are made. The by_ip keys phase A added
# (frozen copies, interned) are a second suspect, Audit's Hash, not
# counted. Holder: the Struct Audit (AUDIT) and its entries Array.

require_relative "harness"

Audit = Struct.new(:entries, :by_ip, :flushed)
Entry = Struct.new(:at, :ip, :path, :params, :user_agent)
AUDIT = Audit.new([], {}, 0)

$leaked = [0, 0]

def request(id, counting)
  ip = "10.#{id / 65_536 % 256}.#{id / 256 % 256}.#{id % 256}"
  params = { "order_id" => id.to_s, "coupon" => "SPRING-#{id % 97}", "note" => "gift wrap please, ref #{id}" * 3 }
  e = Entry.new(1_700_000_000 + id, ip, "/checkout/#{id}/confirm", params,
                "Mozilla/5.0 (X11; Linux x86_64) Client/#{id}")
  AUDIT.entries << e
  AUDIT.by_ip[ip] = (AUDIT.by_ip[ip] || 0) + 1
  return unless counting
  # (no object_id, __id__ or uniq by id here: on 4.0 an object's id
  # makes it a fields IMEMO of its own, which the leak then holds)
  owned = [e, e.ip, e.path, e.params, *e.params.values, e.user_agent]
  n, bytes = Scenario.measure(owned)
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["AUDIT", "Audit"], holder_dump_all: ["Audit"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 audit entries of phase A (Struct, strings, params Hash); the by_ip keys are a second suspect")
