# seen.rb - growth in place: a deduplicating consumer remembers every
# message id it has seen in a Hash of Integers (a Set's table), and
# appends a line per message to an audit String that is never rotated.
# Both are old objects that only grow: no new object is left behind, so
# a leak model of new objects alone finds nothing.
#
#   ruby seen.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the growth of the Hash's memsize (ObjectSpace.memsize_of) from
# before to after and to later, and the String's: the share of the
# growth in place the verdict should give the Hash is its part of both.
# Holder: Deduper (@seen).

require_relative "harness"

class Deduper
  def initialize
    @seen = {}
    @audit = +""
  end

  def consume(id)
    return false if @seen.key?(id)
    @seen[id] = true
    @audit << "consumed #{id}\n"
    true
  end

  def sizes = [ObjectSpace.memsize_of(@seen), ObjectSpace.memsize_of(@audit)]
end

DEDUP = Deduper.new
(0...1_000).each { |id| DEDUP.consume(id) }
Scenario.dump("before")
s0 = DEDUP.sizes
(1_000...40_000).each { |id| DEDUP.consume(id) }
Scenario.dump("after")
sa = DEDUP.sizes
(40_000...80_000).each { |id| DEDUP.consume(id) }
Scenario.dump("later")
s1 = DEDUP.sizes

grown = ->(a, b) { [b[0] - a[0], (b[0] - a[0]) + (b[1] - a[1])] }
Scenario.truth(leaks: true, holder_gem: ["@seen"], holder_dump_all: ["Deduper"],
               objects: 0, bytes: s1[0] - s0[0],
               inplace: { "2" => grown.(s0, sa), "3" => grown.(s0, s1) },
               note: "the seen-ids Hash's growth in place, of the Hash's and the audit String's")
