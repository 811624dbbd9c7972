/*
 * cmd_render.c - heapdump render: a part of the heap drawn as SVG, PNG
 * or PDF by Graphviz's dot layout, through libgvc linked in (no dot
 * process; cli_render_dot in graphviz.c). The DOT text is built in memory by
 * the library's writer.
 */
#include "cmd.h"
#include "common.h"
#include "draw.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
	if ((rc = cli_render_available(COMMAND_NAME)))
		return rc;
	if ((rc = cli_draw_open(&info, &A, argv[first], &s, &x)))
		return rc;
	if (hd_export_write_dot(x, cli_membuf_write, &m, &err)) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
		goto out;
	}
	cli_render_limits_init(&lim);
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
