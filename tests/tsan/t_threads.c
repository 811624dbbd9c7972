/*
 * t_threads.c - heapdump.h's promise that distinct handles may be used
 * from distinct threads, under ThreadSanitizer (make's $(B)/tsan/t_threads,
 * run by tests/cli/threads.sh).
 *
 * Two threads each build their own stores of the same BEFORE, AFTER and
 * LATER dumps (on two threads each: the parallel scan) and run every
 * analysis on them: stats (of the dump and of the store), strings by
 * value, site and holder, waste, diff, leaks (interface, clusters),
 * dominators, a path; then the same over one store they share (a
 * read-only hd_store may be shared between threads). A barrier before each step makes the two threads
 * run it at the same time, so that state the library shares between
 * calls (a file-scope variable a comparator reads) is written by both
 * with no order between them: ThreadSanitizer reports it, and its
 * report ends the run with exit status 66. The two threads' results are
 * compared too: what one thread computes does not depend on the other.
 *
 * usage: t_threads BEFORE AFTER LATER (plain JSON dumps)
 */
#include "heapdump.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NSTEP 16

static const char *path[3];
static pthread_barrier_t step;
static hd_store *shared; /* AFTER, built by main before the threads */

/* what a thread found, compared between the two */
struct run {
	int rc;
	char what[320];
	uint64_t v[NSTEP];
};

static void sync_step(void)
{
	pthread_barrier_wait(&step);
}

static int fail(struct run *r, const char *what, int rc,
		const hd_error *err)
{
	snprintf(r->what, sizeof(r->what), "%s: %d %s", what, rc,
		 err->msg);
	r->rc = rc ? rc : 1;
	return r->rc;
}

static int stats_of(struct run *r, const hd_store *s)
{
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	hd_scan_options sc = HD_SCAN_OPTIONS_INIT;
	hd_stats_totals t;
	hd_stats *st = NULL;
	hd_error err = { 0 };
	int rc;

	sc.jobs = 2;
	sync_step();
	if ((rc = hd_stats_new(&st, &so, &err)) ||
	    (rc = hd_stats_add_dump(st, path[1], &sc, NULL, &err)) ||
	    (rc = hd_stats_finish(st, &err))) {
		hd_stats_free(st);
		return fail(r, "stats of the dump", rc, &err);
	}
	hd_stats_totals_get(&t, st);
	r->v[0] = t.memsize;
	hd_stats_free(st);
	sync_step();
	if ((rc = hd_stats_new(&st, &so, &err)) ||
	    (rc = hd_stats_add_store(st, s, &err)) ||
	    (rc = hd_stats_finish(st, &err))) {
		hd_stats_free(st);
		return fail(r, "stats of the store", rc, &err);
	}
	hd_stats_totals_get(&t, st);
	r->v[1] = t.objects;
	hd_stats_free(st);
	return 0;
}

static int strings_of(struct run *r, const hd_store *s)
{
	static const int by[3] = { HD_STRINGS_BY_VALUE, HD_STRINGS_BY_SITE,
				   HD_STRINGS_BY_HOLDER };
	hd_strings_options o = HD_STRINGS_OPTIONS_INIT;
	hd_strings_totals t;
	hd_strings *st;
	hd_waste_result w;
	hd_error err = { 0 };
	size_t n = 0;
	int k, rc;

	for (k = 0; k < 3; k++) {
		o.by = by[k];
		sync_step();
		if ((rc = hd_strings_build(&st, s, NULL, &o, NULL, &err)))
			return fail(r, "strings", rc, &err);
		hd_strings_totals_get(&t, st);
		(void)hd_strings_rows(st, &n);
		r->v[2] += t.wasted_memsize + n;
		hd_strings_free(st);
	}
	sync_step();
	if ((rc = hd_waste_compute(&w, s, NULL, 0, NULL, &err)))
		return fail(r, "waste", rc, &err);
	for (k = 0; k < HD_WASTE_KINDS; k++)
		r->v[3] += w.rows[k].bytes + (w.rows[k].nsites ?
					      w.rows[k].sites[0].node : 0);
	return 0;
}

/* the dominator tree of s, its top retainers, and a path to the last:
 * into r->v[k] and r->v[k + 1] */
static int tree_of(struct run *r, const hd_store *s, int k)
{
	hd_domtree *dt = NULL;
	hd_root_path p;
	hd_node_id top[4];
	size_t ntop = 0;
	hd_error err = { 0 };
	int rc;

	sync_step();
	if ((rc = hd_domtree_new(&dt, s, 0, &err)) ||
	    (rc = hd_domtree_top(top, &ntop, dt, 4, &err))) {
		hd_domtree_free(dt);
		return fail(r, "dominators", rc, &err);
	}
	r->v[k] = ntop ? top[0] : 0;
	hd_domtree_free(dt);
	sync_step();
	memset(&p, 0, sizeof(p));
	if (ntop && (rc = hd_path(&p, s, top[ntop - 1], 0, &err)))
		return fail(r, "path", rc, &err);
	r->v[k + 1] = p.n;
	hd_root_path_free(&p);
	return 0;
}

static int graph_of(struct run *r, hd_store *const *s)
{
	hd_diff_result *d = NULL;
	hd_leaks *l = NULL;
	hd_leaks_totals lt;
	hd_error err = { 0 };
	int rc;

	sync_step();
	if ((rc = hd_diff(&d, s[0], s[1], s[2], NULL, &err)))
		return fail(r, "diff", rc, &err);
	r->v[4] = d->added.n;
	sync_step();
	if ((rc = hd_leaks_build(&l, s[2], d, NULL, &err))) {
		hd_diff_result_free(d);
		return fail(r, "leaks", rc, &err);
	}
	hd_leaks_totals_get(&lt, l);
	r->v[5] = lt.leak_count + lt.groups;
	hd_leaks_free(l);
	hd_diff_result_free(d);
	return tree_of(r, s[1], 6);
}

/* strings, waste, dominators and a path of the shared store */
static int shared_of(struct run *r)
{
	hd_strings_options o = HD_STRINGS_OPTIONS_INIT;
	hd_strings_totals t;
	hd_strings *st;
	hd_waste_result w;
	hd_error err = { 0 };
	int rc;

	o.by = HD_STRINGS_BY_SITE;
	sync_step();
	if ((rc = hd_strings_build(&st, shared, NULL, &o, NULL, &err)))
		return fail(r, "shared strings", rc, &err);
	hd_strings_totals_get(&t, st);
	r->v[8] = t.wasted_memsize;
	hd_strings_free(st);
	sync_step();
	if ((rc = hd_waste_compute(&w, shared, NULL, 0, NULL, &err)))
		return fail(r, "shared waste", rc, &err);
	r->v[9] = w.heap_memsize;
	return tree_of(r, shared, 10);
}

static void *run(void *arg)
{
	struct run *r = arg;
	hd_index_options io = HD_INDEX_OPTIONS_INIT;
	hd_store *s[3] = { NULL, NULL, NULL };
	hd_error err = { 0 };
	int k, rc;

	io.jobs = 2;
	for (k = 0; k < 3; k++) {
		sync_step();
		if ((rc = hd_store_build(&s[k], path[k], &io, &err))) {
			fail(r, "store build", rc, &err);
			goto out;
		}
	}
	if (!stats_of(r, s[1]) && !strings_of(r, s[2]) && !graph_of(r, s))
		shared_of(r);
out:
	for (k = 0; k < 3; k++)
		hd_store_close(s[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	struct run r[2];
	pthread_t t;
	int k, bad = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: t_threads BEFORE AFTER LATER\n");
		return 2;
	}
	for (k = 0; k < 3; k++)
		path[k] = argv[k + 1];
	memset(r, 0, sizeof(r));
	if (hd_store_build(&shared, path[1], NULL, NULL)) {
		fprintf(stderr, "t_threads: cannot build the store of %s\n",
			path[1]);
		return 1;
	}
	pthread_barrier_init(&step, NULL, 2);
	if (pthread_create(&t, NULL, run, &r[1])) {
		fprintf(stderr, "t_threads: cannot start a thread\n");
		return 1;
	}
	run(&r[0]);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&step);
	hd_store_close(shared);
	for (k = 0; k < 2; k++)
		if (r[k].rc) {
			printf("not ok - threads/thread-%d: %s\n", k, r[k].what);
			bad = 1;
		}
	if (bad)
		return 1;
	for (k = 0; k < NSTEP; k++)
		if (r[0].v[k] != r[1].v[k]) {
			printf("not ok - threads/same-results: step %d: %" PRIu64
			       " and %" PRIu64 "\n", k, r[0].v[k], r[1].v[k]);
			return 1;
		}
	printf("ok - threads/same-results\n");
	return 0;
}
