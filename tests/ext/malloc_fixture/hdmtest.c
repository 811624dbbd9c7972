/*
 * tests/ext/malloc_fixture/hdmtest.c - HDMTest, native allocations for
 * tests/ext/malloc.sh: malloc/free by address (Fiddle.malloc's kind),
 * a leak whose pointers are dropped (overwritten) at once, and blocks
 * held by Ruby objects (HDMTest::Block, Fiddle::Pointer's kind).
 */
#include <ruby.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

static VALUE t_malloc(VALUE self, VALUE n)
{
	void *p = malloc(NUM2SIZET(n));

	return ULL2NUM((unsigned long long)(uintptr_t)p);
}

static VALUE t_free(VALUE self, VALUE addr)
{
	free((void *)(uintptr_t)NUM2ULL(addr));
	return Qnil;
}

/* count blocks of size bytes whose only pointer is overwritten: leaked */
static VALUE t_leak(VALUE self, VALUE count, VALUE size)
{
	long i, n = NUM2LONG(count);
	size_t sz = NUM2SIZET(size);

	for (i = 0; i < n; i++) {
		sink = malloc(sz);
		memset(sink, 0x5a, sz);
	}
	sink = NULL;
	return Qnil;
}

static void block_free(void *p)
{
	free(*(void **)p);
	free(p);
}

static size_t block_size(const void *p)
{
	return sizeof(void *);
}

static const rb_data_type_t block_type = {
	"HDMTest::Block", { NULL, block_free, block_size }, 0, 0, 0
};

static VALUE block_new(VALUE klass, VALUE size)
{
	void **box = malloc(sizeof *box);

	*box = malloc(NUM2SIZET(size));
	memset(*box, 0, NUM2SIZET(size));
	return TypedData_Wrap_Struct(klass, &block_type, box);
}

void Init_hdmtest(void)
{
	VALUE m = rb_define_module("HDMTest"), block;

	rb_define_module_function(m, "malloc", t_malloc, 1);
	rb_define_module_function(m, "free", t_free, 1);
	rb_define_module_function(m, "leak", t_leak, 2);
	block = rb_define_class_under(m, "Block", rb_cObject);
	rb_undef_alloc_func(block);
	rb_define_singleton_method(block, "new", block_new, 1);
}
