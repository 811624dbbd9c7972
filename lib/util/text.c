/*
 * text.c - text helpers that know nothing of dumps: JSON escapes decoded
 * (hd_json_unescape: the reader's strings, the interner, reference
 * names, SQL values), how far apart two names are (hd_name_distance:
 * "did you mean" for selections, commands and options), and the time
 * of the gem's sidecar ("2026-11-24T10:00:00.123456Z") as microseconds
 * for hd_dump_origin (hd_time_us).
 */
#include "util_int.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int hexdigit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* ---- JSON escapes ---- */

size_t hd__utf8_put(char *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int hd__json_hex4(const char *s, size_t left, uint32_t *cp)
{
	uint32_t v = 0;
	int i;

	if (left < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		int h = hexdigit((unsigned char)s[i]);

		if (h < 0)
			return -1;
		v = v << 4 | (uint32_t)h;
	}
	*cp = v;
	return 0;
}

/*
 * Decodes escapes. Output never exceeds input: every escape is at least
 * as long as its UTF-8 form (\uXXXX is 6 bytes for at most 3, and a
 * surrogate pair 12 bytes for 4).
 */
size_t hd_json_unescape(char *dst, const char *src, size_t len)
{
	size_t i = 0, o = 0;

	while (i < len) {
		uint32_t cp, lo;
		char ch = src[i];

		if (ch != '\\' || i + 1 >= len) {
			dst[o++] = ch;
			i++;
			continue;
		}
		switch (src[i + 1]) {
		case '"': case '\\': case '/':
			dst[o++] = src[i + 1];
			i += 2;
			continue;
		case 'b': dst[o++] = '\b'; i += 2; continue;
		case 'f': dst[o++] = '\f'; i += 2; continue;
		case 'n': dst[o++] = '\n'; i += 2; continue;
		case 'r': dst[o++] = '\r'; i += 2; continue;
		case 't': dst[o++] = '\t'; i += 2; continue;
		case 'u':
			if (hd__json_hex4(src + i + 2, len - i - 2, &cp))
				break;
			if (cp >= 0xd800 && cp < 0xdc00 && i + 12 <= len &&
			    src[i + 6] == '\\' && src[i + 7] == 'u' &&
			    !hd__json_hex4(src + i + 8, len - i - 8, &lo) &&
			    lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
				o += hd__utf8_put(dst + o, cp);
				i += 12;
				continue;
			}
			o += hd__utf8_put(dst + o, cp);
			i += 6;
			continue;
		default:
			break;
		}
		dst[o++] = ch; /* invalid escape: copy through */
		i++;
	}
	return o;
}

/* ---- names near a mistyped one ---- */

#define DIST_MAX_LEN 256

static int fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * Optimal string alignment in a band of max around the diagonal: three
 * rows (for swaps), each cell read outside the band is max + 1, and a
 * row whose every cell is over max ends the work.
 */
unsigned hd_name_distance(const char *a, size_t n, const char *b, size_t m,
			  unsigned max)
{
	uint16_t rows[3][DIST_MAX_LEN + 2];
	uint16_t *p2 = rows[0], *p1 = rows[1], *c = rows[2], *t;
	unsigned big = max + 1, best, v;
	size_t i, j, lo, hi;

	if (!a || !b || n > DIST_MAX_LEN || m > DIST_MAX_LEN ||
	    (n > m ? n - m : m - n) > max)
		return big;
	if (big > DIST_MAX_LEN + 1)
		big = DIST_MAX_LEN + 1, max = big - 1;
	for (j = 0; j <= m; j++)
		p1[j] = (uint16_t)(j < big ? j : big);
	p1[m + 1] = (uint16_t)big;
	for (i = 1; i <= n; i++) {
		lo = i > max ? i - max : 1;
		hi = i + max < m ? i + max : m;
		c[0] = (uint16_t)(i < big ? i : big);
		if (lo > 1)
			c[lo - 1] = (uint16_t)big;
		best = c[0];
		for (j = lo; j <= hi; j++) {
			int eq = fold((unsigned char)a[i - 1]) ==
				 fold((unsigned char)b[j - 1]);

			v = p1[j - 1] + !eq;
			if (p1[j] + 1u < v)
				v = p1[j] + 1u;
			if (c[j - 1] + 1u < v)
				v = c[j - 1] + 1u;
			if (i > 1 && j > 1 &&
			    fold((unsigned char)a[i - 1]) ==
				    fold((unsigned char)b[j - 2]) &&
			    fold((unsigned char)a[i - 2]) ==
				    fold((unsigned char)b[j - 1]) &&
			    p2[j - 2] + 1u < v)
				v = p2[j - 2] + 1u;
			c[j] = (uint16_t)(v < big ? v : big);
			if (c[j] < best)
				best = c[j];
		}
		if (hi + 1 <= m + 1)
			c[hi + 1] = (uint16_t)big;
		if (best > max)
			return big;
		t = p2;
		p2 = p1;
		p1 = c;
		c = t;
	}
	return p1[m] < big ? p1[m] : big;
}

/* ---- the sidecar's time ---- */

int64_t hd_time_us(const char *t)
{
	struct tm tm;
	unsigned long us = 0;
	int n = 0, digits;
	const char *p;
	time_t secs;

	if (!t)
		return 0;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return 0;
	p = t + n;
	if (*p == '.') {
		for (p++, digits = 0; *p >= '0' && *p <= '9'; p++, digits++)
			if (digits < 6)
				us = us * 10 + (unsigned long)(*p - '0');
		for (; digits < 6; digits++)
			us *= 10;
	}
	if (*p != 'Z' || p[1])
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	secs = timegm(&tm);
	if (secs <= 0)
		return 0;
	return (int64_t)secs * 1000000 + (int64_t)us;
}
