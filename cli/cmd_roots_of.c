/*
 * cmd_roots_of.c - heapdump roots-of: what keeps the selected objects
 * alive, as a sub-dump: the union of one shortest path from the GC roots
 * to each of them (or every ancestor), records byte for byte from the
 * dump with their references restricted to the kept set.
 */
#include "cmd.h"
#include "graphq.h"

#include <string.h>

#define COMMAND_NAME "roots-of"

static struct roots_of_args {
	struct cli_select sel;
	const char *out;
	int all, with_paths, skip_weak, strict, quiet;
} A;

static const struct cli_opt opts[] = {
	CLI_SELECT_OPTS(&A.sel),
	OPT_FLAG(0, "all-ancestors", &A.all,
		 "keep every object from which a target can be reached, not "
		 "one shortest path per target"),
	OPT_FLAG(0, "with-paths", &A.with_paths,
		 "give each selected object's record a root_path member: its "
		 "path from the roots as text, reference names included"),
	OPT_FLAG(0, "skip-weak", &A.skip_weak,
		 "do not walk through WeakMap and WeakRef"),
	OPT_STRING('o', "output", "FILE", &A.out,
		   "write the NDJSON to FILE (atomically), not to stdout"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet,
		 "no progress meter and no summary line"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE [ADDRESS...] [SELECTION]",
	"Write, as NDJSON, the selected objects and one shortest path from\n"
	"the GC roots to each (--all-ancestors: every object that reaches\n"
	"them), references restricted to the objects written. Targets no\n"
	"root reaches are reported on stderr (--with-paths: each selected\n"
	"record also says its path as text). Selection: man 7 heapdump-select.",
	opts
};

static int report(struct cli_graph *g, const hd_nodes *kept,
		  const hd_nodes *unreached)
{
	char a[32], b[32];

	if (unreached->n && !hd_store_root_count(g->s)) {
		cli_error("%s has no ROOT lines (a partial dump): no GC root "
			  "reaches anything", g->in.name);
		return EXIT_FAIL;
	}
	if (unreached->n)
		cli_graph_list(g, unreached->n == 1 ?
				  "1 target no GC root reaches (not written):" :
				  "targets no GC root reaches (not written):",
			       unreached);
	if (unreached->n > 1)
		cli_error("%s of %s targets are unreached",
			  cli_commas(unreached->n, a, sizeof(a)),
			  cli_commas(g->sel.n, b, sizeof(b)));
	if (!A.quiet)
		fprintf(stderr, "%s: %s target(s), %s object(s) written\n",
			PROGRAM_NAME, cli_commas(g->sel.n, a, sizeof(a)),
			cli_commas(kept->n, b, sizeof(b)));
	return 0;
}

int cmd_roots_of(int argc, char **argv)
{
	struct cli_graph g;
	hd_nodes kept = { 0 }, unreached = { 0 };
	hd_reach *r = NULL;
	hd_error err = { 0 };
	unsigned flags;
	int rc, first;

	memset(&A, 0, sizeof(A));
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if ((rc = cli_graph_open(&g, &info, &A.sel, argc, argv, first,
				 A.strict, A.quiet)))
		return rc;
	/* one search, kept for the paths' text with --with-paths */
	if ((rc = hd_reach_new(&r, g.s, A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0,
			       &err)) ||
	    (flags = A.all ? HD_ROOTS_ALL_ANCESTORS : 0,
	     rc = hd_reach_roots_of(&kept, &unreached, r, &g.sel, flags,
				    &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if ((rc = report(&g, &kept, &unreached)))
		goto out;
	rc = cli_graph_write(&g, &kept, A.with_paths ? r : NULL, A.out);
out:
	hd_reach_free(r);
	hd_nodes_free(&kept);
	hd_nodes_free(&unreached);
	cli_graph_close(&g);
	return rc;
}
