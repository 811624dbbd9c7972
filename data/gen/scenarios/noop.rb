# noop.rb - issue 34, item 6: a program that does nothing between its
# dumps. Whatever a three-dump hunt finds here the dumper made itself
# (the gem must not change the heap it measures).
#
#   ruby noop.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: no leak.

require_relative "harness"

Scenario.dump("before")
Scenario.dump("after")
Scenario.dump("later")

Scenario.truth(leaks: false, objects: 0, bytes: 0, note: "nothing runs between the dumps")
