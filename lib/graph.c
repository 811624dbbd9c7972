/*
 * graph.c - the one graph layer (graph.h): CSR views, the iterative
 * depth-first search, Tarjan's strongly connected components and
 * Lengauer-Tarjan dominators. Every walk is a loop over explicit stacks
 * of dense uint32 ids; nothing recurses.
 */
#include "graph.h"

/* ---- CSR ---- */

int hd__csr_from_edges(struct hd__csr *g, uint32_t n, const uint32_t *from,
		       const uint32_t *to, size_t e)
{
	size_t i;
	uint32_t v;

	memset(g, 0, sizeof(*g));
	if (e > UINT32_MAX)
		return HD_ELIMIT;
	g->n = n;
	if (!(g->off = hd__calloc((size_t)n + 1, sizeof(*g->off))) ||
	    !HD_ALLOC(g->adj, e)) {
		hd__csr_free(g);
		return HD_ENOMEM;
	}
	g->acap = g->e = e;
	for (i = 0; i < e; i++)
		g->off[from[i] + 1]++;
	for (v = 0; v < n; v++)
		g->off[v + 1] += g->off[v];
	for (i = 0; i < e; i++)
		g->adj[g->off[from[i]]++] = to[i];
	/* off[v] now holds the end of v: shift back */
	for (v = n; v > 0; v--)
		g->off[v] = g->off[v - 1];
	g->off[0] = 0;
	return 0;
}

int hd__csr_reverse(struct hd__csr *out, const struct hd__csr *g)
{
	uint32_t v, a, b, t, i;
	size_t e = 0;

	memset(out, 0, sizeof(*out));
	out->n = g->n;
	if (!(out->off = hd__calloc((size_t)g->n + 1, sizeof(*out->off))))
		return HD_ENOMEM;
	for (v = 0; v < g->n; v++) {
		hd__csr_range(g, v, &a, &b);
		for (i = a; i < b; i++)
			if ((t = hd__csr_at(g, i)) < g->n) {
				out->off[t + 1]++;
				e++;
			}
	}
	if (!HD_ALLOC(out->adj, e)) {
		hd__csr_free(out);
		return HD_ENOMEM;
	}
	out->acap = out->e = e;
	for (v = 0; v < g->n; v++)
		out->off[v + 1] += out->off[v];
	for (v = 0; v < g->n; v++) {
		hd__csr_range(g, v, &a, &b);
		for (i = a; i < b; i++)
			if ((t = hd__csr_at(g, i)) < g->n)
				out->adj[out->off[t]++] = v;
	}
	for (v = g->n; v > 0; v--)
		out->off[v] = out->off[v - 1];
	out->off[0] = 0;
	return 0;
}

void hd__csr_free(struct hd__csr *g)
{
	if (g->off)
		HD_FREE(g->off, (size_t)g->n + 1);
	HD_FREE(g->adj, g->acap);
	memset(g, 0, sizeof(*g));
}

/* ---- depth-first search ---- */

int hd__dfs_init(struct hd__dfs *d, const struct hd__csr *g,
		 const unsigned char *cut, const unsigned char *skip)
{
	memset(d, 0, sizeof(*d));
	d->g = g;
	d->cut = cut;
	d->skip = skip;
	if (!HD_ALLOC(d->stack, g->n) || !HD_ALLOC(d->pos, g->n) ||
	    !(d->seen = hd__bitmap_new(g->n))) {
		hd__dfs_free(d);
		return HD_ENOMEM;
	}
	return 0;
}

void hd__dfs_free(struct hd__dfs *d)
{
	uint32_t n = d->g ? d->g->n : 0;

	HD_FREE(d->stack, n);
	HD_FREE(d->pos, n);
	hd__bitmap_free(d->seen, n);
	d->stack = d->pos = NULL;
	d->seen = NULL;
}

/* Visits t: its first successor comes next. */
static void dfs_push(struct hd__dfs *d, uint32_t t)
{
	uint32_t a, b;

	hd__bit_set(d->seen, t);
	if (d->cut && hd__bit(d->cut, t))
		a = b = 0;
	else
		hd__csr_range(d->g, t, &a, &b);
	d->pos[t] = a;
	d->stack[d->sp++] = t;
	(void)b;
}

static int dfs_visitable(const struct hd__dfs *d, uint32_t t)
{
	return t < d->g->n && !(d->skip && hd__bit(d->skip, t));
}

int hd__dfs_start(struct hd__dfs *d, uint32_t s)
{
	if (!dfs_visitable(d, s) || hd__bit(d->seen, s))
		return 0;
	dfs_push(d, s);
	d->pending = 1;
	return 1;
}

int hd__dfs_step(struct hd__dfs *d, uint32_t *v, uint32_t *t)
{
	uint32_t u, x, a, end;

	if (d->pending) {
		d->pending = 0;
		*v = HD__NONE;
		*t = d->stack[0];
		return HD__DFS_ENTER;
	}
	if (!d->sp)
		return HD__DFS_DONE;
	u = d->stack[d->sp - 1];
	if (d->cut && hd__bit(d->cut, u))
		end = 0;
	else
		hd__csr_range(d->g, u, &a, &end);
	while (d->pos[u] < end) {
		x = hd__csr_at(d->g, d->pos[u]++);
		if (!dfs_visitable(d, x))
			continue;
		if (!hd__bit(d->seen, x)) {
			dfs_push(d, x);
			*v = u;
			*t = x;
			return HD__DFS_ENTER;
		}
		if (d->edges) {
			*v = u;
			*t = x;
			return HD__DFS_EDGE;
		}
	}
	d->sp--;
	*t = u;
	*v = d->sp ? d->stack[d->sp - 1] : HD__NONE;
	return HD__DFS_LEAVE;
}

/* ---- strongly connected components (Tarjan) ---- */

int hd__scc(const struct hd__csr *g, const uint32_t *starts, size_t nstarts,
	    uint32_t *comp, uint32_t *ncomp)
{
	struct hd__dfs d;
	uint32_t *idx = NULL, *low = NULL, *stk = NULL;
	uint32_t n = g->n, counter = 0, sp = 0, C = 0, s, v, t, x;
	size_t i;
	int ev, rc = HD_ENOMEM;

	if (hd__dfs_init(&d, g, NULL, NULL))
		return HD_ENOMEM;
	d.edges = 1;
	if (!HD_ALLOC(idx, n) || !HD_ALLOC(low, n) || !HD_ALLOC(stk, n))
		goto out;
	memset(comp, 0xff, (size_t)n * sizeof(*comp));
	for (i = 0; i < nstarts + n; i++) {
		s = i < nstarts ? starts[i] : (uint32_t)(i - nstarts);
		if (!hd__dfs_start(&d, s))
			continue;
		while ((ev = hd__dfs_step(&d, &v, &t)) != HD__DFS_DONE) {
			if (ev == HD__DFS_ENTER) {
				idx[t] = low[t] = counter++;
				stk[sp++] = t;
			} else if (ev == HD__DFS_EDGE) {
				/* t on the stack: not yet in a component */
				if (comp[t] == HD__NONE && idx[t] < low[v])
					low[v] = idx[t];
			} else {
				if (low[t] == idx[t]) {
					do {
						x = stk[--sp];
						comp[x] = C;
					} while (x != t);
					C++;
				}
				if (v != HD__NONE && low[t] < low[v])
					low[v] = low[t];
			}
		}
	}
	*ncomp = C;
	rc = 0;
out:
	HD_FREE(idx, n);
	HD_FREE(low, n);
	HD_FREE(stk, n);
	hd__dfs_free(&d);
	return rc;
}

/* ---- dominators (Lengauer-Tarjan over dfn numbers) ---- */

/*
 *  1. the DFS numbers the reached vertices from the virtual root (dfn 1,
 *     whose successors are the roots in order) and records each one's
 *     DFS-tree parent; then each one's predecessors are rewritten in
 *     dfn numbers, in dfn order (lt_preds), for step 2 to read in turn;
 *  2. in decreasing dfn order, each vertex's semidominator is the least
 *     semi of EVAL(v) over its predecessors v; the vertex goes to its
 *     semidominator's bucket, is linked under its parent, and the
 *     parent's bucket is emptied, giving each vertex in it either its
 *     idom or a vertex with the same idom;
 *  3. in increasing dfn order the deferred idoms are resolved.
 *
 * Memory is seven u32 per vertex, one per predecessor and a bitmap
 * (105 MB for the 3.08 M objects of the 1 GB bench dump).
 * The walks are bound by cache misses more than by instructions: each
 * pass reads in order where it can, and its random reads are ones that
 * do not wait for each other. On a heap of millions of
 * objects each array is megabytes, so the arrays serve twice where their
 * lives do not overlap. Vertices are linked in decreasing dfn order, so
 * "linked" is "dfn >= lo" and ancestor[] holds the DFS parent from the
 * start (the one value link would give it). A bucket lives only while
 * its owner is unprocessed, when the owner's semi[] slot is free: it
 * holds the bucket's head, and idom[] of a vertex waiting in a bucket
 * holds the next one (its idom is written when it leaves). In step 1
 * idom[] and semi[] are the DFS stack: vertex and next edge by depth.
 */
struct lt {
	const struct hd__csr *pred;
	const unsigned char *cut;
	const struct hd__edge_cut *ecut;
	unsigned char *isroot;     /* bitmap by dfn: a successor of the root */
	uint32_t *ancestor, *semi, *label;
	uint32_t *poff, *padj;     /* predecessors by dfn (lt_preds) */
	size_t nadj;
	uint32_t lo;               /* vertices >= lo are linked */
	uint32_t *stack;           /* compress's, grown as needed */
	size_t sp_cap;
};

static void lt_free(struct lt *t, size_t k, uint32_t N)
{
	HD_FREE(t->ancestor, k);
	HD_FREE(t->semi, k);
	HD_FREE(t->label, k);
	HD_FREE(t->poff, k + 1);
	HD_FREE(t->padj, t->nadj);
	HD_FREE(t->stack, t->sp_cap);
	hd__bitmap_free(t->isroot, N + 1);
}

static int lt_visitable(const unsigned char *skip, uint32_t x, uint32_t N)
{
	return x < N && !(skip && hd__bit(skip, x));
}

/* Is the edge u -> x one of ecut's? */
static int lt_edge_cut(const struct hd__edge_cut *e, uint32_t u, uint32_t x)
{
	return e && hd__bit(e->to, x) && hd__bit(e->from, u);
}

/* Targets whose data lt_enter asks for ahead. */
#define LT_AHEAD 8

/* Enters x (dfn ++n, parent p) and pushes it at depth sp. */
static void lt_enter(struct hd__dom *d, struct lt *t,
		     const struct hd__csr *succ, uint32_t x, uint32_t p,
		     uint32_t sp)
{
	uint32_t a, b;

	d->dfn[x] = ++d->n;
	d->vertex[d->n] = x;
	t->ancestor[d->n] = p;
	if (t->cut && hd__bit(t->cut, x)) {
		a = b = 0;
	} else {
		hd__csr_range(succ, x, &a, &b);
	}
	d->idom[sp] = x;
	t->semi[sp] = a;
	/* the search is a chain of cache misses (offsets, targets, dfn)
	 * a vertex long: ask now for what the first targets will need */
	for (b = b - a > LT_AHEAD ? a + LT_AHEAD : b; a < b; a++) {
		x = hd__csr_at(succ, a);
		if (x < d->N) {
			HD__PREFETCH(d->dfn + x);
			hd__csr_prefetch(succ, x);
		}
	}
}

/* Step 1: numbers the vertices reached from the roots, depth first,
 * successors in CSR order (as hd__dfs walks). */
static void lt_number(struct hd__dom *d, struct lt *t,
		      const struct hd__csr *succ, const unsigned char *skip,
		      const uint32_t *roots, size_t nroots)
{
	uint32_t *stk = d->idom, *pos = t->semi, sp, u, x, y, a, end;
	size_t i;

	d->n = 1; /* the virtual root */
	d->vertex[1] = d->N;
	t->ancestor[1] = 0;
	for (i = 0; i < nroots; i++) {
		x = roots[i];
		if (!lt_visitable(skip, x, d->N))
			continue;
		if (d->dfn[x]) {
			hd__bit_set(t->isroot, d->dfn[x]);
			continue;
		}
		lt_enter(d, t, succ, x, 1, 0);
		hd__bit_set(t->isroot, d->dfn[x]);
		sp = 1;
		while (sp) {
			u = stk[sp - 1];
			if (t->cut && hd__bit(t->cut, u))
				end = 0;
			else
				hd__csr_range(succ, u, &a, &end);
			x = HD__NONE;
			while (pos[sp - 1] < end) {
				y = hd__csr_at(succ, pos[sp - 1]++);
				if (lt_visitable(skip, y, d->N) && !d->dfn[y] &&
				    !lt_edge_cut(t->ecut, u, y)) {
					x = y;
					break;
				}
			}
			if (x != HD__NONE) {
				lt_enter(d, t, succ, x, d->dfn[u], sp);
				sp++;
			} else {
				sp--;
			}
		}
	}
	/* the stack's leftovers out: every idom[] read stays in [0, n] */
	d->idom[0] = d->idom[1] = 0;
	d->vertex[0] = d->N;
}

/*
 * Step 1b: the predecessors of every reached vertex rewritten in dfn
 * numbers, vertex w's in padj[poff[w] .. poff[w + 1]) and the runs in
 * dfn order, so that step 2 reads them front to back instead of
 * looking up each predecessor's dfn at random. Two passes in vertex
 * order (each vertex's run length, then its run), whose random reads
 * (dfn[] of a predecessor) are independent of each other; a
 * predecessor unreached, cut or out of range is written as 0.
 */
static int lt_preds(struct hd__dom *d, struct lt *t)
{
	const struct hd__csr *pred = t->pred;
	uint32_t *poff = t->poff, *padj, N = d->N, y, w, a, b, k, r, o;
	uint64_t tot = 0;

	memset(poff, 0, ((size_t)d->n + 2) * sizeof(*poff));
	for (y = 0; y < N; y++)
		if ((w = d->dfn[y])) {
			hd__csr_range(pred, y, &a, &b);
			poff[w + 1] = b - a;
		}
	for (w = 2; w <= d->n; w++) {
		tot += poff[w + 1];
		if (tot > UINT32_MAX)
			return HD_ELIMIT;
		poff[w + 1] = (uint32_t)tot;
	}
	t->nadj = tot ? (size_t)tot : 1;
	if (!HD_ALLOC(t->padj, t->nadj))
		return HD_ENOMEM;
	padj = t->padj;
	for (y = 0; y < N; y++)
		if ((w = d->dfn[y])) {
			hd__csr_range(pred, y, &a, &b);
			o = poff[w];
			for (k = a; k < b; k++) {
				r = hd__csr_at(pred, k);
				padj[o++] = r < N && !(t->cut && hd__bit(t->cut, r)) &&
						    !lt_edge_cut(t->ecut, r, y) ?
						    d->dfn[r] :
						    0;
			}
		}
	return 0;
}

/* Path compression, iterative: the chain up to the tree's top is
 * collected on the stack, then shortened from the top down. */
static int compress(struct lt *t, uint32_t v)
{
	uint32_t *a = t->ancestor, *l = t->label, *sm = t->semi;
	uint32_t y, p;
	size_t sp = 0;

	while (a[v] >= t->lo) {
		if (sp == t->sp_cap &&
		    hd__grow((void **)&t->stack, &t->sp_cap, sp + 1,
			     sizeof(*t->stack)))
			return HD_ENOMEM;
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
	return 0;
}

/* EVAL of a linked v (v >= t->lo) into *u. */
static int eval(struct lt *t, uint32_t v, uint32_t *u)
{
	if (t->ancestor[v] >= t->lo && compress(t, v))
		return HD_ENOMEM;
	*u = t->label[v];
	return 0;
}

/* Steps 2 and 3. */
static int lt_semi(struct hd__dom *d, struct lt *t)
{
	uint32_t *semi = t->semi, *idom = d->idom, *padj = t->padj;
	uint32_t i, w, p, v, u, b, k, sw, su, nx;

	for (i = 1; i <= d->n; i++) {
		t->label[i] = i;
		semi[i] = 0; /* empty buckets */
	}
	t->lo = d->n + 1;
	for (w = d->n; w >= 2; w--) {
		p = t->ancestor[w]; /* unlinked: its DFS parent */
		sw = hd__bit(t->isroot, w) ? 1 : w; /* 1: the root */
		for (k = t->poff[w], b = t->poff[w + 1]; k < b; k++) {
			if (!(v = padj[k]))
				continue;
			/* an unlinked v is its own EVAL and semi */
			su = v;
			if (v >= t->lo) {
				if (eval(t, v, &u))
					return HD_ENOMEM;
				su = semi[u];
			}
			if (su < sw)
				sw = su;
		}
		/* the DFS parent is a predecessor: a store whose referrers
		 * missed it still gets sw < w, and w a bucket */
		if (p < sw)
			sw = p;
		/* w's own bucket was emptied at step w + 1 */
		semi[w] = sw;
		idom[w] = semi[sw]; /* into the bucket of sw (unprocessed) */
		semi[sw] = w;
		t->lo = w; /* linked under p */
		for (v = semi[p]; v; v = nx) {
			nx = idom[v];
			if (eval(t, v, &u))
				return HD_ENOMEM;
			idom[v] = semi[u] < semi[v] ? u : p;
		}
		semi[p] = 0;
	}
	idom[1] = 0;
	for (w = 2; w <= d->n; w++)
		if (idom[w] != semi[w])
			idom[w] = idom[idom[w]];
	return 0;
}

int hd__dominators(struct hd__dom *d, const struct hd__csr *succ,
		   const struct hd__csr *pred, const unsigned char *cut,
		   const unsigned char *skip, const struct hd__edge_cut *ecut,
		   const uint32_t *roots, size_t nroots)
{
	struct lt t;
	size_t k = (size_t)succ->n + 2;
	int rc = HD_ENOMEM;

	memset(d, 0, sizeof(*d));
	memset(&t, 0, sizeof(t));
	d->N = succ->n;
	t.pred = pred;
	t.cut = cut;
	t.ecut = ecut && ecut->from && ecut->to ? ecut : NULL;
	if (!(d->dfn = hd__calloc((size_t)d->N + 1, sizeof(*d->dfn))) ||
	    !HD_ALLOC(d->vertex, k) || !HD_ALLOC(d->idom, k) ||
	    !HD_ALLOC(t.ancestor, k) || !HD_ALLOC(t.semi, k) ||
	    !(t.isroot = hd__bitmap_new(d->N + 1)))
		goto out;
	lt_number(d, &t, succ, skip, roots, nroots);
	if (!HD_ALLOC(t.poff, k + 1) || !HD_ALLOC(t.label, k) ||
	    (rc = lt_preds(d, &t)) || (rc = lt_semi(d, &t)))
		goto out;
out:
	lt_free(&t, k, d->N);
	if (rc)
		hd__dom_free(d);
	return rc;
}

void hd__dom_free(struct hd__dom *d)
{
	size_t k = (size_t)d->N + 2;

	HD_FREE(d->dfn, (size_t)d->N + 1);
	HD_FREE(d->vertex, k);
	HD_FREE(d->idom, k);
	d->dfn = d->vertex = d->idom = NULL;
}
