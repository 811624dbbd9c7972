/*
 * serve_api.c - the JSON API of heapdump serve (man 1 heapdump-serve,
 * API): every answer is computed by the library, once at start for what
 * is costly (the groups, the search from the roots, the dominator tree,
 * the strings, the diff and the leak model), and only cut into pages,
 * filtered, sorted and printed here. Every string from a dump goes
 * through cli_json_string (and serve_http.c writes '<', '>' and '&' as
 * \u escapes).
 */
#define _GNU_SOURCE /* memmem */
#include "common.h"
#include "order.h"
#include "serve.h"
#include "sidecar.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIMIT 1000
/* string values matching a search are counted up to this many */
#define SEARCH_COUNT_MAX 10000
#define NGROUPS 7

static const int group_keys[NGROUPS] = {
	HD_KEY_TYPE, HD_KEY_CLASS, HD_KEY_FILE, HD_KEY_LOCATION,
	HD_KEY_GEM, HD_KEY_GENERATION, HD_KEY_IMEMO
};

struct serve_state {
	int n;
	struct cli_input in[3];
	hd_store *ss[3];
	hd_store *s;              /* the one examined: the last input */
	hd_stats *st;             /* the NGROUPS groupings of s */
	hd_stats_totals tot;
	hd_class_retained *cr;    /* retained by class, and by name: */
	size_t ncr;
	size_t *cr_name;
	hd_domtree *dt;
	hd_reach *reach;
	uint64_t *ret;            /* retained memsize per node */
	uint32_t *kid_off;        /* dominator tree children (CSR); the */
	hd_node_id *kids;         /* virtual root is node_count */
	hd_strings *strs;         /* by value and site, for search */
	char *lc;                 /* their values lowercased, each with a */
	size_t *lc_off;           /* NUL after it, and where each starts */
	size_t nlc;
	char strs_msg[256];
	/* the strings are read from the dump by this thread while the
	 * rest of the start goes on; the start joins it before serving */
	pthread_t strs_thread;
	int strs_running;
	struct cli_sidecar sc;
	int has_sc;
	hd_diff_result *diff;
	hd_stats *diff_st;        /* the diff's objects by class */
	hd_leaks *leaks;
	/* the counted nodes (not the tracer's or dump_all's) by retained
	 * memsize, largest first: a group's objects are walked in it */
	hd_node_id *order;
	size_t norder;
	/* each node's class (its stats --by class key), as an index into
	 * the class names sorted */
	uint32_t *cls;
	const char **cls_name;
	size_t *cls_len;
	size_t ncls;
	/* where the walk of the group asked for last stopped */
	int walk_g;
	char *walk_key;
	size_t walk_pos, walk_matched;
};

/* ---- start ---- */

static const uint64_t *sort_ret;

static int cmp_ret(const void *a, const void *b)
{
	hd_node_id x = *(const hd_node_id *)a, y = *(const hd_node_id *)b;

	if (sort_ret[x] != sort_ret[y])
		return sort_ret[x] < sort_ret[y] ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* The dominator tree's children of every node, largest retained first. */
static int build_kids(struct serve_state *st)
{
	uint32_t n = hd_store_node_count(st->s), i, *fill;
	hd_node_id p;

	st->ret = calloc((size_t)n + 1, sizeof(*st->ret));
	st->kid_off = calloc((size_t)n + 2, sizeof(*st->kid_off));
	fill = calloc((size_t)n + 2, sizeof(*fill));
	if (!st->ret || !st->kid_off || !fill) {
		free(fill);
		return -1;
	}
	for (i = 0; i < n; i++) {
		hd_domtree_retained(st->dt, i, &st->ret[i]);
		p = hd_domtree_idom(st->dt, i);
		if (p == HD_NODE_NONE)
			continue;
		st->kid_off[(p == HD_DOM_ROOT ? n : p) + 1]++;
	}
	for (i = 0; i <= n; i++)
		st->kid_off[i + 1] += st->kid_off[i];
	st->kids = malloc(((size_t)st->kid_off[n + 1] + 1) * sizeof(*st->kids));
	if (!st->kids) {
		free(fill);
		return -1;
	}
	memcpy(fill, st->kid_off, ((size_t)n + 2) * sizeof(*fill));
	for (i = 0; i < n; i++) {
		p = hd_domtree_idom(st->dt, i);
		if (p == HD_NODE_NONE)
			continue;
		st->kids[fill[p == HD_DOM_ROOT ? n : p]++] = i;
	}
	free(fill);
	sort_ret = st->ret;
	for (i = 0; i <= n; i++)
		if (st->kid_off[i + 1] - st->kid_off[i] > 1)
			qsort(st->kids + st->kid_off[i],
			      st->kid_off[i + 1] - st->kid_off[i],
			      sizeof(*st->kids), cmp_ret);
	return 0;
}

static int cmp_mem(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	return c ? c : (an < bn ? -1 : an > bn);
}

static size_t cls_find(const struct serve_state *st, const char *name,
		       size_t n)
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

static const char **sort_names;
static const size_t *sort_lens;

static int cmp_name_idx(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	size_t n = sort_lens[x] < sort_lens[y] ? sort_lens[x] : sort_lens[y];
	int c = memcmp(sort_names[x], sort_names[y], n);

	return c ? c : (sort_lens[x] < sort_lens[y] ? -1 :
			sort_lens[x] > sort_lens[y]);
}

/* The order of a group's objects, and each node's class index. */
static int build_order(struct serve_state *st)
{
	uint32_t n = hd_store_node_count(st->s), i, *gcls;
	const hd_stats_row *rows;
	size_t nr, j, *idx;
	char buf[1024];
	hd_nodes reps = { NULL, 0, 0 };

	st->order = malloc(((size_t)n + 1) * sizeof(*st->order));
	st->cls = malloc(((size_t)n + 1) * sizeof(*st->cls));
	rows = hd_stats_rows(st->st, 1, HD_SORT_COUNT, &nr);
	st->cls_name = malloc((nr + 1) * sizeof(*st->cls_name));
	st->cls_len = malloc((nr + 1) * sizeof(*st->cls_len));
	idx = malloc((nr + 1) * sizeof(*idx));
	/* st->cls holds each node's class group first */
	if (!st->order || !st->cls || !st->cls_name || !st->cls_len || !idx ||
	    hd_store_class_groups(st->cls, &reps, st->s, NULL)) {
		free(idx);
		return -1;
	}
	for (j = 0; j < nr; j++) {
		st->cls_name[j] = rows[j].key[0];
		st->cls_len[j] = rows[j].key_len[0];
		idx[j] = j;
	}
	sort_names = st->cls_name;
	sort_lens = st->cls_len;
	qsort(idx, nr, sizeof(*idx), cmp_name_idx);
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
			  (uint32_t)cls_find(st, buf, len) : UINT32_MAX;
	}
	for (i = 0; i < n; i++) {
		st->cls[i] = gcls[st->cls[i]];
		if (st->cls[i] == UINT32_MAX - 1)
			st->cls[i] = UINT32_MAX;
		else
			st->order[st->norder++] = i;
	}
	free(gcls);
	hd_nodes_free(&reps);
	sort_ret = st->ret;
	qsort(st->order, st->norder, sizeof(*st->order), cmp_ret);
	return 0;
}

static const hd_class_retained *cr_base;

static int cmp_cr_name(const void *a, const void *b)
{
	return strcmp(cr_base[*(const size_t *)a].name,
		      cr_base[*(const size_t *)b].name);
}

/* The string values lowercased into one buffer, searched by memmem. */
static int build_lc(struct serve_state *st)
{
	const hd_strings_row *rows = hd_strings_rows(st->strs, &st->nlc);
	size_t i, j, total = 1, k = 0;

	for (i = 0; i < st->nlc; i++)
		total += rows[i].value_len + 1;
	st->lc = malloc(total);
	st->lc_off = malloc((st->nlc + 1) * sizeof(*st->lc_off));
	if (!st->lc || !st->lc_off)
		return -1;
	for (i = 0; i < st->nlc; i++) {
		st->lc_off[i] = k;
		for (j = 0; j < rows[i].value_len; j++)
			st->lc[k++] = (char)tolower((unsigned char)rows[i].value[j]);
		st->lc[k++] = '\0';
	}
	st->lc_off[st->nlc] = k;
	return 0;
}

/* The strings by value and site, and their values lowercased; without
 * the dump, search finds no string and says why. */
static void *strings_thread(void *arg)
{
	struct serve_state *st = arg;
	hd_strings_options xo = HD_STRINGS_OPTIONS_INIT;
	hd_error err = { 0 };

	xo.by = HD_STRINGS_BY_SITE;
	xo.min_count = 1;
	if (hd_strings_build(&st->strs, st->s, NULL, &xo, NULL, &err)) {
		snprintf(st->strs_msg, sizeof(st->strs_msg), "%s", err.msg);
		st->strs = NULL;
	} else if (build_lc(st)) {
		snprintf(st->strs_msg, sizeof(st->strs_msg), "out of memory");
		hd_strings_free(st->strs);
		st->strs = NULL;
	}
	return NULL;
}

/* The strings ready (waits for their thread). */
static void strings_wait(struct serve_state *st)
{
	if (st->strs_running) {
		pthread_join(st->strs_thread, NULL);
		st->strs_running = 0;
	}
}

static int lib_fail(const hd_error *err)
{
	return cli_lib_error(err);
}

static int open_analyses(struct serve_state *st, int quiet)
{
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	hd_error err = { 0 };
	double t0 = cli_now();
	size_t i;

	/* string values are read back from the dump (the longest part of a
	 * start on a big dump), by a thread while the rest goes on */
	st->strs_running = !pthread_create(&st->strs_thread, NULL,
					   strings_thread, st);
	if (!st->strs_running)
		strings_thread(st);
	for (i = 0; i < NGROUPS; i++) {
		so.keys[i][0] = group_keys[i];
		so.nkeys[i] = 1;
	}
	/* file and gem together: the files of each gem */
	so.keys[NGROUPS][0] = HD_KEY_FILE;
	so.keys[NGROUPS][1] = HD_KEY_GEM;
	so.nkeys[NGROUPS] = 2;
	so.ngroupings = NGROUPS + 1;
	if (hd_stats_new(&st->st, &so, &err) ||
	    hd_stats_add_store(st->st, st->s, &err) ||
	    hd_stats_finish(st->st, &err))
		return lib_fail(&err);
	hd_stats_totals_get(&st->tot, st->st);
	if (hd_reach_new(&st->reach, st->s, 0, &err))
		return lib_fail(&err);
	if (hd_domtree_new(&st->dt, st->s, HD_DOMTREE_SKIP_DUMPER, &err))
		return lib_fail(&err);
	if (hd_domtree_classes(&st->cr, &st->ncr, st->dt, &err))
		return lib_fail(&err);
	if (!(st->cr_name = malloc((st->ncr + 1) * sizeof(size_t))) ||
	    build_kids(st)) {
		cli_error("serve: out of memory");
		return EXIT_FAIL;
	}
	if (build_order(st)) {
		cli_error("serve: out of memory");
		return EXIT_FAIL;
	}
	for (i = 0; i < st->ncr; i++)
		st->cr_name[i] = i;
	cr_base = st->cr;
	qsort(st->cr_name, st->ncr, sizeof(size_t), cmp_cr_name);
	if (st->n > 1) {
		hd_stats_options co = HD_STATS_OPTIONS_INIT;
		hd_leaks_options lo = HD_LEAKS_OPTIONS_INIT;
		const hd_store *side;
		const hd_nodes *set;

		if (hd_diff(&st->diff, st->ss[0], st->ss[1],
			    st->n > 2 ? st->ss[2] : NULL, NULL, &err))
			return lib_fail(&err);
		co.keys[0][0] = HD_KEY_CLASS;
		co.nkeys[0] = 1;
		co.ngroupings = 1;
		side = st->n > 2 ? st->ss[2] : st->ss[1];
		set = st->n > 2 ? &st->diff->retained_later : &st->diff->added;
		lo.top = 50;
		if (hd_stats_new(&st->diff_st, &co, &err) ||
		    hd_stats_add_nodes(st->diff_st, side, set, &err) ||
		    hd_stats_finish(st->diff_st, &err) ||
		    hd_leaks_build(&st->leaks, st->s, st->diff, &lo, &err))
			return lib_fail(&err);
	}
	/* every call, search too, is answered at once once serving */
	strings_wait(st);
	if (!quiet)
		fprintf(stderr, "%s: serve: ready in %.2f s (%u objects)\n",
			PROGRAM_NAME, cli_now() - t0,
			hd_store_node_count(st->s));
	return 0;
}

/* Input i through its cached store (or, no_cache, as cli_open_store),
 * saying what was done. */
static int open_input(struct serve_state *st, int i, int quiet,
		      int no_cache)
{
	hd_cache_result res;
	int rc;

	if (no_cache)
		return cli_open_store(&st->in[i], &st->ss[i]);
	if ((rc = cli_open_store_cached(&st->in[i], &st->ss[i],
					HD_CACHE_DOMINATORS, &res)))
		return rc;
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
	int i, rc;

	*out = NULL;
	if (!st) {
		cli_error("serve: out of memory");
		return EXIT_FAIL;
	}
	st->n = n;
	st->walk_g = -1;
	for (i = 0; i < n; i++) {
		cli_input_init(&st->in[i], paths[i], 0, quiet);
		st->in[i].indexing = 1;
		if ((rc = open_input(st, i, quiet, no_cache)))
			goto fail;
	}
	st->s = st->ss[n - 1];
	if (n > 1 && (rc = cli_check_order(st->ss, st->in, (size_t)n, 0)))
		goto fail;
	st->has_sc = cli_sidecar_read(paths[n - 1], &st->sc);
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
	strings_wait(st);
	hd_leaks_free(st->leaks);
	hd_stats_free(st->diff_st);
	hd_diff_result_free(st->diff);
	hd_strings_free(st->strs);
	free(st->lc);
	free(st->lc_off);
	free(st->kids);
	free(st->kid_off);
	free(st->ret);
	free(st->cr_name);
	hd_class_retained_free(st->cr);
	hd_domtree_free(st->dt);
	hd_reach_free(st->reach);
	hd_stats_free(st->st);
	free(st->order);
	free(st->cls);
	free(st->cls_name);
	free(st->cls_len);
	free(st->walk_key);
	if (st->has_sc)
		cli_sidecar_free(&st->sc);
	for (i = 0; i < st->n; i++)
		hd_store_close(st->ss[i]);
	free(st);
}

/* ---- requests ---- */

struct out {
	FILE *f;
	struct serve_resp *resp;
	char *buf;
	size_t len;
};

static int out_open(struct out *o, struct serve_resp *resp)
{
	o->resp = resp;
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	return o->f ? 0 : -1;
}

static void out_close(struct out *o, unsigned status)
{
	fputc('\n', o->f);
	if (fclose(o->f) != 0) {
		free(o->buf);
		o->buf = NULL;
		o->len = 0;
	}
	o->resp->status = status;
	o->resp->body = o->buf;
	o->resp->len = o->len;
}

static void jstr(FILE *f, const char *s)
{
	cli_json_string(f, s ? s : "", s ? strlen(s) : 0);
}

static void bad_request(struct out *o, unsigned status, const char *msg)
{
	/* what was written before is dropped */
	fclose(o->f);
	free(o->buf);
	if (out_open(o, o->resp)) {
		o->resp->body = NULL;
		return;
	}
	fprintf(o->f, "{\"error\":");
	jstr(o->f, msg);
	fprintf(o->f, "}");
	out_close(o, status);
}

/* A number argument: def when absent; -1 (and a message) when bad. */
static int arg_u64(const struct serve_req *r, const char *name, uint64_t def,
		   uint64_t max, uint64_t *v)
{
	const char *a = r->arg(r, name);
	char *end;
	unsigned long long x;

	*v = def;
	if (!a || !*a)
		return 0;
	errno = 0;
	x = strtoull(a, &end, 10);
	if (errno || *end || *a == '-' || x > max)
		return -1;
	*v = x;
	return 0;
}

static int page_args(const struct serve_req *r, uint64_t *off, uint64_t *lim,
		     uint64_t def)
{
	if (arg_u64(r, "offset", 0, UINT64_MAX / 2, off))
		return -1;
	return arg_u64(r, "limit", def, MAX_LIMIT, lim);
}

static int parse_address(const char *a, uint64_t *addr)
{
	char *end;

	if (!a || !*a)
		return -1;
	errno = 0;
	*addr = strtoull(a, &end, 16);
	return (errno || *end || *a == '-') ? -1 : 0;
}

static int group_index(const char *by)
{
	int g;

	if (!by)
		return 1; /* class */
	for (g = 0; g < NGROUPS; g++)
		if (strcmp(hd_key_name(group_keys[g]), by) == 0)
			return g;
	return -1;
}

/* Case-insensitive substring: filters and search. */
static int contains(const char *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle), i, j;

	if (m == 0)
		return 1;
	for (i = 0; i + m <= n; i++) {
		for (j = 0; j < m; j++)
			if (tolower((unsigned char)hay[i + j]) !=
			    tolower((unsigned char)needle[j]))
				break;
		if (j == m)
			return 1;
	}
	return 0;
}

static const hd_class_retained *class_retained(const struct serve_state *st,
					       const char *name)
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

/* A node as JSON, with its retained size and dominated children. */
static void node_json(FILE *f, const struct serve_state *st, hd_node_id v)
{
	char name[256];
	uint64_t rc, rm;

	cli_node_json(f, st->s, v);
	fseek(f, -1, SEEK_CUR); /* reopen the object */
	hd_store_node_name(name, sizeof(name), st->s, v);
	fprintf(f, ",\"label\":");
	jstr(f, name);
	rc = hd_domtree_retained(st->dt, v, &rm);
	fprintf(f, ",\"retained_count\":%llu,\"retained_memsize\":%llu,"
		"\"dominated\":%u}", (unsigned long long)rc,
		(unsigned long long)rm,
		st->kid_off[v + 1] - st->kid_off[v]);
}

static void root_name_json(FILE *f, const hd_store *s, uint32_t root,
			   hd_node_id first)
{
	const char *name;
	size_t n = 0;

	fprintf(f, "\"root\":");
	jstr(f, root == UINT32_MAX ? NULL : hd_store_root_name(s, root));
	if (root != UINT32_MAX && first != HD_NODE_NONE &&
	    (name = hd_store_root_ref_name(s, root, first, &n))) {
		fprintf(f, ",\"root_name\":");
		cli_json_string(f, name, n);
	}
}

/* The runs of repeated hops of a path (hd_path_fold), each as
 * [start, period, count]: what the page folds. */
static void runs_json(FILE *f, const hd_store *s, const hd_root_path *p)
{
	hd_path_runs runs = { 0 };
	size_t k;

	if (hd_path_fold(&runs, s, p->nodes, p->n, NULL, NULL))
		runs.n = 0;
	for (k = 0; k < runs.n; k++)
		fprintf(f, "%s[%zu,%zu,%zu]", k ? "," : "",
			runs.runs[k].start, runs.runs[k].period,
			runs.runs[k].count);
	hd_path_runs_free(&runs);
}

/* A retention path: {"root", "root_name", "hops":[...], "text", "runs"}:
 * every hop, and the runs by which the page folds them. */
static void path_json(FILE *f, const hd_store *s, const hd_root_path *p)
{
	char hop[512], note[256];
	size_t k;

	fprintf(f, "{");
	root_name_json(f, s, p->root, p->n ? p->nodes[0] : HD_NODE_NONE);
	if (hd_path_note(note, sizeof(note), p)) {
		cli_path_rule_json(f, p);
		fprintf(f, ",\"note\":");
		jstr(f, note);
	}
	fprintf(f, ",\"hops\":[");
	for (k = 0; k < p->n; k++) {
		if (k)
			fputc(',', f);
		cli_hop_json(f, s, p->nodes[k],
			     k + 1 < p->n ? p->nodes[k + 1] : HD_NODE_NONE);
	}
	fprintf(f, "],\"text\":[");
	for (k = 0; k < p->n; k++) {
		hd_store_hop_text(hop, sizeof(hop), s, p->nodes[k],
				  k + 1 < p->n ? p->nodes[k + 1] :
				  HD_NODE_NONE);
		if (k)
			fputc(',', f);
		jstr(f, hop);
	}
	fprintf(f, "],\"runs\":[");
	runs_json(f, s, p);
	fprintf(f, "]}");
}

static void api_overview(struct serve_state *st, const struct serve_req *r,
			 struct out *o)
{
	const hd_stats_totals *t = &st->tot;
	const hd_stats_row *rows;
	FILE *f = o->f;
	size_t n, i;
	uint64_t rm = 0, rc;
	char c[64];
	int k;

	(void)r;
	fprintf(f, "{\"dump\":");
	jstr(f, st->in[st->n - 1].name);
	fprintf(f, ",\"dumps\":[");
	for (k = 0; k < st->n; k++) {
		if (k)
			fputc(',', f);
		jstr(f, st->in[k].name);
	}
	fprintf(f, "],\"ruby\":\"%s\",\"totals\":{\"objects\":%llu,"
		"\"memsize\":%llu,\"references\":%llu,\"roots\":%llu,"
		"\"root_categories\":%llu,\"shapes\":%llu,\"traced\":%llu,",
		hd_features_ruby(c, sizeof(c), t->features),
		(unsigned long long)t->objects, (unsigned long long)t->memsize,
		(unsigned long long)t->edges, (unsigned long long)t->roots,
		(unsigned long long)t->root_categories,
		(unsigned long long)t->shapes, (unsigned long long)t->traced);
	if (t->traced)
		fprintf(f, "\"generations\":[%llu,%llu],",
			(unsigned long long)t->gen_min,
			(unsigned long long)t->gen_max);
	else
		fprintf(f, "\"generations\":null,");
	fprintf(f, "\"excluded\":%llu,\"excluded_memsize\":%llu%s}",
		(unsigned long long)t->excluded,
		(unsigned long long)t->excluded_memsize,
		t->saturated ? ",\"memsize_saturated\":true" : "");
	rc = hd_domtree_reached(st->dt, &rm);
	fprintf(f, ",\"reached\":{\"count\":%llu,\"memsize\":%llu}",
		(unsigned long long)rc, (unsigned long long)rm);
	fprintf(f, ",\"ref_names\":%s,\"diff\":%s",
		hd_store_has_ref_names(st->s) ? "true" : "false",
		st->n > 1 ? "true" : "false");
	rows = hd_stats_rows(st->st, 0, HD_SORT_COUNT, &n);
	fprintf(f, ",\"by_type\":[");
	for (i = 0; i < n; i++) {
		fprintf(f, "%s{\"type\":", i ? "," : "");
		cli_json_string(f, rows[i].key[0], rows[i].key_len[0]);
		fprintf(f, ",\"count\":%llu,\"memsize\":%llu}",
			(unsigned long long)rows[i].count,
			(unsigned long long)rows[i].memsize);
	}
	fprintf(f, "],\"roots_by_category\":[");
	for (i = 0; i < hd_store_root_count(st->s); i++) {
		hd_edge_iter it;

		hd_store_root_refs(st->s, (uint32_t)i, &it);
		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, hd_store_root_name(st->s, (uint32_t)i));
		fprintf(f, ",\"count\":%u}", hd_edge_iter_count(&it));
	}
	fprintf(f, "]");
	if (st->has_sc) {
		/* the sidecar's process memory against the heap's */
		const struct cli_sidecar *sc = &st->sc;

		fprintf(f, ",\"process\":{\"pid\":%llu,\"ruby_version\":",
			(unsigned long long)sc->pid);
		jstr(f, sc->ruby_version);
		fprintf(f, ",\"rss\":%llu,\"objects_memsize\":%llu",
			(unsigned long long)sc->rss,
			(unsigned long long)t->memsize);
		if (sc->has_memsize_of_all)
			fprintf(f, ",\"memsize_of_all\":%llu",
				(unsigned long long)sc->memsize_of_all);
		if (sc->has_malloc)
			fprintf(f, ",\"malloc_in_use\":%llu",
				(unsigned long long)sc->malloc_in_use);
		fprintf(f, "}");
	} else {
		fprintf(f, ",\"process\":null");
	}
	fprintf(f, "}");
	out_close(o, 200);
}

/* ---- groups ---- */

struct key_sort {
	const hd_stats_row *rows;
	const uint64_t *ret;
	int by; /* 0 key, 1 retained */
};

static struct key_sort ks;

static int cmp_rows(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const hd_stats_row *p = &ks.rows[x], *q = &ks.rows[y];
	size_t n;
	int c;

	if (ks.by == 1 && ks.ret[x] != ks.ret[y])
		return ks.ret[x] < ks.ret[y] ? 1 : -1;
	n = p->key_len[0] < q->key_len[0] ? p->key_len[0] : q->key_len[0];
	c = memcmp(p->key[0], q->key[0], n);
	if (c)
		return c;
	return p->key_len[0] < q->key_len[0] ? -1 :
	       p->key_len[0] > q->key_len[0];
}

static void api_stats(struct serve_state *st, const struct serve_req *r,
		      struct out *o)
{
	const char *sort = r->arg(r, "sort"), *order = r->arg(r, "order");
	const char *filter = r->arg(r, "filter");
	int g = group_index(r->arg(r, "by")), mode, asc;
	const hd_stats_row *rows;
	uint64_t off, lim, *ret = NULL;
	size_t n, i, m = 0, *idx = NULL, k;
	FILE *f = o->f;

	if (g < 0) {
		bad_request(o, 400, "by: type, class, file, location, gem, "
			    "generation or imemo");
		return;
	}
	if (!sort || !strcmp(sort, "count"))
		mode = 0;
	else if (!strcmp(sort, "memsize"))
		mode = 1;
	else if (!strcmp(sort, "retained") && g == 1)
		mode = 2;
	else if (!strcmp(sort, "key"))
		mode = 3;
	else {
		bad_request(o, 400, "sort: count, memsize, key (or retained, "
			    "by class)");
		return;
	}
	asc = order && !strcmp(order, "asc");
	if (page_args(r, &off, &lim, 50)) {
		bad_request(o, 400, "offset and limit: numbers (limit at "
			    "most 1000)");
		return;
	}
	rows = hd_stats_rows(st->st, (unsigned)g,
			     mode == 1 ? HD_SORT_MEMSIZE : HD_SORT_COUNT, &n);
	idx = malloc((n + 1) * sizeof(*idx));
	if (g == 1)
		ret = calloc(n + 1, sizeof(*ret));
	if (!idx || (g == 1 && !ret)) {
		free(idx);
		free(ret);
		bad_request(o, 500, "out of memory");
		return;
	}
	for (i = 0; i < n; i++) {
		if (filter && !contains(rows[i].key[0], rows[i].key_len[0],
					filter))
			continue;
		if (ret) {
			const hd_class_retained *c =
				class_retained(st, rows[i].key[0]);
			ret[i] = c ? c->retained_memsize : 0;
		}
		idx[m++] = i;
	}
	if (mode >= 2) {
		ks.rows = rows;
		ks.ret = ret;
		ks.by = mode == 2;
		qsort(idx, m, sizeof(*idx), cmp_rows);
		if (mode == 3)
			asc = !asc; /* by key: A first unless desc asked */
	}
	fprintf(f, "{\"by\":\"%s\",\"sort\":\"%s\",\"order\":\"%s\","
		"\"rows_total\":%zu,\"rows_matched\":%zu,\"offset\":%llu,"
		"\"rows\":[", hd_key_name(group_keys[g]),
		mode == 0 ? "count" : mode == 1 ? "memsize" :
		mode == 2 ? "retained" : "key",
		(order && !strcmp(order, "asc")) ? "asc" : "desc", n, m,
		(unsigned long long)off);
	for (k = 0; off + k < m && k < lim; k++) {
		i = idx[asc ? m - 1 - (off + k) : off + k];
		fprintf(f, "%s{\"key\":", k ? "," : "");
		cli_json_string(f, rows[i].key[0], rows[i].key_len[0]);
		fprintf(f, ",\"count\":%llu,\"memsize\":%llu",
			(unsigned long long)rows[i].count,
			(unsigned long long)rows[i].memsize);
		if (g == 1) {
			const hd_class_retained *c =
				class_retained(st, rows[i].key[0]);

			if (c)
				fprintf(f, ",\"retained_count\":%llu,"
					"\"retained_memsize\":%llu",
					(unsigned long long)c->retained_count,
					(unsigned long long)c->retained_memsize);
		}
		fputc('}', f);
	}
	fprintf(f, "]}");
	free(idx);
	free(ret);
	out_close(o, 200);
}

/* Walks st->order for the objects of group g's key, largest retained
 * first. The membership test of each grouping reads the columns of the
 * store: the class index (computed at start), type, imemo_type,
 * generation, allocation site; a gem is the files the stats of
 * (file, gem) put in it. Pointer-keyed caches: the store interns its
 * strings, so one file is one pointer. */
#define WCACHE 4096

struct walk {
	int k;
	const char *key;
	size_t klen;
	int nosite;          /* the key is "(untraced)": no site, no gen */
	int type;
	uint32_t cls;
	uint64_t num;        /* generation, line */
	size_t flen;         /* location: the file part */
	const char **files;  /* gem: its files, sorted */
	size_t *flens;
	size_t nfiles;
	const char *cptr[WCACHE];
	signed char cval[WCACHE];
};

/* Is the string at p (n bytes, interned) what the walk looks for? */
static int str_test(struct walk *w, const char *p, size_t n)
{
	size_t lo = 0, hi = w->nfiles, mid;
	int c;

	if (w->k != HD_KEY_GEM)
		return n == w->flen && memcmp(p, w->key, n) == 0;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = cmp_mem(w->files[mid], w->flens[mid], p, n);
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int str_match(struct walk *w, const char *p, size_t n)
{
	size_t h = ((uintptr_t)p >> 3) & (WCACHE - 1);

	if (w->cptr[h] != p) {
		w->cptr[h] = p;
		w->cval[h] = (signed char)str_test(w, p, n);
	}
	return w->cval[h];
}

static int member(const struct serve_state *st, struct walk *w,
		  hd_node_id v)
{
	const char *a;
	hd_site site;
	uint64_t gen;
	size_t n = 0;

	switch (w->k) {
	case HD_KEY_CLASS:
		return st->cls[v] == w->cls;
	case HD_KEY_TYPE:
		return hd_store_type(st->s, v) == w->type;
	case HD_KEY_IMEMO:
		if (hd_store_type(st->s, v) != HD_T_IMEMO)
			return 0;
		a = hd_store_aux(st->s, v, &n);
		if (!a)
			return w->klen == 6 && !memcmp(w->key, "(none)", 6);
		return str_match(w, a, n);
	case HD_KEY_GENERATION:
		gen = hd_store_generation(st->s, v);
		return gen == UINT64_MAX ? w->nosite : gen == w->num;
	default: /* file, location, gem */
		if (hd_store_site(&site, st->s, v) != 0 || !site.file)
			return w->nosite;
		if (w->k == HD_KEY_LOCATION && site.line != w->num)
			return 0;
		return str_match(w, site.file, site.file_len);
	}
}

static void walk_free(struct walk *w)
{
	free(w->files);
	free(w->flens);
}

/* Sets up w for group g's key; NULL or a message. */
static const char *walk_init(struct serve_state *st, struct walk *w, int g,
			     const char *key)
{
	const char *colon;
	char *end;

	memset(w, 0, sizeof(*w));
	w->k = group_keys[g];
	w->key = key;
	w->klen = w->flen = strlen(key);
	w->nosite = strcmp(key, "(untraced)") == 0;
	switch (w->k) {
	case HD_KEY_CLASS:
		if ((w->cls = (uint32_t)cls_find(st, key, w->klen)) ==
		    (uint32_t)-1)
			return "no such class";
		return NULL;
	case HD_KEY_TYPE:
		if (!(w->type = hd_type_from_name(key, w->klen)))
			return "no such type";
		return NULL;
	case HD_KEY_GENERATION:
		if (w->nosite)
			return NULL;
		errno = 0;
		w->num = strtoull(key, &end, 10);
		return (errno || *end || !*key) ? "generation: a number" : NULL;
	case HD_KEY_LOCATION:
		if (w->nosite)
			return NULL;
		if (!(colon = strrchr(key, ':')))
			return "location: FILE:LINE";
		w->flen = (size_t)(colon - key);
		errno = 0;
		w->num = strtoull(colon + 1, &end, 10);
		return (errno || *end) ? "location: FILE:LINE" : NULL;
	case HD_KEY_GEM: {
		/* the files the library puts in this gem */
		const hd_stats_row *rows;
		size_t n, i;

		rows = hd_stats_rows(st->st, NGROUPS, HD_SORT_COUNT, &n);
		w->files = malloc((n + 1) * sizeof(*w->files));
		w->flens = malloc((n + 1) * sizeof(*w->flens));
		if (!w->files || !w->flens)
			return "out of memory";
		for (i = 0; i < n; i++)
			if (rows[i].key_len[1] == w->klen &&
			    !memcmp(rows[i].key[1], key, w->klen)) {
				w->files[w->nfiles] = rows[i].key[0];
				w->flens[w->nfiles++] = rows[i].key_len[0];
			}
		/* sorted for str_test's search */
		for (i = 1; i < w->nfiles; i++) {
			const char *f = w->files[i];
			size_t fl = w->flens[i], j = i;

			while (j > 0 && cmp_mem(w->files[j - 1],
						w->flens[j - 1], f, fl) > 0) {
				w->files[j] = w->files[j - 1];
				w->flens[j] = w->flens[j - 1];
				j--;
			}
			w->files[j] = f;
			w->flens[j] = fl;
		}
		return NULL;
	}
	default:
		return NULL;
	}
}

/* The number of objects in group g's key, from the stats. */
static uint64_t group_count(struct serve_state *st, int g, const char *key)
{
	const hd_stats_row *rows;
	size_t n, i, kl = strlen(key);

	rows = hd_stats_rows(st->st, (unsigned)g, HD_SORT_COUNT, &n);
	for (i = 0; i < n; i++)
		if (rows[i].key_len[0] == kl && !memcmp(rows[i].key[0], key, kl))
			return rows[i].count;
	return 0;
}

static void api_objects(struct serve_state *st, const struct serve_req *r,
			struct out *o)
{
	int g = group_index(r->arg(r, "by"));
	const char *key = r->arg(r, "key"), *e;
	uint64_t off, lim, k = 0;
	struct walk *w;
	size_t pos = 0, matched = 0;

	if (g < 0 || !key) {
		bad_request(o, 400, "by (a grouping) and key (a group) are "
			    "needed");
		return;
	}
	if (page_args(r, &off, &lim, 50)) {
		bad_request(o, 400, "offset and limit: numbers (limit at "
			    "most 1000)");
		return;
	}
	if (!(w = malloc(sizeof(*w)))) {
		bad_request(o, 500, "out of memory");
		return;
	}
	if ((e = walk_init(st, w, g, key))) {
		walk_free(w);
		free(w);
		bad_request(o, 400, e);
		return;
	}
	/* the next page starts where the last one stopped */
	if (st->walk_g == g && st->walk_key && !strcmp(st->walk_key, key) &&
	    st->walk_matched <= off) {
		pos = st->walk_pos;
		matched = st->walk_matched;
	}
	fprintf(o->f, "{\"by\":\"%s\",\"key\":", hd_key_name(group_keys[g]));
	jstr(o->f, key);
	fprintf(o->f, ",\"total\":%llu,\"offset\":%llu,\"objects\":[",
		(unsigned long long)group_count(st, g, key),
		(unsigned long long)off);
	for (; pos < st->norder && k < lim; pos++) {
		if (!member(st, w, st->order[pos]))
			continue;
		if (matched++ < off)
			continue;
		if (k++)
			fputc(',', o->f);
		node_json(o->f, st, st->order[pos]);
	}
	fprintf(o->f, "]}");
	free(st->walk_key);
	st->walk_key = strdup(key);
	st->walk_g = st->walk_key ? g : -1;
	st->walk_pos = pos;
	st->walk_matched = matched;
	walk_free(w);
	free(w);
	out_close(o, 200);
}

/* ---- one object ---- */

static const char *const bit_names[] = {
	"frozen", "embedded", "shared", "fstring", "singleton", "chilled",
	"broken", "too_complex", "wb_protected", "old", "uncollectible",
	"marking", "marked", "pinned", "remembered", "shareable"
};

static int lookup(struct serve_state *st, const struct serve_req *r,
		  struct out *o, const char *name, hd_node_id *id)
{
	uint64_t addr;

	if (parse_address(r->arg(r, name), &addr)) {
		bad_request(o, 400, "address: a hex address (0x...)");
		return -1;
	}
	if ((*id = hd_store_find(st->s, addr)) == HD_NODE_NONE) {
		bad_request(o, 404, "no object at this address");
		return -1;
	}
	return 0;
}

static void edge_name(FILE *f, const char *name, size_t n, unsigned flags)
{
	if (!name)
		return;
	fprintf(f, ",\"ref\":");
	cli_json_string(f, name, n);
	if (flags & HD_NAME_INFERRED)
		fprintf(f, ",\"inferred\":true");
}

static void api_object(struct serve_state *st, const struct serve_req *r,
		       struct out *o)
{
	hd_root_path p = { 0 };
	hd_error err = { 0 };
	hd_edge_iter it;
	hd_node_id id, v;
	uint64_t off, lim, len, gen;
	uint32_t bits, k = 0, shown;
	const char *aux, *name;
	size_t n;
	unsigned flags;
	FILE *f = o->f;
	int i, first;

	if (lookup(st, r, o, "address", &id))
		return;
	if (page_args(r, &off, &lim, 100)) {
		bad_request(o, 400, "offset and limit: numbers");
		return;
	}
	fprintf(f, "{\"object\":");
	node_json(f, st, id);
	fseek(f, -1, SEEK_CUR);
	if ((aux = hd_store_aux(st->s, id, &n))) {
		fprintf(f, ",\"aux\":");
		cli_json_string(f, aux, n);
	}
	if ((gen = hd_store_generation(st->s, id)) != UINT64_MAX)
		fprintf(f, ",\"generation\":%llu", (unsigned long long)gen);
	if (hd_store_length(&len, st->s, id))
		fprintf(f, ",\"length\":%llu", (unsigned long long)len);
	bits = hd_store_bits(st->s, id);
	fprintf(f, ",\"flags\":[");
	for (i = 0, first = 1; i < 16; i++)
		if (bits & (1u << i)) {
			fprintf(f, "%s\"%s\"", first ? "" : ",", bit_names[i]);
			first = 0;
		}
	fprintf(f, "]}");
	/* references, with their names */
	hd_store_refs(st->s, id, &it);
	fprintf(f, ",\"refs_total\":%u,\"offset\":%llu,\"refs\":[",
		hd_edge_iter_count(&it), (unsigned long long)off);
	for (shown = 0; hd_edge_iter_next(&it, &v) == 0; k++) {
		if (k < off || shown >= lim)
			continue;
		fprintf(f, "%s{\"object\":", shown++ ? "," : "");
		node_json(f, st, v);
		flags = 0;
		name = hd_store_ref_name_at(st->s, id, k, &n, &flags);
		edge_name(f, name, n, flags);
		fputc('}', f);
	}
	hd_store_referrers(st->s, id, &it);
	fprintf(f, "],\"referrers_total\":%u,\"referrers\":[",
		hd_edge_iter_count(&it));
	for (k = 0, shown = 0; hd_edge_iter_next(&it, &v) == 0; k++) {
		if (k < off || shown >= lim)
			continue;
		fprintf(f, "%s{\"object\":", shown++ ? "," : "");
		node_json(f, st, v);
		flags = 0;
		name = hd_store_ref_name(st->s, v, id, &n, &flags);
		edge_name(f, name, n, flags);
		fputc('}', f);
	}
	fprintf(f, "],\"path\":");
	if (hd_reach_path(&p, st->reach, id, &err) == 0) {
		path_json(f, st->s, &p);
	} else {
		fprintf(f, "null,\"path_error\":");
		jstr(f, err.msg);
	}
	fprintf(f, ",\"dominators\":");
	if (hd_domtree_chain(&p, st->dt, id, &err) == 0) {
		fprintf(f, "{");
		root_name_json(f, st->s, p.root, p.n ? p.nodes[0] :
			       HD_NODE_NONE);
		fprintf(f, ",\"chain\":[");
		for (n = 0; n < p.n; n++) {
			if (n)
				fputc(',', f);
			node_json(f, st, p.nodes[n]);
		}
		fprintf(f, "],\"runs\":[");
		runs_json(f, st->s, &p);
		fprintf(f, "]}");
	} else {
		fprintf(f, "null");
	}
	hd_root_path_free(&p);
	fprintf(f, "}");
	out_close(o, 200);
}

/* ---- the dominator tree ---- */

static void api_domtree(struct serve_state *st, const struct serve_req *r,
			struct out *o)
{
	const char *a = r->arg(r, "node");
	uint32_t nn = hd_store_node_count(st->s), b, e;
	hd_node_id id = nn;
	uint64_t off, lim, k, rm = 0;
	FILE *f = o->f;

	if (a && *a && strcmp(a, "root") != 0 &&
	    lookup(st, r, o, "node", &id))
		return;
	if (page_args(r, &off, &lim, 50)) {
		bad_request(o, 400, "offset and limit: numbers");
		return;
	}
	b = st->kid_off[id];
	e = st->kid_off[id + 1];
	fprintf(f, "{\"node\":");
	if (id == nn) {
		uint64_t rc = hd_domtree_reached(st->dt, &rm);

		fprintf(f, "null,\"reached_count\":%llu,"
			"\"reached_memsize\":%llu", (unsigned long long)rc,
			(unsigned long long)rm);
	} else {
		node_json(f, st, id);
	}
	fprintf(f, ",\"total\":%u,\"offset\":%llu,\"children\":[", e - b,
		(unsigned long long)off);
	for (k = 0; off + k < e - b && k < lim; k++) {
		if (k)
			fputc(',', f);
		node_json(f, st, st->kids[b + off + k]);
	}
	fprintf(f, "]}");
	out_close(o, 200);
}

/* ---- search ---- */

static int is_address(const char *q)
{
	size_t i = (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) ? 2 : 0;
	size_t n = 0;

	for (; q[i]; i++, n++)
		if (!isxdigit((unsigned char)q[i]))
			return 0;
	return n >= 4;
}

static void search_rows(struct serve_state *st, FILE *f, int g,
			const char *q, uint64_t lim)
{
	const hd_stats_row *rows;
	size_t n, i, m = 0;

	rows = hd_stats_rows(st->st, (unsigned)g, HD_SORT_COUNT, &n);
	fprintf(f, "{\"by\":\"%s\",\"rows\":[", hd_key_name(group_keys[g]));
	for (i = 0; i < n; i++) {
		if (!contains(rows[i].key[0], rows[i].key_len[0], q))
			continue;
		if (m++ < lim) {
			fprintf(f, "%s{\"key\":", m > 1 ? "," : "");
			cli_json_string(f, rows[i].key[0], rows[i].key_len[0]);
			fprintf(f, ",\"count\":%llu,\"memsize\":%llu}",
				(unsigned long long)rows[i].count,
				(unsigned long long)rows[i].memsize);
		}
	}
	fprintf(f, "],\"matched\":%zu}", m);
}

static void api_search(struct serve_state *st, const struct serve_req *r,
		       struct out *o)
{
	const char *q = r->arg(r, "q"), *kind = r->arg(r, "kind");
	uint64_t lim, addr;
	FILE *f = o->f;
	size_t n, i, m = 0;
	int all = !kind || !*kind || !strcmp(kind, "any");

	if (!q || !*q) {
		bad_request(o, 400, "q: what to look for");
		return;
	}
	if (!all && strcmp(kind, "address") && strcmp(kind, "class") &&
	    strcmp(kind, "site") && strcmp(kind, "string")) {
		bad_request(o, 400, "kind: any, address, class, site or string");
		return;
	}
	if (arg_u64(r, "limit", 20, MAX_LIMIT, &lim)) {
		bad_request(o, 400, "limit: a number up to 1000");
		return;
	}
	fprintf(f, "{\"q\":");
	jstr(f, q);
	fprintf(f, ",\"address\":");
	if ((all || !strcmp(kind, "address")) && is_address(q) &&
	    parse_address(q[1] == 'x' || q[1] == 'X' ? q + 2 : q, &addr) == 0 &&
	    hd_store_find(st->s, addr) != HD_NODE_NONE)
		node_json(f, st, hd_store_find(st->s, addr));
	else
		fprintf(f, "null");
	fprintf(f, ",\"classes\":");
	if (all || !strcmp(kind, "class"))
		search_rows(st, f, 1, q, lim);
	else
		fprintf(f, "null");
	fprintf(f, ",\"sites\":");
	if (all || !strcmp(kind, "site"))
		search_rows(st, f, 3, q, lim);
	else
		fprintf(f, "null");
	fprintf(f, ",\"strings\":");
	if (!(all || !strcmp(kind, "string"))) {
		fprintf(f, "null");
	} else if (!st->strs) {
		fprintf(f, "{\"rows\":[],\"matched\":0,\"unavailable\":");
		jstr(f, st->strs_msg);
		fprintf(f, "}");
	} else {
		const hd_strings_row *rows = hd_strings_rows(st->strs, &n);
		size_t ql = strlen(q), pos = 0, lo, hi;
		char *lq = strdup(q);
		const char *hit;
		int more = 0;

		for (i = 0; lq && i < ql; i++)
			lq[i] = (char)tolower((unsigned char)lq[i]);
		fprintf(f, "{\"rows\":[");
		while (lq && pos < st->lc_off[st->nlc] &&
		       (hit = memmem(st->lc + pos, st->lc_off[st->nlc] - pos,
				     lq, ql))) {
			/* the row holding the hit: the last that starts at
			 * or before it */
			lo = 0;
			hi = st->nlc;
			while (hi - lo > 1) {
				size_t mid = (lo + hi) / 2;

				if (st->lc_off[mid] <= (size_t)(hit - st->lc))
					lo = mid;
				else
					hi = mid;
			}
			i = lo;
			pos = st->lc_off[i + 1];
			if (memchr(hit, '\0', ql))
				continue; /* across two values */
			if (m >= SEARCH_COUNT_MAX) {
				more = 1; /* counted far enough */
				break;
			}
			if (m++ >= lim)
				continue;
			fprintf(f, "%s{\"value\":", m > 1 ? "," : "");
			cli_json_string(f, rows[i].value, rows[i].value_len);
			fprintf(f, ",\"bytesize\":%llu,\"count\":%llu,"
				"\"memsize\":%llu,\"complete\":%s,\"object\":",
				(unsigned long long)rows[i].bytesize,
				(unsigned long long)rows[i].count,
				(unsigned long long)rows[i].memsize,
				rows[i].complete ? "true" : "false");
			if (rows[i].node != HD_NODE_NONE)
				node_json(f, st, rows[i].node);
			else
				fprintf(f, "null");
			fputc('}', f);
		}
		free(lq);
		fprintf(f, "],\"matched\":%zu,\"more\":%s}", m,
			more ? "true" : "false");
	}
	fprintf(f, "}");
	out_close(o, 200);
}

/* ---- diff and leaks ---- */

static int need_diff(struct serve_state *st, struct out *o)
{
	if (st->n > 1)
		return 0;
	bad_request(o, 404, "one dump: serve BEFORE AFTER [LATER] for the "
		    "diff and the leak suspects");
	return -1;
}

static void api_diff(struct serve_state *st, const struct serve_req *r,
		     struct out *o)
{
	const hd_diff_result *d = st->diff;
	const hd_stats_row *rows;
	uint64_t off, lim, k;
	FILE *f = o->f;
	size_t n;
	int m;

	if (need_diff(st, o))
		return;
	if (page_args(r, &off, &lim, 50)) {
		bad_request(o, 400, "offset and limit: numbers");
		return;
	}
	fprintf(f, "{\"before\":");
	jstr(f, st->in[0].name);
	fprintf(f, ",\"after\":");
	jstr(f, st->in[1].name);
	fprintf(f, ",\"later\":");
	if (st->n > 2)
		jstr(f, st->in[2].name);
	else
		fprintf(f, "null");
	fprintf(f, ",\"objects\":[%llu,%llu,%llu],\"traced\":%s,"
		"\"new\":{\"count\":%zu,\"memsize\":%llu},",
		(unsigned long long)d->objects[0],
		(unsigned long long)d->objects[1],
		(unsigned long long)d->objects[2],
		d->traced ? "true" : "false", d->added.n,
		(unsigned long long)d->added_memsize);
	if (d->has_later)
		fprintf(f, "\"retained\":{\"count\":%zu,\"memsize\":%llu},",
			d->retained.n, (unsigned long long)d->retained_memsize);
	else
		fprintf(f, "\"retained\":null,");
	fprintf(f, "\"uncertain\":%llu,\"verdicts\":{",
		(unsigned long long)d->uncertain);
	for (m = 1, k = 0; m < HD_MATCH__COUNT; m++) {
		if (!d->by_match[m])
			continue;
		fprintf(f, "%s", k++ ? "," : "");
		jstr(f, hd_match_name(m));
		fprintf(f, ":%llu", (unsigned long long)d->by_match[m]);
	}
	rows = hd_stats_rows(st->diff_st, 0, HD_SORT_MEMSIZE, &n);
	fprintf(f, "},\"classes_of\":\"%s\",\"rows_total\":%zu,\"offset\":%llu,"
		"\"rows\":[", d->has_later ? "retained" : "new", n,
		(unsigned long long)off);
	for (k = 0; off + k < n && k < lim; k++) {
		fprintf(f, "%s{\"key\":", k ? "," : "");
		cli_json_string(f, rows[off + k].key[0],
				rows[off + k].key_len[0]);
		fprintf(f, ",\"count\":%llu,\"memsize\":%llu}",
			(unsigned long long)rows[off + k].count,
			(unsigned long long)rows[off + k].memsize);
	}
	fprintf(f, "]}");
	out_close(o, 200);
}

static void api_leaks(struct serve_state *st, const struct serve_req *r,
		      struct out *o)
{
	hd_leaks_totals t;
	hd_root_path p = { 0 };
	hd_error err = { 0 };
	uint64_t off, lim, k;
	FILE *f = o->f;

	if (need_diff(st, o))
		return;
	if (page_args(r, &off, &lim, 20)) {
		bad_request(o, 400, "offset and limit: numbers");
		return;
	}
	hd_leaks_totals_get(&t, st->leaks);
	fprintf(f, "{\"totals\":{\"leak_count\":%llu,\"leak_memsize\":%llu,"
		"\"border\":%llu,\"groups\":%zu,\"folded\":%zu,"
		"\"folded_count\":%llu,\"folded_memsize\":%llu},"
		"\"offset\":%llu,\"suspects\":[",
		(unsigned long long)t.leak_count,
		(unsigned long long)t.leak_memsize,
		(unsigned long long)t.border, t.groups, t.folded,
		(unsigned long long)t.folded_count,
		(unsigned long long)t.folded_memsize, (unsigned long long)off);
	for (k = 0; off + k < t.groups && k < lim; k++) {
		const hd_leaks_suspect *sp =
			hd_leaks_suspect_get(st->leaks, (size_t)(off + k));
		hd_node_id who = sp->holder != HD_NODE_NONE ? sp->holder :
				 sp->first;

		fprintf(f, "%s{\"rank\":%llu,\"holder\":", k ? "," : "",
			(unsigned long long)(off + k + 1));
		if (sp->holder != HD_NODE_NONE)
			node_json(f, st, sp->holder);
		else
			fprintf(f, "null");
		fprintf(f, ",\"first_border\":");
		node_json(f, st, sp->first);
		fprintf(f, ",\"holders\":%u,\"roots\":%u,\"border_count\":%llu,"
			"\"retained_count\":%llu,\"retained_memsize\":%llu,"
			"\"share\":%.4f,\"path\":", sp->holders, sp->roots,
			(unsigned long long)sp->border_count,
			(unsigned long long)sp->retained_count,
			(unsigned long long)sp->retained_memsize, sp->share);
		if (sp->path)
			path_json(f, st->s, sp->path);
		else if (hd_reach_path(&p, st->reach, who, &err) == 0)
			path_json(f, st->s, &p);
		else
			fprintf(f, "null");
		fputc('}', f);
	}
	hd_root_path_free(&p);
	fprintf(f, "]}");
	out_close(o, 200);
}

static const struct {
	const char *path;
	void (*fn)(struct serve_state *, const struct serve_req *,
		   struct out *);
} routes[] = {
	{ "overview", api_overview },
	{ "stats", api_stats },
	{ "objects", api_objects },
	{ "object", api_object },
	{ "domtree", api_domtree },
	{ "search", api_search },
	{ "diff", api_diff },
	{ "leaks", api_leaks },
	{ NULL, NULL }
};

void serve_api(struct serve_state *st, const struct serve_req *r,
	       struct serve_resp *resp)
{
	struct out o;
	size_t i;

	resp->body = NULL;
	if (serve_draw_api(st, r, resp))
		return;
	if (out_open(&o, resp))
		return;
	for (i = 0; routes[i].path; i++)
		if (strcmp(routes[i].path, r->path) == 0) {
			routes[i].fn(st, r, &o);
			return;
		}
	bad_request(&o, 404, "no such API call: overview, stats, objects, "
		    "object, domtree, search, diff, leaks, treemap, "
		    "graph.svg");
}

/* ---- what serve_draw.c reads ---- */

const hd_store *serve_state_store(const struct serve_state *st)
{
	return st->s;
}

const hd_domtree *serve_state_domtree(const struct serve_state *st)
{
	return st->dt;
}

const hd_reach *serve_state_reach(const struct serve_state *st)
{
	return st->reach;
}

const hd_leaks *serve_state_leaks(const struct serve_state *st)
{
	return st->n > 1 ? st->leaks : NULL;
}

const hd_node_id *serve_state_kids(const struct serve_state *st,
				   hd_node_id v, uint32_t *n)
{
	uint32_t i = v == HD_DOM_ROOT ? hd_store_node_count(st->s) : v;

	*n = st->kid_off[i + 1] - st->kid_off[i];
	return st->kids + st->kid_off[i];
}
