/*
 * thread.h - a second thread started on a CPU of its own (thread.c).
 *
 * What lib/ runs beside the calling thread (the parts of a parallel
 * scan, the second half of a store build's steps, a store's checks, the
 * summary of a store written in parallel) starts with hd__thread_start()
 * and ends with pthread_join(t->tid).
 */
#ifndef HD_THREAD_H
#define HD_THREAD_H

#include "util_int.h"

#include <pthread.h>

/* the words of a CPU set as glibc's cpu_set_t holds them (1024 CPUs) */
#define HD__CPU_WORDS (1024 / (8 * sizeof(unsigned long)))

struct hd__thread {
	pthread_t tid;
	void *(*fn)(void *);
	void *arg;
	/* the CPUs the process may use, to which a pinned thread returns */
	unsigned long cpus[HD__CPU_WORDS];
	/* what happened, for tests (read them after the join): the
	 * creator's CPU (-1: the kernel placed the thread), the CPU the
	 * thread first ran on (-1: unknown), whether it was started on
	 * that CPU alone, and whether it was then let run on all of them */
	int creator, cpu, pinned, freed;
};

/*
 * Starts fn(arg) on a new thread, the k-th (k >= 1) a caller starts at
 * once: on the k-th CPU after the calling thread's among those the
 * process may use, while there are that many, and once it runs there on
 * any of them; else wherever the kernel puts it. Returns
 * pthread_create()'s result (0: started; then pthread_join(t->tid)).
 */
HD_HIDDEN int hd__thread_start(struct hd__thread *t, unsigned k,
			       void *(*fn)(void *), void *arg);

/* Tests: pin to a CPU that is not there (the last of a cpu_set_t), as
 * if the one chosen went away before the thread started. */
HD_HIDDEN extern int hd__thread_bad_cpu;

#endif
