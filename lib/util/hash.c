/*
 * hash.c - the keyed hash of every hash table of the library.
 *
 * A dump is untrusted input, and its addresses and strings are table
 * keys. With a fixed hash function, someone who writes the dump can pick
 * keys that all fall in one slot: 160,000 crafted CLASS addresses took
 * `index` from 0.5 s to 65 s (linear probing makes
 * every insertion walk past all the keys before it). So every table
 * hashes with SipHash-1-3 under a 128-bit key of its own, derived when
 * the table is made from a key the process draws once from getrandom(2):
 * the slots of a key cannot be predicted without the key, and nothing
 * the library prints reveals it (no output follows slot order: rows are
 * sorted, ids follow first insertion), so the worst case no longer
 * depends on the input. The tables: map.c (u64 -> u32) and intern.c
 * (strings), beside the group tables of stats.c, the site table of
 * store_build.c and the mask table of interface.c.
 *
 * Why SipHash-1-3: it is a keyed pseudo-random function designed for
 * exactly this (hash-flooding defence: Python, Rust and Ruby itself use
 * SipHash-1-3 or -2-4 for their hash tables), unlike a seeded fast mixer
 * such as murmur or xxhash, for which seed-independent multicollisions
 * are known. One round per 8-byte word and three to finish: about 5 ns
 * for an address, which the benchmark does not see (the tables are a
 * small part of reading a dump).
 *
 * stats.c, class_names.c, store_stats.c and store_build.c put a small cache
 * of recent keys (keycache.h), indexed by an unkeyed multiply, in front
 * of their tables; every hit is checked against the key and every miss
 * goes to the keyed table, so a crafted dump can only make the cache
 * miss, never the table degrade.
 *
 * If getrandom fails (an old kernel, a seccomp filter), the key comes
 * from /dev/urandom, and if that fails too from the clock, the pid and
 * ASLR'd addresses: weaker, but still unknown to whoever wrote the dump.
 */
#include "util_int.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

const struct hd__hkey *hd__hash_fixed_key;

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                      \
	do {                                                          \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                    \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                    \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

#define SIPINIT(k)                                  \
	uint64_t v0 = (k)->k0 ^ 0x736f6d6570736575ULL; \
	uint64_t v1 = (k)->k1 ^ 0x646f72616e646f6dULL; \
	uint64_t v2 = (k)->k0 ^ 0x6c7967656e657261ULL; \
	uint64_t v3 = (k)->k1 ^ 0x7465646279746573ULL

#define SIPFINISH()                  \
	do {                         \
		v2 ^= 0xff;          \
		SIPROUND;            \
		SIPROUND;            \
		SIPROUND;            \
	} while (0)

uint64_t hd__hash_keyed(const struct hd__hkey *k, const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t m, b = (uint64_t)n << 56;
	size_t left = n;
	SIPINIT(k);

	while (left >= 8) {
		m = hd__le64(s);
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
		s += 8;
		left -= 8;
	}
	switch (left) {
	case 7: b |= (uint64_t)s[6] << 48; /* fall through */
	case 6: b |= (uint64_t)s[5] << 40; /* fall through */
	case 5: b |= (uint64_t)s[4] << 32; /* fall through */
	case 4: b |= (uint64_t)s[3] << 24; /* fall through */
	case 3: b |= (uint64_t)s[2] << 16; /* fall through */
	case 2: b |= (uint64_t)s[1] << 8;  /* fall through */
	case 1: b |= (uint64_t)s[0];       /* fall through */
	default: break;
	}
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	SIPFINISH();
	return v0 ^ v1 ^ v2 ^ v3;
}

/* hd__hash_keyed of the 8 little-endian bytes of x, unrolled. */
uint64_t hd__hash_u64(const struct hd__hkey *k, uint64_t x)
{
	const uint64_t b = (uint64_t)8 << 56;
	SIPINIT(k);

	v3 ^= x;
	SIPROUND;
	v0 ^= x;
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	SIPFINISH();
	return v0 ^ v1 ^ v2 ^ v3;
}

static int read_urandom(void *buf, size_t n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, n);
	close(fd);
	return r == (ssize_t)n ? 0 : -1;
}

/* The process's key, drawn once (below); every table's key is derived
 * from it and a count of tables: SipHash is a pseudo-random function,
 * so the derived keys are as unknown as it is. Stats made ~50 tables,
 * which were ~50 getrandom calls, on every thread of a parallel read. */
static struct hd__hkey master;
static int master_state; /* 0 none, 1 being drawn, 2 drawn (atomic) */
static uint64_t tables;  /* atomic */

static void draw_key(struct hd__hkey *out)
{
	struct hd__hkey fb;
	struct timespec ts;
	int ok = 0;

#if defined(__linux__)
	ok = getrandom(out, sizeof(*out), GRND_NONBLOCK) ==
	     (ssize_t)sizeof(*out);
#endif
	if (ok || read_urandom(out, sizeof(*out)) == 0)
		return;
	/* the last resort: what differs between runs and tables */
	clock_gettime(CLOCK_REALTIME, &ts);
	fb.k0 = (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&ts;
	fb.k1 = (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32 ^
		(uint64_t)(uintptr_t)out;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	out->k0 = hd__hash_u64(&fb, (uint64_t)ts.tv_nsec);
	out->k1 = hd__hash_u64(&fb, out->k0 ^ (uint64_t)ts.tv_sec);
}

void hd__hash_key_new(struct hd__hkey *out)
{
	uint64_t n;
	int st = 0;

	if (hd__hash_fixed_key) {
		*out = *hd__hash_fixed_key;
		return;
	}
	if (__atomic_load_n(&master_state, __ATOMIC_ACQUIRE) != 2) {
		if (__atomic_compare_exchange_n(&master_state, &st, 1, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			draw_key(&master);
			__atomic_store_n(&master_state, 2, __ATOMIC_RELEASE);
		} else if (st != 2) {
			/* another thread is drawing it: a key of its own */
			draw_key(out);
			return;
		}
	}
	n = __atomic_fetch_add(&tables, 1, __ATOMIC_RELAXED);
	out->k0 = hd__hash_u64(&master, 2 * n);
	out->k1 = hd__hash_u64(&master, 2 * n + 1);
}
