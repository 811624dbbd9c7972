/*
 * cmd_diff.c - heapdump diff BEFORE AFTER [LATER]: the objects of AFTER
 * that are new since BEFORE (and, with LATER, still alive in LATER),
 * grouped by class and allocation site; -o writes their records. With
 * LATER, the retained objects are taken as LATER has them: their
 * memsize, their records and the paths that hold them are LATER's.
 */
#include "cmd.h"
#include "stacks_out.h"
#include "common.h"
#include "gate.h"
#include "opt.h"
#include "order.h"
#include "process.h"
#include "sidecar.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "diff"

struct diff_args {
	const char *by;
	const char *format;
	const char *sort;
	const char *output;
	unsigned long long top;
	int with_paths, no_generation, all, force, strict, quiet;
};

static struct diff_args A;

/* --fail-on, --budgets: the CI gate (gate.h) */
static struct cli_gate G;

static const struct cli_opt opts[] = {
	OPT_STRING('o', "output", "FILE", &A.output,
		   "write the records of the new objects as in AFTER (with "
		   "LATER: the retained ones as in LATER) to FILE"),
	OPT_FLAG(0, "with-paths", &A.with_paths,
		 "with -o: add the shortest paths from the roots to them"),
	OPT_STRING('b', "by", "KEYS", &A.by,
		   "group by KEYS, comma-separated (default class,location); "
		   "or stack, frame (allocation stacks)"),
	OPT_UINT('n', "top", "N", &A.top, "rows (default 20, 0: all)"),
	OPT_STRING('s', "sort", "KEY", &A.sort,
		   "order rows by count (default) or memsize"),
	OPT_STRING('f', "format", "FMT", &A.format, "text (default), json or tsv"),
	OPT_FLAG(0, "no-generation", &A.no_generation,
		 "ignore generations: identity by address and fingerprint"),
	OPT_FLAG('a', "all", &A.all,
		 "keep the allocation tracer and dump_all's own objects"),
	OPT_FLAG(0, "force", &A.force,
		 "compare dumps that seem to be in the wrong order"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	CLI_GATE_OPTS(&G),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] BEFORE AFTER [LATER]",
	"The objects of AFTER that are new since BEFORE, or with LATER those\n"
	"of them still alive in LATER, by class and allocation site. Each\n"
	"operand is a dump or a store.",
	opts
};

enum fmt { FMT_TEXT, FMT_JSON, FMT_TSV };

static const char *const side_names[3] = { "before", "after", "later" };

/* ---- records out ---- */

static int write_bytes(const void *buf, size_t n, void *payload)
{
	return fwrite(buf, 1, n, payload) == n ? 0 : 1;
}

/* The records of the new objects (--with-paths: and of the shortest
 * paths from the roots to them, references restricted to those) to -o. */
static int write_output(const hd_store *from, const struct cli_input *in,
			const hd_nodes *set, uint64_t *written,
			uint64_t *unreached)
{
	struct cli_out o;
	hd_nodes paths = { 0 };
	const hd_nodes *what = set;
	hd_read_options ro = HD_READ_OPTIONS_INIT;
	hd_error err = { 0 };
	int rc;

	*unreached = 0;
	if (A.with_paths) {
		if (hd_paths_union(&paths, unreached, from, set, 0, &err))
			return cli_lib_error(&err);
		what = &paths;
	}
	*written = what->n;
	if ((rc = cli_out_open(&o, A.output, in->path)))
		goto out;
	ro.flags = A.strict ? HD_READ_STRICT : 0;
	errno = 0;
	rc = hd_subdump_write(from, what,
			      A.with_paths ? HD_SUBDUMP_RESTRICT : 0, &ro,
			      write_bytes, o.f, &err);
	if (rc) {
		int e = errno ? errno : EIO; /* of the failed write */

		cli_out_abort(&o);
		if (rc > 0) {
			cli_error("cannot write '%s': %s",
				  A.output ? A.output : "standard output",
				  strerror(e));
			rc = EXIT_FAIL;
		} else {
			rc = cli_lib_error(&err);
		}
		goto out;
	}
	rc = cli_out_commit(&o);
out:
	hd_nodes_free(&paths);
	return rc;
}

/* ---- the summary ---- */

static const char *rules_text(unsigned rules, char *buf, size_t size)
{
	buf[0] = '\0';
	if (rules & HD_DIFF_RULE_OBJECT_ID)
		strncat(buf, "object_id", size - strlen(buf) - 1);
	if (rules & HD_DIFF_RULE_GENERATION)
		strncat(buf, buf[0] ? ", generation" : "generation",
			size - strlen(buf) - 1);
	if (rules & HD_DIFF_RULE_ADDRESS)
		strncat(buf, buf[0] ? ", address+fingerprint" :
				      "address+fingerprint",
			size - strlen(buf) - 1);
	if (!buf[0])
		strncat(buf, "none (no objects)", size - 1);
	return buf;
}

static void print_keys_tsv(const hd_stats_row *r, unsigned nkeys)
{
	unsigned j;

	for (j = 0; j < nkeys; j++) {
		putchar('\t');
		cli_text_string(stdout, r->key[j], r->key_len[j]);
	}
}

struct report {
	const hd_diff_result *d;
	const struct cli_input *in;
	int nin;
	const hd_stats_options *o;
	const hd_stats_row *rows;
	size_t nrows, shown;
	const char *sort;
	const char *what;         /* "new" or "retained" */
	uint64_t count, memsize;
	int written;              /* -o was given */
	uint64_t nwritten, unreached;
	hd_process_verdict proc;  /* the process growth of the sidecars */
	const hd_stack_rows *stk; /* --by stack|frame: these rows instead */
	const hd_store *at;       /* the store the rows are of */
};

static void print_text(const struct report *r)
{
	const hd_diff_result *d = r->d;
	char a[32], b[32], c[96];
	size_t i;
	unsigned j;
	int k;

	cli_process_text(stdout, &r->proc);
	for (k = 0; k < r->nin; k++)
	{
		printf("%-10s ", side_names[k]);
		cli_text_string(stdout, r->in[k].name, strlen(r->in[k].name));
		printf(" (%s objects)\n",
		       cli_commas(d->objects[k], a, sizeof(a)));
	}
	printf("%-10s %s", "rule", rules_text(d->rules, c, sizeof(c)));
	if (d->traced)
		printf(" (G = %llu)", (unsigned long long)d->generation);
	putchar('\n');
	if (d->object_id_skipped)
		printf("%-10s object ids not compared: a source dump cannot be "
		       "read again\n", "");
	printf("%-10s %s objects, %s (%s bytes)%s\n", "new",
	       cli_commas(d->added.n, a, sizeof(a)),
	       cli_human_bytes(d->added_memsize, b, sizeof(b)),
	       cli_commas(d->added_memsize, c, sizeof(c)),
	       cli_saturated(d->memsize_saturated &&
			     d->added_memsize == UINT64_MAX));
	if (d->has_later)
		printf("%-10s %s objects, %s (%s bytes)%s: new and still in "
		       "later\n", "retained",
		       cli_commas(d->retained_later.n, a, sizeof(a)),
		       cli_human_bytes(d->retained_later_memsize, b, sizeof(b)),
		       cli_commas(d->retained_later_memsize, c, sizeof(c)),
		       cli_saturated(d->memsize_saturated &&
				     d->retained_later_memsize == UINT64_MAX));
	printf("%-10s %s matches (same address, type and class: nothing "
	       "more to compare)\n", "uncertain",
	       cli_commas(d->uncertain, a, sizeof(a)));
	if (d->has_later && (d->retained_uncertain || d->retained_moved))
		printf("%-10s %s uncertain, %s moved (matched by generation, "
		       "type, class and site)\n", "in later",
		       cli_commas(d->retained_uncertain, a, sizeof(a)),
		       cli_commas(d->retained_moved, b, sizeof(b)));
	if (d->by_match[HD_MATCH_EXCLUDED])
		printf("%-10s %s new objects of the allocation tracer and "
		       "dump_all (--all keeps them)\n", "excluded",
		       cli_commas(d->by_match[HD_MATCH_EXCLUDED], a, sizeof(a)));
	if (r->written)
		printf("%-10s %s records to %s%s\n", "output",
		       cli_commas(r->nwritten, a, sizeof(a)), A.output,
		       A.with_paths ? " (with paths from the roots)" : "");
	if (r->stk) {
		putchar('\n');
		cli_stacks_print(stdout, r->at, r->stk, CLI_STK_TEXT,
				 (size_t)A.top, r->what);
		return;
	}
	printf("\n%s objects by ", r->what);
	for (j = 0; j < r->o->nkeys[0]; j++)
		printf("%s%s", j ? "," : "", hd_key_name(r->o->keys[0][j]));
	printf(" (%s%s of %s, by %s)\n", r->shown < r->nrows ? "top " : "",
	       cli_commas(r->shown, a, sizeof(a)),
	       cli_commas(r->nrows, b, sizeof(b)), r->sort);
	printf("%12s %15s ", "count", "memsize");
	for (j = 0; j < r->o->nkeys[0]; j++)
		printf(" %s", hd_key_name(r->o->keys[0][j]));
	putchar('\n');
	for (i = 0; i < r->shown; i++) {
		printf("%12s %15s ", cli_commas(r->rows[i].count, a, sizeof(a)),
		       cli_commas(r->rows[i].memsize, b, sizeof(b)));
		for (j = 0; j < r->o->nkeys[0]; j++) {
			putchar(' ');
			cli_text_string(stdout, r->rows[i].key[j],
					r->rows[i].key_len[j]);
		}
		putchar('\n');
	}
}

static void print_json(const struct report *r)
{
	const hd_diff_result *d = r->d;
	size_t i;
	unsigned j;
	int k, first = 1;

	printf("{");
	cli_process_json(stdout, &r->proc);
	for (k = 0; k < 3; k++) {
		printf(",\"%s\":", side_names[k]);
		if (k < r->nin)
			cli_json_string(stdout, r->in[k].name,
					strlen(r->in[k].name));
		else
			printf("null");
	}
	printf(",\"objects\":{\"before\":%llu,\"after\":%llu,\"later\":",
	       (unsigned long long)d->objects[0],
	       (unsigned long long)d->objects[1]);
	if (d->has_later)
		printf("%llu}", (unsigned long long)d->objects[2]);
	else
		printf("null}");
	printf(",\"rules\":[");
	if (d->rules & HD_DIFF_RULE_OBJECT_ID)
		printf("\"object_id\""), first = 0;
	if (d->rules & HD_DIFF_RULE_GENERATION)
		printf("%s\"generation\"", first ? "" : ","), first = 0;
	if (d->rules & HD_DIFF_RULE_ADDRESS)
		printf("%s\"address+fingerprint\"", first ? "" : ",");
	printf("],\"generation\":");
	if (d->traced)
		printf("%llu", (unsigned long long)d->generation);
	else
		printf("null");
	printf(",\"object_id_skipped\":%s", d->object_id_skipped ? "true" :
								 "false");
	printf(",\"new\":{\"count\":%zu,\"memsize\":%llu}", d->added.n,
	       (unsigned long long)d->added_memsize);
	if (d->has_later)
		printf(",\"retained\":{\"count\":%zu,\"memsize\":%llu,"
		       "\"uncertain\":%llu,\"moved\":%llu}",
		       d->retained_later.n,
		       (unsigned long long)d->retained_later_memsize,
		       (unsigned long long)d->retained_uncertain,
		       (unsigned long long)d->retained_moved);
	else
		printf(",\"retained\":null");
	printf(",\"memsize_saturated\":%s",
	       d->memsize_saturated ? "true" : "false");
	printf(",\"uncertain\":%llu,\"excluded\":%llu,\"verdicts\":{",
	       (unsigned long long)d->uncertain,
	       (unsigned long long)d->by_match[HD_MATCH_EXCLUDED]);
	for (k = 1, first = 1; k < HD_MATCH__COUNT; k++) {
		if (!d->by_match[k])
			continue;
		printf("%s", first ? "" : ",");
		cli_json_string(stdout, hd_match_name(k),
				strlen(hd_match_name(k)));
		printf(":%llu", (unsigned long long)d->by_match[k]);
		first = 0;
	}
	printf("}");
	if (r->written) {
		printf(",\"output\":{\"file\":");
		cli_json_string(stdout, A.output, strlen(A.output));
		printf(",\"records\":%llu,\"unreached\":%llu}",
		       (unsigned long long)r->nwritten,
		       (unsigned long long)r->unreached);
	}
	if (r->stk) {
		printf(",\"of\":\"%s\",\"stacks\":", r->what);
		cli_stacks_print(stdout, r->at, r->stk, CLI_STK_JSON,
				 (size_t)A.top, r->what);
		printf("}\n");
		return;
	}
	printf(",\"of\":\"%s\",\"by\":[", r->what);
	for (j = 0; j < r->o->nkeys[0]; j++)
		printf("%s\"%s\"", j ? "," : "", hd_key_name(r->o->keys[0][j]));
	printf("],\"sort\":\"%s\",\"rows_total\":%zu,\"rows\":[", r->sort,
	       r->nrows);
	for (i = 0; i < r->shown; i++) {
		printf("%s{", i ? "," : "");
		for (j = 0; j < r->o->nkeys[0]; j++) {
			printf("\"%s\":", hd_key_name(r->o->keys[0][j]));
			cli_json_string(stdout, r->rows[i].key[j],
					r->rows[i].key_len[j]);
			putchar(',');
		}
		printf("\"count\":%llu,\"memsize\":%llu}",
		       (unsigned long long)r->rows[i].count,
		       (unsigned long long)r->rows[i].memsize);
	}
	printf("]}\n");
}

static void print_tsv(const struct report *r)
{
	const hd_diff_result *d = r->d;
	char c[96];
	size_t i;
	int k;

	cli_process_tsv(stdout, &r->proc);
	for (k = 0; k < r->nin; k++)
		printf("total\tobjects_%s\t%llu\n", side_names[k],
		       (unsigned long long)d->objects[k]);
	printf("total\trule\t%s\n", rules_text(d->rules, c, sizeof(c)));
	if (d->traced)
		printf("total\tgeneration\t%llu\n",
		       (unsigned long long)d->generation);
	printf("total\tnew\t%zu\n", d->added.n);
	printf("total\tnew_memsize\t%llu\n",
	       (unsigned long long)d->added_memsize);
	if (d->has_later) {
		printf("total\tretained\t%zu\n", d->retained_later.n);
		printf("total\tretained_memsize\t%llu\n",
		       (unsigned long long)d->retained_later_memsize);
	}
	if (d->memsize_saturated)
		printf("total\tmemsize_saturated\t1\n");
	printf("total\tuncertain\t%llu\n", (unsigned long long)d->uncertain);
	printf("total\texcluded\t%llu\n",
	       (unsigned long long)d->by_match[HD_MATCH_EXCLUDED]);
	if (r->stk) {
		cli_stacks_print(stdout, r->at, r->stk, CLI_STK_TSV,
				 (size_t)A.top, r->what);
		return;
	}
	for (i = 0; i < r->shown; i++) {
		printf("%s\t%llu\t%llu", r->what,
		       (unsigned long long)r->rows[i].count,
		       (unsigned long long)r->rows[i].memsize);
		print_keys_tsv(&r->rows[i], r->o->nkeys[0]);
		putchar('\n');
	}
}

static int diff_run(int argc, char **argv)
{
	struct cli_input in[3];
	hd_store *s[3] = { NULL, NULL, NULL };
	hd_diff_options dopt = HD_DIFF_OPTIONS_INIT;
	hd_diff_result *d = NULL;
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	hd_stats *st = NULL;
	hd_error err = { 0 };
	struct report r;
	int fmt = FMT_TEXT;
	const hd_nodes *set;
	hd_budget_report *gate = NULL;
	int rc, first, nin, k, nstdin = 0, sort = HD_SORT_COUNT, at;
	int by_stack = -1;
	hd_stack_rows stk;
	hd_stack_options sto = HD_STACK_OPTIONS_INIT;

	memset(&A, 0, sizeof(A));
	memset(&stk, 0, sizeof(stk));
	A.top = 20;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	argc = cli_skip_sidecars(argc, argv, first); /* a glob of dumps */
	nin = argc - first;
	if (nin < 2 || nin > 3)
		return cli_usage_error(&info, nin < 2 ?
					      "two or three dumps or stores, "
					      "please: BEFORE AFTER [LATER]" :
					      "at most three dumps or stores");
	for (k = 0; k < nin; k++)
		nstdin += strcmp(argv[first + k], "-") == 0;
	if (nstdin > 1)
		return cli_usage_error(&info, "only one input can be '-'");
	if ((rc = cli_parse_format(&info, A.format, 3, &fmt)) ||
	    (rc = cli_gate_prepare(&info, &G, HD_BUDGET_DIFF, 0, NULL)))
		return rc;
	if (A.sort && strcmp(A.sort, "memsize") == 0)
		sort = HD_SORT_MEMSIZE;
	else if (A.sort && strcmp(A.sort, "count") != 0)
		return cli_usage_error(&info, "unknown sort '%s'", A.sort);
	if (A.with_paths && !A.output)
		return cli_usage_error(&info, "--with-paths needs -o FILE");
	so.flags = HD_STATS_ALL; /* the diff already left them out */
	if (A.by && (!strcmp(A.by, "stack") || !strcmp(A.by, "frame"))) {
		by_stack = !strcmp(A.by, "stack") ? HD_STACKS_BY_STACK :
						    HD_STACKS_BY_FRAME;
		if ((rc = cli_parse_keys(&info, "class,location", &so)))
			return rc;
	} else if (A.by && (strstr(A.by, "stack") || strstr(A.by, "frame")))
		return cli_usage_error(&info, "--by stack and --by frame go "
					      "alone, without other keys");
	else if ((rc = cli_parse_keys(&info, A.by ? A.by : "class,location",
				      &so)))
		return rc;

	/* -o is written from AFTER or LATER: it may name none of the
	 * inputs, refused before any is read */
	for (k = 0; k < nin; k++)
		cli_input_register(argv[first + k]);
	if ((rc = cli_out_check(A.output)))
		return rc;
	for (k = 0; k < nin; k++) {
		cli_input_init(&in[k], argv[first + k], A.strict, A.quiet);
		/* read again for -o and for 4.0 object ids */
		if ((rc = cli_spool_stdin(&in[k])))
			goto out;
		if ((rc = cli_open_store(&in[k], &s[k])))
			goto out;
	}
	if ((rc = cli_check_order(s, in, (size_t)nin, A.force)))
		goto out;
	dopt.flags = (A.no_generation ? HD_DIFF_NO_GENERATION : 0) |
		     (A.all ? HD_DIFF_ALL : 0);
	dopt.read.flags = A.strict ? HD_READ_STRICT : 0;
	if ((rc = hd_diff(&d, s[0], s[1], s[2], &dopt, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}

	memset(&r, 0, sizeof(r));
	r.d = d;
	r.in = in;
	r.nin = nin;
	r.o = &so;
	r.what = d->has_later ? "retained" : "new";
	r.sort = sort == HD_SORT_MEMSIZE ? "memsize" : "count";
	cli_process_judge(&r.proc, s, in, (size_t)nin);
	/* with LATER, the retained objects as LATER has them */
	at = d->has_later ? 2 : 1;
	set = d->has_later ? &d->retained_later : &d->added;
	if (by_stack >= 0) {
		sto.by = by_stack;
		sto.sort = sort;
		sto.flags = HD_STATS_ALL; /* the diff already left them out */
		if ((rc = hd_stack_stats(&stk, s[at], set->ids, set->n, &sto,
					 &err))) {
			rc = cli_lib_error(&err);
			goto out;
		}
		r.stk = &stk;
		r.at = s[at];
	}
	if ((rc = hd_stats_new(&st, &so, &err)) ||
	    (rc = hd_stats_add_nodes(st, s[at], set, &err)) ||
	    (rc = hd_stats_finish(st, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	r.rows = hd_stats_rows(st, 0, sort, &r.nrows);
	r.shown = A.top && A.top < r.nrows ? (size_t)A.top : r.nrows;
	if (A.output) {
		r.written = 1;
		if ((rc = write_output(s[at], &in[at], set, &r.nwritten,
				       &r.unreached)))
			goto out;
	}
	if (fmt == FMT_TEXT)
		print_text(&r);
	else if (fmt == FMT_JSON)
		print_json(&r);
	else
		print_tsv(&r);
	if (G.b && (rc = hd_budget_eval_diff(&gate, G.b, s[at], d, &err)))
		rc = cli_lib_error(&err);
	else if (gate)
		rc = cli_gate_say(COMMAND_NAME, gate);
out:
	if (by_stack >= 0)
		hd_stack_rows_free(&stk);
	hd_budget_report_free(gate);
	hd_stats_free(st);
	hd_diff_result_free(d);
	for (k = 0; k < 3; k++)
		hd_store_close(s[k]);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	int rc = diff_run(argc, argv);

	cli_gate_free(&G);
	return rc;
}
