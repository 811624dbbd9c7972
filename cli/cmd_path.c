/*
 * cmd_path.c - heapdump path: why is this object alive? One shortest
 * retention path from a GC root category down to each selected object.
 */
#include "cmd.h"
#include "graphq.h"

#include <string.h>

#define COMMAND_NAME "path"

static struct path_args {
	struct cli_select sel;
	const char *format;
	unsigned long long max;
	int skip_weak, strict, quiet;
} A;

static const struct cli_opt opts[] = {
	CLI_SELECT_OPTS(&A.sel),
	OPT_UINT('n', "top", "N", &A.max,
		 "at most N paths, for the first N selected objects "
		 "(default 10, 0: all)"),
	OPT_UINT(0, "max", "N", &A.max, "the same as --top"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default) or json (one object a line)"),
	OPT_FLAG(0, "skip-weak", &A.skip_weak,
		 "do not walk through WeakMap and WeakRef"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE ADDRESS...|SELECTION",
	"Print one shortest path from a GC root category to each selected\n"
	"object: the root, then each object (address, class, type, memsize,\n"
	"allocation site) down to the object. Selection: man 7 heapdump-select.",
	opts
};

/* The name under which the path's root category holds its first node. */
static const char *root_name(const hd_store *s, const hd_root_path *p,
			     size_t *len)
{
	return p->n ? hd_store_root_ref_name(s, p->root, p->nodes[0], len) :
		      NULL;
}

/* Does any hop of p have a name (the chain line is printed then)? */
static int path_named(const hd_store *s, const hd_root_path *p)
{
	size_t i;

	if (!hd_store_has_ref_names(s))
		return 0;
	if (root_name(s, p, NULL))
		return 1;
	for (i = 0; i + 1 < p->n; i++)
		if (hd_store_ref_name(s, p->nodes[i], p->nodes[i + 1], NULL,
				      NULL))
			return 1;
	return 0;
}

/* "  Node name -> Node name -> ... -> Target", each hop as the library
 * writes it (hd_store_hop_text), control bytes escaped, runs of repeated
 * hops folded (hd_path_fold). */
static void print_chain(const hd_store *s, const hd_root_path *p)
{
	fputs("  ", stdout);
	cli_hops_text(stdout, s, p->nodes, p->n);
	putchar('\n');
}

/* "  0x... Class (TYPE) memsize N, site" */
static void print_node(const hd_store *s, hd_node_id v, size_t k,
		       void *payload)
{
	char cls[256], a[32];
	hd_site site;

	(void)k;
	(void)payload;
	cli_node_class(s, v, cls, sizeof(cls));
	printf("  0x%llx %s (%s) memsize %s",
	       (unsigned long long)hd_store_address(s, v), cls,
	       hd_type_name(hd_store_type(s, v)),
	       cli_commas(hd_store_memsize(s, v), a, sizeof(a)));
	if (hd_store_site(&site, s, v) == 0 && site.file) {
		fputs(", ", stdout);
		cli_site_text(stdout, &site, 1);
	}
	putchar('\n');
}

static void print_text(const hd_store *s, const hd_root_path *p)
{
	char t[256];
	size_t nl;
	const char *root = hd_store_root_name(s, p->root);
	const char *rn = root_name(s, p, &nl);

	printf("root %s", cli_text(t, sizeof(t), root, strlen(root)));
	if (rn)
		printf(" %s", cli_text(t, sizeof(t), rn, nl));
	putchar('\n');
	if (path_named(s, p))
		print_chain(s, p);
	cli_path_note(stdout, p, "  ");
	cli_path_lines(stdout, s, p->nodes, p->n, "  ", print_node, NULL);
}

static void print_json(const hd_store *s, hd_node_id target,
		       const hd_root_path *p)
{
	const char *root, *rn;
	size_t i, nl;

	printf("{\"target\":\"0x%llx\",\"root\":",
	       (unsigned long long)hd_store_address(s, target));
	if (p) {
		root = hd_store_root_name(s, p->root);
		cli_json_string(stdout, root, strlen(root));
		if ((rn = root_name(s, p, &nl))) {
			printf(",\"root_name\":");
			cli_json_string(stdout, rn, nl);
		}
	} else {
		printf("null");
	}
	if (p)
		cli_path_rule_json(stdout, p);
	printf(",\"length\":%zu,\"path\":[", p ? p->n : 0);
	for (i = 0; p && i < p->n; i++) {
		if (i)
			putchar(',');
		cli_hop_json(stdout, s, p->nodes[i],
			     i + 1 < p->n ? p->nodes[i + 1] : HD_NODE_NONE);
	}
	printf("]}\n");
}

struct path_run {
	const hd_reach *r;
	hd_root_path p;
	int json;
	size_t printed;
};

static int one_path(struct cli_graph *g, hd_node_id t, hd_error *err,
		    void *payload)
{
	struct path_run *run = payload;
	int rc = hd_reach_path(&run->p, run->r, t, err);

	if (rc == HD_ENOTFOUND && run->json)
		print_json(g->s, t, NULL);
	if (rc)
		return rc;
	if (run->json) {
		print_json(g->s, t, &run->p);
	} else {
		if (run->printed)
			putchar('\n');
		print_text(g->s, &run->p);
	}
	run->printed++;
	return 0;
}

static int print_paths(struct cli_graph *g, const hd_reach *r, int json)
{
	struct path_run run = { r, { 0 }, json, 0 };
	int rc = cli_graph_each(g, A.max, A.quiet,
				"have no path from a GC root", one_path, &run);

	hd_root_path_free(&run.p);
	return rc;
}

int cmd_path(int argc, char **argv)
{
	struct cli_graph g;
	hd_reach *r = NULL;
	hd_error err = { 0 };
	int rc, first, json = 0;

	memset(&A, 0, sizeof(A));
	A.max = 10;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if ((rc = cli_parse_format(&info, A.format, 2, &json)))
		return rc;
	if ((rc = cli_graph_open(&g, &info, &A.sel, argc, argv, first,
				 A.strict, A.quiet)))
		return rc;
	if ((rc = hd_reach_new(&r, g.s, A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0,
			       &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	rc = print_paths(&g, r, json);
out:
	hd_reach_free(r);
	cli_graph_close(&g);
	return rc;
}
