/*
 * leak_attr.h - the leak's memory attributed to what holds it
 * (leak_attr.c), internal. Never installed.
 */
#ifndef HD_LEAK_ATTR_H
#define HD_LEAK_ATTR_H

#include "hd_int.h"

/* How many holders a group or a joint lists (the rest are counted). */
#define HD__ATTR_LIST 8

/*
 * One owner of leaked memory: a group of border objects with one key
 * (kind HD_SUSPECT_HOLDER, _SHARED, _ROOT), or memory that only several
 * groups together keep alive (HD_SUSPECT_JOINT).
 */
struct hd__owner {
	int kind;
	uint32_t holders;        /* old holders (HOLDER 1, SHARED n), or the
				    groups of a JOINT (at least) */
	uint32_t roots;          /* root categories holding the first border
				    object (HOLDER, SHARED, ROOT) */
	hd_nodes listed;         /* up to HD__ATTR_LIST holder objects */
	hd_nodes border;         /* its border objects (a JOINT: the objects
				    no group dominates), ascending */
	uint64_t count, memsize; /* leaked objects it retains */
	hd_nodes groups;         /* a JOINT: its groups (all of them) */
	int dead;                /* merged into another owner */
};

/* The attribution of a leak. */
struct hd__attr {
	struct hd__owner *own;
	size_t nown, cown;
	uint64_t border;                 /* leaked border objects */
	uint64_t joint;                  /* owners of kind JOINT */
	uint64_t unreached_count, unreached_memsize;
	uint64_t vm_count, vm_memsize;   /* leaked VM tables, put apart */
	uint64_t young_count, young_memsize;
	int saturated;
	unsigned char *walk;             /* store nodes: leaked or young */
	unsigned char *leaked;           /* store nodes: leaked, not VM */
	uint32_t n;                      /* store nodes */
};

/*
 * Attributes every leaked object (leak, ascending node ids of s) to
 * exactly one owner, walking through the young objects (young,
 * ascending, may be NULL): the objects of s born after the leak was
 * measured, which are neither leaked nor holders. flags: 0 or
 * HD_ROOTS_SKIP_WEAK. Owners are not sorted. 0 or HD_ENOMEM.
 */
HD_HIDDEN int hd__attr_build(struct hd__attr *a, const hd_store *s,
			     const hd_nodes *leak, const hd_nodes *young,
			     unsigned flags);
HD_HIDDEN void hd__attr_free(struct hd__attr *a);

/* The nodes the root category called name holds, a bitmap of s's
 * nodes (hd__bitmap_free with hd_store_node_count(s)), or NULL when no
 * category has that name or memory ran out. */
HD_HIDDEN unsigned char *hd__root_held(const hd_store *s, const char *name);

#endif
