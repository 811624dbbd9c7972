/*
 * native_alloc.c - NativeAlloc.malloc_touched(BYTES): malloc(3) BYTES,
 * write every byte, never free, return the address. The native leak of
 * native_leak.rb on a Ruby whose Fiddle is not there (Ruby 4.0 bundles
 * it no more). Built at test time: ruby extconf.rb && make.
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

void Init_native_alloc(void)
{
	VALUE m = rb_define_module("NativeAlloc");

	rb_define_module_function(m, "malloc_touched", malloc_touched, 1);
}
