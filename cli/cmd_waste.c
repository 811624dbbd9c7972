/*
 * cmd_waste.c - heapdump waste: memory held for nothing, by category
 * (empty arrays and hashes, spare capacity, duplicate strings), each
 * with its bytes, its share of the heap and the sites that make it
 * (the library's hd_waste_compute).
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"
#include "select_opts.h"

#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "waste"

static struct waste_args {
	const char *format;
	unsigned long long top;
	int strict, quiet, all;
	struct cli_select sel;
} A;

static const struct cli_opt opts[] = {
	OPT_UINT('n', "top", "N",
		 &A.top, "sites per category (default 3, 0: all kept, 16)"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json (one document) or tsv"),
	OPT_FLAG('a', "all", &A.all,
		 "keep the allocation tracer and dump_all's own objects"),
	CLI_SELECT_OPTS(&A.sel),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE",
	"Memory the heap holds for nothing: empty arrays and hashes, strings\n"
	"and arrays with spare capacity, duplicate strings and duplicate\n"
	"frozen strings; each category with its objects, bytes, share of the\n"
	"heap's memsize and the allocation sites that make the most of it.\n"
	"The selection options narrow the objects checked; the share stays\n"
	"of the whole heap (man 1 heapdump-waste says what each check reads).",
	opts
};

enum fmt { F_TEXT, F_JSON, F_TSV };

static const char *const labels[HD_WASTE_KINDS] = {
	"empty arrays",      "empty hashes",     "string capacity",
	"array capacity",    "duplicate strings", "frozen duplicates"
};

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void site_json(const hd_store *s, const hd_waste_site *w)
{
	hd_site site;

	fputs("{\"site\":", stdout);
	if (w->node != HD_NODE_NONE && hd_store_site(&site, s, w->node) == 0 &&
	    site.file) {
		fputs("{\"file\":", stdout);
		cli_json_string(stdout, site.file, site.file_len);
		printf(",\"line\":%llu}", (unsigned long long)site.line);
	} else {
		fputs("null", stdout);
	}
	printf(",\"count\":%llu,\"bytes\":%llu}", (unsigned long long)w->count,
	       (unsigned long long)w->bytes);
}

static void site_text(const hd_store *s, const hd_waste_site *w)
{
	hd_site site;

	if (w->node != HD_NODE_NONE && hd_store_site(&site, s, w->node) == 0 &&
	    site.file)
		cli_site_text(stdout, &site, 0);
	else
		fputs("(no site: allocated untraced)", stdout);
}

static void output(const hd_store *s, const hd_waste_result *r, enum fmt f)
{
	size_t nsites = A.top ? (size_t)A.top : HD_WASTE_MAX_SITES, i;
	char a[32], b[32];
	int k;

	if (f == F_JSON)
		printf("{\"heap_objects\":%llu,\"heap_memsize\":%llu,"
		       "\"excluded\":%llu,\"saturated\":%s,\"categories\":[",
		       (unsigned long long)r->heap_objects,
		       (unsigned long long)r->heap_memsize,
		       (unsigned long long)r->excluded,
		       r->saturated ? "true" : "false");
	else if (f == F_TSV)
		printf("category\tcount\tbytes\tpercent\tsite\tsite_count\t"
		       "site_bytes\n");
	else {
		printf("heap        %s objects, %s%s\n",
		       cli_commas(r->heap_objects, a, sizeof(a)),
		       cli_human_bytes(r->heap_memsize, b, sizeof(b)),
		       cli_saturated(r->saturated));
		if (r->excluded)
			printf("excluded    %s objects: dump_all's own and the "
			       "allocation tracer (--all keeps them)\n",
			       cli_commas(r->excluded, a, sizeof(a)));
		printf("\ncategory              objects       bytes  %% heap  "
		       "(top sites below)\n");
	}
	for (k = 0; k < HD_WASTE_KINDS; k++) {
		const hd_waste_row *w = &r->rows[k];
		size_t n = w->nsites < nsites ? w->nsites : nsites;

		if (f == F_JSON) {
			printf("%s{\"name\":\"%s\",\"count\":%llu,"
			       "\"bytes\":%llu,\"percent\":%.2f,\"sites\":[",
			       k ? "," : "", hd_waste_kind_name(k),
			       (unsigned long long)w->count,
			       (unsigned long long)w->bytes,
			       pct(w->bytes, r->heap_memsize));
			for (i = 0; i < n; i++) {
				if (i)
					putchar(',');
				site_json(s, &w->sites[i]);
			}
			printf("]}");
			continue;
		}
		if (f == F_TSV) {
			printf("%s\t%llu\t%llu\t%.2f\t", hd_waste_kind_name(k),
			       (unsigned long long)w->count,
			       (unsigned long long)w->bytes,
			       pct(w->bytes, r->heap_memsize));
			if (w->nsites) {
				site_text(s, &w->sites[0]);
				printf("\t%llu\t%llu",
				       (unsigned long long)w->sites[0].count,
				       (unsigned long long)w->sites[0].bytes);
			} else {
				putchar('\t');
				putchar('\t');
			}
			putchar('\n');
			continue;
		}
		printf("%-18s %10s %11s %6.1f%%\n", labels[k],
		       cli_commas(w->count, a, sizeof(a)),
		       cli_human_bytes(w->bytes, b, sizeof(b)),
		       pct(w->bytes, r->heap_memsize));
		for (i = 0; i < n; i++) {
			printf("%29s %11s  ",
			       cli_commas(w->sites[i].count, a, sizeof(a)),
			       cli_human_bytes(w->sites[i].bytes, b,
					       sizeof(b)));
			site_text(s, &w->sites[i]);
			putchar('\n');
		}
	}
	if (f == F_JSON)
		printf("]}\n");
}

int cmd_waste(int argc, char **argv)
{
	struct cli_input in;
	hd_read_options ro;
	hd_waste_result *r = NULL;
	hd_store *s = NULL;
	hd_nodes set = { NULL, 0, 0 };
	hd_error err = { 0 };
	enum fmt f = F_TEXT;
	int rc, first, fmt;

	memset(&A, 0, sizeof(A));
	A.top = 3;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (argc - first != 1)
		return cli_usage_error(&info, "which dump or store?");
	if ((rc = cli_parse_format(&info, A.format, 3, &fmt)))
		return rc;
	f = (enum fmt)fmt;
	if (A.sel.n && (rc = cli_select_compile(&A.sel)))
		return rc;
	cli_input_init(&in, argv[first], A.strict, A.quiet);
	if ((rc = cli_spool_stdin(&in)) || (rc = cli_open_store(&in, &s)) ||
	    (rc = cli_store_on_disk(s, in.name,
				       "strings and arrays are not on disk; index the dump from a file")) ||
	    (A.sel.n &&
	     (rc = cli_select_nodes(&A.sel, s, in.name, A.quiet, &set))))
		goto out;
	if (!(r = calloc(1, sizeof(*r)))) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
		goto out;
	}
	ro = cli_input_read_options(&in);
	ro.problem = NULL; /* reported when it was indexed */
	if (hd_waste_compute(r, s, A.sel.n ? &set : NULL,
			     A.all ? HD_STRINGS_ALL : 0, &ro, &err)) {
		rc = cli_lib_error(&err);
		goto out;
	}
	output(s, r, f);
	rc = EXIT_OK;
out:
	cli_select_free(&A.sel);
	free(r);
	hd_nodes_free(&set);
	hd_store_close(s);
	return rc;
}
