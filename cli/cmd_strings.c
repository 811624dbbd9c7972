/*
 * cmd_strings.c - heapdump strings: the most repeated string values,
 * with what their copies cost and waste, per value, per allocation site
 * or per holder (the library's hd_strings_build).
 */
#include "cmd.h"
#include "common.h"
#include "identity.h"
#include "opt.h"
#include "select_opts.h"

#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "strings"
/* Text output shows this many bytes of a value, then "...". */
#define TEXT_VALUE_MAX 80
/* --top not given: 20 rows, every row in ndjson. */
#define TOP_UNSET ((unsigned long long)-1)

static struct strings_args {
	const char *format, *by;
	unsigned long long top, min_count;
	int strict, quiet, all;
	struct cli_select sel;
} A;

static const struct cli_opt opts[] = {
	OPT_UINT('n', "top", "N", &A.top,
		 "rows (default 20, 0: all; ndjson: all)"),
	OPT_UINT(0, "min-count", "N", &A.min_count,
		 "values with N copies or more (default 2)"),
	OPT_STRING('b', "by", "KEY", &A.by,
		   "value (default), site (value and allocation site) or "
		   "holder (value and the class of what references it)"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json (one document), tsv or ndjson (a "
		   "line a row with the dump's identity: fleet summaries)"),
	OPT_FLAG('a', "all", &A.all,
		 "keep the allocation tracer and dump_all's own objects"),
	CLI_SELECT_OPTS(&A.sel),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE",
	"The most repeated string values: copies, memsize and the bytes\n"
	"wasted (every copy but the first in dump order), by value, by value\n"
	"and allocation site, or by value and holder. Values come from the\n"
	"dump's \"value\" field, which dump_all writes only for 7-bit ASCII\n"
	"content: other strings, and shared ones, are counted apart. A value\n"
	"shorter than its bytesize is a prefix, marked so, and never grouped\n"
	"with a string of another bytesize. The selection options narrow the\n"
	"strings considered (man 7 heapdump-select).",
	opts
};

enum fmt { F_TEXT, F_JSON, F_TSV, F_NDJSON };

static const char *const by_names[] = { "value", "site", "holder" };

/* A value for people: quoted, quote and backslash escaped, controls by
 * cli_text_string, cut after max bytes (0: never). */
static void text_value(const char *v, size_t n, size_t max)
{
	size_t i, from = 0, end = max && n > max ? max : n;

	putchar('"');
	for (i = 0; i < end; i++) {
		if (v[i] != '"' && v[i] != '\\')
			continue;
		cli_text_string(stdout, v + from, i - from);
		putchar('\\');
		putchar(v[i]);
		from = i + 1;
	}
	cli_text_string(stdout, v + from, end - from);
	fputs(end < n ? "...\"" : "\"", stdout);
}

static void text_annotations(const hd_strings_row *r)
{
	char a[32];

	if (!r->complete)
		printf(" (prefix only: %s bytes)",
		       cli_commas(r->bytesize, a, sizeof(a)));
	else if (r->value_len > TEXT_VALUE_MAX)
		printf(" (%s bytes)", cli_commas(r->bytesize, a, sizeof(a)));
	if (!*r->encoding)
		fputs(" (binary)", stdout);
	else if (strcmp(r->encoding, "UTF-8") != 0) {
		fputs(" (", stdout);
		cli_text_string(stdout, r->encoding, strlen(r->encoding));
		putchar(')');
	}
}

static void key_text(const hd_store *s, const hd_strings_row *r, int by)
{
	hd_site site;

	if (by == HD_STRINGS_BY_SITE) {
		if (r->node != HD_NODE_NONE &&
		    hd_store_site(&site, s, r->node) == 0 && site.file)
			cli_site_text(stdout, &site, 0);
		else
			fputs("(no site)", stdout);
	} else if (by == HD_STRINGS_BY_HOLDER) {
		if (r->holder)
			cli_text_string(stdout, r->holder, strlen(r->holder));
		else
			fputs("(no holder)", stdout);
	}
}

static void key_json(const hd_store *s, const hd_strings_row *r, int by)
{
	hd_site site;

	if (by == HD_STRINGS_BY_SITE) {
		fputs(",\"site\":", stdout);
		if (r->node != HD_NODE_NONE &&
		    hd_store_site(&site, s, r->node) == 0 && site.file) {
			fputs("{\"file\":", stdout);
			cli_json_string(stdout, site.file, site.file_len);
			printf(",\"line\":%llu}",
			       (unsigned long long)site.line);
		} else {
			fputs("null", stdout);
		}
	} else if (by == HD_STRINGS_BY_HOLDER) {
		fputs(",\"holder\":", stdout);
		if (r->holder)
			cli_json_string(stdout, r->holder, strlen(r->holder));
		else
			fputs("null", stdout);
	}
}

/* A row's members, without braces: the json and ndjson formats. */
static void row_json_members(const hd_store *s, const hd_strings_row *r,
			     int by)
{
	fputs("\"value\":", stdout);
	cli_json_string(stdout, r->value, r->value_len);
	printf(",\"bytesize\":%llu,\"encoding\":",
	       (unsigned long long)r->bytesize);
	cli_json_string(stdout, r->encoding, strlen(r->encoding));
	printf(",\"complete\":%s,\"count\":%llu,\"group_count\":%llu,"
	       "\"memsize\":%llu,\"wasted_memsize\":%llu,"
	       "\"wasted_bytesize\":%llu,\"frozen\":%llu,"
	       "\"fstring\":%llu",
	       r->complete ? "true" : "false",
	       (unsigned long long)r->count,
	       (unsigned long long)r->group_count,
	       (unsigned long long)r->memsize,
	       (unsigned long long)r->wasted_memsize,
	       (unsigned long long)r->wasted_bytesize,
	       (unsigned long long)r->frozen,
	       (unsigned long long)r->fstring);
	key_json(s, r, by);
}

static void row_out(const hd_store *s, const hd_strings_row *r, int by,
		    enum fmt f, int first)
{
	char a[32], b[32], c[32], d[32];

	if (f == F_JSON) {
		printf("%s{", first ? "" : ",");
		row_json_members(s, r, by);
		putchar('}');
		return;
	}
	if (f == F_TSV) {
		printf("%llu\t%llu\t%llu\t%llu\t%llu\t",
		       (unsigned long long)r->count,
		       (unsigned long long)r->memsize,
		       (unsigned long long)r->wasted_memsize,
		       (unsigned long long)r->bytesize,
		       (unsigned long long)r->wasted_bytesize);
		cli_text_string(stdout, r->encoding, strlen(r->encoding));
		printf("\t%s\t", r->complete ? "true" : "false");
		if (by != HD_STRINGS_BY_VALUE) {
			key_text(s, r, by);
			putchar('\t');
		}
		cli_text_string(stdout, r->value, r->value_len);
		putchar('\n');
		return;
	}
	printf("%8s %11s %11s %9s  ", cli_commas(r->count, a, sizeof(a)),
	       cli_human_bytes(r->memsize, b, sizeof(b)),
	       cli_human_bytes(r->wasted_memsize, c, sizeof(c)),
	       cli_commas(r->bytesize, d, sizeof(d)));
	if (by != HD_STRINGS_BY_VALUE) {
		key_text(s, r, by);
		fputs("  ", stdout);
	}
	text_value(r->value, r->value_len, TEXT_VALUE_MAX);
	text_annotations(r);
	putchar('\n');
}

/* One line a row, each with the dump's identity (fleet summaries: the
 * lines of many dumps concatenate into one file). */
static void ndjson_out(const hd_store *s, const char *path,
		       const hd_strings_row *rows, size_t n, int by)
{
	struct cli_identity id;
	hd_store_info si;
	size_t i;

	hd_store_info_get(&si, s);
	cli_identity_get(&id, path, si.features);
	for (i = 0; i < n; i++) {
		putchar('{');
		cli_identity_json(stdout, &id);
		printf(",\"by\":\"%s\",", by_names[by]);
		row_json_members(s, &rows[i], by);
		fputs("}\n", stdout);
	}
}

static void totals_out(const hd_strings_totals *t, int by, enum fmt f)
{
	char a[32], b[32], c[32], d[32], e[32];

	if (f == F_JSON) {
		printf("{\"totals\":{\"strings\":%llu,\"memsize\":%llu,"
		       "\"shared\":%llu,\"shared_memsize\":%llu,"
		       "\"no_value\":%llu,\"no_value_memsize\":%llu,"
		       "\"values\":%llu,\"repeated\":%llu,\"copies\":%llu,"
		       "\"wasted_memsize\":%llu,\"wasted_bytesize\":%llu,"
		       "\"incomplete\":%llu,\"excluded\":%llu,"
		       "\"saturated\":%s},\"by\":\"%s\",\"min_count\":%llu,"
		       "\"rows\":[",
		       (unsigned long long)t->strings,
		       (unsigned long long)t->memsize,
		       (unsigned long long)t->shared,
		       (unsigned long long)t->shared_memsize,
		       (unsigned long long)t->no_value,
		       (unsigned long long)t->no_value_memsize,
		       (unsigned long long)t->values,
		       (unsigned long long)t->repeated,
		       (unsigned long long)t->copies,
		       (unsigned long long)t->wasted_memsize,
		       (unsigned long long)t->wasted_bytesize,
		       (unsigned long long)t->incomplete,
		       (unsigned long long)t->excluded,
		       t->saturated ? "true" : "false", by_names[by],
		       A.min_count);
		return;
	}
	if (f == F_TSV) {
		printf("count\tmemsize\twasted_memsize\tbytesize\t"
		       "wasted_bytesize\tencoding\tcomplete\t%svalue\n",
		       by == HD_STRINGS_BY_SITE     ? "site\t" :
		       by == HD_STRINGS_BY_HOLDER ? "holder\t" : "");
		return;
	}
	printf("strings     %s objects, %s%s\n",
	       cli_commas(t->strings, a, sizeof(a)),
	       cli_human_bytes(t->memsize, b, sizeof(b)),
	       cli_saturated(t->saturated));
	if (t->shared)
		printf("shared      %s objects, %s: they share another "
		       "string's bytes and have no value of their own\n",
		       cli_commas(t->shared, a, sizeof(a)),
		       cli_human_bytes(t->shared_memsize, b, sizeof(b)));
	if (t->no_value)
		printf("no value    %s objects, %s: not 7-bit ASCII (binary, "
		       "UTF-8 beyond ASCII, UTF-16...), dump_all writes no "
		       "value\n",
		       cli_commas(t->no_value, a, sizeof(a)),
		       cli_human_bytes(t->no_value_memsize, b, sizeof(b)));
	if (t->excluded)
		printf("excluded    %s objects: dump_all's own and the "
		       "allocation tracer's (--all keeps them)\n",
		       cli_commas(t->excluded, a, sizeof(a)));
	if (t->incomplete)
		printf("prefixes    %s objects whose value is shorter than "
		       "their bytesize: grouped only with the same bytesize\n",
		       cli_commas(t->incomplete, a, sizeof(a)));
	printf("repeated    %s values of %s distinct, in %s copies: %s "
	       "wasted (%s bytes of content), every copy but the first\n\n",
	       cli_commas(t->repeated, a, sizeof(a)),
	       cli_commas(t->values, b, sizeof(b)),
	       cli_commas(t->copies, c, sizeof(c)),
	       cli_human_bytes(t->wasted_memsize, d, sizeof(d)),
	       cli_commas(t->wasted_bytesize, e, sizeof(e)));
	printf("   count     memsize      wasted  bytesize  %svalue\n",
	       by == HD_STRINGS_BY_SITE     ? "site  " :
	       by == HD_STRINGS_BY_HOLDER ? "holder  " : "");
}

static int parse_args(int argc, char **argv, int *first, enum fmt *f,
		      int *by)
{
	int rc, fmt;
	size_t i;

	memset(&A, 0, sizeof(A));
	A.top = TOP_UNSET;
	A.min_count = 2;
	if ((rc = cli_parse(&info, argc, argv, first)))
		return rc < 0 ? -1 : rc;
	if (argc - *first != 1)
		return cli_usage_error(&info, "which dump or store?");
	if ((rc = cli_parse_format(&info, A.format, 4, &fmt)))
		return rc;
	*f = (enum fmt)fmt;
	if (A.top == TOP_UNSET)
		A.top = *f == F_NDJSON ? 0 : 20;
	*by = HD_STRINGS_BY_VALUE;
	for (i = 0; A.by && i < sizeof(by_names) / sizeof(*by_names); i++)
		if (strcmp(A.by, by_names[i]) == 0)
			break;
	if (A.by && i == sizeof(by_names) / sizeof(*by_names))
		return cli_usage_error(&info, "--by takes value, site or "
					      "holder, not '%s'", A.by);
	if (A.by)
		*by = (int)i;
	if (A.min_count == 0)
		return cli_usage_error(&info, "--min-count must be 1 or more");
	return 0;
}

int cmd_strings(int argc, char **argv)
{
	struct cli_input in;
	hd_strings_options o = HD_STRINGS_OPTIONS_INIT;
	hd_read_options ro;
	hd_strings_totals t;
	hd_strings *st = NULL;
	hd_store *s = NULL;
	hd_nodes set = { NULL, 0, 0 };
	hd_error err = { 0 };
	const hd_strings_row *rows;
	size_t n, i, shown;
	enum fmt f = F_TEXT;
	int rc, first, by = HD_STRINGS_BY_VALUE;
	char a[32];

	if ((rc = parse_args(argc, argv, &first, &f, &by)))
		return rc < 0 ? EXIT_OK : rc;
	if (A.sel.n && (rc = cli_select_compile(&A.sel)))
		return rc;
	cli_input_init(&in, argv[first], A.strict, A.quiet);
	if ((rc = cli_spool_stdin(&in)) || (rc = cli_open_store(&in, &s)) ||
	    (rc = cli_store_on_disk(s, in.name,
				       "values are not on disk; index the dump from a file")) ||
	    (A.sel.n &&
	     (rc = cli_select_nodes(&A.sel, s, in.name, A.quiet, &set))))
		goto out;
	o.by = by;
	o.min_count = A.min_count;
	o.flags = A.all ? HD_STRINGS_ALL : 0;
	ro = cli_input_read_options(&in);
	ro.problem = NULL; /* reported when it was indexed */
	if (hd_strings_build(&st, s, A.sel.n ? &set : NULL, &o, &ro, &err)) {
		rc = cli_lib_error(&err);
		goto out;
	}
	hd_strings_totals_get(&t, st);
	rows = hd_strings_rows(st, &n);
	shown = A.top && A.top < n ? (size_t)A.top : n;
	if (f == F_NDJSON) {
		ndjson_out(s, argv[first], rows, shown, by);
		rc = EXIT_OK;
		goto out;
	}
	totals_out(&t, by, f);
	for (i = 0; i < shown; i++)
		row_out(s, &rows[i], by, f, i == 0);
	if (f == F_JSON)
		printf("]}\n");
	else if (f == F_TEXT && shown < n)
		printf("(%s more rows: --top 0 shows all)\n",
		       cli_commas(n - shown, a, sizeof(a)));
	else if (f == F_TEXT && !n)
		printf("(no value has %llu copies or more)\n", A.min_count);
	rc = EXIT_OK;
out:
	cli_select_free(&A.sel);
	hd_strings_free(st);
	hd_nodes_free(&set);
	hd_store_close(s);
	return rc;
}
