/*
 * dumper.c - the one rule of what every command leaves out unless --all,
 * over a store: the allocation tracer and the objects dump_all
 * allocated itself (class_names.c's hd__is_dumper_object, for records), and a
 * node set without them (hd_nodes_drop_dumper).
 */
#include "store_format.h"

static int span_is(const char *s, size_t n, const char *lit)
{
	return s && n == strlen(lit) && memcmp(s, lit, n) == 0;
}

int hd_store_is_dumper(const hd_store *s, hd_node_id id)
{
	hd_record fake;
	hd_site site;
	size_t n;
	const char *aux;

	if (!s || id >= hd_store_node_count(s))
		return 0;
	memset(&fake, 0, sizeof(fake));
	fake.kind = HD_REC_OBJECT;
	fake.type = hd_store_type(s, id);
	if (fake.type == HD_T_DATA) {
		aux = hd_store_aux(s, id, &n);
		if (span_is(aux, n, "ObjectTracing/allocation_info_tracer"))
			return 1;
	}
	if (hd_store_site(&site, s, id) != 0)
		return 0;
	fake.file.ptr = site.file;
	fake.file.len = site.file ? site.file_len : 0;
	fake.method.ptr = site.method;
	fake.method.len = site.method ? site.method_len : 0;
	fake.has = (site.file ? HD_HAS_FILE : 0) |
		   (site.method ? HD_HAS_METHOD : 0);
	return hd__is_dumper_object(&fake);
}

uint64_t hd_store_dumper_count(const hd_store *s, uint64_t *memsize)
{
	uint64_t k = 0, m = 0, r, rows = s ? hd__store_stats_rows(s) : 0;
	struct hd__ss_row row;
	unsigned char *bits;

	/* the stats summary has them counted (store_stats.c) */
	for (r = 0; r < rows; r++) {
		hd__store_stats_row(&row, s, r);
		if (row.dumper) {
			k += row.count;
			hd__sat_add(&m, row.memsize);
		}
	}
	/* else one pass with the site table's flags computed once; out of
	 * memory, node by node */
	if (s && !rows) {
		uint32_t i, n = hd_store_node_count(s);

		if ((bits = hd__store_dumper_bitmap(s, &k, &m))) {
			hd__bitmap_free(bits, n);
		} else {
			for (i = 0; i < n; i++)
				if (hd_store_is_dumper(s, i)) {
					k++;
					hd__sat_add(&m, hd_store_memsize(s, i));
				}
		}
	}
	if (memsize)
		*memsize = m;
	return k;
}

size_t hd_nodes_drop_dumper(hd_nodes *set, const hd_store *s)
{
	size_t i, k = 0;

	if (!set || !s)
		return 0;
	for (i = 0; i < set->n; i++)
		if (!hd_store_is_dumper(s, set->ids[i]))
			set->ids[k++] = set->ids[i];
	set->n = k;
	return k;
}
