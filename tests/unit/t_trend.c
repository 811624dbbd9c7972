/*
 * t_trend.c - lib/trend.c (hd_trend_*) on small in-memory dumps, and the
 * length buckets of stats (hd_record_length, hd_length_bucket).
 */
#include "../t.h"
#include "heapdump.h"

#include <math.h>

/* A dump of n Foo objects, m Bar objects, newest generation gen. */
static char *make_dump(unsigned n, unsigned m, unsigned gen, size_t *len)
{
	size_t cap = 512 + 128 * (size_t)(n + m), k = 0;
	char *b = malloc(cap);
	unsigned i;

	k += (size_t)snprintf(b + k, cap - k,
			      "{\"type\":\"ROOT\", \"root\":\"vm\", "
			      "\"references\":[\"0x100\"]}\n"
			      "{\"address\":\"0x100\", \"type\":\"CLASS\", "
			      "\"name\":\"Foo\", \"memsize\":40}\n"
			      "{\"address\":\"0x108\", \"type\":\"CLASS\", "
			      "\"name\":\"Bar\", \"memsize\":40}\n");
	for (i = 0; i < n + m; i++)
		k += (size_t)snprintf(b + k, cap - k,
				      "{\"address\":\"0x%x\", \"type\":\"OBJECT\", "
				      "\"class\":\"%s\", \"generation\":%u, "
				      "\"memsize\":%u}\n",
				      0x1000 + 8 * i, i < n ? "0x100" : "0x108",
				      gen, i < n ? 40 : 80);
	*len = k;
	return b;
}

static int add_dump(hd_trend *t, unsigned n, unsigned m, unsigned gen)
{
	hd_read_options ro = HD_READ_OPTIONS_INIT;
	hd_reader *r = NULL;
	hd_stats *st = NULL;
	const hd_record *rec;
	size_t len;
	char *buf = make_dump(n, m, gen, &len);
	int rc;

	if ((rc = hd_trend_stats_new(&st, t, NULL)) ||
	    (rc = hd_reader_open_mem(&r, buf, len, &ro, NULL)))
		goto out;
	while ((rc = hd_reader_next(r, &rec, NULL)) == 0)
		if ((rc = hd_stats_add(st, rec, NULL)))
			goto out;
	if (rc == HD_ITEROVER)
		rc = 0;
	if (!rc && !(rc = hd_stats_finish(st, NULL)))
		rc = hd_trend_add(t, st, "mem", NULL, NULL);
out:
	hd_reader_free(r);
	hd_stats_free(st);
	free(buf);
	return rc;
}

static const hd_trend_row *row(const hd_trend *t, const char *cls)
{
	const hd_trend_row *r;
	size_t n, i;

	r = hd_trend_rows(t, &n);
	for (i = 0; i < n; i++)
		if (r[i].key_len[0] == strlen(cls) &&
		    memcmp(r[i].key[0], cls, strlen(cls)) == 0)
			return &r[i];
	return NULL;
}

static void test_trend__slopes_and_verdicts(void)
{
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	hd_trend *t = NULL;
	const hd_trend_row *foo, *bar, *first;
	size_t n;

	o.ndumps = 4;
	T_RC(hd_trend_new(&t, &o, NULL), 0);
	T_RC(add_dump(t, 1, 9, 1), 0);
	T_RC(add_dump(t, 3, 9, 2), 0);
	T_RC(add_dump(t, 5, 4, 3), 0);
	T_RC(add_dump(t, 7, 2, 4), 0);
	T_RC(hd_trend_finish(t, NULL), 0);
	foo = row(t, "Foo");
	bar = row(t, "Bar");
	T_ASSERT(foo && bar);
	T_EQ(foo->count[0], 1);
	T_EQ(foo->count[3], 7);
	T_EQ(foo->memsize[3], 280);
	T_ASSERT(fabs(foo->count_slope - 2.0) < 1e-9);
	T_ASSERT(fabs(foo->memsize_slope - 80.0) < 1e-9);
	T_EQ(foo->verdict, HD_TREND_EVERY_STEP);
	/* 9 9 4 2: slope -13 / 5 */
	T_ASSERT(fabs(bar->count_slope - (-2.6)) < 1e-9);
	T_EQ(bar->verdict, HD_TREND_SHRINKS);
	first = hd_trend_rows(t, &n);
	T_ASSERT(first == foo);
	T_EQ(hd_trend_ndumps(t), 4);
	T_EQ(hd_trend_dump_at(t, 3)->totals.objects, 11);
	T_STREQ(hd_trend_verdict_name(HD_TREND_OVERALL), "overall");
	T_ASSERT(hd_trend_verdict_name(7) == NULL);
	hd_trend_free(t);
}

static void test_trend__absent_group_counts_zero(void)
{
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	hd_trend *t = NULL;
	const hd_trend_row *bar;

	o.ndumps = 3;
	T_RC(hd_trend_new(&t, &o, NULL), 0);
	T_RC(add_dump(t, 2, 0, 1), 0);
	T_RC(add_dump(t, 2, 3, 2), 0);
	T_RC(add_dump(t, 2, 1, 3), 0);
	T_RC(hd_trend_finish(t, NULL), 0);
	bar = row(t, "Bar");
	T_ASSERT(bar != NULL);
	T_EQ(bar->count[0], 0);
	T_EQ(bar->count[1], 3);
	T_EQ(bar->verdict, HD_TREND_OVERALL);
	T_EQ(row(t, "Foo")->verdict, HD_TREND_FLAT);
	hd_trend_free(t);
}

static void test_trend__classes_and_empty_selection(void)
{
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	const char *only[] = { "Nope" };
	hd_trend *t = NULL;
	size_t n = 5;

	o.ndumps = 2;
	o.classes = only;
	o.nclasses = 1;
	T_RC(hd_trend_new(&t, &o, NULL), 0);
	T_RC(add_dump(t, 2, 1, 1), 0);
	T_RC(add_dump(t, 3, 1, 2), 0);
	T_RC(hd_trend_finish(t, NULL), 0);
	hd_trend_rows(t, &n);
	T_EQ(n, 0);
	hd_trend_free(t);
}

static void test_trend__invalid(void)
{
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	const char *only[] = { "Foo" };
	hd_trend *t = NULL;
	hd_error err = { 0 };

	o.ndumps = 1;
	T_RC(hd_trend_new(&t, &o, &err), HD_EINVAL);
	T_ASSERT(t == NULL);
	o.ndumps = 2;
	o.keys[0] = HD_KEY_TYPE;
	o.classes = only;
	o.nclasses = 1;
	T_RC(hd_trend_new(&t, &o, &err), HD_EINVAL);
	o.nclasses = 0;
	T_RC(hd_trend_new(&t, &o, &err), 0);
	T_RC(add_dump(t, 1, 1, 1), 0);
	/* finishing before every dump is added */
	T_RC(hd_trend_finish(t, &err), HD_EINVAL);
	hd_trend_free(t);
	hd_trend_free(NULL);
}

static void test_trend__order(void)
{
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	hd_order_pair p[2];
	hd_trend *t = NULL;

	o.ndumps = 3;
	T_RC(hd_trend_new(&t, &o, NULL), 0);
	T_RC(add_dump(t, 1, 1, 5), 0);
	T_RC(add_dump(t, 2, 1, 3), 0);
	T_RC(add_dump(t, 3, 1, 7), 0);
	hd_trend_order(p, t);
	T_ASSERT(p[0].flags & HD_ORDER_REVERSED);
	T_ASSERT(p[0].flags & HD_ORDER_GENERATION_BACKWARDS);
	T_EQ(p[0].generation[0], 5);
	T_EQ(p[0].generation[1], 3);
	T_EQ(p[1].flags, 0);
	hd_trend_free(t);
}

static void test_trend__length_buckets(void)
{
	char b[64];
	hd_record rec;
	uint64_t len = 99;

	hd_length_bucket(b, sizeof(b), 0, 0);
	T_STREQ(b, "-");
	hd_length_bucket(b, sizeof(b), 1, 0);
	T_STREQ(b, "0");
	hd_length_bucket(b, sizeof(b), 1, 1);
	T_STREQ(b, "1");
	hd_length_bucket(b, sizeof(b), 1, 3);
	T_STREQ(b, "2-3");
	hd_length_bucket(b, sizeof(b), 1, 4);
	T_STREQ(b, "4-7");
	hd_length_bucket(b, sizeof(b), 1, 1000);
	T_STREQ(b, "512-1023");
	hd_length_bucket(b, sizeof(b), 1, UINT64_MAX);
	T_STREQ(b, "9223372036854775808-18446744073709551615");
	memset(&rec, 0, sizeof(rec));
	rec.kind = HD_REC_OBJECT;
	rec.type = HD_T_STRING;
	T_EQ(hd_record_length(&len, &rec), 0); /* no bytesize */
	rec.has = HD_HAS_SIZE;
	rec.size = 0;
	T_EQ(hd_record_length(&len, &rec), 1);
	T_EQ(len, 0);
	rec.bits = HD_B_SHARED;
	T_EQ(hd_record_length(&len, &rec), 0);
	rec.bits = 0;
	rec.type = HD_T_OBJECT; /* ivars are no length */
	T_EQ(hd_record_length(&len, &rec), 0);
	rec.type = HD_T_STRUCT;
	T_EQ(hd_record_length(&len, &rec), 0);
	rec.size = 3;
	T_EQ(hd_record_length(&len, &rec), 1);
	T_EQ(len, 3);
}

static const struct t_case cases[] = {
	T_CASE(trend__slopes_and_verdicts),
	T_CASE(trend__absent_group_counts_zero),
	T_CASE(trend__classes_and_empty_selection),
	T_CASE(trend__invalid),
	T_CASE(trend__order),
	T_CASE(trend__length_buckets),
};

T_MAIN(cases)
