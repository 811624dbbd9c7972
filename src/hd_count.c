/*
 * hd_count.c - HeapDump.count_objects(*namespaces): heap_dump's cheap
 * leak detector. One walk counts slots by builtin type and objects by
 * class; class names are resolved after the walk, with GC disabled so
 * that no counted class can be freed in between.
 */
#include "hd_ext.h"

#include <stdlib.h>

#if defined(HAVE_RB_OBJSPACE_EACH_OBJECTS) && defined(HAVE_RB_OBJSPACE_INTERNAL_OBJECT_P)

#define NTYPES 0x20

struct hdx_count {
	size_t total, free_slots;
	size_t by_type[NTYPES];
	struct hdx_table by_class;  /* klass -> (void *)count */
	int oom;
};

static void count_object(struct hdx_count *c, VALUE v)
{
	int type = RB_BUILTIN_TYPE(v);
	void **slot;

	c->by_type[type & (NTYPES - 1)]++;
	if (rb_objspace_internal_object_p(v))
		return;
	if (!(slot = hdx_table_put(&c->by_class, RBASIC(v)->klass))) {
		c->oom = 1;
		return;
	}
	*slot = (void *)((uintptr_t)*slot + 1);
}

static int count_i(void *start, void *end, size_t stride, void *data)
{
	struct hdx_count *c = data;
	VALUE v;

	for (v = (VALUE)start; v != (VALUE)end; v += stride) {
		c->total++;
		if (!RBASIC(v)->flags)
			c->free_slots++;
		else
			count_object(c, v);
	}
	return 0;
}

static VALUE class_name(VALUE klass)
{
	VALUE real = rb_class_real(klass), name;

	if (!real)
		return Qnil;
	name = rb_mod_name(real);
	return NIL_P(name) ? rb_class_path(real) : name;
}

/* "Foo" is in namespace "Foo", and so are "Foo::Bar" and "Foo::Bar::Baz" */
static VALUE namespace_of(VALUE name, VALUE namespaces)
{
	long i, n = RSTRING_LEN(name);
	const char *s = RSTRING_PTR(name);

	for (i = 0; i < RARRAY_LEN(namespaces); i++) {
		VALUE ns = rb_ary_entry(namespaces, i);
		long k = RSTRING_LEN(ns);

		if (n >= k && memcmp(s, RSTRING_PTR(ns), (size_t)k) == 0 &&
		    (n == k || (n > k + 1 && s[k] == ':' && s[k + 1] == ':')))
			return ns;
	}
	return Qnil;
}

static void add_to(VALUE h, VALUE key, size_t n)
{
	VALUE old = rb_hash_lookup2(h, key, INT2FIX(0));

	rb_hash_aset(h, key, rb_funcall(old, rb_intern("+"), 1, SIZET2NUM(n)));
}

static VALUE types_hash(const struct hdx_count *c)
{
	VALUE h = rb_hash_new();
	int t;

	for (t = 0; t < NTYPES; t++) {
		char name[32];

		if (!c->by_type[t] || t == RUBY_T_NONE)
			continue;
		snprintf(name, sizeof(name), "T_%s", hdx_type_name(t));
		rb_hash_aset(h, rb_str_new_cstr(name), SIZET2NUM(c->by_type[t]));
	}
	return h;
}

struct count_args {
	struct hdx_count *c;
	VALUE namespaces;
	VALUE result;
};

static VALUE count_body(VALUE arg)
{
	struct count_args *a = (struct count_args *)arg;
	struct hdx_count *c = a->c;
	VALUE classes = rb_hash_new(), spaces = rb_hash_new();
	size_t i;

	rb_objspace_each_objects(count_i, c);
	if (c->oom)
		rb_raise(rb_eNoMemError, "heapdump: no memory to count objects");
	for (i = 0; i < c->by_class.cap; i++) {
		VALUE klass = c->by_class.keys[i], name, ns;
		size_t n = (size_t)(uintptr_t)c->by_class.vals[i];

		if (klass <= (VALUE)1 || NIL_P(name = class_name(klass)))
			continue;
		ns = namespace_of(name, a->namespaces);
		if (RARRAY_LEN(a->namespaces) && NIL_P(ns))
			continue;
		add_to(classes, rb_str_dup(name), n);
		if (!NIL_P(ns))
			add_to(spaces, ns, n);
	}
	a->result = rb_hash_new();
	rb_hash_aset(a->result, rb_str_new_cstr("total"), SIZET2NUM(c->total));
	rb_hash_aset(a->result, rb_str_new_cstr("free"),
		     SIZET2NUM(c->free_slots));
	rb_hash_aset(a->result, rb_str_new_cstr("types"), types_hash(c));
	rb_hash_aset(a->result, rb_str_new_cstr("classes"), classes);
	if (RARRAY_LEN(a->namespaces))
		rb_hash_aset(a->result, rb_str_new_cstr("namespaces"), spaces);
	return Qnil;
}

/* :nodoc: */
static VALUE count_m(VALUE self, VALUE namespaces)
{
	struct hdx_count *c = calloc(1, sizeof(*c));
	struct count_args a = { c, namespaces, Qnil };
	int state = 0;
	VALUE was_disabled;

	Check_Type(namespaces, T_ARRAY);
	if (!c || hdx_table_init(&c->by_class, 1024)) {
		free(c);
		rb_raise(rb_eNoMemError, "heapdump: no memory to count objects");
	}
	was_disabled = rb_gc_disable();
	rb_protect(count_body, (VALUE)&a, &state);
	if (!RTEST(was_disabled))
		rb_gc_enable();
	hdx_table_free(&c->by_class);
	free(c);
	if (state)
		rb_jump_tag(state);
	return a.result;
}

void hdx_init_count(VALUE mod)
{
	rb_define_module_function(mod, "_count_objects", count_m, 1);
}
#else
/* this Ruby does not export the heap iterator: no count_objects */
void hdx_init_count(VALUE mod)
{
}
#endif
