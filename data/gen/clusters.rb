# clusters.rb - several leaks of one shape beside one of another, dumped
# three times, for the tests of the clustered suspects of `heapdump leaks`.
#
#   ruby --disable-gems clusters.rb OUTDIR
#
# Writes, in order:
#   leak_clusters_before.json     after a warm-up (every holder exists)
#   leak_clusters_after.json      after phase A
#   leak_clusters_later.json      after phase B
#   leak_clusters_expected.json   what phase A leaked, by cluster
#
# SERVICES is an Array of three Service objects, each with a LeakyCache
# whose @entries Hash keeps every entry it is given: three holders (the
# three Hashes) reached by the same path, vm -> Object -> Array -> Service
# -> LeakyCache -> Hash. Each entry is a CacheEntry and its String.
# $audit is an Array (a global) that keeps every AuditRecord and its
# String: one holder reached another way (global_tbl -> Array).
#
# Phase A gives each cache CACHE_ENTRIES entries and the audit log
# AUDIT_RECORDS records: the audit log alone holds more than any one
# cache, the three caches together more than the audit log, so the
# suspects rank the audit log first and the clusters rank the caches
# first. Phase B adds as many again (the leak goes on), and LATER holds
# phase A's objects as AFTER does.
#
# Allocation tracing is on from the start, GC.start runs before and after
# each phase, and one dump is thrown away first, as in observer.rb.

require "objspace"

ObjectSpace.trace_object_allocations_start

CACHE_ENTRIES = 150
AUDIT_RECORDS = 250

class CacheEntry
  LINE = __LINE__ + 2
  def initialize(id)
    @data = "cached value #{id} " + ("c" * 60)
  end
end

class LeakyCache
  def initialize
    @entries = {}
  end

  STORE_LINE = __LINE__ + 2
  def store(id)
    @entries[id] = CacheEntry.new(id) # the leak (cluster of three)
  end
end

class Service
  def initialize
    @cache = LeakyCache.new
  end

  def call(id)
    @cache.store(id)
  end
end

class AuditRecord
  LINE = __LINE__ + 2
  def initialize(id)
    @message = "audit record #{id} " + ("a" * 60)
  end
end

SERVICES = [Service.new, Service.new, Service.new]
$audit = []

AUDIT_LINE = __LINE__ + 5
def phase(first)
  SERVICES.each_with_index do |svc, k|
    CACHE_ENTRIES.times { |i| svc.call(first + k * 100_000 + i) }
  end
  AUDIT_RECORDS.times { |i| $audit << AuditRecord.new(first + i) } # the other leak
end

PHASES = [
  [:before, 1_000_000],
  [:after, 2_000_000],
  [:later, 3_000_000],
]

def open_outputs(dir)
  files = PHASES.map do |name, _|
    f = File.open(File.join(dir, "leak_clusters_#{name}.json"), "wb")
    f.write("warm-up\n")
    f.flush
    f
  end
  ObjectSpace.dump_all(output: files[0])
  files.each do |f|
    f.flush
    f.rewind
    f.truncate(0)
  end
  files
end

dir = ARGV[0] or abort "usage: ruby clusters.rb OUTDIR"
files = open_outputs(dir)
# the warm-up fills a few entries, so every Hash and Array is large
# already and each holder is an old object in AFTER
phase(0)
PHASES.each_with_index do |(_, first), i|
  GC.start
  phase(first) unless i.zero?
  GC.start
  ObjectSpace.dump_all(output: files[i])
  files[i].flush
end
files.each(&:close)

# What phase A leaked, by the line that allocated it: each entry and
# record is an object and its String (both allocated on that line).
File.write(File.join(dir, "leak_clusters_expected.json"), <<~JSON)
  {"clusters":[
    {"holders":3,"class":"Hash","objects":#{3 * CACHE_ENTRIES * 2},
     "lines":[#{LeakyCache::STORE_LINE},#{CacheEntry::LINE}]},
    {"holders":1,"class":"Array","objects":#{AUDIT_RECORDS * 2},
     "lines":[#{AUDIT_LINE},#{AuditRecord::LINE}]}
  ]}
JSON
