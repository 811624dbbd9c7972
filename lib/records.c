/*
 * records.c - the records behind a store's nodes: read back from the dump
 * the store was built from (byte for byte), and written as NDJSON with
 * their references restricted to a set of kept nodes.
 *
 * Records are found by streaming the dump once and matching offsets, not
 * by seeking: that works alike for plain and gzip dumps and for records a
 * raw newline split over several lines, at the price of one pass.
 */
#include "hd_int.h"

#include <stdio.h>
#include <stdlib.h>

struct target {
	uint64_t offset;
	hd_node_id id;
};

static int cmp_target(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int hd_store_records(const hd_store *s, const char *dump_path,
		     const hd_nodes *set, const hd_read_options *ro,
		     hd_record_cb cb, void *payload, hd_error *err)
{
	hd_store_info si;
	struct target *t;
	hd_reader *r = NULL;
	const hd_record *rec;
	size_t i, next = 0;
	int rc;

	HD_ASSERT_ARG(s && set && cb);
	hd_store_info_get(s, &si);
	if (!dump_path)
		dump_path = si.source_path;
	if (!dump_path || !*dump_path || strcmp(dump_path, "-") == 0)
		return hd__error(err, HD_EINVAL,
				 "the store was built from standard input: "
				 "its records cannot be read again");
	if ((rc = hd_store_check_source(s, dump_path, err)))
		return rc;
	if (!set->n)
		return 0;
	t = hd__array_alloc(set->n, sizeof(*t));
	if (!t)
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (i = 0; i < set->n; i++) {
		t[i].offset = hd_store_offset(s, set->ids[i]);
		t[i].id = set->ids[i];
	}
	qsort(t, set->n, sizeof(*t), cmp_target);
	if ((rc = hd_reader_open(&r, dump_path, ro, err)))
		goto out;
	while (next < set->n && (rc = hd_reader_next(r, &rec, err)) == 0) {
		if (rec->kind != HD_REC_OBJECT)
			continue;
		while (next < set->n && t[next].offset < rec->offset)
			next++; /* cannot happen with the indexed dump */
		if (next < set->n && t[next].offset == rec->offset) {
			if ((rc = cb(rec, t[next].id, payload)))
				goto out;
			next++;
		}
	}
	if (rc == HD_ITEROVER || next == set->n)
		rc = 0;
out:
	hd_reader_free(r);
	hd__free(t, set->n * sizeof(*t));
	return rc;
}

/* ---- writing ---- */

struct buf {
	char *p;
	size_t len, cap;
};

static int put(struct buf *b, const void *s, size_t n)
{
	if (hd__grow((void **)&b->p, &b->cap, b->len + n + 1, 1))
		return HD_ENOMEM;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

static int put_addr(struct buf *b, const char *sep, uint64_t a)
{
	char tmp[40];
	int n = snprintf(tmp, sizeof(tmp), "%s\"0x%llx\"", sep,
			 (unsigned long long)a);

	return put(b, tmp, (size_t)n);
}

static int kept(const hd_store *s, const unsigned char *keep, uint64_t a)
{
	hd_node_id id = hd_store_find(s, a);

	return id != HD_NODE_NONE && (keep[id / 8] >> (id % 8) & 1);
}

/*
 * The text with only the kept references between [ and ], each token
 * copied as written (so 2.x "0X7F.." stays as it was).
 */
static int filter_refs(struct buf *b, const hd_record *rec,
		       const hd_store *s, const unsigned char *keep)
{
	const char *p = rec->text + rec->refs_open + 1;
	const char *end = rec->text + rec->refs_close;
	int first = 1;
	uint64_t a;

	if (put(b, rec->text, rec->refs_open + 1))
		return HD_ENOMEM;
	while (p < end) {
		const char *q, *e;

		q = memchr(p, '"', (size_t)(end - p));
		if (!q)
			break;
		e = memchr(q + 1, '"', (size_t)(end - q - 1));
		if (!e)
			break;
		if (!hd__parse_hex(q + 1, (size_t)(e - q - 1), &a) &&
		    kept(s, keep, a)) {
			if ((!first && put(b, ", ", 2)) ||
			    put(b, q, (size_t)(e - q + 1)))
				return HD_ENOMEM;
			first = 0;
		}
		p = e + 1;
	}
	return put(b, rec->text + rec->refs_close,
		   rec->text_len - rec->refs_close);
}

/* A record from what the salvage of an invalid line recovered. */
static int rebuild(struct buf *b, const hd_record *rec, const hd_store *s,
		   const unsigned char *keep)
{
	char tmp[128];
	const char *type = hd_type_name(rec->type);
	size_t i;
	int n, first = 1;

	n = snprintf(tmp, sizeof(tmp), "{\"address\":\"0x%llx\", \"type\":\"%s\"",
		     (unsigned long long)rec->address, type);
	if (put(b, tmp, (size_t)n))
		return HD_ENOMEM;
	if (rec->has & HD_HAS_CLASS) {
		n = snprintf(tmp, sizeof(tmp), ", \"class\":\"0x%llx\"",
			     (unsigned long long)rec->class_addr);
		if (put(b, tmp, (size_t)n))
			return HD_ENOMEM;
	}
	if (rec->nrefs && put(b, ", \"references\":[", 16))
		return HD_ENOMEM;
	for (i = 0; i < rec->nrefs; i++) {
		if (keep && !kept(s, keep, rec->refs[i]))
			continue;
		if (put_addr(b, first ? "" : ", ", rec->refs[i]))
			return HD_ENOMEM;
		first = 0;
	}
	if (rec->nrefs && put(b, "]", 1))
		return HD_ENOMEM;
	n = 0;
	if (rec->has & HD_HAS_GENERATION)
		n = snprintf(tmp, sizeof(tmp), ", \"generation\":%llu",
			     (unsigned long long)rec->generation);
	if (n && put(b, tmp, (size_t)n))
		return HD_ENOMEM;
	n = snprintf(tmp, sizeof(tmp), ", \"memsize\":%llu, \"salvaged\":true}",
		     (unsigned long long)rec->memsize);
	return put(b, tmp, (size_t)n);
}

/* JSON-repairs b in place (through a second buffer). */
static int repair(struct buf *b)
{
	size_t n, cap = b->len + b->len / 4 + 64;
	char *d;
	int rc;

	for (;;) {
		if (!(d = hd__malloc(cap)))
			return HD_ENOMEM;
		rc = hd_json_repair(d, cap, &n, b->p, b->len, NULL);
		if (rc || n + 1 <= cap)
			break;
		hd__free(d, cap);
		cap = n + 1;
	}
	if (rc) {
		hd__free(d, cap);
		return rc;
	}
	hd__free(b->p, b->cap);
	b->p = d;
	b->len = n;
	b->cap = cap;
	return 0;
}

int hd_record_write(const hd_record *rec, const hd_store *s,
		    const unsigned char *keep, hd_write_cb w, void *payload)
{
	struct buf b = { NULL, 0, 0 };
	int salvaged = (rec->origin & HD_O_REPAIRED) && !rec->obj_close;
	int rc;

	if (!(rec->origin & HD_O_REPAIRED) && (!keep || !rec->refs_close)) {
		/* the common case: the line as it is */
		if ((rc = w(rec->text, rec->text_len, payload)))
			return rc;
		return w("\n", 1, payload);
	}
	if (salvaged)
		rc = rebuild(&b, rec, s, keep);
	else if (keep && rec->refs_close)
		rc = filter_refs(&b, rec, s, keep);
	else
		rc = put(&b, rec->text, rec->text_len);
	if (!rc && (rec->origin & HD_O_REPAIRED) && !salvaged) {
		rc = repair(&b);
		if (rc == HD_EPARSE) {
			/* beyond repair: fall back to the fields */
			b.len = 0;
			rc = rebuild(&b, rec, s, keep);
		}
	}
	if (!rc && !(rc = put(&b, "\n", 1)))
		rc = w(b.p, b.len, payload);
	hd__free(b.p, b.cap);
	return rc;
}
