# tests/ext/middleware_app.rb - a Rack app behind HeapDump::Middleware,
# served by WEBrick on 127.0.0.1 (a free port, written to PORTFILE) for
# middleware_test.rb. Usage: ruby middleware_app.rb PORTFILE OPTIONS_JSON
# OPTIONS_JSON: the middleware's keywords, plus "log": "stderr" (the
# default: rack.errors), "io:PATH" (a File) or "logger:PATH" (a Logger).
# The lines marked "@name" are the allocation sites the test looks for.
require "json"
require "logger"
require "rack"
require "rack/lint"
require "rack/handler/webrick"
require "webrick"
require "heapdump/middleware"

port_file, json = ARGV
opts = JSON.parse(json, symbolize_names: true)
log = opts.delete(:log) || "stderr"
case log
when /\Aio:(.*)/ then opts[:logger] = File.open(Regexp.last_match(1), "a").tap { |f| f.sync = true }
when /\Alogger:(.*)/ then opts[:logger] = Logger.new(Regexp.last_match(1))
end
opts[:dump_rss] = opts[:dump_rss].to_i if opts[:dump_rss]

class Keep; end
class Chunk; end
class Fast; end
$kept = []
$closes = 0
$slow_started = false
$release = Thread::Queue.new

# A body that allocates while it is iterated and counts its closes.
class CountingBody
  def each
    3.times do
      yield Array.new(100) { Chunk.new }.size.to_s # @chunks
    end
  end

  def close
    $closes += 1
  end
end

APP = lambda do |env|
  case env["PATH_INFO"]
  when "/strings"
    n = Array.new(1000) { String.new }.size # @strings
    [200, { "content-type" => "text/plain" }, ["#{n}\n"]]
  when "/few" # fewer allocations than Rack::Lint and WEBrick make for it
    n = [Object.new, Object.new].size # @few
    [200, { "content-type" => "text/plain" }, ["#{n}\n"]]
  when "/keep"
    $kept.concat(Array.new(500) { Keep.new }) # @keep
    [200, { "content-type" => "text/plain" }, ["#{$kept.size}\n"]]
  when "/stream"
    [200, { "content-type" => "text/plain" }, CountingBody.new]
  when "/closes"
    [200, { "content-type" => "text/plain" }, ["#{$closes}\n"]]
  when "/boom"
    raise "boom"
  when "/slow" # tracked; waits until /fast (untracked, concurrent) is done
    n = Array.new(1000) { String.new }.size # @slow
    $slow_started = true
    $release.pop
    [200, { "content-type" => "text/plain" }, ["#{n}\n"]]
  when "/started"
    [200, { "content-type" => "text/plain" }, [$slow_started ? "yes" : "no"]]
  when "/fast"
    n = Array.new(700) { Fast.new }.size # @fast
    $release << 1
    [200, { "content-type" => "text/plain" }, ["#{n}\n"]]
  when "/grow"
    $big = "x" * 80_000_000
    [200, { "content-type" => "text/plain" }, ["grown\n"]]
  when "/shrink"
    $big = nil
    GC.start
    [200, { "content-type" => "text/plain" }, ["shrunk\n"]]
  else
    [200, { "content-type" => "text/plain" }, ["ok\n"]]
  end
end

app = Rack::Lint.new(HeapDump::Middleware.new(Rack::Lint.new(APP), **opts))
server = nil
Rack::Handler::WEBrick.run(app, Host: "127.0.0.1", Port: 0, AccessLog: [],
                                Logger: WEBrick::Log.new(File::NULL)) do |s|
  server = s
  Thread.new do
    sleep 0.05 until s.status == :Running
    File.write("#{port_file}.tmp", s.config[:Port].to_s)
    File.rename("#{port_file}.tmp", port_file)
  end
end
