# tests/ext/stacks_track.rb - HeapDump.track(stacks: true) in a real
# program whose stacks are known from its source: Helper.make_row called
# from KeepController#index (30 times, it keeps the rows) and from
# DropController#index (70 times, it drops them). The counts by stack
# split by caller in the calls' ratio and add up to the count of the
# make_row line that "sites" gives (the tracepoint's own line, not the
# stack's); retained: true keeps KeepController's alone; sample: and
# depth: do what they say; track without stacks is as before; bad
# options raise ArgumentError. Run by stacks.sh.
require_relative "t"
require "heapdump"

ROW_LINE = __LINE__ + 4 # make_row's one line

module Helper
  def self.make_row(i)
    { id: i, name: "row", tags: ["a", "b"] } # @row: 5 objects a call
  end
end

class KeepController
  KEPT = []
  def index(n)
    n.times { |i| KEPT << Helper.make_row(i) }
  end
end

class DropController
  def index(n)
    n.times { |i| Helper.make_row(i) }
  end
end

def work(keep = 30, drop = 70)
  KeepController.new.index(keep)
  DropController.new.index(drop)
end

# the objects of stacks that go through caller and end at make_row's line
def at_row(stacks, caller)
  stacks.sum do |frames, n|
    through = frames.any? { |_f, _l, label| label == caller }
    at_row = frames.any? { |f, l, label| f == __FILE__ && l == ROW_LINE && label == "Helper.make_row" }
    through && at_row ? n : 0
  end
end

def row_sites(sites)
  sites.sum { |site, n| site.start_with?("#{__FILE__}:#{ROW_LINE}:") ? n : 0 }
end

work # warm-up: call caches, constants

# ---- allocated, every stack (sample: 1, the default) --------------------
r = HeapDump.track(stacks: true) { work }
check_eq "shape/keys", %w[sites stacks], r.keys
sites = r["sites"]
stacks = r["stacks"]
total = row_sites(sites)
keep = at_row(stacks, "KeepController#index")
drop = at_row(stacks, "DropController#index")
check "sites/row-line-counted", total >= 100 && (total % 100).zero?, "#{total} objects at line #{ROW_LINE}"
check_eq "split/keep-is-30-calls", total / 100 * 30, keep
check_eq "split/drop-is-70-calls", total / 100 * 70, drop
check_eq "split/adds-up-to-the-site", total, keep + drop
top = stacks.keys.first || []
labels = top.map { |_f, _l, label| label }
check "order/most-first-is-drop", labels.include?("DropController#index") && labels.last(2).include?("Helper.make_row"), labels.inspect
check "order/outermost-first", labels.index("DropController#index").to_i < labels.rindex("Helper.make_row").to_i, labels.inspect
check "order/counts-descending", stacks.values.each_cons(2).all? { |a, b| a >= b }, stacks.values.first(10).inspect
check "frames/file-line-label", stacks.keys.flatten(1).all? { |f, l, label| (f.nil? || f.is_a?(String)) && l.is_a?(Integer) && (label.nil? || label.is_a?(String)) },
      stacks.keys.first.inspect
check "frames/frozen", stacks.keys.all? { |k| k.frozen? && k.all?(&:frozen?) }, stacks.keys.first.inspect
own = stacks.keys.select { |k| (k.reverse.find { |f, _, _| f } || [])[0].to_s.end_with?("/heapdump.rb") }
check_eq "frames/none-of-tracks-own", [], own

# ---- without stacks: as before ----------------------------------------
plain = HeapDump.track { work }
check "plain/site-hash", plain.is_a?(Hash) && plain.keys.all?(String) && plain.values.all?(Integer), plain.first(2).inspect
check_eq "plain/same-row-count", total, row_sites(plain)

# ---- retained: true: only KeepController's rows are still alive ---------
r = HeapDump.track(stacks: true, retained: true) { work }
kr = at_row(r["stacks"], "KeepController#index")
dr = at_row(r["stacks"], "DropController#index")
check "retained/keep-kept", kr >= 30 * 4, "KeepController #{kr}, DropController #{dr}"
check "retained/drop-gone", dr * 10 < kr, "KeepController #{kr}, DropController #{dr}"
check_eq "retained/adds-up-to-the-site", row_sites(r["sites"]), kr + dr

# ---- sample: 4: about a quarter of the allocations take a stack ---------
r = HeapDump.track(stacks: true, sample: 4) { 10.times { work } }
n = r["stacks"].values.sum
all = r["sites"].values.sum
check_eq "sample/sites-every-one", total * 10, row_sites(r["sites"])
check "sample/about-a-quarter", n.between?(all / 8, all / 2), "#{n} stacks of #{all} allocations"

# ---- depth: 2: the two innermost frames --------------------------------
r = HeapDump.track(stacks: true, depth: 2) { work }
check "depth/two-frames", !r["stacks"].empty? && r["stacks"].keys.all? { |k| k.size <= 2 }, r["stacks"].keys.first.inspect
check "depth/innermost-kept", r["stacks"].keys.any? { |k| k.any? { |_f, l, label| label == "Helper.make_row" && l == ROW_LINE } },
      r["stacks"].keys.first(3).inspect

# ---- bad options --------------------------------------------------------
[{ stacks: "yes" }, { stacks: true, depth: 0 }, { stacks: true, depth: 257 }, { stacks: true, sample: 0 },
 { stacks: true, sample: 1.5 }, { depth: 4 }, { sample: 2 }].each do |o|
  check_raises("bad-options/#{o.map { |k, v| "#{k}=#{v}" }.join(',')}", ArgumentError) { HeapDump.track(**o) { work } }
end
# an exception in the block: the hooks are off after it
begin
  HeapDump.track(stacks: true) { raise "boom" }
rescue RuntimeError
  nil
end
r = HeapDump.track(stacks: true) { work }
check_eq "after-raise/counts-again", total, at_row(r["stacks"], "KeepController#index") + at_row(r["stacks"], "DropController#index")
