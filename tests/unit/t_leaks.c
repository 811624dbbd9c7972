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


/*
 * The attribution (leak_attr.c) on a graph of every case, with LATER:
 *
 *   roots -> 0, 1, 2, 10, 14, 16      (old)
 *   0 -> 3, 4        subscribers held by their list (leaked)
 *   1 -> 5 -> 3, 4   a cache rebuilt after AFTER (5 young)
 *   2 -> 6 -> 7 -> 8 -> 9   a chain still growing: 6, 7 young
 *   10 -> 11, 12 -> 13      entries sharing one payload
 *   14 -> 15 -> 17 <- 18 <- 16   17 held jointly by two registries
 *   19               leaked, reached by nothing
 *
 * Owners: 10 (51+52+53 = 156), 2 (48+49 = 97, border 6), 0 (87), 16
 * (58), joint {14, 16} (57), 14 (55); 19 unreached (59); the cache 1
 * and the young objects weigh nothing. 569 bytes in all.
 */
static hd_store *attr_graph(void)
{
	static const uint32_t e[][2] = {
		{ 0, 3 },   { 0, 4 },   { 1, 5 },   { 5, 3 },   { 5, 4 },
		{ 2, 6 },   { 6, 7 },   { 7, 8 },   { 8, 9 },   { 10, 11 },
		{ 10, 12 }, { 11, 13 }, { 12, 13 }, { 14, 15 }, { 15, 17 },
		{ 16, 18 }, { 18, 17 },
	};
	static const uint32_t roots[] = { 0, 1, 2, 10, 14, 16 };
	struct graph g;
	hd_store *s;
	size_t i;

	g_init(&g, 20);
	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		g_edge(&g, e[i][0], e[i][1]);
	g.root = malloc(sizeof(roots));
	memcpy(g.root, roots, sizeof(roots));
	g.nroot = sizeof(roots) / sizeof(roots[0]);
	s = g_store(&g);
	g_free(&g);
	return s;
}

static void set_of(hd_nodes *set, uint64_t *mem, const uint32_t *ids,
		   size_t n)
{
	size_t i;

	set->ids = malloc(n * sizeof(*set->ids));
	set->n = set->cap = n;
	*mem = 0;
	for (i = 0; i < n; i++) {
		set->ids[i] = ids[i];
		*mem += 40 + ids[i];
	}
}

static void attr_diff(hd_diff_result *d)
{
	static const uint32_t leak[] = { 3,  4,  8,  9,  11, 12,
					 13, 15, 17, 18, 19 };
	static const uint32_t young[] = { 5, 6, 7 };

	memset(d, 0, sizeof(*d));
	d->has_later = 1;
	set_of(&d->retained_later, &d->retained_later_memsize, leak,
	       sizeof(leak) / sizeof(leak[0]));
	set_of(&d->young_later, &d->young_later_memsize, young,
	       sizeof(young) / sizeof(young[0]));
}

static void attr_diff_free(hd_diff_result *d)
{
	hd_nodes_free(&d->retained_later);
	hd_nodes_free(&d->young_later);
}

static void test_leaks__attribution_adds_up(void)
{
	hd_store *s = attr_graph();
	hd_diff_result d;
	hd_leaks_options o = HD_LEAKS_OPTIONS_INIT;
	hd_leaks *l = NULL;
	hd_leaks_totals t;
	const hd_leaks_suspect *p;
	uint64_t sum = 0;
	size_t i;

	T_ASSERT(s);
	attr_diff(&d);
	T_EQ(d.retained_later_memsize, 569);
	o.min_share = 0;
	o.top = 10;
	o.min_leak = 500;
	T_RC(hd_leaks_build(&l, s, &d, &o, NULL), 0);
	hd_leaks_totals_get(&t, l);
	T_EQ(t.leak_memsize, 569);
	T_EQ(t.groups, 6);
	T_EQ(t.joint, 1);
	T_EQ(t.unreached_count, 1);
	T_EQ(t.unreached_memsize, 59);
	T_EQ(t.young_count, 3);
	T_EQ(t.vm_count, 0);
	for (i = 0; i < t.groups; i++)
		sum += hd_leaks_suspect_get(l, i)->retained_memsize;
	T_EQ(sum + t.unreached_memsize + t.vm_memsize, t.leak_memsize);
	p = hd_leaks_suspect_get(l, 0); /* the entries' shared payload */
	T_EQ(p->kind, HD_SUSPECT_HOLDER);
	T_EQ(p->holder, 10);
	T_EQ(p->retained_count, 3);
	T_EQ(p->retained_memsize, 156);
	T_EQ(p->keepalive_count, 3);
	p = hd_leaks_suspect_get(l, 1); /* the chain, through its young head */
	T_EQ(p->holder, 2);
	T_EQ(p->retained_memsize, 97);
	T_EQ(p->border->n, 1);
	T_EQ(p->border->ids[0], 6);
	T_EQ(p->keepalive_count, 2);
	p = hd_leaks_suspect_get(l, 2); /* not the cache rebuilt later */
	T_EQ(p->holder, 0);
	T_EQ(p->retained_memsize, 87);
	T_EQ(p->border_count, 2);
	p = hd_leaks_suspect_get(l, 3);
	T_EQ(p->holder, 16);
	T_EQ(p->retained_memsize, 58);
	p = hd_leaks_suspect_get(l, 4);
	T_EQ(p->kind, HD_SUSPECT_JOINT);
	T_EQ(p->holder, HD_NODE_NONE);
	T_EQ(p->first, 17);
	T_EQ(p->holders, 2);
	T_EQ(p->holder_list->n, 2);
	T_EQ(p->holder_list->ids[0], 14);
	T_EQ(p->holder_list->ids[1], 16);
	T_EQ(p->retained_memsize, 57);
	T_ASSERT(p->path);
	T_EQ(p->path->nodes[p->path->n - 1], 17);
	p = hd_leaks_suspect_get(l, 5);
	T_EQ(p->holder, 14);
	T_EQ(p->retained_memsize, 55);
	T_ASSERT(!hd_leaks_suspect_get(l, 6));
	for (i = 0; i < t.groups; i++)
		T_ASSERT(hd_leaks_suspect_get(l, i)->holder != 1);
	/* five suspects held the same way (vm -> Object) hold more than
	 * the first alone: the shape is named first */
	T_EQ(t.significant, 1);
	T_EQ(t.min_leak, 500);
	T_EQ(t.first_kind, HD_LEAKS_FIRST_CLUSTER);
	T_EQ(t.first_index, 0);
	T_ASSERT(t.first_share > 453.0 / 569 - 1e-9 &&
		 t.first_share < 453.0 / 569 + 1e-9);
	hd_leaks_free(l);
	attr_diff_free(&d);
	hd_store_close(s);
}

/* Without the young set, the chain's young head is an old holder: the
 * three-dump rule is what names 2 and 0. */
static void test_leaks__young_are_walked_through(void)
{
	hd_store *s = attr_graph();
	hd_diff_result d;
	hd_leaks *l = NULL;
	hd_leaks_totals t;
	size_t i;
	int by2 = 0, by7 = 0;

	T_ASSERT(s);
	attr_diff(&d);
	T_RC(hd_leaks_build(&l, s, &d, NULL, NULL), 0);
	for (i = 0; hd_leaks_suspect_get(l, i); i++)
		by2 |= hd_leaks_suspect_get(l, i)->holder == 2;
	hd_leaks_free(l);
	hd_nodes_free(&d.young_later);
	memset(&d.young_later, 0, sizeof(d.young_later));
	T_RC(hd_leaks_build(&l, s, &d, NULL, NULL), 0);
	for (i = 0; hd_leaks_suspect_get(l, i); i++)
		by7 |= hd_leaks_suspect_get(l, i)->holder == 7;
	hd_leaks_totals_get(&t, l);
	T_EQ(t.young_count, 0);
	T_ASSERT(by2 && by7);
	hd_leaks_free(l);
	attr_diff_free(&d);
	hd_store_close(s);
}

/* Under min_leak (2 KiB by default): no significant leak, nothing first. */
static void test_leaks__no_significant_leak(void)
{
	hd_store *s = attr_graph();
	hd_diff_result d;
	hd_leaks *l = NULL;
	hd_leaks_totals t;
	hd_leaks_options o = HD_LEAKS_OPTIONS_INIT;

	T_ASSERT(s);
	attr_diff(&d);
	T_RC(hd_leaks_build(&l, s, &d, NULL, NULL), 0);
	hd_leaks_totals_get(&t, l);
	T_EQ(t.significant, 0);
	T_EQ(t.min_leak, HD_LEAKS_MIN_LEAK);
	T_EQ(t.first_kind, HD_LEAKS_FIRST_NONE);
	T_ASSERT(t.groups > 0); /* still ranked, for whoever asks */
	{
		/* beside a process that grew outside Ruby objects, the
		 * sentence says where the leak is not, never "no leak" */
		char a[512], b[512];
		hd_process_verdict pv;

		memset(&pv, 0, sizeof(pv));
		hd_leaks_verdict_text(a, sizeof(a), l);
		T_ASSERT(!strncmp(a, "no significant ", 15));
		hd_leaks_verdict_text_process(b, sizeof(b), l, NULL);
		T_STREQ(b, a);
		hd_leaks_verdict_text_process(b, sizeof(b), l, &pv);
		T_STREQ(b, a); /* not known */
		pv.known = 1;
		hd_leaks_verdict_text_process(b, sizeof(b), l, &pv);
		T_STREQ(b, a); /* known, not outside */
		pv.outside_ruby = 1;
		hd_leaks_verdict_text_process(b, sizeof(b), l, &pv);
		T_ASSERT(strstr(b, " is not in the Ruby heap: ") != NULL);
		T_ASSERT(strstr(b, "no significant") == NULL);
		T_STREQ(strchr(b, ':'), strchr(a, ':')); /* the same figures */
	}
	hd_leaks_free(l);
	/* options of version 1 (no min_leak) are read as such */
	o.version = 1;
	o.min_leak = 1;
	T_RC(hd_leaks_build(&l, s, &d, &o, NULL), 0);
	hd_leaks_totals_get(&t, l);
	T_EQ(t.min_leak, HD_LEAKS_MIN_LEAK);
	hd_leaks_free(l);
	o.version = HD_LEAKS_OPTIONS_VERSION;
	T_RC(hd_leaks_build(&l, s, &d, &o, NULL), 0);
	hd_leaks_totals_get(&t, l);
	T_EQ(t.significant, 1);
	hd_leaks_free(l);
	attr_diff_free(&d);
	hd_store_close(s);
}

/*
 * A widget held by two Method objects, one in each of two Arrays of one
 * Hash (an event bus's handlers): the joint memory is lifted to the
 * Hash where the Arrays' holders meet, with both Arrays' groups.
 *
 *   root -> 0 (Hash) -> 1, 2 (Arrays)     old
 *   1 -> 3, 2 -> 4 (Methods) -> 5 (Widget)   new
 */
static void test_leaks__joint_lifted_to_where_holders_meet(void)
{
	static const uint32_t leak[] = { 3, 4, 5 };
	struct graph g;
	hd_store *s;
	hd_diff_result d;
	hd_leaks *l = NULL;
	hd_leaks_totals t;
	const hd_leaks_suspect *p;

	g_init(&g, 6);
	g_edge(&g, 0, 1);
	g_edge(&g, 0, 2);
	g_edge(&g, 1, 3);
	g_edge(&g, 2, 4);
	g_edge(&g, 3, 5);
	g_edge(&g, 4, 5);
	g.root = malloc(sizeof(*g.root));
	g.root[0] = 0;
	g.nroot = 1;
	s = g_store(&g);
	g_free(&g);
	T_ASSERT(s);
	memset(&d, 0, sizeof(d));
	set_of(&d.added, &d.added_memsize, leak, 3);
	T_RC(hd_leaks_build(&l, s, &d, NULL, NULL), 0);
	hd_leaks_totals_get(&t, l);
	T_EQ(t.groups, 1);
	T_EQ(t.joint, 0);
	p = hd_leaks_suspect_get(l, 0);
	T_EQ(p->kind, HD_SUSPECT_HOLDER);
	T_EQ(p->holder, 0);
	T_EQ(p->retained_count, 3);
	T_EQ(p->retained_memsize, 43 + 44 + 45);
	T_EQ(p->border_count, 2);
	hd_leaks_free(l);
	hd_nodes_free(&d.added);
	hd_store_close(s);
}

static const struct t_case cases[] = {
	T_CASE(leaks__ranked_and_folded),
	T_CASE(leaks__defaults_describe_all),
	T_CASE(leaks__later),
	T_CASE(leaks__bad_options),
	T_CASE(leaks__attribution_adds_up),
	T_CASE(leaks__young_are_walked_through),
	T_CASE(leaks__no_significant_leak),
	T_CASE(leaks__joint_lifted_to_where_holders_meet),
};

T_MAIN(cases)
