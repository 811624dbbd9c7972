/*
 * t_dominators.c - the whole-heap dominator tree: hand-built graphs with
 * known answers, thousands of random graphs against a brute force
 * (v dominates w when the roots no longer reach w once v is deleted),
 * a 300,000-node chain (no recursion, nothing quadratic), the class
 * histogram, and the tree kept in a store (written, reopened, corrupt).
 */
#include "heapdump.h"
#include "t.h"
#include "tgraph.h"

#include <time.h>

#define MAXN 64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_root(struct graph *g, uint32_t v)
{
	g->root = realloc(g->root, (g->nroot + 1) * sizeof(*g->root));
	if (!g->root)
		abort();
	g->root[g->nroot++] = v;
}

static hd_domtree *tree(hd_store *s)
{
	hd_domtree *d = NULL;

	if (hd_domtree_new(&d, s, 0, NULL))
		return NULL;
	return d;
}

/* root -> 0 -> {1, 2} -> 3 -> 4; 5 unreached. idom(3) = 0. */
static void test_dominators__diamond(void)
{
	struct graph g;
	hd_store *s;
	hd_domtree *d;
	uint64_t m;

	g_init(&g, 6);
	add_root(&g, 0);
	g_edge(&g, 0, 1);
	g_edge(&g, 0, 2);
	g_edge(&g, 1, 3);
	g_edge(&g, 2, 3);
	g_edge(&g, 3, 4);
	g_edge(&g, 5, 4);
	T_ASSERT((s = g_store(&g)));
	T_ASSERT((d = tree(s)));
	T_EQ(hd_domtree_idom(d, 0), HD_DOM_ROOT);
	T_EQ(hd_domtree_idom(d, 1), 0);
	T_EQ(hd_domtree_idom(d, 2), 0);
	T_EQ(hd_domtree_idom(d, 3), 0);
	T_EQ(hd_domtree_idom(d, 4), 3);
	T_EQ(hd_domtree_idom(d, 5), HD_NODE_NONE);
	T_EQ(hd_domtree_retained(d, 0, &m), 5);
	T_EQ(m, 40 + 41 + 42 + 43 + 44);
	T_EQ(hd_domtree_retained(d, 3, &m), 2);
	T_EQ(m, 43 + 44);
	T_EQ(hd_domtree_retained(d, 1, &m), 1);
	T_EQ(hd_domtree_retained(d, 5, &m), 0);
	T_EQ(m, 0);
	T_EQ(hd_domtree_reached(d, &m), 5);
	T_EQ(m, 40 + 41 + 42 + 43 + 44);
	T_EQ(hd_domtree_is_stored(d), 0);
	hd_domtree_free(d);
	hd_store_close(s);
	g_free(&g);
}

/* Two roots reach 2: only the virtual root dominates it. */
static void test_dominators__two_roots_and_chain(void)
{
	struct graph g;
	hd_store *s;
	hd_domtree *d;
	hd_root_path p = { 0 };
	hd_node_id top[3];
	size_t n;

	g_init(&g, 5);
	add_root(&g, 0);
	add_root(&g, 1);
	g_edge(&g, 0, 2);
	g_edge(&g, 1, 2);
	g_edge(&g, 2, 3);
	g_edge(&g, 3, 4);
	g_edge(&g, 4, 3); /* a cycle below 2 */
	T_ASSERT((s = g_store(&g)));
	T_ASSERT((d = tree(s)));
	T_EQ(hd_domtree_idom(d, 2), HD_DOM_ROOT);
	T_EQ(hd_domtree_idom(d, 3), 2);
	T_EQ(hd_domtree_idom(d, 4), 3);
	T_RC(hd_domtree_chain(&p, d, 4, NULL), 0);
	T_EQ(p.n, 3);
	T_EQ(p.nodes[0], 2);
	T_EQ(p.nodes[1], 3);
	T_EQ(p.nodes[2], 4);
	T_EQ(p.root, UINT32_MAX); /* 2 is not held by a root directly */
	T_RC(hd_domtree_chain(&p, d, 0, NULL), 0);
	T_EQ(p.n, 1);
	T_EQ(p.root, 0);
	T_RC(hd_domtree_top(top, &n, d, 3, NULL), 0);
	T_EQ(n, 3);
	T_EQ(top[0], 2); /* 2, 3, 4: 42 + 43 + 44 */
	T_EQ(top[1], 3);
	T_EQ(top[2], 4);
	hd_root_path_free(&p);
	hd_domtree_free(d);
	hd_store_close(s);
	g_free(&g);
}

/* ---- brute force ---- */

/* Marks what the roots reach without entering skip. */
static void reach(const struct graph *g, uint32_t skip, unsigned char *seen)
{
	uint32_t q[MAXN], head = 0, tail = 0, v;
	size_t i;

	memset(seen, 0, g->n);
	for (i = 0; i < g->nroot; i++) {
		v = g->root[i];
		if (v != skip && !seen[v]) {
			seen[v] = 1;
			q[tail++] = v;
		}
	}
	while (head < tail) {
		v = q[head++];
		for (i = 0; i < g->ne; i++)
			if (g->from[i] == v && g->to[i] != skip &&
			    !seen[g->to[i]]) {
				seen[g->to[i]] = 1;
				q[tail++] = g->to[i];
			}
	}
}

/* dom[v][w]: v dominates w (w reached; v == w included). */
static void brute(const struct graph *g, unsigned char dom[MAXN][MAXN],
		  unsigned char *all)
{
	unsigned char seen[MAXN];
	uint32_t v, w;

	reach(g, UINT32_MAX, all);
	for (v = 0; v < g->n; v++) {
		reach(g, v, seen);
		for (w = 0; w < g->n; w++)
			dom[v][w] = all[w] && all[v] && (v == w || !seen[w]);
	}
}

/* The brute-force idom of w: the strict dominator whose own
 * dominators are all of w's strict dominators. */
static hd_node_id brute_idom(const struct graph *g,
			     unsigned char dom[MAXN][MAXN], uint32_t w)
{
	uint32_t v, u, nd = 0, best = HD_DOM_ROOT, bestd = 0;

	for (v = 0; v < g->n; v++)
		nd += v != w && dom[v][w];
	for (v = 0; v < g->n; v++) {
		uint32_t k = 0;

		if (v == w || !dom[v][w])
			continue;
		for (u = 0; u < g->n; u++)
			k += dom[u][v];
		if (k == nd && k > bestd) {
			best = v;
			bestd = k;
		}
	}
	return best;
}

static void test_dominators__brute_force(void)
{
	static unsigned char dom[MAXN][MAXN];
	unsigned char all[MAXN];
	int round;

	for (round = 0; round < 3000; round++) {
		struct graph g;
		hd_store *s;
		hd_domtree *d;
		uint32_t n = 1 + rnd(round < 2000 ? 12 : MAXN);
		uint32_t ne = rnd(3 * n + 1), i, v, w;

		g_init(&g, n);
		for (i = 0; i < ne; i++)
			g_edge(&g, rnd(n), rnd(n));
		for (i = 0, ne = 1 + rnd(3); i < ne; i++)
			add_root(&g, rnd(n));
		T_ASSERT((s = g_store(&g)));
		T_ASSERT((d = tree(s)));
		brute(&g, dom, all);
		for (w = 0; w < n; w++) {
			hd_node_id want = all[w] ? brute_idom(&g, dom, w) :
						   HD_NODE_NONE;
			uint64_t rc = 0, rm = 0, m, c;

			for (v = 0; v < n; v++)
				if (dom[w][v]) {
					rc++;
					rm += 40 + v;
				}
			c = hd_domtree_retained(d, w, &m);
			if (hd_domtree_idom(d, w) != want || c != rc ||
			    m != rm) {
				T_FAIL("round %d (n %u, %zu edges) node %u: "
				       "idom %u retained %llu/%llu, want %u "
				       "%llu/%llu", round, n, g.ne, w,
				       hd_domtree_idom(d, w),
				       (unsigned long long)c,
				       (unsigned long long)m, want,
				       (unsigned long long)rc,
				       (unsigned long long)rm);
				return;
			}
		}
		hd_domtree_free(d);
		hd_store_close(s);
		g_free(&g);
	}
}

/* Skipping weak references: a weakmap holding 2 does not keep it. */
static void test_dominators__skip_weak(void)
{
	char path[] = "/tmp/t_dom_weak_XXXXXX";
	const char *text =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		"[\"0x10000\", \"0x10050\"]}\n"
		"{\"address\":\"0x10000\", \"type\":\"OBJECT\", "
		"\"references\":[\"0x10028\"], \"memsize\":40}\n"
		"{\"address\":\"0x10028\", \"type\":\"DATA\", "
		"\"struct\":\"weakmap\", \"references\":[\"0x10078\"], "
		"\"memsize\":40}\n"
		"{\"address\":\"0x10050\", \"type\":\"OBJECT\", "
		"\"references\":[\"0x10078\"], \"memsize\":40}\n"
		"{\"address\":\"0x10078\", \"type\":\"STRING\", "
		"\"memsize\":40}\n";
	hd_store *s = NULL;
	hd_domtree *d = NULL;
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	T_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	T_RC(hd_store_build(&s, path, NULL, NULL), 0);
	unlink(path);
	T_RC(hd_domtree_new(&d, s, 0, NULL), 0);
	T_EQ(hd_domtree_idom(d, 3), HD_DOM_ROOT); /* two holders */
	hd_domtree_free(d);
	T_RC(hd_domtree_new(&d, s, HD_ROOTS_SKIP_WEAK, NULL), 0);
	T_EQ(hd_domtree_idom(d, 3), 2); /* only the OBJECT holds it */
	T_EQ(hd_domtree_retained(d, 2, NULL), 2);
	hd_domtree_free(d);
	T_RC(hd_domtree_new(&d, s, 8, NULL), HD_EINVAL);
	hd_store_close(s);
}

/* 300,000 nodes in a line: depth 300,000, every node retains the rest. */
static void test_dominators__long_chain(void)
{
	enum { N = 300000 };
	struct graph g;
	hd_store *s;
	hd_domtree *d;
	hd_root_path p = { 0 };
	double t0;
	uint32_t i;

	g_init(&g, N);
	add_root(&g, 0);
	for (i = 0; i + 1 < N; i++)
		g_edge(&g, i, i + 1);
	T_ASSERT((s = g_store(&g)));
	t0 = now();
	T_ASSERT((d = tree(s)));
	printf("# 300,000-node chain: dominators in %.3f s\n", now() - t0);
	T_EQ(hd_domtree_retained(d, 0, NULL), N);
	T_EQ(hd_domtree_retained(d, N / 2, NULL), N - N / 2);
	T_EQ(hd_domtree_idom(d, N - 1), N - 2);
	T_RC(hd_domtree_chain(&p, d, N - 1, NULL), 0);
	T_EQ(p.n, N);
	hd_root_path_free(&p);
	hd_domtree_free(d);
	hd_store_close(s);
	g_free(&g);
}

/* The class histogram: nested instances of one class count once. */
static void test_dominators__classes(void)
{
	char path[] = "/tmp/t_dom_cls_XXXXXX";
	/* C (class Node): n1 -> n2 -> s1; n1 -> s2. Retained by the class
	 * Node: n1's set (n1, n2, s1, s2), not n2's again. */
	const char *text =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		"[\"0x10000\"]}\n"
		"{\"address\":\"0x10000\", \"type\":\"OBJECT\", \"class\":"
		"\"0x20000\", \"references\":[\"0x10028\", \"0x10078\"], "
		"\"memsize\":40}\n"
		"{\"address\":\"0x10028\", \"type\":\"OBJECT\", \"class\":"
		"\"0x20000\", \"references\":[\"0x10050\"], \"memsize\":40}\n"
		"{\"address\":\"0x10050\", \"type\":\"STRING\", \"memsize\":"
		"100}\n"
		"{\"address\":\"0x10078\", \"type\":\"STRING\", \"memsize\":"
		"200}\n"
		"{\"address\":\"0x20000\", \"type\":\"CLASS\", \"name\":"
		"\"Node\", \"memsize\":500}\n";
	hd_store *s = NULL;
	hd_domtree *d = NULL;
	hd_class_retained *rows = NULL;
	size_t n = 0, i;
	int seen = 0, fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	T_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	T_RC(hd_store_build(&s, path, NULL, NULL), 0);
	unlink(path);
	T_RC(hd_domtree_new(&d, s, 0, NULL), 0);
	T_RC(hd_domtree_classes(&rows, &n, d, NULL), 0);
	T_ASSERT(n >= 1);
	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].name, "Node") != 0)
			continue;
		seen = 1;
		T_EQ(rows[i].objects, 2);
		T_EQ(rows[i].shallow, 80);
		T_EQ(rows[i].retained_count, 4);
		T_EQ(rows[i].retained_memsize, 380);
	}
	T_ASSERT(seen);
	T_STREQ(rows[0].name, "Node"); /* sorted by retained memsize */
	hd_class_retained_free(rows);
	hd_domtree_free(d);
	hd_store_close(s);
}

/* The file offset of the DOMINATOR section (id 28) of a store, from its
 * section table (24-byte entries after the 32-byte header); 0 if none. */
static uint64_t idom_offset(FILE *f)
{
	unsigned char head[32 + 24 * 64];
	uint32_t cnt, k;
	uint64_t off = 0;

	if (fseek(f, 0, SEEK_SET) || fread(head, 1, 32, f) != 32)
		return 0;
	cnt = head[12] | head[13] << 8;
	if (cnt > 64 || fread(head + 32, 24, cnt, f) != cnt)
		return 0;
	for (k = 0; k < cnt; k++)
		if ((head[32 + 24 * k] | head[33 + 24 * k] << 8) == 28)
			memcpy(&off, head + 32 + 24 * k + 8, 8);
	return off;
}

/* Kept in a store: written, reopened and used without computing; a
 * corrupt tree is refused or reported, never followed forever. */
/* d kept in s, s written to a new file at path (a mkstemp template)
 * and opened again as *o, its stored tree as *e. */
static void write_and_reopen(hd_store *s, hd_domtree *d, char *path,
			     hd_store **o, hd_domtree **e)
{
	int fd;

	T_RC(hd_store_set_domtree(s, d, NULL), 0);
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	close(fd);
	T_RC(hd_store_write(s, path, NULL), 0);
	T_RC(hd_store_open(o, path, NULL), 0);
	T_RC(hd_domtree_new(e, *o, 0, NULL), 0);
	T_EQ(hd_domtree_is_stored(*e), 1);
}

static void test_dominators__stored(void)
{
	char path[] = "/tmp/t_dom_store_XXXXXX";
	struct graph g;
	hd_store *s, *o = NULL;
	hd_domtree *d, *e = NULL;
	hd_root_path p = { 0 };
	hd_error err;
	uint64_t m1, m2;
	uint32_t i, n = 200;
	FILE *f;
	long size;
	unsigned char buf[4];
	uint64_t off;

	g_init(&g, n);
	add_root(&g, 0);
	for (i = 0; i < 3 * n; i++)
		g_edge(&g, rnd(n), rnd(n));
	for (i = 0; i + 1 < n; i += 2)
		g_edge(&g, i, i + 1);
	T_ASSERT((s = g_store(&g)));
	T_ASSERT((d = tree(s)));
	write_and_reopen(s, d, path, &o, &e);
	T_EQ(hd_domtree_reached(e, &m1), hd_domtree_reached(d, &m2));
	T_EQ(m1, m2);
	for (i = 0; i < n; i++) {
		T_EQ(hd_domtree_idom(e, i), hd_domtree_idom(d, i));
		T_EQ(hd_domtree_retained(e, i, &m1),
		     hd_domtree_retained(d, i, &m2));
		T_EQ(m1, m2);
	}
	hd_domtree_free(e);
	/* other flags: computed, not read */
	T_RC(hd_domtree_new(&e, o, HD_ROOTS_SKIP_WEAK, NULL), 0);
	T_EQ(hd_domtree_is_stored(e), 0);
	hd_domtree_free(e);
	/* an opened store cannot take a tree */
	T_RC(hd_store_set_domtree(o, d, NULL), HD_EINVAL);
	hd_store_close(o);

	/* make node 3's idom 4 and 4's idom 3: a cycle */
	f = fopen(path, "r+b");
	T_ASSERT(f);
	T_EQ(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	off = idom_offset(f);
	T_ASSERT(off && (long)off < size);
	buf[0] = 4, buf[1] = buf[2] = buf[3] = 0;
	T_EQ(fseek(f, (long)off + 3 * 4, SEEK_SET), 0);
	T_EQ(fwrite(buf, 1, 4, f), 4);
	buf[0] = 3;
	T_EQ(fwrite(buf, 1, 4, f), 4);
	fclose(f);
	T_RC(hd_store_open(&o, path, NULL), 0);
	T_RC(hd_domtree_new(&e, o, 0, NULL), 0);
	T_RC(hd_domtree_chain(&p, e, 3, &err), HD_EFORMAT);
	hd_domtree_free(e);
	hd_store_close(o);
	/* an idom out of range: refused on open */
	f = fopen(path, "r+b");
	T_ASSERT(f);
	buf[0] = 0xff, buf[1] = 0xff, buf[2] = 0x00, buf[3] = 0x10;
	T_EQ(fseek(f, (long)off, SEEK_SET), 0);
	T_EQ(fwrite(buf, 1, 4, f), 4);
	fclose(f);
	T_RC(hd_store_open(&o, path, &err), HD_EFORMAT);
	T_ASSERT(strstr(err.msg, "dominator"));
	unlink(path);
	hd_root_path_free(&p);
	hd_domtree_free(d);
	hd_store_close(s);
	g_free(&g);
}


/* The top retainers of a stored tree, whose retained sizes are read a
 * chunk of 4,096 nodes at a time (hd__store_copy), are those of the tree
 * computed: 20,000 nodes, several chunks. */
static void test_dominators__stored_top(void)
{
	static const size_t ks[] = { 1, 7, 100, 4097, 20000 };
	char path[] = "/tmp/t_dom_top_XXXXXX";
	static hd_node_id a[20000], b[20000];
	struct graph g;
	hd_store *s, *o = NULL;
	hd_domtree *d, *e = NULL;
	size_t na, nb, k, i, diff;
	uint32_t n = 20000;

	g_init(&g, n);
	add_root(&g, 0);
	add_root(&g, n / 2);
	for (i = 0; i < 2 * (size_t)n; i++)
		g_edge(&g, rnd(n), rnd(n));
	for (i = 0; i + 1 < n; i++)
		if (i % 3)
			g_edge(&g, (uint32_t)i, (uint32_t)i + 1);
	T_ASSERT((s = g_store(&g)));
	T_ASSERT((d = tree(s)));
	write_and_reopen(s, d, path, &o, &e);
	for (k = 0; k < sizeof(ks) / sizeof(ks[0]); k++) {
		T_RC(hd_domtree_top(a, &na, d, ks[k], NULL), 0);
		T_RC(hd_domtree_top(b, &nb, e, ks[k], NULL), 0);
		T_EQ(na, nb);
		T_ASSERT(na > 0 && na <= ks[k]);
		for (i = 0, diff = 0; i < na; i++)
			diff += a[i] != b[i];
		T_EQ(diff, 0);
	}
	unlink(path);
	hd_domtree_free(e);
	hd_store_close(o);
	hd_domtree_free(d);
	hd_store_close(s);
	g_free(&g);
}

static const struct t_case cases[] = {
	T_CASE(dominators__diamond),
	T_CASE(dominators__two_roots_and_chain),
	T_CASE(dominators__brute_force),
	T_CASE(dominators__skip_weak),
	T_CASE(dominators__long_chain),
	T_CASE(dominators__classes),
	T_CASE(dominators__stored),
	T_CASE(dominators__stored_top),
};

T_MAIN(cases)
