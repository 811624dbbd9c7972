/*
 * cmd_stats.c - heapdump stats: totals, then objects and memory grouped
 * by type, class, allocation site, gem, generation...
 *
 * A dump is streamed (memory bounded by the number of groups); a store
 * is read from its columns.
 */
#include "cmd.h"
#include "common.h"
#include "identity.h"
#include "opt.h"
#include "sidecar.h"
#include "stacks_out.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "stats"
#define MAX_NS 32

struct stats_args {
	const char *by[HD_STATS_MAX_GROUPINGS];
	unsigned nby;
	const char *format;
	const char *sort;
	const char *ns;
	unsigned long long top, jobs;
	int all, strict, quiet;
};

static struct stats_args A;

static const char *add_by(const char *arg, void *target)
{
	struct stats_args *a = target;

	if (a->nby == HD_STATS_MAX_GROUPINGS)
		return "at most 8 groupings";
	a->by[a->nby++] = arg;
	return NULL;
}

static const struct cli_opt opts[] = {
	OPT_CALLBACK('b', "by", "KEYS", &A, add_by,
		     "group by KEYS, comma-separated: type class file location "
		     "method gem generation imemo length (repeatable); or "
		     "alone: stack, frame (allocation stacks)"),
	OPT_UINT('n', "top", "N", &A.top,
		 "rows per table (default 20, 0: all; ndjson: all)"),
	OPT_STRING('s', "sort", "KEY", &A.sort, "order rows by count (default) or memsize"),
	OPT_STRING(0, "namespace", "A,B", &A.ns,
		   "also count the classes in these namespaces"),
	OPT_FLAG('a', "all", &A.all,
		 "keep the allocation tracer and dump_all's own objects"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json, tsv or ndjson (one line a row, with "
		   "the dump's identity: fleet summaries)"),
	OPT_UINT('j', "jobs", "N", &A.jobs,
		 "threads reading a plain dump file (default: $HEAPDUMP_JOBS, "
		 "else the CPUs)"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE",
	"Count objects and memory of a heap dump or store, by type and class\n"
	"or by the keys given with --by.",
	opts
};

enum fmt { FMT_TEXT, FMT_JSON, FMT_TSV, FMT_NDJSON };

static int add_grouping(hd_stats_options *o, int key)
{
	o->keys[o->ngroupings][0] = key;
	o->nkeys[o->ngroupings] = 1;
	return (int)o->ngroupings++;
}

static int feed_store(hd_stats *st, struct cli_input *in)
{
	hd_store *s = NULL;
	hd_error err = { 0 };
	int rc;

	if ((rc = cli_open_store(in, &s)))
		return rc;
	rc = hd_stats_add_store(st, s, &err);
	hd_store_close(s);
	return rc ? cli_lib_error(&err) : 0;
}

/* ---- output ---- */

static void key_text(FILE *f, const hd_stats_row *r, unsigned nkeys)
{
	unsigned j;

	for (j = 0; j < nkeys; j++) {
		if (j)
			putc(':', f);
		cli_text_string(f, r->key[j], r->key_len[j]);
	}
}

static const char *grouping_name(const hd_stats_options *o, unsigned g,
				 char *buf, size_t size)
{
	size_t n = 0;
	unsigned j;

	buf[0] = '\0';
	for (j = 0; j < o->nkeys[g] && n + 16 < size; j++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", j ? "," : "",
				      hd_key_name(o->keys[g][j]));
	return buf;
}

static void print_totals_text(const hd_stats_totals *t, const char *path)
{
	char a[32], b[32], c[64];

	printf("%-12s ", "dump");
	cli_text_string(stdout, path, strlen(path));
	putchar('\n');
	printf("%-12s %s\n", "ruby", hd_features_ruby(c, sizeof(c), t->features));
	printf("%-12s %s\n", "objects", cli_commas(t->objects, a, sizeof(a)));
	printf("%-12s %s (%s bytes)%s\n", "memsize",
	       cli_human_bytes(t->memsize, a, sizeof(a)),
	       cli_commas(t->memsize, b, sizeof(b)),
	       cli_saturated(t->saturated));
	printf("%-12s %s\n", "references", cli_commas(t->edges, a, sizeof(a)));
	printf("%-12s %s in %s %s%s\n", "roots",
	       cli_commas(t->roots, a, sizeof(a)),
	       cli_commas(t->root_categories, b, sizeof(b)),
	       t->root_categories == 1 ? "category" : "categories",
	       t->root_categories ? "" : " (a partial dump: no ROOT lines)");
	if (t->shapes)
		printf("%-12s %s (not heap objects, not counted)\n", "shapes",
		       cli_commas(t->shapes, a, sizeof(a)));
	if (t->traced)
		printf("%-12s %llu..%llu (%s objects traced)\n", "generations",
		       (unsigned long long)t->gen_min,
		       (unsigned long long)t->gen_max,
		       cli_commas(t->traced, a, sizeof(a)));
	else
		printf("%-12s none (allocation tracing was off)\n",
		       "generations");
	if (t->excluded)
		printf("%-12s %s objects, %s: the allocation tracer and "
		       "dump_all's own objects (--all keeps them)\n",
		       "excluded", cli_commas(t->excluded, a, sizeof(a)),
		       cli_human_bytes(t->excluded_memsize, b, sizeof(b)));
}

static void print_table_text(const hd_stats_row *rows, size_t n,
			     size_t shown, unsigned nkeys, const char *title,
			     const char *sort)
{
	char a[32], b[32];
	size_t i;

	printf("\nby %s (%s%s of ", title, shown < n ? "top " : "",
	       cli_commas(shown, a, sizeof(a)));
	printf("%s, by %s)\n", cli_commas(n, a, sizeof(a)), sort);
	printf("%12s %15s  %s\n", "count", "memsize", title);
	for (i = 0; i < shown; i++) {
		printf("%12s %15s  ", cli_commas(rows[i].count, a, sizeof(a)),
		       cli_commas(rows[i].memsize, b, sizeof(b)));
		key_text(stdout, &rows[i], nkeys);
		putchar('\n');
	}
}

static void print_totals_json(const hd_stats_totals *t, const char *path)
{
	char c[64];

	printf("{\"dump\":");
	cli_json_string(stdout, path, strlen(path));
	printf(",\"ruby\":\"%s\",\"totals\":{\"objects\":%llu,\"memsize\":%llu,"
	       "\"references\":%llu,\"roots\":%llu,\"root_categories\":%llu,"
	       "\"shapes\":%llu,\"traced\":%llu,",
	       hd_features_ruby(c, sizeof(c), t->features),
	       (unsigned long long)t->objects, (unsigned long long)t->memsize,
	       (unsigned long long)t->edges, (unsigned long long)t->roots,
	       (unsigned long long)t->root_categories,
	       (unsigned long long)t->shapes, (unsigned long long)t->traced);
	if (t->traced)
		printf("\"generations\":[%llu,%llu],",
		       (unsigned long long)t->gen_min,
		       (unsigned long long)t->gen_max);
	else
		printf("\"generations\":null,");
	printf("\"excluded\":%llu,\"excluded_memsize\":%llu%s}",
	       (unsigned long long)t->excluded,
	       (unsigned long long)t->excluded_memsize,
	       t->saturated ? ",\"memsize_saturated\":true" : "");
}

static void print_table_json(const hd_stats_options *o, unsigned g,
			     const hd_stats_row *rows, size_t n, size_t shown,
			     const char *sort, int first)
{
	size_t i;
	unsigned j;

	printf("%s{\"by\":[", first ? "" : ",");
	for (j = 0; j < o->nkeys[g]; j++)
		printf("%s\"%s\"", j ? "," : "", hd_key_name(o->keys[g][j]));
	printf("],\"sort\":\"%s\",\"rows_total\":%zu,\"rows\":[", sort, n);
	for (i = 0; i < shown; i++) {
		printf("%s{", i ? "," : "");
		for (j = 0; j < o->nkeys[g]; j++) {
			printf("\"%s\":", hd_key_name(o->keys[g][j]));
			cli_json_string(stdout, rows[i].key[j],
					rows[i].key_len[j]);
			putchar(',');
		}
		printf("\"count\":%llu,\"memsize\":%llu}",
		       (unsigned long long)rows[i].count,
		       (unsigned long long)rows[i].memsize);
	}
	printf("]}");
}

static void print_totals_tsv(const hd_stats_totals *t)
{
	printf("total\tobjects\t%llu\n", (unsigned long long)t->objects);
	printf("total\tmemsize\t%llu\n", (unsigned long long)t->memsize);
	printf("total\treferences\t%llu\n", (unsigned long long)t->edges);
	printf("total\troots\t%llu\n", (unsigned long long)t->roots);
	printf("total\tshapes\t%llu\n", (unsigned long long)t->shapes);
	printf("total\ttraced\t%llu\n", (unsigned long long)t->traced);
	printf("total\texcluded\t%llu\n", (unsigned long long)t->excluded);
	if (t->saturated)
		printf("total\tmemsize_saturated\t1\n");
}

static void print_table_tsv(const char *name, const hd_stats_row *rows,
			    size_t shown, unsigned nkeys)
{
	size_t i;
	unsigned j;

	for (i = 0; i < shown; i++) {
		printf("%s\t%llu\t%llu", name,
		       (unsigned long long)rows[i].count,
		       (unsigned long long)rows[i].memsize);
		for (j = 0; j < nkeys; j++) {
			putchar('\t');
			/* escaped: a tab or newline would break the row */
			cli_text_string(stdout, rows[i].key[j],
					rows[i].key_len[j]);
		}
		putchar('\n');
	}
}

/* ---- ndjson: fleet summaries ---- */

/*
 * One JSON object a line: a "total" line, then one a row of each
 * grouping, each with the dump's identity (cli_identity_json), the
 * grouping ("type", "location,class"), every key column of every
 * grouping (null where the row's grouping has no such key: one schema
 * for the whole file), count and memsize.
 */
static void print_ndjson(hd_stats *st, const hd_stats_options *o,
			 const char *path, int sort, unsigned shown_groupings)
{
	struct cli_identity id;
	hd_stats_totals t;
	int cols[HD_STATS_MAX_GROUPINGS * HD_STATS_MAX_KEYS];
	unsigned ncols = 0, g, j, c;
	size_t i;

	hd_stats_totals_get(&t, st);
	cli_identity_get(&id, path, t.features);
	for (g = 0; g < shown_groupings; g++)
		for (j = 0; j < o->nkeys[g]; j++) {
			for (c = 0; c < ncols && cols[c] != o->keys[g][j]; c++)
				;
			if (c == ncols)
				cols[ncols++] = o->keys[g][j];
		}
	putchar('{');
	cli_identity_json(stdout, &id);
	printf(",\"grouping\":\"total\"");
	for (c = 0; c < ncols; c++)
		printf(",\"%s\":null", hd_key_name(cols[c]));
	printf(",\"count\":%llu,\"memsize\":%llu}\n",
	       (unsigned long long)t.objects, (unsigned long long)t.memsize);
	for (g = 0; g < shown_groupings; g++) {
		size_t n, shown;
		const hd_stats_row *rows = hd_stats_rows(st, g, sort, &n);
		char name[96];

		shown = A.top && A.top < n ? (size_t)A.top : n;
		grouping_name(o, g, name, sizeof(name));
		for (i = 0; i < shown; i++) {
			putchar('{');
			cli_identity_json(stdout, &id);
			printf(",\"grouping\":\"%s\"", name);
			for (c = 0; c < ncols; c++) {
				printf(",\"%s\":", hd_key_name(cols[c]));
				for (j = 0; j < o->nkeys[g] &&
					    o->keys[g][j] != cols[c];
				     j++)
					;
				if (j < o->nkeys[g])
					cli_json_string(stdout, rows[i].key[j],
							rows[i].key_len[j]);
				else
					fputs("null", stdout);
			}
			printf(",\"count\":%llu,\"memsize\":%llu}\n",
			       (unsigned long long)rows[i].count,
			       (unsigned long long)rows[i].memsize);
		}
	}
}

/* ---- namespaces (heap_dump's count_objects) ---- */

static void print_namespaces(hd_stats *st, unsigned g, enum fmt fmt,
			     int sort)
{
	const hd_stats_row *rows;
	size_t n, i;
	const char *s = A.ns;
	int first = 1;

	rows = hd_stats_rows(st, g, sort, &n);
	if (fmt == FMT_TEXT)
		printf("\nby namespace\n%12s %15s  %s\n", "count", "memsize",
		       "class");
	if (fmt == FMT_JSON)
		printf(",\"namespaces\":{");
	while (*s) {
		size_t len = strcspn(s, ",");
		hd_namespace_totals t;
		uint64_t cnt, mem;
		char a[32], b[32];

		hd_stats_namespace(&t, rows, n, s, len);
		cnt = t.count;
		mem = t.memsize;
		if (fmt == FMT_TEXT) {
			printf("%12s %15s  %.*s (total)\n",
			       cli_commas(cnt, a, sizeof(a)),
			       cli_commas(mem, b, sizeof(b)), (int)len, s);
			for (i = 0; i < n; i++)
				if (hd_stats_row_in_namespace(&rows[i], s, len))
				{
					printf("%12s %15s    ",
					       cli_commas(rows[i].count, a,
							  sizeof(a)),
					       cli_commas(rows[i].memsize, b,
							  sizeof(b)));
					cli_text_string(stdout, rows[i].key[0],
							rows[i].key_len[0]);
					putchar('\n');
				}
		} else if (fmt == FMT_JSON) {
			printf("%s", first ? "" : ",");
			cli_json_string(stdout, s, len);
			printf(":{\"count\":%llu,\"memsize\":%llu,\"classes\":{",
			       (unsigned long long)cnt, (unsigned long long)mem);
			for (i = 0, first = 1; i < n; i++) {
				if (!hd_stats_row_in_namespace(&rows[i], s,
							       len))
					continue;
				printf("%s", first ? "" : ",");
				cli_json_string(stdout, rows[i].key[0],
						rows[i].key_len[0]);
				printf(":%llu", (unsigned long long)rows[i].count);
				first = 0;
			}
			printf("}}");
		} else {
			printf("namespace\t%llu\t%llu\t%.*s\n",
			       (unsigned long long)cnt,
			       (unsigned long long)mem, (int)len, s);
		}
		first = 0;
		s += len + (s[len] == ',');
	}
	if (fmt == FMT_JSON)
		printf("}");
}

/* The process section, when the gem wrote a sidecar beside the dump. */
static void print_process(const char *path, enum fmt fmt,
			  const hd_stats_totals *t)
{
	struct cli_sidecar sc;

	if (hd_store_is_store(path) || !cli_sidecar_read(path, &sc))
		return;
	if (fmt == FMT_TEXT)
		cli_sidecar_text(&sc, t->memsize);
	else if (fmt == FMT_JSON)
		cli_sidecar_json(&sc, t->memsize);
	else
		cli_sidecar_tsv(&sc, t->memsize);
	cli_sidecar_free(&sc);
}

static void print_all(hd_stats *st, const hd_stats_options *o,
		      const char *path, enum fmt fmt, int sort, int ns_g,
		      unsigned shown_groupings)
{
	hd_stats_totals t;
	const char *sort_name = sort == HD_SORT_MEMSIZE ? "memsize" : "count";
	unsigned g;

	if (fmt == FMT_NDJSON) {
		print_ndjson(st, o, path, sort, shown_groupings);
		return;
	}
	hd_stats_totals_get(&t, st);
	if (fmt == FMT_TEXT)
		print_totals_text(&t, strcmp(path, "-") ? path : "(stdin)");
	else if (fmt == FMT_JSON)
		print_totals_json(&t, path);
	else
		print_totals_tsv(&t);
	print_process(path, fmt, &t);
	if (fmt == FMT_JSON)
		printf(",\"groupings\":[");
	for (g = 0; g < shown_groupings; g++) {
		const hd_stats_row *rows;
		size_t n, shown;
		char name[96];

		rows = hd_stats_rows(st, g, sort, &n);
		shown = A.top && A.top < n ? (size_t)A.top : n;
		grouping_name(o, g, name, sizeof(name));
		if (fmt == FMT_TEXT)
			print_table_text(rows, n, shown, o->nkeys[g], name,
					 sort_name);
		else if (fmt == FMT_JSON)
			print_table_json(o, g, rows, n, shown, sort_name,
					 g == 0);
		else
			print_table_tsv(name, rows, shown, o->nkeys[g]);
	}
	if (fmt == FMT_JSON)
		printf("]");
	if (ns_g >= 0)
		print_namespaces(st, (unsigned)ns_g, fmt, sort);
	if (fmt == FMT_JSON)
		printf("}\n");
}

/* --by stack or --by frame: the store's allocation stacks (stacks.c). */
static int stats_stacks(const char *path, int by, enum fmt fmt, int sort,
			unsigned jobs)
{
	hd_stack_options so = HD_STACK_OPTIONS_INIT;
	hd_stack_rows r;
	struct cli_input in;
	hd_store *s = NULL;
	hd_error err = { 0 };
	int rc;

	so.by = by;
	so.sort = sort;
	so.flags = A.all ? HD_STATS_ALL : 0;
	cli_input_init(&in, path, A.strict, A.quiet);
	in.jobs = jobs;
	if ((rc = cli_open_store(&in, &s)))
		return rc;
	if ((rc = hd_stack_stats(&r, s, NULL, 0, &so, &err))) {
		hd_store_close(s);
		return cli_lib_error(&err);
	}
	if (fmt == FMT_TEXT) {
		printf("%-12s ", "dump");
		cli_text_string(stdout, path, strlen(path));
		putchar('\n');
	}
	cli_stacks_print(stdout, s, &r,
			 fmt == FMT_JSON ? CLI_STK_JSON :
			 fmt == FMT_TSV	 ? CLI_STK_TSV :
					   CLI_STK_TEXT,
			 (size_t)A.top, "objects");
	if (fmt == FMT_JSON)
		putchar('\n');
	hd_stack_rows_free(&r);
	hd_store_close(s);
	return 0;
}

/* Is --by stack or --by frame asked (HD_STACKS_BY_*), alone? -1: no;
 * -2: with other keys (a usage error). */
static int stack_grouping(void)
{
	unsigned i;
	int by = -1;

	for (i = 0; i < A.nby; i++) {
		int k = strcmp(A.by[i], "stack") == 0 ? HD_STACKS_BY_STACK :
			strcmp(A.by[i], "frame") == 0 ? HD_STACKS_BY_FRAME :
							-1;

		if (k < 0 && (strstr(A.by[i], "stack") ||
			      strstr(A.by[i], "frame")))
			return -2;
		if (k >= 0)
			by = k;
	}
	return by >= 0 && A.nby > 1 ? -2 : by;
}

int cmd_stats(int argc, char **argv)
{
	hd_stats_options o = HD_STATS_OPTIONS_INIT;
	hd_stats *st = NULL;
	struct cli_input in;
	hd_error err = { 0 };
	enum fmt fmt;
	int rc, first, f, sort = HD_SORT_COUNT, ns_g = -1;
	unsigned i, shown, jobs;

	memset(&A, 0, sizeof(A));
	A.top = ULLONG_MAX; /* not given */
	A.jobs = ULLONG_MAX;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if ((rc = cli_jobs(&info, A.jobs, &jobs)))
		return rc;
	if (argc - first != 1)
		return cli_usage_error(&info, argc - first ?
						      "one dump or store, please" :
						      "which dump or store?");
	if ((rc = cli_parse_format(&info, A.format, 4, &f)))
		return rc;
	fmt = (enum fmt)f;
	if (A.top == ULLONG_MAX) /* ndjson: every row, nothing lost in sums */
		A.top = fmt == FMT_NDJSON ? 0 : 20;
	if (fmt == FMT_NDJSON && A.ns)
		return cli_usage_error(&info, "--namespace has no ndjson form "
					      "(use --format json)");
	if (A.sort && strcmp(A.sort, "memsize") == 0)
		sort = HD_SORT_MEMSIZE;
	else if (A.sort && strcmp(A.sort, "count") != 0)
		return cli_usage_error(&info, "unknown sort '%s'", A.sort);

	if ((f = stack_grouping()) == -2)
		return cli_usage_error(&info, "--by stack and --by frame go "
					      "alone, without other keys");
	if (f >= 0) {
		if (fmt == FMT_NDJSON || A.ns)
			return cli_usage_error(&info, "--by %s has no ndjson "
						      "form and no --namespace",
					       f ? "frame" : "stack");
		return stats_stacks(argv[first], f, fmt, sort, jobs);
	}
	o.flags = A.all ? HD_STATS_ALL : 0;
	for (i = 0; i < A.nby; i++)
		if ((rc = cli_parse_keys(&info, A.by[i], &o)))
			return rc;
	if (!A.nby) {
		add_grouping(&o, HD_KEY_TYPE);
		add_grouping(&o, HD_KEY_CLASS);
	}
	shown = o.ngroupings;
	if (A.ns) {
		if (o.ngroupings == HD_STATS_MAX_GROUPINGS)
			return cli_usage_error(&info, "too many groupings");
		ns_g = add_grouping(&o, HD_KEY_CLASS);
	}

	cli_input_init(&in, argv[first], A.strict, A.quiet);
	in.jobs = jobs;
	if ((rc = hd_stats_new(&st, &o, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	rc = hd_store_is_store(in.path) ? feed_store(st, &in) :
					  cli_stats_feed(st, &in, COMMAND_NAME);
	if (rc)
		goto out;
	if ((rc = hd_stats_finish(st, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	print_all(st, &o, in.path, fmt, sort, ns_g, shown);
out:
	hd_stats_free(st);
	return rc;
}
