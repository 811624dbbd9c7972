# finalcallable.rb - a connection registers a finalizer that is not a
# Proc but an object with a #call method (a "Cleaner", as libraries
# write to avoid the proc-closes-over-self trap), and hands it self: the
# cleaner keeps its connection, the finalizer table keeps the cleaner,
# so every dropped connection stays alive and the finalizer never runs.
# On Ruby 3.4 and later the finalizer table is not among the dump's
# roots (see finalizer.rb): its entries hold no Proc here.
#
#   ruby finalcallable.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the connections of phase A, their buffers, header Hashes and
# values, and their cleaners, measured as they are made; the table's
# entry (an embedded hidden Array per object, one slot) added.

require_relative "harness"

$leaked = [0, 0]

class Cleaner
  def initialize(conn)
    @conn = conn # the leak: the finalizer holds what it should clean up
  end

  def call(_id)
    @conn.close
  end
end

class Connection
  def initialize(id, counting)
    @id = id
    @buffer = "b" * 2000 + id.to_s
    @headers = { "host" => "db-#{id}.internal", "id" => id.to_s }
    cleaner = Cleaner.new(self)
    ObjectSpace.define_finalizer(self, cleaner)
    return unless counting

    n, bytes = Scenario.measure([self, @buffer, @headers, *@headers.values, cleaner])
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
(30...1030).each { |id| request(id, true) }
Scenario.dump("after")
(1030...2030).each { |id| request(id, false) }
Scenario.dump("later")

Scenario.truth(leaks: true, holder_gem: ["finalizers"], holder_dump_all: ["finalizers"],
               objects: $leaked[0], bytes: $leaked[1],
               says: ["held by finalizers"],
               note: "1,000 connections kept alive by finalizer objects (not Procs) that hold them")
