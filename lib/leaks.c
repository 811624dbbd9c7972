/*
 * leaks.c - the leak model: a diff's border grouped by holder, ranked,
 * and the first few groups described (hd_leaks_build).
 *
 * A new object held by exactly one old object belongs to that holder
 * (a cache, a registry, a constant); one held by several old objects,
 * or by a root category only, is a suspect by itself. A suspect's
 * growth is the sum of its border objects' retained sets (disjoint, so
 * suspects never count an object twice), and suspects are ranked by it.
 * Groups under the minimum share are folded (hd_fold_shares). For the
 * first few: the retention path from a GC root to the holder, the
 * classes of the border objects, and the allocation sites of everything
 * they keep alive (a breadth-first search through new objects).
 * Then every suspect is put in the cluster of its path's shape
 * (clusters.c), and the clusters are ranked by what they retain.
 */
#include "clusters.h"

#include <stdlib.h>

struct suspect {
	hd_leaks_suspect pub;
	hd_root_path path;
	hd_nodes border;     /* the border objects (ascending) */
};

struct cluster {
	hd_leaks_cluster pub;
	hd_root_path path;
	char *shape;
	size_t shape_size;
};

struct hd_leaks {
	const hd_store *s;
	const hd_nodes *leak;
	hd_interface *x;
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

/* The key of a border object: its only old holder, or itself. */
static hd_node_id owner(const hd_border *b)
{
	return b->holders == 1 ? b->holder[0] : b->id;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One run of pairs with one owner summed into s. */
static void sum_run(hd_leaks *l, hd_leaks_suspect *s, const hd_border *e)
{
	s->holder = e->holders == 1 ? e->holder[0] : HD_NODE_NONE;
	s->holders = e->holders;
	s->roots = e->roots;
	if (e->id < s->first)
		s->first = e->id;
	s->border_count++;
	s->retained_count += e->retained_count;
	s->retained_memsize = hd_u64_sat_add(s->retained_memsize,
					     e->retained_memsize,
					     &l->saturated);
}

/*
 * One suspect per owner: the pairs (owner, border index) sorted by
 * owner, then summed run by run.
 */
static int group(hd_leaks *l, hd_error *err)
{
	size_t nb, i, j, k = 0;
	const hd_border *b = hd_interface_diff_border(l->x, &nb);
	uint64_t *pairs = hd__array_alloc(nb ? nb : 1, sizeof(*pairs));

	l->t.border = nb;
	l->sus = hd__array_alloc(nb ? nb : 1, sizeof(*l->sus));
	if (!pairs || !l->sus) {
		hd__free(pairs, (nb ? nb : 1) * sizeof(*pairs));
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	memset(l->sus, 0, (nb ? nb : 1) * sizeof(*l->sus));
	for (i = 0; i < nb; i++)
		pairs[i] = (uint64_t)owner(&b[i]) << 32 | i;
	qsort(pairs, nb, sizeof(*pairs), cmp_u64);
	for (i = 0; i < nb; i = j) {
		hd_leaks_suspect *s = &l->sus[k++].pub;
		hd_node_id key = (hd_node_id)(pairs[i] >> 32);

		s->first = HD_NODE_NONE;
		for (j = i; j < nb && (hd_node_id)(pairs[j] >> 32) == key;
		     j++)
			sum_run(l, s, &b[(uint32_t)pairs[j]]);
	}
	l->nsus = k;
	hd__free(pairs, (nb ? nb : 1) * sizeof(*pairs));
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
	rc = hd_reach_path(&c->path, reach,
			   l->sus[ranks[0]].pub.holder != HD_NODE_NONE ?
				   l->sus[ranks[0]].pub.holder :
				   l->sus[ranks[0]].pub.first,
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
		const hd_leaks_suspect *p = &l->sus[i].pub;

		targets[i] = p->holder != HD_NODE_NONE ? p->holder : p->first;
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

/* The suspect's border objects, then everything they reach through new
 * objects (breadth-first; seen is cleared again afterwards). */
static int keepalive(hd_leaks *l, struct suspect *sp, hd_nodes *q,
		     const unsigned char *isnew, unsigned char *seen,
		     hd_error *err)
{
	hd_leaks_suspect *p = &sp->pub;
	hd_node_id key = p->holder != HD_NODE_NONE ? p->holder : p->first;
	size_t nb, i, head = 0;
	const hd_border *b = hd_interface_diff_border(l->x, &nb);
	hd_edge_iter it;
	hd_node_id v, t;
	int rc;

	for (i = 0; i < nb; i++)
		if (owner(&b[i]) == key &&
		    (rc = node_add(&sp->border, b[i].id, err)))
			return rc;
	for (i = 0; i < sp->border.n; i++) {
		hd__bit_set(seen, sp->border.ids[i]);
		if ((rc = node_add(q, sp->border.ids[i], err)))
			return rc;
	}
	while (head < q->n) {
		hd_store_refs(l->s, q->ids[head++], &it);
		while (hd_edge_iter_next(&it, &t) == 0) {
			if (!hd__bit(isnew, t) || hd__bit(seen, t))
				continue;
			hd__bit_set(seen, t);
			if ((rc = node_add(q, t, err)))
				return rc;
		}
	}
	p->keepalive_count = q->n;
	for (i = 0; i < q->n; i++) {
		v = q->ids[i];
		hd__bit_clear(seen, v);
		p->keepalive_memsize = hd_u64_sat_add(p->keepalive_memsize,
						      hd_store_memsize(l->s, v),
						      &l->saturated);
	}
	return 0;
}

/* Counted by class and allocation site. */
static int describe(hd_leaks *l, struct suspect *sp,
		    const unsigned char *isnew, unsigned char *seen,
		    hd_error *err)
{
	hd_leaks_suspect *p = &sp->pub;
	hd_nodes q = { NULL, 0, 0 };
	int rc;

	if ((rc = keepalive(l, sp, &q, isnew, seen, err)))
		goto out;
	qsort(q.ids, q.n, sizeof(*q.ids), cmp_id);
	p->border = &sp->border;
	if ((rc = new_stats(&p->classes, HD_KEY_CLASS, -1, err)) ||
	    (rc = hd_stats_add_nodes(p->classes, l->s, &sp->border, err)) ||
	    (rc = hd_stats_finish(p->classes, err)) ||
	    (rc = new_stats(&p->sites, HD_KEY_CLASS, HD_KEY_LOCATION, err)) ||
	    (rc = hd_stats_add_nodes(p->sites, l->s, &q, err)) ||
	    (rc = hd_stats_finish(p->sites, err)))
		goto out;
out:
	hd_nodes_free(&q);
	return rc;
}

static int describe_all(hd_leaks *l, unsigned flags, size_t top,
		hd_error *err)
{
	size_t bytes = (size_t)hd_store_node_count(l->s) / 8 + 1, i;
	unsigned char *isnew = hd__calloc(bytes, 1), *seen = hd__calloc(bytes, 1);
	hd_reach *reach = NULL;
	int rc;

	if (!isnew || !seen) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < l->leak->n; i++)
		hd__bit_set(isnew, l->leak->ids[i]);
	if ((rc = hd_reach_new(&reach, l->s, flags & HD_ROOTS_SKIP_WEAK, err)))
		goto out;
	for (i = 0; i < l->t.shown; i++) {
		struct suspect *sp = &l->sus[i];
		hd_leaks_suspect *p = &sp->pub;

		if ((rc = describe(l, sp, isnew, seen, err)))
			goto out;
		rc = hd_reach_path(&sp->path, reach,
				   p->holder != HD_NODE_NONE ?
						  p->holder : p->first, err);
		if (rc && rc != HD_ENOTFOUND)
			goto out;
		p->path = rc == 0 ? &sp->path : NULL;
		rc = 0;
	}
	rc = cluster_all(l, reach, top, err);
out:
	hd_reach_free(reach);
	hd__free(isnew, bytes);
	hd__free(seen, bytes);
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

int hd_leaks_build(hd_leaks **out, const hd_store *s,
		   const hd_diff_result *d, const hd_leaks_options *opts,
		   hd_error *err)
{
	hd_leaks_options o = HD_LEAKS_OPTIONS_INIT;
	hd_interface_totals it;
	hd_leaks *l;
	int rc;

	HD_ASSERT_ARG(out && s && d);
	*out = NULL;
	if (opts)
		o = *opts;
	HD_ASSERT_ARG(o.version == HD_LEAKS_OPTIONS_VERSION);
	HD_ASSERT_ARG(o.min_share >= 0 && o.min_share <= 1);
	if (!(l = hd__calloc(1, sizeof(*l))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	l->s = s;
	l->leak = d->has_later ? &d->retained_later : &d->added;
	l->t.leak_count = l->leak->n;
	l->t.leak_memsize = d->has_later ? d->retained_later_memsize :
					   d->added_memsize;
	if ((rc = hd_interface_with_flags(&l->x, s, l->leak,
					  o.flags & HD_ROOTS_SKIP_WEAK, err)))
		goto fail;
	hd_interface_totals_get(&it, l->x);
	l->saturated = d->memsize_saturated || (int)it.memsize_saturated;
	if ((rc = group(l, err)) || (rc = fold(l, &o, err)) ||
	    (rc = describe_all(l, o.flags, o.top, err)))
		goto fail;
	l->t.saturated = (uint32_t)l->saturated;
	l->leak = NULL; /* d is not kept */
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
	n = l->t.border ? l->t.border : 1;
	for (i = 0; l->sus && i < l->nsus; i++) {
		hd_root_path_free(&l->sus[i].path);
		hd_nodes_free(&l->sus[i].border);
		hd_stats_free(l->sus[i].pub.classes);
		hd_stats_free(l->sus[i].pub.sites);
	}
	hd__free(l->sus, n * sizeof(*l->sus));
	hd_interface_free(l->x);
	hd__free(l, sizeof(*l));
}
