/*
 * keycache.h - the checked recent-key cache, one for the library.
 *
 * Reading a dump asks a table for the id of nearly every record's class,
 * site, strings and group, and most answers repeat. A key cache sits in
 * front of such a table: an array of 2^bits slots (uint32_t, zeroed:
 * all empty), each remembering 1 + the id of the latest key to fall in
 * it, chosen by an unkeyed multiply of the key's words (hd__kc_slot: far
 * cheaper than the table's SipHash, hash.c). The cache keeps no key: the
 * id in a slot is a candidate, a hit only if the key the owner keeps for
 * that id (the table's entry, the dictionary's word, the interner's
 * bytes) is the key asked, byte for byte (hd__kc_find). A miss asks the
 * table and puts its answer in the slot, over the older key
 * (hd__kc_put). So a dump crafted to collide in the cache only misses,
 * and pays the keyed table as before; and as the table makes every id,
 * what is built is the same with the cache or without it.
 * hd__intern_cached is the cache in front of the interner (the last id,
 * then the slots, checked against the interner's bytes): it interns the
 * files and type strings of stats.c and the files, methods and type
 * strings of store_build.c.
 *
 * Users: stats.c's group tables, class_names.c's class table,
 * store_stats.c's groups of a store, store_build.c's class pointers and
 * sites (tests/cli/stats_accum.sh, tests/cli/index_cache.sh,
 * unit/t_keycache). hd_stats_add also keeps, checked the same way, the
 * fixed class names (IMEMO, NODE, free slots, objects of no class) by
 * type, class address and type string (the one cache that keeps its own
 * copy of its keys, as no table has them; tests/cli/stats_lean.sh) and
 * the features keys already seen (hd__record_features_key: records with
 * equal keys reveal the same features); class_names.c skips the class
 * table for an object whose class already has its final attached
 * object in that cache.
 */
#ifndef HD_KEYCACHE_H
#define HD_KEYCACHE_H

#include "util_int.h"

/* Inline even where the compiler would not: these are asked of nearly
 * every record, and a call costs more than the lookup. */
#if defined(__GNUC__)
#define HD__KC_INLINE static inline __attribute__((always_inline))
#else
#define HD__KC_INLINE static inline
#endif

/* The slot, among 1 << bits (1 to 63), of a key whose words mix to h. */
HD__KC_INLINE size_t hd__kc_slot(uint64_t h, unsigned bits)
{
	return (size_t)((h * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

/* One more word w of a key into h, for keys of several words. */
HD__KC_INLINE uint64_t hd__kc_mix(uint64_t h, uint64_t w)
{
	return (h ^ w) * 0x9e3779b97f4a7c15ULL;
}

/* The id in slot i of kc, a candidate to check; HD__NONE if empty. */
HD__KC_INLINE uint32_t hd__kc_id(const uint32_t *kc, size_t i)
{
	return kc[i] - 1;
}

/*
 * The id in slot i of kc if it is the id of key (len bytes), else
 * HD__NONE. The owner keeps the key of id k at owner + k * stride + off,
 * for ids below n (owner may be NULL when n is 0). Inline, with constant
 * sizes: a compare or two.
 */
HD__KC_INLINE uint32_t hd__kc_find(const uint32_t *kc, size_t i,
				   const void *owner, size_t n, size_t stride,
				   size_t off, const void *key, size_t len)
{
	uint32_t id = hd__kc_id(kc, i);

	if (id < n && !memcmp((const char *)owner + (size_t)id * stride + off,
			      key, len))
		return id;
	return HD__NONE;
}

/* Slot i now remembers id (HD__NONE: nothing). */
HD__KC_INLINE void hd__kc_put(uint32_t *kc, size_t i, uint32_t id)
{
	kc[i] = id + 1;
}

/* Every slot of a cache of 1 << bits emptied: the ids changed meaning. */
HD__KC_INLINE void hd__kc_clear(uint32_t *kc, unsigned bits)
{
	memset(kc, 0, sizeof(*kc) << bits);
}

/*
 * A strings' cache, for one field of the records (a file, a method, a
 * type string), in front of an interner: a key cache of 1 <<
 * HD__KC_STR_BITS slots, and before it the id last found, as consecutive
 * records often share the string. Zeroed: empty. hd__intern_cached
 * interns s as hd__intern_json (json) or hd__intern_field does (the id
 * is the same): both keep a string without a backslash as it is, so an
 * id whose interned bytes are s's is the id either gives. Only such
 * strings are remembered; an empty one is not (it has no bytes to pick a
 * slot). 0 or HD_ENOMEM. Inline, as it is asked of nearly every record;
 * a miss calls hd__intern_cached_miss.
 */
#define HD__KC_STR_BITS 10
struct hd__strcache {
	uint32_t last; /* 1 + the id last found, 0 none */
	uint32_t kc[1u << HD__KC_STR_BITS];
};

HD_HIDDEN int hd__intern_cached_miss(struct hd__strcache *c,
				     struct hd__intern *t, hd_str s, int json,
				     uint32_t *id_out);

/* The slot of s (not empty) in a strings' cache: its length and three of
 * its bytes, which tell most paths and names apart. */
HD__KC_INLINE size_t hd__kc_str_slot(hd_str s)
{
	const unsigned char *p = (const unsigned char *)s.ptr;

	return hd__kc_slot(s.len ^ (uint64_t)p[0] << 16 ^
				   (uint64_t)p[s.len / 2] << 24 ^
				   (uint64_t)p[s.len - 1] << 32,
			   HD__KC_STR_BITS);
}

/* Is id (a candidate, or HD__NONE) the id of the bytes of s in t? */
HD__KC_INLINE int hd__kc_str_is(const struct hd__intern *t, uint32_t id,
				hd_str s)
{
	size_t n;
	const char *p;

	if (id >= t->count)
		return 0;
	p = hd__intern_str(t, id, &n);
	return n == s.len && !memcmp(p, s.ptr, n);
}

HD__KC_INLINE int hd__intern_cached(struct hd__strcache *c,
				    struct hd__intern *t, hd_str s, int json,
				    uint32_t *id_out)
{
	uint32_t id;

	if (s.len) {
		if (hd__kc_str_is(t, id = c->last - 1, s) ||
		    hd__kc_str_is(t, id = hd__kc_id(c->kc, hd__kc_str_slot(s)),
				  s)) {
			c->last = id + 1;
			*id_out = id;
			return 0;
		}
	}
	return hd__intern_cached_miss(c, t, s, json, id_out);
}

#endif /* HD_KEYCACHE_H */
