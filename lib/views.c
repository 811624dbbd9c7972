/*
 * views.c - what a browser of the heap (heapdump serve) reads at start
 * and on its first calls, kept in the store as optional, versioned
 * sections (man 5 heapdump-store, VIEWS): the string values (by value
 * and site, and lowercased for a search case aside), the group stats of
 * serve's groupings, retained by class, the objects' order (a group's
 * objects in serve: the one rule, hd_retained_before, is here, and the
 * sort). hd_store_set_views computes them
 * on a built store; each *_open reads one back from an opened store
 * after a check linear in its size and says HD_ENOTFOUND when the store
 * has none, HD_EFORMAT (naming the section and what is wrong) when it is
 * damaged or stale: the caller computes it then (each *_build), so the
 * answer is the same from a store with the views, without them, and
 * from a dump.
 *
 * Why: on 4.9 M objects serve waited 25 s for the string values read
 * back from the dump (2.8 M records), 1.1 s for retained by class and
 * 0.5 s for the groupings at every start, 1.4 s (3.5 s at 18 M) for the
 * objects' order; mapped, each is a check of its section (the order's
 * 0.19 s: a random read of the tree's retained memsize per object).
 *
 * Layouts (u64 little-endian unless said; every section begins with its
 * layout version, VIEW_VERSION, and the store's node count, so a view of
 * another layout or another store is stale):
 *   STRV_INFO   version, nodes, rows, V (the values' bytes, NULs in)
 *   STRV_ROWS   off[rows + 1] (off[0] = 0, off[rows] = V: value i is
 *               text[off[i], off[i + 1] - 1), a NUL after it), then per
 *               row bytesize, count, memsize, u32 node, u32 flags (1:
 *               complete): HD__SV_ROW_SIZE bytes
 *   STRV_TEXT   the values (V bytes), then the same lowercased (V bytes)
 *   VIEW_GROUPS version, nodes, groupings G, rows R, key text bytes S,
 *               flags, the totals (GT_COUNT), then G x (nkeys, keys[4],
 *               rows), then R rows (count, memsize, u32 key offset[4],
 *               u32 key length[4]: GROUP_ROW bytes), then S bytes of keys
 *               each followed by a NUL
 *   VIEW_CLASSES version, nodes, rows N, text bytes S, the tree's flags,
 *               objects reached, their memsize; N rows (objects,
 *               shallow, retained count, retained memsize, u32 name
 *               offset, u32 name length: CLASS_ROW bytes); S bytes of
 *               names each followed by a NUL
 *   VIEW_ORDER  version, nodes, objects M, the tree's flags, objects
 *               reached, their memsize; M u32 nodes (every node but the
 *               dumper's) by retained memsize, largest first, then
 *               ascending node
 */
#include "hd_int.h"
#include "store_format.h"

#include <string.h>

/* the ids man 5 heapdump-store gives them (48 and on are taken) */
typedef char hd__views_ids_check[(HD__SEC_STACK_FRAME == 42 &&
				  HD__SEC_VIEW_CLASSES == 47 &&
				  HD__SEC_VIEW_ORDER == 48) ? 1 : -1];

#define VIEW_VERSION 1u

enum { SV_VERSION, SV_NODES, SV_ROWS, SV_TEXT, SV_COUNT };
#define SV_ROW_SIZE 32u

enum { GH_VERSION, GH_NODES, GH_GROUPINGS, GH_ROWS, GH_TEXT, GH_FLAGS,
       GH_COUNT };
enum { GT_OBJECTS, GT_MEMSIZE, GT_EDGES, GT_ROOTS, GT_ROOT_CATEGORIES,
       GT_SHAPES, GT_TRACED, GT_GEN_MIN, GT_GEN_MAX, GT_EXCLUDED,
       GT_EXCLUDED_MEMSIZE, GT_FEATURES, GT_SATURATED, GT_COUNT };
#define GROUP_DESC (2u + HD_STATS_MAX_KEYS)
#define GROUP_ROW (16u + 8u * HD_STATS_MAX_KEYS)

enum { CH_VERSION, CH_NODES, CH_ROWS, CH_TEXT, CH_FLAGS, CH_REACHED,
       CH_REACHED_MEM, CH_COUNT };
#define CLASS_ROW 40u

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* "store <section> view is damaged: <why>" */
static int damaged(hd_error *err, const char *what, const char *why)
{
	return hd__error(err, HD_EFORMAT, "store %s view is damaged (%s)",
			 what, why);
}

/* The version and node checks every view begins with. */
static int view_head(const unsigned char *h, uint64_t len, uint64_t need,
		     const hd_store *s, const char *what, hd_error *err)
{
	if (len < 16)
		return damaged(err, what, "too short");
	if (hd__le64(h) != VIEW_VERSION)
		return hd__error(err, HD_EFORMAT, "store %s view is stale "
				 "(layout %llu; this heapdump reads %u)", what,
				 (unsigned long long)hd__le64(h), VIEW_VERSION);
	if (hd__le64(h + 8) != hd_store_node_count(s))
		return hd__error(err, HD_EFORMAT, "store %s view is stale "
				 "(made for %llu objects, not %u)", what,
				 (unsigned long long)hd__le64(h + 8),
				 hd_store_node_count(s));
	if (len < need)
		return damaged(err, what, "too short");
	return 0;
}

/* ---- string values ---- */

struct hd_string_values {
	size_t n;
	/* kept: the sections' images */
	const unsigned char *off, *rows;
	const char *text;
	/* built */
	hd_strings *strs;
	const hd_strings_row *srows;
	hd_text_search *ts;
};

static const char *srow_value(void *payload, size_t i, size_t *len)
{
	const hd_strings_row *rows = payload;

	*len = rows[i].value_len;
	return rows[i].value;
}

int hd_string_values_build(hd_string_values **out, const hd_store *s,
			   hd_error *err)
{
	hd_strings_options xo = HD_STRINGS_OPTIONS_INIT;
	hd_string_values *v;
	int rc;

	HD_ASSERT_ARG(out && s);
	*out = NULL;
	if (!(v = hd__calloc(1, sizeof(*v))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	xo.by = HD_STRINGS_BY_SITE;
	xo.min_count = 1;
	if ((rc = hd_strings_build(&v->strs, s, NULL, &xo, NULL, err)) ||
	    (v->srows = hd_strings_rows(v->strs, &v->n),
	     rc = hd_text_search_build(&v->ts, v->n, srow_value,
				       (void *)v->srows, err))) {
		hd_string_values_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int hd_string_values_open(hd_string_values **out, const hd_store *s,
			  hd_error *err)
{
	static const char what[] = "string value";
	const unsigned char *info, *rows, *text, *r;
	uint64_t ilen, rlen, tlen, n, V, i, k, a, b, nodes;
	hd_string_values *v;
	int rc;

	HD_ASSERT_ARG(out && s);
	*out = NULL;
	info = hd__store_section(s, HD__SEC_STRV_INFO, &ilen);
	rows = hd__store_section(s, HD__SEC_STRV_ROWS, &rlen);
	text = hd__store_section(s, HD__SEC_STRV_TEXT, &tlen);
	if (!info && !rows && !text)
		return hd__error(err, HD_ENOTFOUND,
				 "the store keeps no string values");
	if (!info || !rows || !text)
		return damaged(err, what, "a section is missing");
	if ((rc = view_head(info, ilen, SV_COUNT * 8, s, what, err)))
		return rc;
	if (ilen != SV_COUNT * 8)
		return damaged(err, what, "info is the wrong size");
	n = hd__le64(info + 8 * SV_ROWS);
	V = hd__le64(info + 8 * SV_TEXT);
	nodes = hd_store_node_count(s);
	if (n > rlen / (8 + SV_ROW_SIZE) ||
	    rlen != (n + 1) * 8 + n * SV_ROW_SIZE || V > tlen / 2 ||
	    tlen != 2 * V)
		return damaged(err, what, "a section is the wrong size");
	if (hd__le64(rows) != 0 || hd__le64(rows + 8 * n) != V)
		return damaged(err, what, "the offsets do not span the text");
	for (i = 0; i < n; i++) {
		a = hd__le64(rows + 8 * i);
		b = hd__le64(rows + 8 * (i + 1));
		r = rows + 8 * (n + 1) + SV_ROW_SIZE * i;
		if (b <= a || b > V || text[b - 1] != '\0')
			return damaged(err, what, "an offset is out of order");
		k = hd__le32(r + 24);
		if ((k != HD_NODE_NONE &&
		     (k >= nodes || hd_store_type(s, (hd_node_id)k) !=
					    HD_T_STRING)) ||
		    (hd__le32(r + 28) & ~1u) || hd__le64(r + 8) == 0)
			return damaged(err, what, "a row is invalid");
	}
	for (k = 0; k < V; k++)
		if (text[V + k] != (unsigned char)lower((char)text[k]))
			return damaged(err, what,
				       "the lowercased text differs");
	if (!(v = hd__calloc(1, sizeof(*v))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	v->n = (size_t)n;
	v->off = rows;
	v->rows = rows + 8 * (n + 1);
	v->text = (const char *)text;
	if (hd__text_search_borrow(&v->ts, (const char *)text + V, rows,
				   (size_t)n)) {
		hd_string_values_free(v);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	*out = v;
	return 0;
}

size_t hd_string_values_count(const hd_string_values *v)
{
	return v ? v->n : 0;
}

void hd_string_values_row(hd_string_value *r, const hd_string_values *v,
			  size_t i)
{
	memset(r, 0, sizeof(*r));
	r->node = HD_NODE_NONE;
	if (!v || i >= v->n)
		return;
	if (v->srows) {
		const hd_strings_row *x = &v->srows[i];

		r->value = x->value;
		r->value_len = x->value_len;
		r->bytesize = x->bytesize;
		r->count = x->count;
		r->memsize = x->memsize;
		r->node = x->node;
		r->complete = x->complete;
	} else {
		const unsigned char *p = v->rows + SV_ROW_SIZE * i;
		uint64_t a = hd__le64(v->off + 8 * i);

		r->value = v->text + a;
		r->value_len = (size_t)(hd__le64(v->off + 8 * (i + 1)) - a - 1);
		r->bytesize = hd__le64(p);
		r->count = hd__le64(p + 8);
		r->memsize = hd__le64(p + 16);
		r->node = hd__le32(p + 24);
		r->complete = hd__le32(p + 28) & 1u;
	}
}

const hd_text_search *hd_string_values_search(const hd_string_values *v)
{
	return v ? v->ts : NULL;
}

void hd_string_values_free(hd_string_values *v)
{
	if (!v)
		return;
	hd_text_search_free(v->ts);
	hd_strings_free(v->strs);
	hd__free(v, sizeof(*v));
}

/* The three sections of the string values: the rows of st (the by-site
 * rows hd_string_values_build keeps, without the search it adds). */
static int strings_images(const hd_strings *st, const hd_store *s,
			  unsigned char **img, size_t *len)
{
	uint64_t V = 0, at = 0;
	size_t i, n;
	const hd_strings_row *rows = hd_strings_rows(st, &n);
	unsigned char *p;

	for (i = 0; i < n; i++)
		V += rows[i].value_len + 1;
	len[0] = SV_COUNT * 8;
	len[1] = (n + 1) * 8 + n * SV_ROW_SIZE;
	len[2] = (size_t)(2 * V);
	for (i = 0; i < 3; i++)
		if (!(img[i] = hd__malloc(len[i] ? len[i] : 1)))
			return HD_ENOMEM;
	hd__put_le64(img[0] + 8 * SV_VERSION, VIEW_VERSION);
	hd__put_le64(img[0] + 8 * SV_NODES, hd_store_node_count(s));
	hd__put_le64(img[0] + 8 * SV_ROWS, n);
	hd__put_le64(img[0] + 8 * SV_TEXT, V);
	for (i = 0; i < n; i++) {
		const hd_strings_row *r = &rows[i];
		unsigned char *t = img[2] + at;
		size_t k;

		hd__put_le64(img[1] + 8 * i, at);
		p = img[1] + 8 * (n + 1) + SV_ROW_SIZE * i;
		hd__put_le64(p, r->bytesize);
		hd__put_le64(p + 8, r->count);
		hd__put_le64(p + 16, r->memsize);
		hd__put_le32(p + 24, r->node);
		hd__put_le32(p + 28, r->complete ? 1u : 0u);
		/* the value and, V bytes on, its lowercase: one pass */
		for (k = 0; k < r->value_len; k++) {
			t[k] = (unsigned char)r->value[k];
			t[V + k] = (unsigned char)lower(r->value[k]);
		}
		t[r->value_len] = 0;
		t[V + r->value_len] = 0;
		at += r->value_len + 1;
	}
	hd__put_le64(img[1] + 8 * n, at);
	return 0;
}

/* ---- group stats ---- */

struct hd_group_stats {
	hd_stats_options o;
	hd_stats_totals tot;
	hd_stats *st;                              /* built */
	hd_stats_row *own[HD_STATS_MAX_GROUPINGS]; /* kept: decoded rows */
	const hd_stats_row *rows[HD_STATS_MAX_GROUPINGS];
	size_t n[HD_STATS_MAX_GROUPINGS];
};

void hd_view_stats_options(hd_stats_options *o)
{
	static const int keys[7] = { HD_KEY_TYPE, HD_KEY_CLASS, HD_KEY_FILE,
				     HD_KEY_LOCATION, HD_KEY_GEM,
				     HD_KEY_GENERATION, HD_KEY_IMEMO };
	hd_stats_options init = HD_STATS_OPTIONS_INIT;
	unsigned g;

	*o = init;
	for (g = 0; g < 7; g++) {
		o->keys[g][0] = keys[g];
		o->nkeys[g] = 1;
	}
	/* file and gem together: the files of each gem */
	o->keys[7][0] = HD_KEY_FILE;
	o->keys[7][1] = HD_KEY_GEM;
	o->nkeys[7] = 2;
	o->ngroupings = 8;
}

static int opts_ok(const hd_stats_options *o)
{
	unsigned g, k;

	if (!o || o->version != HD_STATS_OPTIONS_VERSION ||
	    !o->ngroupings || o->ngroupings > HD_STATS_MAX_GROUPINGS)
		return 0;
	for (g = 0; g < o->ngroupings; g++) {
		if (!o->nkeys[g] || o->nkeys[g] > HD_STATS_MAX_KEYS)
			return 0;
		for (k = 0; k < o->nkeys[g]; k++)
			if (!hd_key_name(o->keys[g][k]))
				return 0;
	}
	return 1;
}

int hd_group_stats_build(hd_group_stats **out, const hd_store *s,
			 const hd_stats_options *o, hd_error *err)
{
	hd_group_stats *g;
	unsigned i;
	int rc;

	HD_ASSERT_ARG(out && s && opts_ok(o));
	*out = NULL;
	if (!(g = hd__calloc(1, sizeof(*g))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	g->o = *o;
	if ((rc = hd_stats_new(&g->st, o, err)) ||
	    (rc = hd_stats_add_store(g->st, s, err)) ||
	    (rc = hd_stats_finish(g->st, err))) {
		hd_group_stats_free(g);
		return rc;
	}
	for (i = 0; i < o->ngroupings; i++)
		g->rows[i] = hd_stats_rows(g->st, i, HD_SORT_COUNT, &g->n[i]);
	hd_stats_totals_get(&g->tot, g->st);
	*out = g;
	return 0;
}

static void totals_put(unsigned char *p, const hd_stats_totals *t)
{
	const uint64_t v[GT_COUNT] = {
		t->objects, t->memsize, t->edges, t->roots,
		t->root_categories, t->shapes, t->traced, t->gen_min,
		t->gen_max, t->excluded, t->excluded_memsize, t->features,
		t->saturated
	};
	unsigned i;

	for (i = 0; i < GT_COUNT; i++)
		hd__put_le64(p + 8 * i, v[i]);
}

static int totals_get(hd_stats_totals *t, const unsigned char *p)
{
	t->objects = hd__le64(p + 8 * GT_OBJECTS);
	t->memsize = hd__le64(p + 8 * GT_MEMSIZE);
	t->edges = hd__le64(p + 8 * GT_EDGES);
	t->roots = hd__le64(p + 8 * GT_ROOTS);
	t->root_categories = hd__le64(p + 8 * GT_ROOT_CATEGORIES);
	t->shapes = hd__le64(p + 8 * GT_SHAPES);
	t->traced = hd__le64(p + 8 * GT_TRACED);
	t->gen_min = hd__le64(p + 8 * GT_GEN_MIN);
	t->gen_max = hd__le64(p + 8 * GT_GEN_MAX);
	t->excluded = hd__le64(p + 8 * GT_EXCLUDED);
	t->excluded_memsize = hd__le64(p + 8 * GT_EXCLUDED_MEMSIZE);
	if (hd__le64(p + 8 * GT_FEATURES) > UINT32_MAX ||
	    hd__le64(p + 8 * GT_SATURATED) > 1)
		return -1;
	t->features = (uint32_t)hd__le64(p + 8 * GT_FEATURES);
	t->saturated = (uint32_t)hd__le64(p + 8 * GT_SATURATED);
	return 0;
}

#define GROUP_HEAD ((GH_COUNT + GT_COUNT) * 8u)

static int groups_image(const hd_group_stats *g, const hd_store *s,
			unsigned char **img, size_t *len)
{
	uint64_t R = 0, S = 0, at = 0;
	unsigned char *p, *rp, *tp;
	unsigned gi, k;
	size_t i;

	for (gi = 0; gi < g->o.ngroupings; gi++)
		for (i = 0; i < g->n[gi]; i++) {
			R++;
			for (k = 0; k < g->o.nkeys[gi]; k++)
				S += g->rows[gi][i].key_len[k] + 1;
		}
	if (S > UINT32_MAX)
		return HD_ENOMEM; /* beyond the layout's offsets */
	*len = GROUP_HEAD + g->o.ngroupings * GROUP_DESC * 8 + R * GROUP_ROW +
	       S;
	if (!(*img = p = hd__calloc(*len, 1)))
		return HD_ENOMEM;
	hd__put_le64(p + 8 * GH_VERSION, VIEW_VERSION);
	hd__put_le64(p + 8 * GH_NODES, hd_store_node_count(s));
	hd__put_le64(p + 8 * GH_GROUPINGS, g->o.ngroupings);
	hd__put_le64(p + 8 * GH_ROWS, R);
	hd__put_le64(p + 8 * GH_TEXT, S);
	hd__put_le64(p + 8 * GH_FLAGS, g->o.flags);
	totals_put(p + 8 * GH_COUNT, &g->tot);
	p += GROUP_HEAD;
	rp = p + g->o.ngroupings * GROUP_DESC * 8;
	tp = rp + R * GROUP_ROW;
	for (gi = 0; gi < g->o.ngroupings; gi++) {
		hd__put_le64(p, g->o.nkeys[gi]);
		for (k = 0; k < g->o.nkeys[gi]; k++)
			hd__put_le64(p + 8 + 8 * k, (uint64_t)g->o.keys[gi][k]);
		hd__put_le64(p + 8 * (GROUP_DESC - 1), g->n[gi]);
		p += GROUP_DESC * 8;
		for (i = 0; i < g->n[gi]; i++, rp += GROUP_ROW) {
			const hd_stats_row *r = &g->rows[gi][i];

			hd__put_le64(rp, r->count);
			hd__put_le64(rp + 8, r->memsize);
			for (k = 0; k < g->o.nkeys[gi]; k++) {
				hd__put_le32(rp + 16 + 4 * k, (uint32_t)at);
				hd__put_le32(rp + 16 + 4 * HD_STATS_MAX_KEYS +
						     4 * k,
					     (uint32_t)r->key_len[k]);
				if (r->key_len[k])
					memcpy(tp + at, r->key[k],
					       r->key_len[k]);
				at += r->key_len[k] + 1; /* the NUL: calloc */
			}
		}
	}
	return 0;
}

int hd_group_stats_open(hd_group_stats **out, const hd_store *s,
			const hd_stats_options *o, hd_error *err)
{
	static const char what[] = "group stats";
	const unsigned char *img, *p, *rp, *tp;
	uint64_t len, G, R, S, nr, done = 0, off, kl;
	hd_group_stats *g;
	unsigned gi, k;
	size_t i;
	int rc;

	HD_ASSERT_ARG(out && s && opts_ok(o));
	*out = NULL;
	if (!(img = hd__store_section(s, HD__SEC_VIEW_GROUPS, &len)))
		return hd__error(err, HD_ENOTFOUND,
				 "the store keeps no group stats");
	if ((rc = view_head(img, len, GROUP_HEAD, s, what, err)))
		return rc;
	G = hd__le64(img + 8 * GH_GROUPINGS);
	R = hd__le64(img + 8 * GH_ROWS);
	S = hd__le64(img + 8 * GH_TEXT);
	if (G > HD_STATS_MAX_GROUPINGS || R > len / GROUP_ROW || S > len ||
	    len != GROUP_HEAD + G * GROUP_DESC * 8 + R * GROUP_ROW + S)
		return damaged(err, what, "the wrong size");
	/* kept for other groupings: not these stats */
	if (G != o->ngroupings || hd__le64(img + 8 * GH_FLAGS) != o->flags)
		return hd__error(err, HD_ENOTFOUND, "the store keeps group "
				 "stats of other groupings");
	p = img + GROUP_HEAD;
	for (gi = 0; gi < G; gi++, p += GROUP_DESC * 8) {
		if (hd__le64(p) != o->nkeys[gi])
			return hd__error(err, HD_ENOTFOUND, "the store keeps "
					 "group stats of other groupings");
		for (k = 0; k < o->nkeys[gi]; k++)
			if (hd__le64(p + 8 + 8 * k) != (uint64_t)o->keys[gi][k])
				return hd__error(err, HD_ENOTFOUND,
						 "the store keeps group stats "
						 "of other groupings");
		done += hd__le64(p + 8 * (GROUP_DESC - 1));
	}
	if (done != R)
		return damaged(err, what, "the row counts do not add up");
	if (!(g = hd__calloc(1, sizeof(*g))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	g->o = *o;
	if (totals_get(&g->tot, img + 8 * GH_COUNT)) {
		hd_group_stats_free(g);
		return damaged(err, what, "the totals are invalid");
	}
	p = img + GROUP_HEAD;
	rp = p + G * GROUP_DESC * 8;
	tp = rp + R * GROUP_ROW;
	for (gi = 0; gi < G; gi++, p += GROUP_DESC * 8) {
		nr = hd__le64(p + 8 * (GROUP_DESC - 1));
		g->n[gi] = (size_t)nr;
		if (!(g->own[gi] = hd__calloc((size_t)nr + 1,
					      sizeof(hd_stats_row)))) {
			hd_group_stats_free(g);
			return hd__error(err, HD_ENOMEM, "out of memory");
		}
		g->rows[gi] = g->own[gi];
		for (i = 0; i < nr; i++, rp += GROUP_ROW) {
			hd_stats_row *r = &g->own[gi][i];

			r->count = hd__le64(rp);
			r->memsize = hd__le64(rp + 8);
			if (i && r->count > g->own[gi][i - 1].count) {
				hd_group_stats_free(g);
				return damaged(err, what,
					       "rows are out of order");
			}
			for (k = 0; k < o->nkeys[gi]; k++) {
				off = hd__le32(rp + 16 + 4 * k);
				kl = hd__le32(rp + 16 + 4 * HD_STATS_MAX_KEYS +
					      4 * k);
				if (off + kl >= S || tp[off + kl] != '\0' ||
				    memchr(tp + off, '\0', (size_t)kl)) {
					hd_group_stats_free(g);
					return damaged(err, what,
						       "a key is out of bounds");
				}
				r->key[k] = (const char *)tp + off;
				r->key_len[k] = (size_t)kl;
			}
		}
	}
	*out = g;
	return 0;
}

const hd_stats_row *hd_group_stats_rows(const hd_group_stats *g,
					unsigned grouping, size_t *n)
{
	if (!g || grouping >= g->o.ngroupings) {
		*n = 0;
		return NULL;
	}
	*n = g->n[grouping];
	return g->rows[grouping];
}

void hd_group_stats_totals(hd_stats_totals *out, const hd_group_stats *g)
{
	if (g)
		*out = g->tot;
	else
		memset(out, 0, sizeof(*out));
}

void hd_group_stats_free(hd_group_stats *g)
{
	unsigned i;

	if (!g)
		return;
	for (i = 0; i < HD_STATS_MAX_GROUPINGS; i++)
		hd__free(g->own[i], (g->n[i] + 1) * sizeof(hd_stats_row));
	hd_stats_free(g->st);
	hd__free(g, sizeof(*g));
}

/* ---- retained by class ---- */

/* The tree's flags as the store keeps them (DOM_INFO). */
static int dom_flags(const hd_store *s, uint64_t *flags)
{
	uint64_t len;
	const unsigned char *di = hd__store_section(s, HD__SEC_DOM_INFO, &len);

	if (!di || len < 8 * (HD__DI_FLAGS + 1))
		return -1;
	*flags = hd__le64(di + 8 * HD__DI_FLAGS);
	return 0;
}

static int classes_image(const hd_class_retained *c, size_t n,
			 const hd_domtree *d, const hd_store *s,
			 unsigned char **img, size_t *len)
{
	uint64_t S = 0, at = 0, flags = 0, rm = 0, rc;
	unsigned char *p, *tp;
	size_t i, nl;

	for (i = 0; i < n; i++)
		S += strlen(c[i].name) + 1;
	if (S > UINT32_MAX || dom_flags(s, &flags))
		return HD_EINVAL;
	rc = hd_domtree_reached(d, &rm);
	*len = CH_COUNT * 8 + n * CLASS_ROW + S;
	if (!(*img = p = hd__calloc(*len, 1)))
		return HD_ENOMEM;
	hd__put_le64(p + 8 * CH_VERSION, VIEW_VERSION);
	hd__put_le64(p + 8 * CH_NODES, hd_store_node_count(s));
	hd__put_le64(p + 8 * CH_ROWS, n);
	hd__put_le64(p + 8 * CH_TEXT, S);
	hd__put_le64(p + 8 * CH_FLAGS, flags);
	hd__put_le64(p + 8 * CH_REACHED, rc);
	hd__put_le64(p + 8 * CH_REACHED_MEM, rm);
	p += CH_COUNT * 8;
	tp = p + n * CLASS_ROW;
	for (i = 0; i < n; i++, p += CLASS_ROW) {
		nl = strlen(c[i].name);
		hd__put_le64(p, c[i].objects);
		hd__put_le64(p + 8, c[i].shallow);
		hd__put_le64(p + 16, c[i].retained_count);
		hd__put_le64(p + 24, c[i].retained_memsize);
		hd__put_le32(p + 32, (uint32_t)at);
		hd__put_le32(p + 36, (uint32_t)nl);
		memcpy(tp + at, c[i].name, nl);
		at += nl + 1;
	}
	return 0;
}

int hd_domtree_classes_open(hd_class_retained **rows, size_t *n_rows,
			    const hd_domtree *d, const hd_store *s,
			    hd_error *err)
{
	static const char what[] = "retained by class";
	const unsigned char *img, *p, *tp;
	uint64_t len, N, S, flags, rm = 0, rc, off, nl;
	hd_class_retained *out;
	size_t i;
	int r;

	HD_ASSERT_ARG(rows && n_rows && d && s);
	*rows = NULL;
	*n_rows = 0;
	if (!(img = hd__store_section(s, HD__SEC_VIEW_CLASSES, &len)))
		return hd__error(err, HD_ENOTFOUND,
				 "the store keeps no retained by class");
	if ((r = view_head(img, len, CH_COUNT * 8, s, what, err)))
		return r;
	N = hd__le64(img + 8 * CH_ROWS);
	S = hd__le64(img + 8 * CH_TEXT);
	if (N > len / CLASS_ROW || S > len ||
	    len != CH_COUNT * 8 + N * CLASS_ROW + S)
		return damaged(err, what, "the wrong size");
	if (!hd_domtree_is_stored(d))
		return hd__error(err, HD_ENOTFOUND, "the store keeps retained "
				 "by class of another tree");
	rc = hd_domtree_reached(d, &rm);
	if (dom_flags(s, &flags) ||
	    hd__le64(img + 8 * CH_FLAGS) != flags ||
	    hd__le64(img + 8 * CH_REACHED) != rc ||
	    hd__le64(img + 8 * CH_REACHED_MEM) != rm)
		return hd__error(err, HD_EFORMAT, "store %s view is stale "
				 "(made for another dominator tree)", what);
	if (!(out = hd__calloc((size_t)N + 1, sizeof(*out))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	p = img + CH_COUNT * 8;
	tp = p + N * CLASS_ROW;
	for (i = 0; i < N; i++, p += CLASS_ROW) {
		off = hd__le32(p + 32);
		nl = hd__le32(p + 36);
		out[i].objects = hd__le64(p);
		out[i].shallow = hd__le64(p + 8);
		out[i].retained_count = hd__le64(p + 16);
		out[i].retained_memsize = hd__le64(p + 24);
		if (off + nl >= S || tp[off + nl] != '\0' ||
		    memchr(tp + off, '\0', (size_t)nl) ||
		    (i && out[i].retained_memsize >
			  out[i - 1].retained_memsize) ||
		    !(out[i].name = hd__strdup((const char *)tp + off))) {
			int nomem = off + nl < S && tp[off + nl] == '\0' &&
				    !memchr(tp + off, '\0', (size_t)nl) &&
				    !(i && out[i].retained_memsize >
					   out[i - 1].retained_memsize);

			hd_class_retained_free(out);
			return nomem ? hd__error(err, HD_ENOMEM,
						 "out of memory") :
				       damaged(err, what, "a row is invalid");
		}
	}
	*rows = out;
	*n_rows = (size_t)N;
	return 0;
}

/* ---- the objects' order ---- */

int hd_retained_before(uint64_t mem_a, hd_node_id a, uint64_t mem_b,
		       hd_node_id b)
{
	return mem_a != mem_b ? mem_a > mem_b : a < b;
}

struct hd_retained_order {
	size_t n;
	const hd_node_id *nodes; /* own, or borrowed from the mapping */
	hd_node_id *own;
	size_t own_cap;          /* the ids own has room for */
};

enum { OH_VERSION, OH_NODES, OH_OBJECTS, OH_FLAGS, OH_REACHED,
       OH_REACHED_MEM, OH_COUNT };

/*
 * The n nodes id[] (in ascending node order) with their retained
 * memsize key[] put in the objects' order (hd_retained_before) by a
 * stable radix sort, least significant byte first, of max - key: a pass
 * for each byte in which the keys differ, O(n) a pass (qsort took a
 * second at 5 M objects). Ties keep their ascending node order: the
 * rule's second half. tkey, tid: n more of each (12 bytes a node
 * beside the 12 sorted, where pairs took 32). The sorted ids end in
 * id[] or tid[]: returned.
 */
static hd_node_id *radix_ret(uint64_t *key, hd_node_id *id, uint64_t *tkey,
			     hd_node_id *tid, size_t n)
{
	uint64_t max = 0, *ka = key, *kb = tkey, *kt;
	hd_node_id *ia = id, *ib = tid, *it;
	size_t count[256], k, sum, c, at;
	unsigned shift, dg;

	for (k = 0; k < n; k++)
		if (key[k] > max)
			max = key[k];
	for (shift = 0; n && shift < 64 && (max >> shift); shift += 8) {
		memset(count, 0, sizeof(count));
		for (k = 0; k < n; k++)
			count[((max - ka[k]) >> shift) & 0xff]++;
		/* every key has this byte: nothing to move */
		if (count[((max - ka[0]) >> shift) & 0xff] == n)
			continue;
		for (dg = 0, sum = 0; dg < 256; dg++) {
			c = count[dg];
			count[dg] = sum;
			sum += c;
		}
		for (k = 0; k < n; k++) {
			at = count[((max - ka[k]) >> shift) & 0xff]++;
			kb[at] = ka[k];
			ib[at] = ia[k];
		}
		kt = ka;
		ka = kb;
		kb = kt;
		it = ia;
		ia = ib;
		ib = it;
	}
	return ia;
}

/* The nodes of s but the dumper's (hd_store_is_dumper) in the objects'
 * order by d's retained memsize: *m of *out (hd__malloc'd, room for the
 * store's node count + 1), or HD_ENOMEM. */
static int order_sort(hd_node_id **out, size_t *m_out, const hd_domtree *d,
		      const hd_store *s)
{
	uint32_t n = hd_store_node_count(s), i;
	size_t nn = (size_t)n + 1, m = 0;
	unsigned char *dumper = hd__store_dumper_bitmap(s, NULL, NULL);
	uint64_t *key = NULL;
	hd_node_id *ids = NULL, *tid = NULL, *sorted;

	*out = NULL;
	*m_out = 0;
	if (!dumper || !(key = hd__array_alloc(nn * 2, sizeof(*key))) ||
	    !(ids = hd__array_alloc(nn, sizeof(*ids))) ||
	    !(tid = hd__array_alloc(nn, sizeof(*tid)))) {
		hd__bitmap_free(dumper, n);
		hd__free(key, key ? nn * 2 * sizeof(*key) : 0);
		hd__free(ids, ids ? nn * sizeof(*ids) : 0);
		return HD_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (hd__bit(dumper, i))
			continue;
		ids[m] = i;
		hd_domtree_retained(d, i, &key[m]);
		m++;
	}
	hd__bitmap_free(dumper, n);
	sorted = radix_ret(key, ids, key + nn, tid, m);
	hd__free(key, nn * 2 * sizeof(*key));
	/* the other array freed; the sorted one kept */
	hd__free(sorted == ids ? tid : ids, nn * sizeof(*ids));
	*out = sorted;
	*m_out = m;
	return 0;
}

int hd_retained_order_build(hd_retained_order **out, const hd_domtree *d,
			    const hd_store *s, hd_error *err)
{
	hd_retained_order *o;

	HD_ASSERT_ARG(out && d && s);
	*out = NULL;
	if (!(o = hd__calloc(1, sizeof(*o))) ||
	    (o->own_cap = (size_t)hd_store_node_count(s) + 1,
	     order_sort(&o->own, &o->n, d, s))) {
		hd__free(o, o ? sizeof(*o) : 0);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	o->nodes = o->own;
	*out = o;
	return 0;
}

int hd_retained_order_open(hd_retained_order **out, const hd_domtree *d,
			   const hd_store *s, hd_error *err)
{
	static const char what[] = "objects' order";
	const unsigned char *img, *ids, *mem;
	uint64_t len, M, flags, rm = 0, rc, mlen, ret, pret = 0;
	uint32_t n = hd_store_node_count(s), v, pv = 0;
	unsigned char *dumper;
	uint64_t ndumper = 0, i;
	hd_retained_order *o;
	int r;

	HD_ASSERT_ARG(out && d && s);
	*out = NULL;
	if (!(img = hd__store_section(s, HD__SEC_VIEW_ORDER, &len)))
		return hd__error(err, HD_ENOTFOUND,
				 "the store keeps no objects' order");
	if ((r = view_head(img, len, OH_COUNT * 8, s, what, err)))
		return r;
	M = hd__le64(img + 8 * OH_OBJECTS);
	if (M > n || len != OH_COUNT * 8 + 4 * M)
		return damaged(err, what, "the wrong size");
	if (!hd_domtree_is_stored(d))
		return hd__error(err, HD_ENOTFOUND, "the store keeps an "
				 "objects' order of another tree");
	rc = hd_domtree_reached(d, &rm);
	if (dom_flags(s, &flags) ||
	    hd__le64(img + 8 * OH_FLAGS) != flags ||
	    hd__le64(img + 8 * OH_REACHED) != rc ||
	    hd__le64(img + 8 * OH_REACHED_MEM) != rm)
		return hd__error(err, HD_EFORMAT, "store %s view is stale "
				 "(made for another dominator tree)", what);
	if (!(dumper = hd__store_dumper_bitmap(s, &ndumper, NULL)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (M != n - ndumper) {
		hd__bitmap_free(dumper, n);
		return damaged(err, what, "not every object is in it");
	}
	/* the retained memsizes, when the tree is the store's: read ahead
	 * of the check (the order visits them at random) */
	mem = hd__store_section(s, HD__SEC_DOM_MEM, &mlen);
	if (mlen != (uint64_t)n * 8)
		mem = NULL;
	ids = img + OH_COUNT * 8;
	/* each object once: the rule is strict (ties by node), and M is
	 * the count of the objects not the dumper's */
	for (i = 0; i < M; i++) {
		if (mem && i + 16 < M) {
			uint32_t ahead = hd__le32(ids + 4 * (i + 16));

			if (ahead < n)
				__builtin_prefetch(mem + 8 * (size_t)ahead);
		}
		v = hd__le32(ids + 4 * i);
		if (v >= n || hd__bit(dumper, v)) {
			hd__bitmap_free(dumper, n);
			return damaged(err, what, v >= n ?
				       "a node is out of range" :
				       "a node is the dumper's");
		}
		hd_domtree_retained(d, v, &ret);
		if (i && !hd_retained_before(pret, pv, ret, v)) {
			hd__bitmap_free(dumper, n);
			return damaged(err, what, "objects are out of order");
		}
		pret = ret;
		pv = v;
	}
	hd__bitmap_free(dumper, n);
	if (!(o = hd__calloc(1, sizeof(*o))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	o->n = (size_t)M;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the image is the array: borrowed from the mapping */
	o->nodes = (const hd_node_id *)(const void *)ids;
#else
	o->own_cap = (size_t)M + 1;
	if (!(o->own = hd__array_alloc(o->own_cap, sizeof(*o->own)))) {
		hd__free(o, sizeof(*o));
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	for (i = 0; i < M; i++)
		o->own[i] = hd__le32(ids + 4 * i);
	o->nodes = o->own;
#endif
	*out = o;
	return 0;
}

const hd_node_id *hd_retained_order_nodes(const hd_retained_order *o,
					  size_t *n)
{
	*n = o ? o->n : 0;
	return o ? o->nodes : NULL;
}

void hd_retained_order_free(hd_retained_order *o)
{
	if (!o)
		return;
	hd__free(o->own, o->own ? o->own_cap * sizeof(*o->own) : 0);
	hd__free(o, sizeof(*o));
}

/* The section of the objects' order of d (the tree kept in s). */
static int order_image(const hd_domtree *d, const hd_store *s,
		       unsigned char **img, size_t *len)
{
	uint64_t flags = 0, rm = 0, rc;
	hd_node_id *ids;
	size_t m, k, cap = (size_t)hd_store_node_count(s) + 1;
	unsigned char *p;

	if (dom_flags(s, &flags))
		return HD_EINVAL;
	if (order_sort(&ids, &m, d, s))
		return HD_ENOMEM;
	rc = hd_domtree_reached(d, &rm);
	*len = OH_COUNT * 8 + 4 * m;
	if (!(*img = p = hd__malloc(*len))) {
		hd__free(ids, cap * sizeof(*ids));
		return HD_ENOMEM;
	}
	hd__put_le64(p + 8 * OH_VERSION, VIEW_VERSION);
	hd__put_le64(p + 8 * OH_NODES, hd_store_node_count(s));
	hd__put_le64(p + 8 * OH_OBJECTS, m);
	hd__put_le64(p + 8 * OH_FLAGS, flags);
	hd__put_le64(p + 8 * OH_REACHED, rc);
	hd__put_le64(p + 8 * OH_REACHED_MEM, rm);
	for (k = 0; k < m; k++)
		hd__put_le32(p + OH_COUNT * 8 + 4 * k, ids[k]);
	hd__free(ids, cap * sizeof(*ids));
	return 0;
}

/* ---- kept in a built store ---- */

unsigned hd_store_views(const hd_store *s)
{
	uint64_t len;
	unsigned v = 0;

	if (!s)
		return 0;
	if (hd__store_section(s, HD__SEC_STRV_INFO, &len))
		v |= HD_VIEW_STRINGS;
	if (hd__store_section(s, HD__SEC_VIEW_GROUPS, &len))
		v |= HD_VIEW_GROUPS;
	if (hd__store_section(s, HD__SEC_VIEW_CLASSES, &len))
		v |= HD_VIEW_CLASSES;
	if (hd__store_section(s, HD__SEC_VIEW_ORDER, &len))
		v |= HD_VIEW_ORDER;
	return v;
}

static int attach(hd_store *s, const int *sid, unsigned char **img,
		  size_t *len, size_t n, hd_error *err)
{
	size_t i;
	int rc = hd__store_attach(s, sid, (void *const *)img, len, n, err);

	if (rc)
		for (i = 0; i < n; i++)
			hd__free(img[i], len[i] ? len[i] : 1);
	return rc;
}

int hd_store_set_views(hd_store *s, const hd_domtree *d, unsigned what,
		       hd_error *err)
{
	int rc = 0;

	HD_ASSERT_ARG(s && !(what & ~HD_VIEW_ALL) &&
		      (!(what & (HD_VIEW_CLASSES | HD_VIEW_ORDER)) || d));
	if (what & HD_VIEW_GROUPS) {
		static const int sid[1] = { HD__SEC_VIEW_GROUPS };
		hd_stats_options o;
		hd_group_stats *g;
		unsigned char *img[1] = { NULL };
		size_t len[1] = { 0 };

		hd_view_stats_options(&o);
		if ((rc = hd_group_stats_build(&g, s, &o, err)))
			return rc;
		rc = groups_image(g, s, &img[0], &len[0]);
		hd_group_stats_free(g);
		if (rc)
			return hd__error(err, rc, "out of memory");
		if ((rc = attach(s, sid, img, len, 1, err)))
			return rc;
	}
	if (what & HD_VIEW_CLASSES) {
		static const int sid[1] = { HD__SEC_VIEW_CLASSES };
		hd_class_retained *c;
		unsigned char *img[1] = { NULL };
		size_t len[1] = { 0 }, n;

		if ((rc = hd_domtree_classes(&c, &n, d, err)))
			return rc;
		rc = classes_image(c, n, d, s, &img[0], &len[0]);
		hd_class_retained_free(c);
		if (rc)
			return hd__error(err, rc, rc == HD_EINVAL ?
					 "retained by class: the store keeps "
					 "no dominator tree" : "out of memory");
		if ((rc = attach(s, sid, img, len, 1, err)))
			return rc;
	}
	if (what & HD_VIEW_ORDER) {
		static const int sid[1] = { HD__SEC_VIEW_ORDER };
		unsigned char *img[1] = { NULL };
		size_t len[1] = { 0 };

		if ((rc = order_image(d, s, &img[0], &len[0])))
			return hd__error(err, rc, rc == HD_EINVAL ?
					 "the objects' order: the store keeps "
					 "no dominator tree" : "out of memory");
		if ((rc = attach(s, sid, img, len, 1, err)))
			return rc;
	}
	if (what & HD_VIEW_STRINGS) {
		static const int sid[3] = { HD__SEC_STRV_INFO,
					    HD__SEC_STRV_ROWS,
					    HD__SEC_STRV_TEXT };
		hd_strings_options xo = HD_STRINGS_OPTIONS_INIT;
		hd_strings *st;
		unsigned char *img[3] = { NULL, NULL, NULL };
		size_t len[3] = { 0, 0, 0 };

		/* hd_string_values_build's rows, without its search (the
		 * lowercase is written beside the values) */
		xo.by = HD_STRINGS_BY_SITE;
		xo.min_count = 1;
		/* the values a build kept, if any, freed once read (the
		 * rows point into the strings' own interner) */
		if ((rc = hd__strings_build_taking(&st, s, &xo, err)))
			return rc;
		rc = strings_images(st, s, img, len);
		hd_strings_free(st);
		if (rc) {
			size_t i;

			for (i = 0; i < 3; i++)
				hd__free(img[i], len[i] ? len[i] : 1);
			return hd__error(err, rc, "out of memory");
		}
		if ((rc = attach(s, sid, img, len, 3, err)))
			return rc;
	}
	hd__timing("views");
	return 0;
}
