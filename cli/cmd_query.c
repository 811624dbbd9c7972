/*
 * cmd_query.c - heapdump query: SQL over a store (lib/sql.c's tables),
 * one query from the command line or an interactive shell.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"
#include "query.h"

#include <string.h>

#define COMMAND_NAME "query"

static struct query_args {
	const char *format;
	int strict, quiet;
} A;

static const struct cli_opt opts[] = {
	OPT_STRING('f', "format", "FMT",
		   &A.format, "text (an aligned table, default), json (one "
			      "object a line), tsv or csv"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] STORE|DUMP ['SQL']",
	"Run SQL over the heap: the tables objects, refs and roots, read\n"
	"straight from the store (a dump is indexed in memory first), and\n"
	"the functions path(), retained(), addr() and hexaddr(); see man 1\n"
	"heapdump-query. Without SQL, an interactive shell (.help).",
	opts
};

static int parse_format(enum query_format *out)
{
	static const char *const names[] = { "text", "json", "tsv", "csv" };
	int i;

	*out = QF_TEXT;
	if (!A.format)
		return 0;
	for (i = 0; i < 4; i++)
		if (strcmp(A.format, names[i]) == 0) {
			*out = (enum query_format)i;
			return 0;
		}
	return cli_usage_error(&info, "unknown format '%s': text, json, tsv "
				      "or csv", A.format);
}

int cmd_query(int argc, char **argv)
{
	struct cli_input in;
	enum query_format fmt;
	hd_store *s = NULL;
	sqlite3 *db = NULL;
	hd_error err = { 0 };
	int rc, first;

	memset(&A, 0, sizeof(A));
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if ((rc = parse_format(&fmt)))
		return rc;
	if (argc - first < 1)
		return cli_usage_error(&info, "which store or dump?");
	if (argc - first > 2)
		return cli_usage_error(&info, "one SQL argument (quote it)");
	cli_input_init(&in, argv[first], A.strict, A.quiet);
	if ((rc = cli_spool_stdin(&in)) || (rc = cli_open_store(&in, &s)))
		goto out;
	if ((rc = hd_sql_open(&db, s, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if ((rc = query_load_sqlite()))
		goto out;
	if (argc - first == 2)
		rc = query_run(db, argv[first + 1], fmt, stdout);
	else if (strcmp(argv[first], "-") == 0)
		rc = cli_usage_error(&info, "the dump is on standard input: "
					    "give the SQL as an argument");
	else
		rc = query_shell(db, fmt);
out:
	hd_sql_close(db);
	hd_store_close(s);
	return rc;
}
