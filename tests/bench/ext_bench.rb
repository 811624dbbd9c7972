# tests/bench/ext_bench.rb - HeapDump.dump beside ObjectSpace.dump_all on
# one large heap, in one process. Not part of make check (it takes a
# while): make bench runs it once per Ruby of RUBIES (tests/bench/bench.sh).
#   ruby -I build/ext-VERSION -I src/lib tests/bench/ext_bench.rb [OBJECTS] [DIR]
# OBJECTS (default 2_000_000) is roughly how many objects to build; RUNS
# (environment, default 5) how many times each dumper runs, best kept.
# On a busy machine compare the CPU columns (user + system time). The last
# line, "result VERSION LIVE_SLOTS WALL_DUMP_ALL WALL_OURS RATIO_WALL
# RATIO_CPU NATIVE", is what bench.sh tabulates.
require "heapdump"
require "objspace"

n = Integer(ARGV[0] || 2_000_000)
dir = ARGV[1] || ENV["TMPDIR"] || "/tmp"
Node = Struct.new(:name, :children, :meta)
$heap = Array.new(n / 5) do |i|
  Node.new("node-#{i}", [i, i.to_s], { id: i, tag: :"t#{i % 100}" })
end
GC.start
live = GC.stat(:heap_live_slots)
ours = File.join(dir, "bench_heapdump.json")
theirs = File.join(dir, "bench_dump_all.json")
runs = Integer(ENV.fetch("RUNS", 5))
# [wall, cpu] seconds of the block
def timed
  c0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  w0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  yield
  [Process.clock_gettime(Process::CLOCK_MONOTONIC) - w0,
   Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - c0]
end

t_ours = []
t_theirs = []
# removes the previous run's files, so that neither dumper's time
# includes freeing the pages of the file it replaces
def fresh(*paths)
  paths.each { |p| File.unlink(p) if File.exist?(p) }
end

runs.times do
  fresh(theirs, ours, "#{ours}.meta.json")
  t_theirs << timed { File.open(theirs, "w") { |f| ObjectSpace.dump_all(output: f) } }
  t_ours << timed { HeapDump.dump(ours) }
end
wo, co = t_ours.transpose.map(&:min)
wt, ct = t_theirs.transpose.map(&:min)
printf("heap: %d live slots, Ruby %s, best of %d\n", live, RUBY_VERSION, runs)
printf("ObjectSpace.dump_all  wall %.3fs  cpu %.3fs  %d MB\n", wt, ct, File.size(theirs) >> 20)
printf("HeapDump.dump         wall %.3fs  cpu %.3fs  %d MB\n", wo, co, File.size(ours) >> 20)
printf("ratio: %.2fx wall, %.2fx cpu\n", wt / wo, ct / co)
printf("load average: %s\n", File.read("/proc/loadavg").split.first(3).join(" ")) if File.exist?("/proc/loadavg")
printf("result %s %d %.3f %.3f %.2f %.2f %s\n", RUBY_VERSION, live, wt, wo, wt / wo, ct / co, HeapDump.native_walk?)
File.unlink(ours, "#{ours}.meta.json", theirs)
