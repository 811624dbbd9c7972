/*
 * graphviz.c - the drawing by Graphviz's dot that render and leaks --svg
 * share (libgvc in the process, no dot process): the one object that
 * needs Graphviz's headers and library. libgvc (HD_GVC_SONAME, from the
 * Makefile) is loaded at the first drawing (dynlib.h): the other
 * commands never map it. Built with HAVE_GVC=0 (make GVC=0), it draws
 * nothing and says how to get Graphviz.
 */
#include "draw.h"
#include "common.h"
#include "dynlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HAVE_GVC
#define HAVE_GVC 1
#endif

#if HAVE_GVC
#include <gvc.h>

#ifndef HD_GVC_SONAME
#error "HD_GVC_SONAME: the file name of libgvc to load (the Makefile's)"
#endif

/* libgvc's functions (and libcgraph's, which it needs), with the types
 * of the headers compiled against */
#define GV_FN(f) __typeof__(f) *f
static struct gv_api {
	GV_FN(agclose);
	GV_FN(agget);
	GV_FN(agmemread);
	GV_FN(agnedges);
	GV_FN(agnnodes);
	GV_FN(agseterr);
	GV_FN(gvContext);
	GV_FN(gvFreeLayout);
	GV_FN(gvFreeRenderData);
	GV_FN(gvLayout);
	GV_FN(gvRenderData);
} gv;
#define GV_SYM(f) { #f, offsetof(struct gv_api, f) }
static const struct cli_dynsym gv_syms[] = {
	GV_SYM(agclose), GV_SYM(agget), GV_SYM(agmemread),
	GV_SYM(agnedges), GV_SYM(agnnodes), GV_SYM(agseterr),
	GV_SYM(gvContext), GV_SYM(gvFreeLayout), GV_SYM(gvFreeRenderData),
	GV_SYM(gvLayout), GV_SYM(gvRenderData),
};

/* 0 once libgvc is loaded, or EXIT_FAIL after the message */
static int gv_load(void)
{
	static int state;

	return cli_dynload(&state, HD_GVC_SONAME, "Graphviz's libgvc "
			   "(Debian: libgvc6)", gv_syms,
			   sizeof(gv_syms) / sizeof(gv_syms[0]), &gv);
}

int cli_render_available(const char *what)
{
	(void)what;
	return gv_load();
}

/*
 * The size in pixels of a PNG of the laid out g: its bounding box (the
 * "bb" gvLayout sets, in points) plus the default pad of 4 points a
 * side, at cairo's 96 dots per inch. 0 if g has no bounding box.
 */
static int png_size(Agraph_t *g, double *w, double *h)
{
	static char name[] = "bb"; /* agget wants a char * */
	const char *bb = gv.agget(g, name);
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
 * The one Graphviz context of the process, made at the first drawing and
 * kept until exit: a second context after gvFreeContext() reads what the
 * first one freed (the pango plugin keeps font names from the context's
 * dictionaries: a use after free under ASan at the second drawing of
 * report and leaks --svg).
 */
static GVC_t *context(void)
{
	static GVC_t *gvc;

	if (!gvc && gv_load() == 0)
		gvc = gv.gvContext();
	return gvc;
}

/*
 * Lays the graph out and renders it in memory as fmt: *data_out (NUL
 * terminated, malloc'ed) and *len_out. what names the drawing in
 * messages. Refuses a graph over lim before the layout, and a PNG
 * larger than cairo can hold.
 */
int cli_render_dot_data(const char *dot, const char *fmt, const char *what,
			const struct cli_render_limits *lim, char **data_out,
			size_t *len_out)
{
	GVC_t *gvc = NULL;
	Agraph_t *g = NULL;
	char *data = NULL;
	unsigned int len = 0;
	int rc = EXIT_FAIL, laid = 0;

	*data_out = NULL;
	*len_out = 0;
	if (gv_load())
		return EXIT_FAIL;
	gv.agseterr(AGERR); /* warnings off, errors on stderr */
	if (!(gvc = context())) {
		cli_error("cannot start graphviz");
		goto out;
	}
	if (!(g = gv.agmemread(dot))) {
		cli_error("graphviz cannot read the graph");
		goto out;
	}
	if (cli_render_check(what, (uint64_t)gv.agnnodes(g),
			     (uint64_t)gv.agnedges(g), lim))
		goto out;
	if (gv.gvLayout(gvc, g, "dot") != 0) {
		cli_error("graphviz cannot lay the graph out");
		goto out;
	}
	laid = 1;
	if (strcmp(fmt, "png") == 0 && check_png(g, what))
		goto out;
	if (gv.gvRenderData(gvc, g, fmt, &data, &len) != 0 || !data) {
		cli_error("graphviz cannot render %s", fmt);
		goto out;
	}
	/* the caller frees it with free(): a copy of graphviz's buffer */
	if (!(*data_out = malloc((size_t)len + 1))) {
		cli_error("out of memory");
		goto out;
	}
	memcpy(*data_out, data, len);
	(*data_out)[len] = '\0';
	*len_out = len;
	rc = EXIT_OK;
out:
	if (data)
		gv.gvFreeRenderData(data);
	if (laid)
		gv.gvFreeLayout(gvc, g);
	if (g)
		gv.agclose(g);
	return rc;
}

/*
 * Renders in memory (cli_render_dot_data), then writes it through the
 * CLI's atomic output (a temporary file beside out_path, checked writes,
 * fsync, rename): nothing is left behind on failure. libgvc's own file
 * output neither syncs nor reports a failed close.
 */
int cli_render_dot(const char *dot, const char *fmt, const char *out_path,
		   const char *like, const struct cli_render_limits *lim)
{
	struct cli_out out;
	char *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = cli_render_dot_data(dot, fmt, out_path, lim, &data, &len)))
		return rc;
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
	free(data);
	return rc;
}

int cli_render_compiled(void)
{
	return 1;
}

#else /* !HAVE_GVC */

int cli_render_available(const char *what)
{
	cli_error("%s needs Graphviz, and this heapdump was built "
		  "without it (make GVC=0): install libgraphviz-dev "
		  "(apt-get install libgraphviz-dev) and build it again", what);
	return EXIT_FAIL;
}

int cli_render_dot(const char *dot, const char *fmt, const char *out_path,
		   const char *like, const struct cli_render_limits *lim)
{
	(void)dot;
	(void)fmt;
	(void)out_path;
	(void)like;
	(void)lim;
	return cli_render_available("a drawing");
}

int cli_render_dot_data(const char *dot, const char *fmt, const char *what,
			const struct cli_render_limits *lim, char **data_out,
			size_t *len_out)
{
	(void)dot;
	(void)fmt;
	(void)what;
	(void)lim;
	*data_out = NULL;
	*len_out = 0;
	return cli_render_available("a drawing");
}

int cli_render_compiled(void)
{
	return 0;
}

#endif
