/*
 * domtree_children.c - the dominator tree's children of every node, as
 * a tree view lists them: each node's largest retained memsize first,
 * then ascending node id. Counted, placed (CSR, the virtual root last)
 * and each node's children sorted as (retained, id) pairs, so that the
 * comparison reads nothing but its arguments (no file-scope state: two
 * threads may build two of them). O(N log N) in the nodes.
 */
#include "hd_int.h"

#include <stdlib.h>
#include <string.h>

struct hd_domtree_children {
	uint32_t n;        /* nodes; the virtual root is n */
	uint32_t *off;     /* n + 2 */
	hd_node_id *kids;  /* off[n + 1] */
	uint64_t *ret;     /* retained memsize per node */
};

struct kid {
	uint64_t ret;
	hd_node_id id;
};

static int cmp_kid(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;

	if (x->ret != y->ret)
		return x->ret < y->ret ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The parent of i as a row: HD_DOM_ROOT is n; n + 1 when unreached. */
static uint32_t parent_row(const hd_domtree *d, uint32_t n, uint32_t i)
{
	hd_node_id p = hd_domtree_idom(d, i);

	if (p == HD_NODE_NONE)
		return n + 1;
	return p == HD_DOM_ROOT ? n : p;
}

/* Each row's children in place, sorted through pairs. */
static int sort_rows(hd_domtree_children *c)
{
	uint32_t r, k, len, most = 0;
	struct kid *tmp;

	for (r = 0; r <= c->n; r++)
		if ((len = c->off[r + 1] - c->off[r]) > most)
			most = len;
	if (most < 2)
		return 0;
	if (!(tmp = malloc((size_t)most * sizeof(*tmp))))
		return -1;
	for (r = 0; r <= c->n; r++) {
		hd_node_id *row = c->kids + c->off[r];

		if ((len = c->off[r + 1] - c->off[r]) < 2)
			continue;
		for (k = 0; k < len; k++) {
			tmp[k].id = row[k];
			tmp[k].ret = c->ret[row[k]];
		}
		qsort(tmp, len, sizeof(*tmp), cmp_kid);
		for (k = 0; k < len; k++)
			row[k] = tmp[k].id;
	}
	free(tmp);
	return 0;
}

int hd_domtree_children_build(hd_domtree_children **out,
			      const hd_domtree *d, const hd_store *s,
			      hd_error *err)
{
	hd_domtree_children *c;
	uint32_t n, i, p, *fill = NULL;

	if (out)
		*out = NULL;
	if (!out || !d || !s)
		return hd__error(err, HD_EINVAL, "domtree children: NULL");
	n = hd_store_node_count(s);
	if (n >= HD_DOM_ROOT - 1)
		return hd__error(err, HD_EINVAL, "domtree children: %u nodes",
				 n);
	if (!(c = calloc(1, sizeof(*c))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	c->n = n;
	c->off = calloc((size_t)n + 3, sizeof(*c->off));
	c->ret = calloc((size_t)n + 1, sizeof(*c->ret));
	fill = calloc((size_t)n + 2, sizeof(*fill));
	if (!c->off || !c->ret || !fill)
		goto oom;
	for (i = 0; i < n; i++) {
		hd_domtree_retained(d, i, &c->ret[i]);
		if ((p = parent_row(d, n, i)) <= n)
			c->off[p + 1]++;
	}
	for (i = 0; i <= n; i++)
		c->off[i + 1] += c->off[i];
	if (!(c->kids = malloc(((size_t)c->off[n + 1] + 1) *
			       sizeof(*c->kids))))
		goto oom;
	memcpy(fill, c->off, ((size_t)n + 1) * sizeof(*fill));
	for (i = 0; i < n; i++)
		if ((p = parent_row(d, n, i)) <= n)
			c->kids[fill[p]++] = i;
	free(fill);
	fill = NULL;
	if (sort_rows(c))
		goto oom;
	*out = c;
	return 0;
oom:
	free(fill);
	hd_domtree_children_free(c);
	return hd__error(err, HD_ENOMEM, "out of memory");
}

const hd_node_id *hd_domtree_children_of(const hd_domtree_children *c,
					 hd_node_id v, uint32_t *n)
{
	uint32_t r;

	if (n)
		*n = 0;
	if (!c)
		return NULL;
	if (v != HD_DOM_ROOT && v >= c->n)
		return NULL;
	r = v == HD_DOM_ROOT ? c->n : v;
	if (n)
		*n = c->off[r + 1] - c->off[r];
	return c->kids + c->off[r];
}

const uint64_t *hd_domtree_children_retained(const hd_domtree_children *c)
{
	return c ? c->ret : NULL;
}

void hd_domtree_children_free(hd_domtree_children *c)
{
	if (!c)
		return;
	free(c->off);
	free(c->kids);
	free(c->ret);
	free(c);
}
