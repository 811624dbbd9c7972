/*
 * t_store_corrupt.c - damaged store files: truncated at every section
 * boundary and every offset, bytes flipped in the header, in every
 * section table entry and in every section. Each must fail with
 * HD_EFORMAT, or open and then read without a crash or an out-of-bounds
 * read (run under `make SANITIZE=address,undefined check`, which reads
 * stores into the heap so ASan sees every access). Known damages must
 * give their exact message.
 */
#include "t.h"
#include "hd_int.h"
#include "store_format.h"
#include "store_fixture.h"

static unsigned char *good;
static size_t good_n;

struct sec {
	uint32_t id;
	uint64_t off, size;
};

static struct sec secs[HD__SEC__COUNT];
static unsigned nsecs;
static unsigned long opened, refused;
static char last_msg[256];

static int setup(void)
{
	hd_store *s = NULL;
	hd_error err;
	unsigned i;

	if (good)
		return 0;
	if (fx_write(fx_path("f.json"), fixture_dump, strlen(fixture_dump)) ||
	    hd_store_build(&s, fx_path("f.json"), NULL, &err) ||
	    hd_store_write(s, fx_path("good.hds"), &err))
		return -1;
	hd_store_close(s);
	if (!(good = fx_read(fx_path("good.hds"), &good_n)))
		return -1;
	nsecs = hd__le32(good + 12);
	for (i = 0; i < nsecs && i < HD__SEC__COUNT; i++) {
		const unsigned char *e = good + 32 + i * 24;

		secs[i].id = hd__le32(e);
		secs[i].off = hd__le64(e + 8);
		secs[i].size = hd__le64(e + 16);
	}
	return 0;
}

static const struct sec *sec_of(uint32_t id)
{
	unsigned i;

	for (i = 0; i < nsecs; i++)
		if (secs[i].id == id)
			return &secs[i];
	return NULL;
}

/*
 * Opens img as a store file. A refusal must be HD_EFORMAT; a store that
 * opens is read entirely. Returns the open's code.
 */
static int try_img(const unsigned char *img, size_t n)
{
	hd_store *s = NULL;
	hd_error err;
	int rc;

	if (fx_write(fx_path("c.hds"), img, n))
		return -100;
	memset(&err, 0, sizeof(err));
	rc = hd_store_open(&s, fx_path("c.hds"), &err);
	snprintf(last_msg, sizeof(last_msg), "%s", err.msg);
	if (rc == 0) {
		opened++;
		fx_walk(s);
		hd_store_close(s);
	} else {
		refused++;
		if (s)
			return -101;
		/* every refusal says what is wrong */
		if (!err.msg[0] || err.code != rc)
			return -103;
	}
	return rc;
}

/* try_img on a copy of the good store with one change. */
static int try_mut(size_t at, unsigned char xor_mask, size_t trunc)
{
	unsigned char *c = malloc(good_n);
	int rc;

	if (!c)
		return -102;
	memcpy(c, good, good_n);
	if (at < good_n)
		c[at] ^= xor_mask;
	rc = try_img(c, trunc < good_n ? trunc : good_n);
	free(c);
	return rc;
}

static void test_corrupt__good_opens(void)
{
	T_RC(setup(), 0);
	/* the required sections and the stats summary (store_stats.c) */
	T_EQ(nsecs, HD__SEC__REQUIRED);
	T_RC(try_img(good, good_n), 0);
}

static void test_corrupt__truncate_at_boundaries(void)
{
	unsigned i;
	int rc;

	T_RC(setup(), 0);
	for (i = 0; i < nsecs; i++) {
		uint64_t cut[4] = { secs[i].off, secs[i].off + 1,
				    secs[i].off + secs[i].size - 1,
				    secs[i].off + secs[i].size };
		int k;

		for (k = 0; k < 4; k++) {
			if (cut[k] >= good_n)
				continue;
			rc = try_mut(good_n, 0, (size_t)cut[k]);
			if (rc != HD_EFORMAT) {
				T_FAIL("cut at %llu (section %u): rc %d",
				       (unsigned long long)cut[k], secs[i].id,
				       rc);
				return;
			}
		}
	}
	T_RC(try_mut(good_n, 0, 0), HD_EFORMAT);
	T_ASSERT(strstr(last_msg, "is not a heapdump store"));
	T_RC(try_mut(good_n, 0, 20), HD_EFORMAT);
	T_STREQ(last_msg, "store header is truncated");
	T_RC(try_mut(good_n, 0, 100), HD_EFORMAT);
	T_ASSERT(strstr(last_msg, "store file is truncated (100 bytes, "));
}

static void test_corrupt__truncate_everywhere(void)
{
	size_t cut;
	int rc;

	T_RC(setup(), 0);
	for (cut = 0; cut < good_n; cut++) {
		rc = try_mut(good_n, 0, cut);
		if (rc != HD_EFORMAT) {
			T_FAIL("cut at %zu: rc %d", cut, rc);
			return;
		}
	}
}

static const unsigned char masks[] = { 0x01, 0x02, 0x10, 0x80, 0xff };

static void test_corrupt__header_bytes(void)
{
	size_t at, m;
	int rc;

	T_RC(setup(), 0);
	for (at = 0; at < HD__STORE_HEADER; at++)
		for (m = 0; m < sizeof(masks); m++) {
			rc = try_mut(at, masks[m], good_n);
			if (rc != HD_EFORMAT) {
				T_FAIL("header byte %zu ^ %#x: rc %d", at,
				       masks[m], rc);
				return;
			}
		}
}

/* Every byte of every table entry: refused, or harmless. */
static void test_corrupt__table_entries(void)
{
	size_t at, m, end = HD__STORE_HEADER + (size_t)nsecs * 24;
	unsigned long before = refused;
	int rc;

	T_RC(setup(), 0);
	end = HD__STORE_HEADER + (size_t)nsecs * 24;
	for (at = HD__STORE_HEADER; at < end; at++)
		for (m = 0; m < sizeof(masks); m++) {
			rc = try_mut(at, masks[m], good_n);
			if (rc != HD_EFORMAT && rc != 0) {
				T_FAIL("table byte %zu ^ %#x: rc %d", at,
				       masks[m], rc);
				return;
			}
		}
	/* ids, flags, sizes and most offsets cannot be changed unnoticed */
	T_ASSERT(refused - before > (end - HD__STORE_HEADER) * 4);
}

/* The first, last and some middle bytes of every section. */
static void test_corrupt__section_bytes(void)
{
	unsigned i, k;
	size_t m;
	int rc;

	T_RC(setup(), 0);
	for (i = 0; i < nsecs; i++) {
		uint64_t o = secs[i].off, z = secs[i].size;
		uint64_t at[6] = { o, o + 1, o + z / 2, o + z - 1, o + z - 4,
				   o + z - 8 };

		if (!z)
			continue;
		for (k = 0; k < 6; k++) {
			if (at[k] < o || at[k] >= o + z)
				continue;
			for (m = 0; m < sizeof(masks); m++) {
				rc = try_mut((size_t)at[k], masks[m], good_n);
				if (rc != HD_EFORMAT && rc != 0) {
					T_FAIL("section %u byte %llu: rc %d",
					       secs[i].id,
					       (unsigned long long)at[k], rc);
					return;
				}
			}
		}
	}
}

/* Every byte of the whole file, one mask: never a crash. */
static void test_corrupt__every_byte(void)
{
	size_t at;
	int rc;

	T_RC(setup(), 0);
	for (at = 0; at < good_n; at++) {
		rc = try_mut(at, 0x5a, good_n);
		if (rc != HD_EFORMAT && rc != 0) {
			T_FAIL("byte %zu: rc %d", at, rc);
			return;
		}
	}
}

/* Every bit of the header: each flip is refused. */
static void test_corrupt__header_bits(void)
{
	size_t at;
	unsigned bit;
	int rc;

	T_RC(setup(), 0);
	for (at = 0; at < HD__STORE_HEADER; at++)
		for (bit = 0; bit < 8; bit++) {
			rc = try_mut(at, (unsigned char)(1u << bit), good_n);
			if (rc != HD_EFORMAT) {
				T_FAIL("header byte %zu bit %u: rc %d", at, bit,
				       rc);
				return;
			}
		}
}

/*
 * Every bit of every byte within 4 bytes of each section boundary (the
 * last bytes of one section, the padding, the first bytes of the next)
 * and of every section table entry: refused with a message, or opened
 * and read whole without a fault; and the file cut at each of those
 * bytes: refused.
 */
static void test_corrupt__boundary_bits(void)
{
	size_t at, lo, hi, tried = 0;
	unsigned i, bit, edge;
	int rc;

	T_RC(setup(), 0);
	for (i = 0; i < nsecs; i++) {
		for (edge = 0; edge < 2; edge++) {
			size_t b = (size_t)(edge ? secs[i].off + secs[i].size :
						   secs[i].off);

			lo = b >= 4 ? b - 4 : 0;
			hi = b + 4 < good_n ? b + 4 : good_n;
			for (at = lo; at < hi; at++) {
				for (bit = 0; bit < 8; bit++) {
					rc = try_mut(at,
						     (unsigned char)(1u << bit),
						     good_n);
					if (rc != HD_EFORMAT && rc != 0) {
						T_FAIL("section %u, byte %zu bit "
						       "%u: rc %d", secs[i].id,
						       at, bit, rc);
						return;
					}
					tried++;
				}
				if (try_mut(good_n, 0, at) != HD_EFORMAT) {
					T_FAIL("cut at %zu: not refused", at);
					return;
				}
			}
		}
	}
	for (at = HD__STORE_HEADER;
	     at < HD__STORE_HEADER + (size_t)nsecs * 24; at++)
		for (bit = 0; bit < 8; bit++) {
			rc = try_mut(at, (unsigned char)(1u << bit), good_n);
			if (rc != HD_EFORMAT && rc != 0) {
				T_FAIL("table byte %zu bit %u: rc %d", at, bit,
				       rc);
				return;
			}
			tried++;
		}
	T_ASSERT(tried > nsecs * 64);
}

/* ---- exact messages ---- */

static unsigned char *copy(void)
{
	unsigned char *c = malloc(good_n + 64);

	if (c)
		memcpy(c, good, good_n);
	return c;
}

static unsigned char *at_sec(unsigned char *c, uint32_t id, uint64_t i,
			     unsigned w)
{
	const struct sec *s = sec_of(id);

	return c + s->off + i * w;
}

static unsigned char *entry_of(unsigned char *c, uint32_t id)
{
	unsigned i;

	for (i = 0; i < nsecs; i++)
		if (secs[i].id == id)
			return c + 32 + i * 24;
	return NULL;
}

#define EXPECT(c, n, want)                                                \
	do {                                                              \
		int rc_ = try_img((c), (n));                              \
		if (rc_ != HD_EFORMAT || strcmp(last_msg, (want))) {      \
			T_FAIL("rc %d, \"%s\", expected \"%s\"", rc_,     \
			       last_msg, (want));                         \
			free(c);                                          \
			return;                                           \
		}                                                         \
		memcpy((c), good, good_n);                                \
	} while (0)

static void test_corrupt__header_messages(void)
{
	unsigned char *c;
	char want[128];

	T_RC(setup(), 0);
	T_ASSERT((c = copy()) != NULL);
	c[0] = 'X';
	snprintf(want, sizeof(want), "'%s' is not a heapdump store",
		 fx_path("c.hds"));
	EXPECT(c, good_n, want);
	hd__put_le32(c + 8, 3);
	EXPECT(c, good_n, "store version 3 is not supported");
	/* a store from before the class edges: index it again */
	hd__put_le32(c + 8, 1);
	EXPECT(c, good_n, "store version 1 was written by an older heapdump "
			  "(its graph has no class references): index the "
			  "dump again");
	snprintf(want, sizeof(want),
		 "store file is too long (%zu bytes, header says %zu)",
		 good_n + 8, good_n);
	memset(c + good_n, 0, 8);
	EXPECT(c, good_n + 8, want);
	c[24] = 1;
	EXPECT(c, good_n, "store header has unknown flags");
	hd__put_le32(c + 12, 0);
	EXPECT(c, good_n, "store section count 0 is invalid");
	hd__put_le32(c + 12, 65);
	EXPECT(c, good_n, "store section count 65 is invalid");
	free(c);
}

static void test_corrupt__table_messages(void)
{
	unsigned char *c, *e;
	char want[128];

	T_RC(setup(), 0);
	T_ASSERT((c = copy()) != NULL);
	e = entry_of(c, HD__SEC_AUX);
	hd__put_le32(e + 4, 2);
	snprintf(want, sizeof(want), "store section %u has unknown flags",
		 HD__SEC_AUX);
	EXPECT(c, good_n, want);
	hd__put_le32(e, 99);
	EXPECT(c, good_n, "store section 99 is unknown");
	hd__put_le32(e, 99);
	hd__put_le32(e + 4, HD__SECF_OPTIONAL); /* skipped, so missing */
	EXPECT(c, good_n, "store has no aux section");
	hd__put_le32(e, HD__SEC_STRINGS);
	EXPECT(c, good_n, "store string section appears twice");
	hd__put_le64(e + 8, hd__le64(e + 8) + 4);
	snprintf(want, sizeof(want), "store section %u is misaligned",
		 HD__SEC_AUX);
	EXPECT(c, good_n, want);
	hd__put_le64(e + 8, good_n);
	hd__put_le64(e + 16, 8);
	snprintf(want, sizeof(want), "store section %u is out of bounds",
		 HD__SEC_AUX);
	EXPECT(c, good_n, want);
	hd__put_le64(e + 16, UINT64_MAX);
	EXPECT(c, good_n, want);
	hd__put_le64(e + 8, 8);
	snprintf(want, sizeof(want), "store section %u overlaps the header",
		 HD__SEC_AUX);
	EXPECT(c, good_n, want);
	hd__put_le64(e + 8, sec_of(HD__SEC_OFFSET)->off);
	EXPECT(c, good_n, "store aux and offset sections overlap");
	hd__put_le64(e + 16, hd__le64(e + 16) + 4);
	EXPECT(c, good_n, "store aux section is the wrong size");
	free(c);
}

static void test_corrupt__content_messages(void)
{
	unsigned char *c, *p;
	uint32_t n, e;

	T_RC(setup(), 0);
	T_ASSERT((c = copy()) != NULL);
	n = (uint32_t)hd__le64(at_sec(c, HD__SEC_META, HD__M_NODES, 8));
	e = (uint32_t)hd__le64(at_sec(c, HD__SEC_META, HD__M_EDGES, 8));
	T_ASSERT(n > 10 && e > 4);
	hd__put_le64(at_sec(c, HD__SEC_META, HD__M_NODES, 8), n + 1);
	EXPECT(c, good_n, "store address section is the wrong size");
	hd__put_le64(at_sec(c, HD__SEC_META, HD__M_NODES, 8), 0xffffffffULL);
	EXPECT(c, good_n, "store node count is out of range");
	hd__put_le64(at_sec(c, HD__SEC_META, HD__M_SOURCE_PATH, 8), 1u << 30);
	EXPECT(c, good_n, "store meta source path is out of range");
	hd__put_le64(at_sec(c, HD__SEC_META, HD__M_COLUMNS, 8), 4);
	EXPECT(c, good_n, "store meta has unknown column flags");
	hd__put_le32(at_sec(c, HD__SEC_REFS, 0, 4), n);
	EXPECT(c, good_n, "store edge section points out of range");
	hd__put_le32(at_sec(c, HD__SEC_REV, e - 1, 4), 0xffffffff);
	EXPECT(c, good_n, "store referrer section points out of range");
	/* two offsets swapped: still from 0 to E, no longer monotonic */
	for (p = at_sec(c, HD__SEC_REFS_OFF, 1, 4);
	     hd__le32(p) == hd__le32(p + 4); p += 4)
		;
	hd__put_le32(p + 4, hd__le32(p) - 1 + (hd__le32(p) == 0));
	if (hd__le32(p + 4) >= hd__le32(p)) /* p was 0: go down later */
		hd__put_le32(p, hd__le32(p + 4) + 1);
	EXPECT(c, good_n, "store edge offset section is not monotonic");
	hd__put_le32(at_sec(c, HD__SEC_REFS_OFF, n, 4), e + 1);
	EXPECT(c, good_n, "store edge offset section is inconsistent");
	hd__put_le32(at_sec(c, HD__SEC_ROOT_REFS, 0, 4), n + 7);
	EXPECT(c, good_n, "store root section points out of range");
	memcpy(at_sec(c, HD__SEC_ADDRESS, 3, 8),
	       at_sec(c, HD__SEC_ADDRESS, 2, 8), 8);
	EXPECT(c, good_n, "store address section is not sorted");
	*at_sec(c, HD__SEC_TYPE, 5, 1) = 200;
	EXPECT(c, good_n, "store type section has an invalid value");
	hd__put_le32(at_sec(c, HD__SEC_CLASS, 4, 4), n + 5);
	EXPECT(c, good_n, "store class section points out of range");
	hd__put_le32(at_sec(c, HD__SEC_AUX, 4, 4), 0x7fffffff);
	EXPECT(c, good_n, "store aux section points out of range");
	free(c);
}

static void test_corrupt__table_content_messages(void)
{
	unsigned char *c, *p;
	uint32_t n, i;
	const struct sec *sz;

	T_RC(setup(), 0);
	T_ASSERT((c = copy()) != NULL);
	n = (uint32_t)hd__le64(at_sec(c, HD__SEC_META, HD__M_NODES, 8));
	sz = sec_of(HD__SEC_STRINGS);
	c[sz->off + sz->size - 1] = 'x';
	EXPECT(c, good_n, "store string is not NUL-terminated");
	hd__put_le32(at_sec(c, HD__SEC_STROFFS, 1, 4), 0);
	EXPECT(c, good_n, "store string offset is out of bounds");
	hd__put_le32(at_sec(c, HD__SEC_SITES, 0, 4), 0x10000000);
	EXPECT(c, good_n, "store site table section points out of range");
	hd__put_le32(at_sec(c, HD__SEC_SITE, 0, 4), 0x10000000);
	EXPECT(c, good_n, "store site section points out of range");
	/* a class entry on a node that is no class */
	for (i = 0; i < n && *at_sec(c, HD__SEC_TYPE, i, 1) != HD_T_STRING;)
		i++;
	hd__put_le32(at_sec(c, HD__SEC_CLASSES, 0, HD__CLASS_SIZE), i);
	EXPECT(c, good_n, "store class name section is invalid");
	hd__put_le32(at_sec(c, HD__SEC_CLASSES, 0, HD__CLASS_SIZE) + 12, 4);
	EXPECT(c, good_n, "store class name section is invalid");
	/* an escaped memsize whose wide value is gone */
	p = at_sec(c, HD__SEC_MEMSIZE_WIDE, 0, HD__WIDE_SIZE);
	hd__put_le32(at_sec(c, HD__SEC_MEMSIZE, hd__le32(p), 4), 7);
	EXPECT(c, good_n,
	       "store wide memsize section does not match its column");
	hd__put_le32(at_sec(c, HD__SEC_SIZE, 0, 4), HD__ESC);
	EXPECT(c, good_n, "store wide size section does not match its column");
	hd__put_le32(p + 4, 1);
	EXPECT(c, good_n, "store wide memsize section is invalid");
	p = at_sec(c, HD__SEC_CLASSX, 0, HD__WIDE_SIZE);
	hd__put_le32(p, n);
	EXPECT(c, good_n, "store class address section is invalid");
	free(c);
}


/*
 * A store of 140,000 objects, whose columns span several of the chunks
 * hd_store_open reads them in (256 KiB: 65,536 u32, 32,768 addresses):
 * damage on either side of a chunk's edge, and in the last item, is
 * found with its message.
 */
#define BIG_N 140000u

static unsigned char *big;
static size_t big_n;

static uint64_t big_off(uint32_t id)
{
	uint32_t i, n = hd__le32(big + 12);

	for (i = 0; i < n; i++)
		if (hd__le32(big + 32 + i * 24) == id)
			return hd__le64(big + 32 + i * 24 + 8);
	return 0;
}

static int big_setup(void)
{
	hd_store *s = NULL;
	hd_error err;
	char *d;
	size_t len = 0, cap = (size_t)BIG_N * 120 + 200;
	uint32_t i;
	int rc;

	if (big)
		return 0;
	if (!(d = malloc(cap)))
		return -1;
	len += (size_t)snprintf(d + len, cap - len,
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}\n");
	for (i = 0; i < BIG_N; i++)
		len += (size_t)snprintf(d + len, cap - len,
			"{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x1000\", \"references\":[\"0x%x\"], \"memsize\":40}\n",
			0x1000 + i * 0x10, 0x1000 + ((i + 1) % BIG_N) * 0x10);
	rc = fx_write(fx_path("big.json"), d, len) ||
	     hd_store_build(&s, fx_path("big.json"), NULL, &err) ||
	     hd_store_write(s, fx_path("big.hds"), &err);
	hd_store_close(s);
	free(d);
	if (rc || !(big = fx_read(fx_path("big.hds"), &big_n)))
		return -1;
	return 0;
}

static void big_put(unsigned char *c, uint32_t id, unsigned w, uint64_t i,
		    uint64_t v)
{
	unsigned char *p = c + big_off(id) + i * w;

	if (w == 4)
		hd__put_le32(p, (uint32_t)v);
	else
		hd__put_le64(p, v);
}

/* big with one u32 (w 4) or u64 (w 8) item i of section id set to v,
 * and, if id2, item i2 of section id2 (u32) set to v2: whether the open
 * fails with the message want. */
static int big_try2(uint32_t id, unsigned w, uint64_t i, uint64_t v,
		    uint32_t id2, uint64_t i2, uint64_t v2, const char *want)
{
	unsigned char *c = malloc(big_n);
	hd_store *s = NULL;
	hd_error err;
	int rc, ok;

	if (!c)
		return 0;
	memcpy(c, big, big_n);
	big_put(c, id, w, i, v);
	if (id2)
		big_put(c, id2, 4, i2, v2);
	memset(&err, 0, sizeof(err));
	rc = fx_write(fx_path("bigc.hds"), c, big_n) ? -1 :
		hd_store_open(&s, fx_path("bigc.hds"), &err);
	hd_store_close(s);
	free(c);
	ok = rc == HD_EFORMAT && strcmp(err.msg, want) == 0;
	if (!ok)
		fprintf(stderr, "# item %llu of section %u: rc %d, \"%s\"\n",
			(unsigned long long)i, id, rc, err.msg);
	return ok;
}

static int big_try(uint32_t id, unsigned w, uint64_t i, uint64_t v,
		   const char *want)
{
	return big_try2(id, w, i, v, 0, 0, 0, want);
}

static void test_corrupt__chunk_edges(void)
{
	static const uint64_t at4[] = { 65535, 65536, 65537, 131072,
					BIG_N - 1 };
	static const uint64_t at8[] = { 32767, 32768, 32769, 98304,
					BIG_N - 1 };
	hd_store *s = NULL;
	hd_error err;
	unsigned k;

	T_RC(big_setup(), 0);
	T_RC(hd_store_open(&s, fx_path("big.hds"), &err), 0);
	T_EQ(hd_store_node_count(s), BIG_N);
	hd_store_close(s);
	for (k = 0; k < 5; k++) {
		uint64_t i = at4[k], a = at8[k];

		T_ASSERT(big_try(HD__SEC_CLASS, 4, i, BIG_N + 3,
				 "store class section points out of range"));
		T_ASSERT(big_try(HD__SEC_REFS, 4, i, BIG_N,
				 "store edge section points out of range"));
		T_ASSERT(big_try(HD__SEC_REV, 4, i, 0xfffffffe,
				 "store referrer section points out of range"));
		/* node i's offset below node i - 1's (each holds one) */
		T_ASSERT(big_try(HD__SEC_REFS_OFF, 4, i, i - 2,
				 "store edge offset section is not monotonic"));
		/* an address equal to the one before it */
		T_ASSERT(big_try(HD__SEC_ADDRESS, 8, a,
				 hd__le64(big + big_off(HD__SEC_ADDRESS) +
					  (a - 1) * 8),
				 "store address section is not sorted"));
	}
	/* two damages, found by the two threads of the checks: the one
	 * reported is the first check's, whichever thread finds it */
	T_ASSERT(big_try2(HD__SEC_REFS, 4, 70000, BIG_N, HD__SEC_CLASS, 90000,
			  BIG_N + 3, "store class section points out of range"));
	T_ASSERT(big_try2(HD__SEC_REFS, 4, 70000, BIG_N, HD__SEC_ROOT_REFS, 0,
			  BIG_N + 3, "store edge section points out of range"));
	T_ASSERT(big_try2(HD__SEC_REV, 4, 5, BIG_N, HD__SEC_REFS, 139000,
			  BIG_N, "store edge section points out of range"));
}

static void test_corrupt__counts(void)
{
	T_ASSERT(opened > 0);
	T_ASSERT(refused > opened);
	printf("# %lu damaged stores refused, %lu opened and read\n", refused,
	       opened);
	fx_cleanup();
	free(good);
	free(big);
	good = NULL;
}

static const struct t_case cases[] = {
	T_CASE(corrupt__good_opens),
	T_CASE(corrupt__truncate_at_boundaries),
	T_CASE(corrupt__truncate_everywhere),
	T_CASE(corrupt__header_bytes),
	T_CASE(corrupt__header_bits),
	T_CASE(corrupt__boundary_bits),
	T_CASE(corrupt__table_entries),
	T_CASE(corrupt__section_bytes),
	T_CASE(corrupt__every_byte),
	T_CASE(corrupt__header_messages),
	T_CASE(corrupt__table_messages),
	T_CASE(corrupt__content_messages),
	T_CASE(corrupt__table_content_messages),
	T_CASE(corrupt__chunk_edges),
	T_CASE(corrupt__counts),
};

T_MAIN(cases)
