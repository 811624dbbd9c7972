/*
 * cmd_dominators.c - heapdump dominators: the chain of dominators of an
 * object, outermost first: each object on it alone keeps the next alive,
 * so freeing any of them frees the object.
 */
#include "cmd.h"
#include "graphq.h"

#include <string.h>

#define COMMAND_NAME "dominators"

static struct dom_args {
	struct cli_select sel;
	const char *format;
	unsigned long long max;
	int skip_weak, strict, quiet, all;
} A;

static const struct cli_opt opts[] = {
	CLI_SELECT_OPTS(&A.sel),
	OPT_UINT('n', "top", "N", &A.max,
		 "at most N chains, for the first N selected objects "
		 "(default 10, 0: all)"),
	OPT_UINT(0, "max", "N", &A.max, "the same as --top"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default) or json (one object a line)"),
	OPT_FLAG('a', "all", &A.all,
		 "keep the allocation tracer and dump_all's own objects"),
	OPT_FLAG(0, "skip-weak", &A.skip_weak,
		 "weak references (WeakMap, WeakRef) keep nothing "
		 "alive"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE ADDRESS...|SELECTION",
	"Print the dominators of each selected object, outermost first: the\n"
	"objects every path from the GC roots to it passes through, each\n"
	"with its retained size, down to the object itself. Selection: man 7\n"
	"heapdump-select. The allocation tracer and dump_all's own objects are\n"
	"left out of the selection and of the graph, as stats leaves them out,\n"
	"unless --all.",
	opts
};

/*
 * The name of the reference from the chain's object i-1 (its immediate
 * dominator) to object i, when the dominator references it directly and
 * the reference has a name (*len, *flags as hd_store_ref_name), else
 * NULL. The first object has none: the name under which the chain's root
 * category holds it is on the root line ("root global_tbl $CACHE").
 */
static const char *chain_name(const hd_store *s, const hd_root_path *p,
			      size_t i, size_t *len, unsigned *flags)
{
	*flags = 0;
	if (i)
		return hd_store_ref_name(s, p->nodes[i - 1], p->nodes[i], len,
					 flags);
	return NULL; /* the root's name is on the root line */
}

/* " via NAME" on an object's line, when chain_name has one. */
static void text_via(const hd_store *s, const hd_root_path *p, size_t i)
{
	size_t n;
	unsigned flags;
	const char *name = chain_name(s, p, i, &n, &flags);

	if (name) {
		fputs(" via ", stdout);
		cli_text_string(stdout, name, n);
	}
}

struct chain_line {
	const hd_domtree *d;
	const hd_root_path *p;
};

/* Object i of a chain on a line of its own (cli_path_lines). */
static void chain_line(const hd_store *s, hd_node_id v, size_t i,
		       void *payload)
{
	const struct chain_line *c = payload;
	char cls[256], a[32], b[32];
	hd_site site;
	uint64_t rm, rc;

	rc = hd_domtree_retained(c->d, v, &rm);
	cli_node_class(s, v, cls, sizeof(cls));
	printf("  0x%llx %s (%s)", (unsigned long long)hd_store_address(s, v),
	       cls, hd_type_name(hd_store_type(s, v)));
	text_via(s, c->p, i);
	printf(" retains %s%s in %s object%s",
	       cli_human_bytes(rm, a, sizeof(a)),
	       rm == UINT64_MAX ? " (saturated: 2^64-1 bytes or "
				  "more)" : "",
	       cli_commas(rc, b, sizeof(b)), rc == 1 ? "" : "s");
	if (hd_store_site(&site, s, v) == 0 && site.file) {
		fputs(", ", stdout);
		cli_site_text(stdout, &site, 0);
	}
	putchar('\n');
}

/* The chain, its runs of repeated hops folded (hd_path_fold) as every
 * path is. */
static void print_text(const hd_store *s, const hd_domtree *d,
		       const hd_root_path *p)
{
	struct chain_line c = { d, p };

	if (p->root != UINT32_MAX)
	{
		fputs("root ", stdout);
		cli_root_text(stdout, s, p->root, p->n ? p->nodes[0] :
							 HD_NODE_NONE);
		putchar('\n');
	}
	else
		printf("roots (several paths lead to the first object)\n");
	cli_path_lines(stdout, s, p->nodes, p->n, "  ", chain_line, &c);
}

static void print_json(const hd_store *s, const hd_domtree *d,
		       hd_node_id target, const hd_root_path *p)
{
	const char *root, *name;
	uint64_t rm, rc;
	size_t i, n = 0;
	unsigned flags;

	printf("{\"target\":\"0x%llx\",\"root\":",
	       (unsigned long long)hd_store_address(s, target));
	if (p && p->root != UINT32_MAX) {
		root = hd_store_root_name(s, p->root);
		cli_json_string(stdout, root, strlen(root));
		if (p->n && (name = hd_store_root_ref_name(s, p->root,
							   p->nodes[0], &n))) {
			printf(",\"root_name\":");
			cli_json_string(stdout, name, n);
		}
	} else {
		printf("null");
	}
	printf(",\"reached\":%s,\"chain\":[", p ? "true" : "false");
	for (i = 0; p && i < p->n; i++) {
		rc = hd_domtree_retained(d, p->nodes[i], &rm);
		printf("%s{\"retained_count\":%llu,\"retained_memsize\":%llu,"
		       "\"object\":", i ? "," : "", (unsigned long long)rc,
		       (unsigned long long)rm);
		cli_node_json(stdout, s, p->nodes[i]);
		name = chain_name(s, p, i, &n, &flags);
		cli_name_json(stdout, name, n, flags);
		putchar('}');
	}
	printf("]}\n");
}

struct chain_run {
	const hd_domtree *d;
	hd_root_path p;
	int json;
	size_t printed;
};

static int one_chain(struct cli_graph *g, hd_node_id t, hd_error *err,
		     void *payload)
{
	struct chain_run *run = payload;
	int rc = hd_domtree_chain(&run->p, run->d, t, err);

	if (rc == HD_ENOTFOUND && run->json)
		print_json(g->s, run->d, t, NULL);
	if (rc)
		return rc;
	if (run->json) {
		print_json(g->s, run->d, t, &run->p);
	} else {
		if (run->printed)
			putchar('\n');
		print_text(g->s, run->d, &run->p);
	}
	run->printed++;
	return 0;
}

static int print_chains(struct cli_graph *g, const hd_domtree *d, int json)
{
	struct chain_run run = { d, { 0 }, json, 0 };
	int rc = cli_graph_each(g, A.max, A.quiet,
				"are not reached from a GC root", one_chain,
				&run);

	hd_root_path_free(&run.p);
	return rc;
}

/* Leaves the tracer and dump_all's objects out of the selection (the
 * rule of stats, hd_store_is_dumper); fails when nothing else is left. */
static int drop_dumper(struct cli_graph *g)
{
	if (hd_nodes_drop_dumper(&g->sel, g->s))
		return EXIT_OK;
	cli_error("%s: the selection picks only the allocation tracer and "
		  "dump_all's own objects, which are left out (--all keeps "
		  "them)", g->in.name);
	return EXIT_FAIL;
}

int cmd_dominators(int argc, char **argv)
{
	struct cli_graph g;
	hd_domtree *d = NULL;
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
	if (!A.all && (rc = drop_dumper(&g)))
		goto out;
	if (hd_domtree_new(&d, g.s, (A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0) |
				    (A.all ? 0 : HD_DOMTREE_SKIP_DUMPER),
			   &err)) {
		rc = cli_lib_error(&err);
		goto out;
	}
	rc = print_chains(&g, d, json);
out:
	hd_domtree_free(d);
	cli_graph_close(&g);
	return rc;
}
