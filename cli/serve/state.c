/*
 * state.c - heapdump serve's per-process state (state.h): the inputs
 * opened (each dump through its cached store), the leak session of
 * several, and what the requests read, computed once. At start: the
 * groupings (one pass of hd_stats over the store), the search from the
 * roots, the dominator tree (mapped from the store when it holds one),
 * its children orders and the groups' orders (small: one per group).
 * While serving, on threads (serve_once: or by the first request that
 * needs them, whichever comes first): the search from the roots
 * (paths), retained by class, each object's class index and the
 * objects' order (/api/objects: hd_retained_order, mapped from the
 * store's view or sorted), and the string values read back from the
 * dump with their search (/api/search), so that serve answers its first
 * page without them. Graphviz is left to the first drawing.
 * No comparison reads file-scope state: each sort gets its context
 * through qsort_r, and the state is read by every request thread.
 */
#define _GNU_SOURCE /* qsort_r */
#include "state.h"
#include "../order.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <stdlib.h>
#include <string.h>

const int serve_group_keys[NGROUPS] = {
	HD_KEY_TYPE, HD_KEY_CLASS, HD_KEY_FILE, HD_KEY_LOCATION,
	HD_KEY_GEM, HD_KEY_GENERATION, HD_KEY_IMEMO
};

/* HEAPDUMP_TIMING=1: each phase of the start and of a lazy part, in
 * seconds, on standard error (as the store's build prints its own) */
static void phase(const char *name, double *t)
{
	static int on = -1;
	double now = cli_now();

	if (on < 0)
		on = getenv("HEAPDUMP_TIMING") != NULL;
	if (on && name)
		fprintf(stderr, "%s: serve: %-20s %.3f s\n", PROGRAM_NAME,
			name, now - *t);
	*t = now;
}

/* Runs fn once (the first caller; the others wait for it) and returns
 * its result every time. */
static int once(struct serve_once *o, int (*fn)(struct serve_state *),
		struct serve_state *st)
{
	int rc;

	pthread_mutex_lock(&o->lock);
	if (!o->done) {
		o->rc = fn(st);
		o->done = 1;
	}
	rc = o->rc;
	pthread_mutex_unlock(&o->lock);
	return rc;
}

#define cmp_mem serve_span_cmp

size_t serve_state_class_index(const struct serve_state *st,
			       const char *name, size_t n)
{
	size_t lo = 0, hi = st->ncls, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = cmp_mem(st->cls_name[mid], st->cls_len[mid], name, n);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (size_t)-1;
}

/* class rows by name: the stats rows are the context */
static int cmp_name_idx(const void *a, const void *b, void *arg)
{
	const hd_stats_row *rows = arg;
	const hd_stats_row *p = &rows[*(const size_t *)a];
	const hd_stats_row *q = &rows[*(const size_t *)b];

	return cmp_mem(p->key[0], p->key_len[0], q->key[0], q->key_len[0]);
}

/* Each node's class index (serve_state_need_classidx's part). */
static int build_classidx(struct serve_state *st)
{
	uint32_t n = hd_store_node_count(st->s), i, *gcls;
	const hd_stats_row *rows;
	size_t nr, j, *idx;
	char buf[1024];
	hd_nodes reps = { NULL, 0, 0 };
	double t = cli_now();

	st->cls = malloc(((size_t)n + 1) * sizeof(*st->cls));
	rows = hd_group_stats_rows(st->gs, 1, &nr);
	st->cls_name = malloc((nr + 1) * sizeof(*st->cls_name));
	st->cls_len = malloc((nr + 1) * sizeof(*st->cls_len));
	idx = malloc((nr + 1) * sizeof(*idx));
	/* st->cls holds each node's class group first */
	if (!st->cls || !st->cls_name || !st->cls_len || !idx ||
	    hd_store_class_groups(st->cls, &reps, st->s, NULL)) {
		free(idx);
		return -1;
	}
	for (j = 0; j < nr; j++)
		idx[j] = j;
	qsort_r(idx, nr, sizeof(*idx), cmp_name_idx, (void *)rows);
	for (j = 0; j < nr; j++) {
		st->cls_name[j] = rows[idx[j]].key[0];
		st->cls_len[j] = rows[idx[j]].key_len[0];
	}
	free(idx);
	st->ncls = nr;
	/* the nodes of a group share their class name and dumper flag:
	 * each group's is looked up once (UINT32_MAX - 1: dumper) */
	if (!(gcls = malloc((reps.n + 1) * sizeof(*gcls)))) {
		hd_nodes_free(&reps);
		return -1;
	}
	for (j = 0; j < reps.n; j++) {
		size_t len;

		if (hd_store_is_dumper(st->s, reps.ids[j])) {
			gcls[j] = UINT32_MAX - 1;
			continue;
		}
		len = hd_store_class_name(buf, sizeof(buf), st->s, reps.ids[j]);
		gcls[j] = len < sizeof(buf) ?
			  (uint32_t)serve_state_class_index(st, buf, len) : UINT32_MAX;
	}
	for (i = 0; i < n; i++)
		st->cls[i] = gcls[st->cls[i]];
	free(gcls);
	hd_nodes_free(&reps);
	phase("class index", &t);
	return 0;
}

int serve_state_need_classidx(struct serve_state *st)
{
	return once(&st->cidx_once, build_classidx, st);
}

static void view_refused(struct serve_state *st, const hd_error *err);

/* The order of a group's objects (serve_state_need_order's part):
 * mapped from the store when it keeps it for this tree, else computed
 * (a store that keeps a damaged or stale one says so). */
static int build_order(struct serve_state *st)
{
	hd_error err = { 0 };
	double t = cli_now();
	int rc = hd_retained_order_open(&st->ord, st->dt, st->s, &err);

	if (rc == 0) {
		st->order = hd_retained_order_nodes(st->ord, &st->norder);
		phase("objects' order (kept)", &t);
		return 0;
	}
	if (rc == HD_EFORMAT)
		view_refused(st, &err);
	else if (rc != HD_ENOTFOUND) {
		cli_error("serve: the objects' order: %s", err.msg);
		return -1;
	}
	memset(&err, 0, sizeof(err));
	if (hd_retained_order_build(&st->ord, st->dt, st->s, &err)) {
		cli_error("serve: the objects' order: %s", err.msg);
		return -1;
	}
	st->order = hd_retained_order_nodes(st->ord, &st->norder);
	phase("objects' order", &t);
	return 0;
}

int serve_state_need_order(struct serve_state *st)
{
	return once(&st->order_once, build_order, st);
}

int serve_state_order_ready(struct serve_state *st)
{
	int done = 0;

	/* held: the order is being made */
	if (pthread_mutex_trylock(&st->order_once.lock) == 0) {
		done = st->order_once.done;
		pthread_mutex_unlock(&st->order_once.lock);
	}
	return done;
}

/* The drawings' base (serve_state_export_base's part). */
static int build_xbase(struct serve_state *st)
{
	hd_error err = { 0 };
	double t = cli_now();

	if (hd_export_base_new(&st->xbase, st->s, HD_EXPORT_COLLAPSE, &err))
		return -1;
	phase("drawings' base", &t);
	return 0;
}

const hd_export_base *serve_state_export_base(struct serve_state *st)
{
	return once(&st->xbase_once, build_xbase, st) ? NULL : st->xbase;
}

/* ---- the groups' orders, once ---- */

static int cmp_keys0(const hd_stats_row *p, const hd_stats_row *q)
{
	return cmp_mem(p->key[0], p->key_len[0], q->key[0], q->key_len[0]);
}

/* hd_stats' order by memsize: memsize, count, then key */
static int cmp_by_mem(const void *a, const void *b, void *arg)
{
	const hd_stats_row *r = arg;
	const hd_stats_row *p = &r[*(const size_t *)a], *q = &r[*(const size_t *)b];

	if (p->memsize != q->memsize)
		return p->memsize < q->memsize ? 1 : -1;
	if (p->count != q->count)
		return p->count < q->count ? 1 : -1;
	return cmp_keys0(p, q);
}

static int cmp_by_key(const void *a, const void *b, void *arg)
{
	const hd_stats_row *r = arg;

	return cmp_keys0(&r[*(const size_t *)a], &r[*(const size_t *)b]);
}

struct ret_sort {
	const hd_stats_row *rows;
	const uint64_t *ret;
};

static int cmp_by_ret(const void *a, const void *b, void *arg)
{
	const struct ret_sort *rs = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (rs->ret[x] != rs->ret[y])
		return rs->ret[x] < rs->ret[y] ? 1 : -1;
	return cmp_keys0(&rs->rows[x], &rs->rows[y]);
}

/* (file, gem) rows by gem, then file */
static int cmp_by_gem(const void *a, const void *b, void *arg)
{
	const hd_stats_row *r = arg;
	const hd_stats_row *p = &r[*(const size_t *)a], *q = &r[*(const size_t *)b];
	int c = cmp_mem(p->key[1], p->key_len[1], q->key[1], q->key_len[1]);

	return c ? c : cmp_keys0(p, q);
}

static size_t *index_sorted(size_t n,
			    int (*cmp)(const void *, const void *, void *),
			    void *arg)
{
	size_t *idx = malloc((n + 1) * sizeof(*idx)), i;

	if (!idx)
		return NULL;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp, arg);
	return idx;
}

/* Row i's first key, for hd_text_search_build. */
static const char *row_key(void *payload, size_t i, size_t *len)
{
	const hd_stats_row *rows = payload;

	*len = rows[i].key_len[0];
	return rows[i].key[0];
}

/* Every grouping's orders and lowercased keys, and each gem's files:
 * what requests would otherwise sort per call (the order by retained
 * size of the classes: build_classes). */
static int build_views(struct serve_state *st)
{
	struct gview *v;
	int g;

	for (g = 0; g < NGROUPS; g++) {
		v = &st->gv[g];
		v->rows = hd_group_stats_rows(st->gs, (unsigned)g, &v->n);
		if (!(v->by_mem = index_sorted(v->n, cmp_by_mem,
					       (void *)v->rows)) ||
		    !(v->by_key = index_sorted(v->n, cmp_by_key,
					       (void *)v->rows)) ||
		    hd_text_search_build(&v->ts, v->n, row_key,
					 (void *)v->rows, NULL))
			return -1;
	}
	st->gf_rows = hd_group_stats_rows(st->gs, NGROUPS, &st->ngf);
	if (!(st->gf_idx = index_sorted(st->ngf, cmp_by_gem,
					(void *)st->gf_rows)))
		return -1;
	return 0;
}

static void free_views(struct serve_state *st)
{
	int g;

	for (g = 0; g < NGROUPS; g++) {
		free(st->gv[g].by_mem);
		free(st->gv[g].by_key);
		free(st->gv[g].by_ret);
		free(st->gv[g].ret);
		hd_text_search_free(st->gv[g].ts);
	}
	free(st->gf_idx);
}

/* retained by class, by name: the classes are the context */
static int cmp_cr_name(const void *a, const void *b, void *arg)
{
	const hd_class_retained *cr = arg;

	return strcmp(cr[*(const size_t *)a].name, cr[*(const size_t *)b].name);
}

const hd_class_retained *serve_state_class_retained(
	const struct serve_state *st, const char *name)
{
	size_t lo = 0, hi = st->ncr, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(st->cr[st->cr_name[mid]].name, name);
		if (c == 0)
			return &st->cr[st->cr_name[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A view the store keeps but cannot be read (damaged, stale): said once,
 * then computed as for a store without it. */
static void view_refused(struct serve_state *st, const hd_error *err)
{
	cli_error("serve: %s: %s: computed again", st->in[st->n - 1].name,
		  err->msg);
}

/* The strings by value and site, searched case aside: mapped from the
 * store, else read from the dump; without the dump, search finds no
 * string and says why. */
static int build_strings(struct serve_state *st)
{
	hd_error err = { 0 };
	double t = cli_now();
	int rc = hd_string_values_open(&st->strs, st->s, &err);

	if (rc == 0) {
		phase("strings (kept)", &t);
		return 0;
	}
	if (rc == HD_EFORMAT)
		view_refused(st, &err);
	memset(&err, 0, sizeof(err));
	if (hd_string_values_build(&st->strs, st->s, &err)) {
		snprintf(st->strs_msg, sizeof(st->strs_msg), "%s", err.msg);
		st->strs = NULL;
	}
	phase("strings (lazy)", &t);
	return 0;
}

void serve_state_need_strings(struct serve_state *st)
{
	once(&st->strs_once, build_strings, st);
}

/* The search from the roots (st->reach, or NULL and st->reach_msg). */
static void *reach_thread(void *arg)
{
	struct serve_state *st = arg;
	hd_error err = { 0 };
	double t = cli_now();

	if (hd_reach_new(&st->reach, st->s, 0, &err)) {
		snprintf(st->reach_msg, sizeof(st->reach_msg), "%s", err.msg);
		st->reach = NULL;
	}
	phase("search from roots", &t);
	return NULL;
}

static int reach_join(struct serve_state *st)
{
	if (st->reach_running) {
		pthread_join(st->reach_thread, NULL);
		st->reach_running = 0;
	} else {
		reach_thread(st);
	}
	if (!st->reach)
		cli_error("serve: the search from the roots: %s", st->reach_msg);
	return 0;
}

const hd_reach *serve_state_reach(struct serve_state *st)
{
	once(&st->reach_once, reach_join, st);
	return st->reach;
}

/* The dominator tree's children orders: mapped from the store when it
 * keeps them and they match the tree, else sorted here (a store that
 * keeps damaged or stale ones says so). */
static int open_children(struct serve_state *st, hd_error *err)
{
	int rc = hd_domtree_children_open(&st->kids, st->dt, st->s, err);

	if (rc == 0)
		return 0;
	if (rc == HD_EFORMAT)
		cli_error("serve: %s: %s: sorted again", st->in[st->n - 1].name,
			  err->msg);
	else if (rc != HD_ENOTFOUND)
		return rc;
	memset(err, 0, sizeof(*err));
	return hd_domtree_children_build(&st->kids, st->dt, st->s, err);
}

/* Retained by class (hd_domtree_classes), by name, and the class
 * grouping's rows by it (after build_views: it reads their rows). */
static int build_classes(struct serve_state *st)
{
	struct gview *v = &st->gv[1];
	struct ret_sort rs;
	hd_error err = { 0 };
	double t = cli_now();
	size_t i;

	int rc = hd_domtree_classes_open(&st->cr, &st->ncr, st->dt, st->s,
					 &err);

	if (rc == HD_EFORMAT)
		view_refused(st, &err);
	if (rc && rc != HD_ENOTFOUND && rc != HD_EFORMAT) {
		cli_error("serve: retained by class: %s", err.msg);
		return -1;
	}
	if (rc) {
		memset(&err, 0, sizeof(err));
		if (hd_domtree_classes(&st->cr, &st->ncr, st->dt, &err)) {
			cli_error("serve: retained by class: %s", err.msg);
			return -1;
		}
	}
	if (!(st->cr_name = malloc((st->ncr + 1) * sizeof(size_t))))
		return -1;
	for (i = 0; i < st->ncr; i++)
		st->cr_name[i] = i;
	qsort_r(st->cr_name, st->ncr, sizeof(size_t), cmp_cr_name, st->cr);
	if (!(v->ret = calloc(v->n + 1, sizeof(*v->ret))))
		return -1;
	for (i = 0; i < v->n; i++) {
		const hd_class_retained *c =
			serve_state_class_retained(st, v->rows[i].key[0]);

		v->ret[i] = c ? c->retained_memsize : 0;
	}
	rs.rows = v->rows;
	rs.ret = v->ret;
	if (!(v->by_ret = index_sorted(v->n, cmp_by_ret, &rs)))
		return -1;
	phase("retained by class", &t);
	return 0;
}

int serve_state_need_classes(struct serve_state *st)
{
	return once(&st->classes_once, build_classes, st);
}

/* After the start, one thread computes the parts the first calls
 * would otherwise wait for, in the order a page asks for them (stats
 * by class, a group's objects, a search): each through its serve_once,
 * so that a call that needs one first computes it itself, or waits for
 * this thread to finish it. Stops between parts when st->warm_stop. */
static void *warm_thread(void *arg)
{
	struct serve_state *st = arg;

	/* the short parts first: the objects' order and the drawings'
	 * base (a second or less) before the leak hunt (seconds). Not
	 * Graphviz: loaded by the first drawing (50 ms), it would hold 10
	 * MB (its libraries, fonts and plugins) in every server that never
	 * draws, a third of a 0.1 GB store's */
	if (!__atomic_load_n(&st->warm_stop, __ATOMIC_ACQUIRE))
		serve_state_need_classes(st);
	/* the order kept in the store first (a check of it); the class
	 * index a group's first page needs before an order to compute */
	if ((st->views & HD_VIEW_ORDER) &&
	    !__atomic_load_n(&st->warm_stop, __ATOMIC_ACQUIRE))
		serve_state_need_order(st);
	if (!__atomic_load_n(&st->warm_stop, __ATOMIC_ACQUIRE))
		serve_state_need_classidx(st);
	if (!__atomic_load_n(&st->warm_stop, __ATOMIC_ACQUIRE))
		serve_state_need_order(st);
	if (!__atomic_load_n(&st->warm_stop, __ATOMIC_ACQUIRE))
		serve_state_export_base(st);
	if (st->n > 1 && !__atomic_load_n(&st->warm_stop, __ATOMIC_ACQUIRE))
		serve_state_need_session(st);
	if (!__atomic_load_n(&st->warm_stop, __ATOMIC_ACQUIRE))
		serve_state_need_strings(st);
#ifdef __GLIBC__
	/* what the parts freed (their sorts' scratch, in this thread's
	 * arena) given back: 1.5 MB of a 0.1 GB store's server */
	malloc_trim(0);
#endif
	return NULL;
}


static int lib_fail(const hd_error *err)
{
	return cli_lib_error(err);
}

/* The groupings: kept in the store, else computed (one pass of
 * hd_stats over the store). */
static int open_groups(struct serve_state *st, hd_error *err)
{
	hd_stats_options so;
	int rc, g, same = 1;

	hd_view_stats_options(&so);
	/* serve's table of groupings is the view's */
	for (g = 0; g < NGROUPS; g++)
		same &= so.keys[g][0] == serve_group_keys[g];
	rc = same ? hd_group_stats_open(&st->gs, st->s, &so, err) :
		    HD_ENOTFOUND;
	if (rc == 0)
		return 0;
	if (rc == HD_EFORMAT)
		view_refused(st, err);
	else if (rc != HD_ENOTFOUND)
		return rc;
	memset(err, 0, sizeof(*err));
	st->views &= ~HD_VIEW_GROUPS;
	return hd_group_stats_build(&st->gs, st->s, &so, err);
}

/* Appends item to a list in buf ("a", "a and b", "a, b and c"), k
 * items before it, n in all. */
static void list_add(char *buf, size_t size, const char *item, int k, int n)
{
	size_t l = strlen(buf);

	snprintf(buf + l, size - l, "%s%s",
		 k == 0 ? "" : k == n - 1 ? " and " : ", ", item);
}

static int open_analyses(struct serve_state *st, int quiet)
{
	hd_error err = { 0 };
	double t0 = cli_now(), t = t0;
	char kept[128], later[160];

	st->views = hd_store_views(st->s);
	if (open_groups(st, &err))
		return lib_fail(&err);
	phase("groupings", &t);
	hd_group_stats_totals(&st->tot, st->gs);
	/* the search from the roots goes on while the rest starts */
	st->reach_running = !pthread_create(&st->reach_thread, NULL,
					    reach_thread, st);
	if (hd_domtree_new(&st->dt, st->s, HD_DOMTREE_SKIP_DUMPER, &err))
		return lib_fail(&err);
	phase("dominator tree", &t);
	if (open_children(st, &err))
		return lib_fail(&err);
	phase("children orders", &t);
	if (build_views(st)) {
		cli_error("serve: out of memory");
		return EXIT_FAIL;
	}
	phase("groups' orders", &t);
	/* what the first calls need goes on while serving */
	st->warm_running = !pthread_create(&st->warm_thread, NULL,
					   warm_thread, st);
	if (!quiet) {
		/* what the store kept, and what follows while serving */
		const char *k[4], *l[5];
		int nk = 0, nl = 0, i;

		if (st->views & HD_VIEW_GROUPS)
			k[nk++] = "the group stats";
		if (st->n > 1)
			l[nl++] = "the leak hunt";
		l[nl++] = "paths";
		if ((st->views & HD_VIEW_CLASSES) &&
		    hd_domtree_is_stored(st->dt))
			k[nk++] = "retained by class";
		else
			l[nl++] = "retained by class";
		if ((st->views & HD_VIEW_ORDER) &&
		    hd_domtree_is_stored(st->dt))
			k[nk++] = "the objects' order";
		else
			l[nl++] = "the objects' order";
		if (st->views & HD_VIEW_STRINGS)
			k[nk++] = "string values";
		else
			l[nl++] = "string values";
		kept[0] = later[0] = '\0';
		for (i = 0; i < nk; i++)
			list_add(kept, sizeof(kept), k[i], i, nk);
		for (i = 0; i < nl; i++)
			list_add(later, sizeof(later), l[i], i, nl);
		fprintf(stderr, "%s: serve: ready in %.2f s (%u objects; "
			"%s%s%s follow while serving)\n",
			PROGRAM_NAME, cli_now() - t0,
			hd_store_node_count(st->s), kept,
			nk ? " from the store; " : "", later);
	}
	return 0;
}

/* The leak session run, its diff's classes, and the verdict kept when
 * it was not (serve_state_need_session's part). */
static int build_session(struct serve_state *st)
{
	hd_stats_options co = HD_STATS_OPTIONS_INIT;
	hd_error err = { 0 };
	const hd_store *side;
	const hd_nodes *set;
	size_t i;
	double t = cli_now();

	if (hd_leak_session_run(st->ls, &err)) {
		lib_fail(&err);
		return -1;
	}
	phase("leak session", &t);
	st->diff = hd_leak_session_diff(st->ls);
	st->leaks = hd_leak_session_leaks(st->ls);
	co.keys[0][0] = HD_KEY_CLASS;
	co.nkeys[0] = 1;
	co.ngroupings = 1;
	side = st->n > 2 ? st->ss[st->n - 1] : st->ss[1];
	set = st->n > 2 ? &st->diff->retained_later : &st->diff->added;
	if (hd_stats_new(&st->diff_st, &co, &err) ||
	    hd_stats_add_nodes(st->diff_st, side, set, &err) ||
	    hd_stats_finish(st->diff_st, &err)) {
		lib_fail(&err);
		return -1;
	}
	/* the diff's classes, read by memsize only: sorted now, never
	 * again */
	hd_stats_rows(st->diff_st, 0, HD_SORT_MEMSIZE, &i);
	if (st->verdict_kept)
		return 0;
	if (hd_leak_verdict_json(&st->verdict, &st->verdict_len, st->ls,
				 &st->proc, &err)) {
		lib_fail(&err);
		return -1;
	}
	if (st->keep_path[0] &&
	    hd_leak_keep_write(st->keep_path, st->ls, &st->proc, st->verdict,
			       st->verdict_len, &err))
		cli_error("serve: %s (the verdict is computed at each start)",
			  err.msg);
	return 0;
}

int serve_state_need_session(struct serve_state *st)
{
	if (st->n < 2)
		return -1;
	return once(&st->session_once, build_session, st);
}

int serve_state_verdict(struct serve_state *st, const char **json,
			size_t *len)
{
	/* a kept verdict is set at start, before any thread; else the
	 * session's lock orders its writing before this read */
	if (!st->verdict_kept && serve_state_need_session(st))
		return -1;
	*json = st->verdict;
	*len = st->verdict_len;
	return st->verdict ? 0 : -1;
}

/* The kept verdict of the inputs, read at start when it is theirs
 * (hd_leak_keep_read); kept at the examined store's place
 * (hd_leak_keep_path), none for a store in memory. */
static void read_kept(struct serve_state *st, const char *store_path)
{
	hd_error err = { 0 };
	char why[256];
	int rc;

	if (!*store_path)
		return;
	if (hd_leak_keep_path(st->keep_path, sizeof(st->keep_path),
			      store_path, &err)) {
		st->keep_path[0] = '\0';
		return;
	}
	rc = hd_leak_keep_read(&st->verdict, &st->verdict_len, why,
			       sizeof(why), st->keep_path, st->ls, &st->proc);
	if (rc < 0)
		cli_error("serve: %s: the kept verdict is %s: computed again",
			  st->keep_path, why);
	st->verdict_kept = rc > 0;
	if (rc > 0 && !st->quiet)
		fprintf(stderr, "%s: serve: the verdict kept in %s\n",
			PROGRAM_NAME, st->keep_path);
}

/* Input i through its cached store (or, no_cache, as cli_open_store),
 * saying what was done. */
static int open_input(struct serve_state *st, int i, int quiet,
		      int no_cache, char *store_path, size_t size)
{
	hd_cache_result res;
	int rc;

	store_path[0] = '\0';
	if (no_cache)
		return cli_open_store(&st->in[i], &st->ss[i]);
	if ((rc = cli_open_store_cached(&st->in[i], &st->ss[i],
					HD_CACHE_DOMINATORS | HD_CACHE_VIEWS,
					&res)))
		return rc;
	snprintf(store_path, size, "%s", res.path);
	if (res.how == HD_CACHE_MEMORY && res.note[0])
		cli_error("serve: %s: indexed in memory (%s)",
			  st->in[i].name, res.note);
	else if (quiet)
		;
	else if (res.how == HD_CACHE_REUSED)
		fprintf(stderr, "%s: serve: %s: reusing its store %s\n",
			PROGRAM_NAME, st->in[i].name, res.path);
	else if (res.how == HD_CACHE_BUILT)
		fprintf(stderr, "%s: serve: %s: indexed into %s%s%s%s\n",
			PROGRAM_NAME, st->in[i].name, res.path,
			res.note[0] ? " (" : "", res.note,
			res.note[0] ? ")" : "");
	return 0;
}

int serve_state_open(struct serve_state **out, char **paths, int n,
		     int quiet, int no_cache)
{
	struct serve_state *st = calloc(1, sizeof(*st));
	char store_path[4096];
	int i, rc;

	*out = NULL;
	if (!st) {
		cli_error("serve: out of memory");
		return EXIT_FAIL;
	}
	st->n = n;
	st->walk_g = -1;
	pthread_mutex_init(&st->walk_lock, NULL);
	pthread_mutex_init(&st->order_once.lock, NULL);
	pthread_mutex_init(&st->cidx_once.lock, NULL);
	pthread_mutex_init(&st->xbase_once.lock, NULL);
	pthread_mutex_init(&st->strs_once.lock, NULL);
	pthread_mutex_init(&st->reach_once.lock, NULL);
	pthread_mutex_init(&st->classes_once.lock, NULL);
	pthread_mutex_init(&st->session_once.lock, NULL);
	st->quiet = quiet;
	for (i = 0; i < n; i++) {
		cli_input_init(&st->in[i], paths[i], 0, quiet);
		st->in[i].indexing = 1;
		if ((rc = open_input(st, i, quiet, no_cache, store_path,
				     sizeof(store_path))))
			goto fail;
	}
	st->s = st->ss[n - 1];
	if (n > 1) {
		/* leaks' defaults (HD_LEAK_SESSION_OPTIONS_INIT): top 5,
		 * min-share 1%, min-leak 2 KiB, the diff's default rules;
		 * the order checked now, the hunt run while serving */
		hd_leak_session_options lso = HD_LEAK_SESSION_OPTIONS_INIT;

		if ((rc = cli_leak_session_open(&st->ls, st->ss, st->in,
						(size_t)n, &lso, 0, NULL)))
			goto fail;
	}
	st->has_sc = cli_sidecar_read(paths[n - 1], &st->sc);
	if (n > 1) {
		cli_process_judge(&st->proc, st->ss, st->in, (size_t)n);
		read_kept(st, store_path);
	}
	if ((rc = open_analyses(st, quiet)))
		goto fail;
	*out = st;
	return 0;
fail:
	serve_state_free(st);
	return rc;
}

void serve_state_free(struct serve_state *st)
{
	int i;

	if (!st)
		return;
	if (st->warm_running) {
		/* the part under way is finished, no other begun */
		__atomic_store_n(&st->warm_stop, 1, __ATOMIC_RELEASE);
		pthread_join(st->warm_thread, NULL);
	}
	hd_stats_free(st->diff_st);
	free(st->verdict);
	hd_leak_session_free(st->ls);
	hd_string_values_free(st->strs);
	hd_domtree_children_free(st->kids);
	free(st->cr_name);
	hd_class_retained_free(st->cr);
	hd_domtree_free(st->dt);
	if (st->reach_running)
		pthread_join(st->reach_thread, NULL);
	hd_reach_free(st->reach);
	hd_group_stats_free(st->gs);
	hd_retained_order_free(st->ord);
	hd_export_base_free(st->xbase);
	free(st->cls);
	free(st->cls_name);
	free(st->cls_len);
	free(st->walk_key);
	pthread_mutex_destroy(&st->walk_lock);
	pthread_mutex_destroy(&st->order_once.lock);
	pthread_mutex_destroy(&st->cidx_once.lock);
	pthread_mutex_destroy(&st->xbase_once.lock);
	pthread_mutex_destroy(&st->strs_once.lock);
	pthread_mutex_destroy(&st->reach_once.lock);
	pthread_mutex_destroy(&st->classes_once.lock);
	pthread_mutex_destroy(&st->session_once.lock);
	free_views(st);
	if (st->has_sc)
		cli_sidecar_free(&st->sc);
	for (i = 0; i < st->n; i++)
		hd_store_close(st->ss[i]);
	free(st);
}

/* ---- what draw.c reads ---- */

const hd_store *serve_state_store(const struct serve_state *st)
{
	return st->s;
}

const hd_domtree *serve_state_domtree(const struct serve_state *st)
{
	return st->dt;
}

const hd_leaks *serve_state_leaks(const struct serve_state *st)
{
	/* the session is run by the first call that needs it */
	if (st->n < 2 || serve_state_need_session((struct serve_state *)st))
		return NULL;
	return st->leaks;
}

const hd_node_id *serve_state_kids(const struct serve_state *st,
				   hd_node_id v, uint32_t *n)
{
	return hd_domtree_children_of(st->kids, v, n);
}
