/*
 * strings.c - duplicate strings (heapdump strings): the STRING objects
 * of a store grouped by content, read back from the source dump.
 *
 * The store keeps no string contents, so the records of the strings are
 * read again (hd_store_records, one pass in dump order). A group is the
 * value, JSON-unescaped, with the bytesize and the encoding: dump_all
 * writes the whole value (never a prefix) but only for 7-bit content, so
 * a value shorter than its bytesize can only come from another writer or
 * an edited dump; it is kept, marked incomplete, and groups only with
 * strings of the same bytesize, so two long strings whose prefixes agree
 * stay apart. Groups are interned (intern.c: SipHash under a random key)
 * and rows of values by site or holder go through a keyed map (map.c),
 * so crafted values cannot make the work quadratic.
 */
#include "strings_int.h"

#include <stdlib.h>

/* The untraced copies (by site) and the unheld ones (by holder). */
#define SUB_NONE 0xfffffffeu

int hd__strings_skip(const hd_strings *st, hd_node_id id)
{
	return !(st->o.flags & HD_STRINGS_ALL) && hd_store_is_dumper(st->s, id);
}

int hd__strings_new(hd_strings **out, const hd_store *s,
		    const hd_strings_options *o, hd_error *err)
{
	hd_strings *st;

	*out = NULL;
	HD_ASSERT_ARG(s && o && o->version == HD_STRINGS_OPTIONS_VERSION);
	HD_ASSERT_ARG(o->by >= HD_STRINGS_BY_VALUE &&
		      o->by <= HD_STRINGS_BY_HOLDER);
	HD_ASSERT_ARG(!(o->flags & ~HD_STRINGS_ALL));
	st = hd__calloc(1, sizeof(*st));
	if (!st)
		return hd__error(err, HD_ENOMEM, "out of memory");
	st->s = s;
	st->o = *o;
	if (st->o.min_count < 2)
		st->o.min_count = st->o.min_count ? 1 : 2;
	if (hd__intern_init(&st->keys) || hd__intern_init(&st->names)) {
		hd_strings_free(st);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	*out = st;
	return 0;
}

/* The number after the first "capacity": of the record, when it comes
 * before the value and the file (the only fields that hold text a dump
 * writes raw); 0 when absent. */
static uint64_t capacity_of(const hd_record *rec)
{
	static const char key[] = "\"capacity\":";
	const char *p = rec->text, *end = p ? p + rec->text_len : NULL;
	const char *cap = NULL;
	uint64_t v = 0;

	for (; p && p + sizeof(key) - 1 <= end; p++) {
		if (*p != '"')
			continue;
		if (!memcmp(p, key, sizeof(key) - 1)) {
			cap = p + sizeof(key) - 1;
			break;
		}
		if ((end - p >= 8 && !memcmp(p, "\"value\":", 8)) ||
		    (end - p >= 7 && !memcmp(p, "\"file\":", 7)))
			return 0;
	}
	if (!cap)
		return 0;
	while (cap < end && *cap == ' ')
		cap++;
	for (; cap < end && *cap >= '0' && *cap <= '9'; cap++) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*cap - '0');
	}
	return v;
}

static int push_copy(hd_strings *st, hd_node_id id, uint32_t group,
		     uint64_t spare)
{
	struct hd__scopy *c;

	if (hd__grow((void **)&st->c, &st->ccap, st->nc + 1, sizeof(*st->c)))
		return HD_ENOMEM;
	c = &st->c[st->nc++];
	c->id = id;
	c->group = group;
	c->spare = spare;
	return 0;
}

/* The group of (value, bytesize, encoding), the value being the first
 * vlen bytes of st->buf: a key of 8 bytes of bytesize, the encoding, a
 * NUL and the value. */
static int group_of(hd_strings *st, size_t vlen, uint64_t bytesize,
		    hd_str enc, uint32_t *out)
{
	size_t n = 8 + enc.len + 1 + vlen, i;
	unsigned char *k;
	uint32_t id, encid;
	int rc;

	if (hd__intern_put(&st->names, enc.ptr ? enc.ptr : "", enc.len,
			   &encid))
		return HD_ENOMEM;
	if (hd__grow((void **)&st->buf, &st->bcap, n + vlen + 1, 1))
		return HD_ENOMEM;
	/* the key goes after the decoded value in buf */
	k = (unsigned char *)st->buf + vlen + 1;
	for (i = 0; i < 8; i++)
		k[i] = (unsigned char)(bytesize >> (8 * i));
	if (enc.len)
		memcpy(k + 8, enc.ptr, enc.len);
	k[8 + enc.len] = 0;
	memcpy(k + 9 + enc.len, st->buf, vlen);
	if ((rc = hd__intern_put(&st->keys, (const char *)k, n, &id)))
		return rc;
	if (id == st->ng) {
		struct hd__sgroup *g;

		if (hd__grow((void **)&st->g, &st->gcap, st->ng + 1,
			     sizeof(*st->g)))
			return HD_ENOMEM;
		g = &st->g[st->ng++];
		memset(g, 0, sizeof(*g));
		g->bytesize = bytesize;
		g->first = g->first_frozen = HD__NONE;
		g->enc = encid;
		g->complete = vlen == bytesize;
	}
	*out = id;
	return 0;
}

static int add_string(hd_strings *st, const hd_record *rec, hd_node_id id)
{
	uint64_t m = hd_store_memsize(st->s, id), bytesize;
	uint32_t bits = hd_store_bits(st->s, id), gid = HD__NONE;
	hd_strings_totals *t = &st->t;
	int has_size = (rec->has & HD_HAS_SIZE) != 0, sat = 0;
	size_t vlen = 0;

	t->strings++;
	sat |= hd__sat_add(&t->memsize, m);
	if (bits & HD_B_SHARED) {
		t->shared++;
		sat |= hd__sat_add(&t->shared_memsize, m);
		t->saturated |= (uint32_t)sat;
		return push_copy(st, id, HD__NONE, 0);
	}
	bytesize = rec->size;
	if (rec->value.ptr) {
		if (hd__grow((void **)&st->buf, &st->bcap, rec->value.len + 1,
			     1))
			return HD_ENOMEM;
		vlen = hd_json_unescape(st->buf, rec->value.ptr,
					rec->value.len);
		if (!has_size)
			bytesize = vlen;
	}
	/* a value longer than the bytesize is no copy of anything */
	if ((rec->value.ptr && vlen <= bytesize) ||
	    (!rec->value.ptr && has_size && bytesize == 0)) {
		struct hd__sgroup *g;
		uint32_t ci = (uint32_t)st->nc;
		int rc = group_of(st, vlen, bytesize, rec->encoding, &gid);

		if (rc)
			return rc;
		g = &st->g[gid];
		if (g->first == HD__NONE)
			g->first = ci;
		if ((bits & HD_B_FROZEN) && g->first_frozen == HD__NONE)
			g->first_frozen = ci;
		g->count++;
		g->frozen += (bits & HD_B_FROZEN) != 0;
		g->fstring += (bits & HD_B_FSTRING) != 0;
		sat |= hd__sat_add(&g->memsize, m);
		if (!g->complete)
			t->incomplete++;
	} else {
		t->no_value++;
		sat |= hd__sat_add(&t->no_value_memsize, m);
	}
	t->saturated |= (uint32_t)sat;
	{
		uint64_t cap = capacity_of(rec);

		return push_copy(st, id, gid,
				 cap > bytesize && has_size ? cap - bytesize
							    : 0);
	}
}

static int on_record(const hd_record *rec, hd_node_id id, void *payload)
{
	hd_strings *st = payload;

	if (hd_store_type(st->s, id) != HD_T_STRING)
		return st->extra ? st->extra(rec, id, st->extra_payload) : 0;
	return add_string(st, rec, id) ? HD_ENOMEM : 0;
}

int hd__strings_read(hd_strings *st, const hd_nodes *set,
		     const hd_read_options *ro, hd_error *err)
{
	int rc = HD_ENOTFOUND;

	/* the values a build kept (HD_INDEX_STRING_VALUES): the records
	 * the dump would give, but for their text (only waste.c, through
	 * extra, wants that, and the other types) */
	if (!st->extra)
		rc = st->take ? hd__store_gathered_take(st->take, set,
							on_record, st) :
				hd__store_gathered_records(st->s, set,
							   on_record, st);
	if (rc == HD_ENOTFOUND)
		rc = hd_store_records(st->s, NULL, set, ro, on_record, st,
				      err);

	if (rc == HD_ENOMEM)
		return hd__error(err, HD_ENOMEM, "out of memory");
	return rc;
}

/* ---- rows ---- */

/* A new row of group gid; its strings are set by fix_rows, once the
 * interners stop growing. rsub[r] is its key in names, or SUB_NONE. */
static int new_row(hd_strings *st, uint32_t gid, uint32_t sub, size_t *subcap,
		   uint32_t **rgid, uint32_t **rsub, uint32_t *out)
{
	const struct hd__sgroup *g = &st->g[gid];
	hd_strings_row *r;
	size_t gcap = *subcap;

	if (hd__grow((void **)&st->rows, &st->rcap, st->nrows + 1,
		     sizeof(*st->rows)) ||
	    hd__grow((void **)rgid, &gcap, st->nrows + 1, sizeof(**rgid)) ||
	    hd__grow((void **)rsub, subcap, st->nrows + 1, sizeof(**rsub)))
		return HD_ENOMEM;
	r = &st->rows[st->nrows];
	memset(r, 0, sizeof(*r));
	r->bytesize = g->bytesize;
	r->complete = g->complete;
	r->node = HD_NODE_NONE;
	r->group_count = g->count;
	(*rgid)[st->nrows] = gid;
	(*rsub)[st->nrows] = sub;
	*out = (uint32_t)st->nrows++;
	return 0;
}

static void fix_rows(hd_strings *st, const uint32_t *rgid,
		     const uint32_t *rsub)
{
	size_t i, klen, enclen;

	for (i = 0; i < st->nrows; i++) {
		hd_strings_row *r = &st->rows[i];
		const struct hd__sgroup *g = &st->g[rgid[i]];
		const char *k = hd__intern_str(&st->keys, rgid[i], &klen);

		r->encoding = hd__intern_str(&st->names, g->enc, &enclen);
		r->value = k + 9 + enclen;
		r->value_len = klen - 9 - enclen;
		if (st->o.by == HD_STRINGS_BY_HOLDER && rsub[i] != SUB_NONE)
			r->holder = hd__intern_str(&st->names, rsub[i], NULL);
	}
}

static void row_add(hd_strings *st, hd_strings_row *r, uint32_t ci)
{
	const struct hd__scopy *c = &st->c[ci];
	const struct hd__sgroup *g = &st->g[c->group];
	uint64_t m = hd_store_memsize(st->s, c->id);
	uint32_t bits = hd_store_bits(st->s, c->id);
	int sat = 0;

	r->count++;
	sat |= hd__sat_add(&r->memsize, m);
	if (ci != g->first) {
		sat |= hd__sat_add(&r->wasted_memsize, m);
		sat |= hd__sat_add(&r->wasted_bytesize, g->bytesize);
	}
	r->frozen += (bits & HD_B_FROZEN) != 0;
	r->fstring += (bits & HD_B_FSTRING) != 0;
	st->t.saturated |= (uint32_t)sat;
}

/* The key of a copy in a site or holder row, interned in names; SUB_NONE
 * for every copy in BY_VALUE. */
static int sub_of(hd_strings *st, hd_node_id id, uint32_t *out)
{
	char small[256], *name = small;
	hd_edge_iter it;
	hd_node_id h;
	hd_site site;
	size_t n;

	*out = SUB_NONE;
	if (st->o.by == HD_STRINGS_BY_VALUE)
		return 0;
	if (st->o.by == HD_STRINGS_BY_SITE) {
		size_t i, need;
		uint32_t sid = hd__store_site_id(st->s, id, &st->nsites);
		int rc;

		/* once a store site: the copies of a site share its key */
		if (sid == HD_NODE_NONE)
			return 0;
		if (!st->site_sub &&
		    !(st->site_sub = hd__calloc(st->nsites, sizeof(uint32_t))))
			return HD_ENOMEM;
		if (st->site_sub[sid]) {
			*out = st->site_sub[sid] - 1;
			return 0;
		}
		if (hd_store_site(&site, st->s, id) || !site.file) {
			st->site_sub[sid] = SUB_NONE + 1;
			return 0;
		}
		need = site.file_len + 8;
		if (hd__grow((void **)&st->buf, &st->bcap, need, 1))
			return HD_ENOMEM;
		for (i = 0; i < 8; i++)
			st->buf[i] = (char)(unsigned char)(site.line >> (8 * i));
		memcpy(st->buf + 8, site.file, site.file_len);
		if ((rc = hd__intern_put(&st->names, st->buf, need, out)))
			return rc;
		st->site_sub[sid] = *out + 1;
		return 0;
	}
	/* the holder: the referrer of lowest address (node ids ascend by
	 * address, and so do a node's referrers) */
	hd_store_referrers(st->s, id, &it);
	if (hd_edge_iter_next(&it, &h) != 0)
		return 0;
	n = hd_store_node_name(small, sizeof(small), st->s, h);
	if (n >= sizeof(small)) {
		if (hd__grow((void **)&st->buf, &st->bcap, n + 1, 1))
			return HD_ENOMEM;
		name = st->buf;
		hd_store_node_name(name, n + 1, st->s, h);
	}
	return hd__intern_put(&st->names, name, n, out);
}

/* One row per (value, key) over the values of min_count copies or more,
 * the copies taken in dump order. */
static int make_rows(hd_strings *st)
{
	struct hd__map map;
	uint32_t *rgid = NULL, *rsub = NULL;
	size_t i, subcap = 0;
	int rc = 0;

	if (hd__map_init(&map, 1024))
		return HD_ENOMEM;
	for (i = 0; i < st->nc && !rc; i++) {
		const struct hd__scopy *c = &st->c[i];
		uint32_t sub, ri;
		int found;

		if (c->group == HD__NONE ||
		    st->g[c->group].count < st->o.min_count)
			continue;
		if ((rc = sub_of(st, c->id, &sub)))
			break;
		if ((rc = hd__map_put(&map, (uint64_t)c->group << 32 | sub,
				      (uint32_t)st->nrows, &ri, &found)))
			break;
		if (!found) {
			if ((rc = new_row(st, c->group, sub, &subcap, &rgid,
					  &rsub, &ri)))
				break;
			if (st->o.by == HD_STRINGS_BY_SITE && sub != SUB_NONE)
				st->rows[ri].node = c->id;
		}
		row_add(st, &st->rows[ri], (uint32_t)i);
	}
	if (!rc)
		fix_rows(st, rgid, rsub);
	hd__free(rgid, subcap * sizeof(*rgid));
	hd__free(rsub, subcap * sizeof(*rsub));
	hd__map_free(&map);
	return rc;
}

static int cmp_row(const void *pa, const void *pb, void *ctx)
{
	const hd_strings *st = ctx;
	const hd_strings_row *a = pa, *b = pb;
	size_t n = a->value_len < b->value_len ? a->value_len : b->value_len;
	int c;

	if (a->wasted_memsize != b->wasted_memsize)
		return a->wasted_memsize > b->wasted_memsize ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (n && (c = memcmp(a->value, b->value, n)))
		return c;
	if (a->value_len != b->value_len)
		return a->value_len < b->value_len ? -1 : 1;
	if (a->bytesize != b->bytesize)
		return a->bytesize < b->bytesize ? -1 : 1;
	if ((c = strcmp(a->encoding, b->encoding)))
		return c;
	if (st->o.by == HD_STRINGS_BY_HOLDER) {
		if (!a->holder || !b->holder)
			return !b->holder - !a->holder;
		return strcmp(a->holder, b->holder);
	}
	if (st->o.by == HD_STRINGS_BY_SITE) {
		hd_site sa, sb;

		if (a->node == HD_NODE_NONE || b->node == HD_NODE_NONE)
			return (b->node == HD_NODE_NONE) -
			       (a->node == HD_NODE_NONE);
		hd_store_site(&sa, st->s, a->node);
		hd_store_site(&sb, st->s, b->node);
		n = sa.file_len < sb.file_len ? sa.file_len : sb.file_len;
		if (n && (c = memcmp(sa.file, sb.file, n)))
			return c;
		if (sa.file_len != sb.file_len)
			return sa.file_len < sb.file_len ? -1 : 1;
		return sa.line < sb.line ? -1 : sa.line > sb.line;
	}
	return 0;
}

static int finish(hd_strings *st)
{
	hd_strings_totals *t = &st->t;
	size_t i;

	t->values = st->ng;
	for (i = 0; i < st->ng; i++) {
		const struct hd__sgroup *g = &st->g[i];
		int sat = 0;

		if (g->count < 2)
			continue;
		t->repeated++;
		t->copies += g->count;
		sat |= hd__sat_add(&t->wasted_memsize,
				   g->memsize -
				   hd_store_memsize(st->s, st->c[g->first].id));
		sat |= g->bytesize > UINT64_MAX / (g->count - 1) ?
			       hd__sat_add(&t->wasted_bytesize, UINT64_MAX) :
			       hd__sat_add(&t->wasted_bytesize,
					   g->bytesize *
						   (uint64_t)(g->count - 1));
		t->saturated |= (uint32_t)sat;
	}
	return make_rows(st);
}

/* hd_strings_build; drop, s itself or NULL, has the values its build
 * kept freed once read (hd__strings_build_taking). */
static int build(hd_strings **out, const hd_store *s, hd_store *drop,
		 const hd_nodes *set, const hd_strings_options *opts,
		 const hd_read_options *ro, hd_error *err)
{
	hd_strings *st;
	hd_nodes strs = { NULL, 0, 0 };
	size_t i, n;
	int rc;

	HD_ASSERT_ARG(out);
	*out = NULL;
	if ((rc = hd__strings_new(&st, s, opts, err)))
		return rc;
	n = set ? set->n : hd_store_node_count(s);
	for (i = 0; i < n; i++) {
		hd_node_id id = set ? set->ids[i] : (hd_node_id)i;

		if (id >= hd_store_node_count(s)) {
			rc = hd__error(err, HD_EINVAL, "node %u out of range",
				       (unsigned)id);
			goto fail;
		}
		if (hd_store_type(s, id) != HD_T_STRING)
			continue;
		if (hd__strings_skip(st, id)) {
			st->t.excluded++;
			continue;
		}
		if (hd__nodes_push(&strs, id)) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			goto fail;
		}
	}
	/* a copy per string read: sized once (no doubling) */
	if (strs.n && !st->c) {
		if (!(st->c = hd__array_alloc(strs.n, sizeof(*st->c)))) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			goto fail;
		}
		st->ccap = strs.n;
	}
	st->take = drop;
	rc = hd__strings_read(st, &strs, ro, err);
	st->take = NULL;
	hd__store_gathered_free(drop);
	if (rc)
		goto fail;
	hd_nodes_free(&strs); /* read: not needed for the rows */
	if ((rc = finish(st))) {
		rc = hd__error(err, rc, "out of memory");
		goto fail;
	}
	hd__sort(st->rows, st->nrows, sizeof(*st->rows), cmp_row, st);
	hd_nodes_free(&strs);
	*out = st;
	return 0;
fail:
	hd_nodes_free(&strs);
	hd_strings_free(st);
	return rc;
}

int hd_strings_build(hd_strings **out, const hd_store *s,
		     const hd_nodes *set, const hd_strings_options *opts,
		     const hd_read_options *ro, hd_error *err)
{
	return build(out, s, NULL, set, opts, ro, err);
}

int hd__strings_build_taking(hd_strings **out, hd_store *s,
			     const hd_strings_options *opts, hd_error *err)
{
	return build(out, s, s, NULL, opts, NULL, err);
}

void hd_strings_totals_get(hd_strings_totals *out, const hd_strings *st)
{
	if (st)
		*out = st->t;
	else
		memset(out, 0, sizeof(*out));
}

const hd_strings_row *hd_strings_rows(const hd_strings *st, size_t *n_out)
{
	*n_out = st ? st->nrows : 0;
	return st ? st->rows : NULL;
}

void hd_strings_free(hd_strings *st)
{
	if (!st)
		return;
	hd__intern_free(&st->keys);
	hd__intern_free(&st->names);
	hd__free(st->g, st->gcap * sizeof(*st->g));
	hd__free(st->c, st->ccap * sizeof(*st->c));
	hd__free(st->buf, st->bcap);
	hd__free(st->rows, st->rcap * sizeof(*st->rows));
	hd__free(st->site_sub, st->site_sub ? st->nsites * sizeof(uint32_t) : 0);
	hd__free(st, sizeof(*st));
}
