/*
 * graphq.h - what the graph query commands (roots-of, path, subgraph-of)
 * share: the input (a dump, a store or "-", spooled so that its records
 * can be read again), the selection, and the NDJSON output of a node set.
 */
#ifndef CLI_GRAPHQ_H
#define CLI_GRAPHQ_H

#include "common.h"
#include "opt.h"
#include "select_opts.h"

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
 * an exit code. With paths (a search on g's store), each selected
 * object's record also carries its "root_path" (hd_roots_of_write).
 */
int cli_graph_write(struct cli_graph *g, const hd_nodes *set,
		    const hd_reach *paths, const char *out_path);

/*
 * Calls one(g, id, err, payload) for the first max selected objects (0:
 * all), in selection order. one returns 0 when it printed the object,
 * HD_ENOTFOUND (with err filled) when no root reaches it, anything else
 * on failure. The first few unreached objects are reported on stderr,
 * then "N of M object(s) UNREACHED"; unless quiet, how many objects max
 * left out. Returns 0 when at least one object was printed, EXIT_FAIL
 * when none was, or the exit code of a failure.
 */
int cli_graph_each(struct cli_graph *g, unsigned long long max, int quiet,
		   const char *unreached_msg,
		   int (*one)(struct cli_graph *g, hd_node_id id,
			      hd_error *err, void *payload),
		   void *payload);

/* "heapdump: PREFIX 0x1, 0x2, ... and N more" on stderr: the first few
 * addresses of set. */
void cli_graph_list(const struct cli_graph *g, const char *prefix,
		    const hd_nodes *set);

#endif
