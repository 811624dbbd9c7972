/*
 * process.c - did the process grow outside its Ruby heap? The figures of
 * the gem's sidecars (RSS, malloc in use) against the heap's memsize,
 * first dump to last, judged by two documented thresholds
 * (HD_PROCESS_MIN_GROWTH, HD_PROCESS_MAX_HEAP_SHARE) into the one
 * sentence that leaks, diff, trend, report, serve and the gem print.
 */
#include "hd_int.h"

#include <stdio.h>
#include <string.h>

uint64_t hd_process_heap_memsize(const hd_store *s)
{
	uint32_t n = hd_store_node_count(s), v;
	uint64_t sum = 0;
	int sat = 0;

	for (v = 0; v < n; v++)
		if (!hd_store_is_dumper(s, v))
			sum = hd_u64_sat_add(sum, hd_store_memsize(s, v), &sat);
	return sum;
}

/* last - first, clamped to int64_t */
static int64_t growth(uint64_t first, uint64_t last)
{
	if (last >= first)
		return last - first > (uint64_t)INT64_MAX ?
			       INT64_MAX :
			       (int64_t)(last - first);
	return first - last > (uint64_t)INT64_MAX ? -INT64_MAX :
						    -(int64_t)(first - last);
}

/* "grew by 1.2 MB" / "shrank by 3 B" / "did not change", in the units
 * of the commands' sizes (hd_bytes_text) */
static void moved(char *buf, size_t size, int64_t d)
{
	char n[32];

	if (!d) {
		snprintf(buf, size, "did not change");
		return;
	}
	hd_bytes_text(n, sizeof(n),
		      d < 0 ? (uint64_t)(-d) : (uint64_t)d);
	snprintf(buf, size, "%s by %s", d < 0 ? "shrank" : "grew", n);
}

static void describe(hd_process_verdict *v)
{
	char rss[48], mal[48], heap[48], m[80] = "";

	moved(rss, sizeof(rss), v->rss_growth);
	moved(heap, sizeof(heap), v->heap_growth);
	if (v->has_malloc) {
		moved(mal, sizeof(mal), v->malloc_growth);
		snprintf(m, sizeof(m), " (malloc in use %s)", mal);
	}
	snprintf(v->text, sizeof(v->text),
		 "the process %s%s, the Ruby heap %s%s", rss, m, heap,
		 v->outside_ruby ? ": the growth is outside Ruby objects" : "");
}

int hd_process_judge(hd_process_verdict *out, const hd_process_sample *samples,
		     size_t n, const hd_process_options *opts, hd_error *err)
{
	static const hd_process_options defaults = HD_PROCESS_OPTIONS_INIT;
	const hd_process_sample *a, *z;
	size_t k;

	memset(out, 0, sizeof(*out));
	if (!opts)
		opts = &defaults;
	if (!samples || n < 2)
		return hd__error(err, HD_EINVAL,
				 "a process growth needs two dumps or more");
	if (opts->version != HD_PROCESS_OPTIONS_VERSION)
		return hd__error(err, HD_EINVAL,
				 "unknown hd_process_options version %u",
				 opts->version);
	if (!(opts->max_heap_share >= 0.0 && opts->max_heap_share <= 1.0))
		return hd__error(err, HD_EINVAL,
				 "max_heap_share %g is not in [0, 1]",
				 opts->max_heap_share);
	out->known = out->has_malloc = 1;
	for (k = 0; k < n; k++) {
		out->known &= samples[k].has_rss != 0;
		out->has_malloc &= samples[k].has_malloc != 0;
	}
	if (!out->known) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	a = &samples[0];
	z = &samples[n - 1];
	out->rss_growth = growth(a->rss, z->rss);
	out->heap_growth = growth(a->heap_memsize, z->heap_memsize);
	if (out->has_malloc)
		out->malloc_growth = growth(a->malloc_in_use, z->malloc_in_use);
	out->outside_ruby = out->rss_growth > 0 &&
			    (uint64_t)out->rss_growth >= opts->min_growth &&
			    (out->heap_growth <= 0 ||
			     (double)out->heap_growth <=
				     opts->max_heap_share *
					     (double)out->rss_growth);
	describe(out);
	return 0;
}
