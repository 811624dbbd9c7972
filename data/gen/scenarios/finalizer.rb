# finalizer.rb - a connection wrapper registers its finalizer with a
# proc made in its own constructor, so the proc closes over self: the
# finalizer table keeps every connection (and its buffer and headers)
# alive after the program has dropped it, and the finalizer never runs.
# On Ruby 3.4 and later neither dump_all nor the gem lists the finalizer
# table among the roots: the connections must not be taken for garbage.
#
#   ruby finalizer.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the connections of phase A, their buffers, header Hashes and
# values, and their finalizer Procs (ObjectSpace.define_finalizer
# returns the Proc), measured as they are made; the table's entry (an
# embedded hidden Array per object, one slot) and the procs'
# environments (T_IMEMO growth across phase A) added.

require_relative "harness"

$leaked = [0, 0]

class Connection
  def initialize(id, counting)
    @id = id
    @buffer = "b" * 2000 + id.to_s
    @headers = { "host" => "db-#{id}.internal", "id" => id.to_s }
    fin = ObjectSpace.define_finalizer(self, proc { close }) # the leak: the proc holds self
    return unless counting

    n, bytes = Scenario.measure([self, @buffer, @headers, *@headers.values, fin[1]])
    $leaked[0] += n + 1
    $leaked[1] += bytes + Scenario::SLOT
  end

  def close
    @buffer = nil
  end
end

def request(id, counting)
  Connection.new(id, counting) # dropped at once
  nil
end

(0...30).each { |id| request(id, false) }
Scenario.dump("before")
h0 = Scenario.hidden(:T_IMEMO)
(30...1030).each { |id| request(id, true) }
h1 = Scenario.hidden(:T_IMEMO)
Scenario.dump("after")
(1030...2030).each { |id| request(id, false) }
Scenario.dump("later")

imemo = Scenario.grown(h0, h1)
Scenario.truth(leaks: true, holder_gem: ["finalizers"], holder_dump_all: ["finalizers"],
               objects: $leaked[0] + imemo[0], bytes: $leaked[1] + imemo[1],
               says: ["held by finalizers"],
               note: "1,000 connections kept alive by finalizer procs that close over them")
