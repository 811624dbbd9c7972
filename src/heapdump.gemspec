# frozen_string_literal: true

require_relative "lib/heapdump/version"

Gem::Specification.new do |s|
  s.name = "heapdump"
  s.version = HeapDump::VERSION
  s.summary = "Fast ObjectSpace.dump_all-compatible heap dumps from inside MRI"
  s.description = "A C extension that writes the heap as ObjectSpace.dump_all " \
                  "NDJSON faster than dump_all, properly escaped, from a forked " \
                  "child or on a signal, with allocation tracing, object counts " \
                  "and memprof-style allocation tracking. Read the dumps with " \
                  "the heapdump command-line tool, heapy or heap-profiler."
  s.authors = ["heapdump authors"]
  s.license = "MIT"
  s.required_ruby_version = ">= 3.0" # no upper bound: an unknown Ruby dumps through dump_all
  s.files = Dir["extconf.rb", "*.c", "*.h", "libheapdump/*.[ch]", "libheapdump/util/*.[ch]", "lib/**/*.rb", "README.md"] - ["libheapdump/sql.c"]
  s.extensions = ["extconf.rb"]
  s.require_paths = ["lib"]
end
