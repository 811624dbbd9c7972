# extconf.rb - builds heapdump_ext.so, the C half of the heapdump gem.
#
# It never refuses a CRuby: on a Ruby whose heap walk the extension does
# not know (see WALKER_RUBIES) it builds without the walker, and
# HeapDump.dump writes the heap with ObjectSpace.dump_all inside the same
# pipeline (lib/heapdump.rb). The functions the C code uses are exported
# by libruby but declared only in its private headers; hd_ext.h declares
# them, and each one is probed here (HAVE_RB_...): a part whose
# functions are missing is left out, the rest still builds.
require "mkmf"

abort "heapdump: needs CRuby (MRI), not #{RUBY_ENGINE}" unless RUBY_ENGINE == "ruby"

# The Ruby versions (major.minor) whose records the walker writes, field
# for field, as that version's dump_all (tests/ext/compare.rb).
WALKER_RUBIES = %w[3.0 3.1].freeze
WALKER_FUNCS = %w[rb_objspace_each_objects rb_objspace_reachable_objects_from
                  rb_objspace_reachable_objects_from_root rb_obj_gc_flags
                  rb_imemo_name rb_obj_memsize_of
                  rb_objspace_internal_object_p].freeze
OTHER_FUNCS = %w[rb_gc_object_metadata rb_gc_obj_slot_size].freeze

have = (WALKER_FUNCS + OTHER_FUNCS).uniq.to_h { |f| [f, have_func(f)] }
series = RUBY_VERSION[/\A\d+\.\d+/]
missing = WALKER_FUNCS.reject { |f| have[f] }
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

$CFLAGS << " -std=gnu99 -Wall -Wextra -Wno-unused-parameter"
$CFLAGS << " -Wno-missing-field-initializers -fvisibility=hidden"
create_header("hd_config.h")
create_makefile("heapdump_ext")
