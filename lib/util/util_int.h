/*
 * util_int.h - the internals of lib/util/ (allocation, registries, file
 * mapping, vectors and bitmaps, errors, dynamic loading, byte order,
 * sums, hashing, maps, interning, outputs) for lib/ files and the tests:
 * nothing here knows a dump. hd_int.h includes it; lib/util/ files
 * include it and never hd_int.h. Internal functions are named hd__*.
 */
#ifndef HD_UTIL_INT_H
#define HD_UTIL_INT_H

#include "hd_util.h"

#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define HD_HIDDEN __attribute__((visibility("hidden")))
#define HD_LIKELY(x) __builtin_expect(!!(x), 1)
#define HD_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HD_HIDDEN
#define HD_LIKELY(x) (x)
#define HD_UNLIKELY(x) (x)
#define HD_PRINTF(a, b)
#endif

/* ---- allocation (alloc.c): every library allocation goes here ---- */

HD_HIDDEN void *hd__malloc(size_t n);
HD_HIDDEN void *hd__calloc(size_t n, size_t size);
/* maps the pages of a block about to be written in full (alloc.c) */
HD_HIDDEN void hd__prefault(void *p, size_t n);
HD_HIDDEN void *hd__realloc(void *p, size_t old_n, size_t n);
HD_HIDDEN void hd__free(void *p, size_t old_n);
/* n * size, or NULL if that overflows size_t */
HD_HIDDEN void *hd__array_alloc(size_t n, size_t size);
/* grows *p (holding *cap items of size) to at least need items */
HD_HIDDEN int hd__grow(void **p, size_t *cap, size_t need, size_t size);
HD_HIDDEN char *hd__strdup(const char *s);

/* qsort(3) whose comparator gets ctx (sort.c): a sort's state never in
 * a file-scope variable, where two threads would share it. */
HD_HIDDEN void hd__sort(void *base, size_t n, size_t size,
			int (*cmp)(const void *, const void *, void *),
			void *ctx);

/* ---- registries a signal handler reads (outfile.c, filemap.c) ---- */

/*
 * A slot of such a registry goes from FREE to BUSY (hd__slot_take), is
 * filled, turns LIVE (hd__slot_set), and is FREE again once emptied: the
 * handler reads only LIVE slots, with atomic loads.
 */
enum { HD__SLOT_FREE, HD__SLOT_BUSY, HD__SLOT_LIVE };

/* A FREE slot of state[0..n), now BUSY; -1 when every one is taken. */
static inline int hd__slot_take(int *state, int n)
{
	int i, free_slot;

	for (i = 0; i < n; i++) {
		free_slot = HD__SLOT_FREE;
		if (__atomic_compare_exchange_n(&state[i], &free_slot,
						HD__SLOT_BUSY, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return i;
	}
	return -1;
}

static inline void hd__slot_set(int *state, int v)
{
	__atomic_store_n(state, v, __ATOMIC_RELEASE);
}

static inline int hd__slot_live(const int *state)
{
	return __atomic_load_n(state, __ATOMIC_ACQUIRE) == HD__SLOT_LIVE;
}

/* ---- read-only mappings of whole files (filemap.c) ---- */

/* The bytes of a mapped dump its readers keep mapped, together: each of
 * n readers drops the pages behind it every hd__map_budget / n bytes
 * (tests lower it). */
#define HD__MAP_BUDGET ((size_t)32 << 20)
HD_HIDDEN extern size_t hd__map_budget;
/* fd's first len bytes mapped read-only for path (registered for
 * hd_mapped_path), or NULL: len 0, HD_NO_MMAP, or mmap failed (the
 * caller reads instead). */
HD_HIDDEN const char *hd__map_file(int fd, size_t len, const char *path);
HD_HIDDEN void hd__unmap_file(const char *base, size_t len);
/* Whether the file of len bytes mapped at map reads faster there than
 * with read(2): it does when the page cache holds it in large folios
 * (three 2 MiB blocks touched once each: more than 32 pages mapped in
 * two), and when it is under HD__MAP_PROBE_MIN; not without
 * /proc/self/pagemap. hd__map_policy (tests): 1 always, -1 never. */
#define HD__MAP_PROBE_MIN ((size_t)8 << 20)
HD_HIDDEN int hd__map_pays(const char *map, size_t len);
HD_HIDDEN extern int hd__map_policy;
/* A dump file: hd__map_file where hd__map_pays, else NULL (read it). */
HD_HIDDEN const char *hd__map_dump(int fd, size_t len, const char *path);
/* Drops the mapped pages of [from, to) of base but the one holding to;
 * returns the offset they now end at (from if none went). */
HD_HIDDEN size_t hd__map_drop(const char *base, size_t from, size_t to);

/* The one set of array macros: n items of *p, through the allocator. */
#define HD_ALLOC(p, n) ((p) = hd__array_alloc((n), sizeof(*(p))))
#define HD_FREE(p, n) hd__free((p), (size_t)(n) * sizeof(*(p)))

/* "No vertex": a node id, a local id or a number not given. */
#define HD__NONE 0xffffffffu

/* ---- the one growable vector (of uint32: node ids, local ids) ---- */

/* Appends x to (*v)[0..*n), growing *cap by doubling. 0 or HD_ENOMEM. */
HD_HIDDEN int hd__push_u32(uint32_t **v, size_t *n, size_t *cap,
			   uint32_t x);
/* ---- the one bitmap: bit i % 8 of byte i / 8, n / 8 + 1 bytes ---- */

static inline size_t hd__bitmap_bytes(uint32_t n)
{
	return (size_t)n / 8 + 1;
}

/* A zeroed bitmap of n bits, or NULL. */
static inline unsigned char *hd__bitmap_new(uint32_t n)
{
	return hd__calloc(hd__bitmap_bytes(n), 1);
}

static inline void hd__bitmap_free(unsigned char *m, uint32_t n)
{
	hd__free(m, m ? hd__bitmap_bytes(n) : 0);
}

static inline int hd__bit(const unsigned char *m, uint32_t i)
{
	return m[i / 8] >> (i % 8) & 1;
}

static inline void hd__bit_set(unsigned char *m, uint32_t i)
{
	m[i / 8] |= (unsigned char)(1u << (i % 8));
}

static inline void hd__bit_clear(unsigned char *m, uint32_t i)
{
	m[i / 8] &= (unsigned char)~(1u << (i % 8));
}

/* ---- errors (error.c) ---- */

/* v in decimal with a comma every three digits ("1,234,567"), in buf. */
HD_HIDDEN const char *hd__commas(uint64_t v, char buf[32]);

HD_HIDDEN int hd__error(hd_error *err, int code, const char *fmt, ...)
	HD_PRINTF(3, 4);
HD_HIDDEN int hd__error_sys(hd_error *err, int sys_errno, const char *fmt,
			    ...) HD_PRINTF(3, 4);
HD_HIDDEN int hd__error_at(hd_error *err, int code, uint64_t line,
			   uint64_t column, uint64_t offset, const char *fmt,
			   ...) HD_PRINTF(6, 7);

/* ---- libraries loaded at first use (dynload.c) ---- */

/* One function to look up: its name, and where (offsetof) in the
 * caller's table of function pointers its address goes. */
struct hd__dynsym {
	const char *name;
	size_t off;
};

/* A library: its file (SONAME, from the Makefile), the Debian package
 * that installs it (for the message), its functions and the table they
 * fill; loaded stays 0 until the table is full. */
struct hd__dynlib {
	const char *soname;
	const char *pkg;
	const struct hd__dynsym *syms;
	size_t n;
	void *api;
	int loaded;
};

/* Declares a table member of the type of the header's function f. */
#define HD__DYNFN(f) __typeof__(f) *f
#define HD__DYNSYM(table, f) { #f, offsetof(struct table, f) }

/*
 * Loads lib (dlopen, RTLD_NOW | RTLD_LOCAL) and fills its table, once
 * for the process; later calls return 0 at once. Returns 0, or HD_ERROR
 * naming the library and what to install (tried again at the next call).
 */
HD_HIDDEN int hd__dynload(struct hd__dynlib *lib, hd_error *err);

/* Argument checks: an error, never an abort, in release builds. */
#define HD_ASSERT_ARG(expr)                                              \
	do {                                                             \
		if (!(expr))                                             \
			return hd__error(err, HD_EINVAL,                 \
					 "invalid argument: %s", #expr); \
	} while (0)

/* ---- little-endian access for the store (fixed byte order) ---- */

static inline uint32_t hd__le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t hd__le64(const unsigned char *p)
{
	return (uint64_t)hd__le32(p) | (uint64_t)hd__le32(p + 4) << 32;
}

static inline void hd__put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline void hd__put_le64(unsigned char *p, uint64_t v)
{
	hd__put_le32(p, (uint32_t)v);
	hd__put_le32(p + 4, (uint32_t)(v >> 32));
}

/* ---- sums ---- */

/*
 * *a += b, stopping at 2^64-1: every memsize sum of the library (stats,
 * diff, dominators, interface) and of the CLI (hd_u64_sat_add) goes
 * through it. Returns 1 when the sum stopped there, else 0; callers OR
 * it into the flag their result reports ("saturated").
 */
static inline int hd__sat_add(uint64_t *a, uint64_t b)
{
	if (b > UINT64_MAX - *a) {
		*a = UINT64_MAX;
		return 1;
	}
	*a += b;
	return 0;
}

/* The largest k with 2^k <= v (0 for 0 and 1). */
static inline unsigned hd__log2_floor(uint64_t v)
{
	unsigned k = 0;

	while (v >>= 1)
		k++;
	return k;
}

/* ---- hashing ---- */

static inline uint64_t hd__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* An unkeyed hash of bytes, for fingerprints (diff), never for a table. */
HD_HIDDEN uint64_t hd__hash_bytes(const void *p, size_t n, uint64_t seed);

/*
 * Every hash table hashes with SipHash-1-3 under its own random key
 * (hash.c says why): keys a dump chooses cannot all fall in one slot.
 * Nothing may depend on slot order.
 */
struct hd__hkey {
	uint64_t k0, k1;
};

/* Tests only: when set, every new table gets this key instead. */
HD_HIDDEN extern const struct hd__hkey *hd__hash_fixed_key;
/* A fresh key from getrandom(2) (or fallbacks); never fails. */
HD_HIDDEN void hd__hash_key_new(struct hd__hkey *out);
HD_HIDDEN uint64_t hd__hash_keyed(const struct hd__hkey *k, const void *p,
				  size_t n);
/* hd__hash_keyed of the 8 little-endian bytes of x. */
HD_HIDDEN uint64_t hd__hash_u64(const struct hd__hkey *k, uint64_t x);

/* ---- u64 -> u32 open-addressing map (map.c) ---- */

struct hd__map {
	uint64_t *keys;  /* key+1; 0 marks an empty slot */
	uint32_t *vals;
	size_t cap;      /* power of two */
	size_t count;
	int has_max;     /* UINT64_MAX cannot be stored as key+1 */
	uint32_t max_val;
	struct hd__hkey hkey;
};

HD_HIDDEN int hd__map_init(struct hd__map *m, size_t expect);
HD_HIDDEN void hd__map_free(struct hd__map *m);
/* Inserts key if absent. *val_out receives the stored value (existing or
 * new), *found whether it existed. Returns 0 or HD_ENOMEM. */
HD_HIDDEN int hd__map_put(struct hd__map *m, uint64_t key, uint32_t val,
			  uint32_t *val_out, int *found);
/* Returns 1 and sets *val if present. */
HD_HIDDEN int hd__map_get(const struct hd__map *m, uint64_t key,
			  uint32_t *val);
/* Tests: the sum over the keys of their distance from their home slot
 * (the probes a lookup of each key makes beyond the first). */
HD_HIDDEN size_t hd__map_displacement(const struct hd__map *m);

/* ---- string interning (intern.c): bytes -> dense u32 id ---- */

struct hd__intern {
	char *bytes;       /* all strings, each followed by a NUL */
	size_t bytes_len, bytes_cap;
	uint64_t *offs;    /* offs[id] = start in bytes; offs[count] = end */
	size_t count, offs_cap;
	uint32_t *slots;   /* id+1, 0 empty */
	size_t slot_cap;
	struct hd__hkey hkey;
};

#define HD_STR_NONE 0xffffffffu

HD_HIDDEN int hd__intern_init(struct hd__intern *t);
HD_HIDDEN void hd__intern_free(struct hd__intern *t);
HD_HIDDEN int hd__intern_put(struct hd__intern *t, const char *s, size_t n,
			     uint32_t *id_out);
/* Tests: the summed distance of the strings from their home slots. */
HD_HIDDEN size_t hd__intern_displacement(const struct hd__intern *t);
/*
 * Interns a field that some writers escape and others write raw (file:
 * raw in every Ruby's dump_all, escaped by HeapDump.dump), as the bytes
 * Ruby had: JSON-unescaped when the span reads as a JSON string body (no
 * raw quote or control byte, every backslash a valid escape), else as it
 * is. Both the stats and the store go through it, so a path has one
 * spelling whatever read it.
 */
HD_HIDDEN int hd__intern_field(struct hd__intern *t, hd_str s,
			       uint32_t *id_out);
/* Interns the JSON-unescaped form of a raw hd_str. */
HD_HIDDEN int hd__intern_json(struct hd__intern *t, hd_str s,
			      uint32_t *id_out);
static inline const char *hd__intern_str(const struct hd__intern *t,
					 uint32_t id, size_t *len)
{
	if (len)
		*len = (size_t)(t->offs[id + 1] - t->offs[id] - 1);
	return t->bytes + t->offs[id];
}

/* ---- the cache directory and private files (cachedir.c) ---- */

struct stat;

/* 1 when sb is a regular file of this user that no one else may write */
HD_HIDDEN int hd__file_ours(const struct stat *sb);
/* 1 when path is a directory (not a link) of this user that no one else
 * may write */
HD_HIDDEN int hd__dir_private(const char *path);
/* mkdir -p, each missing directory 0700: 0, or -1 and errno */
HD_HIDDEN int hd__make_dirs(char *path);
/* The cache directory ($XDG_CACHE_HOME/heapdump, ~/.cache/heapdump)
 * into buf; with make, made and checked private (hd__dir_private). 0,
 * or -1 with a note (may be NULL) saying why. */
HD_HIDDEN int hd__cache_dir(char *buf, size_t size, int make, char *note,
			    size_t nsize);
/* Writes n bytes at path atomically, mode 0600, a link there replaced,
 * never followed (hd__outfile_open_replace). @return 0, HD_EIO,
 * HD_ENOMEM */
HD_HIDDEN int hd__write_private(const char *path, const void *p, size_t n,
				hd_error *err);

/* ---- outputs (outfile.c) ---- */

/* n bytes of buf written to fd at offset at, whatever pwrite takes at a
 * time: 0, or -1 with errno (EIO for a write of nothing). */
HD_HIDDEN int hd__pwrite_all(int fd, const void *buf, size_t n, uint64_t at);

/* The descriptor of o's temporary file (a regular file the commit
 * renames) when nothing is buffered, else -1: the store's writer maps
 * it (outfile.c). */
HD_HIDDEN int hd__outfile_fd(const hd_outfile *o);

/* An output to path itself, never followed (the store cache's): a
 * temporary file beside it (O_EXCL, mode & 0666, locked while written)
 * that the commit renames over whatever path is then, a link included
 * (replaced, never written through) (outfile.c). */
HD_HIDDEN int hd__outfile_open_replace(hd_outfile **out, const char *path,
				       unsigned int mode, hd_error *err);

/* Removes from dir the stores' temporary files (NAME.hds.tmpXXXXXX)
 * that a killed writer left: regular files of this user that no writer
 * holds locked; the count removed (outfile.c). */
HD_HIDDEN int hd__outfile_sweep(const char *dir);

/* The four hex digits of a JSON \\uXXXX at s (left bytes there) into
 * *cp: 0, or -1 when fewer or not hex (text.c). */
HD_HIDDEN int hd__json_hex4(const char *s, size_t left, uint32_t *cp);
/* Code point cp as UTF-8 into d (room for 4); its length (text.c). */
HD_HIDDEN size_t hd__utf8_put(char *d, uint32_t cp);

#endif /* HD_UTIL_INT_H */
