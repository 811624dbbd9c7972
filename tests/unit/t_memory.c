/*
 * t_memory.c - lib/memory.c: the RSS split adds up to the RSS whatever
 * the figures say (too much, too little, an older sidecar's few), the
 * verdict's thresholds at their edges, and /proc of this process.
 */
#include "../t.h"
#include "heapdump.h"

#include <string.h>

#define MB 1000000u

static uint64_t sum(const hd_memory_split *sp)
{
	uint64_t s = 0;
	int b;

	for (b = 0; b < HD_MEM_NBUCKETS; b++)
		s += sp->bytes[b];
	return s;
}

static hd_memory_sample full(uint64_t rss, uint64_t anon)
{
	hd_memory_sample m;

	memset(&m, 0, sizeof(m));
	m.has = HD_MEM_HAS_RSS | HD_MEM_HAS_SPLIT | HD_MEM_HAS_MALLOC |
		HD_MEM_HAS_MALLOC_FREE | HD_MEM_HAS_SLOTS | HD_MEM_HAS_STACKS |
		HD_MEM_HAS_MEMSIZE;
	m.rss = rss;
	m.anon = anon;
	m.heap_bytes = 4 * MB;
	m.live_slot_bytes = 3 * MB;
	m.stacks = MB / 10;
	m.objects_memsize = 10 * MB; /* 7 MB beyond the live slots */
	m.malloc_in_use = 20 * MB;
	m.malloc_free = 5 * MB;
	return m;
}

static void test_memory__split_adds_up(void)
{
	hd_memory_sample m = full(100 * MB, 80 * MB);
	hd_memory_split sp;

	hd_memory_split_get(&sp, &m);
	T_EQ(sp.known, 1);
	T_EQ(sum(&sp), 100 * MB);
	T_EQ(sp.bytes[HD_MEM_SLOTS_LIVE], 3 * MB);
	T_EQ(sp.bytes[HD_MEM_SLOTS_FREE], 1 * MB);
	T_EQ(sp.bytes[HD_MEM_OBJECT_MALLOC], 7 * MB);
	T_EQ(sp.bytes[HD_MEM_OTHER_MALLOC], 13 * MB);
	T_EQ(sp.bytes[HD_MEM_MALLOC_FREE], 5 * MB);
	T_EQ(sp.bytes[HD_MEM_FILE], 20 * MB);
	T_EQ(sp.bytes[HD_MEM_OTHER_ANON], 80 * MB - 3 * MB - 1 * MB - MB / 10 -
						  7 * MB - 13 * MB - 5 * MB);
	T_EQ(sp.overcount, 0);
	T_EQ(!!(sp.measured & (1u << HD_MEM_JIT)), 0);
	T_EQ(!!(sp.measured & (1u << HD_MEM_UNEXPLAINED)), 0);
}

/* figures beyond the resident anonymous memory: cut, and said */
static void test_memory__overcount(void)
{
	hd_memory_sample m = full(30 * MB, 20 * MB);
	hd_memory_split sp;

	hd_memory_split_get(&sp, &m);
	T_EQ(sum(&sp), 30 * MB);
	T_EQ(sp.bytes[HD_MEM_FILE], 10 * MB);
	T_EQ(sp.bytes[HD_MEM_OTHER_ANON], 0);
	T_EQ(sp.bytes[HD_MEM_MALLOC_FREE], 0);
	/* 3 + 1 + 0.1 + 7 + 13 + 5 asked of 20 */
	T_EQ(sp.overcount, 29 * MB + MB / 10 - 20 * MB);
	/* object memsize beyond malloc in use is capped at it */
	m = full(100 * MB, 80 * MB);
	m.objects_memsize = 50 * MB;
	hd_memory_split_get(&sp, &m);
	T_EQ(sp.bytes[HD_MEM_OBJECT_MALLOC], 20 * MB);
	T_EQ(sp.bytes[HD_MEM_OTHER_MALLOC], 0);
	T_EQ(sum(&sp), 100 * MB);
}

/* an older sidecar: RSS and malloc in use; the rest unexplained */
static void test_memory__old_sidecar(void)
{
	hd_memory_sample m;
	hd_memory_split sp;

	memset(&m, 0, sizeof(m));
	hd_memory_split_get(&sp, &m);
	T_EQ(sp.known, 0);
	m.has = HD_MEM_HAS_RSS | HD_MEM_HAS_MALLOC | HD_MEM_HAS_MEMSIZE;
	m.rss = 50 * MB;
	m.malloc_in_use = 12 * MB;
	m.objects_memsize = 4 * MB;
	hd_memory_split_get(&sp, &m);
	T_EQ(sp.known, 1);
	T_EQ(sum(&sp), 50 * MB);
	T_EQ(sp.bytes[HD_MEM_OBJECT_MALLOC], 4 * MB);
	T_EQ(sp.bytes[HD_MEM_OTHER_MALLOC], 8 * MB);
	T_EQ(sp.bytes[HD_MEM_UNEXPLAINED], 38 * MB);
	T_EQ(!!(sp.measured & (1u << HD_MEM_FILE)), 0);
	/* anon above rss (a torn read): no split, all unexplained */
	m.has |= HD_MEM_HAS_SPLIT;
	m.anon = 60 * MB;
	hd_memory_split_get(&sp, &m);
	T_EQ(sum(&sp), 50 * MB);
	T_EQ(sp.bytes[HD_MEM_UNEXPLAINED], 38 * MB);
}

static void test_memory__verdict(void)
{
	hd_memory_options o = HD_MEMORY_OPTIONS_INIT;
	hd_memory_sample a = full(100 * MB, 80 * MB), z = a;
	hd_memory_split sp[2];
	hd_memory_verdict v;
	hd_error err;

	/* fragmentation: malloc held free +40 MB of the RSS's +41 */
	z.rss += 41 * MB;
	z.anon += 41 * MB;
	z.malloc_free += 40 * MB;
	hd_memory_split_get(&sp[0], &a);
	hd_memory_split_get(&sp[1], &z);
	T_EQ(hd_memory_judge(&v, sp, 2, NULL, &err), 0);
	T_EQ(v.known, 1);
	T_EQ(v.group, HD_MEMG_MALLOC_FREE);
	T_EQ(v.group_growth, 40 * MB);
	T_EQ(v.rss_growth, 41 * MB);
	T_STREQ(hd_memory_group_key(v.group), "malloc_free");
	T_ASSERT(strncmp(v.text, "malloc held free grew by 40.0 MB of the "
			 "RSS's 41.0 MB: fragmentation", 66) == 0);
	/* under min_growth: no group */
	o.min_growth = 41 * MB;
	T_EQ(hd_memory_judge(&v, sp, 2, &o, &err), 0);
	T_EQ(v.group, HD_MEMG_NONE);
	T_STREQ(v.text, "the RSS grew by 41.0 MB; no one part of it grew by "
			"most of that");
	/* two halves: neither is most of it at min_share 0.6 */
	z = a;
	z.rss += 40 * MB;
	z.anon += 40 * MB;
	z.malloc_free += 20 * MB;
	z.malloc_in_use += 20 * MB;
	hd_memory_split_get(&sp[1], &z);
	o = (hd_memory_options)HD_MEMORY_OPTIONS_INIT;
	o.min_share = 0.6;
	T_EQ(hd_memory_judge(&v, sp, 2, &o, &err), 0);
	T_EQ(v.group, HD_MEMG_NONE);
	/* Ruby objects: slots and object malloc together */
	z = a;
	z.rss += 30 * MB;
	z.anon += 30 * MB;
	z.live_slot_bytes += 2 * MB;
	z.heap_bytes += 2 * MB;
	z.objects_memsize += 27 * MB;
	z.malloc_in_use += 25 * MB;
	hd_memory_split_get(&sp[1], &z);
	T_EQ(hd_memory_judge(&v, sp, 2, NULL, &err), 0);
	T_EQ(v.group, HD_MEMG_RUBY);
	T_EQ(v.group_growth, 27 * MB);
	/* shrinking */
	T_EQ(hd_memory_judge(&v, (hd_memory_split[]){ sp[1], sp[0] }, 2, NULL,
			     &err), 0);
	T_EQ(v.group, HD_MEMG_NONE);
	T_STREQ(v.text, "the RSS shrank by 30.0 MB");
	/* errors, and an unknown split */
	T_EQ(hd_memory_judge(&v, sp, 1, NULL, &err), HD_EINVAL);
	T_EQ(hd_memory_judge(&v, NULL, 2, NULL, &err), HD_EINVAL);
	o.min_share = 2;
	T_EQ(hd_memory_judge(&v, sp, 2, &o, &err), HD_EINVAL);
	o = (hd_memory_options)HD_MEMORY_OPTIONS_INIT;
	o.version = 9;
	T_EQ(hd_memory_judge(&v, sp, 2, &o, &err), HD_EINVAL);
	memset(&sp[0], 0, sizeof(sp[0]));
	T_EQ(hd_memory_judge(&v, sp, 2, NULL, &err), 0);
	T_EQ(v.known, 0);
	T_STREQ(v.text, "");
}

/* this process: the RSS split exactly, at least the main stack */
static void test_memory__probe_self(void)
{
	hd_memory_proc p;
	hd_error err;

	T_EQ(hd_memory_probe(&p, 0, &err), 0);
	T_ASSERT(p.rss > 0);
	T_ASSERT(p.anon <= p.rss);
	T_EQ(p.anon + p.file, p.rss);
	T_ASSERT(p.has_stacks);
	T_ASSERT(p.stack_count >= 1);
	T_ASSERT(p.stacks > 0);
	T_ASSERT(strcmp(p.source, "smaps_rollup") == 0 ||
		 strcmp(p.source, "status") == 0);
	T_EQ(hd_memory_probe(&p, 999999999, &err), HD_EIO);
}

static const struct t_case cases[] = {
	T_CASE(memory__split_adds_up),
	T_CASE(memory__overcount),
	T_CASE(memory__old_sidecar),
	T_CASE(memory__verdict),
	T_CASE(memory__probe_self),
};

T_MAIN(cases)
