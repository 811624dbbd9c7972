# leak_check.rb - checks leak_expected.json against the three leak dumps with
# an independent three-dump diff (Ruby's JSON, line by line).
#
#   ruby leak_check.rb DIR [PREFIX]     # PREFIX defaults to "leak_"
#
# Prints what a diff finds with identity (address, generation) and with the
# address alone, and exits 1 if the (address, generation) diff differs from
# the "leaked" / "leaked_later" sets listed in PREFIXexpected.json.

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
