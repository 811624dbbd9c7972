/*
 * clusters.c - the shape of a retention path, for clustering leak
 * suspects held the same way (memlab's idea): three caches of one class
 * reached by the same sequence of classes from the same root category
 * are one problem, not three.
 *
 * A shape is a path in a trie: its first step is the root category and
 * the first object's name, each further step how the previous object
 * holds the next (the reference's name) and the next object's name.
 * Steps are interned exactly (their bytes, length-prefixed, in an
 * hd__intern table) and a step's id is looked up by (parent shape,
 * step) in an hd__map, so equal ids mean equal shapes. Every object on
 * the way gets its shape memoized, so targets deep in a long chain cost
 * one step each, not one path each.
 *
 * What a step is made of is said in one place, step_text() (with
 * ref_name(): the reference names, when the store has them, with an
 * Array element's index left out).
 */
#include "clusters.h"

#include <stdlib.h>

/* memo values: 0 not yet known, 1 no root reaches it, else shape + 2 */
#define MEMO_UNREACHED 1u
#define MEMO_BASE 2u

/* the parent of a first step (a root category's) */
#define ROOT_PARENT 0xffffffffu

struct shapes {
	const hd_store *s;
	const hd_reach *r;
	struct hd__intern steps;  /* step texts -> dense ids */
	struct hd__map trie;      /* parent << 32 | step -> shape */
	uint32_t nshapes;
	uint32_t *memo;           /* per node, see MEMO_* */
	char *buf;                /* a step's text */
	size_t cap;
	char *name;               /* a node's name */
	size_t name_cap;
	int has_names;            /* the store has reference names */
	struct hd__map indexed;   /* objects whose names are indexed */
	struct hd__map named;     /* from << 32 | to -> reference index */
};

/*
 * Indexes the named references of from once: (from, to) -> the first
 * named one's index, so that the steps out of a Hash of 100,000 entries
 * do not each search it (hd_store_ref_name is O(references of from)).
 */
static int index_refs(struct shapes *sh, hd_node_id from)
{
	hd_edge_iter it;
	hd_node_id t;
	uint32_t k = 0, v;
	int found;

	if (hd__map_put(&sh->indexed, from, 1, &v, &found))
		return HD_ENOMEM;
	if (found)
		return 0;
	hd_store_refs(sh->s, from, &it);
	for (; hd_edge_iter_next(&it, &t) == 0; k++)
		/* hd__map_put keeps the first: the first named reference */
		if (hd_store_ref_name_at(sh->s, from, k, NULL, NULL) &&
		    hd__map_put(&sh->named, (uint64_t)from << 32 | t, k, &v,
				&found))
			return HD_ENOMEM;
	return 0;
}

/* "[3]" */
static int is_index(const char *p, size_t n)
{
	size_t i;

	if (n < 3 || p[0] != '[' || p[n - 1] != ']')
		return 0;
	for (i = 1; i + 1 < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 1;
}

/* "[...]": a Hash's key, as the names grammar writes one */
static int is_key(const char *p, size_t n)
{
	return n >= 2 && p[0] == '[' && p[n - 1] == ']';
}

/*
 * The name of the reference by which from holds to (from ==
 * HD_NODE_NONE: root category cat holds it), or NULL: the one place
 * reference names enter a shape. An element's index in an Array and a
 * value's key in a Hash are left out ("[*]"), so that the elements of
 * one array, or the values of one hash (400 customers by id), share a
 * shape.
 * Through the index of index_refs() when sh has one (the shapes of
 * every suspect), else by a search (the text of a few shapes).
 */
static int ref_name(struct shapes *sh, uint32_t cat, hd_node_id from,
		    hd_node_id to, const char **out, size_t *len)
{
	const char *p = NULL;
	uint32_t k;

	*out = NULL;
	*len = 0;
	if (!sh->has_names)
		return 0;
	if (from == HD_NODE_NONE) {
		/* a root category's: a search, once per object it holds on
		 * the paths */
		p = hd_store_root_ref_name(sh->s, cat, to, len);
	} else if (sh->indexed.cap) {
		if (index_refs(sh, from))
			return HD_ENOMEM;
		if (hd__map_get(&sh->named, (uint64_t)from << 32 | to, &k))
			p = hd_store_ref_name_at(sh->s, from, k, len, NULL);
	} else {
		p = hd_store_ref_name(sh->s, from, to, len, NULL);
	}
	if (p && from != HD_NODE_NONE &&
	    ((hd_store_type(sh->s, from) == HD_T_ARRAY && is_index(p, *len)) ||
	     (hd_store_type(sh->s, from) == HD_T_HASH && is_key(p, *len)))) {
		p = "[*]";
		*len = 3;
	}
	*out = p;
	if (!p)
		*len = 0;
	return 0;
}

/* The name of v (hd_store_node_name) into sh->name; its length. */
static int node_name(struct shapes *sh, hd_node_id v, size_t *len)
{
	size_t n = hd_store_node_name(sh->name, sh->name_cap, sh->s, v);

	if (n >= sh->name_cap) {
		if (hd__grow((void **)&sh->name, &sh->name_cap, n + 1, 1))
			return HD_ENOMEM;
		n = hd_store_node_name(sh->name, sh->name_cap, sh->s, v);
	}
	*len = n;
	return 0;
}

static int put(struct shapes *sh, size_t *at, const void *p, size_t n)
{
	if (*at + n > sh->cap &&
	    hd__grow((void **)&sh->buf, &sh->cap, *at + n, 1))
		return HD_ENOMEM;
	if (n)
		memcpy(sh->buf + *at, p, n);
	*at += n;
	return 0;
}

static int put_field(struct shapes *sh, size_t *at, const char *p, size_t n)
{
	unsigned char l[4];

	hd__put_le32(l, (uint32_t)n);
	return put(sh, at, l, 4) || put(sh, at, p, n) ? HD_ENOMEM : 0;
}

/*
 * The text of the step to v from pred (or from root category cat when
 * pred is HD_NODE_NONE): [category,] reference name, v's name, each
 * length-prefixed so that no two steps read alike.
 */
static int step_text(struct shapes *sh, uint32_t cat, hd_node_id pred,
		     hd_node_id v, size_t *len)
{
	size_t at = 0, n;
	const char *p;

	if (pred == HD_NODE_NONE) {
		p = hd_store_root_name(sh->s, cat);
		if (put_field(sh, &at, p, strlen(p)))
			return HD_ENOMEM;
	}
	if (ref_name(sh, cat, pred, v, &p, &n) ||
	    put_field(sh, &at, p, n) || node_name(sh, v, &n) ||
	    put_field(sh, &at, sh->name, n))
		return HD_ENOMEM;
	*len = at;
	return 0;
}

/* The shape after parent's and one more step, pred -> v. */
static int step(struct shapes *sh, uint32_t parent, uint32_t cat,
		hd_node_id pred, hd_node_id v, uint32_t *out)
{
	uint32_t id, shape;
	size_t n;
	int found;

	if (step_text(sh, cat, pred, v, &n) ||
	    hd__intern_put(&sh->steps, sh->buf, n, &id) ||
	    hd__map_put(&sh->trie, (uint64_t)parent << 32 | id, sh->nshapes,
			&shape, &found))
		return HD_ENOMEM;
	if (!found)
		sh->nshapes++;
	*out = shape;
	return 0;
}

/*
 * The shape of t: up the tree to the first object whose shape is known
 * (or to the root), then down again, memoizing each.
 */
static int shape_of(struct shapes *sh, hd_node_id t, hd_nodes *stack,
		    uint32_t *out)
{
	uint32_t base = ROOT_PARENT, cat = 0, m;
	hd_node_id v = t, p;
	size_t i;

	stack->n = 0;
	while ((m = sh->memo[v]) == 0) {
		if (hd__nodes_push(stack, v))
			return HD_ENOMEM;
		p = hd_reach_pred(sh->r, v, &cat);
		if (p == HD_NODE_NONE) {
			if (!hd_reach_reached(sh->r, v))
				m = MEMO_UNREACHED;
			break;
		}
		v = p;
	}
	if (m == MEMO_UNREACHED) {
		for (i = 0; i < stack->n; i++)
			sh->memo[stack->ids[i]] = MEMO_UNREACHED;
		*out = HD__NONE;
		return 0;
	}
	if (m)
		base = m - MEMO_BASE;
	for (i = stack->n; i-- > 0;) {
		hd_node_id x = stack->ids[i];
		hd_node_id px = base == ROOT_PARENT ? HD_NODE_NONE :
						      hd_reach_pred(sh->r, x, NULL);

		if (step(sh, base, cat, px, x, &base))
			return HD_ENOMEM;
		if (base > 0xffffffffu - MEMO_BASE - 1)
			return HD_ENOMEM; /* 2^32 shapes: cannot be numbered */
		sh->memo[x] = base + MEMO_BASE;
	}
	*out = sh->memo[t] - MEMO_BASE;
	return 0;
}

int hd__path_shapes(uint32_t *out, const hd_store *s, const hd_reach *r,
		    const hd_node_id *targets, size_t n, hd_error *err)
{
	struct shapes sh;
	hd_nodes stack = { NULL, 0, 0 };
	uint32_t nodes = hd_store_node_count(s);
	size_t i;
	int rc = 0;

	memset(&sh, 0, sizeof(sh));
	sh.s = s;
	sh.r = r;
	sh.has_names = hd_store_has_ref_names(s);
	sh.memo = hd__calloc(nodes ? nodes : 1, sizeof(*sh.memo));
	if (!sh.memo || hd__intern_init(&sh.steps) ||
	    hd__map_init(&sh.trie, n * 4 + 16) ||
	    (sh.has_names && (hd__map_init(&sh.indexed, n + 16) ||
			      hd__map_init(&sh.named, n * 4 + 16)))) {
		rc = HD_ENOMEM;
		goto out;
	}
	for (i = 0; i < n && !rc; i++)
		rc = shape_of(&sh, targets[i], &stack, &out[i]);
out:
	hd_nodes_free(&stack);
	hd__free(sh.memo, (nodes ? nodes : 1) * sizeof(*sh.memo));
	hd__intern_free(&sh.steps);
	hd__map_free(&sh.trie);
	hd__map_free(&sh.indexed);
	hd__map_free(&sh.named);
	hd__free(sh.buf, sh.cap);
	hd__free(sh.name, sh.name_cap);
	return rc ? hd__error(err, rc, "out of memory") : 0;
}

char *hd__path_shape_text(const hd_store *s, const hd_root_path *path,
			  size_t *size)
{
	struct shapes sh;
	const char *root = hd_store_root_name(s, path->root), *p;
	size_t at = 0, k, n;
	char *text = NULL;

	memset(&sh, 0, sizeof(sh));
	sh.s = s;
	sh.has_names = hd_store_has_ref_names(s);
	if (put(&sh, &at, root, strlen(root)))
		goto out;
	for (k = 0; k < path->n; k++) {
		hd_node_id pred = k ? path->nodes[k - 1] : HD_NODE_NONE;

		if (ref_name(&sh, path->root, pred, path->nodes[k], &p, &n) ||
		    (n && (put(&sh, &at, " ", 1) || put(&sh, &at, p, n))) ||
		    put(&sh, &at, " -> ", 4) ||
		    node_name(&sh, path->nodes[k], &n) ||
		    put(&sh, &at, sh.name, n))
			goto out;
	}
	if (put(&sh, &at, "", 1))
		goto out;
	text = sh.buf;
	*size = sh.cap;
	sh.buf = NULL;
out:
	hd__free(sh.buf, sh.cap);
	hd__free(sh.name, sh.name_cap);
	return text;
}
