/*
 * cmd_interface_with.c - heapdump interface-with: the border between the
 * old objects of a dump and the new ones (memdump's interface_with). The
 * new objects come from a DIFF file (any NDJSON with addresses: the
 * output of `heapdump diff`) and/or the selection options.
 *
 * Output: the records of the diff border, byte for byte from the dump
 * with the counts added before their closing '}', optionally the
 * self-border records; and a summary sorted by keepalive_count, on
 * stderr, or on stdout with --summary.
 *
 * With --later LATER, the new objects are those of them still alive in
 * LATER (hd_diff from AFTER to LATER), taken as LATER holds them: the
 * border, the counts and the records are LATER's.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"
#include "order.h"
#include "select_opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "interface-with"

struct iw_args {
	struct cli_select sel;
	const char *output;
	const char *format;
	const char *later;
	unsigned long long top;
	int self_border, summary, force, strict, quiet;
};

static struct iw_args A;

static const struct cli_opt opts[] = {
	OPT_STRING('o', "output", "FILE",
		   &A.output, "write the records to FILE (atomically)"),
	OPT_FLAG(0, "self-border", &A.self_border,
		 "also write the old objects holding new ones, with "
		 "\"border\":\"self\""),
	OPT_FLAG(0, "summary", &A.summary,
		 "print the summary on stdout (records only with -o)"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "summary as text (default) or json"),
	OPT_UINT('n', "top", "N", &A.top,
		 "rows of the summary (default 20, 0: all)"),
	OPT_STRING(0, "later", "LATER", &A.later,
		   "only the new objects still alive in LATER (a later dump "
		   "or store), as LATER holds them"),
	OPT_FLAG(0, "force", &A.force,
		 "with --later: compare dumps that seem to be in the wrong "
		 "order"),
	CLI_SELECT_OPTS(&A.sel),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] AFTER [DIFF]",
	"The border between old and new objects of AFTER (a dump or store):\n"
	"the new objects (those of DIFF, an NDJSON file such as the output of\n"
	"'heapdump diff', and/or the selection options) that old objects hold,\n"
	"with how many new objects each keeps alive and retains.",
	opts
};

/* ---- the records ---- */

struct emit {
	const hd_store *s;
	const hd_border *border;
	size_t nborder;
	const hd_nodes *self;
	FILE *f;
	char *buf;
	size_t len, cap;
	uint64_t written;
};

static int buf_put(const void *p, size_t n, void *payload)
{
	struct emit *e = payload;

	if (e->len + n + 1 > e->cap) {
		size_t cap = e->cap ? e->cap : 4096;
		char *nb;

		while (cap < e->len + n + 1)
			cap *= 2;
		if (!(nb = realloc(e->buf, cap)))
			return HD_ENOMEM;
		e->buf = nb;
		e->cap = cap;
	}
	memcpy(e->buf + e->len, p, n);
	e->len += n;
	return 0;
}

static const hd_border *find_border(const struct emit *e, hd_node_id id)
{
	size_t lo = 0, hi = e->nborder;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->border[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->nborder && e->border[lo].id == id ? &e->border[lo] :
							    NULL;
}

/* The extra members of a diff-border record, starting with ", ". */
static int border_fields(struct emit *e, const hd_border *b)
{
	char tmp[256];
	unsigned i;
	int n;

	n = snprintf(tmp, sizeof(tmp),
		     ", \"keepalive_count\":%llu, \"keepalive_memsize\":%llu, "
		     "\"retained_count\":%llu, \"retained_memsize\":%llu, "
		     "\"holders\":%u, \"held_by\":[",
		     (unsigned long long)b->keepalive_count,
		     (unsigned long long)b->keepalive_memsize,
		     (unsigned long long)b->retained_count,
		     (unsigned long long)b->retained_memsize, b->holders);
	if (buf_put(tmp, (size_t)n, e))
		return HD_ENOMEM;
	for (i = 0; i < HD_BORDER_HOLDERS && i < b->holders; i++) {
		n = snprintf(tmp, sizeof(tmp), "%s\"0x%llx\"", i ? ", " : "",
			     (unsigned long long)hd_store_address(e->s,
								  b->holder[i]));
		if (buf_put(tmp, (size_t)n, e))
			return HD_ENOMEM;
	}
	if (buf_put("]", 1, e))
		return HD_ENOMEM;
	if (b->roots) {
		n = snprintf(tmp, sizeof(tmp), ", \"roots\":%u", b->roots);
		if (buf_put(tmp, (size_t)n, e))
			return HD_ENOMEM;
	}
	return 0;
}

/*
 * Writes the record as valid NDJSON (hd_record_write) into the buffer,
 * then moves its final '}' after the added members.
 */
static int on_record(const hd_record *rec, hd_node_id id, void *payload)
{
	struct emit *e = payload;
	const hd_border *b = find_border(e, id);
	size_t close;
	int rc;

	e->len = 0;
	if ((rc = hd_record_write(rec, e->s, NULL, buf_put, e)))
		return rc;
	close = e->len;
	while (close > 0 && e->buf[close - 1] != '}')
		close--;
	if (!close)
		return 0; /* not an object: cannot happen for a record */
	e->len = close - 1;
	if (b)
		rc = border_fields(e, b);
	else
		rc = buf_put(", \"border\":\"self\"", 17, e);
	if (rc || (rc = buf_put("}\n", 2, e)))
		return rc;
	if (fwrite(e->buf, 1, e->len, e->f) != e->len)
		return HD_EIO;
	e->written++;
	return 0;
}

/* The union of the diff border and (with --self-border) the self border. */
static int record_set(const hd_interface *x, hd_nodes *out)
{
	const hd_nodes *self = hd_interface_self_border(x);
	const hd_border *b;
	size_t nb, i = 0, j = 0, ns = A.self_border ? self->n : 0;

	b = hd_interface_diff_border(x, &nb);
	memset(out, 0, sizeof(*out));
	out->ids = malloc((nb + ns + 1) * sizeof(*out->ids));
	if (!out->ids)
		return -1;
	out->cap = nb + ns + 1;
	while (i < nb || j < ns) {
		if (j >= ns || (i < nb && b[i].id < self->ids[j]))
			out->ids[out->n++] = b[i++].id;
		else
			out->ids[out->n++] = self->ids[j++];
	}
	return 0;
}

static int write_records(const hd_store *s, const hd_interface *x,
			 struct cli_input *in, const char *after)
{
	struct emit e;
	struct cli_out o;
	hd_nodes set;
	hd_read_options ro = cli_input_read_options(in);
	hd_error err = { 0 };
	int rc;

	memset(&e, 0, sizeof(e));
	e.s = s;
	e.border = hd_interface_diff_border(x, &e.nborder);
	e.self = hd_interface_self_border(x);
	if (record_set(x, &set)) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	if ((rc = cli_out_open(&o, A.output, after)))
		goto out;
	e.f = o.f;
	errno = 0;
	rc = hd_store_records(s, NULL, &set, &ro, on_record, &e, &err);
	if (rc) {
		int sys = errno ? errno : EIO; /* of the failed write */

		cli_out_abort(&o);
		if (rc == HD_EIO && !err.msg[0])
			cli_error("cannot write '%s': %s",
				  A.output ? A.output : "standard output",
				  strerror(sys));
		else if (rc == HD_ENOMEM && !err.msg[0])
			cli_error("out of memory");
		else
			cli_lib_error(&err);
		rc = EXIT_FAIL;
		goto out;
	}
	rc = cli_out_commit(&o);
out:
	free(set.ids);
	free(e.buf);
	return rc;
}

/* ---- the summary ---- */

static const hd_border *sort_base;

static int cmp_rows(const void *a, const void *b)
{
	const hd_border *x = &sort_base[*(const size_t *)a];
	const hd_border *y = &sort_base[*(const size_t *)b];

	if (x->keepalive_count != y->keepalive_count)
		return x->keepalive_count < y->keepalive_count ? 1 : -1;
	if (x->retained_count != y->retained_count)
		return x->retained_count < y->retained_count ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* What each self-border object holds: border objects and their
 * keepalive sum (shared objects counted for each). */
struct holder_row {
	hd_node_id id;
	uint64_t held, keepalive;
};

static int cmp_holders(const void *a, const void *b)
{
	const struct holder_row *x = a, *y = b;

	if (x->keepalive != y->keepalive)
		return x->keepalive < y->keepalive ? 1 : -1;
	if (x->held != y->held)
		return x->held < y->held ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static struct holder_row *holder_rows(const hd_store *s,
				      const hd_interface *x)
{
	const hd_nodes *self = hd_interface_self_border(x);
	struct emit e;
	struct holder_row *r = calloc(self->n + 1, sizeof(*r));
	size_t i, *seen;

	memset(&e, 0, sizeof(e));
	e.border = hd_interface_diff_border(x, &e.nborder);
	seen = calloc(e.nborder + 1, sizeof(*seen));
	if (!r || !seen) {
		free(r);
		free(seen);
		return NULL;
	}
	for (i = 0; i < self->n; i++) {
		hd_edge_iter it;
		hd_node_id t;

		r[i].id = self->ids[i];
		hd_store_refs(s, self->ids[i], &it);
		while (hd_edge_iter_next(&it, &t) == 0) {
			const hd_border *b = find_border(&e, t);

			if (!b || seen[b - e.border] == i + 1)
				continue; /* a repeated reference counts once */
			seen[b - e.border] = i + 1;
			r[i].held++;
			r[i].keepalive += b->keepalive_count;
		}
	}
	free(seen);
	qsort(r, self->n, sizeof(*r), cmp_holders);
	return r;
}

static void print_text(FILE *f, const hd_store *s, const hd_interface *x,
		       const size_t *rows, size_t shown,
		       const struct holder_row *hr, size_t hshown)
{
	const hd_border *b;
	hd_interface_totals t;
	char name[256], a[32], c[32], d[32], e[32], g[32];
	size_t nb, i;

	b = hd_interface_diff_border(x, &nb);
	hd_interface_totals_get(x, &t);
	fprintf(f, "%-12s %s objects, %s%s\n", "new",
		cli_commas(t.diff, a, sizeof(a)),
		cli_human_bytes(t.diff_memsize, c, sizeof(c)),
		cli_saturated(t.memsize_saturated));
	fprintf(f, "%-12s %s old objects hold new ones\n", "self border",
		cli_commas(t.self_border, a, sizeof(a)));
	fprintf(f, "%-12s %s new objects held by old ones or roots\n",
		"diff border", cli_commas(t.diff_border, a, sizeof(a)));
	fprintf(f, "%-12s %s new objects, %s (the rest: no old object "
		   "reaches them)\n", "reachable",
		cli_commas(t.reached, a, sizeof(a)),
		cli_human_bytes(t.reached_memsize, c, sizeof(c)));
	if (hshown) {
		fprintf(f, "\nself border (top %s of %s, by keepalive)\n",
			cli_commas(hshown, a, sizeof(a)),
			cli_commas(t.self_border, c, sizeof(c)));
		fprintf(f, "%10s %10s  %-18s %s\n", "holds", "keepalive",
			"address", "class");
		for (i = 0; i < hshown; i++) {
			cli_class_name(s, hr[i].id, name, sizeof(name));
			fprintf(f, "%10s %10s  0x%-16llx %s\n",
				cli_commas(hr[i].held, a, sizeof(a)),
				cli_commas(hr[i].keepalive, c, sizeof(c)),
				(unsigned long long)hd_store_address(s,
								     hr[i].id),
				name);
		}
	}
	if (!shown)
		return;
	fprintf(f, "\ndiff border (top %s of %s, by keepalive_count)\n",
		cli_commas(shown, a, sizeof(a)), cli_commas(nb, c, sizeof(c)));
	fprintf(f, "%10s %12s %10s %12s %7s  %-18s %s\n", "keepalive",
		"memsize", "retained", "memsize", "holders", "address",
		"class");
	for (i = 0; i < shown; i++) {
		const hd_border *r = &b[rows[i]];

		cli_class_name(s, r->id, name, sizeof(name));
		fprintf(f, "%10s %12s %10s %12s %7s  0x%-16llx %s\n",
			cli_commas(r->keepalive_count, a, sizeof(a)),
			cli_commas(r->keepalive_memsize, c, sizeof(c)),
			cli_commas(r->retained_count, d, sizeof(d)),
			cli_commas(r->retained_memsize, e, sizeof(e)),
			cli_commas(r->holders, g, sizeof(g)),
			(unsigned long long)hd_store_address(s, r->id), name);
	}
}

static void json_class(FILE *f, const hd_store *s, hd_node_id id)
{
	char name[256];
	size_t n = hd_store_class_name(s, id, name, sizeof(name));

	cli_json_string(f, name, n < sizeof(name) ? n : sizeof(name) - 1);
}

static void print_json(FILE *f, const hd_store *s, const hd_interface *x,
		       const size_t *rows, size_t shown,
		       const struct holder_row *hr, size_t hshown)
{
	const hd_border *b;
	hd_interface_totals t;
	size_t nb, i;
	unsigned k;

	b = hd_interface_diff_border(x, &nb);
	hd_interface_totals_get(x, &t);
	fprintf(f, "{\"totals\":{\"diff\":%llu,\"diff_memsize\":%llu,"
		   "\"self_border\":%llu,\"diff_border\":%llu,"
		   "\"reached\":%llu,\"reached_memsize\":%llu,"
		   "\"components\":%llu,\"memsize_saturated\":%s},"
		   "\"self_border\":[",
		(unsigned long long)t.diff, (unsigned long long)t.diff_memsize,
		(unsigned long long)t.self_border,
		(unsigned long long)t.diff_border,
		(unsigned long long)t.reached,
		(unsigned long long)t.reached_memsize,
		(unsigned long long)t.components,
		t.memsize_saturated ? "true" : "false");
	for (i = 0; i < hshown; i++) {
		fprintf(f, "%s{\"address\":\"0x%llx\",\"class\":",
			i ? "," : "",
			(unsigned long long)hd_store_address(s, hr[i].id));
		json_class(f, s, hr[i].id);
		fprintf(f, ",\"holds\":%llu,\"keepalive\":%llu}",
			(unsigned long long)hr[i].held,
			(unsigned long long)hr[i].keepalive);
	}
	fprintf(f, "],\"diff_border\":[");
	for (i = 0; i < shown; i++) {
		const hd_border *r = &b[rows[i]];

		fprintf(f, "%s{\"address\":\"0x%llx\",\"class\":", i ? "," : "",
			(unsigned long long)hd_store_address(s, r->id));
		json_class(f, s, r->id);
		fprintf(f, ",\"keepalive_count\":%llu,\"keepalive_memsize\":%llu,"
			   "\"retained_count\":%llu,\"retained_memsize\":%llu,"
			   "\"holders\":%u,\"roots\":%u,\"held_by\":[",
			(unsigned long long)r->keepalive_count,
			(unsigned long long)r->keepalive_memsize,
			(unsigned long long)r->retained_count,
			(unsigned long long)r->retained_memsize, r->holders,
			r->roots);
		for (k = 0; k < HD_BORDER_HOLDERS && k < r->holders; k++)
			fprintf(f, "%s\"0x%llx\"", k ? "," : "",
				(unsigned long long)hd_store_address(
					s, r->holder[k]));
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
}

static int summary(FILE *f, const hd_store *s, const hd_interface *x,
		   int json)
{
	const hd_border *b;
	struct holder_row *hr;
	size_t nb, *rows, i, shown, hshown;
	const hd_nodes *self = hd_interface_self_border(x);

	b = hd_interface_diff_border(x, &nb);
	rows = malloc((nb + 1) * sizeof(*rows));
	hr = holder_rows(s, x);
	if (!rows || !hr) {
		free(rows);
		free(hr);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	for (i = 0; i < nb; i++)
		rows[i] = i;
	sort_base = b;
	qsort(rows, nb, sizeof(*rows), cmp_rows);
	shown = A.top && A.top < nb ? (size_t)A.top : nb;
	hshown = A.top && A.top < self->n ? (size_t)A.top : self->n;
	if (json)
		print_json(f, s, x, rows, shown, hr, hshown);
	else
		print_text(f, s, x, rows, shown, hr, hshown);
	free(rows);
	free(hr);
	return 0;
}

/* ---- the command ---- */

int cmd_interface_with(int argc, char **argv)
{
	struct cli_input in[2];
	hd_store *s[2] = { NULL, NULL }, *g;
	hd_interface *x = NULL;
	hd_nodes diff = { NULL, 0, 0 }, alive = { NULL, 0, 0 };
	const hd_nodes *set = &diff;
	hd_diff_options dopt = HD_DIFF_OPTIONS_INIT;
	hd_error err = { 0 };
	const char *after;
	int rc, first, json = 0, k, nin;

	memset(&A, 0, sizeof(A));
	A.top = 20;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (argc - first < 1 || argc - first > 2)
		return cli_usage_error(&info, argc - first ?
					      "one dump or store and at most one "
					      "DIFF, please" :
					      "which dump or store?");
	if (argc - first == 1 && A.sel.n == 0)
		return cli_usage_error(&info, "which objects are new? give a "
					      "DIFF file or selection options");
	if (A.format && strcmp(A.format, "json") == 0)
		json = 1;
	else if (A.format && strcmp(A.format, "text") != 0)
		return cli_usage_error(&info, "unknown format '%s'", A.format);
	if (A.later && !*A.later)
		return cli_usage_error(&info, "--later needs a dump or store");
	if (A.force && !A.later)
		return cli_usage_error(&info, "--force goes with --later");
	after = argv[first];
	if (argc - first == 2) {
		if (strcmp(after, "-") == 0 && strcmp(argv[first + 1], "-") == 0)
			return cli_usage_error(&info, "AFTER and DIFF cannot "
						      "both be standard input");
		if (cli_select_from(argv[first + 1], &A.sel))
			return cli_usage_error(&info, "too many selection "
						      "options");
	}
	if (A.later && strcmp(A.later, "-") == 0 &&
	    (strcmp(after, "-") == 0 ||
	     (argc - first == 2 && strcmp(argv[first + 1], "-") == 0)))
		return cli_usage_error(&info, "only one input can be '-'");
	cli_input_register(A.later);
	if ((rc = cli_out_check(A.output)))
		return rc;

	if ((rc = cli_select_compile(&A.sel)))
		return rc;
	nin = A.later ? 2 : 1;
	for (k = 0; k < nin; k++) {
		cli_input_init(&in[k], k ? A.later : after, A.strict, A.quiet);
		if ((rc = cli_spool_stdin(&in[k])) ||
		    (rc = cli_open_store(&in[k], &s[k])))
			goto out;
	}
	if (A.later && (rc = cli_check_order(s, in, 2, A.force)))
		goto out;
	if (argc - first == 2 && A.sel.n == 1 &&
	    !hd_select_address_count(A.sel.compiled)) {
		/* an empty DIFF: diff -o found nothing new; DIFF's addresses
		 * naming no object of AFTER fail in cli_select_nodes */
		cli_select_free(&A.sel);
		if (!A.quiet)
			cli_error("%s: DIFF is empty: no object is new",
				  argv[first + 1]);
	} else if ((rc = cli_select_nodes(&A.sel, s[0], in[0].name, A.quiet,
					   &diff))) {
		goto out;
	}
	if (A.later) {
		/* the new objects still alive in LATER, as LATER has them */
		dopt.read.flags = A.strict ? HD_READ_STRICT : 0;
		if ((rc = hd_diff_follow(s[0], s[1], &diff, &dopt, &alive,
					 &err))) {
			rc = cli_lib_error(&err);
			goto out;
		}
		set = &alive;
	}
	g = s[nin - 1];
	if ((rc = hd_interface_with(&x, g, set, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (!A.summary || A.output) {
		if ((rc = write_records(g, x, &in[nin - 1], after)))
			goto out;
	}
	rc = summary(A.summary ? stdout : stderr, g, x, json);
out:
	cli_select_free(&A.sel);
	hd_interface_free(x);
	hd_nodes_free(&diff);
	hd_nodes_free(&alive);
	for (k = 0; k < 2; k++)
		hd_store_close(s[k]);
	return rc;
}
