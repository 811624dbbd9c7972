/*
 * opt.h - table-driven option parsing over getopt_long(3). One table per
 * command drives both the parser and the help text, so they cannot drift.
 */
#ifndef CLI_OPT_H
#define CLI_OPT_H

#include "heapdump.h"

#include <stdio.h>

enum cli_opt_type {
	CLI_OPT_END = 0,
	CLI_OPT_FLAG,     /* int *target = 1 */
	CLI_OPT_STRING,   /* const char **target = optarg */
	CLI_OPT_UINT,     /* unsigned long long *target */
	CLI_OPT_CALLBACK  /* cb(optarg, target) returns 0 or an error msg */
};

struct cli_opt {
	enum cli_opt_type type;
	int shortname;           /* 0 for none */
	const char *longname;
	const char *argname;     /* NULL for flags */
	const char *help;
	void *target;
	const char *(*cb)(const char *arg, void *target);
};

#define OPT_FLAG(s, l, t, h) { CLI_OPT_FLAG, s, l, NULL, h, t, NULL }
#define OPT_STRING(s, l, a, t, h) { CLI_OPT_STRING, s, l, a, h, t, NULL }
#define OPT_UINT(s, l, a, t, h) { CLI_OPT_UINT, s, l, a, h, t, NULL }
#define OPT_CALLBACK(s, l, a, t, cb, h) { CLI_OPT_CALLBACK, s, l, a, h, t, cb }
#define OPT_END() { CLI_OPT_END, 0, NULL, NULL, NULL, NULL, NULL }

/* A command's static description: for help and error messages. */
struct cli_cmd_info {
	const char *name;        /* "stats" */
	const char *usage;       /* "DUMP|STORE [options]" */
	const char *summary;     /* one line */
	const struct cli_opt *opts;
};

/*
 * Parses argv (argv[0] is the command name). Returns 0 and sets *first to
 * the index of the first operand; prints help to stdout and returns -1 for
 * --help (exit 0); prints a usage error and returns 2 otherwise.
 */
int cli_parse(const struct cli_cmd_info *info, int argc, char **argv,
	      int *first);

/* Prints the command's help from its table. */
void cli_help(FILE *f, const struct cli_cmd_info *info);

/* "heapdump CMD: msg" plus a hint to --help, on stderr; returns 2. */
int cli_usage_error(const struct cli_cmd_info *info, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The --format names, in this order; a command accepts the first n. */
enum cli_format { CLI_TEXT, CLI_JSON, CLI_TSV, CLI_NDJSON };

/* Sets *fmt to the format named name (NULL: text) among the first n of
 * enum cli_format: 0, or the usage error (2) for any other name. */
int cli_parse_format(const struct cli_cmd_info *info, const char *name,
		     int n, int *fmt);

/* Parses a --by value ("location,class") into one more grouping of o.
 * Returns 0 or EXIT_USAGE after a message. */
int cli_parse_keys(const struct cli_cmd_info *info, const char *s,
		   hd_stats_options *o);

#endif
