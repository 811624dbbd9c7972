# defaultproc.rb - a Hash with a default proc that stores on read
# (`Hash.new { |h, k| h[k] = [] }`): a metrics collector looks up the
# timings of a request's label, and each label carries the request's id
# (a path with the id in it), so every read stores a new key String and
# a new Array, which the caller then fills. Nothing is ever written on
# purpose: the leak is in the read.
#
#   ruby defaultproc.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: per request of phase A the key String the Hash keeps (its own
# frozen copy), the timings Array and the timing Floats' Strings. The
# Hash's own table grows in place (not counted: not a new object).
# Holder: Timings @by_label.

require_relative "harness"

class Timings
  def initialize
    @by_label = Hash.new { |h, k| h[k] = [] }
  end

  # the bug: reading a label stores it
  def for(label) = @by_label[label]

  def record(label, ms) = self.for(label) << ms

  def key_of(label) = @by_label.each_key.find { |k| k == label }
end

TIMINGS = Timings.new

$leaked = [0, 0]

def request(id, counting)
  label = "GET /orders/#{id}/invoice.pdf?token=#{"%016x" % (id * 0x9e3779b97f4a7c15 % 2**64)}"
  TIMINGS.record(label, "db=#{id % 17}.#{id % 10}ms view=#{id % 23}.5ms total=#{id % 41}ms")
  TIMINGS.record(label, "render=#{id % 7}ms")
  return unless counting
  list = TIMINGS.for(label)
  key = TIMINGS.key_of(label)
  n, bytes = Scenario.measure([key, list, *list])
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@by_label"], holder_dump_all: ["Timings"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 labels of phase A stored on read by a default proc: key String, timings Array, its Strings")
