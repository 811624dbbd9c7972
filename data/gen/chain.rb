# chain.rb - a program whose leak is held at the far end of a long chain
# of closures, for the path-folding tests (tests/ext/paths.sh).
#
#   ruby [-I BUILD/ext-VERSION -I src/lib] data/gen/chain.rb OUTDIR [N]
#
# N closures (default 2000) each hold the one before: a method of its own
# makes each (link(prev) = -> { prev }), so each env holds one link,
# "prev"; the first holds an Array, the sink, and the last hangs on
# Holder::CHAIN. Between the dumps 500 Strings a phase go onto the sink.
# The path from the roots to the sink is Holder ::CHAIN -> Array [0] ->
# (Proc -> IMEMO/env prev ->) xN -> Array: 2N + 1 references below the
# constant. Writes OUTDIR/chain_{before,after,later}.json with the gem
# (HeapDump.dump, names: true) when DUMPER=gem, else with
# ObjectSpace.dump_all, and OUTDIR/chain_expected.json: n, the sink's and
# the first closure's addresses.
require "objspace"
require "json"

module Holder
  CHAIN = []
end

dir = ARGV[0] or abort "usage: ruby chain.rb OUTDIR [N]"
N = Integer(ARGV[1] || 2000)
GEM = ENV["DUMPER"] == "gem"
require "heapdump" if GEM

def dump(path)
  GC.start
  if GEM
    HeapDump.dump(path)
  else
    File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
  end
end

def link(prev) = -> { prev }

def build(n, sink)
  prev = link(sink)
  (n - 1).times { prev = link(prev) }
  Holder::CHAIN << prev
  nil
end

# the closure i links from the constant (0: the last made), walked
def closure(i)
  s = Holder::CHAIN[0]
  i.times { s = s.call }
  s
end

def leak(phase)
  t = closure(N - 1).call
  500.times { |i| t << "leak #{phase} #{i}" * 4 }
  nil
end

def address(obj) = JSON.parse(ObjectSpace.dump(obj))["address"]

build(N, [])
expected = { n: N, sink: address(closure(N - 1).call), first: address(closure(N - 1)) }
dump("#{dir}/chain_before.json")
leak(1)
dump("#{dir}/chain_after.json")
leak(2)
dump("#{dir}/chain_later.json")
File.write("#{dir}/chain_expected.json", JSON.generate(expected))
