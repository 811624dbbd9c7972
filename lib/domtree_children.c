/*
 * domtree_children.c - the dominator tree's children of every node, as
 * a tree view lists them: each node's largest retained memsize first,
 * then ascending node id. Counted, placed (CSR, the virtual root last)
 * and each node's children sorted as (retained, id) pairs, so that the
 * comparison reads nothing but its arguments (no file-scope state: two
 * threads may build two of them). O(N log N) in the nodes.
 */
#include "hd_int.h"
#include "store_format.h"

#include <stdlib.h>
#include <string.h>

struct hd_domtree_children {
	uint32_t n;        /* nodes; the virtual root is n */
	const uint32_t *off;     /* n + 2 */
	const hd_node_id *kids;  /* off[n + 1] */
	const uint64_t *ret;     /* retained memsize per node */
	/* what is ours to free (built or decoded; else borrowed from the
	 * store's mapping: hd_domtree_children_open on a little-endian
	 * host) */
	uint32_t *own_off;
	hd_node_id *own_kids;
	uint64_t *own_ret;
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
		hd_node_id *row = c->own_kids + c->off[r];

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
	c->off = c->own_off = calloc((size_t)n + 3, sizeof(*c->off));
	c->ret = c->own_ret = calloc((size_t)n + 1, sizeof(*c->ret));
	fill = calloc((size_t)n + 2, sizeof(*fill));
	if (!c->off || !c->ret || !fill)
		goto oom;
	for (i = 0; i < n; i++) {
		hd_domtree_retained(d, i, &c->own_ret[i]);
		if ((p = parent_row(d, n, i)) <= n)
			c->own_off[p + 1]++;
	}
	for (i = 0; i <= n; i++)
		c->own_off[i + 1] += c->own_off[i];
	if (!(c->kids = c->own_kids = malloc(((size_t)c->off[n + 1] + 1) *
					     sizeof(*c->kids))))
		goto oom;
	memcpy(fill, c->off, ((size_t)n + 1) * sizeof(*fill));
	for (i = 0; i < n; i++)
		if ((p = parent_row(d, n, i)) <= n)
			c->own_kids[fill[p]++] = i;
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
	free(c->own_off);
	free(c->own_kids);
	free(c->own_ret);
	free(c);
}

/* ---- kept in the store (man 5 heapdump-store, DOMINATOR TREE) ---- */

/* Are the stored children those of d: offsets from 0, ascending, to
 * the listed total; every child a node listed once, in the row of its
 * immediate dominator; each row in the tree view's order; every node
 * d reached listed? O(N), no sort. */
static int children_match(const hd_domtree_children *c,
			  const hd_domtree *d, uint64_t nkids)
{
	uint32_t n = c->n, r, k, id, prev = 0;
	uint64_t listed = 0, reached = 0, ret, pret = 0;
	unsigned char *seen;
	int ok = 1;

	if (c->off[0] != 0 || c->off[n + 1] != nkids)
		return 0;
	for (r = 0; r <= n; r++)
		if (c->off[r + 1] < c->off[r])
			return 0;
	if (!(seen = hd__bitmap_new(n)))
		return -1;
	for (r = 0; r <= n && ok; r++)
		for (k = c->off[r]; k < c->off[r + 1] && ok; k++) {
			id = c->kids[k];
			if (id >= n || hd__bit(seen, id) ||
			    parent_row(d, n, id) != r) {
				ok = 0;
				break;
			}
			hd__bit_set(seen, id);
			ret = c->ret[id];
			if (k > c->off[r] &&
			    (ret > pret || (ret == pret && id < prev)))
				ok = 0;
			pret = ret;
			prev = id;
			listed++;
		}
	for (id = 0; id < n && ok; id++)
		reached += parent_row(d, n, id) <= n;
	hd__bitmap_free(seen, n);
	return ok && listed == reached;
}

int hd_domtree_children_open(hd_domtree_children **out, const hd_domtree *d,
			     const hd_store *s, hd_error *err)
{
	hd_domtree_children *c;
	const unsigned char *off, *kids, *mem;
	uint64_t off_len, kids_len, mem_len, i;
	uint32_t n;
	int rc;

	if (out)
		*out = NULL;
	if (!out || !d || !s)
		return hd__error(err, HD_EINVAL, "domtree children: NULL");
	n = hd_store_node_count(s);
	off = hd__store_section(s, HD__SEC_DOM_KIDS_OFF, &off_len);
	kids = hd__store_section(s, HD__SEC_DOM_KIDS, &kids_len);
	mem = hd__store_section(s, HD__SEC_DOM_MEM, &mem_len);
	if (!off || !kids || !mem)
		return hd__error(err, HD_ENOTFOUND,
				 "the store keeps no children orders");
	if (off_len != ((uint64_t)n + 2) * 4 || mem_len != (uint64_t)n * 8 ||
	    kids_len % 4)
		return hd__error(err, HD_EFORMAT, "store dominator children "
				 "section is the wrong size");
	if (!(c = calloc(1, sizeof(*c))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	c->n = n;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the images are the arrays: borrowed from the mapping */
	c->off = (const uint32_t *)(const void *)off;
	c->kids = (const hd_node_id *)(const void *)kids;
	c->ret = (const uint64_t *)(const void *)mem;
	(void)i;
#else
	c->own_off = malloc(((size_t)n + 2) * sizeof(*c->own_off));
	c->own_kids = malloc((size_t)kids_len + 4);
	c->own_ret = malloc(((size_t)n + 1) * sizeof(*c->own_ret));
	if (!c->own_off || !c->own_kids || !c->own_ret) {
		hd_domtree_children_free(c);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	for (i = 0; i < (uint64_t)n + 2; i++)
		c->own_off[i] = hd__le32(off + 4 * i);
	for (i = 0; i < kids_len / 4; i++)
		c->own_kids[i] = hd__le32(kids + 4 * i);
	for (i = 0; i < n; i++)
		c->own_ret[i] = hd__le64(mem + 8 * i);
	c->off = c->own_off;
	c->kids = c->own_kids;
	c->ret = c->own_ret;
#endif
	if ((rc = children_match(c, d, kids_len / 4)) != 1) {
		hd_domtree_children_free(c);
		return rc < 0 ? hd__error(err, HD_ENOMEM, "out of memory") :
				hd__error(err, HD_EFORMAT,
					  "store dominator children section "
					  "does not match its dominator tree");
	}
	*out = c;
	return 0;
}

int hd__domtree_children_images(const hd_domtree_children *c,
				unsigned char **off, size_t *off_len,
				unsigned char **kids, size_t *kids_len)
{
	uint32_t n = c->n, i;

	*off_len = ((size_t)n + 2) * 4;
	*kids_len = (size_t)c->off[n + 1] * 4;
	*off = hd__malloc(*off_len);
	*kids = hd__malloc(*kids_len ? *kids_len : 1);
	if (!*off || !*kids) {
		hd__free(*off, *off_len);
		hd__free(*kids, *kids_len ? *kids_len : 1);
		*off = *kids = NULL;
		return HD_ENOMEM;
	}
	for (i = 0; i < n + 2; i++)
		hd__put_le32(*off + (size_t)i * 4, c->off[i]);
	for (i = 0; i < c->off[n + 1]; i++)
		hd__put_le32(*kids + (size_t)i * 4, c->kids[i]);
	return 0;
}

/* ---- keeping the tree and its orders in a built store ---- */

/* The children orders of d kept beside it (hd_domtree_children_open
 * reads them back): what serve would otherwise sort at each start. */
static int set_children(hd_store *s, const hd_domtree *d, hd_error *err)
{
	static const int sid[2] = { HD__SEC_DOM_KIDS_OFF, HD__SEC_DOM_KIDS };
	hd_domtree_children c;
	unsigned char *sec[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 }, alloc[2] = { 0, 0 };
	uint32_t n = hd_store_node_count(s), i, p, *fill = NULL;
	uint64_t mem_len;
	int rc = HD_ENOMEM;

	/* what hd_domtree_children_build and hd__domtree_children_images
	 * make, built in the sections themselves: no second copy of the
	 * orders, the retained memsizes those the tree just kept */
	if (n >= HD_DOM_ROOT - 1)
		return hd__error(err, HD_EINVAL, "domtree children: %u nodes",
				 n);
	memset(&c, 0, sizeof(c));
	c.n = n;
	len[0] = alloc[0] = ((size_t)n + 2) * 4;
	if (!(c.own_off = hd__calloc((size_t)n + 2, sizeof(*c.own_off))))
		goto out;
	c.off = c.own_off;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	c.ret = (const uint64_t *)(const void *)hd__store_section(
		s, HD__SEC_DOM_MEM, &mem_len);
	if (!c.ret || mem_len != (uint64_t)n * 8) {
		rc = HD_EINVAL;
		goto out;
	}
#else
	(void)mem_len;
	if (!(c.own_ret = hd__array_alloc((size_t)n + 1, sizeof(*c.own_ret))))
		goto out;
	for (i = 0; i < n; i++)
		hd_domtree_retained(d, i, &c.own_ret[i]);
	c.ret = c.own_ret;
#endif
	for (i = 0; i < n; i++)
		if ((p = parent_row(d, n, i)) <= n)
			c.own_off[p + 1]++;
	for (i = 0; i <= n; i++)
		c.own_off[i + 1] += c.own_off[i];
	len[1] = (size_t)c.off[n + 1] * 4;
	alloc[1] = len[1] ? len[1] : 1;
	if (!(c.own_kids = hd__malloc(alloc[1])) ||
	    !(fill = hd__array_alloc((size_t)n + 1, sizeof(*fill))))
		goto out;
	c.kids = c.own_kids;
	memcpy(fill, c.off, ((size_t)n + 1) * sizeof(*fill));
	for (i = 0; i < n; i++)
		if ((p = parent_row(d, n, i)) <= n)
			c.own_kids[fill[p]++] = i;
	hd__free(fill, ((size_t)n + 1) * sizeof(*fill));
	fill = NULL;
	if (sort_rows(&c))
		goto out;
	/* the arrays become their little-endian images in place */
	for (i = 0; i < n + 2; i++)
		hd__put_le32((unsigned char *)&c.own_off[i], c.own_off[i]);
	for (i = 0; i < len[1] / 4; i++)
		hd__put_le32((unsigned char *)&c.own_kids[i], c.own_kids[i]);
	sec[0] = (unsigned char *)c.own_off;
	sec[1] = (unsigned char *)c.own_kids;
	c.own_off = NULL;
	c.own_kids = NULL;
	if ((rc = hd__store_attach(s, sid, (void *const *)sec, len, 2, err))) {
		hd__free(sec[0], alloc[0]);
		hd__free(sec[1], alloc[1]);
	}
	return rc; /* said by hd__store_attach */
out:
	hd__free(fill, ((size_t)n + 1) * sizeof(*fill));
	hd__free(c.own_off, alloc[0]);
	hd__free(c.own_kids, alloc[1]);
#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
	hd__free(c.own_ret, ((size_t)n + 1) * sizeof(*c.own_ret));
#endif
	if (rc == HD_ENOMEM)
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (rc == HD_EINVAL)
		return hd__error(err, HD_EINVAL, "domtree children: the "
				 "tree's retained memsizes are not kept");
	return rc;
}

int hd_store_set_domtree(hd_store *s, const hd_domtree *d, hd_error *err)
{
	int rc = hd__store_set_domtree_core(s, d, err);

	hd__timing("dominators");
	rc = rc ? rc : set_children(s, d, err);
	hd__timing("children");
	return rc;
}
