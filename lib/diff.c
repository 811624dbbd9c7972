/*
 * diff.c - the objects of a dump that are new since an earlier one, and
 * those of them still alive in a later one (the three-dump leak method).
 *
 * Identity is layered (heapdump.h, man 1 heapdump-diff): 4.0 object ids
 * first, then allocation generations, then address plus a fingerprint.
 * Node ids are in ascending address order in every store, so "the object
 * at the same address" is a merge of two sorted columns, not a lookup:
 * a diff is linear in the nodes of the dumps.
 */
#include "hd_int.h"

#include <stdlib.h>

#define NAME_MAX_LEN 512

/* One dump of the comparison. */
struct side {
	const hd_store *s;
	uint32_t n;
	int traced;         /* some node has a generation */
	uint64_t untraced;  /* nodes without one (when traced) */
	int partial;        /* no ROOT lines: a since: dump */
	int int_flags;      /* 4.0: flags may carry object_id */
	uint64_t gen_max;
	uint64_t *oid;      /* per node, 0 for none; NULL when not read */
	struct hd__map oidx; /* object_id -> node */
	int has_oidx;
};

/* An older dump p and a newer dump q under one rule set. */
struct pair {
	struct side *p, *q;
	int use_gen, use_oid;
	uint64_t G;
	uint64_t moved; /* traced objects of q that compaction moved */
	uint64_t lost;  /* objects without a generation q has more than p */
	char b1[NAME_MAX_LEN], b2[NAME_MAX_LEN];
};

static const char *const match_names[HD_MATCH__COUNT] = {
	NULL,
	"old: same object_id",
	"old: generation below G",
	"old: same address, generation and type",
	"old: same address, type, class and frozen size",
	"old (uncertain): same address, type and class",
	"old (uncertain): untraced, before is a since: dump",
	"old: untraced, allocated before tracing began (compaction moved "
	"traced objects)",
	"new: another object_id at its address",
	"new: generation above G",
	"new: address absent from before",
	"new: another object at its address",
	"excluded: the tracer's or dump_all's own",
};

const char *hd_match_name(int match)
{
	if (match < 0 || match >= HD_MATCH__COUNT || !match_names[match])
		return "unknown";
	return match_names[match];
}

static void side_init(struct side *sd, const hd_store *s)
{
	hd_store_info info;

	memset(sd, 0, sizeof(*sd));
	sd->s = s;
	sd->n = hd_store_node_count(s);
	hd_store_info_get(&info, s);
	sd->partial = info.root_categories == 0 && sd->n > 0;
	sd->int_flags = (info.features & HD_FEAT_INT_FLAGS) != 0;
	sd->traced = hd__newest_generation(s, &sd->gen_max);
	if (sd->traced) {
		hd_node_id i;

		for (i = 0; i < sd->n; i++)
			sd->untraced += hd_store_generation(s, i) == UINT64_MAX;
	}
}

static void side_free(struct side *sd)
{
	if (sd->oid)
		hd__free(sd->oid, (size_t)(sd->n ? sd->n : 1) *
					  sizeof(*sd->oid));
	if (sd->has_oidx)
		hd__map_free(&sd->oidx);
}

/*
 * Reads the object ids of a 4.0 dump from the dump the store was built
 * from. Returns 0 with sd->oid NULL when that dump cannot be read again
 * (standard input, moved or changed), 0 with sd->oid set, or an error.
 */
static int load_oids(struct side *sd, const hd_read_options *ro,
		     hd_error *err)
{
	hd_store_info info;
	hd_reader *r = NULL;
	const hd_record *rec;
	hd_error tmp;
	int rc;

	hd_store_info_get(&info, sd->s);
	if (!info.source_path || !*info.source_path ||
	    strcmp(info.source_path, "-") == 0 ||
	    hd_store_check_source(sd->s, info.source_path, &tmp))
		return 0;
	sd->oid = hd__calloc(sd->n ? sd->n : 1, sizeof(*sd->oid));
	if (!sd->oid)
		return hd__error(err, HD_ENOMEM, "out of memory");
	if ((rc = hd_reader_open(&r, info.source_path, ro, err)))
		goto fail;
	while ((rc = hd_reader_next(r, &rec, err)) == 0) {
		hd_node_id id;

		if (rec->kind != HD_REC_OBJECT ||
		    !(rec->has & HD_HAS_OBJECT_ID) ||
		    !(rec->has & HD_HAS_ADDRESS) || !rec->object_id)
			continue;
		id = hd_store_find(sd->s, rec->address);
		/* the first record of an address is the node's */
		if (id != HD_NODE_NONE &&
		    hd_store_offset(sd->s, id) == rec->offset)
			sd->oid[id] = rec->object_id;
	}
	hd_reader_free(r);
	if (rc == HD_ITEROVER)
		return 0;
fail:
	hd__free(sd->oid, (size_t)(sd->n ? sd->n : 1) * sizeof(*sd->oid));
	sd->oid = NULL;
	return rc;
}

static int index_oids(struct side *sd)
{
	uint32_t i, v;
	int found;

	if (hd__map_init(&sd->oidx, 64))
		return HD_ENOMEM;
	sd->has_oidx = 1;
	for (i = 0; i < sd->n; i++)
		if (sd->oid[i] &&
		    hd__map_put(&sd->oidx, sd->oid[i], i, &v, &found))
			return HD_ENOMEM;
	return 0;
}

/* ---- the rule ---- */

static int is_classy(int type)
{
	/* a class's own class is its metaclass, whose display name follows
	 * the class's name, which an anonymous class gets later */
	return type == HD_T_CLASS || type == HD_T_MODULE ||
	       type == HD_T_ICLASS;
}

/* Rule 3 on q and p at the same address. */
static int fingerprint(struct pair *pr, hd_node_id q, hd_node_id p)
{
	const hd_store *P = pr->p->s, *Q = pr->q->s;
	int type = hd_store_type(Q, q);
	uint32_t pb;
	size_t n1, n2;

	if (type != hd_store_type(P, p) ||
	    hd_store_generation(Q, q) != hd_store_generation(P, p))
		return HD_MATCH_NEW_REUSED;
	if (!is_classy(type)) {
		n1 = hd_store_class_name(pr->b1, sizeof(pr->b1), P, p);
		n2 = hd_store_class_name(pr->b2, sizeof(pr->b2), Q, q);
		if (n1 != n2 || strcmp(pr->b1, pr->b2) != 0)
			return HD_MATCH_NEW_REUSED;
	}
	pb = hd_store_bits(P, p);
	if (pb & HD_B_FROZEN) {
		/* an object cannot be unfrozen, nor a frozen one resized */
		if (!(hd_store_bits(Q, q) & HD_B_FROZEN) ||
		    hd_store_size(P, p) != hd_store_size(Q, q))
			return HD_MATCH_NEW_REUSED;
		return HD_MATCH_OLD_FROZEN;
	}
	return HD_MATCH_OLD_UNCERTAIN;
}

/* The verdict on q, given p, the node of the older dump at q's address
 * (or HD_NODE_NONE). *via receives the older node matched, if known. */
static int judge(struct pair *pr, hd_node_id q, hd_node_id p,
		 hd_node_id *via)
{
	const hd_store *P = pr->p->s, *Q = pr->q->s;
	uint64_t g = hd_store_generation(Q, q);
	uint32_t v;
	int m;

	*via = HD_NODE_NONE;
	if (pr->use_oid) {
		uint64_t id = pr->q->oid[q];

		if (id && hd__map_get(&pr->p->oidx, id, &v)) {
			*via = v;
			return HD_MATCH_OLD_OBJECT_ID;
		}
		/* an id, once given, stays: a different one (or none where
		 * the older object had one) is another object */
		if (p != HD_NODE_NONE && pr->p->oid[p] &&
		    pr->p->oid[p] != id)
			return HD_MATCH_NEW_OBJECT_ID;
	}
	if (pr->use_gen && g != UINT64_MAX) {
		if (g > pr->G)
			return HD_MATCH_NEW_GENERATION;
		if (p != HD_NODE_NONE && hd_store_generation(P, p) == g &&
		    hd_store_type(P, p) == hd_store_type(Q, q))
			*via = p;
		if (g < pr->G)
			return HD_MATCH_OLD_GENERATION;
		if (p == HD_NODE_NONE)
			return HD_MATCH_NEW_ABSENT;
		return *via != HD_NODE_NONE ? HD_MATCH_OLD_ADDRESS :
					      HD_MATCH_NEW_REUSED;
	}
	if (pr->use_gen && pr->p->partial) {
		/* a since: dump lists traced objects only: an untraced one
		 * was allocated before tracing began */
		*via = p;
		return HD_MATCH_OLD_PARTIAL;
	}
	m = p == HD_NODE_NONE ? HD_MATCH_NEW_ABSENT : fingerprint(pr, q, p);
	if (!HD_MATCH_IS_NEW(m))
		*via = p;
	else if (pr->use_gen && pr->moved && !pr->lost)
		/* traced dumps that compaction changed: an object without
		 * a generation was allocated before tracing began, which
		 * was before p (none appeared since); its address proves
		 * nothing */
		m = HD_MATCH_OLD_UNTRACED;
	return m;
}

/*
 * Objects without a generation are those allocated before tracing
 * began: a newer dump of the same traced process has no more of them
 * (a handful more is tolerated). Many more: tracing stopped between the
 * dumps, or the tracer lost the allocations of objects compaction moved
 * (Ruby 3.3's does); then such an object may be new.
 */
#define UNTRACED_SLACK 16

/*
 * The objects of q of a generation below G that are not where p had
 * them: at an address where p has no object of their generation and
 * type. Without compaction there are none (an object allocated before
 * p's newest generation was alive in p, at the same address). One merge
 * over both dumps' addresses.
 */
static uint64_t count_moved(const struct side *p, const struct side *q,
			    uint64_t G)
{
	hd_node_id a = 0, b;
	uint64_t n = 0;

	for (b = 0; b < q->n; b++) {
		uint64_t addr = hd_store_address(q->s, b);
		uint64_t g = hd_store_generation(q->s, b);

		if (g == UINT64_MAX || g >= G)
			continue;
		while (a < p->n && hd_store_address(p->s, a) < addr)
			a++;
		if (a >= p->n || hd_store_address(p->s, a) != addr ||
		    hd_store_generation(p->s, a) != g ||
		    hd_store_type(p->s, a) != hd_store_type(q->s, b))
			n++;
	}
	return n;
}

static void pair_init(struct pair *pr, struct side *p, struct side *q,
		      unsigned flags)
{
	pr->p = p;
	pr->q = q;
	pr->use_gen = !(flags & HD_DIFF_NO_GENERATION) && p->traced &&
		      q->traced;
	pr->use_oid = p->oid && q->oid;
	pr->G = p->gen_max;
	pr->moved = pr->use_gen ? count_moved(p, q, pr->G) : 0;
	pr->lost = pr->use_gen && q->untraced > p->untraced + UNTRACED_SLACK ?
			   q->untraced - p->untraced : 0;
}

/* Is node id the allocation tracer or an object of dump_all itself? The
 * one rule every command applies (hd_store_is_dumper). */
static int is_dumper(const hd_store *s, hd_node_id id)
{
	return hd_store_is_dumper(s, id);
}

/* ---- LATER: which new objects are still alive ---- */

/* A key that survives compaction: generation, type, class name, site. */
struct keyed {
	uint64_t key;
	hd_node_id id;
};

static uint64_t site_key(struct pair *pr, const hd_store *s, hd_node_id id)
{
	hd_site site;
	uint64_t h = hd__mix64(hd_store_generation(s, id) ^
			       (uint64_t)hd_store_type(s, id) << 56);
	size_t n = hd_store_class_name(pr->b1, sizeof(pr->b1), s, id);

	h = hd__hash_bytes(pr->b1, n < sizeof(pr->b1) ? n : sizeof(pr->b1) - 1,
			   h);
	if (hd_store_site(&site, s, id) == 0) {
		if (site.file)
			h = hd__hash_bytes(site.file, site.file_len, h ^ 1);
		if (site.method)
			h = hd__hash_bytes(site.method, site.method_len, h ^ 2);
		h = hd__mix64(h ^ site.line);
	}
	return h;
}

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Marks in alive[] the new objects of AFTER that LATER still has. pr is
 * the pair (AFTER, LATER). An object found at its address (or by object
 * id) is matched directly; with tracing, the objects of LATER that the
 * generation rule calls old but that are at no matching address were
 * moved by compaction: they are paired with the unmatched new objects
 * of AFTER by (generation, type, class, site), one for one. in_later[]
 * receives, for each object marked, its node in LATER.
 */
/* kl ids: a node id (below 2^31) and this bit */
#define MAYBE_YOUNG 0x80000000u

static int cmp_node(const void *a, const void *b)
{
	hd_node_id x = *(const hd_node_id *)a, y = *(const hd_node_id *)b;

	return x < y ? -1 : x > y;
}

/* Sets bit i of *m (n bits), made on first use. 0 or HD_ENOMEM. */
static int bitmap_set_new(unsigned char **m, uint32_t *nm, uint32_t n,
			       uint32_t i)
{
	if (!*m) {
		if (!(*m = hd__bitmap_new(n)))
			return HD_ENOMEM;
		*nm = n;
	}
	hd__bit_set(*m, i);
	return 0;
}

static int find_retained(struct pair *pr, const unsigned char *match,
			 unsigned char *alive, hd_node_id *in_later,
			 uint64_t G_before, hd_diff_result *res,
			 hd_nodes *young)
{
	const hd_store *A = pr->p->s, *L = pr->q->s;
	struct keyed *ka = NULL, *kl = NULL;
	size_t na = 0, nl = 0, ca = 0, cl = 0, i, j;
	hd_node_id l, a = 0, via;
	unsigned char *maybe = NULL; /* LATER nodes that may be young */
	uint32_t nmaybe = 0;
	int rc = 0;

	for (l = 0; l < pr->q->n; l++) {
		uint64_t addr = hd_store_address(L, l);
		hd_node_id p;
		uint64_t g;
		int m;

		while (a < pr->p->n && hd_store_address(A, a) < addr)
			a++;
		p = a < pr->p->n && hd_store_address(A, a) == addr ?
			    a : HD_NODE_NONE;
		m = judge(pr, l, p, &via);
		if (via != HD_NODE_NONE) {
			if (HD_MATCH_IS_NEW(match[via]) && !alive[via]) {
				alive[via] = 1;
				in_later[via] = l;
				if (m == HD_MATCH_OLD_UNCERTAIN ||
				    m == HD_MATCH_OLD_PARTIAL)
					alive[via] = 2;
			}
			continue;
		}
		g = hd_store_generation(L, l);
		if (young && HD_MATCH_IS_NEW(m) &&
		    (!pr->use_gen || g == UINT64_MAX || g > pr->G) &&
		    hd__nodes_push(young, l))
			goto nomem; /* born after AFTER: neither leaked nor
				       a holder */
		if (!pr->use_gen || g == UINT64_MAX || g < G_before ||
		    g > pr->G)
			continue;
		/* allocated before AFTER's dump, yet not where it was:
		 * moved (at generation G, maybe a newer object) */
		if (nl == cl && hd__grow((void **)&kl, &cl, nl + 1,
					 sizeof(*kl)))
			goto nomem;
		kl[nl].key = site_key(pr, L, l);
		/* a new verdict at AFTER's own generation (no GC since its
		 * dump) and at no address of AFTER: young unless paired */
		kl[nl++].id = l | (HD_MATCH_IS_NEW(m) ? MAYBE_YOUNG : 0);
	}
	for (i = 0; i < nl; i++) {
		if (kl[i].id & MAYBE_YOUNG && young &&
		    bitmap_set_new(&maybe, &nmaybe, pr->q->n,
					kl[i].id & ~MAYBE_YOUNG))
			goto nomem;
		kl[i].id &= ~MAYBE_YOUNG;
	}
	if (nl) {
		for (i = 0; i < pr->p->n; i++) {
			if (!HD_MATCH_IS_NEW(match[i]) || alive[i] ||
			    hd_store_generation(A, i) == UINT64_MAX)
				continue;
			if (na == ca && hd__grow((void **)&ka, &ca, na + 1,
						 sizeof(*ka)))
				goto nomem;
			ka[na].key = site_key(pr, A, (hd_node_id)i);
			ka[na++].id = (hd_node_id)i;
		}
		qsort(ka, na, sizeof(*ka), cmp_keyed);
		qsort(kl, nl, sizeof(*kl), cmp_keyed);
		for (i = j = 0; i < na && j < nl;) {
			if (ka[i].key < kl[j].key) {
				i++;
			} else if (ka[i].key > kl[j].key) {
				j++;
			} else {
				alive[ka[i].id] = 3;
				in_later[ka[i].id] = kl[j].id;
				if (maybe)
					hd__bit_clear(maybe, kl[j].id);
				res->retained_moved++;
				i++;
				j++;
			}
		}
	}
	if (maybe) {
		/* the unpaired ones were born after AFTER: in node order
		 * among the others */
		for (l = 0; l < pr->q->n; l++)
			if (hd__bit(maybe, l) && hd__nodes_push(young, l))
				goto nomem;
		if (young->n)
			qsort(young->ids, young->n, sizeof(*young->ids),
			      cmp_node);
	}
	goto out;
nomem:
	rc = HD_ENOMEM;
out:
	hd__free(ka, ca * sizeof(*ka));
	hd__free(kl, cl * sizeof(*kl));
	hd__bitmap_free(maybe, nmaybe);
	return rc;
}

static int cmp_id(const void *a, const void *b)
{
	hd_node_id x = *(const hd_node_id *)a, y = *(const hd_node_id *)b;

	return x < y ? -1 : x > y;
}

/* ---- the diff ---- */

void hd_diff_result_free(hd_diff_result *r)
{
	if (!r)
		return;
	hd_nodes_free(&r->added);
	hd_nodes_free(&r->retained);
	hd_nodes_free(&r->retained_later);
	hd_nodes_free(&r->young_later);
	hd__free(r->match, r->nmatch ? r->nmatch : 1);
	hd__free(r, sizeof(*r));
}

int hd_diff(hd_diff_result **out, const hd_store *before,
	    const hd_store *after, const hd_store *later,
	    const hd_diff_options *opts, hd_error *err)
{
	static const hd_diff_options defaults = HD_DIFF_OPTIONS_INIT;
	struct side sd[3];
	struct pair *pr = NULL;
	hd_diff_result *res = NULL;
	unsigned char *alive = NULL;
	hd_node_id *in_later = NULL;
	hd_node_id q, p, j = 0, via;
	int rc = 0, k, nsides = later ? 3 : 2;

	HD_ASSERT_ARG(before && after && out);
	if (!opts)
		opts = &defaults;
	HD_ASSERT_ARG(opts->version == HD_DIFF_OPTIONS_VERSION);
	*out = NULL;
	memset(sd, 0, sizeof(sd));
	side_init(&sd[0], before);
	side_init(&sd[1], after);
	if (later)
		side_init(&sd[2], later);
	res = hd__calloc(1, sizeof(*res));
	pr = hd__malloc(sizeof(*pr));
	if (!res || !pr)
		goto nomem;
	res->has_later = later != NULL;
	for (k = 0; k < nsides; k++)
		res->objects[k] = sd[k].n;

	/* object ids: read only when every dump is a 4.0 dump */
	if (!(opts->flags & HD_DIFF_NO_OBJECT_ID)) {
		int all = 1;

		for (k = 0; k < nsides; k++)
			all &= sd[k].int_flags;
		for (k = 0; all && k < nsides; k++) {
			if ((rc = load_oids(&sd[k], &opts->read, err)))
				goto out;
			if (!sd[k].oid)
				res->object_id_skipped = 1;
			else if (k < nsides - 1 && index_oids(&sd[k]))
				goto nomem;
		}
	}

	res->nmatch = sd[1].n;
	res->match = hd__malloc(res->nmatch ? res->nmatch : 1);
	if (!res->match)
		goto nomem;
	pair_init(pr, &sd[0], &sd[1], opts->flags);
	res->traced = pr->use_gen;
	res->generation = pr->G;
	res->moved[0] = pr->moved;
	res->untraced_grew[0] = pr->lost;
	for (q = 0; q < sd[1].n; q++) {
		uint64_t addr = hd_store_address(after, q);
		int m;

		while (j < sd[0].n && hd_store_address(before, j) < addr)
			j++;
		p = j < sd[0].n && hd_store_address(before, j) == addr ?
			    j : HD_NODE_NONE;
		m = judge(pr, q, p, &via);
		if (HD_MATCH_IS_NEW(m) && !(opts->flags & HD_DIFF_ALL) &&
		    is_dumper(after, q))
			m = HD_MATCH_EXCLUDED;
		res->match[q] = (unsigned char)m;
		res->by_match[m]++;
		if (pr->use_oid && sd[1].oid[q])
			res->object_ids++;
		if (m == HD_MATCH_OLD_OBJECT_ID || m == HD_MATCH_NEW_OBJECT_ID)
			res->rules |= HD_DIFF_RULE_OBJECT_ID;
		else if (m == HD_MATCH_OLD_GENERATION ||
			 m == HD_MATCH_NEW_GENERATION ||
			 m == HD_MATCH_OLD_UNTRACED ||
			 (pr->use_gen &&
			  hd_store_generation(after, q) != UINT64_MAX))
			res->rules |= HD_DIFF_RULE_GENERATION;
		else if (m != HD_MATCH_OLD_PARTIAL)
			res->rules |= HD_DIFF_RULE_ADDRESS;
		if (m == HD_MATCH_OLD_UNCERTAIN || m == HD_MATCH_OLD_PARTIAL)
			res->uncertain++;
		if (HD_MATCH_IS_NEW(m)) {
			if (hd__nodes_push(&res->added, q))
				goto nomem;
			res->memsize_saturated |= hd__sat_add(
				&res->added_memsize,
				hd_store_memsize(after, q));
		}
	}

	if (later) {
		alive = hd__calloc(sd[1].n ? sd[1].n : 1, 1);
		in_later = hd__array_alloc(sd[1].n ? sd[1].n : 1,
					   sizeof(*in_later));
		if (!alive || !in_later)
			goto nomem;
		pair_init(pr, &sd[1], &sd[2], opts->flags);
		res->moved[1] = pr->moved;
		res->untraced_grew[1] = pr->lost;
		if (find_retained(pr, res->match, alive, in_later,
				  sd[0].gen_max, res, &res->young_later))
			goto nomem;
		for (q = 0; q < res->young_later.n; q++)
			res->memsize_saturated |= hd__sat_add(
				&res->young_later_memsize,
				hd_store_memsize(later, res->young_later.ids[q]));
		for (q = 0; q < res->added.n; q++) {
			hd_node_id id = res->added.ids[q];

			if (!alive[id])
				continue;
			if (hd__nodes_push(&res->retained, id) ||
			    hd__nodes_push(&res->retained_later, in_later[id]))
				goto nomem;
			res->memsize_saturated |= hd__sat_add(
				&res->retained_memsize,
				hd_store_memsize(after, id));
			res->memsize_saturated |= hd__sat_add(
				&res->retained_later_memsize,
				hd_store_memsize(later, in_later[id]));
			res->retained_uncertain += alive[id] == 2;
		}
		/* one LATER node per object (find_retained pairs one for
		 * one), in address order but for the moved ones */
		if (res->retained_later.n)
			qsort(res->retained_later.ids, res->retained_later.n,
			      sizeof(*res->retained_later.ids), cmp_id);
	}
	goto out;
nomem:
	rc = hd__error(err, HD_ENOMEM, "out of memory");
out:
	for (k = 0; k < 3; k++)
		side_free(&sd[k]);
	hd__free(alive, sd[1].n ? sd[1].n : 1);
	hd__free(in_later, (size_t)(sd[1].n ? sd[1].n : 1) * sizeof(*in_later));
	hd__free(pr, sizeof(*pr));
	if (rc) {
		hd_diff_result_free(res);
		return rc;
	}
	*out = res;
	return 0;
}

/* ---- one set of AFTER followed into LATER ---- */

int hd_diff_follow(hd_nodes *out, const hd_store *after,
		   const hd_store *later, const hd_nodes *set,
		   const hd_diff_options *opts, hd_error *err)
{
	static const hd_diff_options defaults = HD_DIFF_OPTIONS_INIT;
	struct side sd[2];
	struct pair *pr = NULL;
	hd_diff_result dummy;
	unsigned char *match = NULL, *alive = NULL;
	hd_node_id *in_later = NULL;
	uint64_t gmin = UINT64_MAX;
	size_t i, na;
	int rc = 0, k;

	HD_ASSERT_ARG(after && later && set && out &&
		      (set->ids || !set->n));
	if (!opts)
		opts = &defaults;
	HD_ASSERT_ARG(opts->version == HD_DIFF_OPTIONS_VERSION);
	memset(out, 0, sizeof(*out));
	memset(sd, 0, sizeof(sd));
	memset(&dummy, 0, sizeof(dummy));
	side_init(&sd[0], after);
	side_init(&sd[1], later);
	for (i = 0; i < set->n; i++)
		if (set->ids[i] >= sd[0].n ||
		    (i && set->ids[i] <= set->ids[i - 1]))
			return hd__error(err, HD_EINVAL,
					 "the objects are not an ascending "
					 "set of nodes of the store");
	na = sd[0].n ? sd[0].n : 1;
	if (!(opts->flags & HD_DIFF_NO_OBJECT_ID) && sd[0].int_flags &&
	    sd[1].int_flags) {
		for (k = 0; k < 2; k++)
			if ((rc = load_oids(&sd[k], &opts->read, err)))
				goto out;
		if (sd[0].oid && sd[1].oid && index_oids(&sd[0]))
			goto nomem;
	}
	pr = hd__malloc(sizeof(*pr));
	match = hd__calloc(na, 1);
	alive = hd__calloc(na, 1);
	in_later = hd__array_alloc(na, sizeof(*in_later));
	if (!pr || !match || !alive || !in_later)
		goto nomem;
	for (i = 0; i < set->n; i++) {
		uint64_t g = hd_store_generation(after, set->ids[i]);

		match[set->ids[i]] = HD_MATCH_NEW_ABSENT;
		if (g != UINT64_MAX && g < gmin)
			gmin = g;
	}
	pair_init(pr, &sd[0], &sd[1], opts->flags);
	/* moved objects: those of LATER from the set's oldest generation on */
	if (find_retained(pr, match, alive, in_later,
			  gmin == UINT64_MAX ? 0 : gmin, &dummy, NULL))
		goto nomem;
	for (i = 0; i < set->n; i++)
		if (alive[set->ids[i]] &&
		    hd__nodes_push(out, in_later[set->ids[i]]))
			goto nomem;
	if (out->n)
		qsort(out->ids, out->n, sizeof(*out->ids), cmp_id);
	goto out;
nomem:
	rc = hd__error(err, HD_ENOMEM, "out of memory");
out:
	for (k = 0; k < 2; k++)
		side_free(&sd[k]);
	hd__free(match, na);
	hd__free(alive, na);
	hd__free(in_later, na * sizeof(*in_later));
	hd__free(pr, sizeof(*pr));
	if (rc)
		hd_nodes_free(out);
	return rc;
}
