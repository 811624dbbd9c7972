# poolbuffer.rb - growth in place in a connection pool: five connections,
# made at boot, are checked out per request; each keeps a write buffer
# (a String appended to with <<) that a refactoring stopped clearing
# after the flush. Every request appends its query to the buffer of the
# connection it had: no new object leaks, five old Strings grow.
# Beside it, the pool's checkout count and a log of the last 20
# queries (new Strings, bounded).
#
#   ruby poolbuffer.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the growth of the five buffers' memsize (ObjectSpace.memsize_of)
# from BEFORE to AFTER and to LATER, of what grew in place: the five
# buffers alone (nothing else of the program grows in place). Holder:
# Connection @wbuf.

require_relative "harness"

class Connection
  def initialize(n)
    @name = "db-#{n}"
    @wbuf = +""
    @flushed = 0
  end

  def query(sql)
    @wbuf << "Q" << [sql.bytesize].pack("N") << sql
    flush
  end

  def flush
    @flushed += 1 # (the buffer should be cleared here)
  end

  def buffer_size = ObjectSpace.memsize_of(@wbuf)
end

class Pool
  def initialize(size)
    @available = Array.new(size) { |n| Connection.new(n) }
    @checkouts = 0
    @recent = []
  end

  def with
    conn = @available.shift
    @checkouts += 1
    yield conn
  ensure
    @available.push(conn)
  end

  def log(sql)
    @recent << sql
    @recent.shift if @recent.size > 20
  end

  def buffers = @available.sum(&:buffer_size)
end

POOL = Pool.new(5)

def request(id)
  sql = "SELECT * FROM orders WHERE customer_id = #{id} AND status IN ('open', 'paid') ORDER BY created_at DESC LIMIT 50"
  POOL.with { |c| c.query(sql) }
  POOL.log(sql)
end

(0...500).each { |id| request(id) }
Scenario.dump("before")
s0 = POOL.buffers
(500...8_500).each { |id| request(id) }
Scenario.dump("after")
sa = POOL.buffers
(8_500...16_500).each { |id| request(id) }
Scenario.dump("later")
s1 = POOL.buffers

Scenario.truth(leaks: true, holder_gem: ["@wbuf"], holder_dump_all: ["Connection"],
               objects: 0, bytes: s1 - s0,
               inplace: { "2" => [sa - s0, sa - s0], "3" => [s1 - s0, s1 - s0] },
               note: "the five connection buffers' growth in place (all that grows in place)")
