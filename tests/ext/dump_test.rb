# tests/ext/dump_test.rb DIR - HeapDump.dump in a real ruby: the files it
# writes (modes, sidecar, no temporary left), every line valid JSON,
# escaping of hostile paths and method names, allocation tracing, gzip,
# full:, since:, fork:, and the failure paths.
require_relative "t"
require "heapdump"
require "json"
require "zlib"

dir = ARGV.fetch(0)
# Without the native walk (a Ruby the walker does not know, or
# HEAPDUMP_FALLBACK=1) the records are ObjectSpace.dump_all's.
native = HeapDump.native_walk?
# 4.0 inlines Class#new (opt_new): no frame of "new" at allocation
new_method = RUBY_VERSION >= "3.5" ? nil : "new"

# Parses every line; yields each record; returns [records, bad lines].
# Keeps nothing: holding the records would grow the next dumps' heaps.
def parse_all(path)
  bad = []
  n = 0
  io = path.end_with?(".gz") ? Zlib::GzipReader.open(path) : File.open(path, "rb")
  io.each_line do |l|
    n += 1
    r = JSON.parse(l.b) # binary: GzipReader lines are in the locale's encoding
    yield r if block_given?
  rescue JSON::ParserError => e
    bad << "line #{n}: #{e.message[0, 80]}"
  end
  [n - bad.size, bad]
ensure
  io&.close
end

def leftovers(dir)
  Dir.children(dir).select { |n| n.start_with?(".") }
end

# hostile names, from code allocated while tracing
if native
  weird_file = "we\"ird\\pa\tth\nname.rb"
  bad_file = "bad\xFF\xFEpath.rb".dup.force_encoding("UTF-8")
  bad_file_read = "bad\u00ff\u00fepath.rb"
else
  # dump_all writes file names raw (a quote, newline or invalid UTF-8
  # breaks its line) and the fallback copies its records as they are
  # (heapdump-ruby(3) CAVEATS): plain names, the sites still checked
  weird_file = "weird-path.rb"
  bad_file = bad_file_read = "bad-path.rb"
end
class Probe; end
HeapDump.trace_allocations do
  $weird = eval("'w' + 'x'", binding, weird_file, 7)
  $bad = eval("'b' + 'y'", binding, bad_file, 3)
  Probe.define_method(:"m\u00e9tho\"d") { "m" + "z" }
  $meth = Probe.new.send(:"m\u00e9tho\"d")
  $probe = Probe.new
  $traced_line = __LINE__ - 1
end

path = File.join(dir, "a.json")
check_eq "dump/returns-path", path, HeapDump.dump(path)
check_eq "dump/mode-0600", "600", format("%o", File.stat(path).mode & 0o777)
check_eq "dump/sidecar-mode-0600", "600", format("%o", File.stat("#{path}.hdmeta").mode & 0o777)
check_eq "dump/no-temporary-left", [], leftovers(dir)
types = []
addrs = {}
files = []
methods = []
traced = []
nroots = 0
nshapes = 0 # dump_all's SHAPE records (3.2+), not objects
nrecs, bad = parse_all(path) do |r|
  nroots += 1 if r["type"] == "ROOT"
  nshapes += 1 if r["type"] == "SHAPE"
  types << r["type"] if types.last != r["type"] && r["type"] != "SHAPE"
  addrs[r["address"]] = true if r["address"] && r["type"] != "SHAPE"
  files << [r["file"], r["line"]] if r["file"]
  methods << r["method"] if r["method"]
  traced << r if r["type"] == "OBJECT" && r["file"] == __FILE__
end
check "dump/every-line-json", bad.empty? && nrecs > 1000, bad.first(3).inspect
check "dump/ends-with-newline", File.binread(path)[-1] == "\n"
check "dump/roots-first", types.first == "ROOT" && types.count("ROOT") == 1
check "dump/unique-addresses", addrs.size == nrecs - nroots - nshapes, "#{addrs.size} addresses, #{nrecs} records"

# escaping: the exact bytes come back (invalid UTF-8 as U+00XX)
check "escape/file-with-quote-backslash-tab-newline", files.include?([weird_file, 7])
check "escape/invalid-utf8-file", files.include?([bad_file_read, 3])
check "escape/method-non-ascii-quote", methods.include?("m\u00e9tho\"d")

# allocation tracing: file, line, method, generation
site = HeapDump.allocation_site($probe)
check "trace/site-known", site && site[0] == __FILE__ && site[1] == $traced_line, site.inspect
traced.select! { |r| r["line"] == $traced_line }
check "trace/fields-in-dump", traced.any? { |r| r["method"] == new_method && r["generation"].is_a?(Integer) }, traced.first.inspect
check "trace/generation-is-gc-count", traced.all? { |r| r["generation"] <= GC.count }

# sidecar
meta = JSON.parse(File.read("#{path}.hdmeta"))
check_eq "sidecar/pid", Process.pid, meta["pid"]
check "sidecar/rss", meta["rss_bytes"].to_i > 1_000_000, meta["rss_bytes"].inspect
check "sidecar/malloc", meta["malloc_in_use_bytes"].to_i > 0
check "sidecar/gc-stat", meta["gc_stat"].is_a?(Hash) && meta["gc_stat"]["count"].is_a?(Integer)
check "sidecar/memsize-of-all", meta["memsize_of_all"].to_i > 0 && meta["memsize_of_all"] <= meta["dump_memsize"], meta.slice("memsize_of_all", "dump_memsize").inspect
check_eq "sidecar/ruby-version", RUBY_VERSION, meta["ruby_version"]
check_eq "sidecar/objects", addrs.size, meta["objects"]
types = addrs = files = methods = traced = nil
GC.start

# memsize_of_all as ObjectSpace computes it, same heap (GC off)
require "objspace"
GC.disable
# taken before the dump: the fallback allocates while it copies
# dump_all's output, and the native dumper's preparation of reference
# names allocates Bindings and Arrays that the dump leaves out (GC off,
# they would still count afterwards)
theirs = ObjectSpace.memsize_of_all
m = HeapDump.dump(File.join(dir, "m.json"))
GC.enable
ours = JSON.parse(File.read("#{m}.hdmeta"))["memsize_of_all"]
check "sidecar/memsize-of-all-as-objectspace", (theirs - ours).abs < theirs / 100, "ours #{ours}, ObjectSpace #{theirs}"

# gzip, with and without a path
gz = HeapDump.dump(File.join(dir, "b.json.gz"), gzip: true)
check_eq "gzip/magic", "\x1f\x8b".b, File.binread(gz, 2)
gn, gbad = parse_all(gz)
check "gzip/every-line-json", gbad.empty? && gn > 1000, gbad.first(3).inspect
auto = HeapDump.dump(gzip: true, dir: dir)
check "gzip/default-name", File.basename(auto).match?(/\Aheapdump-#{Process.pid}-\d{8}T\d{6}-\d{6}-\h{16}\.json\.gz\z/), auto

# full: empty slots as NONE lines
full = HeapDump.dump(File.join(dir, "full.json"), full: true)
nones = 0
fn, = parse_all(full) { |r| nones += 1 if r["type"] == "NONE" }
check "full/none-lines", nones > 0
check "full/more-lines", fn > nrecs

# since: traced objects of generation >= N only, no ROOT lines
gen = GC.count
HeapDump.trace_allocations { $late = Array.new(50) { |i| "late#{i}" } }
since = HeapDump.dump(File.join(dir, "since.json"), since: gen)
srecs = []
parse_all(since) { |r| srecs << r unless r["type"] == "SHAPE" }
check "since/no-roots", srecs.none? { |r| r["type"] == "ROOT" }
check "since/only-new-generations", srecs.any? && srecs.all? { |r| r["generation"].to_i >= gen }
check "since/has-the-new-strings", srecs.count { |r| r["type"] == "STRING" && r["value"].to_s.start_with?("late") } >= 50
srecs = nil

# fork: the caller goes on at once, the child writes
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
job = HeapDump.dump(File.join(dir, "forked.json"), fork: true)
returned = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
check "fork/returns-job", job.is_a?(HeapDump::ForkedDump) && job.pid != Process.pid
check "fork/returns-at-once", returned < 0.5, "took #{returned}s"
check_eq "fork/wait", File.join(dir, "forked.json"), job.wait
kn, kbad = parse_all(job.path)
check "fork/every-line-json", kbad.empty? && kn > 1000
check "fork/sidecar", File.exist?("#{job.path}.hdmeta")

# failures: an exception, no file under the final name, nothing left
e = check_raises("fail/missing-dir-raises", HeapDump::Error) { HeapDump.dump(File.join(dir, "nope", "x.json")) }
check "fail/message-names-dir", e && e.message.include?("nope")
File.write(File.join(dir, "plain"), "")
check_raises("fail/not-a-dir-raises", HeapDump::Error) { HeapDump.dump(File.join(dir, "plain", "x.json")) }
wdir = File.join(dir, "full-disk")
Dir.mkdir(wdir)
pid = fork do
  # a full disk, as the file-size limit: writes fail with EFBIG
  Signal.trap("XFSZ", "IGNORE")
  Process.setrlimit(:FSIZE, 64 * 1024)
  begin
    HeapDump.dump(File.join(wdir, "x.json"))
    exit!(3)
  rescue HeapDump::Error, SystemCallError => err
    exit!(err.is_a?(HeapDump::Error) ? 0 : 4)
  end
end
Process.wait(pid)
check_eq "fail/write-error-raises", 0, $?.exitstatus
check_eq "fail/write-error-leaves-nothing", [], Dir.children(wdir)
check "fail/process-still-fine", HeapDump.dump(File.join(dir, "after.json")) && true
