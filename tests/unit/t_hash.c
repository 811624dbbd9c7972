/*
 * t_hash.c - the hash tables stay near-linear on keys chosen to collide:
 * the address map (map.c) and the string interner (intern.c).
 */
#include "t.h"
#include "hd_int.h"

/* Keys are inserted into tables of this many keys. */
#define NKEYS 4000

/* The inverse of the murmur3 finalizer, the unseeded mixer the tables
 * used up to 0.x: fmix64(unfmix64(y)) == y. */
static uint64_t inv64(uint64_t c)
{
	uint64_t x = c;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - c * x;
	return x;
}

static uint64_t unfmix64(uint64_t y)
{
	y ^= y >> 33;
	y *= inv64(0xc4ceb9fe1a85ec53ULL);
	y ^= y >> 33;
	y *= inv64(0xff51afd7ed558ccdULL);
	return y ^ (y >> 33);
}

/* The addresses of gen_collide.rb: fmix64(key) has its low 32 bits 0, so
 * an unseeded table of any size puts every key in one slot. */
static void test_hash__map_old_mixer_collisions(void)
{
	struct hd__map m;
	uint32_t v;
	size_t i, d;
	int found;

	T_EQ(hd__mix64(unfmix64((uint64_t)7 << 32)), (uint64_t)7 << 32);
	T_EQ(hd__map_init(&m, 16), 0); /* grown on the way, rehashed */
	for (i = 1; i <= NKEYS; i++) {
		if (hd__map_put(&m, unfmix64((uint64_t)i << 32), (uint32_t)i,
				&v, &found) || found) {
			hd__map_free(&m);
			T_FAIL("put %zu", i);
			return;
		}
	}
	for (i = 1; i <= NKEYS; i++)
		if (!hd__map_get(&m, unfmix64((uint64_t)i << 32), &v) ||
		    v != i) {
			hd__map_free(&m);
			T_FAIL("get %zu", i);
			return;
		}
	d = hd__map_displacement(&m);
	hd__map_free(&m);
	/* random keys at a load of at most 3/4 average ~1.5 probes: 4n
	 * leaves room; the colliding keys gave n^2/2 = 8,000,000 */
	if (d > 4 * NKEYS)
		T_FAIL("displacement %zu for %d keys", d, NKEYS);
}

/* An attacker who knew the key: NKEYS keys whose home slots, under the
 * fixed key K, are all among the first 8 of a table of cap slots. */
static const struct hd__hkey K = { 0x0706050403020100ULL,
				   0x0f0e0d0c0b0a0908ULL };

static void colliding_u64(uint64_t *out, size_t n, size_t cap)
{
	uint64_t x = 0x7f0000000000ULL;
	size_t i = 0;

	while (i < n) {
		x += 8;
		if ((hd__hash_u64(&K, x) & (cap - 1)) < 8)
			out[i++] = x;
	}
}

/* Inserts keys into a map made while hd__hash_fixed_key is fixed (NULL:
 * a random key); returns the displacement, or (size_t)-1. */
static size_t map_with(const uint64_t *keys, size_t n,
		       const struct hd__hkey *fixed)
{
	struct hd__map m;
	uint32_t v;
	size_t i, d = (size_t)-1;
	int found;

	hd__hash_fixed_key = fixed;
	if (hd__map_init(&m, 16)) {
		hd__hash_fixed_key = NULL;
		return d;
	}
	hd__hash_fixed_key = NULL;
	for (i = 0; i < n; i++)
		if (hd__map_put(&m, keys[i], (uint32_t)i, &v, &found) ||
		    found)
			goto out;
	for (i = 0; i < n; i++)
		if (!hd__map_get(&m, keys[i], &v) || v != i)
			goto out;
	if (m.cap != 8192) /* the cap colliding_u64 aimed at */
		goto out;
	d = hd__map_displacement(&m);
out:
	hd__map_free(&m);
	return d;
}

static void test_hash__map_fixed_key_collisions(void)
{
	static uint64_t keys[NKEYS];
	size_t fixed, seeded;

	colliding_u64(keys, NKEYS, 8192);
	fixed = map_with(keys, NKEYS, &K);
	seeded = map_with(keys, NKEYS, NULL);
	T_ASSERT(fixed != (size_t)-1 && seeded != (size_t)-1);
	/* under the key they were made for, the keys do collide... */
	if (fixed < (size_t)NKEYS * NKEYS / 4)
		T_FAIL("fixed key: displacement %zu only", fixed);
	/* ...and a table with its own random key does not care */
	else if (seeded > 4 * NKEYS)
		T_FAIL("random key: displacement %zu for %d keys", seeded,
		       NKEYS);
}

#define NSTR 2000

static size_t intern_with(char (*strs)[16], size_t n,
			  const struct hd__hkey *fixed)
{
	struct hd__intern t;
	uint32_t id;
	size_t i, d = (size_t)-1;

	hd__hash_fixed_key = fixed;
	if (hd__intern_init(&t)) {
		hd__hash_fixed_key = NULL;
		return d;
	}
	hd__hash_fixed_key = NULL;
	for (i = 0; i < n; i++)
		if (hd__intern_put(&t, strs[i], strlen(strs[i]), &id) ||
		    id != i)
			goto out;
	for (i = 0; i < n; i++) /* again: the same ids */
		if (hd__intern_put(&t, strs[i], strlen(strs[i]), &id) ||
		    id != i)
			goto out;
	if (t.slot_cap != 4096)
		goto out;
	d = hd__intern_displacement(&t);
out:
	hd__intern_free(&t);
	return d;
}

/* Class names that collide under K in the interner's final table. */
static void test_hash__intern_fixed_key_collisions(void)
{
	static char strs[NSTR][16];
	size_t i = 0, fixed, seeded;
	unsigned long x = 0;

	while (i < NSTR) {
		int len = snprintf(strs[i], sizeof(strs[i]), "C%lu", x++);

		if ((hd__hash_keyed(&K, strs[i], (size_t)len) & 4095) < 8)
			i++;
	}
	fixed = intern_with(strs, NSTR, &K);
	seeded = intern_with(strs, NSTR, NULL);
	T_ASSERT(fixed != (size_t)-1 && seeded != (size_t)-1);
	if (fixed < (size_t)NSTR * NSTR / 4)
		T_FAIL("fixed key: displacement %zu only", fixed);
	else if (seeded > 4 * NSTR)
		T_FAIL("random key: displacement %zu for %d strings", seeded,
		       NSTR);
}

/* Two tables get two keys; the u64 form is the 8-byte form. */
static void test_hash__keys(void)
{
	struct hd__hkey a, b;
	unsigned char le[8];
	uint64_t x = 0x00007f1234567890ULL;

	hd__hash_key_new(&a);
	hd__hash_key_new(&b);
	T_ASSERT(a.k0 != b.k0 || a.k1 != b.k1);
	T_ASSERT((a.k0 | a.k1) != 0);
	hd__put_le64(le, x);
	T_EQ(hd__hash_u64(&a, x), hd__hash_keyed(&a, le, 8));
	T_ASSERT(hd__hash_u64(&a, x) != hd__hash_u64(&b, x));
	T_ASSERT(hd__hash_keyed(&a, "ab", 2) != hd__hash_keyed(&a, "ab\0", 3));
	hd__hash_fixed_key = &K;
	hd__hash_key_new(&a);
	hd__hash_fixed_key = NULL;
	T_ASSERT(a.k0 == K.k0 && a.k1 == K.k1);
}

static int cmp_key(const void *x, const void *y)
{
	const struct hd__hkey *a = x, *b = y;

	if (a->k0 != b->k0)
		return a->k0 < b->k0 ? -1 : 1;
	return a->k1 < b->k1 ? -1 : a->k1 > b->k1;
}

/* The tables' keys, derived from one drawn per process, never repeat. */
static void test_hash__derived_keys_distinct(void)
{
	enum { N = 4096 };
	static struct hd__hkey k[N];
	size_t i, same = 0, zero = 0;

	for (i = 0; i < N; i++)
		hd__hash_key_new(&k[i]);
	qsort(k, N, sizeof(k[0]), cmp_key);
	for (i = 0; i < N; i++) {
		zero += (k[i].k0 | k[i].k1) == 0;
		same += i && cmp_key(&k[i - 1], &k[i]) == 0;
	}
	T_EQ(same, 0);
	T_EQ(zero, 0);
}

static const struct t_case cases[] = {
	T_CASE(hash__derived_keys_distinct),
	T_CASE(hash__map_old_mixer_collisions),
	T_CASE(hash__map_fixed_key_collisions),
	T_CASE(hash__intern_fixed_key_collisions),
	T_CASE(hash__keys),
};

T_MAIN(cases)
