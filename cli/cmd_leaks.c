/*
 * cmd_leaks.c - heapdump leaks: the leak workflow in one report.
 *
 *  1. diff: the objects new in AFTER since BEFORE (with LATER: those of
 *     them still alive in LATER, the three-dump method);
 *  2. the border between old and new objects with keepalive and
 *     retained counts (hd_interface_with);
 *  3. suspects: the border's new objects grouped by what holds them. A
 *     new object held by exactly one old object belongs to that holder
 *     (a cache, a registry, a constant); one held by several old
 *     objects, or by a root category only, is a suspect by itself. A
 *     suspect's growth is the sum of its border objects' retained sets
 *     (disjoint, so suspects never count an object twice), and suspects
 *     are ranked by it;
 *  4. for the first few: the retention path from a GC root to the
 *     holder, the classes of the border objects, and the allocation
 *     sites of everything they keep alive (a search through new objects
 *     from the suspect's border objects).
 *
 * With LATER, steps 2 to 4 work on LATER's graph: the leaked objects as
 * LATER has them (hd_diff_result.retained_later), held as LATER holds
 * them. A holder that let go of them between AFTER and LATER (a bounded
 * buffer, an in-flight request) is then no suspect.
 *
 * Groups under --min-share of the leak are folded into one line
 * (hd_fold_shares). The dumps are checked to be in order, of one process
 * (cli_check_order), before anything else.
 *
 * Text report, --format json or tsv, and --svg DIR for a picture of each
 * suspect (its path and border objects, drawn by libgvc).
 */
#include "cmd.h"
#include "common.h"
#include "draw.h"
#include "opt.h"
#include "order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define COMMAND_NAME "leaks"

/* border objects drawn per suspect with --svg */
#define SVG_BORDER 12

/* the default --min-share, in percent */
#define MIN_SHARE_DEFAULT 1.0

static struct leaks_args {
	const char *format, *svg;
	unsigned long long top, sites;
	double min_share; /* percent */
	int strict, quiet, no_generation, skip_weak, force;
	struct cli_render_limits lim;
} A;

/* --min-share PCT: a percentage, 0 to 100, with or without '%' */
static const char *parse_share(const char *arg, void *target)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end != arg && *end == '%')
		end++;
	if (end == arg || *end || errno || !(v >= 0 && v <= 100))
		return "--min-share takes a percentage from 0 to 100";
	*(double *)target = v;
	return NULL;
}

static const struct cli_opt opts[] = {
	OPT_UINT('n', "top", "N", &A.top, "suspects to report (default 5)"),
	OPT_CALLBACK(0, "min-share", "PCT", &A.min_share, parse_share,
		     "fold the groups under PCT% of the leak into one line "
		     "(default 1; 0 shows every group)"),
	OPT_UINT(0, "sites", "N",
		 &A.sites, "allocation sites per suspect (default 5)"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json (one document) or tsv"),
	OPT_STRING(0, "svg", "DIR", &A.svg,
		   "draw each suspect's retention graph as DIR/suspect-N.svg"),
	CLI_RENDER_LIMIT_OPTS(&A.lim.max_nodes, &A.lim.max_edges),
	OPT_FLAG(0, "no-generation", &A.no_generation,
		 "identify objects by address and fingerprint even in traced "
		 "dumps (see heapdump-diff)"),
	OPT_FLAG(0, "skip-weak", &A.skip_weak,
		 "weak references (WeakMap, WeakKeyMap, WeakRef) hold nothing: "
		 "no holder, no path through them"),
	OPT_FLAG(0, "force", &A.force,
		 "compare dumps that seem to be in the wrong order"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] BEFORE AFTER [LATER]",
	"Find what leaks between dumps: the new objects of AFTER (with LATER,\n"
	"those still alive in LATER, as LATER holds them), grouped by the old\n"
	"objects that hold them; the few holders with the most growth, each\n"
	"with its retention path from a GC root, the classes it holds and\n"
	"their allocation sites.",
	opts
};

struct suspect {
	hd_node_id holder;   /* the old holder, or HD_NODE_NONE */
	hd_node_id first;    /* its first border object */
	uint64_t nborder;
	uint32_t holders, roots; /* of a suspect without one holder */
	uint64_t rcount, rmem;   /* sum of the border objects' retained */
	uint64_t kcount, kmem;   /* the union of what they keep alive */
	hd_root_path path;
	int has_path;
	hd_nodes border;     /* the border objects (ascending) */
	hd_stats *classes;   /* border objects by class */
	hd_stats *sites;     /* kept-alive objects by class,location */
};

struct report {
	hd_store *s[3];
	struct cli_input in[3];
	int nin;
	int at;              /* the dump whose graph is examined: AFTER or
				LATER */
	hd_diff_result *d;
	const hd_nodes *leak; /* node ids of s[at] */
	uint64_t leak_mem;
	hd_interface *x;
	struct suspect *sus;
	size_t nsus, shown;
	size_t more;         /* groups above the minimum share not shown */
	hd_share_fold fold;  /* groups under it */
	uint64_t folded_count;
	uint64_t border_total;
};

/* ---- grouping the border by holder ---- */

static int cmp_suspect(const void *a, const void *b)
{
	const struct suspect *x = a, *y = b;

	if (x->rmem != y->rmem)
		return x->rmem < y->rmem ? 1 : -1;
	if (x->rcount != y->rcount)
		return x->rcount < y->rcount ? 1 : -1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The key of a border object: its only old holder, or itself. */
static hd_node_id owner(const hd_border *b)
{
	return b->holders == 1 ? b->holder[0] : b->id;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One suspect per owner: the pairs (owner, border index) sorted by
 * owner, then summed run by run.
 */
static int group(struct report *r)
{
	size_t nb, i, j, k = 0;
	const hd_border *b = hd_interface_diff_border(r->x, &nb);
	uint64_t *pairs = malloc((nb ? nb : 1) * sizeof(*pairs));

	r->border_total = nb;
	r->sus = calloc(nb ? nb : 1, sizeof(*r->sus));
	if (!pairs || !r->sus) {
		free(pairs);
		return HD_ENOMEM;
	}
	for (i = 0; i < nb; i++)
		pairs[i] = (uint64_t)owner(&b[i]) << 32 | i;
	qsort(pairs, nb, sizeof(*pairs), cmp_u64);
	for (i = 0; i < nb; i = j) {
		struct suspect *s = &r->sus[k++];
		hd_node_id key = (hd_node_id)(pairs[i] >> 32);

		s->first = HD_NODE_NONE;
		for (j = i; j < nb && (hd_node_id)(pairs[j] >> 32) == key;
		     j++) {
			const hd_border *e = &b[(uint32_t)pairs[j]];

			s->holder = e->holders == 1 ? e->holder[0] :
						      HD_NODE_NONE;
			s->holders = e->holders;
			s->roots = e->roots;
			if (e->id < s->first)
				s->first = e->id;
			s->nborder++;
			s->rcount += e->retained_count;
			s->rmem += e->retained_memsize;
		}
	}
	r->nsus = k;
	free(pairs);
	qsort(r->sus, r->nsus, sizeof(*r->sus), cmp_suspect);
	return 0;
}

/* ---- what one suspect keeps alive ---- */

static int push(hd_nodes *v, hd_node_id id)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		hd_node_id *p = realloc(v->ids, cap * sizeof(*p));

		if (!p)
			return HD_ENOMEM;
		v->ids = p;
		v->cap = cap;
	}
	v->ids[v->n++] = id;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	hd_node_id x = *(const hd_node_id *)a, y = *(const hd_node_id *)b;

	return x < y ? -1 : x > y;
}

static int new_stats(hd_stats **st, const char *keys, hd_error *err)
{
	hd_stats_options so;

	memset(&so, 0, sizeof(so));
	so.version = HD_STATS_OPTIONS_VERSION;
	so.flags = HD_STATS_ALL;
	if (cli_parse_keys(&info, keys, &so))
		return HD_EINVAL;
	return hd_stats_new(st, &so, err);
}

/*
 * The suspect's border objects, then everything they reach through new
 * objects (breadth-first; seen is cleared again afterwards), counted by
 * class and allocation site.
 */
static int describe(struct report *r, struct suspect *sp, unsigned char *isnew,
		    unsigned char *seen, hd_error *err)
{
	const hd_store *s = r->s[r->at];
	size_t nb, i, head = 0;
	const hd_border *b = hd_interface_diff_border(r->x, &nb);
	hd_nodes q = { NULL, 0, 0 };
	hd_edge_iter it;
	hd_node_id v, t;
	int rc;

	for (i = 0; i < nb; i++)
		if (owner(&b[i]) == (sp->holder != HD_NODE_NONE ? sp->holder :
								  sp->first) &&
		    (rc = push(&sp->border, b[i].id)))
			goto out;
	for (i = 0; i < sp->border.n; i++) {
		v = sp->border.ids[i];
		seen[v / 8] |= (unsigned char)(1u << (v % 8));
		if ((rc = push(&q, v)))
			goto out;
	}
	while (head < q.n) {
		v = q.ids[head++];
		hd_store_refs(s, v, &it);
		while (hd_edge_iter_next(&it, &t) == 0) {
			if (!(isnew[t / 8] >> (t % 8) & 1) ||
			    seen[t / 8] >> (t % 8) & 1)
				continue;
			seen[t / 8] |= (unsigned char)(1u << (t % 8));
			if ((rc = push(&q, t)))
				goto out;
		}
	}
	sp->kcount = q.n;
	for (i = 0; i < q.n; i++) {
		v = q.ids[i];
		seen[v / 8] &= (unsigned char)~(1u << (v % 8));
		sp->kmem += hd_store_memsize(s, v);
	}
	qsort(q.ids, q.n, sizeof(*q.ids), cmp_id);
	if ((rc = new_stats(&sp->classes, "class", err)) ||
	    (rc = hd_stats_add_nodes(sp->classes, s, &sp->border, err)) ||
	    (rc = hd_stats_finish(sp->classes, err)) ||
	    (rc = new_stats(&sp->sites, "class,location", err)) ||
	    (rc = hd_stats_add_nodes(sp->sites, s, &q, err)) ||
	    (rc = hd_stats_finish(sp->sites, err)))
		goto out;
out:
	free(q.ids);
	return rc;
}

static int describe_all(struct report *r, hd_error *err)
{
	const hd_store *s = r->s[r->at];
	size_t bytes = (size_t)hd_store_node_count(s) / 8 + 1, i;
	unsigned char *isnew = calloc(bytes, 1), *seen = calloc(bytes, 1);
	hd_reach *reach = NULL;
	int rc = HD_ENOMEM;

	if (!isnew || !seen)
		goto out;
	for (i = 0; i < r->leak->n; i++) {
		hd_node_id v = r->leak->ids[i];

		isnew[v / 8] |= (unsigned char)(1u << (v % 8));
	}
	if ((rc = hd_reach_new(&reach, s, A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0,
			       err)))
		goto out;
	for (i = 0; i < r->shown; i++) {
		struct suspect *sp = &r->sus[i];
		hd_node_id target = sp->holder != HD_NODE_NONE ? sp->holder :
								 sp->first;

		if ((rc = describe(r, sp, isnew, seen, err)))
			goto out;
		rc = hd_reach_path(reach, target, &sp->path, err);
		if (rc && rc != HD_ENOTFOUND)
			goto out;
		sp->has_path = rc == 0;
		rc = 0;
	}
out:
	hd_reach_free(reach);
	free(isnew);
	free(seen);
	return rc;
}

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
	printf("0x%llx %s", (unsigned long long)hd_store_address(s, v), cls);
	if (cli_type_adds(s, v, cls))
		printf(" (%s)", hd_type_name(hd_store_type(s, v)));
	if (hd_store_site(s, v, &site) == 0 && site.file) {
		fputs(", ", stdout);
		cli_site_text(stdout, &site, 0);
	}
}

static void text_rows(hd_stats *st, size_t max, const char *indent,
		      int with_mem)
{
	size_t n, i;
	const hd_stats_row *rows = hd_stats_rows(st, 0, HD_SORT_MEMSIZE, &n);
	char a[32], b[32];

	for (i = 0; i < n && i < max; i++) {
		printf("%s%9s", indent, cli_commas(rows[i].count, a, sizeof(a)));
		if (with_mem)
			printf(" %10s", cli_human_bytes(rows[i].memsize, b,
							sizeof(b)));
		fputs("  ", stdout);
		cli_text_string(stdout, rows[i].key[0], rows[i].key_len[0]);
		if (rows[i].key[1]) {
			fputs("  ", stdout);
			cli_text_string(stdout, rows[i].key[1],
					rows[i].key_len[1]);
		}
		putchar('\n');
	}
	if (n > max)
		printf("%s(%s more)\n", indent,
		       cli_commas(n - max, a, sizeof(a)));
}

static void print_text(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	const hd_diff_result *d = r->d;
	char a[32], b[32], c[32];
	size_t i, k;

	for (k = 0; k < (size_t)r->nin; k++) {
		static const char *const side[] = { "before", "after",
						     "later" };

		printf("%-9s ", side[k]);
		cli_text_string(stdout, r->in[k].name, strlen(r->in[k].name));
		printf(" (%s objects)\n",
		       cli_commas(d->objects[k], a, sizeof(a)));
	}
	printf("%-9s %s objects, %s new in after\n", "new",
	       cli_commas(d->added.n, a, sizeof(a)),
	       cli_human_bytes(d->added_memsize, b, sizeof(b)));
	if (d->has_later)
		printf("%-9s %s objects, %s still alive in later\n", "leaked",
		       cli_commas(r->leak->n, a, sizeof(a)),
		       cli_human_bytes(r->leak_mem, b, sizeof(b)));
	printf("%-9s %s new objects held by old ones or roots, "
	       "in %s group(s) by holder\n", "border",
	       cli_commas(r->border_total, a, sizeof(a)),
	       cli_commas(r->nsus, b, sizeof(b)));
	if (!r->nsus) {
		printf("\nno suspects: nothing new is held by an old object "
		       "or a root\n");
		return;
	}
	for (i = 0; i < r->shown; i++) {
		const struct suspect *sp = &r->sus[i];

		printf("\nsuspect %zu: ", i + 1);
		if (sp->holder != HD_NODE_NONE) {
			text_node(s, sp->holder);
			printf("\n  holds %s new object(s) that retain %s "
			       "objects, %s (%.1f%% of the %s)\n",
			       cli_commas(sp->nborder, a, sizeof(a)),
			       cli_commas(sp->rcount, b, sizeof(b)),
			       cli_human_bytes(sp->rmem, c, sizeof(c)),
			       pct(sp->rmem, r->leak_mem),
			       d->has_later ? "leak" : "growth");
		} else {
			text_node(s, sp->first);
			char h[64];

			if (sp->holders)
				snprintf(h, sizeof(h), "%s old objects%s",
					 cli_commas(sp->holders, a, sizeof(a)),
					 sp->roots ? " and a root" : "");
			else
				snprintf(h, sizeof(h), "a root only");
			printf("\n  a new object held by %s; retains %s "
			       "objects, %s (%.1f%% of the %s)\n", h,
			       cli_commas(sp->rcount, b, sizeof(b)),
			       cli_human_bytes(sp->rmem, c, sizeof(c)),
			       pct(sp->rmem, r->leak_mem),
			       d->has_later ? "leak" : "growth");
		}
		printf("  keeps alive %s new objects, %s\n",
		       cli_commas(sp->kcount, a, sizeof(a)),
		       cli_human_bytes(sp->kmem, b, sizeof(b)));
		if (sp->has_path) {
			const char *root = hd_store_root_name(s,
							      sp->path.root);

			fputs("  path from root ", stdout);
			cli_text_string(stdout, root, strlen(root));
			fputs(":\n", stdout);
			for (k = 0; k < sp->path.n; k++) {
				printf("    ");
				text_node(s, sp->path.nodes[k]);
				putchar('\n');
			}
		} else {
			printf("  path: no GC root reaches it (a partial "
			       "dump?)\n");
		}
		printf("  what it holds, by class:\n");
		text_rows(sp->classes, 5, "    ", 0);
		printf("  allocation sites of what it keeps alive:\n");
		text_rows(sp->sites, (size_t)A.sites, "    ", 1);
	}
	if (r->more)
		printf("\n(%s more groups: --top N shows more)\n",
		       cli_commas(r->more, c, sizeof(c)));
	if (r->fold.folded)
		printf("\n%s more group%s under %g%% each: %s objects, %s, "
		       "%.1f%% of the %s (--min-share 0 shows them)\n",
		       cli_commas(r->fold.folded, c, sizeof(c)),
		       r->fold.folded == 1 ? "" : "s",
		       A.min_share, cli_commas(r->folded_count, a, sizeof(a)),
		       cli_human_bytes(r->fold.folded_size, b, sizeof(b)),
		       pct(r->fold.folded_size, r->leak_mem),
		       d->has_later ? "leak" : "growth");
}

static void json_rows(hd_stats *st, size_t max, const char *k0,
		      const char *k1)
{
	size_t n, i;
	const hd_stats_row *rows = hd_stats_rows(st, 0, HD_SORT_MEMSIZE, &n);

	putchar('[');
	for (i = 0; i < n && i < max; i++) {
		printf("%s{\"%s\":", i ? "," : "", k0);
		cli_json_string(stdout, rows[i].key[0], strlen(rows[i].key[0]));
		if (k1 && rows[i].key[1]) {
			printf(",\"%s\":", k1);
			cli_json_string(stdout, rows[i].key[1],
					strlen(rows[i].key[1]));
		}
		printf(",\"count\":%llu,\"memsize\":%llu}",
		       (unsigned long long)rows[i].count,
		       (unsigned long long)rows[i].memsize);
	}
	putchar(']');
}

static void print_json(const struct report *r)
{
	const hd_store *s = r->s[r->at];
	const hd_diff_result *d = r->d;
	size_t i, k;
	int j;

	printf("{\"dumps\":[");
	for (j = 0; j < r->nin; j++) {
		printf("%s", j ? "," : "");
		cli_json_string(stdout, r->in[j].name, strlen(r->in[j].name));
	}
	printf("],\"new\":{\"count\":%zu,\"memsize\":%llu}",
	       d->added.n, (unsigned long long)d->added_memsize);
	if (d->has_later)
		printf(",\"leaked\":{\"count\":%zu,\"memsize\":%llu}",
		       r->leak->n, (unsigned long long)r->leak_mem);
	printf(",\"border\":%llu,\"groups\":%zu,\"min_share\":%.4f,"
	       "\"more\":%zu,\"folded\":{\"groups\":%zu,"
	       "\"retained_count\":%llu,\"retained_memsize\":%llu,"
	       "\"share\":%.4f},\"suspects\":[",
	       (unsigned long long)r->border_total, r->nsus,
	       A.min_share / 100.0, r->more, r->fold.folded,
	       (unsigned long long)r->folded_count,
	       (unsigned long long)r->fold.folded_size,
	       pct(r->fold.folded_size, r->leak_mem) / 100.0);
	for (i = 0; i < r->shown; i++) {
		const struct suspect *sp = &r->sus[i];

		printf("%s{\"rank\":%zu,\"holder\":", i ? "," : "", i + 1);
		if (sp->holder != HD_NODE_NONE)
			cli_node_json(stdout, s, sp->holder);
		else
			printf("null");
		if (sp->holder == HD_NODE_NONE)
			printf(",\"held_by_old\":%u,\"held_by_roots\":%u",
			       sp->holders, sp->roots);
		printf(",\"first_border\":");
		cli_node_json(stdout, s, sp->first);
		printf(",\"border_count\":%llu,\"retained_count\":%llu,"
		       "\"retained_memsize\":%llu,\"share\":%.4f,"
		       "\"keepalive_count\":%llu,\"keepalive_memsize\":%llu",
		       (unsigned long long)sp->nborder,
		       (unsigned long long)sp->rcount,
		       (unsigned long long)sp->rmem,
		       pct(sp->rmem, r->leak_mem) / 100.0,
		       (unsigned long long)sp->kcount,
		       (unsigned long long)sp->kmem);
		printf(",\"path\":");
		if (sp->has_path) {
			const char *root = hd_store_root_name(s, sp->path.root);

			printf("{\"root\":");
			cli_json_string(stdout, root, strlen(root));
			printf(",\"objects\":[");
			for (k = 0; k < sp->path.n; k++) {
				printf("%s", k ? "," : "");
				cli_node_json(stdout, s, sp->path.nodes[k]);
			}
			printf("]}");
		} else {
			printf("null");
		}
		printf(",\"classes\":");
		json_rows(sp->classes, 20, "class", NULL);
		printf(",\"sites\":");
		json_rows(sp->sites, (size_t)A.sites, "class", "location");
		putchar('}');
	}
	printf("]}\n");
}

/* a value of a TSV line: tabs and line breaks become spaces */
/* Escaped like all text (cli_text_string): a tab cannot split a field. */
static void tsv_str(const char *p)
{
	cli_text_string(stdout, p, strlen(p));
}

/*
 * total<TAB>name<TAB>value lines, then one line a suspect:
 * suspect, rank, holder address, holder class (or "-" and the first
 * border object's), border_count, retained_count, retained_memsize,
 * share, keepalive_count, keepalive_memsize, path ("root -> Class ->
 * ...", or "-"); then "more" and "folded" lines.
 */
static void print_tsv(const struct report *r)
{
	static const char *const side[3] = { "before", "after", "later" };
	const hd_store *s = r->s[r->at];
	const hd_diff_result *d = r->d;
	char cls[256];
	size_t i, k;
	int j;

	for (j = 0; j < r->nin; j++)
		printf("total\tobjects_%s\t%llu\n", side[j],
		       (unsigned long long)d->objects[j]);
	printf("total\tnew\t%zu\ntotal\tnew_memsize\t%llu\n", d->added.n,
	       (unsigned long long)d->added_memsize);
	if (d->has_later)
		printf("total\tleaked\t%zu\ntotal\tleaked_memsize\t%llu\n",
		       r->leak->n, (unsigned long long)r->leak_mem);
	printf("total\tborder\t%llu\ntotal\tgroups\t%zu\n"
	       "total\tmin_share\t%.4f\n",
	       (unsigned long long)r->border_total, r->nsus,
	       A.min_share / 100.0);
	for (i = 0; i < r->shown; i++) {
		const struct suspect *sp = &r->sus[i];
		hd_node_id v = sp->holder != HD_NODE_NONE ? sp->holder :
							   sp->first;

		cli_node_class(s, v, cls, sizeof(cls));
		printf("suspect\t%zu\t0x%llx\t", i + 1,
		       (unsigned long long)hd_store_address(s, v));
		tsv_str(cls);
		printf("\t%llu\t%llu\t%llu\t%.4f\t%llu\t%llu\t",
		       (unsigned long long)sp->nborder,
		       (unsigned long long)sp->rcount,
		       (unsigned long long)sp->rmem,
		       pct(sp->rmem, r->leak_mem) / 100.0,
		       (unsigned long long)sp->kcount,
		       (unsigned long long)sp->kmem);
		if (sp->has_path) {
			tsv_str(hd_store_root_name(s, sp->path.root));
			for (k = 0; k < sp->path.n; k++) {
				cli_node_class(s, sp->path.nodes[k], cls,
					       sizeof(cls));
				printf(" -> ");
				tsv_str(cls);
			}
		} else {
			putchar('-');
		}
		putchar('\n');
	}
	printf("more\t%zu\n", r->more);
	printf("folded\t%zu\t%llu\t%llu\t%.4f\n", r->fold.folded,
	       (unsigned long long)r->folded_count,
	       (unsigned long long)r->fold.folded_size,
	       pct(r->fold.folded_size, r->leak_mem) / 100.0);
}

/* ---- pictures ---- */

static int svg_one(const struct report *r, const struct suspect *sp,
		   size_t rank)
{
	hd_export_options eo = HD_EXPORT_OPTIONS_INIT;
	hd_export *x = NULL;
	hd_nodes set = { NULL, 0, 0 };
	hd_error err = { 0 };
	struct cli_membuf m = { NULL, 0, 0 };
	char *path = NULL;
	size_t i, k;
	int rc = EXIT_FAIL;

	for (i = 0; sp->has_path && i < sp->path.n; i++)
		if (push(&set, sp->path.nodes[i]))
			goto oom;
	if (sp->holder != HD_NODE_NONE && push(&set, sp->holder))
		goto oom;
	for (i = 0; i < sp->border.n && i < SVG_BORDER; i++)
		if (push(&set, sp->border.ids[i]))
			goto oom;
	qsort(set.ids, set.n, sizeof(*set.ids), cmp_id);
	for (i = k = 0; i < set.n; i++)
		if (!k || set.ids[k - 1] != set.ids[i])
			set.ids[k++] = set.ids[i];
	set.n = k;
	eo.flags = HD_EXPORT_COLLAPSE;
	if (hd_export_new(&x, r->s[r->at], &set, &eo, &err)) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (hd_export_write_dot(x, cli_membuf_write, &m, &err))
		goto oom;
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
	free(set.ids);
	hd_export_free(x);
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
	for (i = 0; i < r->shown; i++)
		if ((rc = svg_one(r, &r->sus[i], i + 1)))
			return rc;
	return EXIT_OK;
}

/* ---- the command ---- */

static void report_free(struct report *r)
{
	size_t i;
	int k;

	for (i = 0; r->sus && i < r->nsus; i++) {
		hd_root_path_free(&r->sus[i].path);
		free(r->sus[i].border.ids);
		hd_stats_free(r->sus[i].classes);
		hd_stats_free(r->sus[i].sites);
	}
	free(r->sus);
	hd_interface_free(r->x);
	hd_diff_result_free(r->d);
	for (k = 0; k < 3; k++)
		hd_store_close(r->s[k]);
}

int cmd_leaks(int argc, char **argv)
{
	hd_diff_options dopt = HD_DIFF_OPTIONS_INIT;
	struct report r;
	hd_error err = { 0 };
	uint64_t *sizes = NULL;
	size_t i;
	int rc, first, k, fmt = 0, nstdin = 0;

	memset(&A, 0, sizeof(A));
	memset(&r, 0, sizeof(r));
	A.top = 5;
	A.sites = 5;
	cli_render_limits_init(&A.lim);
	A.min_share = MIN_SHARE_DEFAULT;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	r.nin = argc - first;
	if (r.nin < 2 || r.nin > 3)
		return cli_usage_error(&info, "two or three dumps or stores: "
					      "BEFORE AFTER [LATER]");
	for (k = 0; k < r.nin; k++)
		nstdin += strcmp(argv[first + k], "-") == 0;
	if (nstdin > 1)
		return cli_usage_error(&info, "only one input can be '-'");
	if (A.format && strcmp(A.format, "json") == 0)
		fmt = 1;
	else if (A.format && strcmp(A.format, "tsv") == 0)
		fmt = 2;
	else if (A.format && strcmp(A.format, "text") != 0)
		return cli_usage_error(&info, "unknown format '%s'", A.format);
	if (!A.top)
		return cli_usage_error(&info, "--top must be at least 1");
	if (A.svg && !*A.svg)
		return cli_usage_error(&info, "--svg needs a directory");
	for (k = 0; k < r.nin; k++) {
		cli_input_init(&r.in[k], argv[first + k], A.strict, A.quiet);
		if ((rc = cli_spool_stdin(&r.in[k])) ||
		    (rc = cli_open_store(&r.in[k], &r.s[k])))
			goto out;
	}
	if ((rc = cli_check_order(r.s, r.in, (size_t)r.nin, A.force)))
		goto out;
	dopt.flags = A.no_generation ? HD_DIFF_NO_GENERATION : 0;
	dopt.read.flags = A.strict ? HD_READ_STRICT : 0;
	if ((rc = hd_diff(r.s[0], r.s[1], r.s[2], &dopt, &r.d, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	/* with LATER, the leak as LATER holds it */
	r.at = r.d->has_later ? 2 : 1;
	r.leak = r.d->has_later ? &r.d->retained_later : &r.d->added;
	r.leak_mem = r.d->has_later ? r.d->retained_later_memsize :
				      r.d->added_memsize;
	if ((rc = hd_interface_with_flags(&r.x, r.s[r.at], r.leak,
					  A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0,
					  &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if ((rc = group(&r)) ||
	    !(sizes = malloc((r.nsus ? r.nsus : 1) * sizeof(*sizes)))) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
		goto out;
	}
	for (i = 0; i < r.nsus; i++)
		sizes[i] = r.sus[i].rmem;
	hd_fold_shares(sizes, r.nsus, r.leak_mem, A.min_share / 100.0,
		       &r.fold);
	for (i = r.fold.kept; i < r.nsus; i++)
		r.folded_count += r.sus[i].rcount;
	r.shown = r.fold.kept < A.top ? r.fold.kept : (size_t)A.top;
	r.more = r.fold.kept - r.shown;
	if ((rc = describe_all(&r, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (fmt == 1)
		print_json(&r);
	else if (fmt == 2)
		print_tsv(&r);
	else
		print_text(&r);
	if (A.svg)
		rc = svg_all(&r);
out:
	free(sizes);
	report_free(&r);
	return rc;
}
