# tests/bench/ext_bench.rb - HeapDump.dump beside ObjectSpace.dump_all on
# one large heap, in one process. Not part of make check (it takes a
# while): run by hand or by tests/bench/bench.sh.
#   ruby -I build/ext -I src/lib tests/bench/ext_bench.rb [OBJECTS] [DIR]
# OBJECTS (default 2_000_000) is roughly how many objects to build.
require "heapdump"
require "objspace"
require "benchmark"

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
runs = Integer(ENV.fetch("RUNS", 3))
t_ours = []
t_theirs = []
runs.times do
  t_theirs << Benchmark.realtime { File.open(theirs, "w") { |f| ObjectSpace.dump_all(output: f) } }
  t_ours << Benchmark.realtime { HeapDump.dump(ours) }
end
best_ours = t_ours.min
best_theirs = t_theirs.min
printf("heap: %d live slots; dump_all %.3fs (%d MB), HeapDump.dump %.3fs (%d MB); best of %d\n",
       live, best_theirs, File.size(theirs) >> 20, best_ours, File.size(ours) >> 20, runs)
printf("ratio: %.2fx\n", best_theirs / best_ours)
File.unlink(ours, "#{ours}.meta.json", theirs)
