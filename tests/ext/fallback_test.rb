# tests/ext/fallback_test.rb DIR - HeapDump.dump when it writes with
# ObjectSpace.dump_all (run with HEAPDUMP_FALLBACK=1): the files, modes,
# sidecar, gzip, fork, signal and failure paths of the native dump.
require_relative "t"
require "heapdump"
require "json"
require "zlib"

dir = ARGV.fetch(0)
check "native-walk-off", !HeapDump.native_walk?

def leftovers(dir)
  Dir.children(dir).select { |n| n.start_with?(".") }
end

class Marker; end
HeapDump.trace_allocations { $marker = Marker.new; $line = __LINE__ }
path = File.join(dir, "plain.json")
check_eq "returns-path", path, HeapDump.dump(path)
check_eq "mode-0600", "600", format("%o", File.stat(path).mode & 0o777)
check_eq "sidecar-mode-0600", "600", format("%o", File.stat("#{path}.hdmeta").mode & 0o777)
check_eq "no-temporary-left", [], leftovers(dir)
recs = 0
marker = nil
File.foreach(path) do |l|
  r = JSON.parse(l)
  recs += 1
  marker = r if r["address"] == format("0x%x", $marker.object_id) || (r["file"] == __FILE__ && r["line"] == $line && r["type"] == "OBJECT")
end
check "every-line-json", recs > 1000
check "traced-site-from-objspace", marker && marker["file"] == __FILE__ && marker["line"] == $line, marker.inspect
meta = JSON.parse(File.read("#{path}.hdmeta"))
check_eq "sidecar/pid", Process.pid, meta["pid"]
check_eq "sidecar/dump-bytes", File.size(path), meta["dump_bytes"]
check "sidecar/memsize", meta["dump_memsize"].to_i > 100_000, meta["dump_memsize"].inspect

gz = HeapDump.dump(File.join(dir, "b.json.gz"), gzip: true)
check_eq "gzip/magic", "\x1f\x8b".b, File.binread(gz, 2)
n = 0
Zlib::GzipReader.open(gz) { |z| z.each_line { |l| JSON.parse(l.b); n += 1 } }
check "gzip/every-line-json", n > 1000

job = HeapDump.dump(File.join(dir, "forked.json"), fork: true)
check_eq "fork/wait", File.join(dir, "forked.json"), job.wait
check "fork/sidecar", File.exist?("#{job.path}.hdmeta")

# a signal dump, by the same route as require "heapdump/signal"
sig = File.join(dir, "sig")
Dir.mkdir(sig)
HeapDump.on_signal("USR2", dir: sig)
majors = GC.stat(:major_gc_count)
Process.kill("USR2", Process.pid)
50.times do
  break if Dir.children(sig).any? { |f| f.end_with?(".json") }

  sleep 0.1
end
sleep 0.1 until Dir.children(sig).none? { |f| f.start_with?(".") } # the rename is the end
got = Dir.children(sig).grep(/\Aheapdump-#{Process.pid}-[0-9a-fT-]+\.json\z/)
check "signal/dump-appears", got.size == 1, Dir.children(sig).inspect
check "signal/sidecar", got.size == 1 && File.exist?(File.join(sig, "#{got[0]}.hdmeta"))
check "signal/full-gc-first-by-default", GC.stat(:major_gc_count) > majors

# the same failures as the native dump: no partial file, no sidecar
check_raises("fail/missing-dir", HeapDump::Error) { HeapDump.dump(File.join(dir, "nope", "x.json")) }
wdir = File.join(dir, "full-disk")
Dir.mkdir(wdir)
pid = fork do
  Signal.trap("XFSZ", "IGNORE")
  Process.setrlimit(:FSIZE, 64 * 1024)
  begin
    HeapDump.dump(File.join(wdir, "x.json"))
    exit!(3)
  rescue HeapDump::Error
    exit!(0)
  rescue Exception # rubocop:disable Lint/RescueException
    exit!(4)
  end
end
Process.wait(pid)
check_eq "fail/write-error-raises", 0, $?.exitstatus
check_eq "fail/write-error-leaves-nothing", [], Dir.children(wdir)
null = File.join(dir, "null-dev")
null = "/dev/null" unless system("mknod", null, "c", "1", "3", err: File::NULL)
check_eq "device/in-place", null, HeapDump.dump(null)
check "device/still-a-device", File.chardev?(null)
check "device/no-scratch-left", Dir.children(HeapDump.dump_dir).grep(/\A\.heapdump-#{Process.pid}\.raw/).empty?
