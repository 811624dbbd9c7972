/*
 * main.c - the heapdump program: dispatch through the command table and
 * the final check that standard output was really written.
 */
#include "cmd.h"
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct cli_command cli_commands[] = {
	{ "stats", cmd_stats, "count objects and memory by type, class, site..." },
	{ "index", cmd_index, "build the graph store of a dump" },
	{ "replace-class", cmd_replace_class,
	  "rewrite a dump with class names instead of class addresses" },
	{ "diff", cmd_diff,
	  "objects new in a dump since another, or still alive in a third" },
	{ "interface-with", cmd_interface_with,
	  "the old objects holding new ones, and what each new one keeps alive" },
	{ "roots-of", cmd_roots_of,
	  "what keeps objects alive: shortest paths from the GC roots" },
	{ "path", cmd_path, "one retention path from a GC root to an object" },
	{ "query", cmd_query, "SQL over the heap: objects, refs, roots" },
	{ "top", cmd_top,
	  "the objects (or classes) that retain the most memory" },
	{ "dominators", cmd_dominators,
	  "the chain of objects that alone keep an object alive" },
	{ "leaks", cmd_leaks,
	  "the leak workflow in one report: diff, border, suspects, paths" },
	{ "report", cmd_report,
	  "one self-contained HTML page: the leak report, or one dump's overview" },
	{ "trend", cmd_trend,
	  "how each class or site grows over many dumps of one process" },
	{ "strings", cmd_strings,
	  "the most repeated string values and the memory their copies waste" },
	{ "waste", cmd_waste,
	  "empty collections, spare capacity, duplicates: bytes and sites" },
	{ "subgraph-of", cmd_subgraph_of,
	  "the objects reachable from a selection" },
	{ "to-gml", cmd_to_gml, "write objects and references as GML (Gephi)" },
	{ "to-dot", cmd_to_dot,
	  "write objects and references as a Graphviz digraph" },
	{ "render", cmd_render,
	  "draw objects and references as SVG, PNG or PDF" },
	{ "dump", cmd_dump,
	  "ask a running Ruby process (heapdump gem) for a heap dump" },
	{ "serve", cmd_serve,
	  "browse a heap in a local web page: groups, objects, paths, leaks" },
	{ "console", cmd_console,
	  "irb with the dumps loaded: the gem's HeapDump::Heap API" },
	{ "malloc", cmd_malloc,
	  "native memory by Ruby line: run under the malloc tracker, report" },
	{ "memory", cmd_memory,
	  "where the process's RSS goes: Ruby slots, malloc, fragmentation..." },
	{ "redact", cmd_redact,
	  "a dump with its string contents (and names) replaced, to share" },
	{ "mcp", cmd_mcp,
	  "a Model Context Protocol server: an assistant asks the heap" },
	{ "flame", cmd_flame,
	  "the heap as a flame graph: retention paths, sites, stacks" },
	{ "help", cmd_help, "list commands, or show a command's help" },
	{ "version", cmd_version, "print the version" },
	{ NULL, NULL, NULL }
};

/* The command meant by a mistyped name: the one it is a prefix of, or
 * the nearest within two edits; NULL when none is close. */
static const char *nearest_command(const char *name)
{
	const struct cli_command *c, *best = NULL;
	size_t n = strlen(name);
	unsigned d, bd = 3;
	int prefixed = 0;

	for (c = cli_commands; c->name; c++)
		if (n >= 3 && strncmp(c->name, name, n) == 0 && prefixed++ == 0)
			best = c;
	if (prefixed == 1)
		return best->name;
	best = NULL;
	for (c = cli_commands; c->name; c++) {
		d = hd_name_distance(name, n, c->name, strlen(c->name), 2);
		if (d < bd) {
			bd = d;
			best = c;
		}
	}
	return best ? best->name : NULL;
}

/* "unknown command 'x'", with the command meant when one is close. */
static int unknown_command(const char *name)
{
	const char *near = nearest_command(name);

	if (near)
		cli_error("unknown command '%s'; did you mean '%s'?", name,
			  near);
	else
		cli_error("unknown command '%s'; see '%s --help'", name,
			  PROGRAM_NAME);
	return EXIT_USAGE;
}

static void usage(FILE *f)
{
	const struct cli_command *c;

	fprintf(f, "usage: %s COMMAND [options] [args]\n\ncommands:\n",
		PROGRAM_NAME);
	for (c = cli_commands; c->name; c++)
		fprintf(f, "  %-16s %s\n", c->name, c->summary);
	fprintf(f, "\nEvery command reads a dump (NDJSON, gzip or not, '-' for "
		   "stdin) or a store.\nSee '%s COMMAND --help' and "
		   "man %s.\n", PROGRAM_NAME, PROGRAM_NAME);
}

int cmd_help(int argc, char **argv)
{
	const struct cli_command *c;
	char *sub[3];

	if (argc < 2) {
		usage(stdout);
		return EXIT_OK;
	}
	for (c = cli_commands; c->name; c++) {
		if (strcmp(c->name, argv[1]) == 0 && c->fn != cmd_help) {
			sub[0] = argv[1];
			sub[1] = (char *)"--help";
			sub[2] = NULL;
			return c->fn(2, sub);
		}
	}
	return unknown_command(argv[1]);
}

int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("%s %s\n", PROGRAM_NAME, hd_version());
	return EXIT_OK;
}

/* A full disk must not pass for success: check stdout before exit 0. */
static int close_stdout(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			cli_error("cannot write standard output: %s",
				  strerror(errno));
		return rc ? rc : EXIT_FAIL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	const struct cli_command *c;

	cli_signals_init();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return close_stdout(EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0)
		return close_stdout(cmd_version(argc - 1, argv + 1));
	for (c = cli_commands; c->name; c++)
		if (strcmp(c->name, argv[1]) == 0)
			return close_stdout(c->fn(argc - 1, argv + 1));
	return unknown_command(argv[1]);
}
