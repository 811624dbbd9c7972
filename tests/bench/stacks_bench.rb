# tests/bench/stacks_bench.rb [N] - what allocation stacks cost an
# allocation-heavy program (issue 36): N (default 300,000) rounds of a
# request-like call chain (12 Ruby frames deep) that allocates a Hash, an
# Array and 4 Strings, run untraced, traced without stacks, and traced
# with stacks at sample: 1 (every allocation), 16, the default
# (HeapDump::STACK_SAMPLE) and 1024; CPU time of the process, best of
# RUNS (default 3), each mode in a fresh child so that no table carries
# over. Prints one "stacks" line per mode: mode, CPU seconds, slowdown %
# against untraced and against traced without stacks.
require "heapdump"

N = Integer(ARGV[0] || 300_000)
RUNS = Integer(ENV.fetch("RUNS", "3"))

module Chain
  def self.leaf(i)
    { id: i, name: "row #{i}", tags: ["a#{i}", "b#{i}"], at: i.to_s }
  end

  def self.call(depth, i)
    depth.zero? ? leaf(i) : call(depth - 1, i)
  end
end

def work
  i = 0
  while i < N
    Chain.call(10, i)
    i += 1
  end
end

def cpu
  Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
end

def run_mode(mode)
  r, w = IO.pipe
  pid = fork do
    r.close
    GC.start
    t = cpu
    case mode
    when "untraced" then work
    when "traced" then HeapDump.trace_allocations { work }
    else HeapDump.trace(stacks: true, sample: Integer(mode.sub("sample=", ""))) { work }
    end
    w.write((cpu - t).to_s)
    w.close
    exit!(0)
  end
  w.close
  v = Float(r.read)
  Process.wait(pid)
  v
end

# MODE=traced (or untraced, sample=N): that mode alone, in this process,
# no fork, for an instruction count under callgrind (tests/bench/README.md)
if (one = ENV["MODE"])
  case one
  when "untraced" then work
  when "traced" then HeapDump.trace_allocations { work }
  else HeapDump.trace(stacks: true, sample: Integer(one.sub("sample=", ""))) { work }
  end
  exit
end

modes = ["untraced", "traced", "sample=1", "sample=16", "sample=#{HeapDump::STACK_SAMPLE}", "sample=1024"]
best = {}
RUNS.times do
  modes.each { |m| best[m] = [best[m], run_mode(m)].compact.min }
end
modes.each do |m|
  printf("stacks %s %s %.3f %+.1f %+.1f\n", RUBY_VERSION, m, best[m],
         100.0 * (best[m] / best["untraced"] - 1), 100.0 * (best[m] / best["traced"] - 1))
end
