# const_cache.rb - a Hash a module holds in a constant, which the dump
# also reaches through VM caches and the C stack, for the path-rule tests
# (tests/ext/paths.sh).
#
#   ruby data/gen/const_cache.rb OUT.json EXPECTED.json
#
# Config::TABLE is read by a method many times and by the main script
# (so the instruction sequences hold it in inline constant caches,
# IMEMO/constcache), and the dump (ObjectSpace.dump_all) is written by
# the main script, whose running instruction sequence the C stack holds
# (root machine_context): machine_context -> IMEMO/iseq ->
# IMEMO/constcache -> Hash is as short as the constant's path, or
# shorter. The path a person wants is the constant: ... -> Config
# ::TABLE -> Hash. Writes the dump, and EXPECTED.json: the Hash's
# address.
require "objspace"
require "json"

module Config
  TABLE = { "timeout" => 30, "retries" => 3 }
end

def setting(key) = Config::TABLE[key]

1000.times { setting("timeout") }
out, expected = ARGV
abort "usage: ruby const_cache.rb OUT.json EXPECTED.json" unless expected
address = JSON.parse(ObjectSpace.dump(Config::TABLE))["address"]
GC.start
warn "const_cache: #{Config::TABLE.size} settings" if ENV["VERBOSE"]
File.open(out, "w") { |f| ObjectSpace.dump_all(output: f) }
File.write(expected, JSON.generate(table: address))
