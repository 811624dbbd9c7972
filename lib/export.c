/*
 * export.c - a part of the heap as a graph for other tools: GML (Gephi,
 * networkx, igraph) and Graphviz DOT. hd_export_new() picks the nodes
 * (a set, grown along references, with the internals folded away when
 * asked); the writers then stream nodes and edges through a sink. Edges
 * are computed while writing, never stored: the references of each node,
 * followed through folded nodes with an explicit stack. With reference
 * names, each edge is labelled with the names on its way (through
 * folded objects, the last 16), each found by its reference's index.
 * What concerns the whole store (the folded objects, the root
 * categories' edges) is an hd_export_base, made once per graph by
 * hd_export_new, or kept by the caller for many (hd_export_new_from):
 * such a graph keeps its per-node scratch in a hash of what it touched.
 * Drawing (Graphviz) is the CLI's business, not the library's.
 */
#include "hd_int.h"

#include <stdio.h>

/*
 * What hd_export_new computes over the whole store, once for every graph
 * drawn from it (hd_export_base): the folded objects, and the kept
 * objects each root category holds (directly or through folded objects)
 * with the labels of those edges, in the order of the walk. Read only
 * once built: graphs made from one base on several threads share it.
 */
struct hd_export_base {
	const hd_store *s;
	unsigned flags;
	uint32_t nnodes, nroots;
	unsigned char *folded;  /* bitmap over store nodes (collapse) */
	size_t *rstart;         /* root category i: rout[rstart[i]..[i+1]) */
	hd_node_id *rout;
	size_t nrout, rout_cap;
	size_t *rlab;           /* each edge's label: offset in labels */
	uint32_t *rlen;         /* its length, 0: none */
	unsigned char *rinf;    /* 1 when one of its names was inferred */
	size_t rlab_cap, rlen_cap, rinf_cap;
	char *labels;
	size_t nlabels, labels_cap;
};

/* The scratch of one walk of a graph made from a base: a hash of the
 * store nodes it touched (open addressing, id HD_NODE_NONE: empty), so
 * that a small graph costs what it touches, not the store's size. */
struct xslot {
	hd_node_id id;
	uint32_t local, stamp;
	hd_node_id pred;
	uint32_t predk;
};

struct hd_export {
	const hd_store *s;
	const struct hd_export_base *b;
	struct hd_export_base *own_base; /* hd_export_new's own */
	unsigned flags;
	uint32_t nnodes;        /* store nodes */
	uint32_t nroots;        /* store root categories */
	const unsigned char *folded; /* the base's (NULL: nothing folded) */
	/* per store node, dense (x->slot NULL) or in x->slot: */
	uint32_t *local;        /* store node -> graph id, or HD_NODE_NONE */
	uint32_t *stamp;        /* walk number last seen */
	struct xslot *slot;
	size_t slot_cap, nslot;
	hd_node_id *nodes;      /* emitted objects, ascending */
	size_t nemit, nodes_cap;
	uint32_t *root_local;   /* root category -> graph id, or NONE */
	uint32_t nroot_emit;
	uint32_t walk;
	int edges_only;         /* walks find only the graph's objects */
	hd_node_id *stack;      /* folded nodes to expand */
	size_t stack_cap;
	hd_node_id *out;        /* kept nodes found, deduplicated */
	size_t nout, out_cap;
	/* with reference names: per store node, how the walk reached it
	 * (the node it was reached from, HD_NODE_NONE for the walk's first
	 * references, and the reference's index there) */
	int names;
	hd_node_id *pred;
	uint32_t *predk;
	/* the origin of the walk whose edges are labelled: an object, or
	 * (origin HD_NODE_NONE) root category cat; UINT32_MAX: none */
	hd_node_id origin;
	uint32_t cat;
	char name[1024];
	char label[1024];       /* an edge's label */
};

/* ---- the per-node scratch: dense arrays or the hash ---- */

static size_t slot_hash(hd_node_id id, size_t cap)
{
	return (size_t)((id * 2654435761u) & (cap - 1));
}

/* id's slot, or NULL when the graph never touched it */
static struct xslot *slot_find(const struct hd_export *x, hd_node_id id)
{
	size_t h = slot_hash(id, x->slot_cap);

	while (x->slot[h].id != HD_NODE_NONE) {
		if (x->slot[h].id == id)
			return &x->slot[h];
		h = (h + 1) & (x->slot_cap - 1);
	}
	return NULL;
}

static void slot_put(struct xslot *t, size_t cap, const struct xslot *v)
{
	size_t h = slot_hash(v->id, cap);

	while (t[h].id != HD_NODE_NONE)
		h = (h + 1) & (cap - 1);
	t[h] = *v;
}

/* id's slot, made (local NONE, stamp 0) when new; NULL: out of memory */
static struct xslot *slot_get(struct hd_export *x, hd_node_id id)
{
	struct xslot *p = slot_find(x, id), v, *t;
	size_t i, cap;

	if (p)
		return p;
	if (2 * (x->nslot + 1) > x->slot_cap) {
		cap = x->slot_cap * 2;
		if (!(t = hd__array_alloc(cap, sizeof(*t))))
			return NULL;
		for (i = 0; i < cap; i++)
			t[i].id = HD_NODE_NONE;
		for (i = 0; i < x->slot_cap; i++)
			if (x->slot[i].id != HD_NODE_NONE)
				slot_put(t, cap, &x->slot[i]);
		hd__free(x->slot, x->slot_cap * sizeof(*x->slot));
		x->slot = t;
		x->slot_cap = cap;
	}
	v.id = id;
	v.local = HD_NODE_NONE;
	v.stamp = 0;
	v.pred = HD_NODE_NONE;
	v.predk = 0;
	slot_put(x->slot, x->slot_cap, &v);
	x->nslot++;
	return slot_find(x, id);
}

static uint32_t get_local(const struct hd_export *x, hd_node_id id)
{
	const struct xslot *p;

	if (!x->slot)
		return x->local[id];
	return (p = slot_find(x, id)) ? p->local : HD_NODE_NONE;
}

static int set_local(struct hd_export *x, hd_node_id id, uint32_t v)
{
	struct xslot *p;

	if (!x->slot) {
		x->local[id] = v;
		return 0;
	}
	if (!(p = slot_get(x, id)))
		return HD_ENOMEM;
	p->local = v;
	return 0;
}

static hd_node_id get_pred(const struct hd_export *x, hd_node_id id,
			   uint32_t *k)
{
	const struct xslot *p;

	if (!x->slot) {
		*k = x->predk[id];
		return x->pred[id];
	}
	p = slot_find(x, id);
	*k = p ? p->predk : 0;
	return p ? p->pred : HD_NODE_NONE;
}

/* Is id folded (x->folded is NULL when nothing is)? */
static int folded(const struct hd_export *x, uint32_t id)
{
	return x->folded && hd__bit(x->folded, id);
}

static int aux_is(const hd_store *s, hd_node_id id, const char *want)
{
	size_t len;
	const char *a = hd_store_aux(s, id, &len);

	return a && len == strlen(want) && memcmp(a, want, len) == 0;
}

static int class_is(const hd_store *s, hd_node_id id, const char *want)
{
	hd_node_id c = hd_store_class(s, id);

	return c != HD_NODE_NONE && aux_is(s, c, want);
}

/*
 * What --collapse folds: every IMEMO; ARRAY and HASH objects without a
 * class (hidden); the HASH an instance of Set holds (set.rb's @hash);
 * the environments of blocks of Ruby before 2.3 (DATA of class
 * RubyVM::Env or struct VM/env). Arrays and hashes with a class stay.
 */
static int mark_folded(struct hd_export_base *b)
{
	const hd_store *s = b->s;
	hd_edge_iter it;
	hd_node_id i, t;

	b->folded = hd__calloc((size_t)b->nnodes / 8 + 1, 1);
	if (!b->folded)
		return HD_ENOMEM;
	for (i = 0; i < b->nnodes; i++) {
		int type = hd_store_type(s, i);

		if (type == HD_T_IMEMO ||
		    ((type == HD_T_ARRAY || type == HD_T_HASH) &&
		     hd_store_class_address(s, i) == 0) ||
		    (type == HD_T_DATA && (aux_is(s, i, "VM/env") ||
					   class_is(s, i, "RubyVM::Env"))))
			hd__bit_set(b->folded, i);
		if (type == HD_T_OBJECT && class_is(s, i, "Set")) {
			hd_store_refs(s, i, &it);
			while (hd_edge_iter_next(&it, &t) == 0)
				if (hd_store_type(s, t) == HD_T_HASH)
					hd__bit_set(b->folded, t);
		}
	}
	return 0;
}

/* The name of the k-th reference of the walk's origin (x->origin or root
 * category x->cat), or NULL: O(1) or O(log) either way. */
static const char *origin_name(const struct hd_export *x, uint32_t k,
			       size_t *len, unsigned *flags)
{
	if (flags)
		*flags = 0;
	if (x->origin != HD_NODE_NONE)
		return hd_store_ref_name_at(x->s, x->origin, k, len, flags);
	if (x->cat != UINT32_MAX)
		return hd__store_root_name_at(x->s, x->cat, k, len);
	return NULL;
}

/* Visits t once per walk: a kept node is an edge target, a folded one is
 * expanded later. from and k: the node it is reached from (HD_NODE_NONE
 * for the walk's first references) and the index of the reference there,
 * kept when the store has reference names; of several references of the
 * origin to one object, the first that has a name. */
static int visit(struct hd_export *x, hd_node_id t, size_t *sp,
		 hd_node_id from, uint32_t k)
{
	uint32_t *stamp, *predk;
	hd_node_id *pred;
	struct xslot *p = NULL;

	if (t >= x->nnodes)
		return 0;
	/* writing edges: a kept object outside the graph is no target
	 * (and an object of a million references costs no more than a
	 * look-up each) */
	if (x->edges_only && !folded(x, t) &&
	    get_local(x, t) == HD_NODE_NONE)
		return 0;
	if (x->slot) {
		if (!(p = slot_get(x, t)))
			return HD_ENOMEM;
		stamp = &p->stamp;
		pred = &p->pred;
		predk = &p->predk;
	} else {
		stamp = &x->stamp[t];
		pred = x->names ? &x->pred[t] : NULL;
		predk = x->names ? &x->predk[t] : NULL;
	}
	if (*stamp == x->walk) {
		if (x->names && from == HD_NODE_NONE &&
		    *pred == HD_NODE_NONE &&
		    !origin_name(x, *predk, NULL, NULL) &&
		    origin_name(x, k, NULL, NULL))
			*predk = k;
		return 0;
	}
	*stamp = x->walk;
	if (x->names) {
		*pred = from;
		*predk = k;
	}
	if (!folded(x, t))
		return hd__push_u32(&x->out, &x->nout, &x->out_cap, t);
	if (*sp == x->stack_cap &&
	    hd__grow((void **)&x->stack, &x->stack_cap, *sp + 1,
		     sizeof(*x->stack)))
		return HD_ENOMEM;
	x->stack[(*sp)++] = t;
	return 0;
}

/*
 * The targets of the references in *first, each once, with every folded
 * node replaced by the kept nodes it leads to through folded nodes only
 * (depth-first, iterative; each node is seen once per walk, so cycles of
 * folded nodes end). Result in x->out[0..nout).
 */
static int walk(struct hd_export *x, hd_edge_iter *first)
{
	hd_edge_iter it;
	hd_node_id t, f;
	size_t sp = 0, i;
	uint32_t k = 0;

	x->nout = 0;
	if (++x->walk == 0) { /* wrapped: forget every stamp */
		if (x->slot)
			for (i = 0; i < x->slot_cap; i++)
				x->slot[i].stamp = 0;
		else
			memset(x->stamp, 0,
			       (size_t)x->nnodes * sizeof(*x->stamp));
		x->walk = 1;
	}
	while (hd_edge_iter_next(first, &t) == 0)
		if (visit(x, t, &sp, HD_NODE_NONE, k++))
			return HD_ENOMEM;
	while (sp) {
		f = x->stack[--sp];
		hd_store_refs(x->s, f, &it);
		for (k = 0; hd_edge_iter_next(&it, &t) == 0; k++)
			if (visit(x, t, &sp, f, k))
				return HD_ENOMEM;
	}
	return 0;
}

/* Adds id to the graph's objects (numbered later, in ascending order)
 * unless it is folded or there already. */
static int include(struct hd_export *x, hd_node_id id)
{
	if (get_local(x, id) != HD_NODE_NONE || folded(x, id))
		return 0;
	if (set_local(x, id, 0))
		return HD_ENOMEM;
	return hd__push_u32(&x->nodes, &x->nemit, &x->nodes_cap, id);
}

static int cmp_id(const void *a, const void *b)
{
	hd_node_id p = *(const hd_node_id *)a, q = *(const hd_node_id *)b;

	return p < q ? -1 : p > q;
}

/* The selected kept nodes, then breadth-first depth levels along the
 * (collapsed) references, into x->nodes, numbered in ascending order. */
static int pick_nodes(struct hd_export *x, const hd_nodes *set,
		      uint32_t depth)
{
	size_t lo = 0, hi, k, i;
	uint32_t level;
	hd_edge_iter it;

	if (!set) {
		for (i = 0; i < x->nnodes; i++)
			if (include(x, (hd_node_id)i))
				return HD_ENOMEM;
		depth = 0;
	} else {
		for (k = 0; k < set->n; k++)
			if (set->ids[k] < x->nnodes &&
			    include(x, set->ids[k]))
				return HD_ENOMEM;
	}
	for (level = 0; level < depth && lo < x->nemit; level++) {
		for (hi = x->nemit; lo < hi; lo++) {
			hd_store_refs(x->s, x->nodes[lo], &it);
			if (walk(x, &it))
				return HD_ENOMEM;
			for (k = 0; k < x->nout; k++)
				if (include(x, x->out[k]))
					return HD_ENOMEM;
		}
	}
	for (i = 1; i < x->nemit && x->nodes[i - 1] < x->nodes[i]; i++)
		;
	if (i < x->nemit)
		qsort(x->nodes, x->nemit, sizeof(*x->nodes), cmp_id);
	for (i = 0; i < x->nemit; i++)
		if (set_local(x, x->nodes[i], (uint32_t)i))
			return HD_ENOMEM;
	return 0;
}

static const char *edge_label(struct hd_export *x, hd_node_id t, size_t *len,
			      int *inferred);

/* The dense scratch of a walk over the whole store (a base's, or a
 * graph's without one): 0 or HD_ENOMEM. */
static int dense_scratch(struct hd_export *x)
{
	x->stamp = hd__calloc((size_t)x->nnodes + 1, sizeof(*x->stamp));
	if (!x->stamp)
		return HD_ENOMEM;
	if ((x->names = hd_store_has_ref_names(x->s)) &&
	    (!(x->pred = hd__array_alloc((size_t)x->nnodes + 1,
					 sizeof(*x->pred))) ||
	     !(x->predk = hd__array_alloc((size_t)x->nnodes + 1,
					  sizeof(*x->predk)))))
		return HD_ENOMEM;
	return 0;
}

/* The edges of root category i, from the walk just made (x->cat i),
 * into b. */
static int base_edges(struct hd_export_base *b, struct hd_export *x)
{
	size_t k, n, need;
	const char *label;
	int inferred;

	for (k = 0; k < x->nout; k++) {
		need = b->nrout + 1;
		if (hd__grow((void **)&b->rout, &b->rout_cap, need,
			     sizeof(*b->rout)) ||
		    hd__grow((void **)&b->rlab, &b->rlab_cap, need,
			     sizeof(*b->rlab)) ||
		    hd__grow((void **)&b->rlen, &b->rlen_cap, need,
			     sizeof(*b->rlen)) ||
		    hd__grow((void **)&b->rinf, &b->rinf_cap, need,
			     sizeof(*b->rinf)))
			return HD_ENOMEM;
		label = edge_label(x, x->out[k], &n, &inferred);
		b->rout[b->nrout] = x->out[k];
		b->rlab[b->nrout] = b->nlabels;
		b->rlen[b->nrout] = label ? (uint32_t)n : 0;
		b->rinf[b->nrout] = (unsigned char)inferred;
		if (label && n) {
			if (hd__grow((void **)&b->labels, &b->labels_cap,
				     b->nlabels + n, 1))
				return HD_ENOMEM;
			memcpy(b->labels + b->nlabels, label, n);
			b->nlabels += n;
		}
		b->nrout++;
	}
	return 0;
}

static void scratch_free(struct hd_export *x)
{
	hd__free(x->stamp, ((size_t)x->nnodes + 1) * sizeof(*x->stamp));
	hd__free(x->pred, x->pred ? ((size_t)x->nnodes + 1) *
					    sizeof(*x->pred) : 0);
	hd__free(x->predk, x->predk ? ((size_t)x->nnodes + 1) *
					      sizeof(*x->predk) : 0);
	hd__free(x->stack, x->stack_cap * sizeof(*x->stack));
	hd__free(x->out, x->out_cap * sizeof(*x->out));
}

int hd_export_base_new(hd_export_base **out, const hd_store *s,
		       unsigned flags, hd_error *err)
{
	struct hd_export_base *b;
	struct hd_export *x;
	hd_edge_iter it;
	uint32_t i;
	int rc = HD_ENOMEM;

	HD_ASSERT_ARG(out && s);
	*out = NULL;
	if (!(b = hd__calloc(1, sizeof(*b))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (!(x = hd__calloc(1, sizeof(*x)))) {
		hd__free(b, sizeof(*b));
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	b->s = s;
	b->flags = flags;
	b->nnodes = hd_store_node_count(s);
	b->nroots = hd_store_root_count(s);
	if (!(b->rstart = hd__array_alloc((size_t)b->nroots + 1,
					  sizeof(*b->rstart))) ||
	    ((flags & HD_EXPORT_COLLAPSE) && mark_folded(b)))
		goto out;
	x->s = s;
	x->b = b;
	x->nnodes = b->nnodes;
	x->folded = b->folded;
	x->origin = HD_NODE_NONE;
	if (dense_scratch(x))
		goto out;
	for (i = 0; i < b->nroots; i++) {
		b->rstart[i] = b->nrout;
		hd_store_root_refs(s, i, &it);
		x->cat = i;
		if (walk(x, &it) || base_edges(b, x))
			goto out;
	}
	b->rstart[b->nroots] = b->nrout;
	rc = 0;
out:
	scratch_free(x);
	hd__free(x, sizeof(*x));
	if (rc) {
		hd_export_base_free(b);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	*out = b;
	return 0;
}

void hd_export_base_free(hd_export_base *b)
{
	if (!b)
		return;
	hd__free(b->folded, b->folded ? (size_t)b->nnodes / 8 + 1 : 0);
	hd__free(b->rstart, b->rstart ? ((size_t)b->nroots + 1) *
						sizeof(*b->rstart) : 0);
	hd__free(b->rout, b->rout_cap * sizeof(*b->rout));
	hd__free(b->rlab, b->rlab_cap * sizeof(*b->rlab));
	hd__free(b->rlen, b->rlen_cap * sizeof(*b->rlen));
	hd__free(b->rinf, b->rinf_cap * sizeof(*b->rinf));
	hd__free(b->labels, b->labels_cap);
	hd__free(b, sizeof(*b));
}

static int export_make(hd_export **out, const hd_export_base *b,
		       hd_export_base *own, const hd_nodes *set,
		       const hd_export_options *opts, hd_error *err)
{
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	struct hd_export *x;
	uint32_t i;
	size_t k;
	uint64_t total;

	*out = NULL;
	if (opts)
		o = *opts;
	if (o.version != HD_EXPORT_OPTIONS_VERSION) {
		hd_export_base_free(own);
		return hd__error(err, HD_EINVAL,
				 "unknown export options version %u", o.version);
	}
	if ((o.flags & HD_EXPORT_COLLAPSE) != (b->flags & HD_EXPORT_COLLAPSE)) {
		hd_export_base_free(own);
		return hd__error(err, HD_EINVAL, "the export base was made "
				 "with other flags than the graph's");
	}
	if (!(x = hd__calloc(1, sizeof(*x)))) {
		hd_export_base_free(own);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	x->s = b->s;
	x->b = b;
	x->own_base = own;
	x->flags = o.flags;
	x->origin = HD_NODE_NONE;
	x->cat = UINT32_MAX;
	x->nnodes = b->nnodes;
	x->nroots = b->nroots;
	x->folded = b->folded;
	if (!(x->root_local = hd__array_alloc((size_t)x->nroots + 1,
					      sizeof(*x->root_local))))
		goto nomem;
	if (own || !set) {
		/* the whole store, or a graph of its own: dense */
		x->local = hd__array_alloc((size_t)x->nnodes + 1,
					   sizeof(*x->local));
		if (!x->local || dense_scratch(x))
			goto nomem;
		memset(x->local, 0xff, (size_t)x->nnodes * sizeof(*x->local));
	} else {
		x->names = hd_store_has_ref_names(x->s);
		x->slot_cap = 1024;
		if (!(x->slot = hd__array_alloc(x->slot_cap, sizeof(*x->slot))))
			goto nomem;
		for (k = 0; k < x->slot_cap; k++)
			x->slot[k].id = HD_NODE_NONE;
	}
	if (pick_nodes(x, set, o.depth))
		goto nomem;
	/* a root category is a node when it holds an emitted object */
	for (i = 0; i < x->nroots; i++) {
		x->root_local[i] = HD_NODE_NONE;
		for (k = b->rstart[i]; k < b->rstart[i + 1]; k++)
			if (get_local(x, b->rout[k]) != HD_NODE_NONE) {
				x->root_local[i] = (uint32_t)x->nemit +
						   x->nroot_emit++;
				break;
			}
	}
	total = (uint64_t)x->nemit + x->nroot_emit;
	if (o.max_nodes && total > o.max_nodes) {
		hd__error(err, HD_ELIMIT,
			  "the graph has %llu nodes, more than the limit of %llu",
			  (unsigned long long)total,
			  (unsigned long long)o.max_nodes);
		hd_export_free(x);
		return HD_ELIMIT;
	}
	*out = x;
	return 0;
nomem:
	hd_export_free(x);
	return hd__error(err, HD_ENOMEM, "out of memory");
}

int hd_export_new(hd_export **out, const hd_store *s, const hd_nodes *set,
		  const hd_export_options *opts, hd_error *err)
{
	hd_export_base *b;
	int rc;

	HD_ASSERT_ARG(out && s);
	*out = NULL;
	if (opts && opts->version != HD_EXPORT_OPTIONS_VERSION)
		return hd__error(err, HD_EINVAL,
				 "unknown export options version %u",
				 opts->version);
	if ((rc = hd_export_base_new(&b, s, opts ? opts->flags : 0, err)))
		return rc;
	return export_make(out, b, b, set, opts, err);
}

int hd_export_new_from(hd_export **out, const hd_export_base *b,
		       const hd_nodes *set, const hd_export_options *opts,
		       hd_error *err)
{
	HD_ASSERT_ARG(out && b);
	return export_make(out, b, NULL, set, opts, err);
}

uint64_t hd_export_node_count(const hd_export *x)
{
	return x ? (uint64_t)x->nemit + x->nroot_emit : 0;
}

uint64_t hd_export_object_count(const hd_export *x)
{
	return x ? x->nemit : 0;
}

int hd_export_folded(const hd_export *x, hd_node_id id)
{
	return x && id < x->nnodes && folded(x, id);
}

void hd_export_free(hd_export *x)
{
	if (!x)
		return;
	hd__free(x->local, x->local ? ((size_t)x->nnodes + 1) *
					      sizeof(*x->local) : 0);
	hd__free(x->slot, x->slot_cap * sizeof(*x->slot));
	hd__free(x->root_local, x->root_local ? ((size_t)x->nroots + 1) *
						sizeof(*x->root_local) : 0);
	hd__free(x->nodes, x->nodes_cap * sizeof(*x->nodes));
	scratch_free(x);
	hd_export_base_free(x->own_base);
	hd__free(x, sizeof(*x));
}

/* ---- writing ---- */

/* A small output buffer in front of the sink. */
struct wbuf {
	hd_write_cb w;
	void *payload;
	int rc;
	size_t n;
	char b[8192];
};

static void flush(struct wbuf *o)
{
	if (o->n && !o->rc)
		o->rc = o->w(o->b, o->n, o->payload);
	o->n = 0;
}

static void put(struct wbuf *o, const char *p, size_t n)
{
	while (n && !o->rc) {
		size_t k = sizeof(o->b) - o->n;

		if (k > n)
			k = n;
		memcpy(o->b + o->n, p, k);
		o->n += k;
		p += k;
		n -= k;
		if (o->n == sizeof(o->b))
			flush(o);
	}
}

static void puts_(struct wbuf *o, const char *s)
{
	put(o, s, strlen(s));
}

static void HD_PRINTF(2, 3) printf_(struct wbuf *o, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/*
 * Decodes one UTF-8 character at p (n bytes left): returns its length
 * and code point, or 0 for an invalid or overlong sequence.
 */
static size_t utf8(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t c;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	c = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return len;
}

/*
 * A GML string, quoted: ASCII only, as GML and networkx want. '"' is
 * &quot;, '&' &amp;, a character outside printable ASCII &#N; (N its
 * code point when the bytes are UTF-8, else the byte's ISO-8859-1 code).
 * Backslashes are plain characters in GML.
 */
static void gml_body(struct wbuf *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		size_t run = i;

		while (run < n && p[run] >= 0x20 && p[run] < 0x7f &&
		       p[run] != '"' && p[run] != '&')
			run++;
		put(o, s + i, run - i);
		if ((i = run) == n)
			break;
		if (p[i] == '"')
			puts_(o, "&quot;"), i++;
		else if (p[i] == '&')
			puts_(o, "&amp;"), i++;
		else if (p[i] >= 0x80 && (k = utf8(p + i, n - i, &cp)))
			printf_(o, "&#%lu;", (unsigned long)cp), i += k;
		else
			printf_(o, "&#%u;", (unsigned)p[i]), i++;
	}
}

static void gml_str(struct wbuf *o, const char *s, size_t n)
{
	put(o, "\"", 1);
	gml_body(o, s, n);
	put(o, "\"", 1);
}

/*
 * A DOT string, quoted. '"' and '\' are escaped with a backslash (so no
 * \N, \G, \l escapes can sneak in), a newline is \n (a line break),
 * other control characters are '?' (with visible, the text \xNN, and a
 * newline too: an edge label shows the name as it is); '&' is &amp; (Graphviz expands
 * entities in labels); UTF-8 passes through and other bytes are &#N;
 * (their ISO-8859-1 character), so the file is always valid UTF-8.
 */
static void dot_body(struct wbuf *o, const char *s, size_t n, int visible)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		size_t run = i;

		while (run < n && p[run] >= 0x20 && p[run] < 0x7f &&
		       p[run] != '"' && p[run] != '\\' && p[run] != '&')
			run++;
		put(o, s + i, run - i);
		if ((i = run) == n)
			break;
		if (p[i] == '"' || p[i] == '\\') {
			put(o, "\\", 1);
			put(o, s + i, 1);
			i++;
		} else if (p[i] == '&') {
			puts_(o, "&amp;"), i++;
		} else if (visible && (p[i] < 0x20 || p[i] == 0x7f)) {
			printf_(o, "\\\\x%02x", (unsigned)p[i]), i++;
		} else if (p[i] == '\n') {
			puts_(o, "\\n"), i++;
		} else if (p[i] < 0x80) {
			put(o, "?", 1), i++;
		} else if ((k = utf8(p + i, n - i, &cp))) {
			put(o, s + i, k), i += k;
		} else {
			printf_(o, "&#%u;", (unsigned)p[i]), i++;
		}
	}
}

/* The class name (class_name) or the name (node_name) of id, in x->name. */
static const char *node_str(struct hd_export *x, hd_node_id id, int own,
			    size_t *len)
{
	size_t n = own ? hd_store_node_name(x->name, sizeof(x->name), x->s, id) :
			 hd_store_class_name(x->name, sizeof(x->name), x->s, id);

	*len = n < sizeof(x->name) ? n : sizeof(x->name) - 1;
	return x->name;
}

static int gml_node(struct hd_export *x, struct wbuf *o, uint32_t gid,
		     hd_node_id id)
{
	const hd_store *s = x->s;
	char addr[24];
	size_t len;
	const char *str;
	uint64_t g = hd_store_generation(s, id);
	hd_site site;

	snprintf(addr, sizeof(addr), "0x%llx",
		 (unsigned long long)hd_store_address(s, id));
	/* name and address: unique, as networkx wants its labels */
	str = node_str(x, id, 1, &len);
	printf_(o, "  node [ id %lu label \"", (unsigned long)gid);
	gml_body(o, str, len);
	printf_(o, " %s\" name ", addr);
	gml_str(o, str, len);
	printf_(o, " address \"%s\" class ", addr);
	str = node_str(x, id, 0, &len);
	gml_str(o, str, len);
	printf_(o, " type \"%s\" memsize %llu", hd_type_name(hd_store_type(s, id)),
		(unsigned long long)hd_store_memsize(s, id));
	if (g != UINT64_MAX)
		printf_(o, " generation %llu", (unsigned long long)g);
	if (hd_store_site(&site, s, id) == 0) {
		if (site.file) {
			puts_(o, " file ");
			gml_str(o, site.file, site.file_len); /* raw bytes */
		}
		if (site.line)
			printf_(o, " line %llu", (unsigned long long)site.line);
		if (site.method) {
			puts_(o, " method ");
			gml_str(o, site.method, site.method_len);
		}
	}
	puts_(o, " ]\n");
	return 0;
}

/* The most hops of a path through folded objects an edge label names. */
#define LABEL_HOPS 16

/* Appends name (n bytes) to the label, after a space when it is not the
 * first; *len is the label's length so far. */
static void label_add(struct hd_export *x, size_t *len, const char *name,
		      size_t n)
{
	size_t room = sizeof(x->label) - 1 - *len;

	if (*len && room) {
		x->label[(*len)++] = ' ';
		room--;
	}
	if (n > room)
		n = room;
	memcpy(x->label + *len, name, n);
	*len += n;
	x->label[*len] = '\0';
}

/*
 * The label of the edge to t just found by walk() from x->origin (or
 * root category x->cat): the names of the references on the way, through
 * the folded objects between, joined by spaces ("@hash [key]"), NULL when
 * none has a name. *inferred is 1 when one of them was inferred
 * (HD_NAME_INFERRED). O(hops), each name found in O(log references).
 */
static const char *edge_label(struct hd_export *x, hd_node_id t, size_t *len,
			      int *inferred)
{
	hd_node_id from[LABEL_HOPS], c = t, p;
	uint32_t k[LABEL_HOPS], pk;
	size_t nh = 0, n;
	const char *name;
	unsigned flags;

	*len = 0;
	*inferred = 0;
	x->label[0] = '\0';
	if (!x->names)
		return NULL;
	/* the hops inside the folded part, last first */
	while ((p = get_pred(x, c, &pk)) != HD_NODE_NONE && nh < LABEL_HOPS) {
		from[nh] = p;
		k[nh++] = pk;
		c = p;
	}
	if (p != HD_NODE_NONE) {
		label_add(x, len, "...", 3); /* a longer way: its end */
	} else {
		/* the first hop, from the origin to c */
		n = 0;
		name = origin_name(x, pk, &n, &flags);
		if (name) {
			label_add(x, len, name, n);
			*inferred |= (flags & HD_NAME_INFERRED) != 0;
		}
	}
	while (nh--) {
		flags = 0;
		n = 0;
		name = hd_store_ref_name_at(x->s, from[nh], k[nh], &n, &flags);
		if (name) {
			label_add(x, len, name, n);
			*inferred |= (flags & HD_NAME_INFERRED) != 0;
		}
	}
	return *len ? x->label : NULL;
}

/* Calls edge(from, to, label) for every edge between emitted nodes: the
 * objects' (collapsed) references, then the root categories'. The label
 * (edge_label) is NULL when the edge has no name. */
static int for_edges(struct hd_export *x, struct wbuf *o,
		     void (*edge)(struct wbuf *, uint32_t, uint32_t,
				  const char *, size_t, int))
{
	const struct hd_export_base *b = x->b;
	hd_edge_iter it;
	size_t i, k, n;
	uint32_t to;
	const char *label;
	int inferred;

	x->edges_only = 1;
	for (i = 0; i < x->nemit && !o->rc; i++) {
		hd_store_refs(x->s, x->nodes[i], &it);
		x->origin = x->nodes[i];
		if (walk(x, &it)) {
			x->edges_only = 0;
			return HD_ENOMEM;
		}
		for (k = 0; k < x->nout; k++)
			if ((to = get_local(x, x->out[k])) != HD_NODE_NONE) {
				label = edge_label(x, x->out[k], &n,
						   &inferred);
				edge(o, (uint32_t)i, to, label, n, inferred);
			}
	}
	/* the root categories' edges: the base's, with their labels */
	for (i = 0; i < x->nroots && !o->rc; i++) {
		if (x->root_local[i] == HD_NODE_NONE)
			continue;
		for (k = b->rstart[i]; k < b->rstart[i + 1]; k++)
			if ((to = get_local(x, b->rout[k])) != HD_NODE_NONE)
				edge(o, x->root_local[i], to,
				     b->rlen[k] ? b->labels + b->rlab[k] : NULL,
				     b->rlen[k], b->rinf[k]);
	}
	x->edges_only = 0;
	x->origin = HD_NODE_NONE;
	x->cat = UINT32_MAX;
	return 0;
}

/* An edge; with a name, its label attribute (and inferred 1 when it was
 * inferred). */
static void gml_edge(struct wbuf *o, uint32_t a, uint32_t b,
		     const char *label, size_t n, int inferred)
{
	printf_(o, "  edge [ source %lu target %lu", (unsigned long)a,
		(unsigned long)b);
	if (label) {
		puts_(o, " label ");
		gml_str(o, label, n);
		if (inferred)
			puts_(o, " inferred 1");
	}
	puts_(o, " ]\n");
}

static int finish(struct wbuf *o, int rc, hd_error *err)
{
	if (rc)
		return hd__error(err, HD_ENOMEM, "out of memory");
	flush(o);
	if (o->rc)
		hd__error(err, o->rc < 0 ? o->rc : HD_ERROR,
			  "the output was refused");
	return o->rc;
}

int hd_export_write_gml(hd_export *x, hd_write_cb w, void *payload,
			hd_error *err)
{
	struct wbuf *o;
	uint32_t i;
	int rc;

	HD_ASSERT_ARG(x && w);
	if (!(o = hd__calloc(1, sizeof(*o))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	o->w = w;
	o->payload = payload;
	x->origin = HD_NODE_NONE;
	x->cat = UINT32_MAX;
	puts_(o, "graph [\n  directed 1\n");
	for (i = 0, rc = 0; i < x->nemit && !o->rc && !rc; i++)
		rc = gml_node(x, o, i, x->nodes[i]);
	for (i = 0; i < x->nroots && !o->rc; i++) {
		const char *name = hd_store_root_name(x->s, i);

		if (x->root_local[i] == HD_NODE_NONE)
			continue;
		printf_(o, "  node [ id %lu label \"ROOT ",
			(unsigned long)x->root_local[i]);
		gml_body(o, name, strlen(name));
		puts_(o, "\" type \"ROOT\" root ");
		gml_str(o, name, strlen(name));
		puts_(o, " ]\n");
	}
	if (!rc)
		rc = for_edges(x, o, gml_edge);
	if (!rc)
		puts_(o, "]\n");
	rc = finish(o, rc, err);
	hd__free(o, sizeof(*o));
	return rc;
}

/* ---- DOT ---- */

/*
 * The fill colour of each type (ColorBrewer Set3 and Pastel1, documented
 * in man 1 heapdump-to-dot): one colour per family of types.
 */
static const char *type_colour(int type)
{
	switch (type) {
	case HD_T_OBJECT: return "#8dd3c7";
	case HD_T_CLASS:
	case HD_T_MODULE:
	case HD_T_ICLASS: return "#ffed6f";
	case HD_T_STRING: return "#fb8072";
	case HD_T_SYMBOL: return "#fccde5";
	case HD_T_ARRAY: return "#80b1d3";
	case HD_T_HASH: return "#bebada";
	case HD_T_STRUCT: return "#fdb462";
	case HD_T_DATA: return "#b3de69";
	case HD_T_IMEMO:
	case HD_T_NODE: return "#d9d9d9";
	case HD_T_FLOAT:
	case HD_T_BIGNUM:
	case HD_T_RATIONAL:
	case HD_T_COMPLEX: return "#ffffb3";
	case HD_T_REGEXP:
	case HD_T_MATCH: return "#bc80bd";
	case HD_T_FILE: return "#ccebc5";
	default: return "#ffffff";
	}
}

static void dot_node(struct hd_export *x, struct wbuf *o, uint32_t gid,
		     hd_node_id id)
{
	size_t len;
	const char *cls = node_str(x, id, 1, &len);
	int type = hd_store_type(x->s, id);

	printf_(o, "  n%lu [label=\"", (unsigned long)gid);
	dot_body(o, cls, len, 0);
	printf_(o, "\\n0x%llx\", fillcolor=\"%s\", tooltip=\"%s %llu bytes\"]\n",
		(unsigned long long)hd_store_address(x->s, id),
		type_colour(type), hd_type_name(type),
		(unsigned long long)hd_store_memsize(x->s, id));
}

/* An edge; with a name, labelled with it (dot_body: a control
 * character shows as \\xNN), small, and grey when it was inferred. */
static void dot_edge(struct wbuf *o, uint32_t a, uint32_t b,
		     const char *label, size_t n, int inferred)
{
	printf_(o, "  n%lu -> n%lu", (unsigned long)a, (unsigned long)b);
	if (label) {
		puts_(o, " [label=\"");
		dot_body(o, label, n, 1);
		puts_(o, "\", fontname=\"Helvetica\", fontsize=9");
		if (inferred)
			puts_(o, ", fontcolor=\"#666666\"");
		puts_(o, "]");
	}
	puts_(o, "\n");
}

int hd_export_write_dot(hd_export *x, hd_write_cb w, void *payload,
			hd_error *err)
{
	struct wbuf *o;
	uint32_t i;
	int rc;

	HD_ASSERT_ARG(x && w);
	if (!(o = hd__calloc(1, sizeof(*o))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	o->w = w;
	o->payload = payload;
	x->origin = HD_NODE_NONE;
	x->cat = UINT32_MAX;
	puts_(o, "digraph heap {\n"
		 "  node [shape=box, style=\"rounded,filled\", "
		 "fontname=\"Helvetica\", fontsize=10]\n"
		 "  edge [arrowsize=0.6]\n");
	for (i = 0; i < x->nemit && !o->rc; i++)
		dot_node(x, o, i, x->nodes[i]);
	for (i = 0; i < x->nroots && !o->rc; i++) {
		const char *name = hd_store_root_name(x->s, i);

		if (x->root_local[i] == HD_NODE_NONE)
			continue;
		printf_(o, "  n%lu [label=\"ROOT\\n", (unsigned long)x->root_local[i]);
		dot_body(o, name, strlen(name), 0);
		puts_(o, "\", shape=doubleoctagon, style=filled, "
			 "fillcolor=\"#e31a1c\", fontcolor=\"#ffffff\"]\n");
	}
	rc = for_edges(x, o, dot_edge);
	if (!rc)
		puts_(o, "}\n");
	rc = finish(o, rc, err);
	hd__free(o, sizeof(*o));
	return rc;
}
