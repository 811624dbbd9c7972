# extconf.rb - builds heapdump_ext.so, the C half of the heapdump gem.
#
# The heap walk uses functions that MRI exports but declares only in its
# private headers (internal/gc.h): rb_objspace_each_objects,
# rb_objspace_reachable_objects_from(_root), rb_obj_gc_flags,
# rb_imemo_name. hd_ext.h declares them; here we check that they link.
require "mkmf"

abort "heapdump: needs CRuby (MRI)" unless RUBY_ENGINE == "ruby"
# The record writer follows 3.1's dump_all; 3.2 changed the object layout
# (shapes) and the dump's fields, which this version does not write.
unless RUBY_VERSION >= "3.0" && RUBY_VERSION < "3.2"
  abort "heapdump: supports Ruby 3.0 and 3.1 (tested on 3.1), not #{RUBY_VERSION}"
end

%w[rb_objspace_each_objects rb_objspace_reachable_objects_from
   rb_objspace_reachable_objects_from_root rb_obj_gc_flags rb_imemo_name
   rb_obj_memsize_of rb_objspace_internal_object_p].each do |f|
  have_func(f) or abort "heapdump: this Ruby does not export #{f}"
end
have_header("zlib.h") or abort "heapdump: zlib.h is missing (zlib1g-dev)"
have_library("z", "gzdopen") or abort "heapdump: cannot link zlib"
have_func("mallinfo2", "malloc.h")

$CFLAGS << " -std=gnu99 -Wall -Wextra -Wno-unused-parameter"
$CFLAGS << " -Wno-missing-field-initializers -fvisibility=hidden"
create_makefile("heapdump_ext")
