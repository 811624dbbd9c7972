/*
 * cmd_to_dot.c - heapdump to-dot: a part of the heap (or all of it) as a
 * Graphviz DOT digraph.
 */
#include "cmd.h"
#include "common.h"
#include "draw.h"

#define COMMAND_NAME "to-dot"

static struct cli_draw_args A;

static const struct cli_opt opts[] = {
	CLI_DRAW_OPTS(&A),
	CLI_DRAW_MAX_NODES_OPT(&A),
	OPT_STRING('o', "output", "FILE", &A.output,
		   "write to FILE (atomically) instead of standard output"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE",
	"Write the selected objects (default: the whole heap) and the references\n"
	"between them as a Graphviz digraph (man 1 heapdump-to-dot).",
	opts
};

int cmd_to_dot(int argc, char **argv)
{
	return cli_draw_write_cmd(&info, &A, argc, argv, hd_export_write_dot);
}
