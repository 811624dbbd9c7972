# logtail.rb - a logger that keeps every formatted message: an in-memory
# log ring whose trimming is broken keeps, per request, a line built by
# interpolation and the tail of the response body (`body[-1200..]`, for
# the last bytes of an error page). A tail slice of a long String shares
# its buffer: the kept 40-byte String holds the whole body's buffer
# (moved to a hidden frozen String), so the line looks small and the
# memory is elsewhere on its path.
#
#   ruby logtail.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: per request of phase A the formatted line, the tail String,
# and the buffer it shares (the body's memsize before the slice: the
# hidden String the buffer moves to), measured as they are made.
# Holder: MemoryLog @lines.

require_relative "harness"

class MemoryLog
  def initialize(max)
    @max = max
    @lines = []
  end

  def add(line, tail)
    @lines << line << tail
    @lines.shift(2) if @lines.size > @max * 4 # the bug: counts lines twice, never trims below
    nil
  end
end

LOG = MemoryLog.new(1_000_000)

$leaked = [0, 0]

def request(id, counting)
  body = "<html><body><h1>Order #{id}</h1>" + "<tr><td>item</td><td>#{id}</td></tr>" * 120 + "</body></html>"
  root = ObjectSpace.memsize_of(body) # what the shared buffer costs
  line = "#{Time.at(1_700_000_000 + id).utc.strftime("%FT%T")} INFO request_id=#{id} status=500 bytes=#{body.bytesize}"
  tail = body[-1200..]
  LOG.add(line, tail)
  return unless counting
  n, bytes = Scenario.measure([line, tail])
  $leaked[0] += n + 1
  $leaked[1] += bytes + root
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@lines"], holder_dump_all: ["MemoryLog"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 log lines and 400 body tails of phase A, with the body buffers the tails share")
