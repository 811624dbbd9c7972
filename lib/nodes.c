/*
 * nodes.c - node sets (hd_nodes): what the set itself does (a set
 * filtered by the library's rules is the rule's: dumper.c).
 */
#include "hd_int.h"

void hd_nodes_free(hd_nodes *set)
{
	if (!set)
		return;
	hd__free(set->ids, set->cap * sizeof(*set->ids));
	set->ids = NULL;
	set->n = set->cap = 0;
}
