/*
 * t_store.c - the graph store: building from a dump, every accessor,
 * class names against the streaming path, write and reopen, staleness,
 * empty dumps, atomic writes, allocation failures, a large shuffled
 * heap against a naive model.
 */
#include "t.h"
#include "hd_int.h"
#include "store_format.h"
#include "store_fixture.h"

#include <sys/stat.h>
#include <zlib.h>

static hd_store *build_text(const char *name, const char *text, int *rc)
{
	hd_store *s = NULL;
	hd_error err;

	*rc = fx_write(fx_path(name), text, strlen(text));
	if (*rc == 0)
		*rc = hd_store_build(&s, fx_path(name), NULL, &err);
	if (*rc)
		fprintf(stderr, "# build: %s\n", err.msg);
	return s;
}

static hd_node_id at(const hd_store *s, uint64_t addr)
{
	return hd_store_find(s, addr);
}

static const char *cls(const hd_store *s, uint64_t addr)
{
	static char buf[256];

	hd_store_class_name(buf, sizeof(buf), s, at(s, addr));
	return buf;
}

static const char *aux(const hd_store *s, uint64_t addr)
{
	size_t n;
	const char *a = hd_store_aux(s, at(s, addr), &n);

	return a ? a : "(null)";
}

/* The references of the node at addr, as addresses, in a string. */
static const char *edges(const hd_store *s, uint64_t addr, int rev)
{
	static char buf[512];
	hd_edge_iter it;
	hd_node_id t;
	size_t n = 0;

	buf[0] = '\0';
	if (rev)
		hd_store_referrers(s, at(s, addr), &it);
	else
		hd_store_refs(s, at(s, addr), &it);
	while (hd_edge_iter_next(&it, &t) == 0 && n < sizeof(buf) - 24)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%llx",
				      n ? " " : "",
				      (unsigned long long)hd_store_address(s,
									   t));
	return buf;
}

static const char *root(const hd_store *s, uint32_t i)
{
	static char buf[512];
	hd_edge_iter it;
	hd_node_id t;
	size_t n;

	n = (size_t)snprintf(buf, sizeof(buf), "%s:",
			     hd_store_root_name(s, i) ? hd_store_root_name(s, i)
						      : "(null)");
	hd_store_root_refs(s, i, &it);
	while (hd_edge_iter_next(&it, &t) == 0 && n < sizeof(buf) - 24)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %llx",
				      (unsigned long long)hd_store_address(s,
									   t));
	return buf;
}

static void test_store__nodes_and_edges(void)
{
	int rc;
	hd_store *s = build_text("f.json", fixture_dump, &rc);
	hd_store_info in;
	uint32_t i;

	T_RC(rc, 0);
	hd_store_info_get(&in, s);
	T_EQ(hd_store_node_count(s), 31);
	T_EQ(in.nodes, 31);
	T_EQ(in.duplicates, 1);
	T_EQ(in.edges, 9);
	T_EQ(in.dangling, 1); /* 0xbeef; a ROOT's 0xdead is left out */
	T_EQ(in.shapes, 1);
	T_EQ(in.root_refs, 6);
	T_EQ(in.root_categories, 2);
	for (i = 1; i < hd_store_node_count(s); i++)
		T_ASSERT(hd_store_address(s, i - 1) < hd_store_address(s, i));
	T_EQ(hd_store_find(s, 0xdead), HD_NODE_NONE);
	T_EQ(hd_store_find(s, 0x9000), HD_NODE_NONE); /* a SHAPE */
	T_EQ(hd_store_find(s, 0), HD_NODE_NONE);
	T_EQ(hd_store_find(s, UINT64_MAX), HD_NODE_NONE);
	T_EQ(hd_store_type(s, at(s, 0x3028)), HD_T_OBJECT); /* first kept */
	T_STREQ(edges(s, 0x3028, 0), "3050 3050 3000");
	/* Foo's metaclass #<Class:Foo> is held by Foo: its class edge,
	 * last (man 5 heapdump-store, CLASS REFERENCES); the dump's
	 * references alone are what in.edges counts */
	T_STREQ(edges(s, 0x2200, 0), "2000 2310 2210");
	T_STREQ(edges(s, 0x2210, 1), "2200 2500");
	T_STREQ(edges(s, 0x31e0, 0), "31e0 2400"); /* anonymous: its class edge */
	T_STREQ(edges(s, 0x3050, 1), "3028 3028 3118");
	T_STREQ(edges(s, 0x3028, 1), "3078");
	T_STREQ(edges(s, 0x3190, 0), "");
	T_STREQ(root(s, 0), "vm: 3000 3028 3000 3078");
	T_STREQ(root(s, 1), "global_tbl: 3050");
	T_ASSERT(hd_store_root_name(s, 2) == NULL);
	hd_store_close(s);
}

static void test_store__columns(void)
{
	int rc;
	hd_store *s = build_text("f.json", fixture_dump, &rc);
	hd_site site;
	const char *line;

	T_RC(rc, 0);
	T_EQ(hd_store_class(s, at(s, 0x3028)), at(s, 0x2200));
	T_EQ(hd_store_class_address(s, at(s, 0x3028)), 0x2200);
	T_EQ(hd_store_class(s, at(s, 0x30f0)), HD_NODE_NONE);
	T_EQ(hd_store_class_address(s, at(s, 0x30f0)), 0xabc);
	T_EQ(hd_store_class_address(s, at(s, 0x3118)), 0x8);
	T_EQ(hd_store_class(s, at(s, 0x3078)), HD_NODE_NONE);
	T_EQ(hd_store_class_address(s, at(s, 0x3078)), 0);
	T_EQ(hd_store_memsize(s, at(s, 0x3078)), 5000000040ULL);
	T_EQ(hd_store_size(s, at(s, 0x3078)), 5000000000ULL);
	T_EQ(hd_store_memsize(s, at(s, 0x2000)), 400);
	T_EQ(hd_store_memsize(s, at(s, 0x3190)), 0);
	T_EQ(hd_store_size(s, at(s, 0x3050)), 2);
	T_EQ(hd_store_size(s, at(s, 0x3000)), 3);
	T_EQ(hd_store_generation(s, at(s, 0x3028)), 5);
	T_EQ(hd_store_generation(s, at(s, 0x31b8)), 18446744073709551610ULL);
	T_EQ(hd_store_generation(s, at(s, 0x3000)), UINT64_MAX);
	T_EQ(hd_store_bits(s, at(s, 0x3028)), HD_B_WB_PROTECTED | HD_B_OLD);
	T_EQ(hd_store_bits(s, at(s, 0x3050)), HD_B_FROZEN | HD_B_EMBEDDED);
	line = strstr(fixture_dump, "{\"address\":\"0x3028\"");
	T_EQ(hd_store_offset(s, at(s, 0x3028)), line - fixture_dump);
	T_RC(hd_store_site(&site, s, at(s, 0x3028)), 0);
	T_SPANEQ(site.file, site.file_len, "/app/a.rb");
	T_SPANEQ(site.method, site.method_len, "build");
	T_EQ(site.line, 3);
	T_RC(hd_store_site(&site, s, at(s, 0x31b8)), 0);
	T_SPANEQ(site.file, site.file_len, "C:\\dir\\x.rb");
	T_SPANEQ(site.method, site.method_len, "with\"quote");
	T_EQ(site.line, 7);
	T_RC(hd_store_site(&site, s, at(s, 0x3000)), HD_ENOTFOUND);
	T_ASSERT(site.file == NULL && site.method == NULL);
	T_STREQ(aux(s, 0x30a0), "proc");
	T_STREQ(aux(s, 0x3118), "iseq");
	T_STREQ(aux(s, 0x3230), "NODE_SCOPE");
	T_STREQ(aux(s, 0x3050), "(null)");
	T_STREQ(aux(s, 0x2200), "Foo");
	T_STREQ(aux(s, 0x2210), "#<Class:Foo>");
	T_STREQ(aux(s, 0x2120), "#<Class:Class>");
	T_STREQ(aux(s, 0x2310), "#<ICLASS:Comparable>");
	T_STREQ(aux(s, 0x2400), "#<Class:0x0000000000002400>");
	T_STREQ(aux(s, 0x2410), "#<Class:#<Class:0x0000000000002400>>");
	T_STREQ(aux(s, 0x2500), "#<Class:#<Foo:0x0000000000003000>>");
	/* out-of-range ids are harmless */
	T_EQ(hd_store_address(s, 1000), 0);
	T_EQ(hd_store_class(s, HD_NODE_NONE), HD_NODE_NONE);
	T_ASSERT(hd_store_aux(s, 1000, NULL) == NULL);
	T_RC(hd_store_site(&site, s, 1000), HD_ENOTFOUND);
	hd_store_close(s);
}

static void test_store__class_names(void)
{
	int rc;
	hd_store *s = build_text("f.json", fixture_dump, &rc);
	char small[6];

	T_RC(rc, 0);
	T_STREQ(cls(s, 0x3000), "Foo");
	T_STREQ(cls(s, 0x3028), "Foo");
	T_STREQ(cls(s, 0x3050), "String");
	T_STREQ(cls(s, 0x3078), "(hidden ARRAY)");
	T_STREQ(cls(s, 0x30a0), "DATA/proc");
	T_STREQ(cls(s, 0x30c8), "Foo");
	T_STREQ(cls(s, 0x30f0), "DATA/x");
	T_STREQ(cls(s, 0x3118), "IMEMO/iseq");
	T_STREQ(cls(s, 0x3140), "#<unknown:0x7777>");
	T_STREQ(cls(s, 0x3168), "(free slot)");
	T_STREQ(cls(s, 0x31e0), "#<Class:0x0000000000002400>");
	T_STREQ(cls(s, 0x3208), "Foo");
	T_STREQ(cls(s, 0x3230), "NODE/NODE_SCOPE");
	T_STREQ(cls(s, 0x2200), "Class");
	T_STREQ(cls(s, 0x2300), "Module");
	T_STREQ(cls(s, 0x2600), "#<unknown:0x2610>");
	T_EQ(hd_store_class_name(small, sizeof(small), s, at(s, 0x3078)), 14);
	T_STREQ(small, "(hidd");
	hd_store_close(s);
}

/* The store names every node as the streaming path (stats) does. */
static void test_store__names_match_stream(void)
{
	struct hd__intern strs;
	struct hd__classtab ct;
	hd_reader *r;
	const hd_record *rec;
	int rc, checked = 0;
	hd_store *s = build_text("f.json", fixture_dump, &rc);
	char buf[256];
	uint32_t id;
	uint8_t seen[64] = { 0 };

	T_RC(rc, 0);
	T_ASSERT(!hd__intern_init(&strs) && !hd__classtab_init(&ct, &strs));
	T_RC(hd_reader_open(&r, fx_path("f.json"), NULL, NULL), 0);
	while (hd_reader_next(r, &rec, NULL) == 0)
		T_ASSERT(!hd__classtab_add(&ct, rec));
	hd_reader_free(r);
	T_RC(hd__classtab_resolve(&ct), 0);
	T_RC(hd_reader_open(&r, fx_path("f.json"), NULL, NULL), 0);
	while (hd_reader_next(r, &rec, NULL) == 0) {
		hd_node_id n;
		hd_str a = rec->type == HD_T_IMEMO ? rec->imemo_type :
			   rec->type == HD_T_NODE  ? rec->node_type :
						     rec->struct_name;

		if (rec->kind != HD_REC_OBJECT)
			continue;
		n = hd_store_find(s, rec->address);
		if (n >= sizeof(seen) || seen[n]++)
			continue; /* a duplicate */
		T_ASSERT(!hd__object_class_name(
			&ct, &strs, rec->type,
			rec->has & HD_HAS_CLASS ? rec->class_addr : 0, a, &id));
		hd_store_class_name(buf, sizeof(buf), s, n);
		T_STREQ(buf, hd__intern_str(&strs, id, NULL));
		checked++;
	}
	hd_reader_free(r);
	T_EQ(checked, 31);
	hd__classtab_free(&ct);
	hd__intern_free(&strs);
	hd_store_close(s);
}

static void test_store__info(void)
{
	int rc;
	hd_store *s = build_text("f.json", fixture_dump, &rc);
	hd_store_info in;
	char buf[64];

	T_RC(rc, 0);
	hd_store_info_get(&in, s);
	T_STREQ(in.source_path, fx_path("f.json"));
	T_EQ(in.source_size, strlen(fixture_dump));
	T_EQ(in.read.bytes, strlen(fixture_dump));
	T_EQ(in.read.objects, 32);
	T_EQ(in.read.roots, 3);
	T_EQ(in.read.shapes, 1);
	T_ASSERT(in.source_mtime > 0);
	T_ASSERT(in.source_fingerprint != 0);
	T_ASSERT(in.features & HD_FEAT_SUPERCLASS);
	T_ASSERT(in.features & HD_FEAT_SHAPES);
	T_ASSERT(in.features & HD_FEAT_TRACED);
	T_ASSERT(in.features & HD_FEAT_METHOD_TRACED);
	T_ASSERT(in.features & HD_FEAT_NODE);
	T_ASSERT(!(in.features & HD_FEAT_PARTIAL));
	T_STREQ(hd_features_ruby(buf, sizeof(buf), in.features), "unknown");
	hd_store_close(s);
}

/* Every accessor of two stores agrees. */
static int same_store(const hd_store *a, const hd_store *b)
{
	hd_store_info x, y;
	uint32_t i, n = hd_store_node_count(a);
	char b1[256], b2[256];
	hd_site s1, s2;
	size_t l1, l2;
	const char *p1, *p2;

	hd_store_info_get(&x, a);
	hd_store_info_get(&y, b);
	if (strcmp(x.source_path, y.source_path))
		return 0;
	x.source_path = y.source_path = NULL;
	if (memcmp(&x, &y, sizeof(x)) || n != hd_store_node_count(b) ||
	    hd_store_root_count(a) != hd_store_root_count(b))
		return 0;
	for (i = 0; i < n; i++) {
		if (hd_store_address(a, i) != hd_store_address(b, i) ||
		    hd_store_type(a, i) != hd_store_type(b, i) ||
		    hd_store_class(a, i) != hd_store_class(b, i) ||
		    hd_store_class_address(a, i) !=
			    hd_store_class_address(b, i) ||
		    hd_store_memsize(a, i) != hd_store_memsize(b, i) ||
		    hd_store_generation(a, i) != hd_store_generation(b, i) ||
		    hd_store_size(a, i) != hd_store_size(b, i) ||
		    hd_store_bits(a, i) != hd_store_bits(b, i) ||
		    hd_store_offset(a, i) != hd_store_offset(b, i))
			return 0;
		if (hd_store_site(&s1, a, i) != hd_store_site(&s2, b, i) ||
		    s1.line != s2.line || s1.file_len != s2.file_len ||
		    s1.method_len != s2.method_len ||
		    (s1.file && memcmp(s1.file, s2.file, s1.file_len)) ||
		    (s1.method && memcmp(s1.method, s2.method, s1.method_len)))
			return 0;
		p1 = hd_store_aux(a, i, &l1);
		p2 = hd_store_aux(b, i, &l2);
		if (!p1 != !p2 || l1 != l2 || (p1 && memcmp(p1, p2, l1)))
			return 0;
		hd_store_class_name(b1, sizeof(b1), a, i);
		hd_store_class_name(b2, sizeof(b2), b, i);
		if (strcmp(b1, b2))
			return 0;
	}
	return fx_walk(a) == fx_walk(b);
}

static void test_store__write_reopen(void)
{
	int rc;
	hd_store *s = build_text("f.json", fixture_dump, &rc), *o = NULL;
	hd_error err;

	T_RC(rc, 0);
	T_RC(hd_store_write(s, fx_path("f.hds"), &err), 0);
	T_ASSERT(hd_store_is_store(fx_path("f.hds")));
	T_ASSERT(!hd_store_is_store(fx_path("f.json")));
	T_ASSERT(!hd_store_is_store(fx_path("missing")));
	T_RC(hd_store_open(&o, fx_path("f.hds"), &err), 0);
	T_ASSERT(same_store(s, o));
	/* a store written from an opened store is the same file */
	T_RC(hd_store_write(o, fx_path("g.hds"), &err), 0);
	{
		size_t n1 = 0, n2 = 0;
		unsigned char *a = fx_read(fx_path("f.hds"), &n1);
		unsigned char *b = fx_read(fx_path("g.hds"), &n2);

		T_ASSERT(a && b && n1 == n2 && !memcmp(a, b, n1));
		T_ASSERT(n1 % 8 == 0);
		free(a);
		free(b);
	}
	hd_store_close(o);
	hd_store_close(s);
}

static void test_store__load_either(void)
{
	hd_store *a = NULL, *b = NULL, *c = NULL;
	hd_error err;

	T_RC(fx_write(fx_path("f.json"), fixture_dump, strlen(fixture_dump)),
	     0);
	T_RC(hd_store_load(&a, fx_path("f.json"), NULL, &err), 0);
	T_RC(hd_store_write(a, fx_path("f.hds"), &err), 0);
	T_RC(hd_store_load(&b, fx_path("f.hds"), NULL, &err), 0);
	T_ASSERT(same_store(a, b));
	T_RC(hd_store_open(&c, fx_path("f.json"), &err), HD_EFORMAT);
	T_ASSERT(strstr(err.msg, "is not a heapdump store"));
	T_RC(hd_store_open(&c, fx_path("nope.hds"), &err), HD_EIO);
	T_ASSERT(c == NULL);
	hd_store_close(a);
	hd_store_close(b);
	hd_store_close(NULL);
}

static void test_store__validate_built(void)
{
	int rc;
	hd_store *s = build_text("f.json", fixture_dump, &rc);
	hd_error err;

	T_RC(rc, 0);
	T_RC(hd__store_validate(s, 1, &err), 0);
	hd_store_close(s);
}

static void test_store__staleness(void)
{
	int rc;
	hd_store *s = build_text("f.json", fixture_dump, &rc);
	hd_error err;
	char *copy;
	size_t n = strlen(fixture_dump);

	T_RC(rc, 0);
	T_RC(hd_store_check_source(s, fx_path("f.json"), &err), 0);
	T_ASSERT((copy = malloc(n + 2)) != NULL);
	memcpy(copy, fixture_dump, n + 1);
	copy[n] = '\n';
	T_RC(fx_write(fx_path("f.json"), copy, n + 1), 0);
	T_RC(hd_store_check_source(s, fx_path("f.json"), &err), HD_ESTALE);
	T_ASSERT(strstr(err.msg, "changed since it was indexed"));
	copy[10] = 'X'; /* the same size, other bytes */
	T_RC(fx_write(fx_path("f.json"), copy, n), 0);
	T_RC(hd_store_check_source(s, fx_path("f.json"), &err), HD_ESTALE);
	T_RC(fx_write(fx_path("f.json"), fixture_dump, n), 0);
	T_RC(hd_store_check_source(s, fx_path("f.json"), &err), 0);
	T_RC(hd_store_check_source(s, fx_path("gone.json"), &err), HD_EIO);
	free(copy);
	hd_store_close(s);
}

static void test_store__gzip_source(void)
{
	gzFile g = gzopen(fx_path("f.json.gz"), "wb");
	hd_store *s = NULL;
	hd_store_info in;
	hd_error err;

	T_ASSERT(g);
	T_ASSERT(gzwrite(g, fixture_dump, (unsigned)strlen(fixture_dump)) > 0);
	T_ASSERT(gzclose(g) == Z_OK);
	T_RC(hd_store_build(&s, fx_path("f.json.gz"), NULL, &err), 0);
	hd_store_info_get(&in, s);
	T_EQ(in.nodes, 31);
	T_EQ(in.source_size, strlen(fixture_dump));
	T_ASSERT(in.read.gzip);
	T_RC(hd_store_check_source(s, fx_path("f.json.gz"), &err), 0);
	T_RC(fx_write(fx_path("f.json.gz"), fixture_dump, 100), 0);
	T_RC(hd_store_check_source(s, fx_path("f.json.gz"), &err), HD_ESTALE);
	hd_store_close(s);
}

/* An empty dump is not a heap dump (HD_ENOTDUMP), unless the caller
 * allows it: then its store has no node and works. */
static void test_store__empty_dump(void)
{
	int rc;
	hd_store *s = build_text("e.json", "", &rc), *o = NULL;
	hd_index_options io = HD_INDEX_OPTIONS_INIT;
	hd_store_info in;
	hd_edge_iter it;
	hd_node_id t;
	hd_error err;

	T_RC(rc, HD_ENOTDUMP);
	T_ASSERT(s == NULL);
	io.read.flags = HD_READ_ALLOW_EMPTY;
	T_RC(hd_store_build(&s, fx_path("e.json"), &io, &err), 0);
	T_EQ(hd_store_node_count(s), 0);
	T_EQ(hd_store_find(s, 0x10), HD_NODE_NONE);
	T_EQ(hd_store_root_count(s), 0);
	hd_store_refs(s, 0, &it);
	T_RC(hd_edge_iter_next(&it, &t), HD_ITEROVER);
	T_EQ(hd_edge_iter_count(&it), 0);
	T_RC(hd_store_write(s, fx_path("e.hds"), &err), 0);
	T_RC(hd_store_open(&o, fx_path("e.hds"), &err), 0);
	T_ASSERT(same_store(s, o));
	hd_store_info_get(&in, o);
	T_EQ(in.nodes, 0);
	T_EQ(in.source_size, 0);
	hd_store_close(o);
	hd_store_close(s);
	/* roots whose objects are not in the dump, since: dumps */
	s = build_text("r.json",
		       "{\"type\":\"ROOT\", \"root\":\"vm\", "
		       "\"references\":[\"0x10\"]}\n"
		       "{\"address\":\"0x20\", \"type\":\"STRING\", "
		       "\"references\":[\"0x30\"]}\n",
		       &rc);
	T_RC(rc, 0);
	hd_store_info_get(&in, s);
	T_EQ(in.nodes, 1);
	T_EQ(in.dangling, 1);
	T_EQ(in.root_refs, 1);
	T_EQ(hd_store_root_count(s), 1);
	T_STREQ(root(s, 0), "vm:");
	hd_store_close(s);
	/* no ROOT line at all: a partial dump */
	s = build_text("p.json",
		       "{\"address\":\"0x20\", \"type\":\"STRING\"}\n", &rc);
	T_RC(rc, 0);
	hd_store_info_get(&in, s);
	T_ASSERT(in.features & HD_FEAT_PARTIAL);
	hd_store_close(s);
}

static void test_store__atomic_write(void)
{
	int rc;
	hd_store *s = build_text("f.json", fixture_dump, &rc), *o = NULL;
	hd_error err;

	T_RC(rc, 0);
	T_RC(hd_store_write(s, "/nonexistent-dir/x/f.hds", &err), HD_EIO);
	T_ASSERT(strstr(err.msg, "/nonexistent-dir/x/f.hds"));
	T_RC(fx_write(fx_path("old.hds"), "old", 3), 0);
	T_RC(hd_store_write(s, fx_path("old.hds"), &err), 0);
	T_RC(hd_store_open(&o, fx_path("old.hds"), &err), 0);
	hd_store_close(o);
	/* a directory in the way: the rename fails, nothing is left */
	T_ASSERT(mkdir(fx_path("dir.hds"), 0700) == 0 ||
		 access(fx_path("dir.hds"), F_OK) == 0);
	T_RC(fx_write(fx_path("dir.hds/inner"), "x", 1), 0);
	T_RC(hd_store_write(s, fx_path("dir.hds"), &err), HD_EIO);
	T_EQ(fx_count_tmp(), 0);
	hd_store_close(s);
}

static void test_store__strict_and_progress(void)
{
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_error err;

	T_RC(fx_write(fx_path("f.json"), fixture_dump, strlen(fixture_dump)),
	     0);
	o.read.flags = HD_READ_STRICT;
	T_RC(hd_store_build(&s, fx_path("f.json"), &o, &err), HD_EPARSE);
	T_ASSERT(s == NULL);
	T_ASSERT(err.line > 1);
	o.read.flags = 0;
	o.version = 99;
	T_RC(hd_store_build(&s, fx_path("f.json"), &o, &err), HD_EINVAL);
	o.version = HD_INDEX_OPTIONS_VERSION;
	o.progress = NULL;
	T_RC(hd_store_build(&s, fx_path("f.json"), &o, &err), 0);
	hd_store_close(s);
}

static uint64_t prog_done;

static void on_progress(uint64_t done, uint64_t total, void *p)
{
	(void)total;
	(void)p;
	prog_done = done;
}

static void test_store__progress(void)
{
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_error err;

	T_RC(fx_write(fx_path("f.json"), fixture_dump, strlen(fixture_dump)),
	     0);
	o.progress = on_progress;
	prog_done = 0;
	T_RC(hd_store_build(&s, fx_path("f.json"), &o, &err), 0);
	T_EQ(prog_done, strlen(fixture_dump));
	hd_store_close(s);
}

/* ---- allocation failures ---- */

static long fail_at = -1, n_alloc;
static long long outstanding;

static void *f_malloc(void *ctx, size_t n)
{
	void *p;

	(void)ctx;
	if (n_alloc++ == fail_at)
		return NULL;
	p = malloc(n);
	if (p)
		outstanding += (long long)n;
	return p;
}

static void *f_realloc(void *ctx, void *old, size_t old_n, size_t n)
{
	void *p;

	(void)ctx;
	if (n_alloc++ == fail_at)
		return NULL;
	p = realloc(old, n);
	if (p)
		outstanding += (long long)n - (long long)old_n;
	return p;
}

static void f_free(void *ctx, void *p, size_t old_n)
{
	(void)ctx;
	outstanding -= (long long)old_n;
	free(p);
}

/* Fails the Nth allocation for N = 0, 1, ... until the call succeeds. */
static void test_store__alloc_failures(void)
{
	hd_allocator a = { f_malloc, f_realloc, f_free, NULL };
	hd_store *s = NULL;
	hd_error err;
	long n;
	int rc;

	T_RC(fx_write(fx_path("f.json"), fixture_dump, strlen(fixture_dump)),
	     0);
	hd_set_allocator(&a);
	for (n = 0;; n++) {
		fail_at = n;
		n_alloc = 0;
		outstanding = 0;
		rc = hd_store_build(&s, fx_path("f.json"), NULL, &err);
		if (rc == 0)
			break;
		if (rc != HD_ENOMEM || outstanding != 0) {
			hd_set_allocator(NULL);
			T_FAIL("build failing at allocation %ld: rc %d, "
			       "%lld bytes outstanding", n, rc, outstanding);
			return;
		}
	}
	fail_at = -1;
	rc = hd_store_write(s, fx_path("f.hds"), &err);
	hd_store_close(s);
	if (rc || outstanding != 0) {
		hd_set_allocator(NULL);
		T_FAIL("write: rc %d, %lld bytes outstanding", rc,
		       outstanding);
		return;
	}
	for (n = 0;; n++) {
		fail_at = n;
		n_alloc = 0;
		outstanding = 0;
		rc = hd_store_open(&s, fx_path("f.hds"), &err);
		if (rc == 0)
			break;
		if (rc != HD_ENOMEM || outstanding != 0) {
			hd_set_allocator(NULL);
			T_FAIL("open failing at allocation %ld: rc %d", n, rc);
			return;
		}
	}
	hd_store_close(s);
	hd_set_allocator(NULL);
	T_EQ(outstanding, 0);
	T_ASSERT(n > 0);
}

/* ---- a bigger heap against a naive model ---- */

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const uint64_t *order_addr;

static int cmp_order(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (order_addr[x] != order_addr[y])
		return order_addr[x] < order_addr[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * 60 000 objects at shuffled addresses (some repeated, some with wide
 * gaps), each with up to 6 references, a tenth of them dangling.
 */
static void test_store__shuffled_heap(void)
{
	enum { N = 60000, MAXR = 6 };
	uint64_t *addr = malloc(N * sizeof(*addr)), *sorted;
	uint32_t *nref = malloc(N * sizeof(*nref));
	uint64_t *refs = malloc((size_t)N * MAXR * sizeof(*refs));
	char *text = malloc((size_t)N * (60 + MAXR * 22)), *p;
	size_t i, k, uniq, E = 0, dangling = 0;
	hd_store *s = NULL;
	hd_store_info in;
	hd_error err;
	uint64_t rev_total = 0;
	unsigned char *first;
	uint32_t *order;

	T_ASSERT(addr && nref && refs && text);
	for (i = 0; i < N; i++) {
		uint64_t hi = (rng() % 4) << 40;

		addr[i] = i % 97 == 5 && i ? addr[i - 3] :
					     hi | ((rng() % (N * 64)) * 8);
	}
	p = text;
	for (i = 0; i < N; i++) {
		nref[i] = (uint32_t)(rng() % (MAXR + 1));
		p += sprintf(p, "{\"address\":\"0x%llx\", \"type\":\"ARRAY\", "
				"\"references\":[",
			     (unsigned long long)addr[i]);
		for (k = 0; k < nref[i]; k++) {
			uint64_t r = rng() % 10 == 0 ? addr[rng() % N] + 4 :
						       addr[rng() % N];

			refs[i * MAXR + k] = r;
			p += sprintf(p, "%s\"0x%llx\"", k ? ", " : "",
				     (unsigned long long)r);
		}
		p += sprintf(p, "]}\n");
	}
	T_RC(fx_write(fx_path("big.json"), text, (size_t)(p - text)), 0);
	T_RC(hd_store_build(&s, fx_path("big.json"), NULL, &err), 0);
	sorted = malloc(N * sizeof(*sorted));
	memcpy(sorted, addr, N * sizeof(*sorted));
	qsort(sorted, N, sizeof(*sorted), cmp_u64);
	for (i = 0, uniq = 0; i < N; i++)
		if (!i || sorted[i] != sorted[i - 1])
			sorted[uniq++] = sorted[i];
	hd_store_info_get(&in, s);
	T_EQ(in.nodes, uniq);
	T_EQ(in.duplicates, N - uniq);
	for (i = 0; i < uniq; i++)
		T_EQ(hd_store_address(s, (hd_node_id)i), sorted[i]);
	/* the references of the first record of each address */
	first = calloc(N, 1);
	order = malloc(N * sizeof(*order));
	T_ASSERT(first && order);
	for (i = 0; i < N; i++)
		order[i] = (uint32_t)i;
	order_addr = addr;
	qsort(order, N, sizeof(*order), cmp_order);
	for (i = 0; i < N; i++)
		first[order[i]] = !i || addr[order[i]] != addr[order[i - 1]];
	for (i = 0; i < N; i++) {
		hd_node_id n = hd_store_find(s, addr[i]), t;
		hd_edge_iter it;

		T_ASSERT(n != HD_NODE_NONE);
		if (!first[i])
			continue;
		hd_store_refs(s, n, &it);
		for (k = 0; k < nref[i]; k++) {
			uint64_t r = refs[i * MAXR + k];

			if (!bsearch(&r, sorted, uniq, sizeof(r), cmp_u64)) {
				dangling++;
				continue;
			}
			T_RC(hd_edge_iter_next(&it, &t), 0);
			T_EQ(hd_store_address(s, t), r);
			E++;
		}
		T_RC(hd_edge_iter_next(&it, &t), HD_ITEROVER);
	}
	for (i = 0; i < uniq; i++) {
		hd_edge_iter it;

		hd_store_referrers(s, (hd_node_id)i, &it);
		rev_total += hd_edge_iter_count(&it);
	}
	T_EQ(rev_total, in.edges);
	T_EQ(E, in.edges);
	T_EQ(dangling, in.dangling);
	T_RC(hd__store_validate(s, 1, &err), 0);
	hd_store_close(s);
	free(addr);
	free(nref);
	free(refs);
	free(text);
	free(sorted);
	free(first);
	free(order);
}

/*
 * Ruby 3.4 and later do not list the finalizer table among the roots:
 * its entries (hidden Arrays of Procs and Methods that nothing
 * references, or of up to four plain objects that only it references)
 * become the root category "finalizers". Not a hidden
 * Array of anything else, not one an object references, not one a root
 * lists, and nothing when the dump lists the table itself, nor when it
 * is of a Ruby that would list it (no shapes: 3.1 or before; there such
 * Arrays are the finalizers of objects already freed, a WeakMap's).
 */
#define SHAPED                                                            \
	"{\"address\":\"0xf000\", \"type\":\"STRING\", \"slot_size\":40, "   \
	"\"value\":\"y\"}\n"
#define FIN_OBJS                                                          \
	"{\"address\":\"0xa000\", \"type\":\"ARRAY\", \"frozen\":true, "  \
	"\"length\":2, \"references\":[\"0xb000\", \"0xb100\"]}\n"        \
	"{\"address\":\"0xa100\", \"type\":\"ARRAY\", \"length\":1, "     \
	"\"references\":[\"0xd000\"]}\n"                                   \
	"{\"address\":\"0xa200\", \"type\":\"ARRAY\", \"length\":1, "     \
	"\"references\":[\"0xb000\"]}\n"                                   \
	"{\"address\":\"0xa300\", \"type\":\"ARRAY\", \"length\":1, "     \
	"\"references\":[\"0xb000\"]}\n"                                   \
	"{\"address\":\"0xa400\", \"type\":\"ARRAY\", \"length\":0}\n"    \
	"{\"address\":\"0xb000\", \"type\":\"DATA\", \"class\":\"0xe000\", " \
	"\"struct\":\"proc\", \"references\":[\"0xc000\"]}\n"              \
	"{\"address\":\"0xb100\", \"type\":\"DATA\", \"class\":\"0xe100\", " \
	"\"struct\":\"method\"}\n"                                         \
	"{\"address\":\"0xc000\", \"type\":\"OBJECT\", \"class\":\"0xe200\", " \
	"\"references\":[\"0xa200\"]}\n"                                   \
	"{\"address\":\"0xd000\", \"type\":\"STRING\", \"value\":\"x\"}\n" \
	FIN_PLAIN
/* plain objects as finalizers: a cleaner only its entry holds (a500),
 * beside a Proc (a800); not one something else holds too (a600), nor
 * five on one object (a700) */
#define FIN_PLAIN                                                         \
	"{\"address\":\"0xa500\", \"type\":\"ARRAY\", \"length\":1, "     \
	"\"references\":[\"0xc100\"]}\n"                                   \
	"{\"address\":\"0xa600\", \"type\":\"ARRAY\", \"length\":1, "     \
	"\"references\":[\"0xc200\"]}\n"                                   \
	"{\"address\":\"0xa700\", \"type\":\"ARRAY\", \"length\":5, "     \
	"\"references\":[\"0xc400\", \"0xc410\", \"0xc420\", \"0xc430\", "  \
	"\"0xc440\"]}\n"                                                  \
	"{\"address\":\"0xa800\", \"type\":\"ARRAY\", \"length\":2, "     \
	"\"references\":[\"0xb200\", \"0xc500\"]}\n"                      \
	"{\"address\":\"0xb200\", \"type\":\"DATA\", \"class\":\"0xe000\", " \
	"\"struct\":\"proc\"}\n"                                          \
	"{\"address\":\"0xc100\", \"type\":\"OBJECT\", \"class\":\"0xe200\", " \
	"\"references\":[\"0xd000\"]}\n"                                   \
	"{\"address\":\"0xc200\", \"type\":\"OBJECT\", \"class\":\"0xe200\"}\n" \
	"{\"address\":\"0xc300\", \"type\":\"OBJECT\", \"class\":\"0xe200\", " \
	"\"references\":[\"0xc200\"]}\n"                                   \
	"{\"address\":\"0xc400\", \"type\":\"OBJECT\", \"class\":\"0xe200\"}\n" \
	"{\"address\":\"0xc410\", \"type\":\"OBJECT\", \"class\":\"0xe200\"}\n" \
	"{\"address\":\"0xc420\", \"type\":\"OBJECT\", \"class\":\"0xe200\"}\n" \
	"{\"address\":\"0xc430\", \"type\":\"OBJECT\", \"class\":\"0xe200\"}\n" \
	"{\"address\":\"0xc440\", \"type\":\"OBJECT\", \"class\":\"0xe200\"}\n" \
	"{\"address\":\"0xc500\", \"type\":\"OBJECT\", \"class\":\"0xe200\"}\n"

static void test_store__finalizer_roots(void)
{
	static const char inferred[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		"[\"0xa300\"]}\n" FIN_OBJS SHAPED;
	static const char old31[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		"[\"0xa300\"]}\n" FIN_OBJS;
	static const char listed[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		"[\"0xa300\"]}\n"
		"{\"type\":\"ROOT\", \"root\":\"finalizers\", \"references\":"
		"[\"0xa300\"]}\n" FIN_OBJS;
	hd_store *s;
	int rc;

	s = build_text("fin.json", inferred, &rc);
	T_RC(rc, 0);
	T_EQ(hd_store_root_count(s), 2);
	T_STREQ(root(s, 0), "vm: a300");
	T_STREQ(root(s, 1), "finalizers: a000 a500 a800");
	hd_store_close(s);
	s = build_text("fin2.json", listed, &rc);
	T_RC(rc, 0);
	T_EQ(hd_store_root_count(s), 2);
	T_STREQ(root(s, 1), "finalizers: a300");
	hd_store_close(s);
	s = build_text("fin3.json", old31, &rc);
	T_RC(rc, 0);
	T_EQ(hd_store_root_count(s), 1);
	T_STREQ(root(s, 0), "vm: a300");
	hd_store_close(s);
}

static void test_store__cleanup(void)
{
	fx_cleanup();
}

static const struct t_case cases[] = {
	T_CASE(store__nodes_and_edges),
	T_CASE(store__columns),
	T_CASE(store__class_names),
	T_CASE(store__names_match_stream),
	T_CASE(store__info),
	T_CASE(store__write_reopen),
	T_CASE(store__load_either),
	T_CASE(store__validate_built),
	T_CASE(store__staleness),
	T_CASE(store__gzip_source),
	T_CASE(store__empty_dump),
	T_CASE(store__atomic_write),
	T_CASE(store__strict_and_progress),
	T_CASE(store__progress),
	T_CASE(store__alloc_failures),
	T_CASE(store__shuffled_heap),
	T_CASE(store__finalizer_roots),
	T_CASE(store__cleanup),
};

T_MAIN(cases)
