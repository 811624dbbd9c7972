/*
 * cmd_trend.c - heapdump trend D1 D2 ... DN: per class (or site, type...)
 * the count and memsize in each of N dumps of one process, the slope per
 * step and a verdict (lib/trend.c). Each dump is streamed through the
 * stats accumulator (a store read from its columns) and dropped before
 * the next one is read.
 */
#include "cmd.h"
#include "common.h"
#include "identity.h"
#include "opt.h"
#include "order.h"
#include "process.h"
#include "sidecar.h"
#include "gate.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COMMAND_NAME "trend"
#define MAX_CLASSES 64

static struct trend_args {
	const char *by, *format, *sort, *classes;
	unsigned long long top, jobs;
	int all, strict, quiet, force, ascii;
	unsigned nby;
} A;

/* --fail-on, --budgets: the CI gate (gate.h) */
static struct cli_gate G;

static const char *set_by(const char *arg, void *target)
{
	struct trend_args *a = target;

	if (a->nby++)
		return "one --by, please (several keys: --by class,location)";
	a->by = arg;
	return NULL;
}

static const struct cli_opt opts[] = {
	OPT_CALLBACK('b', "by", "KEYS", &A, set_by,
		     "group by KEYS, comma-separated, as stats does "
		     "(default: class)"),
	OPT_STRING(0, "classes", "A,B", &A.classes,
		   "only these classes (the keys must include class)"),
	OPT_UINT('n', "top", "N", &A.top, "rows (default 20, 0: all)"),
	OPT_STRING('s', "sort", "KEY", &A.sort,
		   "rank by memsize (default) or count slope"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json, tsv, ndjson or junit (the budgets "
		   "as JUnit XML)"),
	OPT_FLAG(0, "ascii", &A.ascii, "sparklines in ASCII: _.-:=+*#"),
	OPT_FLAG(0, "force", &A.force,
		 "read dumps that seem out of order as given"),
	OPT_FLAG('a', "all", &A.all,
		 "keep the allocation tracer and dump_all's own objects"),
	OPT_UINT('j', "jobs", "N", &A.jobs,
		 "threads reading a plain dump file (default: $HEAPDUMP_JOBS, "
		 "else the CPUs)"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	CLI_GATE_OPTS(&G),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE DUMP|STORE...",
	"How each class (or site, type...) grows over dumps of one process,\n"
	"given in the order they were taken: counts and memsize in each dump,\n"
	"the slope per step and a verdict.",
	opts
};

enum fmt { FMT_TEXT, FMT_JSON, FMT_TSV, FMT_NDJSON };

/* the process growth of the sidecars (text and JSON say it first) */
static hd_process_verdict proc;

static const char *const phrases[] = { "grows in every step",
				       "grows overall", "flat", "shrinks" };

/* Reads input k into the trend; its sidecar time into time, its process
 * figures into smp (the heap's once the trend has it). */
static int add_input(hd_trend *t, struct cli_input *in, char *time,
		     hd_process_sample *smp)
{
	hd_stats *st = NULL;
	hd_store *s = NULL;
	hd_store_info si;
	hd_dump_origin o;
	hd_error err = { 0 };
	int rc;

	if ((rc = hd_trend_stats_new(&st, t, &err)))
		return cli_lib_error(&err);
	if (hd_store_is_store(in->path)) {
		if ((rc = cli_open_store(in, &s)))
			goto out;
		hd_store_info_get(&si, s);
		cli_dump_origin(si.source_path && *si.source_path ?
					si.source_path :
					"-",
				&o, time, 40);
		cli_process_sample(smp, in->path, s, 0);
		rc = hd_stats_add_store(st, s, &err);
		hd_store_close(s);
		if (rc) {
			rc = cli_lib_error(&err);
			goto out;
		}
	} else {
		cli_dump_origin(in->path, &o, time, 40);
		cli_process_sample(smp, in->path, NULL, 0);
		if ((rc = cli_stats_feed(st, in, COMMAND_NAME)))
			goto out;
	}
	if (hd_stats_finish(st, &err) || hd_trend_add(t, st, in->path, &o, &err))
		rc = cli_lib_error(&err);
out:
	hd_stats_free(st);
	return rc;
}

/* ---- output ---- */

static void spark(const uint64_t *v, size_t n)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄",
					    "▅", "▆", "▇", "█" };
	static const char ramp[] = "_.-:=+*#";
	uint64_t lo = v[0], hi = v[0];
	size_t i;
	int l;

	for (i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (i = 0; i < n; i++) {
		l = hi == lo ? 3 :
			       (int)((double)(v[i] - lo) * 7 /
					     (double)(hi - lo) +
				     0.5);
		if (A.ascii)
			putchar(ramp[l]);
		else
			fputs(bars[l], stdout);
	}
}

static void signed_bytes(double d, char *buf, size_t size)
{
	char h[24];

	cli_human_bytes((uint64_t)(d < 0 ? -d : d), h, sizeof(h));
	snprintf(buf, size, "%s%s", d < 0 ? "-" : "+", h);
}

static void print_text(const hd_trend *t, const hd_trend_row *r, size_t n,
		       size_t shown)
{
	const hd_trend_options *o = hd_trend_options_get(t);
	size_t N = hd_trend_ndumps(t), i, k;
	char a[32], b[32], c[32];
	unsigned j;

	cli_process_text(stdout, &proc);
	printf("trend of %zu dumps, by ", N);
	for (j = 0; j < o->nkeys; j++)
		printf("%s%s", j ? "," : "", hd_key_name(o->keys[j]));
	printf(" (%s%s of %s groups, by verdict, then %s slope)\n",
	       shown < n ? "top " : "", cli_commas(shown, a, sizeof(a)),
	       cli_commas(n, b, sizeof(b)),
	       o->sort == HD_SORT_COUNT ? "count" : "memsize");
	for (k = 0; k < N; k++) {
		const hd_trend_dump *d = hd_trend_dump_at(t, k);

		printf("%3zu %15s objects %10s  ", k + 1,
		       cli_commas(d->totals.objects, a, sizeof(a)),
		       cli_human_bytes(d->totals.memsize, b, sizeof(b)));
		cli_text_string(stdout, d->path, strlen(d->path));
		putchar('\n');
	}
	printf("\n%-*s %12s    %-12s %16s  %-*s %10s    %-10s %16s  %-19s  %s\n",
	       (int)N, "count", "first", "last", "slope", (int)N, "memsize",
	       "first", "last", "slope", "verdict", "group");
	for (i = 0; i < shown; i++) {
		spark(r[i].count, N);
		printf(" %12s -> %-12s %+11.1f/step  ",
		       cli_commas(r[i].count[0], a, sizeof(a)),
		       cli_commas(r[i].count[N - 1], b, sizeof(b)),
		       r[i].count_slope);
		spark(r[i].memsize, N);
		signed_bytes(r[i].memsize_slope, c, sizeof(c));
		printf(" %10s -> ", cli_human_bytes(r[i].memsize[0], a, sizeof(a)));
		printf("%-10s %11s/step  %-19s  ",
		       cli_human_bytes(r[i].memsize[N - 1], b, sizeof(b)), c,
		       phrases[r[i].verdict]);
		for (j = 0; j < o->nkeys; j++) {
			if (j)
				putchar(':');
			cli_text_string(stdout, r[i].key[j], r[i].key_len[j]);
		}
		putchar('\n');
	}
}

static void json_keys(const hd_trend_options *o, const hd_trend_row *r)
{
	unsigned j;

	for (j = 0; j < o->nkeys; j++) {
		printf("\"%s\":", hd_key_name(o->keys[j]));
		cli_json_string(stdout, r->key[j], r->key_len[j]);
		putchar(',');
	}
}

static void json_list(const uint64_t *v, size_t n)
{
	size_t k;

	putchar('[');
	for (k = 0; k < n; k++)
		printf("%s%llu", k ? "," : "", (unsigned long long)v[k]);
	putchar(']');
}

static void json_tail(const hd_trend_row *r)
{
	printf("\"count_slope\":%.15g,\"memsize_slope\":%.15g,"
	       "\"verdict\":\"%s\"}",
	       r->count_slope, r->memsize_slope,
	       hd_trend_verdict_name(r->verdict));
}

static void print_json(const hd_trend *t, const hd_trend_row *r, size_t n,
		       size_t shown)
{
	const hd_trend_options *o = hd_trend_options_get(t);
	size_t N = hd_trend_ndumps(t), i, k;
	unsigned j;

	putchar('{');
	cli_process_json(stdout, &proc);
	printf(",\"by\":[");
	for (j = 0; j < o->nkeys; j++)
		printf("%s\"%s\"", j ? "," : "", hd_key_name(o->keys[j]));
	printf("],\"sort\":\"%s\",\"dumps\":[",
	       o->sort == HD_SORT_COUNT ? "count" : "memsize");
	for (k = 0; k < N; k++) {
		const hd_trend_dump *d = hd_trend_dump_at(t, k);

		printf("%s{\"path\":", k ? "," : "");
		cli_json_string(stdout, d->path, strlen(d->path));
		printf(",\"objects\":%llu,\"memsize\":%llu,\"traced\":%llu}",
		       (unsigned long long)d->totals.objects,
		       (unsigned long long)d->totals.memsize,
		       (unsigned long long)d->totals.traced);
	}
	printf("],\"rows_total\":%zu,\"rows\":[", n);
	for (i = 0; i < shown; i++) {
		printf("%s{", i ? "," : "");
		json_keys(o, &r[i]);
		printf("\"count\":");
		json_list(r[i].count, N);
		printf(",\"memsize\":");
		json_list(r[i].memsize, N);
		putchar(',');
		json_tail(&r[i]);
	}
	printf("]}\n");
}

/* One line per group and dump, each with that dump's identity, for
 * databases (man 1 heapdump-trend). */
static int print_ndjson(const hd_trend *t, const hd_trend_row *r,
			 size_t shown)
{
	const hd_trend_options *o = hd_trend_options_get(t);
	size_t N = hd_trend_ndumps(t), i, k;
	struct cli_identity *id = calloc(N, sizeof(*id));

	if (!id) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	for (k = 0; k < N; k++) {
		const hd_trend_dump *d = hd_trend_dump_at(t, k);

		cli_identity_get(&id[k], d->path, d->totals.features);
	}
	for (i = 0; i < shown; i++)
		for (k = 0; k < N; k++) {
			putchar('{');
			cli_identity_json(stdout, &id[k]);
			putchar(',');
			json_keys(o, &r[i]);
			printf("\"step\":%zu,\"count\":%llu,\"memsize\":%llu,",
			       k + 1, (unsigned long long)r[i].count[k],
			       (unsigned long long)r[i].memsize[k]);
			json_tail(&r[i]);
			putchar('\n');
		}
	free(id);
	return EXIT_OK;
}

static void print_tsv(const hd_trend *t, const hd_trend_row *r,
		      size_t shown)
{
	const hd_trend_options *o = hd_trend_options_get(t);
	size_t N = hd_trend_ndumps(t), i, k;
	unsigned j;

	printf("verdict\tcount_slope\tmemsize_slope");
	for (k = 0; k < 2 * N; k++)
		printf("\t%s_%zu", k < N ? "count" : "memsize", k % N + 1);
	for (j = 0; j < o->nkeys; j++)
		printf("\t%s", hd_key_name(o->keys[j]));
	putchar('\n');
	for (i = 0; i < shown; i++) {
		printf("%s\t%.15g\t%.15g", hd_trend_verdict_name(r[i].verdict),
		       r[i].count_slope, r[i].memsize_slope);
		for (k = 0; k < 2 * N; k++)
			printf("\t%llu", (unsigned long long)(k < N ?
						r[i].count[k] :
						r[i].memsize[k - N]));
		for (j = 0; j < o->nkeys; j++) {
			putchar('\t');
			cli_text_string(stdout, r[i].key[j], r[i].key_len[j]);
		}
		putchar('\n');
	}
}

/* ---- the command ---- */

/* Options from the arguments; 0 or an exit code. */
static int make_options(hd_trend_options *o, const char **names,
			enum fmt *fmt)
{
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	static char buf[4096];
	char *p;
	int rc, f;

	if ((rc = cli_parse_format(&info, A.format, 4, &f)))
		return rc;
	*fmt = (enum fmt)f;
	if (A.sort && strcmp(A.sort, "count") == 0)
		o->sort = HD_SORT_COUNT;
	else if (A.sort && strcmp(A.sort, "memsize") != 0)
		return cli_usage_error(&info, "unknown sort '%s'", A.sort);
	if ((rc = cli_parse_keys(&info, A.by ? A.by : "class", &so)))
		return rc;
	o->nkeys = so.nkeys[0];
	memcpy(o->keys, so.keys[0], sizeof(o->keys));
	o->flags = A.all ? HD_STATS_ALL : 0;
	if (!A.classes)
		return 0;
	if (strlen(A.classes) >= sizeof(buf))
		return cli_usage_error(&info, "--classes is too long");
	strcpy(buf, A.classes);
	for (p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
		if (o->nclasses == MAX_CLASSES)
			return cli_usage_error(&info, "--classes: at most %d "
					       "names", MAX_CLASSES);
		names[o->nclasses++] = p;
	}
	o->classes = names;
	for (rc = 0; rc < (int)o->nkeys; rc++)
		if (o->keys[rc] == HD_KEY_CLASS)
			return 0;
	return cli_usage_error(&info, "--classes needs the class key in --by");
}

static int report(const hd_trend *t, enum fmt fmt)
{
	const hd_trend_row *r;
	size_t n, shown;

	r = hd_trend_rows(t, &n);
	if (!n && A.classes) {
		cli_error("the selection picks no group: no object of class "
			  "'%s' in any of the %zu dumps, nothing to judge",
			  A.classes, hd_trend_ndumps(t));
		return EXIT_FAIL;
	}
	if (!n) {
		cli_error("the %zu dumps hold no object to count, nothing to "
			  "judge", hd_trend_ndumps(t));
		return EXIT_FAIL;
	}
	shown = A.top && A.top < n ? (size_t)A.top : n;
	if (fmt == FMT_TEXT)
		print_text(t, r, n, shown);
	else if (fmt == FMT_JSON)
		print_json(t, r, n, shown);
	else if (fmt == FMT_TSV)
		print_tsv(t, r, shown);
	else
		return print_ndjson(t, r, shown);
	return 0;
}

static int trend_run(int argc, char **argv)
{
	hd_trend_options o = HD_TREND_OPTIONS_INIT;
	const char *names[MAX_CLASSES];
	struct cli_input *in = NULL;
	hd_order_pair *pairs = NULL;
	hd_process_sample *smp = NULL;
	char (*times)[40] = NULL;
	hd_trend *t = NULL;
	hd_error err = { 0 };
	enum fmt fmt = FMT_TEXT;
	int rc, first, junit;
	size_t n, k;
	unsigned jobs;
	hd_budget_report *gate = NULL;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&A, 0, sizeof(A));
	A.top = 20;
	A.jobs = ULLONG_MAX; /* not given */
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	argc = cli_skip_sidecars(argc, argv, first); /* a glob of dumps */
	if ((rc = cli_jobs(&info, A.jobs, &jobs)))
		return rc;
	n = (size_t)(argc - first);
	if (n < 2)
		return cli_usage_error(&info, n ? "a trend needs at least two "
						  "dumps, in the order they "
						  "were taken" :
						  "which dumps?");
	junit = A.format && strcmp(A.format, "junit") == 0;
	if (junit)
		A.format = NULL;
	if ((rc = make_options(&o, names, &fmt)) ||
	    (rc = cli_gate_prepare(&info, &G, HD_BUDGET_TREND, junit, NULL)))
		return rc;
	o.ndumps = (unsigned)n;
	in = calloc(n, sizeof(*in));
	pairs = calloc(n, sizeof(*pairs));
	times = calloc(n, sizeof(*times));
	smp = calloc(n, sizeof(*smp));
	if (!in || !pairs || !times || !smp) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
		goto out;
	}
	if ((rc = hd_trend_new(&t, &o, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	for (k = 0; k < n; k++) {
		cli_input_init(&in[k], argv[first + (int)k], A.strict, A.quiet);
		in[k].jobs = jobs;
	}
	for (k = 0; k < n; k++)
		if ((rc = add_input(t, &in[k], times[k], &smp[k])))
			goto out;
	hd_trend_order(pairs, t);
	if ((rc = cli_order_report(pairs, in, times, n, A.force)))
		goto out;
	if (hd_trend_finish(t, &err)) {
		rc = cli_lib_error(&err);
		goto out;
	}
	for (k = 0; k < n; k++)
		smp[k].heap_memsize = hd_trend_dump_at(t, k)->totals.memsize;
	memset(&proc, 0, sizeof(proc));
	hd_process_judge(&proc, smp, n, NULL, NULL);
	if (G.b && (rc = hd_budget_eval_trend(&gate, G.b, t, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (junit) {
		struct timespec t1;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		cli_gate_junit(stdout, COMMAND_NAME, argv + first, (int)n,
			       gate, NULL,
			       (double)(t1.tv_sec - t0.tv_sec) +
				       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		rc = 0;
	} else {
		rc = report(t, fmt);
	}
	if (!rc && gate)
		rc = cli_gate_say(COMMAND_NAME, gate);
out:
	hd_budget_report_free(gate);
	hd_trend_free(t);
	free(in);
	free(pairs);
	free(times);
	free(smp);
	return rc;
}

int cmd_trend(int argc, char **argv)
{
	int rc = trend_run(argc, argv);

	cli_gate_free(&G);
	return rc;
}
