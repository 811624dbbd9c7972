# frozen_string_literal: true

# require "heapdump/signal": dump the heap on a signal, memprof style.
# The signal (HEAPDUMP_SIGNAL, default URG) makes the process fork; the
# child writes heapdump-PID-TIME.json into HEAPDUMP_DIR (else TMPDIR,
# else /tmp) and the process goes on. `heapdump dump PID` sends it.
require "heapdump"

HeapDump.on_signal(ENV.fetch("HEAPDUMP_SIGNAL", "URG"))
