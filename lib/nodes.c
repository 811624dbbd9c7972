/*
 * nodes.c - node sets filtered by the library's rules.
 */
#include "hd_int.h"

size_t hd_nodes_drop_dumper(hd_nodes *set, const hd_store *s)
{
	size_t i, k = 0;

	if (!set || !s)
		return 0;
	for (i = 0; i < set->n; i++)
		if (!hd_store_is_dumper(s, set->ids[i]))
			set->ids[k++] = set->ids[i];
	set->n = k;
	return k;
}
