# frozen_string_literal: true

# require "heapdump/signal": dump the heap on a signal, memprof style.
# The signal (HEAPDUMP_SIGNAL, default URG) makes the process fork; the
# child writes heapdump-PID-TIME.json into HEAPDUMP_DIR (else TMPDIR,
# else /tmp) and the process goes on. `heapdump dump PID` sends it.
require "heapdump"

# HEAPDUMP_NAMES=0: dumps without reference names (HeapDump.dump(names: false)).
HeapDump.on_signal(ENV.fetch("HEAPDUMP_SIGNAL", "URG"), names: ENV["HEAPDUMP_NAMES"] != "0")
