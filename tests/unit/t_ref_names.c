/*
 * t_ref_names.c - reference names (issue 13): the reader's "ref_names"
 * (good, wrong length, bad entries, strict), the store's name sections
 * (round trip through a file, dangling references, roots, no growth
 * without names), the inference of class constants, the hop text.
 * (t_names.c is the older suite of class display names.)
 */
#include "t.h"
#include "hd_int.h"
#include "store_fixture.h"

#include <sys/stat.h>

/* Reads text with flags; the first object record's fields into *out. */
struct got {
	int rc;
	size_t nrefs;
	int has_names;
	char names[8][64];
	uint64_t repaired, line;
	char msg[128];
};

static void on_problem(const hd_problem *p, void *payload)
{
	struct got *g = payload;

	if (!g->line) {
		g->line = p->line;
		snprintf(g->msg, sizeof(g->msg), "%s", p->msg);
	}
}

static void read_one(struct got *g, const char *text, unsigned flags)
{
	hd_read_options ro = HD_READ_OPTIONS_INIT;
	hd_reader *r;
	const hd_record *rec;
	hd_read_stats st;
	hd_error err = { 0 };
	size_t k;

	memset(g, 0, sizeof(*g));
	ro.flags = flags;
	ro.problem = on_problem;
	ro.payload = g;
	if (hd_reader_open_mem(&r, text, strlen(text), &ro, &err)) {
		g->rc = -1;
		return;
	}
	while ((g->rc = hd_reader_next(r, &rec, &err)) == 0) {
		if (rec->kind != HD_REC_OBJECT)
			continue;
		g->nrefs = rec->nrefs;
		g->has_names = !!(rec->has & HD_HAS_REF_NAMES);
		for (k = 0; g->has_names && k < rec->nrefs && k < 8; k++)
			hd_ref_name_decode(g->names[k], sizeof(g->names[k]),
					   rec->ref_names[k]);
		break;
	}
	if (g->rc == HD_EPARSE)
		g->line = err.line;
	hd_reader_stats(&st, r);
	g->repaired = st.repaired;
	hd_reader_free(r);
}

#define OBJ(refs, names)                                                  \
	"{\"address\":\"0x10\", \"type\":\"OBJECT\", \"class\":\"0x20\", " \
	"\"references\":[" refs "]" names ", \"memsize\":40}\n"

static void test_ref_names__parse_good(void)
{
	struct got g;

	read_one(&g, "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[]}\n"
		 OBJ("\"0x1\", \"0x2\", \"0x3\", \"0x4\"",
		     ", \"ref_names\":[\"@cache\", 3, null, "
		     "\"[\\\"user_42\\\"]\"]"), HD_READ_STRICT);
	T_EQ(g.rc, 0);
	T_EQ(g.nrefs, 4);
	T_ASSERT(g.has_names);
	T_STREQ(g.names[0], "@cache");
	T_STREQ(g.names[1], "[3]");
	T_STREQ(g.names[2], "");
	T_STREQ(g.names[3], "[\"user_42\"]");
	T_EQ(g.repaired, 0);
	/* before references, spaces, an empty pair */
	read_one(&g, "{\"address\":\"0x10\", \"type\":\"OBJECT\", "
		 "\"ref_names\": [ 0 , \"::X\" ], \"references\":[\"0x1\", "
		 "\"0x2\"]}\n", HD_READ_STRICT);
	T_EQ(g.rc, 0);
	T_ASSERT(g.has_names);
	T_STREQ(g.names[0], "[0]");
	T_STREQ(g.names[1], "::X");
	read_one(&g, OBJ("", ", \"ref_names\":[]"), HD_READ_STRICT);
	T_EQ(g.rc, 0);
	T_EQ(g.repaired, 0);
}

static void test_ref_names__parse_mismatch(void)
{
	struct got g;
	const char *text = "{\"type\":\"ROOT\", \"root\":\"vm\"}\n"
		OBJ("\"0x1\", \"0x2\"", ", \"ref_names\":[\"@a\"]");

	read_one(&g, text, 0);
	T_EQ(g.rc, 0);
	/* lenient: the record stays, its names dropped, one repair at 2 */
	T_EQ(g.nrefs, 2);
	T_ASSERT(!g.has_names);
	T_EQ(g.repaired, 1);
	T_EQ(g.line, 2);
	T_ASSERT(strstr(g.msg, "ref_names") != NULL);
	read_one(&g, text, HD_READ_STRICT);
	T_EQ(g.rc, HD_EPARSE);
	T_EQ(g.line, 2);
	/* names without references */
	read_one(&g, OBJ("", ", \"ref_names\":[null]"), 0);
	T_ASSERT(!g.has_names);
	T_EQ(g.repaired, 1);
}

static void test_ref_names__parse_bad_entries(void)
{
	static const char *const bad[] = {
		"[{\"a\":1}]", "[-1]", "[true]", "[1.5]", "[01]",
		"[12345678901]", "\"@a\"", "{}", "[[0]]", "[1e3]",
	};
	char text[512];
	struct got g;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"address\":\"0x10\", \"type\":\"OBJECT\", "
			 "\"references\":[\"0x1\"], \"ref_names\":%s, "
			 "\"memsize\":40}\n", bad[i]);
		read_one(&g, text, 0);
		if (g.rc != HD_ITEROVER && g.rc != 0)
			T_FAIL("%s: rc %d", bad[i], g.rc);
		if (g.has_names || g.repaired != 1 || g.nrefs != 1)
			T_FAIL("%s: names %d repaired %llu refs %zu", bad[i],
			       g.has_names, (unsigned long long)g.repaired,
			       g.nrefs);
		read_one(&g, text, HD_READ_STRICT);
		if (g.rc != HD_EPARSE || g.line != 1)
			T_FAIL("%s strict: rc %d line %llu", bad[i], g.rc,
			       (unsigned long long)g.line);
	}
	/* twice */
	read_one(&g, OBJ("\"0x1\"", ", \"ref_names\":[\"@a\"], "
			 "\"ref_names\":[\"@b\"]"), HD_READ_STRICT);
	T_EQ(g.rc, HD_EPARSE);
}

/* A long name and a huge array stay linear (a few ms, not quadratic). */
static void test_ref_names__parse_big(void)
{
	size_t n = 200000, k, len = 0, cap = n * 24 + 4096;
	char *t = malloc(cap);
	hd_reader *r;
	const hd_record *rec;
	hd_error err = { 0 };
	char buf[64];

	T_ASSERT(t);
	len += (size_t)sprintf(t, "{\"address\":\"0x10\", \"type\":\"ARRAY\", "
			       "\"references\":[");
	for (k = 0; k < n; k++)
		len += (size_t)sprintf(t + len, "%s\"0x%zx\"", k ? ", " : "",
				       k + 0x100);
	len += (size_t)sprintf(t + len, "], \"ref_names\":[");
	for (k = 0; k < n; k++)
		len += (size_t)sprintf(t + len, "%s%zu", k ? "," : "", k);
	len += (size_t)sprintf(t + len, "]}\n");
	T_RC(hd_reader_open_mem(&r, t, len, NULL, &err), 0);
	T_RC(hd_reader_next(r, &rec, &err), 0);
	T_EQ(rec->nrefs, n);
	T_ASSERT(rec->has & HD_HAS_REF_NAMES);
	hd_ref_name_decode(buf, sizeof(buf), rec->ref_names[n - 1]);
	T_STREQ(buf, "[199999]");
	hd_reader_free(r);
	free(t);
}

/* ---- the store ---- */

static const char named_dump[] =
	"{\"type\":\"ROOT\", \"root\":\"global_tbl\", \"references\":"
	"[\"0x100\", \"0x200\"], \"ref_names\":[\"$LOADED_FEATURES\", "
	"\"$CONFIG\"]}\n"
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x300\"]}\n"
	"{\"address\":\"0x300\", \"type\":\"CLASS\", \"class\":\"0x0\", "
	"\"name\":\"PriceCalculator\", \"references\":[\"0x400\", "
	"\"0xdead\", \"0x500\"], \"ref_names\":[\"::CACHE\", \"@gone\", "
	"\"@lock\"]}\n"
	"{\"address\":\"0x400\", \"type\":\"HASH\", \"references\":[\"0x600\", "
	"\"0x600\"], \"ref_names\":[\"[:a]\", \"[\\\"user_42\\\"]\"]}\n"
	"{\"address\":\"0x500\", \"type\":\"OBJECT\"}\n"
	"{\"address\":\"0x600\", \"type\":\"ARRAY\", \"references\":"
	"[\"0x700\"], \"ref_names\":[3]}\n"
	"{\"address\":\"0x700\", \"type\":\"STRING\", \"references\":"
	"[\"0x500\"]}\n"
	"{\"address\":\"0x100\", \"type\":\"ARRAY\"}\n"
	"{\"address\":\"0x200\", \"type\":\"HASH\"}\n";

static hd_store *build(const char *name, const char *text)
{
	hd_store *s = NULL;
	hd_error err = { 0 };

	if (fx_write(fx_path(name), text, strlen(text)) ||
	    hd_store_build(&s, fx_path(name), NULL, &err))
		return NULL;
	return s;
}

static const char *name_of(const hd_store *s, uint64_t from, uint64_t to,
			   unsigned *flags)
{
	return hd_store_ref_name(s, hd_store_find(s, from),
				 hd_store_find(s, to), NULL, flags);
}

static void check_named(const hd_store *s)
{
	hd_node_id c = hd_store_find(s, 0x300);
	unsigned flags = 9;
	size_t len = 0;
	char buf[128];

	T_ASSERT(hd_store_has_ref_names(s));
	/* the dangling 0xdead is dropped: @lock stays on 0x500 */
	T_STREQ(hd_store_ref_name_at(s, c, 0, &len, &flags), "::CACHE");
	T_EQ(len, 7);
	T_EQ(flags, 0);
	T_STREQ(hd_store_ref_name_at(s, c, 1, NULL, NULL), "@lock");
	T_ASSERT(!hd_store_ref_name_at(s, c, 2, NULL, NULL));
	T_STREQ(name_of(s, 0x300, 0x500, NULL), "@lock");
	/* two references to one object keep their own names; the first */
	T_STREQ(name_of(s, 0x400, 0x600, NULL), "[:a]");
	T_STREQ(hd_store_ref_name_at(s, hd_store_find(s, 0x400), 1, NULL,
				     NULL), "[\"user_42\"]");
	T_STREQ(name_of(s, 0x600, 0x700, NULL), "[3]");
	T_ASSERT(!name_of(s, 0x700, 0x500, NULL));
	T_ASSERT(!name_of(s, 0x300, 0x600, NULL));
	T_STREQ(hd_store_root_ref_name(s, 0, hd_store_find(s, 0x200), &len),
		"$CONFIG");
	T_EQ(len, 7);
	T_ASSERT(!hd_store_root_ref_name(s, 1, hd_store_find(s, 0x300),
					 NULL));
	T_EQ(hd_store_hop_text(buf, sizeof(buf), s, c,
			       hd_store_find(s, 0x400)), 23);
	T_STREQ(buf, "PriceCalculator ::CACHE");
	T_EQ(hd_store_hop_text(buf, sizeof(buf), s, hd_store_find(s, 0x600),
			       hd_store_find(s, 0x700)), 18);
	T_STREQ(buf, "(hidden ARRAY) [3]");
	T_EQ(hd_store_hop_text(buf, sizeof(buf), s, hd_store_find(s, 0x700),
			       HD_NODE_NONE), 15);
	T_STREQ(buf, "(hidden STRING)");
	/* truncated as snprintf */
	T_EQ(hd_store_hop_text(buf, 10, s, c, hd_store_find(s, 0x400)), 23);
	T_STREQ(buf, "PriceCalc");
	T_EQ(hd_store_hop_text(buf, 20, s, c, hd_store_find(s, 0x400)), 23);
	T_STREQ(buf, "PriceCalculator ::C");
}

static void test_ref_names__store_round_trip(void)
{
	hd_store *s = build("n.json", named_dump), *o = NULL;
	hd_error err = { 0 };

	T_ASSERT(s);
	check_named(s);
	if (t_failed_)
		return;
	T_RC(hd_store_write(s, fx_path("n.hds"), &err), 0);
	T_RC(hd_store_open(&o, fx_path("n.hds"), &err), 0);
	check_named(o);
	hd_store_close(o);
	hd_store_close(s);
}

/* Without names (and nothing to infer) the store has no name section:
 * not one byte more than before. Its class edges (Foo -> #<Class:Foo>,
 * man 5 heapdump-store, CLASS REFERENCES) are named (class) all the
 * same, without a section. */
static void test_ref_names__store_no_growth(void)
{
	hd_store *s = build("f.json", fixture_dump);
	hd_error err = { 0 };
	struct stat st;
	hd_node_id foo;
	unsigned fl = 0;

	T_ASSERT(s);
	T_ASSERT(hd_store_has_ref_names(s));
	foo = hd_store_find(s, 0x2200);
	T_ASSERT(!hd_store_ref_name_at(s, foo, 0, NULL, NULL));
	T_STREQ(hd_store_ref_name_at(s, foo, 2, NULL, &fl), "(class)");
	T_EQ(fl, HD_NAME_INFERRED);
	T_STREQ(hd_store_ref_name(s, foo, hd_store_find(s, 0x2210), NULL,
				  NULL),
		"(class)");
	T_ASSERT(!hd_store_root_ref_name(s, 0, 0, NULL));
	T_RC(hd_store_write(s, fx_path("f.hds"), &err), 0);
	T_RC(stat(fx_path("f.hds"), &st), 0);
	/* header + 26 required sections and the stats summary (id 34,
	 * which every written store carries): no name section */
	{
		unsigned char *p;
		size_t n, i;

		T_ASSERT((p = fx_read(fx_path("f.hds"), &n)));
		T_EQ(p[12] | p[13] << 8, 27);
		for (i = 0; i < 27; i++)
			T_ASSERT(p[32 + 24 * i] < 31 || p[32 + 24 * i] > 33);
		T_EQ(p[32 + 24 * 26], 34);
		free(p);
	}
	hd_store_close(s);
}

static const char infer_dump[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x300\"]}\n"
	"{\"address\":\"0x300\", \"type\":\"MODULE\", \"name\":\"Outer\", "
	"\"references\":[\"0x310\", \"0x320\", \"0x330\", \"0x340\", "
	"\"0x350\"]}\n"
	"{\"address\":\"0x310\", \"type\":\"CLASS\", \"name\":\"Outer::Inner\"}\n"
	"{\"address\":\"0x320\", \"type\":\"CLASS\", \"name\":\"Outer::In::Deep\"}\n"
	"{\"address\":\"0x330\", \"type\":\"CLASS\", \"name\":\"Other\"}\n"
	"{\"address\":\"0x340\", \"type\":\"STRING\", \"value\":\"Outer::S\"}\n"
	"{\"address\":\"0x350\", \"type\":\"MODULE\", \"name\":\"Outer::lower\"}\n"
	"{\"address\":\"0x360\", \"type\":\"CLASS\", \"name\":\"Outerx\", "
	"\"references\":[\"0x310\"]}\n";

static void test_ref_names__infer(void)
{
	hd_store *s = build("i.json", infer_dump), *o = NULL;
	hd_error err = { 0 };
	hd_node_id m;
	unsigned flags = 0;
	char buf[64];
	int pass;

	T_ASSERT(s);
	for (pass = 0; pass < 2; pass++) {
		const hd_store *x = pass ? o : s;

		m = hd_store_find(x, 0x300);
		T_ASSERT(hd_store_has_ref_names(x));
		T_STREQ(hd_store_ref_name_at(x, m, 0, NULL, &flags), "::Inner");
		T_EQ(flags, HD_NAME_INFERRED);
		for (uint32_t k = 1; k < 5; k++)
			T_ASSERT(!hd_store_ref_name_at(x, m, k, NULL, NULL));
		T_ASSERT(!name_of(x, 0x360, 0x310, NULL));
		hd_store_hop_text(buf, sizeof(buf), x, m,
				  hd_store_find(x, 0x310));
		T_STREQ(buf, "Outer ::Inner");
		if (!pass) {
			T_RC(hd_store_write(s, fx_path("i.hds"), &err), 0);
			T_RC(hd_store_open(&o, fx_path("i.hds"), &err), 0);
		}
	}
	hd_store_close(o);
	hd_store_close(s);
}

static int find_sec(const unsigned char *p, uint32_t id, size_t *off,
		    size_t *size);

/* More than 65,535 distinct names: the dense u32 column. */
static void test_ref_names__store_dense32(void)
{
	size_t n = 70000, k, len = 0, cap = n * 24 + 4096;
	char *t = malloc(cap), name[32];
	hd_store *s = NULL, *o = NULL;
	hd_error err = { 0 };
	hd_node_id a;

	T_ASSERT(t);
	len += (size_t)sprintf(t, "{\"type\":\"ROOT\", \"root\":\"vm\", "
			       "\"references\":[\"0x10\"]}\n"
			       "{\"address\":\"0x20\", \"type\":\"STRING\"}\n"
			       "{\"address\":\"0x10\", \"type\":\"OBJECT\", "
			       "\"references\":[");
	for (k = 0; k < n; k++)
		len += (size_t)sprintf(t + len, "%s\"0x20\"", k ? ", " : "");
	len += (size_t)sprintf(t + len, "], \"ref_names\":[");
	for (k = 0; k < n; k++)
		len += (size_t)sprintf(t + len, "%s\"@v%zu\"", k ? ", " : "", k);
	len += (size_t)sprintf(t + len, "]}\n");
	T_RC(fx_write(fx_path("d32.json"), t, len), 0);
	free(t);
	T_RC(hd_store_build(&s, fx_path("d32.json"), NULL, &err), 0);
	T_RC(hd_store_write(s, fx_path("d32.hds"), &err), 0);
	T_RC(hd_store_open(&o, fx_path("d32.hds"), &err), 0);
	a = hd_store_find(o, 0x10);
	T_STREQ(hd_store_ref_name_at(o, a, 0, NULL, NULL), "@v0");
	T_STREQ(hd_store_ref_name_at(o, a, 69999, NULL, NULL), "@v69999");
	snprintf(name, sizeof(name), "@v%d", 65537);
	T_STREQ(hd_store_ref_name_at(o, a, 65537, NULL, NULL), name);
	T_STREQ(hd_store_ref_name(o, a, hd_store_find(o, 0x20), NULL, NULL),
		"@v0");
	hd_store_close(o);
	hd_store_close(s);
	{
		unsigned char *p;
		size_t fn, off, size;

		T_ASSERT((p = fx_read(fx_path("d32.hds"), &fn)));
		T_RC(find_sec(p, 32, &off, &size), 0);
		free(p);
		T_EQ(size, n * 4); /* dense u32 */
	}
}

/* The offset and size of section id in a store file's bytes. */
static int find_sec(const unsigned char *p, uint32_t id, size_t *off,
		    size_t *size)
{
	uint32_t i, n = (uint32_t)(p[12] | p[13] << 8);

	for (i = 0; i < n; i++) {
		const unsigned char *e = p + 32 + (size_t)i * 24;
		uint64_t o = 0, z = 0;
		int b;

		if ((uint32_t)(e[0] | e[1] << 8) != id)
			continue;
		for (b = 7; b >= 0; b--) {
			o = o << 8 | e[8 + b];
			z = z << 8 | e[16 + b];
		}
		*off = (size_t)o;
		*size = (size_t)z;
		return 0;
	}
	return -1;
}

/* A damaged name section is refused on open, with what is wrong. */
static void test_ref_names__store_corrupt(void)
{
	static const struct {
		int sec, at;     /* section (31 info, 32 map), byte */
		unsigned char v;
		const char *msg;
	} cases[] = {
		{ 31, 16, 2, "unknown flags" },      /* flags 2 */
		{ 31, 0, 3, "wrong size" },          /* encoding 3 */
		{ 32, 0, 0xff, "reference name" },   /* code past the strings */
		{ 32, 1, 0xff, "reference name" },
	};
	hd_store *s = build("c.json", named_dump), *o = NULL;
	hd_error err = { 0 };
	unsigned char *p;
	size_t n, off, size, i;

	T_ASSERT(s);
	T_RC(hd_store_write(s, fx_path("c.hds"), &err), 0);
	hd_store_close(s);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_ASSERT((p = fx_read(fx_path("c.hds"), &n)));
		T_RC(find_sec(p, (uint32_t)cases[i].sec, &off, &size), 0);
		T_ASSERT((size_t)cases[i].at < size);
		p[off + (size_t)cases[i].at] = cases[i].v;
		T_RC(fx_write(fx_path("c2.hds"), p, n), 0);
		free(p);
		memset(&err, 0, sizeof(err));
		if (hd_store_open(&o, fx_path("c2.hds"), &err) != HD_EFORMAT ||
		    !strstr(err.msg, cases[i].msg)) {
			T_FAIL("case %zu: %s", i, err.msg);
			hd_store_close(o);
			return;
		}
	}
}

static const struct t_case cases[] = {
	T_CASE(ref_names__store_dense32),
	T_CASE(ref_names__store_corrupt),
	T_CASE(ref_names__parse_good),
	T_CASE(ref_names__parse_mismatch),
	T_CASE(ref_names__parse_bad_entries),
	T_CASE(ref_names__parse_big),
	T_CASE(ref_names__store_round_trip),
	T_CASE(ref_names__store_no_growth),
	T_CASE(ref_names__infer),
};

int main(int argc, char **argv)
{
	int rc = t_run_(__FILE__, cases, sizeof(cases) / sizeof(cases[0]),
			argc, argv);

	(void)fx_walk;
	fx_cleanup();
	return rc;
}
