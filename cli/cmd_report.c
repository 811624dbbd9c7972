/*
 * cmd_report.c - heapdump report: one self-contained HTML page to attach
 * to a CI run or a ticket, like Eclipse MAT's Leak Suspects report.
 *
 * With two or three dumps, the leak report: the dumps are checked to be
 * in order (cli_order_pairs, and what cli_check_order says on stderr),
 * diffed (hd_diff) and the library's leak model built (hd_leaks_build),
 * exactly as heapdump leaks does; the page gives the verdict with its
 * caveats, the suspects (share, retention path with reference names,
 * classes held, allocation sites, a drawing by Graphviz), the clusters,
 * the diff by class and by location (hd_stats_add_nodes) and its icicle
 * by allocation stack or retention path (hd_flame_build). With one
 * dump, an overview: totals (hd_stats_add_store), the process memory of
 * the gem's sidecar, the top retainers of the dominator tree
 * (hd_domtree_top, hd_domtree_classes) and the biggest groups by type,
 * class and location. This file only formats: every number comes from
 * the library, every string of a dump through html_text.
 */
#include "cmd.h"
#include "common.h"
#include "gate.h"
#include "draw.h"
#include "html.h"
#include "opt.h"
#include "order.h"
#include "process.h"
#include "sidecar.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "report"

/* border objects drawn per suspect, as leaks --svg draws them */
#define DRAW_BORDER 12
/* rows of the classes a suspect holds, as leaks --format json gives */
#define CLASS_ROWS 20
/* "2, 3, 4": the ranks of a cluster shown */
#define RANKS_SHOWN 10
#define MIN_SHARE_DEFAULT 1.0

static struct report_args {
	const char *output;
	unsigned long long top, sites, rows;
	double min_share; /* percent */
	int strict, quiet, no_generation, skip_weak, force, no_drawings;
	struct cli_render_limits lim;
} A;

/* --fail-on, --budgets: the CI gate (gate.h), judged once the page is
 * written */
static struct cli_gate G;
static hd_budget_report *gate;

static const struct cli_opt opts[] = {
	OPT_STRING('o', "output", "FILE", &A.output,
		   "write the page to FILE (default: standard output)"),
	OPT_UINT('n', "top", "N", &A.top,
		 "suspects and clusters to describe (default 5)"),
	OPT_UINT(0, "rows", "N", &A.rows,
		 "rows per table (default 20, 0: all)"),
	OPT_CALLBACK(0, "min-share", "PCT", &A.min_share, cli_parse_share,
		     "fold the groups under PCT% of the leak (default 1)"),
	OPT_UINT(0, "sites", "N", &A.sites,
		 "allocation sites per suspect (default 5)"),
	OPT_FLAG(0, "no-drawings", &A.no_drawings,
		 "no drawing of the suspects (faster)"),
	CLI_RENDER_LIMIT_OPTS(&A.lim.max_nodes, &A.lim.max_edges),
	OPT_FLAG(0, "no-generation", &A.no_generation,
		 "identify objects by address and fingerprint even in traced "
		 "dumps (see heapdump-diff)"),
	OPT_FLAG(0, "skip-weak", &A.skip_weak,
		 "weak references (WeakMap, WeakRef) hold nothing"),
	OPT_FLAG(0, "force", &A.force,
		 "compare dumps that seem to be in the wrong order (the page "
		 "says so)"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	CLI_GATE_OPTS(&G),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] BEFORE AFTER [STEP...] [LATER] | DUMP",
	"Write one self-contained HTML page (inline style and drawings, no\n"
	"script, nothing from the network): with two or three dumps the leak\n"
	"report of heapdump leaks (verdict, suspects with their paths,\n"
	"classes, allocation sites and drawings, clusters, the diff by class\n"
	"and location); with one dump an overview (totals, process memory,\n"
	"top retainers, biggest groups). Each operand is a dump or a store.",
	opts
};

static FILE *F; /* the page */

static const char *const side[3] = { "before", "after", "later" };

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static size_t rows_max(void)
{
	return A.rows ? (size_t)A.rows : (size_t)-1;
}

/* ---- pieces ---- */

static void site_html(const hd_site *site)
{
	html_text(F, site->file, site->file_len);
	fprintf(F, ":%llu", (unsigned long long)site->line);
}

/* "<code class=addr>0x..</code> Class (TYPE), file:line" */
static void node_html(const hd_store *s, hd_node_id v)
{
	char raw[512], cls[256];
	size_t n = hd_store_node_name(raw, sizeof(raw), s, v);
	hd_site site;

	fprintf(F, "<code class=\"addr\">0x%llx</code> ",
		(unsigned long long)hd_store_address(s, v));
	html_text(F, raw, n < sizeof(raw) ? n : sizeof(raw) - 1);
	cli_node_class(s, v, cls, sizeof(cls));
	if (cli_type_adds(s, v, cls))
		fprintf(F, " <span class=\"muted\">(%s)</span>",
			hd_type_name(hd_store_type(s, v)));
	if (hd_store_site(&site, s, v) == 0 && site.file) {
		fputs(" <span class=\"site muted\">", F);
		site_html(&site);
		fputs("</span>", F);
	}
}

/* One hop as the library writes it (hd_store_hop_text: "Class name"). */
static void hop_html(const hd_store *s, hd_node_id from, hd_node_id to)
{
	char buf[1024];
	size_t n = hd_store_hop_text(buf, sizeof(buf), s, from, to);

	html_text(F, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
}

/* The root of a path: its category, and the name under which it holds
 * the first object when it has one ("global_tbl $CACHE"). */
static void root_html(const hd_store *s, const hd_root_path *p)
{
	const char *root = hd_store_root_name(s, p->root);
	size_t n;
	const char *name = p->n ? hd_store_root_ref_name(s, p->root,
							  p->nodes[0], &n) :
				  NULL;

	fputs("<span class=\"root\">", F);
	html_str(F, root);
	fputs("</span>", F);
	if (name) {
		fputs(" <span class=\"ref\">", F);
		html_text(F, name, n);
		fputs("</span>", F);
	}
}

/* The pattern of a run of a path (hd_path_fold), each hop followed by
 * its arrow, and its count: "(Proc &#8594; IMEMO/env prev &#8594;)
 * x1000"; the index of the run's last node. */
static size_t fold_html(const hd_store *s, const hd_root_path *p,
			const hd_path_run *u)
{
	size_t k;

	fputs("<span class=\"fold\">(", F);
	for (k = u->start; k < u->start + u->period; k++) {
		hop_html(s, p->nodes[k], p->nodes[k + 1]);
		fputs(k + 1 < u->start + u->period ? " &#8594; " : " &#8594;",
		      F);
	}
	fprintf(F, ") x%zu</span>", u->count);
	return u->start + u->period * u->count - 1;
}

/* Object k of a path, with the name of its reference to the next. */
static void hop_li(const hd_store *s, const hd_root_path *p, size_t k)
{
	size_t n;
	unsigned flags = 0;
	const char *name = k + 1 < p->n ? hd_store_ref_name(s, p->nodes[k],
							   p->nodes[k + 1],
							   &n, &flags) :
					  NULL;

	fprintf(F, "<li class=\"hop\" data-address=\"0x%llx\">",
		(unsigned long long)hd_store_address(s, p->nodes[k]));
	node_html(s, p->nodes[k]);
	if (name) {
		fputs(" &#8594; <span class=\"ref\">", F);
		html_text(F, name, n);
		fputs("</span>", F);
		if (flags & HD_NAME_INFERRED)
			fputs(" <span class=\"muted\">(inferred)</span>", F);
	}
	fputs("</li>\n", F);
}

/* After the first repetition of a run, the others in one item; the
 * index of the run's last node. */
static size_t fold_li(const hd_store *s, const hd_root_path *p,
		      const hd_path_run *u)
{
	size_t k, rest = u->period * (u->count - 1);
	size_t from = u->start + u->period;
	uint64_t mem = 0;
	char a[32], b[32];

	for (k = from; k < from + rest; k++)
		mem += hd_store_memsize(s, p->nodes[k]);
	fputs("<li class=\"fold\">&#8230; ", F);
	fold_html(s, p, u);
	fprintf(F, ": %s more objects, memsize %s</li>\n",
		cli_commas(rest, a, sizeof(a)), cli_commas(mem, b, sizeof(b)));
	return from + rest - 1;
}

/*
 * A retention path: the one-line form with the names (root -> hop ->
 * ... , as leaks prints it), then one line per object, each with the
 * name of its reference to the next; runs of repeated hops folded in
 * both (hd_path_fold), as every text output folds them.
 */
static void path_html(const hd_store *s, const hd_root_path *p)
{
	hd_path_runs runs = { 0 };
	char note[256];
	size_t k, r = 0;

	if (hd_path_fold(&runs, s, p->nodes, p->n, NULL, NULL))
		runs.n = 0; /* out of memory: every hop */
	fputs("<p class=\"pathline\"><code>", F);
	root_html(s, p);
	for (k = 0; k < p->n; k++) {
		fputs(" &#8594; ", F);
		if (r < runs.n && runs.runs[r].start == k) {
			k = fold_html(s, p, &runs.runs[r++]);
			continue;
		}
		hop_html(s, p->nodes[k], k + 1 < p->n ? p->nodes[k + 1] :
							HD_NODE_NONE);
	}
	fputs("</code></p>\n", F);
	if (hd_path_note(note, sizeof(note), p)) {
		fputs("<p class=\"note muted\">", F);
		html_str(F, note);
		fputs("; man 1 heapdump-path</p>\n", F);
	}
	fputs("<ol class=\"path\">\n<li class=\"root\">", F);
	fputs("GC root ", F);
	root_html(s, p);
	fputs("</li>\n", F);
	for (k = 0, r = 0; k < p->n; k++) {
		hop_li(s, p, k);
		if (r < runs.n &&
		    k + 1 == runs.runs[r].start + runs.runs[r].period)
			k = fold_li(s, p, &runs.runs[r++]);
	}
	fputs("</ol>\n", F);
	hd_path_runs_free(&runs);
}

/* A table of stats rows: the key columns, count, memsize. */
static void rows_html(hd_stats *st, unsigned g, const char *id,
		      const char *const *heads, unsigned nkeys, size_t max,
		      uint64_t whole)
{
	size_t n, i;
	unsigned j;
	const hd_stats_row *rows = hd_stats_rows(st, g, HD_SORT_MEMSIZE, &n);
	char a[32];

	fprintf(F, "<table class=\"rows\" id=\"%s\" data-rows-total=\"%zu\">"
		   "\n<tr>", id, n);
	for (j = 0; j < nkeys; j++)
		fprintf(F, "<th>%s</th>", heads[j]);
	fputs("<th class=\"n\">count</th><th class=\"n\">memsize</th>", F);
	if (whole)
		fputs("<th>share</th>", F);
	fputs("</tr>\n", F);
	for (i = 0; i < n && i < max; i++) {
		fputs("<tr class=\"row\">", F);
		for (j = 0; j < nkeys; j++) {
			fputs("<td class=\"key\">", F);
			html_text(F, rows[i].key[j], rows[i].key_len[j]);
			fputs("</td>", F);
		}
		fputs("<td class=\"n\">", F);
		html_count(F, "count", rows[i].count);
		fputs("</td><td class=\"n\">", F);
		html_bytes(F, "memsize", rows[i].memsize);
		fputs("</td>", F);
		if (whole) {
			fputs("<td>", F);
			html_share(F, "share", pct(rows[i].memsize, whole) /
						      100.0);
			fputs("</td>", F);
		}
		fputs("</tr>\n", F);
	}
	fputs("</table>\n", F);
	if (n > max)
		fprintf(F, "<p class=\"muted\">%s more rows (--rows 0 shows "
			   "them all)</p>\n",
			cli_commas(n - max, a, sizeof(a)));
}

static void footer(void)
{
	fprintf(F, "<footer>Written by heapdump %s report. Self-contained: "
		   "no script, nothing from the network. The same numbers as "
		   "<code>heapdump leaks</code>, <code>diff</code>, "
		   "<code>stats</code> and <code>top</code>.</footer>\n",
		hd_version());
}

/* ---- the leak report ---- */

/* dumps a report may take: BEFORE AFTER [STEP...] LATER, as leaks */
#define MAX_DUMPS 16

struct leak {
	hd_store *s[MAX_DUMPS];
	struct cli_input in[MAX_DUMPS];
	int nin;
	int at; /* the examined dump: AFTER or LATER (the last) */
	hd_order_pair pairs[MAX_DUMPS - 1];
	char times[MAX_DUMPS][40];
	hd_leak_session *ls; /* the hunt; d and l are borrowed from it */
	const hd_diff_result *d;
	const hd_leaks *l;
	hd_leaks_totals t;
	unsigned int caveats; /* HD_CAVEAT_ bits */
	hd_stats *diff_st; /* the leak by class, by location */
};

/*
 * A suspect's drawing, as leaks --svg draws it: its path, its holder
 * and up to DRAW_BORDER border objects, IMEMOs and hidden collections
 * folded into the edges, laid out by Graphviz into the page. Says why
 * when there is none: built without Graphviz, over the limits. Returns
 * EXIT_FAIL only when out of memory.
 */
static int drawing(const struct leak *r, const hd_leaks_suspect *sp,
		   size_t rank)
{
	hd_error err = { 0 };
	struct cli_membuf m = { NULL, 0, 0 };
	char *svg = NULL, what[64];
	size_t len = 0;
	int rc = EXIT_OK;

	fputs("<h4>Drawing</h4>\n", F);
	if (A.no_drawings) {
		fputs("<p class=\"nodrawing muted\">No drawing: "
		      "--no-drawings.</p>\n", F);
		return EXIT_OK;
	}
	if (!cli_render_compiled()) {
		fputs("<p class=\"nodrawing muted\">Drawing unavailable: this "
		      "heapdump was built without Graphviz (make GVC=0); "
		      "install libgraphviz-dev and build it again to draw "
		      "the suspects.</p>\n", F);
		return EXIT_OK;
	}
	snprintf(what, sizeof(what), "the drawing of suspect %zu", rank);
	if (cli_suspect_dot(&m, r->s[r->at], NULL, sp, DRAW_BORDER, &err) ||
	    cli_render_dot_data(m.p, "svg", what, &A.lim, &svg, &len)) {
		if (err.code == HD_ENOMEM)
			goto oom;
		if (err.code)
			cli_lib_error(&err);
		fputs("<p class=\"nodrawing muted\">Drawing unavailable: "
		      "Graphviz could not draw it (see the messages of "
		      "heapdump report; --max-nodes and --max-edges lift "
		      "the limits).</p>\n", F);
		goto out;
	}
	fputs("<div class=\"drawing\">\n", F);
	html_svg(F, svg, len);
	fputs("</div>\n", F);
	goto out;
oom:
	cli_error("out of memory");
	rc = EXIT_FAIL;
out:
	free(svg);
	free(m.p);
	return rc;
}

static void dumps_table(const struct leak *r)
{
	int k;

	fputs("<table id=\"dumps\">\n<tr><th>dump</th><th>file</th>"
	      "<th class=\"n\">objects</th><th>sidecar time</th></tr>\n", F);
	for (k = 0; k < r->nin; k++) {
		char step[32];
		const char *name = k == 0 ? side[0] :
				   k == 1 ? side[1] :
				   k + 1 == r->nin ? side[2] :
						     (snprintf(step, sizeof(step),
							       "step %d", k + 1),
						      step);

		fprintf(F, "<tr class=\"dump\" data-side=\"%s\"><td>%s</td>"
			   "<td><code>", name, name);
		html_str(F, r->in[k].name);
		fputs("</code></td><td class=\"n\">", F);
		html_count(F, "objects", hd_store_node_count(r->s[k]));
		fputs("</td><td>", F);
		html_str(F, r->times[k][0] ? r->times[k] : "-");
		fputs("</td></tr>\n", F);
	}
	fputs("</table>\n", F);
}

static void rules_html(const hd_diff_result *d)
{
	int first = 1;

	if (d->rules & HD_DIFF_RULE_OBJECT_ID)
		fputs("object id", F), first = 0;
	if (d->rules & HD_DIFF_RULE_GENERATION)
		fprintf(F, "%sallocation generation (G = %llu)",
			first ? "" : ", ", (unsigned long long)d->generation),
			first = 0;
	if (d->rules & HD_DIFF_RULE_ADDRESS)
		fprintf(F, "%saddress and fingerprint", first ? "" : ", ");
}

/* One caveat: <li class="caveat KIND">. */
static void caveat(const char *kind, int warn)
{
	fprintf(F, "<li class=\"caveat %s%s\">", kind, warn ? " warn" : "");
}

/* the process growth of the sidecars: first on the page when it is
 * outside Ruby objects */
static hd_process_verdict proc;

/* What the order check found, as cli_order_report says it on stderr. */
static void order_caveats(const struct leak *r)
{
	char a[32], b[32];
	int k;

	for (k = 0; k + 1 < r->nin; k++) {
		const hd_order_pair *p = &r->pairs[k];
		const char *x = r->in[k].name, *y = r->in[k + 1].name;

		if ((r->caveats & HD_CAVEAT_ORDER) &&
		    (p->flags & HD_ORDER_REVERSED)) {
			caveat("order", 1);
			fputs("<strong>Wrong order?</strong> <code>", F);
			html_str(F, x);
			fputs("</code> and <code>", F);
			html_str(F, y);
			fputs("</code> seem to be in the wrong order: ", F);
			if (p->flags & HD_ORDER_TIME_BACKWARDS) {
				fputs("by their sidecars the second was taken "
				      "at ", F);
				html_str(F, r->times[k + 1]);
				fputs(", before the first (", F);
				html_str(F, r->times[k]);
				fputs(")", F);
			} else {
				fprintf(F, "the newest allocation generation "
					   "goes back from %llu to %llu "
					   "(GC.count never goes back in a "
					   "process)",
					(unsigned long long)p->generation[0],
					(unsigned long long)p->generation[1]);
			}
			fputs(". They were compared as given (--force): what "
			      "looks new here may be what was freed.</li>\n",
			      F);
		}
		if ((r->caveats & HD_CAVEAT_OTHER_PROCESS) &&
		    (p->flags & HD_ORDER_OTHER_PROCESS)) {
			caveat("other-process", 1);
			fprintf(F, "<code>");
			html_str(F, x);
			fprintf(F, "</code> (pid %llu) and <code>",
				(unsigned long long)p->origin[0].pid);
			html_str(F, y);
			fprintf(F, "</code> (pid %llu) are dumps of two "
				   "different processes, by their sidecars: "
				   "the objects of one are all new to the "
				   "other.</li>\n",
				(unsigned long long)p->origin[1].pid);
		} else if ((r->caveats & HD_CAVEAT_FEW_SHARED) &&
			   (p->flags & HD_ORDER_FEW_SHARED)) {
			caveat("few-shared", 1);
			fputs("<code>", F);
			html_str(F, x);
			fputs("</code> and <code>", F);
			html_str(F, y);
			fprintf(F, "</code> have only %s of %s addresses in "
				   "common: dumps of two different processes, "
				   "or a compaction moved nearly everything "
				   "between them; then every object looks "
				   "new.</li>\n",
				cli_commas(p->shared, a, sizeof(a)),
				cli_commas(p->objects[0] < p->objects[1] ?
						   p->objects[0] :
						   p->objects[1],
					   b, sizeof(b)));
		}
	}
}

static void verdict(const struct leak *r)
{
	const hd_diff_result *d = r->d;
	const char *what = d->has_later ? "leak" : "growth";
	char a[32], b[32], c[32];
	int calm = d->added.n == 0 || (d->has_later && !r->t.leak_count);

	fprintf(F, "<section id=\"verdict\" class=\"verdict%s\">\n",
		calm ? " calm" : "");
	fputs("<p class=\"head\">", F);
	if (!d->added.n) {
		fputs("Nothing new in <em>after</em>: no object of it is new "
		      "since <em>before</em>.", F);
	} else if (d->has_later && !r->t.leak_count) {
		fprintf(F, "%s objects (%s) were new in <em>after</em>, and "
			   "none of them is alive in <em>later</em>.",
			cli_commas(d->added.n, a, sizeof(a)),
			cli_human_bytes(d->added_memsize, b, sizeof(b)));
	} else {
		if (d->has_later)
			fprintf(F, "%s objects, %s leaked: new in <em>after"
				   "</em> and still alive in <em>later</em>.",
				cli_commas(r->t.leak_count, a, sizeof(a)),
				cli_human_bytes(r->t.leak_memsize, b,
						sizeof(b)));
		else
			fprintf(F, "%s objects, %s grew: new in <em>after"
				   "</em> since <em>before</em>.",
				cli_commas(r->t.leak_count, a, sizeof(a)),
				cli_human_bytes(r->t.leak_memsize, b,
						sizeof(b)));
		{
			/* the library's verdict, as every front end says it */
			char buf[1024];
			size_t n = hd_leaks_verdict_text_process(
				buf, sizeof(buf), r->l, &proc);

			fputs(" <span id=\"verdict-text\">Verdict: ", F);
			html_text(F, buf, n < sizeof(buf) ? n :
							    sizeof(buf) - 1);
			fputs(".</span>", F);
		}
	}
	fputs("</p>\n<dl class=\"kv\">\n<dt>new in after</dt><dd>", F);
	html_count(F, "new_count", d->added.n);
	fputs(" objects, ", F);
	html_bytes(F, "new_memsize", d->added_memsize);
	fputs("</dd>\n", F);
	if (d->has_later) {
		fputs("<dt>still alive in later</dt><dd>", F);
		html_count(F, "leaked_count", r->t.leak_count);
		fputs(" objects, ", F);
		html_bytes(F, "leaked_memsize", r->t.leak_memsize);
		fputs("</dd>\n", F);
	}
	fputs("<dt>border</dt><dd>", F);
	html_count(F, "border", r->t.border);
	fputs(" new objects held by old ones or roots, in ", F);
	html_count(F, "groups", r->t.groups);
	fputs(" suspect(s) by holder, ", F);
	html_count(F, "clusters", hd_leaks_cluster_count(r->l));
	fputs(" cluster(s) by the shape of their paths</dd>\n", F);
	fputs("<dt>checked</dt><dd>", F);
	fprintf(F, "%s objects of <em>after</em> against %s of <em>before"
		   "</em>",
		cli_commas(d->objects[1], a, sizeof(a)),
		cli_commas(d->objects[0], b, sizeof(b)));
	if (d->has_later)
		fprintf(F, ", then %s of <em>later</em>",
			cli_commas(d->objects[2], c, sizeof(c)));
	fputs(", by ", F);
	rules_html(d);
	fputs("</dd>\n</dl>\n<ul class=\"caveats\">\n", F);
	order_caveats(r);
	if (r->caveats & HD_CAVEAT_TWO_DUMPS) {
		caveat("two-dumps", 1);
		fputs("Two dumps: this is growth, not yet a leak. What a "
		      "request allocates and frees later counts here too; "
		      "give a third dump (LATER) to keep only what stays "
		      "alive.</li>\n", F);
	}
	if (r->caveats & HD_CAVEAT_NOTHING_NEW) {
		caveat("nothing-new", 0);
		fprintf(F, "Nothing was selected: the diff found no new object "
			   "among the %s of <em>after</em>. Either nothing "
			   "grew between the dumps, or they are the same "
			   "moment (the same dump twice?).</li>\n",
			cli_commas(d->objects[1], a, sizeof(a)));
	} else if (r->caveats & HD_CAVEAT_NOTHING_LEFT) {
		caveat("nothing-left", 0);
		fputs("No leak among the new objects of <em>after</em>: "
		      "<em>later</em> holds none of them. Objects new only "
		      "in <em>later</em> were not examined.</li>\n", F);
	} else if (r->caveats & HD_CAVEAT_NO_SUSPECTS) {
		caveat("no-suspects", 1);
		fputs("No suspects: nothing new is held by an old object or "
		      "a root. That does not mean no leak: the new objects "
		      "are held only by each other (no GC root reaches them "
		      "through an old object).</li>\n", F);
	}
	if (r->caveats & HD_CAVEAT_UNCERTAIN) {
		caveat("uncertain", 0);
		fprintf(F, "%s objects were judged old on an uncertain match "
			   "(same address, type and class: the dump tells "
			   "nothing more); %s.</li>\n",
			cli_commas(d->uncertain, a, sizeof(a)),
			d->traced ? "the dumps are traced, but these objects "
				    "have no allocation generation (allocated "
				    "before the tracing began)" :
				    "allocation tracing in the dumps makes it "
				    "certain");
	}
	if (r->caveats & HD_CAVEAT_OBJECT_ID_SKIPPED) {
		caveat("object-id-skipped", 1);
		fputs("Object ids were not compared: a source dump could not "
		      "be read again.</li>\n", F);
	}
	if (r->caveats & HD_CAVEAT_SATURATED) {
		caveat("saturated", 1);
		fputs("Some memsizes add up to 2^64-1 bytes or more: those "
		      "sums stop there and are lower bounds.</li>\n", F);
	}
	if (r->caveats & HD_CAVEAT_FOLDED) {
		caveat("folded", 0);
		fprintf(F, "%s group%s under %g%% of the %s each were folded: "
			   "%s objects, %s (--min-share 0 shows them).</li>\n",
			cli_commas(r->t.folded, a, sizeof(a)),
			r->t.folded == 1 ? "" : "s", A.min_share, what,
			cli_commas(r->t.folded_count, b, sizeof(b)),
			cli_human_bytes(r->t.folded_memsize, c, sizeof(c)));
	}
	if (r->caveats & HD_CAVEAT_SHARES) {
		const hd_leaks_totals *t = &r->t;
		uint64_t sus = t->leak_memsize - t->folded_memsize -
			       t->vm_memsize - t->unreached_memsize;

		caveat("shares", 0);
		fprintf(F, "Shares of the %s: suspects %.1f%% (%zu of them "
			   "held jointly), folded %.1f%%, the VM's own tables "
			   "%.1f%%, unreached %.1f%%: 100%%.",
			what, pct(sus, t->leak_memsize), t->joint,
			pct(t->folded_memsize, t->leak_memsize),
			pct(t->vm_memsize, t->leak_memsize),
			pct(t->unreached_memsize, t->leak_memsize));
		if (t->passed_memsize)
			fprintf(F, " The verdict passed over %.1f%% held by "
				   "stacks or bounded caches.",
				pct(t->passed_memsize, t->leak_memsize));
		fputs("</li>\n", F);
	}
	fputs("</ul>\n</section>\n", F);
}

static int suspect_html(const struct leak *r, size_t i)
{
	const hd_store *s = r->s[r->at];
	const hd_leaks_suspect *sp = hd_leaks_suspect_get(r->l, i);
	const char *what = r->d->has_later ? "leak" : "growth";
	static const char *const ch[] = { "class" };
	static const char *const sh[] = { "class", "location" };
	char id[48];

	fprintf(F, "<section class=\"suspect\" id=\"suspect-%zu\">\n<h3>"
		   "<span class=\"rank\">Suspect %zu</span>: ", i + 1, i + 1);
	node_html(s, sp->holder != HD_NODE_NONE ? sp->holder : sp->first);
	fputs("</h3>\n<dl class=\"kv\">\n", F);
	if (sp->holder != HD_NODE_NONE) {
		fprintf(F, "<dt>holder</dt><dd class=\"holder\" "
			   "data-address=\"0x%llx\">one old object holds ",
			(unsigned long long)hd_store_address(s, sp->holder));
		html_count(F, "border_count", sp->border_count);
		fputs(" new object(s)</dd>\n", F);
	} else {
		size_t k;

		fprintf(F, "<dt>holder</dt><dd class=\"holder %s\" "
			   "data-address=\"\">%s (",
			sp->kind == HD_SUSPECT_JOINT ? "joint" : "shared",
			sp->kind == HD_SUSPECT_JOINT ?
				"none alone: held jointly by several holders" :
			sp->holders ? "none alone: each held by the same old "
				      "objects together" :
				      "none alone: a new object held by a root "
				      "only");
		html_count(F, "held_by_old", sp->holders);
		fputs(" holders); ", F);
		html_count(F, "border_count", sp->border_count);
		fputs(" border object(s)</dd>\n", F);
		for (k = 0; sp->holder_list && k < sp->holder_list->n; k++) {
			fprintf(F, "<dt>held by</dt><dd class=\"joint-holder\" "
				   "data-address=\"0x%llx\">",
				(unsigned long long)hd_store_address(
					s, sp->holder_list->ids[k]));
			node_html(s, sp->holder_list->ids[k]);
			fputs("</dd>\n", F);
		}
	}
	if (sp->flags)
		fprintf(F, "<dt>verdict</dt><dd class=\"passed\">%s</dd>\n",
			sp->flags & HD_SUSPECT_TRANSIENT ?
				"held only by running code (a stack): passed "
				"over by the verdict" :
				"its holder is no longer than in before: it "
				"replaced what it held, passed over by the "
				"verdict");
	fprintf(F, "<dt>first border object</dt><dd class=\"first\" "
		   "data-address=\"0x%llx\">",
		(unsigned long long)hd_store_address(s, sp->first));
	node_html(s, sp->first);
	fputs("</dd>\n<dt>retains</dt><dd>", F);
	html_count(F, "retained_count", sp->retained_count);
	fputs(" objects, ", F);
	html_bytes(F, "retained_memsize", sp->retained_memsize);
	fprintf(F, ": ");
	html_share(F, "share", r->t.leak_memsize ?
				       pct(sp->retained_memsize,
					   r->t.leak_memsize) / 100.0 :
				       0);
	fprintf(F, " of the %s</dd>\n<dt>keeps alive</dt><dd>", what);
	html_count(F, "keepalive_count", sp->keepalive_count);
	fputs(" new objects, ", F);
	html_bytes(F, "keepalive_memsize", sp->keepalive_memsize);
	fputs("</dd>\n</dl>\n<h4>Retention path</h4>\n", F);
	if (sp->path)
		path_html(s, sp->path);
	else
		fputs("<p class=\"nopath\">No GC root reaches it (a partial "
		      "dump?).</p>\n", F);
	fputs("<h4>What it holds, by class</h4>\n", F);
	snprintf(id, sizeof(id), "suspect-%zu-classes", i + 1);
	rows_html(sp->classes, 0, id, ch, 1, CLASS_ROWS, 0);
	fputs("<h4>Allocation sites of what it keeps alive</h4>\n", F);
	snprintf(id, sizeof(id), "suspect-%zu-sites", i + 1);
	rows_html(sp->sites, 0, id, sh, 2, (size_t)A.sites, 0);
	if (drawing(r, sp, i + 1))
		return EXIT_FAIL;
	fputs("</section>\n", F);
	return EXIT_OK;
}

static void clusters_html(const struct leak *r)
{
	const hd_store *s = r->s[r->at];
	size_t n = hd_leaks_cluster_count(r->l), i, k;
	size_t shown = n < A.top ? n : (size_t)A.top;
	char a[32];

	fputs("<h2 id=\"clusters-title\">Clusters: suspects held the same "
	      "way</h2>\n<p class=\"muted\">Suspects whose retention paths "
	      "have the same shape (root, classes and reference names hop "
	      "by hop) are one problem: three caches of one class held the "
	      "same way.</p>\n", F);
	fprintf(F, "<table id=\"clusters\" data-total=\"%zu\">\n<tr><th>"
		   "cluster</th><th class=\"n\">suspects</th><th>ranks</th>"
		   "<th class=\"n\">retained objects</th><th class=\"n\">"
		   "retained</th><th>share</th><th>shape</th></tr>\n", n);
	for (i = 0; i < shown; i++) {
		const hd_leaks_cluster *cl = hd_leaks_cluster_get(r->l, i);

		fprintf(F, "<tr class=\"cluster\" id=\"cluster-%zu\"><td>%zu"
			   "</td><td class=\"n\">", i + 1, i + 1);
		html_count(F, "suspects", cl->suspects);
		fputs("</td><td class=\"ranks\">", F);
		for (k = 0; k < cl->suspects && k < RANKS_SHOWN; k++)
			fprintf(F, "%s%zu", k ? ", " : "", cl->ranks[k] + 1);
		if (cl->suspects > RANKS_SHOWN)
			fprintf(F, " and %s more",
				cli_commas(cl->suspects - RANKS_SHOWN, a,
					   sizeof(a)));
		fputs("</td><td class=\"n\">", F);
		html_count(F, "retained_count", cl->retained_count);
		fputs("</td><td class=\"n\">", F);
		html_bytes(F, "retained_memsize", cl->retained_memsize);
		fputs("</td><td>", F);
		html_share(F, "share", pct(cl->retained_memsize,
					   r->t.leak_memsize) / 100.0);
		fputs("</td><td class=\"shape\">", F);
		if (cl->reached && cl->shape)
			cli_fold_text(F, cl->shape, strlen(cl->shape),
				      html_text);
		else
			fputs("no GC root reaches them (a partial dump?)", F);
		fputs("</td></tr>\n", F);
	}
	fputs("</table>\n", F);
	if (n > shown)
		fprintf(F, "<p class=\"muted\">%s more clusters (--top N "
			   "shows more).</p>\n",
			cli_commas(n - shown, a, sizeof(a)));
	for (i = 0; i < shown; i++) {
		const hd_leaks_cluster *cl = hd_leaks_cluster_get(r->l, i);

		if (!cl->reached || !cl->path || cl->suspects < 2)
			continue;
		fprintf(F, "<h3>Cluster %zu: path of suspect %zu, its "
			   "representative</h3>\n", i + 1, cl->ranks[0] + 1);
		path_html(s, cl->path);
	}
}

static void diff_tables(const struct leak *r)
{
	static const char *const ch[] = { "class" };
	static const char *const lh[] = { "location" };
	const hd_diff_result *d = r->d;
	uint64_t whole = d->has_later ? d->retained_later_memsize :
					d->added_memsize;

	fprintf(F, "<h2 id=\"diff-title\">The %s by class and by location"
		   "</h2>\n<p class=\"muted\">%s, as <code>heapdump diff</code>"
		   " counts them, by memsize.</p>\n",
		d->has_later ? "leak" : "growth",
		d->has_later ? "The new objects of after still alive in later"
			       " (as later has them)" :
			       "The new objects of after");
	fputs("<h3>By class</h3>\n", F);
	rows_html(r->diff_st, 0, "diff-class", ch, 1, rows_max(), whole);
	fputs("<h3>By allocation site</h3>\n", F);
	rows_html(r->diff_st, 1, "diff-location", lh, 1, rows_max(), whole);
}


/* ---- the growth's icicle: a static SVG drawn from the flame tree ---- */

#define FL_W 1000    /* the drawing's width, in px */
#define FL_ROW 18    /* a frame's height */
#define FL_LEVELS 24 /* frames drawn below the root, at most */
#define FL_RECTS 3000
#define FL_MIN_PX 1.0 /* narrower frames (and theirs) left out */

struct fl_at {
	uint32_t id;
	double x;
};

/* a warm colour of its own per frame name (FNV-1a) */
static unsigned fl_hue(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static void fl_rect(const hd_flame_node_info *k, uint32_t id, double x,
		    double w, uint64_t whole)
{
	unsigned h = fl_hue(k->name, k->name_len);
	size_t fit = w > 12 ? (size_t)((w - 6) / 7) : 0;
	char t[32];

	fprintf(F, "<g class=\"fl-frame\" data-id=\"%u\" data-depth=\"%u\" "
		   "data-total=\"%llu\"><title>",
		id, k->depth, (unsigned long long)k->total);
	html_text(F, k->name, k->name_len);
	fprintf(F, " \xe2\x80\x94 %s (%.1f%%)</title><rect x=\"%.2f\" "
		   "y=\"%u\" width=\"%.2f\" height=\"%d\" "
		   "fill=\"rgb(%u,%u,%u)\" stroke=\"#fff\" "
		   "stroke-width=\"0.5\"/>",
		cli_human_bytes(k->total, t, sizeof(t)), pct(k->total, whole),
		x, (k->depth - 1) * FL_ROW, w, FL_ROW, 205 + h % 50,
		80 + (h >> 8) % 110, 40 + (h >> 16) % 40);
	if (fit >= 3) {
		fprintf(F, "<text x=\"%.2f\" y=\"%u\" font-size=\"12\">",
			x + 3, (k->depth - 1) * FL_ROW + 13);
		if (k->name_len <= fit)
			html_text(F, k->name, k->name_len);
		else {
			html_text(F, k->name, fit - 2);
			fputs("..", F);
		}
		fputs("</text>", F);
	}
	fputs("</g>\n", F);
}

/* every frame at least FL_MIN_PX wide, FL_LEVELS deep, FL_RECTS in all,
 * depth first without recursion; draws them when draw, and returns the
 * depth of the deepest */
static uint32_t fl_walk(const hd_flame *g, int draw)
{
	struct fl_at st[FL_LEVELS * 64 + 64];
	hd_flame_node_info root, n, k;
	size_t sp = 0, rects = 0;
	uint32_t i, deepest = 0;
	double scale;

	hd_flame_node(&root, g, HD_FLAME_ROOT);
	scale = root.total ? (double)FL_W / (double)root.total : 0;
	st[sp].id = HD_FLAME_ROOT;
	st[sp++].x = 0;
	while (sp) {
		struct fl_at at = st[--sp];
		double x = at.x;

		if (hd_flame_node(&n, g, at.id))
			continue;
		if (at.id != HD_FLAME_ROOT) {
			if (draw)
				fl_rect(&n, at.id, at.x, n.total * scale,
					root.total);
			if (n.depth > deepest)
				deepest = n.depth;
			if (n.depth >= FL_LEVELS)
				continue;
		}
		for (i = 0; i < n.nchildren; i++) {
			if (hd_flame_node(&k, g, n.children[i]) ||
			    k.total * scale < FL_MIN_PX)
				break; /* largest first: the rest are narrower */
			if (rects >= FL_RECTS ||
			    sp >= sizeof(st) / sizeof(st[0]))
				break;
			rects++;
			st[sp].id = n.children[i];
			st[sp++].x = x;
			x += k.total * scale;
		}
	}
	return deepest;
}

/* The growth's (or the leak's) memsize by allocation stack, or by
 * retention path when the dump has no stacks (hd_flame_build on the
 * set diff_tables counts), as an icicle: no script, every name through
 * html_text. */
static int growth_flame(const struct leak *r)
{
	hd_flame_options fo = HD_FLAME_OPTIONS_INIT;
	const hd_diff_result *d = r->d;
	hd_store *s = r->s[r->at];
	hd_flame *g = NULL;
	hd_error err = { 0 };
	uint32_t levels;
	int stacks = hd_store_stack_count(s) > 0;

	fo.by = stacks ? HD_FLAME_BY_STACK : HD_FLAME_BY_PATH;
	fo.flags = A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0;
	if (stacks) {
		fo.stack = hd_store_flame_stack;
		fo.stack_ctx = s;
	}
	if (hd_flame_build(&g, s, d->has_later ? &d->retained_later :
						 &d->added, &fo, &err) ||
	    hd_flame_index(g, &err)) {
		hd_flame_free(g);
		return cli_lib_error(&err);
	}
	levels = fl_walk(g, 0);
	fprintf(F, "<h2 id=\"flame-title\">The %s by %s</h2>\n<p "
		   "class=\"muted\">An icicle of <code>heapdump flame "
		   "--by %s</code> over the %s: each frame as wide as the "
		   "memsize under it; hover for its name and size.</p>\n",
		d->has_later ? "leak" : "growth",
		stacks ? "allocation stack" : "retention path",
		stacks ? "stack" : "path",
		d->has_later ? "new objects still alive in later" :
			       "new objects");
	fprintf(F, "<svg id=\"growth-flame\" xmlns=\"http://www.w3.org/2000/"
		   "svg\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		   "role=\"img\" data-by=\"%s\" data-total=\"%llu\">\n",
		FL_W, levels * FL_ROW, FL_W, levels * FL_ROW,
		stacks ? "stack" : "path",
		(unsigned long long)hd_flame_total(g, NULL));
	fl_walk(g, 1);
	fputs("</svg>\n", F);
	hd_flame_free(g);
	return EXIT_OK;
}


static void process_growth_html(void)
{
	if (!proc.known || !proc.outside_ruby)
		return;
	fputs("<section id=\"process-growth\" class=\"verdict\">\n"
	      "<p class=\"head\">", F);
	html_text(F, "T", 1);
	html_str(F, proc.text + 1);
	fputs(".</p>\n<p class=\"muted\">The RSS of the gem's sidecars: "
	      "native memory (a C extension, FFI, the allocator), which no "
	      "heap dump shows. What follows is the Ruby heap only.</p>\n"
	      "</section>\n", F);
}

/* ---- where each dump's RSS goes (heapdump memory's split) ---- */

/* A table, a column a dump that has the figures, a row a bucket; nothing
 * when no dump has a sidecar. */
static void memory_html(hd_store *const *s, const struct cli_input *in,
			size_t n)
{
	hd_memory_split sp[MAX_DUMPS];
	size_t k, any = 0;
	int b;

	for (k = 0; k < n && k < MAX_DUMPS; k++)
		any += (size_t)cli_memory_split(&sp[k], in[k].path, s[k]);
	if (!any)
		return;
	fputs("<h2 id=\"memory-title\">Where the RSS goes</h2>\n<p class="
	      "\"muted\">From each dump's sidecar, as <code>heapdump memory"
	      "</code> splits it: the parts add up to the RSS.</p>\n"
	      "<table id=\"memory\">\n<tr><th></th>", F);
	for (k = 0; k < n && k < MAX_DUMPS; k++)
		if (sp[k].known)
			fprintf(F, "<th>dump %zu</th>", k + 1);
	fputs("</tr>\n<tr class=\"rss\"><td>RSS</td>", F);
	for (k = 0; k < n && k < MAX_DUMPS; k++) {
		if (!sp[k].known)
			continue;
		fputs("<td>", F);
		html_bytes(F, "rss", sp[k].rss);
		fputs("</td>", F);
	}
	fputs("</tr>\n", F);
	for (b = 0; b < HD_MEM_NBUCKETS; b++) {
		fprintf(F, "<tr class=\"%s\"><td>",
			hd_memory_bucket_key((hd_memory_bucket)b));
		html_str(F, hd_memory_bucket_label((hd_memory_bucket)b));
		fputs("</td>", F);
		for (k = 0; k < n && k < MAX_DUMPS; k++) {
			if (!sp[k].known)
				continue;
			fputs("<td>", F);
			if (sp[k].measured & (1u << b))
				html_bytes(F, hd_memory_bucket_key(
						      (hd_memory_bucket)b),
					   sp[k].bytes[b]);
			else
				fputs("&ndash;", F);
			fputs("</td>", F);
		}
		fputs("</tr>\n", F);
	}
	fputs("</table>\n", F);
}

/*
 * The leak as data, in the one schema of leaks -f json and serve
 * (hd_leak_session_write_json, heapdump-json(5)), for scripts that read
 * the page: <script type="application/json" id="leak-data">. Every '<'
 * is written \u003c, so that no name closes the element. Returns
 * EXIT_FAIL only when out of memory.
 */
static int leak_data(const struct leak *r)
{
	hd_leak_json_options jo = HD_LEAK_JSON_OPTIONS_INIT;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		goto oom;
	jo.flags = 0; /* no deprecated names in new data */
	hd_leak_session_write_json(m, r->ls, &proc, &jo);
	if (fclose(m) != 0 || !buf)
		goto oom;
	fputs("<script type=\"application/json\" id=\"leak-data\">", F);
	for (i = 0; i < len; i++)
		if (buf[i] == '<')
			fputs("\\u003c", F);
		else
			fputc(buf[i], F);
	fputs("</script>\n", F);
	free(buf);
	return EXIT_OK;
oom:
	free(buf);
	cli_error("out of memory");
	return EXIT_FAIL;
}

static int leak_page(struct leak *r)
{
	char title[64];
	size_t i;
	char a[32];
	int rc;

	snprintf(title, sizeof(title), "heapdump leak report: %s",
		 r->d->has_later ? "three dumps" : "two dumps");
	html_begin(F, title);
	fprintf(F, "<h1>Leak report</h1>\n<p class=\"sub\">%s dumps of one "
		   "process, oldest first; the %s as <code>heapdump leaks"
		   "</code> finds it.</p>\n",
		r->nin == 2 ? "Two" : r->nin == 3 ? "Three" : "Several",
		r->d->has_later ? "leak" : "growth");
	process_growth_html();
	dumps_table(r);
	memory_html(r->s, r->in, (size_t)r->nin);
	verdict(r);
	if (r->t.groups) {
		fprintf(F, "<h2 id=\"suspects-title\">Suspects</h2>\n<p "
			   "class=\"muted\">The old objects that hold the new "
			   "ones, ranked by what they retain (%s of %s shown)."
			   "</p>\n",
			cli_commas(r->t.shown, a, sizeof(a)),
			cli_commas(r->t.groups, title, sizeof(title)));
		for (i = 0; i < r->t.shown; i++)
			if ((rc = suspect_html(r, i)))
				return rc;
		if (r->t.more)
			fprintf(F, "<p class=\"muted\">%s more suspects above "
				   "the minimum share (--top N shows more)."
				   "</p>\n",
				cli_commas(r->t.more, a, sizeof(a)));
		clusters_html(r);
	}
	if (r->d->added.n)
		diff_tables(r);
	if (r->d->added.n && (rc = growth_flame(r)))
		return rc;
	if ((rc = leak_data(r)))
		return rc;
	footer();
	html_end(F);
	return EXIT_OK;
}

static int leak_report(char **argv, int nin, struct cli_out *out)
{
	hd_leak_session_options lso = HD_LEAK_SESSION_OPTIONS_INIT;
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	const hd_order_pair *pairs;
	struct leak r;
	const hd_nodes *set;
	hd_error err = { 0 };
	size_t np;
	int rc, k;

	memset(&r, 0, sizeof(r));
	r.nin = nin;
	for (k = 0; k < nin; k++) {
		cli_input_init(&r.in[k], argv[k], A.strict, A.quiet);
		if ((rc = cli_spool_stdin(&r.in[k])) ||
		    (rc = cli_open_store(&r.in[k], &r.s[k])))
			goto out;
	}
	lso.diff.flags = A.no_generation ? HD_DIFF_NO_GENERATION : 0;
	lso.diff.read.flags = A.strict ? HD_READ_STRICT : 0;
	lso.leaks_flags = A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0;
	lso.min_share = A.min_share / 100.0;
	lso.top = (size_t)A.top;
	if ((rc = cli_leak_session(&r.ls, r.s, r.in, (size_t)nin, &lso,
				   A.force, r.times)))
		goto out;
	pairs = hd_leak_session_order(r.ls, &np);
	memcpy(r.pairs, pairs, np * sizeof(*r.pairs));
	r.d = hd_leak_session_diff(r.ls);
	r.l = hd_leak_session_leaks(r.ls);
	r.at = (int)hd_leak_session_at(r.ls);
	r.t = *hd_leak_session_totals(r.ls);
	r.caveats = hd_leak_session_caveats(r.ls);
	cli_process_judge(&proc, r.s, r.in, (size_t)nin);
	if (G.b && hd_budget_eval_leaks(&gate, G.b, r.l, r.s[r.at], r.d, &err))
		goto lib;
	/* the diff's tables, as heapdump diff groups them */
	so.keys[0][0] = HD_KEY_CLASS;
	so.nkeys[0] = 1;
	so.keys[1][0] = HD_KEY_LOCATION;
	so.nkeys[1] = 1;
	so.ngroupings = 2;
	set = r.d->has_later ? &r.d->retained_later : &r.d->added;
	if (hd_stats_new(&r.diff_st, &so, &err) ||
	    hd_stats_add_nodes(r.diff_st, r.s[r.at], set, &err) ||
	    hd_stats_finish(r.diff_st, &err))
		goto lib;
	if ((rc = cli_out_open(out, A.output, r.in[r.at].path)))
		goto out;
	F = out->f;
	if ((rc = leak_page(&r)))
		cli_out_abort(out);
	goto out;
lib:
	rc = cli_lib_error(&err);
out:
	hd_stats_free(r.diff_st);
	hd_leak_session_free(r.ls);
	for (k = 0; k < MAX_DUMPS; k++)
		hd_store_close(r.s[k]);
	return rc;
}

/* ---- the one-dump overview ---- */

static void process_html(const char *path, const hd_store *s,
			 const hd_stats_totals *t)
{
	struct cli_sidecar sc;
	const char *dump = path;
	hd_store_info si;
	char a[32];

	if (hd_store_is_store(path)) {
		hd_store_info_get(&si, s);
		dump = si.source_path && *si.source_path ? si.source_path :
							   "-";
	}
	fputs("<h2 id=\"process-title\">Process memory</h2>\n", F);
	if (!cli_sidecar_read(dump, &sc)) {
		fputs("<p id=\"process\" class=\"muted\">No sidecar: the "
		      "heapdump gem writes DUMP.hdmeta beside the dumps it "
		      "takes, with the process's RSS.</p>\n", F);
		return;
	}
	fputs("<dl class=\"kv\" id=\"process\">\n<dt>process</dt><dd>", F);
	fprintf(F, "pid %llu, Ruby ", (unsigned long long)sc.pid);
	html_str(F, sc.ruby_version[0] ? sc.ruby_version : "?");
	fputs(", taken ", F);
	html_str(F, sc.time[0] ? sc.time : "?");
	fputs("</dd>\n<dt>RSS</dt><dd>", F);
	html_bytes(F, "rss", sc.rss);
	fputs("</dd>\n<dt>in the objects above</dt><dd>", F);
	html_bytes(F, "objects_memsize", t->memsize);
	fputs(": ", F);
	html_share(F, "objects_share", pct(t->memsize, sc.rss) / 100.0);
	fputs(" of RSS</dd>\n", F);
	if (sc.has_memsize_of_all) {
		fputs("<dt>ObjectSpace.memsize_of_all</dt><dd>", F);
		html_bytes(F, "memsize_of_all", sc.memsize_of_all);
		fputs(": ", F);
		html_share(F, "memsize_of_all_share",
			   pct(sc.memsize_of_all, sc.rss) / 100.0);
		fputs(" of RSS</dd>\n", F);
	}
	if (sc.has_malloc) {
		fputs("<dt>malloc in use</dt><dd>", F);
		html_bytes(F, "malloc_in_use", sc.malloc_in_use);
		fputs(": ", F);
		html_share(F, "malloc_share",
			   pct(sc.malloc_in_use, sc.rss) / 100.0);
		fputs(" of RSS</dd>\n", F);
	}
	fprintf(F, "<dt>not in Ruby objects</dt><dd>%s: what the heap does "
		   "not account for (the interpreter, native extensions, "
		   "fragmentation)</dd>\n</dl>\n",
		cli_human_bytes(sc.rss > t->memsize ? sc.rss - t->memsize : 0,
				a, sizeof(a)));
	cli_sidecar_free(&sc);
}

static int retainers_html(const hd_store *s, const hd_domtree *d)
{
	size_t k = A.rows ? (size_t)A.rows : hd_store_node_count(s), n, i;
	hd_node_id *ids = malloc((k ? k : 1) * sizeof(*ids));
	hd_class_retained *cls = NULL;
	hd_error err = { 0 };
	uint64_t all, reached = hd_domtree_reached(d, &all);

	if (!ids) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	if (hd_domtree_top(ids, &n, d, k, &err)) {
		free(ids);
		return cli_lib_error(&err);
	}
	fputs("<h2 id=\"retainers-title\">Top retainers</h2>\n<p class="
	      "\"muted\">The objects that alone keep the most memory alive "
	      "(their retained set in the dominator tree: what the GC "
	      "could free without them), as <code>heapdump top</code> "
	      "ranks them. The GC roots reach ", F);
	html_count(F, "reached", reached);
	fputs(" objects, ", F);
	html_bytes(F, "reached_memsize", all);
	fputs(".</p>\n<table id=\"retainers\">\n<tr><th class=\"n\">"
	      "retained</th><th>share</th><th class=\"n\">objects</th>"
	      "<th class=\"n\">shallow</th><th>object</th></tr>\n", F);
	for (i = 0; i < n; i++) {
		uint64_t rm, rc = hd_domtree_retained(d, ids[i], &rm);

		fprintf(F, "<tr class=\"row\" data-address=\"0x%llx\">"
			   "<td class=\"n\">",
			(unsigned long long)hd_store_address(s, ids[i]));
		html_bytes(F, "retained_memsize", rm);
		fputs("</td><td>", F);
		html_share(F, "share", pct(rm, all) / 100.0);
		fputs("</td><td class=\"n\">", F);
		html_count(F, "retained_count", rc);
		fputs("</td><td class=\"n\">", F);
		html_bytes(F, "memsize", hd_store_memsize(s, ids[i]));
		fputs("</td><td>", F);
		node_html(s, ids[i]);
		fputs("</td></tr>\n", F);
	}
	fputs("</table>\n", F);
	free(ids);
	if (hd_domtree_classes(&cls, &n, d, &err))
		return cli_lib_error(&err);
	fputs("<h3>By class: instances together</h3>\n<table id=\"retainers"
	      "-class\">\n<tr><th>class</th><th class=\"n\">objects</th>"
	      "<th class=\"n\">shallow</th><th class=\"n\">retained "
	      "objects</th><th class=\"n\">retained</th><th>share</th></tr>"
	      "\n", F);
	for (i = 0; i < n && i < rows_max(); i++) {
		fputs("<tr class=\"row\"><td class=\"key\">", F);
		html_str(F, cls[i].name);
		fputs("</td><td class=\"n\">", F);
		html_count(F, "objects", cls[i].objects);
		fputs("</td><td class=\"n\">", F);
		html_bytes(F, "shallow", cls[i].shallow);
		fputs("</td><td class=\"n\">", F);
		html_count(F, "retained_count", cls[i].retained_count);
		fputs("</td><td class=\"n\">", F);
		html_bytes(F, "retained_memsize", cls[i].retained_memsize);
		fputs("</td><td>", F);
		html_share(F, "share", pct(cls[i].retained_memsize, all) /
					       100.0);
		fputs("</td></tr>\n", F);
	}
	fputs("</table>\n", F);
	hd_class_retained_free(cls);
	return EXIT_OK;
}

static void totals_html(const struct cli_input *in,
			const hd_stats_totals *t)
{
	char c[64];

	fputs("<dl class=\"kv\" id=\"totals\">\n<dt>dump</dt><dd><code>", F);
	html_str(F, in->name);
	fprintf(F, "</code></dd>\n<dt>Ruby</dt><dd class=\"ruby\">%s</dd>\n",
		hd_features_ruby(c, sizeof(c), t->features));
	fputs("<dt>objects</dt><dd>", F);
	html_count(F, "objects", t->objects);
	fputs("</dd>\n<dt>memsize</dt><dd>", F);
	html_bytes(F, "memsize", t->memsize);
	if (t->saturated)
		fputs(" (saturated: the sum stopped at 2^64-1)", F);
	fputs("</dd>\n<dt>references</dt><dd>", F);
	html_count(F, "references", t->edges);
	fputs("</dd>\n<dt>roots</dt><dd>", F);
	html_count(F, "roots", t->roots);
	fputs(" in ", F);
	html_count(F, "root_categories", t->root_categories);
	fprintf(F, " categories%s</dd>\n", t->root_categories ? "" :
				" (a partial dump: no ROOT lines)");
	fputs("<dt>generations</dt><dd>", F);
	if (t->traced) {
		fprintf(F, "%llu..%llu (", (unsigned long long)t->gen_min,
			(unsigned long long)t->gen_max);
		html_count(F, "traced", t->traced);
		fputs(" objects traced)", F);
	} else {
		fputs("none (allocation tracing was off: no allocation "
		      "sites)", F);
	}
	fputs("</dd>\n", F);
	if (t->excluded) {
		fputs("<dt>excluded</dt><dd>", F);
		html_count(F, "excluded", t->excluded);
		fputs(" objects, ", F);
		html_bytes(F, "excluded_memsize", t->excluded_memsize);
		fputs(": the allocation tracer and dump_all's own objects"
		      "</dd>\n", F);
	}
	fputs("</dl>\n", F);
}

static int one_report(const char *path, struct cli_out *out)
{
	static const char *const th[] = { "type" };
	static const char *const ch[] = { "class" };
	static const char *const lh[] = { "location" };
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	struct cli_input in;
	hd_store *s = NULL;
	hd_stats *st = NULL;
	hd_domtree *d = NULL;
	hd_stats_totals t;
	hd_error err = { 0 };
	int rc;

	cli_input_init(&in, path, A.strict, A.quiet);
	if ((rc = cli_spool_stdin(&in)) || (rc = cli_open_store(&in, &s)))
		goto out;
	so.keys[0][0] = HD_KEY_TYPE;
	so.keys[1][0] = HD_KEY_CLASS;
	so.keys[2][0] = HD_KEY_LOCATION;
	so.nkeys[0] = so.nkeys[1] = so.nkeys[2] = 1;
	so.ngroupings = 3;
	if (hd_stats_new(&st, &so, &err) ||
	    hd_stats_add_store(st, s, &err) || hd_stats_finish(st, &err) ||
	    hd_domtree_new(&d, s, HD_DOMTREE_SKIP_DUMPER |
			   (A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0), &err)) {
		rc = cli_lib_error(&err);
		goto out;
	}
	hd_stats_totals_get(&t, st);
	if ((rc = cli_out_open(out, A.output, in.path)))
		goto out;
	F = out->f;
	html_begin(F, "heapdump report: one dump");
	fputs("<h1>Heap overview</h1>\n<p class=\"sub\">One dump: what it "
	      "holds and what holds it. Give two or three dumps of one "
	      "process (BEFORE AFTER [LATER]) for the leak report.</p>\n",
	      F);
	fputs("<section id=\"verdict\" class=\"verdict note\">\n<p class="
	      "\"head\">One dump: no comparison, so no leak verdict.</p>\n"
	      "<ul class=\"caveats\"><li class=\"caveat one-dump\">A single "
	      "dump shows what is big, not what grows: the biggest "
	      "retainers below may be working memory. Take a second and a "
	      "third dump of the same process and run <code>heapdump "
	      "report BEFORE AFTER LATER</code>.</li></ul>\n</section>\n", F);
	totals_html(&in, &t);
	process_html(in.path, s, &t);
	memory_html(&s, &in, 1);
	if ((rc = retainers_html(s, d))) {
		cli_out_abort(out);
		goto out;
	}
	fputs("<h2 id=\"groups-title\">Biggest groups</h2>\n<p class=\"muted"
	      "\">Objects and their own memsize, as <code>heapdump stats"
	      "</code> counts them, by memsize.</p>\n<h3>By type</h3>\n", F);
	rows_html(st, 0, "by-type", th, 1, rows_max(), t.memsize);
	fputs("<h3>By class</h3>\n", F);
	rows_html(st, 1, "by-class", ch, 1, rows_max(), t.memsize);
	fputs("<h3>By allocation site</h3>\n", F);
	if (!t.traced)
		fputs("<p class=\"muted\">No allocation sites: the dump was "
		      "taken without allocation tracing.</p>\n", F);
	rows_html(st, 2, "by-location", lh, 1, rows_max(), t.memsize);
	footer();
	html_end(F);
out:
	hd_domtree_free(d);
	hd_stats_free(st);
	hd_store_close(s);
	return rc;
}

/* ---- the command ---- */

static int report_run(int argc, char **argv)
{
	struct cli_out out;
	int rc, first, k, n, nstdin = 0;

	memset(&A, 0, sizeof(A));
	memset(&out, 0, sizeof(out));
	A.top = 5;
	A.sites = 5;
	A.rows = 20;
	A.min_share = MIN_SHARE_DEFAULT;
	cli_render_limits_init(&A.lim);
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	argc = cli_skip_sidecars(argc, argv, first); /* a glob of dumps */
	n = argc - first;
	if (n < 1 || n > MAX_DUMPS)
		return cli_usage_error(&info, n ? "one dump, or two to sixteen: "
						  "BEFORE AFTER [STEP...] "
						  "[LATER]" :
						  "which dump or dumps?");
	for (k = 0; k < n; k++)
		nstdin += strcmp(argv[first + k], "-") == 0;
	if (nstdin > 1)
		return cli_usage_error(&info, "only one input can be '-'");
	if (!A.top)
		return cli_usage_error(&info, "--top must be at least 1");
	if (A.output && !*A.output)
		return cli_usage_error(&info, "-o needs a file name");
	if (G.b && n == 1)
		return cli_usage_error(&info, "budgets judge a leak: two dumps "
					      "or more");
	if ((rc = cli_gate_prepare(&info, &G, HD_BUDGET_LEAKS, 0, NULL)))
		return rc;
	/* every input is registered before the output is opened: -o never
	 * replaces one (cli_out_check) */
	rc = n == 1 ? one_report(argv[first], &out) :
		      leak_report(argv + first, n, &out);
	if (rc) {
		cli_out_abort(&out);
		return rc;
	}
	if (ferror(out.f) || fflush(out.f)) {
		cli_error("cannot write the report: %s", strerror(errno));
		cli_out_abort(&out);
		return EXIT_FAIL;
	}
	if ((rc = cli_out_commit(&out)))
		return rc;
	return gate ? cli_gate_say("report", gate) : 0;
}

int cmd_report(int argc, char **argv)
{
	int rc = report_run(argc, argv);

	hd_budget_report_free(gate);
	gate = NULL;
	cli_gate_free(&G);
	return rc;
}
