# tests/ext/heap_test.rb - HeapDump.load and HeapDump::Heap (the gem's
# bindings to libheapdump) against the heapdump command on the fixtures
# and the leak scenarios: the same numbers, paths, diffs, suspects and
# borders; the cached store; bad inputs; memory while iterating a big
# store. Run by heap.sh with HEAPDUMP (the program), DATA, WORK (a
# scratch directory) and BIG (a generated ~100 MB dump) set.
require_relative "t"
require "heapdump"
require "json"
require "fileutils"

HD = ENV.fetch("HEAPDUMP")
DATA = ENV.fetch("DATA")
WORK = ENV.fetch("WORK")

def cli_json(*args)
  # the command writes UTF-8 whatever the locale (LANG may be unset)
  out = IO.popen([HD, *args, "-f", "json"], err: File::NULL, external_encoding: Encoding::UTF_8, &:read)
  raise "heapdump #{args.join(' ')} failed (#{$?.exitstatus})" unless $?.success?

  JSON.parse(out)
end

def cli_text(*args)
  IO.popen([HD, *args], err: File::NULL, external_encoding: Encoding::UTF_8, &:read)
end

def fixture(name)
  dst = File.join(WORK, name)
  FileUtils.cp(File.join(DATA, name), dst) unless File.exist?(dst)
  dst
end

def hex(o) = format("0x%x", o.address)

require "stringio"

# runs the block with $stderr captured: [its value or exception, what it warned]
def stderr_of
  old = $stderr
  $stderr = StringIO.new
  v = begin
    yield
  rescue StandardError => e
    e
  end
  [v, $stderr.string]
ensure
  $stderr = old
end

# ---- 1. loading, the cached store ----
dump = fixture("ok_ruby3.1_traced.json")
hds = "#{dump}.hds"
heap = HeapDump.load(dump)
check_eq "load/store-beside-the-dump", hds, heap.store_path
check "load/store-written", File.file?(hds) && HeapDump::Heap._store?(hds)
mtime = File.mtime(hds)
ino = File.stat(hds).ino
heap.close
sleep 1.1
again, warned = stderr_of { HeapDump.load(dump) }
check_eq "load/reused-says-nothing", "", warned
check "load/store-reused", File.mtime(hds) == mtime && File.stat(hds).ino == ino && again.store_path == hds,
      "#{File.mtime(hds)} vs #{mtime}"
check_eq "load/same-heap", 8175, again.size
again.close
# the dump changes: one more object, a later mtime -> indexed again
File.open(dump, "a") { |f| f.puts '{"address":"0x1", "type":"STRING", "class":"0x7f08258f7d60", "bytesize":1, "value":"x", "memsize":40}' }
changed, warned = stderr_of { HeapDump.load(dump) }
check_eq "load/rebuilt-says-why", "heapdump: #{hds} was stale (its dump changed): indexed again\n", warned
check "load/rebuilt-after-change", File.stat(hds).ino != ino || File.mtime(hds) != mtime, "the store was not rewritten"
check_eq "load/rebuilt-sees-change", 8176, changed.size
check "load/rebuilt-finds-new-object", changed[0x1]&.type == :STRING
changed.close
# a store opened directly
direct = HeapDump.load(hds)
check_eq "load/store-directly", [8176, hds], [direct.size, direct.store_path]
direct.close
# cache: false indexes in memory and writes nothing
nocache = fixture("ok_ruby3.1_untraced.json")
h = HeapDump.load(nocache, cache: false)
check "load/cache-false-writes-nothing", h.store_path.nil? && !File.exist?("#{nocache}.hds")
h.close

# ---- bad inputs: a clear exception, never an empty heap ----
text = File.join(WORK, "notes.txt")
File.write(text, "hello\nthis is not a heap dump\n")
e = check_raises("bad/not-a-dump-raises", HeapDump::Error) { HeapDump.load(text) }
check "bad/not-a-dump-says-so", e && e.message.include?("not a heap dump") && e.message.include?(text), e&.message
check "bad/not-a-dump-no-store", !File.exist?("#{text}.hds")
empty = File.join(WORK, "empty.json")
File.write(empty, "")
e = check_raises("bad/empty-raises", HeapDump::Error) { HeapDump.load(empty) }
check "bad/empty-says-so", e && e.message =~ /empty|not a heap dump/, e&.message
e = check_raises("bad/missing-raises", HeapDump::Error) { HeapDump.load(File.join(WORK, "nope.json")) }
check "bad/missing-says-so", e && e.message.include?("No such file"), e&.message
corrupt = File.join(WORK, "corrupt.hds")
File.binwrite(corrupt, File.binread(hds, 64) + ("\xff".b * 100))
e = check_raises("bad/corrupt-store-raises", HeapDump::Error) { HeapDump.load(corrupt) }
check "bad/corrupt-store-message", e && !e.message.empty?, e&.message
# a corrupt cached store beside a dump is rebuilt, not trusted
File.binwrite(hds, File.binread(hds, 64) + ("\0".b * 10))
h, warned = stderr_of { HeapDump.load(dump) }
check_eq "bad/corrupt-cache-rebuilt", 8176, h.size
check "bad/corrupt-cache-said", warned.start_with?("heapdump: #{hds} was damaged (") && warned.end_with?("): indexed again\n"), warned
h.close
check_raises("bad/closed-heap", HeapDump::Error) { h.size }

# ---- stats, totals, top: the numbers of `heapdump stats` and `top` ----
%w[ok_ruby3.1_traced.json ok_ruby4.0.1_traced.json.gz named_ruby3.1_names_after.json.gz].each do |name|
  path = fixture(name)
  heap = HeapDump.load(path)
  [%w[class], %w[location class], %w[type]].each do |by|
    want = cli_json("stats", "--by", by.join(","), "-n", "0", path)["groupings"].first["rows"]
    got = heap.stats(by: by.map(&:to_sym)).map { |r| r.transform_keys(&:to_s) }
    check_eq "stats/#{name}/#{by.join(',')}", want, got
  end
  want = cli_json("stats", "--by", "class", "-n", "0", "--sort", "memsize", "--all", path)["groupings"].first["rows"]
  got = heap.stats(by: :class, sort: :memsize, all: true).map { |r| r.transform_keys(&:to_s) }
  check_eq "stats/#{name}/memsize-all", want, got
  t = cli_json("stats", path)["totals"]
  mine = heap.totals
  check_eq "totals/#{name}", t.values_at("objects", "memsize", "references", "roots", "traced", "excluded"),
           mine.values_at(:objects, :memsize, :references, :roots, :traced, :excluded)
  want = cli_json("top", "-n", "10", path)["objects"].map { |o| [o["object"]["address"], o["retained_count"], o["retained_memsize"]] }
  got = heap.top(10).map { |o| [hex(o), o.retained_count, o.retained] }
  check_eq "top/#{name}", want, got
  heap.close
end
check "ruby_version/3.1", HeapDump.load(fixture("ok_ruby3.1_traced.json")).ruby_version == "3.1"

# ---- objects ----
named = HeapDump.load(fixture("named_ruby3.1_names_after.json.gz"))
expected = JSON.parse(File.read(File.join(DATA, "named_ruby3.1_names_expected.json")))["objects"]
req = named[expected["request3"]]
body = named[expected["body3"]]
check_eq "object/by-address", [expected["request3"], :OBJECT, "Request"], [req&.hexaddress, req&.type, req&.class_name]
check_eq "object/by-integer-address", req, named[Integer(expected["request3"])]
check "object/missing-address-nil", named[0x10].nil?
check "object/reference-names", req.reference_names.include?("@body") && req["@body"] == body,
      req.reference_names.inspect
check "object/named-references", req.named_references.any? { |n, o| n == "@body" && o == body }
check "object/referrers", body.referrers.include?(req)
check_eq "object/references-parallel", req.references.size, req.reference_names.size
pc = named[expected["PriceCalculator"]]
check_eq "object/class-by-own-name", ["PriceCalculator", :CLASS, "Class"], [pc.name, pc.type, pc.class_name]
check "object/inspect", req.inspect.start_with?("#<#{expected['request3']} Request (OBJECT) memsize="), req.inspect
traced = HeapDump.load(fixture("ok_ruby3.1_traced.json"))
one = traced.select(file: "scenario.rb").first
check "object/site", one.file == "scenario.rb" && one.line.is_a?(Integer) && one.site == "scenario.rb:#{one.line}" &&
                     one.generation.is_a?(Integer), one.inspect
check "object/inspect-site", one.inspect.include?(" scenario.rb:#{one.line}"), one.inspect
check_eq "object/to_h", one.hexaddress, one.to_h[:address]

# ---- selections ----
sel = traced.select(class: "String")
check "select/lazy", sel.instance_variable_get(:@nodes).nil?
want = traced.stats(by: :class, all: true).find { |r| r[:class] == "String" }[:count]
check_eq "select/count-as-stats", want, sel.count
check "select/evaluated-once", sel.count == sel.size && !sel.instance_variable_get(:@nodes).nil?
check_eq "select/each-yields-count", want, sel.each.inject(0) { |n, o| n + (o.class_name == "String" ? 1 : 0) }
re = traced.select(class: /^Str/)
check "select/regex", re.count >= sel.count && re.all? { |o| o.class_name.start_with?("Str") }
composed = sel.select(file: "scenario.rb")
both = traced.select(class: "String", file: "scenario.rb")
check_eq "select/composed", both.ids, composed.ids
check "select/composed-nonempty", composed.count.positive? && composed.count < sel.count
gen = traced.select(generation: 1..)
check "select/generation-range", gen.count.positive? && gen.all? { |o| o.generation >= 1 }
check_eq "select/generation-exclusive-end", traced.select(generation: 0..1).ids, traced.select(generation: 0...2).ids
check_eq "select/type", traced.stats(by: :type, all: true).find { |r| r[:type] == "HASH" }[:count],
         traced.select(type: :HASH).count
alt = traced.select(type: %i[HASH ARRAY])
check_eq "select/alternatives", traced.select(type: :HASH).count + traced.select(type: :ARRAY).count, alt.count
check_eq "select/set-ops", [alt.count, 0, traced.select(type: :HASH).count],
         [(traced.select(type: :HASH) | traced.select(type: :ARRAY)).count,
          (traced.select(type: :HASH) & traced.select(type: :ARRAY)).count,
          (alt - traced.select(type: :ARRAY)).count]
via = named.select(via: "@body")
check "select/via", via.include?(body), via.ids.inspect
nothing = traced.select(class: "Strin")
check_eq "select/empty", 0, nothing.count
check "select/explain", nothing.explain.include?("did you mean 'String'"), nothing.explain
check_raises("select/unknown-key", ArgumentError) { traced.select(klass: "X") }
e = check_raises("select/bad-regex", HeapDump::Error) { traced.select(class: Regexp.new("a{1,2")).count }
check "select/everything", traced.objects.count == traced.size && traced.count == traced.size
check_eq "select/first-stops", 3, traced.objects.first(3).size
check "select/inspect", sel.inspect == "#<HeapDump::Selection class: String: #{want} objects>", sel.inspect
# write: NDJSON every command reads
out = File.join(WORK, "strings.json")
check_eq "write/returns-path", out, composed.write(out)
stats = cli_json("stats", out)["totals"]
check_eq "write/cli-reads-it", composed.count, stats["objects"]
kept = traced.roots_of(composed)
out2 = File.join(WORK, "kept.json")
kept.write(out2)
check "write/roots-first", File.foreach(out2).first.include?('"type":"ROOT"'), File.foreach(out2).first
target = composed.find { |o| traced.path(o) }
check_eq "write/a-dump-of-its-own", [hex(target), traced.path(target).objects.map { |o| hex(o) }],
         cli_json("path", out2, hex(target))["path"].then { |ps| [ps.last["address"], ps.map { |o| o["address"] }] }
from = traced.select(from: out)
check_eq "write/from-selects-them", composed.ids, from.ids
# GML (networkx) and DOT (Graphviz)
gml = File.join(WORK, "s.gml")
small = traced.select(type: :CLASS).first(5)
smallsel = traced.select(address: small.map(&:address))
check_eq "gml/returns-path", gml, smallsel.to_gml(gml)
nx = IO.popen(["python3", "-c", "import networkx as nx,sys; g=nx.read_gml(sys.argv[1]); print(sum(1 for n,d in g.nodes(data=True) if d.get('type')!='ROOT'))", gml], &:read)
check_eq "gml/networkx-reads-it", "5", nx.strip
dot = smallsel.to_dot
check "dot/string", dot.start_with?("digraph") && dot.scan(/0x\h+/).uniq.size >= 5, dot[0, 80]
svg = IO.popen(["dot", "-Tsvg"], "r+") { |io| io.write(dot); io.close_write; io.read }
check "dot/graphviz-draws-it", $?.success? && svg.include?("<svg"), svg[0, 80]
svgfile = File.join(WORK, "s.svg")
check_eq "render/returns-path", svgfile, smallsel.render(svgfile)
check "render/svg", File.read(svgfile).include?("<svg"), File.read(svgfile)[0, 80]
check_raises("render/unknown-format", ArgumentError) { smallsel.render(File.join(WORK, "s.txt")) }
check_eq "write/everything", traced.size, HeapDump.load(File.join(WORK, "all.json").tap { |f| traced.objects.write(f, roots: false) }, cache: false).size
cli_dot = IO.popen([HD, "to-dot", fixture("ok_ruby3.1_traced.json"), *small.flat_map { |o| ["--address", hex(o)] }], err: File::NULL, &:read)
check_eq "dot/as-the-cli", cli_dot, dot

# ---- graph queries: path, roots_of, subgraph_of, dominators ----
p = named.path(body)
want = cli_json("path", fixture("named_ruby3.1_names_after.json.gz"), expected["body3"])
check_eq "path/objects", want["path"].map { |o| o["address"] }, p.objects.map { |o| hex(o) }
check_eq "path/root", want["root"], p.root
chain = cli_text("path", fixture("named_ruby3.1_names_after.json.gz"), expected["body3"]).lines[1].strip
check_eq "path/text-as-the-cli", chain, p.to_s
check "path/text-names", p.to_s.include?("Array [3] -> Request @body -> String"), p.to_s
partial = HeapDump.load(fixture("ok_ruby3.1_since.json"))
check "path/partial-dump-nil", partial.size.positive? && partial.path(partial.objects.first).nil?
ro = named.roots_of(named.select(address: [expected["body3"], expected["point_x"]]))
cli_ro = File.join(WORK, "ro.json")
IO.popen([HD, "roots-of", fixture("named_ruby3.1_names_after.json.gz"), "--address", expected["body3"],
          "--address", expected["point_x"], "-o", cli_ro, "-q"], err: File::NULL, &:read)
cli_addrs = File.foreach(cli_ro).filter_map { |l| j = JSON.parse(l) and j["address"] }.sort
check_eq "roots_of/as-the-cli", cli_addrs, ro.map { |o| hex(o) }.sort
sg = named.subgraph_of(named.select(address: expected["request3"]), depth: 1)
check_eq "subgraph_of/depth-1", ([req] + req.references).map(&:id).uniq.sort, sg.ids
dom = named.dominators(body)
want = cli_json("dominators", fixture("named_ruby3.1_names_after.json.gz"), expected["body3"])
got_addrs = dom.objects.map { |o| hex(o) }
want_addrs = JSON.generate(want).scan(/"address":"(0x\h+)"/).flatten
check "dominators/as-the-cli", !got_addrs.empty? && got_addrs.last == expected["body3"] &&
                               (got_addrs - want_addrs).empty?, "#{got_addrs} vs #{want_addrs}"

# ---- diff, leaks, interface: the leak scenarios ----
[%w[leak_before.json leak_after.json leak_later.json],
 %w[leak_ruby4.0.1_before.json.gz leak_ruby4.0.1_after.json.gz leak_ruby4.0.1_later.json.gz],
 %w[named_ruby3.1_leak_before.json.gz named_ruby3.1_leak_after.json.gz named_ruby3.1_leak_later.json.gz]].each do |names|
  paths = names.map { |n| fixture(n) }
  b, a, l = paths.map { |f| HeapDump.load(f) }
  tag = names[0].sub("_before", "")
  d = b.diff(a, l)
  want = cli_json("diff", *paths)
  check_eq "diff/#{tag}/counts", [want["new"], want["retained"]],
           [{ "count" => d.added_count, "memsize" => d.added_memsize },
            { "count" => d.retained_count, "memsize" => d.retained_memsize,
              "uncertain" => d.to_h[:retained][:uncertain], "moved" => d.to_h[:retained][:moved] }]
  check_eq "diff/#{tag}/verdicts", want["verdicts"], d.verdicts.reject { |_, v| v.zero? }
  check_eq "diff/#{tag}/rules", want["rules"], d.rules
  check_eq "diff/#{tag}/selection-sizes", [d.added_count, d.retained_count], [d.added.count, d.retained_later.count]
  d2 = b.diff(a)
  want2 = cli_json("diff", paths[0], paths[1])
  check_eq "diff/#{tag}/two-dumps", want2["new"]["count"], d2.added_count
  lk = b.leaks(a, l)
  want = cli_json("leaks", *paths)
  check_eq "leaks/#{tag}/totals", [want["leaked"]["count"], want["leaked"]["memsize"], want["border"], want["groups"]],
           [lk.count, lk.memsize, lk.border, lk.groups]
  check_eq "leaks/#{tag}/suspects",
           want["suspects"].map { |s| [s["holder"] && s["holder"]["address"], s["first_border"]["address"], s["border_count"], s["retained_count"], s["retained_memsize"]] },
           lk.shown.map { |s| [s.holder && hex(s.holder), hex(s.first_border), s.border_count, s.retained_count, s.retained_memsize] }
  # first: first_border's deprecated name, kept one release
  check_eq "leaks/#{tag}/first-alias", lk.shown.map { |s| hex(s.first_border) }, lk.shown.map { |s| hex(s.first) }
  check_eq "leaks/#{tag}/paths",
           want["suspects"].map { |s| s["path"] && s["path"]["hops"].map { |o| o["address"] } },
           lk.shown.map { |s| s.path&.objects&.map { |o| hex(o) } }
  # the caveats: the library's set (hd_leak_session), as the command writes them
  check_eq "leaks/#{tag}/caveats", want["caveats"], lk.caveats.map { |c| c.transform_keys(&:to_s) }
  check_eq "leaks/#{tag}/caveats-two-dumps", cli_json("leaks", paths[0], paths[1])["caveats"].map { |c| c["name"] },
           b.leaks(a).caveats.map { |c| c[:name] }
  # interface-with on LATER of the leak, as the command computes it from diff -o
  leaked = File.join(WORK, "#{tag}-leaked.json")
  d.retained_later.write(leaked)
  want = cli_json("interface-with", "-n", "0", "--summary", "-o", File.join(WORK, "iw.json"), paths[2], leaked)
  x = l.interface_with(d)
  check_eq "interface/#{tag}/totals", want["totals"].reject { |k, _| k == "memsize_saturated" },
           x.totals.reject { |k, _| k == :memsize_saturated }.transform_keys(&:to_s)
  check_eq "interface/#{tag}/border",
           want["diff_border"].map { |r| r.values_at("address", "keepalive_count", "retained_count", "holders") },
           x.border.map { |r| [hex(r.object), r.keepalive_count, r.retained_count, r.holders] }
  check_eq "interface/#{tag}/holders",
           want["self_border"].map { |r| r.values_at("address", "holds", "keepalive") },
           x.holders.map { |r| [hex(r.object), r.held, r.keepalive] }
  [b, a, l].each(&:close)
end

# ---- N heaps: Heap#leaks over up to 16, as `heapdump leaks d1 ... dN` ----
gpaths = (1..4).map { |i| fixture("growth_#{i}.json.gz") }
gh = gpaths.map { |p| HeapDump.load(p) }
g4 = gh[0].leaks(*gh[1..])
want = cli_json("leaks", *gpaths)
check_eq "leaks/four-heaps/verdict", want["verdict"]["text"], g4.verdict
check_eq "leaks/four-heaps/totals", [want["leaked"]["count"], want["leaked"]["memsize"]], [g4.count, g4.memsize]
check_eq "leaks/four-heaps/growing", want["growing"]["collections"].map { |c| [c["object"]["address"], c["lengths"]] },
         g4.growing.map { |c| [hex(c.object), c.lengths] }
check "leaks/four-heaps/a-step-kept", g4.steps.size == 1 && g4.steps[0].equal?(gh[2])
check_eq "leaks/four-heaps/lengths-per-heap", [4], g4.growing.map { |c| c.lengths.size }.uniq
check_eq "leaks/three-heaps/its-own-lengths", [40, 80, 160],
         gh[0].leaks(gh[1], gh[3]).growing.map(&:lengths).find { |l| l[0] == 40 }
check_raises("leaks/seventeen-heaps", ArgumentError) { gh[0].leaks(*([gh[1]] * 16)) }
gh.each(&:close)

# ---- order: heaps given newest first are refused, with the command's words ----
require "open3"

def cli_err(*args)
  _out, err, st = Open3.capture3(HD, *args)
  [st.exitstatus, err.lines.map(&:chomp).reject { |l| l.include?("repaired") }]
end

check "order/error-class", defined?(HeapDump::OrderError) && HeapDump::OrderError < HeapDump::Error
ORDER_ERROR = defined?(HeapDump::OrderError) ? HeapDump::OrderError : Class.new(StandardError)
lb, la, ll = %w[leak_before.json leak_after.json leak_later.json].map { |n| fixture(n) }
hb, ha, hl = [lb, la, ll].map { |f| HeapDump.load(f) }
[["leaks-pair", :leaks, [ha, hb], [la, lb]],
 ["leaks-three", :leaks, [hl, ha, hb], [ll, la, lb]],
 ["diff-pair", :diff, [ha, hb], [la, lb]],
 ["diff-later-reversed", :diff, [hb, hl, ha], [lb, ll, la]]].each do |tag, meth, heaps, paths|
  cmd = meth.to_s
  rc, err = cli_err(cmd, "-q", *paths)
  check_eq "order/#{tag}/cli-refuses", 2, rc
  e, warned = stderr_of { heaps[0].public_send(meth, *heaps[1..]) }
  check "order/#{tag}/raises-order-error", e.is_a?(ORDER_ERROR), e.inspect[0, 300]
  check_eq "order/#{tag}/cli-text", err,
           (e.is_a?(Exception) ? warned.lines.map(&:chomp) + e.message.lines.map { |m| "heapdump: #{m.chomp}" } : [])
  # force: true compares them as given, as --force does, and warns as it warns
  rc, ferr = cli_err(cmd, "-q", "--force", "-f", "json", *paths)
  got, fwarned = stderr_of { heaps[0].public_send(meth, *heaps[1..], force: true) }
  check_eq "order/#{tag}/force-warns-as-cli", ferr, fwarned.lines.map(&:chomp)
  want = cli_json(cmd, "--force", *paths)
  if meth == :leaks
    check_eq "order/#{tag}/force-as-cli",
             [want["leaked"] || want["new"], want["border"], want["groups"],
              want["suspects"].map { |x| [x["holder"] && x["holder"]["address"], x["retained_count"]] }],
             (got.is_a?(HeapDump::Leaks) ? [{ "count" => got.count, "memsize" => got.memsize }, got.border, got.groups,
                                             got.shown.map { |x| [x.holder && hex(x.holder), x.retained_count] }] : got)
  else
    check_eq "order/#{tag}/force-as-cli", [want["new"]["count"], want["retained"] && want["retained"]["count"]],
             (got.is_a?(HeapDump::Diff) ? [got.added_count, got.later ? got.retained_count : nil] : got)
  end
end
# the right order: no exception, no word
ok, quiet = stderr_of { hb.leaks(ha, hl) }
check "order/right-order-leaks", ok.is_a?(HeapDump::Leaks) && quiet.empty?, "#{ok.inspect[0, 200]} #{quiet}"
ok, quiet = stderr_of { hb.diff(ha) }
check "order/right-order-diff", ok.is_a?(HeapDump::Diff) && quiet.empty?, "#{ok.inspect[0, 200]} #{quiet}"
# by the gem's sidecars: the same process, AFTER's time before BEFORE's
sb = File.join(WORK, "sc_before.json")
sa = File.join(WORK, "sc_after.json")
FileUtils.cp(lb, sb)
FileUtils.cp(la, sa)
meta = ->(time, pid) { JSON.generate("pid" => pid, "time" => time, "rss_bytes" => 1000, "ruby_version" => "3.1.2") }
File.write("#{sb}.meta.json", meta.call("2026-11-24T10:00:05.000000Z", 4242))
File.write("#{sa}.meta.json", meta.call("2026-11-24T10:00:01.500000Z", 4242))
hsb, hsa = HeapDump.load(sb), HeapDump.load(sa)
rc, err = cli_err("leaks", "-q", sb, sa)
check_eq "order/sidecar/cli-refuses", 2, rc
e, = stderr_of { hsb.leaks(hsa) }
check "order/sidecar/raises", e.is_a?(ORDER_ERROR) && e.message.include?("by their sidecars"), e.inspect[0, 300]
check_eq "order/sidecar/cli-text", err, (e.is_a?(Exception) ? ["heapdump: #{e.message}"] : [])
# a store whose source dump has the sidecar: found through the store, as the command finds it
st = File.join(WORK, "sc_after.hds")
system(HD, "index", "-q", "-o", st, sa, exception: true)
hst = HeapDump.load(st)
rc, err = cli_err("diff", "-q", sb, st)
e, = stderr_of { hsb.diff(hst) }
check_eq "order/sidecar-store/cli-text", [2, err], [rc, e.is_a?(ORDER_ERROR) ? ["heapdump: #{e.message}"] : e.inspect]
# two processes by their sidecars: a warning (the command's), no refusal
File.write("#{sa}.meta.json", meta.call("2026-11-24T10:00:01.500000Z", 4343))
rc, err = cli_err("diff", "-q", sb, sa)
got, warned = stderr_of { hsb.diff(hsa) }
check_eq "order/two-processes/warns-as-cli", [0, err], [got.is_a?(HeapDump::Diff) ? 0 : got.inspect, warned.lines.map(&:chomp)]
check "order/two-processes/warned", warned.include?("two different processes"), warned
[hb, ha, hl, hsb, hsa, hst].each(&:close)

# ---- an empty selection or a file that is no dump: an error, never "no leak" ----
hl = HeapDump.load(ll)
none = hl.select(class: "NoSuchClassAnywhere")
rc, err = cli_err("roots-of", "-q", ll, "--class", "NoSuchClassAnywhere")
e = check_raises("empty/roots_of-raises", HeapDump::Error) { hl.roots_of(none) }
check "empty/roots_of-as-cli", rc == 1 && e && err.any? { |l| l.end_with?(e.message.sub("#{ll}: ", "")) } &&
                               e.message.include?("picks no object"), "#{rc} #{err} #{e&.message}"
check_raises("empty/subgraph_of-raises", HeapDump::Error) { hl.subgraph_of(none) }
e = check_raises("empty/interface_with-raises", HeapDump::Error) { hl.interface_with(none) }
check "empty/interface_with-says-so", e && e.message.include?("picks no object"), e&.message
check_raises("empty/interface_with-empty-array", HeapDump::Error) { hl.interface_with([]) }
hb = HeapDump.load(lb)
same = hb.diff(hb)
e = check_raises("empty/interface_with-empty-diff", HeapDump::Error) { hb.interface_with(same) }
check "empty/interface_with-empty-diff-says-so", e && e.message.include?("the diff found no new object"), e&.message
hb.close
notdump = File.join(WORK, "notes2.txt")
File.write(notdump, "hello\n")
e = check_raises("empty/from-not-a-dump-raises", HeapDump::Error) { hl.interface_with(hl.select(from: notdump)) }
check "empty/from-not-a-dump-says-so", e && e.message.include?("not a heap dump"), e&.message
emptyf = File.join(WORK, "empty2.json")
File.write(emptyf, "")
check_raises("empty/from-empty-file-raises", HeapDump::Error) { hl.interface_with(hl.select(from: emptyf)) }
check_raises("empty/leaks-after-not-a-heap", TypeError) { hb = HeapDump.load(lb); hb.leaks(notdump) }
hl.close

# ---- skip_weak: as --skip-weak. A WeakKeyMap's listed references are its
# values, held while their keys live (man 5 heapdump-store, WEAK MAPS):
# --skip-weak walks them too ----
%w[ok_ruby3.3.10_traced.json.gz ok_ruby3.4.8_traced.json.gz ok_ruby4.0.1_traced.json.gz].each do |name|
  path = fixture(name)
  heap = HeapDump.load(path)
  wkm = heap.select(type: :DATA).find { |o| o.aux == "weakkeymap" }
  val = wkm&.references&.first
  unless val
    check "weak/#{name}/fixture-has-weakkeymap", false, "no weakkeymap with a reference"
    next
  end
  a = hex(val)
  begin
    want = cli_json("path", path, a)["path"].map { |o| o["address"] }
    check_eq "weak/#{name}/path-as-cli", want, heap.path(val)&.objects&.map { |o| hex(o) }
    check "weak/#{name}/path-through-weakkeymap", want.include?(hex(wkm)), want.inspect
    skip = cli_json("path", "--skip-weak", path, a)["path"].map { |o| o["address"] }
    check_eq "weak/#{name}/skip-path-as-cli", skip, heap.path(val, skip_weak: true)&.objects&.map { |o| hex(o) }
    check "weak/#{name}/skip-path-through-weakkeymap", skip.include?(hex(wkm)), skip.inspect
    check_eq "weak/#{name}/object-path-skip", skip, val.path(skip_weak: true)&.objects&.map { |o| hex(o) }
    want = JSON.generate(cli_json("dominators", path, a)).scan(/"address":"(0x\h+)"/).flatten
    got = heap.dominators(val)&.objects&.map { |o| hex(o) }
    check "weak/#{name}/dominators-as-cli", got && got.last == a && (got - want).empty?, "#{got} vs #{want}"
    rc, = cli_err("dominators", "-q", "--skip-weak", path, a)
    check_eq "weak/#{name}/skip-dominators-as-cli", [rc == 0 ? :chain : nil],
             [heap.dominators(val, skip_weak: true) && :chain]
    cli_ro = File.join(WORK, "ro-weak.json")
    [[], ["--skip-weak"]].each do |opt|
      rc, err = cli_err("roots-of", "-q", *opt, path, "--address", a, "-o", cli_ro)
      got = heap.roots_of(heap.select(address: a), skip_weak: !opt.empty?)
      if rc.zero?
        cli_addrs = File.foreach(cli_ro).filter_map { |l| j = JSON.parse(l) and j["address"] }.sort
        check_eq "weak/#{name}/roots_of#{opt.join}-as-cli", cli_addrs, got.map { |o| hex(o) }.sort
      else
        check_eq "weak/#{name}/roots_of#{opt.join}-as-cli", [[], [a]], [got.map { |o| hex(o) }, got.unreached.map { |o| hex(o) }]
      end
    end
    want = cli_json("top", "-n", "0", "--skip-weak", path)["objects"].map { |o| [o["object"]["address"], o["retained_count"], o["retained_memsize"]] }
    got = heap.top(heap.size, skip_weak: true).map { |o| [hex(o), o.retained_count, o.retained] }
    check_eq "weak/#{name}/skip-top-as-cli", want, got
    plain = cli_json("top", "-n", "0", path)["objects"].map { |o| [o["object"]["address"], o["retained_count"], o["retained_memsize"]] }
    check "weak/#{name}/top-same", plain == want, "top and top --skip-weak differ: a WeakKeyMap's values were dropped"
    check_eq "weak/#{name}/top-unchanged", plain, heap.top(heap.size).map { |o| [hex(o), o.retained_count, o.retained] }
  rescue StandardError => e
    check "weak/#{name}/no-exception", false, "#{e.class}: #{e.message}"
  end
  heap.close
end
# skip_weak has an effect: 3.1's WeakMap lists its finalizer, which
# --skip-weak does not walk
begin
  path = fixture("ok_ruby3.1_traced.json")
  heap = HeapDump.load(path)
  want = cli_json("top", "-n", "0", "--skip-weak", path)["objects"].map { |o| [o["object"]["address"], o["retained_count"], o["retained_memsize"]] }
  got = heap.top(heap.size, skip_weak: true).map { |o| [hex(o), o.retained_count, o.retained] }
  check_eq "weak/3.1/skip-top-as-cli", want, got
  plain = heap.top(heap.size).map { |o| [hex(o), o.retained_count, o.retained] }
  check "weak/3.1/top-differs", plain != got, "top and top --skip-weak agree: the fixture tests nothing"
  heap.close
rescue StandardError => e
  check "weak/3.1/no-exception", false, "#{e.class}: #{e.message}"
end
# leaks --skip-weak on the leak scenarios: the same answers as the command
[%w[leak_before.json leak_after.json leak_later.json],
 %w[leak_ruby4.0.1_before.json.gz leak_ruby4.0.1_after.json.gz leak_ruby4.0.1_later.json.gz]].each do |names|
  paths = names.map { |n| fixture(n) }
  b, a, l = paths.map { |f| HeapDump.load(f) }
  want = cli_json("leaks", "--skip-weak", *paths)
  begin
    lk = b.leaks(a, l, skip_weak: true)
    check_eq "weak/leaks-#{names[0]}-as-cli",
             [want["leaked"]["count"], want["border"], want["groups"],
              want["suspects"].map { |x| [x["holder"] && x["holder"]["address"], x["retained_count"], x["path"] && x["path"]["hops"].map { |o| o["address"] }] }],
             [lk.count, lk.border, lk.groups, lk.shown.map { |x| [x.holder && hex(x.holder), x.retained_count, x.path&.objects&.map { |o| hex(o) }] }]
  rescue StandardError => e
    check "weak/leaks-#{names[0]}-no-exception", false, "#{e.class}: #{e.message}"
  end
  [b, a, l].each(&:close)
end

# ---- memory: iterating every object of a big store stays flat ----
big = ENV["BIG"]
if big.nil? || big.empty? || !File.exist?(big)
  check "big/dump-present", false, "BIG is not set or missing: #{big.inspect}"
else
  heap = HeapDump.load(big)
  def rss_kb = File.read("/proc/self/status")[/VmRSS:\s+(\d+)/, 1].to_i
  GC.start
  slots0 = GC.stat(:heap_available_slots)
  rss0 = rss_kb
  peak = rss0
  n = 0
  mem = 0
  heap.each do |o|
    n += 1
    mem += o.memsize
    o.class_name
    peak = [peak, rss_kb].max if (n % 20_000).zero?
  end
  GC.start
  grown = GC.stat(:heap_available_slots) - slots0
  check_eq "big/every-object", heap.size, n
  check_eq "big/memsize-as-stats", heap.totals(all: true)[:memsize], mem
  check "big/heap-slots-flat", grown < 100_000, "the Ruby heap grew by #{grown} slots over #{n} objects"
  check "big/rss-flat", peak - rss0 < 12_000, "RSS #{rss0} kB -> peak #{peak} kB over #{n} objects"
  puts "# big: #{n} objects, RSS #{rss0} -> peak #{peak} kB, heap slots +#{grown}"
  heap.close
end
