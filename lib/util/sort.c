/*
 * sort.c - qsort with a context for the comparator, so that no sort
 * passes its state through a file-scope variable (heapdump.h: distinct
 * handles may be used from distinct threads). glibc's qsort_r, which
 * its qsort is: the same order as before, equal elements included.
 */
#define _GNU_SOURCE /* qsort_r */
#include "util_int.h"

#include <stdlib.h>

void hd__sort(void *base, size_t n, size_t size,
	      int (*cmp)(const void *, const void *, void *), void *ctx)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, ctx);
}
