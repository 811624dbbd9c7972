/*
 * store_nodes.c - prints every node of a store: its address, type and
 * the byte offset of its record in the source dump (for tests that
 * check the u64 offsets of dumps over 4 GiB).
 * usage: store_nodes STORE
 */
#include "heapdump.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	hd_store *s = NULL;
	hd_error err;
	uint32_t i, n;

	if (argc != 2) {
		fprintf(stderr, "usage: store_nodes STORE\n");
		return 2;
	}
	if (hd_store_open(&s, argv[1], &err)) {
		fprintf(stderr, "store_nodes: %s\n", err.msg);
		return 1;
	}
	n = hd_store_node_count(s);
	for (i = 0; i < n; i++)
		printf("0x%llx %s %llu\n",
		       (unsigned long long)hd_store_address(s, i),
		       hd_type_name(hd_store_type(s, i)),
		       (unsigned long long)hd_store_offset(s, i));
	hd_store_close(s);
	return 0;
}
