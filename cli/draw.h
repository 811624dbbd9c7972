/*
 * draw.h - what to-gml, to-dot and render share: the options that
 * choose the part of the heap to draw (a selection, --depth, --collapse,
 * --max-nodes) and opening it as an hd_export.
 */
#ifndef CLI_DRAW_H
#define CLI_DRAW_H

#include "heapdump.h"
#include "opt.h"
#include "select_opts.h"

struct cli_draw_args {
	struct cli_select sel;
	unsigned long long depth;
	unsigned long long max_nodes, max_edges;
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
	OPT_FLAG(0, "strict", &(a)->strict, "fail at the first invalid line"), \
	OPT_FLAG('q', "quiet", &(a)->quiet, "no progress meter")

/* to-gml and to-dot: --max-nodes, default HD_EXPORT_MAX_NODES. */
#define CLI_DRAW_MAX_NODES_OPT(a)                                           \
	OPT_UINT(0, "max-nodes", "N", &(a)->max_nodes,                       \
		 "refuse graphs of more nodes (default 50000, 0: no limit)")

/*
 * What Graphviz's dot lays out in seconds (render, leaks --svg): its
 * time grows about with the square of the graph (592 nodes and 1,233
 * references: 1.5 s; 1,508 and 3,367: 14 s; 3,283 and 3,637: 43 s).
 */
#define CLI_RENDER_MAX_NODES 1000
#define CLI_RENDER_MAX_EDGES 2000
/* The largest PNG: cairo's limit a side (Graphviz shrinks a larger
 * drawing to fit, unreadably), and at most 100 million pixels (400 MB
 * of memory). */
#define CLI_RENDER_MAX_SIDE 32767
#define CLI_RENDER_MAX_PIXELS 100000000.0

#define CLI_RENDER_LIMIT_OPTS(nodes, edges)                                 \
	OPT_UINT(0, "max-nodes", "N", nodes,                                 \
		 "refuse drawings of more nodes (default 1000, 0: no limit)"), \
	OPT_UINT(0, "max-edges", "N", edges,                                 \
		 "refuse drawings of more references (default 2000, "        \
		 "0: no limit)")

/* Sets the defaults of a (before cli_parse): to-gml's and to-dot's. */
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

/* Appends id to set (grown with realloc): 0, or HD_ENOMEM. */
int cli_nodes_push(hd_nodes *set, hd_node_id id);

/*
 * The DOT of the objects of set (sorted and made unique here; freed by
 * the caller), grown by depth references, IMEMOs and hidden collections
 * folded into the edges (render and to-dot --collapse), appended to m;
 * max_nodes as hd_export_options. base: s's, made with
 * HD_EXPORT_COLLAPSE (serve keeps one: a drawing then costs what it
 * touches), or NULL. Returns 0 or a library code with err set.
 */
int cli_nodes_dot(struct cli_membuf *m, const hd_store *s,
		  const hd_export_base *base, hd_nodes *set, uint32_t depth,
		  size_t max_nodes, hd_error *err);

/*
 * The DOT of a leak suspect's drawing (leaks --svg, report): its path,
 * its holder and up to max_border of its border objects, IMEMOs and
 * hidden collections folded into the edges, appended to m; base as
 * cli_nodes_dot's. Returns 0, or a library code with err set
 * (HD_ENOMEM: out of memory).
 */
int cli_suspect_dot(struct cli_membuf *m, const hd_store *s,
		    const hd_export_base *base, const hd_leaks_suspect *sp,
		    size_t max_border, hd_error *err);

/* --min-share PCT (an OPT_CALLBACK into a double): 0 to 100, with or
 * without '%'. */
const char *cli_parse_share(const char *arg, void *target);

/* The limits of a drawing laid out by Graphviz (0: none); advice says
 * how to draw less, or NULL. With refusal set, a drawing over them is
 * refused into refusal (refusal_size bytes, the limits in it, no
 * option named) instead of on standard error: serve's client, not its
 * operator, is the one to hear why. */
struct cli_render_limits {
	unsigned long long max_nodes, max_edges;
	const char *advice;
	char *refusal;
	size_t refusal_size;
};

/* The defaults: CLI_RENDER_MAX_NODES and _EDGES, no advice, refusals
 * on standard error. */
void cli_render_limits_init(struct cli_render_limits *lim);

/*
 * Refuses (a message, EXIT_FAIL) a drawing of more nodes or references
 * than lim allows, naming what, the counts, lim->advice and the option
 * that lifts the limit; what is the command ("render") or the file.
 * Returns 0 when it is within the limits.
 */
int cli_render_check(const char *what, uint64_t nodes, uint64_t edges,
		     const struct cli_render_limits *lim);

/* graphviz.c: 0 when this heapdump draws with Graphviz; built without
 * it (make GVC=0), EXIT_FAIL after a message saying that what ("render",
 * "leaks --svg") needs it and how to get it. */
int cli_render_available(const char *what);

/*
 * graphviz.c: lays out the DOT text with Graphviz's dot and renders it as fmt (svg,
 * png, pdf) into out_path, atomically (a temporary file beside it, then
 * rename), with the mode of the file like (the dump) if it is a regular
 * file. Refuses, before the layout, a graph over lim (cli_render_check),
 * and a PNG over CLI_RENDER_MAX_SIDE or _PIXELS before rendering it.
 * Returns 0 or an exit code.
 */
int cli_render_dot(const char *dot, const char *fmt, const char *out_path,
		   const char *like, const struct cli_render_limits *lim);

/* graphviz.c: cli_render_dot into memory: *data_out (NUL-terminated,
 * free it with free()) and *len_out; what names the drawing in
 * messages. Returns 0 or an exit code, after the message. */
int cli_render_dot_data(const char *dot, const char *fmt, const char *what,
			const struct cli_render_limits *lim, char **data_out,
			size_t *len_out);

/* graphviz.c: 1 when this heapdump draws with Graphviz, 0 when it was
 * built without it (make GVC=0); says nothing. */
int cli_render_compiled(void);

#endif
