/*
 * stats_ns.c - the namespaces of heap_dump's count_objects over the rows
 * of a class grouping: a class is in namespace N when its name is N or
 * starts with "N::" (hd_stats_namespace).
 */
#include "hd_int.h"

#include <string.h>

int hd_stats_row_in_namespace(const hd_stats_row *r, const char *ns,
			      size_t len)
{
	return r->key_len[0] >= len && memcmp(r->key[0], ns, len) == 0 &&
	       (r->key_len[0] == len ||
		(r->key_len[0] > len + 1 && r->key[0][len] == ':' &&
		 r->key[0][len + 1] == ':'));
}

void hd_stats_namespace(hd_namespace_totals *out, const hd_stats_row *rows,
			size_t n, const char *ns, size_t len)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		if (!hd_stats_row_in_namespace(&rows[i], ns, len))
			continue;
		out->rows++;
		out->count += rows[i].count;
		if (hd__sat_add(&out->memsize, rows[i].memsize))
			out->saturated = 1;
	}
}
