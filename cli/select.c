/*
 * select.c - the selection options, gathered in argv order and handed to
 * the library's selection grammar once the store is open.
 */
#include "select.h"
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
	return push(target, "from", arg);
}

int cli_select_nodes(const struct cli_select *sel, const hd_store *s,
		     int quiet, hd_nodes *out)
{
	hd_select *hs = NULL;
	hd_error err = { 0 };
	uint64_t missing = 0;
	unsigned i;
	int rc;

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
			goto out;
		}
	}
	if ((rc = hd_select_nodes(hs, s, out, &missing, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (missing && !quiet)
		cli_error("%llu selected address(es) name no object of the dump",
			  (unsigned long long)missing);
out:
	hd_select_free(hs);
	return rc;
}
