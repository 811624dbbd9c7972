# weak_maps.rb - Ruby's weak maps beside the objects they map, for the
# tests of man 5 heapdump-store, WEAK MAPS (tests/cli/weak_maps.sh).
#
#   ruby --disable-gems weak_maps.rb OUT.json [N]
#
# Dumps one heap to OUT.json (ObjectSpace.dump_all, or HeapDump.dump with
# DUMPER=heapdump and the gem on $LOAD_PATH) and writes the ground truth
# to OUT.json.expected.json:
#   keys         the address of Keys::ALL, the Array holding N keys
#   holders      the address of Holders::ALL, an Array holding N values
#   wmap         the address of WMAP, an ObjectSpace::WeakMap of N
#                entries, key => value, whose values Holders::ALL holds
#   wmap_value   one of those values
#   wkmap        (Ruby 3.3+) the address of WKMAP, an
#                ObjectSpace::WeakKeyMap of N entries key => value, whose
#                values nothing else holds: each is alive while its key is
#   wkmap_value  one of those values
#   n            N
require "objspace"
HEAPDUMP = ENV["DUMPER"] == "heapdump"
require "heapdump" if HEAPDUMP

class Key; def initialize(i) @i = i end end
class Value; def initialize(i) @payload = "v#{i}" * 100 end end
module Keys; ALL = []; end
module Holders; ALL = []; end
WMAP = ObjectSpace::WeakMap.new
WKMAP = defined?(ObjectSpace::WeakKeyMap) ? ObjectSpace::WeakKeyMap.new : nil

out = ARGV.fetch(0)
n = Integer(ARGV.fetch(1, "100"))
n.times do |i|
  k = Key.new(i)
  Keys::ALL << k
  v = Value.new(i)
  Holders::ALL << v
  WMAP[k] = v
  WKMAP[k] = Value.new(-i) if WKMAP
end
GC.start
if HEAPDUMP
  HeapDump.dump(out)
else
  File.open(out, "w") { |f| ObjectSpace.dump_all(output: f) }
end

# found once the dump is written (what is touched before may stay on the
# machine stack, a root of its own)
def addr(obj)
  format("0x%x", ObjectSpace.dump(obj)[/"address":"0x(\h+)"/, 1].to_i(16))
end
k = Keys::ALL[n / 2]
truth = { keys: addr(Keys::ALL), holders: addr(Holders::ALL), wmap: addr(WMAP),
          wmap_value: addr(WMAP[k]), n: n }
if WKMAP
  truth[:wkmap] = addr(WKMAP)
  truth[:wkmap_value] = addr(WKMAP[k])
end
File.write("#{out}.expected.json",
           "{" + truth.map { |key, v| "\"#{key}\":#{v.is_a?(String) ? "\"#{v}\"" : v}" }.join(",") + "}\n")
