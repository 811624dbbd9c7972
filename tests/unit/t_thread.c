/*
 * t_thread.c - hd__thread_start (thread.c): a thread starts on a CPU
 * other than its creator's, the k-th after it for the k-th of a group,
 * and is then let run on every CPU the process may use; with too few
 * CPUs it starts wherever the kernel puts it. Every thread runs its
 * function once, and one whose CPU went away starts anyway. Needs two
 * CPUs.
 */
#define _GNU_SOURCE /* sched_getaffinity, sched_getcpu, CPU_COUNT */
#include "t.h"
#include "hd_int.h"
#include "util/thread.h"

#include <sched.h>

struct seen {
	int runs;
	int cpu;          /* where the function ran first */
	cpu_set_t mask;   /* the thread's CPUs as it ran */
	int mask_ok;
};

static void *note(void *arg)
{
	struct seen *s = arg;

	s->runs++;
	s->cpu = sched_getcpu();
	s->mask_ok = sched_getaffinity(0, sizeof(s->mask), &s->mask) == 0;
	return NULL;
}

/* The CPUs this thread may use in *all; 0 when fewer than two. */
static int two_cpus(cpu_set_t *all)
{
	if (sched_getaffinity(0, sizeof(*all), all) != 0)
		return 0;
	return CPU_COUNT(all) >= 2;
}

static void test_thread__starts_apart_then_free(void)
{
	cpu_set_t all;
	struct hd__thread th;
	struct seen s;
	int round;

	if (!two_cpus(&all)) {
		T_FAIL("needs 2 CPUs allowed (run it without a taskset of "
		       "one CPU, or on a machine with 2 cores)");
		return;
	}
	for (round = 0; round < 20; round++) {
		memset(&s, 0, sizeof(s));
		T_EQ(hd__thread_start(&th, 1, note, &s), 0);
		T_EQ(pthread_join(th.tid, NULL), 0);
		T_EQ(s.runs, 1);
		T_EQ(th.pinned, 1);
		T_EQ(th.freed, 1);
		T_ASSERT(th.creator >= 0 && CPU_ISSET(th.creator, &all));
		/* it first ran apart from its creator, on an allowed CPU */
		T_ASSERT(th.cpu >= 0 && th.cpu != th.creator);
		T_ASSERT(CPU_ISSET(th.cpu, &all));
		/* and by the time its function ran it could go anywhere */
		T_ASSERT(s.mask_ok);
		T_ASSERT(CPU_EQUAL(&s.mask, &all));
	}
}

/* The k-th of a group goes k CPUs round from the creator's: a group of
 * as many threads as CPUs, but the creator's, covers all the others. */
static void test_thread__group_covers_the_other_cpus(void)
{
	cpu_set_t all, used;
	struct hd__thread th[8];
	struct seen s[8];
	unsigned k, n;

	if (!two_cpus(&all)) {
		T_FAIL("needs 2 CPUs allowed");
		return;
	}
	n = (unsigned)CPU_COUNT(&all);
	if (n > 8)
		n = 8;
	memset(s, 0, sizeof(s));
	CPU_ZERO(&used);
	for (k = 1; k < n; k++)
		T_EQ(hd__thread_start(&th[k], k, note, &s[k]), 0);
	for (k = 1; k < n; k++) {
		T_EQ(pthread_join(th[k].tid, NULL), 0);
		T_EQ(s[k].runs, 1);
		T_EQ(th[k].pinned, 1);
		T_ASSERT(th[k].cpu != th[k].creator);
		T_ASSERT(!CPU_ISSET(th[k].cpu, &used)); /* no two alike */
		CPU_SET(th[k].cpu, &used);
	}
	/* as many as the CPUs: the last has no CPU of its own */
	memset(&s[0], 0, sizeof(s[0]));
	T_EQ(hd__thread_start(&th[0], (unsigned)CPU_COUNT(&all), note, &s[0]),
	     0);
	T_EQ(pthread_join(th[0].tid, NULL), 0);
	T_EQ(s[0].runs, 1);
	T_EQ(th[0].pinned, 0);
	T_EQ(th[0].creator, -1);
}

/* One CPU allowed: nothing pinned, the function runs, and the caller's
 * CPUs are the caller's again afterwards. */
static void test_thread__one_cpu_pins_nothing(void)
{
	cpu_set_t all, one, now;
	struct hd__thread th;
	struct seen s;
	int cpu;

	if (!two_cpus(&all)) {
		T_FAIL("needs 2 CPUs allowed");
		return;
	}
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &all); cpu++)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	T_ASSERT(sched_setaffinity(0, sizeof(one), &one) == 0);
	memset(&s, 0, sizeof(s));
	T_EQ(hd__thread_start(&th, 1, note, &s), 0);
	T_EQ(pthread_join(th.tid, NULL), 0);
	T_ASSERT(sched_setaffinity(0, sizeof(all), &all) == 0);
	T_EQ(s.runs, 1);
	T_EQ(th.pinned, 0);
	T_EQ(th.freed, 0);
	T_EQ(th.creator, -1);
	T_EQ(s.cpu, cpu);
	T_ASSERT(sched_getaffinity(0, sizeof(now), &now) == 0);
	T_ASSERT(CPU_EQUAL(&now, &all));
}

/* The CPU chosen is gone when the thread starts: it starts anyway,
 * where the kernel puts it. */
static void test_thread__gone_cpu_starts_anywhere(void)
{
	cpu_set_t all;
	struct hd__thread th;
	struct seen s;

	if (!two_cpus(&all)) {
		T_FAIL("needs 2 CPUs allowed");
		return;
	}
	memset(&s, 0, sizeof(s));
	hd__thread_bad_cpu = 1;
	T_EQ(hd__thread_start(&th, 1, note, &s), 0);
	hd__thread_bad_cpu = 0;
	T_EQ(pthread_join(th.tid, NULL), 0);
	T_EQ(s.runs, 1);
	T_EQ(th.pinned, 0);
	T_EQ(th.freed, 0);
	T_EQ(th.creator, -1);
	T_ASSERT(s.mask_ok);
	T_ASSERT(CPU_EQUAL(&s.mask, &all));
}

static const struct t_case cases[] = {
	T_CASE(thread__starts_apart_then_free),
	T_CASE(thread__group_covers_the_other_cpus),
	T_CASE(thread__one_cpu_pins_nothing),
	T_CASE(thread__gone_cpu_starts_anywhere),
};

T_MAIN(cases)
