# tests/ext/malloc_fixture/extconf.rb - the tiny C extension of
# tests/ext/malloc.sh: native allocations the tracker must name by the
# Ruby line that calls them (Fiddle is not in Ruby 4.0's default gems).
require "mkmf"
create_makefile("hdmtest")
