/*
 * cmd_replace_class.c - heapdump replace-class: the dump rewritten with
 * class names instead of class pointers (the pointer moves to
 * "class_address"), as valid NDJSON.
 *
 * The library does the work, both passes and the atomic output; this
 * checks the options and reports what was left unresolved.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"

#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "replace-class"

struct replace_args {
	const char *output;
	int in_place, add_ref, strict, quiet;
};

static struct replace_args A;

static const struct cli_opt opts[] = {
	OPT_STRING('o', "output", "FILE", &A.output,
		   "write to FILE (atomically) instead of standard output"),
	OPT_FLAG('i', "in-place", &A.in_place,
		 "replace DUMP itself, once the rewrite has succeeded"),
	OPT_FLAG(0, "add-ref", &A.add_ref,
		 "also add the class to the references of each object"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet,
		 "no progress meter, no count of unresolved classes"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP",
	"Rewrite a dump with the name of each object's class in \"class\" and\n"
	"the class pointer in \"class_address\". Invalid lines come out as\n"
	"valid JSON. DUMP may be gzipped, or '-' for standard input.",
	opts
};

static void report(const char *path, const hd_replace_stats *st)
{
	char a[32];

	if (st->unresolved)
		cli_error("%s: %s class pointer(s) left as they were: no class "
			  "of the dump at that address",
			  path, cli_commas(st->unresolved, a, sizeof(a)));
	if (st->salvaged)
		cli_error("%s: %s record(s) rebuilt from the fields that could "
			  "be salvaged",
			  path, cli_commas(st->salvaged, a, sizeof(a)));
}

int cmd_replace_class(int argc, char **argv)
{
	hd_replace_options o = HD_REPLACE_OPTIONS_INIT;
	hd_replace_stats st;
	struct cli_input in;
	hd_error err = { 0 };
	const char *path;
	char *source = NULL;
	int rc, first;

	memset(&A, 0, sizeof(A));
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (argc - first != 1)
		return cli_usage_error(&info, argc - first ?
						      "one dump, please" :
						      "which dump?");
	path = argv[first];
	if (A.in_place && A.output)
		return cli_usage_error(&info, "choose --output or --in-place");
	if (A.in_place && strcmp(path, "-") == 0)
		return cli_usage_error(&info,
				       "cannot rewrite standard input in place");
	if (A.output && !*A.output)
		return cli_usage_error(&info, "--output needs a file name");
	if (hd_store_is_store(path)) {
		/* a store's records are the lines of the dump it indexes */
		if (A.in_place)
			return cli_usage_error(&info,
					       "a store cannot be rewritten in place");
		if ((rc = cli_store_source(path, &source)))
			return rc;
		path = source;
	}

	cli_input_init(&in, path, A.strict, A.quiet);
	if ((rc = cli_out_check(A.output)))
		goto out;
	memset(&st, 0, sizeof(st));
	o.flags = A.add_ref ? HD_REPLACE_ADD_REF : 0;
	o.read = cli_input_read_options(&in);
	o.progress = cli_progress;
	o.progress_payload = &in;
	o.stats = &st;
	rc = hd_replace_class(path, A.in_place ? NULL :
				    A.output ? A.output : "-",
			      &o, &err);
	cli_input_done(&in);
	if (rc)
		rc = cli_lib_error(&err);
	else if (!A.quiet)
		report(path, &st);
out:
	free(source);
	return rc;
}
