/*
 * fuzz_store.c - libFuzzer target: the bytes of a store file through the
 * loader (header, section table, every validation), and when it opens,
 * every accessor on every node, edge and root, then the graph algorithms
 * that trust a validated store (stats, the root search, roots-of,
 * subgraph, interface-with, export), and the views it keeps (string
 * values, group stats, retained by class, the objects' order: refused
 * or read whole).
 */
#include "store_format.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sink_cb(const void *buf, size_t n, void *payload)
{
	uint64_t *sink = payload;

	if (n)
		*sink += ((const unsigned char *)buf)[n - 1];
	return 0;
}

static void touch_iter(hd_edge_iter *it, uint32_t nodes, uint64_t *sink)
{
	hd_node_id t;
	uint32_t left = hd_edge_iter_count(it);

	while (hd_edge_iter_next(it, &t) == 0) {
		/* a validated store never points outside its nodes */
		if (t >= nodes)
			__builtin_trap();
		*sink += t;
		left--;
	}
	if (left)
		__builtin_trap();
}

/* The allocation stacks: every node's stack, every stack's frames and
 * every frame's strings within the store (a validated store never
 * points outside its stacks and frames). */
static void touch_stacks(const hd_store *s, uint64_t *sink)
{
	uint32_t i, n = hd_store_node_count(s), S = hd_store_stack_count(s);
	uint32_t F = hd_store_frame_count(s);
	hd_stack_options so = HD_STACK_OPTIONS_INIT;
	hd_stack_rows rows;
	char buf[128];
	hd_frame fr;
	size_t k, nf;

	for (i = 0; i < n; i++)
		if (hd_store_node_stack(s, i) > S)
			__builtin_trap();
	for (i = 1; i <= S; i++) {
		nf = hd_store_stack_frames(s, i, &(const uint32_t *){ NULL });
		for (k = 0; k < nf; k++) {
			uint32_t f = hd_store_stack_frame(s, i, k);

			if (!f || f > F || hd_store_frame(&fr, s, f))
				__builtin_trap();
			*sink += hd_frame_text(buf, sizeof(buf), &fr) + fr.line;
		}
	}
	so.flags = HD_STATS_ALL;
	for (so.by = HD_STACKS_BY_STACK; so.by <= HD_STACKS_BY_FRAME; so.by++)
		if (hd_stack_stats(&rows, s, NULL, 0, &so, NULL) == 0) {
			*sink += rows.nrows + rows.with + rows.without;
			hd_stack_rows_free(&rows);
		}
}

static void touch_nodes(const hd_store *s, uint64_t *sink)
{
	uint32_t i, n = hd_store_node_count(s), r;
	hd_edge_iter it;
	hd_site site;
	hd_store_info info;
	char name[64], ver[64];
	const char *p;
	size_t len;

	hd_store_info_get(&info, s);
	touch_stacks(s, sink);
	*sink += info.edges + strlen(info.source_path);
	*sink += strlen(hd_features_ruby(ver, sizeof(ver), info.features));
	for (i = 0; i < n; i++) {
		uint64_t a = hd_store_address(s, i);

		if (hd_store_find(s, a) != i)
			__builtin_trap(); /* addresses are strictly sorted */
		*sink += (uint64_t)hd_store_type(s, i) + hd_store_class(s, i) +
			 hd_store_class_address(s, i) + hd_store_memsize(s, i) +
			 hd_store_generation(s, i) + hd_store_size(s, i) +
			 hd_store_bits(s, i) + hd_store_offset(s, i);
		if (hd_store_site(&site, s, i) == 0) {
			if (site.file_len)
				*sink += (unsigned char)site.file[site.file_len - 1];
			if (site.method_len)
				*sink += (unsigned char)
					site.method[site.method_len - 1];
		}
		if ((p = hd_store_aux(s, i, &len)) && len)
			*sink += (unsigned char)p[len - 1];
		*sink += hd_store_class_name(name, sizeof(name), s, i);
		hd_store_refs(s, i, &it);
		{
			uint32_t k, nk = hd_edge_iter_count(&it);
			hd_node_id t;
			unsigned fl;

			for (k = 0; k <= nk; k++)
				if ((p = hd_store_ref_name_at(s, i, k, &len,
							      &fl)))
					*sink += len + fl + (unsigned char)p[0];
			if (hd_edge_iter_next(&it, &t) == 0) {
				if ((p = hd_store_ref_name(s, i, t, &len,
							   NULL)))
					*sink += len;
				*sink += hd_store_hop_text(name, sizeof(name),
							   s, i, t);
			}
			hd_store_refs(s, i, &it);
		}
		touch_iter(&it, n, sink);
		hd_store_referrers(s, i, &it);
		touch_iter(&it, n, sink);
	}
	hd_store_refs(s, n, &it); /* out of range: empty */
	if (hd_edge_iter_count(&it))
		__builtin_trap();
	for (r = 0; r < hd_store_root_count(s); r++) {
		if ((p = hd_store_root_name(s, r)))
			*sink += strlen(p);
		hd_store_root_refs(s, r, &it);
		if (n && (p = hd_store_root_ref_name(s, r, 0, &len)))
			*sink += len;
		touch_iter(&it, n, sink);
	}
	*sink += (uint64_t)hd_store_has_ref_names(s);
}

static void run_algorithms(const hd_store *s, uint64_t *sink)
{
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	hd_stats *st = NULL;
	hd_nodes half = { NULL, 0, 0 }, kept = { NULL, 0, 0 },
		 unreached = { NULL, 0, 0 }, sub = { NULL, 0, 0 };
	hd_interface *x = NULL;
	hd_export *ex = NULL;
	hd_export_options eo = HD_EXPORT_OPTIONS_INIT;
	hd_root_path path = { 0 };
	uint32_t i, n = hd_store_node_count(s);
	size_t nrows;

	so.ngroupings = 2;
	so.nkeys[0] = 1;
	so.keys[0][0] = HD_KEY_CLASS;
	so.nkeys[1] = 2;
	so.keys[1][0] = HD_KEY_LOCATION;
	so.keys[1][1] = HD_KEY_GENERATION;
	if (hd_stats_new(&st, &so, NULL) == 0 &&
	    hd_stats_add_store(st, s, NULL) == 0 &&
	    hd_stats_finish(st, NULL) == 0) {
		hd_stats_rows(st, 0, HD_SORT_MEMSIZE, &nrows);
		*sink += nrows;
		hd_stats_rows(st, 1, HD_SORT_COUNT, &nrows);
		*sink += nrows;
	}
	hd_stats_free(st);
	/* by type and by class: the stats summary's rows, when it has one */
	st = NULL;
	so.keys[0][0] = HD_KEY_TYPE;
	so.nkeys[1] = 1;
	so.keys[1][0] = HD_KEY_CLASS;
	so.flags = HD_STATS_ALL;
	if (hd_stats_new(&st, &so, NULL) == 0 &&
	    hd_stats_add_store(st, s, NULL) == 0 &&
	    hd_stats_finish(st, NULL) == 0) {
		hd_stats_rows(st, 1, HD_SORT_MEMSIZE, &nrows);
		*sink += nrows;
	}
	hd_stats_free(st);
	*sink += hd_store_dumper_count(s, NULL);

	/* the upper half of the nodes as "new" objects */
	for (i = n / 2; i < n; i++) {
		if (hd__grow((void **)&half.ids, &half.cap, half.n + 1,
			     sizeof(*half.ids)))
			goto out;
		half.ids[half.n++] = i;
	}
	if (hd_roots_of(&kept, &unreached, s, &half, HD_ROOTS_SKIP_WEAK,
			NULL) == 0)
		*sink += kept.n + unreached.n;
	hd_nodes_free(&kept);
	if (hd_roots_of(&kept, NULL, s, &half, HD_ROOTS_ALL_ANCESTORS,
			NULL) == 0)
		*sink += kept.n;
	if (n && hd_path(&path, s, n - 1, 0, NULL) == 0)
		*sink += path.n;
	if (hd_subgraph_of(&sub, s, &half, 3, NULL) == 0)
		*sink += sub.n;
	if (hd_interface_with(&x, s, &half, NULL) == 0) {
		hd_interface_totals t;

		hd_interface_totals_get(&t, x);
		*sink += t.reached + t.components;
	}
	eo.flags = HD_EXPORT_COLLAPSE;
	eo.depth = 1;
	if (hd_export_new(&ex, s, &half, &eo, NULL) == 0) {
		hd_export_write_gml(ex, sink_cb, sink, NULL);
		hd_export_write_dot(ex, sink_cb, sink, NULL);
	}
out:
	hd_export_free(ex);
	hd_interface_free(x);
	hd_root_path_free(&path);
	hd_nodes_free(&sub);
	hd_nodes_free(&kept);
	hd_nodes_free(&unreached);
	hd_nodes_free(&half);
}

/* The views: each refused with a message, or every row within the
 * store (a value within its text, a string node of the store). */
static void touch_views(const hd_store *s, uint64_t *sink)
{
	hd_error err;
	hd_string_values *v = NULL;
	hd_string_value r;
	hd_group_stats *g = NULL;
	hd_stats_options so;
	hd_class_retained *cr = NULL;
	hd_retained_order *ord = NULL;
	hd_domtree *d = NULL;
	const hd_stats_row *rows;
	size_t i, n, f;
	unsigned k;

	memset(&err, 0, sizeof(err));
	if (hd_string_values_open(&v, s, &err) == 0) {
		for (i = 0; i < hd_string_values_count(v); i++) {
			hd_string_values_row(&r, v, i);
			if (r.node != HD_NODE_NONE &&
			    (r.node >= hd_store_node_count(s) ||
			     hd_store_type(s, r.node) != HD_T_STRING))
				__builtin_trap();
			if (r.value_len)
				*sink += (unsigned char)r.value[r.value_len - 1];
		}
		for (f = 0; hd_text_search_next(hd_string_values_search(v),
						"a", 1, f, &i) == 0; f = i + 1)
			*sink += i;
		hd_string_values_free(v);
	} else if (!err.msg[0]) {
		__builtin_trap();
	}
	hd_view_stats_options(&so);
	memset(&err, 0, sizeof(err));
	if (hd_group_stats_open(&g, s, &so, &err) == 0) {
		for (k = 0; k < so.ngroupings; k++) {
			rows = hd_group_stats_rows(g, k, &n);
			for (i = 0; i < n; i++)
				*sink += strlen(rows[i].key[0]) +
					 rows[i].key_len[0];
		}
		hd_group_stats_free(g);
	} else if (!err.msg[0]) {
		__builtin_trap();
	}
	if (hd_domtree_new(&d, s, HD_DOMTREE_SKIP_DUMPER, NULL) == 0) {
		memset(&err, 0, sizeof(err));
		if (hd_domtree_classes_open(&cr, &n, d, s, &err) == 0) {
			for (i = 0; i < n; i++)
				*sink += strlen(cr[i].name);
			hd_class_retained_free(cr);
		} else if (!err.msg[0]) {
			__builtin_trap();
		}
		/* the objects' order: each node in range, not the dumper's,
		 * after the one before it by the rule */
		memset(&err, 0, sizeof(err));
		if (hd_retained_order_open(&ord, d, s, &err) == 0) {
			const hd_node_id *o = hd_retained_order_nodes(ord, &n);
			uint64_t m, pm = 0;

			for (i = 0; i < n; i++) {
				if (o[i] >= hd_store_node_count(s) ||
				    hd_store_is_dumper(s, o[i]))
					__builtin_trap();
				hd_domtree_retained(d, o[i], &m);
				if (i && !hd_retained_before(pm, o[i - 1], m,
							     o[i]))
					__builtin_trap();
				pm = m;
			}
			hd_retained_order_free(ord);
		} else if (!err.msg[0]) {
			__builtin_trap();
		}
		hd_domtree_free(d);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_store *s = NULL;
	hd_error err;
	uint64_t sink = 0;

	memset(&err, 0, sizeof(err));
	if (hd__store_open_mem(&s, data, size, &err)) {
		/* every refusal says why */
		if (err.code >= 0 || !err.msg[0])
			__builtin_trap();
		return 0;
	}
	touch_nodes(s, &sink);
	run_algorithms(s, &sink);
	touch_views(s, &sink);
	hd_store_close(s);
	return sink == 42 ? 0 : 0;
}
