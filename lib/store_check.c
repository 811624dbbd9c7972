/*
 * store_check.c - the checks store.c runs on the optional sections when a
 * store is opened: the reference names (store_refnames.c writes them) and
 * the stats summary (store_stats.c). They read only the sections' bytes
 * (store_format.h), so the store's reading side calls no file that
 * builds or reads those sections through it.
 */
#include "store_format.h"

/* ---- reference names ---- */

uint64_t hd__store_names_size(const hd_store *s, int id)
{
	const unsigned char *info = s->sec[HD__SEC_NAME_INFO];
	uint64_t enc, n;

	if (id == HD__SEC_NAME_INFO)
		return NI__COUNT * 8;
	if (!info || s->len[HD__SEC_NAME_INFO] != NI__COUNT * 8)
		return UINT64_MAX;
	if (id == HD__SEC_NAME_ROOT)
		return hd__le64(info + 8 * NI_ROOT_ENTRIES) ?
			       s->meta[HD__M_ROOT_KEPT] * 4 :
			       0;
	enc = hd__le64(info + 8 * NI_ENCODING);
	n = hd__le64(info + 8 * NI_ENTRIES);
	if (enc == ENC_SPARSE)
		return n <= s->meta[HD__M_EDGES] ? n * 8 : UINT64_MAX;
	if (enc == ENC_DENSE16 || enc == ENC_DENSE32)
		return s->meta[HD__M_EDGES] * enc;
	return UINT64_MAX;
}

int hd__store_names_check(const hd_store *s, int full, hd_error *err)
{
	const unsigned char *info = s->sec[HD__SEC_NAME_INFO];
	const unsigned char *map = s->sec[HD__SEC_NAME_MAP];
	const unsigned char *root = s->sec[HD__SEC_NAME_ROOT];
	uint64_t enc, n, k, E = s->meta[HD__M_EDGES], prev = 0, c;

	if (!info != !map || !info != !root)
		return hd__error(err, HD_EFORMAT,
				 "store %s section is missing",
				 info ? "reference name" :
					"reference name info");
	if (!info)
		return 0;
	if (hd__le64(info + 8 * NI_FLAGS) & ~(uint64_t)HD_NAME_INFERRED)
		return hd__error(err, HD_EFORMAT, "store %s section has "
				 "unknown flags", "reference name info");
	if (!full)
		return 0;
	enc = hd__le64(info + 8 * NI_ENCODING);
	n = hd__le64(info + 8 * NI_ENTRIES);
	if (enc == ENC_SPARSE) {
		for (k = 0; k < n; k++) {
			uint64_t e = hd__le32(map + k * 8);

			if (e >= E || (k && e <= prev) ||
			    hd__le32(map + k * 8 + 4) >= s->nstrings)
				goto corrupt;
			prev = e;
		}
	} else {
		for (k = 0; k < E; k++) {
			c = enc == ENC_DENSE16 ?
				    (uint64_t)(map[k * 2] | map[k * 2 + 1] << 8) :
				    hd__le32(map + k * 4);
			if (c > s->nstrings)
				goto corrupt;
		}
	}
	for (k = 0; k < s->len[HD__SEC_NAME_ROOT] / 4; k++)
		if (hd__le32(root + k * 4) > s->nstrings)
			goto corrupt;
	return 0;
corrupt:
	return hd__error(err, HD_EFORMAT, "store %s section is corrupt",
			 "reference name");
}

/* ---- the stats summary ---- */

uint64_t hd__store_stats_size(const hd_store *s)
{
	const unsigned char *p = s->sec[HD__SEC_STATS];
	uint64_t rows, bytes;

	if (!p || s->len[HD__SEC_STATS] < SS_HEAD)
		return UINT64_MAX;
	rows = hd__le64(p + 8);
	bytes = hd__le64(p + 16);
	if (rows > s->len[HD__SEC_STATS] / SS_ROW ||
	    bytes > s->len[HD__SEC_STATS])
		return UINT64_MAX;
	return SS_HEAD + rows * SS_ROW + bytes;
}

#define corrupt(err, what) \
	hd__error(err, HD_EFORMAT, "store stats summary section %s", what)

int hd__store_stats_check(const hd_store *s, hd_error *err)
{
	const unsigned char *p = s->sec[HD__SEC_STATS], *q, *prev = NULL;
	const char *names;
	uint64_t rows, bytes, i, count = 0, edges = 0, o, l;
	/* the rows count references as the dump lists them */
	uint64_t dump_edges = s->meta[HD__M_EDGES] - s->meta[HD__M_CLASS_EDGES];

	if (!p)
		return 0;
	rows = hd__le64(p + 8);
	bytes = hd__le64(p + 16);
	if (hd__le64(p) != SS_VERSION || hd__le64(p + 24))
		return corrupt(err, "has an unknown version or flags");
	names = (const char *)p + SS_HEAD + rows * SS_ROW;
	for (i = 0, q = p + SS_HEAD; i < rows; i++, q += SS_ROW) {
		o = hd__le32(q + 8);
		l = hd__le32(q + 12);
		if (hd__le32(q) >= HD_T__COUNT ||
		    (hd__le32(q + 4) & ~(HD__SS_DUMPER | HD__SS_SATURATED)) || o > bytes ||
		    l > bytes - o || !hd__le64(q + 16) ||
		    hd__le64(q + 40) > hd__le64(q + 16) ||
		    hd__le64(q + 48) > hd__le64(q + 56))
			return corrupt(err, "has an invalid row");
		if (prev) {
			int c = hd__le32(prev) != hd__le32(q) ?
					(hd__le32(prev) < hd__le32(q) ? -1 : 1) :
					hd__span_cmp(names + hd__le32(prev + 8),
						 hd__le32(prev + 12), names + o,
						 (size_t)l);

			if (c > 0 || (!c && hd__le32(prev + 4) >=
						    hd__le32(q + 4)))
				return corrupt(err, "is not sorted");
		}
		count += hd__le64(q + 16);
		edges += hd__le64(q + 32);
		if (count > s->nodes || edges > dump_edges)
			return corrupt(err, "does not match the nodes");
		prev = q;
	}
	if (count != s->nodes || edges != dump_edges)
		return corrupt(err, "does not match the nodes");
	return 0;
}
