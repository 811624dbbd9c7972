/*
 * draw.c - the part of the heap that to-gml, to-dot and render draw,
 * the text writers' command, and the drawing by Graphviz's dot that
 * render and leaks --svg share (libgvc linked in, no dot process).
 */
#include "draw.h"
#include "common.h"

#include <errno.h>
#include <gvc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_draw_init(struct cli_draw_args *a)
{
	memset(a, 0, sizeof(*a));
	a->max_nodes = HD_EXPORT_MAX_NODES;
	a->max_edges = 0;
}

void cli_render_limits_init(struct cli_render_limits *lim)
{
	lim->max_nodes = CLI_RENDER_MAX_NODES;
	lim->max_edges = CLI_RENDER_MAX_EDGES;
	lim->advice = NULL;
}

static int over(const char *what, uint64_t n, const char *things,
		unsigned long long max, const char *option, const char *advice)
{
	char a[32], b[32];

	cli_error("cannot draw '%s': the graph has %s %s, more than %s %s; "
		  "Graphviz would take minutes to lay it out: %s%s%s "
		  "(0: no limit)", what, cli_commas(n, a, sizeof(a)), things,
		  option, cli_commas(max, b, sizeof(b)),
		  advice ? advice : "", advice ? ", or raise " : "raise ",
		  option);
	return EXIT_FAIL;
}

int cli_render_check(const char *what, uint64_t nodes, uint64_t edges,
		     const struct cli_render_limits *lim)
{
	if (lim->max_nodes && nodes > lim->max_nodes)
		return over(what, nodes, "nodes", lim->max_nodes,
			    "--max-nodes", lim->advice);
	if (lim->max_edges && edges > lim->max_edges)
		return over(what, edges, "references", lim->max_edges,
			    "--max-edges", lim->advice);
	return 0;
}

int cli_draw_fwrite(const void *buf, size_t n, void *payload)
{
	return fwrite(buf, 1, n, payload) == n ? 0 : HD_EIO;
}

int cli_draw_open(const struct cli_cmd_info *info, struct cli_draw_args *a,
		   const char *path, hd_store **s_out, hd_export **x_out)
{
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	hd_nodes set = { NULL, 0, 0 };
	struct cli_input in;
	hd_error err = { 0 };
	uint64_t n;
	char a1[32], a2[32];
	int rc;

	*s_out = NULL;
	*x_out = NULL;
	if (a->depth > UINT32_MAX)
		return cli_usage_error(info, "--depth %llu is too deep",
				       a->depth);
	o.flags = a->collapse ? HD_EXPORT_COLLAPSE : 0;
	o.depth = (uint32_t)a->depth;
	o.max_nodes = 0; /* checked below, with advice */
	if (a->sel.n && (rc = cli_select_compile(&a->sel)))
		return rc;
	cli_input_init(&in, path, a->strict, a->quiet);
	if ((rc = cli_open_store(&in, s_out)) ||
	    (a->sel.n && (rc = cli_select_nodes(&a->sel, *s_out, in.name,
						a->quiet, &set))))
		goto fail;
	if ((rc = hd_export_new(x_out, *s_out, a->sel.n ? &set : NULL, &o,
				&err))) {
		rc = cli_lib_error(&err);
		goto fail;
	}
	hd_nodes_free(&set);
	n = hd_export_node_count(*x_out);
	if (a->max_nodes && n > a->max_nodes) {
		cli_error("%s: the graph has %s nodes, more than --max-nodes %s; "
			  "narrow it with a selection (--class, --type, --file, "
			  "--generation...), fold the VM's internals with "
			  "--collapse, draw the output of roots-of or "
			  "subgraph-of with --from, or raise --max-nodes",
			  info->name, cli_commas(n, a1, sizeof(a1)),
			  cli_commas(a->max_nodes, a2, sizeof(a2)));
		rc = EXIT_FAIL;
		goto fail;
	}
	if (n == 0 && !a->quiet)
		cli_error("%s: warning: the graph is empty", info->name);
	return 0;
fail:
	cli_select_free(&a->sel);
	hd_nodes_free(&set);
	hd_export_free(*x_out);
	hd_store_close(*s_out);
	*x_out = NULL;
	*s_out = NULL;
	return rc;
}

int cli_draw_write_cmd(const struct cli_cmd_info *info,
			struct cli_draw_args *a, int argc, char **argv,
			int (*write)(hd_export *, hd_write_cb, void *,
				     hd_error *))
{
	hd_store *s = NULL;
	hd_export *x = NULL;
	struct cli_out out;
	hd_error err = { 0 };
	int rc, first;

	cli_draw_init(a);
	if ((rc = cli_parse(info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (argc - first != 1)
		return cli_usage_error(info, argc - first ?
						     "one dump or store, please" :
						     "which dump or store?");
	if ((rc = cli_draw_open(info, a, argv[first], &s, &x)))
		return rc;
	if ((rc = cli_out_open(&out, a->output, argv[first])))
		goto out;
	if (write(x, cli_draw_fwrite, out.f, &err)) {
		if (err.code == HD_ENOMEM)
			cli_error("%s", err.msg);
		else
			cli_error("cannot write '%s': %s",
				  a->output ? a->output : "(stdout)",
				  strerror(errno));
		cli_out_abort(&out);
		rc = EXIT_FAIL;
		goto out;
	}
	rc = cli_out_commit(&out);
out:
	hd_export_free(x);
	hd_store_close(s);
	return rc;
}

/* ---- drawing with Graphviz ---- */

int cli_membuf_write(const void *buf, size_t n, void *payload)
{
	struct cli_membuf *m = payload;

	if (m->n + n + 1 > m->cap) {
		size_t cap = m->cap ? m->cap : 1 << 16;
		char *p;

		while (cap < m->n + n + 1)
			cap *= 2;
		if (!(p = realloc(m->p, cap)))
			return HD_ENOMEM;
		m->p = p;
		m->cap = cap;
	}
	memcpy(m->p + m->n, buf, n);
	m->n += n;
	m->p[m->n] = '\0';
	return 0;
}

/*
 * The size in pixels of a PNG of the laid out g: its bounding box (the
 * "bb" gvLayout sets, in points) plus the default pad of 4 points a
 * side, at cairo's 96 dots per inch. 0 if g has no bounding box.
 */
static int png_size(Agraph_t *g, double *w, double *h)
{
	static char name[] = "bb"; /* agget wants a char * */
	const char *bb = agget(g, name);
	double x0, y0, x1, y1;

	if (!bb || sscanf(bb, "%lf%*[ ,]%lf%*[ ,]%lf%*[ ,]%lf", &x0, &y0,
			  &x1, &y1) != 4)
		return 0;
	*w = (x1 - x0 + 8) * 96.0 / 72.0;
	*h = (y1 - y0 + 8) * 96.0 / 72.0;
	return 1;
}

/* Refuses a PNG larger than cairo can hold: Graphviz would shrink the
 * drawing to fit, into an unreadable strip. */
static int check_png(Agraph_t *g, const char *out_path)
{
	double w, h;
	char a[32], b[32], c[32];

	if (!png_size(g, &w, &h) ||
	    (w <= CLI_RENDER_MAX_SIDE && h <= CLI_RENDER_MAX_SIDE &&
	     w * h <= CLI_RENDER_MAX_PIXELS))
		return 0;
	cli_error("cannot draw '%s': the picture would be %s x %s pixels, "
		  "more than a PNG can hold (%s a side, 100 million in all): "
		  "draw it as SVG or PDF, or draw less", out_path,
		  cli_commas((uint64_t)(w + 0.5), a, sizeof(a)),
		  cli_commas((uint64_t)(h + 0.5), b, sizeof(b)),
		  cli_commas(CLI_RENDER_MAX_SIDE, c, sizeof(c)));
	return EXIT_FAIL;
}

/*
 * Lays the graph out and renders it in memory, then writes it through
 * the CLI's atomic output (a temporary file beside out_path, checked
 * writes, fsync, rename): nothing is left behind on failure. libgvc's
 * own file output neither syncs nor reports a failed close.
 */
int cli_render_dot(const char *dot, const char *fmt, const char *out_path,
		   const char *like, const struct cli_render_limits *lim)
{
	GVC_t *gvc = NULL;
	Agraph_t *g = NULL;
	struct cli_out out;
	char *data = NULL;
	unsigned int len = 0;
	int rc = EXIT_FAIL, laid = 0;

	agseterr(AGERR); /* warnings off, errors on stderr */
	if (!(gvc = gvContext())) {
		cli_error("cannot start graphviz");
		goto out;
	}
	if (!(g = agmemread(dot))) {
		cli_error("graphviz cannot read the graph");
		goto out;
	}
	if (cli_render_check(out_path, (uint64_t)agnnodes(g),
			     (uint64_t)agnedges(g), lim))
		goto out;
	if (gvLayout(gvc, g, "dot") != 0) {
		cli_error("graphviz cannot lay the graph out");
		goto out;
	}
	laid = 1;
	if (strcmp(fmt, "png") == 0 && check_png(g, out_path))
		goto out;
	if (gvRenderData(gvc, g, fmt, &data, &len) != 0 || !data) {
		cli_error("graphviz cannot render %s", fmt);
		goto out;
	}
	/* a picture of a heap tells its secrets: the dump's permissions */
	if ((rc = cli_out_open(&out, out_path, like)))
		goto out;
	if (fwrite(data, 1, len, out.f) != len) {
		cli_error("cannot write '%s': %s", out_path, strerror(errno));
		cli_out_abort(&out);
		rc = EXIT_FAIL;
		goto out;
	}
	rc = cli_out_commit(&out);
out:
	if (data)
		gvFreeRenderData(data);
	if (laid)
		gvFreeLayout(gvc, g);
	if (g)
		agclose(g);
	if (gvc)
		gvFreeContext(gvc);
	return rc;
}
