/*
 * cmd_render.c - heapdump render: a part of the heap drawn as SVG, PNG
 * or PDF by Graphviz's dot layout, through libgvc linked in (no dot
 * process). The DOT text is built in memory by the library's writer.
 */
#include "cmd.h"
#include "common.h"
#include "draw.h"

#include <errno.h>
#include <stdio.h>
#include <gvc.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define COMMAND_NAME "render"

static struct cli_draw_args A;

static const struct cli_opt opts[] = {
	CLI_DRAW_OPTS(&A),
	CLI_RENDER_LIMIT_OPTS(&A.max_nodes, &A.max_edges),
	OPT_STRING('o', "output", "FILE", &A.output,
		   "the picture to write: FILE.svg, FILE.png or FILE.pdf"),
	OPT_STRING('F', "format", "FMT", &A.format,
		   "svg, png or pdf (default: from the extension of FILE)"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "-o FILE [options] DUMP|STORE",
	"Draw the selected objects (default: the whole heap) and the references\n"
	"between them with Graphviz's dot layout, as SVG, PNG or PDF.",
	opts
};

static const char *const formats[] = { "svg", "png", "pdf", NULL };

/* svg, png or pdf from --format or the output's extension, or NULL. */
static const char *pick_format(const char *fmt, const char *out_path)
{
	const char *dot = strrchr(out_path, '.');
	size_t i;

	if (!fmt) {
		if (!dot || strchr(dot, '/'))
			return NULL;
		fmt = dot + 1;
	}
	for (i = 0; formats[i]; i++)
		if (strcasecmp(fmt, formats[i]) == 0)
			return formats[i];
	return NULL;
}

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

int cmd_render(int argc, char **argv)
{
	struct cli_render_limits lim;
	hd_store *s = NULL;
	hd_export *x = NULL;
	struct cli_membuf m = { NULL, 0, 0 };
	hd_error err = { 0 };
	const char *fmt;
	int rc, first;

	cli_draw_init(&A);
	A.max_nodes = CLI_RENDER_MAX_NODES;
	A.max_edges = CLI_RENDER_MAX_EDGES;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (argc - first != 1)
		return cli_usage_error(&info, argc - first ?
						      "one dump or store, please" :
						      "which dump or store?");
	if (!A.output || !*A.output || strcmp(A.output, "-") == 0)
		return cli_usage_error(&info, "where to? -o FILE.svg, "
					      "FILE.png or FILE.pdf");
	if (!(fmt = pick_format(A.format, A.output)))
		return cli_usage_error(&info, A.format ?
				"unknown format '%s': svg, png or pdf" :
				"cannot tell the format of '%s': name it "
				".svg, .png or .pdf, or use --format",
				A.format ? A.format : A.output);
	if ((rc = cli_draw_open(&info, &A, argv[first], &s, &x)))
		return rc;
	if (hd_export_write_dot(x, cli_membuf_write, &m, &err)) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
		goto out;
	}
	lim.max_nodes = A.max_nodes;
	lim.max_edges = A.max_edges;
	lim.advice = "narrow the selection, lower --depth or add --collapse";
	rc = cli_render_dot(m.p, fmt, A.output, argv[first], &lim);
out:
	free(m.p);
	hd_export_free(x);
	hd_store_close(s);
	return rc;
}
