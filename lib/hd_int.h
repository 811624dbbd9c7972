/*
 * hd_int.h - libheapdump internals shared between lib/ files and tests.
 * Never installed. Internal non-static functions are named hd__*. The
 * helpers that know nothing of dumps are lib/util/'s (util/util_int.h,
 * included here, so every lib/ file sees them).
 */
#ifndef HD_INT_H
#define HD_INT_H

#include "heapdump.h"
#include "util/util_int.h"
#include "util/thread.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

/* ---- one output line built in memory (records.c) ---- */

/* A growing byte buffer; hd__line_put is an hd_write_cb into it. */
struct hd__line {
	char *p;
	size_t len, cap;
};
HD_HIDDEN int hd__line_put(const void *p, size_t n, void *payload);
HD_HIDDEN void hd__line_free(struct hd__line *l);
/* l emptied, then rec as hd_record_write writes it (keep as there)
 * without its final '}' and newline: members may be appended, starting
 * with ", ", before hd__line_close. 0, HD_ENOMEM or HD_EPARSE. */
HD_HIDDEN int hd__record_open(struct hd__line *l, const hd_record *rec,
			      const hd_store *s, const unsigned char *keep);
/* "}\n" appended: 0 or HD_ENOMEM */
HD_HIDDEN int hd__record_close(struct hd__line *l);

/* hd__push_u32 for a set of nodes (hd_nodes). */
static inline int hd__nodes_push(hd_nodes *set, hd_node_id id)
{
	return hd__push_u32(&set->ids, &set->n, &set->cap, id);
}

/* The --by length bucket of a length: 1 for 0, k + 2 for 2^k to
 * 2^(k+1) - 1 (0 is no length), from a dump as from a store. */
static inline unsigned hd__length_bucket(uint64_t len)
{
	return len ? 2 + hd__log2_floor(len) : 1;
}

/* The name of the k-th reference of root category c (store_refnames.c),
 * NULL if none: O(1), for writers that walk a category in order. */
HD_HIDDEN const char *hd__store_root_name_at(const hd_store *s, uint32_t c,
					     uint32_t k, size_t *len);

/* ---- scanner (scan.c): one line -> one record ---- */

#define HD__SCAN_KEYS 48 /* scan.c's key ids, rounded up */
struct hd__scan {
	uint64_t *refs;   /* reusable references buffer */
	size_t refs_cap;
	hd_str *names;    /* reusable ref_names buffer */
	size_t names_cap;
	size_t nnames;    /* entries of the record's ref_names */
	/* position of the first error, relative to the line start */
	size_t err_col;
	const char *err_msg;
	int strict;
	int repaired;     /* the line needed a repair */
	int need_more;    /* the line ended inside a string (maybe joined) */
	/* where some members are, as offsets from the line start, for tools
	 * that edit records in place (replace-class); 0 when absent */
	size_t class_at, class_end;  /* the class value, quotes included */
	size_t refs_close;           /* the ']' closing references */
	size_t obj_close;            /* the '}' closing the record */
	/* read_flags' cache: the texts of the last flags objects that held
	 * only true/false members and an "age" within range, and the
	 * HD_B_ bits, HD_HAS_AGE and age each gave; the one that served
	 * last, the one to replace next */
	struct hd__flags_memo {
		unsigned len;
		uint32_t bits, has, age;
		char text[128];
	} flags[4];
	unsigned flags_last, flags_next;
	/* scan.c's guess of the next member key of a record: by the type
	 * read so far and the key before, the id of the key that followed
	 * them last time (0: no guess). Only speed depends on it, and on
	 * the flags cache; like it, zero before the first line (every
	 * user of struct hd__scan zeroes it). */
	unsigned char next_key[HD_T__COUNT][HD__SCAN_KEYS];
};

/* Scan results */
#define HD__SCAN_OK 0
#define HD__SCAN_SKIP 1   /* not a record: blank, framing, program output */
#define HD__SCAN_BAD 2    /* invalid; err_col/err_msg say why */

/*
 * Parses the record in line[0..len) (no line end) into rec. Never reads
 * outside the range. Returns HD__SCAN_OK (possibly with sc->repaired set
 * in lenient mode, where raw quotes in strings are repaired),
 * HD__SCAN_SKIP, HD__SCAN_BAD (sc->need_more when the line ended inside a
 * string or the object: a record split by a raw newline), or HD_ENOMEM.
 */
HD_HIDDEN int hd__scan_line(struct hd__scan *sc, const char *line,
			    size_t len, hd_record *rec);
/*
 * Recovers what an invalid line still gives (address, type, class,
 * memsize, generation, references up to the damage) for lenient mode.
 * Returns HD__SCAN_OK with HD_O_REPAIRED set, or HD__SCAN_BAD.
 */
HD_HIDDEN int hd__scan_salvage(struct hd__scan *sc, const char *line,
			       size_t len, hd_record *rec);
HD_HIDDEN void hd__scan_free(struct hd__scan *sc);

/*
 * SIMD (simd.c): the level the scanner uses, chosen once from the CPU
 * (AVX2 where __builtin_cpu_supports says so) unless HEAPDUMP_SIMD=portable;
 * hd__simd_force sets it for tests (0: choose again) and returns the old
 * one. hd__avx2_quote: the first '"' in [p, end), or end.
 * hd__avx2_strend: the first '"' or '\\' in [p, end), or end.
 * hd__avx2_refs: reads the `"0x<1-15 hex digits>", ` at *pp into out (at
 * most room), moves *pp past them and returns how many; stops where the
 * portable code must decide. hd__avx2_addr: the value of the address
 * string at s (after its opening quote) when it is "0x", 1 to 16 hex
 * digits and a quote, with end - s >= 20 (else NULL): the closing quote.
 * All only for HD__SIMD_AVX2.
 */
#define HD__SIMD_PORTABLE 1
#define HD__SIMD_AVX2 2
HD_HIDDEN int hd__simd_level(void);
HD_HIDDEN int hd__simd_force(int level);
/* hd__simd_level()'s choice once made (0 before): read inline, once a
 * line, where a call was measured at 0.7% of a scan */
HD_HIDDEN extern int hd__simd_chosen;
static inline int hd__simd_now(void)
{
	int l = __atomic_load_n(&hd__simd_chosen, __ATOMIC_RELAXED);

	return l ? l : hd__simd_level();
}
HD_HIDDEN const char *hd__avx2_quote(const char *p, const char *end);
/* the first '\n' in [p, end), or NULL (memchr's answer) */
HD_HIDDEN const char *hd__avx2_newline(const char *p, const char *end);
HD_HIDDEN const char *hd__avx2_strend(const char *p, const char *end);
HD_HIDDEN size_t hd__avx2_refs(const char **pp, const char *end,
			       uint64_t *out, size_t room);
HD_HIDDEN const char *hd__avx2_addr(const char *s, const char *end,
				    uint64_t *out);

#if defined(__SSE2__)
#include <emmintrin.h>
/* Where a string may end ('"' or '\\') among the 16 bytes at p: its
 * offset, or -1. Inline for the scanner's usual short string and the
 * tail of hd__avx2_strend (any CPU with AVX2 has SSE2). */
static inline int hd__sse2_strend16(const char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	unsigned m = (unsigned)_mm_movemask_epi8(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
			     _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));

	return m ? __builtin_ctz(m) : -1;
}
#endif

/*
 * The parallel scan (pscan.c). A range reader reads the lines that start
 * in [from, stop) of the dump open as fd, of len bytes, with pread into
 * a buffer of its own (so ranges share fd; offsets and columns as in
 * the whole file, line numbers counted from 1 in the range). Lines and
 * joins may run past stop; the caller cuts at a line that starts a
 * record, so a join never does. A range ends without the end-of-input
 * checks (the caller makes them), and with after_records the reader
 * behaves as after a first record (no problem held back).
 */
HD_HIDDEN int hd__reader_open_range(hd_reader **out, int fd, size_t len,
				    size_t from, size_t stop,
				    int after_records,
				    const hd_read_options *opts,
				    const char *name, hd_error *err);
/*
 * A range whose stop moves: the reader reads the lines that start
 * before stop, then calls claim(claim_payload, offset, &stop) at the
 * first line at or past it, and goes on if it returns 0 (with a stop
 * past the offset), ends if not. The parallel scan claims a part a
 * slice at a time, so that an idle thread can take the rest of it.
 * map: the file mapped (hd__map_file), read there instead of with
 * pread, its pages dropped behind the reader; or NULL.
 */
HD_HIDDEN int hd__reader_open_claim(hd_reader **out, int fd,
				    const char *map, size_t len,
				    size_t from, size_t stop,
				    int after_records,
				    int (*claim)(void *payload, uint64_t at,
						 uint64_t *stop),
				    void *claim_payload,
				    const hd_read_options *opts,
				    const char *name, hd_error *err);
/* A line this long or longer fails a reader (4 GiB; tests lower it). */
HD_HIDDEN extern size_t hd__reader_max_line;
/* A mapped reader (a range of pscan's n threads) drops the pages behind
 * it every bytes (at least a page) instead of every hd__map_budget. */
HD_HIDDEN void hd__reader_set_window(hd_reader *r, size_t bytes);
/* The first offset at or after at that starts a line starting a record
 * (as the joiner sees one) in the first len bytes of fd, or len (also
 * when fd cannot be read: no cut). */
HD_HIDDEN size_t hd__reader_cut(int fd, size_t len, size_t at);
/* An empty accumulator with st's options, and the merge of src (the
 * records after dst's) into dst. */
HD_HIDDEN int hd__stats_new_like(hd_stats **out, const hd_stats *st);
HD_HIDDEN int hd__stats_merge(hd_stats *dst, const hd_stats *src);
/* dst, to which nothing was added, and src (made like it) swap their
 * contents: the merge of src into dst without a copy. 1 if done. */
HD_HIDDEN int hd__stats_take(hd_stats *dst, hd_stats *src);
/*
 * The parallel driver: an accumulator per chunk, made on the thread
 * that reads the chunk (part_new, told the chunk's size in bytes, which
 * may end up smaller: the rest of a chunk can be taken by another
 * thread as a chunk of its own), fed that chunk's records there (add;
 * any error has the file read again by one reader), and, when every
 * chunk has been read, all of them, in file order, handed to merge,
 * which owns and frees them (part_free frees those never merged). merge
 * returns 0, an error, or HD__PSCAN_STREAM: read it again by one
 * reader (what only a whole reading decides). rs: the merged read
 * stats of one reader.
 */
struct hd__pscan_ops {
	int (*part_new)(void **out, void *payload, size_t bytes);
	int (*add)(void *acc, const hd_record *rec, hd_error *err);
	int (*merge)(void *payload, void *const *acc, unsigned n,
		     const hd_read_stats *rs, hd_error *err);
	void (*part_free)(void *acc);
};
#define HD__PSCAN_STREAM 1
/*
 * Reads the regular, plain dump at path on so->jobs threads into
 * payload through ops, problems passed on in order at the end (once
 * merged). 0, an error, or HD__PSCAN_STREAM, nothing passed on: the
 * caller reads it with one streaming reader (jobs <= 1, standard input,
 * a pipe, gzip, a store, or what only a whole reading decides).
 */
HD_HIDDEN int hd__pscan(const char *path, const hd_scan_options *so,
			const struct hd__pscan_ops *ops, void *payload,
			hd_read_stats *rs, hd_error *err);
/* Tests: the chunks the last hd__pscan of this thread merged (0: one
 * reader). Thread-local, as hd__pscan_threads: two threads may scan at
 * once. */
HD_HIDDEN extern __thread unsigned hd__pscan_parts;
/* The bytes a chunk claims at a time, and the least unclaimed rest of
 * a chunk whose second half an idle thread takes (tests lower them). */
HD_HIDDEN extern size_t hd__pscan_slice, hd__pscan_take_min;
/* records between two calls of a scan's progress callback */
#define HD__PROGRESS_EVERY 0xffff
/* the most threads hd__pscan runs (thread.h: where it started them) */
#define HD__PSCAN_MAX_JOBS 64
/* Tests: the threads of the last hd__pscan of this thread (pscan.c) as
 * they were when joined, by first part k (1 to jobs - 1; tid 0 where
 * none started). */
HD_HIDDEN extern __thread struct hd__thread
	hd__pscan_threads[HD__PSCAN_MAX_JOBS];

/* The scanner state of a reader's last record (positions relative to
 * the record's text). */
HD_HIDDEN const struct hd__scan *hd__reader_scan(const hd_reader *r);

/* The scanner's rule for the end of a member's string: is q (just after a
 * quote) followed by `, "key":` or by the final `}`? */
HD_HIDDEN int hd__continues_object(const char *q, const char *end);
/* Is the quote at q escaped (an odd run of backslashes before it)? */
HD_HIDDEN int hd__quote_escaped(const char *q, const char *begin);

/* Parses hex digits with an optional 0x; returns 0 on success. */
HD_HIDDEN int hd__parse_hex(const char *p, size_t n, uint64_t *out);

/* ---- class names (class_names.c) ---- */

/*
 * A table of the dump's CLASS, MODULE and ICLASS records and of the
 * objects that point at singleton classes, from which display names are
 * resolved once the whole dump has been seen.
 */
struct hd__class {
	uint64_t address;
	uint64_t klass;      /* the class's own class pointer */
	uint64_t superclass;
	uint64_t attached;   /* first object whose class is this one */
	int type;            /* HD_T_CLASS, HD_T_MODULE or HD_T_ICLASS */
	int attached_type;
	uint32_t flags;      /* HD__CF_ */
	uint32_t name;       /* interned raw name, or HD_STR_NONE */
	uint32_t real_name;  /* interned real_class_name */
	uint32_t display;    /* resolved own name (after resolve) */
	uint32_t real;       /* resolved name of instances' class */
};

#define HD__CF_SINGLETON 1u  /* flagged singleton or a metaclass */
#define HD__CF_RESOLVING 2u
#define HD__CF_DONE 4u
#define HD__CF_REALDONE 8u

struct hd__classtab {
	struct hd__class *v;
	size_t count, cap;
	struct hd__map index;     /* address -> slot in v */
	struct hd__intern *strs;  /* borrowed interner for names */
	uint32_t recent[1024];    /* a key cache (keycache.h) of slots */
};

HD_HIDDEN int hd__classtab_init(struct hd__classtab *ct,
				struct hd__intern *strs);
HD_HIDDEN void hd__classtab_free(struct hd__classtab *ct);
/* Feeds one object record (class records and singleton users). */
HD_HIDDEN int hd__classtab_add(struct hd__classtab *ct,
			       const hd_record *rec);
/* Adds src (the table of the records after dst's) to dst: the parallel
 * scan's merge, in the order of the chunks. */
HD_HIDDEN int hd__classtab_merge(struct hd__classtab *dst,
				 const struct hd__classtab *src);
/* Resolves display and real names of every class. */
HD_HIDDEN int hd__classtab_resolve(struct hd__classtab *ct);
/* The class entry at address, or NULL. */
HD_HIDDEN const struct hd__class *
hd__classtab_find(const struct hd__classtab *ct, uint64_t address);

/*
 * Writes the stats display name of an object of type type whose class
 * pointer is klass (0 if none) into the interner and returns its id.
 * aux is the DATA struct or IMEMO imemo_type.
 */
HD_HIDDEN int hd__object_class_name(const struct hd__classtab *ct,
				    struct hd__intern *strs, int type,
				    uint64_t klass, hd_str aux,
				    uint32_t *id_out);

/* Is this the allocation tracer or an object allocated by dump_all? */
HD_HIDDEN int hd__is_dumper_object(const hd_record *rec);

/* Features revealed by one record. */
HD_HIDDEN uint32_t hd__record_features(const hd_record *rec);
/* The same, or the same less some of known (for a caller that ORs them
 * into known): only what the record reveals beyond known is certain. */
HD_HIDDEN uint32_t hd__record_features_new(const hd_record *rec,
					   uint32_t known);
/* All that hd__record_features() (class_names.c) reads of rec, as one nonzero
 * word, for a cache of the keys seen: records with equal keys have equal
 * features. 0 for records whose features read more (IMEMO lines, whose
 * text is searched, roots, memprof records). Inline: it is asked of
 * every record; it changes with hd__record_features(). */
static inline uint64_t hd__record_features_key(const hd_record *rec)
{
	const uint32_t has = HD_HAS_SUPERCLASS | HD_HAS_SLOT_SIZE |
			     HD_HAS_AGE | HD_HAS_OBJECT_ID |
			     HD_HAS_GENERATION | HD_HAS_METHOD;

	if (rec->kind != HD_REC_OBJECT || (rec->origin & HD_O_MEMPROF) ||
	    rec->type == HD_T_IMEMO)
		return 0;
	return 1 | (uint64_t)(rec->type == HD_T_NODE) << 1 |
	       (uint64_t)((rec->bits & HD_B_CHILLED) != 0) << 2 |
	       (uint64_t)(rec->has & has) << 3;
}

/*
 * The weak-reference internals of s whose references a search with
 * HD_ROOTS_SKIP_WEAK does not follow (paths.c), as a bitmap over node ids
 * (bit id % 8 of byte id / 8) of n / 8 + 1 bytes; NULL when out of
 * memory. Free with hd__free(m, n / 8 + 1).
 */
HD_HIDDEN unsigned char *hd__weak_bitmap(const hd_store *s);
/* Is id one of those weak-reference internals (a WeakMap, a WeakRef)? */
HD_HIDDEN int hd__is_weak(const hd_store *s, hd_node_id id);
/* Is id an ObjectSpace::WeakKeyMap's table (DATA of struct weakkeymap)?
 * The one test (store_refnames.c): the store's names, paths.c and
 * leak_attr.c ask it. */
HD_HIDDEN int hd__wkmap(const hd_store *s, hd_node_id id);
/* The values of WeakKeyMaps that the dump also lists as a reference of
 * their key, named "(ephemeron value)" (the gem's dumps, man 5
 * heapdump-dump), as a bitmap of s's nodes (free with hd__bitmap_free),
 * or NULL when none is (*nomem set when out of memory). The map does
 * not hold such a value: its key does. O(references of the maps'
 * values). */
HD_HIDDEN unsigned char *hd__ephemeron_keyed(const hd_store *s, int *nomem);
/* dominators.c: the tree's own store sections; hd_store_set_domtree
 * (domtree_children.c) adds the children orders after them. */
/* A search over keys already lowercased, each followed by a NUL (lc),
 * starting at off[0..n] (u64 little-endian images; off[n] the end),
 * both borrowed: they outlive it (text_search.c; views.c maps them).
 * 0 or HD_ENOMEM. */
HD_HIDDEN int hd__text_search_borrow(hd_text_search **out, const char *lc,
				     const unsigned char *off, size_t n);
HD_HIDDEN int hd__store_set_domtree_core(hd_store *s, const hd_domtree *d,
					 hd_error *err);

/*
 * The judgement of hd_order_check() on one pair whose traced, generation,
 * objects, origin and HD_ORDER_FEW_SHARED are filled in: two processes,
 * generation or time going back, reversed (order.c; trend.c judges dumps
 * it read one at a time, without their addresses).
 */
HD_HIDDEN void hd__order_judge(hd_order_pair *op);

/* Whether some node of s has a generation, and the newest in *gen (0
 * when none) (order.c; diff.c's rules use it too). */
HD_HIDDEN int hd__newest_generation(const hd_store *s, uint64_t *gen);

/* hd_store_write() to path itself through hd__outfile_open_replace,
 * with mode (store_write.c). */
HD_HIDDEN int hd__store_write_replace(const hd_store *s, const char *path,
				      unsigned int mode, hd_error *err);

/* hd_store_open() of the open descriptor fd (always consumed): a file
 * that another user could change is read into memory, not mapped
 * (store.c). */
HD_HIDDEN int hd__store_open_fd(hd_store **out, int fd, const char *path,
				hd_error *err);

/* The dump s reads its values from is path (a copy), not the one it
 * records: 0, or -1 out of memory (store.c). */
HD_HIDDEN int hd__store_set_source(hd_store *s, const char *path);

/* A store file of stat st passed the whole-column check before and is
 * unchanged since: 1, else 0; after a check passed, that recorded
 * (store_trust.c). */
struct stat;
HD_HIDDEN int hd__store_checked(const struct stat *st);
HD_HIDDEN void hd__store_keep_checked(const struct stat *st);

/* The collection that holder's slot holds in each of the n stores
 * (the same reference name, or without names the same rank among its
 * references to that type), when holder is one object of every dump
 * and the lengths of what the slot holds grow at every step, though the
 * collection may be a new one each time: 1 with the last store's
 * collection in *coll and the lengths in len[n], else 0; of several
 * slots, the one that grew most (growth.c). */
#define HD__GROWTH_SLOT_DUMPS 64
HD_HIDDEN int hd__growth_slot(const hd_store *const *stores, size_t n,
			      hd_node_id holder, hd_node_id *coll,
			      uint64_t *len);

/* After hd_leaks_set_growth: when no collection on the path of what
 * the verdict names first grows at every step, the growth followed
 * through its holder's slot (hd__growth_slot), which the verdict then
 * names (leaks.c). */
HD_HIDDEN void hd__leaks_follow_slot(hd_leaks *l,
				     const hd_store *const *stores, size_t n);

/* The session's stores and their number (leak_session.c). */
HD_HIDDEN hd_store *const *hd__leak_session_stores(const hd_leak_session *ls,
						   size_t *n);

/* The STRING values a build with HD_INDEX_STRING_VALUES kept in s
 * (store_format.h, struct hd__gathered; records.c, store.c). Frees them
 * (none: nothing). */
HD_HIDDEN void hd__store_gathered_free(hd_store *s);
/*
 * Calls cb, in dump order, for the STRING records of the nodes in set
 * (ascending ids; NULL: every node) from the values the build kept: a
 * record with kind, type, address, offset, size (HD_HAS_SIZE), value
 * and encoding, without its text. HD_ENOTFOUND (err untouched) when s
 * kept none; cb's non-zero value stops it and is returned; HD_ENOMEM.
 */
HD_HIDDEN int hd__store_gathered_records(const hd_store *s,
					 const hd_nodes *set, hd_record_cb cb,
					 void *payload);
/* The same, each block of values freed once read and all of them at the
 * end (HD_ENOTFOUND: none kept): what the string values view does. */
HD_HIDDEN int hd__store_gathered_take(hd_store *s, const hd_nodes *set,
				      hd_record_cb cb, void *payload);
/* The site id of node id (what hd_store_site() reads), HD_NODE_NONE
 * for none; the store's number of sites in *nsites (store.c). */
HD_HIDDEN uint32_t hd__store_site_id(const hd_store *s, hd_node_id id,
				     uint32_t *nsites);
/* hd_strings_build() over every node of s, the values the build kept
 * (HD_INDEX_STRING_VALUES) freed as soon as they are read (strings.c:
 * views.c's string values). */
HD_HIDDEN int hd__strings_build_taking(hd_strings **out, hd_store *s,
				       const hd_strings_options *opts,
				       hd_error *err);

#endif /* HD_INT_H */
