/*
 * order.c - the order and identity of a sequence of dumps: what
 * hd_order_check() finds for each pair (two processes, generation or
 * time going back, reversed; hd__order_judge, which trend.c also uses),
 * and the same in words (hd_order_text): the one text the heapdump
 * command prints (diff, leaks, interface-with --later, report) and the
 * gem raises (HeapDump::OrderError), so the two never differ.
 */
#include "hd_int.h"

#include <stdio.h>
#include <string.h>

/* ---- the judgement ---- */

int hd__newest_generation(const hd_store *s, uint64_t *gen)
{
	uint32_t i, n = hd_store_node_count(s);
	int traced = 0;

	*gen = 0;
	for (i = 0; i < n; i++) {
		uint64_t g = hd_store_generation(s, i);

		if (g == UINT64_MAX)
			continue;
		if (!traced || g > *gen)
			*gen = g;
		traced = 1;
	}
	return traced;
}

/* Addresses both stores have: a merge of the two ascending columns. */
static uint64_t shared_addresses(const hd_store *p, const hd_store *q)
{
	uint32_t np = hd_store_node_count(p), nq = hd_store_node_count(q);
	uint32_t i = 0, j = 0;
	uint64_t n = 0;

	while (i < np && j < nq) {
		uint64_t a = hd_store_address(p, i), b = hd_store_address(q, j);

		if (a < b) {
			i++;
		} else if (a > b) {
			j++;
		} else {
			n++;
			i++;
			j++;
		}
	}
	return n;
}

/* under a tenth of the smaller dump, of dumps of 1,000 objects or more */
#define FEW_SHARED_MIN_OBJECTS 1000
#define FEW_SHARED_FRACTION 10

int hd_order_check(hd_order_pair *pairs,
		   const hd_store *const *stores, const hd_dump_origin *origins,
		   size_t n, hd_error *err)
{
	static const hd_dump_origin unknown = { 0, 0, 0 };
	size_t k;

	(void)err;
	HD_ASSERT_ARG(stores && pairs && n >= 2);
	for (k = 0; k < n; k++)
		HD_ASSERT_ARG(stores[k] != NULL);
	for (k = 0; k + 1 < n; k++) {
		hd_order_pair *op = &pairs[k];
		uint64_t small;
		int i;

		memset(op, 0, sizeof(*op));
		for (i = 0; i < 2; i++) {
			op->traced[i] = hd__newest_generation(
				stores[k + i], &op->generation[i]);
			op->objects[i] = hd_store_node_count(stores[k + i]);
			op->origin[i] = origins ? origins[k + i] : unknown;
		}
		op->shared = shared_addresses(stores[k], stores[k + 1]);
		small = op->objects[0] < op->objects[1] ? op->objects[0] :
							  op->objects[1];
		if (small >= FEW_SHARED_MIN_OBJECTS &&
		    op->shared * FEW_SHARED_FRACTION < small)
			op->flags |= HD_ORDER_FEW_SHARED;
		hd__order_judge(op);
	}
	return 0;
}

void hd__order_judge(hd_order_pair *op)
{
	int one_process;

	if (op->origin[0].pid && op->origin[1].pid &&
	    op->origin[0].pid != op->origin[1].pid)
		op->flags |= HD_ORDER_OTHER_PROCESS;
	one_process = !(op->flags & (HD_ORDER_FEW_SHARED |
				     HD_ORDER_OTHER_PROCESS));
	if (op->traced[0] && op->traced[1] &&
	    op->generation[1] < op->generation[0])
		op->flags |= HD_ORDER_GENERATION_BACKWARDS;
	if (op->origin[0].time_us && op->origin[1].time_us &&
	    op->origin[1].time_us < op->origin[0].time_us &&
	    !(op->flags & HD_ORDER_OTHER_PROCESS))
		op->flags |= HD_ORDER_TIME_BACKWARDS;
	if (one_process &&
	    op->flags & (HD_ORDER_GENERATION_BACKWARDS |
			 HD_ORDER_TIME_BACKWARDS))
		op->flags |= HD_ORDER_REVERSED;
	if (op->origin[0].compactions && op->origin[1].compactions &&
	    op->origin[1].compactions > op->origin[0].compactions &&
	    !(op->flags & HD_ORDER_OTHER_PROCESS))
		op->flags |= HD_ORDER_COMPACTED;
}

/* ---- in words ---- */

static int reversed_text(char *buf, size_t size, const hd_order_pair *p,
			 const char *first, const char *second,
			 const char *t0, const char *t1, int force)
{
	char why[512];

	if (p->flags & HD_ORDER_TIME_BACKWARDS)
		snprintf(why, sizeof(why),
			 "by their sidecars '%s' was taken at %s, before '%s' "
			 "(%s)", second, t1, first, t0);
	else
		snprintf(why, sizeof(why),
			 "the newest allocation generation goes back from "
			 "%llu in '%s' to %llu in '%s' (GC.count never goes "
			 "back in a process; or nothing allocated since '%s' "
			 "is alive in '%s')",
			 (unsigned long long)p->generation[0], first,
			 (unsigned long long)p->generation[1], second, first,
			 second);
	if (force)
		return snprintf(buf, size,
				"warning: '%s' and '%s' seem to be in the "
				"wrong order: %s; compared as given (--force)",
				first, second, why);
	return snprintf(buf, size,
			"'%s' and '%s' seem to be in the wrong order: %s; "
			"give the dumps oldest first, or --force to "
			"compare them as given",
			first, second, why);
}

int hd_order_text(char *buf, size_t size, const hd_order_pair *p,
		  unsigned int finding, const char *first, const char *second,
		  const char *t0, const char *t1, int force)
{
	char a[32], b[32];

	if (!buf || !size || !p || !first || !second)
		return -1;
	buf[0] = '\0';
	if (!(p->flags & finding))
		return 0;
	switch (finding) {
	case HD_ORDER_OTHER_PROCESS:
		return snprintf(buf, size,
				"warning: '%s' (pid %llu) and '%s' (pid %llu) "
				"are dumps of two different processes, by "
				"their sidecars: the objects of one are all "
				"new to the other",
				first, (unsigned long long)p->origin[0].pid,
				second, (unsigned long long)p->origin[1].pid);
	case HD_ORDER_FEW_SHARED:
		return snprintf(buf, size,
				"warning: '%s' and '%s' have only %s of %s "
				"addresses in common: dumps of two different "
				"processes? (or a compaction moved nearly "
				"everything between them); between two "
				"processes every object looks new",
				first, second, hd__commas(p->shared, a),
				hd__commas(p->objects[0] < p->objects[1] ?
					       p->objects[0] :
					       p->objects[1],
				       b));
	case HD_ORDER_REVERSED:
		return reversed_text(buf, size, p, first, second,
				     t0 ? t0 : "", t1 ? t1 : "", force);
	default:
		return -1;
	}
}
