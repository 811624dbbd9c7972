/*
 * cmd_leaks.c - heapdump leaks: the leak workflow in one report, printed.
 *
 * The dumps are checked to be in order, of one process (cli_check_order),
 * then diffed (hd_diff: the objects new in AFTER since BEFORE; with LATER
 * those of them still alive in LATER, as LATER has them); the library's
 * leak model (hd_leaks_build) groups the border of the leak by holder,
 * ranks the suspects, folds those under --min-share and describes the
 * first --top (retention path, classes, allocation sites). This file
 * only prints it: a text report, --format json or tsv, and --svg DIR for
 * a picture of each suspect (its path and border objects, drawn by
 * cli_render_dot).
 *
 * The report is kept (issue 40): text, json and tsv are printed into
 * memory and kept beside the examined dump or store (or in the cache
 * directory) by hd_leak_keep_write_what, keyed by the session (dumps'
 * identities, options, order, process) and by what else the bytes
 * depend on (format, --top, --sites, the names printed); a run with the
 * same key prints the kept bytes without hunting. --svg, budgets, junit,
 * standard input and --no-cache hunt every time.
 */
#include "cmd.h"
#include "common.h"
#include "draw.h"
#include "gate.h"
#include "opt.h"
#include "order.h"
#include "process.h"
#include "sidecar.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define COMMAND_NAME "leaks"

/* border objects drawn per suspect with --svg */
#define SVG_BORDER 12

/* the default --min-share, in percent */
#define MIN_SHARE_DEFAULT 1.0

static struct leaks_args {
	const char *format, *svg;
	unsigned long long top, sites, min_leak;
	double min_share; /* percent */
	int strict, quiet, no_generation, skip_weak, force, no_cache;
	struct cli_render_limits lim;
} A;

/* --fail-on, --budgets: the CI gate (gate.h) */
static struct cli_gate G;

static const struct cli_opt opts[] = {
	OPT_UINT('n', "top", "N", &A.top, "suspects to report (default 5)"),
	OPT_CALLBACK(0, "min-share", "PCT", &A.min_share, cli_parse_share,
		     "fold the groups under PCT% of the leak into one line "
		     "(default 1; 0 shows every group)"),
	OPT_UINT(0, "min-leak", "BYTES", &A.min_leak,
		 "no significant leak under BYTES leaked (default 2048)"),
	OPT_UINT(0, "sites", "N", &A.sites,
		 "allocation sites per suspect (default 5)"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json (one document), tsv or junit "
		   "(the budgets as JUnit XML)"),
	OPT_STRING(0, "svg", "DIR", &A.svg,
		   "draw each suspect's retention graph as DIR/suspect-N.svg"),
	CLI_RENDER_LIMIT_OPTS(&A.lim.max_nodes, &A.lim.max_edges),
	OPT_FLAG(0, "no-generation", &A.no_generation,
		 "identify objects by address and fingerprint even in traced "
		 "dumps (see heapdump-diff)"),
	OPT_FLAG(0, "skip-weak", &A.skip_weak,
		 "weak references (WeakMap, WeakRef) hold nothing: "
		 "no holder, no path through them"),
	OPT_FLAG(0, "force", &A.force,
		 "compare dumps that seem to be in the wrong order"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_FLAG(0, "no-cache", &A.no_cache,
		 "hunt again: neither read nor keep the report"),
	CLI_GATE_OPTS(&G),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] BEFORE AFTER [STEP...] [LATER]",
	"Find what leaks between dumps: the new objects of AFTER (with LATER,\n"
	"those still alive in LATER, as LATER holds them), grouped by the old\n"
	"objects that hold them; the few holders with the most growth, each\n"
	"with its retention path from a GC root, the classes it holds and\n"
	"their allocation sites.",
	opts
};

/* dumps a hunt may take: BEFORE AFTER [STEP...] LATER */
#define MAX_DUMPS 16

struct report {
	hd_store *s[MAX_DUMPS];
	struct cli_input in[MAX_DUMPS];
	hd_leak_session *ls; /* the hunt; what follows is borrowed */
	const hd_growth *g;  /* with three dumps or more */
	int nin;
	int at;              /* the dump whose graph is examined: AFTER or
				LATER */
	const hd_diff_result *d;
	const hd_leaks *l;
	hd_leaks_totals t;
};

/* the process growth of the sidecars, said before anything else */
static hd_process_verdict proc;

/* where the report goes: stdout, or memory while it is to be kept */
static FILE *rep;

/* ---- the report ---- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void text_node(const hd_store *s, hd_node_id v)
{
	char cls[256];
	hd_site site;

	cli_node_class(s, v, cls, sizeof(cls));
	fprintf(rep, "0x%llx %s", (unsigned long long)hd_store_address(s, v),
		cls);
	if (cli_type_adds(s, v, cls))
		fprintf(rep, " (%s)", hd_type_name(hd_store_type(s, v)));
	if (hd_store_site(&site, s, v) == 0 && site.file) {
		fputs(", ", rep);
		cli_site_text(rep, &site, 0);
	}
}

/* One node of a path on a line of its own (cli_path_lines). */
static void path_line(const hd_store *s, hd_node_id v, size_t k,
		      void *payload)
{
	(void)k;
	(void)payload;
	fprintf(rep, "    ");
	text_node(s, v);
	fputc('\n', rep);
}

/*
 * With a name on the last hop of the path to v (the suspect's holder, or
 * its first border object), that hop and an arrow: "LeakyCache ::CACHE
 * -> " (a root category's: "global_tbl $CACHE -> "), else nothing.
 */
static void text_held_as(const hd_store *s, const hd_root_path *p,
			 hd_node_id v)
{
	if (!p || !p->n || p->nodes[p->n - 1] != v ||
	    !hd_store_has_ref_names(s))
		return;
	if (p->n >= 2) {
		if (!hd_store_ref_name(s, p->nodes[p->n - 2], v, NULL, NULL))
			return;
		cli_hop_text(rep, s, p->nodes[p->n - 2], v);
	} else {
		if (!hd_store_root_ref_name(s, p->root, v, NULL))
			return;
		cli_root_text(rep, s, p->root, v);
	}
	fputs(" -> ", rep);
}

static void text_rows(hd_stats *st, size_t max, const char *indent,
		      int with_mem)
{
	size_t n, i;
	const hd_stats_row *rows = hd_stats_rows(st, 0, HD_SORT_MEMSIZE, &n);
	char a[32], b[32];

	for (i = 0; i < n && i < max; i++) {
		fprintf(rep, "%s%9s", indent,
			cli_commas(rows[i].count, a, sizeof(a)));
		if (with_mem)
			fprintf(rep, " %10s",
				cli_human_bytes(rows[i].memsize, b, sizeof(b)));
		fputs("  ", rep);
		cli_text_string(rep, rows[i].key[0], rows[i].key_len[0]);
		if (rows[i].key[1]) {
			fputs("  ", rep);
			cli_text_string(rep, rows[i].key[1],
					rows[i].key_len[1]);
		}
		fputc('\n', rep);
	}
	if (n > max)
		fprintf(rep, "%s(%s more)\n", indent,
			cli_commas(n - max, a, sizeof(a)));
}

/* A suspect's allocation stacks (a dump traced with stacks: true): the
 * first --sites of what it keeps alive, by memsize, innermost frame
 * first, indented under the suspect. */
static void text_stacks(const hd_store *s, const hd_stack_rows *r)
{
	char a[32], b[32];
	size_t i, k, n, shown = A.sites && A.sites < r->nrows ?
					(size_t)A.sites :
					r->nrows;

	fprintf(rep,
		"  allocation stacks of what it keeps alive (%s of %s "
		"objects have one):\n",
		cli_commas(r->with, a, sizeof(a)),
		cli_commas(r->with + r->without, b, sizeof(b)));
	for (i = 0; i < shown; i++) {
		const hd_stack_row *row = &r->rows[i];
		const uint32_t *f;
		char buf[1024];
		hd_frame fr;

		n = hd_store_stack_frames(s, row->id, &f);
		fprintf(rep, "    %12s %10s  ",
			cli_commas(row->count, a, sizeof(a)),
			cli_human_bytes(row->memsize, b, sizeof(b)));
		for (k = n; k-- > 0;) {
			size_t len;

			if (k + 1 < n)
				fprintf(rep, "%30s<- ", "");
			hd_store_frame(&fr, s, hd_store_stack_frame(s, row->id, k));
			len = hd_frame_text(buf, sizeof(buf), &fr);
			cli_text_string(rep, buf,
					len < sizeof(buf) ? len :
							    sizeof(buf) - 1);
			fputc('\n', rep);
		}
		if (!n)
			fprintf(rep, "(empty stack)\n");
	}
}

static void tsv_str(const char *p);

/* ---- clusters of suspects held the same way ---- */

/* "2, 3, 4" (ranks from 1), the first RANKS_SHOWN of them */
#define RANKS_SHOWN 10

static void text_clusters(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	size_t n = hd_leaks_cluster_count(r->l), i, k;
	size_t shown = n < A.top ? n : (size_t)A.top;
	char a[32], b[32], c[32];

	for (i = 0; i < shown; i++) {
		const hd_leaks_cluster *cl = hd_leaks_cluster_get(r->l, i);

		fprintf(rep,
			"\ncluster %zu: %s suspect%s that retain%s %s objects, "
			"%s (%.1f%% of the %s)\n",
			i + 1, cli_commas(cl->suspects, a, sizeof(a)),
			cl->suspects == 1 ? "" : "s",
			cl->suspects == 1 ? "s" : "",
			cli_commas(cl->retained_count, b, sizeof(b)),
			cli_human_bytes(cl->retained_memsize, c, sizeof(c)),
			pct(cl->retained_memsize, r->t.leak_memsize),
			r->d->has_later ? "leak" : "growth");
		fputs("  suspects ", rep);
		for (k = 0; k < cl->suspects && k < RANKS_SHOWN; k++)
			fprintf(rep, "%s%zu", k ? ", " : "", cl->ranks[k] + 1);
		if (cl->suspects > RANKS_SHOWN)
			fprintf(rep, " and %s more",
				cli_commas(cl->suspects - RANKS_SHOWN, a,
					   sizeof(a)));
		fputc('\n', rep);
		if (!cl->reached || !cl->path) {
			fprintf(rep,
				"  no GC root reaches them (a partial dump?)\n");
			continue;
		}
		fputs("  shape ", rep);
		cli_text_path(rep, cl->shape, strlen(cl->shape));
		fprintf(rep, "\n  path of suspect %zu:\n", cl->ranks[0] + 1);
		cli_path_lines(rep, s, cl->path->nodes, cl->path->n, "    ",
			       path_line, NULL);
	}
	if (n > shown)
		fprintf(rep, "\n(%s more clusters: --top N shows more)\n",
			cli_commas(n - shown, c, sizeof(c)));
}

static void json_clusters(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	size_t n = hd_leaks_cluster_count(r->l), i;
	size_t shown = n < A.top ? n : (size_t)A.top;
	hd_leak_json_options jo = HD_LEAK_JSON_OPTIONS_INIT;

	fprintf(rep, ",\"clusters_total\":%zu,\"clusters\":[", n);
	for (i = 0; i < shown; i++) {
		const hd_leaks_cluster *cl = hd_leaks_cluster_get(r->l, i);

		fprintf(rep, "%s{", i ? "," : "");
		hd_leaks_cluster_json_fields(rep, s, r->l, i, &jo);
		fprintf(rep, ",\"path\":");
		if (cl->reached && cl->path)
			hd_path_json(rep, s, cl->path, &jo);
		else
			fprintf(rep, "null");
		fputc('}', rep);
	}
	fputc(']', rep);
}

/*
 * cluster, rank, suspects, their ranks ("2,3,4"), border_count,
 * retained_count, retained_memsize, share, shape (or "-")
 */
static void tsv_clusters(const struct report *r)
{
	size_t n = hd_leaks_cluster_count(r->l), i, k;
	size_t shown = n < A.top ? n : (size_t)A.top;

	fprintf(rep, "total\tclusters\t%zu\n", n);
	for (i = 0; i < shown; i++) {
		const hd_leaks_cluster *cl = hd_leaks_cluster_get(r->l, i);

		fprintf(rep, "cluster\t%zu\t%zu\t", i + 1, cl->suspects);
		for (k = 0; k < cl->suspects; k++)
			fprintf(rep, "%s%zu", k ? "," : "", cl->ranks[k] + 1);
		fprintf(rep, "\t%llu\t%llu\t%llu\t%.4f\t",
			(unsigned long long)cl->border_count,
			(unsigned long long)cl->retained_count,
			(unsigned long long)cl->retained_memsize,
			pct(cl->retained_memsize, r->t.leak_memsize) / 100.0);
		if (cl->shape)
			cli_text_path(rep, cl->shape, strlen(cl->shape));
		else
			fputc('-', rep);
		fputc('\n', rep);
	}
}

/* "before", "after", "step 3", ..., "later" */
static const char *side_name(const struct report *r, size_t k, char *buf,
			     size_t size)
{
	if (k == 0)
		return "before";
	if (k == 1)
		return "after";
	if (k + 1 == (size_t)r->nin)
		return "later";
	snprintf(buf, size, "step %zu", k + 1);
	return buf;
}

/* How many growing collections the text and TSV list */
#define GROWING_SHOWN 5

/* The collections growing at every step (three dumps or more). */
static void text_growth(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	size_t n = hd_growth_count(r->g), i, k;
	char a[32], b[32];

	if (!r->g)
		return;
	fprintf(rep,
		"%-9s %s collection%s grow%s at every step of the %d dumps "
		"(of %s Hashes, Arrays and Sets of later)\n",
		"growing", cli_commas(n, a, sizeof(a)), n == 1 ? "" : "s",
		n == 1 ? "s" : "", r->nin,
		cli_commas(hd_growth_examined(r->g), b, sizeof(b)));
	for (i = 0; i < n && i < GROWING_SHOWN; i++) {
		const hd_growing *x = hd_growth_get(r->g, i);

		fprintf(rep, "          ");
		text_node(s, x->id);
		fprintf(rep, ": ");
		for (k = 0; k < (size_t)r->nin; k++)
			fprintf(rep, "%s%llu", k ? " -> " : "",
				(unsigned long long)x->lengths[k]);
		fputc('\n', rep);
	}
}

/* The verdict, first: the library's sentence. */
static void text_verdict(const struct report *r)
{
	char buf[1024];
	size_t n = hd_leaks_verdict_text_process(buf, sizeof(buf), r->l, &proc);

	fprintf(rep, "%-9s ", "verdict");
	cli_text_string(rep, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
	fputc('\n', rep);
}

/* What the suspects do not hold: the VM's tables, the unreached, and
 * the young objects walked through; then how the shares add up. */
static void text_apart(const struct report *r)
{
	const hd_leaks_totals *t = &r->t;
	const char *what = r->d->has_later ? "leak" : "growth";
	uint64_t sus = t->leak_memsize - t->folded_memsize - t->vm_memsize -
		       t->unreached_memsize;
	char a[32], b[32];

	if (t->young_count)
		fprintf(rep,
			"%-9s %s objects, %s of later born since after, walked "
			"through (neither leaked nor holders)\n",
			"young", cli_commas(t->young_count, a, sizeof(a)),
			cli_human_bytes(t->young_memsize, b, sizeof(b)));
	if (t->vm_count)
		fprintf(rep,
			"%-9s %s objects, %s: the VM's own tables (%.1f%% of "
			"the %s), no suspect\n",
			"vm growth", cli_commas(t->vm_count, a, sizeof(a)),
			cli_human_bytes(t->vm_memsize, b, sizeof(b)),
			pct(t->vm_memsize, t->leak_memsize), what);
	if (t->unreached_count)
		fprintf(rep,
			"%-9s %s objects, %s that no border object reaches "
			"(%.1f%% of the %s: garbage not yet collected?)\n",
			"unreached",
			cli_commas(t->unreached_count, a, sizeof(a)),
			cli_human_bytes(t->unreached_memsize, b, sizeof(b)),
			pct(t->unreached_memsize, t->leak_memsize), what);
	if (t->leak_memsize && (t->vm_count || t->unreached_count ||
				t->folded || t->joint))
		fprintf(rep,
			"%-9s suspects %.1f%% (joint %zu) + folded %.1f%% + vm "
			"%.1f%% + unreached %.1f%% = 100%% of the %s\n",
			"shares", pct(sus, t->leak_memsize), t->joint,
			pct(t->folded_memsize, t->leak_memsize),
			pct(t->vm_memsize, t->leak_memsize),
			pct(t->unreached_memsize, t->leak_memsize), what);
}

/* The caveats the text says on no other line: what qualifies the
 * verdict (the order findings are on stderr; folded, shares, saturated
 * and no suspects have lines of their own). */
#define CAVEATS_SAID_ELSEWHERE                                             \
	(HD_CAVEAT_ORDER | HD_CAVEAT_OTHER_PROCESS | HD_CAVEAT_FEW_SHARED | \
	 HD_CAVEAT_FOLDED | HD_CAVEAT_SHARES | HD_CAVEAT_SATURATED |         \
	 HD_CAVEAT_NO_SUSPECTS)

static void text_caveats(const struct report *r)
{
	unsigned int c = hd_leak_session_caveats(r->ls), bit;
	char buf[1024];
	size_t n;

	for (bit = 1; bit && bit <= c; bit <<= 1) {
		if (!(c & bit) || (bit & CAVEATS_SAID_ELSEWHERE))
			continue;
		n = hd_leak_session_caveat_text(buf, sizeof(buf), r->ls, bit);
		fprintf(rep, "%-9s ", "caveat");
		cli_text_string(rep, buf,
				n < sizeof(buf) ? n : sizeof(buf) - 1);
		fputc('\n', rep);
	}
}

/* Every caveat: "caveats":[{"name","warning","text"}] */
static void json_caveats(const struct report *r)
{
	fprintf(rep, ",\"caveats\":");
	hd_leak_session_caveats_json(rep, r->ls);
}

/* caveat<TAB>name<TAB>text, one line each */
static void tsv_caveats(const struct report *r)
{
	unsigned int c = hd_leak_session_caveats(r->ls), bit;
	char buf[1024];
	size_t n;

	for (bit = 1; bit && bit <= c; bit <<= 1) {
		if (!(c & bit))
			continue;
		n = hd_leak_session_caveat_text(buf, sizeof(buf), r->ls, bit);
		fprintf(rep, "caveat\t%s\t", hd_caveat_name(bit));
		cli_text_string(rep, buf,
				n < sizeof(buf) ? n : sizeof(buf) - 1);
		fputc('\n', rep);
	}
}

/* A suspect without one holder: the old objects holding each border
 * object together, the holders of a joint, or a root alone. */
static void text_holders(const struct report *r, const hd_leaks_suspect *sp)
{
	const hd_store *s = r->s[r->at];
	const hd_nodes *h = sp->holder_list;
	const char *what = r->d->has_later ? "leak" : "growth";
	char a[32], b[32], c[32];
	size_t k;

	if (sp->kind == HD_SUSPECT_JOINT)
		fprintf(rep,
			"  memory no one holder keeps alive, held jointly by "
			"%s holders",
			cli_commas(sp->holders, a, sizeof(a)));
	else if (sp->holders)
		fprintf(rep,
			"  %s new object(s), each held by the same %s old "
			"objects%s",
			cli_commas(sp->border_count, c, sizeof(c)),
			cli_commas(sp->holders, a, sizeof(a)),
			sp->roots ? " and a root" : "");
	else
		fprintf(rep, "  a new object held by a root only");
	fprintf(rep, "; retains %s objects, %s (%.1f%% of the %s)\n",
		cli_commas(sp->retained_count, b, sizeof(b)),
		cli_human_bytes(sp->retained_memsize, c, sizeof(c)),
		pct(sp->retained_memsize, r->t.leak_memsize), what);
	for (k = 0; h && k < h->n; k++) {
		fprintf(rep, "    held by ");
		text_node(s, h->ids[k]);
		fputc('\n', rep);
	}
	if (h && sp->holders > h->n)
		fprintf(rep, "    and %s more\n",
			cli_commas(sp->holders - h->n, a, sizeof(a)));
}

static void print_text(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	const hd_diff_result *d = r->d;
	char a[32], b[32], c[32];
	size_t i, k;

	cli_process_text(rep, &proc);
	for (k = 0; k < (size_t)r->nin; k++) {
		char step[32];

		fprintf(rep, "%-9s ", side_name(r, k, step, sizeof(step)));
		cli_text_string(rep, r->in[k].name, strlen(r->in[k].name));
		fprintf(rep, " (%s objects)\n",
			cli_commas(hd_store_node_count(r->s[k]), a, sizeof(a)));
	}
	text_verdict(r);
	fprintf(rep, "%-9s %s objects, %s new in after%s\n", "new",
		cli_commas(d->added.n, a, sizeof(a)),
		cli_human_bytes(d->added_memsize, b, sizeof(b)),
		cli_saturated(r->t.saturated &&
			      d->added_memsize == UINT64_MAX));
	if (d->has_later)
		fprintf(rep, "%-9s %s objects, %s still alive in later%s\n",
			"leaked",
			cli_commas((size_t)r->t.leak_count, a, sizeof(a)),
			cli_human_bytes(r->t.leak_memsize, b, sizeof(b)),
			cli_saturated(r->t.saturated &&
				      r->t.leak_memsize == UINT64_MAX));
	if (r->t.saturated && d->added_memsize != UINT64_MAX &&
	    (!d->has_later || r->t.leak_memsize != UINT64_MAX))
		fprintf(rep,
			"%-9s the memsizes of a suspect add up to 2^64-1 "
			"bytes or more, every sum stops there\n",
			"saturated");
	fprintf(rep,
		"%-9s %s new objects held by old ones or roots, "
		"in %s group(s) by holder\n",
		"border", cli_commas(r->t.border, a, sizeof(a)),
		cli_commas(r->t.groups, b, sizeof(b)));
	if (r->t.groups)
		fprintf(rep,
			"%-9s %s suspect(s) in %s cluster(s) by the shape of "
			"their paths\n",
			"clusters", cli_commas(r->t.groups, a, sizeof(a)),
			cli_commas(hd_leaks_cluster_count(r->l), b, sizeof(b)));
	text_apart(r);
	text_growth(r);
	text_caveats(r);
	if (!r->t.groups) {
		fprintf(rep,
			"\nno suspects: nothing new is held by an old object "
			"or a root\n");
		return;
	}
	for (i = 0; i < r->t.shown; i++) {
		const hd_leaks_suspect *sp = hd_leaks_suspect_get(r->l, i);

		fprintf(rep, "\nsuspect %zu: ", i + 1);
		text_held_as(s, sp->path, sp->holder != HD_NODE_NONE ?
						  sp->holder : sp->first);
		if (sp->holder != HD_NODE_NONE) {
			text_node(s, sp->holder);
			fprintf(rep,
				"\n  holds %s new object(s) that retain %s "
				"objects, %s (%.1f%% of the %s)\n",
				cli_commas(sp->border_count, a, sizeof(a)),
				cli_commas(sp->retained_count, b, sizeof(b)),
				cli_human_bytes(sp->retained_memsize, c,
						sizeof(c)),
				pct(sp->retained_memsize, r->t.leak_memsize),
				d->has_later ? "leak" : "growth");
		} else {
			text_node(s, sp->first);
			fputc('\n', rep);
			text_holders(r, sp);
		}
		if (sp->flags & HD_SUSPECT_TRANSIENT)
			fprintf(rep,
				"  held only by running code (a thread's or "
				"fiber's stack, the machine stack): passed "
				"over by the verdict\n");
		if (sp->flags & HD_SUSPECT_EPHEMERON)
			fprintf(rep,
				"  the values of a WeakKeyMap: alive as long as "
				"their keys, which the dump does not list; not "
				"named first by the verdict\n");
		if (sp->flags & HD_SUSPECT_CHURN)
			fprintf(rep,
				"  its holder is no longer than in before: it "
				"replaced what it held (a bounded cache), no "
				"growth for the verdict\n");
		fprintf(rep, "  keeps alive %s new objects, %s\n",
			cli_commas(sp->keepalive_count, a, sizeof(a)),
			cli_human_bytes(sp->keepalive_memsize, b, sizeof(b)));
		if (sp->path) {
			const hd_root_path *p = sp->path;

			fputs("  path from root ", rep);
			if (cli_hops_named(s, p->root, p->nodes, p->n)) {
				/* the names, hop by hop, on one line */
				cli_root_text(rep, s, p->root, p->nodes[0]);
				fputs(": ", rep);
				cli_hops_text(rep, s, p->nodes, p->n);
				fputc('\n', rep);
			} else {
				cli_text_string(
					rep, hd_store_root_name(s, p->root),
					strlen(hd_store_root_name(s, p->root)));
				fputs(":\n", rep);
			}
			cli_path_note(rep, p, "    ");
			cli_path_lines(rep, s, p->nodes, p->n, "    ",
				       path_line, NULL);
		} else {
			fprintf(rep, "  path: no GC root reaches it (a partial "
				     "dump?)\n");
		}
		fprintf(rep, "  what it holds, by class:\n");
		text_rows(sp->classes, 5, "    ", 0);
		fprintf(rep, "  allocation sites of what it keeps alive:\n");
		text_rows(sp->sites, (size_t)A.sites, "    ", 1);
		if (sp->stacks)
			text_stacks(s, sp->stacks);
	}
	if (r->t.more)
		fprintf(rep, "\n(%s more groups: --top N shows more)\n",
			cli_commas(r->t.more, c, sizeof(c)));
	if (r->t.folded)
		fprintf(rep,
			"\n%s%s group%s under %g%% each: %s objects, %s, "
			"%.1f%% of the %s (--min-share 0 shows them)\n",
			cli_commas(r->t.folded, c, sizeof(c)),
			r->t.shown ? " more" : "", r->t.folded == 1 ? "" : "s",
			A.min_share,
			cli_commas(r->t.folded_count, a, sizeof(a)),
			cli_human_bytes(r->t.folded_memsize, b, sizeof(b)),
			pct(r->t.folded_memsize, r->t.leak_memsize),
			d->has_later ? "leak" : "growth");
	text_clusters(r);
}

static void json_rows(hd_stats *st, size_t max, const char *k0,
		      const char *k1)
{
	size_t n, i;
	const hd_stats_row *rows = hd_stats_rows(st, 0, HD_SORT_MEMSIZE, &n);

	fputc('[', rep);
	for (i = 0; i < n && i < max; i++) {
		fprintf(rep, "%s{\"%s\":", i ? "," : "", k0);
		cli_json_string(rep, rows[i].key[0], strlen(rows[i].key[0]));
		if (k1 && rows[i].key[1]) {
			fprintf(rep, ",\"%s\":", k1);
			cli_json_string(rep, rows[i].key[1],
					strlen(rows[i].key[1]));
		}
		fprintf(rep, ",\"count\":%llu,\"memsize\":%llu}",
			(unsigned long long)rows[i].count,
			(unsigned long long)rows[i].memsize);
	}
	fputc(']', rep);
}

static void json_part(const char *name, uint64_t count, uint64_t memsize,
		      uint64_t whole)
{
	fprintf(rep, ",\"%s\":{\"count\":%llu,\"memsize\":%llu,\"share\":%.4f}",
		name, (unsigned long long)count, (unsigned long long)memsize,
		pct(memsize, whole) / 100.0);
}

/* "verdict" and "totals" (heapdump-json(5)), what the suspects do not
 * hold, and how the shares add up */
static void json_verdict(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	const hd_leaks_totals *t = &r->t;
	uint64_t sus = t->leak_memsize - t->folded_memsize - t->vm_memsize -
		       t->unreached_memsize;

	fprintf(rep, ",\"verdict\":{");
	hd_leaks_verdict_json_fields(rep, s, r->l, &proc);
	fprintf(rep, "},\"totals\":{");
	hd_leaks_totals_json_fields(rep, r->l);
	fputc('}', rep);
	json_part("young", t->young_count, t->young_memsize, t->leak_memsize);
	json_part("vm", t->vm_count, t->vm_memsize, t->leak_memsize);
	json_part("unreached", t->unreached_count, t->unreached_memsize,
		  t->leak_memsize);
	fprintf(rep,
		",\"joint\":%zu,\"shares\":{\"suspects\":%.4f,"
		"\"folded\":%.4f,\"vm\":%.4f,\"unreached\":%.4f,"
		"\"total\":%.4f}",
		t->joint, pct(sus, t->leak_memsize) / 100.0,
		pct(t->folded_memsize, t->leak_memsize) / 100.0,
		pct(t->vm_memsize, t->leak_memsize) / 100.0,
		pct(t->unreached_memsize, t->leak_memsize) / 100.0,
		t->leak_memsize ? 1.0 : 0.0);
}

/* "growing": the collections that grow at every step */
static void json_growth(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	size_t n = hd_growth_count(r->g), i, k;

	if (!r->g)
		return;
	fprintf(rep,
		",\"growing\":{\"dumps\":%d,\"examined\":%llu,\"count\":%zu,"
		"\"collections\":[",
		r->nin, (unsigned long long)hd_growth_examined(r->g), n);
	for (i = 0; i < n && i < (size_t)A.top * 4; i++) {
		const hd_growing *x = hd_growth_get(r->g, i);

		fprintf(rep, "%s{\"object\":", i ? "," : "");
		cli_node_json(rep, s, x->id);
		fprintf(rep, ",\"lengths\":[");
		for (k = 0; k < (size_t)r->nin; k++)
			fprintf(rep, "%s%llu", k ? "," : "",
				(unsigned long long)x->lengths[k]);
		fprintf(rep, "]}");
	}
	fprintf(rep, "]}");
}

static void print_json(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	const hd_diff_result *d = r->d;
	hd_leak_json_options jo = HD_LEAK_JSON_OPTIONS_INIT;
	size_t i;
	int j;

	fputc('{', rep);
	cli_process_json(rep, &proc);
	fprintf(rep, ",\"dumps\":[");
	for (j = 0; j < r->nin; j++) {
		fprintf(rep, "%s", j ? "," : "");
		cli_json_string(rep, r->in[j].name, strlen(r->in[j].name));
	}
	fprintf(rep, "]");
	json_growth(r);
	fprintf(rep, ",\"new\":{\"count\":%zu,\"memsize\":%llu}", d->added.n,
		(unsigned long long)d->added_memsize);
	if (d->has_later)
		fprintf(rep, ",\"leaked\":{\"count\":%zu,\"memsize\":%llu}",
			(size_t)r->t.leak_count,
			(unsigned long long)r->t.leak_memsize);
	fprintf(rep, ",\"memsize_saturated\":%s",
		r->t.saturated ? "true" : "false");
	json_verdict(r);
	json_caveats(r);
	fprintf(rep,
		",\"border\":%llu,\"groups\":%zu,\"min_share\":%.4f,"
		"\"more\":%zu,\"folded\":{\"groups\":%zu,"
		"\"retained_count\":%llu,\"retained_memsize\":%llu,"
		"\"share\":%.4f},\"suspects\":[",
		(unsigned long long)r->t.border, r->t.groups,
		A.min_share / 100.0, r->t.more, r->t.folded,
		(unsigned long long)r->t.folded_count,
		(unsigned long long)r->t.folded_memsize,
		pct(r->t.folded_memsize, r->t.leak_memsize) / 100.0);
	for (i = 0; i < r->t.shown; i++) {
		const hd_leaks_suspect *sp = hd_leaks_suspect_get(r->l, i);

		fprintf(rep, "%s{", i ? "," : "");
		hd_leaks_suspect_json_fields(rep, s, r->l, i, &jo);
		fprintf(rep, ",\"path\":");
		if (sp->path)
			hd_path_json(rep, s, sp->path, &jo);
		else
			fprintf(rep, "null");
		fprintf(rep, ",\"classes\":");
		json_rows(sp->classes, 20, "class", NULL);
		fprintf(rep, ",\"sites\":");
		json_rows(sp->sites, (size_t)A.sites, "class", "location");
		fprintf(rep, ",\"stacks\":");
		hd_leaks_suspect_stacks_json(rep, s, r->l, i, (size_t)A.sites);
		fputc('}', rep);
	}
	fputc(']', rep);
	json_clusters(r);
	fprintf(rep, "}\n");
}

/* a value of a TSV line: tabs and line breaks become spaces */
/* Escaped like all text (cli_text_string): a tab cannot split a field. */
static void tsv_str(const char *p)
{
	cli_text_string(rep, p, strlen(p));
}

/*
 * total<TAB>name<TAB>value lines, then one line a suspect:
 * suspect, rank, holder address, holder class (or "-" and the first
 * border object's), border_count, retained_count, retained_memsize,
 * share, keepalive_count, keepalive_memsize, path ("root -> Class ->
 * ...", each hop with its reference name when it has one: "vm ->
 * LeakyCache ::CACHE -> Hash"; or "-"); then "more" and "folded" lines.
 */
/* verdict<TAB>leak|none<TAB>text, then the parts no suspect holds */
static void tsv_verdict(const struct report *r)
{
	const hd_leaks_totals *t = &r->t;
	char buf[1024];
	size_t n = hd_leaks_verdict_text_process(buf, sizeof(buf), r->l, &proc);

	fprintf(rep, "verdict\t%s\t", t->significant ? "leak" : "none");
	cli_text_string(rep, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
	fputc('\n', rep);
	fprintf(rep, "total\tmin_leak\t%llu\n",
		(unsigned long long)t->min_leak);
	fprintf(rep, "total\tyoung\t%llu\ntotal\tyoung_memsize\t%llu\n",
		(unsigned long long)t->young_count,
		(unsigned long long)t->young_memsize);
	fprintf(rep, "total\tvm\t%llu\ntotal\tvm_memsize\t%llu\n",
		(unsigned long long)t->vm_count,
		(unsigned long long)t->vm_memsize);
	fprintf(rep, "total\tunreached\t%llu\ntotal\tunreached_memsize\t%llu\n",
		(unsigned long long)t->unreached_count,
		(unsigned long long)t->unreached_memsize);
	fprintf(rep, "total\tjoint\t%zu\n", t->joint);
}

static void print_tsv(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	const hd_diff_result *d = r->d;
	char cls[256], step[32];
	size_t i, k;
	int j;

	cli_process_tsv(rep, &proc);
	for (j = 0; j < r->nin; j++)
		fprintf(rep, "total\tobjects_%s\t%llu\n",
			side_name(r, (size_t)j, step, sizeof(step)),
			(unsigned long long)hd_store_node_count(r->s[j]));
	for (i = 0; i < hd_growth_count(r->g); i++) {
		const hd_growing *x = hd_growth_get(r->g, i);

		cli_node_class(s, x->id, cls, sizeof(cls));
		fprintf(rep, "growing\t0x%llx\t",
			(unsigned long long)hd_store_address(s, x->id));
		tsv_str(cls);
		for (k = 0; k < (size_t)r->nin; k++)
			fprintf(rep, "%c%llu", k ? ',' : '\t',
				(unsigned long long)x->lengths[k]);
		fputc('\n', rep);
	}
	fprintf(rep, "total\tnew\t%zu\ntotal\tnew_memsize\t%llu\n", d->added.n,
		(unsigned long long)d->added_memsize);
	if (d->has_later)
		fprintf(rep,
			"total\tleaked\t%zu\ntotal\tleaked_memsize\t%llu\n",
			(size_t)r->t.leak_count,
			(unsigned long long)r->t.leak_memsize);
	if (r->t.saturated)
		fprintf(rep, "total\tmemsize_saturated\t1\n");
	tsv_verdict(r);
	tsv_caveats(r);
	fprintf(rep,
		"total\tborder\t%llu\ntotal\tgroups\t%zu\n"
		"total\tmin_share\t%.4f\n",
		(unsigned long long)r->t.border, r->t.groups,
		A.min_share / 100.0);
	for (i = 0; i < r->t.shown; i++) {
		const hd_leaks_suspect *sp = hd_leaks_suspect_get(r->l, i);
		hd_node_id v = sp->holder != HD_NODE_NONE ? sp->holder :
							   sp->first;

		cli_node_class(s, v, cls, sizeof(cls));
		fprintf(rep, "suspect\t%zu\t0x%llx\t", i + 1,
			(unsigned long long)hd_store_address(s, v));
		tsv_str(cls);
		fprintf(rep, "\t%llu\t%llu\t%llu\t%.4f\t%llu\t%llu\t",
			(unsigned long long)sp->border_count,
			(unsigned long long)sp->retained_count,
			(unsigned long long)sp->retained_memsize,
			pct(sp->retained_memsize, r->t.leak_memsize) / 100.0,
			(unsigned long long)sp->keepalive_count,
			(unsigned long long)sp->keepalive_memsize);
		if (sp->path) {
			cli_root_text(rep, s, sp->path->root,
				      sp->path->n ? sp->path->nodes[0] :
						    HD_NODE_NONE);
			if (sp->path->n)
				fprintf(rep, " -> ");
			cli_hops_text(rep, s, sp->path->nodes, sp->path->n);
		} else {
			fputc('-', rep);
		}
		fputc('\n', rep);
	}
	fprintf(rep, "more\t%zu\n", r->t.more);
	fprintf(rep, "folded\t%zu\t%llu\t%llu\t%.4f\n", r->t.folded,
		(unsigned long long)r->t.folded_count,
		(unsigned long long)r->t.folded_memsize,
		pct(r->t.folded_memsize, r->t.leak_memsize) / 100.0);
	tsv_clusters(r);
}

/* ---- JUnit XML: the budgets, each a test case ---- */

static void print_junit(const struct report *r, const hd_budget_report *g,
			char **inputs, struct timespec t0)
{
	char verdict[4096];
	struct timespec t1;

	hd_leaks_verdict_text_process(verdict, sizeof(verdict), r->l, &proc);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cli_gate_junit(rep, COMMAND_NAME, inputs, r->nin, g, verdict,
		       (double)(t1.tv_sec - t0.tv_sec) +
			       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/* ---- pictures ---- */

static int svg_one(const struct report *r, const hd_leaks_suspect *sp,
		   size_t rank)
{
	hd_error err = { 0 };
	struct cli_membuf m = { NULL, 0, 0 };
	char *path = NULL;
	int rc = EXIT_FAIL;

	if (cli_suspect_dot(&m, r->s[r->at], NULL, sp, SVG_BORDER, &err)) {
		if (err.code == HD_ENOMEM)
			goto oom;
		rc = cli_lib_error(&err);
		goto out;
	}
	if (!(path = malloc(strlen(A.svg) + 32)))
		goto oom;
	sprintf(path, "%s/suspect-%zu.svg", A.svg, rank);
	rc = cli_render_dot(m.p, "svg", path, r->in[r->at].path, &A.lim);
	goto out;
oom:
	cli_error("out of memory");
out:
	free(path);
	free(m.p);
	return rc;
}

static int svg_all(const struct report *r)
{
	struct stat sb;
	size_t i;
	int rc;

	if (mkdir(A.svg, 0700) != 0 && errno != EEXIST) {
		cli_error("cannot create '%s': %s", A.svg, strerror(errno));
		return EXIT_FAIL;
	}
	if (stat(A.svg, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		cli_error("'%s' is not a directory", A.svg);
		return EXIT_FAIL;
	}
	if (!r->t.shown && r->t.groups)
		cli_error("leaks --svg: nothing drawn in '%s': the %zu "
			  "suspect%s under --min-share %g%% (--min-share 0 "
			  "draws %s)", A.svg, r->t.groups,
			  r->t.groups == 1 ? " is" : "s are all", A.min_share,
			  r->t.groups == 1 ? "it" : "them");
	else if (!r->t.shown)
		cli_error("leaks --svg: nothing drawn in '%s': no suspect",
			  A.svg);
	for (i = 0; i < r->t.shown; i++)
		if ((rc = svg_one(r, hd_leaks_suspect_get(r->l, i), i + 1)))
			return rc;
	return EXIT_OK;
}

/* ---- the report kept ---- */

static const char *const fmt_names[] = { "text", "json", "tsv" };

/* What the report's bytes depend on besides the session's key: the
 * format, every option that shapes the output, and the names printed
 * (each with its length). malloc'd, NULL out of memory. */
static char *keep_what(const struct report *r, int fmt)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int k;

	if (!f)
		return NULL;
	fprintf(f,
		"leaks %s top %llu sites %llu min_leak %llu "
		"min_share %.17g no_generation %d skip_weak %d force %d "
		"strict %d\n",
		fmt_names[fmt], A.top, A.sites, A.min_leak, A.min_share,
		A.no_generation, A.skip_weak, A.force, A.strict);
	for (k = 0; k < r->nin; k++)
		fprintf(f, "name %zu %s\n", strlen(r->in[k].name),
			r->in[k].name);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The kept report's file: that of the last input (the examined dump or
 * store) named LAST.leaks-FORMAT, as hd_leak_keep_path places it (for
 * a dump, in the cache directory: nothing is written beside a dump);
 * -1 when there is no place. */
static int keep_path(char *buf, size_t size, const struct report *r, int fmt)
{
	char base[4096];
	hd_error err = { 0 };
	int n = snprintf(base, sizeof(base), "%s.leaks-%s",
			 r->in[r->nin - 1].path, fmt_names[fmt]);

	if (n < 0 || (size_t)n >= sizeof(base))
		return -1;
	/* no place (neither XDG_CACHE_HOME nor HOME absolute, a path too
	 * long): not kept, nothing said, as serve's verdict */
	return hd_leak_keep_place(buf, size, base,
				  hd_store_is_store(r->in[r->nin - 1].path),
				  &err) ?
		       -1 :
		       0;
}

/* 1 when the kept report was printed, 0 when it is to be computed */
static int print_kept(const struct report *r, const char *path,
		      const char *what)
{
	char why[256], *doc = NULL;
	size_t len = 0;
	int rc = hd_leak_keep_read_what(&doc, &len, why, sizeof(why), path,
					r->ls, &proc, what);

	/* stale is routine (other options, other dumps): computed again
	 * and replaced, nothing said; damaged or not ours is said */
	if (rc < 0 && strncmp(why, "stale", 5) != 0)
		cli_error("leaks: %s: the kept report is %s: computed again",
			  path, why);
	if (rc <= 0)
		return 0;
	fwrite(doc, 1, len, stdout);
	free(doc);
	if (!A.quiet)
		fprintf(stderr, "%s: leaks: the report kept in %s\n",
			PROGRAM_NAME, path);
	return 1;
}

/* ---- the command ---- */

static void report_free(struct report *r)
{
	int k;

	hd_leak_session_free(r->ls);
	for (k = 0; k < MAX_DUMPS; k++)
		hd_store_close(r->s[k]);
}

static int leaks_run(int argc, char **argv)
{
	hd_leak_session_options so = HD_LEAK_SESSION_OPTIONS_INIT;
	struct report r;
	hd_error err = { 0 };
	hd_budget_report *gate = NULL;
	struct timespec t0;
	char kpath[4096], *what = NULL, *kept = NULL;
	size_t klen = 0;
	int rc, first, k, fmt = 0, nstdin = 0, junit;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&A, 0, sizeof(A));
	memset(&r, 0, sizeof(r));
	A.top = 5;
	A.sites = 5;
	A.min_leak = HD_LEAKS_MIN_LEAK;
	cli_render_limits_init(&A.lim);
	A.min_share = MIN_SHARE_DEFAULT;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	argc = cli_skip_sidecars(argc, argv, first); /* a glob of dumps */
	r.nin = argc - first;
	if (r.nin < 2 || r.nin > MAX_DUMPS)
		return cli_usage_error(&info, "two to sixteen dumps or stores: "
					      "BEFORE AFTER [STEP...] [LATER]");
	for (k = 0; k < r.nin; k++)
		nstdin += strcmp(argv[first + k], "-") == 0;
	if (nstdin > 1)
		return cli_usage_error(&info, "only one input can be '-'");
	junit = A.format && strcmp(A.format, "junit") == 0;
	if ((!junit && (rc = cli_parse_format(&info, A.format, 3, &fmt))) ||
	    (rc = cli_gate_prepare(&info, &G, HD_BUDGET_LEAKS, junit,
				   "leak.verdict=leak")))
		return rc;
	if (!A.top)
		return cli_usage_error(&info, "--top must be at least 1");
	if (A.svg && !*A.svg)
		return cli_usage_error(&info, "--svg needs a directory");
	if (A.svg && (rc = cli_render_available("leaks --svg")))
		return rc;
	for (k = 0; k < r.nin; k++) {
		cli_input_init(&r.in[k], argv[first + k], A.strict, A.quiet);
		if ((rc = cli_spool_stdin(&r.in[k])) ||
		    (rc = cli_open_store(&r.in[k], &r.s[k])))
			goto out;
	}
	so.diff.flags = A.no_generation ? HD_DIFF_NO_GENERATION : 0;
	so.diff.read.flags = A.strict ? HD_READ_STRICT : 0;
	so.leaks_flags = A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0;
	so.min_share = A.min_share / 100.0;
	so.top = (size_t)A.top;
	so.min_leak = A.min_leak;
	if ((rc = cli_leak_session_open(&r.ls, r.s, r.in, (size_t)r.nin, &so,
					A.force, NULL)))
		goto out;
	cli_process_judge(&proc, r.s, r.in, (size_t)r.nin);
	rep = stdout;
	if (!A.no_cache && !A.svg && !G.b && !junit && !nstdin &&
	    keep_path(kpath, sizeof(kpath), &r, fmt) == 0) {
		if (!(what = keep_what(&r, fmt))) {
			cli_error("out of memory");
			rc = EXIT_FAIL;
			goto out;
		}
		if (print_kept(&r, kpath, what))
			goto out;
		if (!(rep = open_memstream(&kept, &klen))) {
			cli_error("out of memory");
			rc = EXIT_FAIL;
			goto out;
		}
	}
	if (hd_leak_session_run(r.ls, &err)) {
		rc = cli_lib_error(&err);
		goto out;
	}
	r.d = hd_leak_session_diff(r.ls);
	r.l = hd_leak_session_leaks(r.ls);
	r.g = hd_leak_session_growth(r.ls);
	r.at = (int)hd_leak_session_at(r.ls);
	r.t = *hd_leak_session_totals(r.ls);
	if (G.b && (rc = hd_budget_eval_leaks(&gate, G.b, r.l, r.s[r.at], r.d,
					      &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (junit)
		print_junit(&r, gate, argv + first, t0);
	else if (fmt == 1)
		print_json(&r);
	else if (fmt == 2)
		print_tsv(&r);
	else
		print_text(&r);
	if (rep != stdout) {
		/* printed into memory: out, then kept */
		if (fclose(rep) != 0 || !kept) {
			rep = stdout;
			cli_error("out of memory");
			rc = EXIT_FAIL;
			goto out;
		}
		rep = stdout;
		fwrite(kept, 1, klen, stdout);
		if (hd_leak_keep_write_what(kpath, r.ls, &proc, what, kept,
					    klen, &err))
			cli_error("leaks: %s (the report is computed each "
				  "time)",
				  err.msg);
	}
	if (A.svg)
		rc = svg_all(&r);
	if (!rc && gate)
		rc = cli_gate_say(COMMAND_NAME, gate);
out:
	if (rep && rep != stdout)
		fclose(rep);
	rep = stdout;
	free(kept);
	free(what);
	hd_budget_report_free(gate);
	report_free(&r);
	return rc;
}

int cmd_leaks(int argc, char **argv)
{
	int rc = leaks_run(argc, argv);

	cli_gate_free(&G);
	return rc;
}
