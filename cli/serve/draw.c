/*
 * draw.c - the drawings of heapdump serve (man 1 heapdump-serve,
 * API): /api/treemap, a bounded part of the dominator tree for the
 * page's treemap of retained size (the page draws it), and
 * /api/graph.svg, a leak suspect's drawing (cli_suspect_dot, as leaks
 * --svg and report draw it) or an object's retention path and
 * neighbours, laid out and rendered by Graphviz (cli_render_dot_data:
 * the one context of the process, which is not thread-safe: one drawing
 * at a time, under render_lock, whatever threads the server runs).
 * Nothing here sends the whole heap: a treemap is at most TM_MAX_NODES
 * objects, a drawing at most CLI_RENDER_MAX_NODES.
 *
 * The treemap's levels come from api.c's children (serve_state_kids and
 * the other serve_state_* accessors), small children folded; web/draw.js
 * lays them out as a squarified treemap of SVG elements. A drawing is
 * sent as image/svg+xml with a Content-Security-Policy of its own
 * (serve_resp.mime, .csp); one over render's limits is the client's 413,
 * with the limits (cli_render_limits.refusal); at most two drawings hold
 * a thread (one laid out, one waiting: a third gets 503).
 */
#include "../common.h"
#include "../draw.h"
#include "serve.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The SVG's own policy: Graphviz's inline styles, nothing else (no
 * script, no load), whether it is opened as a document or an image. */
#define SVG_CSP "default-src 'none'; style-src 'unsafe-inline'; " \
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

#define TM_MAX_DEPTH 6      /* levels below the root */
#define TM_DEF_DEPTH 3
#define TM_DEF_SHARE 0.5    /* percent of the root's retained memsize */
#define TM_MAX_KIDS 100     /* children drawn a node, the rest folded */
#define TM_MAX_NODES 3000   /* objects a treemap, the rest folded */
#define GRAPH_BORDER 12     /* a suspect's border objects drawn */
#define GRAPH_DEF_NEAR 12   /* an object's references and referrers */
#define GRAPH_MAX_NEAR 100
#define GRAPH_MAX_DEPTH 2

struct dout {
	FILE *f;
	char *buf;
	size_t len;
};

static int dout_open(struct dout *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	return o->f ? 0 : -1;
}

/* The JSON written becomes the response (an empty body when memory
 * ran out: http.c answers 500). */
static void dout_json(struct dout *o, struct serve_resp *resp,
		      unsigned status)
{
	fputc('\n', o->f);
	if (fclose(o->f) != 0) {
		free(o->buf);
		o->buf = NULL;
		o->len = 0;
	}
	resp->status = status;
	resp->body = o->buf;
	resp->len = o->len;
}

/* {"error": msg} as the response. */
static void fail(struct serve_resp *resp, unsigned status, const char *msg)
{
	struct dout o;

	if (dout_open(&o))
		return;
	fprintf(o.f, "{\"error\":");
	cli_json_string(o.f, msg, strlen(msg));
	fputc('}', o.f);
	dout_json(&o, resp, status);
}

/* A number argument from 0 to max, def when absent; -1 when bad. */
static int arg_num(const struct serve_req *r, const char *name,
		   unsigned long def, unsigned long max, unsigned long *v)
{
	const char *a = r->arg(r, name);
	char *end;
	unsigned long x;

	*v = def;
	if (!a || !*a)
		return 0;
	errno = 0;
	x = strtoul(a, &end, 10);
	if (errno || *end || *a == '-' || x > max)
		return -1;
	*v = x;
	return 0;
}

/* An object by its hex address: 0, or -1 with the response set. */
static int find_object(const hd_store *s, const char *a, hd_node_id *id,
		       struct serve_resp *resp)
{
	unsigned long long addr;
	char *end;

	errno = 0;
	addr = a && *a && *a != '-' ? strtoull(a, &end, 16) : 0;
	if (!a || !*a || *a == '-' || errno || *end) {
		fail(resp, 400, "address: a hex address (0x...)");
		return -1;
	}
	if ((*id = hd_store_find(s, addr)) == HD_NODE_NONE) {
		fail(resp, 404, "no object at this address");
		return -1;
	}
	return 0;
}

/* ---- /api/treemap ---- */

struct tmap {
	const struct serve_state *st;
	const hd_store *s;
	const hd_domtree *dt;
	FILE *f;
	uint64_t min;      /* the smallest retained memsize drawn */
	unsigned depth;    /* levels below the root */
	size_t left;       /* objects that may still be sent */
};

/* The object fields of v (the API's node: cli_node_json's, its label,
 * retained size and dominated count), its object left open. */
static void tm_node(struct tmap *t, hd_node_id v)
{
	char name[256];
	uint64_t rc, rm;
	uint32_t nk;

	fputc('{', t->f);
	cli_node_json_fields(t->f, t->s, v);
	hd_store_node_name(name, sizeof(name), t->s, v);
	fprintf(t->f, ",\"label\":");
	cli_json_string(t->f, name, strlen(name));
	rc = hd_domtree_retained(t->dt, v, &rm);
	serve_state_kids(t->st, v, &nk);
	fprintf(t->f, ",\"retained_count\":%llu,\"retained_memsize\":%llu,"
		"\"dominated\":%u", (unsigned long long)rc,
		(unsigned long long)rm, nk);
}

struct kid_name {
	hd_node_id id;
	uint32_t i;
};

static int cmp_kid(const void *a, const void *b)
{
	const struct kid_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The names of v's references to kids[0..n) (n at most TM_MAX_KIDS):
 * hd_store_ref_name's (the first named reference), in one pass over v's
 * references, not one a child (a node may hold millions).
 */
static void kid_names(const hd_store *s, hd_node_id v, const hd_node_id *kids,
		      uint32_t n, const char **name, size_t *len)
{
	struct kid_name sorted[TM_MAX_KIDS], key, *hit;
	hd_edge_iter it;
	hd_node_id u;
	uint32_t i, k;
	unsigned fl;

	for (i = 0; i < n; i++) {
		name[i] = NULL;
		len[i] = 0;
		sorted[i].id = kids[i];
		sorted[i].i = i;
	}
	if (v == HD_DOM_ROOT || !n || !hd_store_has_ref_names(s))
		return;
	qsort(sorted, n, sizeof(*sorted), cmp_kid);
	hd_store_refs(s, v, &it);
	for (k = 0; hd_edge_iter_next(&it, &u) == 0; k++) {
		key.id = u;
		if (!(hit = bsearch(&key, sorted, n, sizeof(*sorted), cmp_kid)) ||
		    name[hit->i])
			continue;
		fl = 0;
		name[hit->i] = hd_store_ref_name_at(s, v, k, &len[hit->i], &fl);
	}
}

/*
 * The children of v drawn: those of at least t->min retained, largest
 * first, at most TM_MAX_KIDS and while the budget lasts, each with its
 * own children down to t->depth levels; the others folded into one
 * {"count","retained_memsize"}. Recursion depth: t->depth, at most
 * TM_MAX_DEPTH.
 */
static void tm_children(struct tmap *t, hd_node_id v, unsigned level)
{
	const hd_node_id *kids;
	const char *ref[TM_MAX_KIDS];
	size_t rlen[TM_MAX_KIDS];
	uint32_t nk, i, shown = 0, cand = 0;
	uint64_t rm, folded = 0;

	kids = serve_state_kids(t->st, v, &nk);
	/* the children that may be drawn: a prefix, largest first */
	while (cand < nk && cand < TM_MAX_KIDS &&
	       (hd_domtree_retained(t->dt, kids[cand], &rm), rm >= t->min))
		cand++;
	kid_names(t->s, v, kids, cand, ref, rlen);
	fprintf(t->f, ",\"children\":[");
	for (i = 0; i < nk; i++) {
		hd_domtree_retained(t->dt, kids[i], &rm);
		if (rm < t->min || shown >= TM_MAX_KIDS || !t->left)
			break;
		t->left--;
		fprintf(t->f, "%s", shown++ ? "," : "");
		tm_node(t, kids[i]);
		if (ref[i]) {
			fprintf(t->f, ",\"ref\":");
			cli_json_string(t->f, ref[i], rlen[i]);
		}
		if (level < t->depth)
			tm_children(t, kids[i], level + 1);
		fputc('}', t->f);
	}
	fprintf(t->f, "]");
	if (i < nk) {
		uint32_t k;

		for (k = i; k < nk; k++) {
			hd_domtree_retained(t->dt, kids[k], &rm);
			folded += rm;
		}
		fprintf(t->f, ",\"folded\":{\"count\":%u,"
			"\"retained_memsize\":%llu}", nk - i,
			(unsigned long long)folded);
	}
}

/* A share in percent, "0.5" or "0.5%", from 0 to 100. */
static int arg_share(const struct serve_req *r, double *v)
{
	const char *a = r->arg(r, "min_share");
	char *end;

	*v = TM_DEF_SHARE;
	if (!a || !*a)
		return 0;
	errno = 0;
	*v = strtod(a, &end);
	if (end != a && *end == '%')
		end++;
	return (end == a || *end || errno || !(*v >= 0 && *v <= 100)) ? -1 :
	       0;
}

static void api_treemap(struct serve_state *st, const struct serve_req *r,
			struct serve_resp *resp)
{
	const char *a = r->arg(r, "root");
	struct tmap t;
	struct dout o;
	hd_root_path p = { 0 };
	hd_error err = { 0 };
	hd_node_id root = HD_DOM_ROOT;
	unsigned long depth;
	uint64_t total = 0, rc;
	double share;
	size_t k;

	t.st = st;
	t.s = serve_state_store(st);
	t.dt = serve_state_domtree(st);
	if (a && *a && strcmp(a, "root") != 0 &&
	    find_object(t.s, a, &root, resp))
		return;
	if (arg_num(r, "depth", TM_DEF_DEPTH, TM_MAX_DEPTH, &depth) ||
	    depth < 1) {
		fail(resp, 400, "depth: a number from 1 to 6");
		return;
	}
	if (arg_share(r, &share)) {
		fail(resp, 400, "min_share: a percentage from 0 to 100");
		return;
	}
	if (dout_open(&o))
		return;
	t.f = o.f;
	t.depth = (unsigned)depth - 1;
	t.left = TM_MAX_NODES;
	fprintf(o.f, "{\"depth\":%lu,\"min_share\":%g,\"max_children\":%d,"
		"\"max_nodes\":%d,\"root\":", depth, share, TM_MAX_KIDS,
		TM_MAX_NODES);
	if (root == HD_DOM_ROOT) {
		uint32_t nk;

		rc = hd_domtree_reached(t.dt, &total);
		serve_state_kids(st, HD_DOM_ROOT, &nk);
		fprintf(o.f, "{\"address\":null,\"label\":\"(roots)\","
			"\"retained_count\":%llu,\"retained_memsize\":%llu,"
			"\"dominated\":%u", (unsigned long long)rc,
			(unsigned long long)total, nk);
	} else {
		hd_domtree_retained(t.dt, root, &total);
		tm_node(&t, root);
	}
	/* min_share of the root's retained memsize, rounded up; at least a
	 * byte, so that nothing empty is drawn */
	t.min = (uint64_t)((double)total * share / 100.0);
	if ((double)t.min < (double)total * share / 100.0)
		t.min++;
	if (!t.min)
		t.min = 1;
	tm_children(&t, root, 0);
	fprintf(o.f, "},\"min_retained\":%llu,\"chain\":[",
		(unsigned long long)t.min);
	/* the way back up: the root's dominators from the top, itself
	 * left out */
	if (root != HD_DOM_ROOT && hd_domtree_chain(&p, t.dt, root, &err) == 0)
		for (k = 0; k < p.n && p.nodes[k] != root; k++) {
			char name[256];
			uint64_t rm;

			hd_domtree_retained(t.dt, p.nodes[k], &rm);
			hd_store_node_name(name, sizeof(name), t.s,
					   p.nodes[k]);
			fprintf(o.f, "%s{\"address\":\"0x%llx\",\"label\":",
				k ? "," : "",
				(unsigned long long)hd_store_address(t.s,
								     p.nodes[k]));
			cli_json_string(o.f, name, strlen(name));
			fprintf(o.f, ",\"retained_memsize\":%llu}",
				(unsigned long long)rm);
		}
	hd_root_path_free(&p);
	fprintf(o.f, "]}");
	dout_json(&o, resp, 200);
}

/* ---- /api/graph.svg ---- */

/*
 * The DOT of an object's drawing: its retention path from the roots,
 * the object, its first near references and referrers, grown by depth
 * references (hd_export's depth), IMEMOs and hidden collections folded
 * into the edges, as render and to-dot --collapse draw.
 */
static int object_dot(struct cli_membuf *m, const hd_store *s,
		      const hd_export_base *base, const hd_reach *reach,
		      hd_node_id id,
		      unsigned long near, unsigned long depth,
		      hd_error *err)
{
	hd_nodes set = { NULL, 0, 0 };
	hd_root_path p = { 0 };
	hd_edge_iter it;
	hd_node_id v;
	size_t i;
	int rc = HD_ENOMEM;

	if (cli_nodes_push(&set, id))
		goto out;
	if (hd_reach_path(&p, reach, id, err) == 0)
		for (i = 0; i < p.n; i++)
			if (cli_nodes_push(&set, p.nodes[i]))
				goto out;
	memset(err, 0, sizeof(*err));
	hd_store_refs(s, id, &it);
	for (i = 0; i < near && hd_edge_iter_next(&it, &v) == 0; i++)
		if (cli_nodes_push(&set, v))
			goto out;
	hd_store_referrers(s, id, &it);
	for (i = 0; i < near && hd_edge_iter_next(&it, &v) == 0; i++)
		if (cli_nodes_push(&set, v))
			goto out;
	rc = cli_nodes_dot(m, s, base, &set, (uint32_t)depth,
			   CLI_RENDER_MAX_NODES, err);
out:
	if (rc == HD_ENOMEM && !err->code)
		err->code = HD_ENOMEM;
	hd_root_path_free(&p);
	free(set.ids);
	return rc;
}

static pthread_mutex_t render_lock = PTHREAD_MUTEX_INITIALIZER;
/* drawings laid out or waiting for the lock: at most DRAWERS, so that
 * drawings hold up no more than that many of the server's threads */
#define DRAWERS 2
static int drawers;

static void api_graph(struct serve_state *st, const struct serve_req *r,
		      struct serve_resp *resp)
{
	const hd_store *s = serve_state_store(st);
	const hd_leaks *lk;
	const char *sus = r->arg(r, "suspect"), *addr = r->arg(r, "address");
	struct cli_membuf m = { NULL, 0, 0 };
	struct cli_render_limits lim;
	hd_root_path p = { 0 };
	hd_error err = { 0 };
	char *svg = NULL, what[64], refusal[512];
	size_t len = 0;
	int rc;

	if (!cli_render_compiled()) {
		fail(resp, 501, "this heapdump was built without Graphviz "
		     "(make GVC=0): install libgraphviz-dev and rebuild");
		return;
	}
	if ((sus && *sus) == (addr && *addr)) {
		fail(resp, 400, "suspect=N (a rank of /api/leaks) or "
		     "address=ADDR, one of them");
		return;
	}
	if (sus && *sus) {
		hd_leaks_totals tot;
		hd_leaks_suspect sp;
		unsigned long n;

		/* only a suspect's drawing waits for the leak session */
		if (!(lk = serve_state_leaks(st))) {
			fail(resp, 404, "one dump: serve BEFORE AFTER [LATER] "
			     "for the leak suspects");
			return;
		}
		hd_leaks_totals_get(&tot, lk);
		if (arg_num(r, "suspect", 0, ~0UL, &n) || n < 1) {
			fail(resp, 400, "suspect: a rank from 1");
			return;
		}
		if (n > tot.groups) {
			fail(resp, 404, "no suspect of this rank");
			return;
		}
		sp = *hd_leaks_suspect_get(lk, n - 1);
		/* a suspect past the described ones: its path from the
		 * search from the roots, as /api/leaks gives it */
		if (!sp.path &&
		    hd_reach_path(&p, serve_state_reach(st),
				  sp.holder != HD_NODE_NONE ? sp.holder :
				  sp.first, &err) == 0)
			sp.path = &p;
		memset(&err, 0, sizeof(err));
		rc = cli_suspect_dot(&m, s, serve_state_export_base(st), &sp,
				     GRAPH_BORDER, &err);
		snprintf(what, sizeof(what), "suspect %lu", n);
	} else {
		unsigned long near, depth;
		hd_node_id id;

		if (find_object(s, addr, &id, resp))
			return;
		if (arg_num(r, "near", GRAPH_DEF_NEAR, GRAPH_MAX_NEAR, &near) ||
		    arg_num(r, "depth", 0, GRAPH_MAX_DEPTH, &depth)) {
			fail(resp, 400, "near: 0 to 100; depth: 0 to 2");
			return;
		}
		rc = object_dot(&m, s, serve_state_export_base(st),
				serve_state_reach(st), id, near, depth, &err);
		snprintf(what, sizeof(what), "the drawing of 0x%llx",
			 (unsigned long long)hd_store_address(s, id));
	}
	hd_root_path_free(&p);
	if (rc) {
		free(m.p);
		fail(resp, rc == HD_ELIMIT ? 413 : 500,
		     err.msg[0] ? err.msg : "out of memory");
		return;
	}
	cli_render_limits_init(&lim);
	lim.advice = "draw less: near=, depth=";
	/* over the limits: the client's request, 413 with them */
	lim.refusal = refusal;
	lim.refusal_size = sizeof(refusal);
	refusal[0] = '\0';
	if (__atomic_add_fetch(&drawers, 1, __ATOMIC_SEQ_CST) > DRAWERS) {
		__atomic_sub_fetch(&drawers, 1, __ATOMIC_SEQ_CST);
		free(m.p);
		fail(resp, 503, "busy: other drawings are being laid out; "
		     "try again");
		return;
	}
	pthread_mutex_lock(&render_lock);
	rc = cli_render_dot_data(m.p, "svg", what, &lim, &svg, &len);
	pthread_mutex_unlock(&render_lock);
	__atomic_sub_fetch(&drawers, 1, __ATOMIC_SEQ_CST);
	if (rc) {
		free(m.p);
		if (refusal[0])
			fail(resp, 413, refusal);
		else
			fail(resp, 500, "graphviz could not draw it (the "
			     "server's standard error says why)");
		return;
	}
	free(m.p);
	resp->status = 200;
	resp->body = svg;
	resp->len = len;
	resp->mime = "image/svg+xml; charset=utf-8";
	resp->csp = SVG_CSP;
}

static const struct {
	const char *path;
	void (*fn)(struct serve_state *, const struct serve_req *,
		   struct serve_resp *);
} draw_routes[] = {
	{ "treemap", api_treemap },
	{ "graph.svg", api_graph },
	{ "flame", serve_api_flame },
	{ NULL, NULL }
};

int serve_draw_api(struct serve_state *st, const struct serve_req *r,
		   struct serve_resp *resp)
{
	size_t i;

	for (i = 0; draw_routes[i].path; i++)
		if (strcmp(draw_routes[i].path, r->path) == 0) {
			draw_routes[i].fn(st, r, resp);
			return 1;
		}
	return 0;
}
