/*
 * graphq.h - what the graph query commands (roots-of, path, subgraph-of)
 * share: the input (a dump, a store or "-", spooled so that its records
 * can be read again), the selection, and the NDJSON output of a node set.
 */
#ifndef CLI_GRAPHQ_H
#define CLI_GRAPHQ_H

#include "common.h"
#include "opt.h"
#include "select.h"

struct cli_graph {
	struct cli_input in;
	hd_store *s;
	hd_nodes sel;        /* the selected nodes */
};

/*
 * Adds the operands after the input (argv[first + 1..]) to sel as
 * addresses, refuses an empty selection (usage error), opens the input
 * argv[first] and evaluates the selection; a selection that picks no
 * object is an error. Returns 0 or an exit code; on failure g is closed.
 */
int cli_graph_open(struct cli_graph *g, const struct cli_cmd_info *info,
		   struct cli_select *sel, int argc, char **argv, int first,
		   int strict, int quiet);

void cli_graph_close(struct cli_graph *g);

/*
 * Writes the ROOT records then the records of set, byte for byte from
 * the dump, with their references restricted to set, to out_path ("-"
 * or NULL: standard output; a file is written atomically). Returns 0 or
 * an exit code.
 */
int cli_graph_write(struct cli_graph *g, const hd_nodes *set,
		    const char *out_path);

/* "heapdump: PREFIX 0x1, 0x2, ... and N more" on stderr: the first few
 * addresses of set. */
void cli_graph_list(const struct cli_graph *g, const char *prefix,
		    const hd_nodes *set);

#endif
