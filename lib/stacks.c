/*
 * stacks.c - objects and memory by allocation stack or by frame
 * (heapdump stats --by stack|frame, diff --by stack).
 *
 * By stack, each object counts once, under its stack (0: none). By
 * frame, an object counts under every distinct frame of its stack, as a
 * profiler's "total": a frame twice in one stack (recursion) counts it
 * once. Both are linear: nodes are summed per stack first, then each
 * stack's sums go to its frames, a stamp per frame keeping repeats out.
 */
#include "store_format.h"

static const char no_stacks[] =
	"the dump has no allocation stacks (HeapDump.trace_allocations"
	"(stacks: true) records them; man 5 heapdump-dump, STACKS)";

/* Sums per stack (index 0: the objects without one). */
static int by_stack(uint64_t *cnt, uint64_t *mem, const hd_store *s,
		    const hd_node_id *ids, size_t nids, unsigned flags)
{
	unsigned char *dumper = NULL;
	size_t i, n = ids ? nids : hd_store_node_count(s);

	if (!(flags & HD_STATS_ALL) &&
	    !(dumper = hd__store_dumper_bitmap(s, NULL, NULL)))
		return HD_ENOMEM;
	for (i = 0; i < n; i++) {
		hd_node_id v = ids ? ids[i] : (hd_node_id)i;
		uint32_t st;

		if (v >= hd_store_node_count(s) || (dumper && hd__bit(dumper, v)))
			continue;
		st = hd_store_node_stack(s, v);
		cnt[st]++;
		hd__sat_add(&mem[st], hd_store_memsize(s, v));
	}
	hd__bitmap_free(dumper, hd_store_node_count(s));
	return 0;
}

/* Each stack's sums added to its distinct frames. */
static int to_frames(uint64_t *fcnt, uint64_t *fmem, const hd_store *s,
		     const uint64_t *cnt, const uint64_t *mem)
{
	uint32_t S = hd_store_stack_count(s), F = hd_store_frame_count(s);
	uint32_t *stamp, st, f;
	size_t k, n;

	if (!HD_ALLOC(stamp, (size_t)F + 1))
		return HD_ENOMEM;
	memset(stamp, 0, ((size_t)F + 1) * sizeof(*stamp));
	for (st = 1; st <= S; st++) {
		if (!cnt[st])
			continue;
		n = hd_store_stack_frames(s, st, &(const uint32_t *){ NULL });
		for (k = 0; k < n; k++) {
			f = hd_store_stack_frame(s, st, k);
			if (!f || f > F || stamp[f] == st)
				continue;
			stamp[f] = st;
			fcnt[f] += cnt[st];
			hd__sat_add(&fmem[f], mem[st]);
		}
	}
	fcnt[0] = cnt[0];
	fmem[0] = mem[0];
	HD_FREE(stamp, (size_t)F + 1);
	return 0;
}

static int row_cmp(const void *pa, const void *pb, void *ctx)
{
	const hd_stack_row *a = pa, *b = pb;
	int by_mem = *(const int *)ctx;
	uint64_t x = by_mem ? a->memsize : a->count;
	uint64_t y = by_mem ? b->memsize : b->count;

	if (x != y)
		return x > y ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int rows_of(hd_stack_rows *out, const uint64_t *cnt,
		   const uint64_t *mem, size_t n, int sort)
{
	size_t i, k = 0;

	for (i = 1; i < n; i++)
		k += cnt[i] != 0;
	if (!HD_ALLOC(out->rows, k ? k : 1))
		return HD_ENOMEM;
	for (i = 1; i < n; i++) {
		if (!cnt[i])
			continue;
		out->rows[out->nrows].id = (uint32_t)i;
		out->rows[out->nrows].count = cnt[i];
		out->rows[out->nrows++].memsize = mem[i];
	}
	hd__sort(out->rows, out->nrows, sizeof(*out->rows), row_cmp, &sort);
	return 0;
}

int hd_stack_stats(hd_stack_rows *out, const hd_store *s,
		   const hd_node_id *ids, size_t nids,
		   const hd_stack_options *opts, hd_error *err)
{
	hd_stack_options o = HD_STACK_OPTIONS_INIT;
	uint64_t *cnt = NULL, *mem = NULL, *fcnt = NULL, *fmem = NULL;
	size_t S, F, i;
	int rc = HD_ENOMEM;

	HD_ASSERT_ARG(out && s);
	HD_ASSERT_ARG(!opts || opts->version == HD_STACK_OPTIONS_VERSION);
	memset(out, 0, sizeof(*out));
	if (opts)
		o = *opts;
	if (!hd_store_stack_count(s))
		return hd__error(err, HD_ENOTFOUND, "%s", no_stacks);
	S = (size_t)hd_store_stack_count(s) + 1;
	F = (size_t)hd_store_frame_count(s) + 1;
	if (!HD_ALLOC(cnt, S) || !HD_ALLOC(mem, S))
		goto out;
	memset(cnt, 0, S * sizeof(*cnt));
	memset(mem, 0, S * sizeof(*mem));
	if (by_stack(cnt, mem, s, ids, nids, o.flags))
		goto out;
	for (i = 1; i < S; i++) {
		out->with += cnt[i];
		hd__sat_add(&out->with_memsize, mem[i]);
	}
	out->without = cnt[0];
	out->without_memsize = mem[0];
	if (o.by == HD_STACKS_BY_FRAME) {
		if (!HD_ALLOC(fcnt, F) || !HD_ALLOC(fmem, F))
			goto out;
		memset(fcnt, 0, F * sizeof(*fcnt));
		memset(fmem, 0, F * sizeof(*fmem));
		if (to_frames(fcnt, fmem, s, cnt, mem) ||
		    rows_of(out, fcnt, fmem, F, o.sort == HD_SORT_MEMSIZE))
			goto out;
	} else if (rows_of(out, cnt, mem, S, o.sort == HD_SORT_MEMSIZE)) {
		goto out;
	}
	out->by = o.by;
	rc = 0;
out:
	HD_FREE(cnt, cnt ? S : 0);
	HD_FREE(mem, mem ? S : 0);
	HD_FREE(fcnt, fcnt ? F : 0);
	HD_FREE(fmem, fmem ? F : 0);
	if (rc) {
		hd_stack_rows_free(out);
		return hd__error(err, rc, "out of memory");
	}
	return 0;
}

void hd_stack_rows_free(hd_stack_rows *r)
{
	if (!r)
		return;
	HD_FREE(r->rows, r->rows ? (r->nrows ? r->nrows : 1) : 0);
	memset(r, 0, sizeof(*r));
}
