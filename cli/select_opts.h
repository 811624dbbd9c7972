/*
 * select_opts.h - the selection options every graph command takes, one
 * grammar (man 7 heapdump-select): --address, --class, --name, --type,
 * --file, --location, --generation, --from. Put CLI_SELECT_OPTS(&sel) in the
 * command's option table; the options fill a struct cli_select.
 */
#ifndef CLI_SELECT_OPTS_H
#define CLI_SELECT_OPTS_H

#include "heapdump.h"
#include "opt.h"

#define CLI_SELECT_MAX 256

struct cli_select {
	const char *key[CLI_SELECT_MAX];
	const char *value[CLI_SELECT_MAX];
	unsigned n;
	hd_select *compiled; /* by cli_select_compile, until used */
};

const char *cli_select_address(const char *arg, void *target);
const char *cli_select_class(const char *arg, void *target);
const char *cli_select_type(const char *arg, void *target);
const char *cli_select_file(const char *arg, void *target);
const char *cli_select_location(const char *arg, void *target);
const char *cli_select_generation(const char *arg, void *target);
const char *cli_select_from(const char *arg, void *target);
const char *cli_select_name(const char *arg, void *target);
const char *cli_select_via(const char *arg, void *target);

#define CLI_SELECT_OPTS(sel)                                                  \
	OPT_CALLBACK(0, "address", "ADDR", sel, cli_select_address,           \
		     "select the object at ADDR (repeatable)"),               \
	OPT_CALLBACK(0, "class", "NAME|/RE/", sel, cli_select_class,          \
		     "select instances of a class, by name or regex"),        \
	OPT_CALLBACK(0, "name", "NAME|/RE/", sel, cli_select_name,            \
		     "select a class or module itself, by name or regex"),    \
	OPT_CALLBACK(0, "type", "TYPE", sel, cli_select_type,                 \
		     "select objects of a type (STRING, IMEMO...)"),          \
	OPT_CALLBACK(0, "file", "FILE", sel, cli_select_file,                 \
		     "select objects allocated in FILE"),                     \
	OPT_CALLBACK(0, "location", "FILE:LINE", sel, cli_select_location,    \
		     "select objects allocated at FILE:LINE"),                \
	OPT_CALLBACK(0, "generation", "N..M", sel, cli_select_generation,     \
		     "select objects allocated in generations N to M"),       \
	OPT_CALLBACK(0, "from", "NDJSON", sel, cli_select_from,               \
		     "select the objects of another command's output"),       \
	OPT_CALLBACK(0, "via", "NAME|/RE/", sel, cli_select_via,              \
		     "select objects referenced through a reference so named "\
		     "(@cache, ::CACHE)")

/*
 * Checks the selection and compiles it (regexes, --from files), before
 * the input is read: a bad value is a usage error at once, not after
 * minutes of parsing a large dump. Prints the error. Returns 0 or an
 * exit code (2 for a bad value, 1 for an unreadable --from).
 */
int cli_select_compile(struct cli_select *sel);

/*
 * The nodes of s selected by sel (compiled first, if it was not), as a
 * set; the compiled selection is freed. Prints errors and, unless
 * quiet, how many addresses named no object. A selection that picks no
 * object fails: "NAME: the selection picks no object: why" (name: the
 * input's). Returns 0 or an exit code (1 for an empty selection).
 */
int cli_select_nodes(struct cli_select *sel, const hd_store *s,
		     const char *name, int quiet, hd_nodes *out);

/* Frees what cli_select_compile made, if cli_select_nodes did not. */
void cli_select_free(struct cli_select *sel);

#endif
