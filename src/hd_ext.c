/*
 * hd_ext.c - Init_heapdump_ext: the HeapDump module's C primitives.
 * The public API (keywords, paths, fork, signals) is lib/heapdump.rb;
 * the analysis of dumps (HeapDump::Heap) lib/heapdump/heap.rb.
 */
#include "hd_heap.h"

VALUE hdx_eError;

RUBY_FUNC_EXPORTED void Init_heapdump_ext(void);

void Init_heapdump_ext(void)
{
	VALUE mod = rb_define_module("HeapDump");

	hdx_eError = rb_define_class_under(mod, "Error", rb_eStandardError);
	hdx_init_dump(mod);
	hdx_init_trace(mod);
	hdx_init_count(mod);
	hdx_init_meta(mod);
	hdx_init_heap(mod);
	hdx_init_nodeset(mod);
	hdx_init_graph(mod);
	hdx_init_order(mod);
	hdx_init_malloc(mod);
}
