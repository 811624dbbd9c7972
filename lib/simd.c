/*
 * simd.c - the scanner's structure finding with AVX2, chosen at run time.
 *
 * Hot spots of scan.c have an AVX2 form here: finding the end of a line
 * (for reader.c), finding the quote or
 * backslash where a string may end, finding the quote that ends a key
 * (t_simd), reading an address string and the runs of `"0x<hex>", ` of
 * a references array. Each takes only what the portable code in scan.c
 * would take in the same way and hands everything else back to it
 * (errors, whitespace, 16-digit and odd addresses, the last reference of
 * an array), so both paths give the same records, problems and columns;
 * t_simd and tests/cli/parallel.sh compare them. An address of exactly
 * 12 digits (a 64-bit Linux heap's) has a form of its own, which tests
 * the quote after them first, so the scan goes on without waiting for
 * the digits' count. HEAPDUMP_SIMD=portable (or hd__simd_force) makes
 * the portable path run on any CPU.
 */
#include "hd_int.h"

#include <stdlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HD_HAVE_AVX2 1
#include <immintrin.h>
#endif

/* 0: not chosen yet; else HD__SIMD_PORTABLE or HD__SIMD_AVX2 */
int hd__simd_chosen;

static int choose(void)
{
	const char *e = getenv("HEAPDUMP_SIMD");
	int l = HD__SIMD_PORTABLE;

#ifdef HD_HAVE_AVX2
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		l = HD__SIMD_AVX2;
#endif
	if (e && strcmp(e, "portable") == 0)
		l = HD__SIMD_PORTABLE;
	return l;
}

int hd__simd_level(void)
{
	int l = __atomic_load_n(&hd__simd_chosen, __ATOMIC_RELAXED);

	if (!l) {
		l = choose();
		__atomic_store_n(&hd__simd_chosen, l, __ATOMIC_RELAXED);
	}
	return l;
}

int hd__simd_force(int l)
{
	int old = hd__simd_level();

	if (l == HD__SIMD_AVX2 && choose() != HD__SIMD_AVX2 &&
	    getenv("HEAPDUMP_SIMD") == NULL)
		return old; /* the CPU cannot */
	__atomic_store_n(&hd__simd_chosen, l ? l : choose(), __ATOMIC_RELAXED);
	return old;
}

#ifdef HD_HAVE_AVX2

__attribute__((target("avx2"))) const char *
hd__avx2_quote(const char *p, const char *end)
{
	const __m256i q = _mm256_set1_epi8('"');

	while (end - p >= 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
		unsigned m = (unsigned)_mm256_movemask_epi8(
			_mm256_cmpeq_epi8(v, q));

		if (m)
			return p + __builtin_ctz(m);
		p += 32;
	}
	while (p < end && *p != '"')
		p++;
	return p;
}

/* The first '"' or '\\' in [p, end), or end: where a string may end. */
__attribute__((target("avx2"))) const char *
hd__avx2_strend(const char *p, const char *end)
{
	const __m256i q = _mm256_set1_epi8('"'), b = _mm256_set1_epi8('\\');

	while (end - p >= 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
		unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_or_si256(
			_mm256_cmpeq_epi8(v, q), _mm256_cmpeq_epi8(v, b)));

		if (m)
			return p + __builtin_ctz(m);
		p += 32;
	}
	if (end - p >= 16) {
		int i = hd__sse2_strend16(p);

		if (i >= 0)
			return p + i;
		p += 16;
	}
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

/* The first newline in [p, end), or NULL: 64 bytes a step, the reader's
 * search for a line's end (1 ms of 41 faster than SSE2's 32 on the
 * 0.1 GB dump read where it is mapped; no faster on a 256 KiB buffer
 * just filled by read(2), which the copy had put in the cache). */
__attribute__((target("avx2"))) const char *
hd__avx2_newline(const char *p, const char *end)
{
	const __m256i nl = _mm256_set1_epi8('\n');

	while (end - p >= 64) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
		__m256i b = _mm256_loadu_si256(
			(const __m256i *)(const void *)(p + 32));
		uint64_t m = (uint32_t)_mm256_movemask_epi8(
				     _mm256_cmpeq_epi8(a, nl)) |
			     (uint64_t)(uint32_t)_mm256_movemask_epi8(
				     _mm256_cmpeq_epi8(b, nl))
				     << 32;

		if (m)
			return p + __builtin_ctzll(m);
		p += 64;
	}
	return memchr(p, '\n', (size_t)(end - p));
}

/* shuffles that right-align k nibbles in 16 bytes, zeros before */
static const unsigned char align_tab[17][16] = {
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6, 7 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 },
	{ 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 },
	{ 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 },
	{ 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
	{ 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 },
	{ 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 },
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
};

/* constants read from memory: GCC builds them in registers otherwise,
 * at a cost of more than the rest of an address (hex16 hides the
 * table's address from it) */
#define B16(b) { (long long)(0x0101010101010101ULL * (b)),               \
		 (long long)(0x0101010101010101ULL * (b)) }
static const __m128i hex_k[7] = {
	B16('0'), B16(9), B16(0x20), B16('a'), B16(5), B16(10),
	/* maddubs factors: 16 for the high nibble of each pair, 1 for the
	 * low one */
	{ 0x0110011001100110LL, 0x0110011001100110LL },
};
#undef B16

/*
 * The nibbles of the 16 bytes v, and in *ok the mask of those that are
 * hex digits. Each byte as unsigned: a digit is b - '0' <= 9, a letter
 * (b | 0x20) - 'a' <= 5 (as the portable hexv[]).
 */
__attribute__((target("avx2"))) static inline __m128i
hex_nibbles(__m128i v, unsigned *ok)
{
	const __m128i *k = hex_k;
	__m128i t, u, dig, alp;

	__asm__("" : "+r"(k));
	t = _mm_sub_epi8(v, k[0]);
	u = _mm_sub_epi8(_mm_or_si128(v, k[2]), k[3]);
	dig = _mm_cmpeq_epi8(_mm_min_epu8(t, k[1]), t);
	alp = _mm_cmpeq_epi8(_mm_min_epu8(u, k[4]), u);
	*ok = (unsigned)_mm_movemask_epi8(_mm_or_si128(dig, alp));
	return _mm_blendv_epi8(_mm_add_epi8(u, k[5]), t, dig);
}

/* The value of the first d (0 to 16) of the nibbles nib. */
__attribute__((target("avx2"))) static inline uint64_t
hex_value(__m128i nib, unsigned d)
{
	const __m128i *k = hex_k;
	__m128i a, pairs;

	__asm__("" : "+r"(k));
	a = _mm_shuffle_epi8(nib, _mm_loadu_si128((const __m128i *)(
					  const void *)align_tab[d]));
	pairs = _mm_maddubs_epi16(a, k[6]);
	return __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(
		_mm_packus_epi16(pairs, pairs)));
}

/*
 * The address at s + 2: its leading hex digits (0 to 16) in *nd and
 * the value of the first *nd of them (right-aligned; all 16 for 16).
 */
__attribute__((target("avx2"))) static inline uint64_t
hex16(__m128i v, unsigned *nd)
{
	unsigned ok;
	__m128i nib = hex_nibbles(v, &ok);

	*nd = (unsigned)__builtin_ctz(~ok | 0x10000u);
	return hex_value(nib, *nd);
}

/*
 * hex16() for exactly 12 digits: what a 64-bit Linux heap address has
 * (0x7f..., 0x55...). The quote after them is tested first, so the
 * caller goes on from it without waiting for the digits' count.
 */
__attribute__((target("avx2"))) static inline int
hex12(__m128i v, uint64_t *out)
{
	unsigned ok;
	__m128i nib = hex_nibbles(v, &ok);

	if ((ok & 0xfff) != 0xfff)
		return 0;
	*out = hex_value(nib, 12);
	return 1;
}

__attribute__((target("avx2"))) const char *
hd__avx2_addr(const char *s, const char *end, uint64_t *out)
{
	uint64_t v;
	unsigned d;

	if (end - s < 20 || s[0] != '0' || s[1] != 'x')
		return NULL;
	if (s[14] == '"' &&
	    hex12(_mm_loadu_si128((const __m128i *)(const void *)(s + 2)), out))
		return s + 14;
	v = hex16(_mm_loadu_si128((const __m128i *)(const void *)(s + 2)), &d);
	if (!d || s[2 + d] != '"')
		return NULL;
	*out = v;
	return s + 2 + d;
}

__attribute__((target("avx2"))) size_t
hd__avx2_refs(const char **pp, const char *end, uint64_t *out, size_t room)
{
	const char *p = *pp;
	size_t n = 0;

	while (n < room && end - p >= 32 && p[0] == '"' && p[1] == '0' &&
	       p[2] == 'x') {
		unsigned ok, d;
		__m128i nib = hex_nibbles(
			_mm_loadu_si128((const __m128i *)(const void *)(p + 3)),
			&ok);

		/* 12 digits (hex12()), the next one found without waiting
		 * for the count */
		if (p[15] == '"' && p[16] == ',' && p[17] == ' ' &&
		    (ok & 0xfff) == 0xfff) {
			out[n++] = hex_value(nib, 12);
			p += 18;
			continue;
		}
		d = (unsigned)__builtin_ctz(~ok | 0x10000u);
		/* 1 to 15 digits, a closing quote and ", " after: else the
		 * portable code decides */
		if (d == 0 || d >= 16 || p[3 + d] != '"' || p[4 + d] != ',' ||
		    p[5 + d] != ' ')
			break;
		out[n++] = hex_value(nib, d);
		p += 6 + d;
	}
	*pp = p;
	return n;
}

#else

const char *hd__avx2_strend(const char *p, const char *end)
{
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

const char *hd__avx2_newline(const char *p, const char *end)
{
	return memchr(p, '\n', (size_t)(end - p));
}

const char *hd__avx2_quote(const char *p, const char *end)
{
	while (p < end && *p != '"')
		p++;
	return p;
}

const char *hd__avx2_addr(const char *s, const char *end, uint64_t *out)
{
	(void)s;
	(void)end;
	(void)out;
	return NULL;
}

size_t hd__avx2_refs(const char **pp, const char *end, uint64_t *out,
		     size_t room)
{
	(void)pp;
	(void)end;
	(void)out;
	(void)room;
	return 0;
}

#endif
