/*
 * text_search.c - a case-insensitive substring search over many keys:
 * the keys lowercased (ASCII) into one buffer, each followed by a NUL,
 * and their offsets. A query is lowercased once and found by memmem(3)
 * from a key's offset on; the key holding a hit is found by a binary
 * search of the offsets, and a hit that crosses the end of its key (into
 * the NUL and the next key) is none: the search goes on from the next
 * key. Linear in the buffer per query, however long keys and query are.
 */
#define _GNU_SOURCE /* memmem */
#include "hd_int.h"

#include <stdlib.h>
#include <string.h>

struct hd_text_search {
	const char *lc; /* the keys lowercased, each followed by a NUL */
	const size_t *off; /* n + 1: where each starts, then the end */
	size_t n;
	/* what is ours to free (else borrowed: hd__text_search_borrow) */
	char *own_lc;
	size_t *own_off;
};

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int hd_text_search_build(hd_text_search **out, size_t n, hd_text_key_cb key,
			 void *payload, hd_error *err)
{
	hd_text_search *x;
	size_t i, j, len, total = 1, k = 0;
	const char *p;

	if (!out || (n && !key))
		return hd__error(err, HD_EINVAL, "text search: NULL");
	*out = NULL;
	for (i = 0; i < n; i++) {
		len = 0;
		key(payload, i, &len);
		total += len + 1;
	}
	if (!(x = calloc(1, sizeof(*x))) || !(x->own_lc = malloc(total)) ||
	    !(x->own_off = malloc((n + 1) * sizeof(*x->off)))) {
		hd_text_search_free(x);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		len = 0;
		p = key(payload, i, &len);
		x->own_off[i] = k;
		for (j = 0; j < len; j++)
			x->own_lc[k++] = lower(p[j]);
		x->own_lc[k++] = '\0';
	}
	x->own_off[n] = k;
	x->lc = x->own_lc;
	x->off = x->own_off;
	x->n = n;
	*out = x;
	return 0;
}

int hd__text_search_borrow(hd_text_search **out, const char *lc,
			   const unsigned char *off, size_t n)
{
	hd_text_search *x;
	size_t i;

	*out = NULL;
	if (!(x = calloc(1, sizeof(*x))))
		return HD_ENOMEM;
	x->lc = lc;
	x->n = n;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
	defined(__SIZEOF_SIZE_T__) && __SIZEOF_SIZE_T__ == 8
	/* the image is the array */
	x->off = (const size_t *)(const void *)off;
	(void)i;
#else
	if (!(x->own_off = malloc((n + 1) * sizeof(*x->own_off)))) {
		free(x);
		return HD_ENOMEM;
	}
	for (i = 0; i <= n; i++)
		x->own_off[i] = (size_t)hd__le64(off + 8 * i);
	x->off = x->own_off;
#endif
	*out = x;
	return 0;
}

size_t hd_text_search_count(const hd_text_search *x)
{
	return x ? x->n : 0;
}

/* The key holding byte at: the last that starts at or before it. */
static size_t key_at(const hd_text_search *x, size_t at)
{
	size_t lo = 0, hi = x->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->off[mid] <= at)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* As hd_text_search_next, with lq the query lowercased. */
static int next_lower(const hd_text_search *x, const char *lq, size_t ql,
		      size_t from, size_t *found)
{
	size_t pos, end = x->off[x->n], i, at;
	const char *hit;

	if (from >= x->n)
		return HD_ENOTFOUND;
	if (!ql) {
		*found = from;
		return 0;
	}
	pos = x->off[from];
	while (pos < end && (hit = memmem(x->lc + pos, end - pos, lq, ql))) {
		at = (size_t)(hit - x->lc);
		i = key_at(x, at);
		pos = x->off[i + 1];
		/* within the key, not across its NUL into the next */
		if (at + ql > pos - 1)
			continue;
		*found = i;
		return 0;
	}
	return HD_ENOTFOUND;
}

static char *lowered(const char *q, size_t ql)
{
	char *lq = malloc(ql + 1);
	size_t i;

	if (!lq)
		return NULL;
	for (i = 0; i < ql; i++)
		lq[i] = lower(q[i]);
	lq[ql] = '\0';
	return lq;
}

int hd_text_search_next(const hd_text_search *x, const char *q, size_t qlen,
			size_t from, size_t *found)
{
	char *lq;
	int rc;

	if (!x || (qlen && !q) || !found)
		return HD_ENOTFOUND;
	if (!(lq = lowered(q, qlen)))
		return HD_ENOMEM;
	rc = next_lower(x, lq, qlen, from, found);
	free(lq);
	return rc;
}

size_t hd_text_search_mark(const hd_text_search *x, const char *q,
			   size_t qlen, unsigned char *mark)
{
	size_t from = 0, i, m = 0;
	char *lq;

	if (!x || (qlen && !q))
		return 0;
	if (!(lq = lowered(q, qlen)))
		return (size_t)-1;
	while (next_lower(x, lq, qlen, from, &i) == 0) {
		mark[i] = 1;
		m++;
		from = i + 1;
	}
	free(lq);
	return m;
}

void hd_text_search_free(hd_text_search *x)
{
	if (!x)
		return;
	free(x->own_lc);
	free(x->own_off);
	free(x);
}
