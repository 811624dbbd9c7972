/*
 * flame.c - heapdump serve's /api/flame (man 1 heapdump-serve, API): a
 * bounded part of the heap's flame graph (hd_flame_build on the served
 * store and its dominator tree: by retention path, allocation site or
 * allocation stack, the store's own, as heapdump flame --by stack),
 * for the page's icicle. The graph is built for the call (about as long
 * as the dominator tree's walk), then walked from the frame asked for
 * down a few levels, children under min_share of that frame's total
 * folded into one count, at most FL_MAX_NODES frames: nothing sends the
 * whole graph. With objects=1, the objects under the frame instead
 * (hd_flame_objects): their number and the first FL_MAX_OBJECTS, for the
 * page's list of links to them.
 */
#include "../common.h"
#include "serve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FL_DEF_DEPTH 6
#define FL_MAX_DEPTH 12     /* levels below the frame asked for */
#define FL_DEF_SHARE 0.2    /* percent of that frame's total */
#define FL_MAX_NODES 2000
#define FL_MAX_OBJECTS 500

struct fl {
	FILE *f;
	const hd_flame *g;
	uint64_t min;
	size_t left;
};

/* f, an open_memstream of *buf and *len, closed into the response:
 * the buffer and its length are read after fclose, which sets them
 * (an empty body when memory ran out: http.c answers 500). */
static void answer(struct serve_resp *resp, unsigned status, FILE *f,
		   char **buf, size_t *len)
{
	fputc('\n', f);
	if (fclose(f) != 0) {
		free(*buf);
		*buf = NULL;
	}
	resp->status = status;
	resp->body = *buf;
	resp->len = *buf ? *len : 0;
}

static void fail(struct serve_resp *resp, unsigned status, const char *msg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	fprintf(f, "{\"error\":");
	cli_json_string(f, msg, strlen(msg));
	fputc('}', f);
	answer(resp, status, f, &buf, &len);
}

static void frame_fields(FILE *f, uint32_t id, const hd_flame_node_info *n)
{
	fprintf(f, "{\"id\":%u,\"name\":", id);
	cli_json_string(f, n->name, n->name_len);
	fprintf(f, ",\"total\":%llu,\"self\":%llu",
		(unsigned long long)n->total, (unsigned long long)n->self);
}

/* id's frame and, levels deep, its children over min (recursion
 * bounded by FL_MAX_DEPTH). */
static void frame(struct fl *t, uint32_t id, unsigned levels)
{
	hd_flame_node_info n, k;
	uint64_t ftot = 0, fcount = 0;
	uint32_t i;
	int first = 1;

	if (hd_flame_node(&n, t->g, id))
		return;
	frame_fields(t->f, id, &n);
	fprintf(t->f, ",\"children\":[");
	for (i = 0; i < n.nchildren; i++) {
		if (hd_flame_node(&k, t->g, n.children[i]))
			continue;
		if (!levels || !t->left || k.total < t->min) {
			ftot += k.total;
			fcount++;
			continue;
		}
		t->left--;
		if (!first)
			fputc(',', t->f);
		first = 0;
		frame(t, n.children[i], levels - 1);
	}
	fputc(']', t->f);
	if (fcount)
		fprintf(t->f, ",\"folded\":{\"count\":%llu,\"total\":%llu}",
			(unsigned long long)fcount, (unsigned long long)ftot);
	fputc('}', t->f);
}

static int arg_word(const char *a, const char *x, const char *y, int vx,
		    int vy, int *out)
{
	if (!a || !*a || !strcmp(a, x))
		*out = vx;
	else if (!strcmp(a, y))
		*out = vy;
	else
		return -1;
	return 0;
}

/* by: path (the default), site or stack */
static int arg_by(const char *a, int *out)
{
	if (a && !strcmp(a, "stack")) {
		*out = HD_FLAME_BY_STACK;
		return 0;
	}
	return arg_word(a, "path", "site", HD_FLAME_BY_PATH, HD_FLAME_BY_SITE,
			out);
}

static const char *by_name(int by)
{
	return by == HD_FLAME_BY_STACK ? "stack" :
	       by == HD_FLAME_BY_SITE  ? "site" :
					 "path";
}

static int arg_ulong(const char *a, unsigned long def, unsigned long max,
		     unsigned long *v)
{
	char *end;

	*v = def;
	if (!a || !*a)
		return 0;
	errno = 0;
	*v = strtoul(a, &end, 10);
	return errno || *end || *a == '-' || *v > max ? -1 : 0;
}

static int arg_pct(const char *a, double def, double *v)
{
	char *end;

	*v = def;
	if (!a || !*a)
		return 0;
	errno = 0;
	*v = strtod(a, &end);
	return end == a || *end || errno || !(*v >= 0 && *v <= 100) ? -1 : 0;
}

/* the frames from the top down to id, itself left out */
static void chain(FILE *f, const hd_flame *g, uint32_t id)
{
	uint32_t up[FL_MAX_DEPTH * 16], n = 0, at = id;
	hd_flame_node_info x;

	while (hd_flame_node(&x, g, at) == 0 && x.parent != UINT32_MAX &&
	       n < sizeof(up) / sizeof(up[0])) {
		at = x.parent;
		if (at != HD_FLAME_ROOT)
			up[n++] = at;
	}
	fputs(",\"chain\":[", f);
	while (n-- > 0) {
		hd_flame_node(&x, g, up[n]);
		frame_fields(f, up[n], &x);
		fprintf(f, "}%s", n ? "," : "");
	}
	fputc(']', f);
}

/* {"frame":..., "count":N, "objects":[the first FL_MAX_OBJECTS]} */
static void objects(struct serve_resp *resp, const hd_store *s,
		    const hd_flame *g, const uint32_t *frame_of, uint32_t id)
{
	hd_flame_node_info top;
	hd_nodes set = { 0 };
	hd_error err = { 0 };
	char *buf = NULL, name[256];
	size_t len = 0, i;
	FILE *f;

	if (hd_flame_objects(&set, g, frame_of, hd_store_node_count(s), id,
			     &err)) {
		fail(resp, err.code == HD_ENOTFOUND ? 404 : 500, err.msg);
		return;
	}
	hd_flame_node(&top, g, id);
	if (!(f = open_memstream(&buf, &len))) {
		hd_nodes_free(&set);
		return;
	}
	frame_fields(f, id, &top);
	fprintf(f, ",\"count\":%zu,\"limit\":%d,\"objects\":[", set.n,
		FL_MAX_OBJECTS);
	for (i = 0; i < set.n && i < FL_MAX_OBJECTS; i++) {
		hd_store_node_name(name, sizeof(name), s, set.ids[i]);
		fprintf(f, "%s{\"address\":\"0x%llx\",\"label\":",
			i ? "," : "",
			(unsigned long long)hd_store_address(s, set.ids[i]));
		cli_json_string(f, name, strlen(name));
		fprintf(f, ",\"memsize\":%llu}",
			(unsigned long long)hd_store_memsize(s, set.ids[i]));
	}
	fputs("]}", f);
	hd_nodes_free(&set);
	answer(resp, 200, f, &buf, &len);
}

void serve_api_flame(struct serve_state *st, const struct serve_req *r,
		     struct serve_resp *resp)
{
	hd_flame_options fo = HD_FLAME_OPTIONS_INIT;
	hd_flame_node_info top;
	hd_flame *g = NULL;
	hd_error err = { 0 };
	struct fl t;
	unsigned long depth, node;
	double share;
	const char *want = r->arg(r, "objects");
	int objs = want && !strcmp(want, "1");
	uint32_t *frame_of = NULL;
	char *buf = NULL;
	size_t len = 0;

	if (arg_by(r->arg(r, "by"), &fo.by) ||
	    arg_word(r->arg(r, "metric"), "memsize", "count",
		     HD_FLAME_MEMSIZE, HD_FLAME_COUNT, &fo.metric)) {
		fail(resp, 400,
		     "by: path, site or stack; metric: memsize or count");
		return;
	}
	/* by stack: the store's allocation stacks; a store without them
	 * is the library's HD_FLAME_NO_STACKS, answered 404 */
	if (fo.by == HD_FLAME_BY_STACK &&
	    hd_store_stack_count(serve_state_store(st))) {
		fo.stack = hd_store_flame_stack;
		fo.stack_ctx = (void *)serve_state_store(st);
	}
	if (arg_ulong(r->arg(r, "depth"), FL_DEF_DEPTH, FL_MAX_DEPTH,
		      &depth) || depth < 1) {
		fail(resp, 400, "depth: a number from 1 to 12");
		return;
	}
	if (arg_ulong(r->arg(r, "frame"), HD_FLAME_ROOT, UINT32_MAX - 1,
		      &node)) {
		fail(resp, 400, "frame: a frame id of this graph");
		return;
	}
	if (arg_pct(r->arg(r, "min_share"), FL_DEF_SHARE, &share)) {
		fail(resp, 400, "min_share: a percentage from 0 to 100");
		return;
	}
	if (want && *want && !objs) {
		fail(resp, 400, "objects: 1 or nothing");
		return;
	}
	fo.domtree = serve_state_domtree(st);
	if (objs) {
		size_t n = hd_store_node_count(serve_state_store(st));

		if (!(frame_of = calloc(n ? n : 1, sizeof(*frame_of)))) {
			fail(resp, 500, "out of memory");
			return;
		}
		fo.frame_of = frame_of;
	}
	if (hd_flame_build(&g, serve_state_store(st), NULL, &fo, &err) ||
	    hd_flame_index(g, &err)) {
		hd_flame_free(g);
		free(frame_of);
		fail(resp, err.code == HD_ENOTFOUND ? 404 : 500, err.msg);
		return;
	}
	if (objs) {
		objects(resp, serve_state_store(st), g, frame_of,
			(uint32_t)node);
		free(frame_of);
		hd_flame_free(g);
		return;
	}
	if (hd_flame_node(&top, g, (uint32_t)node)) {
		hd_flame_free(g);
		fail(resp, 404, "no such frame");
		return;
	}
	t.f = open_memstream(&buf, &len);
	if (!t.f) {
		hd_flame_free(g);
		return;
	}
	t.g = g;
	t.left = FL_MAX_NODES;
	t.min = (uint64_t)((double)top.total * share / 100.0);
	if ((double)t.min < (double)top.total * share / 100.0)
		t.min++;
	if (!t.min)
		t.min = 1;
	hd_flame_node(&top, g, HD_FLAME_ROOT);
	fprintf(t.f, "{\"by\":\"%s\",\"metric\":\"%s\",\"unit\":\"%s\","
		"\"total\":%llu,\"depth\":%lu,\"min_share\":%g,"
		"\"min_total\":%llu,\"max_nodes\":%d,\"stacks\":%u,\"root\":",
		by_name(fo.by),
		fo.metric == HD_FLAME_COUNT ? "count" : "memsize",
		fo.metric == HD_FLAME_COUNT ? "objects" : "bytes",
		(unsigned long long)top.total, depth, share,
		(unsigned long long)t.min, FL_MAX_NODES,
		hd_store_stack_count(serve_state_store(st)));
	frame(&t, (uint32_t)node, (unsigned)depth);
	chain(t.f, g, (uint32_t)node);
	fputc('}', t.f);
	answer(resp, 200, t.f, &buf, &len);
	hd_flame_free(g);
}
