/*
 * hd_nodeset.c - HeapDump::NodeSet: a set of node ids of one heap, as
 * libheapdump's selection evaluator (hd_select_nodes) and graph queries
 * give it (4 bytes an object, never a Ruby object an object), iterated
 * one id at a time; set algebra; written back as a dump
 * (hd_subdump_write) or as GML or DOT (hd_export_*). Selection, the lazy
 * Enumerable of lib/heapdump/heap.rb, is built on it.
 */
#include "hd_heap.h"

#include <stdlib.h>

VALUE hdx_cNodeSet;

static void nodeset_mark(void *p)
{
	rb_gc_mark(((struct hdx_nodeset *)p)->heap);
}

static void nodeset_free(void *p)
{
	struct hdx_nodeset *n = p;

	hd_nodes_free(&n->set);
	xfree(n);
}

static size_t nodeset_memsize(const void *p)
{
	const struct hdx_nodeset *n = p;

	return sizeof(*n) + n->set.cap * sizeof(hd_node_id);
}

static const rb_data_type_t nodeset_type = {
	"HeapDump::NodeSet",
	{ nodeset_mark, nodeset_free, nodeset_memsize },
	NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY
};

struct hdx_nodeset *hdx_nodeset_get(VALUE v)
{
	struct hdx_nodeset *n;

	TypedData_Get_Struct(v, struct hdx_nodeset, &nodeset_type, n);
	return n;
}

VALUE hdx_nodeset_wrap(VALUE heap, hd_nodes *set)
{
	struct hdx_nodeset *n;
	VALUE obj = TypedData_Make_Struct(hdx_cNodeSet, struct hdx_nodeset,
					  &nodeset_type, n);

	n->heap = heap;
	n->set = *set;
	set->ids = NULL;
	set->n = set->cap = 0;
	return obj;
}

/* ---- selections ---- */

struct select_run {
	hd_select *sel;
	VALUE pairs;
};

static int select_fill(hd_select *sel, VALUE pairs, hd_error *err)
{
	long i;
	VALUE kv, k, v;
	int rc;

	for (i = 0; i < RARRAY_LEN(pairs); i++) {
		kv = rb_ary_entry(pairs, i);
		k = rb_ary_entry(kv, 0);
		v = rb_ary_entry(kv, 1);
		if ((rc = hd_select_add(sel, StringValueCStr(k),
					StringValueCStr(v), err)))
			return rc;
	}
	return 0;
}

/* Heap#_select([[key, value]...]) -> [NodeSet, missing addresses]: the
 * objects the selection picks (man 7 heapdump-select) */
static VALUE heap_select(VALUE self, VALUE pairs)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_select *sel = NULL;
	hd_nodes set = { 0 };
	uint64_t missing = 0;
	hd_error err = { 0 };
	int rc;
	long i;

	Check_Type(pairs, T_ARRAY);
	for (i = 0; i < RARRAY_LEN(pairs); i++) { /* raise before allocating */
		VALUE kv = rb_ary_entry(pairs, i);

		Check_Type(kv, T_ARRAY);
		StringValueCStr(RARRAY_PTR(kv)[0]);
		StringValueCStr(RARRAY_PTR(kv)[1]);
	}
	if ((rc = hd_select_new(&sel, &err)))
		hdx_raise(rc, &err);
	rc = select_fill(sel, pairs, &err);
	if (!rc)
		rc = hd_select_nodes(&set, &missing, sel, h->s, &err);
	hd_select_free(sel);
	if (rc) {
		hd_nodes_free(&set);
		hdx_raise(rc, &err);
	}
	return rb_ary_new_from_args(2, hdx_nodeset_wrap(self, &set),
				    ULL2NUM(missing));
}

/* Heap#_explain(pairs) -> why the selection picks nothing */
static VALUE heap_explain(VALUE self, VALUE pairs)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_select *sel = NULL;
	hd_error err = { 0 };
	char buf[1024];
	int rc;

	Check_Type(pairs, T_ARRAY);
	if ((rc = hd_select_new(&sel, &err)))
		hdx_raise(rc, &err);
	rc = select_fill(sel, pairs, &err);
	if (!rc)
		rc = hd_select_explain(buf, sizeof(buf), sel, h->s, &err);
	hd_select_free(sel);
	if (rc)
		hdx_raise(rc, &err);
	return rb_utf8_str_new_cstr(buf);
}

/* Heap#_nodeset(ids) -> NodeSet of the given ids (sorted, unique) */
static int cmp_id(const void *a, const void *b)
{
	hd_node_id x = *(const hd_node_id *)a, y = *(const hd_node_id *)b;

	return x < y ? -1 : x > y;
}

static VALUE heap_nodeset(VALUE self, VALUE ids)
{
	struct hdx_heap *h = hdx_heap_get(self);
	struct hdx_nodeset *n;
	VALUE obj;
	long i, len;
	size_t k = 0;

	Check_Type(ids, T_ARRAY);
	len = RARRAY_LEN(ids);
	obj = TypedData_Make_Struct(hdx_cNodeSet, struct hdx_nodeset,
				    &nodeset_type, n);
	n->heap = self;
	if (!len)
		return obj;
	/* the library's allocator frees it: malloc, as HD_ALLOC */
	n->set.ids = malloc((size_t)len * sizeof(hd_node_id));
	if (!n->set.ids)
		rb_raise(rb_eNoMemError, "cannot allocate %ld node ids", len);
	n->set.cap = (size_t)len;
	for (i = 0; i < len; i++)
		n->set.ids[i] = hdx_node_arg(h, rb_ary_entry(ids, i));
	qsort(n->set.ids, (size_t)len, sizeof(hd_node_id), cmp_id);
	for (i = 0; i < len; i++)
		if (!k || n->set.ids[k - 1] != n->set.ids[i])
			n->set.ids[k++] = n->set.ids[i];
	n->set.n = k;
	return obj;
}

/* Heap#_all_nodeset -> NodeSet of every node (0...size), made in C */
static VALUE heap_all_nodeset(VALUE self)
{
	struct hdx_heap *h = hdx_heap_get(self);
	uint32_t i, n = hd_store_node_count(h->s);
	hd_nodes set = { 0 };

	if (n && !(set.ids = malloc((size_t)n * sizeof(hd_node_id))))
		rb_raise(rb_eNoMemError, "cannot allocate %u node ids", n);
	for (i = 0; i < n; i++)
		set.ids[i] = i;
	set.n = set.cap = n;
	return hdx_nodeset_wrap(self, &set);
}

/* ---- the set ---- */

static VALUE nodeset_heap(VALUE self)
{
	return hdx_nodeset_get(self)->heap;
}

static VALUE nodeset_size(VALUE self)
{
	return SIZET2NUM(hdx_nodeset_get(self)->set.n);
}

/* #each_id { |id| }: one id at a time, in ascending order */
static VALUE nodeset_each_id(VALUE self)
{
	struct hdx_nodeset *n = hdx_nodeset_get(self);
	size_t i;

	RETURN_ENUMERATOR(self, 0, 0);
	for (i = 0; i < n->set.n; i++) /* n->set never changes */
		rb_yield(UINT2NUM(n->set.ids[i]));
	return self;
}

static VALUE nodeset_at(VALUE self, VALUE vi)
{
	struct hdx_nodeset *n = hdx_nodeset_get(self);
	long i = NUM2LONG(vi);

	if (i < 0)
		i += (long)n->set.n;
	if (i < 0 || (size_t)i >= n->set.n)
		return Qnil;
	return UINT2NUM(n->set.ids[i]);
}

static VALUE nodeset_include(VALUE self, VALUE vid)
{
	struct hdx_nodeset *n = hdx_nodeset_get(self);
	hd_node_id id;

	if (!RB_INTEGER_TYPE_P(vid) || RTEST(rb_funcall(vid, '<', 1, INT2FIX(0))))
		return Qfalse;
	id = (hd_node_id)NUM2ULONG(vid);
	return n->set.n && bsearch(&id, n->set.ids, n->set.n, sizeof(id),
				   cmp_id) ? Qtrue : Qfalse;
}

enum { OP_AND, OP_OR, OP_SUB };

/* the merge of two ascending sets */
static VALUE nodeset_op(VALUE self, VALUE other, int op)
{
	struct hdx_nodeset *a = hdx_nodeset_get(self), *b;
	hd_nodes out = { 0 };
	size_t i = 0, j = 0, cap;

	b = hdx_nodeset_get(other);
	if (a->heap != b->heap)
		rb_raise(rb_eArgError, "sets of two different heaps");
	cap = op == OP_OR ? a->set.n + b->set.n : a->set.n;
	if (cap && !(out.ids = malloc(cap * sizeof(hd_node_id))))
		rb_raise(rb_eNoMemError, "cannot allocate %zu node ids", cap);
	out.cap = cap;
	while (i < a->set.n || j < b->set.n) {
		hd_node_id x = i < a->set.n ? a->set.ids[i] : HD_NODE_NONE;
		hd_node_id y = j < b->set.n ? b->set.ids[j] : HD_NODE_NONE;

		if (x == y) {
			if (op != OP_SUB)
				out.ids[out.n++] = x;
			i++, j++;
		} else if (x < y) {
			if (op != OP_AND)
				out.ids[out.n++] = x;
			i++;
		} else {
			if (op == OP_OR)
				out.ids[out.n++] = y;
			j++;
		}
		if (op != OP_OR && i == a->set.n)
			break;
	}
	return hdx_nodeset_wrap(a->heap, &out);
}

static VALUE nodeset_and(VALUE self, VALUE o) { return nodeset_op(self, o, OP_AND); }
static VALUE nodeset_or(VALUE self, VALUE o) { return nodeset_op(self, o, OP_OR); }
static VALUE nodeset_sub(VALUE self, VALUE o) { return nodeset_op(self, o, OP_SUB); }

/* #_drop_dumper -> a new set without the tracer and dump_all's objects */
static VALUE nodeset_drop_dumper(VALUE self)
{
	struct hdx_nodeset *n = hdx_nodeset_get(self);
	struct hdx_heap *h = hdx_heap_get(n->heap);
	hd_nodes out = { 0 };

	if (n->set.n) {
		if (!(out.ids = malloc(n->set.n * sizeof(hd_node_id))))
			rb_raise(rb_eNoMemError, "out of memory");
		memcpy(out.ids, n->set.ids, n->set.n * sizeof(hd_node_id));
		out.n = out.cap = n->set.n;
	}
	hd_nodes_drop_dumper(&out, h->s);
	return hdx_nodeset_wrap(n->heap, &out);
}

/* ---- writing: a file (atomically, hd_outfile) or a String ---- */

struct sink {
	hd_outfile *o;        /* a file, or */
	char *buf;            /* a growing buffer (a String at the end) */
	size_t n, cap;
	hd_error err;
	int rc;
};

static int sink_write(const void *p, size_t n, void *payload)
{
	struct sink *k = payload;
	char *nb;
	size_t cap;

	if (k->o) {
		if ((k->rc = hd_outfile_write(k->o, p, n, &k->err)))
			return k->rc;
		return 0;
	}
	if (k->n + n > k->cap) {
		cap = k->cap ? k->cap : 4096;
		while (cap < k->n + n)
			cap *= 2;
		if (!(nb = realloc(k->buf, cap)))
			return k->rc = HD_ENOMEM;
		k->buf = nb;
		k->cap = cap;
	}
	memcpy(k->buf + k->n, p, n);
	k->n += n;
	return 0;
}

static void sink_open(struct sink *k, VALUE path, const hd_store *s)
{
	hd_store_info i;
	int rc;

	memset(k, 0, sizeof(*k));
	if (NIL_P(path))
		return;
	hd_store_info_get(&i, s);
	if ((rc = hd_outfile_open(&k->o, StringValueCStr(path), i.source_path, 0,
				  &k->err)))
		hdx_raise(rc, &k->err);
}

/* finishes a write whose result is rc: commits the file or makes the
 * String, or cleans up and raises */
static VALUE sink_close(struct sink *k, int rc, hd_error *err, VALUE path)
{
	VALUE str;

	if (!rc && k->o)
		rc = hd_outfile_commit(k->o, err = &k->err);
	hd_outfile_free(k->o);
	if (rc) {
		free(k->buf);
		if (k->rc && k->rc == rc)
			err = &k->err;
		hdx_raise(rc, err);
	}
	if (k->o)
		return path;
	str = rb_utf8_str_new(k->buf ? k->buf : "", (long)k->n);
	free(k->buf);
	return str;
}

/* #_write(path_or_nil, flags): the records of the set as a dump
 * (hd_subdump_write); nil: returned as a String */
static VALUE nodeset_write(VALUE self, VALUE path, VALUE vflags)
{
	struct hdx_nodeset *n = hdx_nodeset_get(self);
	struct hdx_heap *h = hdx_heap_get(n->heap);
	struct sink k;
	hd_error err = { 0 };
	unsigned flags = 0;
	int rc;

	if (RTEST(vflags))
		flags = HD_SUBDUMP_ROOTS | HD_SUBDUMP_RESTRICT;
	if (!NIL_P(path))
		FilePathValue(path);
	sink_open(&k, path, h->s);
	rc = hd_subdump_write(h->s, &n->set, flags, NULL, sink_write, &k, &err);
	return sink_close(&k, rc, &err, path);
}

/* #_export(path_or_nil, dot, collapse, depth, max_nodes): GML or DOT
 * (hd_export_new, hd_export_write_gml / _dot) */
static VALUE nodeset_export(VALUE self, VALUE path, VALUE dot, VALUE collapse,
			    VALUE depth, VALUE max_nodes)
{
	struct hdx_nodeset *n = hdx_nodeset_get(self);
	struct hdx_heap *h = hdx_heap_get(n->heap);
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	hd_export *x = NULL;
	struct sink k;
	hd_error err = { 0 };
	int rc;

	o.flags = RTEST(collapse) ? HD_EXPORT_COLLAPSE : 0;
	o.depth = NUM2UINT(depth);
	o.max_nodes = NUM2ULL(max_nodes);
	if (!NIL_P(path))
		FilePathValue(path);
	if ((rc = hd_export_new(&x, h->s, &n->set, &o, &err)))
		hdx_raise(rc, &err);
	sink_open(&k, path, h->s); /* raises only before anything is open */
	if (RTEST(dot))
		rc = hd_export_write_dot(x, sink_write, &k, &err);
	else
		rc = hd_export_write_gml(x, sink_write, &k, &err);
	hd_export_free(x);
	return sink_close(&k, rc, &err, path);
}

void hdx_init_nodeset(VALUE mod)
{
	hdx_cNodeSet = rb_define_class_under(mod, "NodeSet", rb_cObject);
	rb_undef_alloc_func(hdx_cNodeSet);
	rb_define_method(hdx_cHeap, "_select", heap_select, 1);
	rb_define_method(hdx_cHeap, "_explain", heap_explain, 1);
	rb_define_method(hdx_cHeap, "_nodeset", heap_nodeset, 1);
	rb_define_method(hdx_cHeap, "_all_nodeset", heap_all_nodeset, 0);
	rb_define_method(hdx_cNodeSet, "heap", nodeset_heap, 0);
	rb_define_method(hdx_cNodeSet, "size", nodeset_size, 0);
	rb_define_method(hdx_cNodeSet, "each_id", nodeset_each_id, 0);
	rb_define_method(hdx_cNodeSet, "[]", nodeset_at, 1);
	rb_define_method(hdx_cNodeSet, "include?", nodeset_include, 1);
	rb_define_method(hdx_cNodeSet, "&", nodeset_and, 1);
	rb_define_method(hdx_cNodeSet, "|", nodeset_or, 1);
	rb_define_method(hdx_cNodeSet, "-", nodeset_sub, 1);
	rb_define_method(hdx_cNodeSet, "_drop_dumper", nodeset_drop_dumper, 0);
	rb_define_method(hdx_cNodeSet, "_write", nodeset_write, 2);
	rb_define_method(hdx_cNodeSet, "_export", nodeset_export, 5);
}
