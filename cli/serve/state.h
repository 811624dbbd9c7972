/*
 * state.h - heapdump serve's per-process state (state.c): the inputs
 * opened, the analyses every request reads, and what a page needs
 * computed on the first request that needs it (the objects' order by
 * retained size and class index, the string values and their search).
 * Private to cli/serve/: api.c answers from it, draw.c reads it through
 * the serve_state_* accessors of serve.h.
 */
#ifndef CLI_SERVE_STATE_H
#define CLI_SERVE_STATE_H

#include "../common.h"
#include "../process.h"
#include "../sidecar.h"
#include "serve.h"

#include <pthread.h>
#include <string.h>

#define NGROUPS 7

/* the groupings serve shows, by index (1: class, 3: location) */
extern const int serve_group_keys[NGROUPS];

/* A grouping's rows as the requests read them: the stats' rows in
 * their order by count (never sorted again after the start), and the
 * other orders as indexes into them. */
struct gview {
	const hd_stats_row *rows;
	size_t n;
	size_t *by_mem;           /* by memsize, count, key */
	size_t *by_key;           /* by key, ascending */
	size_t *by_ret;           /* by class: retained memsize, key */
	uint64_t *ret;            /* by class: each row's retained memsize */
	hd_text_search *ts;       /* the keys, searched case aside */
};

/* A part computed once, by the first request that needs it (under
 * lock; rc its result, kept). */
struct serve_once {
	pthread_mutex_t lock;
	int done;
	int rc;
};

struct serve_state {
	int n;
	struct cli_input in[SERVE_MAX_DUMPS];
	hd_store *ss[SERVE_MAX_DUMPS];
	hd_store *s;              /* the one examined: the last input */
	hd_group_stats *gs;       /* the NGROUPS groupings of s (and
				   * (file, gem)): kept in the store or
				   * computed at start */
	unsigned views;           /* the views s keeps (hd_store_views) */
	hd_stats_totals tot;
	/* the thread that computes the lazy parts after the start */
	pthread_t warm_thread;
	int warm_running, warm_stop;
	/* retained by class, and by name, with the class grouping's
	 * ret and by_ret (serve_state_need_classes) */
	struct serve_once classes_once;
	hd_class_retained *cr;
	size_t ncr;
	size_t *cr_name;
	hd_domtree *dt;
	/* the search from the roots (serve_state_reach): started on a
	 * thread of its own at start, joined by the first call that
	 * needs it */
	struct serve_once reach_once;
	pthread_t reach_thread;
	int reach_running;
	hd_reach *reach;
	char reach_msg[256];
	/* the dominator tree's children, largest first */
	hd_domtree_children *kids;
	/* lazily (serve_state_need_strings): */
	struct serve_once strs_once;
	hd_string_values *strs;   /* by value and site, searched case
				   * aside (kept in the store, or read
				   * back from the dump) */
	char strs_msg[256];
	struct cli_sidecar sc;
	int has_sc;
	hd_process_verdict proc;  /* the process growth of the sidecars */
	/* the leak hunt as heapdump leaks runs it, with its defaults;
	 * diff and leaks are borrowed from it */
	hd_leak_session *ls;
	/* run lazily (serve_state_need_session): the warm thread first */
	struct serve_once session_once;
	const hd_diff_result *diff;
	hd_stats *diff_st;        /* the diff's objects by class */
	const hd_leaks *leaks;
	/* the verdict document (hd_leak_verdict_json), kept in keep_path
	 * (hd_leak_keep_path; "" when none may be kept): read from there
	 * at start when it is the dumps', else made with the session and
	 * written there */
	char keep_path[4096];
	char *verdict;
	size_t verdict_len;
	int verdict_kept;         /* read at start: set before any thread */
	int quiet;
	/* lazily (serve_state_need_order): the counted nodes (not the
	 * tracer's or dump_all's) in the objects' order (hd_retained_before:
	 * retained memsize, largest first, then ascending node), a group's
	 * objects walked in it: kept in the store (mapped) or computed */
	struct serve_once order_once;
	/* lazily (serve_state_need_classidx, which every group's page
	 * needs): each node's class (its stats --by class key) as an index
	 * into the class names sorted (UINT32_MAX - 1: the dumper's), so
	 * that a group's first page can be answered before the order is
	 * made */
	struct serve_once cidx_once;
	/* lazily (serve_state_export_base): the drawings' base (the
	 * folded objects, what the root categories hold through them) */
	struct serve_once xbase_once;
	hd_export_base *xbase;
	hd_retained_order *ord;
	const hd_node_id *order;  /* ord's nodes */
	size_t norder;
	uint32_t *cls;
	const char **cls_name;
	size_t *cls_len;
	size_t ncls;
	struct gview gv[NGROUPS];
	/* the rows of (file, gem) by gem, then file: a gem's files */
	const hd_stats_row *gf_rows;
	size_t *gf_idx;
	size_t ngf;
	/* where the walk of the group asked for last stopped */
	pthread_mutex_t walk_lock;
	int walk_g;
	char *walk_key;
	size_t walk_pos, walk_matched;
};

/* The order of the objects (st->order), mapped or computed by the
 * first call: 0, or -1 (said). */
int serve_state_need_order(struct serve_state *st);

/* Each node's class index (st->cls, st->cls_name) without the order:
 * 0 or -1 (no memory). */
int serve_state_need_classidx(struct serve_state *st);

/* Is the objects' order made (without waiting for it)? */
int serve_state_order_ready(struct serve_state *st);
/* The leak session run (diff, leaks, the diff's classes), once: 0, or
 * -1 (said on stderr). */
int serve_state_need_session(struct serve_state *st);
/* The verdict document, kept or made (serve_state_need_session): 0, or
 * -1. Borrowed. */
int serve_state_verdict(struct serve_state *st, const char **json,
			size_t *len);
/* Retained by class (st->cr, st->cr_name, st->gv[1].ret and by_ret):
 * 0, or -1 (said) when it could not be computed. */
int serve_state_need_classes(struct serve_state *st);
/* The string values and their search (st->strs, or NULL and
 * st->strs_msg saying why): mapped from the store, or read from the dump
 * by the first call. */
void serve_state_need_strings(struct serve_state *st);

/* Class name name (n bytes) as an index into st->cls_name (after
 * serve_state_need_classidx), or (size_t)-1. */
size_t serve_state_class_index(const struct serve_state *st,
			       const char *name, size_t n);
/* The retained size of the class of that stats name, or NULL. */
const hd_class_retained *serve_state_class_retained(
	const struct serve_state *st, const char *name);

/* memcmp order of two spans, the shorter first on a tie */
static inline int serve_span_cmp(const char *a, size_t an, const char *b,
				 size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	return c ? c : (an < bn ? -1 : an > bn);
}

#endif /* CLI_SERVE_STATE_H */
