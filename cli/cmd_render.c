/*
 * cmd_render.c - heapdump render: a part of the heap drawn as SVG, PNG
 * or PDF by Graphviz's dot layout, through libgvc linked in (no dot
 * process). The DOT text is built in memory by the library's writer.
 */
#include "cmd.h"
#include "common.h"
#include "draw.h"

#include <errno.h>
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
 * Lays the graph out and renders it in memory, then writes it through
 * the CLI's atomic output (a temporary file beside out_path, checked
 * writes, fsync, rename): nothing is left behind on failure. libgvc's
 * own file output neither syncs nor reports a failed close.
 */
int cli_render_dot(const char *dot, const char *fmt, const char *out_path,
		const char *like)
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
	if (gvLayout(gvc, g, "dot") != 0) {
		cli_error("graphviz cannot lay the graph out");
		goto out;
	}
	laid = 1;
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
	hd_store *s = NULL;
	hd_export *x = NULL;
	struct cli_membuf m = { NULL, 0, 0 };
	hd_error err = { 0 };
	const char *fmt;
	int rc, first;

	cli_draw_init(&A);
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
	rc = cli_render_dot(m.p, fmt, A.output, argv[first]);
out:
	free(m.p);
	hd_export_free(x);
	hd_store_close(s);
	return rc;
}
