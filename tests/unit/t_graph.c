/*
 * t_graph.c - the graph layer (lib/graph.c): CSR from edges and its
 * reverse, the DFS's event order, Tarjan's components on a cycle and on
 * a 300,000-long chain, Lengauer-Tarjan dominators on the classic
 * examples, against Cooper-Harvey-Kennedy's iterative algorithm (the
 * one interface.c used before the graph layer) on random graphs, against
 * dominator sets by plain dataflow on random graphs with cut, skipped
 * and damaged vertices (with the DFS numbering), and on a 300,000-long
 * ladder.
 */
#include "t.h"
#include "graph.h"

#include <stdint.h>

/* edges as (from, to) pairs */
static int mk(struct hd__csr *g, uint32_t n, const uint32_t (*e)[2],
	      size_t ne)
{
	uint32_t *a = malloc((ne + 1) * 4), *b = malloc((ne + 1) * 4);
	size_t i;
	int rc;

	for (i = 0; i < ne; i++) {
		a[i] = e[i][0];
		b[i] = e[i][1];
	}
	rc = hd__csr_from_edges(g, n, a, b, ne);
	free(a);
	free(b);
	return rc;
}

static void test_graph__csr(void)
{
	static const uint32_t e[][2] = { { 2, 0 }, { 0, 3 }, { 0, 1 },
					 { 2, 1 }, { 0, 3 } };
	struct hd__csr g, r;
	uint32_t a, b;

	T_RC(mk(&g, 4, e, 5), 0);
	T_EQ(g.e, 5);
	hd__csr_range(&g, 0, &a, &b);
	T_EQ(b - a, 3);
	/* each vertex's targets keep the edges' order, repeats kept */
	T_EQ(hd__csr_at(&g, a), 3);
	T_EQ(hd__csr_at(&g, a + 1), 1);
	T_EQ(hd__csr_at(&g, a + 2), 3);
	hd__csr_range(&g, 1, &a, &b);
	T_EQ(b - a, 0);
	hd__csr_range(&g, 2, &a, &b);
	T_EQ(b - a, 2);
	T_EQ(hd__csr_at(&g, a), 0);
	T_EQ(hd__csr_at(&g, a + 1), 1);
	T_RC(hd__csr_reverse(&r, &g), 0);
	/* sources ascending */
	hd__csr_range(&r, 1, &a, &b);
	T_EQ(b - a, 2);
	T_EQ(hd__csr_at(&r, a), 0);
	T_EQ(hd__csr_at(&r, a + 1), 2);
	hd__csr_range(&r, 3, &a, &b);
	T_EQ(b - a, 2);
	T_EQ(hd__csr_at(&r, a), 0);
	T_EQ(hd__csr_at(&r, a + 1), 0);
	hd__csr_range(&r, 2, &a, &b);
	T_EQ(b - a, 0);
	hd__csr_free(&g);
	hd__csr_free(&r);
	/* a damaged borrowed offset reads as no targets */
	{
		unsigned char off[12], adj[4];
		struct hd__csr v;

		memset(&v, 0, sizeof(v));
		hd__put_le32(off, 1);
		hd__put_le32(off + 4, 0); /* end before start */
		hd__put_le32(off + 8, 9); /* past the targets */
		hd__put_le32(adj, 1);
		v.n = 2;
		v.off_le = off;
		v.adj_le = adj;
		v.e = 1;
		hd__csr_range(&v, 0, &a, &b);
		T_EQ(b - a, 0);
		hd__csr_range(&v, 1, &a, &b);
		T_EQ(b - a, 0);
	}
}

/* The events of a search from 0, as a string: "+v" enter, "-v" leave,
 * "=v" an edge to a visited vertex. */
static void trace(const struct hd__csr *g, const unsigned char *cut,
		  const unsigned char *skip, char *buf)
{
	struct hd__dfs d;
	uint32_t v, t;
	int ev;

	buf[0] = 0;
	if (hd__dfs_init(&d, g, cut, skip))
		abort();
	d.edges = 1;
	hd__dfs_start(&d, 0);
	while ((ev = hd__dfs_step(&d, &v, &t)) != HD__DFS_DONE)
		sprintf(buf + strlen(buf), "%c%u",
			ev == HD__DFS_ENTER ? '+' :
			ev == HD__DFS_EDGE ? '=' : '-', t);
	hd__dfs_free(&d);
}

static void test_graph__dfs_order(void)
{
	/* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 0, 0 -> 9 (out of range) */
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 },
					 { 2, 3 }, { 3, 0 }, { 0, 9 } };
	struct hd__csr g;
	unsigned char cut[1] = { 0 }, skip[1] = { 0 };
	char buf[256];

	T_RC(mk(&g, 4, e, 6), 0);
	trace(&g, NULL, NULL, buf);
	T_STREQ(buf, "+0+1+3=0-3-1+2=3-2-0");
	hd__bit_set(cut, 1); /* 1's references are not followed */
	trace(&g, cut, NULL, buf);
	T_STREQ(buf, "+0+1-1+2+3=0-3-2-0");
	hd__bit_set(skip, 2); /* 2 is not in the graph */
	trace(&g, cut, skip, buf);
	T_STREQ(buf, "+0+1-1-0");
	hd__csr_free(&g);
}

static void test_graph__scc_cycle(void)
{
	/* a cycle 0 -> 1 -> 2 -> 0, 2 -> 3, a cycle 3 <-> 4, 5 alone */
	static const uint32_t e[][2] = { { 0, 1 }, { 1, 2 }, { 2, 0 },
					 { 2, 3 }, { 3, 4 }, { 4, 3 } };
	struct hd__csr g;
	uint32_t comp[6], C, start = 5;

	T_RC(mk(&g, 6, e, 6), 0);
	T_RC(hd__scc(&g, &start, 1, comp, &C), 0);
	T_EQ(C, 3);
	T_EQ(comp[5], 0); /* the start first */
	T_EQ(comp[3], 1); /* then closed bottom-up: successors lower */
	T_EQ(comp[4], 1);
	T_EQ(comp[0], 2);
	T_EQ(comp[1], 2);
	T_EQ(comp[2], 2);
	hd__csr_free(&g);
}

#define CHAIN 300000u

static void test_graph__chain(void)
{
	/* 0 -> 1 -> ... -> CHAIN - 1, and back to 0: one component; then
	 * without the back edge, CHAIN components and a dominator chain */
	uint32_t *a = malloc(CHAIN * 4), *b = malloc(CHAIN * 4),
		 *comp = malloc(CHAIN * 4), i, C, root = 0;
	struct hd__csr g, r;
	struct hd__dom d;

	T_ASSERT(a && b && comp);
	for (i = 0; i < CHAIN; i++) {
		a[i] = i;
		b[i] = (i + 1) % CHAIN;
	}
	T_RC(hd__csr_from_edges(&g, CHAIN, a, b, CHAIN), 0);
	T_RC(hd__scc(&g, NULL, 0, comp, &C), 0);
	T_EQ(C, 1);
	hd__csr_free(&g);
	T_RC(hd__csr_from_edges(&g, CHAIN, a, b, CHAIN - 1), 0);
	T_RC(hd__scc(&g, NULL, 0, comp, &C), 0);
	T_EQ(C, CHAIN);
	T_EQ(comp[CHAIN - 1], 0);
	T_EQ(comp[0], CHAIN - 1);
	T_RC(hd__csr_reverse(&r, &g), 0);
	T_RC(hd__dominators(&d, &g, &r, NULL, NULL, NULL, &root, 1), 0);
	T_EQ(d.n, CHAIN + 1);
	for (i = 0; i < CHAIN; i++)
		if (d.dfn[i] != i + 2 || d.idom[i + 2] != i + 1)
			break;
	T_EQ(i, CHAIN);
	hd__dom_free(&d);
	hd__csr_free(&g);
	hd__csr_free(&r);
	free(a);
	free(b);
	free(comp);
}

/* The immediate dominator of each vertex as a vertex (N: the virtual
 * root, HD__NONE: unreached). */
static void idoms(const struct hd__dom *d, uint32_t *out)
{
	uint32_t v;

	for (v = 0; v < d->N; v++)
		out[v] = d->dfn[v] ? d->vertex[d->idom[d->dfn[v]]] : HD__NONE;
}

static int dom_of(const struct hd__csr *g, const uint32_t *roots,
		  size_t nroots, uint32_t *out)
{
	struct hd__csr r;
	struct hd__dom d;

	if (hd__csr_reverse(&r, g) ||
	    hd__dominators(&d, g, &r, NULL, NULL, NULL, roots, nroots))
		return 1;
	idoms(&d, out);
	hd__dom_free(&d);
	hd__csr_free(&r);
	return 0;
}

static void test_graph__dominators_classic(void)
{
	/* Lengauer and Tarjan's example (1979, fig. 1): R=0 A=1 B=2 C=3
	 * D=4 E=5 F=6 G=7 H=8 I=9 J=10 K=11 L=12 */
	static const uint32_t e[][2] = {
		{ 0, 1 }, { 0, 2 }, { 0, 3 }, { 1, 4 }, { 2, 1 }, { 2, 4 },
		{ 2, 5 }, { 3, 6 }, { 3, 7 }, { 4, 12 }, { 5, 8 }, { 6, 9 },
		{ 7, 9 }, { 7, 10 }, { 8, 5 }, { 8, 11 }, { 9, 11 },
		{ 10, 9 }, { 11, 0 }, { 11, 9 }, { 12, 8 }
	};
	static const uint32_t want[13] = { 13, 0, 0, 0, 0, 0, 3, 3,
					   0, 0, 7, 0, 4 };
	/* the diamond and a node reached only through a skipped one */
	static const uint32_t e2[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 },
					  { 2, 3 }, { 3, 4 }, { 5, 6 } };
	struct hd__csr g, r;
	struct hd__dom d;
	uint32_t got[13], root = 0, roots2[2] = { 0, 5 };
	unsigned char skip[1] = { 0 }, cut[1] = { 0 };
	int i;

	T_RC(mk(&g, 13, e, sizeof(e) / sizeof(e[0])), 0);
	T_ASSERT(!dom_of(&g, &root, 1, got));
	for (i = 0; i < 13; i++)
		T_EQ(got[i], want[i]);
	hd__csr_free(&g);
	T_RC(mk(&g, 7, e2, sizeof(e2) / sizeof(e2[0])), 0);
	T_ASSERT(!dom_of(&g, roots2, 2, got));
	T_EQ(got[0], 7);
	T_EQ(got[3], 0);
	T_EQ(got[4], 3);
	T_EQ(got[6], 5);
	/* 1's references cut, 5 skipped: 3 is held by 2 alone */
	hd__bit_set(cut, 1);
	hd__bit_set(skip, 5);
	T_RC(hd__csr_reverse(&r, &g), 0);
	T_RC(hd__dominators(&d, &g, &r, cut, skip, NULL, roots2, 2), 0);
	idoms(&d, got);
	T_EQ(got[3], 2);
	T_EQ(got[5], HD__NONE);
	T_EQ(got[6], HD__NONE);
	T_EQ(d.n, 6); /* the root, 0 to 4 */
	hd__dom_free(&d);
	hd__csr_free(&r);
	hd__csr_free(&g);
}

/* ---- the reference: Cooper, Harvey and Kennedy ---- */

static uint32_t chk_intersect(const uint32_t *dom, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (a < b)
			a = dom[a];
		while (b < a)
			b = dom[b];
	}
	return a;
}

/* idom per vertex (n: the virtual root, HD__NONE unreached), by the
 * fixed point over reverse postorder of a DFS from the roots. */
static void chk(const struct hd__csr *g, const struct hd__csr *rv,
		const uint32_t *roots, size_t nroots, uint32_t *out)
{
	uint32_t n = g->n, np = 0, k, v, nd, a, b, i, p, x, u;
	uint32_t *po = malloc((n + 1) * 4), *order = malloc((n + 1) * 4),
		 *dom = malloc((n + 1) * 4);
	unsigned char *isr = calloc(n + 1, 1);
	struct hd__dfs d;
	size_t j;
	int ev, changed;

	memset(po, 0xff, (n + 1) * 4);
	if (hd__dfs_init(&d, g, NULL, NULL))
		abort();
	for (j = 0; j < nroots; j++) {
		isr[roots[j]] = 1;
		if (!hd__dfs_start(&d, roots[j]))
			continue;
		while ((ev = hd__dfs_step(&d, &u, &x)) != HD__DFS_DONE)
			if (ev == HD__DFS_LEAVE) {
				po[x] = np;
				order[np++] = x;
			}
	}
	hd__dfs_free(&d);
	memset(dom, 0xff, (n + 1) * 4);
	dom[np] = np;
	do {
		changed = 0;
		for (k = np; k-- > 0;) {
			v = order[k];
			nd = isr[v] ? np : HD__NONE;
			hd__csr_range(rv, v, &a, &b);
			for (i = a; i < b; i++) {
				p = po[hd__csr_at(rv, i)];
				if (p == HD__NONE || dom[p] == HD__NONE)
					continue;
				nd = nd == HD__NONE ? p :
						      chk_intersect(dom, p, nd);
			}
			if (dom[k] != nd) {
				dom[k] = nd;
				changed = 1;
			}
		}
	} while (changed);
	for (v = 0; v < n; v++)
		out[v] = po[v] == HD__NONE ? HD__NONE :
			 dom[po[v]] == np  ? n :
					     order[dom[po[v]]];
	free(po);
	free(order);
	free(dom);
	free(isr);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void test_graph__lt_vs_chk(void)
{
	uint32_t from[400], to[400], roots[6], want[60], got[60];
	struct hd__csr g, r;
	int round;
	uint32_t v;

	for (round = 0; round < 2000; round++) {
		uint32_t n = 1 + rnd(60), ne = rnd(400), nr = 1 + rnd(6), i;

		for (i = 0; i < ne; i++) {
			from[i] = rnd(n);
			to[i] = rnd(n);
		}
		for (i = 0; i < nr; i++)
			roots[i] = rnd(n);
		T_RC(hd__csr_from_edges(&g, n, from, to, ne), 0);
		T_RC(hd__csr_reverse(&r, &g), 0);
		chk(&g, &r, roots, nr, want);
		T_ASSERT(!dom_of(&g, roots, nr, got));
		for (v = 0; v < n; v++)
			if (got[v] != want[v]) {
				T_FAIL("round %d: idom(%u) = %u, CHK says %u",
				       round, v, got[v], want[v]);
				return;
			}
		hd__csr_free(&g);
		hd__csr_free(&r);
	}
}

/* ---- the reference: dominator sets by iterative dataflow ---- */

/*
 * Graphs of at most 63 vertices plus the virtual root (bit 63): Dom(root)
 * = {root}, Dom(v) = {v} + the intersection of Dom(p) over v's reached
 * predecessors p whose references count (not cut), the root among them
 * for a vertex of roots[]; iterated to the fixed point from "everything".
 * idom(v) is v's strict dominator with the most dominators itself. Out
 * of range targets and skipped vertices are not there. Obviously right
 * and quadratic: small graphs only.
 */
#define DF_MAX 63

static void df_idoms(uint32_t n, const uint32_t *from, const uint32_t *to,
		     size_t ne, const uint32_t *roots, size_t nr,
		     const unsigned char *cut, const unsigned char *skip,
		     const struct hd__edge_cut *ecut, uint32_t *out)
{
	uint64_t dom[DF_MAX], all = 0, reach = 0, nd, best;
	const uint64_t R = 1ull << DF_MAX;
	uint32_t v, d;
	size_t i;
	int changed;

#define DF_OK(x) ((x) < n && !(skip && hd__bit(skip, (x))))
#define DF_CUT(x) (cut && hd__bit(cut, (x)))
#define DF_ECUT(i) (ecut && to[i] < n && hd__bit(ecut->from, from[i]) && \
		    hd__bit(ecut->to, to[i]))
	/* reached: from the roots, along edges of vertices not cut */
	for (i = 0; i < nr; i++)
		if (DF_OK(roots[i]))
			reach |= 1ull << roots[i];
	do {
		changed = 0;
		for (i = 0; i < ne; i++)
			if (reach >> from[i] & 1 && !DF_CUT(from[i]) &&
			    !DF_ECUT(i) && DF_OK(to[i]) &&
			    !(reach >> to[i] & 1)) {
				reach |= 1ull << to[i];
				changed = 1;
			}
	} while (changed);
	all = reach | R;
	for (v = 0; v < n; v++)
		dom[v] = all;
	do {
		changed = 0;
		for (v = 0; v < n; v++) {
			if (!(reach >> v & 1))
				continue;
			nd = all;
			for (i = 0; i < nr; i++)
				if (roots[i] == v)
					nd = R; /* Dom(root) = {root} */
			for (i = 0; i < ne; i++)
				if (to[i] == v && from[i] < n &&
				    reach >> from[i] & 1 && !DF_CUT(from[i]) &&
				    !DF_ECUT(i))
					nd &= dom[from[i]];
			nd |= 1ull << v;
			if (nd != dom[v]) {
				dom[v] = nd;
				changed = 1;
			}
		}
	} while (changed);
	for (v = 0; v < n; v++) {
		out[v] = HD__NONE;
		if (!(reach >> v & 1))
			continue;
		out[v] = n; /* the root, unless a vertex is nearer */
		best = R;
		for (d = 0; d < n; d++)
			if (d != v && dom[v] >> d & 1 &&
			    (dom[d] & ~best) && (dom[d] & best) == best) {
				best = dom[d];
				out[v] = d;
			}
	}
#undef DF_OK
#undef DF_CUT
#undef DF_ECUT
}

/* An owned CSR whose targets may be out of range (a damaged store's):
 * from[i] < n, to[i] anything; each vertex's targets in edge order. */
static void raw_csr(struct hd__csr *g, uint32_t n, const uint32_t *from,
		    const uint32_t *to, size_t ne)
{
	size_t i;
	uint32_t v;

	memset(g, 0, sizeof(*g));
	g->n = n;
	g->off = calloc(n + 1, 4);
	g->adj = malloc((ne + 1) * 4);
	g->acap = ne + 1;
	g->e = ne;
	if (!g->off || !g->adj)
		abort();
	for (i = 0; i < ne; i++)
		g->off[from[i] + 1]++;
	for (v = 0; v < n; v++)
		g->off[v + 1] += g->off[v];
	{
		uint32_t *cur = malloc((n + 1) * 4);

		memcpy(cur, g->off, (n + 1) * 4);
		for (i = 0; i < ne; i++)
			g->adj[cur[from[i]]++] = to[i];
		free(cur);
	}
}

static void raw_free(struct hd__csr *g)
{
	free(g->off);
	free(g->adj);
	memset(g, 0, sizeof(*g));
}

/*
 * hd__dominators against df_idoms on random graphs: unreached vertices,
 * self loops, multi-edges, several (and repeated, and skipped) roots,
 * cut and skipped vertices, out-of-range targets and referrers, and
 * chain-like graphs. Also the numbering: dfn is the preorder of
 * hd__dfs from the roots in order (same cut and skip), vertex[] its
 * inverse, idom[w] < w.
 */
static void test_graph__dom_vs_dataflow(void)
{
	uint32_t from[320], to[320], pf[330], pt[330], roots[8];
	uint32_t want[DF_MAX], got[DF_MAX], pre[DF_MAX + 1];
	unsigned char cut[8], skip[8], efrom[8], eto[8];
	struct hd__edge_cut ec = { efrom, eto };
	struct hd__csr g, r;
	struct hd__dom d;
	struct hd__dfs s;
	int round, ev, bad = 0;

	for (round = 0; round < 20000 && !bad; round++) {
		uint32_t n = 1 + rnd(DF_MAX), ne = rnd(300), nr = 1 + rnd(8);
		uint32_t i, np = 0, npre = 0, u, x, v, shape = rnd(4);
		int withcut = rnd(3) == 0, withskip = rnd(3) == 0;
		int withecut = rnd(3) == 0;

		if (shape == 0 && n > 1) { /* a chain, a few more edges */
			ne = n - 1 + rnd(4);
			for (i = 0; i < n - 1; i++) {
				from[i] = i;
				to[i] = i + 1;
			}
			for (; i < ne; i++) {
				from[i] = rnd(n);
				to[i] = rnd(n);
			}
		} else {
			for (i = 0; i < ne; i++) {
				from[i] = rnd(n);
				/* sometimes a self loop, now and then damaged */
				to[i] = rnd(8) == 0 ? from[i] :
					rnd(40) == 0 ? n + rnd(3) :
						       rnd(n);
			}
		}
		for (i = 0; i < nr; i++)
			roots[i] = rnd(12) == 0 ? n + rnd(2) : rnd(n);
		memset(cut, 0, sizeof(cut));
		memset(skip, 0, sizeof(skip));
		memset(efrom, 0, sizeof(efrom));
		memset(eto, 0, sizeof(eto));
		for (v = 0; v < n; v++) {
			if (withecut && rnd(4) == 0)
				hd__bit_set(efrom, v);
			if (withecut && rnd(3) == 0)
				hd__bit_set(eto, v);
			if (withcut && rnd(6) == 0)
				hd__bit_set(cut, v);
			if (withskip && rnd(8) == 0)
				hd__bit_set(skip, v);
		}
		raw_csr(&g, n, from, to, ne);
		/* the referrers: the reverse, plus a damaged source or two */
		for (i = 0; i < ne; i++)
			if (to[i] < n) {
				pf[np] = to[i];
				pt[np++] = from[i];
			}
		for (i = rnd(3); i > 0; i--) {
			pf[np] = rnd(n);
			pt[np++] = n + rnd(5);
		}
		raw_csr(&r, n, pf, pt, np);
		df_idoms(n, from, to, ne, roots, nr, withcut ? cut : NULL,
			 withskip ? skip : NULL, withecut ? &ec : NULL, want);
		T_RC(hd__dominators(&d, &g, &r, withcut ? cut : NULL,
				    withskip ? skip : NULL,
				    withecut ? &ec : NULL, roots, nr), 0);
		idoms(&d, got);
		for (v = 0; v < n && !bad; v++)
			if (got[v] != want[v]) {
				T_FAIL("round %d (n %u, %u edges, %u roots%s%s%s): "
				       "idom(%u) = %u, dataflow says %u",
				       round, n, ne, nr, withcut ? ", cut" : "",
				       withskip ? ", skip" : "",
				       withecut ? ", edge cut" : "", v, got[v],
				       want[v]);
				bad = 1;
			}
		/* the numbering: hd__dfs's preorder (which follows every
		 * edge: not compared when edges are cut) */
		T_RC(hd__dfs_init(&s, &g, withcut ? cut : NULL,
				  withskip ? skip : NULL), 0);
		for (i = 0; i < nr && !withecut; i++) {
			if (!hd__dfs_start(&s, roots[i]))
				continue;
			while ((ev = hd__dfs_step(&s, &u, &x)) != HD__DFS_DONE)
				if (ev == HD__DFS_ENTER)
					pre[npre++] = x;
		}
		hd__dfs_free(&s);
		if (!bad && !withecut && d.n != npre + 1) {
			T_FAIL("round %d: %u numbered, the DFS enters %u",
			       round, d.n - 1, npre);
			bad = 1;
		}
		for (i = 0; i < npre && !bad; i++)
			if (d.dfn[pre[i]] != i + 2 || d.vertex[i + 2] != pre[i] ||
			    d.idom[i + 2] >= i + 2) {
				T_FAIL("round %d: vertex %u is dfn %u, "
				       "preorder %u", round, pre[i],
				       d.dfn[pre[i]], i + 2);
				bad = 1;
			}
		hd__dom_free(&d);
		raw_free(&g);
		raw_free(&r);
	}
	T_EQ(bad, 0);
}

/* A 300,000-long ladder (i -> i + 1 and i -> i + 2): every vertex but
 * the first is dominated by the first alone, each semidominator found
 * through a long EVAL path. Quadratic code would not finish. */
static void test_graph__dom_ladder(void)
{
	uint32_t *a = malloc(2 * CHAIN * 4), *b = malloc(2 * CHAIN * 4);
	uint32_t i, ne = 0, root = 0, bad = 0;
	struct hd__csr g, r;
	struct hd__dom d;

	T_ASSERT(a && b);
	for (i = 0; i + 1 < CHAIN; i++) {
		a[ne] = i;
		b[ne++] = i + 1;
		if (i + 2 < CHAIN) {
			a[ne] = i;
			b[ne++] = i + 2;
		}
	}
	T_RC(hd__csr_from_edges(&g, CHAIN, a, b, ne), 0);
	T_RC(hd__csr_reverse(&r, &g), 0);
	T_RC(hd__dominators(&d, &g, &r, NULL, NULL, NULL, &root, 1), 0);
	T_EQ(d.n, CHAIN + 1);
	for (i = 1; i < CHAIN; i++)
		if (d.vertex[d.idom[d.dfn[i]]] != 0 ||
		    d.dfn[i] != i + 2)
			bad++;
	T_EQ(bad, 0);
	T_EQ(d.idom[d.dfn[0]], 1);
	hd__dom_free(&d);
	hd__csr_free(&g);
	hd__csr_free(&r);
	free(a);
	free(b);
}

static void test_graph__vector_bitmap(void)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0, i;
	unsigned char *m = hd__bitmap_new(77);

	T_ASSERT(m);
	for (i = 0; i < 1000; i++)
		T_RC(hd__push_u32(&v, &n, &cap, (uint32_t)i * 3), 0);
	T_EQ(n, 1000);
	T_ASSERT(cap >= 1000);
	T_EQ(v[999], 2997);
	HD_FREE(v, cap);
	hd__bit_set(m, 76);
	hd__bit_set(m, 8);
	T_EQ(hd__bit(m, 76), 1);
	T_EQ(hd__bit(m, 8), 1);
	T_EQ(hd__bit(m, 7), 0);
	hd__bit_clear(m, 8);
	T_EQ(hd__bit(m, 8), 0);
	hd__bitmap_free(m, 77);
}

static const struct t_case cases[] = {
	T_CASE(graph__csr),
	T_CASE(graph__dfs_order),
	T_CASE(graph__scc_cycle),
	T_CASE(graph__chain),
	T_CASE(graph__dominators_classic),
	T_CASE(graph__lt_vs_chk),
	T_CASE(graph__dom_vs_dataflow),
	T_CASE(graph__dom_ladder),
	T_CASE(graph__vector_bitmap),
};

T_MAIN(cases)
