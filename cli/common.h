/*
 * common.h - what every subcommand shares: messages, problem reports
 * and progress (msg.c), inputs (input.c), output files and signals
 * (output.c), and what the commands print (text.c).
 */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include "heapdump.h"
#include "util/hd_util.h"

#include <stdint.h>
#include <stdio.h>

#define PROGRAM_NAME "heapdump"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* ---- msg.c: messages, problem reports, progress ---- */

/* "heapdump: msg" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a library error; returns EXIT_FAIL (EXIT_USAGE for EINVAL). */
int cli_lib_error(const hd_error *err);

/*
 * Input reporting shared by the commands that read dumps: how many
 * problems to print, and the progress meter. Set up with cli_input_init,
 * then pass cli_input_read_options() to the library.
 */
struct cli_input {
	const char *path;    /* as given; "-" is standard input */
	const char *name;    /* for messages: "(stdin)" for "-" */
	int strict;
	int quiet;
	int progress;        /* stderr is a terminal and not quiet */
	int indexing;        /* read to build a store: "indexing" after */
	int phase;           /* 1 once "indexing" is shown */
	uint64_t shown;      /* problems printed so far */
	uint64_t repaired, skipped;
	uint64_t first_line;
	double t0, last;
	unsigned jobs;       /* threads of a plain dump file (cli_jobs) */
};

/* input.c */
void cli_input_init(struct cli_input *in, const char *path, int strict,
		    int quiet);
/* msg.c: the library's problem and progress callbacks, for in */
hd_read_options cli_input_read_options(struct cli_input *in);
hd_index_options cli_input_index_options(struct cli_input *in);
/* Progress callback for the library (payload: struct cli_input):
 * "NAME: reading 1.2 MB / 3.4 MB (35%), ..."; for an input being
 * indexed, "NAME: indexing" once done == total. */
void cli_progress(uint64_t done, uint64_t total, void *payload);
/* Ends the progress line and prints the problem summary, if any. */
void cli_input_done(struct cli_input *in);

/* ---- input.c: inputs ---- */

/*
 * Copies standard input ("-") or a named pipe to a spool file (the
 * library's hd_spool, removed at exit or on a signal) and points
 * in->path at it (messages keep saying "(stdin)"), for commands that
 * read their input twice. Returns 0 or an exit code.
 */
int cli_spool_stdin(struct cli_input *in);

/*
 * Opens a dump or a store for a command: a store file is mapped, a dump
 * is read and indexed in memory. Returns 0 or an exit code.
 */
int cli_open_store(struct cli_input *in, hd_store **out);
/* The same through the dump's cached store (hd_store_open_cached with
 * flags, HD_CACHE_ bits); res says what was done. */
int cli_open_store_cached(struct cli_input *in, hd_store **out,
			  unsigned flags, hd_cache_result *res);

/* Streams the dump in into st (hd_stats_add), with progress and the
 * problem summary; cmd names the command in messages. Returns 0 or an
 * exit code. */
int cli_stats_feed(hd_stats *st, struct cli_input *in, const char *cmd);
struct cli_cmd_info;
/* The threads of -j N (given: N, else ULLONG_MAX), HEAPDUMP_JOBS, or the
 * online CPUs, into *out. Returns 0 or EXIT_USAGE (said). */
int cli_jobs(const struct cli_cmd_info *info, unsigned long long given,
	     unsigned *out);

/*
 * The dump a store was built from, for commands that output records byte
 * for byte: checked unchanged since indexing (else an error). *dump_out
 * is malloc'ed. Returns 0 or an exit code.
 */
int cli_store_source(const char *store_path, char **dump_out);
/* 0 if the store s (named name) was indexed from a file; else says
 * "'NAME' was indexed from standard input: its WHAT" and returns
 * EXIT_FAIL, for commands that read records back from the dump. */
int cli_store_on_disk(const hd_store *s, const char *name, const char *what);

/*
 * Inputs and outputs. Every file a command reads is registered (by
 * cli_input_init, cli_open_store for a store's source dump,
 * cli_store_source, and --from); an output that is one of them, or a
 * link to one, is refused with exit 2 ("'FILE' is the input: choose
 * another output").
 */
void cli_input_register(const char *path);
/* 0, or EXIT_USAGE after the message when path is a registered input. */
int cli_out_check(const char *path);

/* ---- output.c: outputs, signals ---- */

/* An output file through the library's hd_outfile (man 1 heapdump,
 * OUTPUTS): "-" or NULL is standard output; a device or FIFO is written
 * in place; a symbolic link is followed; a regular or new file is a
 * temporary file beside it, renamed over it on commit. It gets the
 * permission bits of the file like (the input it is derived from), or
 * 0600 when like is NULL or not a regular file. */
struct cli_out {
	FILE *f;
	hd_outfile *out;
};

/* 0, EXIT_USAGE (an input) or EXIT_FAIL, after the message. */
int cli_out_open(struct cli_out *o, const char *path, const char *like);

/* Flushes, syncs and renames; returns 0 or EXIT_FAIL (file removed). */
int cli_out_commit(struct cli_out *o);
/* Drops the temporary file. Safe after commit. */
void cli_out_abort(struct cli_out *o);

/* Installs the SIGINT, SIGTERM, SIGHUP and SIGPIPE handler that removes
 * the temporary files (hd_outfile_cleanup) and dies of the signal. */
void cli_signals_init(void);

/* msg.c: wall-clock seconds. */
double cli_now(void);

/* ---- text.c: what the commands print ---- */

/* "1.5 MB"-style size into buf. */
const char *cli_human_bytes(uint64_t n, char *buf, size_t size);
/* "1,234,567" into buf. */
const char *cli_commas(uint64_t n, char *buf, size_t size);

/* Writes s as a JSON string (with quotes) to f. */
void cli_json_string(FILE *f, const char *s, size_t n);

/*
 * Text for people (and TSV): every string that comes from a dump or a
 * store (class, file, method, root and key names) goes through these, so
 * that a class named "Foo\e[2J" cannot drive the terminal and a tab or
 * newline cannot break a TSV row. \t \n \r, other C0 controls and DEL
 * as \u00XX, C1 controls (UTF-8 U+0080..U+009F) as \u0080..\u009f,
 * bidi embeddings, overrides and isolates (U+202A..U+202E,
 * U+2066..U+2069) as \u202a..\u2069,
 * bytes that are not valid UTF-8 as \xHH; everything else (valid UTF-8,
 * backslashes included) as it is. JSON output uses cli_json_string.
 */
void cli_text_string(FILE *f, const char *s, size_t n);
/* The same into buf (NUL-terminated, cut before an escape or a character
 * that does not fit); returns buf. Async-signal-safe (no stdio, no
 * allocation): output.c's SIGBUS handler names a file with it. */
const char *cli_text(char *buf, size_t size, const char *s, size_t n);

/* What a text output appends to a memsize sum that stopped at 2^64-1
 * (the library's sums saturate there), or "" when sat is 0. */
#define CLI_SATURATED ", saturated: the memsizes add up to 2^64-1 bytes " \
		      "or more, every sum stops there"
#define cli_saturated(sat) ((sat) ? CLI_SATURATED : "")
/* "file:line" of a site, escaped, and " in method" when with_method. */
void cli_site_text(FILE *f, const hd_site *site, int with_method);

/* A node's class for people, escaped (cli_text): a class or module by its
 * own name, anything else by its class's (hd_store_class_name). */
void cli_node_class(const hd_store *s, hd_node_id id, char *buf,
		    size_t size);
/* hd_store_class_name, escaped for text (cli_text). */
void cli_class_name(const hd_store *s, hd_node_id id, char *buf,
		    size_t size);
/* cli_node_class unescaped, for JSON. */
void cli_node_class_raw(const hd_store *s, hd_node_id id, char *buf,
			size_t size);

/* {"address","type","class","memsize"[,"file","line"[,"method"]]} of a
 * node, without a newline. */
void cli_node_json(FILE *f, const hd_store *s, hd_node_id v);
/* The same for one hop of a path: with the name of the reference v ->
 * next ("name", and "inferred":true) when it has one. */
void cli_hop_json(FILE *f, const hd_store *s, hd_node_id v, hd_node_id next);
/* A reference name as JSON members: ,"name":NAME (and ,"inferred":true
 * with HD_NAME_INFERRED in flags); nothing when name is NULL. */
void cli_name_json(FILE *f, const char *name, size_t len, unsigned flags);

/* One hop of a path, escaped: "NodeName name" (hd_store_hop_text; to
 * HD_NODE_NONE: the node name alone). */
void cli_hop_text(FILE *f, const hd_store *s, hd_node_id from,
		  hd_node_id to);
/* A path on one line: its hops joined by " -> ", the last node alone,
 * each run of repeated hops (hd_path_fold) folded: "(Proc -> IMEMO/env
 * prev ->) x1000 Proc". */
void cli_hops_text(FILE *f, const hd_store *s, const hd_node_id *nodes,
		   size_t n);
/* The note under a path hd_reach's rule chose over the shortest
 * (hd_path_note), on a line of its own after indent, in parentheses;
 * nothing when the rule changed nothing. */
void cli_path_note(FILE *f, const hd_root_path *p, const char *indent);
/* The same as a JSON member: ,"passed_over":["machine_context",
 * "vm_cache"] (what the shortest path went through); nothing when the
 * rule changed nothing. */
void cli_path_rule_json(FILE *f, const hd_root_path *p);
/* A path written as text (its hops joined by " -> ": a cluster's
 * shape), escaped, folded as cli_hops_text folds (hd_path_text_fold). */
void cli_text_path(FILE *f, const char *text, size_t len);
/* The same, each piece written by put (which escapes it: cli_text_string,
 * html_text). */
void cli_fold_text(FILE *f, const char *text, size_t len,
		   void (*put)(FILE *, const char *, size_t));
/* A path one node a line: line(s, node, its index in nodes, payload)
 * prints a node (its indent and newline included); of each run of repeated hops
 * (hd_path_fold) only the first repetition is printed, the others in
 * one line, with the run's whole count: "INDENT... (Proc -> IMEMO/env
 * ->) x1000: 1,998 more objects, memsize 167,832". */
void cli_path_lines(FILE *f, const hd_store *s, const hd_node_id *nodes,
		    size_t n, const char *indent,
		    void (*line)(const hd_store *, hd_node_id, size_t, void *),
		    void *payload);
/* 1 if a hop of the path has a reference name (the root's included when
 * root is not UINT32_MAX), else 0. */
int cli_hops_named(const hd_store *s, uint32_t root, const hd_node_id *nodes,
		   size_t n);
/* A root category's name, escaped, then the name under which it holds
 * first ("global_tbl $CACHE") when it has one. */
void cli_root_text(FILE *f, const hd_store *s, uint32_t root,
		   hd_node_id first);

/* 1 if the type of v says more than its class name cls ("(DATA)" after
 * Thread), 0 when it repeats it (String, (hidden ARRAY), IMEMO/...). */
int cli_type_adds(const hd_store *s, hd_node_id v, const char *cls);

#endif
