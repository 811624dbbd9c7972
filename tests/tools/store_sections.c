/*
 * store_sections.c - the section table of a store file, read and edited
 * as bytes (man 5 heapdump-store), for tests of stores with and without
 * optional sections.
 *
 *   store_sections list STORE           one line a section: id, flags,
 *                                       offset, size
 *   store_sections strip STORE ID OUT   OUT: STORE without section ID,
 *                                       laid out as a writer lays out
 *                                       the sections left (what a build
 *                                       that knew no such section wrote)
 *
 * Exits 0, 1 on a malformed file or I/O error, 2 on a usage error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD 32u
#define ENTRY 24u

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void put(unsigned char *p, uint64_t v, int n)
{
	while (n--) {
		*p++ = (unsigned char)v;
		v >>= 8;
	}
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			unsigned char *nb = realloc(b, cap = cap ? cap * 2 : 65536);

			if (!nb) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = nb;
		}
		n = fread(b + *len, 1, cap - *len, f);
		if (!n)
			break;
		*len += n;
	}
	fclose(f);
	return b;
}

static int fail(const char *msg)
{
	fprintf(stderr, "store_sections: %s\n", msg);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned char *b, *o, *e;
	size_t len, i, count, pos, w;
	uint64_t off, size;
	FILE *f;

	if (argc < 3 || ((strcmp(argv[1], "list") || argc != 3) &&
			 (strcmp(argv[1], "strip") || argc != 5))) {
		fprintf(stderr, "usage: store_sections list STORE | "
				"strip STORE ID OUT\n");
		return 2;
	}
	if (!(b = slurp(argv[2], &len)))
		return fail("cannot read the store");
	count = len >= HEAD ? (size_t)le(b + 12, 4) : 0;
	if (len < HEAD || memcmp(b, "HDSTORE", 8) || HEAD + count * ENTRY > len)
		return fail("not a store");
	if (!strcmp(argv[1], "list")) {
		for (i = 0; i < count; i++) {
			e = b + HEAD + i * ENTRY;
			printf("%llu %llu %llu %llu\n",
			       (unsigned long long)le(e, 4),
			       (unsigned long long)le(e + 4, 4),
			       (unsigned long long)le(e + 8, 8),
			       (unsigned long long)le(e + 16, 8));
		}
		free(b);
		return 0;
	}
	if (!(o = calloc(1, len)))
		return fail("out of memory");
	memcpy(o, b, HEAD);
	for (i = 0, w = 0; i < count; i++)
		w += le(b + HEAD + i * ENTRY, 4) != strtoull(argv[3], NULL, 10);
	put(o + 12, w, 4);
	pos = (HEAD + w * ENTRY + 7) & ~(size_t)7;
	for (i = 0, w = 0; i < count; i++) {
		e = b + HEAD + i * ENTRY;
		if (le(e, 4) == strtoull(argv[3], NULL, 10))
			continue;
		off = le(e + 8, 8);
		size = le(e + 16, 8);
		if (off > len || size > len - off || pos + size > len)
			return fail("a section is out of bounds");
		memcpy(o + HEAD + w * ENTRY, e, ENTRY);
		put(o + HEAD + w * ENTRY + 8, pos, 8);
		memcpy(o + pos, b + off, size);
		pos = (pos + size + 7) & ~(size_t)7;
		w++;
	}
	put(o + 16, pos, 8);
	w = (f = fopen(argv[4], "wb")) && fwrite(o, 1, pos, f) == pos;
	if (f && fclose(f))
		w = 0;
	free(o);
	free(b);
	return w ? 0 : fail("cannot write the output");
}
