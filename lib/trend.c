/*
 * trend.c - growth over many dumps of one process (heapdump-trend(1)).
 *
 * Each dump arrives as a finished stats accumulator of one grouping; its
 * rows are matched to the trend's groups by their key strings (interned
 * here: a group is the tuple of its components' string ids, itself
 * interned, so the tuple's id is the group's index). A group holds N
 * counts and N memsizes; nothing else of a dump is kept, so the memory is
 * the groups', whatever the size of the dumps.
 */
#include "hd_int.h"

#include <stdio.h>

struct hd_trend {
	hd_trend_options opts;
	const char **classes;      /* opts.classes, copied (opts.nclasses) */
	size_t classes_cap;        /* items allocated */
	struct hd__intern strs;    /* key components */
	struct hd__intern tuples;  /* component ids back to back: groups */
	uint32_t *comp;            /* nkeys string ids a group */
	uint64_t *vals;            /* 2 N a group: counts, then memsizes */
	size_t ngroups;
	size_t comp_cap, vals_cap; /* items allocated */
	hd_trend_dump *dumps;      /* N */
	size_t nadded;
	int class_at;              /* the class component, or -1 */
	hd_trend_row *rows;
	size_t nrows;
	int finished;
};

static const char *const verdicts[] = { "every-step", "overall", "flat",
					"shrinks" };

const char *hd_trend_verdict_name(int verdict)
{
	return verdict >= HD_TREND_EVERY_STEP && verdict <= HD_TREND_SHRINKS ?
		       verdicts[verdict] :
		       NULL;
}

void hd_trend_free(hd_trend *t)
{
	size_t k;

	if (!t)
		return;
	for (k = 0; k < t->opts.nclasses; k++)
		hd__free((void *)t->classes[k], strlen(t->classes[k]) + 1);
	HD_FREE(t->classes, t->classes_cap);
	for (k = 0; k < t->nadded; k++)
		hd__free((void *)t->dumps[k].path,
			 strlen(t->dumps[k].path) + 1);
	HD_FREE(t->dumps, t->opts.ndumps);
	hd__intern_free(&t->strs);
	hd__intern_free(&t->tuples);
	HD_FREE(t->comp, t->comp_cap);
	HD_FREE(t->vals, t->vals_cap);
	HD_FREE(t->rows, t->nrows ? t->nrows : 1);
	hd__free(t, sizeof(*t));
}

static int check_opts(const hd_trend_options *o, int *class_at)
{
	unsigned j;

	*class_at = -1;
	if (o->version != HD_TREND_OPTIONS_VERSION || o->ndumps < 2 ||
	    o->nkeys < 1 || o->nkeys > HD_STATS_MAX_KEYS ||
	    (o->sort != HD_SORT_COUNT && o->sort != HD_SORT_MEMSIZE) ||
	    (o->nclasses && !o->classes))
		return 0;
	for (j = 0; j < o->nkeys; j++) {
		if (!hd_key_name(o->keys[j]))
			return 0;
		if (o->keys[j] == HD_KEY_CLASS && *class_at < 0)
			*class_at = (int)j;
	}
	return !o->nclasses || *class_at >= 0;
}

int hd_trend_new(hd_trend **out, const hd_trend_options *opts,
		 hd_error *err)
{
	hd_trend *t;
	size_t k;
	int class_at;

	HD_ASSERT_ARG(out && opts);
	*out = NULL;
	if (!check_opts(opts, &class_at))
		return hd__error(err, HD_EINVAL,
				 "a trend needs at least two dumps, known keys "
				 "and, to select classes, the class key");
	if (!(t = hd__calloc(1, sizeof(*t))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	t->opts = *opts;
	t->opts.classes = NULL;
	t->opts.nclasses = 0; /* the names copied so far */
	t->class_at = class_at;
	if (hd__intern_init(&t->strs) || hd__intern_init(&t->tuples) ||
	    !HD_ALLOC(t->dumps, opts->ndumps) ||
	    !HD_ALLOC(t->classes, opts->nclasses ? opts->nclasses : 1))
		goto nomem;
	t->classes_cap = opts->nclasses ? opts->nclasses : 1;
	for (k = 0; k < opts->nclasses; k++) {
		if (!(t->classes[k] = hd__strdup(opts->classes[k])))
			goto nomem;
		t->opts.nclasses++;
	}
	*out = t;
	return 0;
nomem:
	hd_trend_free(t);
	return hd__error(err, HD_ENOMEM, "out of memory");
}

int hd_trend_stats_new(hd_stats **out, const hd_trend *t, hd_error *err)
{
	hd_stats_options o = HD_STATS_OPTIONS_INIT;

	HD_ASSERT_ARG(out && t);
	o.flags = t->opts.flags & HD_STATS_ALL;
	o.ngroupings = 1;
	o.nkeys[0] = t->opts.nkeys;
	memcpy(o.keys[0], t->opts.keys, sizeof(o.keys[0]));
	return hd_stats_new(out, &o, err);
}

/* Is the row's class one of those asked for (or were none asked for)? */
static int wanted(const hd_trend *t, const hd_stats_row *r)
{
	size_t k, n;

	if (!t->opts.nclasses)
		return 1;
	n = r->key_len[t->class_at];
	for (k = 0; k < t->opts.nclasses; k++)
		if (strlen(t->classes[k]) == n &&
		    memcmp(t->classes[k], r->key[t->class_at], n) == 0)
			return 1;
	return 0;
}

/* The group of a row, made (all zeros) when it is new. */
static int group_of(hd_trend *t, const hd_stats_row *r, uint32_t *g)
{
	uint32_t ids[HD_STATS_MAX_KEYS];
	unsigned j, nk = t->opts.nkeys;
	size_t n2 = 2 * (size_t)t->opts.ndumps;

	for (j = 0; j < nk; j++)
		if (hd__intern_put(&t->strs, r->key[j], r->key_len[j], &ids[j]))
			return HD_ENOMEM;
	if (hd__intern_put(&t->tuples, (const char *)ids, nk * sizeof(*ids),
			   g))
		return HD_ENOMEM;
	if (*g < t->ngroups)
		return 0;
	if ((size_t)*g + 1 > SIZE_MAX / n2 ||
	    hd__grow((void **)&t->comp, &t->comp_cap, ((size_t)*g + 1) * nk,
		     sizeof(*t->comp)) ||
	    hd__grow((void **)&t->vals, &t->vals_cap, ((size_t)*g + 1) * n2,
		     sizeof(*t->vals)))
		return HD_ENOMEM;
	memcpy(t->comp + (size_t)*g * nk, ids, nk * sizeof(*ids));
	memset(t->vals + (size_t)*g * n2, 0, n2 * sizeof(*t->vals));
	t->ngroups++;
	return 0;
}

int hd_trend_add(hd_trend *t, hd_stats *st, const char *path,
		 const hd_dump_origin *origin, hd_error *err)
{
	static const hd_dump_origin unknown = { 0, 0, 0 };
	const hd_stats_row *rows;
	hd_trend_dump *d;
	size_t n, i, k;
	uint32_t g;

	HD_ASSERT_ARG(t && st && path && !t->finished);
	HD_ASSERT_ARG(t->nadded < t->opts.ndumps);
	rows = hd_stats_rows(st, 0, HD_SORT_COUNT, &n);
	HD_ASSERT_ARG(rows != NULL);
	k = t->nadded;
	for (i = 0; i < n; i++) {
		if (!wanted(t, &rows[i]))
			continue;
		if (group_of(t, &rows[i], &g))
			return hd__error(err, HD_ENOMEM, "out of memory");
		t->vals[(size_t)g * 2 * t->opts.ndumps + k] = rows[i].count;
		t->vals[(size_t)g * 2 * t->opts.ndumps + t->opts.ndumps + k] =
			rows[i].memsize;
	}
	d = &t->dumps[k];
	if (!(d->path = hd__strdup(path)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	hd_stats_totals_get(&d->totals, st);
	d->origin = origin ? *origin : unknown;
	t->nadded++;
	return 0;
}

/* The least-squares slope of v[0..n) over the steps 0..n-1. */
static double slope(const uint64_t *v, size_t n)
{
	double mx = (double)(n - 1) / 2, my = 0, num = 0, den = 0;
	size_t i;

	for (i = 0; i < n; i++)
		my += (double)v[i];
	my /= (double)n;
	for (i = 0; i < n; i++) {
		num += ((double)i - mx) * ((double)v[i] - my);
		den += ((double)i - mx) * ((double)i - mx);
	}
	return num / den;
}

static int every_step(const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (v[i] <= v[i - 1])
			return 0;
	return 1;
}

static int verdict(const uint64_t *c, const uint64_t *m, size_t n)
{
	if (every_step(c, n) || every_step(m, n))
		return HD_TREND_EVERY_STEP;
	if (c[n - 1] > c[0] || m[n - 1] > m[0])
		return HD_TREND_OVERALL;
	if (c[n - 1] == c[0] && m[n - 1] == m[0])
		return HD_TREND_FLAT;
	return HD_TREND_SHRINKS;
}

static int cmp_keys(const hd_trend_row *x, const hd_trend_row *y,
		    unsigned n)
{
	unsigned j;
	size_t m;
	int c;

	for (j = 0; j < n; j++) {
		m = x->key_len[j] < y->key_len[j] ? x->key_len[j] :
						     y->key_len[j];
		c = m ? memcmp(x->key[j], y->key[j], m) : 0;
		if (c)
			return c;
		if (x->key_len[j] != y->key_len[j])
			return x->key_len[j] < y->key_len[j] ? -1 : 1;
	}
	return 0;
}

/* Does x rank before y? */
static int before(const hd_trend_row *x, const hd_trend_row *y, int sort,
		  unsigned nkeys)
{
	double p = sort == HD_SORT_MEMSIZE ? x->memsize_slope : x->count_slope;
	double q = sort == HD_SORT_MEMSIZE ? y->memsize_slope : y->count_slope;

	if (x->verdict != y->verdict)
		return x->verdict < y->verdict;
	if (p != q)
		return p > q;
	p = sort == HD_SORT_MEMSIZE ? x->count_slope : x->memsize_slope;
	q = sort == HD_SORT_MEMSIZE ? y->count_slope : y->memsize_slope;
	if (p != q)
		return p > q;
	return cmp_keys(x, y, nkeys) < 0;
}

/* A stable bottom-up merge sort (reentrant); tmp holds n rows. */
static void sort_rows(hd_trend_row *v, size_t n, int sort, unsigned nkeys,
		      hd_trend_row *tmp)
{
	size_t w, i, lo, mid, hi, a, b, o;

	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			lo = i;
			mid = i + w < n ? i + w : n;
			hi = i + 2 * w < n ? i + 2 * w : n;
			a = lo;
			b = mid;
			o = lo;
			while (a < mid && b < hi)
				tmp[o++] = before(&v[b], &v[a], sort, nkeys) ?
						   v[b++] :
						   v[a++];
			while (a < mid)
				tmp[o++] = v[a++];
			while (b < hi)
				tmp[o++] = v[b++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
}

int hd_trend_finish(hd_trend *t, hd_error *err)
{
	size_t g, N, nr;
	unsigned j, nk;
	hd_trend_row *tmp = NULL, *r;
	const uint64_t *v;

	HD_ASSERT_ARG(t && !t->finished);
	if (t->nadded != t->opts.ndumps)
		return hd__error(err, HD_EINVAL, "%zu of %u dumps added",
				 t->nadded, t->opts.ndumps);
	N = t->opts.ndumps;
	nk = t->opts.nkeys;
	nr = t->ngroups ? t->ngroups : 1;
	if (!HD_ALLOC(t->rows, nr) || !HD_ALLOC(tmp, nr)) {
		HD_FREE(t->rows, nr);
		t->rows = NULL;
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	for (g = 0; g < t->ngroups; g++) {
		r = &t->rows[g];
		memset(r, 0, sizeof(*r));
		for (j = 0; j < nk; j++)
			r->key[j] = hd__intern_str(&t->strs,
						   t->comp[g * nk + j],
						   &r->key_len[j]);
		v = t->vals + g * 2 * N;
		r->count = v;
		r->memsize = v + N;
		r->count_slope = slope(v, N);
		r->memsize_slope = slope(v + N, N);
		r->verdict = verdict(v, v + N, N);
	}
	t->nrows = t->ngroups;
	sort_rows(t->rows, t->nrows, t->opts.sort, nk, tmp);
	HD_FREE(tmp, nr);
	t->finished = 1;
	return 0;
}

size_t hd_trend_ndumps(const hd_trend *t)
{
	return t ? t->nadded : 0;
}

const hd_trend_dump *hd_trend_dump_at(const hd_trend *t, size_t k)
{
	return t && k < t->nadded ? &t->dumps[k] : NULL;
}

const hd_trend_options *hd_trend_options_get(const hd_trend *t)
{
	return &t->opts;
}

const hd_trend_row *hd_trend_rows(const hd_trend *t, size_t *n_out)
{
	if (!t || !t->finished) {
		*n_out = 0;
		return NULL;
	}
	*n_out = t->nrows;
	return t->rows;
}

void hd_trend_order(hd_order_pair *pairs, const hd_trend *t)
{
	const hd_stats_totals *a;
	size_t k;
	int i;

	for (k = 0; k + 1 < t->nadded; k++) {
		memset(&pairs[k], 0, sizeof(pairs[k]));
		for (i = 0; i < 2; i++) {
			a = &t->dumps[k + (size_t)i].totals;
			pairs[k].traced[i] = a->traced > 0;
			pairs[k].generation[i] = a->traced ? a->gen_max : 0;
			pairs[k].objects[i] = a->objects;
			pairs[k].origin[i] = t->dumps[k + (size_t)i].origin;
		}
		hd__order_judge(&pairs[k]);
	}
}
