/*
 * t_keycache.c - the checked recent-key cache (keycache.h): a hit is
 * the id of the very key asked, checked against the key its owner keeps,
 * a newer key takes its slot from the older, and keys that collide in a
 * slot only miss; and its strings' form in front of the interner.
 */
#include "t.h"
#include "util/keycache.h"

#define BITS 4 /* 16 slots: collisions are easy to find */

/* Two keys of keys[0..n) in one slot (*a < *b), or 0. */
static int same_slot(const uint64_t *keys, size_t n, size_t *a, size_t *b)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (hd__kc_slot(keys[i], BITS) ==
			    hd__kc_slot(keys[j], BITS)) {
				*a = i;
				*b = j;
				return 1;
			}
	return 0;
}

/* The owner of the ids: keys[id] is the key of id. */
static uint32_t find(const uint32_t *kc, const uint64_t *keys, size_t n,
		     uint64_t key)
{
	return hd__kc_find(kc, hd__kc_slot(key, BITS), keys, n, sizeof(*keys),
			   0, &key, sizeof(key));
}

static void test_keycache__hits_misses_eviction(void)
{
	uint64_t keys[40];
	uint32_t kc[1u << BITS];
	size_t i, a, b, c, seen = 0;
	unsigned char used[1u << BITS];

	memset(kc, 0, sizeof(kc));
	memset(used, 0, sizeof(used));
	for (i = 0; i < 40; i++) { /* class pointers, 40 bytes apart */
		keys[i] = 0x7f0012340000ULL + 40 * i;
		T_ASSERT(hd__kc_slot(keys[i], BITS) < (1u << BITS));
		seen += !used[hd__kc_slot(keys[i], BITS)]++;
	}
	T_ASSERT(seen >= 12); /* the multiply spreads them */
	/* empty: every key misses */
	for (i = 0; i < 40; i++)
		T_EQ(find(kc, keys, 40, keys[i]), HD__NONE);
	T_ASSERT(same_slot(keys, 40, &a, &b));
	for (c = 0; c < 40; c++) /* a key in another slot */
		if (hd__kc_slot(keys[c], BITS) != hd__kc_slot(keys[a], BITS))
			break;
	T_ASSERT(c < 40);
	hd__kc_put(kc, hd__kc_slot(keys[a], BITS), (uint32_t)a);
	hd__kc_put(kc, hd__kc_slot(keys[c], BITS), (uint32_t)c);
	T_EQ(find(kc, keys, 40, keys[a]), a); /* hits */
	T_EQ(find(kc, keys, 40, keys[c]), c);
	/* b falls in a's slot: the id there is a's, whose key is not b */
	T_EQ(find(kc, keys, 40, keys[b]), HD__NONE);
	/* a key no owner has, in a's slot, misses as well */
	T_EQ(hd__kc_id(kc, hd__kc_slot(keys[b], BITS)), a);
	/* b, newer, takes the slot: a misses now, c keeps its own */
	hd__kc_put(kc, hd__kc_slot(keys[b], BITS), (uint32_t)b);
	T_EQ(find(kc, keys, 40, keys[b]), b);
	T_EQ(find(kc, keys, 40, keys[a]), HD__NONE);
	T_EQ(find(kc, keys, 40, keys[c]), c);
	/* an id the owner does not have (yet, or any more) misses */
	T_EQ(find(kc, keys, b, keys[b]), HD__NONE);
	T_EQ(find(kc, NULL, 0, keys[c]), HD__NONE);
	/* HD__NONE empties a slot; clearing empties all */
	hd__kc_put(kc, hd__kc_slot(keys[b], BITS), HD__NONE);
	T_EQ(find(kc, keys, 40, keys[b]), HD__NONE);
	hd__kc_clear(kc, BITS);
	T_EQ(find(kc, keys, 40, keys[c]), HD__NONE);
	for (i = 0; i < (1u << BITS); i++)
		T_EQ(kc[i], 0);
}

/* The "empty" key (all zero bits) with id 0, and the largest id. */
static void test_keycache__zero_key_largest_id(void)
{
	uint64_t keys[2] = { 0, 0x7f0012340028ULL };
	uint32_t kc[1u << BITS];
	size_t z = hd__kc_slot(0, BITS);

	memset(kc, 0, sizeof(kc));
	hd__kc_put(kc, z, 0);
	T_EQ(find(kc, keys, 2, 0), 0); /* a cached 0 is not an empty slot */
	kc[z] = 0;
	T_EQ(find(kc, keys, 2, 0), HD__NONE);
	/* the largest id a slot holds: HD__NONE - 1 */
	hd__kc_put(kc, z, HD__NONE - 1);
	T_EQ(hd__kc_id(kc, z), HD__NONE - 1);
	T_EQ(find(kc, keys, 2, 0), HD__NONE); /* beyond the owner's ids */
	/* multi-word keys: every word is compared */
	{
		uint64_t two[2][2] = { { 1, 2 }, { 1, 3 } }, k[2] = { 1, 3 };
		size_t s = hd__kc_slot(hd__kc_mix(1, 2), BITS);

		memset(kc, 0, sizeof(kc));
		hd__kc_put(kc, s, 0);
		T_EQ(hd__kc_find(kc, s, two, 2, sizeof(two[0]), 0, two[0],
				 sizeof(two[0])),
		     0);
		T_EQ(hd__kc_find(kc, s, two, 2, sizeof(two[0]), 0, k,
				 sizeof(k)),
		     HD__NONE);
	}
}

/* The id of s through the strings' cache c of t, asserting no error. */
static uint32_t cached(struct hd__strcache *c, struct hd__intern *t,
		       const char *p, size_t n, int json)
{
	hd_str s;
	uint32_t id = HD__NONE;

	s.ptr = p;
	s.len = n;
	if (hd__intern_cached(c, t, s, json, &id))
		return HD__NONE - 1;
	return id;
}

/* The test's own oracle: is id the id of p[0..n) in t? */
static int str_is(const struct hd__intern *t, uint32_t id, const char *p,
		  size_t n)
{
	size_t len = 0;

	return id < t->count && hd__intern_str(t, id, &len) &&
	       len == n && memcmp(hd__intern_str(t, id, NULL), p, n) == 0;
}

static void test_keycache__strings(void)
{
	struct hd__intern t;
	static struct hd__strcache c;
	/* same length, same first, middle and last bytes: one slot */
	const char *a = "app/models/user.rb", *b = "app/xxxxxs/user.rb";
	hd_str sa = { NULL, 0 }, sb = { NULL, 0 };
	uint32_t ia, ib, ie, n, last;
	size_t i;

	memset(&c, 0, sizeof(c));
	T_EQ(hd__intern_init(&t), 0);
	sa.ptr = a;
	sa.len = strlen(a);
	sb.ptr = b;
	sb.len = strlen(b);
	T_EQ(hd__kc_str_slot(sa), hd__kc_str_slot(sb));
	ia = cached(&c, &t, a, sa.len, 0);
	if (!str_is(&t, ia, a, sa.len)) {
		hd__intern_free(&t);
		T_FAIL("a interned wrong");
		return;
	}
	T_EQ(c.kc[hd__kc_str_slot(sa)], ia + 1); /* remembered */
	n = (uint32_t)t.count;
	T_EQ(cached(&c, &t, a, sa.len, 0), ia); /* a hit: nothing new */
	T_EQ(cached(&c, &t, a, sa.len, 1), ia); /* json: the same id */
	T_EQ(t.count, n);
	/* b collides with a (in the slot and as the last string) but is
	 * not a: its own id, and it takes the slot */
	ib = cached(&c, &t, b, sb.len, 0);
	T_ASSERT(ib != ia);
	T_ASSERT(str_is(&t, ib, b, sb.len));
	T_EQ(c.kc[hd__kc_str_slot(sb)], ib + 1);
	T_EQ(cached(&c, &t, a, sa.len, 0), ia); /* a misses, right id */
	T_EQ(cached(&c, &t, b, sb.len, 0), ib);
	T_EQ(cached(&c, &t, a, 5, 0), cached(&c, &t, "app/m", 5, 0));
	T_ASSERT(cached(&c, &t, a, 5, 0) != ia); /* a prefix is not a */
	/* the empty string: its id, and nothing remembered */
	n = (uint32_t)t.count;
	last = c.last;
	ie = cached(&c, &t, "", 0, 1);
	T_ASSERT(str_is(&t, ie, "", 0));
	T_EQ(cached(&c, &t, NULL, 0, 0), ie);
	T_EQ(t.count, n + 1);
	T_EQ(c.last, last); /* the empty string is never the last */
	for (i = 0; i < (1u << HD__KC_STR_BITS); i++)
		if (c.kc[i] == ie + 1)
			break;
	T_EQ(i, 1u << HD__KC_STR_BITS);
	/* escaped: decoded by json, kept raw by field (not a JSON body),
	 * never remembered, as the raw bytes are not the interned ones */
	{
		const char *esc = "x\\ty", *bad = "C:\\dir";
		uint32_t ix = cached(&c, &t, esc, 4, 1);

		T_ASSERT(str_is(&t, ix, "x\ty", 3));
		T_EQ(c.kc[hd__kc_str_slot((hd_str){ esc, 4 })], 0);
		T_EQ(cached(&c, &t, esc, 4, 1), ix);
		ix = cached(&c, &t, bad, 6, 0);
		T_ASSERT(str_is(&t, ix, bad, 6));
		T_EQ(cached(&c, &t, bad, 6, 0), ix);
	}
	hd__intern_free(&t);
}

/* Keys of any length: a 1 MiB key and one differing in a byte the slot
 * does not read are two keys; a one-byte key hits. */
static void test_keycache__long_keys(void)
{
	struct hd__intern t;
	static struct hd__strcache c;
	size_t n = (size_t)1 << 20;
	char *x = malloc(n), *y = malloc(n);
	uint32_t ix, iy;

	memset(&c, 0, sizeof(c));
	T_ASSERT(x && y);
	memset(x, 'a', n);
	memcpy(y, x, n);
	y[1] = 'b';
	if (hd__intern_init(&t)) {
		free(x);
		free(y);
		T_FAIL("out of memory");
		return;
	}
	ix = cached(&c, &t, x, n, 0);
	iy = cached(&c, &t, y, n, 0);
	if (ix == iy || !str_is(&t, ix, x, n) || !str_is(&t, iy, y, n) ||
	    cached(&c, &t, x, n, 1) != ix || cached(&c, &t, y, n, 0) != iy ||
	    c.kc[hd__kc_str_slot((hd_str){ y, n })] != iy + 1 ||
	    cached(&c, &t, "q", 1, 0) != cached(&c, &t, "q", 1, 1)) {
		hd__intern_free(&t);
		free(x);
		free(y);
		T_FAIL("long keys: %u %u", ix, iy);
		return;
	}
	hd__intern_free(&t);
	free(x);
	free(y);
}

static const struct t_case cases[] = {
	T_CASE(keycache__hits_misses_eviction),
	T_CASE(keycache__zero_key_largest_id),
	T_CASE(keycache__strings),
	T_CASE(keycache__long_keys),
};

T_MAIN(cases)
