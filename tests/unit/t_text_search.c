/*
 * t_text_search.c - hd_text_search: case-insensitive substring search
 * over keys (serve's search and filters): hits in one key, case aside,
 * none across two keys, the empty query, keys with NUL bytes, stepping
 * with hd_text_search_next, marking, and a brute-force comparison on
 * random keys.
 */
#include "heapdump.h"
#include "t.h"

#include <ctype.h>

struct keys {
	const char *const *k;
	const size_t *len; /* NULL: strlen */
};

static const char *key_of(void *payload, size_t i, size_t *len)
{
	const struct keys *ks = payload;

	*len = ks->len ? ks->len[i] : strlen(ks->k[i]);
	return ks->k[i];
}

static hd_text_search *build(const char *const *k, const size_t *len,
			     size_t n)
{
	struct keys ks = { k, len };
	hd_text_search *x = NULL;

	if (hd_text_search_build(&x, n, key_of, &ks, NULL))
		return NULL;
	return x;
}

static void test_text_search__case_and_borders(void)
{
	static const char *const k[] = { "LeakyCache", "Hash", "app.rb:12",
					 "ab", "cd", "String" };
	hd_text_search *x = build(k, NULL, 6);
	unsigned char mark[6] = { 0 };
	size_t i;

	T_ASSERT(x);
	T_EQ(hd_text_search_count(x), 6);
	T_RC(hd_text_search_next(x, "cache", 5, 0, &i), 0);
	T_EQ(i, 0);
	T_RC(hd_text_search_next(x, "HASH", 4, 0, &i), 0);
	T_EQ(i, 1);
	/* from past it: none */
	T_RC(hd_text_search_next(x, "hash", 4, 2, &i), HD_ENOTFOUND);
	/* "bc" only across "ab" and "cd": none */
	T_RC(hd_text_search_next(x, "bc", 2, 0, &i), HD_ENOTFOUND);
	/* "s" in LeakyCache? no; Hash, String */
	T_EQ(hd_text_search_mark(x, "S", 1, mark), 2);
	T_EQ(mark[1], 1);
	T_EQ(mark[5], 1);
	T_EQ(mark[0], 0);
	/* the empty query is in every key */
	memset(mark, 0, sizeof(mark));
	T_EQ(hd_text_search_mark(x, "", 0, mark), 6);
	T_RC(hd_text_search_next(x, "", 0, 4, &i), 0);
	T_EQ(i, 4);
	T_RC(hd_text_search_next(x, "", 0, 6, &i), HD_ENOTFOUND);
	/* longer than every key */
	T_RC(hd_text_search_next(x, "LeakyCacheHash", 14, 0, &i),
	     HD_ENOTFOUND);
	hd_text_search_free(x);
}

/* A key with a NUL byte inside: found past it, and never joined to the
 * next key through its own end. */
static void test_text_search__nul_bytes(void)
{
	static const char *const k[] = { "a\0bc", "de" };
	static const size_t len[] = { 4, 2 };
	hd_text_search *x = build(k, len, 2);
	size_t i;

	T_ASSERT(x);
	T_RC(hd_text_search_next(x, "BC", 2, 0, &i), 0);
	T_EQ(i, 0);
	T_RC(hd_text_search_next(x, "cd", 2, 0, &i), HD_ENOTFOUND);
	T_RC(hd_text_search_next(x, "de", 2, 0, &i), 0);
	T_EQ(i, 1);
	hd_text_search_free(x);
}

static void test_text_search__empty_and_bad(void)
{
	hd_text_search *x = NULL;
	size_t i;

	T_RC(hd_text_search_build(&x, 0, NULL, NULL, NULL), 0);
	T_EQ(hd_text_search_count(x), 0);
	T_RC(hd_text_search_next(x, "a", 1, 0, &i), HD_ENOTFOUND);
	T_RC(hd_text_search_next(x, "", 0, 0, &i), HD_ENOTFOUND);
	hd_text_search_free(x);
	T_RC(hd_text_search_build(NULL, 1, key_of, NULL, NULL), HD_EINVAL);
	T_RC(hd_text_search_build(&x, 1, NULL, NULL, NULL), HD_EINVAL);
	hd_text_search_free(NULL);
}

/* Random keys of a few letters against a plain case-folding scan. */
static void test_text_search__random(void)
{
	static char buf[300][9];
	const char *k[300];
	unsigned seed = 7;
	int round;

	for (round = 0; round < 50; round++) {
		size_t n = 1 + (size_t)(round * 6), i, j, m, want = 0;
		unsigned char mark[300] = { 0 };
		char q[4];
		size_t ql = 1 + (size_t)(round % 3);
		hd_text_search *x;

		for (i = 0; i < n; i++) {
			size_t len = (seed = seed * 1103515245u + 12345u) >>
				     16 & 7;

			for (j = 0; j < len; j++) {
				seed = seed * 1103515245u + 12345u;
				buf[i][j] = "abAB"[(seed >> 16) & 3];
			}
			buf[i][len] = '\0';
			k[i] = buf[i];
		}
		for (j = 0; j < ql; j++) {
			seed = seed * 1103515245u + 12345u;
			q[j] = "aBb"[(seed >> 16) % 3];
		}
		q[ql] = '\0';
		T_ASSERT((x = build(k, NULL, n)));
		m = hd_text_search_mark(x, q, ql, mark);
		for (i = 0; i < n; i++) {
			size_t len = strlen(k[i]), s, c, hit = 0;

			for (s = 0; s + ql <= len && !hit; s++) {
				for (c = 0; c < ql &&
					    tolower((unsigned char)k[i][s + c]) ==
						    tolower((unsigned char)q[c]);
				     c++)
					;
				hit = c == ql;
			}
			T_EQ(mark[i], hit);
			want += hit;
		}
		T_EQ(m, want);
		hd_text_search_free(x);
	}
}

static const struct t_case cases[] = {
	T_CASE(text_search__case_and_borders),
	T_CASE(text_search__nul_bytes),
	T_CASE(text_search__empty_and_bad),
	T_CASE(text_search__random),
};

T_MAIN(cases)
