/*
 * native_alloc.c - NativeAlloc.malloc_touched(BYTES): malloc(3) BYTES,
 * write every byte, never free, return the address. The native leak of
 * native_leak.rb on a Ruby whose Fiddle is not there (Ruby 4.0 bundles
 * it no more). Built at test time: ruby extconf.rb && make.
 * NativeAlloc.malloc and NativeAlloc.free, plain, for memory_split.rb.
 */
#include <ruby.h>
#include <stdlib.h>
#include <string.h>

static VALUE malloc_touched(VALUE self, VALUE bytes)
{
	size_t n = NUM2SIZET(bytes);
	void *p = malloc(n);

	(void)self;
	if (!p)
		rb_raise(rb_eNoMemError, "malloc(%zu) failed", n);
	memset(p, 1, n);
	return SIZET2NUM((size_t)p);
}

/* NativeAlloc.malloc(BYTES) and NativeAlloc.free(ADDRESS): plain
 * malloc(3) and free(3), untouched, for memory_split.rb's fragmentation */
static VALUE plain_malloc(VALUE self, VALUE bytes)
{
	size_t n = NUM2SIZET(bytes);
	void *p = malloc(n);

	(void)self;
	if (!p)
		rb_raise(rb_eNoMemError, "malloc(%zu) failed", n);
	return SIZET2NUM((size_t)p);
}

static VALUE plain_free(VALUE self, VALUE addr)
{
	(void)self;
	free((void *)NUM2SIZET(addr));
	return Qnil;
}

void Init_native_alloc(void)
{
	VALUE m = rb_define_module("NativeAlloc");

	rb_define_module_function(m, "malloc_touched", malloc_touched, 1);
	rb_define_module_function(m, "malloc", plain_malloc, 1);
	rb_define_module_function(m, "free", plain_free, 1);
}
