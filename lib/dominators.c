/*
 * dominators.c - the dominator tree of the whole heap, retained sizes,
 * the top retainers and Eclipse MAT's class histogram.
 *
 * The graph is the store's references plus a virtual root whose
 * successors are the objects of every root category. The tree comes from
 * Lengauer and Tarjan's algorithm, the simple version (path compression
 * without balancing, O(E log N)), written over DFS preorder numbers
 * ("dfn", 1-based, the virtual root is 1, 0 means none) so that every
 * array is dense and every walk is a loop:
 *
 *  1. an iterative DFS from the virtual root numbers the reached objects
 *     and records each one's DFS-tree parent;
 *  2. in decreasing dfn order, each vertex's semidominator is the least
 *     semi of EVAL(v) over its predecessors v; the vertex goes to its
 *     semidominator's bucket, is linked under its parent, and the
 *     parent's bucket is emptied, giving each vertex in it either its
 *     idom or a vertex with the same idom;
 *  3. in increasing dfn order the deferred idoms are resolved.
 *
 * Retained sets then sum bottom-up in decreasing dfn order, since an
 * idom always has a smaller dfn than the vertex it dominates.
 *
 * The kept result is per node (16 bytes a node): idom, retained count
 * and retained memsize, either owned or pointing into a store that holds
 * them (index --dominators).
 */
#include "store_format.h"

#include <stdlib.h>

#define NONE HD_NODE_NONE

struct hd_domtree {
	const hd_store *s;
	uint32_t n;              /* nodes */
	unsigned flags;
	uint64_t reached, reached_mem;
	/* per node, little-endian images when stored, native when owned */
	const unsigned char *idom_le, *count_le, *mem_le;
	uint32_t *idom, *count;
	uint64_t *mem;
};

#define ALLOC(p, n) ((p) = hd__array_alloc((n), sizeof(*(p))))
#define FREE(p, n) hd__free((p), (size_t)(n) * sizeof(*(p)))

/* ---- Lengauer-Tarjan over dfn numbers ---- */

struct lt {
	const hd_store *s;
	const unsigned char *weak; /* references not followed, or NULL */
	unsigned char *skip;       /* nodes left out of the graph, or NULL */
	unsigned char *isroot;     /* bitmap: held by a root category */
	uint32_t N;                /* nodes; the virtual root is node N */
	uint32_t n;                /* vertices numbered (root included) */
	uint32_t *dfn;             /* N: node -> dfn, 0 unreached */
	uint32_t *vertex;          /* N + 2: dfn -> node */
	uint32_t *parent, *semi, *label, *ancestor, *idom, *head, *next;
	uint32_t *stack;           /* DFS, then compression */
};

static int bit(const unsigned char *m, uint32_t i)
{
	return m[i / 8] >> (i % 8) & 1;
}

static int follows(const struct lt *t, uint32_t node)
{
	return !t->weak || !bit(t->weak, node);
}

/* Is node in the graph (not left out by HD_DOMTREE_SKIP_DUMPER)? */
static int kept(const struct lt *t, uint32_t node)
{
	return !t->skip || !bit(t->skip, node);
}

static void lt_free(struct lt *t)
{
	size_t k = (size_t)t->N + 2;

	FREE(t->dfn, (size_t)t->N + 1);
	FREE(t->vertex, k);
	FREE(t->parent, k);
	FREE(t->semi, k);
	FREE(t->label, k);
	FREE(t->ancestor, k);
	FREE(t->idom, k);
	FREE(t->head, k);
	FREE(t->next, k);
	FREE(t->stack, k);
	hd__free(t->isroot, (size_t)t->N / 8 + 1);
}

static int lt_alloc(struct lt *t)
{
	size_t k = (size_t)t->N + 2;

	if (!(t->dfn = hd__calloc((size_t)t->N + 1, sizeof(*t->dfn))) ||
	    !ALLOC(t->vertex, k) || !ALLOC(t->parent, k) ||
	    !ALLOC(t->semi, k) || !ALLOC(t->label, k) ||
	    !(t->ancestor = hd__calloc(k, sizeof(*t->ancestor))) ||
	    !ALLOC(t->idom, k) ||
	    !(t->head = hd__calloc(k, sizeof(*t->head))) ||
	    !ALLOC(t->next, k) || !ALLOC(t->stack, k) ||
	    !(t->isroot = hd__calloc((size_t)t->N / 8 + 1, 1)))
		return HD_ENOMEM;
	return 0;
}

/* Numbers a new vertex: node reached from dfn p. */
static uint32_t number(struct lt *t, uint32_t node, uint32_t p)
{
	uint32_t v = ++t->n;

	t->dfn[node] = v;
	t->vertex[v] = node;
	t->parent[v] = p;
	return v;
}

/*
 * Step 1: an iterative DFS. The virtual root's successors are the root
 * categories' objects in store order; an object's are its references in
 * dump order. idom[] holds, while searching, how many references of each
 * vertex on the stack were taken.
 */
/* The next unnumbered reference of vertex v, or NONE. */
static uint32_t next_child(struct lt *t, uint32_t v)
{
	uint32_t node = t->vertex[v], x;
	hd_edge_iter it;

	if (!follows(t, node))
		return NONE;
	hd_store_refs(t->s, node, &it);
	if (!it.p)
		return NONE;
	it.p += (size_t)t->idom[v] * 4;
	while (hd_edge_iter_next(&it, &x) == 0) {
		t->idom[v]++;
		if (x < t->N && !t->dfn[x] && kept(t, x))
			return x;
	}
	return NONE;
}

static void dfs(struct lt *t)
{
	uint32_t c, r, sp, v, x, nroot = hd_store_root_count(t->s);
	hd_edge_iter it;

	t->n = 1; /* the virtual root */
	t->vertex[1] = t->N;
	t->parent[1] = 0;
	for (c = 0; c < nroot; c++) {
		hd_store_root_refs(t->s, c, &it);
		while (hd_edge_iter_next(&it, &r) == 0) {
			if (r >= t->N || !kept(t, r))
				continue;
			t->isroot[r / 8] |= (unsigned char)(1u << (r % 8));
			if (t->dfn[r])
				continue;
			sp = 0;
			t->stack[sp++] = number(t, r, 1);
			t->idom[t->n] = 0;
			while (sp) {
				v = t->stack[sp - 1];
				if ((x = next_child(t, v)) == NONE) {
					sp--;
					continue;
				}
				t->stack[sp++] = number(t, x, v);
				t->idom[t->n] = 0;
			}
		}
	}
}

/* Path compression, iterative: the chain up to the tree's top is
 * collected on the stack, then shortened from the top down. */
static void compress(struct lt *t, uint32_t v)
{
	uint32_t *a = t->ancestor, *l = t->label, *sm = t->semi;
	uint32_t sp = 0, y, p;

	while (a[a[v]]) {
		t->stack[sp++] = v;
		v = a[v];
	}
	while (sp) {
		y = t->stack[--sp];
		p = a[y];
		if (sm[l[p]] < sm[l[y]])
			l[y] = l[p];
		a[y] = a[p];
	}
}

static uint32_t eval(struct lt *t, uint32_t v)
{
	if (!t->ancestor[v])
		return v;
	compress(t, v);
	return t->label[v];
}

/* Steps 2 and 3. */
static void semidominators(struct lt *t)
{
	uint32_t i, w, p, v, u, node, r;
	hd_edge_iter it;

	for (i = 1; i <= t->n; i++) {
		t->semi[i] = t->label[i] = i;
		t->ancestor[i] = 0;
	}
	for (w = t->n; w >= 2; w--) {
		node = t->vertex[w];
		p = t->parent[w];
		if (bit(t->isroot, node))
			t->semi[w] = 1; /* the virtual root: dfn 1 */
		hd_store_referrers(t->s, node, &it);
		while (hd_edge_iter_next(&it, &r) == 0) {
			if (r >= t->N || !(v = t->dfn[r]) || !follows(t, r))
				continue;
			u = eval(t, v);
			if (t->semi[u] < t->semi[w])
				t->semi[w] = t->semi[u];
		}
		t->next[w] = t->head[t->semi[w]];
		t->head[t->semi[w]] = w;
		t->ancestor[w] = p;
		for (v = t->head[p]; v; v = t->next[v]) {
			u = eval(t, v);
			t->idom[v] = t->semi[u] < t->semi[v] ? u : p;
		}
		t->head[p] = 0;
	}
	t->idom[1] = 0;
	for (w = 2; w <= t->n; w++)
		if (t->idom[w] != t->semi[w])
			t->idom[w] = t->idom[t->idom[w]];
}

/* Moves the result to node ids and sums the retained sets. */
static int finish(struct lt *t, hd_domtree *d)
{
	uint64_t *rmem = NULL;
	uint32_t *rcnt = t->semi; /* done with: reused for counts */
	uint32_t v, node, id;

	if (!ALLOC(rmem, (size_t)t->n + 1) ||
	    !ALLOC(d->idom, (size_t)t->N + 1) ||
	    !ALLOC(d->count, (size_t)t->N + 1) ||
	    !ALLOC(d->mem, (size_t)t->N + 1)) {
		FREE(rmem, (size_t)t->n + 1);
		return HD_ENOMEM;
	}
	for (v = 1; v <= t->n; v++) {
		rcnt[v] = 1;
		rmem[v] = v == 1 ? 0 : hd_store_memsize(t->s, t->vertex[v]);
	}
	for (v = t->n; v >= 2; v--) {
		rcnt[t->idom[v]] += rcnt[v];
		hd__sat_add(&rmem[t->idom[v]], rmem[v]);
	}
	for (id = 0; id < t->N; id++) {
		d->idom[id] = NONE;
		d->count[id] = 0;
		d->mem[id] = 0;
	}
	for (v = 2; v <= t->n; v++) {
		node = t->vertex[v];
		d->idom[node] = t->idom[v] == 1 ? HD_DOM_ROOT :
						  t->vertex[t->idom[v]];
		d->count[node] = rcnt[v];
		d->mem[node] = rmem[v];
	}
	d->reached = t->n - 1;
	d->reached_mem = rmem[1];
	FREE(rmem, (size_t)t->n + 1);
	return 0;
}

static int compute(hd_domtree *d, hd_error *err)
{
	struct lt t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.s = d->s;
	t.N = d->n;
	if (d->flags & HD_ROOTS_SKIP_WEAK &&
	    !(t.weak = hd__weak_bitmap(d->s))) {
		rc = HD_ENOMEM;
		goto out;
	}
	if (d->flags & HD_DOMTREE_SKIP_DUMPER) {
		uint32_t i;

		if (!(t.skip = hd__calloc((size_t)t.N / 8 + 1, 1))) {
			rc = HD_ENOMEM;
			goto out;
		}
		for (i = 0; i < t.N; i++)
			if (hd_store_is_dumper(d->s, i))
				t.skip[i / 8] |= (unsigned char)(1u << (i % 8));
	}
	if ((rc = lt_alloc(&t)))
		goto out;
	dfs(&t);
	semidominators(&t);
	rc = finish(&t, d);
out:
	hd__free((void *)t.weak, (size_t)t.N / 8 + 1);
	hd__free(t.skip, t.skip ? (size_t)t.N / 8 + 1 : 0);
	lt_free(&t);
	return rc ? hd__error(err, rc, "out of memory") : 0;
}

/* ---- the tree ---- */

static int stored(const hd_store *s, unsigned flags)
{
	const unsigned char *info = s->sec[HD__SEC_DOM_INFO];

	return info && hd__le64(info + 8 * HD__DI_FLAGS) == flags;
}

int hd_domtree_new(hd_domtree **out, const hd_store *s, unsigned flags,
		   hd_error *err)
{
	hd_domtree *d;
	int rc;

	HD_ASSERT_ARG(out && s &&
		      !(flags & ~(HD_ROOTS_SKIP_WEAK | HD_DOMTREE_SKIP_DUMPER)));
	*out = NULL;
	if (!(d = hd__calloc(1, sizeof(*d))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	d->s = s;
	d->n = hd_store_node_count(s);
	d->flags = flags;
	if (stored(s, flags)) {
		const unsigned char *info = s->sec[HD__SEC_DOM_INFO];

		d->idom_le = s->sec[HD__SEC_DOM_IDOM];
		d->count_le = s->sec[HD__SEC_DOM_COUNT];
		d->mem_le = s->sec[HD__SEC_DOM_MEM];
		d->reached = hd__le64(info + 8 * HD__DI_REACHED);
		d->reached_mem = hd__le64(info + 8 * HD__DI_MEMSIZE);
	} else if ((rc = compute(d, err))) {
		hd_domtree_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void hd_domtree_free(hd_domtree *d)
{
	if (!d)
		return;
	FREE(d->idom, d->idom ? (size_t)d->n + 1 : 0);
	FREE(d->count, d->count ? (size_t)d->n + 1 : 0);
	FREE(d->mem, d->mem ? (size_t)d->n + 1 : 0);
	hd__free(d, sizeof(*d));
}

int hd_domtree_is_stored(const hd_domtree *d)
{
	return d && d->idom_le;
}

uint64_t hd_domtree_reached(const hd_domtree *d, uint64_t *memsize)
{
	if (memsize)
		*memsize = d ? d->reached_mem : 0;
	return d ? d->reached : 0;
}

hd_node_id hd_domtree_idom(const hd_domtree *d, hd_node_id id)
{
	if (!d || id >= d->n)
		return NONE;
	return d->idom ? d->idom[id] : hd__le32(d->idom_le + (size_t)id * 4);
}

uint64_t hd_domtree_retained(const hd_domtree *d, hd_node_id id,
			     uint64_t *memsize)
{
	if (!d || id >= d->n) {
		if (memsize)
			*memsize = 0;
		return 0;
	}
	if (memsize)
		*memsize = d->mem ? d->mem[id] :
				    hd__le64(d->mem_le + (size_t)id * 8);
	return d->count ? d->count[id] :
			  hd__le32(d->count_le + (size_t)id * 4);
}

/* A root category holding id directly, or UINT32_MAX. */
static uint32_t holding_root(const hd_store *s, hd_node_id id)
{
	uint32_t c, nroot = hd_store_root_count(s);
	hd_edge_iter it;
	hd_node_id r;

	for (c = 0; c < nroot; c++) {
		hd_store_root_refs(s, c, &it);
		while (hd_edge_iter_next(&it, &r) == 0)
			if (r == id)
				return c;
	}
	return UINT32_MAX;
}

int hd_domtree_chain(hd_root_path *out, const hd_domtree *d,
		     hd_node_id target, hd_error *err)
{
	hd_node_id v;
	size_t n = 0, i;

	HD_ASSERT_ARG(d && out && target < d->n);
	out->n = 0;
	out->root = UINT32_MAX;
	if (hd_domtree_idom(d, target) == NONE)
		return hd__error(err, HD_ENOTFOUND,
				 "no root reaches 0x%llx",
				 (unsigned long long)hd_store_address(d->s,
								      target));
	/* target up to the outermost; a stored tree may hold a cycle */
	for (v = target; v != HD_DOM_ROOT; v = hd_domtree_idom(d, v)) {
		if (v >= d->n || n > d->n)
			return hd__error(err, HD_EFORMAT,
					 "store dominator section is corrupt");
		if (hd__grow((void **)&out->nodes, &out->cap, n + 1,
			     sizeof(*out->nodes)))
			return hd__error(err, HD_ENOMEM, "out of memory");
		out->nodes[n++] = v;
	}
	for (i = 0; i < n / 2; i++) {
		v = out->nodes[i];
		out->nodes[i] = out->nodes[n - 1 - i];
		out->nodes[n - 1 - i] = v;
	}
	out->n = n;
	out->root = holding_root(d->s, out->nodes[0]);
	return 0;
}

/* ---- top retainers: a min-heap of k ---- */

/* Is a a better retainer than b? */
static int better(const hd_domtree *d, hd_node_id a, hd_node_id b)
{
	uint64_t ma, mb, ca = hd_domtree_retained(d, a, &ma),
			 cb = hd_domtree_retained(d, b, &mb);

	if (ma != mb)
		return ma > mb;
	if (ca != cb)
		return ca > cb;
	return a < b;
}

static void sift_down(const hd_domtree *d, hd_node_id *h, size_t n,
		      size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		hd_node_id x;

		if (l < n && better(d, h[w], h[l]))
			w = l;
		if (r < n && better(d, h[w], h[r]))
			w = r;
		if (w == i)
			return;
		x = h[i];
		h[i] = h[w];
		h[w] = x;
		i = w;
	}
}

int hd_domtree_top(hd_node_id *out, size_t *n_out, const hd_domtree *d,
		   size_t k, hd_error *err)
{
	size_t n = 0, i;
	hd_node_id id, x;

	HD_ASSERT_ARG(d && n_out && (out || !k));
	*n_out = 0;
	if (!k)
		return 0;
	/* out is a heap whose top is the worst kept */
	for (id = 0; id < d->n; id++) {
		if (hd_domtree_idom(d, id) == NONE)
			continue;
		if (n < k) {
			out[n++] = id;
			for (i = n - 1; i && better(d, out[(i - 1) / 2], out[i]);
			     i = (i - 1) / 2) {
				x = out[i];
				out[i] = out[(i - 1) / 2];
				out[(i - 1) / 2] = x;
			}
		} else if (better(d, id, out[0])) {
			out[0] = id;
			sift_down(d, out, n, 0);
		}
	}
	/* heap sort: the worst goes last */
	for (i = n; i > 1; i--) {
		x = out[0];
		out[0] = out[i - 1];
		out[i - 1] = x;
		sift_down(d, out, i - 1, 0);
	}
	*n_out = n;
	return 0;
}

/* ---- the class histogram ---- */

struct crow {
	uint64_t objects, shallow, rcount, rmem;
};

static int cmp_rows(const void *a, const void *b)
{
	const hd_class_retained *x = a, *y = b;

	if (x->retained_memsize != y->retained_memsize)
		return x->retained_memsize < y->retained_memsize ? 1 : -1;
	if (x->objects != y->objects)
		return x->objects < y->objects ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Each reached node's class group (interned display name). */
static int class_groups(const hd_domtree *d, struct hd__intern *names,
			uint32_t *grp)
{
	char buf[512];
	hd_node_id id;
	size_t len;

	for (id = 0; id < d->n; id++) {
		grp[id] = HD_STR_NONE;
		if (hd_domtree_idom(d, id) == NONE)
			continue;
		len = hd_store_class_name(buf, sizeof(buf), d->s, id);
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		if (hd__intern_put(names, buf, len, &grp[id]))
			return HD_ENOMEM;
	}
	return 0;
}

/*
 * Walks the dominator tree depth first (children in CSR by idom, from
 * the virtual root), keeping per group the number of instances on the
 * current path: an instance with none above it adds its retained set.
 */
static int walk_classes(const hd_domtree *d, const uint32_t *grp,
			struct crow *rows, size_t ngrp)
{
	uint32_t *off = NULL, *kid = NULL, *stk = NULL, *above = NULL;
	uint32_t n = d->n, id, p, sp = 0, v;
	size_t i;
	int rc = HD_ENOMEM;

	if (!(off = hd__calloc((size_t)n + 2, sizeof(*off))) ||
	    !ALLOC(kid, (size_t)n + 1) || !ALLOC(stk, 2 * (size_t)n + 1) ||
	    !(above = hd__calloc(ngrp ? ngrp : 1, sizeof(*above))))
		goto out;
	/* parent index: node id, or n for the virtual root */
	for (id = 0; id < n; id++) {
		p = hd_domtree_idom(d, id);
		if (p != NONE)
			off[(p == HD_DOM_ROOT ? n : p) + 1]++;
	}
	for (i = 1; i <= (size_t)n + 1; i++)
		off[i] += off[i - 1];
	for (id = 0; id < n; id++) {
		p = hd_domtree_idom(d, id);
		if (p != NONE)
			kid[off[p == HD_DOM_ROOT ? n : p]++] = id;
	}
	for (i = (size_t)n + 1; i > 0; i--)
		off[i] = off[i - 1];
	off[0] = 0;
	/*
	 * Pre-order with an exit mark: a node is pushed as itself; when it
	 * is popped the first time it is entered and pushed again with the
	 * high bit set, above its children, to be left after them.
	 */
	for (i = off[n]; i < off[n + 1]; i++)
		stk[sp++] = kid[i];
	while (sp) {
		v = stk[--sp];
		if (v & 0x80000000u) {
			above[grp[v & 0x7fffffffu]]--;
			continue;
		}
		{
			struct crow *r = &rows[grp[v]];
			uint64_t m, c = hd_domtree_retained(d, v, &m);

			r->objects++;
			hd__sat_add(&r->shallow, hd_store_memsize(d->s, v));
			if (!above[grp[v]]) {
				r->rcount += c;
				hd__sat_add(&r->rmem, m);
			}
		}
		above[grp[v]]++;
		stk[sp++] = v | 0x80000000u;
		for (i = off[v]; i < off[v + 1]; i++)
			stk[sp++] = kid[i];
	}
	rc = 0;
out:
	hd__free(off, ((size_t)n + 2) * sizeof(*off));
	FREE(kid, (size_t)n + 1);
	FREE(stk, 2 * (size_t)n + 1);
	hd__free(above, (ngrp ? ngrp : 1) * sizeof(*above));
	return rc;
}

int hd_domtree_classes(hd_class_retained **rows_out, size_t *n_rows,
		       const hd_domtree *d, hd_error *err)
{
	struct hd__intern names;
	uint32_t *grp = NULL;
	struct crow *rows = NULL;
	hd_class_retained *out = NULL;
	size_t ng = 0, i;
	int rc = HD_ENOMEM;

	HD_ASSERT_ARG(d && rows_out && n_rows);
	*rows_out = NULL;
	*n_rows = 0;
	/* the stack of walk_classes marks exits with the high bit */
	if (d->n >= 0x80000000u)
		return hd__error(err, HD_ELIMIT, "too many objects");
	if (hd__intern_init(&names))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (!ALLOC(grp, d->n ? d->n : 1) || class_groups(d, &names, grp))
		goto out;
	ng = names.count;
	if (!(rows = hd__calloc(ng ? ng : 1, sizeof(*rows))) ||
	    (rc = walk_classes(d, grp, rows, ng)) ||
	    !(out = hd__calloc(ng + 1, sizeof(*out)))) {
		rc = HD_ENOMEM;
		goto out;
	}
	for (i = 0; i < ng; i++) {
		out[i].name = hd__strdup(hd__intern_str(&names, (uint32_t)i,
							NULL));
		if (!out[i].name) {
			/* not through hd_class_retained_free: the rows
			 * after i have no name yet */
			while (i--)
				hd__free((char *)out[i].name,
					 strlen(out[i].name) + 1);
			hd__free(out, (ng + 1) * sizeof(*out));
			out = NULL;
			rc = HD_ENOMEM;
			goto out;
		}
		out[i].objects = rows[i].objects;
		out[i].shallow = rows[i].shallow;
		out[i].retained_count = rows[i].rcount;
		out[i].retained_memsize = rows[i].rmem;
	}
	qsort(out, ng, sizeof(*out), cmp_rows);
	*rows_out = out;
	*n_rows = ng;
	rc = 0;
out:
	FREE(grp, d->n ? d->n : 1);
	hd__free(rows, (ng ? ng : 1) * sizeof(*rows));
	hd__intern_free(&names);
	return rc ? hd__error(err, rc, "out of memory") : 0;
}

/* The rows end with a row whose name is NULL (hd_domtree_classes). */
void hd_class_retained_free(hd_class_retained *rows)
{
	size_t i;

	if (!rows)
		return;
	for (i = 0; rows[i].name; i++)
		hd__free((char *)rows[i].name, strlen(rows[i].name) + 1);
	hd__free(rows, (i + 1) * sizeof(*rows));
}

/* ---- keeping the tree in a built store ---- */

int hd_store_set_domtree(hd_store *s, const hd_domtree *d, hd_error *err)
{
	unsigned char *sec[4] = { NULL, NULL, NULL, NULL };
	size_t len[4];
	uint64_t m;
	uint32_t id;
	int k;

	HD_ASSERT_ARG(s && d && d->s == s && !s->map && !s->buf);
	len[0] = (size_t)HD__DOM_INFO_COUNT * 8;
	len[1] = (size_t)d->n * 4;
	len[2] = (size_t)d->n * 4;
	len[3] = (size_t)d->n * 8;
	for (k = 0; k < 4; k++)
		if (!(sec[k] = hd__calloc(len[k] ? len[k] : 1, 1))) {
			while (k--)
				hd__free(sec[k], len[k] ? len[k] : 1);
			return hd__error(err, HD_ENOMEM, "out of memory");
		}
	hd__put_le64(sec[0] + 8 * HD__DI_FLAGS, d->flags);
	hd__put_le64(sec[0] + 8 * HD__DI_REACHED, d->reached);
	hd__put_le64(sec[0] + 8 * HD__DI_MEMSIZE, d->reached_mem);
	for (id = 0; id < d->n; id++) {
		hd__put_le32(sec[1] + (size_t)id * 4, hd_domtree_idom(d, id));
		hd__put_le32(sec[2] + (size_t)id * 4,
			     (uint32_t)hd_domtree_retained(d, id, &m));
		hd__put_le64(sec[3] + (size_t)id * 8, m);
	}
	for (k = 0; k < 4; k++) {
		int sid = HD__SEC_DOM_INFO + k;

		hd__free(s->own[sid], s->own_len[sid]);
		s->own[sid] = sec[k];
		s->own_len[sid] = len[k] ? len[k] : 1;
		s->sec[sid] = sec[k];
		s->len[sid] = len[k];
	}
	return 0;
}
