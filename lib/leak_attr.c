/*
 * leak_attr.c - every leaked object attributed to exactly one owner, so
 * that the suspects of a leak report add up to the whole leak.
 *
 * The objects walked (W) are the leaked ones and, with a LATER dump,
 * the young ones: objects of LATER born after AFTER. A young object is
 * neither leaked (it weighs nothing) nor a holder (it is walked through
 * to the nearest object that persists across the dumps), so a cache
 * rebuilt after AFTER, or the newest links of a chain still growing, do
 * not take the blame from the old object that keeps them.
 *
 * The border is the objects of W that an old object (not in W) or a
 * root holds directly. Border objects are grouped by key: their one old
 * holder; the set of their old holders when there are several (held by
 * all of them together: HD_SUSPECT_SHARED); themselves when only root
 * categories hold them (and no walked object does). A border object
 * belongs to its group whatever walked objects also hold it: the old
 * object that holds it directly is the accumulation point, a young
 * cache rebuilt from it is not. Then the dominator tree of W, without
 * the references into border objects, under a virtual root whose
 * successors are the groups, each group a vertex whose successors are
 * its border objects: what a group's vertex dominates is the group's,
 * whatever its border objects share among themselves (two retry
 * entries sharing one payload, a widget held by two Method objects of
 * one bus). What no one group dominates (the virtual root's
 * other children) is held jointly by the groups that reach it: their
 * sets are found by propagating interned sets of group numbers (capped
 * at HD__ATTR_LIST, then counted as "more") over the strongly connected
 * components in topological order, O((V + E) * HD__ATTR_LIST), and the
 * tops with one set make one HD_SUSPECT_JOINT owner (MAT's retained set
 * of a group of objects).
 *
 * The VM's own tables (hidden DATA of a "VM/..." struct that only roots
 * hold: Ruby 4.0's interned-string table is reallocated as leaked keys
 * are interned; a class's call-cache table, which its class holds, is
 * the class's like any object) hold nothing here and are never a holder; leaked ones are counted
 * apart as VM growth. Leaked objects no group reaches are counted as
 * unreached. So: sum of owners + unreached + VM = the leak.
 */
#include "leak_attr.h"
#include "graph.h"

#include <stdlib.h>

/* ---- interned sets of u32 (ascending), with a "more" mark ---- */

#define SET_MORE 0x80000000u /* in a set's length word: capped */

struct sets {
	uint32_t *pool;      /* per set: length word, then its items */
	size_t npool, cpool;
	uint32_t *at;        /* set id -> its place in pool */
	size_t n, cat;
	uint32_t *slot;      /* id + 1, 0 empty */
	size_t nslot;
	struct hd__hkey key;
	uint32_t *buf;       /* a union being built */
	size_t cbuf;
	uint64_t *memo;      /* (a, b) -> a union, direct mapped */
};

#define MEMO_SLOTS 4096

static uint32_t set_len(const struct sets *t, uint32_t id)
{
	return t->pool[t->at[id]] & ~SET_MORE;
}

static const uint32_t *set_items(const struct sets *t, uint32_t id)
{
	return t->pool + t->at[id] + 1;
}

static uint64_t set_hash(const struct sets *t, const uint32_t *w, size_t n)
{
	return hd__hash_keyed(&t->key, w, n * sizeof(*w));
}

static int sets_rehash(struct sets *t)
{
	size_t cap = t->nslot ? t->nslot * 2 : 64, i, j;
	uint32_t *slot = hd__calloc(cap, sizeof(*slot));

	if (!slot)
		return HD_ENOMEM;
	for (i = 0; i < t->n; i++) {
		const uint32_t *w = t->pool + t->at[i];

		j = (size_t)set_hash(t, w, 1 + (w[0] & ~SET_MORE)) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = (uint32_t)i + 1;
	}
	HD_FREE(t->slot, t->nslot);
	t->slot = slot;
	t->nslot = cap;
	return 0;
}

/* The id of the set w[0] (length word), w[1..]: found or added. */
static int set_put(struct sets *t, const uint32_t *w, uint32_t *id)
{
	size_t len = 1 + (w[0] & ~SET_MORE), j;
	uint32_t k;

	if ((t->n + 1) * 2 > t->nslot && sets_rehash(t))
		return HD_ENOMEM;
	j = (size_t)set_hash(t, w, len) & (t->nslot - 1);
	for (; (k = t->slot[j]) != 0; j = (j + 1) & (t->nslot - 1)) {
		const uint32_t *o = t->pool + t->at[k - 1];

		if (o[0] == w[0] && !memcmp(o, w, len * sizeof(*w))) {
			*id = k - 1;
			return 0;
		}
	}
	if (hd__grow((void **)&t->pool, &t->cpool, t->npool + len,
		     sizeof(*t->pool)) ||
	    hd__grow((void **)&t->at, &t->cat, t->n + 1, sizeof(*t->at)))
		return HD_ENOMEM;
	memcpy(t->pool + t->npool, w, len * sizeof(*w));
	t->at[t->n] = (uint32_t)t->npool;
	t->npool += len;
	t->slot[j] = (uint32_t)t->n + 1;
	*id = (uint32_t)t->n++;
	return 0;
}

static int sets_init(struct sets *t)
{
	uint32_t empty = 0, id;

	memset(t, 0, sizeof(*t));
	hd__hash_key_new(&t->key);
	if (!HD_ALLOC(t->buf, HD__ATTR_LIST + 1))
		return HD_ENOMEM;
	t->cbuf = HD__ATTR_LIST + 1;
	if (!(t->memo = hd__calloc(MEMO_SLOTS, sizeof(*t->memo))))
		return HD_ENOMEM;
	return set_put(t, &empty, &id); /* id 0: the empty set */
}

static void sets_free(struct sets *t)
{
	HD_FREE(t->pool, t->cpool);
	HD_FREE(t->at, t->cat);
	HD_FREE(t->slot, t->nslot);
	HD_FREE(t->buf, t->cbuf);
	HD_FREE(t->memo, t->memo ? MEMO_SLOTS : 0);
}

/* The set of one item. */
static int set_one(struct sets *t, uint32_t x, uint32_t *id)
{
	uint32_t w[2] = { 1, x };

	return set_put(t, w, id);
}

/* a | b, capped at HD__ATTR_LIST items (then marked SET_MORE). */
static int set_union(struct sets *t, uint32_t a, uint32_t b, uint32_t *id)
{
	const uint32_t *x, *y;
	uint32_t nx, ny, i = 0, j = 0, k = 0, more;
	uint64_t m, h;
	int rc;

	if (a == b || b == 0) {
		*id = a;
		return 0;
	}
	if (a == 0) {
		*id = b;
		return 0;
	}
	if (a > b) {
		uint32_t c = a;

		a = b;
		b = c;
	}
	h = hd__mix64((uint64_t)a << 32 | b) & (MEMO_SLOTS - 1);
	m = t->memo[h];
	/* a memo entry: a (20 bits), b (20 bits), union (24 bits) */
	if (a < (1u << 20) && b < (1u << 20) && m &&
	    (m >> 44) == a && ((m >> 24) & 0xfffff) == b) {
		*id = (uint32_t)(m & 0xffffff) - 1;
		return 0;
	}
	more = (t->pool[t->at[a]] | t->pool[t->at[b]]) & SET_MORE;
	nx = set_len(t, a);
	ny = set_len(t, b);
	x = set_items(t, a);
	y = set_items(t, b);
	while ((i < nx || j < ny) && k < HD__ATTR_LIST) {
		uint32_t v;

		if (j >= ny || (i < nx && x[i] < y[j]))
			v = x[i++];
		else if (i >= nx || y[j] < x[i])
			v = y[j++];
		else
			v = (j++, x[i++]);
		t->buf[1 + k++] = v;
	}
	if (i < nx || j < ny)
		more = SET_MORE;
	t->buf[0] = k | more;
	if ((rc = set_put(t, t->buf, id)))
		return rc;
	if (a < (1u << 20) && b < (1u << 20) && *id + 1 < (1u << 24))
		t->memo[h] = (uint64_t)a << 44 | (uint64_t)b << 24 |
			     (*id + 1);
	return 0;
}

/* ---- the work ---- */

struct work {
	const hd_store *s;
	struct hd__attr *a;
	unsigned char *cut;  /* store nodes whose references hold nothing */
	unsigned char *vm;   /* store nodes that are the VM's own tables */
	uint32_t n, m;       /* store nodes; walked objects */
	uint32_t *loc;       /* n: node -> local id, or HD__NONE */
	hd_node_id *node;    /* m: local id -> node */
	uint32_t *roots;     /* m: root categories holding it */
	uint32_t G;          /* groups */
	uint64_t *key;       /* G: each group's key */
	uint32_t *gfirst;    /* G + 1: its border objects in gborder */
	uint32_t *gborder;
	size_t nborder;      /* border objects, young ones included */
	unsigned char *keyed; /* WeakKeyMap values whose key the dump lists,
				 or NULL (hd__ephemeron_keyed) */
	unsigned char *claimed; /* m: border objects, which their group
				   owns whatever else holds them */
	uint32_t *gown;      /* G: each group's owner, or HD__NONE */
	int young;           /* a LATER dump (young objects walked) */
	struct hd__csr g, rg; /* W then the groups, and the reverse */
	struct sets hsets;   /* old holder sets (node ids) */
};

#define KIND_SHIFT 32

/* Is node id one of the VM's own tables (a hidden DATA of a "VM/..."
 * struct that only roots hold), which is never taken for a holder? */
static int is_vm_table(const hd_store *s, hd_node_id id)
{
	size_t len = 0;
	const char *aux;
	hd_edge_iter it;
	hd_node_id r;

	if (hd_store_type(s, id) != HD_T_DATA ||
	    hd_store_class(s, id) != HD_NODE_NONE)
		return 0;
	aux = hd_store_aux(s, id, &len);
	if (!aux || len <= 3 || memcmp(aux, "VM/", 3))
		return 0;
	/* the VM's own: held by roots alone (a class's method cache
	 * table, held by its class, is the class's) */
	hd_store_referrers(s, id, &it);
	return hd_edge_iter_next(&it, &r) != 0;
}

static int holds(const struct work *w, hd_node_id v)
{
	return !hd__bit(w->cut, v);
}

/*
 * Does r hold t? Not when r is cut, nor when r is a WeakKeyMap and t a
 * value whose key the dump lists (the gem's dumps): a WeakKeyMap keeps a
 * value while its key lives, so the value is the key holder's. dump_all
 * lists only the values, and the map then stands for their keys.
 */
static int holds_ref(const struct work *w, hd_node_id r, hd_node_id t)
{
	return holds(w, r) &&
	       (!w->keyed || !hd__bit(w->keyed, t) || !hd__wkmap(w->s, r));
}

/*
 * A hidden Array whose referrers are all VM tables (one at least), or
 * that only the symbol table's root holds (gs: the nodes of root
 * category global_symbols): the names of the symbols.
 */
static int vm_array(const struct work *w, hd_node_id v,
		    const unsigned char *gs)
{
	hd_edge_iter it;
	hd_node_id r;
	int any = 0;

	if (hd_store_type(w->s, v) != HD_T_ARRAY ||
	    hd_store_class(w->s, v) != HD_NODE_NONE)
		return 0;
	hd_store_referrers(w->s, v, &it);
	while (hd_edge_iter_next(&it, &r) == 0) {
		if (r >= w->n || !hd__bit(w->vm, r) ||
		    hd_store_type(w->s, r) != HD_T_DATA)
			return 0;
		any = 1;
	}
	return any || (gs && hd__bit(gs, v));
}

/* A hidden Array whose references are all Strings or Symbols (one at
 * least): a chunk of the symbol table's list of names. */
static int name_chunk(const hd_store *s, hd_node_id v)
{
	hd_edge_iter it;
	hd_node_id r;
	int any = 0, t;

	if (hd_store_type(s, v) != HD_T_ARRAY ||
	    hd_store_class(s, v) != HD_NODE_NONE)
		return 0;
	hd_store_refs(s, v, &it);
	while (hd_edge_iter_next(&it, &r) == 0) {
		t = hd_store_type(s, r);
		if (t != HD_T_STRING && t != HD_T_SYMBOL)
			return 0;
		any = 1;
	}
	return any;
}

/*
 * Marks in vm the symbol table's list of names and its chunks: a hidden
 * Array that the root category "global_symbols" (Ruby 3.4 and later) or
 * "vm" (3.1 to 3.3) holds, or that is already the VM's (held by its
 * tables only, as a gem's dump on 3.4 has it), whose references are all
 * name chunks (hidden Arrays of Strings and Symbols). Each chunk is read
 * once per list that holds it: linear.
 */
static void mark_symbol_list(struct work *w, const unsigned char *gs)
{
	unsigned char *vr = hd__root_held(w->s, "vm");
	hd_edge_iter it;
	hd_node_id v, r;
	int all, any;

	for (v = 0; v < w->n; v++) {
		if (!(hd__bit(w->vm, v) || (gs && hd__bit(gs, v)) ||
		      (vr && hd__bit(vr, v))) ||
		    hd_store_type(w->s, v) != HD_T_ARRAY ||
		    hd_store_class(w->s, v) != HD_NODE_NONE)
			continue;
		all = 1;
		any = 0;
		hd_store_refs(w->s, v, &it);
		while (all && hd_edge_iter_next(&it, &r) == 0) {
			all = r < w->n && name_chunk(w->s, r);
			any = 1;
		}
		if (!all || !any)
			continue;
		hd__bit_set(w->vm, v);
		hd_store_refs(w->s, v, &it);
		while (hd_edge_iter_next(&it, &r) == 0)
			hd__bit_set(w->vm, r);
	}
	hd__bitmap_free(vr, w->n);
}

/* The nodes a root category named name holds, as a bitmap of s's
 * nodes, or NULL (no such category, or out of memory: callers then
 * treat no node as held by it). */
unsigned char *hd__root_held(const hd_store *s, const char *name)
{
	uint32_t c, nroot = hd_store_root_count(s), n = hd_store_node_count(s);
	unsigned char *m = NULL;
	hd_edge_iter it;
	hd_node_id v;

	for (c = 0; c < nroot; c++) {
		if (strcmp(hd_store_root_name(s, c), name))
			continue;
		if (!m && !(m = hd__bitmap_new(n)))
			return NULL;
		hd_store_root_refs(s, c, &it);
		while (hd_edge_iter_next(&it, &v) == 0)
			if (v < n)
				hd__bit_set(m, v);
	}
	return m;
}


/* W = leak | young, in node order; the VM tables and weak holders cut. */
static int walked(struct work *w, const hd_nodes *leak,
		  const hd_nodes *young, unsigned flags)
{
	struct hd__attr *a = w->a;
	unsigned char *gs;
	size_t i;
	hd_node_id v;

	if (!(a->walk = hd__bitmap_new(w->n)) ||
	    !(a->leaked = hd__bitmap_new(w->n)))
		return HD_ENOMEM;
	if (flags & HD_ROOTS_SKIP_WEAK) {
		if (!(w->cut = hd__weak_bitmap(w->s)))
			return HD_ENOMEM;
	} else if (!(w->cut = hd__bitmap_new(w->n))) {
		return HD_ENOMEM;
	}
	if (!(w->vm = hd__bitmap_new(w->n)))
		return HD_ENOMEM;
	{
		int nomem;

		w->keyed = hd__ephemeron_keyed(w->s, &nomem);
		if (nomem)
			return HD_ENOMEM;
	}
	for (v = 0; v < w->n; v++)
		if (is_vm_table(w->s, v))
			hd__bit_set(w->vm, v);
	/* a hidden Array only VM tables, or the symbol table's root,
	 * hold is theirs (the symbol table's list of names) */
	gs = hd__root_held(w->s, "global_symbols");
	for (v = 0; v < w->n; v++)
		if (vm_array(w, v, gs))
			hd__bit_set(w->vm, v);
	mark_symbol_list(w, gs);
	hd__bitmap_free(gs, w->n);
	for (v = 0; v < w->n; v++)
		if (hd__bit(w->vm, v))
			hd__bit_set(w->cut, v);
	for (i = 0; i < leak->n; i++) {
		v = leak->ids[i];
		hd__bit_set(a->walk, v);
		if (hd__bit(w->vm, v)) {
			a->vm_count++;
			a->saturated |= hd__sat_add(&a->vm_memsize,
						    hd_store_memsize(w->s, v));
		} else {
			hd__bit_set(a->leaked, v);
		}
	}
	for (i = 0; young && i < young->n; i++) {
		v = young->ids[i];
		if (hd__bit(a->walk, v))
			continue;
		hd__bit_set(a->walk, v);
		a->young_count++;
		a->saturated |= hd__sat_add(&a->young_memsize,
					    hd_store_memsize(w->s, v));
	}
	if (!HD_ALLOC(w->loc, w->n))
		return HD_ENOMEM;
	for (v = 0; v < w->n; v++) {
		w->loc[v] = HD__NONE;
		if (hd__bit(a->walk, v))
			w->loc[v] = w->m++;
	}
	if (!HD_ALLOC(w->node, w->m ? w->m : 1))
		return HD_ENOMEM;
	for (v = 0; v < w->n; v++)
		if (w->loc[v] != HD__NONE)
			w->node[w->loc[v]] = v;
	return 0;
}

/* The root categories holding each walked object (a category once). */
static int count_roots(struct work *w)
{
	uint32_t c, nroot = hd_store_root_count(w->s), *last;
	hd_edge_iter it;
	hd_node_id r;

	if (!(w->roots = hd__calloc(w->m ? w->m : 1, sizeof(*w->roots))) ||
	    !HD_ALLOC(last, w->m ? w->m : 1))
		return HD_ENOMEM;
	memset(last, 0xff, (size_t)(w->m ? w->m : 1) * sizeof(*last));
	for (c = 0; c < nroot; c++) {
		hd_store_root_refs(w->s, c, &it);
		while (hd_edge_iter_next(&it, &r) == 0) {
			uint32_t l = r < w->n ? w->loc[r] : HD__NONE;

			if (l != HD__NONE && last[l] != c) {
				last[l] = c;
				w->roots[l]++;
			}
		}
	}
	HD_FREE(last, w->m ? w->m : 1);
	return 0;
}

/* A class's call-cache table (a hidden DATA VM/cc_table that one class
 * alone holds) stands for that class; anything else for itself. */
static hd_node_id cc_table_class(const struct work *w, hd_node_id r)
{
	static const char name[] = "VM/cc_table";
	hd_edge_iter it;
	hd_node_id c, more;
	const char *aux;
	size_t len = 0;
	int t;

	aux = hd_store_aux(w->s, r, &len);
	if (!aux || len != sizeof(name) - 1 || memcmp(aux, name, len) ||
	    hd_store_class(w->s, r) != HD_NODE_NONE)
		return r;
	hd_store_referrers(w->s, r, &it);
	if (hd_edge_iter_next(&it, &c) != 0 || c >= w->n ||
	    hd_edge_iter_next(&it, &more) == 0 || w->loc[c] != HD__NONE)
		return r;
	t = hd_store_type(w->s, c);
	return t == HD_T_CLASS || t == HD_T_MODULE || t == HD_T_ICLASS ? c : r;
}

/*
 * The holder an old object stands for: an ICLASS (a module included
 * into a class) shares its module's method table, so what it holds
 * through it is the module's; a class's call-cache table is the
 * class's.
 */
static hd_node_id canon(const struct work *w, hd_node_id r)
{
	hd_node_id m;

	if (hd_store_type(w->s, r) == HD_T_DATA)
		return cc_table_class(w, r);
	if (hd_store_type(w->s, r) != HD_T_ICLASS)
		return r;
	m = hd_store_class(w->s, r);
	return m != HD_NODE_NONE && m < w->n && w->loc[m] == HD__NONE &&
			       hd_store_type(w->s, m) == HD_T_MODULE ?
		       m :
		       r;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* v[0..n) sorted, repeats dropped; the new length. */
static size_t unique_u32(uint32_t *v, size_t n)
{
	size_t i, k = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_u32);
	for (i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/*
 * The key of local v, or 0 when it is no border object: its old holders
 * (distinct, ascending, into *hs) make it HOLDER, SHARED or ROOT.
 */
static int border_key(struct work *w, uint32_t v, uint32_t **hs,
		      size_t *nh, size_t *ch, uint64_t *key)
{
	hd_edge_iter it;
	hd_node_id r, prev = HD_NODE_NONE;
	uint32_t id;
	int rc;

	int walked_ref = 0;

	*nh = 1; /* hs[0]: the length word of the set */
	*key = 0;
	hd_store_referrers(w->s, w->node[v], &it);
	while (hd_edge_iter_next(&it, &r) == 0) {
		if (r >= w->n || r == prev || !holds_ref(w, r, w->node[v]))
			continue;
		if (w->loc[r] != HD__NONE) {
			walked_ref = 1;
			continue;
		}
		r = canon(w, r);
		prev = r;
		if (hd__push_u32(hs, nh, ch, r))
			return HD_ENOMEM;
	}
	*nh = 1 + unique_u32(*hs + 1, *nh - 1);
	(*hs)[0] = (uint32_t)(*nh - 1);
	if (*nh == 2) {
		*key = (uint64_t)HD_SUSPECT_HOLDER << KIND_SHIFT | (*hs)[1];
	} else if (*nh > 2) {
		if ((rc = set_put(&w->hsets, *hs, &id)))
			return rc;
		*key = (uint64_t)HD_SUSPECT_SHARED << KIND_SHIFT | id;
	} else if (w->roots[v] && !walked_ref) {
		/* held by a root category alone: a suspect of its own (one
		 * also held by walked objects is theirs, as a stale pointer
		 * on the machine stack is no owner) */
		*key = (uint64_t)HD_SUSPECT_ROOT << KIND_SHIFT | v;
	} else {
		return 0;
	}
	*key += 1; /* 0 stays "no border object" */
	return 0;
}

struct keyed {
	uint64_t key;
	uint32_t v;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* The border, grouped by key: w->G groups, their keys and members. */
static int group(struct work *w)
{
	uint32_t *hs = NULL, v;
	size_t nh = 0, ch = 0, np = 0, cp = 0, i;
	struct keyed *kv = NULL;
	uint64_t key;
	int rc = HD_ENOMEM;

	if (hd__push_u32(&hs, &nh, &ch, 0))
		goto out;
	for (v = 0; v < w->m; v++) {
		if ((rc = border_key(w, v, &hs, &nh, &ch, &key)))
			goto out;
		if (!key)
			continue;
		w->a->border += hd__bit(w->a->leaked, w->node[v]);
		rc = HD_ENOMEM;
		if (hd__grow((void **)&kv, &cp, np + 1, sizeof(*kv)))
			goto out;
		kv[np].key = key - 1;
		kv[np++].v = v;
	}
	w->nborder = np;
	rc = HD_ENOMEM;
	if (np)
		qsort(kv, np, sizeof(*kv), cmp_keyed);
	for (i = 0; i < np; i++)
		w->G += !i || kv[i].key != kv[i - 1].key;
	if (!(w->claimed = hd__bitmap_new(w->m)) ||
	    !HD_ALLOC(w->key, w->G ? w->G : 1) ||
	    !HD_ALLOC(w->gfirst, (size_t)w->G + 1) ||
	    !HD_ALLOC(w->gborder, np ? np : 1))
		goto out;
	w->G = 0;
	for (i = 0; i < np; i++) {
		if (!i || kv[i].key != kv[i - 1].key) {
			w->key[w->G] = kv[i].key;
			w->gfirst[w->G++] = (uint32_t)i;
		}
		w->gborder[i] = kv[i].v;
		hd__bit_set(w->claimed, kv[i].v);
	}
	w->gfirst[w->G] = (uint32_t)np;
	rc = 0;
out:
	HD_FREE(hs, ch);
	HD_FREE(kv, cp);
	return rc;
}

/*
 * Does v's reference into a border object hold it as much as the
 * border object's own old holder does? With a LATER dump, when v is
 * leaked: it lived from AFTER to LATER, so it is no cache rebuilt after
 * AFTER (those are young) but a second collection that keeps the border
 * object: a session in a cache and in an index of sessions by user.
 * The border object is then held jointly, unless v's own group
 * dominates v (then the edge changes nothing). With two dumps the new
 * objects that reference a border object cannot be told from a cache
 * rebuilt from its holder, and the holder keeps it.
 */
static int co_holder(const struct work *w, hd_node_id v)
{
	return w->young && hd__bit(w->a->leaked, v);
}

/* The graph: W's references among themselves, then group -> border. */
static int graph(struct work *w)
{
	uint32_t *from = NULL, *to = NULL, v, g;
	size_t ne = 0, k = 0, i, nb = w->nborder;
	hd_edge_iter it;
	hd_node_id t;
	int pass, rc = HD_ENOMEM;

	for (pass = 0; pass < 2; pass++) {
		for (v = 0; v < w->m; v++) {
			if (!holds(w, w->node[v]))
				continue;
			hd_store_refs(w->s, w->node[v], &it);
			while (hd_edge_iter_next(&it, &t) == 0) {
				if (t >= w->n || w->loc[t] == HD__NONE ||
				    (hd__bit(w->claimed, w->loc[t]) &&
				     !co_holder(w, w->node[v])) ||
				    !holds_ref(w, w->node[v], t))
					continue;
				if (pass) {
					from[k] = v;
					to[k++] = w->loc[t];
				} else {
					ne++;
				}
			}
		}
		if (pass)
			break;
		ne += nb;
		if (!HD_ALLOC(from, ne ? ne : 1) || !HD_ALLOC(to, ne ? ne : 1))
			goto out;
	}
	for (g = 0; g < w->G; g++) {
		for (i = w->gfirst[g]; i < w->gfirst[g + 1]; i++) {
			from[k] = w->m + g;
			to[k++] = w->gborder[i];
		}
	}
	if (hd__csr_from_edges(&w->g, w->m + w->G, from, to, k) ||
	    hd__csr_reverse(&w->rg, &w->g))
		goto out;
	rc = 0;
out:
	HD_FREE(from, ne ? ne : 1);
	HD_FREE(to, ne ? ne : 1);
	return rc;
}

/* ---- owners ---- */

static int own_new(struct hd__attr *a, struct hd__owner **o)
{
	if (hd__grow((void **)&a->own, &a->cown, a->nown + 1, sizeof(*a->own)))
		return HD_ENOMEM;
	*o = &a->own[a->nown++];
	memset(*o, 0, sizeof(**o));
	return 0;
}

/* The holder objects a group stands for, into v (no repeats). */
static int group_holders(struct work *w, uint32_t g, hd_nodes *v)
{
	uint64_t key = w->key[g];
	int kind = (int)(key >> KIND_SHIFT);
	uint32_t id = (uint32_t)key, i, n;
	const uint32_t *items;

	switch (kind) {
	case HD_SUSPECT_HOLDER:
		return hd__nodes_push(v, id);
	case HD_SUSPECT_SHARED:
		n = set_len(&w->hsets, id);
		items = set_items(&w->hsets, id);
		for (i = 0; i < n && v->n < HD__ATTR_LIST; i++)
			if (hd__nodes_push(v, items[i]))
				return HD_ENOMEM;
		return 0;
	default:
		return hd__nodes_push(v, w->node[id]);
	}
}

/* Sorts v and drops repeats. */
static void nodes_unique(hd_nodes *v)
{
	v->n = unique_u32(v->ids, v->n);
}

/*
 * An owner's border objects, from the n local ids v (or dfn numbers
 * through t): the leaked ones, or, when none is leaked, the young ones
 * (the newest links of a chain that leads to the leak). Ascending.
 */
static int border_of(struct work *w, const uint32_t *v, size_t n,
		     const struct hd__dom *t, hd_nodes *out)
{
	const struct hd__attr *a = w->a;
	size_t i;
	int pass;

	for (pass = 0; pass < 2 && !out->n; pass++)
		for (i = 0; i < n; i++) {
			hd_node_id id = w->node[t ? t->vertex[v[i]] : v[i]];

			if ((pass || hd__bit(a->leaked, id)) &&
			    hd__nodes_push(out, id))
				return HD_ENOMEM;
		}
	nodes_unique(out);
	return 0;
}

/* One owner per group that retains something of the leak. */
static int group_owners(struct work *w, const uint64_t *cnt,
			const uint64_t *mem, const struct hd__dom *t)
{
	struct hd__attr *a = w->a;
	struct hd__owner *o;
	uint32_t g, d;
	int kind;

	if (!HD_ALLOC(w->gown, w->G ? w->G : 1))
		return HD_ENOMEM;
	for (g = 0; g < w->G; g++) {
		w->gown[g] = HD__NONE;
		d = t->dfn[w->m + g];
		if (!cnt[d])
			continue;
		if (own_new(a, &o))
			return HD_ENOMEM;
		w->gown[g] = (uint32_t)(a->nown - 1);
		kind = (int)(w->key[g] >> KIND_SHIFT);
		o->kind = kind;
		o->count = cnt[d];
		o->memsize = mem[d];
		o->roots = w->roots[w->gborder[w->gfirst[g]]];
		o->holders = kind == HD_SUSPECT_HOLDER ? 1 :
			     kind == HD_SUSPECT_SHARED ?
				     set_len(&w->hsets, (uint32_t)w->key[g]) :
				     0;
		if (kind != HD_SUSPECT_ROOT && group_holders(w, g, &o->listed))
			return HD_ENOMEM;
		if (border_of(w, w->gborder + w->gfirst[g],
			      w->gfirst[g + 1] - w->gfirst[g], NULL,
			      &o->border))
			return HD_ENOMEM;
		nodes_unique(&o->listed);
	}
	return 0;
}

/*
 * The sets of groups reaching each component: group vertices first,
 * then pushed along every edge between components, sources first (a
 * higher component number comes first in topological order).
 */
static int reach_sets(struct work *w, struct sets *st, uint32_t **setof,
		      uint32_t **comp_out, uint32_t *ncomp)
{
	uint32_t N = w->m + w->G, C = 0, *comp = NULL, *roots = NULL;
	uint32_t *first = NULL, *member = NULL, *fill = NULL, *set = NULL;
	uint32_t v, c, g, i, a, b;
	int rc = HD_ENOMEM;

	if (!HD_ALLOC(comp, N) || !HD_ALLOC(roots, w->G ? w->G : 1))
		goto out;
	for (g = 0; g < w->G; g++)
		roots[g] = w->m + g;
	if (hd__scc(&w->g, roots, w->G, comp, &C))
		goto out;
	if (!(first = hd__calloc((size_t)C + 1, sizeof(*first))) ||
	    !HD_ALLOC(member, N) || !HD_ALLOC(fill, C ? C : 1) ||
	    !(set = hd__calloc(C ? C : 1, sizeof(*set))))
		goto out;
	for (v = 0; v < N; v++)
		first[comp[v] + 1]++;
	for (c = 0; c < C; c++)
		first[c + 1] += first[c];
	memcpy(fill, first, (size_t)C * sizeof(*fill));
	for (v = 0; v < N; v++)
		member[fill[comp[v]]++] = v;
	for (g = 0; g < w->G; g++)
		if ((rc = set_one(st, g, &set[comp[w->m + g]])))
			goto out;
	rc = HD_ENOMEM;
	for (c = C; c-- > 0;) {
		if (!set[c])
			continue;
		for (i = first[c]; i < first[c + 1]; i++) {
			hd__csr_range(&w->g, member[i], &a, &b);
			for (; a < b; a++) {
				uint32_t d = comp[hd__csr_at(&w->g, a)];

				if (d != c &&
				    set_union(st, set[d], set[c], &set[d]))
					goto out;
			}
		}
	}
	*setof = set;
	*comp_out = comp;
	*ncomp = C;
	set = comp = NULL;
	rc = 0;
out:
	HD_FREE(roots, w->G ? w->G : 1);
	HD_FREE(first, (size_t)C + 1);
	HD_FREE(member, N);
	HD_FREE(fill, C ? C : 1);
	HD_FREE(set, C ? C : 1);
	HD_FREE(comp, N);
	return rc;
}

/*
 * The virtual root's children that are objects, not groups: held
 * jointly. One owner per set of groups reaching them.
 */
static int joint_owners(struct work *w, const struct hd__dom *t,
			const uint64_t *cnt, const uint64_t *mem)
{
	struct hd__attr *a = w->a;
	struct sets st;
	struct keyed *kv = NULL;

	memset(&st, 0, sizeof(st));
	uint32_t *setof = NULL, *comp = NULL, *tops = NULL, d, v, i, n, C = 0;
	size_t nk = 0, ck = 0, k, j, ntops = 0, ctops = 0;
	struct hd__owner *o;
	int rc;

	for (d = 2; d <= t->n; d++)
		if (t->idom[d] == 1 && t->vertex[d] < w->m && cnt[d])
			break;
	if (d > t->n)
		return 0;
	if ((rc = sets_init(&st)) ||
	    (rc = reach_sets(w, &st, &setof, &comp, &C)))
		goto out;
	rc = HD_ENOMEM;
	for (d = 2; d <= t->n; d++) {
		v = t->vertex[d];
		if (t->idom[d] != 1 || v >= w->m || !cnt[d])
			continue;
		if (hd__grow((void **)&kv, &ck, nk + 1, sizeof(*kv)))
			goto out;
		kv[nk].key = setof[comp[v]];
		kv[nk++].v = d;
	}
	qsort(kv, nk, sizeof(*kv), cmp_keyed);
	for (k = 0; k < nk; k = j) {
		uint32_t sid = (uint32_t)kv[k].key;
		const uint32_t *items = set_items(&st, sid);

		if (own_new(a, &o))
			goto out;
		o->kind = HD_SUSPECT_JOINT;
		n = set_len(&st, sid);
		o->holders = n + ((st.pool[st.at[sid]] & SET_MORE) != 0);
		for (i = 0; i < n; i++)
			if (group_holders(w, items[i], &o->listed) ||
			    (!(st.pool[st.at[sid]] & SET_MORE) &&
			     hd__nodes_push(&o->groups, items[i])))
				goto out;
		nodes_unique(&o->listed);
		for (j = k; j < nk && kv[j].key == kv[k].key; j++) {
			d = kv[j].v;
			o->count += cnt[d];
			a->saturated |= hd__sat_add(&o->memsize, mem[d]);
			if (hd__push_u32(&tops, &ntops, &ctops, d))
				goto out;
		}
		if (border_of(w, tops, ntops, t, &o->border))
			goto out;
		ntops = 0;
		a->joint++;
	}
	rc = 0;
out:
	HD_FREE(kv, ck);
	HD_FREE(tops, ctops);
	HD_FREE(setof, C ? C : 1);
	HD_FREE(comp, setof || comp ? w->m + w->G : 0);
	sets_free(&st);
	return rc;
}

/* ---- joint memory lifted to the old object above its holders ---- */

/* How far up a joint's holders are followed to meet. */
#define LIFT_DEPTH 8

/* The one old object holding old object v, or HD_NODE_NONE: none, a
 * walked (new or young) one, or several. */
static hd_node_id unique_holder(const struct work *w, hd_node_id v)
{
	hd_edge_iter it;
	hd_node_id r, one = HD_NODE_NONE;

	hd_store_referrers(w->s, v, &it);
	while (hd_edge_iter_next(&it, &r) == 0) {
		if (r >= w->n || r == v || !holds_ref(w, r, v))
			continue;
		if (w->loc[r] != HD__NONE || (one != HD_NODE_NONE && r != one))
			return HD_NODE_NONE;
		one = r;
	}
	return one;
}

/* v and the old objects above it through unique holders, into up[]. */
static size_t chain_up(const struct work *w, hd_node_id v, hd_node_id *up)
{
	size_t n = 0, k;

	while (v != HD_NODE_NONE && n < LIFT_DEPTH) {
		for (k = 0; k < n; k++)
			if (up[k] == v)
				return n; /* a cycle of unique holders */
		up[n++] = v;
		v = unique_holder(w, v);
	}
	return n;
}

/*
 * The old object where the holders of a joint's groups meet, each
 * followed up through the one old object holding it (at most
 * LIFT_DEPTH steps), or HD_NODE_NONE: two Arrays of one EventBus's
 * Hash that each hold one Method of every widget meet at the Hash.
 */
/* The holders of group g as a set (n items at *items), or 0 items for
 * a group of a root. */
static uint32_t group_set(const struct work *w, uint32_t g,
			  const uint32_t **items, uint32_t *one)
{
	uint64_t key = w->key[g];
	int kind = (int)(key >> KIND_SHIFT);

	if (kind == HD_SUSPECT_HOLDER) {
		*one = (uint32_t)key;
		*items = one;
		return 1;
	}
	if (kind == HD_SUSPECT_SHARED) {
		*items = set_items(&w->hsets, (uint32_t)key);
		return set_len(&w->hsets, (uint32_t)key);
	}
	return 0;
}

/* The first old object in the holder sets of every group of o (a
 * module whose method table holds a method, beside a class whose method
 * cache holds it too), or HD_NODE_NONE. */
static hd_node_id common_holder(const struct work *w,
				const struct hd__owner *o)
{
	const uint32_t *a, *b;
	uint32_t na, nb, one, two, i, j, k;

	na = group_set(w, o->groups.ids[0], &a, &one);
	for (i = 0; i < na; i++) {
		for (k = 1; k < o->groups.n; k++) {
			nb = group_set(w, o->groups.ids[k], &b, &two);
			for (j = 0; j < nb && b[j] != a[i]; j++)
				;
			if (j == nb)
				break;
		}
		if (k == o->groups.n)
			return a[i];
	}
	return HD_NODE_NONE;
}

/* Is v the top-level namespace, the class Object, whose constant table
 * holds every top-level constant? Holders that meet only there (a cache
 * and an index, each a constant of its own) hold their joint memory
 * together; Object is no holder of it. */
static int top_namespace(const hd_store *s, hd_node_id v)
{
	char name[8];

	return hd_store_type(s, v) == HD_T_CLASS &&
	       hd_store_node_name(name, sizeof(name), s, v) == 6 &&
	       memcmp(name, "Object", 6) == 0;
}

static hd_node_id meet(const struct work *w, const struct hd__owner *o)
{
	hd_node_id first[LIFT_DEPTH], other[LIFT_DEPTH], x;
	size_t nf, no, i, j, k;
	int ok;

	if (o->groups.n < 2 || o->groups.n > HD__ATTR_LIST)
		return HD_NODE_NONE;
	if ((x = common_holder(w, o)) != HD_NODE_NONE)
		return x;
	for (i = 0; i < o->groups.n; i++)
		if ((int)(w->key[o->groups.ids[i]] >> KIND_SHIFT) !=
		    HD_SUSPECT_HOLDER)
			return HD_NODE_NONE;
	nf = chain_up(w, (uint32_t)w->key[o->groups.ids[0]], first);
	for (j = 0; j < nf; j++) {
		ok = 1;
		for (i = 1; i < o->groups.n && ok; i++) {
			no = chain_up(w, (uint32_t)w->key[o->groups.ids[i]],
				      other);
			for (k = 0; k < no && other[k] != first[j]; k++)
				;
			ok = k < no;
		}
		if (ok)
			return top_namespace(w->s, first[j]) ? HD_NODE_NONE :
							       first[j];
	}
	return HD_NODE_NONE;
}

/* b's leaked objects and border moved into a (b dies). */
static int absorb(struct hd__attr *a, struct hd__owner *into,
		  struct hd__owner *b)
{
	size_t i;

	into->count += b->count;
	a->saturated |= hd__sat_add(&into->memsize, b->memsize);
	for (i = 0; i < b->border.n; i++)
		if (hd__nodes_push(&into->border, b->border.ids[i]))
			return HD_ENOMEM;
	nodes_unique(&into->border);
	b->dead = 1;
	b->count = b->memsize = 0;
	return 0;
}

/* Each joint whose holders meet at one old object becomes that
 * object's, with the groups it joined. */
static int lift_all(struct work *w)
{
	struct hd__attr *a = w->a;
	size_t i, k, n = a->nown;
	hd_node_id x;
	hd_nodes tops;

	for (i = 0; i < n; i++) {
		struct hd__owner *o = &a->own[i];

		if (o->kind != HD_SUSPECT_JOINT ||
		    (x = meet(w, o)) == HD_NODE_NONE)
			continue;
		/* its border: the groups' border objects (the joint's own
		 * are inside them), or its own when no group weighs */
		tops = o->border;
		memset(&o->border, 0, sizeof(o->border));
		for (k = 0; k < o->groups.n; k++) {
			uint32_t g = w->gown[o->groups.ids[k]];

			if (g != HD__NONE && !a->own[g].dead &&
			    absorb(a, o, &a->own[g])) {
				hd_nodes_free(&tops);
				return HD_ENOMEM;
			}
		}
		if (!o->border.n) {
			hd_nodes_free(&o->border);
			o->border = tops;
		} else {
			hd_nodes_free(&tops);
		}
		o->kind = HD_SUSPECT_HOLDER;
		o->holders = 1;
		o->listed.n = 0;
		if (hd__nodes_push(&o->listed, x))
			return HD_ENOMEM;
		a->joint--;
	}
	return 0;
}

/* Owners of one holder (a lifted joint and a group of the object it
 * lifted to) become one; the dead are dropped. */
static int merge_same(struct work *w)
{
	struct hd__attr *a = w->a;
	struct hd__map seen;
	size_t i, k = 0;
	uint32_t at;
	int found;

	if (hd__map_init(&seen, a->nown))
		return HD_ENOMEM;
	for (i = 0; i < a->nown; i++) {
		struct hd__owner *o = &a->own[i];

		if (o->dead || o->kind != HD_SUSPECT_HOLDER)
			continue;
		if (hd__map_put(&seen, o->listed.ids[0], (uint32_t)i, &at,
				&found)) {
			hd__map_free(&seen);
			return HD_ENOMEM;
		}
		if (found && absorb(a, &a->own[at], o)) {
			hd__map_free(&seen);
			return HD_ENOMEM;
		}
	}
	hd__map_free(&seen);
	for (i = 0; i < a->nown; i++) {
		if (a->own[i].dead) {
			hd_nodes_free(&a->own[i].listed);
			hd_nodes_free(&a->own[i].border);
			hd_nodes_free(&a->own[i].groups);
			continue;
		}
		a->own[k++] = a->own[i];
	}
	a->nown = k;
	return 0;
}

/*
 * The dominator tree under the groups: each object's top (the child of
 * the virtual root above it), the leaked objects summed at their tops,
 * the owners of the groups and the joint ones, and the unreached.
 */
static int attribute(struct work *w)
{
	struct hd__attr *a = w->a;
	struct hd__dom t;
	uint32_t *roots = NULL, *top = NULL, d, v, g;
	uint64_t *cnt = NULL, *mem = NULL;
	size_t i;
	int rc = HD_ENOMEM;

	memset(&t, 0, sizeof(t));
	if (!HD_ALLOC(roots, w->G ? w->G : 1))
		goto out;
	for (g = 0; g < w->G; g++)
		roots[g] = w->m + g;
	if (hd__dominators(&t, &w->g, &w->rg, NULL, NULL, NULL, roots, w->G))
		goto out;
	if (!(top = hd__calloc((size_t)t.n + 1, sizeof(*top))) ||
	    !(cnt = hd__calloc((size_t)t.n + 1, sizeof(*cnt))) ||
	    !(mem = hd__calloc((size_t)t.n + 1, sizeof(*mem))))
		goto out;
	for (d = 2; d <= t.n; d++) {
		top[d] = t.idom[d] == 1 ? d : top[t.idom[d]];
		v = t.vertex[d];
		if (v < w->m && hd__bit(a->leaked, w->node[v])) {
			cnt[top[d]]++;
			a->saturated |= hd__sat_add(
				&mem[top[d]], hd_store_memsize(w->s, w->node[v]));
		}
	}
	for (v = 0; v < w->m; v++) {
		hd_node_id id = w->node[v];

		if (hd__bit(a->leaked, id) && !t.dfn[v]) {
			a->unreached_count++;
			a->saturated |= hd__sat_add(&a->unreached_memsize,
						    hd_store_memsize(w->s, id));
		}
	}
	if ((rc = group_owners(w, cnt, mem, &t)) ||
	    (rc = joint_owners(w, &t, cnt, mem)) || (rc = lift_all(w)) ||
	    (rc = merge_same(w)))
		goto out;
	for (i = 0; i < a->nown; i++)
		if (!a->own[i].border.n) /* never: every owner has one */
			rc = HD_EINVAL;
out:
	HD_FREE(roots, w->G ? w->G : 1);
	HD_FREE(top, top ? (size_t)t.n + 1 : 0);
	HD_FREE(cnt, cnt ? (size_t)t.n + 1 : 0);
	HD_FREE(mem, mem ? (size_t)t.n + 1 : 0);
	hd__dom_free(&t);
	return rc;
}

static void work_free(struct work *w)
{
	hd__bitmap_free(w->cut, w->n);
	hd__bitmap_free(w->keyed, w->n);
	hd__bitmap_free(w->vm, w->n);
	hd__bitmap_free(w->claimed, w->m);
	HD_FREE(w->gown, w->gown ? (w->G ? w->G : 1) : 0);
	HD_FREE(w->loc, w->loc ? w->n : 0);
	HD_FREE(w->node, w->node ? (w->m ? w->m : 1) : 0);
	HD_FREE(w->roots, w->roots ? (w->m ? w->m : 1) : 0);
	HD_FREE(w->key, w->key ? (w->G ? w->G : 1) : 0);
	HD_FREE(w->gfirst, w->gfirst ? (size_t)w->G + 1 : 0);
	HD_FREE(w->gborder, w->gborder ? (w->nborder ? w->nborder : 1) : 0);
	hd__csr_free(&w->g);
	hd__csr_free(&w->rg);
	sets_free(&w->hsets);
}

int hd__attr_build(struct hd__attr *a, const hd_store *s,
		   const hd_nodes *leak, const hd_nodes *young,
		   unsigned flags)
{
	struct work w;
	int rc;

	memset(a, 0, sizeof(*a));
	memset(&w, 0, sizeof(w));
	w.s = s;
	w.a = a;
	w.young = young != NULL;
	w.n = hd_store_node_count(s);
	a->n = w.n;
	if ((rc = sets_init(&w.hsets)) ||
	    (rc = walked(&w, leak, young, flags)) ||
	    (rc = count_roots(&w)) || (rc = group(&w)) || (rc = graph(&w)) ||
	    (rc = attribute(&w)))
		goto out;
out:
	work_free(&w);
	if (rc)
		hd__attr_free(a);
	return rc;
}

void hd__attr_free(struct hd__attr *a)
{
	size_t i;

	for (i = 0; i < a->nown; i++) {
		hd_nodes_free(&a->own[i].listed);
		hd_nodes_free(&a->own[i].border);
		hd_nodes_free(&a->own[i].groups);
	}
	HD_FREE(a->own, a->cown);
	hd__bitmap_free(a->walk, a->n);
	hd__bitmap_free(a->leaked, a->n);
	memset(a, 0, sizeof(*a));
}
