/*
 * cmd_subgraph_of.c - heapdump subgraph-of: the selected objects and
 * everything they reach (down to a depth), as a sub-dump.
 */
#include "cmd.h"
#include "graphq.h"

#include <string.h>

#define COMMAND_NAME "subgraph-of"

static struct subgraph_args {
	struct cli_select sel;
	const char *out;
	unsigned long long depth;
	int strict, quiet;
} A;

static const struct cli_opt opts[] = {
	CLI_SELECT_OPTS(&A.sel),
	OPT_UINT('d', "max-depth", "N", &A.depth,
		 "at most N references away from the selection (default 0: "
		 "no limit)"),
	OPT_STRING('o', "output", "FILE", &A.out,
		   "write the NDJSON to FILE (atomically), not to stdout"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet,
		 "no progress meter and no summary line"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE [ADDRESS...] [SELECTION]",
	"Write, as NDJSON, the selected objects and every object they reach\n"
	"(at most --max-depth references away), references restricted to the\n"
	"objects written. Selection: man 7 heapdump-select.",
	opts
};

int cmd_subgraph_of(int argc, char **argv)
{
	struct cli_graph g;
	hd_nodes out = { 0 };
	hd_error err = { 0 };
	char a[32], b[32];
	int rc, first;

	memset(&A, 0, sizeof(A));
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (A.depth > 0xffffffffull)
		return cli_usage_error(&info, "--max-depth: at most 4294967295");
	if ((rc = cli_graph_open(&g, &info, &A.sel, argc, argv, first,
				 A.strict, A.quiet)))
		return rc;
	if ((rc = hd_subgraph_of(&out, g.s, &g.sel, (unsigned)A.depth,
				 &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (!A.quiet)
		fprintf(stderr, "%s: %s selected, %s object(s) written\n",
			PROGRAM_NAME, cli_commas(g.sel.n, a, sizeof(a)),
			cli_commas(out.n, b, sizeof(b)));
	rc = cli_graph_write(&g, &out, NULL, A.out);
out:
	hd_nodes_free(&out);
	cli_graph_close(&g);
	return rc;
}
