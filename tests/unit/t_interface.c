/*
 * t_interface.c - hd_interface_with on hand-built graphs with known
 * answers, on hostile shapes (a large subgraph shared by 10,000 border
 * objects, a 300,000-node chain, a 1000-node cycle) and against a brute
 * force (BFS per border object; dominators by deleting each border
 * object and testing reachability) on random small graphs.
 */
#include "heapdump.h"
#include "t.h"

#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "tgraph.h"

/* diff = the nodes i with lo <= i < hi */
static void range_set(hd_nodes *d, size_t lo, size_t hi)
{
	size_t i;

	d->ids = malloc((hi - lo + 1) * sizeof(*d->ids));
	d->n = d->cap = 0;
	for (i = lo; i < hi; i++)
		d->ids[d->n++] = (hd_node_id)i;
	d->cap = hi - lo + 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* memdump's chain: old -> B -> C -> D. B keeps 3 alive (memdump says 2). */
static void test_interface__chain(void)
{
	struct graph g;
	hd_store *s;
	hd_interface *x = NULL;
	hd_nodes d;
	const hd_border *b;
	const hd_nodes *self;
	hd_interface_totals t;
	size_t n;

	g_init(&g, 4);
	g_edge(&g, 0, 1);
	g_edge(&g, 1, 2);
	g_edge(&g, 2, 3);
	s = g_store(&g);
	T_ASSERT(s);
	range_set(&d, 1, 4);
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, 1);
	T_EQ(b[0].id, 1);
	T_EQ(b[0].keepalive_count, 3);
	T_EQ(b[0].keepalive_memsize, 41 + 42 + 43);
	T_EQ(b[0].retained_count, 3);
	T_EQ(b[0].retained_memsize, 41 + 42 + 43);
	T_EQ(b[0].holders, 1);
	T_EQ(b[0].holder[0], 0);
	T_EQ(b[0].holder[1], HD_NODE_NONE);
	T_EQ(b[0].roots, 0);
	self = hd_interface_self_border(x);
	T_EQ(self->n, 1);
	T_EQ(self->ids[0], 0);
	hd_interface_totals_get(&t, x);
	T_EQ(t.diff, 3);
	T_EQ(t.reached, 3);
	T_EQ(t.self_border, 1);
	T_EQ(t.diff_border, 1);
	T_EQ(t.components, 3);
	hd_interface_free(x);
	hd_nodes_free(&d);
	hd_store_close(s);
	g_free(&g);
}

/* Two border objects sharing a subgraph: keepalive overlaps, retained
 * does not. 0 old; 1, 2 border; 3 -> 4 shared; 5 only under 1. */
static void test_interface__diamond(void)
{
	struct graph g;
	hd_store *s;
	hd_interface *x = NULL;
	hd_nodes d;
	const hd_border *b;
	hd_interface_totals t;
	size_t n;

	g_init(&g, 6);
	g_edge(&g, 0, 1);
	g_edge(&g, 0, 2);
	g_edge(&g, 0, 2); /* a repeated reference: one holder */
	g_edge(&g, 1, 3);
	g_edge(&g, 2, 3);
	g_edge(&g, 3, 4);
	g_edge(&g, 1, 5);
	s = g_store(&g);
	T_ASSERT(s);
	range_set(&d, 1, 6);
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, 2);
	T_EQ(b[0].keepalive_count, 4);
	T_EQ(b[1].keepalive_count, 3);
	T_EQ(b[1].keepalive_memsize, 42 + 43 + 44);
	T_EQ(b[0].retained_count, 2);
	T_EQ(b[0].retained_memsize, 41 + 45);
	T_EQ(b[1].retained_count, 1);
	T_EQ(b[1].holders, 1);
	hd_interface_totals_get(&t, x);
	T_EQ(t.reached, 5);
	hd_interface_free(x);
	hd_nodes_free(&d);
	hd_store_close(s);
	g_free(&g);
}

/* A 1000-node cycle entered at two places, with a tail. */
static void test_interface__cycle(void)
{
	struct graph g;
	hd_store *s;
	hd_interface *x = NULL;
	hd_nodes d;
	const hd_border *b;
	size_t n, i;

	g_init(&g, 1003);
	for (i = 1; i <= 1000; i++)
		g_edge(&g, (uint32_t)i, (uint32_t)(i == 1000 ? 1 : i + 1));
	g_edge(&g, 0, 1);
	g_edge(&g, 1002, 501);
	g_edge(&g, 700, 1001); /* a tail out of the cycle */
	s = g_store(&g);
	T_ASSERT(s);
	range_set(&d, 1, 1002); /* 1002 is old */
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, 2);
	T_EQ(b[0].id, 1);
	T_EQ(b[1].id, 501);
	T_EQ(b[0].keepalive_count, 1001);
	T_EQ(b[1].keepalive_count, 1001);
	/* 1 alone reaches 2..500; 501 alone 502..1000 and the tail */
	T_EQ(b[0].retained_count, 500);
	T_EQ(b[1].retained_count, 501);
	T_EQ(hd_interface_self_border(x)->n, 2);
	hd_interface_free(x);
	hd_nodes_free(&d);
	hd_store_close(s);
	g_free(&g);
}

/*
 * The hostile case: 10,000 border objects that all reach one shared
 * 100,000-node subgraph (a chain with back edges and forward skips),
 * each with a private object too.
 */
static void test_interface__shared_subgraph(void)
{
	enum { NB = 10000, NS = 100000 };
	struct graph g;
	hd_store *s;
	hd_interface *x = NULL;
	hd_nodes d;
	const hd_border *b;
	size_t n, i;
	/* 0 old; 1..NB border; NB+1..2NB private; then the shared part */
	uint32_t sh = 1 + 2 * NB;
	double t0;

	g_init(&g, sh + NS);
	for (i = 1; i <= NB; i++) {
		g_edge(&g, 0, (uint32_t)i);
		g_edge(&g, (uint32_t)i, (uint32_t)(NB + i));
		g_edge(&g, (uint32_t)i, sh + (uint32_t)(i * 7 % NS));
	}
	for (i = 0; i + 1 < NS; i++) {
		g_edge(&g, sh + (uint32_t)i, sh + (uint32_t)i + 1);
		if (i % 100 == 99)
			g_edge(&g, sh + (uint32_t)i, sh + (uint32_t)(i - 50));
		if (i % 37 == 0 && i + 10 < NS)
			g_edge(&g, sh + (uint32_t)i, sh + (uint32_t)i + 10);
	}
	g_edge(&g, sh + NS - 1, sh); /* one big cycle */
	s = g_store(&g);
	T_ASSERT(s);
	range_set(&d, 1, sh + NS);
	t0 = now();
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	t0 = now() - t0;
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, NB);
	for (i = 0; i < n; i++) {
		T_EQ(b[i].keepalive_count, 2 + NS);
		T_EQ(b[i].retained_count, 2);
	}
	if (t0 > 5.0)
		T_FAIL("took %.2f s", t0);
	hd_interface_free(x);
	hd_nodes_free(&d);
	hd_store_close(s);
	g_free(&g);
}

/* A 300,000-node chain, held at every 1000th node by the old object. */
static void test_interface__long_chain(void)
{
	enum { N = 300000 };
	struct graph g;
	hd_store *s;
	hd_interface *x = NULL;
	hd_nodes d;
	const hd_border *b;
	size_t n, i;

	g_init(&g, N + 1);
	for (i = 1; i < N; i++)
		g_edge(&g, (uint32_t)i, (uint32_t)i + 1);
	for (i = 1; i <= N; i += 1000)
		g_edge(&g, 0, (uint32_t)i);
	s = g_store(&g);
	T_ASSERT(s);
	range_set(&d, 1, N + 1);
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, N / 1000);
	for (i = 0; i < n; i++) {
		T_EQ(b[i].id, 1 + 1000 * i);
		T_EQ(b[i].keepalive_count, N - 1000 * i);
		T_EQ(b[i].retained_count, 1000);
	}
	hd_interface_free(x);
	hd_nodes_free(&d);
	/* node 1 made old: it holds 2, which keeps the rest alive but
	 * retains only up to the next held node */
	d.ids = malloc(N * sizeof(*d.ids));
	d.n = 0;
	d.cap = N;
	for (i = 2; i <= N; i++)
		d.ids[d.n++] = (hd_node_id)i;
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, N / 1000);
	T_EQ(b[0].id, 2);
	T_EQ(b[0].holder[0], 1);
	T_EQ(b[0].keepalive_count, N - 1);
	T_EQ(b[0].retained_count, 999);
	T_EQ(b[1].id, 1001);
	T_EQ(b[1].retained_count, 1000);
	hd_interface_free(x);
	hd_nodes_free(&d);
	hd_store_close(s);
	g_free(&g);
}

/* New objects nobody old holds; an empty DIFF; a DIFF of everything. */
static void test_interface__no_border(void)
{
	struct graph g;
	hd_store *s;
	hd_interface *x = NULL;
	hd_nodes d = { NULL, 0, 0 };
	hd_interface_totals t;
	size_t n;

	g_init(&g, 5);
	g_edge(&g, 2, 3);
	g_edge(&g, 3, 4);
	g_edge(&g, 4, 2);
	g_edge(&g, 2, 0); /* new -> old does not make a border */
	s = g_store(&g);
	T_ASSERT(s);
	range_set(&d, 2, 5);
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	T_ASSERT(hd_interface_diff_border(x, &n) == NULL || n == 0);
	T_EQ(n, 0);
	T_EQ(hd_interface_self_border(x)->n, 0);
	hd_interface_totals_get(&t, x);
	T_EQ(t.diff, 3);
	T_EQ(t.reached, 0);
	T_EQ(t.components, 1);
	hd_interface_free(x);
	hd_nodes_free(&d);
	T_RC(hd_interface_with(&x, s, &d, NULL), 0); /* empty */
	hd_interface_diff_border(x, &n);
	T_EQ(n, 0);
	hd_interface_free(x);
	range_set(&d, 0, 5);
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	hd_interface_diff_border(x, &n);
	T_EQ(n, 0);
	hd_interface_free(x);
	hd_nodes_free(&d);
	hd_interface_free(NULL);
	hd_store_close(s);
	g_free(&g);
}

/* References to no object are ignored; a root makes a border object. */
static void test_interface__dangling_and_roots(void)
{
	struct graph g;
	hd_store *s;
	hd_interface *x = NULL;
	hd_nodes d;
	const hd_border *b;
	hd_error err;
	size_t n;

	g_init(&g, 4);
	g.dangling = 1;
	g_edge(&g, 0, 1);
	g_edge(&g, 2, 3);
	g.root = malloc(2 * sizeof(*g.root));
	g.root[0] = 2;
	g.root[1] = 2;
	g.nroot = 2;
	s = g_store(&g);
	T_ASSERT(s);
	range_set(&d, 1, 4);
	T_RC(hd_interface_with(&x, s, &d, NULL), 0);
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, 2);
	T_EQ(b[0].id, 1);
	T_EQ(b[0].keepalive_count, 1);
	T_EQ(b[0].roots, 0);
	T_EQ(b[1].id, 2);
	T_EQ(b[1].holders, 0);
	T_EQ(b[1].roots, 1);
	T_EQ(b[1].keepalive_count, 2);
	T_EQ(b[1].retained_count, 2);
	hd_interface_free(x);
	/* not ascending */
	d.ids[0] = 3;
	T_RC(hd_interface_with(&x, s, &d, &err), HD_EINVAL);
	T_EQ(err.code, HD_EINVAL);
	T_ASSERT(x == NULL);
	d.ids[0] = 99;
	T_RC(hd_interface_with(&x, s, &d, NULL), HD_EINVAL);
	T_RC(hd_interface_with(NULL, s, &d, NULL), HD_EINVAL);
	hd_nodes_free(&d);
	hd_store_close(s);
	g_free(&g);
}

/* ---- brute force ---- */

/* Marks in seen what the new objects in start reach through new
 * objects, never entering skip. */
static void bfs(const struct graph *g, const unsigned char *isnew,
		const unsigned char *start, uint32_t skip, unsigned char *seen)
{
	uint32_t q[400], head = 0, tail = 0, v;
	size_t i;

	memset(seen, 0, g->n);
	for (v = 0; v < g->n; v++)
		if (start[v] && v != skip) {
			seen[v] = 1;
			q[tail++] = v;
		}
	while (head < tail) {
		v = q[head++];
		for (i = 0; i < g->ne; i++)
			if (g->from[i] == v && isnew[g->to[i]] &&
			    !seen[g->to[i]] && g->to[i] != skip) {
				seen[g->to[i]] = 1;
				q[tail++] = g->to[i];
			}
	}
}

static void test_interface__brute_force(void)
{
	int round;

	/* 300 small graphs, then 30 of up to 400 nodes: more than 64
	 * border components, several batches */
	for (round = 0; round < 330; round++) {
		struct graph g;
		hd_store *s;
		hd_interface *x = NULL;
		hd_nodes d = { NULL, 0, 0 };
		const hd_border *b;
		unsigned char isnew[400], isb[400], one[400], seen[400],
			all[400];
		uint32_t n = round < 300 ? 2 + rnd(30) : 100 + rnd(300);
		uint32_t ne = round < 300 ? rnd(3 * n) : n / 2 + rnd(n), v, i,
			 k;
		size_t nb, j;

		g_init(&g, n);
		for (i = 0; i < ne; i++)
			g_edge(&g, rnd(n), rnd(n));
		if (rnd(3) == 0) {
			g.nroot = 1 + rnd(3);
			g.root = malloc(g.nroot * sizeof(*g.root));
			for (i = 0; i < g.nroot; i++)
				g.root[i] = rnd(n);
		}
		s = g_store(&g);
		T_ASSERT(s);
		d.ids = malloc(n * sizeof(*d.ids));
		d.cap = n;
		for (v = 0; v < n; v++) {
			isnew[v] = rnd(round < 300 ? 4 : 3) != 0;
			if (isnew[v])
				d.ids[d.n++] = v;
		}
		memset(isb, 0, sizeof(isb));
		for (i = 0; i < g.ne; i++)
			if (!isnew[g.from[i]] && isnew[g.to[i]])
				isb[g.to[i]] = 1;
		for (i = 0; i < g.nroot; i++)
			if (isnew[g.root[i]])
				isb[g.root[i]] = 1;
		T_RC(hd_interface_with(&x, s, &d, NULL), 0);
		b = hd_interface_diff_border(x, &nb);
		for (v = 0, k = 0; v < n; v++)
			k += isb[v];
		T_EQ(nb, k);
		bfs(&g, isnew, isb, UINT32_MAX, all);
		for (j = 0; j < nb; j++) {
			uint64_t kc = 0, km = 0, rc = 0, rm = 0;

			v = b[j].id;
			T_ASSERT(isb[v]);
			memset(one, 0, sizeof(one));
			one[v] = 1;
			bfs(&g, isnew, one, UINT32_MAX, seen);
			for (i = 0; i < n; i++)
				if (seen[i]) {
					kc++;
					km += 40 + i;
				}
			/* v dominates i: the border without v reaches no i */
			bfs(&g, isnew, isb, v, seen);
			for (i = 0; i < n; i++)
				if (all[i] && !seen[i]) {
					rc++;
					rm += 40 + i;
				}
			if (b[j].keepalive_count != kc ||
			    b[j].keepalive_memsize != km ||
			    b[j].retained_count != rc ||
			    b[j].retained_memsize != rm) {
				T_FAIL("round %d node %u: keepalive %llu/%llu "
				       "retained %llu/%llu, want %llu/%llu "
				       "%llu/%llu", round, v,
				       (unsigned long long)b[j].keepalive_count,
				       (unsigned long long)b[j].keepalive_memsize,
				       (unsigned long long)b[j].retained_count,
				       (unsigned long long)b[j].retained_memsize,
				       (unsigned long long)kc,
				       (unsigned long long)km,
				       (unsigned long long)rc,
				       (unsigned long long)rm);
				return;
			}
		}
		hd_interface_free(x);
		hd_nodes_free(&d);
		hd_store_close(s);
		g_free(&g);
	}
}

/* A dump from text; the file is removed once indexed. */
static hd_store *text_store(const char *text)
{
	char path[] = "/tmp/t_iface_XXXXXX";
	hd_store *s = NULL;
	FILE *f;
	int fd = mkstemp(path);

	if (fd < 0 || !(f = fdopen(fd, "w")))
		return NULL;
	fputs(text, f);
	fclose(f);
	if (hd_store_build(&s, path, NULL, NULL))
		s = NULL;
	unlink(path);
	return s;
}

/*
 * An old Array (0x1000) and an old WeakMap (0x2000, DATA weakmap) hold
 * the new String 0x3000; the WeakMap alone holds the new 0x4000, which
 * holds the new 0x5000. HD_ROOTS_SKIP_WEAK: the WeakMap holds nothing.
 */
static void test_interface__skip_weak(void)
{
	static const char text[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		"[\"0x1000\", \"0x2000\"]}\n"
		"{\"address\":\"0x1000\", \"type\":\"ARRAY\", \"references\":"
		"[\"0x3000\"], \"memsize\":40}\n"
		"{\"address\":\"0x2000\", \"type\":\"DATA\", \"struct\":"
		"\"weakmap\", \"references\":[\"0x3000\", \"0x4000\"], "
		"\"memsize\":40}\n"
		"{\"address\":\"0x3000\", \"type\":\"STRING\", \"memsize\":100}\n"
		"{\"address\":\"0x4000\", \"type\":\"ARRAY\", \"references\":"
		"[\"0x5000\"], \"memsize\":1000}\n"
		"{\"address\":\"0x5000\", \"type\":\"STRING\", \"memsize\":7}\n";
	hd_store *s = text_store(text);
	hd_interface *x = NULL;
	hd_nodes d = { NULL, 0, 0 };
	const hd_border *b;
	size_t n;

	T_ASSERT(s);
	range_set(&d, 2, 5); /* 0x3000, 0x4000, 0x5000 */
	T_RC(hd_interface_with_flags(&x, s, &d, 0, NULL), 0);
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, 2);
	T_EQ(b[0].holders, 2);
	T_EQ(b[1].holders, 1);
	T_EQ(b[1].holder[0], 1);
	T_EQ(b[1].retained_memsize, 1007);
	T_EQ(hd_interface_self_border(x)->n, 2);
	hd_interface_free(x);
	T_RC(hd_interface_with_flags(&x, s, &d, HD_ROOTS_SKIP_WEAK, NULL), 0);
	b = hd_interface_diff_border(x, &n);
	T_EQ(n, 1);
	T_EQ(b[0].id, 2);
	T_EQ(b[0].holders, 1);
	T_EQ(b[0].holder[0], 0);
	T_EQ(hd_interface_self_border(x)->n, 1);
	hd_interface_free(x);
	T_RC(hd_interface_with_flags(&x, s, &d, 1u << 7, NULL), HD_EINVAL);
	hd_nodes_free(&d);
	hd_store_close(s);
}

/* hd_fold_shares: the tail under the minimum share, folded. */
static void test_interface__fold_shares(void)
{
	static const uint64_t sizes[] = { 1000, 500, 20, 10, 10, 9 };
	hd_share_fold f;

	hd_fold_shares(&f, sizes, 6, 1549, 0.01); /* 1%: 15.49 */
	T_EQ(f.kept, 3);
	T_EQ(f.folded, 3);
	T_EQ(f.folded_size, 29);
	hd_fold_shares(&f, sizes, 6, 1549, 0);
	T_EQ(f.kept, 6);
	T_EQ(f.folded, 0);
	T_EQ(f.folded_size, 0);
	hd_fold_shares(&f, sizes, 6, 1549, 1.0); /* nothing is 100% */
	T_EQ(f.kept, 0);
	T_EQ(f.folded, 6);
	T_EQ(f.folded_size, 1549);
	hd_fold_shares(&f, sizes, 6, 0, 0.5);    /* no whole: keep all */
	T_EQ(f.kept, 6);
	hd_fold_shares(&f, NULL, 0, 10, 0.5);
	T_EQ(f.kept, 0);
	T_EQ(f.folded, 0);
	/* exactly at the share is kept */
	hd_fold_shares(&f, sizes + 2, 1, 2000, 0.01);
	T_EQ(f.kept, 1);
}

static const struct t_case cases[] = {
	T_CASE(interface__chain),
	T_CASE(interface__diamond),
	T_CASE(interface__cycle),
	T_CASE(interface__shared_subgraph),
	T_CASE(interface__long_chain),
	T_CASE(interface__no_border),
	T_CASE(interface__dangling_and_roots),
	T_CASE(interface__brute_force),
	T_CASE(interface__skip_weak),
	T_CASE(interface__fold_shares),
};

T_MAIN(cases)
