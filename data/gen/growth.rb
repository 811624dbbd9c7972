# growth.rb - one process dumped six times while something grows, for
# `heapdump trend` (and `stats --by length`).
#
#   ruby --disable-gems growth.rb OUTDIR
#
# Writes growth_1.json ... growth_6.json (in the order they were taken) and
# growth_expected.json: for each of the four classes below, the number of
# live instances just before each dump, counted by ObjectSpace.each_object.
#
#   Growing  instances kept forever, 40 more at every step: 40, 80, ... 240
#            (each holds a new String of 8 * step bytes and an Array of
#            step elements: String and Array grow at every step too)
#   Wave     grows, then shrinks, ending above its start: 30, 60, 90, 60,
#            45, 40 ("grows overall", not in every step)
#   Steady   the same 50 objects in every dump (flat)
#   Fading   60, 50, 40, 30, 20, 10 (shrinks)
#
# Every step also keeps strings, arrays and hashes of chosen lengths
# (0, 1, 3, 5, 17 and 1000) in Sizes::KEEP, so that the power-of-two
# length buckets of `stats --by length` each hold known objects.
# Allocation tracing is on from the start (generations and sites), and
# GC.start runs before every dump.
require "objspace"

ObjectSpace.trace_object_allocations_start

class Growing
  def initialize(step)
    @name = "g" * (8 * step)
    @items = Array.new(step) { |i| i }
  end
end

class Wave
  def initialize
    @tag = "wave"
  end
end

class Fading
end

class Steady
  def initialize(i)
    @i = i
  end
end

module Sizes
  KEEP = []
  def self.keep
    [0, 1, 3, 5, 17, 1000].each do |n|
      KEEP << ("s" * n) << Array.new(n, 0) << Hash[(1..n).map { |i| [i, i] }]
    end
  end
end

out = ARGV[0] or abort "usage: ruby growth.rb OUTDIR"
WAVE = [30, 60, 90, 60, 45, 40]
kept = []
waves = []
steady = Array.new(50) { |i| Steady.new(i) }
fading = []
expected = { "Growing" => [], "Wave" => [], "Steady" => [], "Fading" => [] }

(1..6).each do |step|
  40.times { kept << Growing.new(step) }
  waves.pop while waves.size > WAVE[step - 1]
  waves << Wave.new while waves.size < WAVE[step - 1]
  fading.pop while fading.size > 70 - 10 * step
  fading << Fading.new while fading.size < 70 - 10 * step
  Sizes.keep
  GC.start
  expected.each_key do |name|
    expected[name] << ObjectSpace.each_object(Object.const_get(name)).count
  end
  File.open(File.join(out, "growth_#{step}.json"), "w") do |f|
    ObjectSpace.dump_all(output: f)
  end
end

File.write(File.join(out, "growth_expected.json"),
           "{" + expected.map { |k, v| "\"#{k}\":#{v}" }.join(",") + "}\n")
steady.size
