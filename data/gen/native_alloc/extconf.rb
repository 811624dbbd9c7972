# extconf.rb - the Makefile of native_alloc.so (see native_alloc.c)
require "mkmf"
create_makefile("native_alloc")
