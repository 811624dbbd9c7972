/*
 * alloc.c - the one pluggable allocator behind every library allocation.
 */
#include "util_int.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__) && !defined(HD_NO_MMAP)
#include <sys/mman.h>
#endif

/*
 * The default allocator asks for transparent huge pages on the 2 MiB
 * pages inside every block of at least HUGE_MIN bytes (Linux, where THP
 * is "madvise", Debian's default): the store build's columns, sort
 * buffers and tables are hundreds of MB touched once each, and with
 * 4 KiB pages it paid a page fault every 4 KiB (a third of index's
 * time on a virtual machine, where a 4 KiB page fault costs 11 to 20
 * microseconds).
 * The advice changes no byte, only how the kernel backs the pages.
 */
#define HUGE_MIN ((size_t)8 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)
#define SMALL_PAGE ((uintptr_t)4 << 10)

#if defined(__linux__) && !defined(HD_NO_MMAP) && \
	(defined(MADV_HUGEPAGE) || defined(MADV_POPULATE_WRITE))
/* madvise(advice) on the pages of size page that lie wholly inside
 * [p, p + n); nothing when none does. A refused advice changes nothing. */
static void advise_inside(void *p, size_t n, uintptr_t page, int advice)
{
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t b = ((uintptr_t)p + n) & ~(page - 1);

	if (b > a)
		madvise((void *)a, b - a, advice);
}
#endif

static void *advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(HD_NO_MMAP)
	if (p && n >= HUGE_MIN)
		advise_inside(p, n, HUGE_PAGE, MADV_HUGEPAGE);
#else
	(void)n;
#endif
	return p;
}

static void *libc_malloc(void *ctx, size_t n)
{
	(void)ctx;
	return advise_huge(malloc(n), n);
}

static void *libc_realloc(void *ctx, void *p, size_t old_n, size_t n)
{
	(void)ctx;
	(void)old_n;
	return advise_huge(realloc(p, n), n);
}

static void libc_free(void *ctx, void *p, size_t old_n)
{
	(void)ctx;
	(void)old_n;
	free(p);
}

static const hd_allocator libc_allocator = { libc_malloc, libc_realloc,
					     libc_free, NULL };
static hd_allocator current = { libc_malloc, libc_realloc, libc_free, NULL };

void hd_set_allocator(const hd_allocator *alc)
{
	current = alc ? *alc : libc_allocator;
}

/*
 * A block about to be written in full (a calloc's, a range reader's
 * buffer) gets its pages in one call (MADV_POPULATE_WRITE, Linux 5.14)
 * rather than a page fault at the first touch of each: on the project's
 * virtual machines a fault costs about 12 us, a page populated in one
 * call about 1.2 (a 256 KiB buffer: 0.7 ms -> 0.08 ms). Only blocks of
 * the default allocator (another may hand out memory of any kind); a
 * kernel without the advice refuses it and the pages fault as before.
 */
#define POPULATE_MIN ((size_t)64 << 10)

void hd__prefault(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE) && !defined(HD_NO_MMAP)
	if (p && n >= POPULATE_MIN && current.malloc == libc_malloc)
		advise_inside(p, n, SMALL_PAGE, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}

void *hd__malloc(size_t n)
{
	return current.malloc(current.ctx, n ? n : 1);
}

void *hd__calloc(size_t n, size_t size)
{
	void *p = hd__array_alloc(n, size);

	if (p) {
		hd__prefault(p, n * size);
		memset(p, 0, n * size);
	}
	return p;
}

void *hd__realloc(void *p, size_t old_n, size_t n)
{
	if (!p)
		return hd__malloc(n);
	return current.realloc(current.ctx, p, old_n, n ? n : 1);
}

void hd__free(void *p, size_t old_n)
{
	if (p)
		current.free(current.ctx, p, old_n);
}

void *hd__array_alloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return hd__malloc(n * size);
}

/*
 * Grows an array to hold at least need items, doubling so that appends
 * are amortised O(1). Leaves *p untouched on failure.
 */
int hd__grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return HD_ENOMEM;
		ncap *= 2;
	}
	if (size && ncap > SIZE_MAX / size)
		return HD_ENOMEM;
	np = hd__realloc(*p, *cap * size, ncap * size);
	if (!np)
		return HD_ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

int hd__push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
	if (*n == *cap && hd__grow((void **)v, cap, *n + 1, sizeof(**v)))
		return HD_ENOMEM;
	(*v)[(*n)++] = x;
	return 0;
}

char *hd__strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = hd__malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}
