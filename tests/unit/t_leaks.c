/*
 * t_leaks.c - hd_leaks_build on a small hand-built graph with known
 * answers: the grouping by holder (one holder, several, a root only),
 * the ranking, the fold under a minimum share, --top, the descriptions
 * (keepalive, path, classes, sites), the leak as LATER holds it, and
 * bad options.
 *
 *   root vm -> 0, 8        0 -> 1, 2 (old)
 *   1 -> 3, 4, 5, 7        2 -> 7, 9        3 -> 6 (3..9 new)
 *
 * Suspects: holder 1 (border 3 4 5; retains 3 4 5 6: 43+44+45+46 =
 * 178), holder 2 (border 9: 49), 8 held by a root only (48), 7 held by
 * two old objects (47). The leak: 43 + ... + 49 = 322 bytes.
 */
#include "heapdump.h"
#include "t.h"

#include "tgraph.h"

static hd_store *leak_graph(void)
{
	struct graph g;
	hd_store *s;

	g_init(&g, 10);
	g_edge(&g, 0, 1);
	g_edge(&g, 0, 2);
	g_edge(&g, 1, 3);
	g_edge(&g, 1, 4);
	g_edge(&g, 1, 5);
	g_edge(&g, 1, 7);
	g_edge(&g, 2, 7);
	g_edge(&g, 2, 9);
	g_edge(&g, 3, 6);
	g.root = malloc(2 * sizeof(*g.root));
	g.root[0] = 0;
	g.root[1] = 8;
	g.nroot = 2;
	s = g_store(&g);
	g_free(&g);
	return s;
}

/* d->added (or retained_later) = the nodes lo..hi-1 */
static void new_set(hd_nodes *set, uint64_t *mem, size_t lo, size_t hi)
{
	size_t i;

	set->ids = malloc((hi - lo) * sizeof(*set->ids));
	set->n = set->cap = 0;
	*mem = 0;
	for (i = lo; i < hi; i++) {
		set->ids[set->n++] = (hd_node_id)i;
		*mem += 40 + i;
	}
	set->cap = hi - lo;
}

static void test_leaks__ranked_and_folded(void)
{
	hd_store *s = leak_graph();
	hd_diff_result d;
	hd_leaks_options o = HD_LEAKS_OPTIONS_INIT;
	hd_leaks *l = NULL;
	hd_leaks_totals t;
	hd_stats_totals st;
	const hd_leaks_suspect *p;

	T_ASSERT(s);
	memset(&d, 0, sizeof(d));
	new_set(&d.added, &d.added_memsize, 3, 10);
	T_EQ(d.added_memsize, 322);
	o.min_share = 0.15;
	o.top = 1;
	T_RC(hd_leaks_build(&l, s, &d, &o, NULL), 0);
	hd_leaks_totals_get(&t, l);
	T_EQ(t.leak_count, 7);
	T_EQ(t.leak_memsize, 322);
	T_EQ(t.border, 6);
	T_EQ(t.groups, 4);
	T_EQ(t.shown, 1);
	T_EQ(t.more, 1);       /* holder 2: 49/322 = 15.2% */
	T_EQ(t.folded, 2);     /* 8 and 7: 14.9% and 14.6% */
	T_EQ(t.folded_count, 2);
	T_EQ(t.folded_memsize, 48 + 47);
	T_EQ(t.saturated, 0);
	p = hd_leaks_suspect_get(l, 0);
	T_ASSERT(p);
	T_EQ(p->holder, 1);
	T_EQ(p->first, 3);
	T_EQ(p->border_count, 3);
	T_EQ(p->retained_count, 4);
	T_EQ(p->retained_memsize, 178);
	T_ASSERT(p->share > 0.5527 && p->share < 0.5528); /* 178 / 322 */
	T_EQ(p->keepalive_count, 4);
	T_EQ(p->keepalive_memsize, 178);
	T_ASSERT(p->path);
	T_STREQ(hd_store_root_name(s, p->path->root), "vm");
	T_EQ(p->path->n, 2);
	T_EQ(p->path->nodes[0], 0);
	T_EQ(p->path->nodes[1], 1);
	T_EQ(p->border->n, 3);
	T_EQ(p->border->ids[0], 3);
	T_EQ(p->border->ids[2], 5);
	hd_stats_totals_get(&st, p->classes);
	T_EQ(st.objects, 3);
	hd_stats_totals_get(&st, p->sites);
	T_EQ(st.objects, 4);
	T_EQ(st.memsize, 178);
	/* ranked, but past top: not described */
	p = hd_leaks_suspect_get(l, 1);
	T_EQ(p->holder, 2);
	T_EQ(p->retained_memsize, 49);
	T_EQ(p->keepalive_count, 0);
	T_ASSERT(!p->path && !p->border && !p->classes && !p->sites);
	p = hd_leaks_suspect_get(l, 2);
	T_EQ(p->holder, HD_NODE_NONE);
	T_EQ(p->first, 8);
	T_EQ(p->holders, 0);
	T_EQ(p->roots, 1);
	p = hd_leaks_suspect_get(l, 3);
	T_EQ(p->holder, HD_NODE_NONE);
	T_EQ(p->first, 7);
	T_EQ(p->holders, 2);
	T_EQ(p->roots, 0);
	T_ASSERT(!hd_leaks_suspect_get(l, 4));
	hd_leaks_free(l);
	hd_nodes_free(&d.added);
	hd_store_close(s);
}

static void test_leaks__defaults_describe_all(void)
{
	hd_store *s = leak_graph();
	hd_diff_result d;
	hd_leaks *l = NULL;
	hd_leaks_totals t;
	const hd_leaks_suspect *p;

	T_ASSERT(s);
	memset(&d, 0, sizeof(d));
	new_set(&d.added, &d.added_memsize, 3, 10);
	T_RC(hd_leaks_build(&l, s, &d, NULL, NULL), 0);
	hd_leaks_totals_get(&t, l);
	T_EQ(t.shown, 4);
	T_EQ(t.folded, 0);
	p = hd_leaks_suspect_get(l, 2); /* 8, held by the root */
	T_ASSERT(p->path);
	T_EQ(p->path->n, 1);
	T_EQ(p->path->nodes[0], 8);
	T_EQ(p->keepalive_count, 1);
	p = hd_leaks_suspect_get(l, 3); /* 7 */
	T_ASSERT(p->path);
	T_EQ(p->path->nodes[p->path->n - 1], 7);
	T_EQ(p->border->n, 1);
	hd_leaks_free(l);
	hd_nodes_free(&d.added);
	hd_store_close(s);
}

/* With LATER the leak is retained_later: only 3 and 6 still alive. */
static void test_leaks__later(void)
{
	hd_store *s = leak_graph();
	hd_diff_result d;
	hd_leaks *l = NULL;
	hd_leaks_totals t;
	const hd_leaks_suspect *p;

	T_ASSERT(s);
	memset(&d, 0, sizeof(d));
	d.has_later = 1;
	new_set(&d.added, &d.added_memsize, 3, 10);
	new_set(&d.retained_later, &d.retained_later_memsize, 3, 4);
	d.retained_later.ids[0] = 3;
	d.retained_later.ids = realloc(d.retained_later.ids,
				       2 * sizeof(hd_node_id));
	d.retained_later.ids[1] = 6;
	d.retained_later.n = d.retained_later.cap = 2;
	d.retained_later_memsize = 43 + 46;
	T_RC(hd_leaks_build(&l, s, &d, NULL, NULL), 0);
	hd_leaks_totals_get(&t, l);
	T_EQ(t.leak_count, 2);
	T_EQ(t.leak_memsize, 89);
	T_EQ(t.border, 1);
	T_EQ(t.groups, 1);
	p = hd_leaks_suspect_get(l, 0);
	T_EQ(p->holder, 1);
	T_EQ(p->retained_count, 2);
	T_EQ(p->keepalive_memsize, 89);
	hd_leaks_free(l);
	hd_nodes_free(&d.added);
	hd_nodes_free(&d.retained_later);
	hd_store_close(s);
}

static void test_leaks__bad_options(void)
{
	hd_store *s = leak_graph();
	hd_diff_result d;
	hd_leaks_options o = HD_LEAKS_OPTIONS_INIT;
	hd_leaks *l = (hd_leaks *)&d;
	hd_error err = { 0 };

	T_ASSERT(s);
	memset(&d, 0, sizeof(d));
	o.min_share = 1.5;
	T_RC(hd_leaks_build(&l, s, &d, &o, &err), HD_EINVAL);
	T_ASSERT(!l);
	o = (hd_leaks_options)HD_LEAKS_OPTIONS_INIT;
	o.version = 99;
	T_RC(hd_leaks_build(&l, s, &d, &o, &err), HD_EINVAL);
	T_RC(hd_leaks_build(&l, s, NULL, NULL, &err), HD_EINVAL);
	hd_leaks_free(NULL);
	hd_store_close(s);
}

static const struct t_case cases[] = {
	T_CASE(leaks__ranked_and_folded),
	T_CASE(leaks__defaults_describe_all),
	T_CASE(leaks__later),
	T_CASE(leaks__bad_options),
};

T_MAIN(cases)
