/*
 * t_export.c - GML and DOT of small hand-made heaps: escaping, edges
 * only between emitted nodes, --collapse through chains, hidden arrays
 * and cycles, depth, roots, the node limit on a long chain.
 */
#include "t.h"
#include "t_dump.h"
#include "heapdump.h"

#include <unistd.h>

struct buf {
	char *p;
	size_t n, cap;
};

static int sink(const void *b, size_t n, void *payload)
{
	struct buf *o = payload;

	if (o->n + n + 1 > o->cap) {
		o->cap = (o->n + n + 1) * 2;
		if (!(o->p = realloc(o->p, o->cap)))
			abort();
	}
	memcpy(o->p + o->n, b, n);
	o->n += n;
	o->p[o->n] = '\0';
	return 0;
}

static int refuse(const void *b, size_t n, void *payload)
{
	(void)b;
	(void)n;
	(void)payload;
	return 42;
}

/* The GML (dot = 0) or DOT of s, from base when it is not NULL, or
 * NULL. */
static char *export_of(hd_store *s, const hd_export_base *base,
		       const hd_nodes *set, unsigned flags, uint32_t depth,
		       int dot)
{
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	hd_export *x = NULL;
	struct buf b = { NULL, 0, 0 };
	int rc;

	o.flags = flags;
	o.depth = depth;
	if (base ? hd_export_new_from(&x, base, set, &o, NULL) :
		   hd_export_new(&x, s, set, &o, NULL))
		return NULL;
	rc = dot ? hd_export_write_dot(x, sink, &b, NULL) :
		   hd_export_write_gml(x, sink, &b, NULL);
	hd_export_free(x);
	if (rc) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* export_of without a base, checked byte for byte against the same
 * graph made from a base (hd_export_new_from: serve's drawings): every
 * case below tests both. */
static char *export(hd_store *s, const hd_nodes *set, unsigned flags,
		    uint32_t depth, int dot)
{
	hd_export_base *base = NULL;
	char *a = export_of(s, NULL, set, flags, depth, dot), *b;

	if (!a)
		return NULL;
	if (hd_export_base_new(&base, s, flags, NULL))
		T_FAIL("hd_export_base_new");
	b = export_of(s, base, set, flags, depth, dot);
	hd_export_base_free(base);
	if (!b || strcmp(a, b) != 0)
		T_FAIL("from a base:\n%s\nwithout:\n%s", b ? b : "(failed)", a);
	free(b);
	return a;
}

/* Occurrences of needle in hay, by hand: a strstr loop is quadratic under
 * ASan, whose strstr measures the whole haystack each call. */
static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, k = strlen(needle);
	const char *p;

	for (p = hay; *p; p++)
		if (*p == needle[0] && strncmp(p, needle, k) == 0) {
			n++;
			p += k - 1;
		}
	return n;
}

static hd_nodes set_of(const hd_store *s, const uint64_t *addrs, size_t n)
{
	hd_nodes set = { NULL, 0, 0 };
	size_t i;

	set.ids = calloc(n + 1, sizeof(*set.ids));
	set.cap = n + 1;
	for (i = 0; i < n; i++)
		set.ids[set.n++] = hd_store_find(s, addrs[i]);
	return set;
}

#define DUMP(text) t_store_of(text, sizeof(text) - 1)

/* A class whose name holds a quote, a backslash, a newline, an
 * ampersand, UTF-8 and an invalid byte; a file path (written raw, as
 * Ruby does) with a quote, a backslash, a tab, UTF-8 and an ampersand. */
static const char escapes[] =
	"{\"address\":\"0x10\", \"type\":\"CLASS\", "
	"\"name\":\"Fo\\\"o\\\\B&r\\n\xc3\xa4\xff\"}\n"
	"{\"address\":\"0x20\", \"type\":\"OBJECT\", \"class\":\"0x10\", "
	"\"file\":\"/a \"b\"\\c\t\xe2\x82\xac&.rb\", \"line\":3, "
	"\"method\":\"m\", \"generation\":7, \"memsize\":40, "
	"\"references\":[\"0x10\"]}\n";

static void test_export__gml_escapes(void)
{
	hd_store *s = DUMP(escapes);
	char *g;

	T_ASSERT(s);
	g = export(s, NULL, 0, 0, 0);
	hd_store_close(s);
	T_ASSERT(g);
	if (!strstr(g, "class \"Fo&quot;o\\B&amp;r&#10;&#228;&#255;\"") ||
	    !strstr(g, "file \"/a &quot;b&quot;\\c&#9;&#8364;&amp;.rb\" line 3") ||
	    !strstr(g, "label \"Fo&quot;o\\B&amp;r&#10;&#228;&#255; 0x20\"") ||
	    /* the class by its own name, as to-dot and the CLI name it */
	    !strstr(g, "node [ id 0 label \"Fo&quot;o\\B&amp;r&#10;&#228;&#255; "
		       "0x10\" name \"Fo&quot;o\\B&amp;r&#10;&#228;&#255;\" "
		       "address \"0x10\" class \"") ||
	    !strstr(g, "address \"0x20\"") || !strstr(g, "type \"OBJECT\"") ||
	    !strstr(g, "memsize 40 generation 7") ||
	    !strstr(g, "method \"m\"") ||
	    !strstr(g, "edge [ source 1 target 0 ]")) {
		T_FAIL("unexpected GML:\n%s", g);
		free(g);
		return;
	}
	/* ASCII only, no raw newline inside a line, brackets balanced */
	{
		const unsigned char *p;
		size_t open = 0, close = 0;

		for (p = (const unsigned char *)g; *p; p++) {
			if (*p >= 0x80 || (*p < 0x20 && *p != '\n')) {
				T_FAIL("byte 0x%02x in GML", *p);
				break;
			}
			open += *p == '[';
			close += *p == ']';
		}
		if (open != close)
			T_FAIL("%zu [ but %zu ]", open, close);
	}
	T_EQ(count(g, "\n"), 1 + 1 + 2 + 1 + 1);
	free(g);
}

static void test_export__dot_escapes(void)
{
	hd_store *s = DUMP(escapes);
	char *g;

	T_ASSERT(s);
	g = export(s, NULL, 0, 0, 1);
	hd_store_close(s);
	T_ASSERT(g);
	if (!strstr(g, "n1 [label=\"Fo\\\"o\\\\B&amp;r\\n\xc3\xa4&#255;\\n0x20\", "
		       "fillcolor=\"#8dd3c7\"") ||
	    /* a class is drawn by its own name */
	    !strstr(g, "n0 [label=\"Fo\\\"o\\\\B&amp;r\\n\xc3\xa4&#255;\\n0x10\", "
		       "fillcolor=\"#ffed6f\"") ||
	    !strstr(g, "n1 -> n0\n") || strncmp(g, "digraph heap {", 14) ||
	    strcmp(g + strlen(g) - 2, "}\n")) {
		T_FAIL("unexpected DOT:\n%s", g);
		free(g);
		return;
	}
	free(g);
}

/* a -> b -> c, a -> c, a -> a; roots vm: a, c; global: c */
static const char abc[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0xa0\", \"0xc0\"]}\n"
	"{\"type\":\"ROOT\", \"root\":\"global_tbl\", \"references\":[\"0xc0\"]}\n"
	"{\"address\":\"0xa0\", \"type\":\"OBJECT\", \"references\":"
	"[\"0xb0\", \"0xc0\", \"0xb0\", \"0xa0\", \"0xdead\"]}\n"
	"{\"address\":\"0xb0\", \"type\":\"STRING\", \"references\":[\"0xc0\"]}\n"
	"{\"address\":\"0xc0\", \"type\":\"STRING\"}\n";

static void test_export__only_emitted_edges(void)
{
	hd_store *s = DUMP(abc);
	const uint64_t pick[] = { 0xa0, 0xc0 };
	hd_nodes set;
	char *g;

	T_ASSERT(s);
	set = set_of(s, pick, 2);
	g = export(s, &set, 0, 0, 0);
	hd_nodes_free(&set);
	hd_store_close(s);
	T_ASSERT(g);
	/* nodes a=0, c=1, roots vm=2, global_tbl=3; no b, no 0xdead */
	if (count(g, "  node [") != 4 || count(g, "  edge [") != 5 ||
	    !strstr(g, "edge [ source 0 target 1 ]") ||
	    !strstr(g, "edge [ source 0 target 0 ]") ||
	    !strstr(g, "node [ id 2 label \"ROOT vm\" type \"ROOT\" root \"vm\" ]") ||
	    !strstr(g, "edge [ source 2 target 0 ]") ||
	    !strstr(g, "edge [ source 2 target 1 ]") ||
	    !strstr(g, "edge [ source 3 target 1 ]") || strstr(g, "0xb0")) {
		T_FAIL("unexpected GML:\n%s", g);
		free(g);
		return;
	}
	free(g);
}

static void test_export__whole_heap_dedup(void)
{
	hd_store *s = DUMP(abc);
	char *g;

	T_ASSERT(s);
	g = export(s, NULL, 0, 0, 0);
	hd_store_close(s);
	T_ASSERT(g);
	/* a->b, a->c, a->a (b repeated once), b->c; roots vm->a, vm->c,
	 * global->c */
	T_EQ(count(g, "  node ["), 5);
	T_EQ(count(g, "  edge ["), 7);
	free(g);
}

static void test_export__depth(void)
{
	hd_store *s = DUMP(abc);
	const uint64_t pick[] = { 0xb0 };
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	hd_export *x = NULL;
	hd_nodes set;

	T_ASSERT(s);
	set = set_of(s, pick, 1);
	o.depth = 0;
	T_RC(hd_export_new(&x, s, &set, &o, NULL), 0);
	T_EQ(hd_export_object_count(x), 1);
	T_EQ(hd_export_node_count(x), 1); /* no root holds b */
	hd_export_free(x);
	o.depth = 1;
	T_RC(hd_export_new(&x, s, &set, &o, NULL), 0);
	T_EQ(hd_export_object_count(x), 2); /* b, c */
	T_EQ(hd_export_node_count(x), 4);   /* and both roots of c */
	hd_export_free(x);
	set.ids[0] = hd_store_find(s, 0xa0);
	o.depth = 1;
	T_RC(hd_export_new(&x, s, &set, &o, NULL), 0);
	T_EQ(hd_export_object_count(x), 3);
	hd_export_free(x);
	hd_nodes_free(&set);
	hd_store_close(s);
}

/*
 * a -> imemo1 -> imemo2 -> b (a chain of IMEMOs); a -> hidden array ->
 * c (an array without class); a -> Array d -> c (an array with a class,
 * kept); e -> imemo3 <-> imemo4 -> f (a cycle of folded nodes); a Set
 * g -> its hash -> c; vm root -> imemo1.
 */
static const char folds[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1010\"]}\n"
	"{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Array\"}\n"
	"{\"address\":\"0x110\", \"type\":\"CLASS\", \"name\":\"Set\"}\n"
	"{\"address\":\"0x120\", \"type\":\"CLASS\", \"name\":\"Hash\"}\n"
	"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"references\":"
	"[\"0x1010\", \"0x1030\", \"0x1040\"]}\n"
	"{\"address\":\"0x1010\", \"type\":\"IMEMO\", \"imemo_type\":\"env\", "
	"\"references\":[\"0x1020\"]}\n"
	"{\"address\":\"0x1020\", \"type\":\"IMEMO\", \"imemo_type\":\"cref\", "
	"\"references\":[\"0x1100\"]}\n"
	"{\"address\":\"0x1030\", \"type\":\"ARRAY\", \"length\":1, "
	"\"references\":[\"0x1200\"]}\n"
	"{\"address\":\"0x1040\", \"type\":\"ARRAY\", \"class\":\"0x100\", "
	"\"length\":1, \"references\":[\"0x1200\"]}\n"
	"{\"address\":\"0x1100\", \"type\":\"STRING\"}\n"
	"{\"address\":\"0x1200\", \"type\":\"STRING\"}\n"
	"{\"address\":\"0x1300\", \"type\":\"OBJECT\", "
	"\"references\":[\"0x1310\"]}\n"
	"{\"address\":\"0x1310\", \"type\":\"IMEMO\", \"imemo_type\":\"ment\", "
	"\"references\":[\"0x1320\"]}\n"
	"{\"address\":\"0x1320\", \"type\":\"IMEMO\", \"imemo_type\":\"iseq\", "
	"\"references\":[\"0x1310\", \"0x1320\", \"0x1400\"]}\n"
	"{\"address\":\"0x1400\", \"type\":\"STRING\"}\n"
	"{\"address\":\"0x1500\", \"type\":\"OBJECT\", \"class\":\"0x110\", "
	"\"references\":[\"0x1510\"]}\n"
	"{\"address\":\"0x1510\", \"type\":\"HASH\", \"class\":\"0x120\", "
	"\"references\":[\"0x1200\"]}\n";

/* The graph id of the node at address addr in GML g, or -1. */
static long gid(const char *g, const char *addr)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), " address \"%s\"", addr);
	if (!(p = strstr(g, want)))
		return -1;
	while (p > g && strncmp(p, "node [ id ", 10))
		p--;
	return strtol(p + 10, NULL, 10);
}

static int has_edge(const char *g, const char *a, const char *b)
{
	char e[96];

	snprintf(e, sizeof(e), "edge [ source %ld target %ld ]", gid(g, a),
		 gid(g, b));
	return gid(g, a) >= 0 && gid(g, b) >= 0 && strstr(g, e) != NULL;
}

static void test_export__collapse(void)
{
	hd_store *s = DUMP(folds);
	hd_export *x = NULL;
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	char *g;

	T_ASSERT(s);
	o.flags = HD_EXPORT_COLLAPSE;
	T_RC(hd_export_new(&x, s, NULL, &o, NULL), 0);
	T_ASSERT(hd_export_folded(x, hd_store_find(s, 0x1010)));
	T_ASSERT(hd_export_folded(x, hd_store_find(s, 0x1030)));
	T_ASSERT(hd_export_folded(x, hd_store_find(s, 0x1510)));
	T_ASSERT(!hd_export_folded(x, hd_store_find(s, 0x1040)));
	T_ASSERT(!hd_export_folded(x, hd_store_find(s, 0x1000)));
	/* 3 classes, a, d, b, c, e, f, g; root vm */
	T_EQ(hd_export_object_count(x), 10);
	T_EQ(hd_export_node_count(x), 11);
	hd_export_free(x);
	g = export(s, NULL, HD_EXPORT_COLLAPSE, 0, 0);
	hd_store_close(s);
	T_ASSERT(g);
	if (!has_edge(g, "0x1000", "0x1100") || /* through two IMEMOs */
	    !has_edge(g, "0x1000", "0x1200") || /* through the hidden array */
	    !has_edge(g, "0x1000", "0x1040") || /* the Array is kept */
	    !has_edge(g, "0x1040", "0x1200") ||
	    !has_edge(g, "0x1300", "0x1400") || /* through a folded cycle */
	    !has_edge(g, "0x1500", "0x1200") || /* through the Set's hash */
	    strstr(g, "0x1010") || strstr(g, "0x1030") || strstr(g, "0x1510") ||
	    count(g, "  edge [") != 7 ||       /* and the root's, to b */
	    !strstr(g, "edge [ source 10 target ")) {
		T_FAIL("unexpected GML:\n%s", g);
		free(g);
		return;
	}
	free(g);
}

/* Without --collapse the same heap keeps every node. */
static void test_export__no_collapse(void)
{
	hd_store *s = DUMP(folds);
	char *g;

	T_ASSERT(s);
	g = export(s, NULL, 0, 0, 0);
	hd_store_close(s);
	T_ASSERT(g);
	T_EQ(count(g, "  node ["), 17); /* 16 objects, 1 root */
	T_ASSERT(has_edge(g, "0x1320", "0x1320"));
	free(g);
}

/* Selected folded nodes are not emitted; depth counts kept hops. */
static void test_export__collapse_depth(void)
{
	hd_store *s = DUMP(folds);
	const uint64_t pick[] = { 0x1000, 0x1010 };
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	hd_export *x = NULL;
	hd_nodes set;

	T_ASSERT(s);
	set = set_of(s, pick, 2);
	o.flags = HD_EXPORT_COLLAPSE;
	T_RC(hd_export_new(&x, s, &set, &o, NULL), 0);
	T_EQ(hd_export_object_count(x), 1);
	hd_export_free(x);
	o.depth = 1; /* a, then b, c and d (kept ones one hop away) */
	T_RC(hd_export_new(&x, s, &set, &o, NULL), 0);
	T_EQ(hd_export_object_count(x), 4);
	hd_export_free(x);
	hd_nodes_free(&set);
	hd_store_close(s);
}

static void test_export__sink_error(void)
{
	hd_store *s = DUMP(abc);
	hd_export *x = NULL;
	hd_error err;

	T_ASSERT(s);
	T_RC(hd_export_new(&x, s, NULL, NULL, NULL), 0);
	T_RC(hd_export_write_gml(x, refuse, NULL, &err), 42);
	T_RC(hd_export_write_dot(x, refuse, NULL, &err), 42);
	hd_export_free(x);
	hd_store_close(s);
}

static void test_export__bad_options(void)
{
	hd_store *s = DUMP(abc);
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	hd_export *x = NULL;

	T_ASSERT(s);
	o.version = 99;
	T_RC(hd_export_new(&x, s, NULL, &o, NULL), HD_EINVAL);
	T_ASSERT(x == NULL);
	hd_store_close(s);
	hd_export_free(NULL);
}

/* 300,000 objects in a chain: over the default limit, fine above it. */
static void test_export__long_chain(void)
{
	const size_t n = 300000;
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	hd_export *x = NULL;
	struct buf b = { NULL, 0, 0 };
	hd_error err;
	hd_store *s;
	char *text, *p;
	size_t i;

	text = malloc(n * 96);
	T_ASSERT(text);
	for (i = 0, p = text; i < n; i++) {
		p += sprintf(p, "{\"address\":\"0x%zx\", \"type\":\"%s\"",
			     0x1000 + i * 0x28, i % 2 ? "IMEMO" : "OBJECT");
		if (i + 1 < n)
			p += sprintf(p, ", \"references\":[\"0x%zx\"]",
				     0x1000 + (i + 1) * 0x28);
		p += sprintf(p, "}\n");
	}
	s = t_store_of(text, (size_t)(p - text));
	free(text);
	T_ASSERT(s);
	T_EQ(hd_store_node_count(s), n);
	T_RC(hd_export_new(&x, s, NULL, &o, &err), HD_ELIMIT);
	T_ASSERT(strstr(err.msg, "300000 nodes"));
	o.max_nodes = n;
	T_RC(hd_export_new(&x, s, NULL, &o, &err), 0);
	T_RC(hd_export_write_gml(x, sink, &b, &err), 0);
	hd_export_free(x);
	T_EQ(count(b.p, "  node ["), n);
	T_EQ(count(b.p, "  edge ["), n - 1);
	T_ASSERT(strstr(b.p, "edge [ source 299998 target 299999 ]"));
	free(b.p);
	/* collapsed: every other node folded, edges skip them */
	o.flags = HD_EXPORT_COLLAPSE;
	b.p = NULL;
	b.n = b.cap = 0;
	T_RC(hd_export_new(&x, s, NULL, &o, &err), 0);
	T_EQ(hd_export_node_count(x), n / 2);
	T_RC(hd_export_write_gml(x, sink, &b, &err), 0);
	hd_export_free(x);
	hd_store_close(s);
	T_EQ(count(b.p, "  edge ["), n / 2 - 1);
	T_ASSERT(strstr(b.p, "edge [ source 0 target 1 ]"));
	free(b.p);
}

/* Reference names (issue 13): a constant, a second reference to the same
 * object where only the second has a name, a global on its root, an
 * unnamed reference. */
static const char named[] =
	"{\"type\":\"ROOT\",\"root\":\"global_tbl\",\"references\":[\"0x30\"],"
	"\"ref_names\":[\"$G\"]}\n"
	"{\"address\":\"0x10\",\"type\":\"OBJECT\",\"references\":"
	"[\"0x20\",\"0x30\",\"0x30\"],\"ref_names\":[\"@a\",null,\"@b\"]}\n"
	"{\"address\":\"0x20\",\"type\":\"OBJECT\",\"references\":[\"0x30\"]}\n"
	"{\"address\":\"0x30\",\"type\":\"OBJECT\"}\n";

static void test_export__names_labels(void)
{
	hd_store *s = DUMP(named);
	char *d, *g;

	T_ASSERT(s);
	d = export(s, NULL, 0, 0, 1);
	g = export(s, NULL, 0, 0, 0);
	hd_store_close(s);
	T_ASSERT(d && g);
	/* the first reference to 0x30 has no name, the second has: @b */
	if (!strstr(d, "  n0 -> n1 [label=\"@a\", fontname=\"Helvetica\", "
		       "fontsize=9]\n") ||
	    !strstr(d, "  n0 -> n2 [label=\"@b\"") ||
	    !strstr(d, "  n1 -> n2\n") ||
	    !strstr(d, "  n3 -> n2 [label=\"$G\"") ||
	    count(d, "label=\"@") != 2)
		T_FAIL("DOT labels:\n%s", d);
	if (!strstr(g, "  edge [ source 0 target 1 label \"@a\" ]\n") ||
	    !strstr(g, "  edge [ source 0 target 2 label \"@b\" ]\n") ||
	    !strstr(g, "  edge [ source 1 target 2 ]\n") ||
	    !strstr(g, "  edge [ source 3 target 2 label \"$G\" ]\n"))
		T_FAIL("GML labels:\n%s", g);
	free(d);
	free(g);
}

/* An edge through 20 folded hidden arrays: the label names the last 16
 * hops after "...", and stays bounded. */
static void test_export__names_long_fold(void)
{
	char text[8192];
	size_t n = 0;
	int i;
	hd_store *s;
	char *g;

	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "{\"address\":\"0x10\",\"type\":\"OBJECT\","
			      "\"references\":[\"0x100\"],"
			      "\"ref_names\":[\"@head\"]}\n");
	for (i = 0; i < 20; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "{\"address\":\"0x%x\",\"type\":"
				      "\"ARRAY\",\"references\":[\"0x%x\"],"
				      "\"ref_names\":[%d]}\n",
				      0x100 + i, i < 19 ? 0x101 + i : 0x20, i);
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "{\"address\":\"0x20\",\"type\":\"OBJECT\"}\n");
	s = t_store_of(text, n);
	T_ASSERT(s);
	g = export(s, NULL, HD_EXPORT_COLLAPSE, 0, 0);
	hd_store_close(s);
	T_ASSERT(g);
	if (!strstr(g, "  edge [ source 0 target 1 label \"... [4] [5] [6] [7] "
		       "[8] [9] [10] [11] [12] [13] [14] [15] [16] [17] [18] "
		       "[19]\" ]\n"))
		T_FAIL("long fold:\n%s", g);
	free(g);
}

/* Without names: no label, no attribute. */
static void test_export__names_none(void)
{
	hd_store *s = DUMP("{\"address\":\"0x10\",\"type\":\"OBJECT\","
			   "\"references\":[\"0x20\"]}\n"
			   "{\"address\":\"0x20\",\"type\":\"OBJECT\"}\n");
	char *d, *g;

	T_ASSERT(s);
	T_EQ(hd_store_has_ref_names(s), 0);
	d = export(s, NULL, 0, 0, 1);
	g = export(s, NULL, 0, 0, 0);
	hd_store_close(s);
	T_ASSERT(d && g);
	if (!strstr(d, "  n0 -> n1\n") || strstr(d, "label=\"@") ||
	    !strstr(g, "  edge [ source 0 target 1 ]\n"))
		T_FAIL("unnamed:\n%s\n%s", d, g);
	free(d);
	free(g);
}

/*
 * One base, many graphs (serve's drawings): an object of 3,000
 * references, a chain through hidden arrays, root categories holding
 * objects through folded ones; sets small and large (past the hash's
 * first size), at depths 0 to 2, each the same bytes as hd_export_new's;
 * a base of other flags refused.
 */
static void test_export__base_many(void)
{
	enum { WIDE = 3000 };
	size_t cap = 600000, n = 0, k;
	char *text = malloc(cap);
	hd_store *s;
	hd_export_base *base = NULL;
	hd_export *x = NULL;
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	hd_error err = { 0 };
	uint64_t addrs[WIDE + 1];
	int depth;

	T_ASSERT(text);
	n += (size_t)snprintf(text + n, cap - n,
			      "{\"type\":\"ROOT\",\"root\":\"vm\","
			      "\"references\":[\"0x20\",\"0x30\"]}\n"
			      "{\"address\":\"0x20\",\"type\":\"IMEMO\","
			      "\"imemo_type\":\"env\",\"references\":"
			      "[\"0x1000\",\"0x1001\"]}\n"
			      "{\"address\":\"0x30\",\"type\":\"ARRAY\","
			      "\"references\":[\"0x10\"]}\n"
			      "{\"address\":\"0x10\",\"type\":\"OBJECT\","
			      "\"references\":[");
	for (k = 0; k < WIDE; k++)
		n += (size_t)snprintf(text + n, cap - n, "%s\"0x%zx\"",
				      k ? "," : "", 0x1000 + k);
	n += (size_t)snprintf(text + n, cap - n, "]}\n");
	for (k = 0; k < WIDE; k++)
		n += (size_t)snprintf(text + n, cap - n,
				      "{\"address\":\"0x%zx\",\"type\":"
				      "\"%s\",\"references\":[\"0x%zx\"]}\n",
				      0x1000 + k, k % 3 == 1 ? "ARRAY" : "STRING",
				      0x1000 + (k + 1) % WIDE);
	T_ASSERT(n < cap);
	s = t_store_of(text, n);
	free(text);
	T_ASSERT(s);
	T_RC(hd_export_base_new(&base, s, HD_EXPORT_COLLAPSE, &err), 0);
	for (depth = 0; depth <= 2; depth++) {
		for (k = 0; k <= WIDE; k += WIDE / 4) {
			size_t m = k ? k : 3, i;
			hd_nodes set;
			char *a, *b;

			addrs[0] = 0x10;
			for (i = 1; i < m; i++)
				addrs[i] = 0x1000 + (i * 7) % WIDE;
			set = set_of(s, addrs, m);
			a = export_of(s, NULL, &set, HD_EXPORT_COLLAPSE,
				      (uint32_t)depth, 1);
			b = export_of(s, base, &set, HD_EXPORT_COLLAPSE,
				      (uint32_t)depth, 1);
			if (!a || !b || strcmp(a, b) != 0 ||
			    !strstr(a, "ROOT\\nvm"))
				T_FAIL("depth %d, %zu objects: from a base:\n%.200s"
				       "\nwithout:\n%.200s", depth, m,
				       b ? b : "(failed)", a ? a : "(failed)");
			free(a);
			free(b);
			free(set.ids);
		}
	}
	/* the base's flags are the graph's */
	T_RC(hd_export_new_from(&x, base, NULL, &o, &err), HD_EINVAL);
	T_ASSERT(x == NULL);
	hd_export_base_free(base);
	hd_store_close(s);
}

static const struct t_case cases[] = {
	T_CASE(export__base_many),
	T_CASE(export__names_labels),
	T_CASE(export__names_long_fold),
	T_CASE(export__names_none),
	T_CASE(export__gml_escapes),
	T_CASE(export__dot_escapes),
	T_CASE(export__only_emitted_edges),
	T_CASE(export__whole_heap_dedup),
	T_CASE(export__depth),
	T_CASE(export__collapse),
	T_CASE(export__no_collapse),
	T_CASE(export__collapse_depth),
	T_CASE(export__sink_error),
	T_CASE(export__bad_options),
	T_CASE(export__long_chain),
};

T_MAIN(cases)
