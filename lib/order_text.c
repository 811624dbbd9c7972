/*
 * order_text.c - what hd_order_check() found, in words: the one text the
 * heapdump command prints (diff, leaks, interface-with --later, report)
 * and the gem raises (HeapDump::OrderError), so the two never differ.
 */
#include "hd_int.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

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
