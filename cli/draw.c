/*
 * draw.c - the part of the heap that to-gml, to-dot and render draw,
 * the text writers' command, and the limits of a drawing; graphviz.c
 * draws it.
 */
#include "draw.h"
#include "common.h"

#include <errno.h>
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
	lim->refusal = NULL;
	lim->refusal_size = 0;
}

static int over(const char *what, uint64_t n, const char *things,
		unsigned long long max, const char *option,
		const struct cli_render_limits *lim)
{
	const char *advice = lim->advice;
	char a[32], b[32];

	cli_commas(n, a, sizeof(a));
	cli_commas(max, b, sizeof(b));
	if (lim->refusal) {
		snprintf(lim->refusal, lim->refusal_size, "%s has %s %s, more "
			 "than %s (render's %s): Graphviz would take minutes "
			 "to lay it out%s%s", what, a, things, b, option,
			 advice ? ": " : "", advice ? advice : "");
		return EXIT_FAIL;
	}
	cli_error("cannot draw '%s': the graph has %s %s, more than %s %s; "
		  "Graphviz would take minutes to lay it out: %s%s%s "
		  "(0: no limit)", what, a, things, option, b,
		  advice ? advice : "", advice ? ", or raise " : "raise ",
		  option);
	return EXIT_FAIL;
}

int cli_render_check(const char *what, uint64_t nodes, uint64_t edges,
		     const struct cli_render_limits *lim)
{
	if (lim->max_nodes && nodes > lim->max_nodes)
		return over(what, nodes, "nodes", lim->max_nodes,
			    "--max-nodes", lim);
	if (lim->max_edges && edges > lim->max_edges)
		return over(what, edges, "references", lim->max_edges,
			    "--max-edges", lim);
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

/* ---- the DOT text of a drawing, in memory ---- */

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

int cli_nodes_push(hd_nodes *v, hd_node_id id)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		hd_node_id *p = realloc(v->ids, cap * sizeof(*p));

		if (!p)
			return HD_ENOMEM;
		v->ids = p;
		v->cap = cap;
	}
	v->ids[v->n++] = id;
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	hd_node_id x = *(const hd_node_id *)a, y = *(const hd_node_id *)b;

	return x < y ? -1 : x > y;
}

int cli_nodes_dot(struct cli_membuf *m, const hd_store *s,
		  const hd_export_base *base, hd_nodes *set, uint32_t depth,
		  size_t max_nodes, hd_error *err)
{
	hd_export_options eo = HD_EXPORT_OPTIONS_INIT;
	hd_export *x = NULL;
	size_t i, k;
	int rc;

	qsort(set->ids, set->n, sizeof(*set->ids), cmp_node);
	for (i = k = 0; i < set->n; i++)
		if (!k || set->ids[k - 1] != set->ids[i])
			set->ids[k++] = set->ids[i];
	set->n = k;
	eo.flags = HD_EXPORT_COLLAPSE;
	eo.depth = depth;
	if (max_nodes)
		eo.max_nodes = max_nodes;
	rc = base ? hd_export_new_from(&x, base, set, &eo, err) :
		    hd_export_new(&x, s, set, &eo, err);
	if (!rc)
		rc = hd_export_write_dot(x, cli_membuf_write, m, err);
	hd_export_free(x);
	return rc;
}

int cli_suspect_dot(struct cli_membuf *m, const hd_store *s,
		    const hd_export_base *base, const hd_leaks_suspect *sp,
		    size_t max_border, hd_error *err)
{
	hd_nodes set = { NULL, 0, 0 };
	size_t i;
	int rc = HD_ENOMEM;

	for (i = 0; sp->path && i < sp->path->n; i++)
		if (cli_nodes_push(&set, sp->path->nodes[i]))
			goto out;
	if (sp->holder != HD_NODE_NONE && cli_nodes_push(&set, sp->holder))
		goto out;
	for (i = 0; sp->border && i < sp->border->n && i < max_border; i++)
		if (cli_nodes_push(&set, sp->border->ids[i]))
			goto out;
	rc = cli_nodes_dot(m, s, base, &set, 0, 0, err);
out:
	if (rc == HD_ENOMEM && err && !err->code)
		err->code = HD_ENOMEM;
	free(set.ids);
	return rc;
}

const char *cli_parse_share(const char *arg, void *target)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end != arg && *end == '%')
		end++;
	if (end == arg || *end || errno || !(v >= 0 && v <= 100))
		return "--min-share takes a percentage from 0 to 100";
	*(double *)target = v;
	return NULL;
}
