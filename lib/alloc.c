/*
 * alloc.c - the one pluggable allocator behind every library allocation.
 */
#include "hd_int.h"

#include <stdlib.h>

static void *libc_malloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

static void *libc_realloc(void *ctx, void *p, size_t old_n, size_t n)
{
	(void)ctx;
	(void)old_n;
	return realloc(p, n);
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

void *hd__malloc(size_t n)
{
	return current.malloc(current.ctx, n ? n : 1);
}

void *hd__calloc(size_t n, size_t size)
{
	void *p = hd__array_alloc(n, size);

	if (p)
		memset(p, 0, n * size);
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
