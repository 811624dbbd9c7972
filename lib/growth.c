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
 * The same walk finds the growth in place: objects in every dump whose
 * memsize grew and never shrank while their length grew at every step
 * (or, without a length, their memsize did): a String buffer appended
 * to, a Hash of Integers, a DATA's table, which no new object shows. Every
 * collection is followed, and of the other objects those of at least
 * INPLACE_MIN bytes in the last dump (an object that small cannot have
 * grown much; the bound keeps the lookups to a small part of the heap).
 * The tracer's and dump_all's objects, the VM's hidden tables, the VM
 * itself (a DATA of struct VM) and the weak maps are not counted
 * (own_object).
 *
 * An object that compaction moved is not followed (its address
 * changed): it is not reported, never reported wrongly.
 *
 * A collection replaced at every step (`@handlers = (@handlers +
 * [h]).freeze`) is no object of every dump: hd__growth_slot follows it
 * through its holder's slot instead, the holder being one object of
 * every dump (the reference of that name, or without names the k-th
 * reference to an object of its type).
 */
#include "hd_int.h"
#include "store_format.h"

#include <stdlib.h>
#include <string.h>

struct item {
	hd_growing pub;
	size_t row;         /* its lengths: lengths + row * ndumps */
};

struct grown {
	hd_grown pub;
	size_t row;         /* its memsizes: memsizes + row * ndumps */
};

/* The smallest last memsize of a non-collection followed for growth in
 * place. */
#define INPLACE_MIN 512

struct hd_growth {
	struct item *g;
	size_t n, cap;
	uint64_t *lengths;  /* n * ndumps */
	size_t lcap;
	size_t ndumps;
	uint64_t examined;  /* collections of the last dump followed */
	struct grown *in;   /* grown in place, by growth */
	size_t nin, incap;
	uint64_t *memsizes; /* nin * ndumps */
	size_t mcap;
	uint64_t in_memsize; /* their growth, summed (saturating) */
};

static int is_collection(int type)
{
	return type == HD_T_HASH || type == HD_T_ARRAY;
}

/* Is id a Set of Ruby 4.0, where Set is core: a DATA of struct "set"
 * that lists its members as references (no length in the dump)? */
static int core_set(const hd_store *s, hd_node_id id)
{
	size_t len = 0;
	const char *aux;

	return hd_store_type(s, id) == HD_T_DATA &&
	       (aux = hd_store_aux(s, id, &len)) && len == 3 &&
	       !memcmp(aux, "set", 3);
}

/* Is id followed as a growing collection: a Hash, an Array or a core
 * Set? */
static int followed(const hd_store *s, hd_node_id id)
{
	return is_collection(hd_store_type(s, id)) || core_set(s, id);
}

/* Its length: a Hash's size, an Array's length (hd_store_length), a
 * core Set's members that are objects (its references but the class
 * edge; members that are Integers or Symbols are not counted, and such
 * a Set grows in place instead): 1, or 0 without one. */
static int coll_length(uint64_t *len, const hd_store *s, hd_node_id id)
{
	hd_edge_iter it;
	uint32_t k;

	if (!core_set(s, id))
		return hd_store_length(len, s, id);
	hd_store_refs(s, id, &it);
	*len = hd_edge_iter_count(&it);
	if (*len && hd__store_class_edge(s, id, &k))
		(*len)--;
	return 1;
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

/* The object id of the last store in every dump, into ids[]; 1 if it
 * is in every one, else 0. */
static int follow(const hd_store *const *stores, size_t n, hd_node_id id,
		  hd_node_id *ids)
{
	size_t k;

	ids[n - 1] = id;
	for (k = n - 1; k-- > 0;)
		if ((ids[k] = same_object(stores[k], stores[k + 1],
					  ids[k + 1])) == HD_NODE_NONE)
			return 0;
	return 1;
}

/* Its lengths, dump by dump, into len[]; 1 if it grows at every step. */
static int grows(const hd_store *const *stores, size_t n,
		 const hd_node_id *ids, uint64_t *len)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (!coll_length(&len[k], stores[k], ids[k]) ||
		    (k && len[k - 1] >= len[k]))
			return 0;
	return 1;
}

/* Its memsizes, dump by dump, into m[]; 1 if it grew in place: its
 * memsize never shrank and grew in all, and its length (a String's
 * bytesize, a Hash's size, an Array's length) grew at every step, or,
 * for an object without a length, its memsize did. A buffer's capacity
 * grows by steps (a doubled String keeps its capacity over a dump or
 * two): its length says that it grows all the same. */
static int grows_in_place(const hd_store *const *stores, size_t n,
			  const hd_node_id *ids, uint64_t *m)
{
	uint64_t len, prev = 0;
	int has_len = 1;
	size_t k;

	for (k = 0; k < n; k++) {
		m[k] = hd_store_memsize(stores[k], ids[k]);
		if (k && m[k - 1] > m[k])
			return 0;
		if (has_len && !hd_store_length(&len, stores[k], ids[k]))
			has_len = 0;
		if (has_len && k && prev >= len)
			return 0;
		if (!has_len && k && m[k - 1] >= m[k])
			return 0;
		prev = len;
	}
	return m[n - 1] > m[0];
}

/* The k-th reference of h in s (dump order) to a collection of type
 * type, or with name (len bytes) the reference of that name; NONE when
 * there is none or, by name, several. */
static hd_node_id slot_ref(const hd_store *s, hd_node_id h, int type,
			   const char *name, size_t len, uint32_t k)
{
	hd_node_id t, found = HD_NODE_NONE;
	hd_edge_iter it;
	uint32_t e = 0, seen = 0;
	const char *m;
	size_t ml;

	hd_store_refs(s, h, &it);
	for (; hd_edge_iter_next(&it, &t) == 0; e++) {
		if (hd_store_type(s, t) != type)
			continue;
		if (name) {
			m = hd_store_ref_name_at(s, h, e, &ml, NULL);
			if (!m || ml != len || memcmp(m, name, len))
				continue;
			if (found != HD_NODE_NONE)
				return HD_NODE_NONE;
			found = t;
		} else if (seen++ == k) {
			return t;
		}
	}
	return found;
}

/* How many references of h in s go to objects of type type. */
static uint32_t slot_count(const hd_store *s, hd_node_id h, int type)
{
	hd_node_id t;
	hd_edge_iter it;
	uint32_t n = 0;

	hd_store_refs(s, h, &it);
	while (hd_edge_iter_next(&it, &t) == 0)
		n += hd_store_type(s, t) == type;
	return n;
}

int hd__growth_slot(const hd_store *const *stores, size_t n,
		    hd_node_id holder, hd_node_id *coll, uint64_t *len)
{
	const hd_store *last = stores[n - 1];
	hd_node_id ids[HD__GROWTH_SLOT_DUMPS], t, c;
	uint64_t v[HD__GROWTH_SLOT_DUMPS], best = 0;
	uint32_t e = 0, ord[2] = { 0, 0 };
	hd_edge_iter it;
	const char *name;
	size_t j, nl;
	int type, found = 0;

	if (n < 3 || n > HD__GROWTH_SLOT_DUMPS || holder == HD_NODE_NONE ||
	    !follow(stores, n, holder, ids))
		return 0;
	hd_store_refs(last, holder, &it);
	for (; hd_edge_iter_next(&it, &t) == 0; e++) {
		type = hd_store_type(last, t);
		if (!is_collection(type))
			continue;
		name = hd_store_ref_name_at(last, holder, e, &nl, NULL);
		for (j = 0; j < n; j++) {
			if (!name && slot_count(stores[j], ids[j], type) !=
					     slot_count(last, holder, type))
				break;
			c = slot_ref(stores[j], ids[j], type, name, nl,
				     ord[type == HD_T_HASH]);
			if (c == HD_NODE_NONE ||
			    !hd_store_length(&v[j], stores[j], c) ||
			    (j && v[j - 1] >= v[j]))
				break;
		}
		ord[type == HD_T_HASH]++;
		if (j < n || (found && v[n - 1] - v[0] <= best))
			continue;
		found = 1;
		best = v[n - 1] - v[0];
		*coll = t;
		memcpy(len, v, n * sizeof(*v));
	}
	return found;
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

static int cmp_grown(const void *a, const void *b)
{
	const hd_grown *x = &((const struct grown *)a)->pub;
	const hd_grown *y = &((const struct grown *)b)->pub;
	uint64_t gx = x->last - x->first, gy = y->last - y->first;

	if (gx != gy)
		return gx < gy ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int add_grown(hd_growth *r, hd_node_id id, int type,
		     const uint64_t *m)
{
	size_t n = r->ndumps;
	struct grown *it;

	if (hd__grow((void **)&r->in, &r->incap, r->nin + 1, sizeof(*r->in)) ||
	    hd__grow((void **)&r->memsizes, &r->mcap, (r->nin + 1) * n,
		     sizeof(*r->memsizes)))
		return HD_ENOMEM;
	memcpy(r->memsizes + r->nin * n, m, n * sizeof(*m));
	it = &r->in[r->nin];
	memset(it, 0, sizeof(*it));
	it->row = r->nin++;
	it->pub.id = id;
	it->pub.type = type;
	it->pub.first = m[0];
	it->pub.last = m[n - 1];
	hd__sat_add(&r->in_memsize, m[n - 1] - m[0]);
	return 0;
}

/* Is id the VM itself or one of its tables: a DATA whose struct is
 * "VM" (the RubyVM instance: its memsize counts the VM's call-info and
 * symbol tables, which grow as the program makes new method names) or
 * "VM/..."? */
static int vm_data(const hd_store *s, hd_node_id id)
{
	size_t len = 0;
	const char *aux;

	if (hd_store_type(s, id) != HD_T_DATA ||
	    !(aux = hd_store_aux(s, id, &len)) || len < 2 ||
	    memcmp(aux, "VM", 2))
		return 0;
	return len == 2 || aux[2] == '/';
}

/* May id's growth in place be the program's? Not the allocation
 * tracer's table nor dump_all's objects (hd_store_is_dumper), nor an
 * object without a class: the VM's own hidden tables (the interned
 * strings, the symbol table's lists), nor the VM itself (vm_data),
 * which grow with what the program does but are never what holds its
 * memory; nor a weak map (hd__is_weak: a WeakMap, a WeakRef), whose
 * table grows with what others keep alive, or with the entries of
 * objects freed whose finalizers have not run yet (3.1). */
static int own_object(const hd_store *s, hd_node_id id)
{
	return hd_store_class(s, id) != HD_NODE_NONE &&
	       !hd_store_is_dumper(s, id) && !vm_data(s, id) &&
	       !hd__is_weak(s, id);
}

/* Follows id back: a growing collection, growth in place, or neither. */
static int examine(hd_growth *r, const hd_store *const *stores,
		   hd_node_id id, hd_node_id *ids, uint64_t *v)
{
	size_t n = r->ndumps;
	int type = hd_store_type(stores[n - 1], id);
	int coll = followed(stores[n - 1], id);

	if (coll)
		r->examined++;
	else if (hd_store_memsize(stores[n - 1], id) < INPLACE_MIN)
		return 0;
	if (!follow(stores, n, id, ids))
		return 0;
	if (coll && grows(stores, n, ids, v) && add(r, id, type, v))
		return HD_ENOMEM;
	if (own_object(stores[n - 1], id) &&
	    grows_in_place(stores, n, ids, v) && add_grown(r, id, type, v))
		return HD_ENOMEM;
	return 0;
}

int hd_growth_build(hd_growth **out, const hd_store *const *stores,
		    size_t n, hd_error *err)
{
	hd_growth *r;
	hd_node_id id, N, *ids = NULL;
	uint64_t *len = NULL;
	size_t i;

	HD_ASSERT_ARG(out && stores && n >= 2);
	for (i = 0; i < n; i++)
		HD_ASSERT_ARG(stores[i]);
	*out = NULL;
	if (!(r = hd__calloc(1, sizeof(*r))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	r->ndumps = n;
	if (!HD_ALLOC(len, n) || !HD_ALLOC(ids, n))
		goto nomem;
	N = hd_store_node_count(stores[n - 1]);
	for (id = 0; id < N; id++)
		if (examine(r, stores, id, ids, len))
			goto nomem;
	if (r->n)
		qsort(r->g, r->n, sizeof(*r->g), cmp_item);
	for (i = 0; i < r->n; i++)
		r->g[i].pub.lengths = r->lengths + r->g[i].row * n;
	if (r->nin)
		qsort(r->in, r->nin, sizeof(*r->in), cmp_grown);
	for (i = 0; i < r->nin; i++)
		r->in[i].pub.memsizes = r->memsizes + r->in[i].row * n;
	HD_FREE(len, n);
	HD_FREE(ids, n);
	*out = r;
	return 0;
nomem:
	HD_FREE(len, n);
	HD_FREE(ids, n);
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

size_t hd_growth_inplace_count(const hd_growth *g)
{
	return g ? g->nin : 0;
}

uint64_t hd_growth_inplace_memsize(const hd_growth *g)
{
	return g ? g->in_memsize : 0;
}

const hd_grown *hd_growth_inplace_get(const hd_growth *g, size_t i)
{
	return g && i < g->nin ? &g->in[i].pub : NULL;
}

void hd_growth_free(hd_growth *g)
{
	if (!g)
		return;
	HD_FREE(g->g, g->cap);
	HD_FREE(g->lengths, g->lcap);
	HD_FREE(g->in, g->incap);
	HD_FREE(g->memsizes, g->mcap);
	hd__free(g, sizeof(*g));
}
