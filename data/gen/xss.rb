# xss.rb - a leak whose every name is hostile, dumped three times, for the
# tests of `heapdump report` (tests/cli/report.sh): the HTML report must
# show each name as text, never as markup.
#
#   ruby --disable-gems xss.rb OUTDIR       (Ruby 3.3 or later:
#                                            Module#set_temporary_name)
#
# Writes, in order, xss_before.json (after a warm-up), xss_after.json
# (after phase A) and xss_later.json (after phase B).
#
# The leaking objects are instances of an anonymous class whose name is
# MARK (a script element, both quotes, a control byte, an ANSI escape, an
# entity), allocated in a method whose name is markup, in code evaluated
# under a file name that is markup: so the class names, allocation sites
# and methods of the dumps hold it. Each instance keeps a String holding
# MARK. A Hash in a global keeps them (the leak); phase B adds as many
# again. Allocation tracing is on from the start, GC.start runs around
# each phase, and one dump is thrown away first, as in clusters.rb.

require "objspace"

ObjectSpace.trace_object_allocations_start

MARK = "<script>alert(1)</script>\"'\x01\e[2J&amp;"
ENTRIES = 40

$evil = Class.new
$evil.set_temporary_name(MARK)
$evil.class_eval(<<~RUBY, "<script>alert(2)</script>\x01.rb", 1)
  def initialize(i)
    @value = MARK + i.to_s
  end
RUBY
$evil.define_singleton_method(:"<img src=x onerror=alert(3)>") do |i|
  new(i)
end

$xss_cache = {}

def phase(from, to)
  (from...to).each do |i|
    $xss_cache[MARK + i.to_s] = $evil.public_send(:"<img src=x onerror=alert(3)>", i)
  end
end

def dump(path)
  GC.start
  File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
end

out = ARGV.fetch(0)
dump(File.join(out, "xss_throwaway.json"))
File.delete(File.join(out, "xss_throwaway.json"))
dump(File.join(out, "xss_before.json"))
phase(0, ENTRIES)
dump(File.join(out, "xss_after.json"))
phase(ENTRIES, 2 * ENTRIES)
dump(File.join(out, "xss_later.json"))
