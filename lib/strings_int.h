/*
 * strings_int.h - what strings.c shares with waste.c only: the copies
 * and groups of an hd_strings, and the pass over the source dump that
 * also hands waste.c the records of other types it asked for.
 */
#ifndef HD_STRINGS_INT_H
#define HD_STRINGS_INT_H

#include "hd_int.h"

/* One STRING considered, in dump order. */
struct hd__scopy {
	hd_node_id id;
	uint32_t group;    /* HD__NONE: shared, or no value */
	uint64_t spare;    /* capacity - bytesize, 0 when not given */
};

/* One value: copies[first] is the kept copy. */
struct hd__sgroup {
	uint64_t bytesize;
	uint64_t memsize;
	uint32_t count, frozen, fstring;
	uint32_t first, first_frozen; /* copy indexes; HD__NONE */
	uint32_t enc;                 /* string id in names */
	int complete;
};

struct hd_strings {
	const hd_store *s;
	hd_strings_options o;
	struct hd__intern keys;   /* group keys: the group id is the key id */
	struct hd__intern names;  /* encodings, holders, sites */
	struct hd__sgroup *g;
	size_t ng, gcap;
	struct hd__scopy *c;
	size_t nc, ccap;
	char *buf;                /* the decoded value */
	size_t bcap;
	/* BY_SITE: the key in names of each store site, + 1 (0: not yet) */
	uint32_t *site_sub;
	uint32_t nsites;
	hd_strings_totals t;
	hd_strings_row *rows;
	size_t nrows, rcap;
	/* the store whose kept values the read takes (frees), or NULL */
	hd_store *take;
	/* waste.c: called for the records of other types */
	hd_record_cb extra;
	void *extra_payload;
};

/* A new, empty accumulator over s. */
HD_HIDDEN int hd__strings_new(hd_strings **out, const hd_store *s,
			      const hd_strings_options *o, hd_error *err);
/* Reads the records of set (ascending node ids) from s's source dump:
 * STRING ones are grouped, the others go to st->extra. */
HD_HIDDEN int hd__strings_read(hd_strings *st, const hd_nodes *set,
			       const hd_read_options *ro, hd_error *err);
/* 1 when node id of a store is left out (the dumper rule, unless ALL). */
HD_HIDDEN int hd__strings_skip(const hd_strings *st, hd_node_id id);

#endif
