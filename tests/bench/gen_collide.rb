# frozen_string_literal: true
#
# tests/bench/gen_collide.rb - a hash-flooding dump: N CLASS records whose
# addresses all land in one bucket of the address maps of heapdump up to
# its version 0.x (unseeded murmur3 finalizer, linear probing).
#
#   ruby tests/bench/gen_collide.rb OUT.json N [crafted|random]
#
# crafted (the default): address = fmix64^-1(k << 32), k = 1..N, so that
# fmix64(address) has its low 32 bits zero and every table of at most
# 2^32 slots puts all N keys in slot 0: each insertion probes past all the
# keys before it, N^2/2 probes in all. random: the same records with
# random addresses (fixed seed), the yardstick.
#
# The classes point to one metaclass and have names, so `stats` names them
# and `index` builds a store of N+2 objects. Nothing here is specific to
# a seeded table: with a per-process random key the crafted addresses are
# as good as random ones, which is what the figures in the commit that
# added this file show.

M64 = (1 << 64) - 1

def inv64(c)
  x = c # Newton's iteration doubles the correct low bits each step
  6.times { x = (x * (2 - c * x)) & M64 }
  x
end

C1 = 0xff51afd7ed558ccd
C2 = 0xc4ceb9fe1a85ec53
I1 = inv64(C1)
I2 = inv64(C2)

def fmix64(x)
  x ^= x >> 33
  x = (x * C1) & M64
  x ^= x >> 33
  x = (x * C2) & M64
  x ^ (x >> 33)
end

# x ^= x >> 33 is its own inverse (33 >= 32).
def unfmix64(y)
  y ^= y >> 33
  y = (y * I2) & M64
  y ^= y >> 33
  y = (y * I1) & M64
  y ^ (y >> 33)
end

out, n, mode = ARGV
abort "usage: ruby gen_collide.rb OUT.json N [crafted|random]" unless out && n
n = Integer(n)
mode ||= "crafted"
abort "gen_collide: mode is crafted or random" unless %w[crafted random].include?(mode)

rng = Random.new(42)
meta = 0x7f0000001000
base = 0x7f0000002000
File.open(out, "w") do |f|
  f.puts %({"type":"ROOT", "root":"vm", "references":["0x#{base.to_s(16)}"]})
  f.puts %({"address":"0x#{meta.to_s(16)}", "type":"CLASS", "class":"0x#{meta.to_s(16)}", "name":"Meta", "memsize":40})
  f.puts %({"address":"0x#{base.to_s(16)}", "type":"CLASS", "class":"0x#{meta.to_s(16)}", "name":"Base", "memsize":40})
  seen = {}
  i = 0
  k = 1
  while i < n
    a = if mode == "crafted"
          unfmix64(k << 32).tap { raise "not colliding" unless fmix64(_1) & 0xffffffff == 0 }
        else
          rng.rand(1 << 47) & ~7
        end
    k += 1
    next if a.zero? || a == M64 || a == meta || a == base || seen[a]
    seen[a] = true
    f.puts %({"address":"0x#{a.to_s(16)}", "type":"CLASS", "class":"0x#{meta.to_s(16)}", "superclass":"0x#{base.to_s(16)}", "name":"C#{i}", "memsize":40})
    i += 1
  end
end
