/*
 * hd_ext.c - Init_heapdump_ext: the HeapDump module's C primitives.
 * The public API (keywords, paths, fork, signals) is lib/heapdump.rb.
 */
#include "hd_ext.h"

VALUE hd_eError;

RUBY_FUNC_EXPORTED void Init_heapdump_ext(void);

void Init_heapdump_ext(void)
{
	VALUE mod = rb_define_module("HeapDump");

	hd_eError = rb_define_class_under(mod, "Error", rb_eStandardError);
	hd_init_dump(mod);
	hd_init_trace(mod);
	hd_init_count(mod);
	hd_init_meta(mod);
}
