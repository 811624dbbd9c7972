# coreset.rb - a deduplicator keeps every request's token in a Set held
# by a constant, and never forgets one. On Ruby 4.0 Set is a core class:
# a DATA ("set") that lists its members as references and has no length
# in the dump, so the growing collection must be seen by its members
# (before 3.5 a Set is a Ruby object over a Hash, @hash, which grows).
#
#   ruby coreset.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the tokens of phase A, measured as they are made (the Set's
# own growth, its table, is not counted: it is in place).

require_relative "harness"
require "set"

$leaked = [0, 0]

class Dedup
  SEEN = Set.new

  def self.check(id, counting)
    # frozen: a Hash (the Set of Ruby 3.4 and before) keeps an unfrozen
    # String key as a frozen copy that takes its buffer
    token = ("token-#{id}-" + "x" * 200).freeze
    SEEN << token # the leak: never removed
    return unless counting

    n, bytes = Scenario.measure([token])
    $leaked[0] += n
    $leaked[1] += bytes
  end
end

(0...30).each { |id| Dedup.check(id, false) }
Scenario.dump("before")
(30...2030).each { |id| Dedup.check(id, true) }
Scenario.dump("after")
(2030...4030).each { |id| Dedup.check(id, false) }
Scenario.dump("later")

Scenario.truth(leaks: true, holder_gem: ["SEEN"], holder_dump_all: ["Dedup"],
               objects: $leaked[0], bytes: $leaked[1],
               says_3: ["grows at every dump: 30 -> 2030 -> 4030"],
               note: "2,000 tokens kept in a Set that never forgets one")
