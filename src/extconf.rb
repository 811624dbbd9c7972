# extconf.rb - builds heapdump_ext.so, the C half of the heapdump gem.
#
# It never refuses a CRuby: on a Ruby whose heap walk the extension does
# not know (see WALKER_RUBIES) it builds without the walker, and
# HeapDump.dump writes the heap with ObjectSpace.dump_all inside the same
# pipeline (lib/heapdump.rb). The walk uses the public headers and
# functions libruby exports but declares only in its private headers;
# hd_ext.h declares them, and each one is probed here (HAVE_RB_...): a
# part whose functions are missing is left out, the rest still builds.
require "mkmf"

abort "heapdump: needs CRuby (MRI), not #{RUBY_ENGINE}" unless RUBY_ENGINE == "ruby"

# The Ruby versions (major.minor) whose records the walker writes, field
# for field, as that version's dump_all (tests/ext/compare.rb). 3.2 has
# no native build to test it on. HEAPDUMP_WALKER_RUBIES (a list) replaces
# it: tests/ext/fallback.sh plays a Ruby the walker does not know.
WALKER_RUBIES = (ENV["HEAPDUMP_WALKER_RUBIES"]&.split || %w[3.0 3.1 3.3 3.4 4.0]).freeze
series = RUBY_VERSION[/\A\d+\.\d+/]
shapes = Gem::Version.new(series) >= Gem::Version.new("3.2")
# what the walk needs; "a|b": either
WALKER_FUNCS = %w[rb_objspace_each_objects rb_objspace_reachable_objects_from
                  rb_objspace_reachable_objects_from_root rb_imemo_name
                  rb_obj_memsize_of rb_objspace_internal_object_p
                  rb_obj_gc_flags|rb_gc_object_metadata].freeze
SHAPE_FUNCS = %w[rb_shape_get_shape_id|rb_obj_shape_id].freeze
OTHER_FUNCS = %w[rb_gc_obj_slot_size rb_shape_obj_too_complex rb_class_variation_count
                 rb_class_singleton_p rb_hash_stlike_foreach].freeze

needed = WALKER_FUNCS + (shapes ? SHAPE_FUNCS : [])
have = (needed.flat_map { |f| f.split("|") } + OTHER_FUNCS).uniq.to_h { |f| [f, have_func(f)] }
# 4.0 flags come with values: prefer them where both exist
$defs.delete("-DHAVE_RB_OBJ_GC_FLAGS") if have["rb_gc_object_metadata"]
$defs.delete("-DHAVE_RB_SHAPE_GET_SHAPE_ID") if have["rb_obj_shape_id"]
missing = needed.reject { |f| f.split("|").any? { |g| have[g] } }
why = if ENV["HEAPDUMP_NO_WALKER"].to_s == "1"
        "HEAPDUMP_NO_WALKER=1 at build time"
      elsif !WALKER_RUBIES.include?(series)
        "the heap walker does not know Ruby #{series} (it knows #{WALKER_RUBIES.join(', ')})"
      elsif !missing.empty?
        "this Ruby does not export #{missing.join(', ')}"
      end
if why
  message "heapdump: no native heap walk: #{why}; HeapDump.dump will use ObjectSpace.dump_all\n"
else
  $defs << "-DHD_WALKER"
end
# a header of its own: create_header would strip the quotes
File.write("hd_reason.h", "#define HD_NO_WALKER_WHY #{(why || '').dump}\n")

have_header("zlib.h") or abort "heapdump: zlib.h is missing (apt-get install zlib1g-dev)"
have_library("z", "gzdopen") or abort "heapdump: cannot link zlib (apt-get install zlib1g-dev)"
have_func("mallinfo2", "malloc.h")

# The analysis half (HeapDump::Heap, hd_heap*.c) is libheapdump itself,
# compiled in from its sources: libheapdump/ is lib/ (a link in the
# repository, copied into the gem by gem build). No install step, no
# pkg-config, one version of the library and the gem. lib/util/ (the
# helpers that know nothing of dumps) comes with it. lib/sql.c (SQLite)
# and lib/util/dynload.c (which loads SQLite and ISA-L for the program)
# are left out.
#
# Why not link an installed libheapdump found with pkg-config: the gem
# ships with the sources, so gem install (or a Gemfile path:) works where
# nobody ran make install, with no extra package, and one gem version is
# exactly one library version (no ABI drift between an installed
# libheapdump.so.0 and the binding). The library needs only libc, zlib
# (which the gem links anyway) and libm; it is built with the Ruby's own
# compiler and flags, -fvisibility=hidden and -DHD_API=, so none of its
# symbols is exported from heapdump_ext.so (only Init_heapdump_ext) and a
# libheapdump loaded by something else in the process cannot clash with
# it. The cost is build time: the library is compiled once per Ruby
# (tests/bench/README.md).
LIBHD = File.join(__dir__, "libheapdump")
abort "heapdump: #{LIBHD}/heapdump.h is missing: the gem needs libheapdump's sources" unless File.exist?(File.join(LIBHD, "heapdump.h"))
lib_srcs = (Dir[File.join(LIBHD, "*.c")] + Dir[File.join(LIBHD, "util", "*.c")]).map { |f| File.basename(f) } - %w[sql.c dynload.c]
$srcs = Dir[File.join(__dir__, "*.c")].map { |f| File.basename(f) } + lib_srcs
$VPATH << "$(srcdir)/libheapdump" << "$(srcdir)/libheapdump/util"
$INCFLAGS << " -I$(srcdir)/libheapdump"
$CFLAGS << " -DHD_API="
have_library("m", "floor") or abort "heapdump: cannot link libm"

$CFLAGS << " -std=gnu99 -Wall -Wextra -Wno-unused-parameter"
$CFLAGS << " -Wno-missing-field-initializers -fvisibility=hidden"
create_header("hd_config.h")
create_makefile("heapdump_ext")

# libheapdump-malloc.so, the LD_PRELOAD tracker of native allocations
# (preload/: a link in the repository, copied into the gem), built beside
# the extension and installed with it: HeapDump.malloc_library_path.
# Its own flags: no Ruby headers, nothing of the extension's.
PRELOAD = File.join(__dir__, "preload")
abort "heapdump: #{PRELOAD}/hooks.c is missing: the gem needs the preload library's sources" unless File.exist?(File.join(PRELOAD, "hooks.c"))
File.open("Makefile", "a") do |mk|
  mk.puts <<~MAKE

    HD_MALLOC_SO = libheapdump-malloc.so
    HD_MALLOC_SRC = #{Dir[File.join(PRELOAD, '*.c')].sort.join(' ')}
    all: $(HD_MALLOC_SO)
    $(HD_MALLOC_SO): $(HD_MALLOC_SRC) #{Dir[File.join(PRELOAD, '*.h')].sort.join(' ')}
    	$(Q) $(CC) -std=gnu99 -O2 -g -fPIC -fvisibility=hidden -fno-builtin -pthread -shared -o $@ $(HD_MALLOC_SRC) -lpthread -ldl
    install-so: $(RUBYARCHDIR)/$(HD_MALLOC_SO)
    $(RUBYARCHDIR)/$(HD_MALLOC_SO): $(HD_MALLOC_SO)
    	$(Q) $(MAKEDIRS) $(@D)
    	$(INSTALL_PROG) $(HD_MALLOC_SO) $(@D)
    clean-so::
    	-$(Q)$(RM) $(HD_MALLOC_SO)
  MAKE
end
