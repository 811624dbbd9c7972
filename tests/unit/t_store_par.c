/*
 * t_store_par.c - hd_store_build on several threads (store_build.c over
 * pscan.c) writes the store one reader writes, byte for byte: on the
 * fixture, on a shuffled heap with classes, sites, roots and reference
 * names, and whatever allocation fails; it really merges chunks, and
 * leaves to one reader what only one reader decides (a class record
 * whose address an earlier chunk holds, a limit of the format).
 */
#include "t.h"
#include "store_format.h"
#include "store_fixture.h"

#include <dirent.h>
#include <sys/stat.h>


/* The store of path built on jobs threads, written to out: 0 or rc. */
static int build(const char *path, unsigned jobs, const char *out,
		 hd_error *err)
{
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	int rc;

	o.jobs = jobs;
	if ((rc = hd_store_build(&s, path, &o, err)))
		return rc;
	rc = hd_store_write(s, out, err);
	hd_store_close(s);
	return rc;
}

/* Are the files a and b the same bytes? */
static int same_file(const char *a, const char *b)
{
	size_t na = 0, nb = 0;
	unsigned char *pa = fx_read(a, &na), *pb = fx_read(b, &nb);
	int same = pa && pb && na == nb && memcmp(pa, pb, na) == 0;

	free(pa);
	free(pb);
	return same;
}

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * n records at shuffled addresses (some repeated), classes and their
 * instances, sites, generations, wide memsizes, reference names, ROOT
 * lines of several categories all over.
 */
static size_t shuffled(char *buf, size_t size, size_t n)
{
	size_t len = 0, i;
	uint64_t a, prev = 0x1000;

	for (i = 0; i < n && len + 400 < size; i++) {
		a = i % 89 == 7 ? prev : ((rng() % (n * 64)) * 8) | 0x10000;
		if (i % 61 == 0)
			len += (size_t)snprintf(buf + len, size - len,
				"{\"type\":\"ROOT\", \"root\":\"r%u\", "
				"\"references\":[\"0x%llx\"], "
				"\"ref_names\":[\"g%u\"]}\n",
				(unsigned)(rng() % 5), (unsigned long long)prev,
				(unsigned)(i % 13));
		if (i % 40 == 0)
			len += (size_t)snprintf(buf + len, size - len,
				"{\"address\":\"0x%llx\", \"type\":\"CLASS\", "
				"\"class\":\"0x%llx\", \"name\":\"C%u\", "
				"\"memsize\":480}\n",
				(unsigned long long)(0x100 + (i / 40) * 8),
				(unsigned long long)(0x8000 + i),
				(unsigned)(i / 40));
		else
			len += (size_t)snprintf(buf + len, size - len,
				"{\"address\":\"0x%llx\", \"type\":\"%s\", "
				"\"class\":\"0x%llx\", \"references\":"
				"[\"0x%llx\", \"0x%llx\"], \"ref_names\":"
				"[\"@a%u\", %u], \"file\":\"f%u.rb\", "
				"\"line\":%u, \"method\":\"m%u\", "
				"\"generation\":%u, \"memsize\":%llu}\n",
				(unsigned long long)a,
				i % 3 ? "OBJECT" : "ARRAY",
				(unsigned long long)(0x100 + (rng() % (n / 40 + 1)) * 8),
				(unsigned long long)prev,
				(unsigned long long)(a + 8 * (rng() % 3)),
				(unsigned)(rng() % 50), (unsigned)(i % 4),
				(unsigned)(rng() % 30), (unsigned)(rng() % 100),
				(unsigned)(rng() % 20), (unsigned)(i % 9),
				(unsigned long long)(i % 17 == 0 ?
					(1ULL << 33) + i : i));
		prev = a;
	}
	return len;
}

static void test_store_par__same_as_one_reader(void)
{
	enum { SIZE = 4 << 20 };
	char *buf = malloc(SIZE);
	hd_store *s = NULL;
	hd_error err;
	unsigned j;
	size_t len;

	T_ASSERT(buf != NULL);
	if (!buf)
		return;
	T_RC(fx_write(fx_path("fx.json"), fixture_dump, strlen(fixture_dump)),
	     0);
	T_RC(build(fx_path("fx.json"), 1, fx_path("fx1.hds"), &err), 0);
	T_EQ(hd__pscan_parts, 0);
	len = shuffled(buf, SIZE, 20000);
	T_RC(fx_write(fx_path("sh.json"), buf, len), 0);
	T_RC(build(fx_path("sh.json"), 1, fx_path("sh1.hds"), &err), 0);
	{
		/* no part taken: one part a thread */
		size_t take_min = hd__pscan_take_min;

		hd__pscan_take_min = SIZE;
		for (j = 2; j <= 9; j++) {
			T_RC(build(fx_path("fx.json"), j, fx_path("fxn.hds"),
				   &err), 0);
			T_ASSERT(hd__pscan_parts > 1);
			T_ASSERT(same_file(fx_path("fx1.hds"),
					   fx_path("fxn.hds")));
			T_RC(build(fx_path("sh.json"), j, fx_path("shn.hds"),
				   &err), 0);
			T_EQ(hd__pscan_parts, j);
			T_ASSERT(same_file(fx_path("sh1.hds"),
					   fx_path("shn.hds")));
		}
		hd__pscan_take_min = take_min;
	}
	/* parts claimed a few lines at a time and taken by idle threads:
	 * more parts than threads, the same store */
	{
		size_t slice = hd__pscan_slice, take_min = hd__pscan_take_min;
		unsigned more = 0;

		hd__pscan_slice = 256;
		hd__pscan_take_min = 4096;
		for (j = 2; j <= 9; j++) {
			T_RC(build(fx_path("sh.json"), j, fx_path("shn.hds"),
				   &err), 0);
			T_ASSERT(hd__pscan_parts >= j);
			more += hd__pscan_parts > j;
			T_ASSERT(same_file(fx_path("sh1.hds"),
					   fx_path("shn.hds")));
		}
		T_ASSERT(more > 0);
		hd__pscan_slice = slice;
		hd__pscan_take_min = take_min;
	}
	/* and it reads back whole, every accessor */
	T_RC(hd_store_open(&s, fx_path("shn.hds"), &err), 0);
	if (s)
		T_ASSERT(fx_walk(s) != 0);
	hd_store_close(s);
	free(buf);
}

/* The sort on two threads (from hd__par_sort_min records: lowered to
 * every size here) and the store written with pwrite while a second
 * thread makes the summary: the bytes of one reader, for shuffled heaps with
 * duplicate addresses of 2 to 20000 records. */
static void test_store_par__parallel_sort_and_write(void)
{
	enum { SIZE = 4 << 20 };
	static const size_t sizes[] = { 2, 3, 7, 64, 1000, 20000 };
	char *buf = malloc(SIZE);
	size_t keep = hd__par_sort_min, len, i;
	hd_error err;
	unsigned j;

	T_ASSERT(buf != NULL);
	if (!buf)
		return;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		len = shuffled(buf, SIZE, sizes[i]);
		T_RC(fx_write(fx_path("ps.json"), buf, len), 0);
		T_RC(build(fx_path("ps.json"), 1, fx_path("ps1.hds"), &err),
		     0);
		hd__par_sort_min = 2;
		for (j = 2; j <= 3; j++) {
			T_RC(build(fx_path("ps.json"), j, fx_path("psn.hds"),
				   &err),
			     0);
			if (!same_file(fx_path("ps1.hds"), fx_path("psn.hds")))
				T_FAIL("%zu records, -j%u: a store unlike "
				       "one reader's", sizes[i], j);
		}
		hd__par_sort_min = keep;
	}
	free(buf);
}

/* A class record at an address an earlier chunk's class holds: one
 * reader keeps the first and never interns the second's name. */
static void test_store_par__duplicate_class_read_again(void)
{
	char buf[1 << 16];
	size_t len = 0;
	hd_error err;
	int i;

	len += (size_t)snprintf(buf + len, sizeof(buf) - len,
		"{\"address\":\"0x10\", \"type\":\"CLASS\", \"name\":\"A\"}\n");
	for (i = 0; i < 200; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
			"{\"address\":\"0x%x\", \"type\":\"OBJECT\", "
			"\"class\":\"0x10\"}\n", 4096 + i * 8);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len,
		"{\"address\":\"0x10\", \"type\":\"CLASS\", \"name\":\"B\"}\n");
	T_RC(fx_write(fx_path("dc.json"), buf, len), 0);
	T_RC(build(fx_path("dc.json"), 1, fx_path("dc1.hds"), &err), 0);
	T_RC(build(fx_path("dc.json"), 2, fx_path("dc2.hds"), &err), 0);
	T_EQ(hd__pscan_parts, 0); /* read again by one reader */
	T_ASSERT(same_file(fx_path("dc1.hds"), fx_path("dc2.hds")));
}

/* A limit no chunk passes but all of them together do: one reader's
 * error, word for word. */
static void test_store_par__limit_of_the_whole(void)
{
	enum { SIZE = 4 << 20 };
	char *buf = malloc(SIZE);
	hd_error e1, e3;
	uint64_t keep = hd__max_nodes;
	size_t len;

	T_ASSERT(buf != NULL);
	if (!buf)
		return;
	len = shuffled(buf, SIZE, 3000);
	T_RC(fx_write(fx_path("lim.json"), buf, len), 0);
	hd__max_nodes = 2000;
	memset(&e1, 0, sizeof(e1));
	memset(&e3, 0, sizeof(e3));
	T_RC(build(fx_path("lim.json"), 1, fx_path("lim.hds"), &e1),
	     HD_ELIMIT);
	T_RC(build(fx_path("lim.json"), 3, fx_path("lim.hds"), &e3),
	     HD_ELIMIT);
	hd__max_nodes = keep;
	T_ASSERT(strcmp(e3.msg, e1.msg) == 0);
	T_ASSERT(strstr(e1.msg, "objects") != NULL);
	free(buf);
}

/* Version 1 options (without jobs) still build, on one thread. */
static void test_store_par__options_v1(void)
{
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_error err;

	T_RC(fx_write(fx_path("v1.json"), fixture_dump, strlen(fixture_dump)),
	     0);
	o.version = 1;
	T_RC(hd_store_build(&s, fx_path("v1.json"), &o, &err), 0);
	T_EQ(hd__pscan_parts, 0);
	hd_store_close(s);
	/* version 2 (no flags): a flag set by mistake is not read */
	s = NULL;
	o.version = 2;
	o.jobs = 2;
	o.flags = HD_INDEX_STRING_VALUES;
	T_RC(hd_store_build(&s, fx_path("v1.json"), &o, &err), 0);
	T_ASSERT(s && s->gathered == NULL);
	hd_store_close(s);
}

/* ---- the string values kept as the dump is read ---- */

/*
 * n STRING records (and a few arrays and ROOTs): values repeated,
 * escaped, missing, longer and shorter than their bytesize, shared
 * strings, encodings or none, sites or none, frozen, and addresses
 * written twice with another value (the first record wins).
 */
static size_t string_heap(char *buf, size_t size, size_t n)
{
	static const char *const val[] = {
		"\"hello\"", "\"a\\\"q\\u00e9\\n\"", "\"\"",
		"\"HELLO\"", "\"hello\\u0000x\"", NULL, /* "long value N" */
	};
	size_t len = 0, i;
	uint64_t a, prev = 0x10000;

	for (i = 0; i < n && len + 400 < size; i++) {
		unsigned v = (unsigned)(rng() % 6), k = (unsigned)(rng() % 9);
		char value[64], more[160];

		a = i % 37 == 5 ? prev : ((rng() % (n * 64)) * 8) | 0x10000;
		if (val[v])
			snprintf(value, sizeof(value), "%s", val[v]);
		else
			snprintf(value, sizeof(value), "\"long value %u\"",
				 (unsigned)(i % 7));
		if (i % 50 == 0)
			len += (size_t)snprintf(buf + len, size - len,
				"{\"type\":\"ROOT\", \"root\":\"vm\", "
				"\"references\":[\"0x%llx\"]}\n",
				(unsigned long long)prev);
		if (i % 23 == 0) {
			len += (size_t)snprintf(buf + len, size - len,
				"{\"address\":\"0x%llx\", \"type\":\"ARRAY\", "
				"\"references\":[\"0x%llx\"], \"memsize\":40}\n",
				(unsigned long long)a,
				(unsigned long long)prev);
			prev = a;
			continue;
		}
		more[0] = 0;
		if (k == 0)
			snprintf(more, sizeof(more), ", \"shared\":true, "
				 "\"references\":[\"0x%llx\"]",
				 (unsigned long long)prev);
		else if (k == 1)
			snprintf(more, sizeof(more), ", \"bytesize\":0");
		else if (k == 2)
			snprintf(more, sizeof(more), ", \"bytesize\":%u, "
				 "\"value\":%s", (unsigned)(rng() % 4), value);
		else if (k == 3)
			snprintf(more, sizeof(more), ", \"value\":%s", value);
		else
			snprintf(more, sizeof(more), ", \"bytesize\":%u, "
				 "\"capacity\":40, \"value\":%s%s%s",
				 (unsigned)(v == 5 ? 12 : v == 1 ? 6 : 5),
				 value, k & 1 ? ", \"encoding\":\"UTF-8\"" : "",
				 k == 8 ? ", \"frozen\":true, \"fstring\":true"
					: "");
		len += (size_t)snprintf(buf + len, size - len,
			"{\"address\":\"0x%llx\", \"type\":\"STRING\", "
			"\"class\":\"0x100\"%s%s, \"memsize\":%u}\n",
			(unsigned long long)a, more,
			i % 3 ? "" : i % 2 ? ", \"file\":\"a.rb\", \"line\":3"
					  : ", \"file\":\"b.rb\", \"line\":9",
			(unsigned)(40 + i % 5));
		prev = a;
	}
	return len;
}

/* The store of path built on jobs threads (gather: keeping the string
 * values), with the string values and group stats views, written to
 * out: 0 or rc; -100 when the values were kept without the flag (or
 * not with it), -101 when the views left them. */
static int build_views(const char *path, unsigned jobs, int gather,
		       const char *out, hd_error *err)
{
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	int rc;

	o.jobs = jobs;
	o.flags = gather ? HD_INDEX_STRING_VALUES : 0;
	if ((rc = hd_store_build(&s, path, &o, err)))
		return rc;
	if ((s->gathered != NULL) != (gather != 0)) {
		hd_store_close(s);
		return -100; /* the values kept, or not, against the flag */
	}
	rc = hd_store_set_views(s, NULL, HD_VIEW_STRINGS | HD_VIEW_GROUPS,
				err);
	if (s->gathered != NULL && !rc)
		rc = -101; /* the views did not take the values */
	if (!rc)
		rc = hd_store_write(s, out, err);
	hd_store_close(s);
	return rc;
}

/* The views of a store built keeping the string values are the bytes of
 * those read back from the dump, on one thread and on several (parts
 * merged, more parts than threads), from the fixture and from a heap of
 * strings; and the values are really used: a dump changed after the
 * build (the same size) cannot be read back, but was not. */
static void test_store_par__string_values_kept(void)
{
	enum { SIZE = 2 << 20 };
	char *buf = malloc(SIZE);
	size_t len, slice = hd__pscan_slice, take_min = hd__pscan_take_min;
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_error err;
	unsigned j;

	T_ASSERT(buf != NULL);
	if (!buf)
		return;
	T_RC(fx_write(fx_path("svf.json"), fixture_dump, strlen(fixture_dump)),
	     0);
	T_RC(build_views(fx_path("svf.json"), 1, 0, fx_path("svf0.hds"), &err),
	     0);
	T_RC(build_views(fx_path("svf.json"), 1, 1, fx_path("svf1.hds"), &err),
	     0);
	T_ASSERT(same_file(fx_path("svf0.hds"), fx_path("svf1.hds")));
	len = string_heap(buf, SIZE, 12000);
	T_RC(fx_write(fx_path("sv.json"), buf, len), 0);
	T_RC(build_views(fx_path("sv.json"), 1, 0, fx_path("sv0.hds"), &err),
	     0);
	T_RC(build_views(fx_path("sv.json"), 1, 1, fx_path("sv1.hds"), &err),
	     0);
	T_ASSERT(same_file(fx_path("sv0.hds"), fx_path("sv1.hds")));
	hd__pscan_slice = 256;
	hd__pscan_take_min = 4096;
	for (j = 2; j <= 5; j++) {
		T_RC(build_views(fx_path("sv.json"), j, 1, fx_path("svn.hds"),
				 &err), 0);
		T_ASSERT(hd__pscan_parts >= j);
		T_ASSERT(same_file(fx_path("sv0.hds"), fx_path("svn.hds")));
		T_RC(build_views(fx_path("svf.json"), j, 1,
				 fx_path("svn.hds"), &err), 0);
		T_ASSERT(same_file(fx_path("svf0.hds"), fx_path("svn.hds")));
	}
	hd__pscan_slice = slice;
	hd__pscan_take_min = take_min;
	/* kept, then the dump overwritten with spaces: the views come from
	 * the values kept, read back they would fail */
	o.jobs = 2;
	o.flags = HD_INDEX_STRING_VALUES;
	T_RC(hd_store_build(&s, fx_path("sv.json"), &o, &err), 0);
	memset(buf, ' ', len);
	T_RC(fx_write(fx_path("sv.json"), buf, len), 0);
	if (s) {
		T_RC(hd_store_set_views(s, NULL, HD_VIEW_STRINGS, &err), 0);
		T_RC(hd_store_write(s, fx_path("svx.hds"), &err), 0);
		hd_store_close(s);
		s = NULL;
	}
	T_RC(hd_store_open(&s, fx_path("svx.hds"), &err), 0);
	{
		hd_store *t = NULL;
		hd_string_values *a = NULL, *b = NULL;
		hd_string_value ra, rb;
		size_t i;

		T_RC(hd_store_open(&t, fx_path("sv0.hds"), &err), 0);
		T_RC(hd_string_values_open(&a, s, &err), 0);
		T_RC(hd_string_values_open(&b, t, &err), 0);
		T_ASSERT(hd_string_values_count(a) > 50);
		T_EQ(hd_string_values_count(a), hd_string_values_count(b));
		for (i = 0; a && b && i < hd_string_values_count(a); i++) {
			hd_string_values_row(&ra, a, i);
			hd_string_values_row(&rb, b, i);
			if (ra.value_len != rb.value_len ||
			    memcmp(ra.value, rb.value, ra.value_len) ||
			    ra.count != rb.count || ra.node != rb.node) {
				T_FAIL("string value row %zu differs", i);
				break;
			}
		}
		hd_string_values_free(a);
		hd_string_values_free(b);
		hd_store_close(t);
	}
	hd_store_close(s);
	free(buf);
}

/* The store of path with its tree and every view (what index
 * --dominators --views keeps), built on jobs threads keeping the string
 * values, spilled into dir (HD_INDEX_SPILL) unless dir is NULL, written
 * to out: 0 or rc; -102 when spilled but a section or a block of
 * values was left in memory (where stores can be mapped), -103 when not
 * spilled but something went to a file, -104 when the store's info
 * points elsewhere than its section. */
static int build_all(const char *path, unsigned jobs, const char *dir,
		     const char *out, hd_error *err)
{
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_domtree *d = NULL;
	size_t k;
	int rc;

	o.jobs = jobs;
	o.flags = HD_INDEX_STRING_VALUES | (dir ? HD_INDEX_SPILL : 0);
	o.spill_dir = dir;
	if ((rc = hd_store_build(&s, path, &o, err)))
		return rc;
#ifndef HD_NO_MMAP
	if (dir && (!s->spill_map[HD__SEC_ADDRESS] ||
		    !s->spill_map[HD__SEC_REFS] || s->own[HD__SEC_ADDRESS]))
		rc = -102;
	for (k = 0; dir && s->gathered && k < s->gathered->nchunk; k++)
		if (s->gathered->chunk[k].p)
			rc = -102;
#endif
	if (!dir && (s->spilling || s->spill_map[HD__SEC_ADDRESS]))
		rc = -103;
	/* the source's path read where its section is now (not in the
	 * image the spill freed) */
	if (s->info.source_path < (const char *)s->sec[HD__SEC_STRINGS] ||
	    s->info.source_path >= (const char *)s->sec[HD__SEC_STRINGS] +
					   s->len[HD__SEC_STRINGS] ||
	    strcmp(s->info.source_path, path) != 0)
		rc = -104;
	if (!rc)
		rc = hd_store_set_views(s, NULL,
					HD_VIEW_STRINGS | HD_VIEW_GROUPS, err);
	if (!rc && !(rc = hd_domtree_new(&d, s, HD_DOMTREE_SKIP_DUMPER, err)))
		rc = hd_store_set_domtree(s, d, err);
	hd_domtree_free(d);
	d = NULL;
#ifndef HD_NO_MMAP
	/* attached after the spill: spilled in turn */
	if (!rc && dir && !s->spill_map[HD__SEC_DOM_IDOM])
		rc = -102;
#endif
	if (!rc && !(rc = hd_domtree_new(&d, s, HD_DOMTREE_SKIP_DUMPER, err)))
		rc = hd_store_set_views(s, d, HD_VIEW_CLASSES | HD_VIEW_ORDER,
					err);
	hd_domtree_free(d);
	if (!rc)
		rc = hd_store_write(s, out, err);
	hd_store_close(s);
	(void)k;
	return rc;
}

/* Entries of directory dir. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return d ? n : -1;
}

/* A store built out of memory (HD_INDEX_SPILL: its sections and the
 * string values kept moved to an unnamed file, and the tree and views
 * attached after) is the bytes of one built in memory, on one thread
 * and on several; every section and block really went to the file; it
 * leaves no file behind; a directory where no file can be made is an
 * error that names it. */
static void test_store_par__spilled(void)
{
	enum { SIZE = 2 << 20 };
	char *buf = malloc(SIZE), dir[4096];
	size_t len, keep = hd__spill_min;
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_error err;
	unsigned j;
	int before;

	T_ASSERT(buf != NULL);
	if (!buf)
		return;
	len = string_heap(buf, SIZE, 12000);
	T_RC(fx_write(fx_path("sp.json"), buf, len), 0);
	snprintf(dir, sizeof(dir), "%s", fx_path("spill"));
	T_ASSERT(mkdir(dir, 0700) == 0);
	before = dir_entries(dir);
	T_RC(build_all(fx_path("sp.json"), 1, NULL, fx_path("sp0.hds"), &err),
	     0);
	hd__spill_min = 1;
	for (j = 1; j <= 3; j++) {
		T_RC(build_all(fx_path("sp.json"), j, dir, fx_path("sp1.hds"),
			       &err), 0);
		T_ASSERT(same_file(fx_path("sp0.hds"), fx_path("sp1.hds")));
	}
	/* a store spilled by hand, written from one thread (through the
	 * stream, not pwrite): the same bytes */
	o.flags = HD_INDEX_STRING_VALUES;
	T_RC(hd_store_build(&s, fx_path("sp.json"), &o, &err), 0);
	if (s) {
		T_RC(hd_store_spill(s, dir, &err), 0);
		T_RC(hd_store_set_views(s, NULL, HD_VIEW_STRINGS |
					HD_VIEW_GROUPS, &err), 0);
		T_RC(hd_store_write(s, fx_path("sp2.hds"), &err), 0);
		hd_store_close(s);
		s = NULL;
	}
	T_RC(build_views(fx_path("sp.json"), 1, 1, fx_path("sp3.hds"), &err),
	     0);
	T_ASSERT(same_file(fx_path("sp2.hds"), fx_path("sp3.hds")));
	hd__spill_min = keep;
	T_EQ(dir_entries(dir), before);
	/* an opened store is not spilled */
	T_RC(hd_store_open(&s, fx_path("sp0.hds"), &err), 0);
	if (s)
		T_RC(hd_store_spill(s, dir, &err), HD_EINVAL);
	hd_store_close(s);
	s = NULL;
	/* no directory: said, with its name (a sanitized build keeps its
	 * stores in memory and makes no file) */
	o.flags = HD_INDEX_SPILL;
	o.spill_dir = "/nonexistent-spill-dir";
#ifndef HD_NO_MMAP
	T_RC(hd_store_build(&s, fx_path("sp.json"), &o, &err), HD_EIO);
	T_ASSERT(strstr(err.msg, "/nonexistent-spill-dir") != NULL);
#else
	T_RC(hd_store_build(&s, fx_path("sp.json"), &o, &err), 0);
#endif
	hd_store_close(s);
	free(buf);
}

/* ---- allocation failures, on several threads ---- */

static long fail_at = -1, n_alloc;
static long long outstanding;

static void *f_malloc(void *ctx, size_t n)
{
	void *p;

	(void)ctx;
	if (__atomic_fetch_add(&n_alloc, 1, __ATOMIC_SEQ_CST) ==
	    __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST))
		return NULL;
	p = malloc(n);
	if (p)
		__atomic_add_fetch(&outstanding, (long long)n,
				   __ATOMIC_SEQ_CST);
	return p;
}

static void *f_realloc(void *ctx, void *old, size_t old_n, size_t n)
{
	void *p;

	(void)ctx;
	if (__atomic_fetch_add(&n_alloc, 1, __ATOMIC_SEQ_CST) ==
	    __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST))
		return NULL;
	p = realloc(old, n);
	if (p)
		__atomic_add_fetch(&outstanding,
				   (long long)n - (long long)old_n,
				   __ATOMIC_SEQ_CST);
	return p;
}

static void f_free(void *ctx, void *p, size_t old_n)
{
	(void)ctx;
	__atomic_sub_fetch(&outstanding, (long long)old_n, __ATOMIC_SEQ_CST);
	free(p);
}

/* How many allocations a build of dump through the counting allocator
 * makes when none fails; its return code in *rc. */
static long count_build_allocs(const char *dump, const hd_index_options *o,
			       hd_error *err, int *rc)
{
	hd_store *s = NULL;

	fail_at = -1;
	n_alloc = 0;
	*rc = hd_store_build(&s, dump, o, err);
	hd_store_close(s);
	return n_alloc;
}

/* Fails the Nth allocation of a 3-thread build, for every N: the build
 * fails with HD_ENOMEM or writes the store of one reader, and nothing
 * stays allocated; keeping the string values (gather), the same. */
static void alloc_failures(int gather)
{
	hd_allocator a = { f_malloc, f_realloc, f_free, NULL };
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_error err;
	long n, total, ok = 0;
	int rc;

	T_RC(fx_write(fx_path("af.json"), fixture_dump, strlen(fixture_dump)),
	     0);
	T_RC(build(fx_path("af.json"), 1, fx_path("af1.hds"), &err), 0);
	o.jobs = 3;
	o.flags = gather ? HD_INDEX_STRING_VALUES : 0;
	hd_set_allocator(&a);
	total = count_build_allocs(fx_path("af.json"), &o, &err, &rc);
	T_RC(rc, 0);
	T_ASSERT(total > 10);
	for (n = 0; n < total; n++) {
		fail_at = n;
		n_alloc = 0;
		outstanding = 0;
		rc = hd_store_build(&s, fx_path("af.json"), &o, &err);
		if (rc == 0) {
			fail_at = -1;
			rc = hd_store_write(s, fx_path("afn.hds"), &err);
			hd_store_close(s);
			s = NULL;
			if (rc || !same_file(fx_path("af1.hds"),
					     fx_path("afn.hds"))) {
				hd_set_allocator(NULL);
				T_FAIL("failing at allocation %ld: a store "
				       "unlike one reader's (rc %d)", n, rc);
				return;
			}
			ok++;
		} else if (rc != HD_ENOMEM) {
			hd_set_allocator(NULL);
			T_FAIL("failing at allocation %ld: rc %d", n, rc);
			return;
		}
		if (outstanding != 0) {
			hd_set_allocator(NULL);
			T_FAIL("failing at allocation %ld: %lld bytes "
			       "outstanding", n, outstanding);
			return;
		}
	}
	hd_set_allocator(NULL);
	T_ASSERT(ok > 0); /* a part's failure: read again by one reader */
}

static void test_store_par__alloc_failures(void)
{
	alloc_failures(0);
	alloc_failures(1);
}

/* Fails the Nth allocation of the build of a 3-thread store sorted on
 * two threads, then the Nth of its writing (the sections with pwrite,
 * the summary on the second thread), for every N: HD_ENOMEM or one reader's store,
 * nothing left allocated, no temporary file left, and a failed write
 * leaves the file there before untouched. */
static void test_store_par__alloc_failures_sort_write(void)
{
	enum { SIZE = 1 << 20 };
	hd_allocator a = { f_malloc, f_realloc, f_free, NULL };
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	char *buf = malloc(SIZE);
	unsigned char *got;
	size_t keep = hd__par_sort_min, len;
	hd_store *s = NULL;
	hd_error err;
	long n, total, ok = 0;
	long long before;
	int rc;

	T_ASSERT(buf != NULL);
	if (!buf)
		return;
	len = shuffled(buf, SIZE, 500);
	T_RC(fx_write(fx_path("aw.json"), buf, len), 0);
	free(buf);
	T_RC(build(fx_path("aw.json"), 1, fx_path("aw1.hds"), &err), 0);
	o.jobs = 3;
	hd__par_sort_min = 2;
	hd_set_allocator(&a);
	/* the build */
	total = count_build_allocs(fx_path("aw.json"), &o, &err, &rc);
	T_RC(rc, 0);
	for (n = 0; n < total; n++) {
		fail_at = n;
		n_alloc = 0;
		outstanding = 0;
		rc = hd_store_build(&s, fx_path("aw.json"), &o, &err);
		fail_at = -1;
		if (rc == 0) {
			rc = hd_store_write(s, fx_path("awn.hds"), &err);
			hd_store_close(s);
			s = NULL;
			if (rc || !same_file(fx_path("aw1.hds"),
					     fx_path("awn.hds"))) {
				T_FAIL("build failing at allocation %ld: a "
				       "store unlike one reader's (rc %d)",
				       n, rc);
				break;
			}
			ok++;
		} else if (rc != HD_ENOMEM) {
			T_FAIL("build failing at allocation %ld: rc %d", n, rc);
			break;
		}
		if (outstanding != 0) {
			T_FAIL("build failing at allocation %ld: %lld bytes "
			       "outstanding", n, outstanding);
			break;
		}
	}
	/* the write, over a file that must stay as it was */
	T_RC(fx_write(fx_path("aww.hds"), "before", 6), 0);
	T_RC(fx_write(fx_path("awm.hds"), "before", 6), 0); /* as many */
	fail_at = -1;
	T_RC(hd_store_build(&s, fx_path("aw.json"), &o, &err), 0);
	n_alloc = 0;
	T_RC(hd_store_write(s, fx_path("awm.hds"), &err), 0);
	T_ASSERT(same_file(fx_path("aw1.hds"), fx_path("awm.hds")));
	total = n_alloc;
	for (n = 0; s && n < total; n++) {
		before = outstanding;
		fail_at = n;
		n_alloc = 0;
		rc = hd_store_write(s, fx_path("aww.hds"), &err);
		fail_at = -1;
		if (rc == 0) {
			/* (the directory's sync after the rename: only
			 * tried) */
			if (!same_file(fx_path("aw1.hds"), fx_path("aww.hds"))) {
				T_FAIL("write failing at allocation %ld: a "
				       "store unlike one reader's", n);
				break;
			}
			T_RC(fx_write(fx_path("aww.hds"), "before", 6), 0);
			continue;
		}
		if (rc != HD_ENOMEM || outstanding != before) {
			T_FAIL("write failing at allocation %ld: rc %d, %lld "
			       "bytes outstanding", n, rc,
			       outstanding - before);
			break;
		}
		if (fx_count_tmp() != 0) {
			T_FAIL("write failing at allocation %ld: a temporary "
			       "file left", n);
			break;
		}
		got = fx_read(fx_path("aww.hds"), &len);
		if (!got || len != 6 || memcmp(got, "before", 6)) {
			free(got);
			T_FAIL("write failing at allocation %ld: the file "
			       "there before changed", n);
			break;
		}
		free(got);
	}
	hd_store_close(s);
	hd_set_allocator(NULL);
	hd__par_sort_min = keep;
	T_ASSERT(ok > 0);
}

static void test_store_par__cleanup(void)
{
	fx_cleanup();
}

static const struct t_case cases[] = {
	T_CASE(store_par__same_as_one_reader),
	T_CASE(store_par__duplicate_class_read_again),
	T_CASE(store_par__limit_of_the_whole),
	T_CASE(store_par__options_v1),
	T_CASE(store_par__string_values_kept),
	T_CASE(store_par__spilled),
	T_CASE(store_par__alloc_failures),
	T_CASE(store_par__parallel_sort_and_write),
	T_CASE(store_par__alloc_failures_sort_write),
	T_CASE(store_par__cleanup),
};

T_MAIN(cases)
