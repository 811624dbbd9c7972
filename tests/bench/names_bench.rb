# tests/bench/names_bench.rb - what reference names cost the gem's dump:
# HeapDump.dump(names: false) beside HeapDump.dump(names: true) on the
# heap tests/bench/gen_big.rb builds (a shop application), in one process.
#   ruby -I build/ext-VERSION -I src/lib tests/bench/names_bench.rb [TARGET_MB] [DIR]
# TARGET_MB (default 300) is gen_big's size of its dump_all output; RUNS
# (environment, default 3) how many times each runs, alternating, best
# kept. The last line, "names VERSION OBJECTS BYTES_OFF BYTES_ON SIZE_PCT
# CPU_OFF CPU_ON CPU_PCT WALL_OFF WALL_ON", is what bench.sh tabulates.
require "heapdump"

target = ARGV[0] || "300"
dir = ARGV[1] || ENV["TMPDIR"] || "/tmp"
ENV["GEN_BIG_BUILD_ONLY"] = "1"
ARGV.replace(["/dev/null", target])
load File.expand_path("gen_big.rb", __dir__)
ObjectSpace.trace_object_allocations_stop # else the gem hands over to dump_all
GC.start
runs = Integer(ENV.fetch("RUNS", 3))

def timed
  c0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  w0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  yield
  [Process.clock_gettime(Process::CLOCK_MONOTONIC) - w0,
   Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - c0]
end

paths = { false => File.join(dir, "names_off.json"), true => File.join(dir, "names_on.json") }
times = { false => [], true => [] }
sizes = {}
objects = nil
runs.times do
  [false, true].each do |names|
    path = paths[names]
    [path, "#{path}.meta.json"].each { |p| File.unlink(p) if File.exist?(p) }
    GC.start # the same heap for both: no garbage of the last run
    times[names] << timed { HeapDump.dump(path, names: names) }
    sizes[names] = File.size(path)
  end
end
objects = File.foreach(paths[false]).count
off_w, off_c = times[false].transpose.map(&:min)
on_w, on_c = times[true].transpose.map(&:min)
printf("heap: about %d records, Ruby %s, best of %d\n", objects, RUBY_VERSION, runs)
printf("names: false  %d bytes  wall %.3fs  cpu %.3fs\n", sizes[false], off_w, off_c)
printf("names: true   %d bytes  wall %.3fs  cpu %.3fs\n", sizes[true], on_w, on_c)
printf("names %s %d %d %d %.1f %.3f %.3f %.1f %.3f %.3f\n", RUBY_VERSION, objects, sizes[false], sizes[true],
       100.0 * (sizes[true] - sizes[false]) / sizes[false], off_c, on_c, 100.0 * (on_c - off_c) / off_c, off_w, on_w)
paths.each_value { |p| [p, "#{p}.meta.json"].each { |f| File.unlink(f) if File.exist?(f) } } unless ENV["KEEP"] # KEEP=1: leave the two dumps
