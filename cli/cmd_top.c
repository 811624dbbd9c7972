/*
 * cmd_top.c - heapdump top: the objects that retain the most memory (the
 * memsize that only they keep alive), and with --by class Eclipse MAT's
 * class histogram with shallow and retained sizes.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"

#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "top"

static struct top_args {
	const char *format, *by;
	unsigned long long top;
	int skip_weak, strict, quiet, all;
} A;

static const struct cli_opt opts[] = {
	OPT_UINT('n', "top", "N", &A.top, "rows (default 20, 0: all)"),
	OPT_STRING(0, "by", "KEY", &A.by,
		   "object (default) or class: per class, the instances' "
		   "shallow and retained sizes"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json (one document) or tsv"),
	OPT_FLAG('a', "all", &A.all,
		 "keep the allocation tracer and dump_all's own objects"),
	OPT_FLAG(0, "skip-weak", &A.skip_weak,
		 "weak references (WeakMap, WeakRef) keep nothing "
		 "alive"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE",
	"The objects that retain the most memory: each one's retained set is\n"
	"itself and every object it dominates (every path from the GC roots\n"
	"to them passes through it), what the GC could free without it.\n"
	"--by class gives each class's instances together. The dominator tree\n"
	"is read from a store indexed with --dominators, else computed. The\n"
	"allocation tracer and dump_all's own objects are left out, as stats\n"
	"leaves them out, unless --all.",
	opts
};

enum fmt { F_TEXT, F_JSON, F_TSV };

static void header(const hd_store *s, const hd_domtree *d, double secs,
		   enum fmt f)
{
	uint64_t mem, n = hd_domtree_reached(d, &mem), xmem = 0;
	uint64_t x = A.all ? 0 : hd_store_dumper_count(s, &xmem);
	char a[32], b[32];

	if (f == F_JSON) {
		printf("{\"reached\":%llu,\"reached_memsize\":%llu,"
		       "\"excluded\":%llu,\"excluded_memsize\":%llu,"
		       "\"memsize_saturated\":%s,\"dominators\":\"%s\",",
		       (unsigned long long)n, (unsigned long long)mem,
		       (unsigned long long)x, (unsigned long long)xmem,
		       mem == UINT64_MAX ? "true" : "false",
		       hd_domtree_is_stored(d) ? "stored" : "computed");
		return;
	}
	if (f == F_TSV)
		return;
	/* the tree's sums stop at 2^64-1: there, they saturated */
	printf("reached     %s objects, %s from the GC roots%s\n",
	       cli_commas(n, a, sizeof(a)), cli_human_bytes(mem, b, sizeof(b)),
	       cli_saturated(mem == UINT64_MAX));
	if (x)
		printf("excluded    %s objects, %s: the allocation tracer and "
		       "dump_all's own objects (--all keeps them)\n",
		       cli_commas(x, a, sizeof(a)),
		       cli_human_bytes(xmem, b, sizeof(b)));
	if (hd_domtree_is_stored(d))
		printf("dominators  read from the store\n\n");
	else
		printf("dominators  computed in %.2fs\n\n", secs);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void object_row(const hd_store *s, const hd_domtree *d, hd_node_id v,
		       enum fmt f, int first)
{
	uint64_t rm, rc = hd_domtree_retained(d, v, &rm), all;
	char cls[256], a[32], b[32], c[32];
	hd_site site;
	int has_site = hd_store_site(&site, s, v) == 0 && site.file;

	hd_domtree_reached(d, &all);
	cli_node_class(s, v, cls, sizeof(cls));
	if (f == F_JSON) {
		printf("%s{\"retained_memsize\":%llu,\"retained_count\":%llu,"
		       "\"object\":", first ? "" : ",",
		       (unsigned long long)rm, (unsigned long long)rc);
		cli_node_json(stdout, s, v);
		putchar('}');
		return;
	}
	if (f == F_TSV) {
		printf("%llu\t%llu\t%.2f\t%llu\t0x%llx\t%s\t%s\t",
		       (unsigned long long)rm, (unsigned long long)rc,
		       pct(rm, all), (unsigned long long)hd_store_memsize(s, v),
		       (unsigned long long)hd_store_address(s, v),
		       hd_type_name(hd_store_type(s, v)), cls);
		if (has_site)
			cli_site_text(stdout, &site, 0);
		putchar('\n');
		return;
	}
	printf("%10s %5.1f%% %11s %9s  0x%-14llx %s", cli_human_bytes(rm, a, sizeof(a)),
	       pct(rm, all), cli_commas(rc, b, sizeof(b)),
	       cli_commas(hd_store_memsize(s, v), c, sizeof(c)),
	       (unsigned long long)hd_store_address(s, v), cls);
	if (cli_type_adds(s, v, cls))
		printf(" (%s)", hd_type_name(hd_store_type(s, v)));
	if (has_site) {
		fputs("  ", stdout);
		cli_site_text(stdout, &site, 0);
	}
	putchar('\n');
}

static int top_objects(const hd_store *s, const hd_domtree *d, enum fmt f)
{
	size_t k = A.top ? (size_t)A.top : hd_store_node_count(s), n, i;
	hd_node_id *ids = malloc((k ? k : 1) * sizeof(*ids));
	hd_error err = { 0 };

	if (!ids) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	if (hd_domtree_top(ids, &n, d, k, &err)) {
		free(ids);
		return cli_lib_error(&err);
	}
	if (f == F_JSON)
		printf("\"objects\":[");
	else if (f == F_TSV)
		printf("retained_memsize\tretained_count\tpercent\tmemsize\t"
		       "address\ttype\tclass\tsite\n");
	else
		printf("  retained      %%       count   shallow  address"
		       "          class\n");
	for (i = 0; i < n; i++)
		object_row(s, d, ids[i], f, i == 0);
	if (f == F_JSON)
		printf("]}\n");
	free(ids);
	return EXIT_OK;
}

static int top_classes(const hd_domtree *d, enum fmt f)
{
	hd_class_retained *rows = NULL;
	hd_error err = { 0 };
	uint64_t all;
	size_t n = 0, i, shown;
	char a[32], b[32], c[32], e[32];

	if (hd_domtree_classes(&rows, &n, d, &err))
		return cli_lib_error(&err);
	hd_domtree_reached(d, &all);
	shown = A.top && A.top < n ? (size_t)A.top : n;
	if (f == F_JSON)
		printf("\"classes\":[");
	else if (f == F_TSV)
		printf("class\tobjects\tshallow\tretained_count\t"
		       "retained_memsize\tpercent\n");
	else
		printf("  retained      %%     objects     shallow  "
		       "retained objects  class\n");
	for (i = 0; i < shown; i++) {
		const hd_class_retained *r = &rows[i];

		if (f == F_JSON) {
			printf("%s{\"class\":", i ? "," : "");
			cli_json_string(stdout, r->name, strlen(r->name));
			printf(",\"objects\":%llu,\"shallow\":%llu,"
			       "\"retained_count\":%llu,"
			       "\"retained_memsize\":%llu}",
			       (unsigned long long)r->objects,
			       (unsigned long long)r->shallow,
			       (unsigned long long)r->retained_count,
			       (unsigned long long)r->retained_memsize);
		} else if (f == F_TSV) {
			cli_text_string(stdout, r->name, strlen(r->name));
			printf("\t%llu\t%llu\t%llu\t%llu\t%.2f\n",
			       (unsigned long long)r->objects,
			       (unsigned long long)r->shallow,
			       (unsigned long long)r->retained_count,
			       (unsigned long long)r->retained_memsize,
			       pct(r->retained_memsize, all));
		} else {
			printf("%10s %5.1f%% %11s %11s %16s  ",
			       cli_human_bytes(r->retained_memsize, a, sizeof(a)),
			       pct(r->retained_memsize, all),
			       cli_commas(r->objects, b, sizeof(b)),
			       cli_human_bytes(r->shallow, c, sizeof(c)),
			       cli_commas(r->retained_count, e, sizeof(e)));
			cli_text_string(stdout, r->name, strlen(r->name));
			putchar('\n');
		}
	}
	if (f == F_JSON)
		printf("]}\n");
	else if (f == F_TEXT && shown < n)
		printf("(%s more classes: --top 0 shows all)\n",
		       cli_commas(n - shown, a, sizeof(a)));
	hd_class_retained_free(rows);
	return EXIT_OK;
}

int cmd_top(int argc, char **argv)
{
	struct cli_input in;
	hd_store *s = NULL;
	hd_domtree *d = NULL;
	hd_error err = { 0 };
	enum fmt f = F_TEXT;
	int rc, first, fmt, by_class = 0;
	double t0;

	memset(&A, 0, sizeof(A));
	A.top = 20;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (argc - first != 1)
		return cli_usage_error(&info, "which dump or store?");
	if ((rc = cli_parse_format(&info, A.format, 3, &fmt)))
		return rc;
	f = (enum fmt)fmt;
	if (A.by && strcmp(A.by, "class") == 0)
		by_class = 1;
	else if (A.by && strcmp(A.by, "object") != 0)
		return cli_usage_error(&info, "--by takes object or class, "
					      "not '%s'", A.by);
	cli_input_init(&in, argv[first], A.strict, A.quiet);
	if ((rc = cli_open_store(&in, &s)))
		return rc;
	t0 = cli_now();
	if (hd_domtree_new(&d, s, (A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0) |
				  (A.all ? 0 : HD_DOMTREE_SKIP_DUMPER),
			   &err)) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (!hd_domtree_reached(d, NULL)) {
		hd_store_info si;

		hd_store_info_get(&si, s);
		cli_error("%s: no object is reached from a GC root%s",
			  in.name, si.features & HD_FEAT_PARTIAL ?
					   " (no ROOT lines: a partial dump)" :
					   "");
	}
	header(s, d, cli_now() - t0, f);
	rc = by_class ? top_classes(d, f) : top_objects(s, d, f);
out:
	hd_domtree_free(d);
	hd_store_close(s);
	return rc;
}
