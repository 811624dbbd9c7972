/*
 * t_msnap.c - lib/msnap.c (the malloc snapshot reader) and lib/mreport.c
 * (what snapshots say): header and lines, damaged lines, formats
 * refused, escapes, every prefix of a snapshot; sites by live bytes,
 * growth, mwrap's estimate, the slope, the verdicts.
 */
#include "../t.h"
#include "heapdump.h"

#include <stdio.h>
#include <string.h>

#define HDR(pid, t, extra)                                                 \
	"{\"type\":\"malloc_snapshot\",\"format\":1,\"pid\":" #pid            \
	",\"time\":" #t ",\"ruby\":\"3.4.8\",\"allocator\":\"glibc\","    \
	"\"tracking\":true,\"reason\":\"exit\",\"gc_count\":42" extra "}\n"

static const char good[] =
	"{\"type\":\"malloc_snapshot\",\"format\":1,\"pid\":123,"
	"\"time\":1764650000.125,\"ruby\":\"3.4.8\",\"allocator\":\"glibc\","
	"\"tracking\":true,\"reason\":\"signal\",\"gc_count\":42,"
	"\"totals\":{\"allocs\":7,\"frees\":3,\"bytes_allocated\":700,"
	"\"live_bytes\":400,\"live_blocks\":4},\"malloc\":{\"in_use\":9000,"
	"\"free\":100},\"rss\":5000000,\"new_key\":[1,{\"a\":null}]}\n"
	"{\"type\":\"site\",\"site\":\"app.rb:12\",\"kind\":\"ruby\","
	"\"allocs\":5,\"frees\":2,\"bytes_allocated\":500,\"live_bytes\":300,"
	"\"live_blocks\":3,\"gen_oldest\":7,\"gen_mean\":12.5}\n"
	"\n"
	"{\"type\":\"future_line\",\"x\":1}\n"
	"{\"kind\":\"c\",\"site\":\"libz.so.1:inflate+0x1f\",\"type\":\"site\","
	"\"allocs\":2,\"frees\":1,\"bytes_allocated\":200,\"live_bytes\":100,"
	"\"live_blocks\":1,\"unknown\":{\"deep\":[[[]]]}}\n"
	"{\"type\":\"leakscan\",\"allocator\":\"glibc\",\"live_blocks\":4,"
	"\"scanned_bytes\":1000,\"unreached_blocks\":1,\"unreached_bytes\":100,"
	"\"seconds\":0.31,\"blind\":[\"addresses held only as Ruby Integers\","
	"\"registers of threads other than the scanning one\"]}\n"
	"{\"type\":\"leaked\",\"site\":\"libz.so.1:inflate+0x1f\",\"kind\":\"c\","
	"\"blocks\":1,\"bytes\":100}\n";

static hd_msnap *open_str(const char *s, int strict, int *rc, hd_error *err)
{
	hd_msnap_options o = HD_MSNAP_OPTIONS_INIT;
	hd_msnap *m = NULL;

	o.strict = strict;
	*rc = hd_msnap_open_mem(&m, s, strlen(s), &o, err);
	return m;
}

static void test_msnap__header_and_lines(void)
{
	hd_error err = { 0 };
	hd_msnap_item it;
	const hd_msnap_header *h;
	int rc;
	hd_msnap *m = open_str(good, 0, &rc, &err);

	T_EQ(rc, 0);
	h = hd_msnap_header_get(m);
	T_EQ(h->format, 1);
	T_EQ(h->pid, 123);
	T_ASSERT(h->time > 1764650000.12 && h->time < 1764650000.13);
	T_STREQ(h->ruby, "3.4.8");
	T_STREQ(h->reason, "signal");
	T_EQ(h->tracking, 1);
	T_EQ(h->gc_count, 42);
	T_EQ(h->live_bytes, 400);
	T_EQ(h->live_blocks, 4);
	T_EQ(h->has_malloc, 1);
	T_EQ(h->malloc_in_use, 9000);
	T_EQ(h->malloc_free, 100);
	T_EQ(h->rss, 5000000);
	T_EQ(hd_msnap_next(m, &it, &err), 0);
	T_EQ(it.type, HD_MSNAP_SITE);
	T_EQ(it.kind, HD_MSITE_RUBY);
	T_STREQ(it.site, "app.rb:12");
	T_EQ(it.allocs, 5);
	T_EQ(it.live_bytes, 300);
	T_EQ(it.has_gen, 1);
	T_EQ(it.gen_oldest, 7);
	T_ASSERT(it.gen_mean == 12.5);
	/* the future line type is passed over, not counted as damaged;
	 * keys in any order */
	T_EQ(hd_msnap_next(m, &it, &err), 0);
	T_EQ(it.kind, HD_MSITE_C);
	T_STREQ(it.site, "libz.so.1:inflate+0x1f");
	T_EQ(it.has_gen, 0);
	T_EQ(hd_msnap_next(m, &it, &err), 0);
	T_EQ(it.type, HD_MSNAP_LEAKSCAN);
	T_EQ(it.unreached_bytes, 100);
	T_STREQ(it.blind, "addresses held only as Ruby Integers; registers of "
			  "threads other than the scanning one");
	T_EQ(hd_msnap_next(m, &it, &err), 0);
	T_EQ(it.type, HD_MSNAP_LEAKED);
	T_EQ(it.blocks, 1);
	T_EQ(it.bytes, 100);
	T_EQ(hd_msnap_next(m, &it, &err), HD_ITEROVER);
	T_EQ(hd_msnap_skipped(m), 0);
	hd_msnap_close(m);
}

static void test_msnap__damaged_lines(void)
{
	static const char s[] =
		HDR(1, 10, "") "not json at all\n"
		"{\"type\":\"site\",\"site\":\"a.rb:1\",\"kind\":\"ruby\","
		"\"allocs\":1,\"live_bytes\":8}\n"
		"{\"type\":\"site\",\"kind\":\"ruby\",\"allocs\":1,"
		"\"live_bytes\":8}\n"                       /* no site */
		"{\"type\":\"site\",\"site\":\"b.rb:1\",\"allocs\":-1,"
		"\"live_bytes\":8}\n"                       /* negative */
		"{\"type\":\"site\",\"site\":\"c.rb:1\",\"allocs\":1,"
		"\"live_bytes\":8\n"                         /* cut */
		"{\"type\":\"site\",\"site\":\"d\x01\",\"allocs\":1,"
		"\"live_bytes\":8}\n"                        /* raw control */
		"{\"type\":\"malloc_snapshot\",\"format\":1}\n" /* a 2nd header */
		"{\"type\":\"site\",\"site\":\"e.rb:1\",\"allocs\":0x10,"
		"\"live_bytes\":8}\n";                       /* hex */
	hd_error err = { 0 };
	hd_msnap_item it;
	int rc, n = 0;
	hd_msnap *m = open_str(s, 0, &rc, &err);

	T_EQ(rc, 0);
	while ((rc = hd_msnap_next(m, &it, &err)) == 0)
		n++;
	T_EQ(rc, HD_ITEROVER);
	T_EQ(n, 1);
	T_EQ(hd_msnap_skipped(m), 7);
	T_EQ(hd_msnap_first_skip(m), 2);
	hd_msnap_close(m);

	m = open_str(s, 1, &rc, &err);
	T_EQ(rc, 0);
	T_EQ(hd_msnap_next(m, &it, &err), HD_EPARSE);
	T_EQ(err.line, 2);
	T_EQ(err.column, 1);
	hd_msnap_close(m);
}

static void test_msnap__formats_refused(void)
{
	hd_error err = { 0 };
	int rc;
	hd_msnap *m;

	m = open_str("{\"type\":\"malloc_snapshot\",\"pid\":1}\n", 0, &rc,
		     &err);
	T_EQ(rc, HD_EFORMAT);
	T_ASSERT(strstr(err.msg, "without a \"format\"") != NULL);
	T_ASSERT(m == NULL);
	m = open_str("{\"type\":\"malloc_snapshot\",\"format\":2}\n", 0, &rc,
		     &err);
	T_EQ(rc, HD_EFORMAT);
	T_ASSERT(strstr(err.msg, "format 2") != NULL);
	m = open_str("{\"type\":\"malloc_snapshot\",\"format\":\"1\"}\n", 0,
		     &rc, &err);
	T_EQ(rc, HD_EFORMAT);
	m = open_str("{\"address\":\"0x1\",\"type\":\"STRING\"}\n", 0, &rc,
		     &err);
	T_EQ(rc, HD_EFORMAT);
	T_ASSERT(strstr(err.msg, "not a malloc snapshot (line 1") != NULL);
	m = open_str("", 0, &rc, &err);
	T_EQ(rc, HD_EFORMAT);
	T_ASSERT(strstr(err.msg, "empty") != NULL);
	m = open_str("\n \n", 0, &rc, &err);
	T_EQ(rc, HD_EFORMAT);
	(void)m;
}

static void test_msnap__escapes(void)
{
	static const char s[] =
		HDR(1, 10, "")
		"{\"type\":\"site\",\"site\":\"x\\u001b[31m\\u00ff\\\"\\\\"
		"\\ud83d\\ude00\\u00e9.rb:1\",\"kind\":\"ruby\",\"allocs\":1,"
		"\"live_bytes\":8}\n";
	hd_error err = { 0 };
	hd_msnap_item it;
	int rc;
	hd_msnap *m = open_str(s, 1, &rc, &err);

	T_EQ(rc, 0);
	T_EQ(hd_msnap_next(m, &it, &err), 0);
	/* \u00XX is the byte XX (the tracker's escape of an invalid
	 * byte); a pair of surrogates is one character in UTF-8 */
	T_EQ(it.site_len, 19);
	T_ASSERT(!memcmp(it.site, "x\x1b[31m\xff\"\\\xf0\x9f\x98\x80\xe9.rb:1",
			 19));
	hd_msnap_close(m);
}

/* every prefix opens (or is refused) and reads without a fault */
static void test_msnap__every_prefix(void)
{
	size_t n = strlen(good), k;
	hd_error err = { 0 };
	hd_msnap_item it;
	int rc, opened = 0;

	for (k = 0; k <= n; k++) {
		hd_msnap *m = NULL;

		rc = hd_msnap_open_mem(&m, good, k, NULL, &err);
		if (rc) {
			T_EQ(rc, HD_EFORMAT);
			continue;
		}
		opened++;
		while (hd_msnap_next(m, &it, &err) == 0)
			;
		hd_msnap_close(m);
	}
	/* from the header's last byte on, each prefix opens */
	T_EQ((size_t)opened, n - (size_t)(strchr(good, '\n') - good) + 1);
}

/* what the tracker writes (fmt-changes.md): a process without Ruby has
 * "ruby": null and no gc_count; a blind tracker no totals nor malloc */
static void test_msnap__tracker_headers(void)
{
	static const char noruby[] =
		"{\"type\":\"malloc_snapshot\",\"format\":1,\"pid\":9,"
		"\"time\":5.5,\"ruby\":null,\"allocator\":\"glibc\","
		"\"tracking\":true,\"reason\":\"exit\",\"totals\":{"
		"\"allocs\":1,\"frees\":0,\"bytes_allocated\":8,"
		"\"live_bytes\":8,\"live_blocks\":1},\"rss\":100}\n"
		"{\"type\":\"site\",\"site\":\"ruby:0\",\"kind\":\"ruby\","
		"\"allocs\":1,\"frees\":0,\"bytes_allocated\":8,"
		"\"live_bytes\":8,\"live_blocks\":1,\"gen_oldest\":0,"
		"\"gen_mean\":0.0}\n";
	static const char blind[] =
		"{\"type\":\"malloc_snapshot\",\"format\":1,\"pid\":9,"
		"\"time\":6.5,\"ruby\":\"3.4.8\",\"allocator\":\"jemalloc\","
		"\"tracking\":false,\"why\":\"jemalloc was preloaded ahead "
		"of the tracker\",\"reason\":\"exit\",\"rss\":100}\n";
	hd_error err = { 0 };
	hd_msnap_item it;
	const hd_msnap_header *h;
	int rc;
	hd_msnap *m = open_str(noruby, 1, &rc, &err);

	T_EQ(rc, 0);
	h = hd_msnap_header_get(m);
	T_STREQ(h->ruby, "");
	T_EQ(h->has_gc_count, 0);
	T_EQ(h->has_malloc, 0);
	T_EQ(h->has_rss, 1);
	T_EQ(hd_msnap_next(m, &it, &err), 0);
	T_STREQ(it.site, "ruby:0");
	hd_msnap_close(m);
	m = open_str(blind, 1, &rc, &err);
	T_EQ(rc, 0);
	h = hd_msnap_header_get(m);
	T_EQ(h->tracking, 0);
	T_STREQ(h->allocator, "jemalloc");
	T_STREQ(h->why, "jemalloc was preloaded ahead of the tracker");
	T_EQ(h->live_bytes, 0);
	T_EQ(hd_msnap_next(m, &it, &err), HD_ITEROVER);
	hd_msnap_close(m);
}

/* ---- reports ---- */

struct fig {
	const char *site;
	unsigned long long allocs, frees, bytes, live;
};

static int add_snap(hd_mreport *r, int pid, double t, int tracking,
		    const struct fig *f, size_t n, hd_error *err)
{
	char buf[4096], name[32];
	size_t o, i;
	hd_msnap *m = NULL;
	int rc;

	o = (size_t)snprintf(buf, sizeof(buf),
			     "{\"type\":\"malloc_snapshot\",\"format\":1,"
			     "\"pid\":%d,\"time\":%.3f,\"tracking\":%s%s,"
			     "\"reason\":\"interval\"}\n",
			     pid, t, tracking ? "true" : "false",
			     tracking ? "" :
					",\"why\":\"jemalloc was preloaded "
					"ahead of it\"");
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o,
				      "{\"type\":\"site\",\"site\":\"%s\","
				      "\"kind\":\"ruby\",\"allocs\":%llu,"
				      "\"frees\":%llu,\"bytes_allocated\":%llu,"
				      "\"live_bytes\":%llu,\"live_blocks\":1}\n",
				      f[i].site, f[i].allocs, f[i].frees,
				      f[i].bytes, f[i].live);
	if ((rc = hd_msnap_open_mem(&m, buf, o, NULL, err)))
		return rc;
	snprintf(name, sizeof(name), "s%.0f", t);
	rc = hd_mreport_add(r, m, name, err);
	hd_msnap_close(m);
	return rc;
}

static void test_msnap__report_one(void)
{
	static const struct fig f[] = {
		{ "small.rb:1", 10, 0, 1000, 1000 },
		/* the article's leak: 100,000 x 1024 bytes, half freed */
		{ "leak.rb:5", 100000, 50000, 102400000, 51200000 },
	};
	hd_mreport *r = NULL;
	hd_error err = { 0 };
	const hd_mreport_site *s;
	int j;
	size_t site;

	T_EQ(hd_mreport_new(&r, NULL, &err), 0);
	T_EQ(add_snap(r, 7, 100, 1, f, 2, &err), 0);
	T_EQ(hd_mreport_finish(r, &err), 0);
	T_EQ(hd_mreport_site_count(r), 2);
	s = hd_mreport_site_get(r, 0);
	T_STREQ(s->site, "leak.rb:5");
	T_EQ(s->live_bytes, 51200000);
	T_EQ(s->estimate, 51200000); /* 1024 x 50,000 */
	T_STREQ(hd_mreport_verdict(r, &j, &site),
		"the most native memory is held at leak.rb:5: 51.2 MB live "
		"in 1 blocks (100% of the 51.2 MB tracked); one snapshot "
		"shows no growth");
	T_EQ(j, HD_MREPORT_ONE);
	T_EQ(site, 0);
	hd_mreport_free(r);
}

static void test_msnap__report_growth_and_slope(void)
{
	struct fig f[2] = { { "leak.rb:5", 0, 0, 0, 0 },
			    { "flat.rb:2", 10, 5, 100, 50 } };
	hd_mreport *r = NULL;
	hd_error err = { 0 };
	const hd_mreport_site *s;
	int j, k;

	T_EQ(hd_mreport_new(&r, NULL, &err), 0);
	/* 10 MB more at each of 3 snapshots 10 s apart, half the
	 * allocations freed */
	for (k = 0; k < 3; k++) {
		f[0].allocs = 20000ull * (unsigned)k;
		f[0].frees = 10000ull * (unsigned)k;
		f[0].bytes = 20000000ull * (unsigned)k;
		f[0].live = 10000000ull * (unsigned)k;
		T_EQ(add_snap(r, 7, 1000 + 10 * k, 1, f, 2, &err), 0);
	}
	T_EQ(hd_mreport_finish(r, &err), 0);
	s = hd_mreport_site_get(r, 0);
	T_STREQ(s->site, "leak.rb:5");
	T_EQ(s->growth, 20000000);
	T_EQ(s->growth_estimate, 20000000); /* 1000 B x (40,000 - 20,000) */
	T_ASSERT(s->slope > 999999.0 && s->slope < 1000001.0);
	T_EQ(s->grows_every_step, 1);
	T_EQ(hd_mreport_site_live(r, 0, 1), 10000000);
	s = hd_mreport_site_get(r, 1);
	T_EQ(s->growth, 0);
	T_ASSERT(s->slope == 0);
	T_EQ(s->grows_every_step, 0);
	T_STREQ(hd_mreport_verdict(r, &j, NULL),
		"native memory grows at leak.rb:5: +20.0 MB live from the "
		"first snapshot to the last (3 snapshots over 20.0 s, "
		"1.0 MB/s, at every snapshot); 100% of the 20.0 MB tracked "
		"growth");
	T_EQ(j, HD_MREPORT_GROWS);
	hd_mreport_free(r);
}

static void test_msnap__report_flat_and_inactive(void)
{
	struct fig f[1] = { { "a.rb:1", 10, 5, 100000, 50000 } };
	hd_mreport *r = NULL;
	hd_error err = { 0 };
	int j;

	T_EQ(hd_mreport_new(&r, NULL, &err), 0);
	T_EQ(add_snap(r, 7, 10, 1, f, 1, &err), 0);
	f[0].live = 900000; /* +850 KB: under the 1 MB default */
	T_EQ(add_snap(r, 7, 20, 1, f, 1, &err), 0);
	T_EQ(hd_mreport_finish(r, &err), 0);
	T_STREQ(hd_mreport_verdict(r, &j, NULL),
		"no native growth: the tracked live bytes went from 50.0 KB "
		"to 900.0 KB over 2 snapshots (no site grew by 1.0 MB or "
		"more)");
	T_EQ(j, HD_MREPORT_FLAT);
	hd_mreport_free(r);

	/* 30 sites growing 100 KB each: the whole grows by 3 MB */
	{
		struct fig many[30];
		char names[30][16];
		int i;

		T_EQ(hd_mreport_new(&r, NULL, &err), 0);
		for (i = 0; i < 30; i++) {
			snprintf(names[i], sizeof(names[i]), "s%02d.rb:1", i);
			many[i].site = names[i];
			many[i].allocs = 1;
			many[i].frees = 0;
			many[i].bytes = many[i].live = 1000;
		}
		T_EQ(add_snap(r, 7, 10, 1, many, 30, &err), 0);
		for (i = 0; i < 30; i++)
			many[i].live = many[i].bytes = 101000 + (unsigned)i;
		T_EQ(add_snap(r, 7, 20, 1, many, 30, &err), 0);
		T_EQ(hd_mreport_finish(r, &err), 0);
		T_STREQ(hd_mreport_verdict(r, &j, NULL),
			"native memory grows by 3.0 MB over 2 snapshots, "
			"spread over sites (none grew by 1.0 MB or more; the "
			"most at s29.rb:1: +100.0 KB)");
		T_EQ(j, HD_MREPORT_GROWS);
		hd_mreport_free(r);
	}

	/* a snapshot without tracking: never "no native growth" */
	T_EQ(hd_mreport_new(&r, NULL, &err), 0);
	T_EQ(add_snap(r, 7, 10, 1, f, 1, &err), 0);
	T_EQ(add_snap(r, 7, 20, 0, NULL, 0, &err), 0);
	T_EQ(hd_mreport_finish(r, &err), 0);
	T_STREQ(hd_mreport_verdict(r, &j, NULL),
		"the tracker was not active (snapshot 2 of 2, pid 7): "
		"jemalloc was preloaded ahead of it: it recorded no "
		"allocation");
	T_EQ(j, HD_MREPORT_INACTIVE);
	hd_mreport_free(r);
}

static void test_msnap__report_refuses(void)
{
	struct fig f[1] = { { "a.rb:1", 1, 0, 8, 8 } };
	hd_mreport *r = NULL;
	hd_error err = { 0 };

	T_EQ(hd_mreport_new(&r, NULL, &err), 0);
	T_EQ(hd_mreport_finish(r, &err), HD_EINVAL);
	hd_mreport_free(r);
	T_EQ(hd_mreport_new(&r, NULL, &err), 0);
	T_EQ(add_snap(r, 7, 20, 1, f, 1, &err), 0);
	T_EQ(add_snap(r, 8, 30, 1, f, 1, &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "pid 8 after one of pid 7") != NULL);
	T_EQ(add_snap(r, 7, 10, 1, f, 1, &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "order taken") != NULL);
	hd_mreport_free(r);
}

static const struct t_case cases[] = {
	T_CASE(msnap__header_and_lines),
	T_CASE(msnap__damaged_lines),
	T_CASE(msnap__formats_refused),
	T_CASE(msnap__escapes),
	T_CASE(msnap__every_prefix),
	T_CASE(msnap__tracker_headers),
	T_CASE(msnap__report_one),
	T_CASE(msnap__report_growth_and_slope),
	T_CASE(msnap__report_flat_and_inactive),
	T_CASE(msnap__report_refuses),
};

T_MAIN(cases)
