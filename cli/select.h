/*
 * select.h - the selection options every graph command takes, one
 * grammar (man 7 heapdump-select): --address, --class, --type, --file,
 * --location, --generation, --from. Put CLI_SELECT_OPTS(&sel) in the
 * command's option table; the options fill a struct cli_select.
 */
#ifndef CLI_SELECT_H
#define CLI_SELECT_H

#include "heapdump.h"
#include "opt.h"

#define CLI_SELECT_MAX 256

struct cli_select {
	const char *key[CLI_SELECT_MAX];
	const char *value[CLI_SELECT_MAX];
	unsigned n;
};

const char *cli_select_address(const char *arg, void *target);
const char *cli_select_class(const char *arg, void *target);
const char *cli_select_type(const char *arg, void *target);
const char *cli_select_file(const char *arg, void *target);
const char *cli_select_location(const char *arg, void *target);
const char *cli_select_generation(const char *arg, void *target);
const char *cli_select_from(const char *arg, void *target);

#define CLI_SELECT_OPTS(sel)                                                  \
	OPT_CALLBACK(0, "address", "ADDR", sel, cli_select_address,           \
		     "select the object at ADDR (repeatable)"),               \
	OPT_CALLBACK(0, "class", "NAME|/RE/", sel, cli_select_class,          \
		     "select instances of a class, by name or regex"),        \
	OPT_CALLBACK(0, "type", "TYPE", sel, cli_select_type,                 \
		     "select objects of a type (STRING, IMEMO...)"),          \
	OPT_CALLBACK(0, "file", "FILE", sel, cli_select_file,                 \
		     "select objects allocated in FILE"),                     \
	OPT_CALLBACK(0, "location", "FILE:LINE", sel, cli_select_location,    \
		     "select objects allocated at FILE:LINE"),                \
	OPT_CALLBACK(0, "generation", "N..M", sel, cli_select_generation,     \
		     "select objects allocated in generations N to M"),       \
	OPT_CALLBACK(0, "from", "NDJSON", sel, cli_select_from,               \
		     "select the objects of another command's output")

/*
 * The nodes of s selected by sel, as a set. Prints errors (unknown key
 * values, unreadable --from) and, unless quiet, how many addresses
 * named no object. Returns 0 or an exit code.
 */
int cli_select_nodes(const struct cli_select *sel, const hd_store *s,
		     int quiet, hd_nodes *out);

#endif
