/*
 * t_paths.c - graph queries: roots-of, path, subgraph-of on small graphs
 * with known answers, a cross-check against a naive model on random
 * graphs, and a 300,000-long chain (no recursion anywhere).
 */
#include "t.h"
#include "t_dump.h"
#include "heapdump.h"

#include <stdarg.h>
#include <unistd.h>

/* ---- dumps from a tiny graph language ---- */

/* Node i of a test graph lives at ADDR(i): ids follow i. */
#define ADDR(i) (0x10000ull + (uint64_t)(i) * 0x28)
#define DANGLING(i) (0xdead0000ull + (uint64_t)(i) * 8)

struct text {
	char *p;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p ? t->p + t->len : NULL,
			      t->p ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (t->p && t->len + (size_t)n < t->cap)
			break;
		t->cap = (t->cap + (size_t)n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		if (!t->p)
			abort();
	}
	t->len += (size_t)n;
}

/* Writes the references list of a spec's "a b x3" (x: dangling). */
static void put_refs(struct text *t, const char *refs)
{
	const char *p = refs;
	int first = 1, n;
	char *end;

	put(t, ", \"references\":[");
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p == 'x') {
			n = (int)strtol(p + 1, &end, 10);
			put(t, "%s\"0x%llx\"", first ? "" : ", ",
			    (unsigned long long)DANGLING(n));
		} else {
			n = (int)strtol(p, &end, 10);
			put(t, "%s\"0x%llx\"", first ? "" : ", ",
			    (unsigned long long)ADDR(n));
		}
		if (end == p)
			abort();
		p = end;
		first = 0;
	}
	put(t, "]");
}

/*
 * One statement a line:
 *   root NAME 0 1 2      a ROOT line of category NAME
 *   obj 3 4 5            OBJECT 3 referencing 4 and 5 (x7: dangling)
 *   weakmap 6 7          DATA of struct weakmap, referencing 7
 *   class 8 NAME         CLASS named NAME
 *   inst 9 8 10          OBJECT 9 of class 8 referencing 10
 */
static void spec_dump(struct text *t, const char *spec)
{
	char line[4096], word[32], name[64];
	const char *p = spec, *nl;
	int i, c, off;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
		if (sscanf(line, "%31s%n", word, &off) != 1)
			continue;
		if (strcmp(word, "root") == 0) {
			if (sscanf(line + off, "%63s%n", name, &i) != 1)
				abort();
			put(t, "{\"type\":\"ROOT\", \"root\":\"%s\"", name);
			put_refs(t, line + off + i);
		} else if (strcmp(word, "class") == 0) {
			if (sscanf(line + off, "%d %63s", &i, name) != 2)
				abort();
			put(t, "{\"address\":\"0x%llx\", \"type\":\"CLASS\", "
			       "\"name\":\"%s\"", (unsigned long long)ADDR(i),
			    name);
		} else if (strcmp(word, "imemo") == 0) {
			int n;

			if (sscanf(line + off, "%d %63s%n", &i, name, &n) != 2)
				abort();
			put(t, "{\"address\":\"0x%llx\", \"type\":\"IMEMO\", "
			       "\"imemo_type\":\"%s\"",
			    (unsigned long long)ADDR(i), name);
			put_refs(t, line + off + n);
		} else if (strcmp(word, "inst") == 0) {
			int n;

			if (sscanf(line + off, "%d %d%n", &i, &c, &n) != 2)
				abort();
			put(t, "{\"address\":\"0x%llx\", \"type\":\"OBJECT\", "
			       "\"class\":\"0x%llx\"", (unsigned long long)ADDR(i),
			    (unsigned long long)ADDR(c));
			put_refs(t, line + off + n);
		} else {
			int n;

			if (sscanf(line + off, "%d%n", &i, &n) != 1)
				abort();
			if (strcmp(word, "weakmap") == 0)
				put(t, "{\"address\":\"0x%llx\", \"type\":\"DATA\", "
				       "\"struct\":\"weakmap\"",
				    (unsigned long long)ADDR(i));
			else
				put(t, "{\"address\":\"0x%llx\", \"type\":\"OBJECT\"",
				    (unsigned long long)ADDR(i));
			put_refs(t, line + off + n);
		}
		put(t, ", \"memsize\":40}\n");
	}
}

static hd_store *graph(const char *spec)
{
	struct text t = { 0 };
	hd_store *s;

	spec_dump(&t, spec);
	s = t_store_of(t.p, t.len);
	free(t.p);
	return s;
}

static hd_node_id id_of(const hd_store *s, int i)
{
	return hd_store_find(s, ADDR(i));
}

/* A set of nodes from indices (ascending ids as hd_nodes wants). */
static hd_nodes set_of(const hd_store *s, const int *v, size_t n)
{
	hd_nodes set = { 0 };
	size_t i, j;

	set.ids = malloc((n ? n : 1) * sizeof(*set.ids));
	for (i = 0; i < n; i++) {
		hd_node_id id = id_of(s, v[i]);

		for (j = set.n; j > 0 && set.ids[j - 1] > id; j--)
			set.ids[j] = set.ids[j - 1];
		set.ids[j] = id;
		set.n++;
	}
	return set;
}

/* The node indices of a set, "0 1 3", for comparisons. */
static const char *names(const hd_store *s, const hd_nodes *set)
{
	static char buf[2][1024];
	static int k;
	size_t i, n = 0;

	k ^= 1;
	buf[k][0] = '\0';
	for (i = 0; i < set->n && n + 16 < sizeof(buf[k]); i++)
		n += (size_t)snprintf(buf[k] + n, sizeof(buf[k]) - n, "%s%d",
				      i ? " " : "",
				      (int)((hd_store_address(s, set->ids[i]) -
					     ADDR(0)) / 0x28));
	return buf[k];
}

static const char *path_names(const hd_store *s, const hd_root_path *p)
{
	hd_nodes set = { p->nodes, p->n, p->n };

	return names(s, &set);
}

/* roots-of over indices: kept and unreached as "0 1 3" strings. */
static int roots_of(const hd_store *s, const int *t, size_t n, unsigned fl,
		    const char **kept, const char **unreached)
{
	hd_nodes set = set_of(s, t, n), k = { 0 }, u = { 0 };
	hd_error err;
	int rc = hd_roots_of(&k, &u, s, &set, fl, &err);

	*kept = names(s, &k);
	*unreached = names(s, &u);
	free(set.ids);
	hd_nodes_free(&k);
	hd_nodes_free(&u);
	return rc;
}

/* ---- small graphs with known answers ---- */

static void test_paths__chain(void)
{
	hd_store *s = graph("root vm 0\nobj 0 1\nobj 1 2\nobj 2 3\nobj 3\n"
			    "obj 4 3");
	const char *k, *u;
	hd_root_path p = { 0 };
	int t[] = { 3 };

	T_ASSERT(s);
	T_RC(roots_of(s, t, 1, 0, &k, &u), 0);
	T_STREQ(k, "0 1 2 3");
	T_STREQ(u, "");
	T_RC(hd_path(&p, s, id_of(s, 3), 0, NULL), 0);
	T_STREQ(path_names(s, &p), "0 1 2 3");
	T_STREQ(hd_store_root_name(s, p.root), "vm");
	hd_root_path_free(&p);
	hd_store_close(s);
}

/* Two equally short paths: the tree keeps the one reached first, that
 * is the first reference of 0 in dump order. */
static void test_paths__diamond(void)
{
	hd_store *s = graph("root vm 0\nobj 0 1 2\nobj 1 3\nobj 2 3\nobj 3");
	const char *k, *u;
	int t[] = { 3 };

	T_ASSERT(s);
	T_RC(roots_of(s, t, 1, 0, &k, &u), 0);
	T_STREQ(k, "0 1 3");
	T_RC(roots_of(s, t, 1, HD_ROOTS_ALL_ANCESTORS, &k, &u), 0);
	T_STREQ(k, "0 1 2 3");
	hd_store_close(s);
	s = graph("root vm 0\nobj 0 2 1\nobj 1 3\nobj 2 3\nobj 3");
	T_ASSERT(s);
	T_RC(roots_of(s, t, 1, 0, &k, &u), 0);
	T_STREQ(k, "0 2 3");
	hd_store_close(s);
}

/* The shortest path wins over the first-found longer one. */
static void test_paths__shortest(void)
{
	hd_store *s = graph("root vm 0\nobj 0 1 5\nobj 1 2\nobj 2 3\nobj 3 4\n"
			    "obj 4\nobj 5 4");
	const char *k, *u;
	int t[] = { 4 };

	T_ASSERT(s);
	T_RC(roots_of(s, t, 1, 0, &k, &u), 0);
	T_STREQ(k, "0 4 5");
	hd_store_close(s);
}

static void test_paths__cycles(void)
{
	/* 0 -> 1 -> 2 -> 0 and a self loop; 3 sits behind the cycle */
	hd_store *s = graph("root vm 0\nobj 0 1\nobj 1 2 1\nobj 2 0 3\nobj 3\n"
			    "obj 4 5\nobj 5 4 3");
	const char *k, *u;
	hd_root_path p = { 0 };
	int t[] = { 3, 5 };

	T_ASSERT(s);
	T_RC(roots_of(s, t, 2, 0, &k, &u), 0);
	T_STREQ(k, "0 1 2 3");
	T_STREQ(u, "5");
	T_RC(roots_of(s, t, 2, HD_ROOTS_ALL_ANCESTORS, &k, &u), 0);
	/* 4 and 5 reach 3 but no root reaches them: not kept */
	T_STREQ(k, "0 1 2 3");
	T_STREQ(u, "5");
	T_RC(hd_path(&p, s, id_of(s, 3), 0, NULL), 0);
	T_STREQ(path_names(s, &p), "0 1 2 3");
	T_RC(hd_path(&p, s, id_of(s, 5), 0, NULL), HD_ENOTFOUND);
	hd_root_path_free(&p);
	hd_store_close(s);
}

/* Categories are searched in order: an object held by two gets the
 * first; a shorter path from a later category still wins. */
static void test_paths__root_categories(void)
{
	hd_store *s = graph("root vm 0\nroot global_tbl 3 0\nroot finalizers 2\n"
			    "obj 0 1\nobj 1 2\nobj 2\nobj 3 4\nobj 4");
	hd_root_path p = { 0 };
	hd_reach *r = NULL;
	uint32_t root = 99;
	const char *k, *u;
	int t[] = { 2, 4 };

	T_ASSERT(s);
	T_EQ(hd_store_root_count(s), 3);
	T_RC(hd_path(&p, s, id_of(s, 2), 0, NULL), 0);
	T_STREQ(path_names(s, &p), "2");
	T_STREQ(hd_store_root_name(s, p.root), "finalizers");
	T_RC(hd_path(&p, s, id_of(s, 1), 0, NULL), 0);
	T_STREQ(hd_store_root_name(s, p.root), "vm");
	T_STREQ(path_names(s, &p), "0 1");
	T_RC(hd_path(&p, s, id_of(s, 4), 0, NULL), 0);
	T_STREQ(hd_store_root_name(s, p.root), "global_tbl");
	T_RC(roots_of(s, t, 2, 0, &k, &u), 0);
	T_STREQ(k, "2 3 4");
	T_RC(hd_reach_new(&r, s, 0, NULL), 0);
	T_EQ(hd_reach_count(r), 5);
	T_EQ(hd_reach_pred(r, id_of(s, 0), &root), HD_NODE_NONE);
	T_STREQ(hd_store_root_name(s, root), "vm");
	T_EQ(hd_reach_pred(r, id_of(s, 1), NULL), id_of(s, 0));
	hd_reach_free(r);
	hd_root_path_free(&p);
	hd_store_close(s);
}

static void test_paths__unreachable_and_dangling(void)
{
	hd_store *s = graph("root vm 0 x1\nobj 0 x2 1 x3\nobj 1 x4\nobj 2 1\n"
			    "obj 3");
	const char *k, *u;
	int t[] = { 3, 1, 2 };

	T_ASSERT(s);
	T_RC(roots_of(s, t, 3, 0, &k, &u), 0);
	T_STREQ(k, "0 1");
	T_STREQ(u, "2 3");
	hd_store_close(s);
}

/* No ROOT lines: nothing is reached, every target is reported. */
static void test_paths__partial_dump(void)
{
	hd_store *s = graph("obj 0 1\nobj 1");
	hd_root_path p = { 0 };
	hd_error err;
	const char *k, *u;
	int t[] = { 0, 1 };

	T_ASSERT(s);
	T_RC(roots_of(s, t, 2, 0, &k, &u), 0);
	T_STREQ(k, "");
	T_STREQ(u, "0 1");
	T_RC(roots_of(s, t, 2, HD_ROOTS_ALL_ANCESTORS, &k, &u), 0);
	T_STREQ(k, "");
	T_RC(hd_path(&p, s, id_of(s, 1), 0, &err), HD_ENOTFOUND);
	T_ASSERT(strstr(err.msg, "partial dump") != NULL);
	hd_store_close(s);
}

static void test_paths__empty_targets(void)
{
	hd_store *s = graph("root vm 0\nobj 0");
	const char *k, *u;

	T_ASSERT(s);
	T_RC(roots_of(s, NULL, 0, 0, &k, &u), 0);
	T_STREQ(k, "");
	T_STREQ(u, "");
	hd_store_close(s);
}

static void test_paths__all_ancestors(void)
{
	/* 0 -> 1 -> 3, 0 -> 2 -> 3, 2 -> 4 (not an ancestor), 5 -> 2 */
	hd_store *s = graph("root vm 0 5\nobj 0 1 2\nobj 1 3\nobj 2 3 4\n"
			    "obj 3\nobj 4\nobj 5 2");
	const char *k, *u;
	int t[] = { 3 };

	T_ASSERT(s);
	T_RC(roots_of(s, t, 1, HD_ROOTS_ALL_ANCESTORS, &k, &u), 0);
	T_STREQ(k, "0 1 2 3 5");
	T_RC(roots_of(s, t, 1, 0, &k, &u), 0);
	T_STREQ(k, "0 1 3");
	hd_store_close(s);
}

/*
 * A WeakMap's DATA, a WeakRef instance and an ObjectSpace::WeakMap
 * instance hold targets only weakly: with HD_ROOTS_SKIP_WEAK their
 * references are not followed (they can themselves be reached).
 */
static void test_paths__skip_weak(void)
{
	hd_store *s = graph("root vm 0\nobj 0 1 5 7 9\nweakmap 1 2\nobj 2 3\n"
			    "obj 3\nobj 4 3\nclass 6 WeakRef\ninst 5 6 10\n"
			    "class 8 ObjectSpace::WeakMap\ninst 7 8 11\n"
			    "obj 9 4\nobj 10\nobj 11");
	const char *k, *u;
	int t[] = { 3 }, t2[] = { 10, 11, 1 };

	T_ASSERT(s);
	T_RC(roots_of(s, t, 1, 0, &k, &u), 0);
	T_STREQ(k, "0 1 2 3");
	T_RC(roots_of(s, t, 1, HD_ROOTS_SKIP_WEAK, &k, &u), 0);
	T_STREQ(k, "0 3 4 9");
	T_RC(roots_of(s, t, 1, HD_ROOTS_SKIP_WEAK | HD_ROOTS_ALL_ANCESTORS,
		      &k, &u), 0);
	T_STREQ(k, "0 3 4 9");
	T_RC(roots_of(s, t, 1, HD_ROOTS_ALL_ANCESTORS, &k, &u), 0);
	T_STREQ(k, "0 1 2 3 4 9");
	T_RC(roots_of(s, t2, 3, 0, &k, &u), 0);
	T_STREQ(k, "0 1 5 7 10 11");
	T_STREQ(u, "");
	T_RC(roots_of(s, t2, 3, HD_ROOTS_SKIP_WEAK, &k, &u), 0);
	T_STREQ(k, "0 1");
	T_STREQ(u, "10 11");
	hd_store_close(s);
}

static const char *subgraph(const hd_store *s, const int *v, size_t n,
			    unsigned depth)
{
	hd_nodes set = set_of(s, v, n), out = { 0 };
	const char *r;

	if (hd_subgraph_of(&out, s, &set, depth, NULL))
		r = "error";
	else
		r = names(s, &out);
	free(set.ids);
	hd_nodes_free(&out);
	return r;
}

static void test_paths__subgraph_depth(void)
{
	hd_store *s = graph("root vm 0\nobj 0 1\nobj 1 2 x1\nobj 2 3 1\n"
			    "obj 3\nobj 4 0\nobj 5 5");
	int f[] = { 1 }, g[] = { 4, 5 };

	T_ASSERT(s);
	T_STREQ(subgraph(s, f, 1, 0), "1 2 3");
	T_STREQ(subgraph(s, f, 1, 1), "1 2");
	T_STREQ(subgraph(s, f, 1, 2), "1 2 3");
	T_STREQ(subgraph(s, g, 2, 1), "0 4 5");
	T_STREQ(subgraph(s, g, 2, 0), "0 1 2 3 4 5");
	T_STREQ(subgraph(s, NULL, 0, 0), "");
	hd_store_close(s);
}

static void test_paths__bad_args(void)
{
	hd_store *s = graph("root vm 0\nobj 0");
	hd_nodes bad = { 0 }, out = { 0 };
	hd_node_id big = 7;
	hd_root_path p = { 0 };

	T_ASSERT(s);
	bad.ids = &big;
	bad.n = 1;
	T_RC(hd_roots_of(&out, NULL, s, &bad, 0, NULL), HD_EINVAL);
	T_RC(hd_subgraph_of(&out, s, &bad, 0, NULL), HD_EINVAL);
	T_RC(hd_path(&p, s, 7, 0, NULL), HD_EINVAL);
	T_RC(hd_roots_of(&out, NULL, NULL, &bad, 0, NULL), HD_EINVAL);
	hd_store_close(s);
}

/* ---- random graphs against a naive model ---- */

#define RN 24
#define INF 1000

static uint64_t rng = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

struct model {
	int n;
	int d[RN][RN];     /* shortest distances, INF if none */
	int root[RN];      /* held by a root directly */
	int adj[RN][RN];
	int dist[RN];      /* from the roots */
};

/* A random dump and its model (Floyd-Warshall: small n). */
static void random_graph(struct text *t, struct model *m)
{
	int i, j, k, e, nroots, ncat = 1 + (int)rnd(3);

	memset(m, 0, sizeof(*m));
	m->n = 1 + (int)rnd(RN);
	for (i = 0; i < m->n; i++)
		for (j = 0; j < m->n; j++)
			m->d[i][j] = i == j ? 0 : INF;
	for (k = 0; k < ncat; k++) {
		put(t, "{\"type\":\"ROOT\", \"root\":\"cat%d\", \"references\":[",
		    k);
		nroots = (int)rnd(3);
		for (i = 0; i < nroots; i++) {
			j = (int)rnd((unsigned)m->n);
			m->root[j] = 1;
			put(t, "%s\"0x%llx\"", i ? ", " : "",
			    (unsigned long long)ADDR(j));
		}
		put(t, "]}\n");
	}
	for (i = 0; i < m->n; i++) {
		put(t, "{\"address\":\"0x%llx\", \"type\":\"OBJECT\", "
		       "\"references\":[", (unsigned long long)ADDR(i));
		e = (int)rnd(4);
		for (k = 0; k < e; k++) {
			if (rnd(8) == 0) {
				put(t, "%s\"0x%llx\"", k ? ", " : "",
				    (unsigned long long)DANGLING(k));
				continue;
			}
			j = (int)rnd((unsigned)m->n);
			m->adj[i][j] = 1;
			if (i != j)
				m->d[i][j] = 1;
			put(t, "%s\"0x%llx\"", k ? ", " : "",
			    (unsigned long long)ADDR(j));
		}
		put(t, "]}\n");
	}
	for (k = 0; k < m->n; k++)
		for (i = 0; i < m->n; i++)
			for (j = 0; j < m->n; j++)
				if (m->d[i][k] + m->d[k][j] < m->d[i][j])
					m->d[i][j] = m->d[i][k] + m->d[k][j];
	for (j = 0; j < m->n; j++) {
		m->dist[j] = INF;
		for (i = 0; i < m->n; i++)
			if (m->root[i] && m->d[i][j] < m->dist[j])
				m->dist[j] = m->d[i][j];
	}
}

static int in_set(const hd_nodes *set, hd_node_id id)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->ids[i] == id)
			return 1;
	return 0;
}

/* Checks one roots-of answer; returns a message or NULL. */
static const char *check_shortest(const hd_store *s, const struct model *m,
				  const hd_reach *r, const int *tg, int nt,
				  const hd_nodes *kept, const hd_nodes *unr)
{
	int i, k, ok;
	size_t nun = 0;
	uint32_t root;

	for (k = 0; k < nt; k++) {
		int reached = m->dist[tg[k]] < INF;

		if (reached != in_set(kept, id_of(s, tg[k])))
			return "a target reached is not kept (or unreached kept)";
		if (!reached && !in_set(unr, id_of(s, tg[k])))
			return "an unreached target is not reported";
	}
	for (k = 0; k < nt; k++)
		nun += m->dist[tg[k]] >= INF;
	if (unr->n > nun)
		return "too many unreached targets";
	for (i = 0; i < m->n; i++) {
		hd_node_id id = id_of(s, i), pr;

		if (!in_set(kept, id))
			continue;
		if (m->dist[i] >= INF)
			return "a kept node is not reachable";
		/* on a shortest path to some target */
		for (k = 0, ok = 0; k < nt && !ok; k++)
			ok = m->dist[tg[k]] < INF &&
			     m->dist[i] + m->d[i][tg[k]] == m->dist[tg[k]];
		if (!ok)
			return "a kept node is on no shortest path to a target";
		/* closed under the predecessor */
		pr = hd_reach_pred(r, id, &root);
		if (pr == HD_NODE_NONE) {
			if (m->dist[i] != 0 || !m->root[i])
				return "a node without predecessor is not a root";
		} else {
			int j = (int)((hd_store_address(s, pr) - ADDR(0)) /
				      0x28);

			if (!in_set(kept, pr))
				return "a kept node's predecessor is not kept";
			if (!m->adj[j][i] || m->dist[j] + 1 != m->dist[i])
				return "a predecessor is not one step closer";
		}
	}
	return NULL;
}

static const char *check_ancestors(const hd_store *s, const struct model *m,
				   const int *tg, int nt, const hd_nodes *kept)
{
	int i, k, want;

	for (i = 0; i < m->n; i++) {
		for (k = 0, want = 0; k < nt && !want; k++)
			want = m->dist[i] < INF && m->dist[tg[k]] < INF &&
			       m->d[i][tg[k]] < INF;
		if (want != in_set(kept, id_of(s, i)))
			return "all-ancestors differs from the model";
	}
	return NULL;
}

static const char *check_paths(const hd_store *s, const struct model *m,
			       const hd_reach *r)
{
	hd_root_path p = { 0 };
	const char *why = NULL;
	size_t j;
	int i;

	for (i = 0; i < m->n && !why; i++) {
		int rc = hd_reach_path(&p, r, id_of(s, i), NULL);

		if ((rc == 0) != (m->dist[i] < INF)) {
			why = "path found iff reachable: no";
			break;
		}
		if (rc)
			continue;
		if ((int)p.n != m->dist[i] + 1 ||
		    !m->root[(hd_store_address(s, p.nodes[0]) - ADDR(0)) / 0x28])
			why = "a path is not shortest or starts off a root";
		for (j = 1; j < p.n && !why; j++)
			if (!m->adj[(hd_store_address(s, p.nodes[j - 1]) -
				     ADDR(0)) / 0x28]
				   [(hd_store_address(s, p.nodes[j]) - ADDR(0)) /
				    0x28])
				why = "a path step is no reference";
	}
	hd_root_path_free(&p);
	return why;
}

static const char *check_subgraph(const hd_store *s, const struct model *m,
				  const int *tg, int nt, unsigned depth,
				  const hd_nodes *out)
{
	int i, k, want;

	for (i = 0; i < m->n; i++) {
		for (k = 0, want = 0; k < nt && !want; k++)
			want = m->d[tg[k]][i] < INF &&
			       (!depth || m->d[tg[k]][i] <= (int)depth);
		if (want != in_set(out, id_of(s, i)))
			return "subgraph-of differs from the model";
	}
	return NULL;
}

static void test_paths__random_vs_naive(void)
{
	int round, nt, k, tg[RN];

	for (round = 0; round < 400; round++) {
		struct text t = { 0 };
		struct model m;
		hd_nodes set, kept = { 0 }, unr = { 0 };
		hd_reach *r = NULL;
		hd_store *s;
		const char *why = NULL;
		unsigned depth = rnd(4);

		random_graph(&t, &m);
		s = t_store_of(t.p, t.len);
		free(t.p);
		T_ASSERT(s);
		T_EQ(hd_store_node_count(s), m.n);
		nt = 1 + (int)rnd((unsigned)m.n);
		for (k = 0; k < nt; k++)
			tg[k] = (int)rnd((unsigned)m.n);
		set = set_of(s, tg, (size_t)nt);
		/* set_of keeps repeats: make it a set */
		for (k = 1; k < (int)set.n; k++)
			if (set.ids[k] == set.ids[k - 1]) {
				memmove(set.ids + k, set.ids + k + 1,
					(set.n - (size_t)k - 1) *
						sizeof(*set.ids));
				set.n--;
				k--;
			}
		T_RC(hd_reach_new(&r, s, 0, NULL), 0);
		T_RC(hd_reach_roots_of(&kept, &unr, r, &set, 0, NULL), 0);
		why = check_shortest(s, &m, r, tg, nt, &kept, &unr);
		if (!why)
			why = check_paths(s, &m, r);
		if (!why) {
			T_RC(hd_roots_of(&kept, &unr, s,
					 &set, HD_ROOTS_ALL_ANCESTORS, NULL), 0);
			why = check_ancestors(s, &m, tg, nt, &kept);
		}
		if (!why) {
			T_RC(hd_subgraph_of(&kept, s, &set, depth, NULL), 0);
			why = check_subgraph(s, &m, tg, nt, depth, &kept);
		}
		hd_reach_free(r);
		hd_nodes_free(&kept);
		hd_nodes_free(&unr);
		free(set.ids);
		hd_store_close(s);
		if (why) {
			T_FAIL("round %d (n %d): %s", round, m.n, why);
			return;
		}
	}
}

/* ---- a long chain: nothing may recurse ---- */

#define CHAIN 300000

static void test_paths__long_chain(void)
{
	struct text t = { 0 };
	hd_nodes set = { 0 }, kept = { 0 }, unr = { 0 };
	hd_root_path p = { 0 };
	hd_node_id last, first;
	hd_store *s;
	int i;

	put(&t, "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		"[\"0x%llx\"]}\n", (unsigned long long)ADDR(0));
	for (i = 0; i < CHAIN; i++)
		put(&t, "{\"address\":\"0x%llx\", \"type\":\"OBJECT\", "
			"\"references\":[\"0x%llx\"]}\n",
		    (unsigned long long)ADDR(i),
		    (unsigned long long)ADDR(i + 1 < CHAIN ? i + 1 : 0));
	s = t_store_of(t.p, t.len);
	free(t.p);
	T_ASSERT(s);
	last = id_of(s, CHAIN - 1);
	first = id_of(s, 0);
	set.ids = &last;
	set.n = 1;
	T_RC(hd_roots_of(&kept, &unr, s, &set, 0, NULL), 0);
	T_EQ(kept.n, CHAIN);
	T_RC(hd_roots_of(&kept, &unr, s, &set, HD_ROOTS_ALL_ANCESTORS, NULL),
	     0);
	T_EQ(kept.n, CHAIN);
	T_RC(hd_path(&p, s, last, 0, NULL), 0);
	T_EQ(p.n, CHAIN);
	T_EQ(p.nodes[0], first);
	T_EQ(p.nodes[CHAIN - 1], last);
	set.ids = &first;
	T_RC(hd_subgraph_of(&kept, s, &set, 0, NULL), 0);
	T_EQ(kept.n, CHAIN);
	T_RC(hd_subgraph_of(&kept, s, &set, 1000, NULL), 0);
	T_EQ(kept.n, 1001);
	hd_nodes_free(&kept);
	hd_nodes_free(&unr);
	hd_root_path_free(&p);
	hd_store_close(s);
}

/*
 * The rule: program-level holders before VM caches and machine_context.
 * 9 is held by a chain of three objects from vm (0 1 2), by a constant
 * cache of an iseq from vm (5 6), and by machine_context directly.
 */
static void test_paths__program_level_first(void)
{
	static const char *const base = "root vm 0 5\nobj 0 1\nobj 1 2\n"
					 "imemo 5 iseq 6\nimemo 6 constcache 9\n"
					 "obj 9\n";
	char spec[512], note[256];
	hd_root_path p = { 0 };
	hd_store *s;

	/* all three ways: the longest, through the objects */
	snprintf(spec, sizeof(spec), "%sobj 2 9\nroot machine_context 9\n",
		 base);
	T_ASSERT((s = graph(spec)));
	T_RC(hd_path(&p, s, id_of(s, 9), 0, NULL), 0);
	T_STREQ(path_names(s, &p), "0 1 2 9");
	T_STREQ(hd_store_root_name(s, p.root), "vm");
	T_EQ(p.via, 0);
	T_EQ(p.passed_over, HD_PATH_VIA_STACK);
	T_ASSERT(hd_path_note(note, sizeof(note), &p) > 0);
	T_STREQ(note, "program-level holders preferred to the shortest path, "
		      "from machine_context (a C stack, maybe a stale pointer)");
	hd_store_close(s);
	/* no stack: the objects' over the cache's, one hop shorter */
	snprintf(spec, sizeof(spec), "%sobj 2 9\n", base);
	T_ASSERT((s = graph(spec)));
	T_RC(hd_path(&p, s, id_of(s, 9), 0, NULL), 0);
	T_STREQ(path_names(s, &p), "0 1 2 9");
	T_EQ(p.passed_over, HD_PATH_VIA_CACHE);
	hd_store_close(s);
	/* only the cache and the stack: the cache's, cheaper */
	snprintf(spec, sizeof(spec), "%sobj 2\nroot machine_context 9\n",
		 base);
	T_ASSERT((s = graph(spec)));
	T_RC(hd_path(&p, s, id_of(s, 9), 0, NULL), 0);
	T_STREQ(path_names(s, &p), "5 6 9");
	T_EQ(p.via, HD_PATH_VIA_CACHE);
	T_EQ(p.passed_over, HD_PATH_VIA_STACK);
	T_STREQ(hd_path_via_name(HD_PATH_VIA_STACK), "machine_context");
	hd_store_close(s);
	/* only the cache: its path, and nothing to say */
	snprintf(spec, sizeof(spec), "%sobj 2\n", base);
	T_ASSERT((s = graph(spec)));
	T_RC(hd_path(&p, s, id_of(s, 9), 0, NULL), 0);
	T_STREQ(path_names(s, &p), "5 6 9");
	T_EQ(p.via, HD_PATH_VIA_CACHE);
	T_EQ(p.passed_over, 0);
	T_EQ(hd_path_note(note, sizeof(note), &p), 0);
	T_STREQ(note, "");
	hd_root_path_free(&p);
	hd_store_close(s);
}

/* The folding rule over a path written as text. */
static void test_paths__text_fold(void)
{
	static const char chain[] = "vm -> A -> P -> E -> P -> E -> P -> E -> "
				    "P -> E -> X";
	static const char same[] = "vm -> H -> H -> H -> H -> H -> H -> H";
	static const char shortrun[] = "vm -> H -> H -> H -> X";
	hd_path_runs r = { 0 };

	T_RC(hd_path_text_fold(&r, chain, strlen(chain), NULL, NULL), 0);
	T_EQ(r.n, 1);
	T_EQ(r.runs[0].start, 2);
	T_EQ(r.runs[0].period, 2);
	T_EQ(r.runs[0].count, 4);
	/* the target (the last H) is never part of a run */
	T_RC(hd_path_text_fold(&r, same, strlen(same), NULL, NULL), 0);
	T_EQ(r.n, 1);
	T_EQ(r.runs[0].start, 1);
	T_EQ(r.runs[0].period, 1);
	T_EQ(r.runs[0].count, 6);
	/* under min_hops: nothing folds */
	T_RC(hd_path_text_fold(&r, shortrun, strlen(shortrun), NULL, NULL), 0);
	T_EQ(r.n, 0);
	hd_path_runs_free(&r);
}

static const struct t_case cases[] = {
	T_CASE(paths__chain),
	T_CASE(paths__diamond),
	T_CASE(paths__shortest),
	T_CASE(paths__cycles),
	T_CASE(paths__root_categories),
	T_CASE(paths__unreachable_and_dangling),
	T_CASE(paths__partial_dump),
	T_CASE(paths__empty_targets),
	T_CASE(paths__all_ancestors),
	T_CASE(paths__skip_weak),
	T_CASE(paths__subgraph_depth),
	T_CASE(paths__bad_args),
	T_CASE(paths__random_vs_naive),
	T_CASE(paths__long_chain),
	T_CASE(paths__program_level_first),
	T_CASE(paths__text_fold),
};

T_MAIN(cases)
