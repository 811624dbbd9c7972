/*
 * store_stats.c - the stats summary of a store (man 5 heapdump-store,
 * STATS SUMMARY): per type, stats class name and dumper flag, the count,
 * memsize, references, traced objects and generation range of the nodes.
 * hd_store_write() adds it to a store without one, so that stats by type and class (its default) and
 * top's excluded line read a few thousand rows instead of every node.
 *
 * The build groups the nodes by what their class name and dumper flag
 * depend on (type, class node, class address, aux string, the dumper
 * flag of the site), all integers, then names each group once and merges
 * the groups whose names coincide. Rows are sorted by type, name and
 * flag, so the section is the same bytes for the same store.
 *
 * A store without it (an older build's) gets the same rows made in
 * memory, and the dumper flag of every node in one pass
 * (hd__store_dumper_bitmap, for top's tree). Every other --by over a
 * store groups the nodes the same way first, by the integers the keys
 * depend on (site, generation, length bucket: hd__store_groups), and
 * stats.c names each group once through its first node; top --by class
 * and serve's object order name each class key once
 * (hd__store_class_names, hd_store_class_groups).
 */
#include "util/keycache.h"
#include "store_format.h"

#include <stddef.h>

#include <stdlib.h>

struct agg {
	uint64_t count, memsize, edges, traced, gmin, gmax;
	int sat; /* the memsize stopped at 2^64-1 */
};

/* A group of nodes with one class name and dumper flag (and, for
 * hd__store_groups, one of whatever else it was asked to key by). */
#define NK 4
struct tup {
	uint64_t k[NK];
	uint32_t rep;   /* a node of the group */
	int dumper;
	const char *name;
	size_t name_len;
	struct agg a;
};

/* A key cache (keycache.h) of tuples in front of the keyed table:
 * consecutive nodes seldom share a key, but a few thousand keys cover
 * most nodes, and a multiply-shift index costs less than the keyed hash.
 * Only a shortcut: a tuple is used when its whole key matches, so
 * crafted keys that collide here cost nothing but the keyed lookup they
 * take anyway. */
#define CACHE_BITS 12

struct tab {
	struct tup *v;
	size_t n, cap;
	uint32_t *slot;  /* tuple index + 1, 0 empty */
	size_t scap;
	struct hd__hkey key;
	uint32_t cache[1u << CACHE_BITS]; /* the key cache of tuples */
};

static void agg_init(struct agg *a)
{
	memset(a, 0, sizeof(*a));
	a->gmin = UINT64_MAX;
}

static void agg_merge(struct agg *a, const struct agg *b)
{
	a->count += b->count;
	a->sat |= hd__sat_add(&a->memsize, b->memsize) | b->sat;
	a->edges += b->edges;
	a->traced += b->traced;
	a->gmin = b->gmin < a->gmin ? b->gmin : a->gmin;
	a->gmax = b->gmax > a->gmax ? b->gmax : a->gmax;
}

static int tab_grow(struct tab *t)
{
	size_t cap = t->scap ? t->scap * 2 : 1024, i, h;
	uint32_t *slot = hd__array_alloc(cap, sizeof(*slot));

	if (!slot)
		return HD_ENOMEM;
	memset(slot, 0, cap * sizeof(*slot));
	for (i = 0; i < t->n; i++) {
		h = hd__hash_keyed(&t->key, t->v[i].k, sizeof(t->v[i].k));
		while (slot[h & (cap - 1)])
			h++;
		slot[h & (cap - 1)] = (uint32_t)i + 1;
	}
	HD_FREE(t->slot, t->scap);
	t->slot = slot;
	t->scap = cap;
	return 0;
}

static void tab_free(struct tab *t)
{
	HD_FREE(t->slot, t->scap);
	HD_FREE(t->v, t->cap);
}

static struct tup *tab_find(struct tab *t, const uint64_t *k, uint32_t rep);

/* tab_get() past t->cache: c the slot of k there */
static struct tup *tab_get_slow(struct tab *t, const uint64_t *k,
				uint32_t rep, size_t c)
{
	struct tup *u = tab_find(t, k, rep);

	if (u)
		hd__kc_put(t->cache, c, (uint32_t)(u - t->v));
	return u;
}

/* The group of key k (made with rep as its node if new), or NULL; a hit
 * in t->cache, the common case, inline. */
HD__KC_INLINE struct tup *tab_get(struct tab *t, const uint64_t *k,
				  uint32_t rep)
{
	size_t c = hd__kc_slot(k[0] ^ k[1] * 0x9e3779b97f4a7c15u ^ k[2] ^ k[3],
			       CACHE_BITS);
	uint32_t x = hd__kc_find(t->cache, c, t->v, t->n, sizeof(*t->v),
				 offsetof(struct tup, k), k, NK * sizeof(*k));

	if (x != HD__NONE)
		return &t->v[x];
	return tab_get_slow(t, k, rep, c);
}

/* tab_get through the keyed table. */
static struct tup *tab_find(struct tab *t, const uint64_t *k, uint32_t rep)
{
	size_t h;
	uint32_t x;

	if ((t->n + 1) * 2 > t->scap && tab_grow(t))
		return NULL;
	h = hd__hash_keyed(&t->key, k, NK * sizeof(*k));
	for (;; h++) {
		x = t->slot[h & (t->scap - 1)];
		if (!x)
			break;
		if (!memcmp(t->v[x - 1].k, k, NK * sizeof(*k)))
			return &t->v[x - 1];
	}
	if (hd__grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return NULL;
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	memcpy(t->v[t->n].k, k, NK * sizeof(*k));
	t->v[t->n].rep = rep;
	agg_init(&t->v[t->n].a);
	t->slot[h & (t->scap - 1)] = (uint32_t)++t->n;
	return &t->v[t->n - 1];
}

/* Per site: SF_DUMPER, hd_store_is_dumper's site half, and SF_FILE,
 * whether it names a file. */
#define SF_DUMPER 1u
#define SF_FILE 2u
static int site_flags(const hd_store *s, unsigned char **out, size_t *n)
{
	const unsigned char *p = s->sec[HD__SEC_SITES];
	uint64_t i, ns = s->meta[HD__M_SITES];
	hd_record fake;
	uint32_t f, m;

	*n = (size_t)ns;
	*out = hd__array_alloc(ns ? (size_t)ns : 1, 1);
	if (!*out)
		return HD_ENOMEM;
	for (i = 0; i < ns; i++, p += HD__SITE_SIZE) {
		memset(&fake, 0, sizeof(fake));
		fake.kind = HD_REC_OBJECT;
		f = hd__le32(p);
		m = hd__le32(p + 4);
		if (f < s->nstrings) {
			fake.file.ptr = (const char *)s->sec[HD__SEC_STRINGS] +
					hd__le32(s->sec[HD__SEC_STROFFS] + 4 * f);
			fake.file.len = hd__le32(s->sec[HD__SEC_STROFFS] +
						 4 * (f + 1)) -
					hd__le32(s->sec[HD__SEC_STROFFS] + 4 * f) - 1;
			fake.has |= HD_HAS_FILE;
		}
		if (m < s->nstrings) {
			fake.method.ptr = (const char *)s->sec[HD__SEC_STRINGS] +
					  hd__le32(s->sec[HD__SEC_STROFFS] + 4 * m);
			fake.method.len = hd__le32(s->sec[HD__SEC_STROFFS] +
						   4 * (m + 1)) -
					  hd__le32(s->sec[HD__SEC_STROFFS] + 4 * m) - 1;
			fake.has |= HD_HAS_METHOD;
		}
		(*out)[i] = (unsigned char)(hd__is_dumper_object(&fake) |
					    (f < s->nstrings ? SF_FILE : 0));
	}
	return 0;
}

static int is_tracer(const hd_store *s, uint32_t id)
{
	size_t n;
	const char *aux = hd_store_aux(s, id, &n);

	return aux && n == 36 &&
	       !memcmp(aux, "ObjectTracing/allocation_info_tracer", 36);
}

unsigned char *hd__store_dumper_bitmap(const hd_store *s, uint64_t *count,
				       uint64_t *memsize)
{
	const unsigned char *type = s->sec[HD__SEC_TYPE];
	int has_site = (s->meta[HD__M_COLUMNS] & HD__COL_SITE) != 0;
	unsigned char *sf = NULL, *m;
	size_t nsf = 0;
	uint64_t k = 0, mem = 0;
	uint32_t i, site;

	if (!(m = hd__bitmap_new(s->nodes)) || site_flags(s, &sf, &nsf)) {
		hd__bitmap_free(m, s->nodes);
		return NULL;
	}
	for (i = 0; i < s->nodes; i++) {
		site = has_site ? hd__le32(s->sec[HD__SEC_SITE] +
					   (size_t)i * 4) :
				  HD_STR_NONE;
		if ((site < nsf && (sf[site] & SF_DUMPER)) ||
		    (type[i] == HD_T_DATA && is_tracer(s, i))) {
			hd__bit_set(m, i);
			k++;
			hd__sat_add(&mem, hd_store_memsize(s, i));
		}
	}
	hd__free(sf, nsf ? nsf : 1);
	if (count)
		*count = k;
	if (memsize)
		*memsize = mem;
	return m;
}

/* The class name and dumper flag of node i depend on these integers. */
static void class_key(uint64_t *k, const hd_store *s, uint32_t i,
		      const unsigned char *sf, size_t nsf)
{
	int ty = s->sec[HD__SEC_TYPE][i];
	uint32_t c = hd__le32(s->sec[HD__SEC_CLASS] + (size_t)i * 4);
	uint32_t aux = ty == HD_T_IMEMO || ty == HD_T_NODE || ty == HD_T_DATA ?
			       hd__le32(s->sec[HD__SEC_AUX] + (size_t)i * 4) :
			       HD_STR_NONE;
	uint32_t site = nsf && (s->meta[HD__M_COLUMNS] & HD__COL_SITE) ?
				hd__le32(s->sec[HD__SEC_SITE] + (size_t)i * 4) :
				HD_STR_NONE;

	k[0] = (uint64_t)ty |
	       (uint64_t)(site < nsf ? sf[site] & SF_DUMPER : 0) << 8 |
	       (uint64_t)aux << 32;
	k[1] = c;
	k[2] = c == HD_NODE_NONE ? hd_store_class_address(s, i) : 0;
	k[3] = 0;
}

/*
 * One pass over the nodes (all, or ids[0..nids)) into groups of integer
 * keys: what class_key() holds and, as what asks (HD__SG_), the site and
 * whether the node is traced, the generation and whether its site names
 * a file, the length bucket.
 */
static int group_nodes(const hd_store *s, struct tab *t, const hd_node_id *ids,
		       size_t nids, unsigned what)
{
	const unsigned char *roff = s->sec[HD__SEC_REFS_OFF];
	int has_site = (s->meta[HD__M_COLUMNS] & HD__COL_SITE) != 0;
	unsigned char *sf = NULL;
	size_t nsf = 0, j, n = ids ? nids : s->nodes;
	struct tup *last = NULL;
	uint64_t k[NK], g, len;
	uint32_t i, site;
	int rc = HD_ENOMEM;

	if (site_flags(s, &sf, &nsf))
		return HD_ENOMEM;
	for (j = 0; j < n; j++) {
		i = ids ? ids[j] : (uint32_t)j;
		class_key(k, s, i, sf, nsf);
		g = hd_store_generation(s, i);
		site = has_site ? hd__le32(s->sec[HD__SEC_SITE] +
					   (size_t)i * 4) :
				  HD_STR_NONE;
		if (site >= nsf)
			site = HD_STR_NONE;
		if (what & HD__SG_SITE) {
			k[1] |= (uint64_t)site << 32;
			k[0] |= (uint64_t)(g != UINT64_MAX) << 9;
		}
		if (what & HD__SG_GEN) {
			k[3] = g;
			k[0] |= (uint64_t)(site != HD_STR_NONE &&
					   (sf[site] & SF_FILE)) << 10;
		}
		if ((what & HD__SG_LEN) && hd_store_length(&len, s, i))
			k[0] |= (uint64_t)hd__length_bucket(len) << 16;
		if (!last || memcmp(last->k, k, sizeof(k))) {
			if (!(last = tab_get(t, k, i)))
				goto out;
		}
		last->a.count++;
		last->a.sat |= hd__sat_add(&last->a.memsize,
					   hd_store_memsize(s, i));
		/* as the dump lists them: not the class edge */
		last->a.edges += hd__le32(roff + (size_t)i * 4 + 4) -
				 hd__le32(roff + (size_t)i * 4) -
				 (uint64_t)hd__store_class_edge(s, i, NULL);
		if (g != UINT64_MAX) {
			last->a.traced++;
			last->a.gmin = g < last->a.gmin ? g : last->a.gmin;
			last->a.gmax = g > last->a.gmax ? g : last->a.gmax;
		}
	}
	rc = 0;
out:
	hd__free(sf, nsf ? nsf : 1);
	return rc;
}

int hd__store_groups(struct hd__sgroup **out, size_t *n_out,
		     const hd_store *s, const hd_node_id *ids, size_t nids,
		     unsigned what)
{
	struct tab t;
	struct hd__sgroup *v = NULL;
	size_t i, n;
	int rc;

	*out = NULL;
	*n_out = 0;
	memset(&t, 0, sizeof(t));
	hd__hash_key_new(&t.key);
	rc = group_nodes(s, &t, ids, nids, what);
	if (!rc && !(v = hd__array_alloc(t.n ? t.n : 1, sizeof(*v))))
		rc = HD_ENOMEM;
	for (i = 0; !rc && i < t.n; i++) {
		const struct tup *u = &t.v[i];

		v[i].rep = u->rep;
		v[i].dumper = ((u->k[0] >> 8) & 1) ||
			      ((u->k[0] & 0xff) == HD_T_DATA &&
			       is_tracer(s, u->rep));
		v[i].saturated = u->a.sat;
		v[i].count = u->a.count;
		v[i].memsize = u->a.memsize;
		v[i].edges = u->a.edges;
		v[i].traced = u->a.traced;
		v[i].gen_min = u->a.gmin;
		v[i].gen_max = u->a.gmax;
	}
	n = t.n;
	tab_free(&t);
	if (rc) {
		hd__free(v, (n ? n : 1) * sizeof(*v));
		return rc;
	}
	*out = v;
	*n_out = n;
	return 0;
}

void hd__store_groups_free(struct hd__sgroup *g, size_t n)
{
	hd__free(g, (n ? n : 1) * sizeof(*g));
}

/*
 * Each node whose grp[i] is not HD_STR_NONE on entry, by its class_key()
 * in one pass (without the dumper flag unless dumper: then the site
 * column is not read): grp[i] receives the index of its group, reps (if
 * not NULL) the first node of each group, *ngroups their number.
 */
static int key_groups(uint32_t *grp, hd_nodes *reps, size_t *ngroups,
		      const hd_store *s, int dumper)
{
	struct tab t;
	unsigned char *sf = NULL;
	size_t nsf = 0, i;
	struct tup *last = NULL;
	uint64_t k[NK];
	uint32_t id;
	int rc = HD_ENOMEM;

	memset(&t, 0, sizeof(t));
	hd__hash_key_new(&t.key);
	if (dumper && site_flags(s, &sf, &nsf))
		return HD_ENOMEM;
	for (id = 0; id < s->nodes; id++) {
		if (grp[id] == HD_STR_NONE)
			continue;
		class_key(k, s, id, sf, nsf);
		if ((!last || memcmp(last->k, k, sizeof(k))) &&
		    !(last = tab_get(&t, k, id)))
			goto out;
		grp[id] = (uint32_t)(last - t.v);
	}
	if (reps) {
		reps->n = 0;
		if (hd__grow((void **)&reps->ids, &reps->cap, t.n ? t.n : 1,
			     sizeof(*reps->ids)))
			goto out;
		for (i = 0; i < t.n; i++)
			reps->ids[reps->n++] = t.v[i].rep;
	}
	*ngroups = t.n;
	rc = 0;
out:
	hd__free(sf, nsf ? nsf : 1);
	tab_free(&t);
	return rc;
}

int hd__store_class_names(uint32_t *grp, const hd_store *s,
			  struct hd__intern *names, size_t size)
{
	hd_nodes reps = { NULL, 0, 0 };
	uint32_t *sid = NULL, id;
	char *buf = NULL;
	size_t ng = 0, i, n;
	int rc = HD_ENOMEM;

	if (!size || key_groups(grp, &reps, &ng, s, 0) ||
	    !(buf = hd__malloc(size)) ||
	    !(sid = hd__array_alloc(ng ? ng : 1, sizeof(*sid))))
		goto out;
	/* the groups in the order of their first nodes: the names are
	 * interned in the order a pass node by node interns them */
	for (i = 0; i < ng; i++) {
		n = hd_store_class_name(buf, size, s, reps.ids[i]);
		if (hd__intern_put(names, buf, n < size ? n : size - 1,
				   &sid[i]))
			goto out;
	}
	for (id = 0; id < s->nodes; id++)
		if (grp[id] != HD_STR_NONE)
			grp[id] = sid[grp[id]];
	rc = 0;
out:
	hd__free(sid, (ng ? ng : 1) * sizeof(*sid));
	hd__free(buf, size);
	hd_nodes_free(&reps);
	return rc;
}

int hd_store_class_groups(uint32_t *grp, hd_nodes *reps, const hd_store *s,
			  hd_error *err)
{
	size_t ng;

	HD_ASSERT_ARG(grp && reps && s);
	memset(grp, 0, (size_t)s->nodes * sizeof(*grp));
	memset(reps, 0, sizeof(*reps));
	if (key_groups(grp, reps, &ng, s, 1)) {
		hd_nodes_free(reps);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	return 0;
}

static int cmp_tup(const void *x, const void *y)
{
	const struct tup *a = x, *b = y;
	int c;

	if ((a->k[0] & 0xff) != (b->k[0] & 0xff))
		return (a->k[0] & 0xff) < (b->k[0] & 0xff) ? -1 : 1;
	if ((c = hd__span_cmp(a->name, a->name_len, b->name, b->name_len)))
		return c;
	return a->dumper - b->dumper;
}

/* Names every group (into names) and sorts them by type, name, flag. */
static int name_groups(const hd_store *s, struct tab *t,
		       struct hd__intern *names)
{
	char small[256], *buf = small;
	size_t cap = sizeof(small), n, i;
	const char *aux;
	uint32_t sid;
	int rc = 0;

	for (i = 0; i < t->n && !rc; i++) {
		struct tup *u = &t->v[i];

		n = hd_store_class_name(buf, cap, s, u->rep);
		if (n >= cap) {
			if (buf != small)
				hd__free(buf, cap);
			cap = n + 1;
			if (!(buf = hd__malloc(cap)))
				return HD_ENOMEM;
			hd_store_class_name(buf, cap, s, u->rep);
		}
		rc = hd__intern_put(names, buf, n, &sid);
		u->k[1] = sid; /* the name, once the interner stops moving */
		aux = hd_store_aux(s, u->rep, &n);
		u->dumper = ((u->k[0] >> 8) & 1) ||
			    ((u->k[0] & 0xff) == HD_T_DATA && aux &&
			     n == 36 &&
			     !memcmp(aux, "ObjectTracing/allocation_info_tracer",
				     36));
	}
	if (buf != small)
		hd__free(buf, cap);
	if (rc)
		return rc;
	for (i = 0; i < t->n; i++)
		t->v[i].name = hd__intern_str(names, (uint32_t)t->v[i].k[1],
					      &t->v[i].name_len);
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_tup);
	return 0;
}

/* Lays out the section from the sorted groups, merging equal neighbours. */
static int lay_out(struct tab *t, unsigned char **img, size_t *len)
{
	size_t rows = 0, bytes = 0, i, j, r, nb;
	unsigned char *p, *q;

	for (i = 0; i < t->n; i = j) {
		for (j = i + 1; j < t->n && !cmp_tup(&t->v[i], &t->v[j]); j++)
			agg_merge(&t->v[i].a, &t->v[j].a);
		rows++;
		bytes += t->v[i].name_len;
	}
	if (bytes > UINT32_MAX)
		return HD_ELIMIT;
	*len = SS_HEAD + rows * SS_ROW + bytes;
	if (!(p = hd__malloc(*len)))
		return HD_ENOMEM;
	memset(p, 0, *len);
	hd__put_le64(p, SS_VERSION);
	hd__put_le64(p + 8, rows);
	hd__put_le64(p + 16, bytes);
	q = p + SS_HEAD;
	nb = 0;
	for (i = 0, r = 0; i < t->n; i = j, r++, q += SS_ROW) {
		const struct tup *u = &t->v[i];

		for (j = i + 1; j < t->n && !cmp_tup(u, &t->v[j]); j++)
			;
		hd__put_le32(q, (uint32_t)(u->k[0] & 0xff));
		hd__put_le32(q + 4, (u->dumper ? HD__SS_DUMPER : 0) |
					    (u->a.sat ? HD__SS_SATURATED : 0));
		hd__put_le32(q + 8, (uint32_t)nb);
		hd__put_le32(q + 12, (uint32_t)u->name_len);
		hd__put_le64(q + 16, u->a.count);
		hd__put_le64(q + 24, u->a.memsize);
		hd__put_le64(q + 32, u->a.edges);
		hd__put_le64(q + 40, u->a.traced);
		hd__put_le64(q + 48, u->a.traced ? u->a.gmin : 0);
		hd__put_le64(q + 56, u->a.gmax);
		memcpy(p + SS_HEAD + rows * SS_ROW + nb, u->name, u->name_len);
		nb += u->name_len;
	}
	*img = p;
	return 0;
}

int hd__store_stats_image(const hd_store *s, unsigned char **img,
			  size_t *len, hd_error *err)
{
	struct tab t;
	struct hd__intern names;
	int rc;

	*img = NULL;
	*len = 0;
	memset(&t, 0, sizeof(t));
	hd__hash_key_new(&t.key);
	if (hd__intern_init(&names))
		return hd__error(err, HD_ENOMEM, "out of memory");
	rc = group_nodes(s, &t, NULL, 0, 0);
	if (!rc)
		rc = name_groups(s, &t, &names);
	if (!rc)
		rc = lay_out(&t, img, len);
	tab_free(&t);
	hd__intern_free(&names);
	if (rc == HD_ELIMIT)
		return hd__error(err, rc, "class names too long for the "
					  "store's stats summary");
	if (rc)
		return hd__error(err, HD_ENOMEM, "out of memory");
	return 0;
}

uint64_t hd__store_stats_rows(const hd_store *s)
{
	return s->sec[HD__SEC_STATS] ? hd__le64(s->sec[HD__SEC_STATS] + 8) :
				       0;
}

uint64_t hd__stats_image_rows(const unsigned char *img)
{
	return hd__le64(img + 8);
}

void hd__stats_image_row(struct hd__ss_row *r, const unsigned char *p,
			 uint64_t i)
{
	const unsigned char *q = p + SS_HEAD + i * SS_ROW;

	r->type = (int)hd__le32(q);
	r->dumper = (hd__le32(q + 4) & HD__SS_DUMPER) != 0;
	r->saturated = (hd__le32(q + 4) & HD__SS_SATURATED) != 0;
	r->name = (const char *)p + SS_HEAD + hd__le64(p + 8) * SS_ROW +
		  hd__le32(q + 8);
	r->name_len = hd__le32(q + 12);
	r->count = hd__le64(q + 16);
	r->memsize = hd__le64(q + 24);
	r->edges = hd__le64(q + 32);
	r->traced = hd__le64(q + 40);
	r->gen_min = hd__le64(q + 48);
	r->gen_max = hd__le64(q + 56);
}

void hd__store_stats_row(struct hd__ss_row *r, const hd_store *s,
			 uint64_t i)
{
	hd__stats_image_row(r, s->sec[HD__SEC_STATS], i);
}
