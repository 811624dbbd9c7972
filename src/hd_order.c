/*
 * hd_order.c - are the heaps of a diff in the order they were taken, and
 * of one process? Heap._order runs libheapdump's hd_order_check, the
 * check of `heapdump diff` and `leaks`, and words its findings with
 * hd_order_text, the command's own words; lib/heapdump/heap.rb raises
 * HeapDump::OrderError with them (or warns, with force: true).
 */
#include "hd_heap.h"

#include <stdlib.h>

/* text of one finding of pair p, as a String ("" if none) */
static VALUE finding_text(const hd_order_pair *p, unsigned int finding,
			  const char *first, const char *second,
			  const char *t0, const char *t1, int force)
{
	char small[1024];
	int n = hd_order_text(small, sizeof(small), p, finding, first, second,
			      t0, t1, force);
	VALUE s;

	if (n <= 0)
		return rb_str_new_cstr("");
	if ((size_t)n < sizeof(small))
		return rb_utf8_str_new(small, n);
	s = rb_utf8_str_new(NULL, n);
	hd_order_text(RSTRING_PTR(s), (size_t)n + 1, p, finding, first, second,
		      t0, t1, force);
	return s;
}

/* One origin of Heap#origin, [pid or 0, sidecar time String or nil,
 * GC compaction count or nil], into *o; *t its time ("" if none). */
void hdx_origin_get(VALUE og, struct hd_dump_origin *o, const char **t)
{
	VALUE pid, tm, cc;

	Check_Type(og, T_ARRAY);
	pid = rb_ary_entry(og, 0);
	tm = rb_ary_entry(og, 1);
	cc = rb_ary_entry(og, 2);
	memset(o, 0, sizeof(*o));
	o->pid = NIL_P(pid) ? 0 : NUM2ULL(pid);
	*t = NIL_P(tm) ? "" : StringValueCStr(tm);
	o->time_us = hd_time_us(*t);
	if (!o->time_us)
		*t = "";
	o->compactions = NIL_P(cc) ? 0 : NUM2ULL(cc) + 1;
}

/*
 * Heap._order(heaps, names, origins) -> [[warnings, reversed, forced], ...]
 * heaps: 2 to 16 Heaps, oldest first as given; names: what to call each;
 * origins: Heap#origin of each (hdx_origin_get). One entry per
 * consecutive pair: its warnings (two processes, few shared addresses),
 * and when it looks reversed the error text and the text with force
 * (nil when not reversed).
 */
static VALUE heap_s_order(VALUE klass, VALUE heaps, VALUE names,
			  VALUE origins)
{
	const hd_store *s[16];
	hd_dump_origin o[16];
	const char *t[16], *nm[16];
	hd_order_pair p[15];
	hd_error err = { 0 };
	long n, k;
	int rc;
	VALUE r;

	(void)klass;
	Check_Type(heaps, T_ARRAY);
	Check_Type(names, T_ARRAY);
	Check_Type(origins, T_ARRAY);
	n = RARRAY_LEN(heaps);
	if (n < 2 || n > 16 || RARRAY_LEN(names) != n ||
	    RARRAY_LEN(origins) != n)
		rb_raise(rb_eArgError,
			 "2 to 16 heaps, each with a name and an origin");
	for (k = 0; k < n; k++) {
		VALUE name = rb_ary_entry(names, k);

		s[k] = hdx_heap_get(rb_ary_entry(heaps, k))->s;
		nm[k] = StringValueCStr(name);
		hdx_origin_get(rb_ary_entry(origins, k), &o[k], &t[k]);
	}
	if ((rc = hd_order_check(p, s, o, (size_t)n, &err)))
		hdx_raise(rc, &err);
	r = rb_ary_new_capa(n - 1);
	for (k = 0; k + 1 < n; k++) {
		VALUE warns = rb_ary_new(), rev = Qnil, forced = Qnil;

		if (p[k].flags & HD_ORDER_OTHER_PROCESS)
			rb_ary_push(warns, finding_text(&p[k], HD_ORDER_OTHER_PROCESS,
							nm[k], nm[k + 1], NULL, NULL, 0));
		else if (p[k].flags & HD_ORDER_FEW_SHARED)
			rb_ary_push(warns, finding_text(&p[k], HD_ORDER_FEW_SHARED,
							nm[k], nm[k + 1], NULL, NULL, 0));
		if (p[k].flags & HD_ORDER_REVERSED) {
			rev = finding_text(&p[k], HD_ORDER_REVERSED, nm[k],
					   nm[k + 1], t[k], t[k + 1], 0);
			forced = finding_text(&p[k], HD_ORDER_REVERSED, nm[k],
					      nm[k + 1], t[k], t[k + 1], 1);
		}
		rb_ary_push(r, rb_ary_new_from_args(3, warns, rev, forced));
	}
	return r;
}

void hdx_init_order(VALUE mod)
{
	(void)mod;
	rb_define_singleton_method(hdx_cHeap, "_order", heap_s_order, 3);
}
