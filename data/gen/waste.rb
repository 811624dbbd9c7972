# waste.rb - a heap built to waste memory, for `heapdump strings` and
# `heapdump waste` (data/README.md, "waste.rb"). Dumps the heap to ARGV[0]
# with allocation tracing on, so that every object below has its site.
#
#   ruby --disable-gems data/gen/waste.rb OUT.json
#
# What it holds, each from one line of this file:
#   10,000 copies of "the same string, made 10,000 times", each with its
#     own bytes (an interpolation; String#dup would share them) (DUPS, line A)
#   5,000 empty hashes (EMPTY_HASHES, line B)
#   3,000 empty arrays (EMPTY_ARRAYS, line C)
#   200 strings with 10,000 bytes of capacity and 5 of content (SPARE,
#     line D)
#   100 arrays grown by 600 pushes, with the spare capacity that growth
#     leaves (SPARSE, line E)
#   400 frozen copies of one short literal (String#dup then #freeze; short,
#     so that 3.1 copies the bytes instead of sharing them),
#     which the fstring table does not share (FROZEN_DUPS, line F)
#   20 pairs of long strings that share their first 60 bytes but differ
#     after (PREFIXES, line G), never duplicates of each other
require "objspace"

out = ARGV[0] or abort "usage: waste.rb OUT.json"
ObjectSpace.trace_object_allocations_start

N = "10,000"
DUPS = Array.new(10_000) { "the same string, made #{N} times" } # line A
EMPTY_HASHES = Array.new(5_000) { {} } # line B
EMPTY_ARRAYS = Array.new(3_000) { [] } # line C
SPARE = Array.new(200) { String.new("spare", capacity: 10_000) } # line D
SPARSE = Array.new(100) { a = []; 600.times { |j| a << j }; a } # line E
FROZEN_DUPS = Array.new(400) { "a frozen literal".dup.freeze } # line F
PREFIXES = Array.new(20) do |i|
	base = "p" * 60 # line G
	[base + "-left-#{i}", base + "-rght-#{i}"]
end

GC.start
ObjectSpace.trace_object_allocations_stop
File.open(out, "w") { |f| ObjectSpace.dump_all(output: f) }
