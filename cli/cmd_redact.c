/*
 * cmd_redact.c - heapdump redact: a dump with its secrets replaced
 * (string contents, and with options paths, names, class names and
 * generations), for sharing; --unmap turns the names of an analysis of
 * the redacted dump back through the map file.
 *
 * The library does the work (hd_redact, hd_redact_unmap: lib/redact.c);
 * this checks the options, and a store is redacted through the dump it
 * indexes (the output is a dump: index it again).
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"
#include "sidecar.h"

#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "redact"

struct redact_args {
	const char *output, *map, *unmap, *classes_except;
	int paths, names, times, all, strict, quiet;
};

static struct redact_args A;

static const struct cli_opt opts[] = {
	OPT_STRING('o', "output", "FILE", &A.output,
		   "write to FILE (atomically) instead of standard output"),
	OPT_STRING(0, "map", "MAP", &A.map,
		   "write the map of names to MAP (0600; an existing map's key "
		   "is reused)"),
	OPT_FLAG(0, "paths", &A.paths, "also replace file paths"),
	OPT_FLAG(0, "names", &A.names,
		 "also replace reference names, symbols and method names"),
	OPT_STRING(0, "classes-except", "LIST", &A.classes_except,
		   "also replace class names but Ruby's core ones and LIST "
		   "(comma-separated; '' for none)"),
	OPT_FLAG(0, "times", &A.times,
		 "also shift generations (and memprof times)"),
	OPT_FLAG(0, "all", &A.all,
		 "--paths --names --times --classes-except ''"),
	OPT_STRING(0, "unmap", "MAP", &A.unmap,
		   "turn the placeholders of FILE (or standard input) back"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter, no summary"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP -o OUT | --unmap MAP [FILE]",
	"Write DUMP with every string content replaced by a placeholder of\n"
	"the same length (duplicates stay duplicates), and with the options\n"
	"paths, names, class names and generations, so that it can be shared:\n"
	"every command gives the same numbers on it. --unmap turns the names\n"
	"of an analysis of the redacted dump back into the originals.\n"
	"DUMP may be gzipped, a store (its dump is redacted), or '-'.",
	opts
};

/* LIST split at its commas into a NULL-ended array (one allocation). */
static char **split_list(const char *list, size_t *n)
{
	size_t k = 1, i;
	const char *p;
	char **v, *s;

	for (p = list; *p; p++)
		k += *p == ',';
	v = malloc((k + 1) * sizeof(*v) + strlen(list) + 1);
	if (!v)
		return NULL;
	s = (char *)(v + k + 1);
	strcpy(s, list);
	for (i = 0, *n = 0; i < k; i++) {
		char *c = strchr(s, ',');

		if (c)
			*c = 0;
		if (*s)
			v[(*n)++] = s;
		s = c ? c + 1 : s + strlen(s);
	}
	v[*n] = NULL;
	return v;
}

static void report(const char *path, const hd_redact_stats *st,
		   const char *map)
{
	char a[32], b[32], c[32], d[32], e[32], f[32];

	cli_error("%s: %s records, %s string contents, %s hash keys, "
		  "%s paths, %s names, %s classes replaced", path,
		  cli_commas(st->records, a, sizeof(a)),
		  cli_commas(st->values + st->other, b, sizeof(b)),
		  cli_commas(st->keys, c, sizeof(c)),
		  cli_commas(st->paths, d, sizeof(d)),
		  cli_commas(st->names, e, sizeof(e)),
		  cli_commas(st->classes, f, sizeof(f)));
	if (st->salvaged)
		cli_error("%s: %s record(s) rebuilt from the fields that could "
			  "be salvaged", path,
			  cli_commas(st->salvaged, a, sizeof(a)));
	if (st->shared)
		cli_error("%s: %s short value(s) share a placeholder: more "
			  "distinct values of their length than placeholders",
			  path, cli_commas(st->shared, a, sizeof(a)));
	if (map)
		cli_error("%s: %s names in the map (keep it as secret as the "
			  "dump)", map, cli_commas(st->mapped, a, sizeof(a)));
}

static int unmap(int argc, char **argv, int first)
{
	hd_error err = { 0 };
	uint64_t n = 0;
	int rc;

	if (argc - first > 1)
		return cli_usage_error(&info, "--unmap reads one file");
	if (A.map || A.paths || A.names || A.times || A.all ||
	    A.classes_except)
		return cli_usage_error(&info,
				       "--unmap takes no redaction option");
	cli_input_register(A.unmap);
	if (argc - first)
		cli_input_register(argv[first]);
	if ((rc = cli_out_check(A.output)))
		return rc;
	rc = hd_redact_unmap(A.unmap, argc - first ? argv[first] : "-",
			     A.output ? A.output : "-", &n, &err);
	return rc ? cli_lib_error(&err) : EXIT_OK;
}

int cmd_redact(int argc, char **argv)
{
	hd_redact_options o = HD_REDACT_OPTIONS_INIT;
	hd_redact_stats st;
	struct cli_input in;
	hd_error err = { 0 };
	const char *path;
	char *source = NULL, **keep = NULL, *sc_out = NULL;
	struct cli_sidecar sc;
	size_t nkeep = 0;
	int has_sc = 0;
	int rc, first;

	memset(&A, 0, sizeof(A));
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (A.unmap)
		return unmap(argc, argv, first);
	if (argc - first != 1)
		return cli_usage_error(&info, argc - first ?
						      "one dump, please" :
						      "which dump?");
	path = argv[first];
	if (A.output && !*A.output)
		return cli_usage_error(&info, "--output needs a file name");
	if (A.map && !*A.map)
		return cli_usage_error(&info, "--map needs a file name");
	if (A.map && A.output && strcmp(A.map, A.output) == 0)
		return cli_usage_error(&info,
				       "--map and --output name one file");
	if (hd_store_is_store(path)) {
		/* a store keeps no string contents: its dump has them */
		if ((rc = cli_store_source(path, &source)))
			return rc;
		path = source;
	}
	if (A.all && !A.classes_except)
		A.classes_except = "";
	if (A.classes_except && !(keep = split_list(A.classes_except, &nkeep))) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
		goto out;
	}
	cli_input_init(&in, path, A.strict, A.quiet);
	/* the sidecar goes beside the output, redacted too */
	memset(&sc, 0, sizeof(sc));
	if (A.output && strcmp(path, "-") != 0 &&
	    (has_sc = cli_sidecar_read(path, &sc))) {
		if (!(sc_out = malloc(strlen(A.output) + sizeof(CLI_SIDECAR_SUFFIX)))) {
			cli_error("out of memory");
			rc = EXIT_FAIL;
			goto out;
		}
		strcpy(sc_out, A.output);
		strcat(sc_out, CLI_SIDECAR_SUFFIX);
		cli_input_register(sc.path);
	}
	if ((rc = cli_out_check(A.output)) || (rc = cli_out_check(A.map)) ||
	    (rc = cli_out_check(sc_out)))
		goto out;
	memset(&st, 0, sizeof(st));
	o.flags = (A.paths || A.all ? HD_REDACT_PATHS : 0) |
		  (A.names || A.all ? HD_REDACT_NAMES : 0) |
		  (A.times || A.all ? HD_REDACT_TIMES : 0) |
		  (A.classes_except ? HD_REDACT_CLASSES : 0);
	o.keep_classes = (const char *const *)keep;
	o.nkeep_classes = nkeep;
	o.map_path = A.map;
	o.sidecar_in = has_sc ? sc.path : NULL;
	o.sidecar_out = sc_out;
	o.read = cli_input_read_options(&in);
	o.progress = cli_progress;
	o.progress_payload = &in;
	o.stats = &st;
	rc = hd_redact(path, A.output ? A.output : "-", &o, &err);
	cli_input_done(&in);
	if (rc)
		rc = cli_lib_error(&err);
	else if (!A.quiet)
		report(path, &st, A.map);
out:
	if (has_sc)
		cli_sidecar_free(&sc);
	free(sc_out);
	free(keep);
	free(source);
	return rc;
}
