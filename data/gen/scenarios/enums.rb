# enums.rb - a pager keeps an external Enumerator per cursor (advanced
# with #next, so each runs on a Fiber of its own) and never closes them:
# the cursors, their suspended fibers and the rows they walk leak.
# Objects held by a suspended fiber's stack are not running code's
# locals to be passed over: the fibers are new, held by the cursor table.
#
#   ruby enums.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: per cursor of phase A, the Enumerator, its rows Array and
# Strings, its own Fiber (not the thread's, which it also references),
# the Procs and Arrays that fiber holds, measured as they are made; and
# the environments (T_IMEMO growth across phase A: a fiber's stack also
# references its caller's, which are old).

require_relative "harness"

$leaked = [0, 0]

class Pager
  CURSORS = {}

  def self.open(id)
    rows = Array.new(20) { |i| "row #{id}/#{i} " + "r" * 100 }
    cursor = rows.each
    cursor.next
    CURSORS[id] = cursor # the leak: never closed
    [cursor, rows]
  end
end

def request(id, counting)
  cursor, rows = Pager.open(id)
  return unless counting

  fiber = ObjectSpace.reachable_objects_from(cursor).find { |o| Fiber === o && !o.equal?(Fiber.current) }
  own = ObjectSpace.reachable_objects_from(fiber).select { |o| (Proc === o || Array === o) && !o.equal?(rows) }
  n, bytes = Scenario.measure([cursor, rows, *rows, fiber, *own])
  $leaked[0] += n
  $leaked[1] += bytes
end

(0...30).each { |id| request(id, false) }
Scenario.dump("before")
h0 = Scenario.hidden(:T_IMEMO)
(30...530).each { |id| request(id, true) }
h1 = Scenario.hidden(:T_IMEMO)
Scenario.dump("after")
(530...1030).each { |id| request(id, false) }
Scenario.dump("later")

Scenario.truth(leaks: true, holder_gem: ["CURSORS"], holder_dump_all: ["Pager"],
               objects: $leaked[0] + Scenario.grown(h0, h1)[0], bytes: $leaked[1] + Scenario.grown(h0, h1)[1],
               note: "500 open cursors: Enumerators with their suspended Fibers and rows")
