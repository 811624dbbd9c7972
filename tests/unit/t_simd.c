/*
 * t_simd.c - the AVX2 forms of the scanner's hot loops (simd.c) give the
 * portable scanner's records, errors and columns, on random lines made
 * to hit their edges: addresses, classes and references of 0 to 18
 * digits, upper and lower case, odd separators and bytes, keys longer
 * than a vector, lines cut anywhere; and the AVX2 search for a line's
 * end (reader.c) finds memchr's newline. On a CPU without AVX2 both
 * runs are portable.
 */
#include "t.h"
#include "hd_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t seed = 0x9e3779b97f4a7c15ULL;

static unsigned rnd(unsigned n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (unsigned)(seed % n);
}

static size_t put(char *b, size_t len, size_t size, const char *s)
{
	size_t n = strlen(s);

	if (len + n < size) {
		memcpy(b + len, s, n);
		len += n;
	}
	return len;
}

/* An address string: mostly the usual one; else 0 to 18 digits, some
 * of them upper case or odd bytes, "0X", a missing quote. */
static size_t addr(char *b, size_t len, size_t size)
{
	static const char digits[] = "0123456789abcdefABCDEF";
	static const char odd[] = "gG/:@`\"\\ ,}\x80\xff";
	char tmp[64];
	unsigned j, nd;

	if (rnd(3) == 0)
		return put(b, len, size, "\"0x7f0012345678\"");
	len = put(b, len, size, rnd(30) ? "\"0x" : rnd(2) ? "\"0X" : "\"x");
	nd = rnd(3) ? 16 - rnd(5) : rnd(19);
	for (j = 0; j < nd; j++)
		tmp[j] = rnd(40) ? digits[rnd(sizeof(digits) - 1)] :
				   odd[rnd(sizeof(odd) - 1)];
	tmp[j] = '\0';
	len = put(b, len, size, tmp);
	return put(b, len, size, rnd(30) ? "\"" : "");
}

/* A record with a references array, mostly canonical, sometimes not. */
static size_t make_line(char *b, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	static const char odd[] = "ABCDEFgx\" ,]\t\x80\xff\\";
	static const char *const seps[] = { ", ", ", ", ", ", ",", " , ",
					    ",  ", ", \"", "" };
	size_t len = 0;
	unsigned i, j, nrefs = rnd(80), nd;
	char tmp[64];

	len = put(b, len, size, "{\"address\":");
	len = addr(b, len, size);
	len = put(b, len, size, ", ");
	if (rnd(4) == 0) { /* a key longer than a vector */
		len = put(b, len, size, "\"");
		for (i = rnd(70); i > 0; i--)
			len = put(b, len, size, rnd(9) ? "k" : "\\");
		len = put(b, len, size, rnd(9) ? "\":1, " : "\" : 1, ");
	}
	len = put(b, len, size, "\"type\":\"ARRAY\", \"class\":");
	len = addr(b, len, size);
	len = put(b, len, size, ", \"references\":[");
	for (i = 0; i < nrefs; i++) {
		if (i)
			len = put(b, len, size, rnd(20) ? ", " : seps[rnd(8)]);
		len = put(b, len, size, rnd(40) ? "\"0x" : "\"0X");
		nd = rnd(10) ? 12 : rnd(19);
		for (j = 0; j < nd && j < sizeof(tmp) - 1; j++)
			tmp[j] = rnd(50) ? digits[rnd(16)] :
					   odd[rnd(sizeof(odd) - 1)];
		tmp[j] = '\0';
		len = put(b, len, size, tmp);
		len = put(b, len, size, rnd(60) ? "\"" : "");
	}
	len = put(b, len, size, "], \"memsize\":40}");
	if (rnd(5) == 0)
		len = rnd((unsigned)len + 1);
	return len;
}

/* What a scan says, as text. */
static void describe(char *out, size_t size, const char *line, size_t len)
{
	struct hd__scan sc;
	hd_record rec;
	size_t n, i;
	int rc;

	memset(&sc, 0, sizeof(sc));
	rc = hd__scan_line(&sc, line, len, &rec);
	n = (size_t)snprintf(out, size,
			     "rc %d col %zu msg %s more %d rep %d kind %d "
			     "type %d has %llx addr %llx class %llx %.*s "
			     "nrefs %zu close %zu %zu\n",
			     rc, sc.err_col, sc.err_msg ? sc.err_msg : "-",
			     sc.need_more, sc.repaired, (int)rec.kind,
			     rec.type, (unsigned long long)rec.has,
			     (unsigned long long)rec.address,
			     (unsigned long long)rec.class_addr,
			     rc ? 0 : (int)rec.class_name.len,
			     rc || !rec.class_name.ptr ? "" :
							 rec.class_name.ptr,
			     rc ? 0 : rec.nrefs, sc.refs_close, sc.obj_close);
	for (i = 0; rc == 0 && i < rec.nrefs && n + 20 < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%llx ",
				      (unsigned long long)rec.refs[i]);
	hd__scan_free(&sc);
}

static void test_simd__same_as_portable(void)
{
	static char line[8192], a[16384], b[16384];
	int before = hd__simd_level(), k, differ = 0;
	size_t len;

	for (k = 0; k < 20000 && !differ; k++) {
		len = make_line(line, sizeof(line));
		hd__simd_force(HD__SIMD_PORTABLE);
		describe(a, sizeof(a), line, len);
		hd__simd_force(HD__SIMD_AVX2);
		describe(b, sizeof(b), line, len);
		if (strcmp(a, b) != 0) {
			differ = 1;
			T_FAIL("line %d differs: %.*s\nportable: %.100s\n"
			       "avx2: %.100s", k, (int)(len < 100 ? len : 100),
			       line, a, b);
		}
	}
	hd__simd_force(before);
}

/* The AVX2 reader takes canonical runs and stops where it must. */
static void test_simd__refs_stops(void)
{
	static const char run[] =
		"\"0x7f0012345678\", \"0x1\", \"0xabcdefABCDEF012\", "
		"\"0x7f0012345679\"]                             ";
	const char *p = run, *end = run + sizeof(run) - 1;
	uint64_t v[8];
	size_t n;

	if (hd__simd_force(HD__SIMD_AVX2) == 0 ||
	    hd__simd_level() != HD__SIMD_AVX2) {
		hd__simd_force(0);
		return; /* no AVX2 here: the portable path is all there is */
	}
	n = hd__avx2_refs(&p, end, v, 8);
	T_EQ(n, 3);
	T_EQ(v[0], 0x7f0012345678ULL);
	T_EQ(v[1], 1);
	T_EQ(v[2], 0xabcdefabcdef012ULL);
	T_ASSERT(p == run + 46);
	p = run;
	T_EQ(hd__avx2_refs(&p, end, v, 1), 1);
	T_ASSERT(p == run + 18);
	T_ASSERT(hd__avx2_quote(run + 1, end) == run + 15);
	hd__simd_force(0);
}

/* The 12-digit forms (the usual 64-bit Linux heap address): taken only
 * when all 12 are hex digits and a quote follows. */
static void test_simd__twelve_digits(void)
{
	static const char run[] =
		"\"0x7F001234abcd\", \"0x7f001234567g\", \"0x7f0012345678\"]"
		"                                ";
	static const char good[] = "0x7F001234abCD\"                 ";
	static const char bad[] = "0x7f00123:5678\"                 ";
	static const char more[] = "0x7f00123456789\"                ";
	const char *p = run, *end = run + sizeof(run) - 1;
	uint64_t v[4] = { 0, 0, 0, 0 }, a = 0;

	T_ASSERT(hd__simd_force(HD__SIMD_AVX2) != 0);
	T_EQ(hd__simd_level(), HD__SIMD_AVX2); /* t_simd needs AVX2 */
	T_EQ(hd__avx2_refs(&p, end, v, 4), 1);
	T_EQ(v[0], 0x7f001234abcdULL);
	T_ASSERT(p == run + 18); /* on the one with a 'g' */
	T_ASSERT(hd__avx2_addr(good, good + sizeof(good) - 1, &a) ==
		 good + 14);
	T_EQ(a, 0x7f001234abcdULL);
	T_ASSERT(hd__avx2_addr(bad, bad + sizeof(bad) - 1, &a) == NULL);
	T_ASSERT(hd__avx2_addr(more, more + sizeof(more) - 1, &a) ==
		 more + 15);
	T_EQ(a, 0x7f00123456789ULL);
	hd__simd_force(0);
}

/* The end of a line: memchr's answer for every length from 0 to 300
 * and every place of the first newline (or none), bytes that differ
 * from '\n' by one bit around it, the buffer's end at the end of a
 * page followed by an unmapped one (no byte past end is read). */
static void test_simd__newline_as_memchr(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *page = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *end;
	size_t len, at, i;
	int k;

	T_ASSERT(page != MAP_FAILED);
	T_ASSERT(mprotect(page + pg, (size_t)pg, PROT_NONE) == 0);
	end = page + pg;
	T_ASSERT(hd__simd_force(HD__SIMD_AVX2) != 0);
	T_EQ(hd__simd_level(), HD__SIMD_AVX2); /* t_simd needs AVX2 */
	for (len = 0; len <= 300; len++) {
		char *p = end - len;

		for (at = 0; at <= len; at++) { /* at == len: none */
			for (i = 0; i < len; i++)
				p[i] = (char)(rnd(3) ? 'a' + rnd(26) :
					      (unsigned)'\n' ^ 1u << rnd(8));
			if (at < len)
				p[at] = '\n';
			for (k = 0; k < 2 && at + 1 + (size_t)k < len; k++)
				if (rnd(2)) /* later newlines do not count */
					p[at + 1 + (size_t)k] = '\n';
			if (hd__avx2_newline(p, end) != memchr(p, '\n', len)) {
				T_FAIL("length %zu, newline at %zu", len, at);
				goto out;
			}
		}
	}
out:
	hd__simd_force(0);
	munmap(page, (size_t)pg * 2);
}

static const struct t_case cases[] = {
	T_CASE(simd__same_as_portable),
	T_CASE(simd__newline_as_memchr),
	T_CASE(simd__refs_stops),
	T_CASE(simd__twelve_digits),
};

T_MAIN(cases)
