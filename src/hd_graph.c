/*
 * hd_graph.c - HeapDump::Heap's graph queries, each one call into
 * libheapdump: a retention path (hd_reach_path), roots-of and
 * subgraph-of (hd_roots_of, hd_subgraph_of), the dominator chain
 * (hd_domtree_chain), diff (hd_diff), the leak model (hd_leaks_build)
 * and the border of a set of new objects (hd_interface_with,
 * hd_interface_rank). Results become plain Ruby values (Arrays, Hashes,
 * NodeSets); lib/heapdump/heap.rb dresses them.
 */
#include "hd_heap.h"

#include <stdlib.h>
#include <string.h>

static VALUE sym(const char *name)
{
	return ID2SYM(rb_intern(name));
}

#define SET(hash, key, v) rb_hash_aset(hash, sym(key), v)
#define SET_U64(hash, key, v) SET(hash, key, ULL2NUM(v))

static VALUE ids_ary(const hd_node_id *ids, size_t n)
{
	VALUE r = rb_ary_new_capa((long)n);
	size_t i;

	for (i = 0; i < n; i++)
		rb_ary_push(r, UINT2NUM(ids[i]));
	return r;
}

VALUE hdx_path_value(const hd_store *s, const hd_root_path *p)
{
	const char *rn = NULL;
	size_t nl = 0;
	VALUE root = Qnil;
	char note[256];
	size_t k = hd_path_note(note, sizeof(note), p);

	if (p->root != UINT32_MAX) {
		root = rb_str_new_cstr(hd_store_root_name(s, p->root));
		if (p->n)
			rn = hd_store_root_ref_name(s, p->root, p->nodes[0], &nl);
	}
	return rb_ary_new_from_args(4, root, hdx_str(rn, nl),
				    ids_ary(p->nodes, p->n),
				    k ? hdx_str(note, k < sizeof(note) ? k :
						sizeof(note) - 1) : Qnil);
}

/* What hd_reach_path or hd_domtree_chain gave (rc) as a Ruby value
 * ([root, root_name, ids, note]):
 * nil when there is no such path, else hdx_path_value; p is freed. */
static VALUE path_or_nil(struct hdx_heap *h, hd_root_path *p, int rc,
			 hd_error *err)
{
	VALUE out;

	if (rc == HD_ENOTFOUND)
		return Qnil;
	if (rc) {
		hd_root_path_free(p);
		hdx_raise(rc, err);
	}
	out = hdx_path_value(h->s, p);
	hd_root_path_free(p);
	return out;
}

/* #_path(id, skip_weak) -> [root, root_name, [ids]] or nil (no root
 * reaches it): the path `heapdump path [--skip-weak]` prints */
static VALUE heap_path(VALUE self, VALUE id, VALUE weak)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_node_id v = hdx_node_arg(h, id);
	const hd_reach *r = hdx_heap_reach(h, RTEST(weak));
	hd_root_path p = { 0 };
	hd_error err = { 0 };
	int rc = hd_reach_path(&p, r, v, &err);

	return path_or_nil(h, &p, rc, &err);
}

/* #_dominators(id, skip_weak) -> [root or nil, root_name, [ids]] or nil:
 * the chain `heapdump dominators [--skip-weak]` prints */
static VALUE heap_dominators(VALUE self, VALUE id, VALUE weak)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_node_id v = hdx_node_arg(h, id);
	hd_domtree *d = hdx_heap_dom(h, RTEST(weak));
	hd_root_path p = { 0 };
	hd_error err = { 0 };
	int rc = hd_domtree_chain(&p, d, v, &err);

	return path_or_nil(h, &p, rc, &err);
}

/* #_roots_of(nodeset, all_ancestors, skip_weak) -> [kept NodeSet,
 * unreached NodeSet] (hd_reach_roots_of on the heap's search) */
static VALUE heap_roots_of(VALUE self, VALUE targets, VALUE all, VALUE weak)
{
	struct hdx_heap *h = hdx_heap_get(self);
	struct hdx_nodeset *t = hdx_nodeset_get(targets);
	const hd_reach *r = hdx_heap_reach(h, RTEST(weak));
	hd_nodes kept = { 0 }, unreached = { 0 };
	hd_error err = { 0 };
	int rc;
	VALUE a;

	rc = hd_reach_roots_of(&kept, &unreached, r, &t->set,
			       RTEST(all) ? HD_ROOTS_ALL_ANCESTORS : 0, &err);
	if (rc) {
		hd_nodes_free(&kept);
		hd_nodes_free(&unreached);
		hdx_raise(rc, &err);
	}
	a = hdx_nodeset_wrap(self, &kept);
	return rb_ary_new_from_args(2, a, hdx_nodeset_wrap(self, &unreached));
}

/* #_subgraph_of(nodeset, max_depth) -> NodeSet */
static VALUE heap_subgraph_of(VALUE self, VALUE from, VALUE depth)
{
	struct hdx_heap *h = hdx_heap_get(self);
	struct hdx_nodeset *f = hdx_nodeset_get(from);
	hd_nodes out = { 0 };
	hd_error err = { 0 };
	int rc = hd_subgraph_of(&out, h->s, &f->set, NUM2UINT(depth), &err);

	if (rc) {
		hd_nodes_free(&out);
		hdx_raise(rc, &err);
	}
	return hdx_nodeset_wrap(self, &out);
}

/* ---- diff and leaks ---- */

struct diff_run {
	hd_diff_result *own;     /* #_diff's own diff */
	hd_leak_session *ls;     /* #_leaks: the hunt, as heapdump leaks */
	const hd_diff_result *d; /* own, or the session's */
	const hd_leaks *l;       /* the session's */
	VALUE heaps[3];
	struct hdx_heap *h[3];
	int top;
	double min_share;
	VALUE growing; /* [[node id, type, [lengths]]...] or Qnil */
	VALUE budgets;            /* an Array of budget Strings, or nil */
	hd_budget *b;             /* parsed from it in leaks_hash */
	hd_budget_report *br;
};

static void nodes_copy(hd_nodes *out, const hd_nodes *in)
{
	out->n = out->cap = 0;
	out->ids = NULL;
	if (!in->n)
		return;
	if (!(out->ids = malloc(in->n * sizeof(hd_node_id))))
		rb_raise(rb_eNoMemError, "out of memory");
	memcpy(out->ids, in->ids, in->n * sizeof(hd_node_id));
	out->n = out->cap = in->n;
}

static VALUE set_value(VALUE heap, const hd_nodes *in)
{
	hd_nodes c;

	nodes_copy(&c, in);
	return hdx_nodeset_wrap(heap, &c);
}

static VALUE diff_hash(VALUE arg)
{
	struct diff_run *run = (struct diff_run *)arg;
	const hd_diff_result *d = run->d;
	VALUE r = rb_hash_new(), v;
	int k;

	SET(r, "traced", d->traced ? Qtrue : Qfalse);
	SET(r, "has_later", d->has_later ? Qtrue : Qfalse);
	SET_U64(r, "generation", d->generation);
	v = rb_ary_new();
	if (d->rules & HD_DIFF_RULE_OBJECT_ID)
		rb_ary_push(v, rb_str_new_cstr("object_id"));
	if (d->rules & HD_DIFF_RULE_GENERATION)
		rb_ary_push(v, rb_str_new_cstr("generation"));
	if (d->rules & HD_DIFF_RULE_ADDRESS)
		rb_ary_push(v, rb_str_new_cstr("address+fingerprint"));
	SET(r, "rules", v);
	SET(r, "objects", rb_ary_new_from_args(3, ULL2NUM(d->objects[0]),
					       ULL2NUM(d->objects[1]),
					       ULL2NUM(d->objects[2])));
	SET(r, "added", set_value(run->heaps[1], &d->added));
	SET_U64(r, "added_memsize", d->added_memsize);
	SET(r, "retained", set_value(run->heaps[1], &d->retained));
	SET_U64(r, "retained_memsize", d->retained_memsize);
	SET_U64(r, "uncertain", d->uncertain);
	SET_U64(r, "retained_uncertain", d->retained_uncertain);
	SET_U64(r, "retained_moved", d->retained_moved);
	SET(r, "object_id_skipped", d->object_id_skipped ? Qtrue : Qfalse);
	SET(r, "memsize_saturated", d->memsize_saturated ? Qtrue : Qfalse);
	if (d->has_later) {
		SET(r, "retained_later",
		    set_value(run->heaps[2], &d->retained_later));
		SET_U64(r, "retained_later_memsize", d->retained_later_memsize);
	}
	v = rb_hash_new();
	for (k = 1; k < HD_MATCH__COUNT; k++)
		if (hd_match_name(k))
			rb_hash_aset(v, rb_str_new_cstr(hd_match_name(k)),
				     ULL2NUM(d->by_match[k]));
	SET(r, "verdicts", v);
	return r;
}

/* A frame of an allocation stack as hd_frame_json writes it: frame,
 * then file, line, method, class, label when the dump gave them */
static VALUE frame_value(const hd_store *s, uint32_t id)
{
	VALUE r = rb_hash_new();
	hd_frame fr;

	SET(r, "frame", UINT2NUM(id));
	if (hd_store_frame(&fr, s, id))
		return r;
	if (fr.file)
		SET(r, "file", rb_utf8_str_new(fr.file, (long)fr.file_len));
	if (fr.line)
		SET_U64(r, "line", fr.line);
	if (fr.method)
		SET(r, "method", rb_utf8_str_new(fr.method, (long)fr.method_len));
	if (fr.class_name)
		SET(r, "class",
		    rb_utf8_str_new(fr.class_name, (long)fr.class_len));
	if (fr.label)
		SET(r, "label", rb_utf8_str_new(fr.label, (long)fr.label_len));
	return r;
}

static VALUE count_memsize(uint64_t count, uint64_t memsize)
{
	VALUE r = rb_hash_new();

	SET_U64(r, "count", count);
	SET_U64(r, "memsize", memsize);
	return r;
}

/* What a suspect keeps alive by allocation stack, as
 * hd_stack_rows_json's object (heapdump-json(5), a suspect's "stacks")
 * with every row; frames shared by rows are one Hash */
static VALUE stacks_value(const hd_store *s, const hd_stack_rows *r)
{
	VALUE h = rb_hash_new(), rows = rb_ary_new_capa((long)r->nrows);
	VALUE frames = rb_hash_new();
	size_t i, k, n;

	SET(h, "by", rb_str_new_cstr(r->by == HD_STACKS_BY_FRAME ? "frame" :
								  "stack"));
	SET(h, "with_stack", count_memsize(r->with, r->with_memsize));
	SET(h, "without_stack", count_memsize(r->without, r->without_memsize));
	SET(h, "groups", SIZET2NUM(r->nrows));
	for (i = 0; i < r->nrows; i++) {
		const hd_stack_row *row = &r->rows[i];
		VALUE x = rb_hash_new(), fa, fv, key;

		if (r->by == HD_STACKS_BY_FRAME) {
			SET_U64(x, "count", row->count);
			SET_U64(x, "memsize", row->memsize);
			SET(x, "frame", frame_value(s, row->id));
			rb_ary_push(rows, x);
			continue;
		}
		SET(x, "stack", UINT2NUM(row->id));
		SET_U64(x, "count", row->count);
		SET_U64(x, "memsize", row->memsize);
		n = hd_store_stack_frames(s, row->id, &(const uint32_t *){ NULL });
		fa = rb_ary_new_capa((long)n);
		for (k = 0; k < n; k++) {
			uint32_t id = hd_store_stack_frame(s, row->id, k);

			key = UINT2NUM(id);
			if (NIL_P(fv = rb_hash_lookup(frames, key))) {
				fv = rb_obj_freeze(frame_value(s, id));
				rb_hash_aset(frames, key, fv);
			}
			rb_ary_push(fa, fv);
		}
		SET(x, "frames", fa);
		rb_ary_push(rows, x);
	}
	SET(h, "rows", rows);
	return h;
}

/* A suspect in heapdump-json(5)'s names (hd_leaks_suspect_json_fields):
 * node ids for the nodes, sets of ids for holders (empty for a root)
 * and the border */
static VALUE suspect_hash(VALUE heap, const hd_store *s,
			  const hd_leaks_suspect *x)
{
	static const hd_nodes none = { NULL, 0, 0 };
	VALUE r = rb_hash_new();

	SET(r, "holder", x->holder == HD_NODE_NONE ? Qnil : UINT2NUM(x->holder));
	SET(r, "kind", rb_str_new_cstr(hd_suspect_kind_name(x->kind)));
	SET(r, "holder_count", UINT2NUM(x->holders));
	SET(r, "root_count", UINT2NUM(x->roots));
	SET(r, "transient", x->flags & HD_SUSPECT_TRANSIENT ? Qtrue : Qfalse);
	SET(r, "churn", x->flags & HD_SUSPECT_CHURN ? Qtrue : Qfalse);
	SET(r, "ephemeron", x->flags & HD_SUSPECT_EPHEMERON ? Qtrue : Qfalse);
	SET(r, "holders",
	    set_value(heap, x->holder_list ? x->holder_list : &none));
	SET(r, "first_border", UINT2NUM(x->first));
	SET_U64(r, "border_count", x->border_count);
	SET_U64(r, "retained_count", x->retained_count);
	SET_U64(r, "retained_memsize", x->retained_memsize);
	SET(r, "share", DBL2NUM(x->share));
	SET_U64(r, "keepalive_count", x->keepalive_count);
	SET_U64(r, "keepalive_memsize", x->keepalive_memsize);
	SET(r, "path", x->path ? hdx_path_value(s, x->path) : Qnil);
	SET(r, "border", x->border ? set_value(heap, x->border) : Qnil);
	SET(r, "stacks", x->stacks ? stacks_value(s, x->stacks) : Qnil);
	return r;
}

/* The session's caveats: [{"name", "warning", "text"}], as leaks -f
 * json writes them */
static VALUE caveats_value(const hd_leak_session *ls)
{
	unsigned int c = hd_leak_session_caveats(ls), bit;
	VALUE a = rb_ary_new(), h;
	char buf[1024];
	size_t n;

	for (bit = 1; bit && bit <= c; bit <<= 1) {
		if (!(c & bit))
			continue;
		n = hd_leak_session_caveat_text(buf, sizeof(buf), ls, bit);
		h = rb_hash_new();
		SET(h, "name", rb_str_new_cstr(hd_caveat_name(bit)));
		SET(h, "warning", hd_caveat_is_warning(bit) ? Qtrue : Qfalse);
		SET(h, "text", rb_utf8_str_new(buf, (long)(n < sizeof(buf) ?
								 n :
								 sizeof(buf) - 1)));
		rb_ary_push(a, h);
	}
	return a;
}

/* The budgets of run (hd_budget_*: parsed, then evaluated against the
 * leak model), each a Hash: text, exceeded, value, limit, over, message.
 * Whatever is allocated here diff_free frees, raise or not. */
static VALUE budgets_value(struct diff_run *run, const hd_store *s)
{
	hd_error err = { 0 };
	const hd_budget_result *x;
	VALUE out = rb_ary_new();
	long i;
	size_t k;
	int rc;

	Check_Type(run->budgets, T_ARRAY);
	if ((rc = hd_budget_new(&run->b, &err)))
		hdx_raise(rc, &err);
	for (i = 0; i < RARRAY_LEN(run->budgets); i++) {
		VALUE e = rb_ary_entry(run->budgets, i);

		StringValue(e);
		if ((rc = hd_budget_add(run->b, RSTRING_PTR(e),
					(size_t)RSTRING_LEN(e), &err)))
			hdx_raise(rc, &err);
	}
	if ((rc = hd_budget_eval_leaks(&run->br, run->b, run->l, s, run->d,
				       &err)))
		hdx_raise(rc, &err);
	for (k = 0; (x = hd_budget_report_get(run->br, k)); k++) {
		VALUE h = rb_hash_new();

		SET(h, "text", rb_utf8_str_new_cstr(x->text));
		SET(h, "exceeded", x->exceeded ? Qtrue : Qfalse);
		SET(h, "value", DBL2NUM(x->value));
		SET(h, "limit", DBL2NUM(x->limit));
		SET(h, "over", DBL2NUM(x->over));
		SET(h, "message", rb_utf8_str_new_cstr(x->message));
		rb_ary_push(out, h);
	}
	return out;
}

/* The leak in the one schema (hd_leak_session_write_json,
 * heapdump-json(5)) as a String, for Leaks#as_json; nil when out of
 * memory */
static VALUE leak_json(const hd_leak_session *ls)
{
	hd_leak_json_options jo = HD_LEAK_JSON_OPTIONS_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	VALUE v = Qnil;

	if (!m)
		return Qnil;
	jo.flags = 0; /* no deprecated names in new data */
	hd_leak_session_write_json(m, ls, NULL, &jo);
	if (fclose(m) == 0 && buf)
		v = rb_utf8_str_new(buf, (long)len);
	free(buf);
	return v;
}

static VALUE leaks_hash(VALUE arg)
{
	struct diff_run *run = (struct diff_run *)arg;
	int at = run->d->has_later ? 2 : 1;
	const hd_store *s = run->h[at]->s;
	hd_leaks_totals t;
	const hd_leaks_cluster *c;
	VALUE r = diff_hash(arg), sus = rb_ary_new(), cl = rb_ary_new(), v;
	size_t i, k;

	hd_leaks_totals_get(&t, run->l);
	SET_U64(r, "leak_count", t.leak_count);
	SET_U64(r, "leak_memsize", t.leak_memsize);
	SET_U64(r, "border", t.border);
	SET(r, "groups", SIZET2NUM(t.groups));
	SET(r, "shown", SIZET2NUM(t.shown));
	SET(r, "more", SIZET2NUM(t.more));
	SET(r, "folded", SIZET2NUM(t.folded));
	SET_U64(r, "folded_count", t.folded_count);
	SET_U64(r, "folded_memsize", t.folded_memsize);
	SET(r, "saturated", t.saturated ? Qtrue : Qfalse);
	{
		char buf[1024];
		size_t n = hd_leaks_verdict_text(buf, sizeof(buf), run->l);
		hd_process_verdict outside;

		memset(&outside, 0, sizeof(outside));
		outside.known = outside.outside_ruby = 1;

		SET(r, "verdict", rb_utf8_str_new(buf, (long)(n < sizeof(buf) ?
								 n :
								 sizeof(buf) - 1)));
		/* the same beside a process that grew outside Ruby objects
		 * (Leaks#verdict picks it when Leaks#process says so) */
		n = hd_leaks_verdict_text_process(buf, sizeof(buf), run->l,
						  &outside);
		SET(r, "verdict_outside",
		    rb_utf8_str_new(buf, (long)(n < sizeof(buf) ?
							n :
							sizeof(buf) - 1)));
	}
	SET(r, "significant", t.significant ? Qtrue : Qfalse);
	SET(r, "first_kind", t.first_kind == HD_LEAKS_FIRST_CLUSTER ?
				     rb_str_new_cstr("cluster") :
			     t.first_kind == HD_LEAKS_FIRST_SUSPECT ?
				     rb_str_new_cstr("suspect") :
			     t.first_kind == HD_LEAKS_FIRST_INPLACE ?
				     rb_str_new_cstr("in_place") :
				     Qnil);
	SET(r, "first_index", SIZET2NUM(t.first_index));
	SET_U64(r, "young_count", t.young_count);
	SET_U64(r, "vm_memsize", t.vm_memsize);
	SET_U64(r, "unreached_memsize", t.unreached_memsize);
	SET(r, "joint", SIZET2NUM(t.joint));
	SET(r, "heap", run->heaps[at]);
	for (i = 0; i < t.groups; i++)
		rb_ary_push(sus, suspect_hash(run->heaps[at], s,
					      hd_leaks_suspect_get(run->l, i)));
	SET(r, "suspects", sus);
	for (i = 0; (c = hd_leaks_cluster_get(run->l, i)); i++) {
		VALUE h = rb_hash_new();

		v = rb_ary_new_capa((long)c->suspects);
		for (k = 0; k < c->suspects; k++)
			rb_ary_push(v, SIZET2NUM(c->ranks[k]));
		SET(h, "ranks", v);
		SET_U64(h, "border_count", c->border_count);
		SET_U64(h, "retained_count", c->retained_count);
		SET_U64(h, "retained_memsize", c->retained_memsize);
		SET(h, "share", DBL2NUM(c->share));
		SET(h, "reached", c->reached ? Qtrue : Qfalse);
		SET(h, "shape", c->shape ? rb_utf8_str_new_cstr(c->shape) : Qnil);
		SET(h, "path", c->path ? hdx_path_value(s, c->path) : Qnil);
		rb_ary_push(cl, h);
	}
	SET(r, "clusters", cl);
	SET(r, "growing", RTEST(run->growing) ? run->growing : rb_ary_new());
	SET(r, "caveats", caveats_value(run->ls));
	SET(r, "json", leak_json(run->ls));
	if (!NIL_P(run->budgets))
		SET(r, "budgets", budgets_value(run, s));
	return r;
}

static VALUE diff_free(VALUE arg)
{
	struct diff_run *run = (struct diff_run *)arg;

	hd_leak_session_free(run->ls);
	hd_diff_result_free(run->own);
	hd_budget_report_free(run->br);
	hd_budget_free(run->b);
	return Qnil;
}

static void run_init(struct diff_run *run, VALUE self, VALUE after,
		     VALUE later)
{
	memset(run, 0, sizeof(*run));
	run->heaps[0] = self;
	run->heaps[1] = after;
	run->heaps[2] = later;
	run->h[0] = hdx_heap_get(self);
	run->h[1] = hdx_heap_get(after);
	run->h[2] = NIL_P(later) ? NULL : hdx_heap_get(later);
}

static void diff_open(struct diff_run *run, VALUE self, VALUE after,
		      VALUE later)
{
	hd_diff_options o = HD_DIFF_OPTIONS_INIT;
	hd_error err = { 0 };
	int rc;

	run_init(run, self, after, later);
	if ((rc = hd_diff(&run->own, run->h[0]->s, run->h[1]->s,
			  run->h[2] ? run->h[2]->s : NULL, &o, &err)))
		hdx_raise(rc, &err);
	run->d = run->own;
}

/* #_diff(after, later_or_nil) -> Hash (hd_diff: self is BEFORE) */
static VALUE heap_diff(VALUE self, VALUE after, VALUE later)
{
	struct diff_run run;

	diff_open(&run, self, after, later);
	return rb_ensure(diff_hash, (VALUE)&run, diff_free, (VALUE)&run);
}

/* [[node id, "Hash" or "Array", [length per dump]]...], ranked */
static VALUE growing_value(const hd_growth *g)
{
	VALUE r = rb_ary_new(), lens;
	const hd_growing *x;
	size_t i, k, n = hd_growth_dumps(g);

	for (i = 0; (x = hd_growth_get(g, i)); i++) {
		lens = rb_ary_new_capa((long)n);
		for (k = 0; k < n; k++)
			rb_ary_push(lens, ULL2NUM(x->lengths[k]));
		rb_ary_push(r, rb_ary_new_from_args(
				       3, ULONG2NUM(x->id),
				       rb_str_new_cstr(x->type == HD_T_HASH ?
							       "Hash" :
						       x->type == HD_T_ARRAY ?
							       "Array" :
							       "Set"),
				       lens));
	}
	return r;
}

/* #_leaks(after, later_or_nil, steps, top, min_share, skip_weak, budgets,
 * origins) -> (origins: nil, or Heap#origin of every heap in order)
 * Hash: the leak session of heapdump leaks over BEFORE, AFTER, STEPS...,
 * LATER (hd_leak_session: the diff, the leak model on LATER, else
 * AFTER, the growth over every heap, the caveats); steps are the heaps
 * between AFTER and LATER (at most 13); the order was checked (and
 * raised) by the caller; with budgets (an Array of expressions, or nil)
 * their results (hd_budget_eval_leaks) */
static VALUE heap_leaks(VALUE self, VALUE after, VALUE later, VALUE steps,
			VALUE top, VALUE min_share, VALUE weak, VALUE budgets,
			VALUE origins)
{
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;
	struct diff_run run;
	hd_store *ss[HD_LEAK_SESSION_MAX_DUMPS];
	hd_dump_origin org[HD_LEAK_SESSION_MAX_DUMPS];
	hd_error err = { 0 };
	size_t n = 0;
	long i;
	int rc;

	Check_Type(steps, T_ARRAY);
	if (RARRAY_LEN(steps) > 13)
		rb_raise(rb_eArgError, "at most 16 heaps (%ld given)",
			 RARRAY_LEN(steps) + 3);
	if (RARRAY_LEN(steps) && NIL_P(later))
		rb_raise(rb_eArgError, "steps without a later heap");
	o.top = NUM2SIZET(top);
	o.min_share = NUM2DBL(min_share);
	o.leaks_flags = RTEST(weak) ? HD_ROOTS_SKIP_WEAK : 0;
	if (o.top < 1)
		rb_raise(rb_eArgError, "top must be at least 1");
	run_init(&run, self, after, later);
	ss[n++] = run.h[0]->s;
	ss[n++] = run.h[1]->s;
	for (i = 0; i < RARRAY_LEN(steps); i++)
		ss[n++] = hdx_heap_get(rb_ary_entry(steps, i))->s;
	if (run.h[2])
		ss[n++] = run.h[2]->s;
	/* the sidecars' pid, time and compactions, as the commands read
	 * them (Heap#origin): the same caveats */
	if (!NIL_P(origins)) {
		Check_Type(origins, T_ARRAY);
		if ((size_t)RARRAY_LEN(origins) != n)
			rb_raise(rb_eArgError, "one origin per heap");
		for (i = 0; i < (long)n; i++) {
			const char *t;

			hdx_origin_get(rb_ary_entry(origins, i), &org[i], &t);
		}
		o.origins = org;
	}
	if ((rc = hd_leak_session_new(&run.ls, ss, n, &o, &err)))
		hdx_raise(rc, &err);
	if ((rc = hd_leak_session_run(run.ls, &err))) {
		hd_leak_session_free(run.ls);
		hdx_raise(rc, &err);
	}
	run.d = hd_leak_session_diff(run.ls);
	run.l = hd_leak_session_leaks(run.ls);
	if (hd_leak_session_growth(run.ls))
		run.growing = growing_value(hd_leak_session_growth(run.ls));
	run.budgets = budgets;
	return rb_ensure(leaks_hash, (VALUE)&run, diff_free, (VALUE)&run);
}

/* ---- interface ---- */

struct iface_run {
	hd_interface *x;
	hd_interface_ranking *rk;
	struct hdx_heap *h;
	VALUE heap;
};

static VALUE iface_hash(VALUE arg)
{
	struct iface_run *run = (struct iface_run *)arg;
	hd_interface_totals t;
	const hd_border *b;
	const hd_border_holder *hh;
	VALUE r = rb_hash_new(), border = rb_ary_new(), selfb = rb_ary_new();
	VALUE e, held;
	size_t i;
	unsigned k;

	hd_interface_totals_get(&t, run->x);
	SET_U64(r, "diff", t.diff);
	SET_U64(r, "diff_memsize", t.diff_memsize);
	SET_U64(r, "self_border", t.self_border);
	SET_U64(r, "diff_border", t.diff_border);
	SET_U64(r, "reached", t.reached);
	SET_U64(r, "reached_memsize", t.reached_memsize);
	SET_U64(r, "components", t.components);
	SET(r, "memsize_saturated", t.memsize_saturated ? Qtrue : Qfalse);
	for (i = 0; (b = hd_interface_ranking_border(run->rk, i)); i++) {
		e = rb_hash_new();
		SET(e, "id", UINT2NUM(b->id));
		SET_U64(e, "keepalive_count", b->keepalive_count);
		SET_U64(e, "keepalive_memsize", b->keepalive_memsize);
		SET_U64(e, "retained_count", b->retained_count);
		SET_U64(e, "retained_memsize", b->retained_memsize);
		SET(e, "holders", UINT2NUM(b->holders));
		SET(e, "roots", UINT2NUM(b->roots));
		held = rb_ary_new();
		for (k = 0; k < HD_BORDER_HOLDERS; k++)
			if (b->holder[k] != HD_NODE_NONE)
				rb_ary_push(held, UINT2NUM(b->holder[k]));
		SET(e, "held_by", held);
		rb_ary_push(border, e);
	}
	SET(r, "border", border);
	for (i = 0; (hh = hd_interface_ranking_holder(run->rk, i)); i++) {
		e = rb_hash_new();
		SET(e, "id", UINT2NUM(hh->id));
		SET_U64(e, "held", hh->held);
		SET_U64(e, "keepalive", hh->keepalive);
		rb_ary_push(selfb, e);
	}
	SET(r, "holders", selfb);
	return r;
}

static VALUE iface_free(VALUE arg)
{
	struct iface_run *run = (struct iface_run *)arg;

	hd_interface_ranking_free(run->rk);
	hd_interface_free(run->x);
	return Qnil;
}

/* #_interface_with(nodeset) -> Hash: the border of the new objects,
 * ranked as interface-with reports it */
static VALUE heap_interface_with(VALUE self, VALUE diff)
{
	struct iface_run run = { NULL, NULL, hdx_heap_get(self), self };
	struct hdx_nodeset *n = hdx_nodeset_get(diff);
	hd_error err = { 0 };
	int rc;

	if (n->heap != self)
		rb_raise(rb_eArgError, "a selection of another heap");
	if ((rc = hd_interface_with(&run.x, run.h->s, &n->set, &err)))
		hdx_raise(rc, &err);
	if ((rc = hd_interface_rank(&run.rk, run.x, run.h->s, &err))) {
		hd_interface_free(run.x);
		hdx_raise(rc, &err);
	}
	return rb_ensure(iface_hash, (VALUE)&run, iface_free, (VALUE)&run);
}

/* hd_flame_write's bytes, in a malloc'ed buffer */
struct flame_buf {
	char *p;
	size_t n, cap;
};

static int flame_put(const void *buf, size_t n, void *payload)
{
	struct flame_buf *b = payload;

	if (n > b->cap - b->n) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap - b->n < n)
			cap *= 2;
		if (!(p = realloc(b->p, cap)))
			return 1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, buf, n);
	b->n += n;
	return 0;
}

static VALUE flame_str(VALUE arg)
{
	const struct flame_buf *b = (const struct flame_buf *)arg;

	return rb_utf8_str_new(b->p ? b->p : "", (long)b->n);
}

static VALUE flame_buf_free(VALUE arg)
{
	free(((struct flame_buf *)arg)->p);
	return Qnil;
}

/* #_flame(by, metric, skip_weak) -> String: `heapdump flame -f folded
 * --by BY --metric METRIC [--skip-weak]` (hd_flame_build on the heap's
 * dominator tree, hd_flame_write folded); by and metric are
 * HD_FLAME_BY_ and HD_FLAME_COUNT... values, checked by heap.rb */
static VALUE heap_flame(VALUE self, VALUE by, VALUE metric, VALUE weak)
{
	struct hdx_heap *h = hdx_heap_get(self);
	hd_flame_options fo = HD_FLAME_OPTIONS_INIT;
	struct flame_buf b = { NULL, 0, 0 };
	hd_flame *f = NULL;
	hd_error err = { 0 };
	int rc;

	fo.by = NUM2INT(by);
	fo.metric = NUM2INT(metric);
	fo.flags = RTEST(weak) ? HD_ROOTS_SKIP_WEAK : 0;
	if (fo.by == HD_FLAME_BY_PATH || fo.metric == HD_FLAME_RETAINED)
		fo.domtree = hdx_heap_dom(h, RTEST(weak));
	if (fo.by == HD_FLAME_BY_STACK && hd_store_stack_count(h->s)) {
		fo.stack = hd_store_flame_stack;
		fo.stack_ctx = (void *)h->s;
	}
	if ((rc = hd_flame_build(&f, h->s, NULL, &fo, &err)))
		hdx_raise(rc, &err);
	rc = hd_flame_write(f, HD_FLAME_FOLDED, "heap", fo.metric, flame_put,
			    &b, &err);
	hd_flame_free(f);
	if (rc) {
		free(b.p);
		hdx_raise(rc > 0 ? HD_ENOMEM : rc, rc > 0 ? NULL : &err);
	}
	return rb_ensure(flame_str, (VALUE)&b, flame_buf_free, (VALUE)&b);
}

void hdx_init_graph(VALUE mod)
{
	rb_define_method(hdx_cHeap, "_path", heap_path, 2);
	rb_define_method(hdx_cHeap, "_dominators", heap_dominators, 2);
	rb_define_method(hdx_cHeap, "_roots_of", heap_roots_of, 3);
	rb_define_method(hdx_cHeap, "_subgraph_of", heap_subgraph_of, 2);
	rb_define_method(hdx_cHeap, "_diff", heap_diff, 2);
	rb_define_method(hdx_cHeap, "_leaks", heap_leaks, 8);
	rb_define_method(hdx_cHeap, "_interface_with", heap_interface_with, 1);
	rb_define_method(hdx_cHeap, "_flame", heap_flame, 3);
}
