/*
 * dominators.c - the dominator tree of the whole heap, retained sizes,
 * the top retainers and Eclipse MAT's class histogram.
 *
 * The graph is the store's references plus a virtual root whose
 * successors are the objects of every root category, less a WeakKeyMap's
 * references to values whose key the dump lists (the key holds those). The tree comes from
 * the graph layer's Lengauer-Tarjan (graph.c) over the store's sections
 * as borrowed CSR views; retained sets then sum bottom-up in decreasing
 * DFS preorder, since an idom always comes before what it dominates.
 *
 * The kept result is per node (16 bytes a node): idom, retained count
 * and retained memsize, either owned or pointing into a store that holds
 * them (index --dominators, attached with hd__store_attach and read back
 * with hd__store_section: this file never touches the store's members).
 */
#include "graph.h"
#include "store_format.h"

#include <stdlib.h>


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

/* ---- the tree, from the graph layer's dominators ---- */

/* The objects of every root category, in store order: the virtual
 * root's successors. */
static int root_list(const hd_store *s, uint32_t **v, size_t *n,
		     size_t *cap)
{
	uint32_t c, r, nroot = hd_store_root_count(s);
	hd_edge_iter it;

	for (c = 0; c < nroot; c++) {
		hd_store_root_refs(s, c, &it);
		while (hd_edge_iter_next(&it, &r) == 0)
			if (hd__push_u32(v, n, cap, r))
				return HD_ENOMEM;
	}
	return 0;
}

/* Sums the retained sets bottom-up in decreasing dfn order (an idom
 * has a smaller dfn than what it dominates) over arrays by dfn, which
 * the tree's locality keeps near one another, then moves the result to
 * node ids in node order: every pass writes in order and its random
 * reads are independent of each other. t's vertex[] and idom[] go
 * before the kept count and memsize arrays come, to keep the peak. */
static int finish(struct hd__dom *t, hd_domtree *d)
{
	uint64_t rmem = 0, *mem = NULL;
	uint32_t *cnt = NULL, v, node, p, N = t->N;
	size_t k = (size_t)t->n + 1;
	int rc = HD_ENOMEM;

	if (!HD_ALLOC(cnt, k) || !HD_ALLOC(mem, k) ||
	    !HD_ALLOC(d->idom, (size_t)N + 1))
		goto out;
	for (node = 0; node < N; node++)
		if ((v = t->dfn[node])) {
			cnt[v] = 1;
			mem[v] = hd_store_memsize(d->s, node);
		}
	for (v = t->n; v >= 2; v--) {
		p = t->idom[v];
		if (p <= 1) { /* the virtual root */
			hd__sat_add(&rmem, mem[v]);
			continue;
		}
		cnt[p] += cnt[v];
		hd__sat_add(&mem[p], mem[v]);
	}
	for (node = 0; node < N; node++) {
		v = t->dfn[node];
		p = v ? t->idom[v] : 0;
		d->idom[node] = !v ? HD_NODE_NONE :
			     p <= 1 ? HD_DOM_ROOT :
				      t->vertex[p];
	}
	d->idom[N] = HD_NODE_NONE;
	HD_FREE(t->vertex, (size_t)N + 2);
	HD_FREE(t->idom, (size_t)N + 2);
	t->vertex = t->idom = NULL;
	if (!HD_ALLOC(d->count, (size_t)N + 1) ||
	    !HD_ALLOC(d->mem, (size_t)N + 1))
		goto out;
	for (node = 0; node < N; node++) {
		v = t->dfn[node];
		d->count[node] = v ? cnt[v] : 0;
		d->mem[node] = v ? mem[v] : 0;
	}
	d->count[N] = 0;
	d->mem[N] = 0;
	d->reached = t->n - 1;
	d->reached_mem = rmem;
	rc = 0;
out:
	HD_FREE(cnt, k);
	HD_FREE(mem, k);
	return rc;
}

/* The WeakKeyMaps' references to values whose key the dump lists: the
 * key holds such a value, not the map (the gem's dumps list the keys;
 * paths.c's holds_ref and leak_attr.c make the same cut). NULL to[]
 * when there are none. */
static int keyed_cut(const hd_store *s, unsigned char **from,
		     unsigned char **to)
{
	uint32_t i, n = hd_store_node_count(s);
	int nomem;

	*from = NULL;
	*to = hd__ephemeron_keyed(s, &nomem);
	if (nomem)
		return HD_ENOMEM;
	if (!*to)
		return 0;
	if (!(*from = hd__bitmap_new(n)))
		return HD_ENOMEM;
	for (i = 0; i < n; i++)
		if (hd__wkmap(s, i))
			hd__bit_set(*from, i);
	return 0;
}

static int compute(hd_domtree *d, hd_error *err)
{
	struct hd__csr succ, pred;
	struct hd__dom t;
	struct hd__edge_cut ec;
	unsigned char *weak = NULL, *skip = NULL, *efrom = NULL, *eto = NULL;
	uint32_t *roots = NULL, N = d->n;
	size_t nroots = 0, rcap = 0;
	int rc = HD_ENOMEM;

	memset(&t, 0, sizeof(t));
	hd__store_csr(d->s, 0, &succ);
	hd__store_csr(d->s, 1, &pred);
	if (d->flags & HD_ROOTS_SKIP_WEAK && !(weak = hd__weak_bitmap(d->s)))
		goto out;
	if (d->flags & HD_DOMTREE_SKIP_DUMPER &&
	    !(skip = hd__store_dumper_bitmap(d->s, NULL, NULL)))
		goto out;
	if (keyed_cut(d->s, &efrom, &eto) ||
	    root_list(d->s, &roots, &nroots, &rcap))
		goto out;
	ec.from = efrom;
	ec.to = eto;
	if (hd__dominators(&t, &succ, &pred, weak, skip, &ec, roots, nroots))
		goto out;
	rc = finish(&t, d);
out:
	hd__bitmap_free(weak, N);
	hd__bitmap_free(skip, N);
	hd__bitmap_free(efrom, N);
	hd__bitmap_free(eto, N);
	HD_FREE(roots, rcap);
	hd__dom_free(&t);
	return rc ? hd__error(err, rc, "out of memory") : 0;
}

/* ---- the tree ---- */

/* The store's tree, if it holds one computed with these flags. */
static const unsigned char *stored(const hd_store *s, unsigned flags)
{
	uint64_t len;
	const unsigned char *info = hd__store_section(s, HD__SEC_DOM_INFO,
						      &len);

	return info && hd__le64(info + 8 * HD__DI_FLAGS) == flags ? info :
								     NULL;
}

int hd_domtree_new(hd_domtree **out, const hd_store *s, unsigned flags,
		   hd_error *err)
{
	const unsigned char *info;
	hd_domtree *d;
	uint64_t len;
	int rc;

	HD_ASSERT_ARG(out && s &&
		      !(flags & ~(HD_ROOTS_SKIP_WEAK | HD_DOMTREE_SKIP_DUMPER)));
	*out = NULL;
	if (!(d = hd__calloc(1, sizeof(*d))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	d->s = s;
	d->n = hd_store_node_count(s);
	d->flags = flags;
	if ((info = stored(s, flags))) {
		d->idom_le = hd__store_section(s, HD__SEC_DOM_IDOM, &len);
		d->count_le = hd__store_section(s, HD__SEC_DOM_COUNT, &len);
		d->mem_le = hd__store_section(s, HD__SEC_DOM_MEM, &len);
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
	HD_FREE(d->idom, d->idom ? (size_t)d->n + 1 : 0);
	HD_FREE(d->count, d->count ? (size_t)d->n + 1 : 0);
	HD_FREE(d->mem, d->mem ? (size_t)d->n + 1 : 0);
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
		return HD_NODE_NONE;
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
	out->via = out->passed_over = 0;
	if (hd_domtree_idom(d, target) == HD_NODE_NONE)
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

/* Retained sizes read at a time by hd_domtree_top from a stored tree. */
#define TOP_CHUNK 4096u

int hd_domtree_top(hd_node_id *out, size_t *n_out, const hd_domtree *d,
		   size_t k, hd_error *err)
{
	unsigned char buf[TOP_CHUNK * 8];
	const unsigned char *mem = NULL;
	size_t n = 0, i;
	hd_node_id id, x, from = 0;
	uint64_t worst = 0;

	HD_ASSERT_ARG(d && n_out && (out || !k));
	*n_out = 0;
	if (!k)
		return 0;
	/* out is a heap whose top is the worst kept; once it is full, a
	 * node retaining less memory than that one cannot enter, which the
	 * retained memsize alone tells (read first, as it lies; a stored
	 * one copied a chunk at a time, hd__store_copy) */
	for (id = 0; id < d->n; id++) {
		if (!d->mem && id % TOP_CHUNK == 0) {
			from = id;
			mem = hd__store_copy(
				d->s, HD__SEC_DOM_MEM, (uint64_t)id * 8,
				(size_t)(d->n - id < TOP_CHUNK ? d->n - id :
								 TOP_CHUNK) * 8,
				buf);
			if (!mem) /* unreadable: the image, then */
				mem = d->mem_le + (size_t)id * 8;
		}
		if (n == k && (d->mem ? d->mem[id] :
					hd__le64(mem + (size_t)(id - from) * 8)) <
				      worst)
			continue;
		if (hd_domtree_idom(d, id) == HD_NODE_NONE)
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
		if (n == k)
			hd_domtree_retained(d, out[0], &worst);
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

/* Each reached node's class group (interned display name, cut at 511
 * bytes), each distinct class key named once (hd__store_class_names). */
static int class_groups(const hd_domtree *d, struct hd__intern *names,
			uint32_t *grp)
{
	hd_node_id id;

	for (id = 0; id < d->n; id++)
		grp[id] = hd_domtree_idom(d, id) == HD_NODE_NONE ? HD_STR_NONE :
								   0;
	return hd__store_class_names(grp, d->s, names, 512);
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
	    !HD_ALLOC(kid, (size_t)n + 1) || !HD_ALLOC(stk, 2 * (size_t)n + 1) ||
	    !(above = hd__calloc(ngrp ? ngrp : 1, sizeof(*above))))
		goto out;
	/* parent index: node id, or n for the virtual root */
	for (id = 0; id < n; id++) {
		p = hd_domtree_idom(d, id);
		if (p != HD_NODE_NONE)
			off[(p == HD_DOM_ROOT ? n : p) + 1]++;
	}
	for (i = 1; i <= (size_t)n + 1; i++)
		off[i] += off[i - 1];
	for (id = 0; id < n; id++) {
		p = hd_domtree_idom(d, id);
		if (p != HD_NODE_NONE)
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
	HD_FREE(kid, (size_t)n + 1);
	HD_FREE(stk, 2 * (size_t)n + 1);
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
	if (!HD_ALLOC(grp, d->n ? d->n : 1) || class_groups(d, &names, grp))
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
	HD_FREE(grp, d->n ? d->n : 1);
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

/* The children orders of d kept beside it (hd_domtree_children_open
 * reads them back): what serve would otherwise sort at each start. */
static int set_children(hd_store *s, const hd_domtree *d, hd_error *err)
{
	static const int sid[2] = { HD__SEC_DOM_KIDS_OFF, HD__SEC_DOM_KIDS };
	hd_domtree_children *c;
	unsigned char *sec[2];
	size_t len[2];
	int rc;

	if ((rc = hd_domtree_children_build(&c, d, s, err)))
		return rc;
	rc = hd__domtree_children_images(c, &sec[0], &len[0], &sec[1],
					 &len[1]);
	hd_domtree_children_free(c);
	if (rc)
		return hd__error(err, rc, "out of memory");
	if ((rc = hd__store_attach(s, sid, (void *const *)sec, len, 2, err))) {
		hd__free(sec[0], len[0]);
		hd__free(sec[1], len[1] ? len[1] : 1);
	}
	return rc;
}

int hd_store_set_domtree(hd_store *s, const hd_domtree *d, hd_error *err)
{
	static const int sid[4] = { HD__SEC_DOM_INFO, HD__SEC_DOM_IDOM,
				    HD__SEC_DOM_COUNT, HD__SEC_DOM_MEM };
	unsigned char *sec[4] = { NULL, NULL, NULL, NULL };
	size_t len[4];
	uint64_t m;
	uint32_t id;
	int k, rc;

	HD_ASSERT_ARG(s && d && d->s == s);
	len[0] = (size_t)HD__DOM_INFO_COUNT * 8;
	len[1] = (size_t)d->n * 4;
	len[2] = (size_t)d->n * 4;
	len[3] = (size_t)d->n * 8;
	for (k = 0; k < 4; k++)
		if (!(sec[k] = hd__calloc(len[k] ? len[k] : 1, 1))) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			goto fail;
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
	if (!(rc = hd__store_attach(s, sid, (void *const *)sec, len, 4, err)))
		return set_children(s, d, err);
fail:
	for (k = 0; k < 4; k++)
		hd__free(sec[k], len[k] ? len[k] : 1);
	return rc;
}
