/*
 * t_domtree_children.c - hd_domtree_children: the dominator tree's
 * children of every node, largest retained memsize first, then
 * ascending node id (serve's tree view). A hand-built graph with a tie,
 * the virtual root's children, unreached nodes and nodes out of range;
 * random graphs against a plain recount (every node whose idom is v,
 * sorted by the rule); the objects' order (views.c), built and kept.
 *
 * Node i has memsize 40 + i (tgraph.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapdump.h"
#include "t.h"
#include "tgraph.h"

static void add_root(struct graph *g, uint32_t v)
{
	g->root = realloc(g->root, (g->nroot + 1) * sizeof(*g->root));
	if (!g->root)
		abort();
	g->root[g->nroot++] = v;
}

/*
 * root -> 0, 5;  0 -> 1, 2, 3;  1 -> 6;  3 -> 4;  8 -> 7 (8, 7 unreached)
 * retained: 1 = 41 + 46 = 87, 3 = 43 + 44 = 87 (a tie: 1 first), 2 = 42
 */
static void test_domtree_children__ordered(void)
{
	struct graph g;
	hd_store *s;
	hd_domtree *d = NULL;
	hd_domtree_children *c = NULL;
	const hd_node_id *k;
	uint32_t n;

	g_init(&g, 9);
	add_root(&g, 0);
	add_root(&g, 5);
	g_edge(&g, 0, 1);
	g_edge(&g, 0, 2);
	g_edge(&g, 0, 3);
	g_edge(&g, 1, 6);
	g_edge(&g, 3, 4);
	g_edge(&g, 8, 7);
	T_ASSERT((s = g_store(&g)));
	T_RC(hd_domtree_new(&d, s, 0, NULL), 0);
	T_RC(hd_domtree_children_build(&c, d, s, NULL), 0);
	k = hd_domtree_children_of(c, 0, &n);
	T_EQ(n, 3);
	T_EQ(k[0], 1);
	T_EQ(k[1], 3);
	T_EQ(k[2], 2);
	k = hd_domtree_children_of(c, HD_DOM_ROOT, &n);
	T_EQ(n, 2);
	T_EQ(k[0], 0);
	T_EQ(k[1], 5);
	hd_domtree_children_of(c, 6, &n);
	T_EQ(n, 0);
	/* unreached: no children, in no list */
	hd_domtree_children_of(c, 8, &n);
	T_EQ(n, 0);
	T_ASSERT(hd_domtree_children_of(c, 9, &n) == NULL);
	T_EQ(n, 0);
	T_EQ(hd_domtree_children_retained(c)[1], 87);
	T_EQ(hd_domtree_children_retained(c)[7], 0);
	hd_domtree_children_free(c);
	hd_domtree_free(d);
	hd_store_close(s);
	g_free(&g);
}

static void test_domtree_children__bad_arguments(void)
{
	hd_domtree_children *c = (hd_domtree_children *)1;
	hd_error err = { 0 };

	T_RC(hd_domtree_children_build(&c, NULL, NULL, &err), HD_EINVAL);
	T_ASSERT(c == NULL);
	T_ASSERT(hd_domtree_children_of(NULL, 0, NULL) == NULL);
	T_ASSERT(hd_domtree_children_retained(NULL) == NULL);
	hd_domtree_children_free(NULL);
}

/* Random graphs: every child list is the nodes whose idom is v, in the
 * order (retained desc, id asc), and every reached node is in one. */
static void test_domtree_children__random(void)
{
	int round;

	for (round = 0; round < 20; round++) {
		uint32_t nn = 50 + rnd(2000), i, v, total = 0, cn, j;
		struct graph g;
		hd_store *s;
		hd_domtree *d = NULL;
		hd_domtree_children *c = NULL;
		const uint64_t *ret;
		const hd_node_id *k;
		uint64_t mem;

		g_init(&g, nn);
		for (i = 0; i < 3; i++)
			add_root(&g, rnd(nn));
		for (i = 0; i < nn * 2; i++)
			g_edge(&g, rnd(nn), rnd(nn));
		T_ASSERT((s = g_store(&g)));
		T_RC(hd_domtree_new(&d, s, 0, NULL), 0);
		T_RC(hd_domtree_children_build(&c, d, s, NULL), 0);
		ret = hd_domtree_children_retained(c);
		for (v = 0; v <= nn; v++) {
			hd_node_id p = v == nn ? HD_DOM_ROOT : v;

			k = hd_domtree_children_of(c, p, &cn);
			for (j = 0, i = 0; i < nn; i++)
				j += hd_domtree_idom(d, i) == p;
			T_EQ(cn, j);
			for (j = 0; j < cn; j++) {
				T_EQ(hd_domtree_idom(d, k[j]), p);
				if (j)
					T_ASSERT(ret[k[j - 1]] > ret[k[j]] ||
						 (ret[k[j - 1]] == ret[k[j]] &&
						  k[j - 1] < k[j]));
			}
			total += cn;
		}
		T_EQ(total, hd_domtree_reached(d, &mem));
		hd_domtree_children_free(c);
		hd_domtree_free(d);
		hd_store_close(s);
		g_free(&g);
	}
}

/* Kept in a store (hd_store_set_domtree): opened back, the same
 * children and retained sizes as sorted, on random graphs; a store
 * without them HD_ENOTFOUND (damaged ones: tests/cli/serve_state.sh). */
static void test_domtree_children__stored(void)
{
	int round;

	for (round = 0; round < 10; round++) {
		char path[] = "/tmp/t_domkids_XXXXXX";
		uint32_t nn = 50 + rnd(2000), i, v, cn, on;
		struct graph g;
		hd_store *s, *o = NULL;
		hd_domtree *d = NULL, *e = NULL;
		hd_domtree_children *c = NULL, *oc = NULL;
		const hd_node_id *k, *ok;
		hd_error err = { 0 };
		int fd;

		g_init(&g, nn);
		for (i = 0; i < 3; i++)
			add_root(&g, rnd(nn));
		for (i = 0; i < nn * 2; i++)
			g_edge(&g, rnd(nn), rnd(nn));
		T_ASSERT((s = g_store(&g)));
		T_RC(hd_domtree_new(&d, s, 0, NULL), 0);
		/* a built store without the tree keeps no children */
		T_RC(hd_domtree_children_open(&oc, d, s, &err), HD_ENOTFOUND);
		T_ASSERT(oc == NULL);
		T_RC(hd_domtree_children_build(&c, d, s, NULL), 0);
		T_RC(hd_store_set_domtree(s, d, NULL), 0);
		fd = mkstemp(path);
		T_ASSERT(fd >= 0);
		close(fd);
		T_RC(hd_store_write(s, path, NULL), 0);
		T_RC(hd_store_open(&o, path, NULL), 0);
		T_RC(hd_domtree_new(&e, o, 0, NULL), 0);
		T_RC(hd_domtree_children_open(&oc, e, o, NULL), 0);
		for (v = 0; v <= nn; v++) {
			hd_node_id p = v == nn ? HD_DOM_ROOT : v;

			k = hd_domtree_children_of(c, p, &cn);
			ok = hd_domtree_children_of(oc, p, &on);
			T_EQ(on, cn);
			for (i = 0; i < cn && i < on; i++)
				T_EQ(ok[i], k[i]);
		}
		for (v = 0; v < nn; v++)
			T_EQ(hd_domtree_children_retained(oc)[v],
			     hd_domtree_children_retained(c)[v]);
		hd_domtree_children_free(oc);
		oc = NULL;
		hd_domtree_children_free(c);
		hd_domtree_free(e);
		hd_domtree_free(d);
		hd_store_close(o);
		hd_store_close(s);
		unlink(path);
		g_free(&g);
	}
}

/* pairs by the objects' order, through the library's rule */
struct pair {
	uint64_t m;
	hd_node_id id;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return hd_retained_before(x->m, x->id, y->m, y->id) ? -1 :
	       hd_retained_before(y->m, y->id, x->m, x->id) ? 1 : 0;
}

/* The objects' order (views.c): its rule; built on random graphs, every
 * node once in a plain qsort's order; kept in a store (hd_store_set_views,
 * HD_VIEW_ORDER) and opened back the same; HD_ENOTFOUND for a store
 * without it and for a tree computed rather than stored (damaged and
 * stale ones: tests/cli/serve_state.sh). */
static void test_domtree_children__objects_order(void)
{
	int round;

	T_ASSERT(hd_retained_before(5, 9, 4, 0));
	T_ASSERT(!hd_retained_before(4, 0, 5, 9));
	T_ASSERT(hd_retained_before(5, 1, 5, 2));
	T_ASSERT(!hd_retained_before(5, 2, 5, 1));
	T_ASSERT(!hd_retained_before(5, 2, 5, 2));
	for (round = 0; round < 10; round++) {
		char path[] = "/tmp/t_domorder_XXXXXX";
		uint32_t nn = 50 + rnd(2000), i;
		struct graph g;
		hd_store *s, *o = NULL;
		hd_domtree *d = NULL, *e = NULL;
		hd_retained_order *b = NULL, *ko = NULL;
		const hd_node_id *bn, *kn;
		size_t n, kn_n;
		struct pair *ref;
		hd_error err = { 0 };
		int fd;

		g_init(&g, nn);
		for (i = 0; i < 3; i++)
			add_root(&g, rnd(nn));
		for (i = 0; i < nn; i++)
			g_edge(&g, rnd(nn), rnd(nn));
		T_ASSERT((s = g_store(&g)));
		T_RC(hd_domtree_new(&d, s, 0, NULL), 0);
		T_RC(hd_retained_order_build(&b, d, s, NULL), 0);
		bn = hd_retained_order_nodes(b, &n);
		T_EQ(n, nn);
		T_ASSERT((ref = calloc(nn, sizeof(*ref))));
		for (i = 0; i < nn; i++) {
			ref[i].id = i;
			hd_domtree_retained(d, i, &ref[i].m);
		}
		qsort(ref, nn, sizeof(*ref), cmp_pair);
		for (i = 0; i < nn && i < n; i++)
			T_EQ(bn[i], ref[i].id);
		/* none kept in a built store yet */
		T_RC(hd_retained_order_open(&ko, d, s, &err), HD_ENOTFOUND);
		T_RC(hd_store_set_domtree(s, d, NULL), 0);
		T_RC(hd_store_set_views(s, d, HD_VIEW_ORDER, NULL), 0);
		T_EQ(hd_store_views(s), HD_VIEW_ORDER);
		fd = mkstemp(path);
		T_ASSERT(fd >= 0);
		close(fd);
		T_RC(hd_store_write(s, path, NULL), 0);
		T_RC(hd_store_open(&o, path, NULL), 0);
		T_RC(hd_domtree_new(&e, o, 0, NULL), 0);
		T_RC(hd_retained_order_open(&ko, e, o, NULL), 0);
		kn = hd_retained_order_nodes(ko, &kn_n);
		T_EQ(kn_n, n);
		for (i = 0; i < n && i < kn_n; i++)
			T_EQ(kn[i], bn[i]);
		hd_retained_order_free(ko);
		ko = NULL;
		/* a tree computed, not the store's: not this order's */
		memset(&err, 0, sizeof(err));
		T_RC(hd_retained_order_open(&ko, d, o, &err), HD_ENOTFOUND);
		T_ASSERT(err.msg[0] != '\0');
		free(ref);
		hd_retained_order_free(b);
		hd_domtree_free(e);
		hd_domtree_free(d);
		hd_store_close(o);
		hd_store_close(s);
		unlink(path);
		g_free(&g);
	}
}

static const struct t_case cases[] = {
	T_CASE(domtree_children__ordered),
	T_CASE(domtree_children__bad_arguments),
	T_CASE(domtree_children__random),
	T_CASE(domtree_children__stored),
	T_CASE(domtree_children__objects_order),
};

T_MAIN(cases)
