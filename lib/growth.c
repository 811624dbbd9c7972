/*
 * growth.c - the collections that grow at every step of N dumps
 * (memlab's unbound-collection analysis): each Hash and Array of the
 * last dump is followed back, dump by dump, to the object at its
 * address of the same type (and generation, when both dumps are
 * traced), and kept when it is in every dump and its length grows at
 * every step. Ranked by growth (last length less first), then by the
 * last length. O(N * C log V): C the collections of the last dump, one
 * address lookup per step.
 *
 * An object that compaction moved is not followed (its address
 * changed): it is not reported, never reported wrongly.
 */
#include "hd_int.h"

#include <stdlib.h>

struct item {
	hd_growing pub;
	size_t row;         /* its lengths: lengths + row * ndumps */
};

struct hd_growth {
	struct item *g;
	size_t n, cap;
	uint64_t *lengths;  /* n * ndumps */
	size_t lcap;
	size_t ndumps;
	uint64_t examined;  /* collections of the last dump followed */
};

static int is_collection(int type)
{
	return type == HD_T_HASH || type == HD_T_ARRAY;
}

/* The node of s at id's address in t, of its type and generation. */
static hd_node_id same_object(const hd_store *t, const hd_store *s,
			      hd_node_id id)
{
	hd_node_id p = hd_store_find(t, hd_store_address(s, id));
	uint64_t g, h;

	if (p == HD_NODE_NONE || hd_store_type(t, p) != hd_store_type(s, id))
		return HD_NODE_NONE;
	g = hd_store_generation(s, id);
	h = hd_store_generation(t, p);
	if (g != UINT64_MAX && h != UINT64_MAX && g != h)
		return HD_NODE_NONE;
	return p;
}

/* Its lengths, dump by dump, into len[]; 1 if it is in every dump and
 * grows at every step, else 0. */
static int grows(const hd_store *const *stores, size_t n, hd_node_id id,
		 uint64_t *len)
{
	hd_node_id v = id;
	size_t k;

	if (!hd_store_length(&len[n - 1], stores[n - 1], id))
		return 0;
	for (k = n - 1; k-- > 0;) {
		v = same_object(stores[k], stores[k + 1], v);
		if (v == HD_NODE_NONE || !hd_store_length(&len[k], stores[k], v) ||
		    len[k] >= len[k + 1])
			return 0;
	}
	return 1;
}

static int cmp_item(const void *a, const void *b)
{
	const hd_growing *x = &((const struct item *)a)->pub;
	const hd_growing *y = &((const struct item *)b)->pub;
	uint64_t gx = x->last - x->first, gy = y->last - y->first;

	if (gx != gy)
		return gx < gy ? 1 : -1;
	if (x->last != y->last)
		return x->last < y->last ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int add(hd_growth *r, hd_node_id id, int type, const uint64_t *len)
{
	size_t n = r->ndumps;
	struct item *it;

	if (hd__grow((void **)&r->g, &r->cap, r->n + 1, sizeof(*r->g)) ||
	    hd__grow((void **)&r->lengths, &r->lcap, (r->n + 1) * n,
		     sizeof(*r->lengths)))
		return HD_ENOMEM;
	memcpy(r->lengths + r->n * n, len, n * sizeof(*len));
	it = &r->g[r->n];
	memset(it, 0, sizeof(*it));
	it->row = r->n++;
	it->pub.id = id;
	it->pub.type = type;
	it->pub.first = len[0];
	it->pub.last = len[n - 1];
	return 0;
}

int hd_growth_build(hd_growth **out, const hd_store *const *stores,
		    size_t n, hd_error *err)
{
	hd_growth *r;
	hd_node_id id, N;
	uint64_t *len = NULL;
	size_t i;
	int type;

	HD_ASSERT_ARG(out && stores && n >= 2);
	for (i = 0; i < n; i++)
		HD_ASSERT_ARG(stores[i]);
	*out = NULL;
	if (!(r = hd__calloc(1, sizeof(*r))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	r->ndumps = n;
	if (!HD_ALLOC(len, n))
		goto nomem;
	N = hd_store_node_count(stores[n - 1]);
	for (id = 0; id < N; id++) {
		type = hd_store_type(stores[n - 1], id);
		if (!is_collection(type))
			continue;
		r->examined++;
		if (grows(stores, n, id, len) && add(r, id, type, len))
			goto nomem;
	}
	if (r->n)
		qsort(r->g, r->n, sizeof(*r->g), cmp_item);
	for (i = 0; i < r->n; i++)
		r->g[i].pub.lengths = r->lengths + r->g[i].row * n;
	HD_FREE(len, n);
	*out = r;
	return 0;
nomem:
	HD_FREE(len, n);
	hd_growth_free(r);
	return hd__error(err, HD_ENOMEM, "out of memory");
}

size_t hd_growth_dumps(const hd_growth *g)
{
	return g ? g->ndumps : 0;
}

size_t hd_growth_count(const hd_growth *g)
{
	return g ? g->n : 0;
}

uint64_t hd_growth_examined(const hd_growth *g)
{
	return g ? g->examined : 0;
}

const hd_growing *hd_growth_get(const hd_growth *g, size_t i)
{
	return g && i < g->n ? &g->g[i].pub : NULL;
}

const hd_growing *hd_growth_find(const hd_growth *g, hd_node_id id)
{
	size_t i;

	for (i = 0; g && i < g->n; i++)
		if (g->g[i].pub.id == id)
			return &g->g[i].pub;
	return NULL;
}

void hd_growth_free(hd_growth *g)
{
	if (!g)
		return;
	HD_FREE(g->g, g->cap);
	HD_FREE(g->lengths, g->lcap);
	hd__free(g, sizeof(*g));
}
