/*
 * api.c - the JSON API of heapdump serve (man 1 heapdump-serve,
 * API): every answer is computed by the library, once for what is
 * costly (the groups, the search from the roots, the dominator tree,
 * the strings, the diff and the leak model: state.c, at start or by
 * the first call that needs it), and only cut into pages, filtered,
 * sorted and printed here. Every string from a dump goes
 * through cli_json_string (and http.c writes '<', '>' and '&' as
 * \u escapes).
 *
 * Several threads answer at once (http.c): the state is only read,
 * but for the parts state.c computes once under their locks and the
 * place where the last walk of a group stopped (under walk_lock). No request does work superlinear in what a
 * dump holds: the groups' orders (by count, memsize, key, retained),
 * their keys lowercased for filters, and the files of each gem are
 * computed once; a filter is one memmem(3) pass over the keys;
 * the names of the references a page shows are read with one pass over
 * each referrer's references.
 */
#define _GNU_SOURCE /* memmem */
#include "state.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIMIT 1000
/* string values matching a search are counted up to this many */
#define SEARCH_COUNT_MAX 10000
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
		if (strcmp(hd_key_name(serve_group_keys[g]), by) == 0)
			return g;
	return -1;
}

#define class_retained serve_state_class_retained
#define cmp_mem serve_span_cmp

/* Marks (mark[i] = 1) the rows of v whose key holds q, case aside
 * (hd_text_search_mark: one linear pass), and returns how many. */
static size_t match_rows(const struct gview *v, const char *q,
			 unsigned char *mark)
{
	size_t m = hd_text_search_mark(v->ts, q, strlen(q), mark);

	return m == (size_t)-1 ? 0 : m;
}

/* A node as JSON, with its retained size and dominated children. */
/* The members of the API's node: cli_node_json's, its label, retained
 * size and dominated count (no braces: a caller may add its own). */
/* serve's own fields of a node: label, retained size, dominated count
 * (also the leak JSON writers' node_extra) */
static void node_extra(FILE *f, hd_node_id v, void *ctx)
{
	const struct serve_state *st = ctx;
	char name[256];
	uint64_t rc, rm;
	uint32_t nk;

	hd_store_node_name(name, sizeof(name), st->s, v);
	fprintf(f, ",\"label\":");
	jstr(f, name);
	rc = hd_domtree_retained(st->dt, v, &rm);
	hd_domtree_children_of(st->kids, v, &nk);
	fprintf(f, ",\"retained_count\":%llu,\"retained_memsize\":%llu,"
		"\"dominated\":%u", (unsigned long long)rc,
		(unsigned long long)rm, nk);
}

static void node_fields(FILE *f, const struct serve_state *st, hd_node_id v)
{
	cli_node_json_fields(f, st->s, v);
	node_extra(f, v, (void *)st);
}

static void node_json(FILE *f, const struct serve_state *st, hd_node_id v)
{
	fputc('{', f);
	node_fields(f, st, v);
	fputc('}', f);
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

/* A retention path in the one schema (hd_path_json_fields,
 * heapdump-json(5)), without the deprecated "objects", then serve's
 * own: the note of the path rule, and the runs by which the page folds
 * the hops. */
static void path_json(FILE *f, const hd_store *s, const hd_root_path *p)
{
	hd_leak_json_options jo = HD_LEAK_JSON_OPTIONS_INIT;
	char note[256];

	jo.flags &= ~HD_LEAK_JSON_ALIASES;
	fputc('{', f);
	hd_path_json_fields(f, s, p, &jo);
	if (hd_path_note(note, sizeof(note), p)) {
		fprintf(f, ",\"note\":");
		jstr(f, note);
	}
	fprintf(f, ",\"runs\":[");
	runs_json(f, s, p);
	fprintf(f, "]}");
}

/* ,"memory":{"buckets":[{key, label}...],"dumps":[{dump, rss, bytes}]}:
 * where each dump's RSS goes (heapdump memory's split), for the dumps
 * whose sidecars say; null when none does */
static void memory_json(FILE *f, struct serve_state *st)
{
	hd_memory_split sp;
	int k, b, any = 0;

	for (k = 0; k < st->n; k++) {
		if (!cli_memory_split(&sp, st->in[k].path, st->ss[k]))
			continue;
		if (!any++) {
			fprintf(f, ",\"memory\":{\"buckets\":[");
			for (b = 0; b < HD_MEM_NBUCKETS; b++)
				fprintf(f, "%s{\"key\":\"%s\",\"label\":\"%s\"}",
					b ? "," : "",
					hd_memory_bucket_key((hd_memory_bucket)b),
					hd_memory_bucket_label((hd_memory_bucket)b));
			fprintf(f, "],\"dumps\":[");
		} else {
			fputc(',', f);
		}
		fprintf(f, "{\"dump\":");
		jstr(f, st->in[k].name);
		fprintf(f, ",\"rss\":%llu,\"bytes\":[",
			(unsigned long long)sp.rss);
		for (b = 0; b < HD_MEM_NBUCKETS; b++) {
			if (b)
				fputc(',', f);
			if (sp.measured & (1u << b))
				fprintf(f, "%llu", (unsigned long long)sp.bytes[b]);
			else
				fputs("null", f);
		}
		fprintf(f, "]}");
	}
	fprintf(f, any ? "]}" : ",\"memory\":null");
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
	rows = st->gv[0].rows;
	n = st->gv[0].n;
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
	memory_json(f, st);
	fprintf(f, "}");
	out_close(o, 200);
}

/* ---- groups ---- */

static void api_stats(struct serve_state *st, const struct serve_req *r,
		      struct out *o)
{
	const char *sort = r->arg(r, "sort"), *order = r->arg(r, "order");
	const char *filter = r->arg(r, "filter");
	int g = group_index(r->arg(r, "by")), mode, asc;
	const struct gview *v;
	const size_t *by;
	unsigned char *mark = NULL;
	uint64_t off, lim;
	size_t n, i, m, p, k = 0, seen = 0;
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
	if (g == 1 && serve_state_need_classes(st)) {
		bad_request(o, 500, "retained by class: out of memory");
		return;
	}
	v = &st->gv[g];
	n = v->n;
	by = mode == 1 ? v->by_mem : mode == 2 ? v->by_ret :
	     mode == 3 ? v->by_key : NULL;
	if (mode == 3)
		asc = !asc; /* by key: A first unless desc asked */
	m = n;
	if (filter) {
		if (!(mark = calloc(n + 1, 1))) {
			bad_request(o, 500, "out of memory");
			return;
		}
		m = match_rows(v, filter, mark);
	}
	fprintf(f, "{\"by\":\"%s\",\"sort\":\"%s\",\"order\":\"%s\","
		"\"rows_total\":%zu,\"rows_matched\":%zu,\"offset\":%llu,"
		"\"rows\":[", hd_key_name(serve_group_keys[g]),
		mode == 0 ? "count" : mode == 1 ? "memsize" :
		mode == 2 ? "retained" : "key",
		(order && !strcmp(order, "asc")) ? "asc" : "desc", n, m,
		(unsigned long long)off);
	for (p = 0; p < n && k < lim; p++) {
		i = asc ? n - 1 - p : p;
		if (by)
			i = by[i];
		if (mark && !mark[i])
			continue;
		if (seen++ < off)
			continue;
		fprintf(f, "%s{\"key\":", k++ ? "," : "");
		cli_json_string(f, v->rows[i].key[0], v->rows[i].key_len[0]);
		fprintf(f, ",\"count\":%llu,\"memsize\":%llu",
			(unsigned long long)v->rows[i].count,
			(unsigned long long)v->rows[i].memsize);
		if (g == 1) {
			const hd_class_retained *c =
				class_retained(st, v->rows[i].key[0]);

			if (c)
				fprintf(f, ",\"retained_count\":%llu,"
					"\"retained_memsize\":%llu",
					(unsigned long long)c->retained_count,
					(unsigned long long)c->retained_memsize);
		}
		fputc('}', f);
	}
	fprintf(f, "]}");
	free(mark);
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
	const hd_stats_row *gf; /* gem: its files, st->gf_idx[glo..ghi) */
	const size_t *gidx;
	size_t glo, ghi;
	const char *cptr[WCACHE];
	signed char cval[WCACHE];
};

/* Is the string at p (n bytes, interned) what the walk looks for? */
static int str_test(struct walk *w, const char *p, size_t n)
{
	size_t lo = w->glo, hi = w->ghi, mid;
	const hd_stats_row *row;
	int c;

	if (w->k != HD_KEY_GEM)
		return n == w->flen && memcmp(p, w->key, n) == 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		row = &w->gf[w->gidx[mid]];
		c = cmp_mem(row->key[0], row->key_len[0], p, n);
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
	(void)w;
}

/* The first of st->gf_idx whose gem is at least (or, after, more than)
 * key: binary search. */
static size_t gem_bound(const struct serve_state *st, const char *key,
			size_t n, int after)
{
	size_t lo = 0, hi = st->ngf, mid;
	const hd_stats_row *row;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		row = &st->gf_rows[st->gf_idx[mid]];
		c = cmp_mem(row->key[1], row->key_len[1], key, n);
		if (c < 0 || (after && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sets up w for group g's key; NULL or a message. */
static const char *walk_init(struct serve_state *st, struct walk *w, int g,
			     const char *key)
{
	const char *colon;
	char *end;

	memset(w, 0, sizeof(*w));
	w->k = serve_group_keys[g];
	w->key = key;
	w->klen = w->flen = strlen(key);
	w->nosite = strcmp(key, "(untraced)") == 0;
	switch (w->k) {
	case HD_KEY_CLASS:
		if ((w->cls = (uint32_t)serve_state_class_index(st, key, w->klen)) ==
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
	case HD_KEY_GEM:
		/* the files the library puts in this gem: a range of the
		 * (file, gem) rows sorted by gem at start */
		w->gf = st->gf_rows;
		w->gidx = st->gf_idx;
		w->glo = gem_bound(st, key, w->klen, 0);
		w->ghi = gem_bound(st, key, w->klen, 1);
		return NULL;
	default:
		return NULL;
	}
}

/* The number of objects in group g's key, from the stats. */
static uint64_t group_count(struct serve_state *st, int g, const char *key)
{
	const struct gview *v = &st->gv[g];
	size_t lo = 0, hi = v->n, mid, kl = strlen(key);
	int c;

	/* binary search in the order by key */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = cmp_mem(v->rows[v->by_key[mid]].key[0],
			    v->rows[v->by_key[mid]].key_len[0], key, kl);
		if (c == 0)
			return v->rows[v->by_key[mid]].count;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * A group's page before the objects' order is made (a call in the first
 * seconds of a big heap): the group's members in one pass over the
 * nodes, the first off + lim of them by the order's rule (retained
 * memsize, largest first, then ascending node) kept in a heap whose top
 * is the last kept, then sorted. The same objects as the walk of the
 * order, in O(n log k); pages further than SELECT_MAX wait for it.
 */
#define SELECT_MAX 20000

struct sel {
	uint64_t ret;
	hd_node_id id;
};

/* does a come before b in the objects' order? (the library's rule) */
static int sel_before(const struct sel *a, const struct sel *b)
{
	return hd_retained_before(a->ret, a->id, b->ret, b->id);
}

static int sel_cmp(const void *a, const void *b)
{
	return sel_before(a, b) ? -1 : sel_before(b, a) ? 1 : 0;
}

/* h[0..k): a heap with the last in the order on top; sifts h[i] down */
static void sel_down(struct sel *h, size_t k, size_t i)
{
	size_t c;
	struct sel x = h[i];

	while ((c = 2 * i + 1) < k) {
		if (c + 1 < k && sel_before(&h[c], &h[c + 1]))
			c++;
		if (!sel_before(&x, &h[c]))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void sel_up(struct sel *h, size_t i)
{
	struct sel x = h[i];

	while (i > 0 && sel_before(&h[(i - 1) / 2], &x)) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

/* Writes the page [off, off + lim) of w's group; -1: no memory. */
static int objects_selected(struct serve_state *st, struct walk *w,
			    uint64_t off, uint64_t lim, FILE *f)
{
	size_t want = (size_t)(off + lim), k = 0, i;
	uint32_t n = hd_store_node_count(st->s), v;
	struct sel *h = malloc((want + 1) * sizeof(*h)), x;

	if (!h)
		return -1;
	for (v = 0; v < n; v++) {
		if (st->cls[v] == UINT32_MAX - 1 || !member(st, w, v))
			continue;
		x.id = v;
		hd_domtree_retained(st->dt, v, &x.ret);
		if (k < want) {
			h[k] = x;
			sel_up(h, k++);
		} else if (want && sel_before(&x, &h[0])) {
			h[0] = x;
			sel_down(h, k, 0);
		}
	}
	qsort(h, k, sizeof(*h), sel_cmp);
	for (i = (size_t)off; i < k; i++) {
		if (i > off)
			fputc(',', f);
		node_json(f, st, h[i].id);
	}
	free(h);
	return 0;
}

/* HEAPDUMP_SERVE_SELECT=always: every near page selected by itself,
 * the order made or not; =never: every page walks the order, waiting
 * for it (the tests' ways to compare both): 1, -1, or 0 (neither) */
static int select_mode(void)
{
	static int mode = 2;

	if (mode == 2) {
		const char *e = getenv("HEAPDUMP_SERVE_SELECT");

		mode = !e ? 0 : strcmp(e, "always") == 0 ? 1 :
				strcmp(e, "never") == 0 ? -1 : 0;
	}
	return mode;
}

static void api_objects(struct serve_state *st, const struct serve_req *r,
			struct out *o)
{
	int g = group_index(r->arg(r, "by"));
	const char *key = r->arg(r, "key"), *e;
	uint64_t off, lim, k = 0;
	struct walk *w;
	size_t pos = 0, matched = 0;
	int select;

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
	/* before the order is made, a near page is selected by itself */
	select = off + lim <= SELECT_MAX && select_mode() >= 0 &&
		 (select_mode() > 0 || !serve_state_order_ready(st));
	/* the class index: a class's members, and the dumper's objects
	 * a selected page leaves out (the order has them out already) */
	if (((select || serve_group_keys[g] == HD_KEY_CLASS) &&
	     serve_state_need_classidx(st)) ||
	    (!select && serve_state_need_order(st)) ||
	    !(w = malloc(sizeof(*w)))) {
		bad_request(o, 500, "out of memory");
		return;
	}
	if ((e = walk_init(st, w, g, key))) {
		walk_free(w);
		free(w);
		bad_request(o, 400, e);
		return;
	}
	if (select) {
		fprintf(o->f, "{\"by\":\"%s\",\"key\":",
			hd_key_name(serve_group_keys[g]));
		jstr(o->f, key);
		fprintf(o->f, ",\"total\":%llu,\"offset\":%llu,\"objects\":[",
			(unsigned long long)group_count(st, g, key),
			(unsigned long long)off);
		if (objects_selected(st, w, off, lim, o->f)) {
			walk_free(w);
			free(w);
			bad_request(o, 500, "out of memory");
			return;
		}
		fprintf(o->f, "]}");
		walk_free(w);
		free(w);
		out_close(o, 200);
		return;
	}
	/* the next page starts where the last one stopped */
	pthread_mutex_lock(&st->walk_lock);
	if (st->walk_g == g && st->walk_key && !strcmp(st->walk_key, key) &&
	    st->walk_matched <= off) {
		pos = st->walk_pos;
		matched = st->walk_matched;
	}
	pthread_mutex_unlock(&st->walk_lock);
	fprintf(o->f, "{\"by\":\"%s\",\"key\":", hd_key_name(serve_group_keys[g]));
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
	pthread_mutex_lock(&st->walk_lock);
	free(st->walk_key);
	st->walk_key = strdup(key);
	st->walk_g = st->walk_key ? g : -1;
	st->walk_pos = pos;
	st->walk_matched = matched;
	pthread_mutex_unlock(&st->walk_lock);
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

/* A referrer shown and the name of its reference. */
struct rname {
	hd_node_id v;
	uint32_t pos;
	const char *name;
	size_t len;
	unsigned flags;
};

static int cmp_rname_v(const void *a, const void *b)
{
	const struct rname *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_rname_pos(const void *a, const void *b)
{
	const struct rname *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The names of the references of r[0..n) to id (hd_store_ref_name's:
 * the first named one), one lookup a distinct referrer, r kept in its
 * order. */
static void referrer_names(const hd_store *s, hd_node_id id, struct rname *r,
			   size_t n)
{
	size_t i;

	qsort(r, n, sizeof(*r), cmp_rname_v);
	for (i = 0; i < n; i++) {
		r[i].flags = 0;
		r[i].len = 0;
		if (i && r[i].v == r[i - 1].v) {
			r[i].name = r[i - 1].name;
			r[i].len = r[i - 1].len;
			r[i].flags = r[i - 1].flags;
			continue;
		}
		r[i].name = hd_store_ref_name(s, r[i].v, id, &r[i].len,
					      &r[i].flags);
	}
	qsort(r, n, sizeof(*r), cmp_rname_pos);
}

static void api_object(struct serve_state *st, const struct serve_req *r,
		       struct out *o)
{
	struct rname *ref;
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
	fprintf(f, "{\"object\":{");
	node_fields(f, st, id);
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
	/* the page's referrers, then the names of their references to id:
	 * each distinct referrer's references read once (a referrer may
	 * come a million times, each with a million references) */
	if (!(ref = malloc(((size_t)lim + 1) * sizeof(*ref)))) {
		bad_request(o, 500, "out of memory");
		return;
	}
	for (k = 0, shown = 0; hd_edge_iter_next(&it, &v) == 0; k++) {
		if (k < off)
			continue;
		if (shown >= lim)
			break;
		ref[shown].v = v;
		ref[shown].pos = shown;
		shown++;
	}
	referrer_names(st->s, id, ref, shown);
	for (k = 0; k < shown; k++) {
		fprintf(f, "%s{\"object\":", k ? "," : "");
		node_json(f, st, ref[k].v);
		edge_name(f, ref[k].name, ref[k].len, ref[k].flags);
		fputc('}', f);
	}
	free(ref);
	fprintf(f, "],\"path\":");
	if (hd_reach_path(&p, serve_state_reach(st), id, &err) == 0) {
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
	uint32_t nn = hd_store_node_count(st->s), nk = 0;
	const hd_node_id *kids;
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
	kids = hd_domtree_children_of(st->kids, id == nn ? HD_DOM_ROOT : id,
				      &nk);
	fprintf(f, "{\"node\":");
	if (id == nn) {
		uint64_t rc = hd_domtree_reached(st->dt, &rm);

		fprintf(f, "null,\"reached_count\":%llu,"
			"\"reached_memsize\":%llu", (unsigned long long)rc,
			(unsigned long long)rm);
	} else {
		node_json(f, st, id);
	}
	fprintf(f, ",\"total\":%u,\"offset\":%llu,\"children\":[", nk,
		(unsigned long long)off);
	for (k = 0; off + k < nk && k < lim; k++) {
		if (k)
			fputc(',', f);
		node_json(f, st, kids[off + k]);
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
	const struct gview *v = &st->gv[g];
	unsigned char *mark = calloc(v->n + 1, 1);
	size_t i, m = 0, k = 0;

	if (mark)
		m = match_rows(v, q, mark);
	fprintf(f, "{\"by\":\"%s\",\"rows\":[", hd_key_name(serve_group_keys[g]));
	for (i = 0; mark && i < v->n && k < lim; i++) {
		if (!mark[i])
			continue;
		fprintf(f, "%s{\"key\":", k++ ? "," : "");
		cli_json_string(f, v->rows[i].key[0], v->rows[i].key_len[0]);
		fprintf(f, ",\"count\":%llu,\"memsize\":%llu}",
			(unsigned long long)v->rows[i].count,
			(unsigned long long)v->rows[i].memsize);
	}
	free(mark);
	fprintf(f, "],\"matched\":%zu}", m);
}

static void api_search(struct serve_state *st, const struct serve_req *r,
		       struct out *o)
{
	const char *q = r->arg(r, "q"), *kind = r->arg(r, "kind");
	uint64_t lim, addr;
	FILE *f = o->f;
	size_t i, m = 0;
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
	if (all || !strcmp(kind, "string"))
		serve_state_need_strings(st);
	if (!(all || !strcmp(kind, "string"))) {
		fprintf(f, "null");
	} else if (!st->strs) {
		fprintf(f, "{\"rows\":[],\"matched\":0,\"unavailable\":");
		jstr(f, st->strs_msg);
		fprintf(f, "}");
	} else {
		const hd_text_search *ts = hd_string_values_search(st->strs);
		hd_string_value sv;
		size_t ql = strlen(q), from = 0;
		int more = 0;

		fprintf(f, "{\"rows\":[");
		while (hd_text_search_next(ts, q, ql, from, &i) == 0) {
			from = i + 1;
			if (m >= SEARCH_COUNT_MAX) {
				more = 1; /* counted far enough */
				break;
			}
			if (m++ >= lim)
				continue;
			hd_string_values_row(&sv, st->strs, i);
			fprintf(f, "%s{\"value\":", m > 1 ? "," : "");
			cli_json_string(f, sv.value, sv.value_len);
			fprintf(f, ",\"bytesize\":%llu,\"count\":%llu,"
				"\"memsize\":%llu,\"complete\":%s,\"object\":",
				(unsigned long long)sv.bytesize,
				(unsigned long long)sv.count,
				(unsigned long long)sv.memsize,
				sv.complete ? "true" : "false");
			if (sv.node != HD_NODE_NONE)
				node_json(f, st, sv.node);
			else
				fprintf(f, "null");
			fputc('}', f);
		}
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
	const hd_diff_result *d;
	const hd_stats_row *rows;
	uint64_t off, lim, k;
	FILE *f = o->f;
	size_t n;
	int m;

	if (need_diff(st, o))
		return;
	if (serve_state_need_session(st)) {
		bad_request(o, 500, "the leak hunt failed (said on the "
			    "server's stderr)");
		return;
	}
	/* made by the session: read after it */
	d = st->diff;
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
		jstr(f, st->in[st->n - 1].name);
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

/* The clusters shown (the first top, as leaks shows them), in the one
 * schema (hd_leaks_cluster_json_fields, heapdump-json(5)). */
static void clusters_json(FILE *f, const struct serve_state *st)
{
	size_t n = hd_leaks_cluster_count(st->leaks), i;

	fprintf(f, ",\"clusters_total\":%zu,\"clusters\":[", n);
	for (i = 0; i < n && i < hd_leak_session_options_get(st->ls)->top;
	     i++) {
		const hd_leaks_cluster *c = hd_leaks_cluster_get(st->leaks, i);

		fprintf(f, "%s{", i ? "," : "");
		hd_leaks_cluster_json_fields(f, st->s, st->leaks, i, NULL);
		fputs(",\"path\":", f);
		if (c->reached && c->path)
			path_json(f, st->s, c->path);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputc(']', f);
}

static void api_leaks(struct serve_state *st, const struct serve_req *r,
		      struct out *o)
{
	hd_leaks_totals t;
	hd_leak_json_options jo = HD_LEAK_JSON_OPTIONS_INIT;
	hd_root_path p = { 0 };
	hd_error err = { 0 };
	uint64_t off, lim, k;
	FILE *f = o->f;

	if (need_diff(st, o))
		return;
	if (serve_state_need_session(st)) {
		bad_request(o, 500, "the leak hunt failed (said on the "
			    "server's stderr)");
		return;
	}
	if (page_args(r, &off, &lim, 20)) {
		bad_request(o, 400, "offset and limit: numbers");
		return;
	}
	hd_leaks_totals_get(&t, st->leaks);
	/* nodes carry serve's label, retained size and dominated count */
	jo.node_extra = node_extra;
	jo.ctx = st;
	fputc('{', f);
	cli_process_json(f, &st->proc);
	/* the library's verdict, first after the process's, the totals
	 * and the caveats (heapdump-json(5)) */
	fputs(",\"verdict\":{", f);
	hd_leaks_verdict_json_fields(f, st->s, st->leaks, &st->proc);
	fputs("},\"totals\":{", f);
	hd_leaks_totals_json_fields(f, st->leaks);
	fputs("},\"caveats\":", f);
	hd_leak_session_caveats_json(f, st->ls);
	fprintf(f, ",\"offset\":%llu,\"suspects\":[",
		(unsigned long long)off);
	for (k = 0; off + k < t.groups && k < lim; k++) {
		const hd_leaks_suspect *sp =
			hd_leaks_suspect_get(st->leaks, (size_t)(off + k));
		hd_node_id who = sp->holder != HD_NODE_NONE ? sp->holder :
				 sp->first;

		fprintf(f, "%s{", k ? "," : "");
		hd_leaks_suspect_json_fields(f, st->s, st->leaks,
					     (size_t)(off + k), &jo);
		fputs(",\"path\":", f);
		if (sp->path)
			path_json(f, st->s, sp->path);
		else if (hd_reach_path(&p, serve_state_reach(st), who, &err) == 0)
			path_json(f, st->s, &p);
		else
			fprintf(f, "null");
		/* the first HD_LEAK_JSON_STACKS, as the report's data */
		fputs(",\"stacks\":", f);
		hd_leaks_suspect_stacks_json(f, st->s, st->leaks,
					     (size_t)(off + k),
					     HD_LEAK_JSON_STACKS);
		fputc('}', f);
	}
	hd_root_path_free(&p);
	fprintf(f, "]");
	clusters_json(f, st);
	fprintf(f, "}");
	out_close(o, 200);
}

/* The verdict document (hd_leak_verdict_json): kept from an earlier
 * start while the dumps are the same, else made by the leak hunt. */
static void api_verdict(struct serve_state *st, const struct serve_req *r,
			struct out *o)
{
	const char *json;
	size_t len;

	(void)r;
	if (need_diff(st, o))
		return;
	if (serve_state_verdict(st, &json, &len)) {
		bad_request(o, 500, "the leak hunt failed (said on the "
			    "server's stderr)");
		return;
	}
	fwrite(json, 1, len, o->f);
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
	{ "verdict", api_verdict },
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
		    "graph.svg, flame");
}
