# tests/ext/names_check.rb DIR - checks the reference names of the dumps
# data/gen/names.rb wrote in DIR (names_{before,after,later}.json, and
# names_{plain,named}.json with PAIR=1). One line per check: "ok NAME" or
# "not ok NAME: why"; tests/ext/names.sh reports them.
require "json"

dir = ARGV[0]
exp = JSON.parse(File.read(File.join(dir, "names_expected.json")))["objects"]

def load(path)
  recs = {}
  roots = []
  File.foreach(path) do |l|
    r = JSON.parse(l)
    next if r["type"] == "SHAPE"
    r["type"] == "ROOT" ? roots << r : recs[r["address"]] = r
  end
  [recs, roots]
end

def say(name, good, why = nil)
  puts good ? "ok #{name}" : "not ok #{name}: #{why}"
end

# [holder record, name] of every reference to addr
def refs_to(recs, roots, addr)
  (recs.values + roots).flat_map do |r|
    (r["references"] || []).each_index.select { |i| r["references"][i] == addr }
                           .map { |i| [r, (r["ref_names"] || [])[i]] }
  end
end

before = File.join(dir, "names_before.json")
recs, roots = File.exist?(before) ? load(before) : [{}, []]
# name: [what, holder test, expected name]
by = ->(key) { ->(r) { r["address"] == exp[key] } }
checks = {
  "constant-CACHE" => ["CACHE", by["PriceCalculator"], "::CACHE"],
  "hash-string-key" => ["list", by["CACHE"], "[\"user_42\"]"],
  "hash-symbol-key" => ["admin", by["CACHE"], "[:admin]"],
  "hash-integer-key" => ["fortytwo", by["CACHE"], "[42]"],
  "array-element" => ["request3", by["list"], 3],
  "ivar-of-object" => ["body3", by["request3"], "@body"],
  # a class's ivar: on the class, or from 4.0 on its IMEMO/fields (class: the owner)
  "ivar-of-class" => ["entries", ->(r) { r["address"] == exp["Registry"] || (r["imemo_type"] == "fields" && r["class"] == exp["Registry"]) }, "@entries"],
  "struct-member" => ["point_x", by["point"], ".x"],
  "thread-local" => ["request_id", ->(r) { %w[VM/thread fiber].include?(r["struct"]) }, "thread[:request_id]"],
  "thread-variable" => ["tenant", ->(r) { r["type"] == "HASH" }, "thread_variable[:tenant]"],
  "global" => ["global", ->(r) { r["type"] == "ROOT" && r["root"] == "global_tbl" }, "$names_global"],
  "constant-of-Object" => ["PriceCalculator", ->(r) { r["type"] == "CLASS" && r["name"] == "Object" }, "::PriceCalculator"],
  # locals of a closure's environment: on its IMEMO/env
  "closure-local" => ["captured", ->(r) { r["imemo_type"] == "env" }, "captured"],
  "closure-local-request" => ["request", ->(r) { r["imemo_type"] == "env" }, "request"],
  "closure-local-inner" => ["inner_local", ->(r) { r["imemo_type"] == "env" }, "inner_local"],
  "binding-local" => ["bound_local", ->(r) { r["imemo_type"] == "env" }, "bound_local"],
}
checks.each do |name, (what, holder, want)|
  break if recs.empty?

  found = refs_to(recs, roots, exp[what]).select { |r, _| holder.call(r) }
  if found.empty?
    say(name, false, "no reference to #{what} (#{exp[what]}) from the expected holder")
  else
    bad = found.reject { |_, n| n == want }
    say(name, bad.empty?, "#{what}: want #{want.inspect}, got #{found.map(&:last).inspect}")
  end
end

# an outer scope's env: two locals holding one String, each its own name in order
unless recs.empty?
  found = refs_to(recs, roots, exp["outer_local"]).select { |r, _| r["imemo_type"] == "env" }
  say("closure-outer-shared", found.map(&:last) == %w[outer_local alias_local] && found.map { |r, _| r["address"] }.uniq.size == 1,
      "outer_local: want [\"outer_local\", \"alias_local\"] on one env, got #{found.map { |r, n| [r['address'], n] }.inspect}")
  # the request's path: the global's Proc -> its env (request) -> the Request
  env = refs_to(recs, roots, exp["request"]).map(&:first).find { |r| r["imemo_type"] == "env" }
  say("closure-env-of-handler", env && recs[exp["handler"]] && recs[exp["handler"]]["references"].include?(env["address"]),
      "the env naming request is not referenced by the handler Proc")
end

unless recs.empty?
  # the singleton class of an object or module is its "class", never one of its references
  own_sc = recs.values.select { |r| r["class"] && (r["references"] || []).include?(r["class"]) }
  say("singleton-class-not-a-reference", own_sc.empty? && recs[exp["Child"]]["class"] != recs[exp["Base"]]["class"],
      "#{own_sc.size} records reference their own class: #{own_sc.first(2).map { |r| r['address'] }}")
end

# class structure: Child -(include)-> ICLASS of Helpers -(superclass)-> Base
child = recs[exp["Child"]] unless recs.empty?
i = child && (child["ref_names"] || []).index("(include)")
iclass = i && recs[child["references"][i]]
recs.empty? or say("include", iclass && iclass["type"] == "ICLASS" && iclass["class"] == exp["Helpers"],
    "Child's (include) is not Helpers' ICLASS: #{child && child['ref_names'].inspect}")
j = iclass && (iclass["ref_names"] || []).index("(superclass)")
recs.empty? or say("superclass", j && iclass["references"][j] == exp["Base"],
    "the ICLASS's (superclass) is not Base: #{iclass && iclass['ref_names'].inspect}")

# every record of every dump: ref_names as long as references, entries of the grammar
%w[before after later named].each do |phase|
  path = File.join(dir, "names_#{phase}.json")
  next unless File.exist?(path)
  bad = []
  named = 0
  File.foreach(path).with_index(1) do |l, no|
    r = JSON.parse(l)
    next unless r.key?("ref_names")
    named += 1
    rn = r["ref_names"]
    refs = r["references"] || []
    bad << "line #{no}: #{rn.size} names for #{refs.size} references" if rn.size != refs.size
    bad << "line #{no}: no name at all" if rn.all?(&:nil?)
    bad << "line #{no}: #{rn.inspect[0, 80]}" unless rn.all? { |n| n.nil? || (n.is_a?(Integer) && n >= 0) || (n.is_a?(String) && !n.empty?) }
    bad << "line #{no}: ref_names not right after references" unless l.include?('], "ref_names":[')
  end
  say("lengths-#{phase}", bad.empty? && named > 1000, "#{named} named records; #{bad.first(3).join('; ')}")
end

# names: false and names: true of one heap: the same objects, the same references
plain_path = File.join(dir, "names_plain.json")
if File.exist?(plain_path)
  plain, proots = load(plain_path)
  named, nroots = load(File.join(dir, "names_named.json"))
  say("pair-plain-has-no-names", plain.values.none? { |r| r.key?("ref_names") } && proots.none? { |r| r.key?("ref_names") }, "ref_names in a names: false dump")
  only = (plain.keys - named.keys) + (named.keys - plain.keys)
  say("pair-same-objects", only.empty?, "#{only.size} objects in one dump only: #{only.first(3).map { |a| (plain[a] || named[a]).to_json[0, 150] }.join(' | ')}")
  diff = plain.keys.select { |a| named[a] && plain[a]["references"] != named[a]["references"] }
  say("pair-same-references", diff.empty?, "#{diff.size} records differ: #{diff.first(2).map { |a| [plain[a]['type'], plain[a]['references']&.size, named[a]['references']&.size] }.inspect}")
  # the machine stack is scanned conservatively: what it holds differs
  # from call to call; the preparation's calls (Thread#keys...) enter
  # MRI's global call cache, which the vm root marks: call caches aside
  cc = ->(a) { (named[a] || plain[a] || {})["imemo_type"] == "callcache" }
  cmp = lambda do |rs|
    rs.reject { |r| r["root"] == "machine_context" }.map { |r| [r["root"], r["references"].reject(&cc)] }
  end
  say("pair-same-roots", cmp[proots] == cmp[nroots] && cmp[proots].size >= 2,
      "ROOT records other than machine_context differ: #{cmp[proots].map(&:first)} / #{cmp[nroots].map(&:first)}")
  other = plain.keys.select { |a| named[a] && plain[a] != named[a].reject { |k, _| k == "ref_names" } }
  say("pair-same-fields", other.size < 50, "#{other.size} records differ in other fields: #{other.first(2).map { |a| plain[a].to_json[0, 200] }.join(' | ')}")
end
