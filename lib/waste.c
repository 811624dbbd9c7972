/*
 * waste.c - memory the heap holds for nothing (heapdump waste): empty
 * arrays and hashes, strings and arrays with spare capacity, duplicate
 * strings and duplicate frozen strings, each with its top sites.
 *
 * What each check reads (man 1 heapdump-waste says it for users):
 *  - empty arrays and hashes: the ARRAY "length" and HASH "size" of every
 *    version (the store's SIZE column); the bytes are the memsize.
 *  - string capacity: "capacity", which dump_all writes for a heap
 *    string (not embedded, not shared) whose capacity differs from its
 *    bytesize, in every version from 2.1 to 4.0; capacity - bytesize.
 *  - array capacity: no version writes an array's capacity, but the
 *    memsize of an array that owns its buffer (not "embedded", not
 *    "shared") is its slot plus a word an element of capacity
 *    (rb_ary_memsize), so the spare bytes are memsize - slot_size -
 *    word * length; slot_size is written from 3.2 on, and is 5 words
 *    before. A word is 8 bytes, 4 in a dump whose addresses all fit in
 *    32 bits (wasm32). 3.1 writes "embedded" only for non-empty arrays:
 *    empty ones are counted as empty, never here. A remainder that is
 *    not a positive multiple of the word is not counted.
 *  - hashes are not checked for capacity: their memsize (the st_table's
 *    bins and entries, or an ar_table) does not give it.
 *  - duplicate strings, and duplicate frozen strings: the groups of
 *    strings.c; every copy but the first in dump order (the first frozen
 *    one for the frozen duplicates), its memsize.
 */
#include "strings_int.h"

#include <stdlib.h>

#define SLOT_WORDS 5 /* the slot before 3.2, which writes slot_size */
#define SITE_NONE 0xfffffffeu

static const char *const kind_names[HD_WASTE_KINDS] = {
	"empty-arrays",       "empty-hashes",      "string-capacity",
	"array-capacity",     "duplicate-strings", "frozen-duplicates"
};

const char *hd_waste_kind_name(int kind)
{
	return kind >= 0 && kind < HD_WASTE_KINDS ? kind_names[kind] : NULL;
}

struct acc_site {
	uint32_t key;
	hd_node_id node;
	uint64_t count, bytes;
};

struct waste {
	const hd_store *s;
	hd_waste_result *out;
	struct hd__intern sites;      /* "LINE(8 bytes)FILE" */
	struct hd__map map[HD_WASTE_KINDS];
	struct acc_site *acc[HD_WASTE_KINDS];
	size_t nacc[HD_WASTE_KINDS], cap[HD_WASTE_KINDS];
	char *buf;
	size_t bcap;
};

static int site_key(struct waste *w, hd_node_id id, uint32_t *out)
{
	hd_site site;
	size_t i;

	*out = SITE_NONE;
	if (hd_store_site(&site, w->s, id) || !site.file)
		return 0;
	if (hd__grow((void **)&w->buf, &w->bcap, site.file_len + 8, 1))
		return HD_ENOMEM;
	for (i = 0; i < 8; i++)
		w->buf[i] = (char)(unsigned char)(site.line >> (8 * i));
	memcpy(w->buf + 8, site.file, site.file_len);
	return hd__intern_put(&w->sites, w->buf, site.file_len + 8, out);
}

static int add(struct waste *w, int kind, hd_node_id id, uint64_t bytes)
{
	hd_waste_row *r = &w->out->rows[kind];
	uint32_t key, idx;
	int found, sat = 0;
	struct acc_site *a;

	r->count++;
	sat |= hd__sat_add(&r->bytes, bytes);
	w->out->saturated |= (uint32_t)sat;
	if (site_key(w, id, &key) ||
	    hd__map_put(&w->map[kind], key, (uint32_t)w->nacc[kind], &idx,
			&found))
		return HD_ENOMEM;
	if (!found) {
		if (hd__grow((void **)&w->acc[kind], &w->cap[kind],
			     w->nacc[kind] + 1, sizeof(*w->acc[kind])))
			return HD_ENOMEM;
		a = &w->acc[kind][w->nacc[kind]++];
		a->key = key;
		a->node = key == SITE_NONE ? HD_NODE_NONE : id;
		a->count = a->bytes = 0;
	}
	a = &w->acc[kind][idx];
	a->count++;
	hd__sat_add(&a->bytes, bytes);
	return 0;
}

/* The heap arrays' records: their slot_size. An element is a word: 8
 * bytes, 4 in a dump whose addresses fit in 32 bits (wasm32, where the
 * smallest slot is 20 bytes). */
static int on_array(const hd_record *rec, hd_node_id id, void *payload)
{
	struct waste *w = payload;
	uint64_t m = hd_store_memsize(w->s, id), len = hd_store_size(w->s, id);
	uint64_t word = hd_store_address(w->s, id) <= 0xffffffffu ? 4 : 8;
	uint64_t slot = (rec->has & HD_HAS_SLOT_SIZE) ? rec->slot_size
						       : SLOT_WORDS * word;

	if (rec->type != HD_T_ARRAY || len > (UINT64_MAX - slot) / word ||
	    m <= slot + word * len || (m - slot - word * len) % word)
		return 0;
	return add(w, HD_WASTE_ARRAY_CAPACITY, id, m - slot - word * len) ?
		       HD_ENOMEM : 0;
}

static int strings_waste(struct waste *w, const hd_strings *st)
{
	size_t i;

	for (i = 0; i < st->nc; i++) {
		const struct hd__scopy *c = &st->c[i];
		const struct hd__sgroup *g;
		uint64_t m = hd_store_memsize(w->s, c->id);

		if (c->spare &&
		    add(w, HD_WASTE_STRING_CAPACITY, c->id, c->spare))
			return HD_ENOMEM;
		if (c->group == HD__NONE)
			continue;
		g = &st->g[c->group];
		if (g->first != i &&
		    add(w, HD_WASTE_DUPLICATE_STRINGS, c->id, m))
			return HD_ENOMEM;
		if ((hd_store_bits(w->s, c->id) & HD_B_FROZEN) &&
		    g->first_frozen != i &&
		    add(w, HD_WASTE_FROZEN_DUPLICATES, c->id, m))
			return HD_ENOMEM;
	}
	return 0;
}

static int cmp_site(const void *pa, const void *pb, void *ctx)
{
	const struct waste *w = ctx;
	const struct acc_site *a = pa, *b = pb;
	size_t la, lb, n;
	const char *sa, *sb;
	uint64_t xa = 0, xb = 0;
	int c, i;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->key == SITE_NONE || b->key == SITE_NONE)
		return (b->key == SITE_NONE) - (a->key == SITE_NONE);
	sa = hd__intern_str(&w->sites, a->key, &la);
	sb = hd__intern_str(&w->sites, b->key, &lb);
	n = la < lb ? la : lb;
	if ((c = memcmp(sa + 8, sb + 8, n - 8)))
		return c;
	if (la != lb)
		return la < lb ? -1 : 1;
	for (i = 7; i >= 0; i--) {
		xa = xa << 8 | (unsigned char)sa[i];
		xb = xb << 8 | (unsigned char)sb[i];
	}
	return xa < xb ? -1 : xa > xb;
}

static void top_sites(struct waste *w)
{
	int k;
	size_t i;

	for (k = 0; k < HD_WASTE_KINDS; k++) {
		hd_waste_row *r = &w->out->rows[k];

		hd__sort(w->acc[k], w->nacc[k], sizeof(*w->acc[k]), cmp_site,
			 w);
		for (i = 0; i < w->nacc[k] && i < HD_WASTE_MAX_SITES; i++) {
			r->sites[i].node = w->acc[k][i].node;
			r->sites[i].count = w->acc[k][i].count;
			r->sites[i].bytes = w->acc[k][i].bytes;
		}
		r->nsites = i;
	}
}

static void waste_free(struct waste *w)
{
	int k;

	for (k = 0; k < HD_WASTE_KINDS; k++) {
		hd__map_free(&w->map[k]);
		hd__free(w->acc[k], w->cap[k] * sizeof(*w->acc[k]));
	}
	hd__intern_free(&w->sites);
	hd__free(w->buf, w->bcap);
}

/* The nodes whose records are read: strings, and arrays that own a
 * buffer; empty arrays and hashes are counted on the way. */
static int walk(struct waste *w, const hd_strings *st, const hd_nodes *set,
		hd_nodes *rd)
{
	const hd_store *s = w->s;
	uint32_t i, n = hd_store_node_count(s);
	size_t j, m = set ? set->n : n;
	int sat = 0;

	for (i = 0; i < n; i++) {
		if (hd__strings_skip(st, i)) {
			w->out->excluded++;
			continue;
		}
		w->out->heap_objects++;
		sat |= hd__sat_add(&w->out->heap_memsize,
				   hd_store_memsize(s, i));
	}
	w->out->saturated |= (uint32_t)sat;
	for (j = 0; j < m; j++) {
		hd_node_id id = set ? set->ids[j] : (hd_node_id)j;
		int t;

		if (id >= n)
			return HD_EINVAL;
		if (hd__strings_skip(st, id))
			continue;
		t = hd_store_type(s, id);
		if (t == HD_T_STRING ||
		    (t == HD_T_ARRAY && hd_store_size(s, id) &&
		     !(hd_store_bits(s, id) & (HD_B_EMBEDDED | HD_B_SHARED)))) {
			if (hd__nodes_push(rd, id))
				return HD_ENOMEM;
		} else if (t == HD_T_ARRAY && !hd_store_size(s, id)) {
			if (add(w, HD_WASTE_EMPTY_ARRAYS, id,
				hd_store_memsize(s, id)))
				return HD_ENOMEM;
		} else if (t == HD_T_HASH && !hd_store_size(s, id)) {
			if (add(w, HD_WASTE_EMPTY_HASHES, id,
				hd_store_memsize(s, id)))
				return HD_ENOMEM;
		}
	}
	return 0;
}

int hd_waste_compute(hd_waste_result *out, const hd_store *s,
		     const hd_nodes *set, unsigned flags,
		     const hd_read_options *ro, hd_error *err)
{
	hd_strings_options so = HD_STRINGS_OPTIONS_INIT;
	hd_strings *st = NULL;
	hd_nodes rd = { NULL, 0, 0 };
	struct waste w;
	int rc, k;

	HD_ASSERT_ARG(out && s);
	HD_ASSERT_ARG(!(flags & ~HD_STRINGS_ALL));
	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	for (k = 0; k < HD_WASTE_KINDS; k++)
		out->rows[k].kind = k;
	w.s = s;
	w.out = out;
	so.flags = flags;
	if ((rc = hd__strings_new(&st, s, &so, err)))
		return rc;
	rc = hd__intern_init(&w.sites);
	for (k = 0; k < HD_WASTE_KINDS && !rc; k++)
		rc = hd__map_init(&w.map[k], 64);
	if (rc) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = walk(&w, st, set, &rd))) {
		rc = rc == HD_EINVAL ?
			     hd__error(err, rc, "a node out of range") :
			     hd__error(err, rc, "out of memory");
		goto out;
	}
	st->extra = on_array;
	st->extra_payload = &w;
	if ((rc = hd__strings_read(st, &rd, ro, err)))
		goto out;
	if ((rc = strings_waste(&w, st))) {
		rc = hd__error(err, rc, "out of memory");
		goto out;
	}
	top_sites(&w);
out:
	hd_nodes_free(&rd);
	hd_strings_free(st);
	waste_free(&w);
	return rc;
}
