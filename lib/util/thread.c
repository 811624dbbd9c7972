/*
 * thread.c - a second thread started on a CPU of its own.
 *
 * Linux may put a new thread on the CPU of the thread that creates it.
 * On this project's 2-CPU virtual machines every traced `stats -j2` had
 * both threads share one CPU for 2 to 5 ms before one was moved: a tenth
 * of a 0.1 GB scan, with the other CPU idle. So a thread is created
 * pinned to a CPU other than its creator's (the k-th after it, for the
 * k-th thread of a group, while the allowed CPUs last) and, once it runs
 * there, let run on every CPU the process may use, as any thread: the
 * scheduler still balances it against other work; it only starts apart.
 * Where the affinity calls are missing or refused, or one CPU is
 * allowed, the thread is created as before.
 */
#define _GNU_SOURCE /* sched_getcpu, pthread_attr_setaffinity_np (Linux) */
#include "util_int.h"
#include "thread.h"

#include <sched.h>

#if defined(__linux__) && defined(CPU_SET) && defined(CPU_COUNT) && \
	defined(__GLIBC__)
#define AFFINITY 1
#endif

#ifdef AFFINITY
typedef char hd__cpus_fit[sizeof(cpu_set_t) ==
				  sizeof(((struct hd__thread *)0)->cpus) ?
			  1 :
			  -1];
#endif

int hd__thread_bad_cpu;

/* fn(arg) after the thread is let go of its one CPU */
static void *started(void *arg)
{
	struct hd__thread *t = arg;

#ifdef AFFINITY
	cpu_set_t all;

	t->cpu = sched_getcpu();
	if (t->pinned) {
		memcpy(&all, t->cpus, sizeof(all));
		t->freed = pthread_setaffinity_np(pthread_self(), sizeof(all),
						  &all) == 0;
	}
#endif
	return t->fn(t->arg);
}

int hd__thread_start(struct hd__thread *t, unsigned k, void *(*fn)(void *),
		     void *arg)
{
#ifdef AFFINITY
	pthread_attr_t attr;
	cpu_set_t all, one;
	int here, cpu, left = (int)k, rc;
#endif

	t->fn = fn;
	t->arg = arg;
	t->creator = t->cpu = -1;
	t->pinned = t->freed = 0;
#ifdef AFFINITY
	if (k >= 1 && sched_getaffinity(0, sizeof(all), &all) == 0 &&
	    (unsigned)CPU_COUNT(&all) > k && (here = sched_getcpu()) >= 0 &&
	    here < CPU_SETSIZE && CPU_ISSET(here, &all) &&
	    pthread_attr_init(&attr) == 0) {
		for (cpu = here; left > 0;) {
			cpu = (cpu + 1) % CPU_SETSIZE;
			if (CPU_ISSET(cpu, &all))
				left--;
		}
		CPU_ZERO(&one);
		CPU_SET(hd__thread_bad_cpu ? CPU_SETSIZE - 1 : cpu, &one);
		memcpy(t->cpus, &all, sizeof(all));
		t->pinned = pthread_attr_setaffinity_np(&attr, sizeof(one),
							&one) == 0;
		t->creator = t->pinned ? here : -1;
		rc = pthread_create(&t->tid, t->pinned ? &attr : NULL,
				    started, t);
		pthread_attr_destroy(&attr);
		if (rc == 0 || !t->pinned)
			return rc;
		/* the CPU went away meanwhile (hotplug, a cpuset changed):
		 * wherever the kernel puts it, then */
		t->pinned = 0;
		t->creator = -1;
	}
#else
	(void)k;
#endif
	return pthread_create(&t->tid, NULL, started, t);
}
