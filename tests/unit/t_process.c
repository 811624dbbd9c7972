/*
 * t_process.c - lib/process.c (hd_process_judge): the process grown
 * outside its Ruby heap, the thresholds at their edges, and the sentence.
 */
#include "../t.h"
#include "heapdump.h"

#include <string.h>

#define MB 1000000u

static hd_process_sample sample(uint64_t rss, uint64_t mal, uint64_t heap)
{
	hd_process_sample s;

	memset(&s, 0, sizeof(s));
	s.has_rss = 1;
	s.has_malloc = 1;
	s.rss = rss;
	s.malloc_in_use = mal;
	s.heap_memsize = heap;
	return s;
}

/* the native leak of issue 34: +52 MB a phase, the heap flat */
static void test_process__native_growth_is_outside(void)
{
	hd_process_sample s[3];
	hd_process_verdict v;

	s[0] = sample(40 * MB, 10 * MB, 5 * MB);
	s[1] = sample(92 * MB, 62 * MB, 5 * MB + 50000);
	s[2] = sample(145 * MB, 115 * MB, 5 * MB + 100000);
	T_EQ(hd_process_judge(&v, s, 3, NULL, NULL), 0);
	T_EQ(v.known, 1);
	T_EQ(v.has_malloc, 1);
	T_EQ(v.outside_ruby, 1);
	T_EQ(v.rss_growth, 105 * MB);
	T_EQ(v.malloc_growth, 105 * MB);
	T_EQ(v.heap_growth, 100000);
	T_STREQ(v.text, "the process grew by 105.0 MB (malloc in use grew by "
			"105.0 MB), the Ruby heap grew by 100.0 KB: the growth "
			"is outside Ruby objects");
}

/* a Ruby leak: the heap grows with the process */
static void test_process__heap_growth_is_not_outside(void)
{
	hd_process_sample s[2];
	hd_process_verdict v;

	s[0] = sample(40 * MB, 10 * MB, 5 * MB);
	s[1] = sample(100 * MB, 20 * MB, 40 * MB);
	T_EQ(hd_process_judge(&v, s, 2, NULL, NULL), 0);
	T_EQ(v.known, 1);
	T_EQ(v.outside_ruby, 0);
	T_STREQ(v.text, "the process grew by 60.0 MB (malloc in use grew by "
			"10.0 MB), the Ruby heap grew by 35.0 MB");
}

/* the two thresholds, at their edges; the heap shrinking */
static void test_process__thresholds(void)
{
	hd_process_options o = HD_PROCESS_OPTIONS_INIT;
	hd_process_sample s[2];
	hd_process_verdict v;

	s[0] = sample(40 * MB, 0, 5 * MB);
	s[1] = sample(40 * MB + HD_PROCESS_MIN_GROWTH - 1, 0, 5 * MB);
	T_EQ(hd_process_judge(&v, s, 2, NULL, NULL), 0);
	T_EQ(v.outside_ruby, 0); /* noise */
	s[1].rss++;
	T_EQ(hd_process_judge(&v, s, 2, NULL, NULL), 0);
	T_EQ(v.outside_ruby, 1);
	/* the heap grew by a quarter of the RSS: still outside; more: not */
	s[1] = sample(40 * MB + 40 * MB, 0, 5 * MB + 10 * MB);
	T_EQ(hd_process_judge(&v, s, 2, NULL, NULL), 0);
	T_EQ(v.outside_ruby, 1);
	s[1].heap_memsize++;
	T_EQ(hd_process_judge(&v, s, 2, NULL, NULL), 0);
	T_EQ(v.outside_ruby, 0);
	o.max_heap_share = 0.5;
	T_EQ(hd_process_judge(&v, s, 2, &o, NULL), 0);
	T_EQ(v.outside_ruby, 1);
	/* the heap shrank, the process did not grow */
	s[1] = sample(30 * MB, 0, 4 * MB);
	T_EQ(hd_process_judge(&v, s, 2, NULL, NULL), 0);
	T_EQ(v.outside_ruby, 0);
	T_EQ(v.heap_growth, -(int64_t)MB);
	T_STREQ(v.text, "the process shrank by 10.0 MB (malloc in use did not "
			"change), the Ruby heap shrank by 1.0 MB");
}

/* a dump without a sidecar: nothing known, nothing said */
static void test_process__unknown_and_invalid(void)
{
	hd_process_options o = HD_PROCESS_OPTIONS_INIT;
	hd_process_sample s[3];
	hd_process_verdict v;
	hd_error err = { 0 };

	s[0] = sample(40 * MB, 0, 5 * MB);
	s[1] = sample(400 * MB, 0, 5 * MB);
	s[2] = sample(800 * MB, 0, 5 * MB);
	s[1].has_rss = 0;
	T_EQ(hd_process_judge(&v, s, 3, NULL, NULL), 0);
	T_EQ(v.known, 0);
	T_EQ(v.outside_ruby, 0);
	T_STREQ(v.text, "");
	/* malloc unknown in one: the sentence leaves it out */
	s[1].has_rss = 1;
	s[2].has_malloc = 0;
	T_EQ(hd_process_judge(&v, s, 3, NULL, NULL), 0);
	T_EQ(v.has_malloc, 0);
	T_EQ(v.outside_ruby, 1);
	T_STREQ(v.text, "the process grew by 760.0 MB, the Ruby heap did not "
			"change: the growth is outside Ruby objects");
	T_EQ(hd_process_judge(&v, s, 1, NULL, &err), HD_EINVAL);
	T_EQ(hd_process_judge(&v, NULL, 2, NULL, &err), HD_EINVAL);
	o.max_heap_share = 1.5;
	T_EQ(hd_process_judge(&v, s, 2, &o, &err), HD_EINVAL);
	o.max_heap_share = 0.25;
	o.version = 99;
	T_EQ(hd_process_judge(&v, s, 2, &o, &err), HD_EINVAL);
}

static const struct t_case cases[] = {
	T_CASE(process__native_growth_is_outside),
	T_CASE(process__heap_growth_is_not_outside),
	T_CASE(process__thresholds),
	T_CASE(process__unknown_and_invalid),
};

T_MAIN(cases)
