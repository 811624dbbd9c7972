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
				       "--address, --class, --type, --file, "
				       "--location, --generation, --from");
	if ((rc = cli_select_compile(sel)))
		return rc;
	cli_input_init(&g->in, argv[first], strict, quiet);
	if ((rc = cli_spool_stdin(&g->in)) ||
	    (rc = cli_open_store(&g->in, &g->s)) ||
	    (rc = cli_select_nodes(sel, g->s, quiet, &g->sel)))
		goto fail;
	if (!g->sel.n) {
		cli_error("%s: the selection picks no object", g->in.name);
		rc = EXIT_FAIL;
		goto fail;
	}
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

struct writer {
	struct cli_graph *g;
	FILE *f;
	unsigned char *keep;
};

static int write_bytes(const void *buf, size_t n, void *payload)
{
	return fwrite(buf, 1, n, payload) == n ? 0 : 1;
}

static int write_record(const hd_record *rec, hd_node_id id, void *payload)
{
	struct writer *w = payload;

	(void)id;
	return hd_record_write(rec, w->g->s, w->keep, write_bytes, w->f);
}

/*
 * The ROOT records, their references restricted to keep: the output
 * stays a dump whose retention paths can be asked for again.
 */
static void write_roots(const hd_store *s, const unsigned char *keep,
			FILE *f)
{
	uint32_t c, nroots = hd_store_root_count(s);
	hd_edge_iter it;
	hd_node_id v;
	const char *name;
	int first;

	for (c = 0; c < nroots; c++) {
		hd_store_root_refs(s, c, &it);
		first = 1;
		while (hd_edge_iter_next(&it, &v) == 0) {
			if (!(keep[v / 8] >> (v % 8) & 1))
				continue;
			if (first) {
				name = hd_store_root_name(s, c);
				fputs("{\"type\":\"ROOT\", \"root\":", f);
				cli_json_string(f, name, strlen(name));
				fputs(", \"references\":[", f);
			}
			fprintf(f, "%s\"0x%llx\"", first ? "" : ", ",
				(unsigned long long)hd_store_address(s, v));
			first = 0;
		}
		if (!first)
			fputs("]}\n", f);
	}
}

int cli_graph_write(struct cli_graph *g, const hd_nodes *set,
		    const char *out_path)
{
	hd_read_options ro = cli_input_read_options(&g->in);
	uint32_t n = hd_store_node_count(g->s);
	struct cli_out out;
	struct writer w;
	hd_error err = { 0 };
	size_t i;
	int rc;

	w.g = g;
	w.keep = calloc((size_t)n / 8 + 1, 1);
	if (!w.keep) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	for (i = 0; i < set->n; i++)
		w.keep[set->ids[i] / 8] |=
			(unsigned char)(1u << (set->ids[i] % 8));
	if ((rc = cli_out_open(&out, out_path, g->in.path))) {
		free(w.keep);
		return rc;
	}
	w.f = out.f;
	write_roots(g->s, w.keep, w.f);
	/* the problems of the dump were reported when it was indexed */
	ro.problem = NULL;
	errno = 0;
	rc = hd_store_records(g->s, NULL, set, &ro, write_record, &w, &err);
	free(w.keep);
	if (rc) {
		int e = errno ? errno : EIO; /* of the failed write */

		cli_out_abort(&out);
		if (rc < 0 && rc != HD_ENOMEM)
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
