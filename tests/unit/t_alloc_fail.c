/*
 * t_alloc_fail.c - allocation failure injection. Each scenario (read a
 * dump and count it, read a gzip dump, build, write and open a store,
 * select and walk from the roots, diff three stores, interface-with,
 * leaks, interface-with's and the sub-dump's reports, replace-class)
 * runs once through a counting allocator to learn how
 * many allocations it makes, then once more for every N from 1 to that
 * count with the Nth allocation failing. Every such run must fail with
 * HD_ENOMEM (never crash, never succeed with a wrong result), and leave
 * no block allocated once its handles are freed. Every block is freed
 * and resized with the size it was allocated with (the allocator
 * contract: old_size). And hd__prefault maps the pages of a block in
 * one call for the default allocator only.
 */
#include "t.h"
#include "hd_int.h"
#include "store_fixture.h"

#include <sys/mman.h>
#include <zlib.h>

/* ---- the allocator ---- */

struct counting {
	unsigned long calls;   /* malloc and realloc calls */
	unsigned long fail_at; /* this call fails (1-based), 0: none */
	int failed;            /* the failure happened */
	long live;             /* blocks allocated and not freed */
	unsigned long bad_size; /* free/realloc with a wrong old_size */
	size_t first_bad_have, first_bad_said;
};

static struct counting A;

/* Each block carries its size in front, to check old_size. */
#define HDR 16

static void *c_malloc(void *ctx, size_t n)
{
	unsigned char *p;

	(void)ctx;
	if (++A.calls == A.fail_at) {
		A.failed = 1;
		return NULL;
	}
	if (!(p = malloc(n + HDR)))
		return NULL;
	memcpy(p, &n, sizeof(n));
	A.live++;
	return p + HDR;
}

static void check_size(unsigned char *base, size_t said)
{
	size_t have;

	memcpy(&have, base, sizeof(have));
	/* hd__malloc(0) asks for 1 byte; its callers may say 0 */
	if (have != said && !(have == 1 && said == 0)) {
		if (!A.bad_size++) {
			A.first_bad_have = have;
			A.first_bad_said = said;
		}
	}
}

static void *c_realloc(void *ctx, void *ptr, size_t old, size_t n)
{
	unsigned char *base = (unsigned char *)ptr - HDR, *p;

	(void)ctx;
	if (++A.calls == A.fail_at) {
		A.failed = 1;
		return NULL;
	}
	check_size(base, old);
	if (!(p = realloc(base, n + HDR)))
		return NULL;
	memcpy(p, &n, sizeof(n));
	return p + HDR;
}

static void c_free(void *ctx, void *ptr, size_t old)
{
	unsigned char *base = (unsigned char *)ptr - HDR;

	(void)ctx;
	check_size(base, old);
	A.live--;
	free(base);
}

static const hd_allocator counting_alc = { c_malloc, c_realloc, c_free,
					   NULL };

/* ---- fixtures (written once, with the normal allocator) ---- */

static const char extra_objects[] =
	"{\"address\":\"0x5000\", \"type\":\"STRING\", \"class\":\"0x2600\", "
	"\"bytesize\":3, \"value\":\"new\", \"file\":\"/app/b.rb\", "
	"\"line\":9, \"generation\":7, \"memsize\":40}\n"
	"{\"address\":\"0x5028\", \"type\":\"ARRAY\", \"class\":\"0x2000\", "
	"\"references\":[\"0x5000\", \"0x5050\"], \"file\":\"/app/b.rb\", "
	"\"line\":10, \"generation\":7, \"memsize\":40}\n"
	"{\"address\":\"0x5050\", \"type\":\"HASH\", \"class\":\"0x2000\", "
	"\"references\":[\"0x5028\", \"0x3050\"], \"generation\":8, "
	"\"memsize\":40}\n";

/* What a scenario computed: a run that survives a failed allocation (an
 * optional one, such as shrinking a buffer) must compute the same. */
static uint64_t result;

static char big[512], dump[512], dump_gz[512], after[512], later[512], store[512],
	st_before[512], st_after[512], st_later[512], out[512], from[512], named[512], named_st[512];

static int write_gz(const char *path, const char *text)
{
	gzFile g = gzopen(path, "wb");
	int ok;

	if (!g)
		return -1;
	ok = gzwrite(g, text, (unsigned)strlen(text)) == (int)strlen(text);
	return gzclose(g) == Z_OK && ok ? 0 : -1;
}

/* 400 objects of 40 classes from 60 files, references between them:
 * enough for every growing table to grow a few times. */
static int write_big(const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned i;

	if (!f)
		return -1;
	fprintf(f, "{\"type\":\"ROOT\", \"root\":\"vm\", "
		   "\"references\":[\"0x10000\", \"0x10028\"]}\n");
	for (i = 0; i < 40; i++)
		fprintf(f, "{\"address\":\"0x%x\", \"type\":\"CLASS\", "
			   "\"name\":\"C%u\", \"references\":[\"0x%x\"]}\n",
			0x10000 + i * 40, i, 0x10000 + ((i + 1) % 40) * 40);
	for (i = 40; i < 440; i++)
		fprintf(f, "{\"address\":\"0x%x\", \"type\":\"%s\", "
			   "\"class\":\"0x%x\", \"references\":[\"0x%x\", "
			   "\"0x%x\", \"0x99\"], \"file\":\"/app/f%u.rb\", "
			   "\"line\":%u, \"method\":\"m%u\", "
			   "\"generation\":%u, \"memsize\":%u}\n",
			0x10000 + i * 40, i % 2 ? "OBJECT" : "STRING",
			0x10000 + (i % 40) * 40, 0x10000 + ((i * 7) % 440) * 40,
			0x10000 + ((i + 1) % 440) * 40, i % 60, i % 17, i % 9,
			i / 50, 40 + i);
	return fclose(f);
}

static int build_store(const char *src, const char *dst)
{
	hd_store *s = NULL;
	int rc = hd_store_build(&s, src, NULL, NULL);

	if (!rc)
		rc = hd_store_write(s, dst, NULL);
	hd_store_close(s);
	return rc;
}

/* A dump with reference names: a store built, written and opened, a
 * --via selection, hop texts, and a sub-dump restricting ref_names. */
static const char named_dump[] =
	"{\"type\":\"ROOT\", \"root\":\"global_tbl\", \"references\":"
	"[\"0x100\", \"0x300\"], \"ref_names\":[\"$A\", \"$B\"]}\n"
	"{\"address\":\"0x300\", \"type\":\"CLASS\", \"name\":\"P\", "
	"\"references\":[\"0x400\", \"0xdead\", \"0x100\"], "
	"\"ref_names\":[\"::CACHE\", \"@x\", null]}\n"
	"{\"address\":\"0x400\", \"type\":\"HASH\", \"references\":"
	"[\"0x100\"], \"ref_names\":[\"[\\\"k\\\"]\"]}\n"
	"{\"address\":\"0x100\", \"type\":\"ARRAY\", \"references\":"
	"[\"0x300\"], \"ref_names\":[2]}\n"
	"{\"address\":\"0x500\", \"type\":\"ARRAY\", \"references\":"
	"[\"0x300\"], \"ref_names\":[1, 2]}\n";

static int setup(void)
{
	static int done;
	size_t n = strlen(fixture_dump);
	char *text;

	if (done)
		return 0;
	snprintf(big, sizeof(big), "%s", fx_path("big.json"));
	if (write_big(big))
		return -1;
	snprintf(dump, sizeof(dump), "%s", fx_path("f.json"));
	snprintf(dump_gz, sizeof(dump_gz), "%s", fx_path("f.json.gz"));
	snprintf(after, sizeof(after), "%s", fx_path("after.json"));
	snprintf(later, sizeof(later), "%s", fx_path("later.json"));
	snprintf(store, sizeof(store), "%s", fx_path("f.hds"));
	snprintf(st_before, sizeof(st_before), "%s", fx_path("b.hds"));
	snprintf(st_after, sizeof(st_after), "%s", fx_path("a.hds"));
	snprintf(st_later, sizeof(st_later), "%s", fx_path("l.hds"));
	snprintf(out, sizeof(out), "%s", fx_path("out.json"));
	snprintf(from, sizeof(from), "%s", fx_path("from.json"));
	snprintf(named, sizeof(named), "%s", fx_path("named.json"));
	snprintf(named_st, sizeof(named_st), "%s", fx_path("named.hds"));
	if (fx_write(named, named_dump, strlen(named_dump)))
		return -1;
	if (!(text = malloc(n + sizeof(extra_objects))))
		return -1;
	memcpy(text, fixture_dump, n);
	memcpy(text + n, extra_objects, sizeof(extra_objects));
	if (fx_write(dump, fixture_dump, n) || write_gz(dump_gz, fixture_dump) ||
	    fx_write(after, text, strlen(text)) ||
	    /* LATER: the new objects minus the first */
	    fx_write(later, text, n) ||
	    fx_write(from, extra_objects, sizeof(extra_objects) - 1)) {
		free(text);
		return -1;
	}
	{
		FILE *f = fopen(later, "ab");
		const char *nl = strchr(extra_objects, '\n') + 1;

		if (!f || fputs(nl, f) < 0 || fclose(f)) {
			free(text);
			return -1;
		}
	}
	free(text);
	if (build_store(dump, store) || build_store(dump, st_before) ||
	    build_store(after, st_after) || build_store(later, st_later))
		return -1;
	done = 1;
	return 0;
}

/* ---- the scenarios: each frees all it made, and returns its code ---- */

static int null_sink(const void *buf, size_t n, void *payload)
{
	(void)buf;
	(void)n;
	(void)payload;
	return 0;
}

static int stats_over(hd_reader *r, hd_store *s)
{
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	hd_stats *st = NULL;
	const hd_record *rec;
	size_t nrows;
	int rc;

	so.ngroupings = 3;
	so.nkeys[0] = 1;
	so.keys[0][0] = HD_KEY_CLASS;
	so.nkeys[1] = 2;
	so.keys[1][0] = HD_KEY_LOCATION;
	so.keys[1][1] = HD_KEY_TYPE;
	so.nkeys[2] = 2;
	so.keys[2][0] = HD_KEY_GEM;
	so.keys[2][1] = HD_KEY_GENERATION;
	if ((rc = hd_stats_new(&st, &so, NULL)))
		return rc;
	if (r) {
		while ((rc = hd_reader_next(r, &rec, NULL)) == 0)
			if ((rc = hd_stats_add(st, rec, NULL)))
				break;
		if (rc == HD_ITEROVER)
			rc = 0;
	} else {
		rc = hd_stats_add_store(st, s, NULL);
	}
	if (!rc)
		rc = hd_stats_finish(st, NULL);
	if (!rc) {
		hd_stats_totals t;
		const hd_stats_row *rows;

		hd_stats_totals_get(&t, st);
		result = t.objects * 1000003 + t.memsize + t.edges;
		rows = hd_stats_rows(st, 1, HD_SORT_MEMSIZE, &nrows);
		if (!rows || !nrows)
			rc = -100; /* a wrong result */
		else
			result = result * 31 + nrows + rows[0].count;
	}
	hd_stats_free(st);
	return rc;
}

static int sc_read_stats(void)
{
	hd_reader *r = NULL;
	int rc;

	if ((rc = hd_reader_open(&r, dump, NULL, NULL)))
		return rc;
	rc = stats_over(r, NULL);
	hd_reader_free(r);
	return rc;
}

static int sc_read_gzip(void)
{
	hd_reader *r = NULL;
	int rc;

	if ((rc = hd_reader_open(&r, dump_gz, NULL, NULL)))
		return rc;
	rc = stats_over(r, NULL);
	hd_reader_free(r);
	return rc;
}

static int sc_store(void)
{
	hd_store *s = NULL, *o = NULL;
	int rc;

	if (!(rc = hd_store_build(&s, dump, NULL, NULL)) &&
	    !(rc = hd_store_write(s, store, NULL)) &&
	    !(rc = hd_store_open(&o, store, NULL)))
		rc = stats_over(NULL, o);
	hd_store_close(o);
	hd_store_close(s);
	return rc;
}

/* The bigger dump: read with stats, indexed, then its store counted. */
static int sc_big(void)
{
	hd_reader *r = NULL;
	hd_store *s = NULL;
	uint64_t first;
	int rc;

	if ((rc = hd_reader_open(&r, big, NULL, NULL)) ||
	    (rc = stats_over(r, NULL)))
		goto out;
	first = result;
	if ((rc = hd_store_build(&s, big, NULL, NULL)) ||
	    (rc = stats_over(NULL, s)))
		goto out;
	result = result * 31 + first;
out:
	hd_store_close(s);
	hd_reader_free(r);
	return rc;
}

static int sc_names(void)
{
	hd_store *s = NULL, *o = NULL;
	hd_select *sel = NULL;
	hd_reach *r = NULL;
	hd_nodes set = { NULL, 0, 0 }, kept = { NULL, 0, 0 };
	char buf[64];
	uint32_t i;
	int rc;

	if ((rc = hd_store_build(&s, named, NULL, NULL)) ||
	    (rc = hd_store_write(s, named_st, NULL)) ||
	    (rc = hd_store_open(&o, named_st, NULL)) ||
	    (rc = hd_select_new(&sel, NULL)) ||
	    (rc = hd_select_add(sel, "via", "/^[[$]/", NULL)) ||
	    (rc = hd_select_nodes(&set, NULL, sel, o, NULL)))
		goto out;
	result = set.n;
	for (i = 0; i < hd_store_node_count(o); i++)
		result = result * 31 +
			 hd_store_hop_text(buf, sizeof(buf), o, i,
					   hd_store_find(o, 0x100));
	if ((rc = hd_subdump_write(o, &set,
				   HD_SUBDUMP_ROOTS | HD_SUBDUMP_RESTRICT, NULL,
				   null_sink, NULL, NULL)) ||
	    (rc = hd_reach_new(&r, o, 0, NULL)) ||
	    (rc = hd_reach_roots_of(&kept, NULL, r, &set, 0, NULL)))
		goto out;
	result = result * 31 + kept.n;
	rc = hd_roots_of_write(o, r, &kept, &set, NULL, null_sink, NULL, NULL);
out:
	hd_reach_free(r);
	hd_nodes_free(&kept);
	hd_nodes_free(&set);
	hd_select_free(sel);
	hd_store_close(o);
	hd_store_close(s);
	return rc;
}

static int write_cb(const hd_record *rec, hd_node_id id, void *payload)
{
	const hd_store *s = payload;
	unsigned char keep[16];

	(void)id;
	memset(keep, 0xff, sizeof(keep));
	return hd_record_write(rec, s, keep, null_sink, NULL);
}

static int sc_select_roots(void)
{
	hd_store *s = NULL;
	hd_select *sel = NULL;
	hd_nodes set = { NULL, 0, 0 }, kept = { NULL, 0, 0 },
		 unreached = { NULL, 0, 0 }, sub = { NULL, 0, 0 };
	hd_reach *r = NULL;
	hd_root_path path = { 0 };
	hd_export *x = NULL;
	hd_export_options eo = HD_EXPORT_OPTIONS_INIT;
	int rc;

	if ((rc = hd_store_open(&s, store, NULL)) ||
	    (rc = hd_select_new(&sel, NULL)) ||
	    (rc = hd_select_add(sel, "class", "/^(Foo|String)$/", NULL)) ||
	    (rc = hd_select_add(sel, "class", "Object", NULL)) ||
	    (rc = hd_select_add(sel, "type", "STRING", NULL)) ||
	    (rc = hd_select_add(sel, "type", "OBJECT", NULL)) ||
	    (rc = hd_select_add(sel, "file", "/app/a.rb", NULL)) ||
	    (rc = hd_select_add(sel, "generation", "1..", NULL)) ||
	    (rc = hd_select_nodes(&set, NULL, sel, s, NULL)))
		goto out;
	if (set.n != 2) {
		rc = -100;
		goto out;
	}
	result = set.ids[0] * 1000 + set.ids[1];
	if ((rc = hd_roots_of(&kept, &unreached, s, &set, HD_ROOTS_SKIP_WEAK,
			      NULL)) ||
	    (rc = hd_reach_new(&r, s, 0, NULL)) ||
	    (rc = hd_reach_path(&path, r, set.ids[0], NULL)) ||
	    (rc = hd_subgraph_of(&sub, s, &set, 0, NULL)))
		goto out;
	eo.flags = HD_EXPORT_COLLAPSE;
	if ((rc = hd_export_new(&x, s, &sub, &eo, NULL)) ||
	    (rc = hd_export_write_gml(x, null_sink, NULL, NULL)) ||
	    (rc = hd_export_write_dot(x, null_sink, NULL, NULL)))
		goto out;
	result = result * 31 + kept.n * 100 + path.n * 10 + sub.n;
	result = result * 31 + hd_export_node_count(x);
	rc = hd_store_records(s, dump, &sub, NULL, write_cb, s, NULL);
out:
	hd_export_free(x);
	hd_root_path_free(&path);
	hd_reach_free(r);
	hd_nodes_free(&sub);
	hd_nodes_free(&unreached);
	hd_nodes_free(&kept);
	hd_nodes_free(&set);
	hd_select_free(sel);
	hd_store_close(s);
	return rc;
}

static int sc_select_from(void)
{
	hd_store *s = NULL;
	hd_select *sel = NULL, *none = NULL;
	char why[512];
	hd_nodes set = { NULL, 0, 0 };
	uint64_t missing = 0;
	int rc;

	if ((rc = hd_store_open(&s, st_after, NULL)) ||
	    (rc = hd_select_new(&sel, NULL)) ||
	    (rc = hd_select_add(sel, "from", from, NULL)) ||
	    (rc = hd_select_add(sel, "address", "0xdead", NULL)) ||
	    (rc = hd_select_add(sel, "location", "/app/b.rb:9", NULL)) ||
	    (rc = hd_select_add(sel, "location", "/app/b.rb:10", NULL)) ||
	    (rc = hd_select_nodes(&set, &missing, sel, s, NULL)))
		goto out;
	if (set.n != 2 || missing != 1) {
		rc = -100;
		goto out;
	}
	result = set.ids[0] * 1000 + set.ids[1];
	/* a selection that picks nothing, explained with suggestions */
	if ((rc = hd_select_new(&none, NULL)) ||
	    (rc = hd_select_add(none, "class", "Fooo", NULL)) ||
	    (rc = hd_select_add(none, "name", "Fo", NULL)) ||
	    (rc = hd_select_add(none, "file", "/app/bb.rb", NULL)) ||
	    (rc = hd_select_add(none, "generation", "99..", NULL)) ||
	    (rc = hd_select_explain(why, sizeof(why), none, s, NULL)))
		goto out;
	result = result * 31 + strlen(why);
out:
	hd_nodes_free(&set);
	hd_select_free(none);
	hd_select_free(sel);
	hd_store_close(s);
	return rc;
}

static int sc_diff_interface(void)
{
	hd_store *b = NULL, *a = NULL, *l = NULL;
	hd_diff_result *d = NULL;
	hd_interface *x = NULL, *y = NULL;
	hd_interface_totals t;
	hd_diff_options o = HD_DIFF_OPTIONS_INIT;
	hd_nodes f = { NULL, 0, 0 };
	hd_leaks *k = NULL;
	hd_leaks_totals kt;
	int rc;

	/* the fixture's largest generation is near 2^64: by address */
	o.flags = HD_DIFF_NO_GENERATION;
	if ((rc = hd_store_open(&b, st_before, NULL)) ||
	    (rc = hd_store_open(&a, st_after, NULL)) ||
	    (rc = hd_store_open(&l, st_later, NULL)) ||
	    (rc = hd_diff(&d, b, a, l, &o, NULL)))
		goto out;
	if (d->added.n != 3 || d->retained.n != 2) {
		rc = -100;
		goto out;
	}
	if ((rc = hd_interface_with(&x, a, &d->added, NULL)))
		goto out;
	hd_interface_totals_get(&t, x);
	if (t.diff != 3)
		rc = -100;
	result = t.diff_border * 1000 + t.reached * 100 + t.self_border * 10 +
		 t.components;
	/* the retained objects as LATER holds them, followed again from
	 * AFTER; weak references skipped */
	if (rc || (rc = hd_diff_follow(&f, a, l, &d->added, &o, NULL)))
		goto out;
	if (f.n != d->retained_later.n || d->retained_later.n != 2) {
		rc = -100;
		goto out;
	}
	if ((rc = hd_interface_with_flags(&y, l, &d->retained_later,
					  HD_ROOTS_SKIP_WEAK, NULL)))
		goto out;
	hd_interface_totals_get(&t, y);
	result = result * 10 + t.diff;
	/* the leak model as LATER holds it: every suspect described */
	if ((rc = hd_leaks_build(&k, l, d, NULL, NULL)))
		goto out;
	hd_leaks_totals_get(&kt, k);
	result = result * 100 + kt.groups * 10 + kt.shown;
	if (kt.shown && hd_leaks_suspect_get(k, 0)->sites)
		result = result * 10 + hd_leaks_suspect_get(k, 0)->keepalive_count;
out:
	hd_leaks_free(k);
	hd_nodes_free(&f);
	hd_interface_free(y);
	hd_interface_free(x);
	hd_diff_result_free(d);
	hd_store_close(l);
	hd_store_close(a);
	hd_store_close(b);
	return rc;
}

/* The reports that moved from the CLI: interface-with's ranking and
 * records, the sub-dump writer, diff --with-paths's set, the class
 * histogram and its size-less free. */
static int sc_reports(void)
{
	hd_store *b = NULL, *a = NULL;
	hd_diff_result *d = NULL;
	hd_interface *x = NULL;
	hd_interface_ranking *r = NULL;
	hd_diff_options o = HD_DIFF_OPTIONS_INIT;
	hd_nodes paths = { NULL, 0, 0 };
	hd_domtree *dt = NULL;
	hd_class_retained *rows = NULL;
	size_t nrows = 0, i;
	uint64_t unreached = 0;
	int rc;

	o.flags = HD_DIFF_NO_GENERATION;
	if ((rc = hd_store_open(&b, st_before, NULL)) ||
	    (rc = hd_store_open(&a, st_after, NULL)) ||
	    (rc = hd_diff(&d, b, a, NULL, &o, NULL)) ||
	    (rc = hd_interface_with(&x, a, &d->added, NULL)) ||
	    (rc = hd_interface_rank(&r, x, a, NULL)))
		goto out;
	for (i = 0; hd_interface_ranking_border(r, i); i++)
		result = result * 7 + hd_interface_ranking_border(r, i)->id;
	for (i = 0; hd_interface_ranking_holder(r, i); i++)
		result = result * 7 +
			 hd_interface_ranking_holder(r, i)->keepalive;
	if ((rc = hd_interface_records(x, a, HD_INTERFACE_RECORDS_SELF, NULL,
				       null_sink, NULL, NULL)) ||
	    (rc = hd_paths_union(&paths, &unreached, a, &d->added, 0, NULL)) ||
	    (rc = hd_subdump_write(a, &paths,
				   HD_SUBDUMP_ROOTS | HD_SUBDUMP_RESTRICT, NULL,
				   null_sink, NULL, NULL)) ||
	    (rc = hd_domtree_new(&dt, a, 0, NULL)) ||
	    (rc = hd_domtree_classes(&rows, &nrows, dt, NULL)))
		goto out;
	if (!nrows || rows[nrows].name) {
		rc = -100; /* the rows end with a NULL name */
		goto out;
	}
	result = result * 31 + paths.n * 10 + unreached + nrows;
out:
	hd_class_retained_free(rows);
	hd_domtree_free(dt);
	hd_nodes_free(&paths);
	hd_interface_ranking_free(r);
	hd_interface_free(x);
	hd_diff_result_free(d);
	hd_store_close(a);
	hd_store_close(b);
	return rc;
}

static int sc_replace_class(void)
{
	hd_replace_options o = HD_REPLACE_OPTIONS_INIT;
	hd_replace_stats st;

	int rc;

	o.stats = &st;
	o.flags = HD_REPLACE_ADD_REF;
	rc = hd_replace_class(dump, out, &o, NULL);
	result = st.records * 1000 + st.rewritten * 10 + st.unresolved;
	return rc;
}

/* A trend of three dumps (before, after, later: dumps and a store) by
 * class,length, selecting two classes, and its order check. */
static int sc_trend(void)
{
	const char *const classes[2] = { "String", "Array" };
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	const char *p[3];
	hd_order_pair pairs[2];
	hd_trend *t = NULL;
	hd_stats *st = NULL;
	hd_reader *r = NULL;
	hd_store *s = NULL;
	const hd_record *rec;
	const hd_trend_row *rows;
	size_t k, n;
	int rc;

	p[0] = dump;
	p[1] = after;
	p[2] = st_later;
	o.ndumps = 3;
	o.nkeys = 2;
	o.keys[1] = HD_KEY_LENGTH;
	o.classes = classes;
	o.nclasses = 2;
	if ((rc = hd_trend_new(&t, &o, NULL)))
		return rc;
	for (k = 0; k < 3 && !rc; k++) {
		if ((rc = hd_trend_stats_new(&st, t, NULL)))
			break;
		if (k == 2) {
			if (!(rc = hd_store_open(&s, p[k], NULL)))
				rc = hd_stats_add_store(st, s, NULL);
			hd_store_close(s);
			s = NULL;
		} else if (!(rc = hd_reader_open(&r, p[k], NULL, NULL))) {
			while ((rc = hd_reader_next(r, &rec, NULL)) == 0)
				if ((rc = hd_stats_add(st, rec, NULL)))
					break;
			if (rc == HD_ITEROVER)
				rc = 0;
			hd_reader_free(r);
			r = NULL;
		}
		if (!rc && !(rc = hd_stats_finish(st, NULL)))
			rc = hd_trend_add(t, st, p[k], NULL, NULL);
		hd_stats_free(st);
		st = NULL;
	}
	if (!rc)
		rc = hd_trend_finish(t, NULL);
	if (!rc) {
		hd_trend_order(pairs, t);
		rows = hd_trend_rows(t, &n);
		if (!n)
			rc = -100; /* a wrong result */
		else
			result = n * 1000003 + rows[0].count[2] +
				 pairs[1].flags;
	}
	hd_trend_free(t);
	return rc;
}

/* ---- the sweep ---- */

static void reset(unsigned long fail_at)
{
	memset(&A, 0, sizeof(A));
	A.fail_at = fail_at;
}

static void sweep(int (*fn)(void))
{
	unsigned long total, n, tolerated = 0;
	uint64_t want;
	int rc;

	T_RC(setup(), 0);
	hd_set_allocator(&counting_alc);
	reset(0);
	result = 0;
	rc = fn();
	total = A.calls;
	want = result;
	hd_set_allocator(NULL);
	T_RC(rc, 0);
	T_EQ(A.live, 0);
	if (A.bad_size) {
		T_FAIL("%lu blocks freed with a wrong size (first: %zu "
		       "allocated, %zu said)", A.bad_size, A.first_bad_have,
		       A.first_bad_said);
		return;
	}
	T_ASSERT(total > 10);
	for (n = 1; n <= total; n++) {
		hd_set_allocator(&counting_alc);
		reset(n);
		result = 0;
		rc = fn();
		hd_set_allocator(NULL);
		if (!A.failed) {
			T_FAIL("allocation %lu of %lu never happened", n,
			       total);
			return;
		}
		if (rc == 0 && result == want) {
			tolerated++; /* an optional allocation */
		} else if (rc != HD_ENOMEM) {
			T_FAIL("allocation %lu of %lu failed: rc %d, expected "
			       "HD_ENOMEM%s", n, total, rc,
			       rc ? "" : " or the same result");
			return;
		}
		if (A.live) {
			T_FAIL("allocation %lu of %lu failed: %ld blocks "
			       "leaked", n, total, A.live);
			return;
		}
		if (A.bad_size) {
			T_FAIL("allocation %lu of %lu failed: a block freed "
			       "with a wrong size (%zu allocated, %zu said)",
			       n, total, A.first_bad_have, A.first_bad_said);
			return;
		}
	}
	printf("# %lu allocations, each failed once: %lu optional\n", total,
	       tolerated);
}

static void test_alloc__read_stats(void) { sweep(sc_read_stats); }
static void test_alloc__big_read_index(void) { sweep(sc_big); }
static void test_alloc__read_gzip(void) { sweep(sc_read_gzip); }
static void test_alloc__store_build_write_open(void) { sweep(sc_store); }
static void test_alloc__select_roots_export(void) { sweep(sc_select_roots); }
static void test_alloc__select_from(void) { sweep(sc_select_from); }
static void test_alloc__diff_interface(void) { sweep(sc_diff_interface); }
static void test_alloc__replace_class(void) { sweep(sc_replace_class); }
static void test_alloc__reports(void) { sweep(sc_reports); }
static void test_alloc__ref_names(void) { sweep(sc_names); }
static void test_alloc__trend(void) { sweep(sc_trend); }

/* pages of [p, p + n) (page-aligned) the kernel has mapped in */
static size_t resident(void *p, size_t n)
{
	unsigned char v[256];
	size_t i, k = 0, pages = n / 4096;

	if (pages > sizeof(v) || mincore(p, n, v) != 0)
		return (size_t)-1;
	for (i = 0; i < pages; i++)
		k += v[i] & 1;
	return k;
}

/* hd__prefault maps every page of a block of the default allocator in
 * one call, and leaves another allocator's blocks alone (its memory may
 * be anything). A fresh anonymous mapping stands for the block: no page
 * of it is mapped before. Builds without mmap (the sanitizers') never
 * populate. */
static void test_alloc__prefault_default_only(void)
{
	size_t n = (size_t)1 << 20, k;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *q = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(p != MAP_FAILED && q != MAP_FAILED);
	T_EQ(resident(p, n), 0);
	hd_set_allocator(NULL);
	hd__prefault(p, n);
	k = resident(p, n);
#if defined(__linux__) && !defined(HD_NO_MMAP)
	T_EQ(k, n / 4096);
#else
	T_EQ(k, 0);
#endif
	hd_set_allocator(&counting_alc);
	hd__prefault(q, n);
	hd_set_allocator(NULL);
	T_EQ(resident(q, n), 0);
	/* below its threshold: left to fault */
	hd__prefault(q, 16 << 10);
	T_EQ(resident(q, n), 0);
	p[0] = q[n - 1] = 1; /* still ordinary memory */
	T_ASSERT(p[0] == 1 && q[n - 1] == 1);
	munmap(p, n);
	munmap(q, n);
}

static void test_alloc__cleanup(void)
{
	(void)fx_walk; /* store_fixture.h helpers this file does not need */
	(void)fx_read;
	fx_cleanup();
	T_ASSERT(1);
}

static const struct t_case cases[] = {
	T_CASE(alloc__read_stats),
	T_CASE(alloc__read_gzip),
	T_CASE(alloc__big_read_index),
	T_CASE(alloc__store_build_write_open),
	T_CASE(alloc__select_roots_export),
	T_CASE(alloc__select_from),
	T_CASE(alloc__diff_interface),
	T_CASE(alloc__replace_class),
	T_CASE(alloc__reports),
	T_CASE(alloc__ref_names),
	T_CASE(alloc__trend),
	T_CASE(alloc__prefault_default_only),
	T_CASE(alloc__cleanup),
};

T_MAIN(cases)
