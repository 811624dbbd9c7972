# leak_check.rb - checks leak_expected.json against the three leak dumps with
# an independent three-dump diff (Ruby's JSON, line by line).
#
#   ruby leak_check.rb DIR [PREFIX]     # PREFIX defaults to "leak_"
#
# Prints what a diff finds with identity (address, generation) and with the
# address alone, and exits 1 if the (address, generation) diff differs from
# the "leaked" / "leaked_later" sets listed in PREFIXexpected.json.
#
# When the expected objects carry a 4th field, the object_id (leak.rb with
# OBJECT_ID=1, on Ruby 4.0, whose dumps write flags.object_id), identity is
# the object_id instead, over the objects that carry one: the set was
# compacted between the dumps, so addresses say nothing.

require "json"
require "zlib"

dir = ARGV[0] or abort "usage: ruby leak_check.rb DIR [PREFIX]"
prefix = ARGV[1] || "leak_"

def load_dump(path)
  path += ".gz" if !File.exist?(path) && File.exist?(path + ".gz")
  data = path.end_with?(".gz") ? Zlib.gunzip(File.binread(path)) : File.binread(path)
  objs = {}
  data.each_line do |line|
    rec = JSON.parse(line) rescue next
    next unless rec["address"] && rec["type"] != "SHAPE"
    objs[rec["address"]] ||= rec
  end
  objs
end

before, after, later = %w[before after later].map { |n| load_dump(File.join(dir, "#{prefix}#{n}.json")) }
expected = JSON.parse(File.read(File.join(dir, "#{prefix}expected.json")))

if expected["object_fields"].include?("object_id")
  oid = ->(rec) { rec.dig("flags", "object_id") }
  by_oid = ->(h) { h.values.select(&oid).to_h { |r| [oid[r], r] } }
  b, a, l = by_oid[before], by_oid[after], by_oid[later]
  ok = true
  [["leaked", a.keys.select { |k| !b.key?(k) && l.key?(k) }],
   ["leaked_later", l.keys.reject { |k| a.key?(k) }]].each do |name, got|
    want = expected[name]["objects"].map { |o| o[3] }
    puts format("%s: expected %d, object_id diff finds %d (%d extra, %d missing)",
                name, want.size, got.size, (got - want).size, (want - got).size)
    ok &&= got.sort == want.sort
  end
  moved = expected["leaked"]["objects"].count { |o| a[o[3]] && a[o[3]]["address"] != o[0] }
  puts "#{moved} of the leaked objects are at another address in AFTER than in LATER"
  exit(ok ? 0 : 1)
end

key = ->(rec) { [rec["address"], rec["generation"]] }
ids = ->(h) { h.values.map(&key).to_h { |k| [k, true] } }
before_ids, after_ids, later_ids = ids[before], ids[after], ids[later]

diff_a = after.values.select { |r| !before_ids[key[r]] && later_ids[key[r]] }
diff_b = later.values.select { |r| !after_ids[key[r]] }
naive_a = after.values.select { |r| !before.key?(r["address"]) && later.key?(r["address"]) }

ok = true
[["leaked", diff_a], ["leaked_later", diff_b]].each do |name, found|
  want = expected[name]["objects"].map { |a, _t, g| [a, g] }.sort
  got = found.map(&key).sort
  extra = found.reject { |r| want.include?(key[r]) }
  missing = want - got
  puts format("%s: expected %d, diff finds %d (%d extra, %d missing)",
              name, want.size, got.size, extra.size, missing.size)
  extra.each { |r| puts "  extra: #{r.reject { |k, _| k == "references" }.to_json[0, 200]}" }
  missing.each { |m| puts "  missing: #{m.inspect}" }
  ok &&= extra.empty? && missing.empty?
end
reused = expected["leaked"]["objects"].count { |a, _, _| before.key?(a) }
puts "address-only diff finds #{naive_a.size} (#{reused} leaked objects sit at addresses also used in BEFORE)"
exit(ok ? 0 : 1)
