# frozen_string_literal: true

# require "heapdump/signal": dump the heap on a signal, memprof style.
# The signal (HEAPDUMP_SIGNAL, default URG) makes the process fork; the
# child writes heapdump-PID-TIME.json into HEAPDUMP_DIR (else TMPDIR,
# else /tmp) and the process goes on. `heapdump dump PID` sends it.
require "heapdump"

# HEAPDUMP_NAMES=0: dumps without reference names (HeapDump.dump(names: false)).
HeapDump.on_signal(ENV.fetch("HEAPDUMP_SIGNAL", "URG"), names: ENV["HEAPDUMP_NAMES"] != "0")

# HEAPDUMP_STACKS=1: allocations traced with their stacks from now on
# (HEAPDUMP_STACK_SAMPLE: 1 in N, default HeapDump::STACK_SAMPLE), so
# that the signal's dumps carry them (man 5 heapdump-dump, STACKS).
if ENV["HEAPDUMP_STACKS"] == "1"
  sample = Integer(ENV.fetch("HEAPDUMP_STACK_SAMPLE", HeapDump::STACK_SAMPLE.to_s), 10)
  HeapDump.trace_allocations_start(stacks: true, sample: sample)
end
