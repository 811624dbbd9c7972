# tests/ext/middleware_test.rb DIR - HeapDump::Middleware in a real
# Rack server: middleware_app.rb under WEBrick on 127.0.0.1 (Rack::Lint
# on both sides), driven by real HTTP requests (Net::HTTP); its log
# entries, its dumps (read by the heapdump program, $HEAPDUMP), its
# threads; then the option checks and the Rack 3 body shapes in-process.
require_relative "t"
require "heapdump/middleware"
require "json"
require "net/http"
require "stringio"
require "logger"
require "pathname"

DIR = ARGV.fetch(0)
APP_RB = File.expand_path("middleware_app.rb", __dir__)
HEAPDUMP_BIN = ENV.fetch("HEAPDUMP")
# "@name" -> "APP_RB:LINE", the allocation sites the app marks
SITE = File.readlines(APP_RB).each_with_index.each_with_object({}) do |(l, i), h|
  h[Regexp.last_match(1)] = "#{APP_RB}:#{i + 1}" if l =~ /# @(\w+)$/
end

# A server of middleware_app.rb with these middleware options.
class Server
  attr_reader :pid, :port, :err

  def initialize(name, opts)
    @name = name
    @err = File.join(DIR, "#{name}.stderr")
    portfile = File.join(DIR, "#{name}.port")
    @pid = Process.spawn(RbConfig.ruby, APP_RB, portfile, JSON.generate(opts),
                         in: File::NULL, out: File::NULL, err: @err)
    deadline = Time.now + 30
    sleep 0.05 until File.exist?(portfile) || Time.now > deadline || Process.wait(@pid, Process::WNOHANG)
    raise "server #{name} did not start: #{File.read(@err)[-600, 600] || File.read(@err)}" unless File.exist?(portfile)

    @port = Integer(File.read(portfile))
  end

  def get(path)
    Net::HTTP.start("127.0.0.1", @port, read_timeout: 60) { |h| h.get(path) }
  end

  def rss
    File.read("/proc/#{@pid}/status")[/^VmRSS:\s+(\d+) kB/, 1].to_i * 1024
  end

  def stop
    Process.kill("TERM", @pid)
    Process.wait(@pid)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  end
end

# The middleware's entries in a log file, in order.
def entries(file)
  return [] unless File.exist?(file)

  File.readlines(file, chomp: true).map { |l| l[/heapdump: (?:[A-Z]+|"[^"]*") .*/] }.compact
end

# {site => count} of an entry's "top" list (unquoted sites only).
def pairs(entry)
  top = entry[/; top \d+: (.*?)(?:; dump|$)/, 1].to_s
  top.split(", ").to_h { |p| n, site = p.split(" ", 2); [site, n.to_i] }
end

def wait_for(deadline = 30)
  t = Time.now + deadline
  sleep 0.05 until yield || Time.now > t
  yield
end

servers = []
at_exit { servers.each(&:stop) }

# ---- allocated (the default): logged on rack.errors --------------------
s = Server.new("alloc", {})
servers << s
r = s.get("/strings")
check_eq "alloc/status", "200", r.code
e = entries(s.err)
check_eq "alloc/one-entry-per-request", 1, e.size
check "alloc/method-path-status", e[0].to_s.start_with?("heapdump: GET /strings 200 allocated "), e[0].inspect
n = pairs(e[0].to_s)["#{SITE['strings']}:String"].to_i
check "alloc/1000-strings-at-their-line", n >= 1000, "#{SITE['strings']}:String #{n} in #{e[0].inspect[0, 300]}"
check "alloc/no-own-sites", e[0].to_s !~ %r{heapdump(/middleware)?\.rb:}, e[0].inspect
check "alloc/twenty-by-default", pairs(e[0].to_s).size.between?(2, 20), e[0].inspect

# the application's sites first, before the server's and the gems'
# (Rack::Lint and WEBrick allocate more for /few than the app does)
s.get("/few")
few = pairs(entries(s.err).last.to_s).transform_keys { |k| k.delete_prefix('"').delete_suffix('"') }
apps = few.keys.map { |k| k.start_with?("#{APP_RB}:") }
check "app-first/first-site-is-the-apps", apps.first == true, few.inspect[0, 400]
check "app-first/every-app-site-before-the-libraries", apps == apps.sort_by { |a| a ? 0 : 1 }, few.inspect[0, 400]
check "app-first/the-apps-objects-listed", few.key?("#{SITE['few']}:Object"), few.inspect[0, 400]
# a library's site counts more than the first: by count alone, it would lead
check "app-first/library-sites-follow", apps.include?(false) && few.values.max.to_i > few.values.first, few.inspect[0, 400]

s.get("/stream")
e = entries(s.err)
chunks = pairs(e.last.to_s)["#{SITE['chunks']}:Chunk"].to_i
check_eq "body/allocations-while-iterated-count", 300, chunks
check_eq "body/close-propagated-once", "1\n", s.get("/closes").body

r = s.get("/boom")
check_eq "raise/server-answers-500", "500", r.code
check "raise/entry-names-it", entries(s.err).any? { |l| l.start_with?("heapdump: GET /boom raised RuntimeError allocated ") }, entries(s.err).last.inspect
s.get("/strings")
check "raise/next-request-tracked", entries(s.err).last.to_s.include?("#{SITE['strings']}:String"), entries(s.err).last.inspect

# threads: /slow is tracked and waits until /fast, concurrent, is served
before = entries(s.err).size
slow = Thread.new { s.get("/slow") }
check "threads/slow-started", wait_for { s.get("/started").body == "yes" }
fast = s.get("/fast")
slow_code = slow.value.code
check_eq "threads/both-served", %w[200 200], [slow_code, fast.code]
e = entries(s.err)[before..]
fe = e.find { |l| l.include?(" /fast ") }.to_s
se = e.find { |l| l.include?(" /slow ") }.to_s
check_eq "threads/concurrent-one-untracked", "heapdump: GET /fast 200 untracked (another request was being tracked)", fe
check "threads/tracked-one-has-its-sites", pairs(se)["#{SITE['slow']}:String"].to_i >= 1000, se.inspect
check "threads/tracked-one-not-the-others", !se.include?("#{SITE['fast']}:"), se.inspect

# a burst: each tracked entry counts its own 1000 Strings, not another's
before = entries(s.err).size
codes = Array.new(12) { Thread.new { s.get("/strings").code } }.map(&:value)
check_eq "burst/all-served", ["200"] * 12, codes
e = entries(s.err)[before..]
tracked = e.grep(/ allocated /)
counts = tracked.map { |l| pairs(l)["#{SITE['strings']}:String"].to_i }
check_eq "burst/one-entry-each", 12, e.size
check "burst/counts-own-only", !tracked.empty? && counts.all? { |c| c >= 1000 && c < 2000 }, counts.inspect
check "burst/rest-untracked", (e - tracked).all? { |l| l.end_with?("untracked (another request was being tracked)") }, (e - tracked).first.inspect
s.get("/strings")
check "burst/slot-released", entries(s.err).last.to_s.include?(" allocated "), entries(s.err).last.inspect

# ---- retained: true, logging to an IO --------------------------------
log = File.join(DIR, "retained.log")
s = Server.new("retained", retained: true, log: "io:#{log}")
servers << s
s.get("/keep")
s.get("/strings")
keep, strings = entries(log)
check "retained/entry", keep.to_s.start_with?("heapdump: GET /keep 200 retained "), keep.inspect
check_eq "retained/kept-objects-shown", 500, pairs(keep.to_s)["#{SITE['keep']}:Keep"]
check "retained/garbage-not-shown", strings.to_s.start_with?("heapdump: GET /strings 200 retained ") && !strings.include?("#{SITE['strings']}:String"), strings.inspect
check_eq "retained/nothing-on-rack-errors", 0, entries(s.err).size

# ---- dump_every: 3, top: 2, a Logger ----------------------------------
ddir = File.join(DIR, "every")
Dir.mkdir(ddir)
log = File.join(DIR, "every.log")
s = Server.new("every", dump_every: 3, dump_dir: ddir, top: 2, log: "logger:#{log}")
servers << s
7.times do |i|
  s.get("/strings")
  e = entries(log)
  path = e.last.to_s[/; dump (\S+) \(every 3 requests, pid \d+\)$/, 1]
  check "every/request-#{i + 1}-#{path ? 'dumps' : 'no-dump'}", e.size == i + 1 && (path.nil? == !((i + 1) % 3).zero?), e.last.inspect
  # wait for the dump to be complete (its rename) before the next one is due
  next unless path

  check "every/dump-#{i + 1}-complete", wait_for { File.exist?(path) }, path
  child = e.last[/, pid (\d+)\)$/, 1]
  check "every/dump-#{i + 1}-reaped", wait_for { !File.exist?("/proc/#{child}") }, child
end
dumps = Dir.children(ddir).grep(/\Aheapdump-#{s.pid}-\d{8}T\d{6}-\d{6}-\h{16}\.json\z/).sort
check_eq "every/7-requests-2-dumps", 2, dumps.size
check "every/no-temporary-left", Dir.children(ddir).none? { |f| f.start_with?(".") }, Dir.children(ddir).inspect
dumps.each_with_index do |d, i|
  out = IO.popen([HEAPDUMP_BIN, "stats", "-q", "--strict", File.join(ddir, d)], err: %i[child out], &:read)
  check "every/heapdump-stats-reads-dump-#{i + 1}", $?.success? && out.include?("objects"), out[0, 300]
  check "every/sidecar-#{i + 1}", File.exist?(File.join(ddir, "#{d}.hdmeta"))
end
check "every/top-2", entries(log).all? { |l| pairs(l).size == 2 }, entries(log).first.inspect
check "every/logger-format", File.readlines(log).grep(/heapdump: GET/).all? { |l| l.start_with?("I, [") }, File.read(log)[0, 200]

# a dump still being written: the next due dump is skipped, and says so
ddir = File.join(DIR, "skip")
Dir.mkdir(ddir)
s = Server.new("skip", dump_every: 1, dump_dir: ddir, track: false)
servers << s
# stop the dump's child before it renames its file (a child that was
# faster than the stop is let go, and the next request tries again)
first = path = nil
pid = 0
5.times do
  s.get("/")
  first = entries(s.err).last.to_s
  pid = first[/, pid (\d+)\)$/, 1].to_i
  path = first[/; dump (\S+) \(/, 1]
  break unless pid.positive?

  Process.kill("STOP", pid) rescue nil
  break unless path && File.exist?(path)

  Process.kill("CONT", pid) rescue nil
  wait_for { !File.exist?("/proc/#{pid}") }
  sleep 0.3
end
tries = entries(s.err).size
check "skip/track-false-logs-dumps", first.start_with?("heapdump: GET / 200; dump ") && pid.positive?, first.inspect
check "skip/child-stopped-mid-dump", path && !File.exist?(path), "#{tries} tries"
s.get("/")
check "skip/overlap-skipped", entries(s.err).last.to_s.include?("; dump skipped (every 1 requests): pid #{pid} is still writing "), entries(s.err).last.inspect
Process.kill("CONT", pid) rescue nil
check "skip/first-completes", wait_for { File.exist?(path) }, path
check "skip/child-reaped", wait_for { !File.exist?("/proc/#{pid}") }
sleep 0.3 # the server's reaping thread ends just after the wait returns
s.get("/")
check "skip/next-dumps-again", entries(s.err).last.to_s.match?(/; dump \S+ \(every 1 requests, pid (?!#{pid}\))\d+\)$/), entries(s.err).last.inspect
check_eq "skip/track-false-no-other-entries", tries + 2, entries(s.err).size

# dump_fork: false: the dump is complete when the response arrives
ddir = File.join(DIR, "inproc")
Dir.mkdir(ddir)
s = Server.new("inproc", dump_every: 2, dump_dir: ddir, dump_fork: false, dump_gc: false)
servers << s
s.get("/")
s.get("/")
path = entries(s.err).last.to_s[/; dump (\S+) \(every 2 requests\)$/, 1]
check "inproc/complete-on-response", path && File.exist?(path) && File.exist?("#{path}.hdmeta"), entries(s.err).last.inspect

# failed dumps (the directory removed after start): said, never raised
ddir = File.join(DIR, "gone")
Dir.mkdir(ddir)
s = Server.new("gone", dump_every: 1, dump_dir: ddir, track: false)
servers << s
Dir.rmdir(ddir)
check_eq "failed/request-served", "200", s.get("/").code
pid = entries(s.err).last.to_s[/, pid (\d+)\)$/, 1].to_i
check "failed/child-reaped", pid.positive? && wait_for { !File.exist?("/proc/#{pid}") }, entries(s.err).inspect
sleep 0.3 # the server's reaping thread ends just after the wait returns
s.get("/")
check "failed/reported-by-next-request", entries(s.err).last.to_s.include?("; previous dump #{ddir}/heapdump-#{s.pid}-") &&
                                         entries(s.err).last.to_s.include?("failed (pid #{pid} exit 1)"), entries(s.err).last.inspect
ddir = File.join(DIR, "gone2")
Dir.mkdir(ddir)
s = Server.new("gone2", dump_every: 1, dump_dir: ddir, dump_fork: false)
servers << s
Dir.rmdir(ddir)
check_eq "failed/in-process-request-served", "200", s.get("/strings").code
check "failed/in-process-said", entries(s.err).last.to_s.match?(%r{; dump failed \(every 1 requests\): heapdump: cannot create a dump in #{ddir}: }), entries(s.err).last.inspect

# ---- dump_rss: once per crossing, gzip ---------------------------------
ddir = File.join(DIR, "rss")
Dir.mkdir(ddir)
base = Server.new("rss0", {})
servers << base
base.get("/")
limit = base.rss + 40_000_000
s = Server.new("rss", dump_rss: limit, dump_dir: ddir, dump_gzip: true, track: false)
servers << s
s.get("/")
check_eq "rss/below-no-dump", 0, entries(s.err).size
s.get("/grow")
e = entries(s.err)
path = e.last.to_s[/; dump (\S+\.json\.gz) \(rss (\d+) >= #{limit}, pid \d+\)$/, 1]
check "rss/crossing-dumps", e.size == 1 && path, e.inspect
check "rss/dump-complete", path && wait_for { File.exist?(path) }, path
s.get("/")
check_eq "rss/still-above-no-second-dump", 1, entries(s.err).size
if path
  out = IO.popen([HEAPDUMP_BIN, "stats", "-q", "--strict", path], err: %i[child out], &:read)
  check "rss/heapdump-stats-reads-gzip", $?.success? && out.include?("objects"), out[0, 300]
end
s.get("/shrink")
below = s.rss < limit
check "rss/shrunk-below", below, "rss #{s.rss} limit #{limit}"
s.get("/grow")
check_eq "rss/crossing-again-dumps-again", 2, entries(s.err).size
check "rss/two-gzip-dumps", wait_for { Dir.children(ddir).grep(/\.json\.gz\z/).size == 2 }, Dir.children(ddir).inspect

# ---- stacks: true: the dumps it writes carry allocation stacks --------
# /keep keeps 500 Keep objects, each with its stack (sample: 1): the
# dump of the second request has STACK lines, and heapdump stats
# --by stack finds them under the request's handler (the app's lambda,
# at the @keep line) inside HeapDump::Middleware#call
ddir = File.join(DIR, "stacks")
Dir.mkdir(ddir)
s = Server.new("stacks", stacks: true, sample: 1, dump_every: 2, dump_dir: ddir)
servers << s
s.get("/keep")
s.get("/")
e = entries(s.err)
path = e.last.to_s[/; dump (\S+) \(every 2 requests, pid \d+\)$/, 1]
check "stacks/dumped", path && wait_for { File.exist?(path) }, e.last.inspect
check "stacks/still-logs-sites", pairs(e.first.to_s)["#{SITE['keep']}:Keep"].to_i >= 500, e.first.inspect
if path && File.exist?(path)
  check "stacks/stack-lines", File.foreach(path).any? { |l| l.start_with?('{"type":"STACK"') }, path
  out = IO.popen([HEAPDUMP_BIN, "stats", "-q", path, "--by", "stack", "-f", "json", "-n", "0"], err: %i[child out], &:read)
  rows = (JSON.parse(out)["rows"] rescue []) # rubocop:disable Style/RescueModifier
  file, line = SITE["keep"].split(":").then { |f, l| [f, l.to_i] }
  handler = rows.select { |r| r["frames"].any? { |f| f["file"] == file && f["line"] == line } }
  kept = handler.sum { |r| r["count"] }
  # 500 Keep objects and the Array that holds them, the Keeps at one
  # stack (Keep.new inside the Array.new block); with the block's
  # internal objects (on 4.0, where Class#new is no frame, at that stack)
  check "stacks/handler-stack-holds-the-kept", kept.between?(501, 510) && handler.map { |r| r["count"] }.max.between?(500, 505),
        "#{kept} objects at #{SITE['keep']}, #{handler.map { |r| r['count'] }.inspect}"
  check "stacks/handler-inside-the-middleware",
        !handler.empty? && handler.all? { |r| r["frames"].any? { |f| f["label"] == "HeapDump::Middleware#call" } },
        handler.first.inspect[0, 400]
end
# the dumps of a middleware without stacks have none: said, exit 1
plain = Dir.glob(File.join(DIR, "every", "heapdump-*.json")).first
if plain
  out = IO.popen([HEAPDUMP_BIN, "stats", "-q", plain, "--by", "stack"], err: %i[child out], &:read)
  check "stacks/none-without", $?.exitstatus == 1 && out.include?("has no allocation stacks"), out[0, 300]
else
  check "stacks/none-without", false, "no dump in #{DIR}/every"
end

# ---- HeapDump.track(thread:) -----------------------------------------
line = __LINE__ + 2
other = Thread.new { sleep 0.2; 50.times { Object.new } }
h = HeapDump.track(thread: Thread.current) { sleep 0.5; 3.times { Object.new } }
other.join
check_eq "track/thread-only-its-own", { "#{__FILE__}:#{line}:Object" => 3 }, h.select { |k, _| k.end_with?(":Object") }
check_raises("track/thread-not-a-thread", ArgumentError) { HeapDump.track(thread: "main") { nil } }

# ---- options -----------------------------------------------------------
ok_app = ->(_env) { [200, {}, []] }
{
  "app-not-callable" => [nil, {}],
  "top-negative" => [ok_app, { top: -1 }],
  "top-string" => [ok_app, { top: "5" }],
  "retained-not-boolean" => [ok_app, { retained: "yes" }],
  "retained-without-track" => [ok_app, { retained: true, track: false }],
  "dump-every-zero" => [ok_app, { dump_every: 0 }],
  "dump-every-float" => [ok_app, { dump_every: 2.5 }],
  "dump-rss-negative" => [ok_app, { dump_rss: -5 }],
  "dump-rss-string" => [ok_app, { dump_rss: "1G" }],
  "dump-dir-missing" => [ok_app, { dump_every: 1, dump_dir: File.join(DIR, "nope") }],
  "dump-dir-not-a-string" => [ok_app, { dump_every: 1, dump_dir: 5 }],
  "dump-gzip-without-trigger" => [ok_app, { dump_gzip: true }],
  "dump-dir-without-trigger" => [ok_app, { dump_dir: DIR }],
  "dump-fork-not-boolean" => [ok_app, { dump_every: 1, dump_fork: nil }],
  "logger-a-string" => [ok_app, { logger: "log.txt" }],
  "app-first-not-boolean" => [ok_app, { app_first: "yes" }],
  "library-paths-a-number" => [ok_app, { library_paths: 3 }],
  "unknown-option" => [ok_app, { dump_evry: 3 }],
  "stacks-not-boolean" => [ok_app, { stacks: 1 }],
  "depth-without-stacks" => [ok_app, { depth: 8 }],
  "sample-without-stacks" => [ok_app, { sample: 8 }],
  "depth-zero" => [ok_app, { stacks: true, depth: 0 }],
  "depth-over-256" => [ok_app, { stacks: true, depth: 257 }],
  "sample-zero" => [ok_app, { stacks: true, sample: 0 }],
  "sample-a-string" => [ok_app, { stacks: true, sample: "64" }],
  "stacks-with-a-bad-top" => [ok_app, { stacks: true, top: -1 }]
}.each do |name, (app, opts)|
  check_raises("options/#{name}", ArgumentError) { HeapDump::Middleware.new(app, **opts) }
end
# a refused middleware started no tracing
check "options/refused-stacks-trace-nothing", !HeapDump.tracing?
m = HeapDump::Middleware.new(ok_app, stacks: true)
check_eq "options/stacks-defaults", [true, HeapDump::STACK_DEPTH, HeapDump::STACK_SAMPLE], [m.stacks, m.depth, m.sample]
check "options/stacks-trace", HeapDump.tracing_stacks?
HeapDump.trace_allocations_stop
HeapDump.trace_allocations_clear
m = HeapDump::Middleware.new(ok_app, top: 0, dump_every: 5, dump_dir: Pathname(DIR), dump_gzip: true)
check "options/valid-accepted", (m.top.zero? && m.dump_every == 5 && m.dump_dir == DIR)
m = HeapDump::Middleware.new(ok_app, app_first: false, library_paths: [Pathname("/srv/vendor")])
check "options/app-first-and-library-paths", !m.app_first && m.library_paths == ["/srv/vendor"]

# ---- Rack 3 bodies, in-process -----------------------------------------
class Streaming
  attr_reader :closed

  def call(stream)
    4.times { stream.write(Object.new.class.name) } # @streamed
  end

  def close
    @closed = (@closed || 0) + 1
  end
end

class Plain
  def initialize
    @closed = 0
  end
  attr_reader :closed

  def each
    yield "a"
  end

  def to_ary
    @closed += 1 # the Rack 3 rule: to_ary of a closable body closes it
    ["a"]
  end

  def close
    @closed += 1
  end
end

streamed_line = File.readlines(__FILE__).index { |l| l.include?("# @streamed") } + 1
errs = StringIO.new
body = Streaming.new
env = { "REQUEST_METHOD" => "GET", "SCRIPT_NAME" => "", "PATH_INFO" => "/s", "rack.errors" => errs }
_, _, wrapped = HeapDump::Middleware.new(->(_e) { [200, {}, body] }).call(env)
check "rack3/streaming-responds-to-call-only", wrapped.respond_to?(:call) && !wrapped.respond_to?(:each) && !wrapped.respond_to?(:to_ary) && !wrapped.respond_to?(:to_path)
out = StringIO.new
wrapped.call(out)
wrapped.close
wrapped.close
check_eq "rack3/streaming-written", "Object" * 4, out.string
check_eq "rack3/close-once", 1, body.closed
check_eq "rack3/streamed-allocations-count", 4, pairs(errs.string.lines.last.to_s)["#{__FILE__}:#{streamed_line}:Object"]

errs = StringIO.new
env["rack.errors"] = errs
plain = Plain.new
_, _, wrapped = HeapDump::Middleware.new(->(_e) { [200, {}, plain] }).call(env)
check_eq "rack3/to-ary", ["a"], wrapped.to_ary
check_eq "rack3/to-ary-closes-once", [1, 1], [plain.closed, errs.string.lines.size]
wrapped.close
check_eq "rack3/close-after-to-ary-no-second-entry", [1, 1], [plain.closed, errs.string.lines.size]

errs = StringIO.new
env["rack.errors"] = errs
env["PATH_INFO"] = "/a b\n\e[31m\"\xff\u0085z".b
HeapDump::Middleware.new(->(_e) { [200, {}, []] }).call(env)[2].close
check_eq "escape/path-quoted-control-bytes-escaped", 'heapdump: GET "/a b\\x0A\\x1B[31m\\"\\xFF\\u0085z" 200 ',
         errs.string[/\A.* 200 /]
check "escape/one-line", errs.string.count("\n") == 1, errs.string.inspect
env["PATH_INFO"] = "/s"

file = File.join(DIR, "f.txt")
File.write(file, "x")
fbody = Struct.new(:to_path) { def each; yield File.read(to_path); end }.new(file)
_, _, wrapped = HeapDump::Middleware.new(->(_e) { [200, {}, fbody] }, logger: StringIO.new).call(env)
check_eq "rack3/to-path-forwarded", file, wrapped.respond_to?(:to_path) && wrapped.to_path
raising = Class.new { def each; end; def close; raise IOError, "close failed"; end }.new
logio = StringIO.new
_, _, wrapped = HeapDump::Middleware.new(->(_e) { [200, {}, raising] }, logger: logio).call(env)
check_raises("rack3/close-error-propagated", IOError) { wrapped.close }
check "rack3/close-error-still-logged", logio.string.start_with?("heapdump: GET /s 200 allocated "), logio.string
mw = HeapDump::Middleware.new(->(_e) { [200, {}, raising] }, logger: StringIO.new)
_, _, wrapped = mw.call(env)
check_raises("rack3/close-error-propagated-again", IOError) { wrapped.close }
_, _, wrapped = mw.call(env)
check_raises("rack3/tracking-released-after-failed-close", IOError) { wrapped.close }
check "rack3/entries-for-both", logio.string.lines.size == 1 && mw.requests == 2, mw.requests
