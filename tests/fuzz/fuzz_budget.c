/*
 * fuzz_budget.c - libFuzzer target: the budget grammar (lib/budget.c).
 * The input is a budget file; it is parsed whole (hd_budget_add_text)
 * and line by line (hd_budget_add, which must agree on what it accepts),
 * checked against every source and evaluated against a trend of two
 * small dumps, every message read to its end.
 */
#include "heapdump.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char dump[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x100\"]}\n"
	"{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Foo\", "
	"\"memsize\":40}\n"
	"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\", "
	"\"memsize\":40}\n"
	"{\"address\":\"0x1008\", \"type\":\"STRING\", \"bytesize\":1, "
	"\"value\":\"a\", \"memsize\":40}\n";

static int add_dump(hd_trend *t, size_t len)
{
	hd_read_options ro = HD_READ_OPTIONS_INIT;
	hd_reader *r = NULL;
	hd_stats *st = NULL;
	const hd_record *rec;
	int rc;

	if ((rc = hd_trend_stats_new(&st, t, NULL)) ||
	    (rc = hd_reader_open_mem(&r, dump, len, &ro, NULL)))
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
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_budget *whole = NULL, *lines = NULL;
	hd_budget_report *rep = NULL;
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	hd_trend *t = NULL;
	hd_error err;
	const char *p = (const char *)data, *end = p + size;
	size_t i, sum = 0;
	int rc_whole;

	if (hd_budget_new(&whole, NULL) || hd_budget_new(&lines, NULL))
		goto out;
	rc_whole = hd_budget_add_text(whole, p, size, &err);
	if (rc_whole && rc_whole != HD_EINVAL)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		(void)hd_budget_add(lines, p, (size_t)(e - p), &err);
		p = nl ? nl + 1 : end;
	}
	for (i = 0; i < hd_budget_count(whole); i++)
		sum += strlen(hd_budget_text(whole, i));
	(void)hd_budget_check(whole, HD_BUDGET_LEAKS, &err);
	(void)hd_budget_check(whole, HD_BUDGET_DIFF, &err);
	o.ndumps = 2;
	if (hd_trend_new(&t, &o, NULL) || add_dump(t, sizeof(dump) - 1) ||
	    add_dump(t, 160) || hd_trend_finish(t, NULL))
		goto out;
	if (hd_budget_eval_trend(&rep, whole, t, &err) == 0) {
		if (hd_budget_report_count(rep) != hd_budget_count(whole) ||
		    hd_budget_report_exceeded(rep) > hd_budget_count(whole))
			abort();
		for (i = 0; i < hd_budget_report_count(rep); i++)
			sum += strlen(hd_budget_report_get(rep, i)->message);
	}
out:
	hd_budget_report_free(rep);
	hd_trend_free(t);
	hd_budget_free(whole);
	hd_budget_free(lines);
	return sum == (size_t)-1;
}
