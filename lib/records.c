/*
 * records.c - the records behind a store's nodes: read back from the dump
 * the store was built from (byte for byte), and written as NDJSON with
 * their references restricted to a set of kept nodes.
 *
 * In a plain dump each record is read at its offset with pread: a few
 * pages per record instead of a pass over the dump. A record that does
 * not scan cleanly on its own line (repaired, joined or salvaged by the
 * reader), and every record of a gzip dump, is found instead by streaming
 * the dump once and matching offsets, so that the callback sees exactly
 * the record the reader gives.
 */
#include "hd_int.h"
#include "store_format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct target {
	uint64_t offset;
	hd_node_id id;
};

static int cmp_target(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * The record at a target's offset must be its object: a dump changed in
 * the middle keeps its size and fingerprint (which covers only its head
 * and tail), but not the object at every offset.
 */
static int stale(const char *path, const hd_store *s, const struct target *t,
		 hd_error *err)
{
	return hd__error(err, HD_ESTALE,
			 "'%s' changed since it was indexed (object 0x%llx is "
			 "no longer at byte %llu)", path,
			 (unsigned long long)hd_store_address(s, t->id),
			 (unsigned long long)t->offset);
}

static int is_target(const hd_store *s, const struct target *t,
		     const hd_record *rec)
{
	return rec->kind == HD_REC_OBJECT && (rec->has & HD_HAS_ADDRESS) &&
	       rec->address == hd_store_address(s, t->id);
}

/* Streams the dump, calling cb for the targets t[0..n) (offset order). */
static int stream_records(const hd_store *s, const char *path,
			  const struct target *t, size_t n,
			  const hd_read_options *ro, hd_record_cb cb,
			  void *payload, hd_error *err)
{
	hd_reader *r = NULL;
	const hd_record *rec;
	size_t next = 0;
	int rc;

	if (!n)
		return 0;
	if ((rc = hd_reader_open(&r, path, ro, err)))
		return rc;
	while (next < n && (rc = hd_reader_next(r, &rec, err)) == 0) {
		if (rec->kind != HD_REC_OBJECT)
			continue;
		if (t[next].offset < rec->offset ||
		    (t[next].offset == rec->offset &&
		     !is_target(s, &t[next], rec))) {
			rc = stale(path, s, &t[next], err);
			break;
		}
		if (t[next].offset == rec->offset) {
			if ((rc = cb(rec, t[next].id, payload)))
				break;
			next++;
		}
	}
	if (rc == HD_ITEROVER)
		rc = next == n ? 0 : stale(path, s, &t[next], err);
	else if (rc == 0 && next < n)
		rc = stale(path, s, &t[next], err);
	hd_reader_free(r);
	return rc;
}

/*
 * A window of the dump read ahead: the targets come in offset order, and
 * in a set as dense as a heap's strings (half the records) one read of
 * many records costs far less than a read of each (a pread of 4 KiB a
 * record copied 11 GB for the 2.8 M strings of a 1.6 GB dump). The
 * window spans the next WIN_AHEAD targets, between WIN_MIN and WIN_MAX
 * bytes, so that a sparse set reads little more than its records.
 */
#define WIN_AHEAD 64
#define WIN_MIN 4096u
#define WIN_MAX (1u << 20)

struct win {
	char *buf;
	size_t cap, have;
	uint64_t start;
};

/* The line at t[i].offset (without its newline): *line, *len; 0, or -1
 * on EOF. */
static int win_line(int fd, struct win *w, const struct target *t,
		    size_t i, size_t n, const char **line, size_t *len)
{
	uint64_t off = t[i].offset, span;
	size_t have = 0, want;
	ssize_t k;
	char *nl;

	if (off >= w->start && off < w->start + w->have &&
	    (nl = memchr(w->buf + (off - w->start), '\n',
			 w->have - (size_t)(off - w->start)))) {
		*line = w->buf + (off - w->start);
		*len = (size_t)(nl - *line);
		return 0;
	}
	span = t[i + WIN_AHEAD < n ? i + WIN_AHEAD : n - 1].offset - off +
	       WIN_MIN;
	want = span < WIN_MIN ? WIN_MIN : span > WIN_MAX ? WIN_MAX :
	       (size_t)span;
	w->start = off;
	w->have = 0;
	for (;;) {
		if (have + want > w->cap &&
		    hd__grow((void **)&w->buf, &w->cap, have + want, 1))
			return HD_ENOMEM;
		do
			k = pread(fd, w->buf + have, want, (off_t)(off + have));
		while (k < 0 && errno == EINTR);
		if (k <= 0)
			return k < 0 ? HD_EIO : -1;
		nl = memchr(w->buf + have, '\n', (size_t)k);
		have += (size_t)k;
		w->have = have;
		if (nl) {
			*line = w->buf;
			*len = (size_t)(nl - w->buf);
			return 0;
		}
		/* a line longer than the window: read on, more each time */
		want = have < WIN_MAX ? have : WIN_MAX;
	}
}

/*
 * Reads plain-dump records by offset; targets that need the reader's
 * repairs are moved to the front of slow[] for stream_records.
 */
static int pread_records(const hd_store *s, const char *path, int fd,
			 struct target *t, size_t n, hd_record_cb cb,
			 void *payload, size_t *nslow, hd_error *err)
{
	struct hd__scan sc;
	hd_record rec;
	struct win w = { NULL, 0, 0, 0 };
	const char *buf = NULL;
	size_t len, i;
	int rc = 0;

	memset(&sc, 0, sizeof(sc));
	*nslow = 0;
	for (i = 0; i < n && !rc; i++) {
		rc = win_line(fd, &w, t, i, n, &buf, &len);
		if (rc == HD_ENOMEM || rc == HD_EIO) {
			rc = rc == HD_EIO ?
				     hd__error_sys(err, errno, "cannot read the dump: %s",
						   strerror(errno)) :
				     hd__error(err, HD_ENOMEM, "out of memory");
			break;
		}
		if (rc == 0) {
			while (len && buf[len - 1] == '\r')
				len--;
			rc = hd__scan_line(&sc, buf, len, &rec);
		}
		if (rc == HD__SCAN_OK && !sc.repaired &&
		    rec.kind == HD_REC_OBJECT && !is_target(s, &t[i], &rec)) {
			rc = stale(path, s, &t[i], err);
		} else if (rc == HD__SCAN_OK && !sc.repaired &&
			   rec.kind == HD_REC_OBJECT) {
			rec.text = buf;
			rec.text_len = len;
			rec.offset = t[i].offset;
			rc = cb(&rec, t[i].id, payload);
		} else if (rc >= 0) {
			t[(*nslow)++] = t[i]; /* the reader's way */
			rc = 0;
		} else {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
		}
	}
	hd__scan_free(&sc);
	hd__free(w.buf, w.cap);
	return rc;
}

/* A block of string values spilled (store_spill.c), mapped while read. */
struct gv_map {
	void *p;
	size_t len;
};

static void gv_unmap(struct gv_map *m)
{
	if (m->p)
		munmap(m->p, m->len);
	m->p = NULL;
}

/* Block c's entries: in memory, or its part of the spill file mapped
 * into *m (NULL, errno set, when it cannot be). */
static const unsigned char *gv_block(const hd_store *s,
				     const struct hd__gv_chunk *c,
				     struct gv_map *m)
{
	const unsigned char *p;

	if (c->p || !c->len)
		return c->p ? c->p : (const unsigned char *)"";
	if ((p = hd__store_spill_map(s, c->at, c->len))) {
		m->p = (void *)(uintptr_t)p;
		m->len = c->len;
	}
	return p;
}

/* hd__store_gathered_records; own (s itself, or NULL) has each block
 * freed once read, and the whole at the end. */
static int gathered_walk(const hd_store *s, hd_store *own,
			 const hd_nodes *set, hd_record_cb cb, void *payload)
{
	struct hd__gathered *g = s->gathered;
	struct gv_map spilled = { NULL, 0 };
	const unsigned char *p, *end;
	unsigned char *in = NULL;
	uint32_t nodes = hd_store_node_count(s);
	hd_record rec;
	size_t k, i, c;
	int rc = 0;

	if (!g)
		return HD_ENOTFOUND;
	if (set) {
		if (!(in = hd__bitmap_new(nodes)))
			return HD_ENOMEM;
		for (i = 0; i < set->n; i++)
			if (set->ids[i] < nodes)
				hd__bit_set(in, set->ids[i]);
	}
	for (k = 0, c = 0, p = NULL, end = NULL; k < g->n && !rc; k++) {
		hd_node_id id = g->node[k];
		uint32_t vl;
		size_t el;
		unsigned flags;

		while (p == end && c < g->nchunk) {
			if (own && c) {
				hd__free(g->chunk[c - 1].p,
					 g->chunk[c - 1].cap);
				g->chunk[c - 1].p = NULL;
				g->chunk[c - 1].cap = 0;
			}
			gv_unmap(&spilled);
			if (!(p = gv_block(s, &g->chunk[c], &spilled))) {
				rc = HD_EIO;
				break;
			}
			end = p + g->chunk[c++].len;
		}
		if (rc || p == end)
			break; /* (the arenas end with the entries) */
		vl = hd__le32(p);
		el = (size_t)p[4] | (size_t)p[5] << 8;
		flags = p[6];

		memset(&rec, 0, sizeof(rec));
		p += 7;
		if (flags & HD__GV_SIZE) {
			rec.has |= HD_HAS_SIZE;
			rec.size = hd__le64(p);
			p += 8;
		}
		if (el) {
			rec.encoding.ptr = (const char *)p;
			rec.encoding.len = el;
		}
		if (flags & HD__GV_VALUE) {
			rec.value.ptr = (const char *)p + el;
			rec.value.len = vl;
		}
		p += el + vl;
		if (id == HD_NODE_NONE || id >= nodes ||
		    (in && !hd__bit(in, id)))
			continue;
		rec.kind = HD_REC_OBJECT;
		rec.type = HD_T_STRING;
		rec.has |= HD_HAS_ADDRESS;
		rec.address = hd_store_address(s, id);
		rec.offset = hd_store_offset(s, id);
		rc = cb(&rec, id, payload);
	}
	gv_unmap(&spilled);
	hd__bitmap_free(in, nodes);
	hd__store_gathered_free(own);
	return rc;
}

int hd__store_gathered_records(const hd_store *s, const hd_nodes *set,
			       hd_record_cb cb, void *payload)
{
	return gathered_walk(s, NULL, set, cb, payload);
}

int hd__store_gathered_take(hd_store *s, const hd_nodes *set,
			    hd_record_cb cb, void *payload)
{
	return gathered_walk(s, s, set, cb, payload);
}

static int is_gzip(int fd)
{
	unsigned char m[2];

	return pread(fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

int hd_store_records(const hd_store *s, const char *dump_path,
		     const hd_nodes *set, const hd_read_options *ro,
		     hd_record_cb cb, void *payload, hd_error *err)
{
	hd_store_info si;
	struct target *t;
	size_t i, n;
	int rc, fd;

	HD_ASSERT_ARG(s && set && cb);
	hd_store_info_get(&si, s);
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
	n = set->n;
	fd = open(dump_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = hd__error_sys(err, errno, "cannot open '%s': %s",
				   dump_path, strerror(errno));
		goto out;
	}
	if (!is_gzip(fd))
		rc = pread_records(s, dump_path, fd, t, set->n, cb, payload,
				   &n, err);
	close(fd);
	if (!rc)
		rc = stream_records(s, dump_path, t, n, ro, cb, payload, err);
out:
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
 * The references between [ and ] with only the kept ones, each token
 * copied as written (so 2.x "0X7F.." stays as it was); kept[k] says
 * whether the k-th was kept (ref_names follows them).
 */
static int filter_refs(struct buf *b, const hd_record *rec,
		       const hd_store *s, const unsigned char *keep,
		       unsigned char *kept_k, size_t nk)
{
	const char *p = rec->text + rec->refs_open + 1;
	const char *end = rec->text + rec->refs_close;
	int first = 1;
	size_t k = 0;
	uint64_t a;

	while (p < end) {
		const char *q, *e;
		int on;

		q = memchr(p, '"', (size_t)(end - p));
		if (!q)
			break;
		e = memchr(q + 1, '"', (size_t)(end - q - 1));
		if (!e)
			break;
		on = !hd__parse_hex(q + 1, (size_t)(e - q - 1), &a) &&
		     (!keep || kept(s, keep, a));
		if (k < nk)
			kept_k[k] = (unsigned char)on;
		k++;
		if (on) {
			if ((!first && put(b, ", ", 2)) ||
			    put(b, q, (size_t)(e - q + 1)))
				return HD_ENOMEM;
			first = 0;
		}
		p = e + 1;
	}
	return 0;
}

/* The ref_names entries of the kept references: 1, 0 when none is
 * named, -1 out of memory. */
static int filter_names(struct buf *b, const hd_record *rec,
			const unsigned char *kept_k)
{
	size_t k, named = 0;
	int first = 1;

	for (k = 0; k < rec->nrefs; k++)
		named += kept_k[k] && rec->ref_names[k].ptr;
	if (!named)
		return 0;
	for (k = 0; k < rec->nrefs; k++) {
		const hd_str *t = &rec->ref_names[k];

		if (!kept_k[k])
			continue;
		if ((!first && put(b, ", ", 2)) ||
		    (t->ptr ? put(b, t->ptr, t->len) : put(b, "null", 4)))
			return -1;
		first = 0;
	}
	return 1;
}

/* The span of the ref_names member with one separator next to it. */
static void names_member(const hd_record *rec, size_t *from, size_t *to)
{
	const char *t = rec->text;
	size_t a = rec->names_key, z = rec->names_close + 1;

	while (a > 0 && (t[a - 1] == ' ' || t[a - 1] == '\t'))
		a--;
	if (a > 0 && t[a - 1] == ',') {
		a--;
	} else {
		while (z < rec->text_len && (t[z] == ' ' || t[z] == '\t'))
			z++;
		if (z < rec->text_len && t[z] == ',')
			z++;
		while (z < rec->text_len && (t[z] == ' ' || t[z] == '\t'))
			z++;
	}
	*from = a;
	*to = z;
}

/* One span of a record's text replaced by other bytes. */
struct edit {
	size_t from, to;
	const struct buf *with;
};

/*
 * The text with only the kept references (all when keep is NULL) and
 * ref_names restricted in parallel: the member is left out when no kept
 * reference has a name, and when the reader dropped it as damaged.
 */
static int filter_record(struct buf *b, const hd_record *rec,
			 const hd_store *s, const unsigned char *keep)
{
	size_t n = rec->nrefs ? rec->nrefs : 1, at = 0, ne = 0, i;
	unsigned char *kept_k = hd__malloc(n);
	struct buf rb = { NULL, 0, 0 }, tb = { NULL, 0, 0 };
	struct edit e[2], t;
	int rc = HD_ENOMEM, named = 0;

	if (!kept_k)
		return HD_ENOMEM;
	memset(kept_k, 0, n);
	if (rec->refs_close) {
		if (filter_refs(&rb, rec, s, keep, kept_k, rec->nrefs))
			goto out;
		e[ne].from = rec->refs_open + 1;
		e[ne].to = rec->refs_close;
		e[ne++].with = &rb;
	}
	if (rec->names_open && rec->names_close) {
		if ((rec->has & HD_HAS_REF_NAMES) &&
		    (named = filter_names(&tb, rec, kept_k)) < 0)
			goto out;
		if (named) {
			e[ne].from = rec->names_open + 1;
			e[ne].to = rec->names_close;
		} else {
			names_member(rec, &e[ne].from, &e[ne].to);
		}
		e[ne++].with = &tb;
	}
	if (ne == 2 && e[1].from < e[0].from) {
		t = e[0];
		e[0] = e[1];
		e[1] = t;
	}
	for (i = 0; i < ne; i++) {
		if (put(b, rec->text + at, e[i].from - at) ||
		    (e[i].with->len && put(b, e[i].with->p, e[i].with->len)))
			goto out;
		at = e[i].to;
	}
	rc = put(b, rec->text + at, rec->text_len - at);
out:
	hd__free(rb.p, rb.cap);
	hd__free(tb.p, tb.cap);
	hd__free(kept_k, n);
	return rc;
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
	else if ((keep && rec->refs_close) ||
		 (rec->names_close && !(rec->has & HD_HAS_REF_NAMES)))
		rc = filter_record(&b, rec, s, keep);
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

int hd__line_put(const void *p, size_t n, void *payload)
{
	struct hd__line *l = payload;

	if (l->len + n + 1 > l->cap) {
		size_t cap = l->cap ? l->cap : 4096;
		char *np;

		while (cap < l->len + n + 1)
			cap *= 2;
		if (!(np = hd__realloc(l->p, l->cap, cap)))
			return HD_ENOMEM;
		l->p = np;
		l->cap = cap;
	}
	memcpy(l->p + l->len, p, n);
	l->len += n;
	return 0;
}

void hd__line_free(struct hd__line *l)
{
	hd__free(l->p, l->cap);
	memset(l, 0, sizeof(*l));
}

int hd__record_open(struct hd__line *l, const hd_record *rec,
		    const hd_store *s, const unsigned char *keep)
{
	size_t close;
	int rc;

	l->len = 0;
	if ((rc = hd_record_write(rec, s, keep, hd__line_put, l)))
		return rc;
	close = l->len;
	while (close > 0 && l->p[close - 1] != '}')
		close--;
	if (!close)
		return HD_EPARSE; /* not an object: a record always is */
	l->len = close - 1;
	return 0;
}

int hd__record_close(struct hd__line *l)
{
	return hd__line_put("}\n", 2, l);
}
