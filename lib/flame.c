/*
 * flame.c - a weighted call tree (hd_flame) and its three writers:
 * folded stacks (flamegraph.pl, inferno), speedscope's JSON file format
 * and pprof's profile.proto, gzip'd.
 *
 * Nodes are created parent first, so a node's id is always above its
 * parent's: totals are one backward pass (child into parent), a stack
 * is read by walking parents, and nothing recurses however deep a
 * path is. A node is found by one hash lookup of (parent, frame), frame
 * names interned once: O(1) a frame added.
 *
 * pprof is written by hand (about sixty lines of varints below) rather
 * than through Debian's libprotobuf-c: that library needs the C code
 * protoc-c generates from profile.proto, so a build-time compiler and a
 * vendored .proto for the seven messages and twenty-odd fields
 * written here, which are fixed by the format (field numbers never
 * change in protobuf). Nothing is parsed: the writer only encodes.
 */
#include "hd_int.h"
#include "util/json_out.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define DEEPER_FRAME "(deeper)"

struct fnode {
	uint32_t parent;  /* HD__NONE for the root */
	uint32_t frame;   /* interned name; HD__NONE for the root */
	uint32_t depth;   /* the root 0 */
	uint32_t deeper;  /* 1: the "(deeper)" node below the depth cap */
	uint64_t self;
};

struct hd_flame {
	struct fnode *n;
	size_t count, cap;
	struct hd__map kids;     /* (parent << 32 | frame) -> node */
	struct hd__intern names;
	uint32_t max_depth;
	uint32_t deeper_frame;
	uint64_t total;
	int total_saturated;
	/* hd_flame_index: totals, children (CSR), dropped by any change */
	uint64_t *tot;
	uint32_t *koff, *kid;
	size_t indexed; /* nodes when indexed, 0: not */
	int stale;      /* changed since */
};

static void index_free(hd_flame *f);

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int hd_flame_new(hd_flame **out, uint32_t max_depth, hd_error *err)
{
	hd_flame *f;

	HD_ASSERT_ARG(out);
	*out = NULL;
	f = hd__calloc(1, sizeof(*f));
	if (!f || hd__map_init(&f->kids, 1024) || hd__intern_init(&f->names) ||
	    hd__intern_put(&f->names, DEEPER_FRAME, strlen(DEEPER_FRAME),
			   &f->deeper_frame) ||
	    hd__grow((void **)&f->n, &f->cap, 1024, sizeof(*f->n))) {
		hd_flame_free(f);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	f->max_depth = max_depth ? max_depth : HD_FLAME_DEPTH_DEFAULT;
	f->n[0] = (struct fnode){ HD__NONE, HD__NONE, 0, 0, 0 };
	f->count = 1;
	*out = f;
	return 0;
}

void hd_flame_free(hd_flame *f)
{
	if (!f)
		return;
	HD_FREE(f->n, f->cap);
	index_free(f);
	hd__map_free(&f->kids);
	hd__intern_free(&f->names);
	hd__free(f, sizeof(*f));
}

/* The child of parent framed frame (an interned id), created if new. */
static int child_of(hd_flame *f, uint32_t parent, uint32_t frame,
		    int deeper, uint32_t *out)
{
	uint64_t key = (uint64_t)parent << 32 | frame;
	uint32_t id = (uint32_t)f->count;
	int found;

	if (f->count >= UINT32_MAX - 1)
		return HD_ENOMEM;
	if (hd__map_put(&f->kids, key, id, out, &found))
		return HD_ENOMEM;
	if (found)
		return 0;
	if (hd__grow((void **)&f->n, &f->cap, f->count + 1, sizeof(*f->n)))
		return HD_ENOMEM; /* the map holds an id never made: fatal */
	f->n[id] = (struct fnode){ parent, frame, f->n[parent].depth + 1,
				   (uint32_t)deeper, 0 };
	f->count++;
	f->stale = 1;
	return 0;
}

int hd_flame_child(hd_flame *f, uint32_t parent, const char *name,
		   size_t len, uint32_t *child, hd_error *err)
{
	uint32_t frame;

	HD_ASSERT_ARG(f && child && parent < f->count && (name || !len));
	if (f->n[parent].deeper) { /* everything below the cap folds here */
		*child = parent;
		return 0;
	}
	if (f->n[parent].depth >= f->max_depth) {
		if (child_of(f, parent, f->deeper_frame, 1, child))
			return hd__error(err, HD_ENOMEM, "out of memory");
		return 0;
	}
	if (hd__intern_put(&f->names, name ? name : "", len, &frame) ||
	    child_of(f, parent, frame, 0, child))
		return hd__error(err, HD_ENOMEM, "out of memory");
	return 0;
}

void hd_flame_weigh(hd_flame *f, uint32_t node, uint64_t weight)
{
	if (!f || node >= f->count)
		return;
	f->n[node].self = sat_add(f->n[node].self, weight);
	f->stale = 1; /* the totals moved */
	if (f->total > UINT64_MAX - weight)
		f->total_saturated = 1;
	f->total = sat_add(f->total, weight);
}

int hd_flame_add(hd_flame *f, const char *const *frames, const size_t *lens,
		 size_t depth, uint64_t weight, hd_error *err)
{
	uint32_t at = HD_FLAME_ROOT;
	size_t i;
	int rc;

	HD_ASSERT_ARG(f && (frames || !depth));
	for (i = 0; i < depth; i++) {
		size_t len = lens ? lens[i] : strlen(frames[i]);

		if ((rc = hd_flame_child(f, at, frames[i], len, &at, err)))
			return rc;
	}
	hd_flame_weigh(f, at, weight);
	return 0;
}

uint64_t hd_flame_total(const hd_flame *f, int *saturated)
{
	if (saturated)
		*saturated = f ? f->total_saturated : 0;
	return f ? f->total : 0;
}

uint32_t hd_flame_node_count(const hd_flame *f)
{
	return f ? (uint32_t)f->count - 1 : 0;
}

/* ---- the index: totals and children, for tree views ---- */

static void index_free(hd_flame *f)
{
	HD_FREE(f->tot, f->indexed);
	HD_FREE(f->koff, f->indexed ? f->indexed + 1 : 0);
	HD_FREE(f->kid, f->indexed);
	f->tot = NULL;
	f->koff = f->kid = NULL;
	f->indexed = 0;
}

static int cmp_kid(const void *a, const void *b, void *ctx)
{
	const uint64_t *t = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (t[x] != t[y])
		return t[x] < t[y] ? 1 : -1;
	return x < y ? -1 : x > y;
}

int hd_flame_index(hd_flame *f, hd_error *err)
{
	size_t n, i, *fill = NULL;

	HD_ASSERT_ARG(f);
	index_free(f);
	n = f->count;
	f->tot = hd__array_alloc(n, sizeof(*f->tot));
	f->koff = hd__calloc(n + 1, sizeof(*f->koff));
	f->kid = hd__array_alloc(n, sizeof(*f->kid));
	fill = hd__array_alloc(n, sizeof(*fill));
	if (!f->tot || !f->koff || !f->kid || !fill) {
		HD_FREE(f->tot, n);
		HD_FREE(f->koff, n + 1);
		HD_FREE(f->kid, n);
		HD_FREE(fill, fill ? n : 0);
		f->tot = NULL;
		f->koff = f->kid = NULL;
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	f->indexed = n;
	for (i = 0; i < n; i++)
		f->tot[i] = f->n[i].self;
	/* a child's id is above its parent's: one backward pass */
	for (i = n; i-- > 1;)
		f->tot[f->n[i].parent] = sat_add(f->tot[f->n[i].parent],
						 f->tot[i]);
	for (i = 1; i < n; i++)
		f->koff[f->n[i].parent + 1]++;
	for (i = 1; i <= n; i++)
		f->koff[i] += f->koff[i - 1];
	for (i = 0; i < n; i++)
		fill[i] = f->koff[i];
	for (i = 1; i < n; i++)
		f->kid[fill[f->n[i].parent]++] = (uint32_t)i;
	HD_FREE(fill, n);
	for (i = 0; i < n; i++)
		hd__sort(f->kid + f->koff[i], f->koff[i + 1] - f->koff[i],
			 sizeof(*f->kid), cmp_kid, f->tot);
	f->stale = 0;
	return 0;
}

int hd_flame_node(hd_flame_node_info *out, const hd_flame *f, uint32_t id)
{
	hd_error *err = NULL;

	HD_ASSERT_ARG(out && f && f->indexed && !f->stale);
	if (id >= f->count)
		return HD_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	if (id != HD_FLAME_ROOT)
		out->name = hd__intern_str(&f->names, f->n[id].frame,
					   &out->name_len);
	else
		out->name = "";
	out->self = f->n[id].self;
	out->total = f->tot[id];
	out->depth = f->n[id].depth;
	out->parent = f->n[id].parent;
	out->nchildren = f->koff[id + 1] - f->koff[id];
	out->children = f->kid + f->koff[id];
	return 0;
}

/* ---- a buffered writer over the caller's hd_write_cb ---- */

struct wr {
	struct hd__buf b;
	hd_write_cb w;
	void *payload;
	int rc;      /* the sink's value, or HD_ENOMEM */
};

static void wr_flush(struct wr *o)
{
	if (!o->rc && o->b.len) {
		if (o->w) {
			int rc = o->w(o->b.p, o->b.len, o->payload);

			if (rc)
				o->rc = rc;
		}
	}
	if (o->w)
		o->b.len = 0;
}

static void wr_put(struct wr *o, const void *s, size_t n)
{
	if (o->rc)
		return;
	if (hd__buf_reserve(&o->b, o->b.len + n)) {
		o->rc = HD_ENOMEM;
		return;
	}
	memcpy(o->b.p + o->b.len, s, n);
	o->b.len += n;
	if (o->w && o->b.len >= 1 << 16)
		wr_flush(o);
}

static void wr_str(struct wr *o, const char *s)
{
	wr_put(o, s, strlen(s));
}

static void wr_u64(struct wr *o, uint64_t v)
{
	char d[24];
	size_t i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while (v /= 10);
	wr_put(o, d + i, sizeof(d) - i);
}

static void wr_json_str(struct wr *o, const char *s, size_t n)
{
	struct hd__sink k;

	if (o->rc)
		return;
	if (hd__buf_sink(&o->b, &k, n * 6 + 2)) {
		o->rc = HD_ENOMEM;
		return;
	}
	hd__put_json_str(&k, s, n);
	if (k.len > k.size) { /* cannot happen with 6 bytes a byte */
		o->rc = HD_ENOMEM;
		return;
	}
	o->b.len += k.len;
}

/* A frame of a folded line: ';' separates frames and a line ends the
 * stack, so ';', control bytes and DEL are written as \xHH (the text
 * outputs' rule for control bytes). Spaces stay: the count is after
 * the last one. */
static void wr_folded_frame(struct wr *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != 0x7f && c != ';')
			continue;
		wr_put(o, s + from, i - from);
		wr_put(o, (char[]){ '\\', 'x', hex[c >> 4], hex[c & 15] }, 4);
		from = i + 1;
	}
	wr_put(o, s + from, n - from);
}

/* The frames of node v, outermost first, into path (depth of them). */
static size_t stack_of(const hd_flame *f, uint32_t v, uint32_t *path)
{
	size_t d = f->n[v].depth, i = d;

	while (i > 0) {
		path[--i] = f->n[v].frame;
		v = f->n[v].parent;
	}
	return d;
}

static uint32_t max_depth_of(const hd_flame *f)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < f->count; i++)
		if (f->n[i].depth > m)
			m = f->n[i].depth;
	return m;
}

static void write_folded(const hd_flame *f, struct wr *o, uint32_t *path)
{
	size_t v, d, i, len;
	const char *s;

	for (v = 1; v < f->count; v++) {
		if (!f->n[v].self)
			continue;
		d = stack_of(f, (uint32_t)v, path);
		for (i = 0; i < d; i++) {
			if (i)
				wr_put(o, ";", 1);
			s = hd__intern_str(&f->names, path[i], &len);
			wr_folded_frame(o, s, len);
		}
		wr_put(o, " ", 1);
		wr_u64(o, f->n[v].self);
		wr_put(o, "\n", 1);
	}
}

/* speedscope's file format (https://www.speedscope.app/
 * file-format-schema.json): one "sampled" profile, a sample per stack
 * with its self weight. */
static void write_speedscope(const hd_flame *f, struct wr *o, uint32_t *path,
			     const char *name, const char *unit)
{
	size_t v, d, i, len, first = 1;
	const char *s;

	wr_str(o, "{\"$schema\":\"https://www.speedscope.app/"
		  "file-format-schema.json\",\"exporter\":\"heapdump ");
	wr_str(o, HD_VERSION_STRING);
	wr_str(o, "\",\"name\":");
	wr_json_str(o, name, strlen(name));
	wr_str(o, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
	for (i = 0; i < f->names.count; i++) {
		s = hd__intern_str(&f->names, (uint32_t)i, &len);
		wr_str(o, i ? ",{\"name\":" : "{\"name\":");
		wr_json_str(o, s, len);
		wr_put(o, "}", 1);
	}
	wr_str(o, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
	wr_json_str(o, name, strlen(name));
	wr_str(o, ",\"unit\":\"");
	wr_str(o, unit);
	wr_str(o, "\",\"startValue\":0,\"endValue\":");
	wr_u64(o, f->total);
	wr_str(o, ",\"samples\":[");
	for (v = 1; v < f->count; v++) {
		if (!f->n[v].self)
			continue;
		d = stack_of(f, (uint32_t)v, path);
		wr_str(o, first ? "[" : ",[");
		first = 0;
		for (i = 0; i < d; i++) {
			if (i)
				wr_put(o, ",", 1);
			wr_u64(o, path[i]);
		}
		wr_put(o, "]", 1);
	}
	wr_str(o, "],\"weights\":[");
	first = 1;
	for (v = 1; v < f->count; v++) {
		if (!f->n[v].self)
			continue;
		if (!first)
			wr_put(o, ",", 1);
		first = 0;
		wr_u64(o, f->n[v].self);
	}
	wr_str(o, "]}]}\n");
}

/* ---- pprof: profile.proto, encoded by hand ---- */

static void pb_varint(struct wr *o, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (unsigned char)v;
	wr_put(o, b, n);
}

/* field with wire type 0 (varint) */
static void pb_uint(struct wr *o, unsigned field, uint64_t v)
{
	pb_varint(o, (uint64_t)field << 3);
	pb_varint(o, v);
}

/* field with wire type 2 (length-delimited) */
static void pb_bytes(struct wr *o, unsigned field, const void *p, size_t n)
{
	pb_varint(o, (uint64_t)field << 3 | 2);
	pb_varint(o, n);
	wr_put(o, p, n);
}

/* A message built in m (emptied afterwards) written as field of o. */
static void pb_msg(struct wr *o, unsigned field, struct wr *m)
{
	if (m->rc && !o->rc)
		o->rc = m->rc;
	pb_bytes(o, field, m->b.p, m->b.len);
	m->b.len = 0;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * Profile { sample_type = 1; sample = 2; location = 4; function = 5;
 * string_table = 6; default_sample_type = 14 }. Strings: 0 "", 1 the
 * sample type, 2 its unit, 3 + i frame i; frame i is function and
 * location i + 1. A sample's locations are leaf first.
 */
static void write_pprof_raw(const hd_flame *f, struct wr *o, struct wr *m,
			    uint32_t *path, const char *type,
			    const char *unit)
{
	struct wr line = { { NULL, 0, 0 }, NULL, NULL, 0 };
	size_t v, d, i, len, plen;
	const char *s;

	pb_uint(m, 1, 1);
	pb_uint(m, 2, 2);
	pb_msg(o, 1, m);
	for (v = 1; v < f->count; v++) {
		if (!f->n[v].self)
			continue;
		d = stack_of(f, (uint32_t)v, path);
		for (i = 0, plen = 0; i < d; i++)
			plen += varint_len((uint64_t)path[i] + 1);
		pb_varint(m, 1 << 3 | 2); /* location_id, packed */
		pb_varint(m, plen);
		for (i = d; i-- > 0;)
			pb_varint(m, (uint64_t)path[i] + 1);
		pb_varint(m, 2 << 3 | 2); /* value, packed */
		pb_varint(m, varint_len(f->n[v].self));
		pb_varint(m, f->n[v].self);
		pb_msg(o, 2, m);
	}
	for (i = 0; i < f->names.count; i++) {
		pb_uint(&line, 1, i + 1); /* Line.function_id */
		pb_uint(m, 1, i + 1);     /* Location.id */
		pb_msg(m, 4, &line);      /* Location.line */
		pb_msg(o, 4, m);
		pb_uint(m, 1, i + 1);     /* Function.id */
		pb_uint(m, 2, i + 3);     /* Function.name */
		pb_uint(m, 3, i + 3);     /* Function.system_name */
		pb_msg(o, 5, m);
	}
	pb_bytes(o, 6, "", 0);
	pb_bytes(o, 6, type, strlen(type));
	pb_bytes(o, 6, unit, strlen(unit));
	for (i = 0; i < f->names.count; i++) {
		s = hd__intern_str(&f->names, (uint32_t)i, &len);
		pb_bytes(o, 6, s, len);
	}
	pb_uint(o, 14, 1);
	if (line.rc && !o->rc)
		o->rc = line.rc;
	HD_FREE(line.b.p, line.b.cap);
}

/* raw gzip'd (RFC 1952) into o */
static void gzip_into(struct wr *o, const unsigned char *p, size_t n)
{
	z_stream z;
	unsigned char chunk[1 << 15];
	int zr = Z_OK;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		o->rc = HD_ENOMEM;
		return;
	}
	z.next_in = (unsigned char *)(uintptr_t)p;
	while (zr != Z_STREAM_END && !o->rc) {
		size_t step = n > (1u << 30) ? 1u << 30 : n;

		z.avail_in = (uInt)step;
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, step == n ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR) {
			o->rc = HD_ENOMEM;
			break;
		}
		n -= step - z.avail_in;
		wr_put(o, chunk, sizeof(chunk) - z.avail_out);
	}
	deflateEnd(&z);
}

static void write_pprof(const hd_flame *f, struct wr *o, uint32_t *path,
			const char *type, const char *unit)
{
	struct wr raw = { { NULL, 0, 0 }, NULL, NULL, 0 };
	struct wr m = { { NULL, 0, 0 }, NULL, NULL, 0 };

	write_pprof_raw(f, &raw, &m, path, type, unit);
	if (m.rc && !raw.rc)
		raw.rc = m.rc;
	if (raw.rc)
		o->rc = raw.rc;
	else
		gzip_into(o, (const unsigned char *)raw.b.p, raw.b.len);
	HD_FREE(raw.b.p, raw.b.cap);
	HD_FREE(m.b.p, m.b.cap);
}

int hd_flame_write(const hd_flame *f, int format, const char *name,
		   int metric, hd_write_cb w, void *payload, hd_error *err)
{
	struct wr o = { { NULL, 0, 0 }, w, payload, 0 };
	uint32_t *path;
	const char *unit = metric == HD_FLAME_COUNT ? "none" : "bytes";
	const char *type = metric == HD_FLAME_COUNT ? "objects" :
			   metric == HD_FLAME_RETAINED ? "retained_space" :
							 "space";

	HD_ASSERT_ARG(f && w);
	HD_ASSERT_ARG(format == HD_FLAME_FOLDED ||
		      format == HD_FLAME_SPEEDSCOPE ||
		      format == HD_FLAME_PPROF);
	if (!name)
		name = "heapdump flame";
	path = hd__array_alloc((size_t)max_depth_of(f) + 1, sizeof(*path));
	if (!path)
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (format == HD_FLAME_FOLDED)
		write_folded(f, &o, path);
	else if (format == HD_FLAME_SPEEDSCOPE)
		write_speedscope(f, &o, path, name, unit);
	else
		write_pprof(f, &o, path, type,
			    metric == HD_FLAME_COUNT ? "count" : "bytes");
	wr_flush(&o);
	HD_FREE(path, (size_t)max_depth_of(f) + 1);
	HD_FREE(o.b.p, o.b.cap);
	if (o.rc == HD_ENOMEM)
		return hd__error(err, HD_ENOMEM, "out of memory");
	return o.rc;
}
