/*
 * draw.h - what to-gml, to-dot and render share: the options that
 * choose the part of the heap to draw (a selection, --depth, --collapse,
 * --max-nodes) and opening it as an hd_export.
 */
#ifndef CLI_DRAW_H
#define CLI_DRAW_H

#include "heapdump.h"
#include "opt.h"
#include "select.h"

struct cli_draw_args {
	struct cli_select sel;
	unsigned long long depth;
	unsigned long long max_nodes;
	int collapse, strict, quiet;
	const char *output;
	const char *format;
};

#define CLI_DRAW_OPTS(a)                                                    \
	CLI_SELECT_OPTS(&(a)->sel),                                          \
	OPT_UINT(0, "depth", "N", &(a)->depth,                               \
		 "also objects up to N references away (default 0)"),        \
	OPT_FLAG(0, "collapse", &(a)->collapse,                              \
		 "fold IMEMOs, hidden arrays and hashes into the edges "     \
		 "through them"),                                            \
	OPT_UINT(0, "max-nodes", "N", &(a)->max_nodes,                       \
		 "refuse graphs of more nodes (default 50000, 0: no limit)"), \
	OPT_FLAG(0, "strict", &(a)->strict, "fail at the first invalid line"), \
	OPT_FLAG('q', "quiet", &(a)->quiet, "no progress meter")

/* Sets the defaults of a (before cli_parse). */
void cli_draw_init(struct cli_draw_args *a);

/*
 * Opens the input, selects, and chooses the graph's nodes; refuses a
 * graph over --max-nodes with a message that says how to narrow it.
 * Returns 0 or an exit code; on 0 the caller closes *s_out and frees
 * *x_out.
 */
int cli_draw_open(const struct cli_cmd_info *info, struct cli_draw_args *a,
		   const char *path, hd_store **s_out, hd_export **x_out);

/* hd_write_cb for a FILE * payload. */
int cli_draw_fwrite(const void *buf, size_t n, void *payload);

/* to-gml and to-dot: the whole command, writing with write. */
int cli_draw_write_cmd(const struct cli_cmd_info *info,
			struct cli_draw_args *a, int argc, char **argv,
			int (*write)(hd_export *, hd_write_cb, void *,
				     hd_error *));

/* Text grown in memory (NUL-terminated); cli_membuf_write is its
 * hd_write_cb. */
struct cli_membuf {
	char *p;
	size_t n, cap;
};
int cli_membuf_write(const void *buf, size_t n, void *payload);

/*
 * Lays out the DOT text with Graphviz's dot and renders it as fmt (svg,
 * png, pdf) into out_path, atomically (a temporary file beside it, then
 * rename), with the mode of the file like (the dump) if it is a regular
 * file. Returns 0 or an exit code (cmd_render.c).
 */
int cli_render_dot(const char *dot, const char *fmt, const char *out_path,
		   const char *like);

#endif
