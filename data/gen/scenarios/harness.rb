# harness.rb - what every scenario of this folder shares: the dumper, the
# three dumps and the ground truth file (see README.md).
#
#   ruby SCENARIO.rb gem|dump_all OUTDIR
#
# gem:      require "heapdump" (the built gem on RUBYLIB), allocation
#           tracing from the start (HeapDump.trace_allocations_start),
#           HeapDump.dump(path) after GC.start, names on (the default).
# dump_all: ObjectSpace.trace_object_allocations_start from the start,
#           ObjectSpace.dump_all(output: File.open(path, "w")) after GC.start.
#
# Writes OUTDIR/before.json, after.json, later.json and truth.json.
# Nothing here keeps an object alive between the dumps but the constant
# Scenario's frozen strings: the program's leak is the only growth.

require "objspace"

module Scenario
  DUMPER = ARGV[0].to_s.dup.freeze
  OUTDIR = ARGV[1].to_s.dup.freeze
  # the memsize of an object that fits its slot (an embedded Array of
  # two: what a scenario cannot reach to measure, as a finalizer
  # table's entry)
  SLOT = ObjectSpace.memsize_of([1, 2])
  unless %w[gem dump_all].include?(DUMPER) && !OUTDIR.empty?
    abort "usage: ruby #{File.basename($PROGRAM_NAME)} gem|dump_all OUTDIR"
  end

  if DUMPER == "gem"
    require "heapdump"
    HeapDump.trace_allocations_start
  else
    ObjectSpace.trace_object_allocations_start
  end

  module_function

  def gem?
    DUMPER == "gem"
  end

  # GC.start, then the dump OUTDIR/NAME.json
  def dump(name)
    GC.start
    path = File.join(OUTDIR, "#{name}.json")
    if gem?
      HeapDump.dump(path)
    else
      File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
    end
  end

  # The memsize of each object, summed; and how many.
  def measure(objects)
    [objects.size, objects.sum { |o| ObjectSpace.memsize_of(o) }]
  end

  # The three dumps around the two phases, each a run of ids given to
  # the block with counting (true in phase A alone): ids 0...warm (the
  # warm-up), BEFORE, warm...warm + n (phase A, the leak the truth
  # counts), AFTER, warm + n...warm + 2 * n (phase B: the leak goes on),
  # LATER.
  def phases(warm: 50, n: 400)
    (0...warm).each { |id| yield id, false }
    dump("before")
    (warm...warm + n).each { |id| yield id, true }
    dump("after")
    (warm + n...warm + 2 * n).each { |id| yield id, false }
    dump("later")
  end

  # [count, memsize] of the live objects of the given types (e.g.
  # :T_IMEMO: a closure's environment, an instruction sequence, a method
  # entry; :T_ICLASS), which Ruby code cannot reach one by one, after a
  # full GC. A scenario that leaks closures or methods takes this before
  # and after its measured phase and adds the difference to what it
  # measured object by object.
  def hidden(*types)
    GC.start
    counts = ObjectSpace.count_objects
    sizes = ObjectSpace.count_objects_size
    [types.sum { |t| counts[t] || 0 }, types.sum { |t| sizes[t] || 0 }]
  end

  # [count, memsize] of the internal objects of a type (:T_DATA...) that
  # obj references directly: what Ruby code cannot reach, as
  # ObjectSpace.reachable_objects_from wraps it. A wrapper's memsize is
  # its own slot (40 bytes) plus the memsize of the object it wraps.
  def internal(obj, type)
    found = ObjectSpace.reachable_objects_from(obj).select do |o|
      ObjectSpace::InternalObjectWrapper === o && o.type == type # (no call on obj's own objects)
    end
    [found.size, found.sum { |w| ObjectSpace.memsize_of(w) - 40 }]
  end

  # what grew between two hidden() readings
  def grown(from, to) = [to[0] - from[0], to[1] - from[1]]

  # OUTDIR/truth.json: leaks (true/false), holder (substrings, any of which
  # must be in suspect 1's path or holder text: the gem's dumps name
  # references, dump_all's do not, so each dumper has its own list),
  # objects and bytes leaked between BEFORE and AFTER still held in LATER,
  # as this program counted them, and a note saying what they are.
  # not_holder: substrings none of which may be in that text (a decoy
  # that also references the leak, a weak map).
  # inplace: for a leak that grows inside old objects, { "2" => [bytes,
  # of], "3" => [bytes, of] }: the holder's growth in place over two and
  # three dumps, and the growth in place of everything the program grew
  # (the share the verdict should give it is bytes / of).
  # says: substrings the verdict's text must contain; says_2, says_3:
  # those it must contain with two, with three dumps.
  # warned: the name of a caveat the report must raise as a warning
  # (the dumps cannot give the right answer, and the report must say so):
  # then the holder and the share are not checked.
  def truth(leaks:, holder_gem: [], holder_dump_all: [], not_holder_gem: [], not_holder_dump_all: [],
            objects: 0, bytes: 0, note: "", inplace: nil, says: nil, says_2: nil, says_3: nil, warned: nil)
    doc = {
      "scenario" => File.basename($PROGRAM_NAME, ".rb"),
      "ruby" => RUBY_VERSION,
      "dumper" => DUMPER,
      "leaks" => leaks,
      "holder" => gem? ? holder_gem : holder_dump_all,
      "not_holder" => gem? ? not_holder_gem : not_holder_dump_all,
      "objects" => objects,
      "bytes" => bytes,
      "note" => note,
    }
    doc["inplace"] = inplace if inplace
    doc["says"] = says if says
    doc["says_2"] = says_2 if says_2
    doc["says_3"] = says_3 if says_3
    doc["warned"] = warned if warned
    File.write(File.join(OUTDIR, "truth.json"), json_of(doc) + "\n")
  end

  # A JSON writer for the truth's few types, so that no scenario loads
  # the json library (which would be new objects of its own).
  def json_of(v)
    case v
    when Hash then "{" + v.map { |k, x| "#{json_of(k.to_s)}: #{json_of(x)}" }.join(", ") + "}"
    when Array then "[" + v.map { |x| json_of(x) }.join(", ") + "]"
    when String then '"' + v.gsub(/["\\]/) { |c| "\\" + c }.gsub(/[\x00-\x1f]/) { |c| format("\\u%04x", c.ord) } + '"'
    when true, false, Integer then v.to_s
    when nil then "null"
    else raise ArgumentError, "json_of: #{v.class}"
    end
  end
end
