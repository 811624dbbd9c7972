/*
 * leaks.c - the leak model: the leak's memory attributed to its owners
 * (leak_attr.c: groups of border objects by holder, and what several
 * groups hold jointly), ranked, the first few described, clustered by
 * the shape of their paths, and the verdict (hd_leaks_build).
 *
 * Every leaked object belongs to one owner, to the VM's growth, or to
 * the unreached, so the shares add up to the whole leak. For the first
 * few owners: the retention path from a GC root to the holder, the
 * classes of the border objects, and the allocation sites of everything
 * they keep alive (a breadth-first search through the leaked and young
 * objects). Then every suspect is put in the cluster of its path's
 * shape (clusters.c), the clusters are ranked by what they retain, and
 * the verdict names the first suspect, or the first cluster when
 * several suspects of one shape together hold more than any one does;
 * a leak under min_leak bytes is no significant leak.
 */
#include "clusters.h"
#include "leak_attr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the holders a joint or shared suspect's verdict names */
#define HELD_NAMED 3

struct suspect {
	hd_leaks_suspect pub;
	hd_root_path path;
	struct hd__owner *own; /* its owner in the attribution */
	hd_stack_rows *stacks;  /* what it keeps alive by stack, or NULL */
	/* a joint or shared suspect's first holders' own holders on their
	 * paths from a root (HD_NODE_NONE: a root, or none reaches it), so
	 * that the verdict names each holder by its owner's reference
	 * ("SessionCache @by_id -> Hash"), not by its class alone */
	hd_node_id held_from[HELD_NAMED];
};

struct cluster {
	hd_leaks_cluster pub;
	hd_root_path path;
	char *shape;
	size_t shape_size;
};

#define GROWTH_DUMPS 64

struct hd_leaks {
	const hd_store *s;
	int has_later;       /* "leak" (else "growth") */
	int has_growth;      /* hd_leaks_set_growth was called */
	size_t growing;      /* collections growing at every step */
	size_t ndumps;       /* the dumps they were found over */
	hd_node_id grow_id;  /* the one on the first's path, or NONE */
	hd_node_id slot_from; /* or the holder whose slot grew (a new
				 collection at each dump), or NONE */
	uint64_t grow_len[GROWTH_DUMPS];
	unsigned flags;      /* hd_leaks_options.flags */
	int new_significant; /* the new objects' verdict, before the
				growth in place was weighed */
	int new_kind;        /* and what it named first (kind, index, share) */
	size_t new_index;
	double new_share;
	hd_node_id in_id;    /* grown in place most, or NONE */
	uint64_t in_mem[GROWTH_DUMPS]; /* its memsizes */
	size_t in_shape;     /* the grown objects of its shape, it too */
	uint64_t in_shape_grew; /* their growth, summed */
	int in_has_path;
	hd_root_path in_path;
	struct hd__attr attr;
	struct suspect *sus;
	size_t nsus;
	hd_leaks_totals t;
	int saturated;
	struct cluster *cl;
	size_t ncl;
	size_t *ranks;       /* the clusters' members, cluster by cluster */
};

/* ---- grouping the border by holder ---- */

static int cmp_suspect(const void *a, const void *b)
{
	const hd_leaks_suspect *x = &((const struct suspect *)a)->pub;
	const hd_leaks_suspect *y = &((const struct suspect *)b)->pub;

	if (x->retained_memsize != y->retained_memsize)
		return x->retained_memsize < y->retained_memsize ? 1 : -1;
	if (x->retained_count != y->retained_count)
		return x->retained_count < y->retained_count ? 1 : -1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The object a suspect's path leads to: its one holder, or else its
 * first border object (through one of its holders). */
static hd_node_id target(const hd_leaks_suspect *p)
{
	return p->holder != HD_NODE_NONE ? p->holder : p->first;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One suspect per owner of the attribution, ranked. */
static int group(hd_leaks *l, hd_error *err)
{
	struct hd__attr *a = &l->attr;
	size_t i, n = a->nown ? a->nown : 1;

	l->t.border = a->border;
	l->sus = hd__array_alloc(n, sizeof(*l->sus));
	if (!l->sus)
		return hd__error(err, HD_ENOMEM, "out of memory");
	memset(l->sus, 0, n * sizeof(*l->sus));
	for (i = 0; i < a->nown; i++) {
		struct hd__owner *o = &a->own[i];
		hd_leaks_suspect *s = &l->sus[i].pub;

		l->sus[i].own = o;
		s->kind = o->kind;
		s->holder = o->kind == HD_SUSPECT_HOLDER ? o->listed.ids[0] :
							   HD_NODE_NONE;
		s->first = o->border.ids[0];
		s->holders = o->holders;
		s->roots = o->roots;
		s->border_count = o->border.n;
		s->retained_count = o->count;
		s->retained_memsize = o->memsize;
		s->holder_list = &o->listed;
		for (size_t k = 0; k < HELD_NAMED; k++)
			l->sus[i].held_from[k] = HD_NODE_NONE;
	}
	l->nsus = a->nown;
	qsort(l->sus, l->nsus, sizeof(*l->sus), cmp_suspect);
	return 0;
}

/* ---- clusters of suspects held the same way ---- */

static int cmp_cluster(const void *a, const void *b)
{
	const hd_leaks_cluster *x = &((const struct cluster *)a)->pub;
	const hd_leaks_cluster *y = &((const struct cluster *)b)->pub;

	if (x->retained_memsize != y->retained_memsize)
		return x->retained_memsize < y->retained_memsize ? 1 : -1;
	if (x->retained_count != y->retained_count)
		return x->retained_count < y->retained_count ? 1 : -1;
	return x->ranks[0] < y->ranks[0] ? -1 : x->ranks[0] > y->ranks[0];
}

/* One run of pairs (shape, rank) with one shape: cluster c. */
static void cluster_run(hd_leaks *l, struct cluster *c, const uint64_t *pairs,
			size_t n, size_t *ranks)
{
	hd_leaks_cluster *p = &c->pub;
	size_t i;

	for (i = 0; i < n; i++) {
		const hd_leaks_suspect *sp = &l->sus[(uint32_t)pairs[i]].pub;

		ranks[i] = (uint32_t)pairs[i];
		p->border_count += sp->border_count;
		p->retained_count += sp->retained_count;
		p->retained_memsize = hd_u64_sat_add(p->retained_memsize,
						     sp->retained_memsize,
						     &l->saturated);
	}
	p->suspects = n;
	p->ranks = ranks;
	p->share = l->t.leak_memsize ? (double)p->retained_memsize /
					     (double)l->t.leak_memsize :
				       0.0;
	p->reached = (uint32_t)(pairs[0] >> 32) != HD__NONE;
}

/* The representative's path and the shape's text, for a shown cluster. */
static int cluster_describe(hd_leaks *l, struct cluster *c,
			    const hd_reach *reach, hd_error *err)
{
	hd_leaks_cluster *p = &c->pub;
	const size_t *ranks = p->ranks;
	int rc;

	if (!p->reached)
		return 0;
	rc = hd_reach_path(&c->path, reach, target(&l->sus[ranks[0]].pub),
			   err);
	if (rc)
		return rc;
	p->path = &c->path;
	if (!(c->shape = hd__path_shape_text(l->s, &c->path, &c->shape_size)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	p->shape = c->shape;
	return 0;
}

/*
 * The shape of each suspect's path (to its holder, or to its border
 * object without one), then one cluster per shape, ranked.
 */
static int cluster_all(hd_leaks *l, const hd_reach *reach, size_t top,
		       hd_error *err)
{
	size_t n = l->nsus ? l->nsus : 1, i, j;
	hd_node_id *targets = hd__array_alloc(n, sizeof(*targets));
	uint32_t *shapes = hd__array_alloc(n, sizeof(*shapes));
	uint64_t *pairs = hd__array_alloc(n, sizeof(*pairs));
	int rc = 0;

	l->ranks = hd__array_alloc(n, sizeof(*l->ranks));
	l->cl = hd__calloc(n, sizeof(*l->cl));
	if (!targets || !shapes || !pairs || !l->ranks || !l->cl) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < l->nsus; i++) {
		targets[i] = target(&l->sus[i].pub);
	}
	if ((rc = hd__path_shapes(shapes, l->s, reach, targets, l->nsus,
				  err)))
		goto out;
	for (i = 0; i < l->nsus; i++)
		pairs[i] = (uint64_t)shapes[i] << 32 | i;
	qsort(pairs, l->nsus, sizeof(*pairs), cmp_u64);
	for (i = 0; i < l->nsus; i = j) {
		for (j = i; j < l->nsus && pairs[j] >> 32 == pairs[i] >> 32;
		     j++)
			;
		cluster_run(l, &l->cl[l->ncl++], pairs + i, j - i,
			    l->ranks + i);
	}
	qsort(l->cl, l->ncl, sizeof(*l->cl), cmp_cluster);
	/* paths only for the shown: the shapes of a long chain's suspects
	 * all differ, and a path each would cost the chain's length each */
	for (i = 0; i < l->ncl && i < top && !rc; i++)
		rc = cluster_describe(l, &l->cl[i], reach, err);
out:
	hd__free(targets, n * sizeof(*targets));
	hd__free(shapes, n * sizeof(*shapes));
	hd__free(pairs, n * sizeof(*pairs));
	return rc;
}

/* ---- what one suspect keeps alive ---- */

static int node_add(hd_nodes *v, hd_node_id id, hd_error *err)
{
	if (hd__nodes_push(v, id))
		return hd__error(err, HD_ENOMEM, "out of memory");
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	hd_node_id x = *(const hd_node_id *)a, y = *(const hd_node_id *)b;

	return x < y ? -1 : x > y;
}

/* An accumulator of every object (HD_STATS_ALL) by key0[,key1]. */
static int new_stats(hd_stats **st, int key0, int key1, hd_error *err)
{
	hd_stats_options so = HD_STATS_OPTIONS_INIT;

	so.flags = HD_STATS_ALL;
	so.ngroupings = 1;
	so.keys[0][so.nkeys[0]++] = key0;
	if (key1 >= 0)
		so.keys[0][so.nkeys[0]++] = key1;
	return hd_stats_new(st, &so, err);
}

/*
 * The suspect's border objects, then everything they reach through the
 * walked objects (breadth-first; seen is cleared again afterwards); the
 * leaked ones among them into *leaked.
 */
static int keepalive(hd_leaks *l, struct suspect *sp, hd_nodes *q,
		     hd_nodes *leaked, unsigned char *seen, hd_error *err)
{
	const struct hd__attr *a = &l->attr;
	const hd_nodes *border = &sp->own->border;
	hd_leaks_suspect *p = &sp->pub;
	size_t i, head = 0;
	hd_edge_iter it;
	hd_node_id v, t;
	int rc;

	for (i = 0; i < border->n; i++) {
		hd__bit_set(seen, border->ids[i]);
		if ((rc = node_add(q, border->ids[i], err)))
			return rc;
	}
	while (head < q->n) {
		hd_store_refs(l->s, q->ids[head++], &it);
		while (hd_edge_iter_next(&it, &t) == 0) {
			if (t >= a->n || !hd__bit(a->walk, t) ||
			    hd__bit(seen, t))
				continue;
			hd__bit_set(seen, t);
			if ((rc = node_add(q, t, err)))
				return rc;
		}
	}
	for (i = 0; i < q->n; i++) {
		v = q->ids[i];
		hd__bit_clear(seen, v);
		if (!hd__bit(a->leaked, v))
			continue;
		if ((rc = node_add(leaked, v, err)))
			return rc;
		p->keepalive_memsize = hd_u64_sat_add(p->keepalive_memsize,
						      hd_store_memsize(l->s, v),
						      &l->saturated);
	}
	p->keepalive_count = leaked->n;
	return 0;
}

/* What the suspect keeps alive by allocation stack, when the store has
 * stacks (stacks.c). */
static int describe_stacks(hd_leaks *l, struct suspect *sp,
			   const hd_nodes *leaked, hd_error *err)
{
	hd_stack_options o = HD_STACK_OPTIONS_INIT;
	int rc;

	if (!hd_store_stack_count(l->s))
		return 0;
	o.flags = HD_STATS_ALL; /* the leak already left them out */
	o.sort = HD_SORT_MEMSIZE;
	if (!(sp->stacks = hd__calloc(1, sizeof(*sp->stacks))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if ((rc = hd_stack_stats(sp->stacks, l->s, leaked->ids, leaked->n, &o,
				 err)))
		return rc;
	sp->pub.stacks = sp->stacks;
	return 0;
}

/* Counted by class and allocation site. */
static int describe(hd_leaks *l, struct suspect *sp, unsigned char *seen,
		    hd_error *err)
{
	hd_leaks_suspect *p = &sp->pub;
	hd_nodes q = { NULL, 0, 0 }, leaked = { NULL, 0, 0 };
	int rc;

	if ((rc = keepalive(l, sp, &q, &leaked, seen, err)))
		goto out;
	if (leaked.n)
		qsort(leaked.ids, leaked.n, sizeof(*leaked.ids), cmp_id);
	p->border = &sp->own->border;
	if ((rc = new_stats(&p->classes, HD_KEY_CLASS, -1, err)) ||
	    (rc = hd_stats_add_nodes(p->classes, l->s, p->border, err)) ||
	    (rc = hd_stats_finish(p->classes, err)) ||
	    (rc = new_stats(&p->sites, HD_KEY_CLASS, HD_KEY_LOCATION, err)) ||
	    (rc = hd_stats_add_nodes(p->sites, l->s, &leaked, err)) ||
	    (rc = hd_stats_finish(p->sites, err)) ||
	    (rc = describe_stacks(l, sp, &leaked, err)))
		goto out;
out:
	hd_nodes_free(&q);
	hd_nodes_free(&leaked);
	return rc;
}

/* A joint or shared suspect's first holders' own holders (held_from). */
static int held_from(struct suspect *sp, const hd_reach *reach,
		     hd_error *err)
{
	const hd_nodes *h = sp->pub.holder_list;
	hd_root_path hp = { 0 };
	size_t k;
	int rc = 0;

	if (sp->pub.kind != HD_SUSPECT_JOINT &&
	    sp->pub.kind != HD_SUSPECT_SHARED)
		return 0;
	for (k = 0; h && k < h->n && k < HELD_NAMED; k++) {
		rc = hd_reach_path(&hp, reach, h->ids[k], err);
		if (rc == HD_ENOTFOUND) {
			rc = 0;
			continue;
		}
		if (rc)
			break;
		if (hp.n >= 2)
			sp->held_from[k] = hp.nodes[hp.n - 2];
	}
	hd_root_path_free(&hp);
	return rc;
}

static int describe_all(hd_leaks *l, unsigned flags, size_t top,
			hd_error *err)
{
	unsigned char *seen = hd__bitmap_new(l->attr.n);
	hd_reach *reach = NULL;
	size_t i;
	int rc;

	if (!seen) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = hd_reach_new(&reach, l->s, flags & HD_ROOTS_SKIP_WEAK, err)))
		goto out;
	for (i = 0; i < l->t.shown; i++) {
		struct suspect *sp = &l->sus[i];
		hd_leaks_suspect *p = &sp->pub;

		if ((rc = describe(l, sp, seen, err)))
			goto out;
		rc = hd_reach_path(&sp->path, reach, target(p), err);
		if (rc && rc != HD_ENOTFOUND)
			goto out;
		p->path = rc == 0 ? &sp->path : NULL;
		if ((rc = held_from(sp, reach, err)))
			goto out;
	}
	rc = cluster_all(l, reach, top, err);
out:
	hd_reach_free(reach);
	hd__bitmap_free(seen, l->attr.n);
	return rc;
}

/* ---- the result ---- */

/* Folds the groups under the minimum share; the first top are shown. */
static int fold(hd_leaks *l, const hd_leaks_options *o, hd_error *err)
{
	hd_share_fold f;
	uint64_t *sizes = hd__array_alloc(l->nsus ? l->nsus : 1,
					  sizeof(*sizes));
	size_t i;

	if (!sizes)
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (i = 0; i < l->nsus; i++) {
		hd_leaks_suspect *p = &l->sus[i].pub;

		sizes[i] = p->retained_memsize;
		p->share = l->t.leak_memsize ? (double)p->retained_memsize /
						     (double)l->t.leak_memsize :
					       0.0;
	}
	hd_fold_shares(&f, sizes, l->nsus, l->t.leak_memsize, o->min_share);
	hd__free(sizes, (l->nsus ? l->nsus : 1) * sizeof(*sizes));
	if (f.folded_size == UINT64_MAX)
		l->saturated = 1;
	for (i = f.kept; i < l->nsus; i++)
		l->t.folded_count += l->sus[i].pub.retained_count;
	l->t.groups = l->nsus;
	l->t.folded = f.folded;
	l->t.folded_memsize = f.folded_size;
	l->t.shown = f.kept < o->top ? f.kept : o->top;
	l->t.more = f.kept - l->t.shown;
	return 0;
}

/*
 * The verdict: no significant leak under min_leak bytes (the VM's own
 * tables left out); else the first suspect, or the first cluster when
 * it gathers several suspects that together hold more than the first
 * suspect alone (the shape is then the suspect).
 */
/* Is the holder of a Thread's or Fiber's (what running code holds)? */
static int is_stack_object(const hd_store *s, hd_node_id v)
{
	char name[16];
	size_t n = hd_store_node_name(name, sizeof(name), s, v);

	return hd_store_type(s, v) == HD_T_DATA &&
	       ((n == 6 && !memcmp(name, "Thread", 6)) ||
		(n == 5 && !memcmp(name, "Fiber", 5)));
}

/* The most border objects a stack is taken to hold: a frame's locals
 * and temporaries are few; a Thread or Fiber that holds more of what
 * leaked holds it in its locals (Thread#[], fiber storage), which live
 * as long as it does, and that is no stack. */
#define TRANSIENT_MAX 100

/* HD_SUSPECT_TRANSIENT: only stacks hold it (mc: what machine_context
 * holds, or NULL). */
static int transient(const hd_leaks *l, const hd_leaks_suspect *p,
		     const unsigned char *mc)
{
	const hd_nodes *h = p->holder_list;
	size_t i;

	if (p->border_count > TRANSIENT_MAX)
		return 0;
	if (p->kind == HD_SUSPECT_ROOT)
		return mc && hd__bit(mc, p->first);
	if (!h || !h->n || p->holders > h->n)
		return 0;
	for (i = 0; i < h->n; i++)
		if (!is_stack_object(l->s, h->ids[i]))
			return 0;
	return 1;
}

/* Does v reference t directly? */
static int references(const hd_store *s, hd_node_id v, hd_node_id t)
{
	hd_edge_iter it;
	hd_node_id x;

	hd_store_refs(s, v, &it);
	while (hd_edge_iter_next(&it, &x) == 0)
		if (x == t)
			return 1;
	return 0;
}

/* HD_SUSPECT_EPHEMERON: its holder is an ObjectSpace::WeakKeyMap. */
static int ephemeron(const hd_leaks *l, const hd_leaks_suspect *p)
{
	static const char name[] = "ObjectSpace::WeakKeyMap";
	char buf[sizeof(name) + 1];
	size_t n;

	if (p->holder == HD_NODE_NONE)
		return 0;
	n = hd_store_node_name(buf, sizeof(buf), l->s, p->holder);
	return n == sizeof(name) - 1 && !memcmp(buf, name, n);
}

/* HD_SUSPECT_CHURN: its holder, a Hash or Array, is no longer than it
 * was in before (the object at its address, of its type and
 * generation). */
static int churn(const hd_leaks *l, const hd_store *before,
		 const hd_leaks_suspect *p)
{
	hd_node_id v = p->holder, b;
	uint64_t now, then, g, h;
	int type;

	if (!before || v == HD_NODE_NONE)
		return 0;
	type = hd_store_type(l->s, v);
	if ((type != HD_T_HASH && type != HD_T_ARRAY) ||
	    !references(l->s, v, p->first))
		return 0; /* not its entries: a joint lifted to it, say */
	b = hd_store_find(before, hd_store_address(l->s, v));
	if (b == HD_NODE_NONE || hd_store_type(before, b) != type)
		return 0;
	g = hd_store_generation(l->s, v);
	h = hd_store_generation(before, b);
	if (g != UINT64_MAX && h != UINT64_MAX && g != h)
		return 0;
	return hd_store_length(&now, l->s, v) &&
	       hd_store_length(&then, before, b) && now <= then;
}

/*
 * The verdict: the described suspects that only stacks hold, or (two
 * dumps) that only replaced what a collection held, are passed over,
 * and a WeakKeyMap's values unless no other suspect is left, or none
 * that holds min_leak while they do;
 * no significant leak when what is left, the VM's tables left out, is
 * under min_leak; else the first suspect left, or the first cluster
 * when it gathers several suspects that together hold more than that
 * suspect alone (the shape is then the suspect).
 */
static void verdict(hd_leaks *l, const hd_leaks_options *o)
{
	hd_leaks_totals *t = &l->t;
	uint64_t leak = t->leak_memsize - (t->vm_memsize < t->leak_memsize ?
						   t->vm_memsize :
						   t->leak_memsize);
	size_t i, first = l->nsus, eph = l->nsus;
	unsigned char *mc = hd__root_held(l->s, "machine_context");

	for (i = 0; i < l->nsus; i++) {
		hd_leaks_suspect *p = &l->sus[i].pub;

		p->flags = (transient(l, p, mc) ? HD_SUSPECT_TRANSIENT : 0) |
			   (churn(l, o->before, p) ? HD_SUSPECT_CHURN : 0) |
			   (ephemeron(l, p) ? HD_SUSPECT_EPHEMERON : 0);
		if (p->flags == HD_SUSPECT_EPHEMERON) {
			hd__sat_add(&t->ephemeron_memsize, p->retained_memsize);
			if (eph == l->nsus)
				eph = i;
			continue;
		}
		if (p->flags)
			hd__sat_add(&t->passed_memsize, p->retained_memsize);
		if (p->flags & HD_SUSPECT_TRANSIENT)
			hd__sat_add(&t->transient_memsize, p->retained_memsize);
		else if (p->flags & HD_SUSPECT_CHURN)
			hd__sat_add(&t->churn_memsize, p->retained_memsize);
		else if (first == l->nsus)
			first = i;
	}
	hd__bitmap_free(mc, hd_store_node_count(l->s));
	leak -= t->passed_memsize < leak ? t->passed_memsize : leak;
	/* what nothing reaches is garbage the GC has not collected yet */
	leak -= t->unreached_memsize < leak ? t->unreached_memsize : leak;
	t->min_leak = o->min_leak;
	t->significant = leak >= o->min_leak && leak > 0;
	t->first_kind = HD_LEAKS_FIRST_NONE;
	if (first == l->nsus)
		first = eph; /* only a weak map's values: name it after all */
	else if (eph < l->nsus &&
		 l->sus[first].pub.retained_memsize < o->min_leak &&
		 l->sus[eph].pub.retained_memsize >= o->min_leak)
		/* beside a weak map's values, no suspect that is a leak of
		 * its own: no holder of their keys in the leak, the values
		 * hold them (a presenter that references its model) */
		first = eph;
	if (!t->significant || first == l->nsus)
		return;
	t->first_kind = HD_LEAKS_FIRST_SUSPECT;
	t->first_index = first;
	t->first_share = l->sus[first].pub.share;
	if (l->ncl && l->cl[0].pub.suspects > 1 &&
	    l->cl[0].pub.retained_memsize > l->sus[first].pub.retained_memsize &&
	    !l->sus[l->cl[0].pub.ranks[0]].pub.flags) {
		t->first_kind = HD_LEAKS_FIRST_CLUSTER;
		t->first_index = 0;
		t->first_share = l->cl[0].pub.share;
	}
}

/* The options, of version 1 (without min_leak) or 2. */
static int options(hd_leaks_options *o, const hd_leaks_options *opts)
{
	static const hd_leaks_options defaults = HD_LEAKS_OPTIONS_INIT;

	*o = defaults;
	if (!opts)
		return 0;
	if (opts->version == 1) {
		/* the fields of version 1 only: the caller's struct ends
		 * there */
		o->flags = opts->flags;
		o->min_share = opts->min_share;
		o->top = opts->top;
		return 0;
	}
	if (opts->version != HD_LEAKS_OPTIONS_VERSION)
		return HD_EINVAL;
	*o = *opts;
	return 0;
}

int hd_leaks_build(hd_leaks **out, const hd_store *s,
		   const hd_diff_result *d, const hd_leaks_options *opts,
		   hd_error *err)
{
	hd_leaks_options o;
	const hd_nodes *leak;
	hd_leaks *l;
	int rc;

	HD_ASSERT_ARG(out && s && d);
	*out = NULL;
	HD_ASSERT_ARG(options(&o, opts) == 0);
	HD_ASSERT_ARG(o.min_share >= 0 && o.min_share <= 1);
	if (!(l = hd__calloc(1, sizeof(*l))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	l->s = s;
	l->has_later = d->has_later;
	l->flags = o.flags;
	l->in_id = HD_NODE_NONE;
	l->slot_from = HD_NODE_NONE;
	leak = d->has_later ? &d->retained_later : &d->added;
	l->t.leak_count = leak->n;
	l->t.leak_memsize = d->has_later ? d->retained_later_memsize :
					   d->added_memsize;
	if ((rc = hd__attr_build(&l->attr, s, leak,
				 d->has_later ? &d->young_later : NULL,
				 o.flags & HD_ROOTS_SKIP_WEAK))) {
		rc = hd__error(err, rc, "out of memory");
		goto fail;
	}
	l->saturated = d->memsize_saturated || l->attr.saturated;
	l->t.unreached_count = l->attr.unreached_count;
	l->t.unreached_memsize = l->attr.unreached_memsize;
	l->t.vm_count = l->attr.vm_count;
	l->t.vm_memsize = l->attr.vm_memsize;
	l->t.young_count = l->attr.young_count;
	l->t.young_memsize = l->attr.young_memsize;
	l->t.joint = l->attr.joint;
	if ((rc = group(l, err)) || (rc = fold(l, &o, err)) ||
	    (rc = describe_all(l, o.flags, o.top, err)))
		goto fail;
	verdict(l, &o);
	l->t.saturated = (uint32_t)l->saturated;
	*out = l;
	return 0;
fail:
	hd_leaks_free(l);
	return rc;
}

void hd_leaks_totals_get(hd_leaks_totals *out, const hd_leaks *l)
{
	*out = l->t;
}

const hd_leaks_suspect *hd_leaks_suspect_get(const hd_leaks *l, size_t i)
{
	return i < l->nsus ? &l->sus[i].pub : NULL;
}

size_t hd_leaks_cluster_count(const hd_leaks *l)
{
	return l->ncl;
}

const hd_leaks_cluster *hd_leaks_cluster_get(const hd_leaks *l, size_t i)
{
	return i < l->ncl ? &l->cl[i].pub : NULL;
}

void hd_leaks_free(hd_leaks *l)
{
	size_t i, n;

	if (!l)
		return;
	for (i = 0; l->cl && i < l->ncl; i++) {
		hd_root_path_free(&l->cl[i].path);
		hd__free(l->cl[i].shape, l->cl[i].shape_size);
	}
	hd__free(l->cl, (l->nsus ? l->nsus : 1) * sizeof(*l->cl));
	hd__free(l->ranks, (l->nsus ? l->nsus : 1) * sizeof(*l->ranks));
	n = l->nsus ? l->nsus : 1;
	for (i = 0; l->sus && i < l->nsus; i++) {
		hd_root_path_free(&l->sus[i].path);
		hd_stats_free(l->sus[i].pub.classes);
		hd_stats_free(l->sus[i].pub.sites);
		hd_stack_rows_free(l->sus[i].stacks);
		hd__free(l->sus[i].stacks, l->sus[i].stacks ?
						   sizeof(*l->sus[i].stacks) :
						   0);
	}
	hd__free(l->sus, n * sizeof(*l->sus));
	if (l->in_has_path)
		hd_root_path_free(&l->in_path);
	hd__attr_free(&l->attr);
	hd__free(l, sizeof(*l));
}

/* ---- the verdict in words ---- */

size_t hd_bytes_text(char *buf, size_t size, uint64_t n)
{
	static const char *const unit[] = { "B", "KB", "MB", "GB", "TB" };
	double v = (double)n;
	int u = 0, len;

	while (v >= 1000.0 && u < 4) {
		v /= 1000.0;
		u++;
	}
	if (u == 0)
		len = snprintf(buf, size, "%llu B", (unsigned long long)n);
	else
		len = snprintf(buf, size, "%.1f %s", v, unit[u]);
	return len < 0 ? 0 : (size_t)len;
}

/* A growing text: appends as snprintf would, counting what did not fit. */
struct text {
	char *buf;
	size_t size, len;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->len < t->size ? t->buf + t->len : NULL,
		      t->len < t->size ? t->size - t->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n;
}

/* One hop of a path ("Node name"), from -> to. */
static void put_hop(struct text *t, const hd_store *s, hd_node_id from,
		    hd_node_id to)
{
	size_t n = hd_store_hop_text(t->len < t->size ? t->buf + t->len : NULL,
				     t->len < t->size ? t->size - t->len : 0,
				     s, from, to);

	t->len += n;
}

/* The last hops of a path that end at v (at most HOPS of them). */
#define HOPS 3

static void put_tail(struct text *t, const hd_store *s,
		     const hd_root_path *p)
{
	size_t i = p->n > HOPS ? p->n - HOPS : 0;

	if (p->n > HOPS)
		put(t, "... -> ");
	for (; i < p->n; i++) {
		put_hop(t, s, p->nodes[i],
			i + 1 < p->n ? p->nodes[i + 1] : HD_NODE_NONE);
		if (i + 1 < p->n)
			put(t, " -> ");
	}
}

/* How a suspect is held, in words. */
static void put_held(struct text *t, const hd_leaks *l,
		     const struct suspect *sp)
{
	const hd_leaks_suspect *p = &sp->pub;
	const hd_nodes *h = p->holder_list;
	size_t i;

	switch (p->kind) {
	case HD_SUSPECT_SHARED:
	case HD_SUSPECT_JOINT:
		put(t, p->kind == HD_SUSPECT_JOINT ?
			       "held jointly by %u holders: " :
			       "each held by the same %u old objects: ",
		    p->holders);
		for (i = 0; h && i < h->n && i < HELD_NAMED; i++) {
			put(t, "%s", i ? ", " : "");
			if (sp->held_from[i] != HD_NODE_NONE) {
				put_hop(t, l->s, sp->held_from[i], h->ids[i]);
				put(t, " -> ");
			}
			put_hop(t, l->s, h->ids[i], HD_NODE_NONE);
		}
		if (p->holders > HELD_NAMED)
			put(t, ", ...");
		break;
	case HD_SUSPECT_ROOT:
		put(t, "held by a root alone");
		break;
	default:
		if (p->path)
			put_tail(t, l->s, p->path);
		else
			put_hop(t, l->s, p->holder, HD_NODE_NONE);
	}
}

/* The path of what the verdict names first, or NULL. */
static const hd_root_path *first_path(const hd_leaks *l)
{
	const hd_leaks_totals *v = &l->t;

	if (v->first_kind == HD_LEAKS_FIRST_CLUSTER)
		return l->cl[v->first_index].pub.path;
	if (v->first_kind == HD_LEAKS_FIRST_SUSPECT)
		return l->sus[v->first_index].pub.path;
	return NULL;
}

static int set_inplace(hd_leaks *l, const hd_growth *g, hd_error *err);

int hd_leaks_set_growth(hd_leaks *l, const hd_growth *g, hd_error *err)
{
	const hd_root_path *p;
	const hd_growing *x = NULL;
	size_t i, n = hd_growth_dumps(g);

	HD_ASSERT_ARG(l && g);
	if (n > GROWTH_DUMPS)
		return hd__error(err, HD_EINVAL,
				 "growth over more than %d dumps",
				 GROWTH_DUMPS);
	l->ndumps = n;
	l->grow_id = HD_NODE_NONE;
	l->slot_from = HD_NODE_NONE;
	if (n < 3) /* one step: no collection is said to grow */
		return set_inplace(l, g, err);
	l->has_growth = 1;
	l->growing = hd_growth_count(g);
	if ((p = first_path(l)) != NULL)
		for (i = p->n; i-- > 0 && !x;)
			x = hd_growth_find(g, p->nodes[i]);
	if (x) {
		l->grow_id = x->id;
		memcpy(l->grow_len, x->lengths, n * sizeof(*x->lengths));
	}
	return set_inplace(l, g, err);
}

void hd__leaks_follow_slot(hd_leaks *l, const hd_store *const *stores,
			   size_t n)
{
	const hd_root_path *p;
	hd_node_id c;

	if (!l || !l->has_growth || l->grow_id != HD_NODE_NONE ||
	    n != l->ndumps || n > GROWTH_DUMPS ||
	    l->t.first_kind == HD_LEAKS_FIRST_INPLACE ||
	    !(p = first_path(l)) || !p->n)
		return;
	if (!hd__growth_slot(stores, n, p->nodes[p->n - 1], &c, l->grow_len))
		return;
	l->grow_id = c;
	l->slot_from = p->nodes[p->n - 1];
}

/* What the verdict names first holds (0 when nothing). */
static uint64_t first_memsize(const hd_leaks *l)
{
	const hd_leaks_totals *v = &l->t;

	if (v->first_kind == HD_LEAKS_FIRST_CLUSTER)
		return l->cl[v->first_index].pub.retained_memsize;
	if (v->first_kind == HD_LEAKS_FIRST_SUSPECT)
		return l->sus[v->first_index].pub.retained_memsize;
	return 0;
}

/* Is id on p (the path of what the verdict names first)? */
static int on_path(const hd_root_path *p, hd_node_id id)
{
	size_t i;

	for (i = 0; p && i < p->n; i++)
		if (p->nodes[i] == id)
			return 1;
	return 0;
}

/* The first object that holds id (its first referrer), or NONE. */
static hd_node_id first_referrer(const hd_store *s, hd_node_id id)
{
	hd_edge_iter it;
	hd_node_id r;

	hd_store_referrers(s, id, &it);
	return hd_edge_iter_next(&it, &r) == 0 ? r : HD_NODE_NONE;
}

/* Are a and b of one shape: of one type and class, held by objects of
 * one type and class (or both by none)? */
static int same_shape(const hd_store *s, hd_node_id a, hd_node_id b)
{
	hd_node_id ra, rb;

	if (hd_store_type(s, a) != hd_store_type(s, b) ||
	    hd_store_class(s, a) != hd_store_class(s, b))
		return 0;
	ra = first_referrer(s, a);
	rb = first_referrer(s, b);
	if (ra == HD_NODE_NONE || rb == HD_NODE_NONE)
		return ra == rb;
	return hd_store_type(s, ra) == hd_store_type(s, rb) &&
	       hd_store_class(s, ra) == hd_store_class(s, rb);
}

/* The objects of g that grew in place of top's shape (top too), and
 * their growth summed into *grew: a pool's connections each with a
 * buffer appended to grow alike, and together. One pass. */
static size_t shape_growth(const hd_store *s, const hd_growth *g,
			   const hd_grown *top, uint64_t *grew)
{
	const hd_grown *x;
	size_t i, k = 0;

	*grew = 0;
	for (i = 0; (x = hd_growth_inplace_get(g, i)) != NULL; i++)
		if (x == top || same_shape(s, top->id, x->id)) {
			hd__sat_add(grew, x->last - x->first);
			k++;
		}
	return k;
}

/* How many of the objects that grew most are weighed as the first of
 * a shape (each a pass over the grown objects). */
#define SHAPE_TRIES 16

/* The grown object, of the SHAPE_TRIES that grew most, whose shape grew
 * most in all (the first of it); its objects and their growth. */
static const hd_grown *top_shape(const hd_store *s, const hd_growth *g,
				 size_t *count, uint64_t *grew)
{
	const hd_grown *best = NULL, *x;
	uint64_t sum;
	size_t i, j, k;

	*count = 0;
	*grew = 0;
	for (i = 0; i < SHAPE_TRIES && (x = hd_growth_inplace_get(g, i));
	     i++) {
		for (j = 0; j < i; j++)
			if (same_shape(s, hd_growth_inplace_get(g, j)->id,
				       x->id))
				break;
		if (j < i)
			continue; /* weighed with an earlier one */
		k = shape_growth(s, g, x, &sum);
		if (!best || sum > *grew) {
			best = x;
			*count = k;
			*grew = sum;
		}
	}
	return best;
}

/*
 * The growth in place of g: the object that grew most, with the others
 * of its shape (shape_growth), becomes what the verdict names first
 * when the new objects are under the threshold but the growth in place
 * is not, or when they grew more than the first suspect (or cluster)
 * holds and it is not on its path (a Hash holding the leak grows its
 * table too: that is the same story). Its path comes from a search of
 * its own, made only then.
 */
static int set_inplace(hd_leaks *l, const hd_growth *g, hd_error *err)
{
	hd_leaks_totals *t = &l->t;
	const hd_grown *top;
	const hd_growing *x;
	hd_reach *reach = NULL;
	uint64_t grew;
	int rc;

	if (l->in_has_path)
		hd_root_path_free(&l->in_path);
	l->in_has_path = 0;
	if (t->first_kind == HD_LEAKS_FIRST_INPLACE) { /* called again */
		t->first_kind = l->new_kind;
		t->first_index = l->new_index;
		t->first_share = l->new_share;
		t->significant = l->new_significant;
	}
	l->new_significant = t->significant;
	l->new_kind = t->first_kind;
	l->new_index = t->first_index;
	l->new_share = t->first_share;
	t->inplace_count = hd_growth_inplace_count(g);
	t->inplace_memsize = hd_growth_inplace_memsize(g);
	l->in_id = HD_NODE_NONE;
	l->in_shape = 0;
	l->in_shape_grew = 0;
	if (!(top = top_shape(l->s, g, &l->in_shape, &grew)))
		return 0;
	l->in_id = top->id;
	memcpy(l->in_mem, top->memsizes, l->ndumps * sizeof(*l->in_mem));
	l->in_shape_grew = grew;
	if (t->significant ? grew <= first_memsize(l) ||
				     on_path(first_path(l), top->id) :
			     t->inplace_memsize < t->min_leak)
		return 0;
	if ((rc = hd_reach_new(&reach, l->s, l->flags & HD_ROOTS_SKIP_WEAK,
			       err)))
		return rc;
	rc = hd_reach_path(&l->in_path, reach, top->id, err);
	hd_reach_free(reach);
	if (rc && rc != HD_ENOTFOUND)
		return rc;
	l->in_has_path = rc == 0;
	x = hd_growth_find(g, top->id);
	l->grow_id = x ? x->id : HD_NODE_NONE;
	if (x)
		memcpy(l->grow_len, x->lengths, l->ndumps * sizeof(*x->lengths));
	t->significant = 1;
	t->first_kind = HD_LEAKS_FIRST_INPLACE;
	t->first_index = 0;
	t->first_share = t->inplace_memsize ?
				 (double)grew / (double)t->inplace_memsize :
				 1.0;
	return 0;
}

size_t hd_leaks_inplace(const hd_leaks *l, hd_node_id *id,
			uint64_t *memsizes, size_t n,
			const hd_root_path **path)
{
	if (!l || l->in_id == HD_NODE_NONE)
		return 0;
	if (id)
		*id = l->in_id;
	if (memsizes)
		memcpy(memsizes, l->in_mem,
		       (n < l->ndumps ? n : l->ndumps) * sizeof(*memsizes));
	if (path)
		*path = l->in_has_path ? &l->in_path : NULL;
	return l->ndumps;
}

/* "; Hash grows at every dump: 10 -> 20 -> 30", or through a holder's
 * slot (hd__leaks_follow_slot) "; the Array that Router @handlers holds
 * grows at every dump, a new one each time: 50 -> 450 -> 850" */
static void put_growth(struct text *t, const hd_leaks *l)
{
	size_t i;

	if (!l->has_growth)
		return;
	if (l->grow_id == HD_NODE_NONE) {
		if (l->growing)
			put(t, "; %zu collection%s grow%s at every step of the "
			       "%zu dumps", l->growing,
			    l->growing == 1 ? "" : "s",
			    l->growing == 1 ? "s" : "", l->ndumps);
		else
			put(t, "; no collection grows at every step of the "
			       "%zu dumps", l->ndumps);
		return;
	}
	put(t, "; ");
	if (l->slot_from != HD_NODE_NONE) {
		/* "the Array that Router @handlers holds grows at every
		 * dump, a new one each time: 50 -> 450 -> 850" */
		put(t, "the %s that ",
		    hd_store_type(l->s, l->grow_id) == HD_T_HASH ? "Hash" :
								    "Array");
		put_hop(t, l->s, l->slot_from, l->grow_id);
		put(t, " holds grows at every dump, a new one each time: ");
		for (i = 0; i < l->ndumps; i++)
			put(t, "%s%llu", i ? " -> " : "",
			    (unsigned long long)l->grow_len[i]);
		return;
	}
	put_hop(t, l->s, l->grow_id, HD_NODE_NONE);
	put(t, " grows at every dump: ");
	for (i = 0; i < l->ndumps; i++)
		put(t, "%s%llu", i ? " -> " : "",
		    (unsigned long long)l->grow_len[i]);
}

/* What the new objects come to when they are no significant leak:
 * ": 4 objects, 192 B new in after and still alive in later; 112 B of it
 * held only by running code's stacks; the rest, 80 B, under the 2.0 KB
 * threshold" */
static void put_insignificant(struct text *t, const hd_leaks *l)
{
	const hd_leaks_totals *v = &l->t;
	uint64_t rest = v->leak_memsize - (v->vm_memsize < v->leak_memsize ?
						   v->vm_memsize :
						   v->leak_memsize);
	char a[32], b[32];

	hd_bytes_text(a, sizeof(a), rest);
	put(t, ": %llu objects, %s %s",
	    (unsigned long long)(v->leak_count - v->vm_count), a,
	    l->has_later ? "new in after and still alive in later" :
			   "new in after");
	if (v->vm_memsize) {
		hd_bytes_text(a, sizeof(a), v->vm_memsize);
		put(t, " (and %s of the VM's own tables)", a);
	}
	if (v->transient_memsize) {
		hd_bytes_text(a, sizeof(a), v->transient_memsize);
		put(t, "; %s of it held only by running code's stacks",
		    a);
	}
	if (v->churn_memsize) {
		hd_bytes_text(a, sizeof(a), v->churn_memsize);
		put(t, "; %s of it replaced what a collection held, "
			"which is no longer than in before", a);
	}
	if (v->unreached_memsize) {
		hd_bytes_text(a, sizeof(a), v->unreached_memsize);
		put(t, "; %s of it reached by nothing (garbage not "
			"yet collected)", a);
	}
	rest -= v->passed_memsize < rest ? v->passed_memsize : rest;
	rest -= v->unreached_memsize < rest ? v->unreached_memsize :
					       rest;
	hd_bytes_text(a, sizeof(a), rest);
	hd_bytes_text(b, sizeof(b), v->min_leak);
	put(t, "%s%s, under the %s threshold",
	    rest != v->leak_memsize - v->vm_memsize ? "; the rest, " :
						       "",
	    rest != v->leak_memsize - v->vm_memsize ? a : "", b);
}

/* "String held by Connection": id's shape (same_shape) */
static void put_shape(struct text *t, const hd_store *s, hd_node_id id)
{
	char a[128], b[128];
	hd_node_id r = first_referrer(s, id);

	hd_store_node_name(a, sizeof(a), s, id);
	put(t, "%s", a);
	if (r == HD_NODE_NONE)
		return;
	hd_store_node_name(b, sizeof(b), s, r);
	put(t, " held by %s", b);
}

/* "growth in place: ... -> Hash grew at every dump: 48.2 KB -> 2.3 MB ->
 * 4.6 MB (+4.6 MB; length 1000 -> 51000 -> 101000); 2 old objects grew
 * in place by 5.7 MB in all; the new objects are no significant leak: 4
 * objects, 192 B new in after and still alive in later, under the 2.0 KB
 * threshold" */
static void put_inplace(struct text *t, const hd_leaks *l)
{
	const hd_leaks_totals *v = &l->t;
	uint64_t rest = v->leak_memsize - (v->vm_memsize < v->leak_memsize ?
						   v->vm_memsize :
						   v->leak_memsize);
	char a[32];
	size_t i;

	put(t, "growth in place: ");
	if (l->in_has_path)
		put_tail(t, l->s, &l->in_path);
	else
		put_hop(t, l->s, l->in_id, HD_NODE_NONE);
	put(t, " grew at every dump: ");
	for (i = 0; i < l->ndumps; i++) {
		hd_bytes_text(a, sizeof(a), l->in_mem[i]);
		put(t, "%s%s", i ? " -> " : "", a);
	}
	hd_bytes_text(a, sizeof(a), l->in_mem[l->ndumps - 1] - l->in_mem[0]);
	put(t, " (+%s", a);
	if (l->grow_id == l->in_id) {
		put(t, "; length ");
		for (i = 0; i < l->ndumps; i++)
			put(t, "%s%llu", i ? " -> " : "",
			    (unsigned long long)l->grow_len[i]);
	}
	put(t, ")");
	if (l->in_shape > 1) {
		hd_bytes_text(a, sizeof(a), l->in_shape_grew);
		put(t, "; %llu objects of its shape (",
		    (unsigned long long)l->in_shape);
		put_shape(t, l->s, l->in_id);
		put(t, ") grew by %s in all", a);
	}
	if (v->inplace_count > 1) {
		hd_bytes_text(a, sizeof(a), v->inplace_memsize);
		put(t, "; %llu old objects grew in place by %s in all",
		    (unsigned long long)v->inplace_count, a);
	}
	if (!l->new_significant) {
		put(t, "; the new objects are no significant leak");
		put_insignificant(t, l);
		return;
	}
	hd_bytes_text(a, sizeof(a), rest);
	put(t, "; the new objects %s: %llu objects, %s",
	    l->has_later ? "still alive in later" : "of after",
	    (unsigned long long)(v->leak_count - v->vm_count), a);
	if (l->new_kind == HD_LEAKS_FIRST_SUSPECT) {
		const hd_leaks_suspect *p = &l->sus[l->new_index].pub;

		put(t, ", suspect %zu holding %.1f%% of them: ",
		    l->new_index + 1, 100.0 * p->share);
		put_held(t, l, &l->sus[l->new_index]);
	} else if (l->new_kind == HD_LEAKS_FIRST_CLUSTER) {
		const hd_leaks_cluster *c = &l->cl[l->new_index].pub;

		put(t, ", cluster %zu of %zu suspects holding %.1f%% of them",
		    l->new_index + 1, c->suspects, 100.0 * c->share);
	}
}

/* "; finalizers keep alive what they reference: ..." when path starts
 * at the finalizer table (its root category, listed by 3.1 to 3.3 and
 * put back by the store on 3.4 and later, heapdump-dump(5)) */
static void put_finalizers(struct text *t, const hd_leaks *l,
			   const hd_root_path *path)
{
	const char *root;

	if (!path || !(root = hd_store_root_name(l->s, path->root)) ||
	    strcmp(root, "finalizers") != 0)
		return;
	put(t, "; held by finalizers, which keep alive what they "
	       "reference: a finalizer that references its own object (a "
	       "proc made where self is in scope, or a callable object "
	       "given it) keeps it for ever");
}

/* outside: the process grew outside Ruby objects
 * (hd_leaks_verdict_text_process) */
static size_t verdict_text(char *buf, size_t size, const hd_leaks *l,
			   int outside)
{
	const hd_leaks_totals *v = &l->t;
	const char *what = l->has_later ? "leak" : "growth";
	struct text t = { buf, size, 0 };
	char a[32];

	if (size)
		buf[0] = 0;
	if (!v->significant) {
		if (outside)
			put(&t, "the %s is not in the Ruby heap", what);
		else
			put(&t, "no significant %s", what);
		put_insignificant(&t, l);
		put_growth(&t, l);
		return t.len;
	}
	if (v->first_kind == HD_LEAKS_FIRST_INPLACE) {
		put_inplace(&t, l);
		return t.len;
	}
	if (v->first_kind == HD_LEAKS_FIRST_CLUSTER) {
		const hd_leaks_cluster *c = &l->cl[v->first_index].pub;

		hd_bytes_text(a, sizeof(a), c->retained_memsize);
		put(&t, "cluster %zu: %zu suspects of one shape hold %.1f%% of "
			"the %s (%s)", v->first_index + 1, c->suspects,
		    100.0 * c->share, what, a);
		if (c->shape)
			put(&t, ": %s", c->shape);
		put_finalizers(&t, l, c->path);
		put_growth(&t, l);
		return t.len;
	}
	if (v->first_kind == HD_LEAKS_FIRST_SUSPECT) {
		const hd_leaks_suspect *p = &l->sus[v->first_index].pub;

		hd_bytes_text(a, sizeof(a), p->retained_memsize);
		put(&t, "suspect %zu holds %.1f%% of the %s (%llu objects, "
			"%s): ", v->first_index + 1, 100.0 * p->share, what,
		    (unsigned long long)p->retained_count, a);
		put_held(&t, l, &l->sus[v->first_index]);
		if (v->ephemeron_memsize && !(p->flags & HD_SUSPECT_EPHEMERON)) {
			hd_bytes_text(a, sizeof(a), v->ephemeron_memsize);
			put(&t, "; %s more is the values of a WeakKeyMap, alive "
				"as long as their keys, which the dump does not "
				"list", a);
		}
		put_finalizers(&t, l, p->path);
		put_growth(&t, l);
		return t.len;
	}
	put(&t, "a %s without a suspect: no old object or root holds "
		"what is new", what);
	return t.len;
}

size_t hd_leaks_verdict_text(char *buf, size_t size, const hd_leaks *l)
{
	return verdict_text(buf, size, l, 0);
}

size_t hd_leaks_verdict_text_process(char *buf, size_t size,
				     const hd_leaks *l,
				     const hd_process_verdict *proc)
{
	return verdict_text(buf, size, l,
			    proc && proc->known && proc->outside_ruby);
}
