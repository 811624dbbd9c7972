# class_edges.rb - a registry whose requests each hold a user only
# through a singleton class's methods, and a second user only through an
# anonymous class's: the classes are held by their instances alone, for
# the tests of the class edge (man 5 heapdump-store, CLASS REFERENCES).
#
#   ruby --disable-gems class_edges.rb OUTDIR [N]
#
# Writes OUTDIR/class_edges_{before,after,later}.json (before: an empty
# registry; after: N requests; later: 2N) with ObjectSpace.dump_all, or
# with HeapDump.dump when DUMPER=heapdump (the gem on $LOAD_PATH), and
# OUTDIR/class_edges_expected.json, the ground truth of LATER:
#   registry     the address of Registry::ALL (the Array of requests)
#   requests     how many it holds
#   user         a user held only by its request's singleton method
#   anon_user    a user held only by an anonymous class's method
#
# Each request: a Request whose singleton class (define_singleton_method)
# has two methods, one a closure over a User (a String of 2,000 bytes in
# it); every request also holds, in @handler, an instance of a class made
# by Class.new whose method closes over a second User. Nothing else holds
# the users, the singleton classes or the anonymous classes: the GC keeps
# them through each object's class pointer, which the dump leaves out of
# its references.

require "objspace"
HEAPDUMP = ENV["DUMPER"] == "heapdump"
require "heapdump" if HEAPDUMP

class User
  def initialize(n)
    @name = "user-#{n}"
    @blob = "x" * 2000
  end
end

class Request; end

module Registry
  ALL = []
end

# (a method of its own, so that the singleton methods' closures, made in
# make, do not hold this user too)
def handler_for(other)
  Class.new { define_method(:user) { other } }.new
end

def make(i)
  req = Request.new
  user = User.new(i)
  req.define_singleton_method(:user) { user }
  req.define_singleton_method(:name) { "request #{i}" }
  handler = handler_for(User.new(-i))
  req.instance_variable_set(:@handler, handler)
  Registry::ALL << req
end

def addr(obj)
  format("0x%x", ObjectSpace.dump(obj)[/"address":"0x(\h+)"/, 1].to_i(16))
end

def dump(path)
  GC.start
  if HEAPDUMP
    HeapDump.dump(path)
  else
    File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
  end
end

dir = ARGV.fetch(0)
n = Integer(ARGV.fetch(1, "300"))
# the gem's first dump loads code of its own (issue 34, item 6): a first
# dump, thrown away, so that the growth is only the program's
if HEAPDUMP
  warm = File.join(dir, "class_edges_warmup.json")
  dump(warm)
  File.delete(warm)
  File.delete("#{warm}.meta.json") if File.exist?("#{warm}.meta.json")
end
dump(File.join(dir, "class_edges_before.json"))
n.times { |i| make(i) }
dump(File.join(dir, "class_edges_after.json"))
n.times { |i| make(n + i) }
dump(File.join(dir, "class_edges_later.json"))
# the probes, found once the dump is written (an object touched before
# may stay on the machine stack, a root of its own), from the middle
req = Registry::ALL[n + n / 2]
probe = [addr(req.user), addr(req.instance_variable_get(:@handler).user)]
File.write(File.join(dir, "class_edges_expected.json"),
           "{\"registry\":\"#{addr(Registry::ALL)}\",\"requests\":#{Registry::ALL.size}," \
           "\"user\":\"#{probe[0]}\",\"anon_user\":\"#{probe[1]}\"}\n")
