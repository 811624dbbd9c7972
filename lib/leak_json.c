/*
 * leak_json.c - the one JSON schema of the leak model (heapdump-json(5)):
 * a node, a suspect and a cluster, written forward only as the fields of
 * an object, so that heapdump leaks -f json, serve's /api/leaks and the
 * report's data write the same names and the front end only adds what
 * it alone has (a path with its runs, the classes and sites) before it
 * closes the brace. A suspect's allocation stacks too
 * (hd_leaks_suspect_stacks_json, over hd_stack_rows_json, which stats
 * and diff --by stack write as well): the whole leak written here gives
 * each described suspect its first HD_LEAK_JSON_STACKS rows, leaks -f
 * json its first --sites.
 *
 * Names: "holders" is the list of holder objects (at most 8),
 * "holder_count" and "root_count" count the old objects and root
 * categories holding a suspect. "held_by_old" and "held_by_roots" (the
 * same counts, without one holder) are deprecated aliases, written
 * under HD_LEAK_JSON_ALIASES for one release.
 */
#include "hd_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s[0, n) as a JSON string; control bytes escaped */
void hd_json_write_string(FILE *f, const char *s, size_t n)
{
	size_t i;

	putc('"', f);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				putc(c, f);
		}
	}
	putc('"', f);
}

void hd_node_json_fields(FILE *f, const hd_store *s, hd_node_id v,
			 hd_node_id next)
{
	char cls[256];
	hd_site site;
	const char *name = NULL;
	unsigned flags = 0;
	size_t nl = 0, n;

	n = hd_store_node_name(cls, sizeof(cls), s, v);
	fprintf(f, "\"address\":\"0x%llx\",\"type\":\"%s\",\"class\":",
		(unsigned long long)hd_store_address(s, v),
		hd_type_name(hd_store_type(s, v)));
	hd_json_write_string(f, cls, n < sizeof(cls) ? n : sizeof(cls) - 1);
	fprintf(f, ",\"memsize\":%llu",
		(unsigned long long)hd_store_memsize(s, v));
	if (hd_store_site(&site, s, v) == 0 && site.file) {
		fputs(",\"file\":", f);
		hd_json_write_string(f, site.file, site.file_len);
		fprintf(f, ",\"line\":%llu", (unsigned long long)site.line);
		if (site.method) {
			fputs(",\"method\":", f);
			hd_json_write_string(f, site.method, site.method_len);
		}
	}
	if (next != HD_NODE_NONE &&
	    (name = hd_store_ref_name(s, v, next, &nl, &flags))) {
		fputs(",\"name\":", f);
		hd_json_write_string(f, name, nl);
		if (flags & HD_NAME_INFERRED)
			fputs(",\"inferred\":true", f);
	}
}

/*
 * Allocation stacks, the one writer of every front end: a frame, a
 * table of hd_stack_stats (stats --by stack|frame -f json, diff's
 * "stacks") and a suspect's stacks. A stack's frames outermost first,
 * as the dump has them; a frame's fields those the dump gave (file,
 * line, method, class, label), each left out when unknown.
 */
void hd_frame_json(FILE *f, const hd_store *s, uint32_t id)
{
	hd_frame fr;

	if (hd_store_frame(&fr, s, id))
		fr = (hd_frame){ 0 };
	fprintf(f, "{\"frame\":%u", id);
	if (fr.file) {
		fputs(",\"file\":", f);
		hd_json_write_string(f, fr.file, fr.file_len);
	}
	if (fr.line)
		fprintf(f, ",\"line\":%llu", (unsigned long long)fr.line);
	if (fr.method) {
		fputs(",\"method\":", f);
		hd_json_write_string(f, fr.method, fr.method_len);
	}
	if (fr.class_name) {
		fputs(",\"class\":", f);
		hd_json_write_string(f, fr.class_name, fr.class_len);
	}
	if (fr.label) {
		fputs(",\"label\":", f);
		hd_json_write_string(f, fr.label, fr.label_len);
	}
	fputc('}', f);
}

void hd_stack_rows_json(FILE *f, const hd_store *s, const hd_stack_rows *r,
			size_t top)
{
	size_t shown = top && top < r->nrows ? top : r->nrows;
	size_t i, k, n;

	fprintf(f, "{\"by\":\"%s\",\"with_stack\":{\"count\":%llu,"
		   "\"memsize\":%llu},\"without_stack\":{\"count\":%llu,"
		   "\"memsize\":%llu},\"groups\":%zu,\"rows\":[",
		r->by == HD_STACKS_BY_FRAME ? "frame" : "stack",
		(unsigned long long)r->with,
		(unsigned long long)r->with_memsize,
		(unsigned long long)r->without,
		(unsigned long long)r->without_memsize, r->nrows);
	for (i = 0; i < shown; i++) {
		const hd_stack_row *row = &r->rows[i];

		if (i)
			fputc(',', f);
		if (r->by == HD_STACKS_BY_FRAME) {
			fprintf(f, "{\"count\":%llu,\"memsize\":%llu,\"frame\":",
				(unsigned long long)row->count,
				(unsigned long long)row->memsize);
			hd_frame_json(f, s, row->id);
			fputc('}', f);
			continue;
		}
		fprintf(f, "{\"stack\":%u,\"count\":%llu,\"memsize\":%llu,"
			   "\"frames\":[",
			row->id, (unsigned long long)row->count,
			(unsigned long long)row->memsize);
		n = hd_store_stack_frames(s, row->id, &(const uint32_t *){ NULL });
		for (k = 0; k < n; k++) {
			if (k)
				fputc(',', f);
			hd_frame_json(f, s, hd_store_stack_frame(s, row->id, k));
		}
		fputs("]}", f);
	}
	fputs("]}", f);
}

void hd_leaks_suspect_stacks_json(FILE *f, const hd_store *s,
				  const hd_leaks *l, size_t i, size_t top)
{
	const hd_leaks_suspect *sp = hd_leaks_suspect_get(l, i);

	if (sp && sp->stacks)
		hd_stack_rows_json(f, s, sp->stacks, top);
	else
		fputs("null", f);
}

/* {node fields, the front end's own}, or null */
static void node(FILE *f, const hd_store *s, hd_node_id v,
		 const hd_leak_json_options *o)
{
	if (v == HD_NODE_NONE) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	hd_node_json_fields(f, s, v, HD_NODE_NONE);
	if (o && o->node_extra)
		o->node_extra(f, v, o->ctx);
	fputc('}', f);
}

static const char *tf(int b)
{
	return b ? "true" : "false";
}

const char *hd_suspect_kind_name(int kind)
{
	static const char *const names[] = { "holder", "shared", "root",
					     "joint" };

	return kind >= 0 && kind <= HD_SUSPECT_JOINT ? names[kind] : "holder";
}

void hd_leaks_suspect_json_fields(FILE *f, const hd_store *s,
				  const hd_leaks *l, size_t i,
				  const hd_leak_json_options *o)
{
	const hd_leaks_suspect *sp = hd_leaks_suspect_get(l, i);
	size_t k;

	fprintf(f, "\"rank\":%zu,\"holder\":", i + 1);
	node(f, s, sp->holder, o);
	fprintf(f, ",\"kind\":\"%s\",\"holder_count\":%u,\"root_count\":%u",
		hd_suspect_kind_name(sp->kind), sp->holders, sp->roots);
	if (o && (o->flags & HD_LEAK_JSON_ALIASES) &&
	    sp->holder == HD_NODE_NONE)
		fprintf(f, ",\"held_by_old\":%u,\"held_by_roots\":%u",
			sp->holders, sp->roots);
	fprintf(f, ",\"transient\":%s,\"churn\":%s,\"ephemeron\":%s",
		tf(sp->flags & HD_SUSPECT_TRANSIENT),
		tf(sp->flags & HD_SUSPECT_CHURN),
		tf(sp->flags & HD_SUSPECT_EPHEMERON));
	fputs(",\"holders\":[", f);
	for (k = 0; sp->holder_list && k < sp->holder_list->n; k++) {
		if (k)
			fputc(',', f);
		node(f, s, sp->holder_list->ids[k], o);
	}
	fputs("],\"first_border\":", f);
	node(f, s, sp->first, o);
	fprintf(f, ",\"border_count\":%llu,\"retained_count\":%llu,"
		"\"retained_memsize\":%llu,\"share\":%.4f,"
		"\"keepalive_count\":%llu,\"keepalive_memsize\":%llu",
		(unsigned long long)sp->border_count,
		(unsigned long long)sp->retained_count,
		(unsigned long long)sp->retained_memsize, sp->share,
		(unsigned long long)sp->keepalive_count,
		(unsigned long long)sp->keepalive_memsize);
}

void hd_leaks_cluster_json_fields(FILE *f, const hd_store *s,
				  const hd_leaks *l, size_t i,
				  const hd_leak_json_options *o)
{
	const hd_leaks_cluster *cl = hd_leaks_cluster_get(l, i);
	size_t k;

	(void)o;
	fprintf(f, "\"rank\":%zu,\"suspects\":%zu,\"suspect_ranks\":[",
		i + 1, cl->suspects);
	for (k = 0; k < cl->suspects; k++)
		fprintf(f, "%s%zu", k ? "," : "", cl->ranks[k] + 1);
	fputs("],\"members\":[", f);
	for (k = 0; k < cl->suspects; k++) {
		const hd_leaks_suspect *sp =
			hd_leaks_suspect_get(l, cl->ranks[k]);

		fprintf(f, "%s\"0x%llx\"", k ? "," : "",
			(unsigned long long)hd_store_address(
				s, sp->holder != HD_NODE_NONE ? sp->holder :
								sp->first));
	}
	fprintf(f, "],\"border_count\":%llu,\"retained_count\":%llu,"
		"\"retained_memsize\":%llu,\"share\":%.4f,\"shape\":",
		(unsigned long long)cl->border_count,
		(unsigned long long)cl->retained_count,
		(unsigned long long)cl->retained_memsize, cl->share);
	if (cl->reached && cl->shape)
		hd_json_write_string(f, cl->shape, strlen(cl->shape));
	else
		fputs("null", f);
}

/* The hops of nodes[i, i + n), each followed by its arrow */
static void put_hop(FILE *f, const hd_store *s, hd_node_id from,
		    hd_node_id to)
{
	char hop[512];
	size_t len = hd_store_hop_text(hop, sizeof(hop), s, from, to);

	fwrite(hop, 1, len < sizeof(hop) ? len : sizeof(hop) - 1, f);
}

static void hops_arrows(FILE *f, const hd_store *s, const hd_node_id *nodes,
			size_t i, size_t n)
{
	for (; n--; i++) {
		put_hop(f, s, nodes[i], nodes[i + 1]);
		fputs(n ? " -> " : " ->", f);
	}
}

/* p on one line as heapdump leaks prints it, "ROOT NAME -> A -> (B ->)
 * x3 C" (hd_path_fold's runs folded), raw, into f */
static void path_line(FILE *f, const hd_store *s, const hd_root_path *p)
{
	hd_path_runs runs = { 0 };
	const char *name = hd_store_root_name(s, p->root);
	size_t i = 0, r = 0, n;

	fputs(name, f);
	if (p->n && (name = hd_store_root_ref_name(s, p->root, p->nodes[0],
						    &n))) {
		fputc(' ', f);
		fwrite(name, 1, n, f);
	}
	if (!p->n)
		return;
	fputs(" -> ", f);
	if (hd_path_fold(&runs, s, p->nodes, p->n, NULL, NULL))
		runs.n = 0; /* out of memory: every hop */
	while (i < p->n) {
		if (r < runs.n && runs.runs[r].start == i) {
			const hd_path_run *u = &runs.runs[r++];

			fputc('(', f);
			hops_arrows(f, s, p->nodes, i, u->period);
			fprintf(f, ") x%zu ", u->count);
			i += u->period * u->count;
			continue;
		}
		put_hop(f, s, p->nodes[i],
			i + 1 < p->n ? p->nodes[i + 1] : HD_NODE_NONE);
		if (++i < p->n)
			fputs(" -> ", f);
	}
	hd_path_runs_free(&runs);
}

/* path_line as a JSON string; null when it cannot be built */
static void path_text(FILE *f, const hd_store *s, const hd_root_path *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		fputs("null", f);
		return;
	}
	path_line(m, s, p);
	if (fclose(m) != 0 || !buf) {
		free(buf);
		fputs("null", f);
		return;
	}
	hd_json_write_string(f, buf, len);
	free(buf);
}

void hd_leaks_totals_json_fields(FILE *f, const hd_leaks *l)
{
	hd_leaks_totals t;

	hd_leaks_totals_get(&t, l);
	fprintf(f, "\"leak_count\":%llu,\"leak_memsize\":%llu,"
		"\"border\":%llu,\"groups\":%zu,\"shown\":%zu,\"more\":%zu,"
		"\"folded\":%zu,\"folded_count\":%llu,\"folded_memsize\":%llu,"
		"\"young_count\":%llu,\"young_memsize\":%llu,"
		"\"vm_count\":%llu,\"vm_memsize\":%llu,"
		"\"unreached_count\":%llu,\"unreached_memsize\":%llu,"
		"\"joint\":%zu,\"passed_memsize\":%llu,"
		"\"ephemeron_memsize\":%llu,\"inplace_count\":%llu,"
		"\"inplace_memsize\":%llu,\"saturated\":%s",
		(unsigned long long)t.leak_count,
		(unsigned long long)t.leak_memsize,
		(unsigned long long)t.border, t.groups, t.shown, t.more,
		t.folded, (unsigned long long)t.folded_count,
		(unsigned long long)t.folded_memsize,
		(unsigned long long)t.young_count,
		(unsigned long long)t.young_memsize,
		(unsigned long long)t.vm_count,
		(unsigned long long)t.vm_memsize,
		(unsigned long long)t.unreached_count,
		(unsigned long long)t.unreached_memsize, t.joint,
		(unsigned long long)t.passed_memsize,
		(unsigned long long)t.ephemeron_memsize,
		(unsigned long long)t.inplace_count,
		(unsigned long long)t.inplace_memsize, tf(t.saturated));
}

/* "first" of the growth in place: its node, memsizes and path */
static void first_inplace(FILE *f, const hd_store *s, const hd_leaks *l,
			  const hd_leaks_totals *t)
{
	uint64_t m[64];
	const hd_root_path *p = NULL;
	hd_node_id id = HD_NODE_NONE;
	size_t i, n = hd_leaks_inplace(l, &id, m, 64, &p);

	if (n > 64)
		n = 64;
	fprintf(f, "{\"kind\":\"in_place\",\"index\":0,\"rank\":1,"
		"\"share\":%.4f,\"path_text\":", t->first_share);
	if (p)
		path_text(f, s, p);
	else
		fputs("null", f);
	fprintf(f, ",\"address\":\"0x%llx\",\"memsizes\":[",
		(unsigned long long)hd_store_address(s, id));
	for (i = 0; i < n; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)m[i]);
	fputs("]}", f);
}

void hd_leaks_verdict_json_fields(FILE *f, const hd_store *s,
				  const hd_leaks *l,
				  const hd_process_verdict *proc)
{
	hd_leaks_totals t;
	const hd_root_path *p;
	char buf[1024];
	size_t n = hd_leaks_verdict_text_process(buf, sizeof(buf), l, proc);
	int cl;

	hd_leaks_totals_get(&t, l);
	fprintf(f, "\"leak\":%s,\"min_leak\":%llu,\"text\":",
		tf(t.significant), (unsigned long long)t.min_leak);
	hd_json_write_string(f, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
	fputs(",\"first\":", f);
	if (t.first_kind == HD_LEAKS_FIRST_NONE) {
		fputs("null", f);
		return;
	}
	if (t.first_kind == HD_LEAKS_FIRST_INPLACE) {
		first_inplace(f, s, l, &t);
		return;
	}
	cl = t.first_kind == HD_LEAKS_FIRST_CLUSTER;
	fprintf(f, "{\"kind\":\"%s\",\"index\":%zu,\"rank\":%zu,"
		"\"share\":%.4f,\"path_text\":", cl ? "cluster" : "suspect",
		t.first_index, t.first_index + 1, t.first_share);
	p = cl ? hd_leaks_cluster_get(l, t.first_index)->path :
		 hd_leaks_suspect_get(l, t.first_index)->path;
	if (p)
		path_text(f, s, p);
	else
		fputs("null", f);
	if (cl) {
		const hd_leaks_cluster *c = hd_leaks_cluster_get(l,
								 t.first_index);

		fprintf(f, ",\"suspects\":%zu,\"shape\":", c->suspects);
		if (c->shape)
			hd_json_write_string(f, c->shape, strlen(c->shape));
		else
			fputs("null", f);
	}
	fputc('}', f);
}

/* A path: {"root", ["root_name"], ["passed_over"], "hops", "text"},
 * and under HD_LEAK_JSON_ALIASES "objects" (the hops, deprecated) */
static void hops(FILE *f, const hd_store *s, const hd_root_path *p)
{
	size_t k;

	for (k = 0; k < p->n; k++) {
		fputs(k ? ",{" : "{", f);
		hd_node_json_fields(f, s, p->nodes[k], k + 1 < p->n ?
				    p->nodes[k + 1] : HD_NODE_NONE);
		fputc('}', f);
	}
}

void hd_path_json_fields(FILE *f, const hd_store *s, const hd_root_path *p,
			 const hd_leak_json_options *o)
{
	const char *name = hd_store_root_name(s, p->root);
	char hop[512];
	unsigned bit, j = 0;
	size_t k, n;

	fputs("\"root\":", f);
	if (name)
		hd_json_write_string(f, name, strlen(name));
	else
		fputs("null", f);
	if (name && p->n &&
	    (name = hd_store_root_ref_name(s, p->root, p->nodes[0], &n))) {
		fputs(",\"root_name\":", f);
		hd_json_write_string(f, name, n);
	}
	if (p->passed_over) {
		fputs(",\"passed_over\":[", f);
		for (bit = 1; bit <= HD_PATH_VIA_STACK; bit <<= 1)
			if (p->passed_over & bit)
				fprintf(f, "%s\"%s\"", j++ ? "," : "",
					hd_path_via_name(bit));
		fputc(']', f);
	}
	fputs(",\"hops\":[", f);
	hops(f, s, p);
	fputs("],\"text\":[", f);
	for (k = 0; k < p->n; k++) {
		n = hd_store_hop_text(hop, sizeof(hop), s, p->nodes[k],
				      k + 1 < p->n ? p->nodes[k + 1] :
						     HD_NODE_NONE);
		if (k)
			fputc(',', f);
		hd_json_write_string(f, hop, n < sizeof(hop) ? n :
							       sizeof(hop) - 1);
	}
	fputc(']', f);
	if (o && (o->flags & HD_LEAK_JSON_ALIASES)) {
		fputs(",\"objects\":[", f);
		hops(f, s, p);
		fputc(']', f);
	}
}

void hd_path_json(FILE *f, const hd_store *s, const hd_root_path *p,
		  const hd_leak_json_options *o)
{
	fputc('{', f);
	hd_path_json_fields(f, s, p, o);
	fputc('}', f);
}

void hd_leak_session_caveats_json(FILE *f, const hd_leak_session *ls)
{
	unsigned int c = hd_leak_session_caveats(ls), bit;
	char buf[1024];
	size_t n;
	int k = 0;

	fputc('[', f);
	for (bit = 1; bit && bit <= c; bit <<= 1) {
		if (!(c & bit))
			continue;
		n = hd_leak_session_caveat_text(buf, sizeof(buf), ls, bit);
		fprintf(f, "%s{\"name\":\"%s\",\"warning\":%s,\"text\":",
			k++ ? "," : "", hd_caveat_name(bit),
			tf(hd_caveat_is_warning(bit)));
		hd_json_write_string(f, buf, n < sizeof(buf) ? n :
							       sizeof(buf) - 1);
		fputc('}', f);
	}
	fputc(']', f);
}

/* The suspects described and the first top clusters, each with its
 * path */
static void suspects_clusters(FILE *f, const hd_store *s, const hd_leaks *l,
			      size_t top, const hd_leak_json_options *o)
{
	hd_leaks_totals t;
	size_t i, n = hd_leaks_cluster_count(l);

	hd_leaks_totals_get(&t, l);
	fputs(",\"suspects\":[", f);
	for (i = 0; i < t.shown; i++) {
		const hd_leaks_suspect *sp = hd_leaks_suspect_get(l, i);

		fputs(i ? ",{" : "{", f);
		hd_leaks_suspect_json_fields(f, s, l, i, o);
		fputs(",\"path\":", f);
		if (sp->path)
			hd_path_json(f, s, sp->path, o);
		else
			fputs("null", f);
		fputs(",\"stacks\":", f);
		hd_leaks_suspect_stacks_json(f, s, l, i, HD_LEAK_JSON_STACKS);
		fputc('}', f);
	}
	fprintf(f, "],\"clusters_total\":%zu,\"clusters\":[", n);
	for (i = 0; i < n && i < top; i++) {
		const hd_leaks_cluster *cl = hd_leaks_cluster_get(l, i);

		fputs(i ? ",{" : "{", f);
		hd_leaks_cluster_json_fields(f, s, l, i, o);
		fputs(",\"path\":", f);
		if (cl->reached && cl->path)
			hd_path_json(f, s, cl->path, o);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputc(']', f);
}

void hd_leak_session_write_json(FILE *f, const hd_leak_session *ls,
				const hd_process_verdict *proc,
				const hd_leak_json_options *o)
{
	const hd_store *s = hd_leak_session_store(ls);
	const hd_leaks *l = hd_leak_session_leaks(ls);

	fputs("{\"verdict\":{", f);
	hd_leaks_verdict_json_fields(f, s, l, proc);
	fputs("},\"totals\":{", f);
	hd_leaks_totals_json_fields(f, l);
	fputs("},\"caveats\":", f);
	hd_leak_session_caveats_json(f, ls);
	suspects_clusters(f, s, l, hd_leak_session_options_get(ls)->top, o);
	fputc('}', f);
}
