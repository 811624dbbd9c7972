# fleet.rb - one worker of a growing app, dumped STEPS times by the
# heapdump gem (HeapDump.dump: the dump, gzipped, and its sidecar with
# pid, host, time and Ruby version), for the fleet summaries of
# `heapdump stats --format ndjson` (tests/cli/fleet.sh).
#
#   RUBYLIB=build/ext-VERSION:src/lib ruby --disable-gems fleet.rb OUTDIR WORKER
#
# WORKER "a" keeps ORDERS_PER_STEP more Order objects at every step,
# WORKER "b" SESSIONS_PER_STEP more Session objects; both allocate and
# drop SCRATCH Scratch objects a step (they do not grow). Between steps
# GC.start runs, so a dump holds what the worker keeps.
#
# The dumps are named WORKER-NAME.json.gz with NAMES in an order that is
# not the order of the steps: whatever puts the dumps in order must use
# the sidecar's time, not the file name. Writes OUTDIR/WORKER.record.json:
# the pid, and per dump in step order its path and the numbers of Order
# and Session objects the worker held when it dumped.
#
# Debian's ruby 3.1: about 0.3 s a worker (6 dumps of 1.5 MB, 110 KB
# gzipped).

require "heapdump"

STEPS = 6
ORDERS_PER_STEP = 300
SESSIONS_PER_STEP = 200
SCRATCH = 100
NAMES = %w[kiwi apple mango banana zebra cherry].freeze

class Order
  def initialize(id)
    @id = id
    @note = "order #{id} " + ("o" * 50)
  end
end

class Session
  def initialize(id)
    @token = "session #{id} " + ("s" * 80)
  end
end

class Scratch
  def initialize(id)
    @id = id
  end
end

dir, worker = ARGV
abort "usage: ruby fleet.rb OUTDIR a|b" unless dir && %w[a b].include?(worker)

orders = []
sessions = []
dumps = []
STEPS.times do |step|
  if worker == "a"
    ORDERS_PER_STEP.times { |i| orders << Order.new(step * ORDERS_PER_STEP + i) }
  else
    SESSIONS_PER_STEP.times { |i| sessions << Session.new(step * SESSIONS_PER_STEP + i) }
  end
  scratch = Array.new(SCRATCH) { |i| Scratch.new(i) }
  scratch.clear
  GC.start
  path = File.join(dir, "#{worker}-#{NAMES[step]}.json.gz")
  HeapDump.dump(path, gzip: true)
  dumps << { "path" => path, "orders" => orders.size, "sessions" => sessions.size }
end

File.write(File.join(dir, "#{worker}.record.json"),
           "{\"pid\":#{Process.pid},\"dumps\":[" +
           dumps.map { |d| "{\"path\":\"#{d['path']}\",\"orders\":#{d['orders']},\"sessions\":#{d['sessions']}}" }.join(",") +
           "]}\n")
