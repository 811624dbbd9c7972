/*
 * hd_heap.c - HeapDump::Heap's primitives: a libheapdump store opened or
 * built, written, described; the columns of one node; statistics and
 * the dominator tree (top, retained sizes). Everything is computed by
 * libheapdump (compiled into the extension, see extconf.rb); this file
 * only converts. The public methods are in lib/heapdump/heap.rb.
 */
#include "hd_heap.h"

#include <limits.h>
#include <string.h>

VALUE hdx_cHeap;

static void heap_free(void *p)
{
	struct hdx_heap *h = p;

	hd_reach_free(h->reach);
	hd_domtree_free(h->dom);
	hd_reach_free(h->reach_weak);
	hd_domtree_free(h->dom_weak);
	hd_store_close(h->s);
	xfree(h);
}

static size_t heap_dsize(const void *p)
{
	return sizeof(struct hdx_heap);
}

static const rb_data_type_t heap_type = {
	"HeapDump::Heap",
	{ NULL, heap_free, heap_dsize },
	NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY
};

static VALUE heap_alloc(VALUE klass)
{
	struct hdx_heap *h;

	return TypedData_Make_Struct(klass, struct hdx_heap, &heap_type, h);
}

void hdx_raise(int rc, const hd_error *err)
{
	rb_raise(hdx_eError, "%s",
		 err && err->msg[0] ? err->msg : hd_strerror(rc));
}

struct hdx_heap *hdx_heap_get(VALUE heap)
{
	struct hdx_heap *h;

	TypedData_Get_Struct(heap, struct hdx_heap, &heap_type, h);
	if (!h->s)
		rb_raise(hdx_eError, "the heap is closed");
	return h;
}

hd_node_id hdx_node_arg(struct hdx_heap *h, VALUE id)
{
	unsigned long v = NUM2ULONG(id);

	if (v >= hd_store_node_count(h->s))
		rb_raise(rb_eIndexError, "node %lu out of range (0...%u)", v,
			 hd_store_node_count(h->s));
	return (hd_node_id)v;
}

VALUE hdx_str(const char *p, size_t n)
{
	return p ? rb_utf8_str_new(p, (long)n) : Qnil;
}

hd_domtree *hdx_heap_dom(struct hdx_heap *h, int weak)
{
	hd_domtree **d = weak ? &h->dom_weak : &h->dom;
	hd_error err = { 0 };
	int rc;

	if (!*d && (rc = hd_domtree_new(d, h->s,
					HD_DOMTREE_SKIP_DUMPER |
						(weak ? HD_ROOTS_SKIP_WEAK : 0),
					&err)))
		hdx_raise(rc, &err);
	return *d;
}

const hd_reach *hdx_heap_reach(struct hdx_heap *h, int weak)
{
	hd_reach **r = weak ? &h->reach_weak : &h->reach;
	hd_error err = { 0 };
	int rc;

	if (!*r && (rc = hd_reach_new(r, h->s, weak ? HD_ROOTS_SKIP_WEAK : 0,
				      &err)))
		hdx_raise(rc, &err);
	return *r;
}

/* ---- opening, building, writing ---- */

/* Heap._build(dump_path, strict) -> Heap: the dump read and indexed in
 * memory (hd_store_build). */
static VALUE heap_s_build(VALUE klass, VALUE path, VALUE strict)
{
	VALUE obj = heap_alloc(klass);
	struct hdx_heap *h = DATA_PTR(obj);
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_error err = { 0 };
	int rc;

	FilePathValue(path);
	if (RTEST(strict))
		o.read.flags |= HD_READ_STRICT;
	if ((rc = hd_store_build(&h->s, StringValueCStr(path), &o, &err)))
		hdx_raise(rc, &err);
	return obj;
}

/* Heap._open(store_path) -> Heap: a store file, mapped (hd_store_open). */
static VALUE heap_s_open(VALUE klass, VALUE path)
{
	VALUE obj = heap_alloc(klass);
	struct hdx_heap *h = DATA_PTR(obj);
	hd_error err = { 0 };
	int rc;

	FilePathValue(path);
	if ((rc = hd_store_open(&h->s, StringValueCStr(path), &err)))
		hdx_raise(rc, &err);
	return obj;
}

/* Heap._open_cached(dump_path, strict) -> [Heap, store_path or nil,
 * note or nil]: the dump through its cached store (hd_store_open_cached,
 * the rule heapdump serve uses too): reused, or indexed and kept, or
 * indexed in memory when no cache can be written; the note says why a
 * cached store was built again (stale, damaged, another builder's) or
 * why none is kept. */
static VALUE heap_s_open_cached(VALUE klass, VALUE path, VALUE strict)
{
	VALUE obj = heap_alloc(klass);
	struct hdx_heap *h = DATA_PTR(obj);
	hd_cache_options o = HD_CACHE_OPTIONS_INIT;
	hd_cache_result *r = ALLOC(hd_cache_result);
	hd_error err = { 0 };
	VALUE store, note;
	int rc;

	FilePathValue(path);
	if (RTEST(strict))
		o.index.read.flags |= HD_READ_STRICT;
	/* what heapdump serve reads at start, kept for it: the group
	 * stats and the string values (man 5 heapdump-store, VIEWS) */
	o.flags |= HD_CACHE_VIEWS;
	rc = hd_store_open_cached(&h->s, r, StringValueCStr(path), &o, &err);
	if (rc) {
		xfree(r);
		hdx_raise(rc, &err);
	}
	store = r->path[0] ? rb_str_new_cstr(r->path) : Qnil;
	note = r->note[0] ? rb_str_new_cstr(r->note) : Qnil;
	xfree(r);
	return rb_ary_new_from_args(3, obj, store, note);
}

/* Heap._cache_path(dump_path) -> the store file _open_cached writes. */
static VALUE heap_s_cache_path(VALUE klass, VALUE path)
{
	char buf[4096];
	hd_error err = { 0 };
	int rc;

	FilePathValue(path);
	if ((rc = hd_store_cache_path(buf, sizeof(buf), StringValueCStr(path),
				      &err)))
		hdx_raise(rc, &err);
	return rb_str_new_cstr(buf);
}

/* Heap._store?(path): the file starts with the store magic. */
static VALUE heap_s_is_store(VALUE klass, VALUE path)
{
	FilePathValue(path);
	return hd_store_is_store(StringValueCStr(path)) ? Qtrue : Qfalse;
}

/* #_write(path): the store written through a temporary file renamed
 * over path (hd_store_write). */
static VALUE heap_write(VALUE self, VALUE path)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_error err = { 0 };
	int rc;

	FilePathValue(path);
	if ((rc = hd_store_write(h->s, StringValueCStr(path), &err)))
		hdx_raise(rc, &err);
	return path;
}

/* #_check_source(path) -> nil, or why the dump is not the one indexed */
static VALUE heap_check_source(VALUE self, VALUE path)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_error err = { 0 };

	FilePathValue(path);
	if (hd_store_check_source(h->s, StringValueCStr(path), &err))
		return rb_str_new_cstr(err.msg);
	return Qnil;
}

static VALUE heap_close(VALUE self)
{
	struct hdx_heap *h;

	TypedData_Get_Struct(self, struct hdx_heap, &heap_type, h);
	hd_reach_free(h->reach);
	hd_domtree_free(h->dom);
	hd_reach_free(h->reach_weak);
	hd_domtree_free(h->dom_weak);
	hd_store_close(h->s);
	h->reach = NULL;
	h->dom = NULL;
	h->reach_weak = NULL;
	h->dom_weak = NULL;
	h->s = NULL;
	return Qnil;
}

static VALUE heap_closed_p(VALUE self)
{
	struct hdx_heap *h;

	TypedData_Get_Struct(self, struct hdx_heap, &heap_type, h);
	return h->s ? Qfalse : Qtrue;
}

#define SET_U64(hash, key, v) \
	rb_hash_aset(hash, ID2SYM(rb_intern(key)), ULL2NUM(v))

/* #_info -> Hash: hd_store_info */
static VALUE heap_info(VALUE self)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_store_info i;
	VALUE r = rb_hash_new();
	char buf[64];

	hd_store_info_get(&i, h->s);
	SET_U64(r, "nodes", i.nodes);
	SET_U64(r, "edges", i.edges);
	SET_U64(r, "dangling", i.dangling);
	SET_U64(r, "duplicates", i.duplicates);
	SET_U64(r, "root_refs", i.root_refs);
	SET_U64(r, "root_categories", i.root_categories);
	SET_U64(r, "shapes", i.shapes);
	SET_U64(r, "source_size", i.source_size);
	SET_U64(r, "source_mtime", i.source_mtime);
	SET_U64(r, "features", i.features);
	SET_U64(r, "bad_lines", i.read.skipped + i.read.repaired);
	rb_hash_aset(r, ID2SYM(rb_intern("source_path")),
		     i.source_path ? rb_str_new_cstr(i.source_path) : Qnil);
	rb_hash_aset(r, ID2SYM(rb_intern("ruby")),
		     rb_str_new_cstr(hd_features_ruby(buf, sizeof(buf),
						      i.features)));
	rb_hash_aset(r, ID2SYM(rb_intern("ref_names")),
		     hd_store_has_ref_names(h->s) ? Qtrue : Qfalse);
	return r;
}

static VALUE heap_size(VALUE self)
{
	return UINT2NUM(hd_store_node_count(hdx_heap_get(self)->s));
}

/* ---- one node ---- */

static VALUE heap_find(VALUE self, VALUE address)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_node_id id = hd_store_find(h->s, NUM2ULL(address));

	return id == HD_NODE_NONE ? Qnil : UINT2NUM(id);
}

static VALUE heap_address(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);

	return ULL2NUM(hd_store_address(h->s, hdx_node_arg(h, id)));
}

static VALUE heap_type_of(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);

	return ID2SYM(rb_intern(
		hd_type_name(hd_store_type(h->s, hdx_node_arg(h, id)))));
}

static VALUE heap_memsize(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);

	return ULL2NUM(hd_store_memsize(h->s, hdx_node_arg(h, id)));
}

static VALUE heap_generation(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);
	uint64_t g = hd_store_generation(h->s, hdx_node_arg(h, id));

	return g == UINT64_MAX ? Qnil : ULL2NUM(g);
}

static VALUE heap_length(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);
	uint64_t len;

	return hd_store_length(&len, h->s, hdx_node_arg(h, id)) ? ULL2NUM(len) :
								  Qnil;
}

static VALUE heap_frozen(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);

	return hd_store_bits(h->s, hdx_node_arg(h, id)) & HD_B_FROZEN ? Qtrue :
									 Qfalse;
}

/* the name functions write into a buffer and return the full length */
typedef size_t (*name_fn)(char *, size_t, const hd_store *, hd_node_id);

static VALUE node_name(VALUE self, VALUE id, name_fn fn)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_node_id v = hdx_node_arg(h, id);
	char buf[512];
	size_t n = fn(buf, sizeof(buf), h->s, v);
	VALUE str;

	if (n < sizeof(buf))
		return hdx_str(buf, n);
	str = rb_str_buf_new((long)n + 1);
	fn(RSTRING_PTR(str), n + 1, h->s, v);
	rb_str_set_len(str, (long)n);
	rb_enc_associate(str, rb_utf8_encoding());
	return str;
}

/* the class name `stats --by class` groups by */
static VALUE heap_class_name(VALUE self, VALUE id)
{
	return node_name(self, id, hd_store_class_name);
}

/* the name every command shows the node by (a class by its own name) */
static VALUE heap_node_name(VALUE self, VALUE id)
{
	return node_name(self, id, hd_store_node_name);
}

static VALUE heap_aux(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);
	size_t n = 0;
	const char *p = hd_store_aux(h->s, hdx_node_arg(h, id), &n);

	return hdx_str(p, n);
}

/* #_site(id) -> [file, line, method] or nil */
static VALUE heap_site(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_site site;

	if (hd_store_site(&site, h->s, hdx_node_arg(h, id)) || !site.file)
		return Qnil;
	return rb_ary_new_from_args(3, hdx_str(site.file, site.file_len),
				    site.line ? ULL2NUM(site.line) : Qnil,
				    hdx_str(site.method, site.method_len));
}

static VALUE edge_ids(hd_edge_iter *it)
{
	VALUE r = rb_ary_new_capa((long)hd_edge_iter_count(it));
	hd_node_id v;

	while (hd_edge_iter_next(it, &v) == 0)
		rb_ary_push(r, UINT2NUM(v));
	return r;
}

/* #_refs(id) -> ids, in dump order */
static VALUE heap_refs(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_edge_iter it;

	hd_store_refs(h->s, hdx_node_arg(h, id), &it);
	return edge_ids(&it);
}

static VALUE heap_referrers(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_edge_iter it;

	hd_store_referrers(h->s, hdx_node_arg(h, id), &it);
	return edge_ids(&it);
}

/* #_ref_names(id) -> names parallel to #_refs (nil where none), from the
 * store's names (hd_store_ref_name_at) */
static VALUE heap_ref_names(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_node_id v = hdx_node_arg(h, id);
	hd_edge_iter it;
	uint32_t k, n;
	size_t len;
	const char *name;
	VALUE r;

	hd_store_refs(h->s, v, &it);
	n = hd_edge_iter_count(&it);
	r = rb_ary_new_capa((long)n);
	for (k = 0; k < n; k++) {
		name = hd_store_ref_name_at(h->s, v, k, &len, NULL);
		rb_ary_push(r, hdx_str(name, len));
	}
	return r;
}

/* #_hop_text(from, to_or_nil): one hop of a path (hd_store_hop_text) */
static VALUE heap_hop_text(VALUE self, VALUE from, VALUE to)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_node_id a = hdx_node_arg(h, from);
	hd_node_id b = NIL_P(to) ? HD_NODE_NONE : hdx_node_arg(h, to);
	char buf[1024];
	size_t n = hd_store_hop_text(buf, sizeof(buf), h->s, a, b);

	return hdx_str(buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
}

/* #_path_runs(ids): the runs of repeated hops of a path (hd_path_fold),
 * each [start, period, count] */
static VALUE heap_path_runs(VALUE self, VALUE ids)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_path_runs runs = { 0 };
	hd_error err = { 0 };
	hd_node_id *nodes;
	long n, i;
	int rc;
	VALUE out;

	Check_Type(ids, T_ARRAY);
	n = RARRAY_LEN(ids);
	nodes = ALLOC_N(hd_node_id, n ? n : 1);
	for (i = 0; i < n; i++)
		nodes[i] = hdx_node_arg(h, rb_ary_entry(ids, i));
	rc = hd_path_fold(&runs, h->s, nodes, (size_t)n, NULL, &err);
	xfree(nodes);
	if (rc)
		hdx_raise(rc, &err);
	out = rb_ary_new_capa((long)runs.n);
	for (i = 0; i < (long)runs.n; i++)
		rb_ary_push(out, rb_ary_new_from_args(
					 3, SIZET2NUM(runs.runs[i].start),
					 SIZET2NUM(runs.runs[i].period),
					 SIZET2NUM(runs.runs[i].count)));
	hd_path_runs_free(&runs);
	return out;
}

/* #_dumper?(id): the allocation tracer or dump_all's own object */
static VALUE heap_is_dumper(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);

	return hd_store_is_dumper(h->s, hdx_node_arg(h, id)) ? Qtrue : Qfalse;
}

/* ---- statistics ---- */

static VALUE totals_hash(const hd_stats_totals *t)
{
	VALUE r = rb_hash_new();

	SET_U64(r, "objects", t->objects);
	SET_U64(r, "memsize", t->memsize);
	SET_U64(r, "references", t->edges);
	SET_U64(r, "roots", t->roots);
	SET_U64(r, "root_categories", t->root_categories);
	SET_U64(r, "shapes", t->shapes);
	SET_U64(r, "traced", t->traced);
	rb_hash_aset(r, ID2SYM(rb_intern("generations")),
		     t->traced ? rb_range_new(ULL2NUM(t->gen_min),
					      ULL2NUM(t->gen_max), 0) :
				 Qnil);
	SET_U64(r, "excluded", t->excluded);
	SET_U64(r, "excluded_memsize", t->excluded_memsize);
	rb_hash_aset(r, ID2SYM(rb_intern("memsize_saturated")),
		     t->saturated ? Qtrue : Qfalse);
	return r;
}

static void stats_options(hd_stats_options *o, VALUE groupings, VALUE all)
{
	long g, k, ng, nk;
	VALUE keys, name;
	int key;

	Check_Type(groupings, T_ARRAY);
	ng = RARRAY_LEN(groupings);
	if (ng < 1 || ng > HD_STATS_MAX_GROUPINGS)
		rb_raise(rb_eArgError, "1 to %d groupings", HD_STATS_MAX_GROUPINGS);
	o->flags = RTEST(all) ? HD_STATS_ALL : 0;
	for (g = 0; g < ng; g++) {
		keys = rb_ary_entry(groupings, g);
		Check_Type(keys, T_ARRAY);
		nk = RARRAY_LEN(keys);
		if (nk < 1 || nk > HD_STATS_MAX_KEYS)
			rb_raise(rb_eArgError, "1 to %d keys a grouping",
				 HD_STATS_MAX_KEYS);
		for (k = 0; k < nk; k++) {
			name = rb_ary_entry(keys, k);
			StringValue(name);
			key = hd_key_from_name(RSTRING_PTR(name),
					       (size_t)RSTRING_LEN(name));
			if (!key)
				rb_raise(rb_eArgError,
					 "unknown key '%" PRIsVALUE
					 "' (type class file location method "
					 "gem generation imemo length)",
					 name);
			o->keys[g][k] = key;
		}
		o->nkeys[g] = (unsigned)nk;
	}
	o->ngroupings = (unsigned)ng;
}

struct stats_run {
	hd_stats *st;
	hd_stats_options o;
	int sort;
};

static VALUE stats_rows(VALUE arg)
{
	struct stats_run *run = (struct stats_run *)arg;
	hd_stats_totals t;
	VALUE all = rb_ary_new(), rows, keys;
	const hd_stats_row *r;
	size_t n, i;
	unsigned g, k;

	hd_stats_totals_get(&t, run->st);
	for (g = 0; g < run->o.ngroupings; g++) {
		r = hd_stats_rows(run->st, g, run->sort, &n);
		rows = rb_ary_new_capa((long)n);
		for (i = 0; i < n; i++) {
			keys = rb_ary_new_capa(run->o.nkeys[g]);
			for (k = 0; k < run->o.nkeys[g]; k++)
				rb_ary_push(keys, hdx_str(r[i].key[k],
							  r[i].key_len[k]));
			rb_ary_push(rows, rb_ary_new_from_args(
						  3, keys, ULL2NUM(r[i].count),
						  ULL2NUM(r[i].memsize)));
		}
		rb_ary_push(all, rows);
	}
	return rb_ary_new_from_args(2, totals_hash(&t), all);
}

static VALUE stats_free(VALUE arg)
{
	hd_stats_free(((struct stats_run *)arg)->st);
	return Qnil;
}

/*
 * #_stats(groupings, all, by_memsize, nodeset_or_nil) -> [totals, rows]:
 * groupings an Array of Arrays of key names; rows, per grouping, of
 * [[key values], count, memsize], as `heapdump stats` counts them
 * (hd_stats_add_store, or hd_stats_add_nodes for a set).
 */
static VALUE heap_stats(VALUE self, VALUE groupings, VALUE all, VALUE by_mem,
			VALUE nodeset)
{
	struct hdx_heap *h = hdx_heap_get(self);
	struct stats_run run = { NULL, HD_STATS_OPTIONS_INIT, 0 };
	struct hdx_nodeset *set = NIL_P(nodeset) ? NULL :
						   hdx_nodeset_get(nodeset);
	hd_error err = { 0 };
	int rc;

	stats_options(&run.o, groupings, all); /* raises before allocating */
	run.sort = RTEST(by_mem) ? HD_SORT_MEMSIZE : HD_SORT_COUNT;
	if ((rc = hd_stats_new(&run.st, &run.o, &err)))
		hdx_raise(rc, &err);
	if (!set)
		rc = hd_stats_add_store(run.st, h->s, &err);
	else
		rc = hd_stats_add_nodes(run.st, h->s, &set->set, &err);
	if (!rc)
		rc = hd_stats_finish(run.st, &err);
	if (rc) {
		hd_stats_free(run.st);
		hdx_raise(rc, &err);
	}
	return rb_ensure(stats_rows, (VALUE)&run, stats_free, (VALUE)&run);
}

/* ---- the dominator tree (top, dominators, retained sizes) ---- */

/* #_dom_ready?(skip_weak): that dominator tree is made */
static VALUE heap_dom_ready(VALUE self, VALUE weak)
{
	struct hdx_heap *h = hdx_heap_get(self);

	return (RTEST(weak) ? h->dom_weak : h->dom) ? Qtrue : Qfalse;
}

/* #_retained(id, skip_weak) -> [count, memsize] (0, 0 when no root
 * reaches it) */
static VALUE heap_retained(VALUE self, VALUE id, VALUE weak)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_node_id v = hdx_node_arg(h, id);
	uint64_t mem = 0,
		 n = hd_domtree_retained(hdx_heap_dom(h, RTEST(weak)), v, &mem);

	return rb_ary_new_from_args(2, ULL2NUM(n), ULL2NUM(mem));
}

/* #_reached -> [count, memsize, stored?] */
static VALUE heap_reached(VALUE self)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_domtree *d = hdx_heap_dom(h, 0);
	uint64_t mem = 0, n = hd_domtree_reached(d, &mem);

	return rb_ary_new_from_args(3, ULL2NUM(n), ULL2NUM(mem),
				    hd_domtree_is_stored(d) ? Qtrue : Qfalse);
}

/* #_heap_memsize -> the Ruby heap for the process growth
 * (hd_process_heap_memsize) */
static VALUE heap_heap_memsize(VALUE self)
{
	return ULL2NUM(hd_process_heap_memsize(hdx_heap_get(self)->s));
}

/*
 * Heap._process_judge(samples) -> [rss_growth, malloc_growth or nil,
 * heap_growth, outside_ruby, text] or nil when a sample has no RSS:
 * hd_process_judge over samples, each [rss or nil, malloc_in_use or
 * nil, heap_memsize] (the sidecars' figures and #_heap_memsize).
 */
static VALUE heap_s_process_judge(VALUE self, VALUE samples)
{
	hd_process_sample smp[16];
	hd_process_verdict v;
	hd_error err = { 0 };
	long n, k;
	int rc;

	(void)self;
	Check_Type(samples, T_ARRAY);
	n = RARRAY_LEN(samples);
	if (n < 2 || n > 16)
		rb_raise(rb_eArgError, "2 to 16 samples, not %ld", n);
	memset(smp, 0, sizeof(smp));
	for (k = 0; k < n; k++) {
		VALUE e = rb_ary_entry(samples, k), x;

		Check_Type(e, T_ARRAY);
		if (!NIL_P(x = rb_ary_entry(e, 0))) {
			smp[k].has_rss = 1;
			smp[k].rss = NUM2ULL(x);
		}
		if (!NIL_P(x = rb_ary_entry(e, 1))) {
			smp[k].has_malloc = 1;
			smp[k].malloc_in_use = NUM2ULL(x);
		}
		smp[k].heap_memsize = NUM2ULL(rb_ary_entry(e, 2));
	}
	if ((rc = hd_process_judge(&v, smp, (size_t)n, NULL, &err)))
		hdx_raise(rc, &err);
	if (!v.known)
		return Qnil;
	return rb_ary_new_from_args(
		5, LL2NUM(v.rss_growth),
		v.has_malloc ? LL2NUM(v.malloc_growth) : Qnil,
		LL2NUM(v.heap_growth), v.outside_ruby ? Qtrue : Qfalse,
		rb_str_new_cstr(v.text));
}

/*
 * Heap._memory_split(figures) -> [{key => bytes or nil}, overcount] or
 * nil without an RSS: hd_memory_split_get over figures, [rss, anon,
 * malloc_in_use, malloc_free, heap_bytes, live_slot_bytes, stacks, jit,
 * objects_memsize], each an Integer or nil (not in the sidecar).
 */
static VALUE heap_s_memory_split(VALUE self, VALUE figs)
{
	static const unsigned bit[] = {
		HD_MEM_HAS_RSS, HD_MEM_HAS_SPLIT, HD_MEM_HAS_MALLOC,
		HD_MEM_HAS_MALLOC_FREE, HD_MEM_HAS_SLOTS, HD_MEM_HAS_SLOTS,
		HD_MEM_HAS_STACKS, HD_MEM_HAS_JIT, HD_MEM_HAS_MEMSIZE
	};
	hd_memory_sample m;
	hd_memory_split sp;
	uint64_t *at[9];
	VALUE h;
	long k;
	int b;

	(void)self;
	Check_Type(figs, T_ARRAY);
	memset(&m, 0, sizeof(m));
	at[0] = &m.rss, at[1] = &m.anon, at[2] = &m.malloc_in_use;
	at[3] = &m.malloc_free, at[4] = &m.heap_bytes;
	at[5] = &m.live_slot_bytes, at[6] = &m.stacks, at[7] = &m.jit;
	at[8] = &m.objects_memsize;
	for (k = 0; k < 9; k++) {
		VALUE x = rb_ary_entry(figs, k);

		if (NIL_P(x))
			continue;
		*at[k] = NUM2ULL(x);
		m.has |= bit[k];
	}
	hd_memory_split_get(&sp, &m);
	if (!sp.known)
		return Qnil;
	h = rb_hash_new();
	for (b = 0; b < HD_MEM_NBUCKETS; b++)
		rb_hash_aset(h, ID2SYM(rb_intern(hd_memory_bucket_key((hd_memory_bucket)b))),
			     sp.measured & (1u << b) ? ULL2NUM(sp.bytes[b]) : Qnil);
	return rb_ary_new_from_args(2, h, ULL2NUM(sp.overcount));
}

/* #_top(k) -> the ids of the k largest retained sizes (hd_domtree_top) */
static VALUE heap_top(VALUE self, VALUE vk, VALUE weak)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_domtree *d = hdx_heap_dom(h, RTEST(weak));
	long k = NUM2LONG(vk);
	hd_node_id *ids;
	size_t n = 0, i;
	hd_error err = { 0 };
	int rc;
	VALUE r;

	if (k < 0)
		rb_raise(rb_eArgError, "negative count");
	if ((unsigned long)k > hd_store_node_count(h->s))
		k = (long)hd_store_node_count(h->s);
	ids = ALLOC_N(hd_node_id, k ? (size_t)k : 1);
	if ((rc = hd_domtree_top(ids, &n, d, (size_t)k, &err))) {
		xfree(ids);
		hdx_raise(rc, &err);
	}
	r = rb_ary_new_capa((long)n);
	for (i = 0; i < n; i++)
		rb_ary_push(r, UINT2NUM(ids[i]));
	xfree(ids);
	return r;
}

/* #_top_classes -> [[class, objects, shallow, retained_count,
 * retained_memsize]], hd_domtree_classes' order */
static VALUE heap_top_classes(VALUE self, VALUE weak)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_domtree *d = hdx_heap_dom(h, RTEST(weak));
	hd_class_retained *rows = NULL;
	size_t n = 0, i;
	hd_error err = { 0 };
	int rc;
	VALUE r;

	if ((rc = hd_domtree_classes(&rows, &n, d, &err)))
		hdx_raise(rc, &err);
	r = rb_ary_new_capa((long)n);
	for (i = 0; i < n; i++)
		rb_ary_push(r, rb_ary_new_from_args(
				       5, rb_utf8_str_new_cstr(rows[i].name),
				       ULL2NUM(rows[i].objects),
				       ULL2NUM(rows[i].shallow),
				       ULL2NUM(rows[i].retained_count),
				       ULL2NUM(rows[i].retained_memsize)));
	hd_class_retained_free(rows);
	return r;
}

/* #_idom(id) -> id, :root (only the roots dominate it) or nil */
static VALUE heap_idom(VALUE self, VALUE id)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_node_id v = hd_domtree_idom(hdx_heap_dom(h, 0), hdx_node_arg(h, id));

	if (v == HD_DOM_ROOT)
		return ID2SYM(rb_intern("root"));
	return v == HD_NODE_NONE ? Qnil : UINT2NUM(v);
}

/* #_roots -> [[category, [ids]]] */
static VALUE heap_roots(VALUE self)
{
	struct hdx_heap *h = hdx_heap_get(self);
	uint32_t i, n = hd_store_root_count(h->s);
	hd_edge_iter it;
	VALUE r = rb_ary_new_capa(n);

	for (i = 0; i < n; i++) {
		hd_store_root_refs(h->s, i, &it);
		rb_ary_push(r, rb_ary_new_from_args(
				       2, rb_str_new_cstr(hd_store_root_name(h->s, i)),
				       edge_ids(&it)));
	}
	return r;
}

void hdx_init_heap(VALUE mod)
{
	hdx_cHeap = rb_define_class_under(mod, "Heap", rb_cObject);
	rb_undef_alloc_func(hdx_cHeap);
	rb_define_singleton_method(hdx_cHeap, "_build", heap_s_build, 2);
	rb_define_singleton_method(hdx_cHeap, "_open", heap_s_open, 1);
	rb_define_singleton_method(hdx_cHeap, "_store?", heap_s_is_store, 1);
	rb_define_singleton_method(hdx_cHeap, "_open_cached",
				   heap_s_open_cached, 2);
	rb_define_singleton_method(hdx_cHeap, "_cache_path",
				   heap_s_cache_path, 1);
	rb_define_method(hdx_cHeap, "_write", heap_write, 1);
	rb_define_method(hdx_cHeap, "_check_source", heap_check_source, 1);
	rb_define_method(hdx_cHeap, "close", heap_close, 0);
	rb_define_method(hdx_cHeap, "closed?", heap_closed_p, 0);
	rb_define_method(hdx_cHeap, "_info", heap_info, 0);
	rb_define_method(hdx_cHeap, "size", heap_size, 0);
	rb_define_method(hdx_cHeap, "_find", heap_find, 1);
	rb_define_method(hdx_cHeap, "_address", heap_address, 1);
	rb_define_method(hdx_cHeap, "_type", heap_type_of, 1);
	rb_define_method(hdx_cHeap, "_memsize", heap_memsize, 1);
	rb_define_method(hdx_cHeap, "_generation", heap_generation, 1);
	rb_define_method(hdx_cHeap, "_length", heap_length, 1);
	rb_define_method(hdx_cHeap, "_frozen", heap_frozen, 1);
	rb_define_method(hdx_cHeap, "_class_name", heap_class_name, 1);
	rb_define_method(hdx_cHeap, "_node_name", heap_node_name, 1);
	rb_define_method(hdx_cHeap, "_aux", heap_aux, 1);
	rb_define_method(hdx_cHeap, "_site", heap_site, 1);
	rb_define_method(hdx_cHeap, "_refs", heap_refs, 1);
	rb_define_method(hdx_cHeap, "_referrers", heap_referrers, 1);
	rb_define_method(hdx_cHeap, "_ref_names", heap_ref_names, 1);
	rb_define_method(hdx_cHeap, "_hop_text", heap_hop_text, 2);
	rb_define_method(hdx_cHeap, "_path_runs", heap_path_runs, 1);
	rb_define_method(hdx_cHeap, "_dumper?", heap_is_dumper, 1);
	rb_define_method(hdx_cHeap, "_stats", heap_stats, 4);
	rb_define_method(hdx_cHeap, "_dom_ready?", heap_dom_ready, 1);
	rb_define_method(hdx_cHeap, "_retained", heap_retained, 2);
	rb_define_method(hdx_cHeap, "_reached", heap_reached, 0);
	rb_define_method(hdx_cHeap, "_top", heap_top, 2);
	rb_define_method(hdx_cHeap, "_heap_memsize", heap_heap_memsize, 0);
	rb_define_singleton_method(hdx_cHeap, "_process_judge",
				   heap_s_process_judge, 1);
	rb_define_singleton_method(hdx_cHeap, "_memory_split",
				   heap_s_memory_split, 1);
	rb_define_method(hdx_cHeap, "_top_classes", heap_top_classes, 1);
	rb_define_method(hdx_cHeap, "_idom", heap_idom, 1);
	rb_define_method(hdx_cHeap, "_roots", heap_roots, 0);
}
