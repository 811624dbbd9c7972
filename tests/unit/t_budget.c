/*
 * t_budget.c - lib/budget.c (hd_budget_*): the grammar (every metric,
 * comparison and unit, blanks, keys with brackets and '#', budget files
 * with comments, errors with their column and line), where a budget
 * applies, and evaluation against a trend made of small in-memory dumps.
 * Evaluation against leaks and diff runs on real dumps in
 * tests/cli/budgets.sh.
 */
#include "../t.h"
#include "heapdump.h"

#include <math.h>

static int add(hd_budget *b, const char *s, hd_error *err)
{
	return hd_budget_add(b, s, strlen(s), err);
}

static void test_budget__grammar(void)
{
	hd_budget *b = NULL;
	hd_error err = { 0 };

	T_RC(hd_budget_new(&b, NULL), 0);
	T_RC(add(b, "leak.bytes>1MB", NULL), 0);
	T_RC(add(b, "  leak.objects >= 1000 ", NULL), 0);
	T_RC(add(b, "suspect.share>50%", NULL), 0);
	T_RC(add(b, "suspect.bytes < 2 KiB", NULL), 0);
	T_RC(add(b, "growth.class[String].bytes>100KB", NULL), 0);
	T_RC(add(b, "growth.class[#<Class:Foo[1]>].objects!=0", NULL), 0);
	T_RC(add(b, "growth.site[app/cache.rb:12].objects > 0", NULL), 0);
	T_RC(add(b, "leak.verdict=leak", NULL), 0);
	T_RC(add(b, "trend.verdict == growing", NULL), 0);
	T_RC(add(b, "leak.bytes>1.5mb", NULL), 0);
	T_EQ(hd_budget_count(b), 10);
	T_STREQ(hd_budget_text(b, 1), "leak.objects>=1000");
	T_STREQ(hd_budget_text(b, 5),
		"growth.class[#<Class:Foo[1]>].objects!=0");
	T_ASSERT(hd_budget_text(b, 10) == NULL);
	/* errors name what is wrong and where */
	T_RC(add(b, "leak.byte>1MB", &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "no metric") && err.column == 1);
	T_RC(add(b, "leak.bytes 1MB", &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "no comparison") && err.column == 12);
	T_RC(add(b, "leak.bytes>1 parsec", &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "byte unit"));
	T_RC(add(b, "leak.objects>10KB", &err), HD_EINVAL);
	T_RC(add(b, "suspect.share>50", &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "percent"));
	T_RC(add(b, "suspect.share>150%", &err), HD_EINVAL);
	T_RC(add(b, "leak.verdict>leak", &err), HD_EINVAL);
	T_RC(add(b, "leak.verdict=growing", &err), HD_EINVAL);
	T_RC(add(b, "trend.verdict=leak", &err), HD_EINVAL);
	T_RC(add(b, "growth.class[].bytes>1", &err), HD_EINVAL);
	T_RC(add(b, "growth.class[String].objects>1 2", &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "after the value"));
	T_RC(add(b, "leak.bytes>", &err), HD_EINVAL);
	T_RC(add(b, "", &err), HD_EINVAL);
	T_RC(add(b, "leak.bytes>99999999999999999999999", &err), HD_EINVAL);
	T_RC(hd_budget_add(b, "leak.bytes>1\n", 13, &err), HD_EINVAL);
	T_EQ(hd_budget_count(b), 10); /* nothing added by a failure */
	hd_budget_free(b);
}

static void test_budget__file(void)
{
	static const char text[] =
		"# the gate of the nightly job\n"
		"\n"
		"leak.bytes > 1MB   # a megabyte\n"
		"  growth.class[#<Class:Foo>].objects>0\r\n"
		"trend.verdict=growing";
	hd_budget *b = NULL;
	hd_error err = { 0 };

	T_RC(hd_budget_new(&b, NULL), 0);
	T_RC(hd_budget_add_text(b, text, sizeof(text) - 1, NULL), 0);
	T_EQ(hd_budget_count(b), 3);
	T_STREQ(hd_budget_text(b, 0), "leak.bytes>1MB");
	T_STREQ(hd_budget_text(b, 1), "growth.class[#<Class:Foo>].objects>0");
	T_RC(hd_budget_add_text(b, "leak.bytes>1\nleak.bites>2\n", 26, &err),
	     HD_EINVAL);
	T_EQ(err.line, 2);
	T_ASSERT(strncmp(err.msg, "line 2: ", 8) == 0);
	hd_budget_free(b);
}

static void test_budget__applies(void)
{
	hd_budget *b = NULL;
	hd_error err = { 0 };

	T_RC(hd_budget_new(&b, NULL), 0);
	T_RC(add(b, "growth.class[String].bytes>1", NULL), 0);
	T_RC(hd_budget_check(b, HD_BUDGET_LEAKS, NULL), 0);
	T_RC(hd_budget_check(b, HD_BUDGET_DIFF, NULL), 0);
	T_RC(hd_budget_check(b, HD_BUDGET_TREND, NULL), 0);
	T_RC(add(b, "trend.verdict=flat", NULL), 0);
	T_RC(hd_budget_check(b, HD_BUDGET_LEAKS, &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "trend.verdict=flat") &&
		 strstr(err.msg, "for leaks"));
	T_RC(hd_budget_check(b, HD_BUDGET_TREND, NULL), 0);
	T_RC(add(b, "suspect.share>1%", NULL), 0);
	T_RC(hd_budget_check(b, HD_BUDGET_TREND, &err), HD_EINVAL);
	T_RC(hd_budget_check(b, HD_BUDGET_DIFF, &err), HD_EINVAL);
	hd_budget_free(b);
}

/* A dump of n Foo objects of 40 bytes and m Bar objects of 80. */
static char *make_dump(unsigned n, unsigned m, size_t *len)
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
				      "\"class\":\"%s\", \"memsize\":%u}\n",
				      0x1000 + 8 * i, i < n ? "0x100" : "0x108",
				      i < n ? 40 : 80);
	*len = k;
	return b;
}

static int add_dump(hd_trend *t, unsigned n, unsigned m)
{
	hd_read_options ro = HD_READ_OPTIONS_INIT;
	hd_reader *r = NULL;
	hd_stats *st = NULL;
	const hd_record *rec;
	size_t len;
	char *buf = make_dump(n, m, &len);
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

static void test_budget__trend(void)
{
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	hd_trend *t = NULL;
	hd_budget *b = NULL;
	hd_budget_report *r = NULL;
	const hd_budget_result *x;

	o.ndumps = 3;
	T_RC(hd_trend_new(&t, &o, NULL), 0);
	T_RC(add_dump(t, 10, 5), 0);
	T_RC(add_dump(t, 20, 5), 0);
	T_RC(add_dump(t, 30, 4), 0);
	T_RC(hd_trend_finish(t, NULL), 0);
	T_RC(hd_budget_new(&b, NULL), 0);
	T_RC(add(b, "trend.verdict=growing", NULL), 0);
	T_RC(add(b, "growth.class[Foo].objects>19", NULL), 0);
	T_RC(add(b, "growth.class[Foo].bytes>800B", NULL), 0);
	T_RC(add(b, "growth.class[Bar].bytes<0", NULL), 0);
	T_RC(add(b, "growth.class[Baz].objects>0", NULL), 0);
	T_RC(add(b, "trend.verdict!=every-step", NULL), 0);
	T_RC(hd_budget_eval_trend(&r, b, t, NULL), 0);
	T_EQ(hd_budget_report_count(r), 6);
	T_EQ(hd_budget_report_exceeded(r), 3);
	x = hd_budget_report_get(r, 0);
	T_ASSERT(x->exceeded && x->value == HD_TREND_EVERY_STEP);
	T_ASSERT(strstr(x->message, "budget trend.verdict=growing exceeded") &&
		 strstr(x->message, "Foo (every-step): 10 -> 20 -> 30"));
	x = hd_budget_report_get(r, 1);
	T_ASSERT(x->exceeded && x->value == 20 && x->over == 1);
	T_ASSERT(strstr(x->message, "measured 20, 1 over the limit 19"));
	x = hd_budget_report_get(r, 2);
	T_ASSERT(!x->exceeded && x->value == 800);
	T_ASSERT(strstr(x->message, "kept: measured 800 B"));
	x = hd_budget_report_get(r, 3);
	T_ASSERT(x->exceeded && x->value == -80 && x->over == 80);
	T_ASSERT(!hd_budget_report_get(r, 4)->exceeded);
	T_ASSERT(!hd_budget_report_get(r, 5)->exceeded);
	T_ASSERT(hd_budget_report_get(r, 6) == NULL);
	hd_budget_report_free(r);
	/* a leak budget does not apply to a trend */
	T_RC(add(b, "leak.bytes>0", NULL), 0);
	T_RC(hd_budget_eval_trend(&r, b, t, NULL), HD_EINVAL);
	T_ASSERT(r == NULL);
	hd_budget_free(b);
	hd_trend_free(t);
}

static void test_budget__trend_without_class(void)
{
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	hd_trend *t = NULL;
	hd_budget *b = NULL;
	hd_budget_report *r = NULL;
	hd_error err = { 0 };

	o.ndumps = 2;
	o.keys[0] = HD_KEY_TYPE;
	T_RC(hd_trend_new(&t, &o, NULL), 0);
	T_RC(add_dump(t, 1, 1), 0);
	T_RC(add_dump(t, 2, 1), 0);
	T_RC(hd_trend_finish(t, NULL), 0);
	T_RC(hd_budget_new(&b, NULL), 0);
	T_RC(add(b, "growth.class[Foo].objects>0", NULL), 0);
	T_RC(hd_budget_eval_trend(&r, b, t, &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "not grouped by class"));
	hd_budget_free(b);
	hd_trend_free(t);
}

static const struct t_case cases[] = {
	T_CASE(budget__grammar),
	T_CASE(budget__file),
	T_CASE(budget__applies),
	T_CASE(budget__trend),
	T_CASE(budget__trend_without_class),
};

T_MAIN(cases)
