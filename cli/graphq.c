/*
 * graphq.c - the input, selection and output of the graph queries.
 */
#include "graphq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Addresses listed before "and N more". */
#define LIST_FIRST 5

int cli_graph_open(struct cli_graph *g, const struct cli_cmd_info *info,
		   struct cli_select *sel, int argc, char **argv, int first,
		   int strict, int quiet)
{
	int i, rc;

	memset(g, 0, sizeof(*g));
	if (argc - first < 1)
		return cli_usage_error(info, "which dump or store?");
	for (i = first + 1; i < argc; i++)
		if (cli_select_address(argv[i], sel))
			return cli_usage_error(info, "too many addresses");
	if (!sel->n)
		return cli_usage_error(info, "select the objects: an ADDRESS or "
				       "--address, --class, --name, --type, "
				       "--file, --location, --generation, "
				       "--from");
	if ((rc = cli_select_compile(sel)))
		return rc;
	cli_input_init(&g->in, argv[first], strict, quiet);
	if ((rc = cli_spool_stdin(&g->in)) ||
	    (rc = cli_open_store(&g->in, &g->s)) ||
	    (rc = cli_select_nodes(sel, g->s, g->in.name, quiet, &g->sel)))
		goto fail;
	return 0;
fail:
	cli_select_free(sel);
	cli_graph_close(g);
	return rc;
}

void cli_graph_close(struct cli_graph *g)
{
	hd_nodes_free(&g->sel);
	hd_store_close(g->s);
	g->s = NULL;
}

static int write_bytes(const void *buf, size_t n, void *payload)
{
	return fwrite(buf, 1, n, payload) == n ? 0 : 1;
}

int cli_graph_write(struct cli_graph *g, const hd_nodes *set,
		    const hd_reach *paths, const char *out_path)
{
	hd_read_options ro = cli_input_read_options(&g->in);
	struct cli_out out;
	hd_error err = { 0 };
	int rc;

	if ((rc = cli_out_open(&out, out_path, g->in.path)))
		return rc;
	/* the problems of the dump were reported when it was indexed */
	ro.problem = NULL;
	errno = 0;
	if (paths)
		rc = hd_roots_of_write(g->s, paths, set, &g->sel, &ro,
				       write_bytes, out.f, &err);
	else
		rc = hd_subdump_write(g->s, set,
				      HD_SUBDUMP_ROOTS | HD_SUBDUMP_RESTRICT,
				      &ro, write_bytes, out.f, &err);
	if (rc) {
		int e = errno ? errno : EIO; /* of the failed write */

		cli_out_abort(&out);
		if (rc == HD_ENOMEM)
			cli_error("out of memory");
		else if (rc < 0)
			cli_lib_error(&err);
		else if (out_path && strcmp(out_path, "-") != 0)
			cli_error("cannot write '%s': %s", out_path,
				  strerror(e));
		/* a failed standard output is reported at exit */
		return EXIT_FAIL;
	}
	return cli_out_commit(&out);
}

void cli_graph_list(const struct cli_graph *g, const char *prefix,
		    const hd_nodes *set)
{
	char a[32];
	size_t i;

	fprintf(stderr, "%s: %s", PROGRAM_NAME, prefix);
	for (i = 0; i < set->n && i < LIST_FIRST; i++)
		fprintf(stderr, "%s0x%llx", i ? ", " : " ",
			(unsigned long long)hd_store_address(g->s,
							     set->ids[i]));
	if (set->n > LIST_FIRST)
		fprintf(stderr, " and %s more",
			cli_commas(set->n - LIST_FIRST, a, sizeof(a)));
	fputc('\n', stderr);
}

/* Unreached objects reported one by one before only the count. */
#define SHOW_UNREACHED 5

int cli_graph_each(struct cli_graph *g, unsigned long long max, int quiet,
		   const char *unreached_msg,
		   int (*one)(struct cli_graph *g, hd_node_id id,
			      hd_error *err, void *payload),
		   void *payload)
{
	char a[32], b[32];
	hd_error err = { 0 };
	size_t i, shown = g->sel.n, found = 0, unreached = 0;
	int rc;

	if (max && max < shown)
		shown = (size_t)max;
	for (i = 0; i < shown; i++) {
		rc = one(g, g->sel.ids[i], &err, payload);
		if (rc == HD_ENOTFOUND) {
			if (unreached++ < SHOW_UNREACHED)
				cli_error("%s", err.msg);
			continue;
		}
		if (rc)
			return cli_lib_error(&err);
		found++;
	}
	if (unreached > 1)
		cli_error("%s of %s object(s) %s",
			  cli_commas(unreached, a, sizeof(a)),
			  cli_commas(shown, b, sizeof(b)), unreached_msg);
	if (shown < g->sel.n && !quiet)
		cli_error("%s more selected object(s) not shown (--top)",
			  cli_commas(g->sel.n - shown, a, sizeof(a)));
	return found ? 0 : EXIT_FAIL;
}
