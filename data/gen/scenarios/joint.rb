# joint.rb - memory held jointly by two holders: a session store keeps
# each session in its cache (SessionCache @by_id, a Hash by session id)
# and in an index by user (UserIndex @by_user, a Hash of Arrays), and
# expiry removes sessions from the cache only. Sessions of phase A are
# then held by the index alone... except that expiry never runs either:
# each is held by both, neither dominates it, and the two holders hold
# it together.
#
#   ruby joint.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the sessions of phase A with their strings and data Hash
# (measured as they are made); the index's per-user Arrays made in
# phase A (200, 8 KB) are the index's alone, not counted. Holder: either
# holder (@by_id or @by_user; SessionCache or UserIndex), the verdict
# saying, with three dumps, that the memory is held jointly (with two,
# the index's new Arrays cannot be told from a cache rebuilt from the
# sessions' holder, which keeps them).

require_relative "harness"

Session = Struct.new(:id, :user, :data, :csrf)

class SessionCache
  def initialize
    @by_id = {}
  end

  def put(session) = @by_id[session.id] = session
end

class UserIndex
  def initialize
    @by_user = {}
  end

  def add(session) = (@by_user[session.user] ||= []) << session
  def sessions_of(user) = @by_user[user]
end

CACHE = SessionCache.new
INDEX = UserIndex.new

$leaked = [0, 0]

def login(id, counting)
  user = id / 2 # two sessions a user
  sid = ("%032x" % (id * 0x9e3779b97f4a7c15 % 2**128)).freeze
  s = Session.new(sid, user, { "cart" => Array.new(8) { |i| "sku-#{id}-#{i}" }, "locale" => "en-#{id % 7}" },
                  "csrf-#{id}-" + "x" * 80)
  CACHE.put(s)
  INDEX.add(s)
  return unless counting
  owned = [s, s.id, s.data, s.data["cart"], *s.data["cart"], s.data["locale"], s.csrf]
  n, bytes = Scenario.measure(owned)
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| login(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@by_id", "@by_user"], holder_dump_all: ["SessionCache", "UserIndex"],
               objects: $leaked[0], bytes: $leaked[1], says_3: ["held jointly by 2 holders", "SessionCache", "UserIndex"],
               note: "400 sessions of phase A (Struct, id, data Hash, cart, strings), in both a cache and an index")
