/*
 * interface.c - the border between old and new objects (memdump's
 * interface_with, done right). Given a store and the set of new objects
 * (the DIFF), finds the old objects that reference new ones (the self
 * border) and the new objects an old object or a root references (the
 * diff border), and for each diff-border object:
 *
 *  - keepalive: the new objects reachable from it through new objects
 *    only, itself included. The DIFF-induced subgraph is condensed into
 *    its strongly connected components (iterative Tarjan); components
 *    whose sub-DAG is a tree get exact sums by dynamic programming, the
 *    others are counted in batches of 64 border components whose reach
 *    is propagated as u64 masks over the part of the DAG they reach;
 *    O((V + E) * B / 64) in the worst case, B the non-tree border
 *    components.
 *  - retained: the new objects it dominates in the DIFF-induced subgraph
 *    under a virtual root joined to every border object.
 *
 * The components and the dominators come from the graph layer
 * (graph.c). Every walk is iterative; all arrays are indexed by dense
 * uint32 ids.
 */
#include "graph.h"

#include <stdlib.h>

#define BATCH 64

struct hd_interface {
	hd_border *border;
	size_t nborder, border_cap;
	hd_nodes self;
	hd_interface_totals tot;
};

struct work {
	const hd_store *s;
	int sat;             /* a memsize sum stopped at 2^64-1 */
	const hd_nodes *diff;
	unsigned char *weak; /* n bits: references not followed, or NULL */
	uint32_t n;       /* store nodes */
	uint32_t m;       /* DIFF nodes (local ids 0..m-1 in diff order) */
	uint32_t *loc;    /* n: node -> local id, or HD__NONE when old */
	struct hd__csr fw; /* DIFF-induced references */
	struct hd__csr rv; /* and referrers */
	uint32_t *bloc;   /* local ids of the border, ascending */
	size_t nb, bcap;
	uint32_t *roots;  /* m: root categories referencing it */
	/* condensation */
	uint32_t *comp;   /* m: component, in reverse topological order */
	uint32_t C;
	struct hd__csr dag; /* component successors, without repeats */
	uint32_t *ccount;        /* C: members */
	uint64_t *cmem;          /* C: their memsize */
	uint32_t *kcount;        /* C: keepalive of each component (exact
				    for tree-shaped sub-DAGs only) */
	uint64_t *kmem;
	unsigned char *simple;   /* C: its sub-DAG is a tree */
};

/* Does node v hold what it references (not a weak reference skipped)? */
static int holds(const struct work *w, hd_node_id v)
{
	return !w->weak || !hd__bit(w->weak, v);
}

/* ---- the DIFF-induced subgraph and the border ---- */

/* The references among new objects (fw) and their reverse (rv). */
static int build_local(struct work *w)
{
	const hd_nodes *d = w->diff;
	hd_edge_iter it;
	hd_node_id t;
	size_t i, e = 0;

	if (!HD_ALLOC(w->loc, w->n))
		return HD_ENOMEM;
	memset(w->loc, 0xff, (size_t)w->n * sizeof(*w->loc));
	for (i = 0; i < d->n; i++)
		w->loc[d->ids[i]] = (uint32_t)i;
	w->fw.n = w->m;
	if (!HD_ALLOC(w->fw.off, w->m + 1))
		return HD_ENOMEM;
	w->fw.off[0] = 0;
	for (i = 0; i < w->m; i++) {
		if (holds(w, d->ids[i])) {
			hd_store_refs(w->s, d->ids[i], &it);
			while (hd_edge_iter_next(&it, &t) == 0)
				e += w->loc[t] != HD__NONE;
		}
		w->fw.off[i + 1] = (uint32_t)e;
	}
	w->fw.e = w->fw.acap = e;
	if (!HD_ALLOC(w->fw.adj, e))
		return HD_ENOMEM;
	e = 0;
	for (i = 0; i < w->m; i++) {
		if (!holds(w, d->ids[i]))
			continue;
		hd_store_refs(w->s, d->ids[i], &it);
		while (hd_edge_iter_next(&it, &t) == 0)
			if (w->loc[t] != HD__NONE)
				w->fw.adj[e++] = w->loc[t];
	}
	return hd__csr_reverse(&w->rv, &w->fw);
}

/* The memsize of local v, from the store (not copied). */
static uint64_t lmem(const struct work *w, uint32_t v)
{
	return hd_store_memsize(w->s, w->diff->ids[v]);
}

/*
 * The diff border with its holders, and the self border. Referrer lists
 * are ascending, so a repeated referrer is adjacent.
 */
static int find_border(struct work *w, hd_interface *x)
{
	unsigned char *self = NULL;
	uint32_t *last = NULL;
	hd_edge_iter it;
	hd_node_id r, prev;
	size_t i;
	uint32_t c, nroot = hd_store_root_count(w->s);
	int rc = HD_ENOMEM;

	if (!(self = hd__bitmap_new(w->n)) ||
	    !(w->roots = hd__calloc(w->m, sizeof(*w->roots))) ||
	    !HD_ALLOC(last, w->m))
		goto out;
	memset(last, 0xff, (size_t)w->m * sizeof(*last));
	for (c = 0; c < nroot; c++) {
		hd_store_root_refs(w->s, c, &it);
		while (hd_edge_iter_next(&it, &r) == 0) {
			uint32_t l = w->loc[r];

			if (l != HD__NONE && last[l] != c) {
				last[l] = c; /* a category counts once */
				w->roots[l]++;
			}
		}
	}
	for (i = 0; i < w->m; i++) {
		hd_border b;

		memset(&b, 0, sizeof(b));
		b.id = w->diff->ids[i];
		b.roots = w->roots[i];
		for (c = 0; c < HD_BORDER_HOLDERS; c++)
			b.holder[c] = HD_NODE_NONE;
		hd_store_referrers(w->s, b.id, &it);
		prev = HD_NODE_NONE;
		while (hd_edge_iter_next(&it, &r) == 0) {
			if (w->loc[r] != HD__NONE || r == prev || !holds(w, r))
				continue;
			prev = r;
			if (b.holders < HD_BORDER_HOLDERS)
				b.holder[b.holders] = r;
			b.holders++;
			hd__bit_set(self, r);
		}
		if (!b.holders && !b.roots)
			continue;
		if (hd__grow((void **)&x->border, &x->border_cap,
			     x->nborder + 1, sizeof(*x->border)) ||
		    hd__push_u32(&w->bloc, &w->nb, &w->bcap, (uint32_t)i))
			goto out;
		x->border[x->nborder++] = b;
	}
	for (r = 0; r < w->n; r++) {
		if (hd__bit(self, r) && hd__nodes_push(&x->self, r))
			goto out;
	}
	rc = 0;
out:
	hd__bitmap_free(self, w->n);
	HD_FREE(last, w->m);
	return rc;
}

/* ---- strongly connected components ---- */

/*
 * The border objects first, then every new object (the graph layer's
 * Tarjan): components close in a reverse topological order of the
 * condensation, every edge between two going from a higher number to a
 * lower one.
 */
static int components(struct work *w)
{
	if (!HD_ALLOC(w->comp, w->m))
		return HD_ENOMEM;
	return hd__scc(&w->fw, w->bloc, w->nb, w->comp, &w->C);
}

/*
 * The condensation DAG (edges bucketed by source component in one
 * sequential pass over the references, then repeats dropped), member
 * counts and memsizes, and the tree DP.
 */
static int condense(struct work *w)
{
	uint32_t *stamp = NULL, *indeg = NULL, *fill = NULL;
	uint32_t C = w->C, c, d, v;
	size_t i, k, e = 0;
	int rc = HD_ENOMEM;

	w->dag.n = C;
	if (!HD_ALLOC(stamp, C) || !(indeg = hd__calloc(C, sizeof(*indeg))) ||
	    !(w->dag.off = hd__calloc((size_t)C + 1, sizeof(*w->dag.off))) ||
	    !(w->ccount = hd__calloc(C, sizeof(*w->ccount))) ||
	    !(w->cmem = hd__calloc(C, sizeof(*w->cmem))) ||
	    !HD_ALLOC(w->kcount, C) || !HD_ALLOC(w->kmem, C) ||
	    !(w->simple = hd__calloc(C, 1)))
		goto out;
	for (v = 0; v < w->m; v++) {
		c = w->comp[v];
		w->ccount[c]++;
		w->sat |= hd__sat_add(&w->cmem[c], lmem(w, v));
		for (i = w->fw.off[v]; i < w->fw.off[v + 1]; i++)
			if (w->comp[w->fw.adj[i]] != c) {
				w->dag.off[c + 1]++;
				e++;
			}
	}
	for (c = 0; c < C; c++)
		w->dag.off[c + 1] += w->dag.off[c];
	if (!HD_ALLOC(w->dag.adj, e))
		goto out;
	w->dag.acap = e; /* before anything else can fail: hd__csr_free */
	if (!HD_ALLOC(fill, C))
		goto out;
	memcpy(fill, w->dag.off, (size_t)C * sizeof(*fill));
	for (v = 0; v < w->m; v++) {
		c = w->comp[v];
		for (i = w->fw.off[v]; i < w->fw.off[v + 1]; i++) {
			d = w->comp[w->fw.adj[i]];
			if (d != c)
				w->dag.adj[fill[c]++] = d;
		}
	}
	/* drop repeats, compacting in place */
	memset(stamp, 0xff, (size_t)C * sizeof(*stamp));
	e = 0;
	for (c = 0; c < C; c++) {
		size_t start = w->dag.off[c], end = w->dag.off[c + 1];

		w->dag.off[c] = (uint32_t)e;
		for (k = start; k < end; k++) {
			d = w->dag.adj[k];
			if (stamp[d] == c)
				continue;
			stamp[d] = c;
			indeg[d]++;
			w->dag.adj[e++] = d;
		}
	}
	w->dag.off[C] = (uint32_t)e;
	w->dag.e = e;
	/* successors have lower numbers: ascending order is bottom-up */
	for (c = 0; c < C; c++) {
		int simple = 1;

		w->kcount[c] = w->ccount[c];
		w->kmem[c] = w->cmem[c];
		for (i = w->dag.off[c]; i < w->dag.off[c + 1]; i++) {
			d = w->dag.adj[i];
			simple &= w->simple[d] && indeg[d] == 1;
			w->kcount[c] += w->kcount[d];
			w->sat |= hd__sat_add(&w->kmem[c], w->kmem[d]);
		}
		w->simple[c] = (unsigned char)simple;
	}
	rc = 0;
out:
	HD_FREE(fill, C);
	HD_FREE(stamp, C);
	HD_FREE(indeg, C);
	return rc;
}

/* ---- keepalive: batches of 64 border components ---- */

/* A small mask -> (count, memsize) table, emptied per batch; keyed hash
 * (hash.c), since the masks follow the graph of the dump. */
struct masktab {
	uint64_t *key;
	uint64_t *count, *mem;
	unsigned char *used;
	size_t cap, n;
	int sat;             /* a memsize sum stopped at 2^64-1 */
	struct hd__hkey hkey;
};

static void masktab_free(struct masktab *t)
{
	HD_FREE(t->key, t->cap);
	HD_FREE(t->count, t->cap);
	HD_FREE(t->mem, t->cap);
	HD_FREE(t->used, t->cap);
	memset(t, 0, sizeof(*t));
}

static int masktab_reset(struct masktab *t, size_t expect)
{
	size_t cap = 16;

	while (cap < expect * 2)
		cap *= 2;
	if (cap > t->cap) {
		int sat = t->sat;

		masktab_free(t);
		t->sat = sat;
		hd__hash_key_new(&t->hkey);
		if (!HD_ALLOC(t->key, cap) || !HD_ALLOC(t->count, cap) ||
		    !HD_ALLOC(t->mem, cap) || !HD_ALLOC(t->used, cap))
			return HD_ENOMEM;
		t->cap = cap;
	}
	memset(t->used, 0, t->cap);
	t->n = 0;
	return 0;
}

/* The table never fills: it has twice as many slots as visited comps. */
static void masktab_add(struct masktab *t, uint64_t key, uint64_t count,
			uint64_t mem)
{
	size_t i = (size_t)hd__hash_u64(&t->hkey, key) & (t->cap - 1);

	while (t->used[i] && t->key[i] != key)
		i = (i + 1) & (t->cap - 1);
	if (!t->used[i]) {
		t->used[i] = 1;
		t->key[i] = key;
		t->count[i] = t->mem[i] = 0;
		t->n++;
	}
	t->count[i] += count;
	t->sat |= hd__sat_add(&t->mem[i], mem);
}

static int cmp_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Counts one batch: marks the components the batch's border components
 * reach (a tree-shaped component is a leaf standing for its whole
 * sub-tree), ORs the masks down in topological order, then sums weights
 * per distinct mask and spreads each sum over the mask's bits.
 */
static int keepalive_batch(struct work *w, const uint32_t *bc, unsigned nbc,
			   uint64_t *mask, uint32_t *stamp, uint32_t batch,
			   uint32_t **vis, size_t *vcap, struct masktab *t,
			   uint64_t *cnt, uint64_t *mem)
{
	size_t nv = 0, head = 0, i, j;
	uint32_t c, d;
	unsigned b;

	for (b = 0; b < nbc; b++) {
		c = bc[b];
		if (stamp[c] != batch) {
			stamp[c] = batch;
			mask[c] = 0;
			if (hd__push_u32(vis, &nv, vcap, c))
				return HD_ENOMEM;
		}
		mask[c] |= (uint64_t)1 << b;
	}
	while (head < nv) {
		c = (*vis)[head++];
		if (w->simple[c])
			continue;
		for (i = w->dag.off[c]; i < w->dag.off[c + 1]; i++) {
			d = w->dag.adj[i];
			if (stamp[d] == batch)
				continue;
			stamp[d] = batch;
			mask[d] = 0;
			if (hd__push_u32(vis, &nv, vcap, d))
				return HD_ENOMEM;
		}
	}
	qsort(*vis, nv, sizeof(**vis), cmp_desc);
	for (j = 0; j < nv; j++) {
		c = (*vis)[j];
		if (w->simple[c])
			continue;
		for (i = w->dag.off[c]; i < w->dag.off[c + 1]; i++)
			mask[w->dag.adj[i]] |= mask[c];
	}
	if (masktab_reset(t, nv))
		return HD_ENOMEM;
	for (j = 0; j < nv; j++) {
		c = (*vis)[j];
		if (w->simple[c])
			masktab_add(t, mask[c], w->kcount[c], w->kmem[c]);
		else
			masktab_add(t, mask[c], w->ccount[c], w->cmem[c]);
	}
	memset(cnt, 0, BATCH * sizeof(*cnt));
	memset(mem, 0, BATCH * sizeof(*mem));
	for (i = 0; i < t->cap; i++) {
		uint64_t m;

		if (!t->used[i])
			continue;
		for (m = t->key[i]; m; m &= m - 1) {
			b = (unsigned)__builtin_ctzll(m);
			cnt[b] += t->count[i];
			t->sat |= hd__sat_add(&mem[b], t->mem[i]);
		}
	}
	return 0;
}

static int keepalive(struct work *w, hd_interface *x)
{
	uint32_t *bc = NULL, *stamp = NULL, *vis = NULL;
	uint64_t *mask = NULL, *kc = NULL, *km = NULL;
	uint64_t cnt[BATCH], mem[BATCH];
	struct masktab t;
	size_t nbc = 0, bccap = 0, vcap = 0, i, k;
	uint32_t batch = 0;
	int rc = HD_ENOMEM;

	memset(&t, 0, sizeof(t));
	if (!w->nb)
		return 0;
	if (!HD_ALLOC(stamp, w->C) || !HD_ALLOC(mask, w->C))
		goto out;
	memset(stamp, 0xff, (size_t)w->C * sizeof(*stamp));
	/* distinct non-tree border components, in component order */
	for (i = 0; i < w->nb; i++) {
		uint32_t c = w->comp[w->bloc[i]];

		if (w->simple[c] || stamp[c] == 0)
			continue;
		stamp[c] = 0;
		if (hd__push_u32(&bc, &nbc, &bccap, c))
			goto out;
	}
	if (nbc)
		qsort(bc, nbc, sizeof(*bc), cmp_desc);
	/* counts per non-tree border component, by its place in bc */
	if (!HD_ALLOC(kc, nbc + 1) || !HD_ALLOC(km, nbc + 1))
		goto out;
	memset(stamp, 0xff, (size_t)w->C * sizeof(*stamp));
	for (i = 0; i < nbc; i += BATCH, batch++) {
		unsigned nb = (unsigned)(nbc - i < BATCH ? nbc - i : BATCH);

		if ((rc = keepalive_batch(w, bc + i, nb, mask, stamp, batch,
					  &vis, &vcap, &t, cnt, mem)))
			goto out;
		for (k = 0; k < nb; k++) {
			kc[i + k] = cnt[k];
			km[i + k] = mem[k];
		}
	}
	for (i = 0; i < nbc; i++)
		stamp[bc[i]] = (uint32_t)i;
	for (i = 0; i < w->nb; i++) {
		uint32_t c = w->comp[w->bloc[i]];
		hd_border *b = &x->border[i];

		b->keepalive_count = w->simple[c] ? w->kcount[c] :
						    kc[stamp[c]];
		b->keepalive_memsize = w->simple[c] ? w->kmem[c] :
						      km[stamp[c]];
	}
	rc = 0;
out:
	HD_FREE(bc, bccap);
	HD_FREE(stamp, w->C);
	HD_FREE(mask, w->C);
	HD_FREE(kc, kc ? nbc + 1 : 0);
	HD_FREE(km, km ? nbc + 1 : 0);
	HD_FREE(vis, vcap);
	w->sat |= t.sat;
	masktab_free(&t);
	return rc;
}

/* ---- retained: dominators under a virtual root ---- */

/*
 * The dominator tree of the DIFF-induced subgraph under a virtual root
 * whose successors are the border objects (the graph layer's
 * Lengauer-Tarjan), summed bottom-up in decreasing dfn order.
 */
static int retained(struct work *w, hd_interface *x)
{
	struct hd__dom t;
	uint64_t *acc = NULL, *accm = NULL;
	uint32_t v;
	size_t i;
	int rc = HD_ENOMEM;

	if (!w->nb)
		return 0;
	if (hd__dominators(&t, &w->fw, &w->rv, NULL, NULL, NULL, w->bloc, w->nb))
		return HD_ENOMEM;
	if (!(acc = hd__calloc((size_t)t.n + 1, sizeof(*acc))) ||
	    !(accm = hd__calloc((size_t)t.n + 1, sizeof(*accm))))
		goto out;
	for (v = t.n; v >= 2; v--) {
		acc[v] += 1;
		w->sat |= hd__sat_add(&accm[v], lmem(w, t.vertex[v]));
		acc[t.idom[v]] += acc[v];
		w->sat |= hd__sat_add(&accm[t.idom[v]], accm[v]);
	}
	for (i = 0; i < w->nb; i++) {
		v = t.dfn[w->bloc[i]];
		x->border[i].retained_count = acc[v];
		x->border[i].retained_memsize = accm[v];
	}
	x->tot.reached = t.n - 1;
	x->tot.reached_memsize = accm[1];
	rc = 0;
out:
	HD_FREE(acc, (size_t)t.n + 1);
	HD_FREE(accm, (size_t)t.n + 1);
	hd__dom_free(&t);
	return rc;
}

/* ---- API ---- */

/* What keepalive needed and retained does not: the components and the
 * condensation. Lowers the peak. */
static void free_condensation(struct work *w)
{
	hd__csr_free(&w->dag);
	HD_FREE(w->comp, w->m);
	HD_FREE(w->ccount, w->C);
	HD_FREE(w->cmem, w->C);
	HD_FREE(w->kcount, w->C);
	HD_FREE(w->kmem, w->C);
	HD_FREE(w->simple, w->C);
	HD_FREE(w->roots, w->m);
	w->roots = NULL;
	w->comp = NULL;
	w->ccount = w->kcount = NULL;
	w->cmem = w->kmem = NULL;
	w->simple = NULL;
}

static void work_free(struct work *w)
{
	free_condensation(w);
	hd__bitmap_free(w->weak, w->n);
	HD_FREE(w->loc, w->n);
	hd__csr_free(&w->fw);
	hd__csr_free(&w->rv);
	HD_FREE(w->bloc, w->bcap);
}

int hd_interface_with(hd_interface **out, const hd_store *s,
		      const hd_nodes *diff, hd_error *err)
{
	return hd_interface_with_flags(out, s, diff, 0, err);
}

int hd_interface_with_flags(hd_interface **out, const hd_store *s,
			    const hd_nodes *diff, unsigned flags,
			    hd_error *err)
{
	struct work w;
	hd_interface *x;
	size_t i;
	int rc;

	HD_ASSERT_ARG(out && s && diff && (diff->ids || !diff->n) &&
		      !(flags & ~HD_ROOTS_SKIP_WEAK));
	*out = NULL;
	memset(&w, 0, sizeof(w));
	w.s = s;
	w.diff = diff;
	w.n = hd_store_node_count(s);
	for (i = 0; i < diff->n; i++)
		if (diff->ids[i] >= w.n || (i && diff->ids[i] <= diff->ids[i - 1]))
			return hd__error(err, HD_EINVAL,
					 "the new objects are not an ascending "
					 "set of nodes of the store");
	w.m = (uint32_t)diff->n;
	if (!(x = hd__calloc(1, sizeof(*x))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (flags & HD_ROOTS_SKIP_WEAK && !(w.weak = hd__weak_bitmap(s))) {
		rc = HD_ENOMEM;
		goto out;
	}
	if ((rc = build_local(&w)) || (rc = find_border(&w, x)))
		goto out;
	if ((rc = components(&w)) || (rc = condense(&w)) ||
	    (rc = keepalive(&w, x)))
		goto out;
	free_condensation(&w); /* the dominators need none of it */
	if ((rc = retained(&w, x)))
		goto out;
	x->tot.diff = w.m;
	for (i = 0; i < w.m; i++)
		w.sat |= hd__sat_add(&x->tot.diff_memsize,
				     lmem(&w, (uint32_t)i));
	x->tot.memsize_saturated = (uint32_t)w.sat;
	x->tot.components = w.C;
	x->tot.self_border = x->self.n;
	x->tot.diff_border = x->nborder;
out:
	work_free(&w);
	if (rc) {
		hd_interface_free(x);
		return hd__error(err, rc, "out of memory");
	}
	*out = x;
	return 0;
}

const hd_border *hd_interface_diff_border(const hd_interface *x,
					  size_t *n_out)
{
	if (n_out)
		*n_out = x ? x->nborder : 0;
	return x ? x->border : NULL;
}

const hd_nodes *hd_interface_self_border(const hd_interface *x)
{
	return x ? &x->self : NULL;
}

void hd_interface_totals_get(hd_interface_totals *out, const hd_interface *x)
{
	if (x)
		*out = x->tot;
	else
		memset(out, 0, sizeof(*out));
}

void hd_interface_free(hd_interface *x)
{
	if (!x)
		return;
	hd__free(x->border, x->border_cap * sizeof(*x->border));
	hd_nodes_free(&x->self);
	hd__free(x, sizeof(*x));
}

void hd_fold_shares(hd_share_fold *out, const uint64_t *sizes, size_t n,
		    uint64_t whole, double min_share)
{
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (min_share > 0 && whole)
		while (i < n &&
		       (double)sizes[i] >= min_share * (double)whole)
			i++;
	else
		i = n;
	out->kept = i;
	out->folded = n - i;
	for (; i < n; i++)
		hd__sat_add(&out->folded_size, sizes[i]);
}
