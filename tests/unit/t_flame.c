/*
 * t_flame.c - hd_flame: the call tree and its writers on hand-made
 * stacks (folded lines exactly, escapes, the depth cap, a stack 200,000
 * frames deep written without recursion, speedscope's JSON escapes,
 * pprof gzip'd), and hd_flame_build on a hand-built graph (tgraph.h:
 * node i has memsize 40 + i): path totals are the reached totals, a
 * stack source is called and charged, retained charges every reached
 * byte once, no source is HD_FLAME_NO_STACKS; hd_stack_rows_json and
 * hd_frame_json on a small dump with stacks, byte for byte.
 */
#include "heapdump.h"
#include "t.h"
#include "tgraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct out {
	char *p;
	size_t n;
};

static int sink(const void *buf, size_t n, void *payload)
{
	struct out *o = payload;

	o->p = realloc(o->p, o->n + n + 1);
	if (!o->p)
		abort();
	memcpy(o->p + o->n, buf, n);
	o->n += n;
	o->p[o->n] = 0;
	return 0;
}

static struct out written(const hd_flame *f, int format, int metric)
{
	struct out o = { NULL, 0 };

	if (hd_flame_write(f, format, "t", metric, sink, &o, NULL))
		o.n = (size_t)-1; /* the callers' checks fail on it */
	if (!o.p)
		o.p = calloc(1, 1);
	return o;
}

static void add(hd_flame *f, const char *a, const char *b, const char *c,
		uint64_t w)
{
	const char *fr[3] = { a, b, c };

	T_RC(hd_flame_add(f, fr, NULL, c ? 3 : b ? 2 : 1, w, NULL), 0);
}

static void test_flame__folded(void)
{
	hd_flame *f = NULL;
	struct out o;
	int sat = 1;

	T_RC(hd_flame_new(&f, 0, NULL), 0);
	add(f, "a", "b", NULL, 5);
	add(f, "a", "b", "c", 7);
	add(f, "a", NULL, NULL, 1);
	add(f, "x", "b", NULL, 2);
	add(f, "a", "b", NULL, 5); /* the same stack again: one line */
	T_EQ(hd_flame_total(f, &sat), 20);
	T_EQ(sat, 0);
	T_EQ(hd_flame_node_count(f), 5);
	o = written(f, HD_FLAME_FOLDED, HD_FLAME_MEMSIZE);
	T_STREQ(o.p, "a 1\na;b 10\na;b;c 7\nx;b 2\n");
	free(o.p);
	hd_flame_free(f);
}

static void test_flame__index(void)
{
	hd_flame *f = NULL;
	hd_flame_node_info r, a, b;

	T_RC(hd_flame_new(&f, 0, NULL), 0);
	add(f, "x", "b", NULL, 2);
	add(f, "a", "b", "c", 7);
	add(f, "a", NULL, NULL, 1);
	add(f, "a", "b", NULL, 10);
	T_RC(hd_flame_node(&r, f, HD_FLAME_ROOT), HD_EINVAL); /* no index */
	T_RC(hd_flame_index(f, NULL), 0);
	T_RC(hd_flame_node(&r, f, HD_FLAME_ROOT), 0);
	T_EQ(r.total, 20);
	T_EQ(r.nchildren, 2);
	T_RC(hd_flame_node(&a, f, r.children[0]), 0);
	T_STREQ(a.name, "a");
	T_EQ(a.total, 18);
	T_EQ(a.self, 1);
	T_EQ(a.depth, 1);
	T_RC(hd_flame_node(&b, f, r.children[1]), 0);
	T_STREQ(b.name, "x");
	T_EQ(b.total, 2);
	T_RC(hd_flame_node(&b, f, a.children[0]), 0);
	T_STREQ(b.name, "b");
	T_EQ(b.total, 17);
	T_EQ(b.nchildren, 1);
	T_RC(hd_flame_node(&b, f, 99), HD_ENOTFOUND);
	add(f, "a", NULL, NULL, 1); /* a change: index again first */
	T_RC(hd_flame_node(&r, f, HD_FLAME_ROOT), HD_EINVAL);
	T_RC(hd_flame_index(f, NULL), 0);
	T_RC(hd_flame_node(&r, f, HD_FLAME_ROOT), 0);
	T_EQ(r.total, 21);
	hd_flame_free(f);
}

static void test_flame__escapes(void)
{
	hd_flame *f = NULL;
	struct out o;
	const char *fr[2] = { "semi;colon", "new\nline\x7f" };
	const char *q[1] = { "say \"hi\"\\" };

	T_RC(hd_flame_new(&f, 0, NULL), 0);
	T_RC(hd_flame_add(f, fr, NULL, 2, 3, NULL), 0);
	T_RC(hd_flame_add(f, q, NULL, 1, 1, NULL), 0);
	o = written(f, HD_FLAME_FOLDED, HD_FLAME_COUNT);
	T_STREQ(o.p, "semi\\x3bcolon;new\\x0aline\\x7f 3\n"
		     "say \"hi\"\\ 1\n");
	free(o.p);
	o = written(f, HD_FLAME_SPEEDSCOPE, HD_FLAME_COUNT);
	T_ASSERT(strstr(o.p, "{\"name\":\"say \\\"hi\\\"\\\\\"}") != NULL);
	T_ASSERT(strstr(o.p, "{\"name\":\"new\\nline") != NULL);
	T_ASSERT(strstr(o.p, "\"unit\":\"none\"") != NULL);
	T_ASSERT(strstr(o.p, "\"endValue\":4,") != NULL);
	T_ASSERT(strstr(o.p, "\"weights\":[3,1]") != NULL);
	free(o.p);
	o = written(f, HD_FLAME_PPROF, HD_FLAME_COUNT);
	T_ASSERT(o.n > 20);
	T_EQ((unsigned char)o.p[0], 0x1f);
	T_EQ((unsigned char)o.p[1], 0x8b);
	free(o.p);
	hd_flame_free(f);
}

static void test_flame__depth(void)
{
	hd_flame *f = NULL;
	struct out o;
	const char *fr[5] = { "a", "b", "c", "d", "e" };

	T_RC(hd_flame_new(&f, 2, NULL), 0);
	T_RC(hd_flame_add(f, fr, NULL, 5, 4, NULL), 0);
	T_RC(hd_flame_add(f, fr, NULL, 3, 1, NULL), 0);
	T_RC(hd_flame_add(f, fr, NULL, 2, 2, NULL), 0);
	o = written(f, HD_FLAME_FOLDED, HD_FLAME_MEMSIZE);
	T_STREQ(o.p, "a;b 2\na;b;(deeper) 5\n");
	T_EQ(hd_flame_total(f, NULL), 7);
	free(o.p);
	hd_flame_free(f);
}

/* a stack deeper than any C stack would take recursion through */
static void test_flame__deep(void)
{
	enum { DEEP = 200000 };
	const char **fr = malloc(DEEP * sizeof(*fr));
	hd_flame *f = NULL;
	struct out o;
	size_t i, semis = 0;

	T_ASSERT(fr != NULL);
	for (i = 0; i < DEEP; i++)
		fr[i] = i % 2 ? "Proc" : "IMEMO/env";
	T_RC(hd_flame_new(&f, DEEP, NULL), 0);
	T_RC(hd_flame_add(f, fr, NULL, DEEP, 9, NULL), 0);
	T_EQ(hd_flame_node_count(f), DEEP);
	o = written(f, HD_FLAME_FOLDED, HD_FLAME_MEMSIZE);
	for (i = 0; i < o.n; i++)
		semis += o.p[i] == ';';
	T_EQ(semis, DEEP - 1);
	T_ASSERT(strcmp(o.p + o.n - 7, "Proc 9\n") == 0);
	free(o.p);
	o = written(f, HD_FLAME_PPROF, HD_FLAME_MEMSIZE);
	T_ASSERT(o.n > 0);
	free(o.p);
	hd_flame_free(f);
	free(fr);
}

static void add_root(struct graph *g, uint32_t v)
{
	g->root = realloc(g->root, (g->nroot + 1) * sizeof(*g->root));
	if (!g->root)
		abort();
	g->root[g->nroot++] = v;
}

/* root -> 0, 5;  0 -> 1, 2, 3;  1 -> 6;  3 -> 4;  8 -> 7 (unreached) */
static hd_store *small(struct graph *g)
{
	g_init(g, 9);
	add_root(g, 0);
	add_root(g, 5);
	g_edge(g, 0, 1);
	g_edge(g, 0, 2);
	g_edge(g, 0, 3);
	g_edge(g, 1, 6);
	g_edge(g, 3, 4);
	g_edge(g, 8, 7);
	return g_store(g);
}

/* even nodes have the stack "main;n<i>", odd ones none */
static size_t even_stacks(void *ctx, hd_node_id node, const char **frames,
			  size_t *lens, size_t max)
{
	static char name[16];

	(*(int *)ctx)++;
	if (node % 2 || max < 2)
		return 0;
	snprintf(name, sizeof(name), "n%u", (unsigned)node);
	frames[0] = "main";
	lens[0] = 4;
	frames[1] = name;
	lens[1] = strlen(name);
	return 2;
}

static void test_flame__build(void)
{
	struct graph g;
	hd_store *s;
	hd_flame *f = NULL;
	hd_flame_options o = HD_FLAME_OPTIONS_INIT;
	hd_error err = { 0 };
	struct out w;
	int calls = 0;

	T_ASSERT((s = small(&g)));
	/* by path: the reached objects, 0 1 2 3 4 5 6 */
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), 0);
	T_EQ(hd_flame_total(f, NULL), 7 * 40 + 21);
	hd_flame_free(f);
	o.metric = HD_FLAME_COUNT;
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), 0);
	T_EQ(hd_flame_total(f, NULL), 7);
	hd_flame_free(f);
	/* by stack, memsize: every object, at its stack or "(no stack)" */
	o.by = HD_FLAME_BY_STACK;
	o.metric = HD_FLAME_MEMSIZE;
	o.stack = even_stacks;
	o.stack_ctx = &calls;
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), 0);
	T_EQ(calls, 9);
	T_EQ(hd_flame_total(f, NULL), 9 * 40 + 36);
	w = written(f, HD_FLAME_FOLDED, HD_FLAME_MEMSIZE);
	T_ASSERT(strstr(w.p, "main;n4 44\n") != NULL);
	T_ASSERT(strstr(w.p, "(no stack) 176\n") != NULL); /* 41+43+45+47 */
	free(w.p);
	hd_flame_free(f);
	/* retained: 1 (odd) is charged to 0, 6 is its own, 3 to 0 */
	o.metric = HD_FLAME_RETAINED;
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), 0);
	T_EQ(hd_flame_total(f, NULL), 7 * 40 + 21);
	w = written(f, HD_FLAME_FOLDED, HD_FLAME_RETAINED);
	T_ASSERT(strstr(w.p, "main;n0 124\n") && strstr(w.p, "main;n2 42\n") &&
		 strstr(w.p, "main;n4 44\n") && strstr(w.p, "main;n6 46\n") &&
		 strstr(w.p, "(no stack) 45\n"));
	T_EQ(w.n, strlen("main;n0 124\nmain;n2 42\nmain;n4 44\nmain;n6 46\n"
			 "(no stack) 45\n"));
	free(w.p);
	hd_flame_free(f);
	/* no source: the message, no tree */
	o.stack = NULL;
	f = (hd_flame *)1;
	T_RC(hd_flame_build(&f, s, NULL, &o, &err), HD_ENOTFOUND);
	T_ASSERT(f == NULL);
	T_STREQ(err.msg, HD_FLAME_NO_STACKS);
	hd_store_close(s);
	g_free(&g);
}

/* the objects of a frame: by path, its dominated objects; retained by
 * stack, those charged to it; a version 1 caller's array untouched */
static void test_flame__objects(void)
{
	struct graph g;
	hd_store *s;
	hd_flame *f = NULL;
	hd_flame_options o = HD_FLAME_OPTIONS_INIT;
	hd_flame_node_info k;
	hd_nodes set = { 0 };
	uint32_t fo[9];
	int calls = 0;

	T_ASSERT((s = small(&g)));
	o.metric = HD_FLAME_COUNT;
	o.frame_of = fo;
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), 0);
	T_EQ(fo[7], UINT32_MAX); /* unreached */
	T_EQ(fo[8], UINT32_MAX);
	T_RC(hd_flame_objects(&set, f, fo, 9, fo[0], NULL), HD_EINVAL);
	T_RC(hd_flame_index(f, NULL), 0);
	T_RC(hd_flame_objects(&set, f, fo, 9, fo[0], NULL), 0);
	/* the roots 0 and 5 have one name: one frame, over all 7 */
	T_EQ(fo[5], fo[0]);
	T_EQ(set.n, 7);
	T_ASSERT(set.n == 7 && set.ids[0] == 0 && set.ids[6] == 6);
	T_RC(hd_flame_node(&k, f, fo[0]), 0);
	T_EQ(k.total, set.n);
	hd_nodes_free(&set);
	/* 1 2 3 under 0, 4 and 6 under them */
	T_EQ(fo[1], fo[3]);
	T_RC(hd_flame_objects(&set, f, fo, 9, fo[3], NULL), 0);
	T_ASSERT(set.n == 5 && set.ids[0] == 1 && set.ids[2] == 3 &&
		 set.ids[3] == 4 && set.ids[4] == 6);
	T_RC(hd_flame_node(&k, f, fo[3]), 0);
	T_EQ(k.total, set.n);
	hd_nodes_free(&set);
	T_RC(hd_flame_objects(&set, f, fo, 9, fo[4], NULL), 0);
	T_ASSERT(set.n == 2 && set.ids[0] == 4 && set.ids[1] == 6);
	hd_nodes_free(&set);
	T_RC(hd_flame_objects(&set, f, fo, 9, HD_FLAME_ROOT, NULL), 0);
	T_EQ(set.n, 7);
	hd_nodes_free(&set);
	T_RC(hd_flame_objects(&set, f, fo, 9, 999, NULL), HD_ENOTFOUND);
	hd_flame_free(f);
	/* retained by stack: 1 and 3 are charged to 0's "main;n0" */
	o.by = HD_FLAME_BY_STACK;
	o.metric = HD_FLAME_RETAINED;
	o.stack = even_stacks;
	o.stack_ctx = &calls;
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), 0);
	T_RC(hd_flame_index(f, NULL), 0);
	T_EQ(fo[1], fo[0]);
	T_EQ(fo[3], fo[0]);
	T_RC(hd_flame_objects(&set, f, fo, 9, fo[0], NULL), 0);
	T_ASSERT(set.n == 3 && set.ids[0] == 0 && set.ids[1] == 1 &&
		 set.ids[2] == 3);
	hd_nodes_free(&set);
	T_RC(hd_flame_node(&k, f, fo[0]), 0); /* "main": all but 5 */
	T_RC(hd_flame_objects(&set, f, fo, 9, k.parent, NULL), 0);
	T_EQ(set.n, 6);
	hd_nodes_free(&set);
	hd_flame_free(f);
	/* version 1: no frame_of read or written */
	fo[0] = 12345;
	o.version = 1;
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), 0);
	T_EQ(fo[0], 12345);
	hd_flame_free(f);
	hd_store_close(s);
	g_free(&g);
}

static void test_flame__bad_arguments(void)
{
	hd_flame *f = (hd_flame *)1;
	hd_flame_options o = HD_FLAME_OPTIONS_INIT;
	struct graph g;
	hd_store *s;

	T_RC(hd_flame_new(NULL, 0, NULL), HD_EINVAL);
	T_RC(hd_flame_build(&f, NULL, NULL, NULL, NULL), HD_EINVAL);
	T_ASSERT(f == NULL);
	T_ASSERT((s = small(&g)));
	o.by = 9;
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), HD_EINVAL);
	o = (hd_flame_options)HD_FLAME_OPTIONS_INIT;
	o.version = 99;
	T_RC(hd_flame_build(&f, s, NULL, &o, NULL), HD_EINVAL);
	T_RC(hd_flame_new(&f, 0, NULL), 0);
	T_RC(hd_flame_write(f, 7, NULL, 0, sink, NULL, NULL), HD_EINVAL);
	T_RC(hd_flame_child(f, 5, "x", 1, NULL, NULL), HD_EINVAL);
	hd_flame_free(f);
	hd_flame_free(NULL);
	hd_store_close(s);
	g_free(&g);
}

/* A dump with allocation stacks: two frames (a file name with a quote
 * and a tab), two stacks, an object without one */
static const char stacks_dump[] =
	"{\"type\":\"FRAME\", \"id\":1, \"file\":\"app.rb\", \"line\":3, "
	"\"label\":\"<main>\"}\n"
	"{\"type\":\"FRAME\", \"id\":2, \"file\":\"a\\\"b\\t.rb\", \"line\":7, "
	"\"method\":\"make\", \"class\":\"Helper\", \"label\":\"Helper.make\"}\n"
	"{\"type\":\"STACK\", \"id\":1, \"frames\":[1,2]}\n"
	"{\"type\":\"STACK\", \"id\":2, \"frames\":[1]}\n"
	"{\"address\":\"0x1000\", \"type\":\"STRING\", \"stack\":1, "
	"\"memsize\":40}\n"
	"{\"address\":\"0x1028\", \"type\":\"STRING\", \"stack\":1, "
	"\"memsize\":40}\n"
	"{\"address\":\"0x1050\", \"type\":\"ARRAY\", \"stack\":2, "
	"\"memsize\":100}\n"
	"{\"address\":\"0x1078\", \"type\":\"STRING\", \"memsize\":10}\n";

static char *json_of(const hd_store *s, const hd_stack_rows *r, size_t top)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);

	if (!f)
		return strdup("(open_memstream failed)");
	if (r)
		hd_stack_rows_json(f, s, r, top);
	else
		hd_frame_json(f, s, (uint32_t)top);
	if (fclose(f) != 0) {
		free(p);
		return strdup("(fclose failed)");
	}
	return p;
}

/* hd_stack_rows_json, the one writer of stats, diff, leaks, serve and
 * the gem: every field, frames outermost first, strings escaped, the
 * first top rows, by frame; an unknown frame is its id alone */
static void test_flame__stacks_json(void)
{
	char path[] = "/tmp/t_flame_stacksXXXXXX";
	int fd = mkstemp(path);
	hd_stack_options o = HD_STACK_OPTIONS_INIT;
	hd_stack_rows r = { 0 };
	hd_store *s = NULL;
	char *j;

	T_ASSERT(fd >= 0);
	T_ASSERT(write(fd, stacks_dump, sizeof(stacks_dump) - 1) ==
		 (ssize_t)(sizeof(stacks_dump) - 1));
	close(fd);
	T_EQ(hd_store_build(&s, path, NULL, NULL), 0);
	unlink(path);
	o.sort = HD_SORT_COUNT;
	o.flags = HD_STATS_ALL;
	T_EQ(hd_stack_stats(&r, s, NULL, 0, &o, NULL), 0);
	j = json_of(s, &r, 0);
	T_STREQ(j, "{\"by\":\"stack\",\"with_stack\":{\"count\":3,\"memsize\":180},"
		   "\"without_stack\":{\"count\":1,\"memsize\":10},\"groups\":2,"
		   "\"rows\":[{\"stack\":1,\"count\":2,\"memsize\":80,\"frames\":["
		   "{\"frame\":1,\"file\":\"app.rb\",\"line\":3,\"label\":\"<main>\"},"
		   "{\"frame\":2,\"file\":\"a\\\"b\\t.rb\",\"line\":7,\"method\":"
		   "\"make\",\"class\":\"Helper\",\"label\":\"Helper.make\"}]},"
		   "{\"stack\":2,\"count\":1,\"memsize\":100,\"frames\":["
		   "{\"frame\":1,\"file\":\"app.rb\",\"line\":3,\"label\":\"<main>\"}]}]}");
	free(j);
	j = json_of(s, &r, 1); /* the first row; groups still counts both */
	T_ASSERT(strstr(j, "\"groups\":2,") && !strstr(j, "\"stack\":2"));
	free(j);
	hd_stack_rows_free(&r);
	o.by = HD_STACKS_BY_FRAME;
	o.sort = HD_SORT_MEMSIZE;
	T_EQ(hd_stack_stats(&r, s, NULL, 0, &o, NULL), 0);
	j = json_of(s, &r, 0);
	T_STREQ(j, "{\"by\":\"frame\",\"with_stack\":{\"count\":3,\"memsize\":180},"
		   "\"without_stack\":{\"count\":1,\"memsize\":10},\"groups\":2,"
		   "\"rows\":[{\"count\":3,\"memsize\":180,\"frame\":{\"frame\":1,"
		   "\"file\":\"app.rb\",\"line\":3,\"label\":\"<main>\"}},"
		   "{\"count\":2,\"memsize\":80,\"frame\":{\"frame\":2,\"file\":"
		   "\"a\\\"b\\t.rb\",\"line\":7,\"method\":\"make\",\"class\":"
		   "\"Helper\",\"label\":\"Helper.make\"}}]}");
	free(j);
	hd_stack_rows_free(&r);
	j = json_of(s, NULL, 99);
	T_STREQ(j, "{\"frame\":99}");
	free(j);
	hd_store_close(s);
}

static const struct t_case cases[] = {
	T_CASE(flame__folded),
	T_CASE(flame__index),
	T_CASE(flame__escapes),
	T_CASE(flame__depth),
	T_CASE(flame__deep),
	T_CASE(flame__build),
	T_CASE(flame__objects),
	T_CASE(flame__bad_arguments),
	T_CASE(flame__stacks_json),
};

T_MAIN(cases)
