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

static int write_line(const void *buf, size_t n, void *payload)
{
	return fwrite(buf, 1, n, payload) == n ? 0 : HD_EIO;
}

static int write_records(const hd_store *s, const hd_interface *x,
			 struct cli_input *in, const char *after)
{
	struct cli_out o;
	hd_read_options ro = cli_input_read_options(in);
	hd_error err = { 0 };
	int rc;

	if ((rc = cli_out_open(&o, A.output, after)))
		return rc;
	errno = 0;
	rc = hd_interface_records(x, s, A.self_border ?
				  HD_INTERFACE_RECORDS_SELF : 0, &ro,
				  write_line, o.f, &err);
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
		return EXIT_FAIL;
	}
	return cli_out_commit(&o);
}

/* ---- the summary ---- */

/* Reference names shown per self-border holder. */
#define HOLDER_NAMES 3

/* The index of id on the diff border (sorted by id), or nb. */
static size_t border_index(const hd_border *b, size_t nb, hd_node_id id)
{
	size_t lo = 0, hi = nb;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nb && b[lo].id == id ? lo : nb;
}

static int on_border(const hd_border *b, size_t nb, hd_node_id id)
{
	return border_index(b, nb, id) < nb;
}

/*
 * The names under which the first HD_BORDER_HOLDERS holders of each
 * diff-border object hold it: held.k[i * HD_BORDER_HOLDERS + j] is the
 * index, among the references of border[i].holder[j], of the first one
 * to border[i].id that has a name (else of the first one, or UINT32_MAX).
 * Made in one pass over the references of the self border, so that the
 * summary costs O(references of the holders * log border) whatever -n.
 */
static struct held_names {
	const hd_border *b;
	size_t nb;
	uint32_t *k;
} held;

static int held_build(const hd_store *s, const hd_interface *x)
{
	const hd_nodes *self = hd_interface_self_border(x);
	hd_edge_iter it;
	hd_node_id t, h;
	size_t i, bi;
	uint32_t k, *slot;
	unsigned j;

	memset(&held, 0, sizeof(held));
	if (!hd_store_has_ref_names(s))
		return 0;
	held.b = hd_interface_diff_border(x, &held.nb);
	if (!(held.k = malloc((held.nb ? held.nb : 1) * HD_BORDER_HOLDERS *
			      sizeof(*held.k)))) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	memset(held.k, 0xff, (held.nb ? held.nb : 1) * HD_BORDER_HOLDERS *
				     sizeof(*held.k));
	for (i = 0; self && i < self->n; i++) {
		h = self->ids[i];
		hd_store_refs(s, h, &it);
		for (k = 0; hd_edge_iter_next(&it, &t) == 0; k++) {
			if ((bi = border_index(held.b, held.nb, t)) == held.nb)
				continue;
			for (j = 0; j < HD_BORDER_HOLDERS &&
				    j < held.b[bi].holders; j++) {
				if (held.b[bi].holder[j] != h)
					continue;
				slot = &held.k[bi * HD_BORDER_HOLDERS + j];
				if (*slot == UINT32_MAX ||
				    (!hd_store_ref_name_at(s, h, *slot, NULL,
							   NULL) &&
				     hd_store_ref_name_at(s, h, k, NULL, NULL)))
					*slot = k;
			}
		}
	}
	return 0;
}

/* The name under which r's j-th holder holds it, or NULL. */
static const char *held_name(const hd_store *s, const hd_border *r,
			     unsigned j, size_t *len, unsigned *flags)
{
	size_t bi;
	uint32_t k;

	if (flags)
		*flags = 0;
	if (!held.k || j >= HD_BORDER_HOLDERS || j >= r->holders ||
	    (bi = border_index(held.b, held.nb, r->id)) == held.nb ||
	    (k = held.k[bi * HD_BORDER_HOLDERS + j]) == UINT32_MAX)
		return NULL;
	return hd_store_ref_name_at(s, r->holder[j], k, len, flags);
}

static void held_free(void)
{
	free(held.k);
	memset(&held, 0, sizeof(held));
}

/*
 * The names of the references from the old holder h to diff-border
 * objects, in reference order: the first HOLDER_NAMES into names[] and
 * lens[]; returns how many references into the border have a name.
 */
static size_t holder_names(const hd_store *s, const hd_interface *x,
			   hd_node_id h, const char **names, size_t *lens)
{
	size_t nb, found = 0, len;
	const hd_border *b = hd_interface_diff_border(x, &nb);
	hd_edge_iter it;
	hd_node_id t;
	uint32_t k;
	const char *name;

	if (!hd_store_has_ref_names(s))
		return 0;
	hd_store_refs(s, h, &it);
	for (k = 0; hd_edge_iter_next(&it, &t) == 0; k++) {
		if (!on_border(b, nb, t) ||
		    !(name = hd_store_ref_name_at(s, h, k, &len, NULL)))
			continue;
		if (found < HOLDER_NAMES) {
			names[found] = name;
			lens[found] = len;
		}
		found++;
	}
	return found;
}

/* The first of a border object's holders that references it by a name,
 * or HD_NODE_NONE. */
/* The index of h among r's holders. */
static unsigned hold_index(const hd_border *r, hd_node_id h)
{
	unsigned j;

	for (j = 0; j < HD_BORDER_HOLDERS && r->holder[j] != h; j++)
		;
	return j;
}

static hd_node_id named_holder(const hd_store *s, const hd_border *r)
{
	unsigned j;

	for (j = 0; j < HD_BORDER_HOLDERS && j < r->holders; j++)
		if (held_name(s, r, j, NULL, NULL))
			return r->holder[j];
	return HD_NODE_NONE;
}

static void print_text(FILE *f, const hd_store *s, const hd_interface *x,
		       const hd_interface_ranking *rk, size_t shown,
		       size_t hshown)
{
	hd_interface_totals t;
	char name[256], a[32], c[32], d[32], e[32], g[32];
	size_t i;

	hd_interface_totals_get(&t, x);
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
			const hd_border_holder *h =
				hd_interface_ranking_holder(rk, i);

			const char *nm[HOLDER_NAMES];
			size_t nl[HOLDER_NAMES], nn, j;

			cli_class_name(s, h->id, name, sizeof(name));
			fprintf(f, "%10s %10s  0x%-16llx %s",
				cli_commas(h->held, a, sizeof(a)),
				cli_commas(h->keepalive, c, sizeof(c)),
				(unsigned long long)hd_store_address(s, h->id),
				name);
			/* the names under which it holds new objects */
			nn = holder_names(s, x, h->id, nm, nl);
			for (j = 0; j < nn && j < HOLDER_NAMES; j++) {
				fputs(j ? ", " : " via ", f);
				cli_text_string(f, nm[j], nl[j]);
			}
			if (nn > HOLDER_NAMES)
				fprintf(f, " (%s names)",
					cli_commas(nn, a, sizeof(a)));
			fputc('\n', f);
		}
	}
	if (!shown)
		return;
	fprintf(f, "\ndiff border (top %s of %s, by keepalive_count)\n",
		cli_commas(shown, a, sizeof(a)),
		cli_commas(t.diff_border, c, sizeof(c)));
	fprintf(f, "%10s %12s %10s %12s %7s  %-18s %s\n", "keepalive",
		"memsize", "retained", "memsize", "holders", "address",
		"class");
	for (i = 0; i < shown; i++) {
		const hd_border *r = hd_interface_ranking_border(rk, i);
		hd_node_id h = named_holder(s, r);

		cli_class_name(s, r->id, name, sizeof(name));
		fprintf(f, "%10s %12s %10s %12s %7s  0x%-16llx ",
			cli_commas(r->keepalive_count, a, sizeof(a)),
			cli_commas(r->keepalive_memsize, c, sizeof(c)),
			cli_commas(r->retained_count, d, sizeof(d)),
			cli_commas(r->retained_memsize, e, sizeof(e)),
			cli_commas(r->holders, g, sizeof(g)),
			(unsigned long long)hd_store_address(s, r->id));
		if (h != HD_NODE_NONE) {
			/* the hop from a holder: "Hash ["user_42"] -> " */
			size_t n;
			const char *nm = held_name(s, r, hold_index(r, h), &n,
						   NULL);

			cli_node_class(s, h, name, sizeof(name));
			fprintf(f, "%s ", name);
			cli_text_string(f, nm, n);
			fputs(" -> ", f);
			cli_class_name(s, r->id, name, sizeof(name));
		}
		fprintf(f, "%s\n", name);
	}
}

static void json_class(FILE *f, const hd_store *s, hd_node_id id)
{
	char name[256];
	size_t n = hd_store_class_name(name, sizeof(name), s, id);

	cli_json_string(f, name, n < sizeof(name) ? n : sizeof(name) - 1);
}

static void print_json(FILE *f, const hd_store *s, const hd_interface *x,
		       const hd_interface_ranking *rk, size_t shown,
		       size_t hshown)
{
	hd_interface_totals t;
	size_t i;
	unsigned k;

	hd_interface_totals_get(&t, x);
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
		const hd_border_holder *h = hd_interface_ranking_holder(rk, i);

		fprintf(f, "%s{\"address\":\"0x%llx\",\"class\":",
			i ? "," : "",
			(unsigned long long)hd_store_address(s, h->id));
		const char *nm[HOLDER_NAMES];
		size_t nl[HOLDER_NAMES], nn, j;

		json_class(f, s, h->id);
		fprintf(f, ",\"holds\":%llu,\"keepalive\":%llu",
			(unsigned long long)h->held,
			(unsigned long long)h->keepalive);
		if ((nn = holder_names(s, x, h->id, nm, nl))) {
			fputs(",\"via\":[", f);
			for (j = 0; j < nn && j < HOLDER_NAMES; j++) {
				fputs(j ? "," : "", f);
				cli_json_string(f, nm[j], nl[j]);
			}
			fprintf(f, "],\"via_count\":%zu", nn);
		}
		fputc('}', f);
	}
	fprintf(f, "],\"diff_border\":[");
	for (i = 0; i < shown; i++) {
		const hd_border *r = hd_interface_ranking_border(rk, i);

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
		fprintf(f, "]");
		if (named_holder(s, r) != HD_NODE_NONE) {
			/* parallel to held_by: the name of each holder's
			 * reference, or null */
			fprintf(f, ",\"held_as\":[");
			for (k = 0; k < HD_BORDER_HOLDERS && k < r->holders;
			     k++) {
				size_t n;
				unsigned fl = 0;
				const char *nm = held_name(s, r, k, &n, &fl);

				fputs(k ? "," : "", f);
				if (!nm) {
					fputs("null", f);
					continue;
				}
				fputs("{\"name\":", f);
				cli_json_string(f, nm, n);
				if (fl & HD_NAME_INFERRED)
					fputs(",\"inferred\":true", f);
				fputc('}', f);
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fprintf(f, "]}\n");
}

static int summary(FILE *f, const hd_store *s, const hd_interface *x,
		   int json)
{
	hd_interface_ranking *rk = NULL;
	hd_interface_totals t;
	hd_error err = { 0 };
	size_t shown, hshown;

	if (hd_interface_rank(&rk, x, s, &err))
		return cli_lib_error(&err);
	if (held_build(s, x)) {
		hd_interface_ranking_free(rk);
		return EXIT_FAIL;
	}
	hd_interface_totals_get(&t, x);
	shown = A.top && A.top < t.diff_border ? (size_t)A.top :
						 (size_t)t.diff_border;
	hshown = A.top && A.top < t.self_border ? (size_t)A.top :
						  (size_t)t.self_border;
	if (json)
		print_json(f, s, x, rk, shown, hshown);
	else
		print_text(f, s, x, rk, shown, hshown);
	held_free();
	hd_interface_ranking_free(rk);
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
	if ((rc = cli_parse_format(&info, A.format, 2, &json)))
		return rc;
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
		if ((rc = hd_diff_follow(&alive, s[0], s[1], &diff, &dopt,
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
