/*
 * select_opts.c - the selection options, gathered in argv order, handed to
 * the library's selection grammar before the input is read, and applied
 * once the store is open. Commands add CLI_SELECT_OPTS to their option
 * table.
 */
#include "select_opts.h"
#include "common.h"

#include <string.h>

static const char *push(void *target, const char *key, const char *arg)
{
	struct cli_select *s = target;

	if (s->n == CLI_SELECT_MAX)
		return "too many selection options";
	s->key[s->n] = key;
	s->value[s->n++] = arg;
	return NULL;
}

const char *cli_select_address(const char *arg, void *target)
{
	return push(target, "address", arg);
}

const char *cli_select_class(const char *arg, void *target)
{
	return push(target, "class", arg);
}

const char *cli_select_type(const char *arg, void *target)
{
	return push(target, "type", arg);
}

const char *cli_select_file(const char *arg, void *target)
{
	return push(target, "file", arg);
}

const char *cli_select_location(const char *arg, void *target)
{
	return push(target, "location", arg);
}

const char *cli_select_generation(const char *arg, void *target)
{
	return push(target, "generation", arg);
}

const char *cli_select_from(const char *arg, void *target)
{
	cli_input_register(arg); /* no output may replace it */
	return push(target, "from", arg);
}

const char *cli_select_name(const char *arg, void *target)
{
	return push(target, "name", arg);
}

const char *cli_select_via(const char *arg, void *target)
{
	return push(target, "via", arg);
}

/* The lines of a --from file that gave no address, said once. */
static void report_skipped(const hd_select *hs, const char *path)
{
	uint64_t first, n = hd_select_from_skipped(hs, &first);
	char a[32], b[32];

	if (n)
		cli_error("%s: %s line%s without an object address skipped "
			  "(first at line %s)",
			  strcmp(path, "-") ? path : "(stdin)",
			  cli_commas(n, a, sizeof(a)), n == 1 ? "" : "s",
			  cli_commas(first, b, sizeof(b)));
}

int cli_select_compile(struct cli_select *sel)
{
	hd_select *hs = NULL;
	hd_error err = { 0 };
	unsigned i;
	int rc;

	if (sel->compiled)
		return 0;
	if ((rc = hd_select_new(&hs, &err)))
		return cli_lib_error(&err);
	for (i = 0; i < sel->n; i++) {
		if ((rc = hd_select_add(hs, sel->key[i], sel->value[i], &err))) {
			/* a bad value is a usage error, an unreadable file not */
			rc = err.code == HD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
			/* a hostile value may be huge: its start says which */
			cli_error("--%s %.*s%s: %s", sel->key[i], 120,
				  sel->value[i],
				  strlen(sel->value[i]) > 120 ? "..." : "",
				  err.msg);
			hd_select_free(hs);
			return rc;
		}
		if (strcmp(sel->key[i], "from") == 0)
			report_skipped(hs, sel->value[i]);
	}
	sel->compiled = hs;
	return 0;
}

int cli_select_nodes(struct cli_select *sel, const hd_store *s,
		     const char *name, int quiet, hd_nodes *out)
{
	hd_error err = { 0 };
	uint64_t missing = 0;
	char why[1024], text[4096], a[32];
	int rc;

	if ((rc = cli_select_compile(sel)))
		return rc;
	rc = hd_select_nodes(out, &missing, sel->compiled, s, &err);
	if (!rc && !out->n) {
		rc = hd_select_explain(why, sizeof(why), sel->compiled, s,
				       &err);
		cli_select_free(sel);
		if (rc)
			return cli_lib_error(&err);
		cli_error("%s: the selection picks no object: %s",
			  strcmp(name, "-") ? name : "(stdin)",
			  cli_text(text, sizeof(text), why, strlen(why)));
		return EXIT_FAIL;
	}
	cli_select_free(sel);
	if (rc)
		return cli_lib_error(&err);
	if (missing && !quiet)
		cli_error("%s selected address(es) name no object of the dump",
			  cli_commas(missing, a, sizeof(a)));
	return 0;
}

void cli_select_free(struct cli_select *sel)
{
	hd_select_free(sel->compiled);
	sel->compiled = NULL;
}
