/*
 * select_int.h - the insides of a selection, shared by the files that
 * make one (select.c: the grammar; select_from.c: the --from reader;
 * select_regex.c: the guard before regcomp), evaluate it (select_eval.c)
 * and explain an empty one (select_explain.c). Internal: never
 * installed, included by those files only.
 */
#ifndef HD_SELECT_INT_H
#define HD_SELECT_INT_H

#include "hd_int.h"

#include <regex.h>

enum { K_ADDRESS, K_CLASS, K_TYPE, K_FILE, K_LOCATION, K_GENERATION,
       K_FROM, K_NAME, K_VIA, K__COUNT };

/* The key names of hd_select_add, by K_ (select.c). */
HD_HIDDEN extern const char *const hd__select_keys[K__COUNT];

struct pattern {
	char *text;        /* the value as given: a name, or /regex/ */
	int is_re;
	regex_t re;
};

struct range {
	uint64_t lo, hi;
};

struct location {
	char *file;
	uint64_t line;
};

struct hd_select {
	unsigned used;             /* bit per key */
	uint64_t *addrs;           /* --address and --from, sorted at use */
	size_t naddrs, addrs_cap;
	struct pattern *classes;
	size_t nclasses, classes_cap;
	struct pattern *names;     /* --name */
	size_t nnames, names_cap;
	struct pattern *vias;      /* --via: reference names */
	size_t nvias, vias_cap;
	uint64_t from_skipped, from_first; /* of the last --from file */
	uint32_t types;            /* bit per hd_type */
	char **files;
	size_t nfiles, files_cap;
	struct location *locs;
	size_t nlocs, locs_cap;
	struct range *gens;
	size_t ngens, gens_cap;
};

/* Per-node tests with caches for what repeats: class names per (class
 * node, type), file strings per interned pointer. used: the keys tested
 * (all of the selection's, or one to explain). */
struct eval {
	const hd_select *sel;
	const hd_store *s;
	unsigned used;
	struct hd__map class_cache; /* (class id + 1) << 8 | type -> 0/1 */
	struct hd__map file_cache;  /* string pointer -> 0/1 */
	unsigned char *via;         /* --via: the nodes referenced so */
	char name[1024];
};

/* One more address (--address, --from); 0 or HD_ENOMEM. Inline, so
 * that select_from.c (which select.c calls) calls nothing of select.c. */
static inline int hd__select_add_addr(hd_select *sel, uint64_t a)
{
	if (hd__grow((void **)&sel->addrs, &sel->addrs_cap, sel->naddrs + 1,
		     sizeof(*sel->addrs)))
		return HD_ENOMEM;
	sel->addrs[sel->naddrs++] = a;
	return 0;
}
/* select_from.c: the addresses of the NDJSON file path (--from). */
HD_HIDDEN int hd__select_add_from(hd_select *sel, const char *path,
				  hd_error *err);
/* select_regex.c: refuses re[0..n) when it would hurt the C library;
 * key names the option in messages. */
HD_HIDDEN int hd__re_check(const char *key, const char *re, size_t n,
			   hd_error *err);

/* select_eval.c: the evaluation of sel over s (e->used: the keys tested,
 * all of sel's after hd__eval_init). */
HD_HIDDEN int hd__eval_init(struct eval *e, const hd_select *sel,
			    const hd_store *s);
HD_HIDDEN void hd__eval_free(struct eval *e);
/* The nodes meeting e->used, into out, or only counted in *count when
 * out is NULL; addresses that are no node counted in *miss. */
HD_HIDDEN int hd__eval_run(struct eval *e, hd_nodes *out, uint64_t *count,
			   uint64_t *miss);

#endif
