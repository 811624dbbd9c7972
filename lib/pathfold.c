/*
 * pathfold.c - the runs of a path that every human output folds: a
 * chain of 2,000 closures is "(Proc -> IMEMO/env prev ->) x1000", not a
 * line of 70,000 characters.
 *
 * A hop is what hd_store_hop_text() writes for a node and the reference
 * to the next one ("IMEMO/env prev"); the target (the last node) is no
 * hop and never folds. Each hop gets a fingerprint of its text; a run is
 * a pattern of 1 to max_period hops repeated back to back, found left to
 * right, greedily: at each hop the period that covers the most hops
 * (the shorter one on a tie) is kept when it repeats at least min_count
 * times over at least min_hops hops, and the search goes on after it.
 * Fingerprints only propose: every hop of a run is compared with its
 * pattern's by text before the run is kept. O(hops x max_period^2 x
 * min_count) compares at worst, 8 bytes a hop. The same rule folds a
 * path given as text (hd_path_text_fold: a cluster's shape), its hops
 * the parts between " -> ".
 */
#define _GNU_SOURCE /* memmem */
#include "hd_int.h"

#include <string.h>

/* The hops to fold: m of them, a fingerprint each, and a comparison. */
struct hops {
	size_t m;
	uint64_t *fp;
	int (*same)(const struct hops *h, size_t a, size_t b);
	/* a path of a store */
	const hd_store *s;
	const hd_node_id *nodes;
	size_t n;
	/* a text: the offset and length of each hop */
	const char *text;
	size_t *at, *len;
};

/* The text of hop k of a path (the last node: its name alone) into buf. */
static size_t hop(char *buf, size_t size, const struct hops *h, size_t k)
{
	return hd_store_hop_text(buf, size, h->s, h->nodes[k],
				 k + 1 < h->n ? h->nodes[k + 1] :
						HD_NODE_NONE);
}

static int same_node_hop(const struct hops *h, size_t a, size_t b)
{
	char x[1024], y[1024];
	size_t lx = hop(x, sizeof(x), h, a), ly = hop(y, sizeof(y), h, b);

	if (lx != ly)
		return 0;
	return memcmp(x, y, lx < sizeof(x) ? lx : sizeof(x) - 1) == 0;
}

static int same_text_hop(const struct hops *h, size_t a, size_t b)
{
	return h->len[a] == h->len[b] &&
	       memcmp(h->text + h->at[a], h->text + h->at[b], h->len[a]) == 0;
}

/* How many times the p hops at i repeat back to back. */
static size_t repeats(const struct hops *h, size_t i, size_t p)
{
	size_t k = 1, j;

	while (i + (k + 1) * p <= h->m) {
		for (j = 0; j < p; j++)
			if (h->fp[i + k * p + j] != h->fp[i + j])
				return k;
		k++;
	}
	return k;
}

/* Confirms that hops [i, i + p*k) repeat the p at i; the repetitions
 * that do (at least 1). */
static size_t confirm(const struct hops *h, size_t i, size_t p, size_t k)
{
	size_t r, j;

	for (r = 1; r < k; r++)
		for (j = 0; j < p; j++)
			if (!h->same(h, i + j, i + r * p + j))
				return r;
	return k;
}

static int add_run(hd_path_runs *out, size_t start, size_t period, size_t count)
{
	if (hd__grow((void **)&out->runs, &out->cap, out->n + 1,
		     sizeof(*out->runs)))
		return HD_ENOMEM;
	out->runs[out->n].start = start;
	out->runs[out->n].period = period;
	out->runs[out->n].count = count;
	out->n++;
	return 0;
}

/* The one folding rule, over any hops (the header says it). */
static int fold(hd_path_runs *out, const struct hops *h,
		const hd_fold_options *opts)
{
	static const hd_fold_options defaults = HD_FOLD_OPTIONS_INIT;
	size_t i, p, k, best_p, best_k, maxp;

	if (!opts)
		opts = &defaults;
	maxp = opts->max_period ? opts->max_period : 1;
	for (i = 0; i < h->m;) {
		best_p = best_k = 0;
		for (p = 1; p <= maxp && i + 2 * p <= h->m; p++) {
			k = repeats(h, i, p);
			if (k >= 2 && p * k > best_p * best_k) {
				best_p = p;
				best_k = k;
			}
		}
		if (best_p)
			best_k = confirm(h, i, best_p, best_k);
		if (best_p && best_k >= opts->min_count &&
		    best_p * best_k >= opts->min_hops) {
			if (add_run(out, i, best_p, best_k))
				return HD_ENOMEM;
			i += best_p * best_k;
		} else {
			i++;
		}
	}
	return 0;
}

int hd_path_fold(hd_path_runs *out, const hd_store *s,
		 const hd_node_id *nodes, size_t n,
		 const hd_fold_options *opts, hd_error *err)
{
	struct hops h = { 0 };
	char buf[512];
	size_t i, len;
	int rc;

	HD_ASSERT_ARG(out && s && (nodes || !n));
	HD_ASSERT_ARG(!opts || opts->version == HD_FOLD_OPTIONS_VERSION);
	out->n = 0;
	h.m = n ? n - 1 : 0; /* the target is no hop */
	if (h.m < 2)
		return 0;
	h.s = s;
	h.nodes = nodes;
	h.n = n;
	h.same = same_node_hop;
	if (!(h.fp = hd__array_alloc(h.m, sizeof(*h.fp))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (i = 0; i < h.m; i++) {
		len = hop(buf, sizeof(buf), &h, i);
		h.fp[i] = hd__hash_bytes(buf, len < sizeof(buf) ? len :
						 sizeof(buf) - 1, len);
	}
	rc = fold(out, &h, opts);
	hd__free(h.fp, h.m * sizeof(*h.fp));
	if (rc) {
		out->n = 0;
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	return 0;
}

int hd_path_text_fold(hd_path_runs *out, const char *text, size_t len,
		      const hd_fold_options *opts, hd_error *err)
{
	struct hops h = { 0 };
	size_t i, a, m = 1;
	const char *p, *end = text + len;
	int rc = HD_ENOMEM;

	HD_ASSERT_ARG(out && (text || !len));
	HD_ASSERT_ARG(!opts || opts->version == HD_FOLD_OPTIONS_VERSION);
	out->n = 0;
	for (p = text; p && (p = memmem(p, (size_t)(end - p), " -> ", 4));
	     p += 4)
		m++;
	h.m = m - 1; /* the last part is the target */
	if (h.m < 2)
		return 0;
	h.text = text;
	h.same = same_text_hop;
	h.fp = hd__array_alloc(m, sizeof(*h.fp));
	h.at = hd__array_alloc(m, sizeof(*h.at));
	h.len = hd__array_alloc(m, sizeof(*h.len));
	if (!h.fp || !h.at || !h.len)
		goto out;
	for (i = 0, a = 0; i < m; i++) {
		p = memmem(text + a, len - a, " -> ", 4);
		h.at[i] = a;
		h.len[i] = p ? (size_t)(p - text) - a : len - a;
		h.fp[i] = hd__hash_bytes(text + a, h.len[i], h.len[i]);
		a += h.len[i] + 4;
	}
	rc = fold(out, &h, opts);
out:
	hd__free(h.fp, m * sizeof(*h.fp));
	hd__free(h.at, m * sizeof(*h.at));
	hd__free(h.len, m * sizeof(*h.len));
	if (rc) {
		out->n = 0;
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	return 0;
}

void hd_path_runs_free(hd_path_runs *r)
{
	if (!r)
		return;
	hd__free(r->runs, r->cap * sizeof(*r->runs));
	r->runs = NULL;
	r->n = r->cap = 0;
}
