/*
 * store.c - opening, validating and reading a graph store.
 *
 * An opened store is a read-only mapping of the file (or, with
 * HD_NO_MMAP, a heap copy); a built one holds the same section images in
 * memory. Either way the accessors read sections through s->sec[] with
 * little-endian loads, and nothing is read before hd__store_validate()
 * has checked the header, the section table, every section's size
 * against the counts in META and every stored index against what it
 * indexes (man 5 heapdump-store, VALIDATION).
 */
#include "store_format.h"
#include "graph.h"
#include "util/thread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef HD_NO_MMAP
#include <sys/mman.h>
#endif


static const char *const sec_names[HD__SEC__COUNT] = {
	"unknown",        "meta",         "string",
	"string offset",  "address",      "type",
	"bits",           "class",        "class address",
	"memsize",        "wide memsize", "generation",
	"wide generation", "size",        "wide size",
	"site",           "site table",   "aux",
	"offset",         "edge offset",  "edge",
	"referrer offset", "referrer",    "root name",
	"root offset",    "root",         "class name",
	"dominator info", "dominator",    "retained count",
	"retained memsize", "reference name info", "reference name",
	"root reference name", "stats summary", "source identity",
	"dominator children offset", "dominator children",
	"stack info",     "node stack",   "stack offset",
	"stack frame id", "frame",
	"string value info", "string value row", "string value text",
	"group stats view", "retained by class view", "objects' order view",
	[HD__SEC_BUILDER] = "builder",
};

static const char *sec_name(uint32_t id)
{
	return id < HD__SEC__COUNT && sec_names[id] ? sec_names[id] :
						      "unknown";
}

/* A format error naming the section; fmt has one %s. */
#define bad(err, fmt, what) hd__error(err, HD_EFORMAT, fmt, what)

/* An I/O error from errno: "cannot <what> '<path>': <strerror>". */
static int sys_fail(hd_error *err, const char *what, const char *path)
{
	int e = errno ? errno : EIO;

	return hd__error_sys(err, e, "cannot %s '%s': %s", what, path,
			     strerror(e));
}

/* ---- little-endian column access ---- */

static inline uint32_t col32(const hd_store *s, int sec, uint64_t i)
{
	return hd__le32(s->sec[sec] + i * 4);
}

static inline uint64_t col64(const hd_store *s, int sec, uint64_t i)
{
	return hd__le64(s->sec[sec] + i * 8);
}

/* ---- META ---- */

static uint64_t mul(uint64_t a, uint64_t b)
{
	return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/* The size each section must have, from the counts in META. */
static uint64_t want_size(const hd_store *s, int id)
{
	const uint64_t *m = s->meta;
	uint64_t n = m[HD__M_NODES];

	switch (id) {
	case HD__SEC_META:
		return (uint64_t)HD__M_COUNT * 8;
	case HD__SEC_STRINGS:
		return s->len[id]; /* checked through the offsets */
	case HD__SEC_STROFFS:
		return mul(m[HD__M_STRINGS] + 1, 4);
	case HD__SEC_ADDRESS:
	case HD__SEC_OFFSET:
		return n * 8;
	case HD__SEC_TYPE:
		return n;
	case HD__SEC_BITS:
		return n * 2;
	case HD__SEC_CLASS:
	case HD__SEC_MEMSIZE:
	case HD__SEC_SIZE:
	case HD__SEC_AUX:
		return n * 4;
	case HD__SEC_GENERATION:
		return m[HD__M_COLUMNS] & HD__COL_GENERATION ? n * 4 : 0;
	case HD__SEC_SITE:
		return m[HD__M_COLUMNS] & HD__COL_SITE ? n * 4 : 0;
	case HD__SEC_CLASSX:
		return mul(m[HD__M_CLASSX], HD__WIDE_SIZE);
	case HD__SEC_MEMSIZE_WIDE:
		return mul(m[HD__M_MEMSIZE_WIDE], HD__WIDE_SIZE);
	case HD__SEC_GEN_WIDE:
		return mul(m[HD__M_GEN_WIDE], HD__WIDE_SIZE);
	case HD__SEC_SIZE_WIDE:
		return mul(m[HD__M_SIZE_WIDE], HD__WIDE_SIZE);
	case HD__SEC_SITES:
		return mul(m[HD__M_SITES], HD__SITE_SIZE);
	case HD__SEC_REFS_OFF:
	case HD__SEC_REV_OFF:
		return (n + 1) * 4;
	case HD__SEC_REFS:
	case HD__SEC_REV:
		return mul(m[HD__M_EDGES], 4);
	case HD__SEC_ROOT_NAMES:
		return mul(m[HD__M_ROOT_CATEGORIES], 4);
	case HD__SEC_ROOT_OFF:
		return mul(m[HD__M_ROOT_CATEGORIES] + 1, 4);
	case HD__SEC_ROOT_REFS:
		return mul(m[HD__M_ROOT_KEPT], 4);
	case HD__SEC_CLASSES:
		return mul(m[HD__M_CLASSES], HD__CLASS_SIZE);
	case HD__SEC_DOM_INFO:
		return (uint64_t)HD__DOM_INFO_COUNT * 8;
	case HD__SEC_DOM_IDOM:
	case HD__SEC_DOM_COUNT:
		return n * 4;
	case HD__SEC_DOM_MEM:
		return n * 8;
	case HD__SEC_NAME_INFO:
	case HD__SEC_NAME_MAP:
	case HD__SEC_NAME_ROOT:
		return hd__store_names_size(s, id);
	case HD__SEC_STATS:
		return hd__store_stats_size(s);
	case HD__SEC_SOURCE_ID:
		return (uint64_t)HD__SID_COUNT * 8;
	case HD__SEC_BUILDER:
		return 8;
	case HD__SEC_DOM_KIDS_OFF:
		return (n + 2) * 4;
	case HD__SEC_DOM_KIDS:
		/* what the offsets end at (a wrong offset section is
		 * refused before this one: its id is lower) */
		if (!s->sec[HD__SEC_DOM_KIDS_OFF] ||
		    s->len[HD__SEC_DOM_KIDS_OFF] != (n + 2) * 4)
			return UINT64_MAX;
		return (uint64_t)hd__le32(s->sec[HD__SEC_DOM_KIDS_OFF] +
					  4 * (n + 1)) * 4;
	case HD__SEC_STACK_INFO:
	case HD__SEC_STACK_NODE:
	case HD__SEC_STACK_OFF:
	case HD__SEC_STACK_ENT:
	case HD__SEC_STACK_FRAME:
		return hd__store_stacks_size(s, id);
	case HD__SEC_STRV_INFO:
	case HD__SEC_STRV_ROWS:
	case HD__SEC_STRV_TEXT:
	case HD__SEC_VIEW_GROUPS:
	case HD__SEC_VIEW_CLASSES:
	case HD__SEC_VIEW_ORDER:
		/* views: checked by their reader (views.c), which refuses
		 * a damaged one and computes it again */
		return s->len[id];
	}
	return UINT64_MAX;
}

/* Reads META and checks the counts against the limits of the format. */
static int load_meta(hd_store *s, hd_error *err)
{
	uint64_t *m = s->meta;
	int i;

	if (s->len[HD__SEC_META] != (uint64_t)HD__M_COUNT * 8)
		return bad(err, "store %s section is the wrong size", "meta");
	for (i = 0; i < HD__M_COUNT; i++)
		m[i] = hd__le64(s->sec[HD__SEC_META] + (size_t)i * 8);
	if (m[HD__M_NODES] >= HD_NODE_NONE)
		return bad(err, "store %s count is out of range", "node");
	if (m[HD__M_EDGES] > UINT32_MAX)
		return bad(err, "store %s count is out of range", "edge");
	if (m[HD__M_STRINGS] >= HD_STR_NONE)
		return bad(err, "store %s count is out of range", "string");
	if (m[HD__M_SITES] >= HD_NODE_NONE)
		return bad(err, "store %s count is out of range", "site");
	if (m[HD__M_ROOT_CATEGORIES] >= HD_NODE_NONE ||
	    m[HD__M_ROOT_KEPT] > UINT32_MAX)
		return bad(err, "store %s count is out of range", "root");
	if (m[HD__M_CLASS_EDGES] > m[HD__M_EDGES] ||
	    m[HD__M_CLASS_EDGES] > m[HD__M_NODES])
		return bad(err, "store %s count is out of range", "class edge");
	if (m[HD__M_CLASSES] > m[HD__M_NODES] ||
	    m[HD__M_CLASSX] > m[HD__M_NODES] ||
	    m[HD__M_MEMSIZE_WIDE] > m[HD__M_NODES] ||
	    m[HD__M_GEN_WIDE] > m[HD__M_NODES] ||
	    m[HD__M_SIZE_WIDE] > m[HD__M_NODES])
		return bad(err, "store %s count is out of range", "table");
	if (m[HD__M_COLUMNS] & ~(uint64_t)(HD__COL_GENERATION | HD__COL_SITE))
		return bad(err, "store %s has unknown column flags", "meta");
	if (m[HD__M_FP_KIND] > HD__FP_GZIP || m[HD__M_FEATURES] > UINT32_MAX)
		return bad(err, "store %s has an invalid field", "meta");
	if (m[HD__M_SOURCE_PATH] >= m[HD__M_STRINGS])
		return bad(err, "store %s source path is out of range", "meta");
	if (!(m[HD__M_COLUMNS] & HD__COL_GENERATION) && m[HD__M_GEN_WIDE])
		return bad(err, "store %s section is the wrong size",
			   "wide generation");
	s->nodes = (uint32_t)m[HD__M_NODES];
	s->nstrings = (uint32_t)m[HD__M_STRINGS];
	return 0;
}

static void fill_info(hd_store *s)
{
	const uint64_t *m = s->meta;
	hd_store_info *in = &s->info;

	memset(in, 0, sizeof(*in));
	in->nodes = m[HD__M_NODES];
	in->edges = m[HD__M_EDGES] - m[HD__M_CLASS_EDGES];
	in->dangling = m[HD__M_DANGLING];
	in->duplicates = m[HD__M_DUPLICATES];
	in->root_refs = m[HD__M_ROOT_REFS];
	in->root_categories = m[HD__M_ROOT_CATEGORIES];
	in->shapes = m[HD__M_SHAPES];
	in->source_size = m[HD__M_SOURCE_SIZE];
	in->source_mtime = m[HD__M_SOURCE_MTIME];
	in->source_fingerprint = m[HD__M_FINGERPRINT];
	in->source_path = (const char *)s->sec[HD__SEC_STRINGS] +
			  col32(s, HD__SEC_STROFFS, m[HD__M_SOURCE_PATH]);
	in->features = (uint32_t)m[HD__M_FEATURES];
	in->read.bytes = m[HD__M_RD_BYTES];
	in->read.total_bytes = m[HD__M_RD_TOTAL_BYTES];
	in->read.lines = m[HD__M_RD_LINES];
	in->read.objects = m[HD__M_RD_OBJECTS];
	in->read.roots = m[HD__M_RD_ROOTS];
	in->read.shapes = m[HD__M_RD_SHAPES];
	in->read.others = m[HD__M_RD_OTHERS];
	in->read.blank = m[HD__M_RD_BLANK];
	in->read.skipped = m[HD__M_RD_SKIPPED];
	in->read.repaired = m[HD__M_RD_REPAIRED];
	in->read.truncated = m[HD__M_RD_TRUNCATED] != 0;
	in->read.gzip = m[HD__M_RD_GZIP] != 0;
	in->read.memprof = m[HD__M_RD_MEMPROF] != 0;
}

/* ---- content validation ---- */

/*
 * The validation reads every page of the mapping once; a command then
 * reads a few sections. Unmapping the pages from the process after each
 * check (they stay in the page cache, and come back on the next touch
 * without I/O) keeps its resident size to what it reads and one check's
 * columns, not the whole store. Nothing for a store in memory.
 */
static void release_pages(const hd_store *s)
{
#if !defined(HD_NO_MMAP) && defined(MADV_DONTNEED)
	if (s->map)
		(void)madvise(s->map, s->map_len, MADV_DONTNEED);
#else
	(void)s;
#endif
}


static int check_strings(const hd_store *s, hd_error *err)
{
	const unsigned char *b = s->sec[HD__SEC_STRINGS];
	uint64_t blen = s->len[HD__SEC_STRINGS], prev = 0, o;
	uint32_t i;

	if (blen > UINT32_MAX || col32(s, HD__SEC_STROFFS, 0) != 0 ||
	    col32(s, HD__SEC_STROFFS, s->nstrings) != blen)
		return bad(err, "store %s section is the wrong size", "string");
	for (i = 1; i <= s->nstrings; i++) {
		o = col32(s, HD__SEC_STROFFS, i);
		if (o <= prev || o > blen)
			return bad(err, "store %s is out of bounds",
				   "string offset");
		if (b[o - 1] != '\0')
			return bad(err, "store %s is not NUL-terminated",
				   "string");
		prev = o;
	}
	release_pages(s);
	return 0;
}

/*
 * The validation loops below touch every entry of the big columns, so
 * they are branch-free reductions: with SSE2 (every x86-64) four u32 a
 * step, elsewhere (HD_NO_SIMD, or another CPU) one at a time. The
 * scanner's switch chooses at run time too: where it takes its portable
 * path (HEAPDUMP_SIMD=portable, a CPU without AVX2, hd__simd_force), so
 * do these, and tests/cli/store_mem.sh compares both. Opening a store
 * costs a sequential read of it (man 5 heapdump-store).
 */
#if defined(__SSE2__) && !defined(HD_NO_SIMD) && \
	defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HD_SSE2 1
#include <emmintrin.h>

static int sse2(void)
{
	return hd__simd_level() != HD__SIMD_PORTABLE;
}

/* Unsigned a > b, four u32 lanes (SSE2 compares signed: flip the sign). */
static inline __m128i gt_u32(__m128i a, __m128i b)
{
	const __m128i sign = _mm_set1_epi32((int)0x80000000u);

	return _mm_cmpgt_epi32(_mm_xor_si128(a, sign), _mm_xor_si128(b, sign));
}

static inline __m128i max_u32(__m128i a, __m128i b)
{
	__m128i g = gt_u32(a, b);

	return _mm_or_si128(_mm_and_si128(g, a), _mm_andnot_si128(g, b));
}

static inline uint32_t lane_max(__m128i m)
{
	uint32_t v[4], r = 0;
	int i;

	_mm_storeu_si128((__m128i *)v, m);
	for (i = 0; i < 4; i++)
		r = v[i] > r ? v[i] : r;
	return r;
}
#endif

/* The largest u32 + add (mod 2^32) of p[0..n). */
static uint32_t max32(const unsigned char *p, uint64_t n, uint32_t add)
{
	uint32_t m = 0, v;
	uint64_t i = 0;

#ifdef HD_SSE2
	if (sse2()) {
		__m128i a = _mm_set1_epi32((int)add),
			m0 = _mm_setzero_si128(), m1 = m0;

		for (; i + 8 <= n; i += 8) {
			m0 = max_u32(m0, _mm_add_epi32(a, _mm_loadu_si128(
					(const __m128i *)(p + i * 4))));
			m1 = max_u32(m1, _mm_add_epi32(a, _mm_loadu_si128(
					(const __m128i *)(p + i * 4 + 16))));
		}
		m = lane_max(max_u32(m0, m1));
	}
#endif
	for (; i < n; i++) {
		v = hd__le32(p + i * 4) + add;
		m = v > m ? v : m;
	}
	return m;
}

/*
 * The whole-column checks read a store opened from a file with pread,
 * a chunk at a time into a buffer that stays in the cache, not through
 * its mapping: on the virtual machines this project runs on, a page of
 * a mapping costs a fault and a slow first read, and reading 120 MB of
 * columns through the mapping took most of what "stats STORE" costs
 * (60 of 80 ms on 3 M objects). Nothing of the columns is then mapped
 * until a command reads them. A store in memory (built, or read into
 * the heap) is checked in place.
 */
#define VREAD_CHUNK ((size_t)256 << 10)

struct vread {
	const hd_store *s;
	unsigned char *buf;  /* VREAD_CHUNK bytes; NULL: the images in place */
	int sys_errno;       /* a failed read's */
};

/* The bytes [off, off + n) of section sec (n <= VREAD_CHUNK), or NULL
 * when they cannot be read (hd__store_copy). */
static const unsigned char *vr_at(struct vread *v, int sec, uint64_t off,
				  size_t n)
{
	const unsigned char *p;

	if (!v->buf)
		return v->s->sec[sec] + off;
	errno = 0;
	if (!(p = hd__store_copy(v->s, sec, off, n, v->buf)))
		v->sys_errno = errno ? errno : EIO;
	return p;
}

/* Items of w bytes [i, i + *k) of section sec, *k as many as a chunk
 * holds of the count - i left. */
static const unsigned char *vr_items(struct vread *v, int sec, uint64_t i,
				     uint64_t count, unsigned w, size_t *k)
{
	uint64_t left = count - i;

	*k = left < VREAD_CHUNK / w ? (size_t)left : VREAD_CHUNK / w;
	return vr_at(v, sec, i * w, *k * w);
}

/* max32 over the count u32 of section sec; -1 if unreadable. */
static int sec_max32(struct vread *v, int sec, uint64_t count, uint32_t add,
		     uint32_t *out)
{
	const unsigned char *p;
	uint64_t i;
	uint32_t m = 0, c;
	size_t k;

	for (i = 0; i < count; i += k) {
		if (!(p = vr_items(v, sec, i, count, 4, &k)))
			return -1;
		c = max32(p, k, add);
		m = c > m ? c : m;
	}
	*out = m;
	return 0;
}

/* The error of an unreadable store (rc is HD_EIO), else rc. */
static int vr_error(const struct vread *v, int rc, hd_error *err)
{
	if (rc != HD_EIO)
		return rc;
	return hd__error_sys(err, v->sys_errno, "cannot read the store: %s",
			     strerror(v->sys_errno));
}

/* Every u32 of a column is < lim, or NONE if none_ok. */
static int check_ids(struct vread *v, int sec, uint64_t count, uint64_t lim,
		     int none_ok)
{
	uint32_t m;

	if (!count)
		return 0;
	/* HD_NODE_NONE + 1 wraps to 0 */
	if (sec_max32(v, sec, count, none_ok ? 1 : 0, &m))
		return HD_EIO;
	return (none_ok ? m > lim : m >= lim) ? HD_EFORMAT : 0;
}

/* Is some u32 of p[0..n] smaller than the one before? */
static int descends32(const unsigned char *p, uint64_t n)
{
	uint64_t i = 1;
	int down = 0;

#ifdef HD_SSE2
	if (sse2()) {
		__m128i d = _mm_setzero_si128();

		/* lanes i..i+3 against i-1..i+2 */
		for (; i + 4 <= n + 1; i += 4)
			d = _mm_or_si128(d, gt_u32(
				_mm_loadu_si128((const __m128i *)(p + i * 4 - 4)),
				_mm_loadu_si128((const __m128i *)(p + i * 4))));
		down = _mm_movemask_epi8(d) != 0;
	}
#endif
	for (; i <= n; i++)
		down |= hd__le32(p + i * 4) < hd__le32(p + i * 4 - 4);
	return down;
}

/* The largest byte of p[0..n). */
static unsigned char max8(const unsigned char *p, uint64_t n)
{
	unsigned char m = 0;
	uint64_t i = 0;

#ifdef HD_SSE2
	if (sse2()) {
		__m128i v = _mm_setzero_si128();
		unsigned char b[16];
		int k;

		for (; i + 16 <= n; i += 16)
			v = _mm_max_epu8(v, _mm_loadu_si128(
					    (const __m128i *)(p + i)));
		_mm_storeu_si128((__m128i *)b, v);
		for (k = 0; k < 16; k++)
			m = b[k] > m ? b[k] : m;
	}
#endif
	for (; i < n; i++)
		m = p[i] > m ? p[i] : m;
	return m;
}

/* Is some u32 of section sec's first n + 1 smaller than the one before?
 * 1, 0, or HD_EIO. */
static int sec_descends32(struct vread *v, int sec, uint64_t n)
{
	const unsigned char *p;
	uint64_t i;
	uint32_t prev = 0;
	size_t k;

	for (i = 0; i <= n; i += k) {
		if (!(p = vr_items(v, sec, i, n + 1, 4, &k)))
			return HD_EIO;
		if ((i && hd__le32(p) < prev) || descends32(p, k - 1))
			return 1;
		prev = hd__le32(p + (k - 1) * 4);
	}
	return 0;
}

/* Are the addresses strictly ascending? 1, 0, or HD_EIO. */
static int addresses_sorted(struct vread *v, uint64_t n)
{
	const unsigned char *p;
	uint64_t i, prev = 0;
	size_t k, j;
	int down = 0;

	for (i = 0; i < n; i += k) {
		if (!(p = vr_items(v, HD__SEC_ADDRESS, i, n, 8, &k)))
			return HD_EIO;
		down |= i && hd__le64(p) <= prev;
		for (j = 1; j < k; j++)
			down |= hd__le64(p + j * 8) <= hd__le64(p + j * 8 - 8);
		prev = hd__le64(p + (k - 1) * 8);
	}
	return !down;
}

/* The largest type byte; -1 if unreadable. */
static int sec_max8(struct vread *v, int sec, uint64_t n)
{
	const unsigned char *p;
	uint64_t i;
	unsigned char m = 0, c;
	size_t k;

	for (i = 0; i < n; i += k) {
		if (!(p = vr_items(v, sec, i, n, 1, &k)))
			return -1;
		c = max8(p, k);
		m = c > m ? c : m;
	}
	return m;
}

static int check_nodes(struct vread *v, hd_error *err)
{
	const hd_store *s = v->s;
	uint32_t n = s->nodes;
	int rc, maxt;

	if ((rc = addresses_sorted(v, n)) != 1)
		return rc ? vr_error(v, rc, err) :
			    bad(err, "store %s section is not sorted",
				"address");
	release_pages(s);
	if ((maxt = sec_max8(v, HD__SEC_TYPE, n)) < 0)
		return vr_error(v, HD_EIO, err);
	if (maxt >= HD_T__COUNT)
		return bad(err, "store %s section has an invalid value",
			   "type");
	if ((rc = check_ids(v, HD__SEC_CLASS, n, n, 1)))
		return rc == HD_EIO ? vr_error(v, rc, err) :
			bad(err, "store %s section points out of range",
			    "class");
	release_pages(s);
	if ((rc = check_ids(v, HD__SEC_AUX, n, s->nstrings, 1)))
		return rc == HD_EIO ? vr_error(v, rc, err) :
			bad(err, "store %s section points out of range", "aux");
	release_pages(s);
	if ((s->meta[HD__M_COLUMNS] & HD__COL_SITE) &&
	    (rc = check_ids(v, HD__SEC_SITE, n, s->meta[HD__M_SITES], 1)))
		return rc == HD_EIO ? vr_error(v, rc, err) :
			bad(err, "store %s section points out of range",
			    "site");
	release_pages(s);
	return 0;
}

/* A CSR: offsets [0] = 0, non-decreasing, [n] = total; targets < lim. */
static int check_csr(struct vread *v, int off, int tgt, uint64_t n,
		     uint64_t total, uint64_t lim, hd_error *err)
{
	const hd_store *s = v->s;
	const unsigned char *p = s->sec[off];
	int rc;

	if (hd__le32(p) != 0 || hd__le32(p + n * 4) != total)
		return bad(err, "store %s section is inconsistent",
			   sec_name((uint32_t)off));
	if ((rc = sec_descends32(v, off, n)))
		return rc == HD_EIO ? vr_error(v, rc, err) :
			bad(err, "store %s section is not monotonic",
			    sec_name((uint32_t)off));
	release_pages(s);
	if ((rc = check_ids(v, tgt, total, lim, 0)))
		return rc == HD_EIO ? vr_error(v, rc, err) :
			bad(err, "store %s section points out of range",
			    sec_name((uint32_t)tgt));
	release_pages(s);
	return 0;
}

/* The number of HD__ESC in a u32 column. */
static uint64_t count_esc(const unsigned char *p, uint64_t n)
{
	uint64_t i = 0, c = 0;

#ifdef HD_SSE2
	const __m128i esc = _mm_set1_epi32((int)HD__ESC);
	uint32_t v[4];

	/* each lane counts down by one per match, at most 2^16 steps */
	while (sse2() && i + 4 <= n) {
		__m128i acc = _mm_setzero_si128();
		uint64_t end = i + 4 * 65536 < n ? i + 4 * 65536 : n;

		for (; i + 4 <= end; i += 4)
			acc = _mm_sub_epi32(acc, _mm_cmpeq_epi32(
						 esc, _mm_loadu_si128(
							      (const __m128i *)(p + i * 4))));
		_mm_storeu_si128((__m128i *)v, acc);
		c += (uint64_t)v[0] + v[1] + v[2] + v[3];
	}
#endif
	for (; i < n; i++)
		c += hd__le32(p + i * 4) == HD__ESC;
	return c;
}

/*
 * A wide table: nodes strictly ascending, each < n, padding zero, and
 * the column (if any) holding HD__ESC exactly at those nodes.
 */
static int check_wide(struct vread *v, int sec, int col, uint64_t count,
		      hd_error *err)
{
	const hd_store *s = v->s;
	const unsigned char *p = s->sec[sec], *c;
	uint64_t i, escs = 0;
	uint32_t node, prev = 0;
	size_t k;

	for (i = 0; i < count; i++, p += HD__WIDE_SIZE) {
		node = hd__le32(p);
		if (node >= s->nodes || (i && node <= prev) || hd__le32(p + 4))
			return bad(err, "store %s section is invalid",
				   sec_name((uint32_t)sec));
		if (col == HD__SEC_CLASS ? col32(s, col, node) != HD_NODE_NONE :
					   col32(s, col, node) != HD__ESC)
			return bad(err, "store %s section does not match "
					"its column", sec_name((uint32_t)sec));
		prev = node;
	}
	if (col == HD__SEC_CLASS || (col == HD__SEC_GENERATION &&
				     !(s->meta[HD__M_COLUMNS] &
				       HD__COL_GENERATION)))
		return 0;
	for (i = 0; i < s->nodes; i += k) {
		if (!(c = vr_items(v, col, i, s->nodes, 4, &k)))
			return vr_error(v, HD_EIO, err);
		escs += count_esc(c, k);
	}
	release_pages(s);
	if (escs != count)
		return bad(err, "store %s section does not match its column",
			   sec_name((uint32_t)sec));
	return 0;
}

static int check_tables(struct vread *v, hd_error *err)
{
	const hd_store *s = v->s;
	const unsigned char *p = s->sec[HD__SEC_SITES];
	uint64_t i, ns = s->meta[HD__M_SITES], nc = s->meta[HD__M_CLASSES];
	uint32_t f, m, node, prev = 0, t;
	int rc;

	for (i = 0; i < ns; i++, p += HD__SITE_SIZE) {
		f = hd__le32(p);
		m = hd__le32(p + 4);
		if ((f >= s->nstrings && f != HD_STR_NONE) ||
		    (m >= s->nstrings && m != HD_STR_NONE))
			return bad(err, "store %s section points out of range",
				   "site table");
	}
	p = s->sec[HD__SEC_CLASSES];
	for (i = 0; i < nc; i++, p += HD__CLASS_SIZE) {
		node = hd__le32(p);
		if (node >= s->nodes || (i && node <= prev))
			return bad(err, "store %s section is invalid",
				   "class name");
		t = s->sec[HD__SEC_TYPE][node];
		if ((t != HD_T_CLASS && t != HD_T_MODULE && t != HD_T_ICLASS) ||
		    hd__le32(p + 4) >= s->nstrings ||
		    hd__le32(p + 8) >= s->nstrings ||
		    (hd__le32(p + 12) & ~(HD__CLS_SINGLETON | HD__CLS_EDGE)))
			return bad(err, "store %s section is invalid",
				   "class name");
		prev = node;
	}
	if ((rc = check_ids(v, HD__SEC_ROOT_NAMES,
			    s->meta[HD__M_ROOT_CATEGORIES], s->nstrings, 0)))
		return rc == HD_EIO ? vr_error(v, rc, err) :
			bad(err, "store %s section points out of range",
			    "root name");
	release_pages(s);
	return 0;
}

/*
 * The stored dominator tree, if any: every idom a node, HD_DOM_ROOT or
 * NONE, retained counts within the node count. That the idoms form a
 * tree is checked where it is walked (hd_domtree_chain).
 */
static int check_dom(struct vread *v, hd_error *err)
{
	const hd_store *s = v->s;
	uint32_t m;

	if (!s->sec[HD__SEC_DOM_INFO])
		return 0;
	if (hd__le64(s->sec[HD__SEC_DOM_INFO] + 8 * HD__DI_FLAGS) &
	    ~(uint64_t)(HD_ROOTS_SKIP_WEAK | HD_DOMTREE_SKIP_DUMPER))
		return bad(err, "store %s section has unknown flags",
			   "dominator info");
	/* d < nodes, NONE or ROOT: d + 2 wraps those two to 1 and 0 */
	if (!s->nodes)
		return 0;
	if (sec_max32(v, HD__SEC_DOM_IDOM, s->nodes, 2, &m))
		return vr_error(v, HD_EIO, err);
	if (m >= s->nodes + (uint64_t)2)
		return bad(err, "store %s section is corrupt", "dominator");
	if (sec_max32(v, HD__SEC_DOM_COUNT, s->nodes, 0, &m))
		return vr_error(v, HD_EIO, err);
	if (m > s->nodes)
		return bad(err, "store %s section is corrupt",
			   "retained count");
	return 0;
}

/*
 * The whole-store checks, one step each, in the order their first
 * failure is reported. They are independent (every size was checked
 * before), so a store file of at least PAR_NODES nodes has them run on
 * two threads, each taking its steps in this order and stopping at its
 * first failure: the failure reported is the first in this order, as
 * one thread finds it, and the time is about halved (each thread reads
 * about half the columns).
 */
enum {
	ST_STRINGS, ST_NODES, ST_TABLES, ST_CLASSX, ST_MEMSIZE, ST_GEN,
	ST_SIZE, ST_REFS, ST_REV, ST_ROOTS, ST_DOM, ST__N
};
#define PAR_NODES 65536u
/* the steps of the second thread: about half the bytes (ids ascending) */
#define ON_SECOND(i)                                                       \
	((i) == ST_MEMSIZE || (i) == ST_GEN || (i) == ST_SIZE ||          \
	 (i) == ST_REFS || (i) == ST_REV)

static int run_step(struct vread *v, int i, hd_error *err)
{
	const hd_store *s = v->s;
	uint64_t n = s->nodes;

	switch (i) {
	case ST_STRINGS:
		return check_strings(s, err);
	case ST_NODES:
		return check_nodes(v, err);
	case ST_TABLES:
		return check_tables(v, err);
	case ST_CLASSX:
		return check_wide(v, HD__SEC_CLASSX, HD__SEC_CLASS,
				  s->meta[HD__M_CLASSX], err);
	case ST_MEMSIZE:
		return check_wide(v, HD__SEC_MEMSIZE_WIDE, HD__SEC_MEMSIZE,
				  s->meta[HD__M_MEMSIZE_WIDE], err);
	case ST_GEN:
		return check_wide(v, HD__SEC_GEN_WIDE, HD__SEC_GENERATION,
				  s->meta[HD__M_GEN_WIDE], err);
	case ST_SIZE:
		return check_wide(v, HD__SEC_SIZE_WIDE, HD__SEC_SIZE,
				  s->meta[HD__M_SIZE_WIDE], err);
	case ST_REFS:
		return check_csr(v, HD__SEC_REFS_OFF, HD__SEC_REFS, n,
				 s->meta[HD__M_EDGES], n, err);
	case ST_REV:
		return check_csr(v, HD__SEC_REV_OFF, HD__SEC_REV, n,
				 s->meta[HD__M_EDGES], n, err);
	case ST_ROOTS:
		return check_csr(v, HD__SEC_ROOT_OFF, HD__SEC_ROOT_REFS,
				 s->meta[HD__M_ROOT_CATEGORIES],
				 s->meta[HD__M_ROOT_KEPT], n, err);
	default:
		return check_dom(v, err);
	}
}

/* One thread's share of the steps. */
struct steps {
	struct vread v;
	int second;         /* the steps ON_SECOND, else the others */
	int failed;         /* the first step that failed, or ST__N */
	int rc;
	hd_error err;
};

/* all: every step, in order, on this thread */
static void run_steps(struct steps *t, int all)
{
	int i;

	t->failed = ST__N;
	t->rc = 0;
	for (i = 0; i < ST__N; i++) {
		if (!all && !ON_SECOND(i) != !t->second)
			continue;
		if ((t->rc = run_step(&t->v, i, &t->err))) {
			t->failed = i;
			return;
		}
	}
}

static void *steps_thread(void *arg)
{
	run_steps(arg, 0);
	return NULL;
}

/* Every step, on two threads where it pays (a store file: s->map); the
 * first failure's rc. */
static int check_all(const hd_store *s, hd_error *err)
{
	struct steps t[2];
	struct hd__thread th;
	int k, rc = 0, two;

	memset(t, 0, sizeof(t));
	for (k = 0; k < 2; k++) {
		t[k].v.s = s;
		t[k].second = k;
		/* without a buffer, through the mapping */
		if (s->map)
			t[k].v.buf = hd__malloc(VREAD_CHUNK);
	}
	two = t[1].v.buf && s->nodes >= PAR_NODES &&
	      hd__thread_start(&th, 1, steps_thread, &t[1]) == 0;
	run_steps(&t[0], !two);
	if (two)
		pthread_join(th.tid, NULL);
	else
		t[1].failed = ST__N;
	k = t[1].failed < t[0].failed;
	if (t[k].failed < ST__N) {
		rc = t[k].rc;
		if (err)
			*err = t[k].err;
	}
	for (k = 0; k < 2; k++)
		hd__free(t[k].v.buf, VREAD_CHUNK);
	return rc;
}

int hd__store_validate(hd_store *s, int full, hd_error *err)
{
	int id, rc;

	if ((rc = load_meta(s, err)))
		return rc;
	for (id = 1; id < HD__SEC__COUNT; id++)
		if (s->len[id] != want_size(s, id) &&
		    (id < HD__SEC__REQUIRED || s->sec[id]))
			return bad(err, "store %s section is the wrong size",
				   sec_name((uint32_t)id));
	for (id = HD__SEC_DOM_INFO; id <= HD__SEC_DOM_MEM; id++)
		if (!s->sec[id] != !s->sec[HD__SEC_DOM_INFO])
			return bad(err, "store %s section is missing",
				   s->sec[id] ? "dominator info" :
						sec_name((uint32_t)id));
	/* the children orders: both or none, and only with the tree */
	for (id = HD__SEC_DOM_KIDS_OFF; id <= HD__SEC_DOM_KIDS; id++)
		if (s->sec[id] && (!s->sec[HD__SEC_DOM_INFO] ||
				   !s->sec[HD__SEC_DOM_KIDS_OFF] ||
				   !s->sec[HD__SEC_DOM_KIDS]))
			return bad(err, "store %s section is missing",
				   !s->sec[HD__SEC_DOM_INFO] ? "dominator info" :
				   sec_name((uint32_t)(HD__SEC_DOM_KIDS_OFF +
						       HD__SEC_DOM_KIDS - id)));
	if ((rc = hd__store_names_check(s, full, err)) ||
	    (rc = hd__store_stats_check(s, err)) ||
	    (rc = hd__store_stacks_check(s, full, err)))
		return rc;
	if (!full) {
		fill_info(s);
		return 0;
	}
	if ((rc = check_all(s, err)))
		return rc;
	release_pages(s);
	fill_info(s);
	return 0;
}


/* ---- header and section table ---- */

struct ent {
	uint32_t id;
	uint64_t off, size;
};

static int check_overlaps(struct ent *e, uint32_t n, hd_error *err)
{
	uint32_t i, j;
	struct ent t;

	for (i = 1; i < n; i++) {
		t = e[i];
		for (j = i; j > 0 && e[j - 1].off > t.off; j--)
			e[j] = e[j - 1];
		e[j] = t;
	}
	for (i = 1; i < n; i++)
		if (e[i - 1].off + e[i - 1].size > e[i].off)
			return hd__error(err, HD_EFORMAT,
					 "store %s and %s sections overlap",
					 sec_name(e[i - 1].id),
					 sec_name(e[i].id));
	return 0;
}

/*
 * Sections (sorted by offset) tile the file as a writer lays them out:
 * each at the 8-byte boundary after the table or the one before, the
 * last ending the file. Else a table that lost an entry (its count
 * lowered, the last optional section dropped) would open as a store
 * without it.
 */
static int check_tiling(const struct ent *e, uint32_t n, uint64_t table_end,
			uint64_t fsize, hd_error *err)
{
	uint64_t pos = (table_end + HD__STORE_ALIGN - 1) &
		       ~(uint64_t)(HD__STORE_ALIGN - 1);
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (e[i].off != pos)
			return hd__error(err, HD_EFORMAT,
					 "store %s section is not where the "
					 "table's layout puts it",
					 sec_name(e[i].id));
		pos = (pos + e[i].size + HD__STORE_ALIGN - 1) &
		      ~(uint64_t)(HD__STORE_ALIGN - 1);
	}
	if (pos != fsize)
		return hd__error(err, HD_EFORMAT,
				 "store file has %llu bytes no section holds",
				 (unsigned long long)(fsize - pos));
	return 0;
}

static int parse_entry(hd_store *s, const unsigned char *base, uint32_t i,
		       uint64_t fsize, uint64_t table_end, struct ent *e,
		       hd_error *err)
{
	const unsigned char *p = base + HD__STORE_HEADER +
				 (size_t)i * HD__STORE_ENTRY;
	uint32_t id = hd__le32(p), flags = hd__le32(p + 4);

	e->id = id;
	e->off = hd__le64(p + 8);
	e->size = hd__le64(p + 16);
	if (flags & ~HD__SECF_OPTIONAL)
		return hd__error(err, HD_EFORMAT,
				 "store section %u has unknown flags", id);
	if (e->off % HD__STORE_ALIGN)
		return hd__error(err, HD_EFORMAT,
				 "store section %u is misaligned", id);
	if (e->off < table_end)
		return hd__error(err, HD_EFORMAT,
				 "store section %u overlaps the header", id);
	if (e->off > fsize || e->size > fsize - e->off)
		return hd__error(err, HD_EFORMAT,
				 "store section %u is out of bounds", id);
	if (id == 0 || id >= HD__SEC__COUNT || HD__SEC_RESERVED(id)) {
		if (flags & HD__SECF_OPTIONAL)
			return 0;
		return hd__error(err, HD_EFORMAT,
				 "store section %u is unknown", id);
	}
	if (s->sec[id])
		return bad(err, "store %s section appears twice",
			   sec_name(id));
	s->sec[id] = base + e->off;
	s->len[id] = e->size;
	return 0;
}

/* Parses the header and section table of base[0..fsize). */
static int parse_layout(hd_store *s, const unsigned char *base,
			uint64_t fsize, hd_error *err)
{
	struct ent e[HD__STORE_MAX_SECTIONS];
	uint32_t version, count, i;
	uint64_t declared, table_end;
	int rc, id;

	if (fsize < HD__STORE_MAGIC_LEN ||
	    memcmp(base, HD__STORE_MAGIC, HD__STORE_MAGIC_LEN))
		return hd__error(err, HD_EFORMAT, "not a heapdump store");
	if (fsize < HD__STORE_HEADER)
		return hd__error(err, HD_EFORMAT, "store header is truncated");
	version = hd__le32(base + 8);
	count = hd__le32(base + 12);
	declared = hd__le64(base + 16);
	if (version == 1)
		return hd__error(
			err, HD_EFORMAT,
			"store version 1 was written by an older "
			"heapdump (its graph has no class references): "
			"index the dump again");
	if (version != HD__STORE_VERSION)
		return hd__error(err, HD_EFORMAT,
				 "store version %u is not supported", version);
	if (declared != fsize)
		return hd__error(err, HD_EFORMAT,
				 "store file is %s (%llu bytes, header says "
				 "%llu)", fsize < declared ? "truncated" :
							    "too long",
				 (unsigned long long)fsize,
				 (unsigned long long)declared);
	if (hd__le64(base + 24))
		return hd__error(err, HD_EFORMAT,
				 "store header has unknown flags");
	if (!count || count > HD__STORE_MAX_SECTIONS)
		return hd__error(err, HD_EFORMAT,
				 "store section count %u is invalid", count);
	table_end = HD__STORE_HEADER + (uint64_t)count * HD__STORE_ENTRY;
	if (table_end > fsize)
		return hd__error(err, HD_EFORMAT,
				 "store section table is truncated");
	for (i = 0; i < count; i++)
		if ((rc = parse_entry(s, base, i, fsize, table_end, &e[i],
				      err)))
			return rc;
	if ((rc = check_overlaps(e, count, err)) ||
	    (rc = check_tiling(e, count, table_end, fsize, err)))
		return rc;
	for (id = 1; id < HD__SEC__REQUIRED; id++)
		if (!s->sec[id])
			return bad(err, "store has no %s section",
				   sec_name((uint32_t)id));
	return 0;
}

/* ---- open / close ---- */

void hd__store_gathered_free(hd_store *s)
{
	struct hd__gathered *g = s ? s->gathered : NULL;
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nchunk; i++)
		hd__free(g->chunk[i].p, g->chunk[i].cap);
	hd__free(g->chunk, g->chunk_cap * sizeof(*g->chunk));
	hd__free(g->node, (g->n ? g->n : 1) * sizeof(*g->node));
	hd__free(g, sizeof(*g));
	s->gathered = NULL;
}

void hd__store_release(hd_store *s)
{
	int i;

	if (!s)
		return;
	hd__store_gathered_free(s);
	hd__store_spill_release(s);
#ifndef HD_NO_MMAP
	if (s->map) {
		hd__unmap_file(s->map, s->map_len);
		close(s->fd);
	}
#endif
	hd__free(s->buf, s->buf_len);
	for (i = 0; i < HD__SEC__COUNT; i++)
		hd__free(s->own[i], s->own_len[i]);
	hd__free(s->source_found, s->source_found_len);
	hd__free(s, sizeof(*s));
}

void hd_store_close(hd_store *s)
{
	hd__store_release(s);
}


/* Maps (or reads) the whole file into s. */
/* Reads n bytes at off, whatever the file position. */
static int pread_all(int fd, unsigned char *p, size_t n, uint64_t off)
{
	ssize_t k;

	while (n) {
		k = pread(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			errno = EIO;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* Maps the file, or reads it into memory: with HD_NO_MMAP, and for a
 * file that another user could change under us (not ours, or writable
 * by group or others), whose sections must not change after their
 * check (a private mapping of a file shows what its writer writes). */
static int load_file(hd_store *s, int fd, const char *path,
		     const struct stat *st, const unsigned char **base,
		     hd_error *err)
{
	size_t size = (size_t)st->st_size;
#ifndef HD_NO_MMAP
	const char *m;

	if (st->st_uid == geteuid() && !(st->st_mode & 022)) {
		/* registered for hd_mapped_path (filemap.c) */
		if (!(m = hd__map_file(fd, size, path)))
			return sys_fail(err, "map", path);
		s->map = (void *)(uintptr_t)m;
		s->map_len = size;
		*base = (const unsigned char *)m;
		return 0;
	}
#endif
	s->buf = hd__malloc(size ? size : 1);
	if (!s->buf)
		return hd__error(err, HD_ENOMEM, "out of memory");
	s->buf_len = size ? size : 1;
	if (pread_all(fd, s->buf, size, 0))
		return sys_fail(err, "read", path);
	*base = s->buf;
	return 0;
}

/* Points s->info.source_path at dir/name (dir: the first dlen bytes of
 * the store's path) when that file is the dump indexed; 0 if it is. */
static int try_beside(hd_store *s, const char *dir, size_t dlen,
		      const char *name)
{
	size_t n = dlen + strlen(name) + 1;
	char *p = hd__malloc(n);
	hd_error e = { 0 };

	if (!p)
		return -1;
	memcpy(p, dir, dlen);
	strcpy(p + dlen, name);
	if (hd_store_check_source(s, p, &e)) {
		hd__free(p, n);
		return -1;
	}
	s->source_found = p;
	s->source_found_len = n;
	s->info.source_path = p;
	return 0;
}

/*
 * A store records the path its dump was given by (absolute since the
 * dump is indexed by its real path, relative in older stores). When no
 * file is there any more, or a relative path is read from another
 * directory, the dump is looked for beside the store: by the recorded
 * path taken from the store's directory, then by its file name alone
 * (a store and its dump moved together). A candidate is used only if it
 * is the very dump indexed (size and fingerprint); otherwise the
 * recorded path stays, and reading records says what is wrong with it.
 */
static void find_source(hd_store *s, const char *store_path)
{
	const char *rec = s->info.source_path, *slash, *base;
	size_t dlen;
	struct stat st;

	if (!rec || !*rec || strcmp(rec, "-") == 0 || stat(rec, &st) == 0)
		return;
	slash = strrchr(store_path, '/');
	dlen = slash ? (size_t)(slash - store_path) + 1 : 0;
	base = strrchr(rec, '/');
	base = base ? base + 1 : rec;
	if (!*base)
		return;
	if (rec[0] != '/' && try_beside(s, store_path, dlen, rec) == 0)
		return;
	(void)try_beside(s, store_path, dlen, base);
}

int hd__store_open_fd(hd_store **out, int fd, const char *path,
		      hd_error *err)
{
	hd_store *s = NULL;
	const unsigned char *base = NULL;
	unsigned char head[HD__STORE_MAGIC_LEN];
	struct stat st;
	int rc, trusted;

	HD_ASSERT_ARG(out && fd >= 0 && path);
	*out = NULL;
	if (fstat(fd, &st)) {
		rc = sys_fail(err, "stat", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < HD__STORE_MAGIC_LEN ||
	    pread_all(fd, head, sizeof(head), 0) ||
	    memcmp(head, HD__STORE_MAGIC, sizeof(head))) {
		rc = hd__error(err, HD_EFORMAT, "'%s' is not a heapdump store",
			       path);
		goto out;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		rc = hd__error(err, HD_ELIMIT, "'%s' is too large to map",
			       path);
		goto out;
	}
	if (!(s = hd__calloc(1, sizeof(*s)))) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = load_file(s, fd, path, &st, &base, err)))
		goto out;
	if (s->map) {
		s->fd = fd; /* closed with the mapping */
		fd = -1;
	}
	/* a mapped store that passed the whole check before, unchanged
	 * since, is not read through again (store_trust.c) */
	trusted = s->map && hd__store_checked(&st);
	if ((rc = parse_layout(s, base, (uint64_t)st.st_size, err)) ||
	    (rc = hd__store_validate(s, !trusted, err)))
		goto out;
	if (s->map && !trusted)
		hd__store_keep_checked(&st);
	find_source(s, path);
	*out = s;
	s = NULL;
out:
	hd__store_release(s);
	if (fd >= 0)
		close(fd);
	return rc;
}

int hd_store_open(hd_store **out, const char *path, hd_error *err)
{
	int fd;

	HD_ASSERT_ARG(out && path);
	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sys_fail(err, "open", path);
	return hd__store_open_fd(out, fd, path, err);
}

int hd__store_set_source(hd_store *s, const char *path)
{
	size_t n = strlen(path) + 1;
	char *p = hd__malloc(n);

	if (!p)
		return -1;
	memcpy(p, path, n);
	hd__free(s->source_found, s->source_found_len);
	s->source_found = p;
	s->source_found_len = n;
	s->info.source_path = p;
	return 0;
}

/* A store from a copy of buf[0..len): hd_store_open() without a file. */
int hd__store_open_mem(hd_store **out, const void *buf, size_t len,
		       hd_error *err)
{
	hd_store *s;
	int rc;

	HD_ASSERT_ARG(out && (buf || !len));
	*out = NULL;
	if (!(s = hd__calloc(1, sizeof(*s))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (!(s->buf = hd__malloc(len))) {
		hd__store_release(s);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	s->buf_len = len;
	if (len)
		memcpy(s->buf, buf, len);
	if ((rc = parse_layout(s, s->buf, len, err)) ||
	    (rc = hd__store_validate(s, 1, err))) {
		hd__store_release(s);
		return rc;
	}
	*out = s;
	return 0;
}

int hd_store_is_store(const char *path)
{
	unsigned char head[HD__STORE_MAGIC_LEN];
	struct stat st;
	int fd, ok;

	/* A store is a regular file. Anything else is not opened here: a
	 * named pipe opened twice (here, then by the reader) would lose
	 * its writer and block the reader forever. */
	if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ok = !pread_all(fd, head, sizeof(head), 0) &&
	     !memcmp(head, HD__STORE_MAGIC, sizeof(head));
	close(fd);
	return ok;
}

/* ---- fingerprint and staleness ---- */

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}


int hd__store_fingerprint(const char *path, uint64_t *fp, uint32_t *kind,
			  uint64_t *size, uint64_t *mtime, hd_error *err)
{
	unsigned char *buf = NULL, le[8];
	struct stat st;
	uint64_t h = 0xcbf29ce484222325ULL, n, head, tail;
	int fd, rc = 0;

	*fp = *size = *mtime = 0;
	*kind = HD__FP_NONE;
	/* only a regular file can be read again: a pipe is not opened (a
	 * named one would block until a new writer comes) */
	if (stat(path, &st) != 0)
		return sys_fail(err, "open", path);
	if (!S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sys_fail(err, "open", path);
	if (fstat(fd, &st)) {
		rc = sys_fail(err, "stat", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode))
		goto out;
	n = (uint64_t)st.st_size;
	*size = n;
	*mtime = st.st_mtime > 0 ? (uint64_t)st.st_mtime : 0;
	head = n < HD__FP_SPAN ? n : HD__FP_SPAN;
	tail = head;
	if (!(buf = hd__malloc(2 * (size_t)HD__FP_SPAN))) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	if (pread_all(fd, buf, (size_t)head, 0) ||
	    pread_all(fd, buf + HD__FP_SPAN, (size_t)tail, n - tail)) {
		rc = sys_fail(err, "read", path);
		goto out;
	}
	hd__put_le64(le, n);
	h = fnv(h, le, 8);
	h = fnv(h, buf, (size_t)head);
	h = fnv(h, buf + HD__FP_SPAN, (size_t)tail);
	*fp = h;
	*kind = head >= 2 && buf[0] == 0x1f && buf[1] == 0x8b ? HD__FP_GZIP :
								HD__FP_PLAIN;
out:
	hd__free(buf, 2 * (size_t)HD__FP_SPAN);
	close(fd);
	return rc;
}

int hd_store_check_source(const hd_store *s, const char *path, hd_error *err)
{
	uint64_t fp, size, mtime;
	uint32_t kind;
	int rc;

	HD_ASSERT_ARG(s && path);
	if ((rc = hd__store_fingerprint(path, &fp, &kind, &size, &mtime, err)))
		return rc;
	if (s->meta[HD__M_FP_KIND] == HD__FP_NONE) {
		if (kind == HD__FP_PLAIN && size == s->info.source_size)
			return 0;
	} else if (kind == s->meta[HD__M_FP_KIND] &&
		   fp == s->info.source_fingerprint &&
		   (kind != HD__FP_PLAIN || size == s->info.source_size)) {
		return 0;
	}
	return hd__error(err, HD_ESTALE,
			 "'%s' changed since it was indexed", path);
}

/* ---- accessors ---- */

void hd_store_info_get(hd_store_info *info, const hd_store *s)
{
	*info = s->info;
}

uint32_t hd_store_node_count(const hd_store *s)
{
	return s->nodes;
}

hd_node_id hd_store_find(const hd_store *s, uint64_t address)
{
	uint32_t lo = 0, hi = s->nodes, mid;
	uint64_t a;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		a = col64(s, HD__SEC_ADDRESS, mid);
		if (a == address)
			return mid;
		if (a < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return HD_NODE_NONE;
}

uint64_t hd_store_address(const hd_store *s, hd_node_id id)
{
	return id < s->nodes ? col64(s, HD__SEC_ADDRESS, id) : 0;
}

int hd_store_type(const hd_store *s, hd_node_id id)
{
	return id < s->nodes ? s->sec[HD__SEC_TYPE][id] : HD_T_UNKNOWN;
}

hd_node_id hd_store_class(const hd_store *s, hd_node_id id)
{
	return id < s->nodes ? col32(s, HD__SEC_CLASS, id) : HD_NODE_NONE;
}

/* The value of node id in a wide table, or 0. */
static uint64_t wide(const hd_store *s, int sec, hd_node_id id)
{
	const unsigned char *p = s->sec[sec];
	uint64_t lo = 0, hi = s->len[sec] / HD__WIDE_SIZE, mid;
	uint32_t n;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		n = hd__le32(p + mid * HD__WIDE_SIZE);
		if (n == id)
			return hd__le64(p + mid * HD__WIDE_SIZE + 8);
		if (n < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

uint64_t hd_store_class_address(const hd_store *s, hd_node_id id)
{
	uint32_t c;

	if (id >= s->nodes)
		return 0;
	c = col32(s, HD__SEC_CLASS, id);
	if (c != HD_NODE_NONE)
		return c < s->nodes ? col64(s, HD__SEC_ADDRESS, c) : 0;
	return wide(s, HD__SEC_CLASSX, id);
}

static uint64_t wide_col(const hd_store *s, int sec, int wsec,
			 hd_node_id id)
{
	uint32_t v = col32(s, sec, id);

	return v == HD__ESC ? wide(s, wsec, id) : v;
}

uint64_t hd_store_memsize(const hd_store *s, hd_node_id id)
{
	return id < s->nodes ?
		       wide_col(s, HD__SEC_MEMSIZE, HD__SEC_MEMSIZE_WIDE, id) :
		       0;
}

uint64_t hd_store_generation(const hd_store *s, hd_node_id id)
{
	uint32_t v;

	if (id >= s->nodes || !(s->meta[HD__M_COLUMNS] & HD__COL_GENERATION))
		return UINT64_MAX;
	v = col32(s, HD__SEC_GENERATION, id);
	if (v == HD__ESC)
		return wide(s, HD__SEC_GEN_WIDE, id);
	return v ? v - 1 : UINT64_MAX;
}

/* The SIZE column as stored: HD__SIZE_NONE for a node whose type has a
 * length (store_build.c) but whose record gave none. */
static uint64_t raw_size(const hd_store *s, hd_node_id id)
{
	return wide_col(s, HD__SEC_SIZE, HD__SEC_SIZE_WIDE, id);
}

uint64_t hd_store_size(const hd_store *s, hd_node_id id)
{
	uint64_t v;

	if (id >= s->nodes)
		return 0;
	v = raw_size(s, id);
	return v == HD__SIZE_NONE ? 0 : v;
}

int hd_store_length(uint64_t *len, const hd_store *s, hd_node_id id)
{
	uint64_t v;

	if (id >= s->nodes)
		return 0;
	switch (hd_store_type(s, id)) {
	case HD_T_STRING:
		if (hd_store_bits(s, id) & HD_B_SHARED)
			return 0;
		break;
	case HD_T_ARRAY:
	case HD_T_HASH:
		break;
	case HD_T_STRUCT:
		if (!raw_size(s, id))
			return 0;
		break;
	default:
		return 0;
	}
	v = raw_size(s, id);
	if (v == HD__SIZE_NONE)
		return 0;
	*len = v;
	return 1;
}

uint32_t hd_store_bits(const hd_store *s, hd_node_id id)
{
	const unsigned char *p;

	if (id >= s->nodes)
		return 0;
	p = s->sec[HD__SEC_BITS] + (size_t)id * 2;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

uint64_t hd_store_offset(const hd_store *s, hd_node_id id)
{
	return id < s->nodes ? col64(s, HD__SEC_OFFSET, id) : 0;
}

/* String sid (validated) and its length. */
static const char *str(const hd_store *s, uint32_t sid, size_t *len)
{
	uint32_t a, b;

	if (sid >= s->nstrings)
		return NULL;
	a = col32(s, HD__SEC_STROFFS, sid);
	b = col32(s, HD__SEC_STROFFS, sid + 1);
	if (len)
		*len = b - a - 1;
	return (const char *)s->sec[HD__SEC_STRINGS] + a;
}

int hd_store_site(hd_site *site, const hd_store *s, hd_node_id id)
{
	const unsigned char *p;
	uint32_t sid;

	memset(site, 0, sizeof(*site));
	if (id >= s->nodes || !(s->meta[HD__M_COLUMNS] & HD__COL_SITE))
		return HD_ENOTFOUND;
	sid = col32(s, HD__SEC_SITE, id);
	if (sid >= s->meta[HD__M_SITES])
		return HD_ENOTFOUND;
	p = s->sec[HD__SEC_SITES] + (size_t)sid * HD__SITE_SIZE;
	site->file = str(s, hd__le32(p), &site->file_len);
	site->method = str(s, hd__le32(p + 4), &site->method_len);
	site->line = hd__le64(p + 8);
	return 0;
}

uint32_t hd__store_site_id(const hd_store *s, hd_node_id id,
			   uint32_t *nsites)
{
	uint32_t sid;

	*nsites = (uint32_t)s->meta[HD__M_SITES];
	if (id >= s->nodes || !(s->meta[HD__M_COLUMNS] & HD__COL_SITE))
		return HD_NODE_NONE;
	sid = col32(s, HD__SEC_SITE, id);
	return sid < *nsites ? sid : HD_NODE_NONE;
}

const char *hd_store_aux(const hd_store *s, hd_node_id id, size_t *len)
{
	if (len)
		*len = 0;
	if (id >= s->nodes)
		return NULL;
	return str(s, col32(s, HD__SEC_AUX, id), len);
}

/* The CLASSES entry of class node c, or NULL. */
static const unsigned char *class_entry(const hd_store *s, hd_node_id c)
{
	const unsigned char *p = s->sec[HD__SEC_CLASSES];
	uint64_t lo = 0, hi = s->meta[HD__M_CLASSES], mid;
	uint32_t n;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		n = hd__le32(p + mid * HD__CLASS_SIZE);
		if (n == c)
			return p + mid * HD__CLASS_SIZE;
		if (n < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Can an object of type t have a class edge (store_build.c's rule)? */
static int has_instance_class(int t)
{
	return t != HD_T_UNKNOWN && t != HD_T_NONE && t != HD_T_IMEMO &&
	       t != HD_T_NODE && t != HD_T_ZOMBIE;
}

int hd__store_class_edge(const hd_store *s, hd_node_id id, uint32_t *k)
{
	const unsigned char *e;
	uint32_t c, a, b;

	if (!s->meta[HD__M_CLASS_EDGES] || id >= s->nodes ||
	    !has_instance_class(s->sec[HD__SEC_TYPE][id]) ||
	    (c = col32(s, HD__SEC_CLASS, id)) == HD_NODE_NONE)
		return 0;
	a = col32(s, HD__SEC_REFS_OFF, id);
	b = col32(s, HD__SEC_REFS_OFF, (uint64_t)id + 1);
	if (a >= b || col32(s, HD__SEC_REFS, (uint64_t)b - 1) != c ||
	    !(e = class_entry(s, c)) || !(hd__le32(e + 12) & HD__CLS_EDGE))
		return 0;
	if (k)
		*k = b - 1 - a;
	return 1;
}

size_t hd_store_class_name(char *buf, size_t size, const hd_store *s,
			   hd_node_id id)
{
	const unsigned char *e = NULL;
	const char *real = NULL, *aux = NULL;
	size_t rl = 0, al = 0;
	uint32_t c;
	int type;

	if (id >= s->nodes) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	type = s->sec[HD__SEC_TYPE][id];
	c = col32(s, HD__SEC_CLASS, id);
	if (c != HD_NODE_NONE)
		e = class_entry(s, c);
	if (e)
		real = str(s, hd__le32(e + 8), &rl);
	if (type == HD_T_IMEMO || type == HD_T_NODE || type == HD_T_DATA)
		aux = hd_store_aux(s, id, &al);
	return hd__class_name_fmt(buf, size, type,
				  hd_store_class_address(s, id), real, rl,
				  aux, al, NULL);
}

/*
 * Ruby 4.0 keeps the ivars of a class, and of an object that is no
 * T_OBJECT, in an IMEMO of imemo_type "fields" whose class is that owning
 * object. The owner when id is such an IMEMO and its owner is in the
 * dump, else NONE.
 */
static hd_node_id fields_owner(const hd_store *s, hd_node_id id)
{
	const char *aux;
	size_t len;
	hd_node_id o;

	if (hd_store_type(s, id) != HD_T_IMEMO ||
	    !(aux = hd_store_aux(s, id, &len)) || len != 6 ||
	    memcmp(aux, "fields", 6))
		return HD_NODE_NONE;
	o = hd_store_class(s, id);
	if (o == HD_NODE_NONE || hd_store_type(s, o) == HD_T_IMEMO)
		return HD_NODE_NONE;
	return o;
}

size_t hd_store_node_name(char *buf, size_t size, const hd_store *s,
			  hd_node_id id)
{
	static const char ivars[] = "ivars of ";
	int t = hd_store_type(s, id);
	const char *aux;
	size_t len;
	hd_node_id o = fields_owner(s, id);

	if (o != HD_NODE_NONE) {
		/* read as part of its owner: "ivars of LeakyCache" */
		char tmp[1];
		size_t k = sizeof(ivars) - 1;

		if (size <= k) {
			if (size) {
				memcpy(buf, ivars, size - 1);
				buf[size - 1] = '\0';
			}
			return k + hd_store_node_name(tmp, 0, s, o);
		}
		memcpy(buf, ivars, k);
		return k + hd_store_node_name(buf + k, size - k, s, o);
	}
	if (t == HD_T_CLASS || t == HD_T_MODULE || t == HD_T_ICLASS) {
		aux = hd_store_aux(s, id, &len);
		if (aux && len) {
			if (size) {
				size_t k = len < size ? len : size - 1;

				memcpy(buf, aux, k);
				buf[k] = '\0';
			}
			return len;
		}
	}
	return hd_store_class_name(buf, size, s, id);
}

/* ---- edges and roots ---- */

/* Edges [off[i], off[i + 1]) of a validated CSR; empty out of range. */
static void iter(const hd_store *s, int off, int tgt, uint64_t i, uint64_t n,
		 hd_edge_iter *it)
{
	uint32_t a, b;

	it->p = it->end = NULL;
	if (i >= n)
		return;
	a = col32(s, off, i);
	b = col32(s, off, i + 1);
	if (a > b || (uint64_t)b * 4 > s->len[tgt])
		return;
	it->p = s->sec[tgt] + (size_t)a * 4;
	it->end = s->sec[tgt] + (size_t)b * 4;
}

void hd_store_refs(const hd_store *s, hd_node_id id, hd_edge_iter *it)
{
	iter(s, HD__SEC_REFS_OFF, HD__SEC_REFS, id, s->nodes, it);
}

void hd_store_referrers(const hd_store *s, hd_node_id id, hd_edge_iter *it)
{
	iter(s, HD__SEC_REV_OFF, HD__SEC_REV, id, s->nodes, it);
}

/* ---- optional sections ---- */

const unsigned char *hd__store_copy(const hd_store *s, int sid,
				    uint64_t off, size_t n, unsigned char *buf)
{
	const unsigned char *img = s->sec[sid];

	if (s->spill_map[sid])
		return pread_all(s->spill_fd, buf, n, s->spill_off[sid] + off) ?
			       NULL :
			       buf;
	if (!s->map)
		return img + off;
	if (pread_all(s->fd, buf, n,
		      (uint64_t)(img - (const unsigned char *)s->map) + off))
		return NULL;
	return buf;
}

const unsigned char *hd__store_section(const hd_store *s, int sid,
				       uint64_t *len)
{
	if (sid <= 0 || sid >= HD__SEC__COUNT) {
		*len = 0;
		return NULL;
	}
	*len = s->len[sid];
	return s->sec[sid];
}

int hd__store_attach(hd_store *s, const int *sid, void *const *img,
		     const size_t *len, size_t n, hd_error *err)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (sid[k] < HD__SEC__REQUIRED || sid[k] >= HD__SEC__COUNT)
			return hd__error(err, HD_EINVAL,
					 "invalid argument: section %d", sid[k]);
	if (s->map || s->buf)
		return hd__error(err, HD_EINVAL,
				 "invalid argument: an opened store");
	for (k = 0; k < n; k++) {
		hd__store_spill_drop(s, sid[k]);
		hd__free(s->own[sid[k]], s->own_len[sid[k]]);
		s->own[sid[k]] = img[k];
		s->own_len[sid[k]] = len[k] ? len[k] : 1;
		s->sec[sid[k]] = img[k];
		s->len[sid[k]] = len[k];
	}
	hd__store_spill_more(s);
	return 0;
}

void hd__store_csr(const hd_store *s, int reverse, struct hd__csr *out)
{
	int tgt = reverse ? HD__SEC_REV : HD__SEC_REFS;

	memset(out, 0, sizeof(*out));
	out->n = s->nodes;
	out->off_le = s->sec[reverse ? HD__SEC_REV_OFF : HD__SEC_REFS_OFF];
	out->adj_le = s->sec[tgt];
	out->e = s->len[tgt] / 4;
}

int hd_edge_iter_next(hd_edge_iter *it, hd_node_id *out)
{
	if (!it->p || it->p >= it->end)
		return HD_ITEROVER;
	*out = hd__le32(it->p);
	it->p += 4;
	return 0;
}

uint32_t hd_edge_iter_count(const hd_edge_iter *it)
{
	return it->p && it->p < it->end ? (uint32_t)((it->end - it->p) / 4) :
					  0;
}

uint32_t hd_store_root_count(const hd_store *s)
{
	return (uint32_t)s->meta[HD__M_ROOT_CATEGORIES];
}

const char *hd_store_root_name(const hd_store *s, uint32_t i)
{
	if (i >= s->meta[HD__M_ROOT_CATEGORIES])
		return NULL;
	return str(s, col32(s, HD__SEC_ROOT_NAMES, i), NULL);
}

void hd_store_root_refs(const hd_store *s, uint32_t i, hd_edge_iter *it)
{
	iter(s, HD__SEC_ROOT_OFF, HD__SEC_ROOT_REFS, i,
	     s->meta[HD__M_ROOT_CATEGORIES], it);
}
