/*
 * heapdump.h - libheapdump, the public API.
 *
 * libheapdump reads Ruby heap dumps (ObjectSpace.dump_all NDJSON of Ruby
 * 2.1 to 4.x, and memprof JSON) with a tolerant streaming reader, and builds
 * or opens a compact mmap'd graph store of the heap (man 5 heapdump-store).
 *
 * Conventions (man 3 libheapdump):
 *  - Fallible functions return int: 0 on success or a negative hd_errcode.
 *    Their last parameter is an optional, caller-owned hd_error (NULL is
 *    allowed) which is filled on failure. There is no global error state.
 *  - Handles are opaque. Objects returned through **out are owned by the
 *    caller and released by the matching _free or _close function, which
 *    accepts NULL. Pointers returned as function values are borrowed from
 *    their parent handle.
 *  - The library never prints, never exits, and never reads outside the
 *    buffers it was given, whatever the input.
 *  - Handles are not thread-safe; distinct handles may be used from
 *    distinct threads. A read-only hd_store may be shared between threads.
 */
#ifndef HEAPDUMP_H
#define HEAPDUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The gem compiles the library into its extension with -DHD_API= (no
 * symbol of it exported from the extension). */
#ifndef HD_API
#if defined(__GNUC__) && __GNUC__ >= 4
#define HD_API __attribute__((visibility("default")))
#else
#define HD_API
#endif
#endif

/* ===================================================================== */
/* Version                                                               */
/* ===================================================================== */

#define HD_VERSION_MAJOR 0
#define HD_VERSION_MINOR 1
#define HD_VERSION_PATCH 0
#define HD_VERSION_STRING "0.1.0"

/** The version of the library linked at run time ("0.1.0"). */
HD_API const char *hd_version(void);

/* ===================================================================== */
/* Errors                                                                */
/* ===================================================================== */

/** Error codes. Every fallible function documents the few it returns. */
typedef enum hd_errcode {
	HD_OK = 0,
	HD_ERROR = -1,    /**< anything not listed below */
	HD_ENOMEM = -2,   /**< an allocation failed */
	HD_EIO = -3,      /**< a system call failed; see sys_errno */
	HD_EPARSE = -4,   /**< malformed dump input; see line, column */
	HD_EFORMAT = -5,  /**< a corrupt, truncated or foreign store file */
	HD_ENOTFOUND = -6,/**< the asked-for object does not exist */
	HD_EINVAL = -7,   /**< an invalid argument */
	HD_ELIMIT = -8,   /**< the input exceeds a documented limit */
	HD_ESTALE = -9,   /**< a store's source dump changed since indexing */
	HD_ENOTDUMP = -10,/**< the input is not a heap dump (hd_reader_next) */
	HD_ITEROVER = -31 /**< an iteration has no more items (not an error) */
} hd_errcode;

/**
 * Error details, filled by a failing function. For parse errors line is
 * the 1-based physical line of the input, column the 1-based byte column
 * in that line and offset the 0-based byte offset of the line's start in
 * the (decompressed) input; they are 0 when not applicable.
 */
typedef struct hd_error {
	int code;           /**< an hd_errcode */
	int sys_errno;      /**< errno for HD_EIO, else 0 */
	uint64_t line;
	uint64_t column;
	uint64_t offset;
	char msg[256];      /**< lowercase, no trailing period */
} hd_error;

/** A static description of an error code ("parse error"). */
HD_API const char *hd_strerror(int code);

/* ===================================================================== */
/* Allocator                                                             */
/* ===================================================================== */

/**
 * The one allocator every library allocation goes through. old_size is
 * the size of the block being resized or freed, so that simple arena or
 * accounting allocators can be plugged in.
 */
typedef struct hd_allocator {
	void *(*malloc)(void *ctx, size_t size);
	void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t size);
	void (*free)(void *ctx, void *ptr, size_t old_size);
	void *ctx;
} hd_allocator;

/**
 * Installs the allocator (NULL restores malloc/realloc/free). Call it
 * before any other library function, never while handles are alive.
 */
HD_API void hd_set_allocator(const hd_allocator *alc);

/* ===================================================================== */
/* The record model                                                      */
/* ===================================================================== */

/** Built-in object types, as written in a dump's "type" field. */
typedef enum hd_type {
	HD_T_UNKNOWN = 0, /**< any type name not listed here */
	HD_T_NONE,
	HD_T_OBJECT,
	HD_T_CLASS,
	HD_T_MODULE,
	HD_T_FLOAT,
	HD_T_STRING,
	HD_T_REGEXP,
	HD_T_ARRAY,
	HD_T_HASH,
	HD_T_STRUCT,
	HD_T_BIGNUM,
	HD_T_FILE,
	HD_T_DATA,
	HD_T_MATCH,
	HD_T_COMPLEX,
	HD_T_RATIONAL,
	HD_T_SYMBOL,
	HD_T_IMEMO,
	HD_T_ICLASS,
	HD_T_NODE,
	HD_T_ZOMBIE,
	HD_T__COUNT
} hd_type;

/** "STRING" for HD_T_STRING; "UNKNOWN" for out-of-range values. */
HD_API const char *hd_type_name(int type);

/** The hd_type for a type name of len bytes (case-insensitive). */
HD_API int hd_type_from_name(const char *name, size_t len);

/** What a record describes. */
typedef enum hd_kind {
	HD_REC_OBJECT = 1, /**< a heap object (incl. NONE and ZOMBIE slots) */
	HD_REC_ROOT = 2,   /**< a GC root category and the objects it marks */
	HD_REC_SHAPE = 3,  /**< a Ruby 3.2+ object shape: not a heap object */
	HD_REC_OTHER = 4,  /**< recognised but not part of the heap graph */
	HD_REC_STACK = 5,  /**< an allocation stack: id (shape_id), frames */
	HD_REC_FRAME = 6   /**< a stack frame: id (shape_id), file, line,
			    * method, class (class_name), label */
} hd_kind;

/**
 * A byte string borrowed from the input. For string fields it holds the
 * bytes between the quotes exactly as written, with JSON escapes still in
 * place and possibly invalid UTF-8 or raw quotes
 * (Ruby writes some fields unescaped).
 */
typedef struct hd_str {
	const char *ptr;
	size_t len;
} hd_str;

/* Presence bits of hd_record.has. */
#define HD_HAS_ADDRESS (1u << 0)
#define HD_HAS_CLASS (1u << 1)
#define HD_HAS_MEMSIZE (1u << 2)
#define HD_HAS_GENERATION (1u << 3)
#define HD_HAS_FILE (1u << 4)
#define HD_HAS_LINE (1u << 5)
#define HD_HAS_METHOD (1u << 6)
#define HD_HAS_SIZE (1u << 7)
#define HD_HAS_SUPERCLASS (1u << 8)
#define HD_HAS_SHAPE_ID (1u << 9)
#define HD_HAS_SLOT_SIZE (1u << 10)
#define HD_HAS_FD (1u << 11)
#define HD_HAS_OBJECT_ID (1u << 12)
#define HD_HAS_AGE (1u << 13)
#define HD_HAS_REFERENCES (1u << 14)
#define HD_HAS_FLAGS (1u << 15)
#define HD_HAS_DEFAULT (1u << 16)
#define HD_HAS_CLASS_NAME (1u << 17) /**< "class" is a name (replace-class) */
#define HD_HAS_REF_NAMES (1u << 18)  /**< ref_names, parallel to refs */
#define HD_HAS_STACK (1u << 19)      /**< "stack": the allocation stack id */

/* Boolean attributes of hd_record.bits: the object's own booleans and the
 * GC flags of its "flags" object. */
#define HD_B_FROZEN (1u << 0)
#define HD_B_EMBEDDED (1u << 1)
#define HD_B_SHARED (1u << 2)
#define HD_B_FSTRING (1u << 3)
#define HD_B_SINGLETON (1u << 4)
#define HD_B_CHILLED (1u << 5)
#define HD_B_BROKEN (1u << 6)
#define HD_B_TOO_COMPLEX (1u << 7)
#define HD_B_WB_PROTECTED (1u << 8)
#define HD_B_OLD (1u << 9)
#define HD_B_UNCOLLECTIBLE (1u << 10)
#define HD_B_MARKING (1u << 11)
#define HD_B_MARKED (1u << 12)
#define HD_B_PINNED (1u << 13)
#define HD_B_REMEMBERED (1u << 14)
#define HD_B_SHAREABLE (1u << 15)

/* How the reader got the record: hd_record.origin bits. */
#define HD_O_REPAIRED (1u << 0)  /**< recovered from an invalid line */
#define HD_O_JOINED (1u << 1)    /**< spanned several physical lines */
#define HD_O_MEMPROF (1u << 2)   /**< normalised from the memprof format */
#define HD_O_LAST_CUT (1u << 3)  /**< the final line, without its newline */

/**
 * One record of a dump, normalised across Ruby versions and formats.
 * Borrowed from the reader: valid until the next hd_reader_next() call.
 *
 * Integer fields are meaningful only when their HD_HAS_ bit is set.
 * The "size" field is the type-specific size: ARRAY length, HASH size,
 * STRING and SYMBOL bytesize, OBJECT ivars, STRUCT (none).
 *
 * For HD_REC_ROOT, root holds the category and refs the objects. For
 * HD_REC_SHAPE, shape_id, shape_parent, shape_type and edge_name are set.
 */
typedef struct hd_record {
	int kind;            /**< an hd_kind */
	int type;            /**< an hd_type (objects only) */
	uint32_t has;        /**< HD_HAS_ bits */
	uint32_t bits;       /**< HD_B_ bits */
	uint32_t origin;     /**< HD_O_ bits */
	uint64_t address;
	uint64_t class_addr;
	uint64_t superclass;
	uint64_t default_addr; /**< HASH default proc */
	uint64_t memsize;
	uint64_t generation;
	uint64_t line;
	uint64_t size;
	uint64_t object_id;  /**< 4.0 flags.object_id */
	int64_t fd;
	uint32_t shape_id;
	uint32_t shape_parent;
	uint32_t slot_size;
	uint32_t age;        /**< 4.0 flags.age */
	hd_str type_name;    /**< the "type" value as written */
	hd_str file;
	hd_str method;
	hd_str name;         /**< CLASS/MODULE name, memprof class_name */
	hd_str real_class_name;
	/** The "class" value when it is a name rather than a pointer, as
	 * written by hd_replace_class(); class_addr then comes from the
	 * "class_address" member. */
	hd_str class_name;
	hd_str struct_name;  /**< DATA struct */
	hd_str imemo_type;
	hd_str node_type;
	hd_str value;        /**< STRING/SYMBOL/FLOAT value */
	hd_str encoding;
	hd_str root;         /**< ROOT category */
	hd_str shape_type;
	hd_str edge_name;
	const uint64_t *refs; /**< references, in dump order, may repeat */
	size_t nrefs;
	const char *text;    /**< the record's bytes in the input */
	size_t text_len;     /**< without the line end */
	uint64_t offset;     /**< byte offset of text in the input */
	uint64_t lineno;     /**< 1-based physical line of the record */
	/** Where the references array is in text: the offsets of its '['
	 * and ']', both 0 when the record has none or was salvaged. */
	size_t refs_open;
	size_t refs_close;
	/** Offset of the record's closing '}' in text, 0 if salvaged. */
	size_t obj_close;
	/**
	 * Reference names (the "ref_names" member, man 5 heapdump-dump):
	 * with HD_HAS_REF_NAMES, ref_names[k] names refs[k] (nrefs
	 * entries). Each entry is the raw JSON token: a string with its
	 * quotes and escapes ("\"@cache\""), an integer array index ("3"),
	 * or {NULL, 0} for null. hd_ref_name_decode() gives the printed
	 * text. A ref_names of the wrong length or with a bad entry is
	 * dropped (the record counts as repaired; --strict fails).
	 */
	const hd_str *ref_names;
	/** Where the ref_names member is in text: the offset of its key's
	 * opening quote and of its array's '[' and ']'; 0 when absent. */
	size_t names_key;
	size_t names_open;
	size_t names_close;
	/** An object's allocation stack ("stack", HD_HAS_STACK): the id of
	 * a STACK record of the same dump (man 5 heapdump-dump, STACKS). */
	uint32_t stack;
	/** HD_REC_STACK: its frame ids, outermost first ("frames"). */
	const uint64_t *frames;
	size_t nframes;
	/** HD_REC_FRAME: the frame's full label ("label"), e.g.
	 * "Foo#bar" or "block in Foo.baz". */
	hd_str label;
} hd_record;

/**
 * Writes the printed text of a ref_names token (hd_record.ref_names[k])
 * into buf (NUL-terminated, truncated to size) and returns its full
 * length, as snprintf does: a string unescaped ("@cache"), an integer i
 * as "[i]", null as "" (0).
 */
HD_API size_t hd_ref_name_decode(char *buf, size_t size, hd_str token);

/* ===================================================================== */
/* Reader                                                                */
/* ===================================================================== */

/** Reader option flags. */
#define HD_READ_STRICT (1u << 0) /**< fail at the first invalid line */
/** An input without any record line (empty, or blank lines only) is not
 * an error: for files that may rightly hold no record, such as a
 * selection written by another command (hd_select's "from"). */
#define HD_READ_ALLOW_EMPTY (1u << 1)
/** Also return a line that has an "address" member but no "type" (as
 * `jq -c '{address}'` writes), as an HD_REC_OTHER record with
 * HD_HAS_ADDRESS, instead of skipping it: for lists of addresses. */
#define HD_READ_ADDRESSES (1u << 2)

/** A problem found in the input, as passed to hd_read_options.problem. */
typedef struct hd_problem {
	uint64_t line;     /**< 1-based physical line */
	uint64_t column;   /**< 1-based byte column */
	uint64_t offset;   /**< byte offset of the line */
	int repaired;      /**< 1: the record was recovered, 0: skipped */
	const char *msg;   /**< what was wrong */
} hd_problem;

/** Options for hd_reader_open(); initialise with HD_READ_OPTIONS_INIT. */
typedef struct hd_read_options {
	unsigned int version; /**< HD_READ_OPTIONS_VERSION */
	unsigned int flags;   /**< HD_READ_ bits */
	/** Called for every skipped or repaired line (lenient mode). */
	void (*problem)(const hd_problem *p, void *payload);
	void *payload;
} hd_read_options;

#define HD_READ_OPTIONS_VERSION 1
#define HD_READ_OPTIONS_INIT { HD_READ_OPTIONS_VERSION, 0, NULL, NULL }

/** Counts kept by a reader while it reads. */
typedef struct hd_read_stats {
	uint64_t bytes;       /**< input bytes consumed (decompressed) */
	uint64_t total_bytes; /**< input size if known (0 for pipes, gzip) */
	uint64_t lines;       /**< physical lines seen */
	uint64_t objects;     /**< HD_REC_OBJECT records returned */
	uint64_t roots;       /**< HD_REC_ROOT records returned */
	uint64_t shapes;      /**< HD_REC_SHAPE records returned */
	uint64_t others;      /**< HD_REC_OTHER records returned */
	uint64_t blank;       /**< empty lines and framing lines ("]") */
	uint64_t skipped;     /**< invalid lines that yielded nothing */
	uint64_t repaired;    /**< invalid lines whose record was recovered */
	int truncated;        /**< the input did not end with a newline */
	int gzip;             /**< the input was gzip-compressed */
	int memprof;          /**< memprof records were seen */
} hd_read_stats;

typedef struct hd_reader hd_reader;

/**
 * Opens a dump for reading: a file path, or "-" for standard input.
 * gzip-compressed input is detected by its magic bytes (zero bytes after
 * the last gzip member are padding, as for gzip). A plain regular file is
 * read through a read-only mapping of the size it has when opened (as a
 * store is) when the page cache holds it in large
 * folios, where that is faster; other input with read(2).
 * @param out receives the reader
 * @param path the dump, or "-"
 * @param opts NULL for defaults
 * @return 0, HD_EIO (cannot open), HD_ENOMEM, HD_EINVAL, HD_ENOTDUMP (the
 *         input starts with a store's magic number)
 */
HD_API int hd_reader_open(hd_reader **out, const char *path,
			  const hd_read_options *opts, hd_error *err);

/**
 * Opens a reader over a memory buffer, which must outlive the reader.
 * @return 0, HD_ENOMEM, HD_EINVAL, HD_ENOTDUMP (a store's bytes)
 */
HD_API int hd_reader_open_mem(hd_reader **out, const void *buf, size_t len,
			      const hd_read_options *opts, hd_error *err);

/**
 * Reads the next record. Invalid lines are repaired or skipped and
 * reported through opts->problem; with HD_READ_STRICT the first one fails
 * the read instead. A record without an address is an invalid line; a
 * number out of its field's range is saturated and the line reported as
 * repaired (a generation of 2^64-1 or more is dropped instead).
 *
 * An input that is not a heap dump fails with HD_ENOTDUMP, in both modes,
 * and "NAME: not a heap dump (...)" citing its first skipped line (err->line,
 * err->offset): at once when its first 32 non-blank lines are all skipped;
 * at its end when it gave no record at all (an empty input too, unless
 * HD_READ_ALLOW_EMPTY), or fewer records than skipped lines. The lines
 * skipped before the first record reach opts->problem only once a record
 * has come.
 * @param out receives a record borrowed until the next call
 * @return 0, HD_ITEROVER at the end, HD_EPARSE (strict mode: err->line,
 *         err->column and err->offset say where), HD_ENOTDUMP, HD_EIO,
 *         HD_ENOMEM, HD_ELIMIT (a line over 4 GiB)
 */
HD_API int hd_reader_next(hd_reader *r, const hd_record **out,
			  hd_error *err);

/** The reader's counts so far. */
HD_API void hd_reader_stats(hd_read_stats *out, const hd_reader *r);

/** Closes the reader. NULL is a no-op. */
HD_API void hd_reader_free(hd_reader *r);

/* ===================================================================== */
/* Graph store                                                           */
/* ===================================================================== */

/** A dense node id, 0 .. node_count-1, in ascending address order. */
typedef uint32_t hd_node_id;
#define HD_NODE_NONE ((hd_node_id)0xffffffffu)

typedef struct hd_store hd_store;

/** Progress callback: done and total bytes (total 0 if unknown). */
typedef void (*hd_progress_cb)(uint64_t done, uint64_t total, void *payload);

/** Options for building a store; initialise with HD_INDEX_OPTIONS_INIT. */
typedef struct hd_index_options {
	unsigned int version;  /**< HD_INDEX_OPTIONS_VERSION */
	hd_read_options read;  /**< how to read the dump */
	/** Called when the dump is opened and while it is read, with the
	 * bytes read and the dump's size (0 if unknown); once more when it
	 * has been read whole, with done == total, before the store is
	 * built from it. */
	hd_progress_cb progress;
	void *progress_payload;
	/** Threads reading a regular, uncompressed dump file (version 2):
	 * 0 or 1 read it on the calling thread, as standard input, pipes
	 * and gzip always are; the store is the same. With 2 or more the
	 * build after the reading, and hd_store_write() of the store into a
	 * regular file, run on two threads. Several threads call the
	 * allocator (hd_set_allocator) at once. */
	unsigned int jobs;
	/** HD_INDEX_ bits (version 3). */
	unsigned int flags;
	/** With HD_INDEX_SPILL, the directory of its temporary file (version
	 * 4); NULL: $TMPDIR, else /tmp. The store's own directory is the
	 * one to give: the file takes as much disk as the store. */
	const char *spill_dir;
} hd_index_options;

/** Keep the STRING records' values as the dump is read, for
 * hd_store_set_views(HD_VIEW_STRINGS) (and hd_strings_build()) to use
 * instead of reading them back from the dump; held in memory (not
 * written) until hd_store_set_views() has used them or the store is
 * closed. The store written is the same. */
#define HD_INDEX_STRING_VALUES (1u << 0)
/** The store built out of memory (hd_store_spill, into spill_dir): the
 * string values kept are written to its temporary file as they are
 * read, and the store's sections once built, so that what comes after
 * the build (the tree, the views, the write) holds only what it reads.
 * Where no unnamed file can be made, everything stays in memory. The
 * store is the same. */
#define HD_INDEX_SPILL (1u << 1)

/* Versions 1 (without jobs), 2 (without flags) and 3 (without
 * spill_dir) are still accepted. */
#define HD_INDEX_OPTIONS_VERSION 4
#define HD_INDEX_OPTIONS_INIT \
	{ HD_INDEX_OPTIONS_VERSION, HD_READ_OPTIONS_INIT, NULL, NULL, 1, 0, \
	  NULL }

/**
 * Reads a dump and builds its store in memory.
 * @param out receives the store
 * @param dump_path the dump (or "-")
 * @return 0, HD_EIO, HD_EPARSE (strict mode), HD_ENOTDUMP, HD_ENOMEM,
 *         HD_ELIMIT, HD_EINVAL (unknown options version)
 */
HD_API int hd_store_build(hd_store **out, const char *dump_path,
			  const hd_index_options *opts, hd_error *err);

/**
 * Moves the sections a built store holds in memory (1 MiB or more each)
 * to an unnamed temporary file in dir (NULL: $TMPDIR, else /tmp), made
 * with O_TMPFILE so that it never has a name, and maps them read-only
 * in their place; what later reads touch is read back by the kernel,
 * the rest stays out of the process's memory, and hd_store_write()
 * copies it without mapping it. Each call also moves the sections
 * attached since the last (the tree, the views) and drops what the
 * process had read of the spilled ones. The store is the same; its
 * bytes when written are the same. Where the file system cannot make
 * an unnamed file, nothing is moved (0). For index: a store as large
 * as the dump's third is built with less than that in memory.
 * @return 0, HD_EIO (the sections not yet moved stay in memory, and
 *         the store is whole), HD_EINVAL (an opened store)
 */
HD_API int hd_store_spill(hd_store *s, const char *dir, hd_error *err);

/**
 * Writes a store to path through hd_outfile (a temporary file beside a
 * regular file, renamed over it; a device or FIFO written in place; a
 * symbolic link followed). Nothing is left under path on failure. The
 * file gets the read and write permission bits of the store's source
 * dump, 0600 when that is not a regular file. A store built with jobs
 * of 2 or more is written to a regular file while a second thread
 * computes its stats summary (its blocks reserved first: a full disk is
 * HD_EIO); the bytes are the same.
 * @return 0, HD_EIO, HD_ENOMEM
 */
HD_API int hd_store_write(const hd_store *s, const char *path,
			  hd_error *err);

/**
 * Opens a store file. Every section is bounds-checked before use; a
 * corrupt or foreign file fails with HD_EFORMAT and a precise message.
 * The file is mapped, so opening costs the same for any size.
 * @return 0, HD_EIO, HD_EFORMAT, HD_ENOMEM
 */
HD_API int hd_store_open(hd_store **out, const char *path, hd_error *err);

/**
 * Opens path whatever it holds: a store file (by its magic) is opened,
 * a dump is read and indexed in memory.
 * @return as hd_store_open() and hd_store_build()
 */
HD_API int hd_store_load(hd_store **out, const char *path,
			 const hd_index_options *opts, hd_error *err);

/** Options for hd_store_open_cached(); initialise with
 * HD_CACHE_OPTIONS_INIT. */
typedef struct hd_cache_options {
	unsigned int version;   /**< HD_CACHE_OPTIONS_VERSION */
	hd_index_options index; /**< how a dump is read when indexed */
	unsigned int flags;     /**< HD_CACHE_ bits */
} hd_cache_options;

/** A store built by hd_store_open_cached() keeps the dominator tree
 * (without the tracer's objects, as index --dominators). */
#define HD_CACHE_DOMINATORS (1u << 0)
/** ... and the views (hd_store_set_views: the group stats, the string
 * values, with the tree retained by class), what serve reads at start.
 * With either, a store that will be written to the cache is built out
 * of memory, as index builds it (HD_INDEX_SPILL, into the directory it
 * is written to). */
#define HD_CACHE_VIEWS (1u << 1)
/* 2: hd_index_options grew spill_dir (version 4), which moved flags */
#define HD_CACHE_OPTIONS_VERSION 2
#define HD_CACHE_OPTIONS_INIT \
	{ HD_CACHE_OPTIONS_VERSION, HD_INDEX_OPTIONS_INIT, 0 }

/** What hd_store_open_cached() did (hd_cache_result.how). */
enum hd_cache_how {
	HD_CACHE_STORE = 1,  /**< path was a store file: opened */
	HD_CACHE_REUSED,     /**< the dump's cached store, still its own */
	HD_CACHE_BUILT,      /**< indexed, written to the cache, mapped */
	HD_CACHE_MEMORY      /**< indexed in memory only (note says why) */
};

typedef struct hd_cache_result {
	int how;           /**< an hd_cache_how */
	char path[4096];   /**< the store file in use; "" for MEMORY */
	char note[512];    /**< why a cache file was rebuilt or not kept */
} hd_cache_result;

/**
 * Opens a dump through its cached store (man 1 heapdump-serve, CACHE):
 * DUMP.hds beside it when its directory is ours to write, else
 * $XDG_CACHE_HOME/heapdump (~/.cache/heapdump, made 0700, used only if
 * it is a directory of ours that no one else may write) under a name
 * keyed by the dump's path, size and mtime. A cached store is reused
 * while it opens cleanly and its dump keeps its size, fingerprint and
 * mtime; a damaged or stale one is rebuilt. A file that is not a store
 * is never written over, nor a symbolic link. When no cache can be
 * written the dump is indexed in memory (res->note says why). A store
 * file given as path is opened as it is; a dump that is no regular file
 * is indexed in memory.
 * @return as hd_store_open() and hd_store_build()
 */
HD_API int hd_store_open_cached(hd_store **out, hd_cache_result *res,
				const char *path,
				const hd_cache_options *opts, hd_error *err);

/**
 * The store file hd_store_open_cached() would write for the dump at
 * path (beside it, or in the cache directory), into buf.
 * @return 0, HD_EIO (the dump cannot be stat'ed), HD_ELIMIT (too long)
 */
HD_API int hd_store_cache_path(char *buf, size_t size, const char *path,
			       hd_error *err);

/** Closes a store; every pointer borrowed from it dies. NULL is a no-op. */
HD_API void hd_store_close(hd_store *s);

/** 1 if the file at path starts with the store magic, else 0. */
HD_API int hd_store_is_store(const char *path);

/** Facts about the dump a store was built from. */
typedef struct hd_store_info {
	uint64_t nodes;          /**< heap objects */
	uint64_t edges;          /**< resolved references */
	uint64_t dangling;       /**< object references to addresses not in
				      the dump (ROOT ones count in root_refs
				      only) */
	uint64_t duplicates;     /**< records whose address was seen before */
	uint64_t root_refs;      /**< references from ROOT lines */
	uint64_t root_categories;
	uint64_t shapes;         /**< SHAPE lines (not nodes) */
	uint64_t source_size;    /**< bytes of the (decompressed) source */
	uint64_t source_mtime;   /**< seconds since the epoch */
	uint64_t source_fingerprint;
	const char *source_path; /**< as given when indexing */
	hd_read_stats read;      /**< the reader's counts when indexing */
	uint32_t features;       /**< HD_FEAT_ bits seen in the dump */
} hd_store_info;

/* Version-revealing features seen in a dump (hd_store_info.features). */
#define HD_FEAT_NODE (1u << 0)          /**< NODE objects: Ruby <= 2.4 */
#define HD_FEAT_IMEMO (1u << 1)         /**< IMEMO: 2.3+ */
#define HD_FEAT_IMEMO_TYPE (1u << 2)    /**< imemo_type: 2.5+ */
#define HD_FEAT_SUPERCLASS (1u << 3)    /**< superclass field: 3.1+ */
#define HD_FEAT_SHAPES (1u << 4)        /**< SHAPE lines, slot_size: 3.2+ */
#define HD_FEAT_CHILLED (1u << 5)       /**< chilled strings: 3.4+ */
#define HD_FEAT_INT_FLAGS (1u << 6)     /**< integer flags (age): 4.0+ */
#define HD_FEAT_GEN_SYMBOLS (1u << 7)   /**< global_symbols root: 4.0+ */
#define HD_FEAT_TRACED (1u << 8)        /**< allocation tracing was on */
#define HD_FEAT_PARTIAL (1u << 9)       /**< no ROOT lines (since: dump) */
#define HD_FEAT_MEMPROF (1u << 10)      /**< memprof format */
#define HD_FEAT_OBJECT_ID_ROOT (1u << 11) /**< object_id root: 2.7-3.3 */
#define HD_FEAT_FINALIZER_ROOT (1u << 12) /**< finalizers root: <= 3.3 */
#define HD_FEAT_METHOD_TRACED (1u << 13)  /**< traced objects with method */
#define HD_FEAT_CALLCACHE_ID (1u << 14)   /**< imemo called_id: 3.3+ */
#define HD_FEAT_OBJSPACE_ROOT (1u << 15)  /**< objspace root: 3.4+ */
/**
 * The exact Ruby version a dump names (the gem's "ruby_version" on its
 * first ROOT record, man 5 heapdump-dump), in the high 16 bits: major
 * (4 bits), minor and teeny (6 bits each); 0 when the dump names none.
 * hd_features_ruby() prints it as it is ("3.3.10").
 */
#define HD_FEAT_VERSION_SHIFT 16
#define HD_FEAT_VERSION_MASK (0xffffu << HD_FEAT_VERSION_SHIFT)

/**
 * Describes the Ruby versions consistent with a set of HD_FEAT_ bits, as
 * "3.2 or later", "3.1", "2.5 to 3.1", "memprof (Ruby 1.8)"; the exact
 * version ("3.3.10") when the dump names it (HD_FEAT_VERSION_MASK).
 */
HD_API const char *hd_features_ruby(char *buf, size_t size,
				    uint32_t features);

/** Fills info. */
HD_API void hd_store_info_get(hd_store_info *out, const hd_store *s);

/**
 * Checks that the store's source dump at path is the one it was built
 * from (size and fingerprint). @return 0, HD_ESTALE, HD_EIO
 */
HD_API int hd_store_check_source(const hd_store *s, const char *path,
				 hd_error *err);

/** The number of nodes. */
HD_API uint32_t hd_store_node_count(const hd_store *s);

/** The node at address, or HD_NODE_NONE. O(log n). */
HD_API hd_node_id hd_store_find(const hd_store *s, uint64_t address);

/* Per-node columns. id must be < hd_store_node_count(). */
HD_API uint64_t hd_store_address(const hd_store *s, hd_node_id id);
HD_API int hd_store_type(const hd_store *s, hd_node_id id);
/** The class node, or HD_NODE_NONE (no class, or not in the dump). */
HD_API hd_node_id hd_store_class(const hd_store *s, hd_node_id id);
/** The class pointer as written, 0 if none. */
HD_API uint64_t hd_store_class_address(const hd_store *s, hd_node_id id);
HD_API uint64_t hd_store_memsize(const hd_store *s, hd_node_id id);
/** The allocation generation, or UINT64_MAX if not traced. */
HD_API uint64_t hd_store_generation(const hd_store *s, hd_node_id id);
/** The type-specific size (see hd_record.size), 0 if none. */
HD_API uint64_t hd_store_size(const hd_store *s, hd_node_id id);
/** The HD_B_ bits. */
HD_API uint32_t hd_store_bits(const hd_store *s, hd_node_id id);
/** Byte offset of the node's record in the source dump. */
HD_API uint64_t hd_store_offset(const hd_store *s, hd_node_id id);

/** Allocation site of a node; strings are borrowed, NULL when unknown. */
typedef struct hd_site {
	const char *file;
	size_t file_len;
	const char *method;
	size_t method_len;
	uint64_t line; /**< 0 when unknown */
} hd_site;

/** Fills out; returns 0, or HD_ENOTFOUND if the node is not traced. */
HD_API int hd_store_site(hd_site *out, const hd_store *s, hd_node_id id);

/*
 * Allocation stacks (man 5 heapdump-store, STACKS): a dump written by
 * HeapDump.trace_allocations(stacks: true) gives its sampled objects the
 * Ruby call stack of their allocation. Stack ids are 1..count (0: none),
 * frame ids 1..hd_store_frame_count(); a store without stacks has 0.
 */
HD_API uint32_t hd_store_stack_count(const hd_store *s);
HD_API uint32_t hd_store_frame_count(const hd_store *s);
/** The node's allocation stack, 0 when it has none (or bad id). */
HD_API uint32_t hd_store_node_stack(const hd_store *s, hd_node_id id);
/**
 * The frame ids of stack, outermost first: *frames points into the store
 * (valid while it is open; the store is little-endian, so on a
 * big-endian host read them with hd_store_stack_frame). Returns their
 * count, 0 (and NULL) for stack 0 or a bad id.
 */
HD_API size_t hd_store_stack_frames(const hd_store *s, uint32_t stack,
				    const uint32_t **frames);
/** The k-th frame id of stack (0: outermost), 0 past its end. */
HD_API uint32_t hd_store_stack_frame(const hd_store *s, uint32_t stack,
				     size_t k);

/** A frame of an allocation stack; strings borrowed from the store, not
 * NUL-terminated, NULL when the dump did not say. */
typedef struct hd_frame {
	const char *file;
	size_t file_len;
	const char *method;     /**< the method's name ("make_row") */
	size_t method_len;
	const char *class_name; /**< its class or module ("Helper") */
	size_t class_len;
	const char *label;      /**< "Helper.make_row", "block in Foo#bar" */
	size_t label_len;
	uint64_t line;          /**< 0 when unknown (a C method) */
} hd_frame;

/** Fills out; returns 0, or HD_ENOTFOUND for a bad frame id. */
HD_API int hd_store_frame(hd_frame *out, const hd_store *s, uint32_t frame);
/**
 * The frame's name as every output prints it: its label, else
 * class#method, else method, else "(unknown)"; hd_frame_text() adds
 * " (file:line)". Both write at most size bytes with a NUL (size > 0)
 * and return the full length, as snprintf does.
 */
HD_API size_t hd_frame_name(char *buf, size_t size, const hd_frame *f);
HD_API size_t hd_frame_text(char *buf, size_t size, const hd_frame *f);

/*
 * Objects and memsize by allocation stack or by frame (stacks.c; stats
 * --by stack|frame, diff --by stack). By frame, an object counts under
 * every distinct frame of its stack (a profiler's "total"): the rows
 * then overlap and do not add up to the total.
 */
#define HD_STACKS_BY_STACK 0
#define HD_STACKS_BY_FRAME 1

typedef struct hd_stack_options {
	unsigned int version; /**< HD_STACK_OPTIONS_VERSION */
	int by;               /**< HD_STACKS_BY_STACK or HD_STACKS_BY_FRAME */
	int sort;             /**< HD_SORT_COUNT or HD_SORT_MEMSIZE */
	unsigned int flags;   /**< HD_STATS_ALL: keep tracer, dumper objects */
} hd_stack_options;

#define HD_STACK_OPTIONS_VERSION 1
#define HD_STACK_OPTIONS_INIT { HD_STACK_OPTIONS_VERSION, 0, 0, 0 }

typedef struct hd_stack_row {
	uint32_t id;          /**< the stack id, or the frame id */
	uint64_t count;
	uint64_t memsize;     /**< saturated */
} hd_stack_row;

typedef struct hd_stack_rows {
	int by;
	hd_stack_row *rows;   /**< most first (sort), ties by id */
	size_t nrows;
	uint64_t with, with_memsize;       /**< objects that have a stack */
	uint64_t without, without_memsize; /**< those that have none */
} hd_stack_rows;

/**
 * Groups the nodes ids[0..nids) of s (ids NULL: every node) by stack or
 * frame into out (free with hd_stack_rows_free). HD_ENOTFOUND, with a
 * message that says so, when s has no allocation stacks: never an
 * empty table.
 */
HD_API int hd_stack_stats(hd_stack_rows *out, const hd_store *s,
			  const hd_node_id *ids, size_t nids,
			  const hd_stack_options *opts, hd_error *err);
HD_API void hd_stack_rows_free(hd_stack_rows *r);

/**
 * A frame as a JSON object (leak_json.c): frame (its id), then file,
 * line, method, class and label, each only when the dump gave it.
 */
HD_API void hd_frame_json(FILE *f, const hd_store *s, uint32_t frame);
/**
 * The table r (rows of s) as one JSON object, the one every front end
 * writes (stats --by stack|frame -f json, diff's "stacks", a leak
 * suspect's "stacks", man 5 heapdump-json): by ("stack" or "frame"),
 * with_stack and without_stack ({count, memsize}), groups (all the
 * rows) and rows, the first top (0: all): by stack {stack, count,
 * memsize, frames (outermost first, hd_frame_json each)}, by frame
 * {count, memsize, frame}. No newline after it.
 */
HD_API void hd_stack_rows_json(FILE *f, const hd_store *s,
			       const hd_stack_rows *r, size_t top);

/**
 * The node's descriptive string: the resolved name of a CLASS, MODULE or
 * ICLASS (see hd_store_class_name), the struct of a DATA, the imemo_type
 * of an IMEMO, the node_type of a NODE; NULL if none. Borrowed.
 */
HD_API const char *hd_store_aux(const hd_store *s, hd_node_id id,
				size_t *len);

/**
 * Writes the display name of node id's class into buf (NUL-terminated,
 * truncated to size) and returns its full length. This is what `stats
 * --by class` groups by: the name of the object's real class, with
 * hidden objects as "(hidden ARRAY)" (but a class-less DATA with a
 * struct, a VM table, as "DATA/VM/concurrent_set"), IMEMOs as
 * "IMEMO/iseq", untyped or Object-class DATA as "DATA/struct", and
 * unresolvable pointers as
 * "#<unknown:0x...>". See man 1 heapdump-stats.
 */
HD_API size_t hd_store_class_name(char *buf, size_t size,
				  const hd_store *s, hd_node_id id);

/**
 * Writes the name node id is shown by everywhere (path, top, dominators,
 * leaks, the JSON output, GML and DOT) into buf, as
 * hd_store_class_name() does: a CLASS, MODULE or ICLASS by its own name
 * ("PriceCalculator", "#<Class:Foo>"), anything else by its class's
 * display name ("String", "IMEMO/iseq"). A class without a resolvable
 * name falls back to its class's name ("Class"). A Ruby 4.0 IMEMO of
 * imemo_type "fields", whose class pointer is the object whose ivars it
 * holds, is "ivars of " and that owner's name ("ivars of LeakyCache"),
 * or "IMEMO/fields" when the owner is not in the dump.
 */
HD_API size_t hd_store_node_name(char *buf, size_t size,
				 const hd_store *s, hd_node_id id);

/** Edge iterator; needs no cleanup. */
typedef struct hd_edge_iter {
	const unsigned char *p;
	const unsigned char *end;
} hd_edge_iter;

/** Starts an iteration over the references of id (dump order). */
HD_API void hd_store_refs(const hd_store *s, hd_node_id id, hd_edge_iter *it);
/** Starts an iteration over the objects that reference id. */
HD_API void hd_store_referrers(const hd_store *s, hd_node_id id,
			       hd_edge_iter *it);
/** The next node, or HD_ITEROVER. */
HD_API int hd_edge_iter_next(hd_edge_iter *it, hd_node_id *out);
/** The number of items left. */
HD_API uint32_t hd_edge_iter_count(const hd_edge_iter *it);

/** The number of root categories. */
HD_API uint32_t hd_store_root_count(const hd_store *s);
/** The name of root category i ("vm"). Borrowed. */
HD_API const char *hd_store_root_name(const hd_store *s, uint32_t i);
/** Iterates the objects of root category i. */
HD_API void hd_store_root_refs(const hd_store *s, uint32_t i,
			       hd_edge_iter *it);

/* ---- reference names (man 5 heapdump-store, REFERENCE NAMES) ---- */

/** hd_store_ref_name_at() flag: the name was inferred by the store (a
 * class constant holding a named class or module), not dumped. */
#define HD_NAME_INFERRED 1u

/** 1 if s has reference names (dumped or inferred), else 0. */
HD_API int hd_store_has_ref_names(const hd_store *s);
/**
 * The name of the k-th reference of from (0-based, hd_store_refs order),
 * NULL if none ("@cache", "::CACHE", "[\"user_42\"]", "[3]"). Borrowed,
 * NUL-terminated, raw bytes (escape control bytes before printing); *len
 * (if not NULL) gets its length, *flags (if not NULL) HD_NAME_INFERRED or
 * 0. O(log edges).
 */
HD_API const char *hd_store_ref_name_at(const hd_store *s, hd_node_id from,
					uint32_t k, size_t *len,
					unsigned *flags);
/** The name of the first reference from -> to that has one, or NULL (as
 * hd_store_ref_name_at). O(references of from). */
HD_API const char *hd_store_ref_name(const hd_store *s, hd_node_id from,
				     hd_node_id to, size_t *len,
				     unsigned *flags);
/** The name under which root category i holds to ("$LOADED_FEATURES"),
 * or NULL. O(references of the category). */
HD_API const char *hd_store_root_ref_name(const hd_store *s, uint32_t i,
					  hd_node_id to, size_t *len);
/**
 * Writes one hop of a path, "NodeName name", into buf (NUL-terminated,
 * truncated to size) and returns its full length, as snprintf does:
 * NodeName as hd_store_node_name() writes it, then a space and the name
 * of the reference from -> to (hd_store_ref_name) when it has one; with
 * to == HD_NODE_NONE (the last node of a path) the node name alone. Raw
 * bytes: escape control bytes before printing. Every command that
 * prints a path joins its hops with " -> ".
 */
HD_API size_t hd_store_hop_text(char *buf, size_t size, const hd_store *s,
				hd_node_id from, hd_node_id to);

/**
 * A byte count as people read it, in powers of 1000: "720 B", "4.5 KB",
 * "1.3 GB" (into buf as snprintf does; returns the full length).
 */
HD_API size_t hd_bytes_text(char *buf, size_t size, uint64_t n);

/* ===================================================================== */
/* Statistics                                                            */
/* ===================================================================== */

/** Grouping keys for statistics. */
typedef enum hd_key {
	HD_KEY_TYPE = 1,
	HD_KEY_CLASS,      /**< the class display name */
	HD_KEY_FILE,
	HD_KEY_LOCATION,   /**< file:line */
	HD_KEY_METHOD,
	HD_KEY_GEM,        /**< the gem (or stdlib, app) the file belongs to */
	HD_KEY_GENERATION,
	HD_KEY_IMEMO,      /**< imemo_type of IMEMO objects */
	/** the power-of-two bucket of the object's length (hd_record_length,
	 * hd_length_bucket): "0", "1", "2-3", "4-7", ...; "-" for an object
	 * without one */
	HD_KEY_LENGTH
} hd_key;

/**
 * The length of a record, when it has one: a STRING's bytesize (a shared
 * string has none: dump_all gives no bytesize for it), an ARRAY's length,
 * a HASH's size, a STRUCT's member count when the dump gives one (above
 * 0; dump_all gives none). @return 1 and *len, or 0 (no length)
 */
HD_API int hd_record_length(uint64_t *len, const hd_record *rec);

/** hd_record_length() of a store's node (the same answer as from the
 * record it was built from). @return 1 and *len, or 0 */
HD_API int hd_store_length(uint64_t *len, const hd_store *s, hd_node_id id);

/**
 * The power-of-two bucket of a length as text: "0", "1", "2-3", "4-7",
 * "8-15", ... (2^k to 2^(k+1)-1), or "-" when known is 0 (an object
 * without a length). Writes at most size bytes with a NUL and returns
 * the full length, as snprintf does.
 */
HD_API size_t hd_length_bucket(char *buf, size_t size, int known,
			       uint64_t len);

/** The key's name ("class"), or NULL. */
HD_API const char *hd_key_name(int key);
/** The key for a name, or 0. */
HD_API int hd_key_from_name(const char *name, size_t len);

#define HD_STATS_MAX_KEYS 4
#define HD_STATS_MAX_GROUPINGS 8

/** Stats option flags. */
#define HD_STATS_ALL (1u << 0) /**< keep tracer and dumper objects */

/**
 * 1 if node id is the allocation tracer (the DATA of struct
 * ObjectTracing/allocation_info_tracer) or one of the objects dump_all
 * allocated itself (allocated by a method dump_all or _dump_all, or in
 * objspace.rb), else 0. The one rule by which stats, diff, leaks, top
 * and dominators leave them out unless HD_STATS_ALL, HD_DIFF_ALL or no
 * HD_DOMTREE_SKIP_DUMPER (--all).
 */
HD_API int hd_store_is_dumper(const hd_store *s, hd_node_id id);

/** The number of nodes hd_store_is_dumper() picks, and their memsize in
 * *memsize (may be NULL). */
HD_API uint64_t hd_store_dumper_count(const hd_store *s, uint64_t *memsize);

/** A set of groupings, each a list of keys (e.g. location,class);
 * initialise with HD_STATS_OPTIONS_INIT (no grouping), then add them. */
typedef struct hd_stats_options {
	unsigned int version; /**< HD_STATS_OPTIONS_VERSION */
	unsigned int flags;
	unsigned int ngroupings;
	unsigned int nkeys[HD_STATS_MAX_GROUPINGS];
	int keys[HD_STATS_MAX_GROUPINGS][HD_STATS_MAX_KEYS];
} hd_stats_options;

#define HD_STATS_OPTIONS_VERSION 1
#define HD_STATS_OPTIONS_INIT \
	{ HD_STATS_OPTIONS_VERSION, 0, 0, { 0 }, { { 0 } } }

typedef struct hd_stats hd_stats;

/** Totals over the counted objects. */
typedef struct hd_stats_totals {
	uint64_t objects;
	uint64_t memsize;
	uint64_t edges;         /**< references of counted objects */
	uint64_t roots;         /**< root references */
	uint64_t root_categories;
	uint64_t shapes;
	uint64_t traced;        /**< objects with a generation */
	uint64_t gen_min;       /**< valid when traced > 0 */
	uint64_t gen_max;
	uint64_t excluded;      /**< tracer and dumper objects left out */
	uint64_t excluded_memsize;
	uint32_t features;      /**< HD_FEAT_ bits */
	/** 1 when a memsize sum (a total or a row) reached UINT64_MAX: it
	 * stopped there instead of wrapping, so it is a lower bound */
	uint32_t saturated;
} hd_stats_totals;

/** Options of hd_stats_add_dump(); initialise with HD_SCAN_OPTIONS_INIT. */
typedef struct hd_scan_options {
	unsigned int version; /**< HD_SCAN_OPTIONS_VERSION */
	/** Threads reading a regular, uncompressed dump file: 0 or 1 read
	 * it on the calling thread (standard input, pipes and gzip always
	 * are). Several threads call the allocator (hd_set_allocator)
	 * at once. */
	unsigned int jobs;
	hd_read_options read;  /**< problems are reported on the calling
				*  thread, in file order, once read */
	/** Called now and then on the calling thread (may be NULL). */
	void (*progress)(uint64_t done, uint64_t total, void *payload);
	void *progress_payload;
} hd_scan_options;

#define HD_SCAN_OPTIONS_VERSION 1
#define HD_SCAN_OPTIONS_INIT \
	{ HD_SCAN_OPTIONS_VERSION, 1, HD_READ_OPTIONS_INIT, NULL, NULL }

/** A result row; strings are borrowed from the hd_stats. */
typedef struct hd_stats_row {
	const char *key[HD_STATS_MAX_KEYS];
	size_t key_len[HD_STATS_MAX_KEYS];
	uint64_t count;
	uint64_t memsize;
} hd_stats_row;

/** Creates an accumulator. @return 0, HD_ENOMEM, HD_EINVAL */
HD_API int hd_stats_new(hd_stats **out, const hd_stats_options *opts,
			hd_error *err);

/** Adds one record (any kind). @return 0, HD_ENOMEM */
HD_API int hd_stats_add(hd_stats *st, const hd_record *rec, hd_error *err);

/**
 * Reads a dump (a path, or "-" for standard input) into st, as
 * hd_reader_open() and hd_stats_add() for each record would, on up to
 * opts->jobs threads for a regular uncompressed file: the counts, the
 * problems (their lines, columns and order), the errors and the read
 * stats (rs, may be NULL) are those of one reader.
 * @return 0, or an error of hd_reader_open(), hd_reader_next(),
 * hd_stats_add()
 */
HD_API int hd_stats_add_dump(hd_stats *st, const char *path,
			     const hd_scan_options *opts, hd_read_stats *rs,
			     hd_error *err);

/** Adds every node and root of a store. @return 0, HD_ENOMEM */
HD_API int hd_stats_add_store(hd_stats *st, const hd_store *s,
			      hd_error *err);

/**
 * Resolves class names and builds the rows. No records may be added
 * afterwards. @return 0, HD_ENOMEM
 */
HD_API int hd_stats_finish(hd_stats *st, hd_error *err);

/** Totals (after finish). */
HD_API void hd_stats_totals_get(hd_stats_totals *out, const hd_stats *st);

/** Row order for hd_stats_rows(). */
#define HD_SORT_COUNT 0
#define HD_SORT_MEMSIZE 1

/**
 * The rows of grouping g (0-based, in options order), sorted by sort
 * (ties by key). Valid until hd_stats_free().
 * @param n_out receives the number of rows
 */
HD_API const hd_stats_row *hd_stats_rows(hd_stats *st, unsigned int g,
					 int sort, size_t *n_out);

/** Frees the accumulator. NULL is a no-op. */
HD_API void hd_stats_free(hd_stats *st);

/** A namespace's share of a class grouping (hd_stats_namespace()). */
typedef struct hd_namespace_totals {
	uint64_t rows;       /**< classes in the namespace */
	uint64_t count;      /**< their objects */
	uint64_t memsize;    /**< their memsize, saturated at 2^64-1 */
	uint32_t saturated;  /**< 1 when memsize stopped at 2^64-1 */
} hd_namespace_totals;

/**
 * 1 when the row's first key (a class name) is ns[0..len) or lies in
 * its namespace ("ns::..."), else 0: heap_dump's count_objects. A
 * namespace's own module object is the class Module, not counted in it.
 */
HD_API int hd_stats_row_in_namespace(const hd_stats_row *r, const char *ns,
				     size_t len);

/**
 * Sums the rows (of a grouping whose first key is class) that lie in the
 * namespace ns[0..len) (hd_stats_row_in_namespace()).
 * @param out receives the totals
 * @param rows, n the rows, as hd_stats_rows() gives them
 */
HD_API void hd_stats_namespace(hd_namespace_totals *out,
			       const hd_stats_row *rows, size_t n,
			       const char *ns, size_t len);

/* ===================================================================== */
/* Node sets and selections                                              */
/* ===================================================================== */

/** A set of nodes, ascending and without repeats; free with hd_nodes_free. */
typedef struct hd_nodes {
	hd_node_id *ids;
	size_t n;
	size_t cap;
} hd_nodes;

/** Frees the ids of a set and empties it. NULL is a no-op. */
HD_API void hd_nodes_free(hd_nodes *set);

/**
 * Leaves out of set the nodes hd_store_is_dumper() picks (the rule by
 * which commands leave the allocation tracer and dump_all's own objects
 * out unless --all), keeping the order of the others.
 * @param s the store set's ids are nodes of
 * @return how many nodes are left (0 when set or s is NULL)
 */
HD_API size_t hd_nodes_drop_dumper(hd_nodes *set, const hd_store *s);

/**
 * Groups every node by what its class name and dumper flag depend on
 * (type, class, struct or imemo type, the site's dumper rule), in one pass
 * of integers: the nodes of a group have one hd_store_class_name() and
 * one hd_store_is_dumper(), so a caller formats each group's name once
 * instead of each node's (serve's object order, top --by class).
 * @param grp receives, for each of the hd_store_node_count(s) nodes, its
 *        group, 0 .. reps->n - 1; groups are numbered in node order
 * @param reps receives the first node of each group (ascending); free it
 *        with hd_nodes_free
 * @return 0, or HD_ENOMEM (reps is then empty)
 */
HD_API int hd_store_class_groups(uint32_t *grp, hd_nodes *reps,
				 const hd_store *s, hd_error *err);

/**
 * Adds the nodes of set to a stats accumulator, as hd_stats_add_store()
 * adds all of them (without the store's roots and shapes): the groups of
 * a selection or of a diff. @return 0, HD_ENOMEM, HD_EINVAL (an id out
 * of range)
 */
HD_API int hd_stats_add_nodes(hd_stats *st, const hd_store *s,
			      const hd_nodes *set, hd_error *err);

/**
 * A selection of objects (man 7 heapdump-select): conditions added with
 * hd_select_add. Values of one key are alternatives (--type STRING --type
 * ARRAY: either); different keys must all hold.
 */
typedef struct hd_select hd_select;

/** @return 0, HD_ENOMEM */
HD_API int hd_select_new(hd_select **out, hd_error *err);

/**
 * Adds a condition. Keys and values:
 *  - "address": 0x... (hex, 0x optional)
 *  - "class": a class name as `stats --by class` prints it, or /regex/
 *    (POSIX extended) matched against that name
 *  - "type": a type name (STRING, IMEMO, ...), case-insensitive
 *  - "file": an allocation file, exactly
 *  - "location": FILE:LINE
 *  - "generation": N, N..M, N.. or ..M (inclusive; untraced objects never
 *    match)
 *  - "name": a class or module object itself (type CLASS or MODULE),
 *    by its own name as hd_store_node_name() writes it, or /regex/
 *  - "via": an object referenced through a reference (or held by a
 *    root) whose name (hd_store_ref_name_at) is the value, or /regex/
 *    ("@cache", "::CACHE", "$LOADED_FEATURES")
 *  - "from": an NDJSON file (a dump, or the output of another command):
 *    the objects whose addresses its lines carry in an "address"
 *    member, with or without a "type"; lines without one are skipped
 *    and counted (hd_select_from_skipped)
 * @return 0, HD_EINVAL (unknown key, bad value: err says which), HD_EIO
 *         (a "from" file cannot be read), HD_ENOMEM
 */
HD_API int hd_select_add(hd_select *sel, const char *key, const char *value,
			 hd_error *err);

/**
 * The lines of the last "from" file added that carry no object address
 * (not JSON, no "address" member), not counting blank and ROOT lines:
 * their number, and the first one's line number in *first_line (may be
 * NULL).
 */
HD_API uint64_t hd_select_from_skipped(const hd_select *sel,
				       uint64_t *first_line);

/** The addresses given ("address" values and the lines of "from"
 * files), before they are looked up: 0 for an empty "from" file. */
HD_API uint64_t hd_select_address_count(const hd_select *sel);

/** 1 if no condition was added. */
HD_API int hd_select_empty(const hd_select *sel);

/**
 * The nodes of s the selection picks. Addresses (from "address" or
 * "from") that are not nodes of s are counted in *missing (may be NULL).
 * @param out receives the set; free it with hd_nodes_free
 * @return 0, HD_ENOMEM
 */
HD_API int hd_select_nodes(hd_nodes *out, uint64_t *missing,
			   const hd_select *sel, const hd_store *s,
			   hd_error *err);

/**
 * Why sel picks no object of s, in one line (lowercase, no trailing
 * period) written to buf (NUL-terminated, truncated to size): each
 * condition that no object meets alone ("no class is named 'Reqest';
 * did you mean 'Request'?", "no object is an instance of 'Foo', a class
 * of the dump: select the class itself with --name Foo", "no object was
 * allocated in generation 9.. (generations 0 to 3 here)"), or, when
 * each picks objects, how many each picks and that no object meets them
 * all. Suggestions are the nearest names of the dump
 * (an edit distance), at most three. Names and values are quoted as
 * they are, control bytes included: escape them before printing.
 * @return 0, HD_ENOMEM
 */
HD_API int hd_select_explain(char *buf, size_t size, const hd_select *sel,
			     const hd_store *s, hd_error *err);

/** Frees a selection. NULL is a no-op. */
HD_API void hd_select_free(hd_select *sel);

/* ===================================================================== */
/* Records of a store                                                    */
/* ===================================================================== */

/** Called for each record of hd_store_records, in dump order. A non-zero
 * return stops the walk and is returned by it. */
typedef int (*hd_record_cb)(const hd_record *rec, hd_node_id id,
			    void *payload);

/**
 * Reads the records of the nodes in set from the dump the store was
 * built from (dump_path; NULL means the path recorded in the store),
 * once, in dump order, and calls cb for each with the record as the
 * reader gives it (rec->text is the line byte for byte). The dump must
 * be the one indexed (size and fingerprint), and the record found at
 * each node's offset must be that node's object (a dump edited in the
 * middle keeps its size and fingerprint, not its offsets): otherwise
 * HD_ESTALE. A pipe is never opened again: its store's records cannot
 * be read back (HD_ESTALE).
 * @return 0, HD_ESTALE, HD_EIO, HD_EPARSE (strict read options), HD_ENOMEM,
 *         or cb's non-zero value
 */
HD_API int hd_store_records(const hd_store *s, const char *dump_path,
			    const hd_nodes *set, const hd_read_options *ro,
			    hd_record_cb cb, void *payload, hd_error *err);

/** A sink for writers: writes n bytes, returns 0 or non-zero to stop. */
typedef int (*hd_write_cb)(const void *buf, size_t n, void *payload);

/**
 * Writes a record as one line of valid JSON (invalid input lines are
 * re-escaped as hd_json_repair does, salvaged ones rebuilt from their
 * fields) followed by a newline. When keep is not NULL, the references
 * array keeps only the references to nodes of s marked in keep (a bitmap
 * over node ids, bit id % 8 of byte id / 8); otherwise the text is written
 * unchanged when it is valid JSON.
 * @return 0, or the sink's non-zero value, or HD_ENOMEM
 */
HD_API int hd_record_write(const hd_record *rec, const hd_store *s,
			   const unsigned char *keep, hd_write_cb w,
			   void *payload);

/* Flags of hd_subdump_write(). */
/** ROOT records first, each with its references to nodes of the set
 * (a root category referencing none of them is left out). */
#define HD_SUBDUMP_ROOTS (1u << 0)
/** Each record's references restricted to nodes of the set. */
#define HD_SUBDUMP_RESTRICT (1u << 1)

/**
 * Writes a part of the heap back as a dump: with HD_SUBDUMP_ROOTS the
 * ROOT records (as {"type":"ROOT", "root":NAME, "references":[...]}
 * lines), then the records of set in dump order, each as
 * hd_record_write() writes it, with HD_SUBDUMP_RESTRICT its references
 * restricted to set. With both flags the output is a dump whose
 * retention paths can be asked for again (roots-of, subgraph-of).
 * Reads the source dump once (hd_store_records).
 * @param s the store; set holds node ids of s
 * @param flags 0, HD_SUBDUMP_ROOTS, HD_SUBDUMP_RESTRICT
 * @param ro read options of the source dump (NULL: the defaults)
 * @param w the sink, called with whole lines or parts of them
 * @return 0, HD_EINVAL (unknown flag), HD_ENOMEM, the codes of
 *         hd_store_records(), or the sink's non-zero value unchanged
 */
HD_API int hd_subdump_write(const hd_store *s, const hd_nodes *set,
			    unsigned flags, const hd_read_options *ro,
			    hd_write_cb w, void *payload, hd_error *err);

/* ===================================================================== */
/* Graph queries                                                         */
/* ===================================================================== */

/* Flags of hd_reach_new(), hd_roots_of() and hd_path(). */
/** roots-of keeps every object on any path from a root to a target, not
 * only one shortest path per target. */
#define HD_ROOTS_ALL_ANCESTORS (1u << 0)
/**
 * Do not walk through weak references: the references of these objects
 * are not followed (the objects themselves can still be reached, kept
 * and be targets): a DATA whose struct is "weakmap"; an instance of a
 * class named ObjectSpace::WeakMap; an instance of a class named WeakRef
 * (weakref.rb, whose referents are held by the WeakMap in its class
 * variable, itself skipped by the first rules). Subclasses are not
 * recognised. An ObjectSpace::WeakKeyMap (struct "weakkeymap") is walked:
 * the references a dump lists for it are its values, which it holds
 * while their keys live, and never its weak keys (man 5 heapdump-store,
 * WEAK MAPS).
 */
#define HD_ROOTS_SKIP_WEAK (1u << 1)

/**
 * The search from the GC roots that chooses every retention path:
 * program-level holders first. A path's cost is 1 for each VM cache it
 * goes through (an IMEMO constcache, callcache or callinfo: the inline
 * caches of instruction sequences and call sites; a DATA VM/cc_table, a
 * class's call caches) and 2 when it starts at root category
 * machine_context (the C stacks, read conservatively: a word that looks
 * like a pointer, often stale); constants, instance and class
 * variables, globals, classes, modules, method tables and every other
 * reference cost nothing. Each node keeps a path of least cost and,
 * among those, of fewest references: a breadth-first search by levels of
 * cost (Dial's buckets), each level from a virtual root joined to its
 * seeds (level 0: the objects of every root category but
 * machine_context, category by category in store order, each category's
 * objects in dump order; later levels: the VM caches met one level
 * before, then at level 2 machine_context's objects not yet reached),
 * each object's references in dump order. Every reached node keeps the
 * node (or root category) it was first reached from: a tree of
 * cheapest paths, ties kept by the order of that search. A plain
 * breadth-first search (no costs) also runs, to say which paths the rule
 * changed (hd_root_path.passed_over). O(N + E) time, twice; 4 bytes and
 * 5 bits a node, plus 4 bytes and a bit a node while searching. A dump
 * without ROOT lines (a partial dump) reaches nothing.
 */
typedef struct hd_reach hd_reach;

/**
 * Searches from the roots of s, which must outlive the result.
 * @param flags 0 or HD_ROOTS_SKIP_WEAK
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_reach_new(hd_reach **out, const hd_store *s, unsigned flags,
			hd_error *err);
/** Frees a search. NULL is a no-op. */
HD_API void hd_reach_free(hd_reach *r);
/** The number of nodes reached. */
HD_API uint64_t hd_reach_count(const hd_reach *r);
/** 1 if a root reaches id, else 0. */
HD_API int hd_reach_reached(const hd_reach *r, hd_node_id id);
/**
 * The node id was first reached from, or HD_NODE_NONE: when id is held
 * by a root category directly (its index goes to *root, if not NULL) or
 * is not reached.
 */
HD_API hd_node_id hd_reach_pred(const hd_reach *r, hd_node_id id,
				uint32_t *root);

/** hd_root_path.via and .passed_over: the path goes through a VM cache
 * (an IMEMO constcache, callcache or callinfo, a DATA VM/cc_table). */
#define HD_PATH_VIA_CACHE (1u << 0)
/** The path starts at root category machine_context (the C stacks, read
 * conservatively: maybe a stale pointer). */
#define HD_PATH_VIA_STACK (1u << 1)

/** A retention path; free with hd_root_path_free. */
typedef struct hd_root_path {
	uint32_t root;      /**< the root category (hd_store_root_name) */
	hd_node_id *nodes;  /**< the object the root holds first, the target
				 last */
	size_t n;
	size_t cap;
	/** HD_PATH_VIA_* of this path (hd_reach_path; 0 for a dominator
	 * chain) */
	unsigned via;
	/** 0 when the path is the plain shortest one's kind; else the
	 * HD_PATH_VIA_* of the plain shortest path (one breadth-first
	 * search, no preference), which hd_reach's rule passed over for this
	 * one: the rule mattered (hd_path_note says it) */
	unsigned passed_over;
} hd_root_path;

/** Frees the nodes of a path and empties it. NULL is a no-op. */
HD_API void hd_root_path_free(hd_root_path *p);

/**
 * One cheapest path from a root category to target, the tree's (see
 * hd_reach), with what it goes through (via) and what the rule passed
 * over (passed_over). out may be reused between calls.
 * @return 0, HD_ENOTFOUND (no root reaches target; err says whether the
 *         dump is partial), HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_reach_path(hd_root_path *out, const hd_reach *r,
			 hd_node_id target, hd_error *err);

/** hd_reach_path() with a search of its own (flags as hd_reach_new). */
HD_API int hd_path(hd_root_path *out, const hd_store *s, hd_node_id target,
		   unsigned flags, hd_error *err);

/**
 * The note every human output prints with a path the rule chose
 * (p->passed_over non-zero), into buf as snprintf does: "program-level
 * holders preferred to the shortest path, from machine_context through
 * a VM cache" (or "..., through a VM cache", "..., from machine_context
 * (a C stack, maybe a stale pointer)"; "fewer VM caches and stack roots
 * preferred ..." when this path has some too); "" when the rule changed
 * nothing. Its full length.
 */
HD_API size_t hd_path_note(char *buf, size_t size, const hd_root_path *p);
/** The words of one HD_PATH_VIA_* bit for the machine outputs:
 * "vm_cache", "machine_context"; NULL for another value. */
HD_API const char *hd_path_via_name(unsigned bit);

/**
 * A run of a path (hd_path_fold): the period hops from nodes[start]
 * repeat count times back to back, nodes[start .. start + period *
 * count) in all. A hop is a node and its reference to the next node, as
 * hd_store_hop_text() writes it ("IMEMO/env prev"); two hops are the
 * same when their texts are.
 */
typedef struct hd_path_run {
	size_t start;
	size_t period; /**< hops in the pattern, 1 to max_period */
	size_t count;  /**< repetitions, at least min_count */
} hd_path_run;

/** The runs of a path, in path order, disjoint; free with
 * hd_path_runs_free. Zero-initialise before the first use. */
typedef struct hd_path_runs {
	hd_path_run *runs;
	size_t n;
	size_t cap;
} hd_path_runs;

/** What hd_path_fold() folds; initialise with HD_FOLD_OPTIONS_INIT. */
typedef struct hd_fold_options {
	unsigned int version; /**< HD_FOLD_OPTIONS_VERSION */
	unsigned max_period;  /**< the longest pattern, in hops (4) */
	unsigned min_count;   /**< the fewest repetitions folded (3) */
	unsigned min_hops;    /**< the fewest hops a run covers (6) */
} hd_fold_options;
#define HD_FOLD_OPTIONS_VERSION 1
#define HD_FOLD_OPTIONS_INIT { HD_FOLD_OPTIONS_VERSION, 4, 3, 6 }

/**
 * The runs of repeated hops along a path (nodes, the target last), the
 * one rule by which every human output folds a path (path, leaks,
 * report, serve, the gem's Path#to_s): a run prints as its pattern in
 * parentheses, each hop followed by its arrow, and the count:
 * "Array [0] -> (Proc -> IMEMO/env prev ->) x1000 Proc". Machine
 * outputs (JSON) keep every hop. Runs are found left to right: at each
 * hop, the pattern of 1 to max_period hops that repeats over the most
 * hops (the shorter pattern on a tie), kept when it repeats min_count
 * times or more over min_hops hops or more. The target is never part of
 * a run. O(n x max_period^2) hop compares, 8 bytes a hop while folding.
 * @param out emptied, then receives the runs (reused between calls)
 * @param opts NULL for HD_FOLD_OPTIONS_INIT
 * @return 0, HD_ENOMEM, HD_EINVAL (also an options version this library
 *         does not know)
 */
HD_API int hd_path_fold(hd_path_runs *out, const hd_store *s,
			const hd_node_id *nodes, size_t n,
			const hd_fold_options *opts, hd_error *err);
/**
 * hd_path_fold() over a path already written as text, its hops joined by
 * " -> " (the last part is the target): a cluster's shape ("vm -> Object
 * ::Holder -> ... -> Array"). Two hops are the same when their bytes
 * are; start and period count hops (parts), as in hd_path_fold.
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_path_text_fold(hd_path_runs *out, const char *text, size_t len,
			     const hd_fold_options *opts, hd_error *err);
/** Frees the runs and empties r. NULL is a no-op. */
HD_API void hd_path_runs_free(hd_path_runs *r);

/**
 * What keeps targets alive: the union of one shortest path from the
 * roots to each target (the tree paths of hd_reach), or with
 * HD_ROOTS_ALL_ANCESTORS every reached object from which a target can
 * be reached. Targets no root reaches are not kept: they go to
 * unreached_out (if not NULL), in targets order. On a partial dump
 * (no ROOT lines) every target is unreached and kept_out is empty.
 * O(N + E) time, a few bytes a node.
 * @param kept_out receives the kept set (reached targets included)
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_roots_of(hd_nodes *kept_out, hd_nodes *unreached_out,
		       const hd_store *s, const hd_nodes *targets,
		       unsigned flags, hd_error *err);

/** hd_roots_of() on an existing search (its HD_ROOTS_SKIP_WEAK holds;
 * flags adds HD_ROOTS_ALL_ANCESTORS). */
HD_API int hd_reach_roots_of(hd_nodes *kept_out, hd_nodes *unreached_out,
			     const hd_reach *r, const hd_nodes *targets,
			     unsigned flags, hd_error *err);

/**
 * What roots-of writes: hd_subdump_write(s, kept, HD_SUBDUMP_ROOTS |
 * HD_SUBDUMP_RESTRICT), each record of a node of targets that r reaches
 * given a "root_path" member before its closing '}': its path from the
 * roots (hd_reach_path) as text, "root CATEGORY [NAME] -> Node name ->
 * ... -> Target", each hop as hd_store_hop_text() writes it (reference
 * names included), JSON-escaped. Readers that do not know the member
 * ignore it; the output reads as a dump again.
 * @param r a search on s; kept a set closed under r's paths to targets
 *        (hd_reach_roots_of()); targets the selected nodes
 * @param ro read options of the source dump (NULL: the defaults)
 * @return 0, HD_ENOMEM, the codes of hd_store_records(), or the sink's
 *         non-zero value unchanged
 */
HD_API int hd_roots_of_write(const hd_store *s, const hd_reach *r,
			     const hd_nodes *kept, const hd_nodes *targets,
			     const hd_read_options *ro, hd_write_cb w,
			     void *payload, hd_error *err);

/**
 * The nodes reachable from the nodes of from (included) by following
 * references, at most max_depth references away (0: no limit).
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_subgraph_of(hd_nodes *out, const hd_store *s,
			  const hd_nodes *from, unsigned max_depth,
			  hd_error *err);

/**
 * The targets and one shortest path from the GC roots to each, as one
 * set in ascending id order (hd_roots_of()'s kept set, the targets no
 * root reaches added): what `diff -o --with-paths` writes.
 * @param out receives the set (the caller's; free with hd_nodes_free)
 * @param unreached_out NULL, or receives how many targets no root reaches
 * @param flags as hd_roots_of()
 * @return 0, HD_ENOMEM, HD_EINVAL (a target not a node of s)
 */
HD_API int hd_paths_union(hd_nodes *out, uint64_t *unreached_out,
			  const hd_store *s, const hd_nodes *targets,
			  unsigned flags, hd_error *err);

/* ===================================================================== */
/* Interface                                                             */
/* ===================================================================== */

/** How many holders an hd_border names. */
#define HD_BORDER_HOLDERS 4

/** A new object that an old one (or a root) holds: the diff border. */
typedef struct hd_border {
	hd_node_id id;
	/** Distinct old objects referencing it (the referrers not in the
	 * new set), and the first HD_BORDER_HOLDERS of them, ascending,
	 * padded with HD_NODE_NONE. */
	uint32_t holders;
	hd_node_id holder[HD_BORDER_HOLDERS];
	/** Root categories referencing it directly (such an object is on
	 * the border even without an old holder). */
	uint32_t roots;
	/** New objects reachable from it through new objects only, itself
	 * included, and their memsize. Shared objects count for every
	 * border object that reaches them. */
	uint64_t keepalive_count;
	uint64_t keepalive_memsize;
	/** New objects it dominates among the new objects (every path from
	 * the border to them goes through it), itself included: what
	 * would be freed with it. Never counted twice across borders. */
	uint64_t retained_count;
	uint64_t retained_memsize;
} hd_border;

/** Totals of an hd_interface. */
typedef struct hd_interface_totals {
	uint64_t diff;            /**< new objects */
	uint64_t diff_memsize;
	uint64_t self_border;     /**< old objects holding new ones */
	uint64_t diff_border;     /**< new objects held by old ones or roots */
	uint64_t reached;         /**< new objects reachable from the border */
	uint64_t reached_memsize; /**< = the sum of retained_memsize */
	uint64_t components;      /**< strongly connected components of the
				       new objects' subgraph */
	/** 1 when a memsize sum (diff_memsize, reached_memsize, a border
	 * object's retained or keepalive memsize) stopped at 2^64-1 */
	uint32_t memsize_saturated;
} hd_interface_totals;

/** The border between old and new objects; opaque. */
typedef struct hd_interface hd_interface;

/**
 * memdump's interface_with, with correct counts. diff is the set of new
 * objects (from hd_select_nodes(), e.g. a "from" selection of a diff's
 * output); every other node of s is old. The self border is the old
 * objects that reference a new one; the diff border the new objects that
 * an old object or a root category references, each with its keepalive
 * and retained counts (see hd_border), computed on the subgraph induced
 * by the new objects:
 *  - keepalive: strongly connected components (iterative Tarjan), then
 *    reachable counts over the condensation DAG: exact sums for border
 *    components whose sub-DAG is a tree, and for the others u64 masks of
 *    64 border components at a time propagated over the part of the DAG
 *    they reach. O(V + E) when the border objects' subgraphs do not
 *    overlap; O((V + E) * B / 64) at worst, B the border components
 *    whose subgraphs do overlap.
 *  - retained: the dominator tree of the subgraph under a virtual root
 *    joined to every border object (Cooper-Harvey-Kennedy iteration on
 *    the reverse postorder of an iterative DFS); near-linear in practice,
 *    quadratic in theory.
 * Memory: about 36 bytes per new object (24 of them only while the
 * components are found), 32 per strongly connected component and 12 per
 * reference between new objects, plus 4 bytes per node of s; memsizes
 * are read from the store. No recursion.
 * @param out receives the result; free it with hd_interface_free
 * @param s the store (the result keeps node ids of s, not s itself)
 * @param diff the new objects: ascending node ids of s
 * @return 0, HD_ENOMEM, HD_EINVAL (diff not an ascending set of nodes)
 */
HD_API int hd_interface_with(hd_interface **out, const hd_store *s,
			     const hd_nodes *diff, hd_error *err);

/**
 * hd_interface_with() with flags: HD_ROOTS_SKIP_WEAK (weak references
 * hold nothing: an old weak object is no holder, and the references of a
 * new one are not followed; the objects are recognised as by
 * hd_reach_new()), or 0, which is hd_interface_with().
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_interface_with_flags(hd_interface **out, const hd_store *s,
				   const hd_nodes *diff, unsigned flags,
				   hd_error *err);

/** Groups below a minimum share, folded into one (hd_fold_shares()). */
typedef struct hd_share_fold {
	size_t kept;          /**< groups at or above the minimum share */
	size_t folded;        /**< groups below it, after the kept ones */
	uint64_t folded_size; /**< the sum of their sizes */
} hd_share_fold;

/**
 * Of n groups sorted by descending size, those whose share of whole
 * (size / whole) is at least min_share (0 to 1) are kept; the rest, the
 * tail, is folded into one count and one sum. min_share 0 keeps all; a
 * whole of 0 keeps all. Sizes out of order: a group at or above the
 * share after a smaller one is folded with the tail.
 */
HD_API void hd_fold_shares(hd_share_fold *out, const uint64_t *sizes, size_t n,
			   uint64_t whole, double min_share);

/** The diff border, by ascending node id; *n_out receives the count.
 * Borrowed from x. */
HD_API const hd_border *hd_interface_diff_border(const hd_interface *x,
						 size_t *n_out);

/** The self border (old objects holding new ones). Borrowed from x. */
HD_API const hd_nodes *hd_interface_self_border(const hd_interface *x);

/** Fills out with the totals. */
HD_API void hd_interface_totals_get(hd_interface_totals *out,
				    const hd_interface *x);

/** Frees the result. NULL is a no-op. */
HD_API void hd_interface_free(hd_interface *x);

/** An old object holding new ones: the self border as interface-with
 * sums it. */
typedef struct hd_border_holder {
	hd_node_id id;
	/** Diff-border objects it references (a repeated reference counts
	 * once). */
	uint64_t held;
	/** The sum of their keepalive_count (an object several of them keep
	 * alive counts for each). */
	uint64_t keepalive;
} hd_border_holder;

/** An interface ranked for reporting; opaque. */
typedef struct hd_interface_ranking hd_interface_ranking;

/**
 * Ranks an interface as interface-with reports it: the diff border by
 * keepalive_count, then retained_count (largest first), then node id;
 * the self border as hd_border_holder rows by keepalive sum, then held,
 * then node id. O(B log B + S log S + the references of the self
 * border).
 * @param out receives the ranking; free it with
 *        hd_interface_ranking_free (before x: it borrows x's border)
 * @param x the interface
 * @param s the store x was computed on
 * @return 0, HD_ENOMEM, HD_EINVAL (a NULL argument)
 */
HD_API int hd_interface_rank(hd_interface_ranking **out,
			     const hd_interface *x, const hd_store *s,
			     hd_error *err);

/** The i-th diff-border object by rank (0 is the first), borrowed from
 * the interface; NULL when i is past the end (the interface's
 * diff_border total) or r is NULL. */
HD_API const hd_border *
hd_interface_ranking_border(const hd_interface_ranking *r, size_t i);

/** The i-th self-border row by rank, borrowed from r; NULL when i is
 * past the end (the interface's self_border total) or r is NULL. */
HD_API const hd_border_holder *
hd_interface_ranking_holder(const hd_interface_ranking *r, size_t i);

/** Frees a ranking. NULL is a no-op. */
HD_API void hd_interface_ranking_free(hd_interface_ranking *r);

/* Flags of hd_interface_records(). */
/** Also the self border's records, with "border":"self". */
#define HD_INTERFACE_RECORDS_SELF (1u << 0)

/**
 * Writes the records of the diff border, in dump order, as valid NDJSON
 * (hd_record_write()), each with members added before its closing '}':
 * keepalive_count, keepalive_memsize, retained_count, retained_memsize,
 * holders, held_by (the first HD_BORDER_HOLDERS holders' addresses) and
 * roots when a root category holds it; with HD_INTERFACE_RECORDS_SELF
 * the self border's records too, each with "border":"self". Reads the
 * source dump once (hd_store_records()); the sink gets one whole line
 * a call.
 * @param x the interface; s the store it was computed on
 * @param flags 0 or HD_INTERFACE_RECORDS_SELF
 * @param ro read options of the source dump (NULL: the defaults)
 * @return 0, HD_EINVAL (unknown flag), HD_ENOMEM, the codes of
 *         hd_store_records(), or the sink's non-zero value unchanged
 */
HD_API int hd_interface_records(const hd_interface *x, const hd_store *s,
				unsigned flags, const hd_read_options *ro,
				hd_write_cb w, void *payload, hd_error *err);

/* ===================================================================== */
/* Dominators                                                            */
/* ===================================================================== */

/** hd_domtree_idom() of an object that no single object dominates: only
 * the virtual root joined to the GC roots does. */
#define HD_DOM_ROOT 0xfffffffeu

/**
 * The dominator tree of the whole heap: object A dominates B when every
 * path from the GC roots to B passes through A. The roots are one
 * virtual root joined to the objects of every root category; objects no
 * root reaches are outside the tree. The retained set of A is A and the
 * objects it dominates: what the GC could free if A were gone. Computed
 * by Lengauer and Tarjan's algorithm (the simple version, with path
 * compression: O(E log N)), every walk iterative; about 40 bytes a node
 * while computing, 16 bytes a node kept. A store indexed with
 * `heapdump index --dominators` carries the result, and then nothing is
 * computed.
 */
typedef struct hd_domtree hd_domtree;

/**
 * The dominator tree of s, which must outlive it: the one stored in s
 * when it was indexed with the same flags, otherwise computed.
 * @param flags 0, HD_ROOTS_SKIP_WEAK (weak references do not keep
 *        objects alive: the references of the objects it names are not
 *        edges of the graph), HD_DOMTREE_SKIP_DUMPER, or both
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_domtree_new(hd_domtree **out, const hd_store *s,
			  unsigned flags, hd_error *err);
/**
 * hd_domtree_new() flag: the objects hd_store_is_dumper() picks are not
 * in the graph (not reached, nothing reached through them), so they are
 * neither rows nor part of any retained size or of the reached totals:
 * what top and dominators do unless --all.
 */
#define HD_DOMTREE_SKIP_DUMPER (1u << 2)
/** Frees a tree. NULL is a no-op. */
HD_API void hd_domtree_free(hd_domtree *d);
/** 1 if the tree was read from the store rather than computed. */
HD_API int hd_domtree_is_stored(const hd_domtree *d);
/** The number of objects the roots reach, and their memsize. */
HD_API uint64_t hd_domtree_reached(const hd_domtree *d, uint64_t *memsize);
/**
 * The immediate dominator of id: an object, HD_DOM_ROOT when only the
 * virtual root dominates it, or HD_NODE_NONE when no root reaches it.
 */
HD_API hd_node_id hd_domtree_idom(const hd_domtree *d, hd_node_id id);
/** The size of id's retained set (itself included; 0 if unreached), and
 * its memsize in *memsize (may be NULL). */
HD_API uint64_t hd_domtree_retained(const hd_domtree *d, hd_node_id id,
				    uint64_t *memsize);

/**
 * The dominator tree's children of every node, each node's largest
 * retained memsize first (then ascending node id): what a tree view
 * lists under an object (serve's domtree call). CSR over the n nodes
 * of the tree's store and the virtual root; O(N log N) once, 12 bytes
 * a node kept. Sorted without shared state: distinct results may be
 * built on distinct threads.
 */
typedef struct hd_domtree_children hd_domtree_children;

/**
 * Builds the children of d, a tree of s (node_count nodes).
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_domtree_children_build(hd_domtree_children **out,
				     const hd_domtree *d, const hd_store *s,
				     hd_error *err);
/**
 * The children of d as its store keeps them (written with the tree by
 * hd_store_set_domtree: index --dominators, the cached stores), mapped,
 * not sorted: checked against d in O(N) (each child once, in the row of
 * its immediate dominator, in the tree view's order).
 * @return 0; HD_ENOTFOUND when the store keeps none; HD_EFORMAT (the
 * message says so) when they do not match d: damaged or stale, then
 * build them (hd_domtree_children_build); HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_domtree_children_open(hd_domtree_children **out,
				    const hd_domtree *d, const hd_store *s,
				    hd_error *err);
/** The children of v (HD_DOM_ROOT: of the virtual root, the top of the
 * tree), *n of them; NULL and 0 for a node out of range. Borrowed. */
HD_API const hd_node_id *hd_domtree_children_of(const hd_domtree_children *c,
						hd_node_id v, uint32_t *n);
/** Each node's retained memsize (hd_domtree_retained), node_count of
 * them, as the children were ordered by it. Borrowed. */
HD_API const uint64_t *hd_domtree_children_retained(
	const hd_domtree_children *c);
/** Frees the result. NULL is a no-op. */
HD_API void hd_domtree_children_free(hd_domtree_children *c);

/*
 * A case-insensitive substring search over n keys (class names, sites,
 * string values): the keys lowercased (ASCII) once into one buffer, each
 * followed by a NUL; a query is one memmem(3) pass (linear) from a key
 * on, whatever the lengths, and a hit that runs across the end of a key
 * into the next is none. What serve's search and filters answer from.
 */
typedef struct hd_text_search hd_text_search;

/** Key i of the n given to hd_text_search_build: its bytes and length. */
typedef const char *(*hd_text_key_cb)(void *payload, size_t i, size_t *len);

/**
 * Builds the search over n keys, read once through key (not kept).
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_text_search_build(hd_text_search **out, size_t n,
				hd_text_key_cb key, void *payload,
				hd_error *err);
/** The number of keys. */
HD_API size_t hd_text_search_count(const hd_text_search *x);
/**
 * The first key at or after from that holds q[0..qlen), case aside
 * (ASCII), into *found. An empty q is in every key.
 * @return 0, HD_ENOTFOUND (no such key from on), HD_ENOMEM
 */
HD_API int hd_text_search_next(const hd_text_search *x, const char *q,
			       size_t qlen, size_t from, size_t *found);
/** Sets mark[i] = 1 for every key i holding q (mark: count bytes, left
 * as they are elsewhere) and returns how many; (size_t)-1 out of
 * memory. */
HD_API size_t hd_text_search_mark(const hd_text_search *x, const char *q,
				  size_t qlen, unsigned char *mark);
/** Frees the search. NULL is a no-op. */
HD_API void hd_text_search_free(hd_text_search *x);
/**
 * The dominators of target, outermost first, target last: the chain of
 * objects each of which alone keeps the next alive. out->root receives a
 * root category that holds the first object directly, or UINT32_MAX when
 * several paths lead to it.
 * @return 0, HD_ENOTFOUND (no root reaches target), HD_ENOMEM,
 *         HD_EINVAL, HD_EFORMAT (a stored tree that is not a tree)
 */
HD_API int hd_domtree_chain(hd_root_path *out, const hd_domtree *d,
			    hd_node_id target, hd_error *err);
/**
 * The k reached objects of largest retained memsize (ties: larger
 * retained count, then lower id first), in that order. out must hold k
 * ids; *n_out receives how many were written.
 * @return 0, HD_ENOMEM
 */
HD_API int hd_domtree_top(hd_node_id *out, size_t *n_out, const hd_domtree *d,
			  size_t k, hd_error *err);

/** One row of hd_domtree_classes(). */
typedef struct hd_class_retained {
	const char *name;          /**< as `stats --by class` prints it */
	uint64_t objects;          /**< reached instances */
	uint64_t shallow;          /**< their memsize */
	uint64_t retained_count;   /**< the union of their retained sets */
	uint64_t retained_memsize;
} hd_class_retained;

/**
 * Eclipse MAT's class histogram: per class, the reached instances, their
 * shallow memsize, and the retained set of all of them together (an
 * instance inside another instance's retained set is not counted
 * twice). Sorted by retained memsize, largest first.
 * @param rows receives the rows, followed by one more whose name is
 *        NULL; free with hd_class_retained_free
 * @param n_rows receives the number of rows (the NULL-named one aside)
 * @return 0, HD_ENOMEM
 */
HD_API int hd_domtree_classes(hd_class_retained **rows, size_t *n_rows,
			      const hd_domtree *d, hd_error *err);
/** Frees the rows of hd_domtree_classes() (it finds their end by the
 * NULL name). NULL is a no-op. */
HD_API void hd_class_retained_free(hd_class_retained *rows);

/**
 * Keeps a copy of d in s (built by hd_store_build(), not opened), so
 * that hd_store_write() stores it and hd_domtree_new() on the written
 * store reads it instead of computing it; with it the children orders
 * (hd_domtree_children_open reads them back).
 * @return 0, HD_ENOMEM, HD_EINVAL (an opened store, or d of another store)
 */
HD_API int hd_store_set_domtree(hd_store *s, const hd_domtree *d,
				hd_error *err);

/* ===================================================================== */
/* Views kept in a store (man 5 heapdump-store, VIEWS)                   */
/* ===================================================================== */

/*
 * What a browser of the heap (heapdump serve) reads at start and on its
 * first calls, computed once by `heapdump index --views` (or a cached
 * store written with HD_CACHE_VIEWS) and read back from the store's
 * mapping: the string values, the group stats, retained by class, the
 * objects' order. Each
 * *_open reads one after a check linear in its size: HD_ENOTFOUND when
 * the store keeps none (a store written without them, or by an older
 * release), HD_EFORMAT with a message saying what when it is damaged or
 * stale; the caller then computes it (*_build, or hd_domtree_classes),
 * and the answer is the same.
 */
#define HD_VIEW_STRINGS (1u << 0) /**< the string values (reads the dump) */
#define HD_VIEW_GROUPS (1u << 1)  /**< the group stats of hd_view_stats_options */
#define HD_VIEW_CLASSES (1u << 2) /**< retained by class (needs the tree) */
#define HD_VIEW_ORDER (1u << 3)   /**< the objects' order (needs the tree) */
#define HD_VIEW_ALL (HD_VIEW_STRINGS | HD_VIEW_GROUPS | HD_VIEW_CLASSES | \
		     HD_VIEW_ORDER)

/**
 * Keeps the views what names (HD_VIEW_ bits) in s, built by
 * hd_store_build() (not opened), so that hd_store_write() stores them.
 * HD_VIEW_STRINGS reads the STRING records back from the dump
 * (hd_strings_build), or takes the values a build with
 * HD_INDEX_STRING_VALUES kept (and frees them); HD_VIEW_CLASSES and
 * HD_VIEW_ORDER need d, the tree kept in s (hd_store_set_domtree first).
 * @return 0, HD_ENOMEM, HD_EINVAL, the codes of hd_strings_build()
 */
HD_API int hd_store_set_views(hd_store *s, const hd_domtree *d,
			      unsigned what, hd_error *err);
/** The views kept in s (HD_VIEW_ bits of the sections present, checked
 * or not). */
HD_API unsigned hd_store_views(const hd_store *s);

/** The groupings of the group stats view (serve's): type, class, file,
 * location, gem, generation, imemo, then (file, gem); default flags. */
HD_API void hd_view_stats_options(hd_stats_options *o);

/** One row of the string values: the STRING objects by value and
 * allocation site (hd_strings_build with HD_STRINGS_BY_SITE and a
 * min_count of 1), in its order. */
typedef struct hd_string_value {
	const char *value;       /**< its bytes (may hold NUL), borrowed */
	size_t value_len;
	uint64_t bytesize;
	uint64_t count;          /**< copies in the row */
	uint64_t memsize;
	hd_node_id node;         /**< a copy (its site), or HD_NODE_NONE */
	int complete;            /**< 0: value is a prefix of bytesize bytes */
} hd_string_value;

typedef struct hd_string_values hd_string_values;

/** The string values s keeps. @return 0, HD_ENOTFOUND, HD_EFORMAT,
 * HD_ENOMEM */
HD_API int hd_string_values_open(hd_string_values **out, const hd_store *s,
				 hd_error *err);
/** The string values read from s's dump. @return 0, the codes of
 * hd_strings_build() */
HD_API int hd_string_values_build(hd_string_values **out,
				  const hd_store *s, hd_error *err);
/** The number of rows. */
HD_API size_t hd_string_values_count(const hd_string_values *v);
/** Row i (< count) into *r; its value is borrowed from v. */
HD_API void hd_string_values_row(hd_string_value *r,
				 const hd_string_values *v, size_t i);
/** The values searched case aside (row i is key i). Borrowed. */
HD_API const hd_text_search *hd_string_values_search(
	const hd_string_values *v);
/** Frees it. NULL is a no-op. */
HD_API void hd_string_values_free(hd_string_values *v);

/** The group stats of a store: a grouping's rows, by count (as
 * hd_stats_rows with HD_SORT_COUNT), and the totals. */
typedef struct hd_group_stats hd_group_stats;

/** The group stats s keeps for the groupings of o (HD_ENOTFOUND when it
 * keeps none, or for other groupings or flags). @return 0, HD_ENOTFOUND,
 * HD_EFORMAT, HD_ENOMEM */
HD_API int hd_group_stats_open(hd_group_stats **out, const hd_store *s,
			       const hd_stats_options *o, hd_error *err);
/** The group stats of s computed (hd_stats_add_store). @return 0, the
 * codes of hd_stats_new(), hd_stats_add_store() */
HD_API int hd_group_stats_build(hd_group_stats **out, const hd_store *s,
				const hd_stats_options *o, hd_error *err);
/** Grouping g's rows by count (keys NUL-terminated), *n of them;
 * borrowed. */
HD_API const hd_stats_row *hd_group_stats_rows(const hd_group_stats *g,
					       unsigned grouping, size_t *n);
/** The totals. */
HD_API void hd_group_stats_totals(hd_stats_totals *out,
				  const hd_group_stats *g);
/** Frees it. NULL is a no-op. */
HD_API void hd_group_stats_free(hd_group_stats *g);

/**
 * hd_domtree_classes() as s keeps it for d, the tree kept in s
 * (HD_ENOTFOUND when it keeps none, or d was computed); free with
 * hd_class_retained_free. @return 0, HD_ENOTFOUND, HD_EFORMAT,
 * HD_ENOMEM
 */
HD_API int hd_domtree_classes_open(hd_class_retained **rows, size_t *n_rows,
				   const hd_domtree *d, const hd_store *s,
				   hd_error *err);

/**
 * The objects' order, the one rule of a group's objects in serve
 * (/api/objects): retained memsize descending, then node ascending.
 * @return nonzero when (mem_a, a) comes before (mem_b, b)
 */
HD_API int hd_retained_before(uint64_t mem_a, hd_node_id a, uint64_t mem_b,
			      hd_node_id b);

/** Every node of a store but the dumper's (hd_store_is_dumper), in the
 * objects' order (hd_retained_before) of a dominator tree's retained
 * memsize. */
typedef struct hd_retained_order hd_retained_order;

/**
 * The objects' order s keeps for d, the tree kept in s (HD_ENOTFOUND
 * when it keeps none, or d was computed), mapped after a check of every
 * node against d (in range, not the dumper's, each object once, in the
 * order). @return 0, HD_ENOTFOUND, HD_EFORMAT, HD_ENOMEM
 */
HD_API int hd_retained_order_open(hd_retained_order **out,
				  const hd_domtree *d, const hd_store *s,
				  hd_error *err);
/** The objects' order of d computed (a radix sort, O(N) a byte of the
 * largest retained memsize). @return 0, HD_ENOMEM */
HD_API int hd_retained_order_build(hd_retained_order **out,
				   const hd_domtree *d, const hd_store *s,
				   hd_error *err);
/** The nodes in order, *n of them; borrowed. */
HD_API const hd_node_id *hd_retained_order_nodes(const hd_retained_order *o,
						 size_t *n);
/** Frees it. NULL is a no-op. */
HD_API void hd_retained_order_free(hd_retained_order *o);

/* ===================================================================== */
/* Diff                                                                  */
/* ===================================================================== */

/*
 * Which objects of AFTER are new since BEFORE, and (with a third dump,
 * LATER) which of those are still alive in LATER: the three-dump leak
 * method. The identity rule, in order (man 1 heapdump-diff):
 *  1. object_id: when both dumps carry Ruby 4.0 flags.object_id, an
 *     object whose id BEFORE also has is old; one whose address BEFORE
 *     holds with another id is new.
 *  2. generation: when both dumps are traced, with G the newest
 *     generation of BEFORE, a traced object is new when its generation is
 *     above G and old when below; at G, it is old only if BEFORE has the
 *     same address with the same generation and type. Immune to slot
 *     reuse and to compaction (a moved object keeps its generation).
 *  3. address and fingerprint, for the rest: old when BEFORE has the same
 *     address with the same type, the same generation (or none on both
 *     sides), the same class name and, if it was frozen in BEFORE, still
 *     frozen with the same size; otherwise new. A match whose BEFORE
 *     object was not frozen is "uncertain": nothing in a dump tells it
 *     from another object of the same class put in the freed slot. Not
 *     immune to compaction (a moved object looks new), but for the
 *     objects without a generation of traced dumps: when compaction
 *     moved traced objects between the two dumps (an object of a
 *     generation below G at another address), such an object, which
 *     the address rule would call new, was allocated before tracing
 *     began, so before BEFORE: old (HD_MATCH_OLD_UNTRACED); unless
 *     AFTER has more objects without a generation than BEFORE
 *     (untraced_grew: the tracer lost some).
 */

/* Verdicts on an object of AFTER (hd_diff_result.match). */
#define HD_MATCH_OLD_OBJECT_ID 1  /**< BEFORE has its flags.object_id */
#define HD_MATCH_OLD_GENERATION 2 /**< generation below G */
#define HD_MATCH_OLD_ADDRESS 3    /**< same address, generation, type */
#define HD_MATCH_OLD_FROZEN 4     /**< untraced: same address, type,
				       class, frozen size */
#define HD_MATCH_OLD_UNCERTAIN 5  /**< untraced: same address, type and
				       class only */
#define HD_MATCH_OLD_PARTIAL 6    /**< untraced, and BEFORE is a since:
				       dump, which lists traced objects only */
#define HD_MATCH_OLD_UNTRACED 7   /**< no generation in traced dumps
				       between which compaction moved
				       objects (and none appeared):
				       allocated before tracing began, so
				       before BEFORE */
#define HD_MATCH_NEW_OBJECT_ID 8  /**< BEFORE's object there has another id */
#define HD_MATCH_NEW_GENERATION 9 /**< generation above G */
#define HD_MATCH_NEW_ABSENT 10    /**< no object at its address in BEFORE */
#define HD_MATCH_NEW_REUSED 11    /**< another object at its address */
#define HD_MATCH_EXCLUDED 12      /**< new, but the allocation tracer's or
				       dump_all's own (see HD_DIFF_ALL) */
#define HD_MATCH__COUNT 13
/** Is a verdict "new" (excluded objects are not)? */
#define HD_MATCH_IS_NEW(m) ((m) >= HD_MATCH_NEW_OBJECT_ID && \
			    (m) <= HD_MATCH_NEW_REUSED)

/* The rules a diff used (hd_diff_result.rules). */
#define HD_DIFF_RULE_OBJECT_ID (1u << 0)
#define HD_DIFF_RULE_GENERATION (1u << 1)
#define HD_DIFF_RULE_ADDRESS (1u << 2)

/* hd_diff_options flags. */
#define HD_DIFF_NO_GENERATION (1u << 0) /**< rule 3 even for traced dumps */
#define HD_DIFF_NO_OBJECT_ID (1u << 1)  /**< do not read object ids */
#define HD_DIFF_ALL (1u << 2) /**< keep the tracer's and dumper's objects */

/** Options for hd_diff(); initialise with HD_DIFF_OPTIONS_INIT. */
typedef struct hd_diff_options {
	unsigned int version;  /**< HD_DIFF_OPTIONS_VERSION */
	unsigned int flags;    /**< HD_DIFF_ bits */
	/** How to read the source dumps for object ids (4.0 dumps only:
	 * the store does not keep them, so they are read from the dumps the
	 * stores were built from, one pass each). */
	hd_read_options read;
} hd_diff_options;

#define HD_DIFF_OPTIONS_VERSION 1
#define HD_DIFF_OPTIONS_INIT \
	{ HD_DIFF_OPTIONS_VERSION, 0, HD_READ_OPTIONS_INIT }

/** What hd_diff() found; free with hd_diff_result_free(). */
typedef struct hd_diff_result {
	unsigned int rules;   /**< HD_DIFF_RULE_ bits of the rules used */
	int traced;           /**< both BEFORE and AFTER traced (rule 2) */
	int has_later;        /**< a LATER store was given */
	uint64_t generation;  /**< G, the newest generation of BEFORE */
	uint64_t objects[3];  /**< nodes of BEFORE, AFTER, LATER */
	hd_nodes added;       /**< the new objects (node ids of AFTER) */
	uint64_t added_memsize;
	/** With LATER: the new objects still alive in LATER (node ids of
	 * AFTER), by the same rule applied from AFTER to LATER; else empty. */
	hd_nodes retained;
	uint64_t retained_memsize;
	uint64_t uncertain;   /**< AFTER objects judged old on an uncertain
				   match (HD_MATCH_OLD_UNCERTAIN) */
	uint64_t retained_uncertain; /**< retained on an uncertain match */
	uint64_t retained_moved; /**< retained at another address in LATER:
				      matched by generation, type and site */
	uint64_t object_ids;  /**< AFTER objects with a flags.object_id */
	/** Both dumps are 4.0 but a source dump could not be read again (a
	 * store whose dump moved or changed, or standard input): rule 1 was
	 * skipped. */
	int object_id_skipped;
	uint64_t by_match[HD_MATCH__COUNT]; /**< AFTER objects per verdict */
	unsigned char *match; /**< per AFTER node: its HD_MATCH_ verdict */
	size_t nmatch;
	/** With LATER: the objects of retained as LATER has them (node ids
	 * of LATER, ascending; a moved object at its new address), and their
	 * memsize in LATER: the leak as LATER holds it, for the border, the
	 * holders and the paths of a three-dump report. Else empty. */
	hd_nodes retained_later;
	uint64_t retained_later_memsize;
	/** 1 when a memsize sum above stopped at 2^64-1 (saturated, as the
	 * sums of hd_stats_totals) */
	int memsize_saturated;
	/** With LATER: the objects of LATER that AFTER did not have (born
	 * after AFTER; node ids of LATER, ascending), and their memsize.
	 * The leak model walks through them: they are neither leaked nor
	 * holders (see hd_leaks_build). Else empty. */
	hd_nodes young_later;
	uint64_t young_later_memsize;
	/** Traced objects of AFTER that compaction moved since BEFORE (a
	 * generation below G, at an address where BEFORE has no object of
	 * its generation and type); with LATER, [1]: the same from AFTER to
	 * LATER. Not 0: the objects without a generation that the address
	 * rule would call new are old (HD_MATCH_OLD_UNTRACED). */
	uint64_t moved[2];
	/** Traced dumps only: how many more objects without a generation
	 * AFTER has than BEFORE ([0]; [1]: LATER than AFTER), when more than
	 * a handful, else 0. Objects allocated before tracing began only
	 * die: more means tracing stopped between the dumps or the tracer
	 * lost moved objects' allocations (Ruby 3.3 under compaction), and
	 * HD_MATCH_OLD_UNTRACED is not used. */
	uint64_t untraced_grew[2];
} hd_diff_result;

/**
 * Compares AFTER with BEFORE (and LATER, if not NULL): linear in the
 * nodes of the stores (node ids are in address order, so objects at the
 * same address are found by a merge), plus one read of each source dump
 * for 4.0 object ids. The result holds node ids of AFTER, meaningful
 * while that store is open.
 * @param out receives the result
 * @param opts NULL for defaults
 * @return 0, HD_ENOMEM, HD_EINVAL, HD_EIO, HD_EPARSE (reading a source
 *         dump for object ids, strict read options)
 */
HD_API int hd_diff(hd_diff_result **out, const hd_store *before,
		   const hd_store *after, const hd_store *later,
		   const hd_diff_options *opts, hd_error *err);

/**
 * Which objects of set (node ids of AFTER, ascending) are still alive in
 * LATER, by the rules hd_diff() applies from AFTER to LATER (object id,
 * address and fingerprint or generation, moved objects paired by
 * generation, type, class and site), as node ids of LATER (ascending):
 * a set of new objects taken as LATER holds it.
 * @param opts NULL for defaults (flags HD_DIFF_NO_GENERATION,
 *        HD_DIFF_NO_OBJECT_ID apply)
 * @param out receives the set; free it with hd_nodes_free
 * @return 0, HD_ENOMEM, HD_EINVAL, HD_EIO, HD_EPARSE (as hd_diff())
 */
HD_API int hd_diff_follow(hd_nodes *out, const hd_store *after,
			  const hd_store *later, const hd_nodes *set,
			  const hd_diff_options *opts, hd_error *err);

/** A verdict's name ("new: generation above G"). */
HD_API const char *hd_match_name(int match);

/** Frees a result. NULL is a no-op. */
HD_API void hd_diff_result_free(hd_diff_result *r);

/*
 * Are dumps given in the order they were taken, and of one process? What
 * a dump can tell (the newest allocation generation, the addresses) and
 * what a caller may know besides (the heapdump gem's sidecar: pid and
 * time) is compared pair by pair, each dump with the next.
 */

/** What is known of a dump besides the dump itself (zeros: unknown). */
typedef struct hd_dump_origin {
	uint64_t pid;     /**< the process id */
	int64_t time_us;  /**< when the dump began: microseconds since the
			       epoch (UTC) */
	/** GC.stat(:compact_count) + 1 when the dump was taken (the gem's
	 * sidecar, gc_compact_count); 0: unknown */
	uint64_t compactions;
} hd_dump_origin;

/* hd_order_pair.flags */
/** Both traced, and the newer dump's newest generation is below the
 * older one's: GC.count never goes back in a process, so the newer dump
 * was most likely taken first (or nothing allocated since the older dump
 * is alive in the newer one, and the diff is empty anyway). */
#define HD_ORDER_GENERATION_BACKWARDS (1u << 0)
/** Both times known, of one process, and the newer dump's is earlier. */
#define HD_ORDER_TIME_BACKWARDS (1u << 1)
/** Both pids known, and they differ. */
#define HD_ORDER_OTHER_PROCESS (1u << 2)
/** Almost no address in common (under a tenth of the smaller dump's, of
 * dumps of 1,000 objects or more): dumps of two processes, or a
 * compaction moved nearly everything in between. */
#define HD_ORDER_FEW_SHARED (1u << 3)
/** The pair looks like two dumps of one process (neither of the two
 * above) taken in the reverse order: generation or time backwards. */
#define HD_ORDER_REVERSED (1u << 4)
/** Both compaction counts known (hd_dump_origin.compactions), and the
 * newer's is higher: a compaction moved objects between the dumps, so an
 * address no longer names an object (for untraced dumps, a moved object
 * looks new). Not an order problem: hd_order_text says nothing of it. */
#define HD_ORDER_COMPACTED (1u << 5)

/** What hd_order_check() found about one pair of consecutive dumps. */
typedef struct hd_order_pair {
	unsigned int flags;       /**< HD_ORDER_ bits */
	int traced[2];            /**< the dump has traced objects */
	uint64_t generation[2];   /**< its newest generation, when traced */
	uint64_t objects[2];      /**< nodes of each */
	uint64_t shared;          /**< addresses both have */
	hd_dump_origin origin[2]; /**< as given */
} hd_order_pair;

/**
 * Checks that n dumps (n >= 2) are in the order they were taken and of
 * one process: fills pairs[k] (n - 1 of them) for stores k and k + 1.
 * Linear in the nodes (addresses are compared by a merge).
 * @param origins n entries, or NULL when nothing is known besides the dumps
 * @return 0, HD_EINVAL
 */
HD_API int hd_order_check(hd_order_pair *pairs,
			  const hd_store *const *stores,
			  const hd_dump_origin *origins, size_t n,
			  hd_error *err);

/**
 * One finding of an hd_order_pair in words, as the heapdump command
 * prints it (and the gem raises it): finding is HD_ORDER_OTHER_PROCESS
 * or HD_ORDER_FEW_SHARED (a warning) or HD_ORDER_REVERSED (an error, or
 * with force a warning). first and second name the two dumps, t0 and t1
 * their sidecar times ("" or NULL if none). buf is "" when the pair has
 * not that finding.
 * @return the length of the whole text (as snprintf), 0 when none, -1 on
 * a bad argument
 */
HD_API int hd_order_text(char *buf, size_t size, const hd_order_pair *p,
			 unsigned int finding, const char *first,
			 const char *second, const char *t0, const char *t1,
			 int force);

/* ===================================================================== */
/* Process growth: in the Ruby heap, or outside it                       */
/* ===================================================================== */

/*
 * Dumps hold the Ruby heap only. When the process grew far more than
 * its heap between the first dump and the last, what grew is native
 * memory (a C extension's malloc, mmap, a fragmented allocator), which
 * no analysis of the objects can find: a leak report says so before
 * anything else, in the one sentence every front end prints. The
 * figures are the heapdump gem's sidecar's (rss_bytes,
 * malloc_in_use_bytes: man 5 heapdump-dump) and the heap's memsize.
 */

/** One dump: what its sidecar says of the process, and its heap. */
typedef struct hd_process_sample {
	int has_rss;            /**< the sidecar gave the RSS (else unknown) */
	int has_malloc;         /**< ...and malloc's bytes in use */
	uint64_t rss;           /**< resident set size, bytes */
	uint64_t malloc_in_use; /**< malloc's allocated bytes (mallinfo2) */
	uint64_t heap_memsize;  /**< the memsize of the dump's objects, the
				     dumper's left out
				     (hd_process_heap_memsize) */
} hd_process_sample;

/** The RSS growth (bytes, first dump to last) under which the process
 * is judged not to have grown: allocator and page-cache noise. */
#define HD_PROCESS_MIN_GROWTH 16000000u
/** The growth is outside the heap when the heap grew by at most this
 * share of what the RSS grew (Ruby objects need more memory than their
 * memsize, never four times more). */
#define HD_PROCESS_MAX_HEAP_SHARE 0.25

/** Options for hd_process_judge(); initialise with
 * HD_PROCESS_OPTIONS_INIT. */
typedef struct hd_process_options {
	unsigned int version;  /**< HD_PROCESS_OPTIONS_VERSION */
	uint64_t min_growth;   /**< HD_PROCESS_MIN_GROWTH */
	double max_heap_share; /**< HD_PROCESS_MAX_HEAP_SHARE */
} hd_process_options;
#define HD_PROCESS_OPTIONS_VERSION 1
#define HD_PROCESS_OPTIONS_INIT                                  \
	{ HD_PROCESS_OPTIONS_VERSION, HD_PROCESS_MIN_GROWTH,     \
	  HD_PROCESS_MAX_HEAP_SHARE }

/** The judgement of hd_process_judge(). Growths are the last dump's
 * figure minus the first's (negative: shrank). */
typedef struct hd_process_verdict {
	int known;           /**< every dump has the RSS: the rest means
				  something (else all zero, text "") */
	int has_malloc;      /**< every dump has malloc's figure */
	int outside_ruby;    /**< the RSS grew by min_growth or more and the
				  heap by at most max_heap_share of it */
	int64_t rss_growth;
	int64_t malloc_growth; /**< 0 unless has_malloc */
	int64_t heap_growth;
	/** "the process grew by 105.0 MB (malloc in use by 104.9 MB), the
	 * Ruby heap by 0.1 MB: the growth is outside Ruby objects"; without
	 * outside_ruby the figures alone ("the process grew by 12.1 MB, the
	 * Ruby heap by 11.0 MB"); "" when not known. Sizes in decimal
	 * units, as the commands print them. */
	char text[224];
} hd_process_verdict;

/**
 * Judges n dumps of one process (n >= 2, in the order taken): did the
 * process grow outside its Ruby heap? Reads nothing but samples.
 * @param opts NULL for the defaults
 * @return 0, HD_EINVAL (n < 2, samples NULL, a share outside [0, 1],
 *         an unknown options version)
 */
HD_API int hd_process_judge(hd_process_verdict *out,
			    const hd_process_sample *samples, size_t n,
			    const hd_process_options *opts, hd_error *err);

/** The Ruby heap of a store for hd_process_sample.heap_memsize: the sum
 * of its objects' memsize, those hd_store_is_dumper() picks left out
 * (saturated at UINT64_MAX). */
HD_API uint64_t hd_process_heap_memsize(const hd_store *s);

/*
 * Where the RSS goes (issue 35 section 1): the figures a dump's sidecar
 * records of the whole process (/proc, malloc, the Ruby heap's pages,
 * thread stacks, JIT code) and the dump's memsize, split into buckets
 * that add up to the RSS; with several dumps, each bucket's growth and
 * the one that grew. man 1 heapdump-memory.
 */

/** What /proc says of a process (hd_memory_probe). */
typedef struct hd_memory_proc {
	uint64_t rss;         /**< bytes resident */
	uint64_t anon;        /**< of which anonymous */
	uint64_t file;        /**< of which file-backed or shared memory
				   (rss - anon) */
	uint64_t shmem;       /**< of which shared memory (status RssShmem) */
	uint64_t stacks;      /**< resident bytes of the thread stacks */
	uint64_t stack_count; /**< thread stacks found */
	/** "smaps_rollup", "status" (no smaps_rollup: status's counters)
	 *  or "" (nothing read) */
	const char *source;
	int has_stacks;       /**< the stacks were read (smaps) */
} hd_memory_proc;

/**
 * Reads /proc/PID (pid 0: self) for hd_memory_proc: smaps_rollup's Rss
 * and Anonymous (status's VmRSS and RssAnon when it is missing), status's
 * RssShmem, and the thread stacks: the [stack] mapping and every mapping
 * of smaps that holds a thread's stack pointer (task/TID/syscall), each
 * counted once, with its Rss. Allocates nothing on the heap but stdio's.
 * @return 0, HD_EIO (neither smaps_rollup nor status can be read)
 */
HD_API int hd_memory_probe(hd_memory_proc *out, int pid, hd_error *err);

/** Figures a sidecar may give (bits of hd_memory_sample.has). */
enum {
	HD_MEM_HAS_RSS = 1u << 0,    /**< rss */
	HD_MEM_HAS_SPLIT = 1u << 1,  /**< anon (file = rss - anon) */
	HD_MEM_HAS_MALLOC = 1u << 2, /**< malloc_in_use */
	HD_MEM_HAS_MALLOC_FREE = 1u << 3,
	HD_MEM_HAS_SLOTS = 1u << 4,  /**< heap_bytes, live_slot_bytes */
	HD_MEM_HAS_STACKS = 1u << 5,
	HD_MEM_HAS_JIT = 1u << 6,
	HD_MEM_HAS_MEMSIZE = 1u << 7 /**< objects_memsize */
};

/** One dump: its process's figures (bytes) and its heap's memsize. */
typedef struct hd_memory_sample {
	unsigned has;             /**< HD_MEM_HAS_ bits */
	uint64_t rss, anon;
	uint64_t malloc_in_use;   /**< mallinfo2 uordblks + hblkhd, or
				       jemalloc's stats.allocated */
	uint64_t malloc_free;     /**< mallinfo2 fordblks, or jemalloc's
				       stats.resident - stats.allocated */
	uint64_t heap_bytes;      /**< Ruby heap pages x page size */
	uint64_t live_slot_bytes; /**< live slots x their slot size */
	uint64_t stacks;          /**< thread stacks, resident */
	uint64_t jit;             /**< JIT code (YJIT's code_region_size;
				       its own allocations are malloc's) */
	uint64_t objects_memsize; /**< the dump's memsize (slots included) */
} hd_memory_sample;

/** The buckets of hd_memory_split, in the order they are filled. */
typedef enum hd_memory_bucket {
	HD_MEM_SLOTS_LIVE,    /**< Ruby object slots, live */
	HD_MEM_SLOTS_FREE,    /**< Ruby heap pages' free slots */
	HD_MEM_STACKS,        /**< thread stacks */
	HD_MEM_JIT,           /**< JIT code (its region, not its malloc) */
	HD_MEM_OBJECT_MALLOC, /**< malloc owned by Ruby objects (memsize) */
	HD_MEM_OTHER_MALLOC,  /**< malloc in use that no object accounts for */
	HD_MEM_MALLOC_FREE,   /**< malloc held free (fragmentation) */
	HD_MEM_OTHER_ANON,    /**< the rest of the anonymous memory */
	HD_MEM_FILE,          /**< file-backed and shared memory */
	HD_MEM_UNEXPLAINED,   /**< the rest when the split is unknown */
	HD_MEM_NBUCKETS
} hd_memory_bucket;

/** The stable name of a bucket ("slots_live", ...), for JSON and TSV. */
HD_API const char *hd_memory_bucket_key(hd_memory_bucket b);
/** Its words ("Ruby object slots, live"). */
HD_API const char *hd_memory_bucket_label(hd_memory_bucket b);

/** The split of one dump's RSS. */
typedef struct hd_memory_split {
	int known;                      /**< the sample had the RSS */
	uint64_t rss;
	uint64_t bytes[HD_MEM_NBUCKETS]; /**< add up to rss exactly */
	unsigned measured;              /**< bit 1 << b: bucket b came from
					     a figure (else 0, unknown) */
	/** what the figures said beyond the anonymous memory resident,
	 *  cut off bucket by bucket in the order above (malloc's free
	 *  memory that is not resident, mostly) */
	uint64_t overcount;
} hd_memory_split;

/**
 * Splits sample's RSS: the anonymous memory is given in bucket order,
 * each bucket at most what remains (live slots, free slots, stacks, the
 * memsize beyond the live slots as object-owned malloc, at most malloc
 * in use, the rest of malloc in use, JIT, malloc's free bytes), the
 * remainder is other anonymous memory, rss - anon file-backed. Without
 * the anonymous split, the remainder is unexplained. Reads nothing else.
 */
HD_API void hd_memory_split_get(hd_memory_split *out,
				const hd_memory_sample *sample);

/** What grew, of the verdict's groups. */
typedef enum hd_memory_group {
	HD_MEMG_NONE,          /**< nothing grew enough, or unknown */
	HD_MEMG_RUBY,          /**< slots live + free + object malloc */
	HD_MEMG_NATIVE_MALLOC, /**< malloc in use outside objects */
	HD_MEMG_MALLOC_FREE,   /**< malloc held free */
	HD_MEMG_STACKS,
	HD_MEMG_JIT,
	HD_MEMG_OTHER_ANON,
	HD_MEMG_FILE,
	HD_MEMG_UNEXPLAINED
} hd_memory_group;

/** The stable name of a group ("ruby", "native_malloc", "malloc_free",
 *  "stacks", "jit", "other_anon", "file", "unexplained"; "none"). */
HD_API const char *hd_memory_group_key(hd_memory_group g);

/** Options for hd_memory_judge(); initialise with HD_MEMORY_OPTIONS_INIT. */
typedef struct hd_memory_options {
	unsigned int version; /**< HD_MEMORY_OPTIONS_VERSION */
	uint64_t min_growth;  /**< a group names the growth when it grew by
				   this much (HD_PROCESS_MIN_GROWTH)... */
	double min_share;     /**< ...and by this share of the RSS growth
				   (0.5) */
} hd_memory_options;
#define HD_MEMORY_OPTIONS_VERSION 1
#define HD_MEMORY_OPTIONS_INIT \
	{ HD_MEMORY_OPTIONS_VERSION, HD_PROCESS_MIN_GROWTH, 0.5 }

/** The judgement of n splits, first to last. */
typedef struct hd_memory_verdict {
	int known;                       /**< every split known */
	int64_t rss_growth;
	int64_t growth[HD_MEM_NBUCKETS]; /**< last - first, per bucket */
	hd_memory_group group;           /**< the group that grew */
	int64_t group_growth;
	/** "malloc held free grew by 40.1 MB of the RSS's 41.0 MB: ..."; or
	 *  the RSS's growth alone, when no group names it; "" unknown */
	char text[320];
} hd_memory_verdict;

/**
 * Judges n splits of one process's dumps (n >= 2, in the order taken):
 * each bucket's growth, and the group (hd_memory_group) that grew by at
 * least min_growth and min_share of the RSS's growth, the largest.
 * @return 0, HD_EINVAL (n < 2, splits NULL, an unknown options version,
 *         min_share outside [0, 1])
 */
HD_API int hd_memory_judge(hd_memory_verdict *out,
			   const hd_memory_split *splits, size_t n,
			   const hd_memory_options *opts, hd_error *err);

/** Instruction sequences grouped by the line that made them. */
typedef struct hd_memory_site {
	const char *file;   /**< borrowed from the store; NULL untraced */
	size_t file_len;
	uint64_t line;
	uint64_t count;     /**< IMEMO/iseq objects */
	uint64_t memsize;   /**< their memsize */
} hd_memory_site;

/** The sites of hd_memory_iseq_sites(); free with hd_memory_sites_free. */
typedef struct hd_memory_sites {
	hd_memory_site *site; /**< largest memsize first */
	size_t n;
	size_t cap;           /**< private */
} hd_memory_sites;

/**
 * The IMEMO/iseq objects of s grouped by allocation site (file:line;
 * the untraced ones together, file NULL, last among equals), by
 * memsize, largest first, into out (which it empties first).
 * @return 0, HD_ENOMEM
 */
HD_API int hd_memory_iseq_sites(hd_memory_sites *out, const hd_store *s,
				hd_error *err);
/** Frees what out holds (zeroes it). */
HD_API void hd_memory_sites_free(hd_memory_sites *out);

/* ===================================================================== */
/* Trend: growth over many dumps                                         */
/* ===================================================================== */

/*
 * The groups of a stats key (class, site, type...) counted in N dumps of
 * one process taken in this order: each group's count and memsize in
 * every dump, the least-squares slope per step of each, and a verdict.
 * Dumps are added one at a time as finished hd_stats accumulators (made
 * by hd_trend_stats_new), so memory holds the per-group counters (2 N
 * values a group) and one dump's groups, never the dumps themselves.
 */

/** Options for hd_trend_new(); initialise with HD_TREND_OPTIONS_INIT
 * (by class, ranked by memsize slope). */
typedef struct hd_trend_options {
	unsigned int version;  /**< HD_TREND_OPTIONS_VERSION */
	unsigned int flags;    /**< HD_STATS_ALL: keep tracer and dumper */
	unsigned int ndumps;   /**< N, at least 2 */
	unsigned int nkeys;    /**< 1..HD_STATS_MAX_KEYS */
	int keys[HD_STATS_MAX_KEYS];
	/** HD_SORT_MEMSIZE or HD_SORT_COUNT: which slope ranks rows of one
	 * verdict (the other breaks ties) */
	int sort;
	/** keep only the groups whose class component (keys must hold
	 * HD_KEY_CLASS) is one of these names; NULL or 0: every group */
	const char *const *classes;
	size_t nclasses;
} hd_trend_options;

#define HD_TREND_OPTIONS_VERSION 1
#define HD_TREND_OPTIONS_INIT \
	{ HD_TREND_OPTIONS_VERSION, 0, 0, 1, { HD_KEY_CLASS, 0, 0, 0 }, \
	  HD_SORT_MEMSIZE, NULL, 0 }

/** Verdicts, in the order rows are ranked. */
typedef enum hd_trend_verdict {
	/** the count or the memsize grows strictly at every step */
	HD_TREND_EVERY_STEP = 0,
	/** not at every step, but the count or the memsize of the last
	 * dump is above the first's */
	HD_TREND_OVERALL,
	/** count and memsize the same in the last dump as in the first */
	HD_TREND_FLAT,
	/** neither above, one below */
	HD_TREND_SHRINKS
} hd_trend_verdict;

/** "every-step", "overall", "flat", "shrinks", or NULL. */
HD_API const char *hd_trend_verdict_name(int verdict);

typedef struct hd_trend hd_trend;

/** What the trend keeps of each dump. */
typedef struct hd_trend_dump {
	const char *path;          /**< as given to hd_trend_add (a copy) */
	hd_stats_totals totals;
	hd_dump_origin origin;     /**< as given, zeros when unknown */
} hd_trend_dump;

/** A result row; strings and arrays borrowed from the hd_trend. */
typedef struct hd_trend_row {
	const char *key[HD_STATS_MAX_KEYS];
	size_t key_len[HD_STATS_MAX_KEYS];
	const uint64_t *count;     /**< ndumps values, 0 where absent */
	const uint64_t *memsize;   /**< ndumps values */
	double count_slope;        /**< least squares, per step */
	double memsize_slope;
	int verdict;               /**< an hd_trend_verdict */
} hd_trend_row;

/** Creates a trend of opts->ndumps dumps. @return 0, HD_ENOMEM,
 * HD_EINVAL (fewer than 2 dumps, bad keys, classes without the class
 * key) */
HD_API int hd_trend_new(hd_trend **out, const hd_trend_options *opts,
			hd_error *err);

/** A stats accumulator grouping by the trend's keys, for the next dump:
 * feed it (hd_stats_add or hd_stats_add_store), finish it, pass it to
 * hd_trend_add, free it. @return 0, HD_ENOMEM */
HD_API int hd_trend_stats_new(hd_stats **out, const hd_trend *t,
			      hd_error *err);

/**
 * Adds the next dump, as the finished accumulator st counted it.
 * @param path the dump's name, copied (for hd_trend_dump_at)
 * @param origin its pid and time, or NULL when unknown
 * @return 0, HD_ENOMEM, HD_EINVAL (all ndumps added already, st not
 * finished); st must come from hd_trend_stats_new
 */
HD_API int hd_trend_add(hd_trend *t, hd_stats *st, const char *path,
			const hd_dump_origin *origin, hd_error *err);

/** Computes slopes and verdicts and ranks the rows: by verdict, then by
 * the slope of opts->sort, the other slope, the key. @return 0,
 * HD_ENOMEM, HD_EINVAL (not every dump added) */
HD_API int hd_trend_finish(hd_trend *t, hd_error *err);

/** The number of dumps added. */
HD_API size_t hd_trend_ndumps(const hd_trend *t);
/** Dump k (0-based, in the order added), or NULL. */
HD_API const hd_trend_dump *hd_trend_dump_at(const hd_trend *t, size_t k);
/** The options the trend was made with. */
HD_API const hd_trend_options *hd_trend_options_get(const hd_trend *t);

/** The ranked rows (after finish); none when the class selection picked
 * no group. Valid until hd_trend_free(). */
HD_API const hd_trend_row *hd_trend_rows(const hd_trend *t, size_t *n_out);

/**
 * hd_order_check() of the dumps added, from what was kept of each (their
 * newest generation and origin): fills pairs[0..ndumps-2]. Addresses are
 * not kept, so HD_ORDER_FEW_SHARED is never set and shared is 0.
 */
HD_API void hd_trend_order(hd_order_pair *pairs, const hd_trend *t);

/** Frees the trend. NULL is a no-op. */
HD_API void hd_trend_free(hd_trend *t);

/* ===================================================================== */
/* Leaks                                                                 */
/* ===================================================================== */

/*
 * The leak model of heapdump-leaks(1): the new objects of a diff, as the
 * examined dump holds them, grouped by what holds them. A new object held
 * by exactly one old object belongs to that holder (a cache, a registry);
 * one held by several old objects, or by a root category only, is a
 * suspect by itself. A suspect's growth is the sum of its border objects'
 * retained sets (disjoint: no object counts twice), and suspects are
 * ranked by it (retained memsize, then count, then node id, descending
 * then ascending). Groups under a minimum share of the leak are folded;
 * the first few of the rest are described.
 */

/** Options for hd_leaks_build(); initialise with HD_LEAKS_OPTIONS_INIT. */
typedef struct hd_leaks_options {
	unsigned int version; /**< HD_LEAKS_OPTIONS_VERSION */
	/** 0 or HD_ROOTS_SKIP_WEAK (weak references hold nothing: no
	 * holder, no path through them) */
	unsigned int flags;
	/** fold the groups under this share of the leak (0 to 1; 0 keeps
	 * every group) */
	double min_share;
	/** describe at most this many of the kept groups */
	size_t top;
	/** (version 2) the verdict: a leak under this many bytes (the VM's
	 * own tables left out) is no significant leak */
	uint64_t min_leak;
	/** (version 2) BEFORE, or NULL: with two dumps, a suspect whose
	 * holder is a Hash or Array no longer in AFTER than in BEFORE only
	 * replaced what it held (HD_SUSPECT_CHURN) */
	const hd_store *before;
} hd_leaks_options;

/** The default of hd_leaks_options.min_leak: 2 KiB. */
#define HD_LEAKS_MIN_LEAK 2048
#define HD_LEAKS_OPTIONS_VERSION 2
#define HD_LEAKS_OPTIONS_INIT \
	{ HD_LEAKS_OPTIONS_VERSION, 0, 0.01, 5, HD_LEAKS_MIN_LEAK, NULL }

/* hd_leaks_totals.first_kind: what the verdict names first */
#define HD_LEAKS_FIRST_NONE 0    /**< no significant leak */
#define HD_LEAKS_FIRST_SUSPECT 1 /**< a suspect (first_index its rank) */
#define HD_LEAKS_FIRST_CLUSTER 2 /**< a cluster of several suspects of
				      one shape that together hold more
				      than any one suspect */
#define HD_LEAKS_FIRST_INPLACE 3 /**< an old object grown in place
				      (hd_leaks_inplace): the new objects
				      leak less than it grew, or less than
				      the threshold while the growth in
				      place reaches it */

/** The whole of an hd_leaks. */
typedef struct hd_leaks_totals {
	uint64_t leak_count;     /**< the leak: with LATER the new objects
				      still alive in it, else the new ones */
	uint64_t leak_memsize;
	uint64_t border;         /**< new objects held by old ones or roots */
	size_t groups;           /**< suspects, ranked */
	size_t shown;            /**< the first ones, described */
	size_t more;             /**< kept ones after them, not described */
	size_t folded;           /**< groups under the minimum share (the
				      last ones) */
	uint64_t folded_count;   /**< their retained count and memsize */
	uint64_t folded_memsize;
	/** 1 when a memsize sum (of the diff, the border, a suspect or the
	 * folded groups) stopped at 2^64-1 */
	uint32_t saturated;
	/** Leaked objects that no border object reaches (garbage not yet
	 * collected, or a partial dump): credited to no suspect. */
	uint64_t unreached_count;
	uint64_t unreached_memsize;
	/** Leaked objects that are the VM's own tables (hidden DATA of a
	 * "VM/..." struct, such as 4.0's interned-string table, reallocated
	 * as it grows): reported apart as VM growth, never a suspect. */
	uint64_t vm_count;
	uint64_t vm_memsize;
	/** With LATER: its objects born after AFTER, walked through (neither
	 * leaked nor holders). */
	uint64_t young_count;
	uint64_t young_memsize;
	/** suspects of kind HD_SUSPECT_JOINT among the groups */
	size_t joint;
	/** The verdict: 1 when the leak, less vm_memsize, unreached_memsize
	 * and what the suspects flagged HD_SUSPECT_TRANSIENT or _CHURN hold,
	 * reaches min_leak bytes, else 0 ("no significant leak"). */
	int significant;
	uint64_t passed_memsize;  /**< what those flagged suspects hold */
	uint64_t transient_memsize; /**< of it, HD_SUSPECT_TRANSIENT */
	uint64_t churn_memsize;     /**< of it, HD_SUSPECT_CHURN only */
	/** what suspects flagged HD_SUSPECT_EPHEMERON alone hold (still
	 * part of the leak) */
	uint64_t ephemeron_memsize;
	uint64_t min_leak;       /**< the threshold applied */
	/** What the verdict names first (HD_LEAKS_FIRST_*), its rank among
	 * the suspects or the clusters, and its share of the leak. */
	int first_kind;
	size_t first_index;
	double first_share;
	/** (after hd_leaks_set_growth) objects old in every dump that grew
	 * in place, and that growth summed (hd_growth_inplace_count,
	 * hd_growth_inplace_memsize): memory no new object shows */
	uint64_t inplace_count;
	uint64_t inplace_memsize;
} hd_leaks_totals;

/* hd_leaks_suspect.flags */
/** Held only by what running code holds: a Thread's or Fiber's stack, or
 * a stale pointer on the machine stack (root machine_context). */
#define HD_SUSPECT_TRANSIENT (1u << 0)
/** (two dumps, hd_leaks_options.before) its holder, a Hash or Array, is
 * no longer than in BEFORE: it replaced what it held (a bounded cache). */
#define HD_SUSPECT_CHURN (1u << 1)
/** Held by an ObjectSpace::WeakKeyMap: its values live as long as their
 * keys, which no dump lists, so the map is no culprit; the verdict names
 * another suspect first when there is one (the memory still counts). */
#define HD_SUSPECT_EPHEMERON (1u << 2)

/* hd_leaks_suspect.kind: what holds a suspect's border objects */
#define HD_SUSPECT_HOLDER 0 /**< one old object (holder) */
#define HD_SUSPECT_SHARED 1 /**< each of them by the same several old
				 objects together (holder_list) */
#define HD_SUSPECT_ROOT 2   /**< a root category alone (first) */
#define HD_SUSPECT_JOINT 3  /**< memory that no one group keeps alive but
				 several together do: held jointly by the
				 holders of those groups (holder_list) */

/** A suspect; every member is borrowed from the hd_leaks. */
typedef struct hd_leaks_suspect {
	hd_node_id holder;         /**< the one old holder, or HD_NODE_NONE */
	hd_node_id first;          /**< its first border object */
	uint32_t holders, roots;   /**< without one holder: the old objects
					and root categories holding it */
	uint64_t border_count;     /**< its border objects */
	uint64_t retained_count;   /**< the sum of their retained sets */
	uint64_t retained_memsize;
	/** retained_memsize / totals.leak_memsize (0 when that is 0) */
	double share;
	/* Of described suspects only (rank below totals.shown); 0 or NULL
	 * for the others: */
	uint64_t keepalive_count;  /**< new objects the border objects reach
					through new objects (themselves
					included) */
	uint64_t keepalive_memsize;
	/** the retention path from a GC root to the holder (or to first),
	 * NULL when no root reaches it */
	const hd_root_path *path;
	const hd_nodes *border;    /**< the border objects, ascending */
	hd_stats *classes;         /**< the border objects by class */
	hd_stats *sites;           /**< what they keep alive, by class and
					location */
	/** HD_SUSPECT_*: how it is held (set for every suspect) */
	int kind;
	/** HD_SUSPECT_TRANSIENT, HD_SUSPECT_CHURN: why the verdict passes it
	 * over, or 0 */
	unsigned flags;
	/** The holders (SHARED: the old objects holding each border object;
	 * JOINT: one holder object per group that holds the memory jointly;
	 * HOLDER: the holder; ROOT: empty), ascending, at most 8 listed;
	 * holders counts them all. */
	const hd_nodes *holder_list;
	/** Described suspects of a store with allocation stacks: what the
	 * border objects keep alive (sites' objects) by stack; else NULL. */
	const hd_stack_rows *stacks;
} hd_leaks_suspect;

/** The result; opaque. */
typedef struct hd_leaks hd_leaks;

/**
 * Builds the leak model of a diff: its border (hd_interface_with_flags()
 * of the leak), the suspects, the fold, and a description of the first
 * top kept suspects (a retention path, classes, allocation sites).
 * O(V + E) for the descriptions, plus hd_interface_with()'s cost.
 * @param out receives the result; free it with hd_leaks_free
 * @param s the examined store: LATER if d has one, else AFTER (the
 *        result keeps s and node ids of s: keep it open)
 * @param d the diff of BEFORE, AFTER (and LATER); the result does not
 *        keep it
 * @param opts NULL for HD_LEAKS_OPTIONS_INIT
 * @return 0, HD_ENOMEM, HD_EINVAL (a bad option)
 */
HD_API int hd_leaks_build(hd_leaks **out, const hd_store *s,
			  const hd_diff_result *d,
			  const hd_leaks_options *opts, hd_error *err);

/** Fills out with the totals. */
HD_API void hd_leaks_totals_get(hd_leaks_totals *out, const hd_leaks *l);

/** The suspect of rank i (0 first, below totals.groups), or NULL.
 * Borrowed from l. */
HD_API const hd_leaks_suspect *hd_leaks_suspect_get(const hd_leaks *l,
						    size_t i);

/*
 * Clusters (memlab's idea): the suspects whose retention paths have the
 * same shape, that is the same root category and, hop by hop, the same
 * names of the objects on the way (hd_store_node_name(): "Object",
 * "Array", "Service", "LeakyCache", "Hash") and the same reference names
 * (hd_store_ref_name(), an Array element's index and a Hash value's key as "[*]"), are one
 * cluster: three caches of one class held the same way are one problem. Every suspect
 * (folded ones included) belongs to one cluster; the suspects no root
 * reaches form one cluster of their own, without a path. Clusters are
 * ranked by their summed retained memsize (then count, then the rank of
 * their first suspect); a cluster's first suspect (the highest ranked)
 * is its representative. O(V) for the shapes however deep the paths;
 * the paths of the first top clusters only.
 */

/** A cluster of suspects; every member is borrowed from the hd_leaks. */
typedef struct hd_leaks_cluster {
	size_t suspects;           /**< its suspects */
	/** their ranks (for hd_leaks_suspect_get), ascending: ranks[0] is
	 * the representative */
	const size_t *ranks;
	uint64_t border_count;     /**< summed over its suspects */
	uint64_t retained_count;
	uint64_t retained_memsize;
	/** retained_memsize / totals.leak_memsize (0 when that is 0) */
	double share;
	/** 1 when a root reaches the suspects, 0 for the cluster of those
	 * no root reaches */
	int reached;
	/* Of the first opts->top clusters only, NULL for the others (and
	 * without reached): */
	/** the representative's retention path */
	const hd_root_path *path;
	/** the shape as text, "vm -> Object ::SERVICES -> Array [*] ->
	 * Hash" (names as they are: escape them to print) */
	const char *shape;
} hd_leaks_cluster;

/** The number of clusters (0 when there is no suspect). */
HD_API size_t hd_leaks_cluster_count(const hd_leaks *l);

/** The cluster of rank i (0 first), or NULL. Borrowed from l. */
HD_API const hd_leaks_cluster *hd_leaks_cluster_get(const hd_leaks *l,
						    size_t i);

/**
 * The verdict in one line, the sentence every front end prints first
 * (into buf, NUL-terminated, truncated to size; returns its full length
 * as snprintf does): "no significant leak: ...", "suspect 1 holds 99.5%
 * of the leak (...): Fanout @string_subscribers -> Hash [...] ->
 * Array", or "cluster 1: 400 suspects of one shape hold 99.9% of the
 * leak: vm -> ...". The path's last hops, with reference names when the
 * dump has them. Raw bytes: escape control bytes before printing.
 */
HD_API size_t hd_leaks_verdict_text(char *buf, size_t size,
				    const hd_leaks *l);

/**
 * hd_leaks_verdict_text() for front ends that judged the dumps'
 * process growth too (hd_process_judge; proc NULL or not known: the
 * same sentence). When the process grew outside Ruby objects and what
 * leaked in the Ruby heap is under min_leak, the sentence says where
 * the leak is not ("the leak is not in the Ruby heap: 18 objects, 720 B
 * new in after and still alive in later, under the 2.0 KB threshold",
 * "the growth is not in the Ruby heap: ..." with two dumps) rather than
 * "no significant leak", which under a process that grew by 100 MB
 * reads as no leak at all.
 */
HD_API size_t hd_leaks_verdict_text_process(char *buf, size_t size,
					    const hd_leaks *l,
					    const hd_process_verdict *proc);

/** Frees the result. NULL is a no-op. */
HD_API void hd_leaks_free(hd_leaks *l);

/*
 * Collections that grow at every step of N dumps of one process
 * (memlab's unbound-collection analysis): each Hash and Array of the
 * last dump followed back, dump by dump, to the object at its address
 * of the same type (and generation when both dumps are traced), kept
 * when it is in every dump and its length (a Hash's size, an Array's
 * length) grows at every step. Ranked by growth (last length less
 * first), then by last length. An object compaction moved is not
 * followed. O(N * C log V), C the collections of the last dump.
 */

/** A growing collection; borrowed from its hd_growth. */
typedef struct hd_growing {
	hd_node_id id;            /**< in the last store */
	int type;                 /**< HD_T_HASH, HD_T_ARRAY, or HD_T_DATA
				   *   for a Set of Ruby 4.0 (core: its
				   *   length the members that are objects) */
	uint64_t first, last;     /**< its length in the first and last */
	const uint64_t *lengths;  /**< one per dump, oldest first */
} hd_growing;

/** The result; opaque. */
typedef struct hd_growth hd_growth;

/**
 * Finds the growing collections of stores[0..n) (n >= 2, oldest
 * first). @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_growth_build(hd_growth **out, const hd_store *const *stores,
			   size_t n, hd_error *err);
/** The number of growing collections found. */
HD_API size_t hd_growth_count(const hd_growth *g);
/** The collections of the last dump that were followed back. */
HD_API uint64_t hd_growth_examined(const hd_growth *g);
/** The one of rank i (0 first), or NULL. */
HD_API const hd_growing *hd_growth_get(const hd_growth *g, size_t i);
/** The growing collection that is node id of the last store, or NULL. */
HD_API const hd_growing *hd_growth_find(const hd_growth *g, hd_node_id id);
/** An object in every dump whose memsize grew and never shrank while
 * its length (bytesize, size) grew at every step, or without a length
 * its memsize did: growth in place (a String buffer appended to, a Hash
 * of Integers), which no new object shows. Collections are all followed; other objects from
 * 512 bytes in the last dump. Borrowed from its hd_growth. */
typedef struct hd_grown {
	hd_node_id id;            /**< in the last store */
	int type;                 /**< HD_T_* */
	uint64_t first, last;     /**< its memsize in the first and last */
	const uint64_t *memsizes; /**< one per dump, oldest first */
} hd_grown;
/** The number of objects grown in place. */
HD_API size_t hd_growth_inplace_count(const hd_growth *g);
/** Their growth (last memsize less first), summed; saturates. */
HD_API uint64_t hd_growth_inplace_memsize(const hd_growth *g);
/** The one of rank i (0 the one that grew most), or NULL. */
HD_API const hd_grown *hd_growth_inplace_get(const hd_growth *g, size_t i);
/** Frees the result. NULL is a no-op. */
HD_API void hd_growth_free(hd_growth *g);

/**
 * Gives the verdict of l the growing collections of g (found over the
 * dumps whose last is the store l examines; with two dumps, none is said
 * to grow): the collection nearest to
 * the holder on the path of what the verdict names first, when one
 * grows, is named in hd_leaks_verdict_text with its lengths ("Hash
 * grows at every dump: 10 -> 20 -> 30"), and a verdict of no
 * significant leak says how many collections grow. The growth in place
 * (hd_growth_inplace_*) counts too: when its total reaches min_leak
 * while the new objects do not, or when the object that grew most grew
 * more than what the verdict names first holds (and is not on its
 * path), the verdict names that object first (HD_LEAKS_FIRST_INPLACE,
 * with a path from a root). g is not kept.
 * @return 0, HD_EINVAL (g of more than 64 dumps), HD_ENOMEM
 */
HD_API int hd_leaks_set_growth(hd_leaks *l, const hd_growth *g,
			       hd_error *err);

/**
 * The object grown in place that the verdict weighs (the one of g that
 * grew most, hd_growth_inplace_get(g, 0)), after hd_leaks_set_growth:
 * its node id, its memsize dump by dump into memsizes[0..n) (n at most
 * hd_growth_dumps), and its path from a root (NULL when no root reaches
 * it). @return the number of dumps of its memsizes (memsizes[] holds
 * the first n of them), or 0 when there is none (nothing grew in place,
 * or hd_leaks_set_growth was not called)
 */
HD_API size_t hd_leaks_inplace(const hd_leaks *l, hd_node_id *id,
			    uint64_t *memsizes, size_t n,
			    const hd_root_path **path);

/** The dumps g was found over. */
HD_API size_t hd_growth_dumps(const hd_growth *g);

/*
 * The leak session: the whole hunt of heapdump-leaks(1), wired once for
 * every front end (leaks, report, serve, the gem), with the same
 * defaults. Over 2 to HD_LEAK_SESSION_MAX_DUMPS stores of one process,
 * oldest first (BEFORE AFTER [STEP...] [LATER]):
 *   1. hd_leak_session_new: the order check (hd_order_check of every
 *      pair, with the origins given), so that a front end can refuse
 *      dumps in the wrong order before anything costly;
 *   2. hd_leak_session_run: the diff of BEFORE, AFTER and (with three
 *      dumps or more) LATER, the leak model on the examined store
 *      (LATER, else AFTER), the collections that grow at every step
 *      (three dumps or more) given to the verdict, the totals, and the
 *      caveats that qualify the verdict (HD_CAVEAT_*).
 * The stores are borrowed: keep them open while the session lives.
 */

/** The most dumps a session takes. */
#define HD_LEAK_SESSION_MAX_DUMPS 16

/** Options for hd_leak_session_new(); initialise with
 * HD_LEAK_SESSION_OPTIONS_INIT (leaks' defaults: top 5, min_share 1%,
 * min_leak 2 KiB, the diff's default rules). */
typedef struct hd_leak_session_options {
	unsigned int version;  /**< HD_LEAK_SESSION_OPTIONS_VERSION */
	/** 0 or HD_ROOTS_SKIP_WEAK, as hd_leaks_options.flags */
	unsigned int leaks_flags;
	/** the diff's options (HD_DIFF_NO_GENERATION, strict reading) */
	hd_diff_options diff;
	double min_share;      /**< as hd_leaks_options.min_share */
	size_t top;            /**< as hd_leaks_options.top */
	uint64_t min_leak;     /**< as hd_leaks_options.min_leak */
	/** n origins (the gem's sidecars: pid and time), or NULL */
	const hd_dump_origin *origins;
} hd_leak_session_options;

#define HD_LEAK_SESSION_OPTIONS_VERSION 1
#define HD_LEAK_SESSION_OPTIONS_INIT                                     \
	{ HD_LEAK_SESSION_OPTIONS_VERSION, 0, HD_DIFF_OPTIONS_INIT, 0.01, 5, \
	  HD_LEAKS_MIN_LEAK, NULL }

/* hd_leak_session_caveats(): what qualifies the verdict */
#define HD_CAVEAT_ORDER (1u << 0)         /**< a pair seems reversed (run
					       anyway: forced) */
#define HD_CAVEAT_OTHER_PROCESS (1u << 1) /**< two pids, by the origins */
#define HD_CAVEAT_FEW_SHARED (1u << 2)    /**< almost no address shared */
#define HD_CAVEAT_TWO_DUMPS (1u << 3)     /**< growth, not yet a leak */
#define HD_CAVEAT_NOTHING_NEW (1u << 4)   /**< no object new in AFTER */
#define HD_CAVEAT_NOTHING_LEFT (1u << 5)  /**< none of them alive in LATER */
#define HD_CAVEAT_NO_SUSPECTS (1u << 6)   /**< nothing new held by an old
					       object or a root */
#define HD_CAVEAT_UNCERTAIN (1u << 7)     /**< objects judged old on an
					       uncertain match */
#define HD_CAVEAT_OBJECT_ID_SKIPPED (1u << 8) /**< object ids not compared */
#define HD_CAVEAT_SATURATED (1u << 9)     /**< a memsize sum stopped at
					       2^64-1 */
#define HD_CAVEAT_FOLDED (1u << 10)       /**< groups under min_share folded */
#define HD_CAVEAT_SHARES (1u << 11)       /**< part of the leak is held by
					       no single suspect (VM tables,
					       unreached, joint) or passed
					       over by the verdict */
#define HD_CAVEAT_TRACE_LOST (1u << 12) /**< traced dumps, but objects
					       without a generation appeared
					       (tracing stopped, or lost by
					       compaction: Ruby 3.3) */
#define HD_CAVEAT_COMPACTED (1u << 13) /**< untraced dumps between which
					      a compaction ran (sidecars) */
#define HD_CAVEAT__COUNT 14

/** The session; opaque. */
typedef struct hd_leak_session hd_leak_session;

/**
 * Opens a session over stores[0..n) and checks their order.
 * @param opts NULL for HD_LEAK_SESSION_OPTIONS_INIT
 * @return 0, HD_ENOMEM, HD_EINVAL (n out of 2..16, a bad option)
 */
HD_API int hd_leak_session_new(hd_leak_session **out,
			       hd_store *const *stores, size_t n,
			       const hd_leak_session_options *opts,
			       hd_error *err);

/** The n - 1 pairs of the order check; *n_out receives n - 1. */
HD_API const hd_order_pair *hd_leak_session_order(const hd_leak_session *ls,
						  size_t *n_out);

/**
 * Diffs, builds the leak model and the growth, and judges the caveats.
 * O(V + E) of the stores, as hd_diff, hd_leaks_build and
 * hd_growth_build. A second call is a no-op.
 * @return 0, HD_ENOMEM, HD_EINVAL, HD_EIO, HD_EPARSE (as hd_diff)
 */
HD_API int hd_leak_session_run(hd_leak_session *ls, hd_error *err);

/** The number of dumps. */
HD_API size_t hd_leak_session_ndumps(const hd_leak_session *ls);
/** The index of the examined store: n - 1 with LATER, else 1. */
HD_API size_t hd_leak_session_at(const hd_leak_session *ls);
/** The examined store (whose node ids the leak model holds). */
HD_API const hd_store *hd_leak_session_store(const hd_leak_session *ls);
/** After run: the diff, the leak model, the growth (NULL with two
 * dumps); borrowed from the session. */
HD_API const hd_diff_result *hd_leak_session_diff(const hd_leak_session *ls);
HD_API const hd_leaks *hd_leak_session_leaks(const hd_leak_session *ls);
HD_API const hd_growth *hd_leak_session_growth(const hd_leak_session *ls);
/** After run: the totals of the leak model. */
HD_API const hd_leaks_totals *hd_leak_session_totals(
	const hd_leak_session *ls);
/** The options the session was opened with (min_share, top...). */
HD_API const hd_leak_session_options *hd_leak_session_options_get(
	const hd_leak_session *ls);
/** After run: the HD_CAVEAT_ bits that apply. */
HD_API unsigned int hd_leak_session_caveats(const hd_leak_session *ls);

/** The name of one HD_CAVEAT_ bit ("two-dumps", "uncertain"...), NULL
 * for anything else. The names are those of heapdump-json(5). */
HD_API const char *hd_caveat_name(unsigned int caveat);
/** 1 for a caveat that may make the verdict wrong (a warning), 0 for
 * one that only qualifies it. */
HD_API int hd_caveat_is_warning(unsigned int caveat);

/**
 * One caveat of the session in words (into buf, NUL-terminated,
 * truncated to size; returns the full length as snprintf does, 0 when
 * the caveat does not apply). Dumps are named by their position
 * ("dumps 1 and 2"). Raw text: escape it to print.
 */
HD_API size_t hd_leak_session_caveat_text(char *buf, size_t size,
					  const hd_leak_session *ls,
					  unsigned int caveat);

/** Frees the session (not the stores). NULL is a no-op. */
HD_API void hd_leak_session_free(hd_leak_session *ls);

/*
 * The one JSON schema of the leak model (heapdump-json(5)), written by
 * leaks -f json, serve's /api/leaks and the report's data alike. Each
 * writer writes the fields of one object, without its braces, forward
 * only: the front end opens the object, calls the writer, adds its own
 * fields (a path, classes, sites) and closes it.
 */

/** Also write the deprecated names (held_by_old, held_by_roots, a
 * path's objects) */
#define HD_LEAK_JSON_ALIASES (1u << 0)

/** Options of the leak JSON writers; initialise with
 * HD_LEAK_JSON_OPTIONS_INIT. */
typedef struct hd_leak_json_options {
	unsigned int version; /**< HD_LEAK_JSON_OPTIONS_VERSION */
	unsigned int flags;   /**< HD_LEAK_JSON_* */
	/** NULL, or writes more fields of every node object written, each
	 * starting with a comma (serve: its label and retained size) */
	void (*node_extra)(FILE *f, hd_node_id v, void *ctx);
	void *ctx;
} hd_leak_json_options;

#define HD_LEAK_JSON_OPTIONS_VERSION 1
#define HD_LEAK_JSON_OPTIONS_INIT                                        \
	{ HD_LEAK_JSON_OPTIONS_VERSION, HD_LEAK_JSON_ALIASES, NULL, NULL }

/** s[0, n) as a JSON string (quoted; control bytes escaped). */
HD_API void hd_json_write_string(FILE *f, const char *s, size_t n);

/** The fields of a node: address, type, class, memsize, [file, line,
 * method], and with next not HD_NODE_NONE the name of the reference to
 * next [name, inferred]. */
HD_API void hd_node_json_fields(FILE *f, const hd_store *s, hd_node_id v,
				hd_node_id next);

/** "holder", "shared", "root" or "joint" (HD_SUSPECT_*). */
HD_API const char *hd_suspect_kind_name(int kind);

/** The fields of suspect i of l (examined store s): rank, holder, kind,
 * holder_count, root_count, transient, churn, ephemeron, holders,
 * first_border, border_count, retained_count, retained_memsize, share,
 * keepalive_count, keepalive_memsize. */
HD_API void hd_leaks_suspect_json_fields(FILE *f, const hd_store *s,
					 const hd_leaks *l, size_t i,
					 const hd_leak_json_options *o);

/** The allocation stacks of what suspect i of l keeps alive
 * (hd_leaks_suspect.stacks) as hd_stack_rows_json's object, its first
 * top rows (0: all); null for a suspect without them (a store without
 * allocation stacks, a suspect not described). */
HD_API void hd_leaks_suspect_stacks_json(FILE *f, const hd_store *s,
					 const hd_leaks *l, size_t i,
					 size_t top);

/** The number of stack rows each suspect's "stacks" has in
 * hd_leak_session_write_json (leaks -f json: --sites, 5 by default). */
#define HD_LEAK_JSON_STACKS 5

/** The fields of cluster i of l: rank, suspects, suspect_ranks,
 * members, border_count, retained_count, retained_memsize, share,
 * shape. */
HD_API void hd_leaks_cluster_json_fields(FILE *f, const hd_store *s,
					 const hd_leaks *l, size_t i,
					 const hd_leak_json_options *o);

/** The fields of the leak's totals (hd_leaks_totals): leak_count,
 * leak_memsize, border, groups, shown, more, folded, folded_count,
 * folded_memsize, young_count, young_memsize, vm_count, vm_memsize,
 * unreached_count, unreached_memsize, joint, passed_memsize,
 * ephemeron_memsize, saturated. */
HD_API void hd_leaks_totals_json_fields(FILE *f, const hd_leaks *l);

/** The fields of the verdict: leak, min_leak, text
 * (hd_leaks_verdict_text_process with proc, which may be NULL) and first
 * (null, or kind, index, rank, share, path_text, and for a cluster
 * suspects and shape); s is the examined store. */
HD_API void hd_leaks_verdict_json_fields(FILE *f, const hd_store *s,
					 const hd_leaks *l,
					 const hd_process_verdict *proc);

/** A retention path as an object: root, root_name (when the root
 * category names its first object), passed_over (hd_path_via_name of
 * each bit, when any), hops (a node each, with the name of its
 * reference to the next), text (hd_store_hop_text of each hop), and
 * under HD_LEAK_JSON_ALIASES objects (the hops, deprecated). */
HD_API void hd_path_json(FILE *f, const hd_store *s, const hd_root_path *p,
			 const hd_leak_json_options *o);

/** The fields of hd_path_json's object without its braces, for a front
 * end that adds its own (serve: the runs it folds, the note); a root
 * the store does not know is null. */
HD_API void hd_path_json_fields(FILE *f, const hd_store *s,
				const hd_root_path *p,
				const hd_leak_json_options *o);

/** The session's caveats as an array of {name, warning, text}. */
HD_API void hd_leak_session_caveats_json(FILE *f, const hd_leak_session *ls);

/** The whole leak as one object: verdict, totals, caveats, suspects
 * (the ones described, each with its path), clusters_total and clusters
 * (the first top, each with its path): the report's embedded data and
 * the gem's Leaks#as_json. proc may be NULL. */
HD_API void hd_leak_session_write_json(FILE *f, const hd_leak_session *ls,
				       const hd_process_verdict *proc,
				       const hd_leak_json_options *o);

/*
 * The verdict kept (issue 40): the verdict document of a session, kept
 * in a small file keyed by the dumps' identities, the options, the
 * order check and the process's judgement, and read back while they
 * are the same (man 5 heapdump-store, KEPT VERDICT).
 */

/** The verdict document of a run session, {"verdict":{...},"totals":
 * {...},"caveats":[...]} (heapdump-json(5)), into *out (malloc'd,
 * NUL-terminated; free() it), its length into *len. proc may be NULL.
 * @return 0, HD_EINVAL (the session has not run), HD_ENOMEM */
HD_API int hd_leak_verdict_json(char **out, size_t *len,
				const hd_leak_session *ls,
				const hd_process_verdict *proc, hd_error *err);

/** Where the verdict of the examined store store_path is kept:
 * STORE.verdict when that may be ours, else a file of the cache
 * directory. @return 0, HD_ELIMIT, HD_EINVAL (no place) */
HD_API int hd_leak_keep_path(char *buf, size_t size, const char *store_path,
			     hd_error *err);

/** hd_leak_keep_path(), or with beside 0 always the cache directory's
 * file (what is kept for a dump, never written beside it).
 * @return as hd_leak_keep_path */
HD_API int hd_leak_keep_place(char *buf, size_t size, const char *store_path,
			      int beside, hd_error *err);

/** Reads the kept verdict at path for the session ls (new; run or not)
 * and proc: 1 and the document in *json (malloc'd, NUL-terminated) and
 * *len; 0 when there is none; -1 when it cannot be used, why saying so
 * ("stale (...)", "damaged (...)"). Never an error: the caller
 * computes the verdict instead. */
HD_API int hd_leak_keep_read(char **json, size_t *len, char *why,
			     size_t wsize, const char *path,
			     const hd_leak_session *ls,
			     const hd_process_verdict *proc);

/** Keeps json (hd_leak_verdict_json's) at path for ls and proc:
 * atomically, mode 0600, never through a link.
 * @return 0, HD_EIO, HD_ENOMEM, HD_ELIMIT, HD_EINVAL */
HD_API int hd_leak_keep_write(const char *path, const hd_leak_session *ls,
			      const hd_process_verdict *proc,
			      const char *json, size_t len, hd_error *err);

/** hd_leak_keep_read() for a document that depends on more than the
 * session: what (NULL: nothing more; leaks: its format, options and the
 * names it prints) is part of the key, a file kept with another what is
 * stale. The document may be any bytes (leaks keeps its whole output).
 * path as hd_leak_keep_path gives it for a name of the caller's. */
HD_API int hd_leak_keep_read_what(char **json, size_t *len, char *why,
				  size_t wsize, const char *path,
				  const hd_leak_session *ls,
				  const hd_process_verdict *proc,
				  const char *what);

/** hd_leak_keep_write() with what in the key (hd_leak_keep_read_what).
 * @return as hd_leak_keep_write */
HD_API int hd_leak_keep_write_what(const char *path,
				   const hd_leak_session *ls,
				   const hd_process_verdict *proc,
				   const char *what, const char *json,
				   size_t len, hd_error *err);

/* ===================================================================== */
/* Budgets: the CI gate                                                  */
/* ===================================================================== */

/*
 * Budgets are expressions that fail a build when they hold: "leak.bytes >
 * 1MB", "leak.objects>1000", "suspect.share>50%",
 * "growth.class[String].bytes>100KB", "growth.site[app/cache.rb:12].objects
 * > 0", "leak.verdict=leak", "trend.verdict=growing" (the grammar:
 * heapdump-leaks(1), BUDGETS). Parsed once (hd_budget_add, or a budget
 * file's text with hd_budget_add_text), then evaluated against what
 * leaks, diff or trend found; each budget's result says whether it was
 * exceeded, what was measured, by how much and, when exceeded, the
 * sentence that explains it (the leak's verdict, naming suspect 1's path
 * and share; the trend's first group). Sizes are in powers of 1000 as
 * every output prints them ("KB"), "KiB" in powers of 1024.
 */

/** The sources a budget's metric applies to (hd_budget_check). */
#define HD_BUDGET_LEAKS 1u /**< leaks and report: the leak model */
#define HD_BUDGET_DIFF 2u  /**< diff: the new objects */
#define HD_BUDGET_TREND 4u /**< trend: growth over N dumps */

/** A list of budgets; opaque. */
typedef struct hd_budget hd_budget;

/** An empty list. @return 0, HD_ENOMEM */
HD_API int hd_budget_new(hd_budget **out, hd_error *err);
/** Parses one expression (len bytes, no NUL or newline) and appends it.
 * @return 0, HD_ENOMEM, HD_EINVAL (err names what and the column) */
HD_API int hd_budget_add(hd_budget *b, const char *expr, size_t len,
			 hd_error *err);
/** Appends the budgets of a budget file: one expression a line, blank
 * lines and comments ('#' at a line's start or after a blank, to the
 * line's end) ignored. @return 0, HD_ENOMEM, HD_EINVAL (err->line the
 * line) */
HD_API int hd_budget_add_text(hd_budget *b, const char *text, size_t len,
			      hd_error *err);
/** The number of budgets. */
HD_API size_t hd_budget_count(const hd_budget *b);
/** Budget i as given, blanks removed ("leak.bytes>1MB"), or NULL. */
HD_API const char *hd_budget_text(const hd_budget *b, size_t i);
/** 0 when every budget applies to source (an HD_BUDGET_ value), else
 * HD_EINVAL naming the first that does not (trend.verdict for leaks). */
HD_API int hd_budget_check(const hd_budget *b, unsigned source,
			   hd_error *err);
/** Frees the list. NULL is a no-op. */
HD_API void hd_budget_free(hd_budget *b);

/** One budget evaluated; borrowed from its hd_budget_report. */
typedef struct hd_budget_result {
	const char *text;    /**< the budget (hd_budget_text) */
	int exceeded;        /**< 1 when its expression holds: the gate fails */
	/** what was measured: bytes, objects, a share (0 to 1), or a
	 * verdict's rank (leak.verdict: 0 none, 1 leak; trend.verdict: an
	 * hd_trend_verdict) */
	double value;
	double limit;        /**< the budget's value, in the same unit */
	double over;         /**< exceeded by this much (0 for = and !=) */
	/** "budget leak.bytes>1MB exceeded: measured 3.4 MB, 2.4 MB over the
	 * limit 1.0 MB; suspect 1 holds 99.5% of the leak (...): Fanout
	 * @subs -> Hash": one line, raw bytes (escape control bytes to
	 * print) */
	char *message;
} hd_budget_result;

/** Budgets evaluated; opaque. */
typedef struct hd_budget_report hd_budget_report;

/**
 * Evaluates b against a leak model: leak.bytes and leak.objects are what
 * the verdict weighs (the leak less the VM's tables, the unreached and
 * the suspects it passes over), suspect.* what the verdict names first
 * (a suspect or a cluster; 0 without a significant leak), growth.* the
 * leak's objects (d's, as s has them) of a class or site.
 * @param s the store l examines (LATER with three dumps, else AFTER)
 * @param d the diff l was built from
 * @return 0, HD_ENOMEM, HD_EINVAL (a budget that does not apply)
 */
HD_API int hd_budget_eval_leaks(hd_budget_report **out, const hd_budget *b,
				const hd_leaks *l, const hd_store *s,
				const hd_diff_result *d, hd_error *err);
/** Evaluates b against a diff: leak.* the new objects (with LATER those
 * still alive, as LATER has them), growth.* those of a class or site.
 * @param s LATER when d has it, else AFTER
 * @return 0, HD_ENOMEM, HD_EINVAL */
HD_API int hd_budget_eval_diff(hd_budget_report **out, const hd_budget *b,
			       const hd_store *s, const hd_diff_result *d,
			       hd_error *err);
/** Evaluates b against a finished trend: trend.verdict the first
 * (worst) row's verdict, growth.class[...] a class's last dump less its
 * first (the trend grouped by class). @return 0, HD_ENOMEM, HD_EINVAL */
HD_API int hd_budget_eval_trend(hd_budget_report **out, const hd_budget *b,
				const hd_trend *t, hd_error *err);
/** The budgets evaluated, and how many were exceeded. */
HD_API size_t hd_budget_report_count(const hd_budget_report *r);
HD_API size_t hd_budget_report_exceeded(const hd_budget_report *r);
/** Budget i's result, or NULL. */
HD_API const hd_budget_result *hd_budget_report_get(
	const hd_budget_report *r, size_t i);
/** Frees the report. NULL is a no-op. */
HD_API void hd_budget_report_free(hd_budget_report *r);

/* ===================================================================== */
/* Transforms                                                            */
/* ===================================================================== */

/** hd_replace_options flags. */
#define HD_REPLACE_ADD_REF (1u << 0) /**< add the class to references */

/** What hd_replace_class() did, filled when it returns 0. */
typedef struct hd_replace_stats {
	uint64_t records;    /**< lines written */
	uint64_t objects;    /**< of which heap objects */
	uint64_t rewritten;  /**< class pointers replaced by a name */
	uint64_t unresolved; /**< class pointers to no class of the dump */
	uint64_t named;      /**< classes already given as names */
	uint64_t escaped;    /**< invalid lines written back as valid JSON */
	uint64_t salvaged;   /**< records rebuilt from salvaged fields */
	hd_read_stats read;  /**< the reader's counts (second pass) */
} hd_replace_stats;

/** Options for hd_replace_class(); initialise with
 * HD_REPLACE_OPTIONS_INIT. */
typedef struct hd_replace_options {
	unsigned int version;    /**< HD_REPLACE_OPTIONS_VERSION */
	unsigned int flags;      /**< HD_REPLACE_ bits */
	hd_read_options read;    /**< how to read the dump */
	hd_progress_cb progress; /**< bytes of both passes, or NULL */
	void *progress_payload;
	hd_replace_stats *stats; /**< receives the counts, or NULL */
} hd_replace_options;

#define HD_REPLACE_OPTIONS_VERSION 1
#define HD_REPLACE_OPTIONS_INIT                                         \
	{ HD_REPLACE_OPTIONS_VERSION, 0, HD_READ_OPTIONS_INIT, NULL, NULL, \
	  NULL }

/**
 * Rewrites a dump with class names instead of class pointers, as plain
 * NDJSON. Every object whose "class" points at a CLASS, MODULE or ICLASS
 * record of the dump gets that class's display name (as in `stats --by
 * class`) in "class" and the pointer, as written, in a new
 * "class_address" member right after it; every other byte of the line is
 * kept. Pointers to nothing in the dump are left as they are. Lines that
 * were invalid JSON come out valid (see hd_json_repair()); records that
 * could only be salvaged are written with their salvaged fields; lines
 * that yielded no record are dropped (reported through
 * opts->read.problem).
 *
 * The input is read twice (a standard input is first copied to a
 * temporary file in $TMPDIR). A file output is written to a temporary
 * file in its directory and renamed over out_path only on success, so
 * nothing is left behind on failure. It gets the mode of the file it
 * replaces, or else the input's (0600 for standard input). An output
 * that exists and is not a regular file (a device, a pipe) is written
 * directly.
 *
 * @param in_path the dump, or "-" for standard input; may be gzipped
 * @param out_path the output file, "-" for standard output, or NULL to
 *        replace in_path itself once the rewrite has succeeded (not for
 *        standard input or gzipped input); naming the input file itself
 *        is an error
 * @param opts NULL for defaults
 * @return 0, HD_EIO, HD_EPARSE (strict mode), HD_ENOMEM, HD_ELIMIT,
 *         HD_EINVAL (bad options, or an output that is the input)
 */
HD_API int hd_replace_class(const char *in_path, const char *out_path,
			    const hd_replace_options *opts, hd_error *err);

/**
 * Writes the text of one dump record as one line of valid JSON. Ruby
 * writes some strings unescaped, so a record the reader accepted may
 * hold raw quotes, raw newlines (a joined record), control characters,
 * invalid escapes such as "\u-061" or lone surrogates. Here a quote
 * inside a member's string that does not end it (by the reader's rule:
 * the closing quote is followed by `, "key":` or the final `}`) becomes
 * \", a control character \u00XX (or \n, \t...), the backslash of an
 * invalid escape \\; a newline between values becomes a space, a bare
 * value that is not a JSON number or literal becomes a string, and the
 * heap_dump gem's "[" or "," framing is dropped. Valid JSON is copied
 * unchanged, byte for byte. Bytes of 0x80 and above are copied as they
 * are, valid UTF-8 or not.
 *
 * Like snprintf(), at most size bytes are stored (no NUL is added) and
 * *out_len receives the full length: when it exceeds size, call again
 * with a larger buffer. 6 * len + 8 bytes are always enough.
 *
 * @param dst the output buffer (may be NULL when size is 0)
 * @param out_len receives the length of the repaired text
 * @param src the record's text, without its line end
 * @return 0, HD_EPARSE (not one JSON object this repair can follow),
 *         HD_EINVAL
 */
HD_API int hd_json_repair(char *dst, size_t size, size_t *out_len,
			  const char *src, size_t len, hd_error *err);

/* ===================================================================== */
/* Export                                                                */
/* ===================================================================== */

/**
 * hd_export_options flag: fold the objects that are the VM's plumbing
 * rather than the program's data into the references that pass through
 * them. Folded: every IMEMO; every ARRAY and HASH without a class (the
 * hidden ones: instance variable tables, frozen literal arrays...); the
 * HASH held by an instance of a class named Set (set.rb's @hash, Ruby
 * 3.4 and older); the DATA of class RubyVM::Env or struct VM/env (block
 * environments before Ruby 2.3). Arrays and hashes that have a class
 * (Array, Hash, their subclasses) are kept. A kept object A holding a
 * folded F that holds a kept B gets the edge A -> B, through chains and
 * cycles of folded objects of any length. Folded objects are never
 * emitted, even when selected.
 */
#define HD_EXPORT_COLLAPSE (1u << 0)

/** The default node limit: about what Gephi can still lay out. */
#define HD_EXPORT_MAX_NODES 50000

/** Options for hd_export_new(); initialise with HD_EXPORT_OPTIONS_INIT. */
typedef struct hd_export_options {
	unsigned int version; /**< HD_EXPORT_OPTIONS_VERSION */
	unsigned int flags;   /**< HD_EXPORT_ bits */
	/** Also the objects up to depth references away from the set
	 * (breadth-first; with HD_EXPORT_COLLAPSE a path through folded
	 * objects is one reference). 0: the set alone. */
	uint32_t depth;
	/** Refuse a graph of more nodes (HD_ELIMIT); 0: no limit. */
	uint64_t max_nodes;
} hd_export_options;

#define HD_EXPORT_OPTIONS_VERSION 1
#define HD_EXPORT_OPTIONS_INIT \
	{ HD_EXPORT_OPTIONS_VERSION, 0, 0, HD_EXPORT_MAX_NODES }

/**
 * A part of the heap as a graph, to write as GML or DOT: its nodes are
 * the chosen objects, numbered 0..n-1 in ascending node id order, then
 * the root categories that hold at least one of them (directly, or
 * through folded objects); its edges are the references between nodes
 * (each at most once per pair, in dump order), references to objects
 * outside the graph left out. Memory: about 8 bytes per store node.
 * Edges are computed while writing, never stored.
 */
typedef struct hd_export hd_export;

/**
 * Chooses the nodes of a graph of s, which must outlive it.
 * @param set the objects (see hd_select_nodes), grown by opts->depth;
 *        NULL for every object of the store
 * @param opts NULL for HD_EXPORT_OPTIONS_INIT
 * @return 0, HD_ELIMIT (more nodes than opts->max_nodes; err->msg says
 *         how many), HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_export_new(hd_export **out, const hd_store *s,
			 const hd_nodes *set, const hd_export_options *opts,
			 hd_error *err);

/**
 * What hd_export_new() computes over the whole store for every graph
 * (the objects HD_EXPORT_COLLAPSE folds, and what each root category
 * holds through them), computed once for many small graphs of one store:
 * a graph made from it (hd_export_new_from) costs what it touches, not
 * the store's size. Memory: a bit per store node and a few words per
 * object the root categories hold. Read only once made: graphs may be
 * made from one base on several threads at once.
 */
typedef struct hd_export_base hd_export_base;

/**
 * Makes the base of the graphs of s (which must outlive it) with the
 * HD_EXPORT_ flags (hd_export_options.flags) they will have.
 * @return 0, HD_ENOMEM
 */
HD_API int hd_export_base_new(hd_export_base **out, const hd_store *s,
			      unsigned flags, hd_error *err);

/**
 * hd_export_new() of b's store from b, which must outlive the graph;
 * the same graph, in time and memory about what the graph touches
 * (the set, its references, the folded objects between them).
 * @return as hd_export_new(); HD_EINVAL when opts->flags are not b's
 */
HD_API int hd_export_new_from(hd_export **out, const hd_export_base *b,
			      const hd_nodes *set,
			      const hd_export_options *opts, hd_error *err);

/** Frees a base. NULL is a no-op. */
HD_API void hd_export_base_free(hd_export_base *b);

/** The number of nodes: objects plus root categories. */
HD_API uint64_t hd_export_node_count(const hd_export *x);

/** The number of object nodes. */
HD_API uint64_t hd_export_object_count(const hd_export *x);

/** 1 if HD_EXPORT_COLLAPSE folds node id away, else 0. */
HD_API int hd_export_folded(const hd_export *x, hd_node_id id);

/**
 * Writes the graph as GML (integer ids; strings ASCII, with '"' as
 * &quot;, '&' as &amp; and other characters as &#N;, as networkx's
 * read_gml wants; labels unique). Objects have label ("name address",
 * the name of hd_store_node_name()), name, address, class (the class
 * name `stats --by class` groups by: "Class" for a class), type,
 * memsize and, when traced, generation, file, line, method; a root
 * category has label ("ROOT name"), type "ROOT" and root. An edge whose
 * reference has a name (hd_store_ref_name_at) has label, the names on
 * its way joined by spaces (through folded objects: the last 16, after
 * "..."), and "inferred 1" when one was inferred. One node or edge a
 * line.
 * @return 0, HD_ENOMEM, or the sink's non-zero value
 */
HD_API int hd_export_write_gml(hd_export *x, hd_write_cb w, void *payload,
			       hd_error *err);

/**
 * Writes the graph as a Graphviz digraph: objects are boxes labelled
 * with their name (hd_store_node_name) and address, filled with the
 * colour of their type (man 1 heapdump-to-dot), root categories red
 * double octagons; an edge with a name is labelled as in GML (a control
 * character as the text \xNN; grey when inferred). The text is valid
 * UTF-8 whatever the dump holds.
 * @return 0, HD_ENOMEM, or the sink's non-zero value
 */
HD_API int hd_export_write_dot(hd_export *x, hd_write_cb w, void *payload,
			       hd_error *err);

/** Frees a graph. NULL is a no-op. */
HD_API void hd_export_free(hd_export *x);

/* ===================================================================== */
/* Duplicate strings and waste (heapdump strings, heapdump waste)         */
/* ===================================================================== */

/** Row groupings of hd_strings_build(). */
#define HD_STRINGS_BY_VALUE 0  /**< one row per value */
#define HD_STRINGS_BY_SITE 1   /**< per value and allocation site */
#define HD_STRINGS_BY_HOLDER 2 /**< per value and holder (its class) */

/** hd_strings_options.flags: keep the tracer and dumper objects. */
#define HD_STRINGS_ALL (1u << 0)

typedef struct hd_strings_options {
	unsigned int version;   /**< HD_STRINGS_OPTIONS_VERSION */
	unsigned int flags;     /**< HD_STRINGS_ALL */
	int by;                 /**< HD_STRINGS_BY_ */
	uint64_t min_count;     /**< rows of values with fewer copies are
				     left out; 0 counts as 2 */
} hd_strings_options;

#define HD_STRINGS_OPTIONS_VERSION 1
#define HD_STRINGS_OPTIONS_INIT \
	{ HD_STRINGS_OPTIONS_VERSION, 0, HD_STRINGS_BY_VALUE, 2 }

/**
 * The STRING objects of a store grouped by content: a group is the
 * value (JSON-unescaped), the bytesize and the encoding (empty for
 * binary). A string without a value is "" when its bytesize is 0 (3.2+
 * writes no value for empty strings) and in no group otherwise (content
 * that is not 7-bit ASCII, or an ASCII-incompatible encoding); a shared
 * string (no content of its own) is in no group. A value shorter than
 * its bytesize is a prefix: its group is marked incomplete and only
 * strings of the same bytesize join it. The copy first in dump order is
 * kept; every later copy is waste.
 */
typedef struct hd_strings hd_strings;

typedef struct hd_strings_totals {
	uint64_t strings;        /**< STRING objects considered */
	uint64_t memsize;        /**< their memsize */
	uint64_t shared, shared_memsize;
	uint64_t no_value, no_value_memsize; /**< in no group, not shared */
	uint64_t values;         /**< groups */
	uint64_t repeated;       /**< groups of 2 copies or more */
	uint64_t copies;         /**< the strings of those groups */
	uint64_t wasted_memsize; /**< their memsize but the kept copies' */
	uint64_t wasted_bytesize;/**< their bytesize but the kept copies' */
	uint64_t incomplete;     /**< strings whose value is a prefix */
	uint64_t excluded;       /**< tracer and dumper strings left out */
	uint32_t saturated;      /**< 1 when a memsize sum stopped at 2^64-1 */
} hd_strings_totals;

/** A row; strings are borrowed from the hd_strings. */
typedef struct hd_strings_row {
	const char *value;       /**< the bytes of the value (may hold NUL) */
	size_t value_len;
	uint64_t bytesize;
	const char *encoding;    /**< "" for binary (no encoding) */
	int complete;            /**< 0: value is a prefix of bytesize bytes */
	/** HD_STRINGS_BY_SITE: a copy of the row (its site), HD_NODE_NONE
	 * for the untraced copies; BY_HOLDER: the holder's name as
	 * hd_store_node_name() writes it, NULL for copies nothing holds */
	hd_node_id node;
	const char *holder;
	uint64_t count;          /**< copies in the row */
	uint64_t group_count;    /**< copies of the value in all */
	uint64_t memsize;
	uint64_t wasted_memsize; /**< the row's copies but the kept one */
	uint64_t wasted_bytesize;
	uint64_t frozen, fstring;/**< copies frozen, in the fstring table */
} hd_strings_row;

/**
 * Groups the strings of set (NULL: every node; nodes of other types
 * are ignored) of s, reading their records from the source dump
 * (hd_store_records(), so the dump must be at hand).
 * @param ro read options of the source dump (NULL: the defaults)
 * @return 0, HD_EINVAL, HD_ENOMEM, the codes of hd_store_records()
 */
HD_API int hd_strings_build(hd_strings **out, const hd_store *s,
			    const hd_nodes *set,
			    const hd_strings_options *opts,
			    const hd_read_options *ro, hd_error *err);
/** Totals. */
HD_API void hd_strings_totals_get(hd_strings_totals *out,
				  const hd_strings *st);
/**
 * The rows of the values with min_count copies or more, by wasted
 * memsize, then count, then value, bytesize, encoding and key. Valid
 * until hd_strings_free(). @param n_out receives the number of rows
 */
HD_API const hd_strings_row *hd_strings_rows(const hd_strings *st,
					     size_t *n_out);
/** Frees it. NULL is a no-op. */
HD_API void hd_strings_free(hd_strings *st);

/** Waste categories (hd_waste_row.category). */
typedef enum hd_waste_kind {
	HD_WASTE_EMPTY_ARRAYS = 0, /**< ARRAY length 0: memsize */
	HD_WASTE_EMPTY_HASHES,     /**< HASH size 0: memsize */
	HD_WASTE_STRING_CAPACITY,  /**< STRING capacity - bytesize */
	HD_WASTE_ARRAY_CAPACITY,   /**< heap ARRAY memsize - slot - 8 length */
	HD_WASTE_DUPLICATE_STRINGS,/**< copies but the first: memsize */
	HD_WASTE_FROZEN_DUPLICATES,/**< frozen copies but the first frozen */
	HD_WASTE_KINDS
} hd_waste_kind;

/** The name of a category ("empty-arrays"), or NULL. */
HD_API const char *hd_waste_kind_name(int kind);

/** How many sites a category keeps, at most. */
#define HD_WASTE_MAX_SITES 16

/** A site of a category: node is one of its objects (HD_NODE_NONE for
 * the untraced ones: no site). */
typedef struct hd_waste_site {
	hd_node_id node;
	uint64_t count;
	uint64_t bytes;
} hd_waste_site;

typedef struct hd_waste_row {
	int kind;                /**< hd_waste_kind */
	uint64_t count;          /**< objects */
	uint64_t bytes;          /**< bytes wasted (saturated at 2^64-1) */
	size_t nsites;           /**< sites kept, by bytes */
	hd_waste_site sites[HD_WASTE_MAX_SITES];
} hd_waste_row;

typedef struct hd_waste_result {
	uint64_t heap_objects;   /**< the objects of the store considered */
	uint64_t heap_memsize;   /**< their memsize: the 100% */
	uint64_t excluded;       /**< tracer and dumper objects left out */
	uint32_t saturated;
	hd_waste_row rows[HD_WASTE_KINDS]; /**< by hd_waste_kind */
} hd_waste_result;

/**
 * The waste of the objects of set (NULL: every node) of s: each
 * category's objects, bytes and top sites (hd_waste_kind). Reads the
 * records of the strings and the heap arrays from the source dump.
 * @param flags HD_STRINGS_ALL keeps the tracer and dumper objects
 * @return 0, HD_EINVAL, HD_ENOMEM, the codes of hd_store_records()
 */
HD_API int hd_waste_compute(hd_waste_result *out, const hd_store *s,
			    const hd_nodes *set, unsigned flags,
			    const hd_read_options *ro, hd_error *err);

/* ===================================================================== */
/* SQL (SQLite)                                                          */
/* ===================================================================== */

struct sqlite3;

/**
 * Opens a read-only, in-memory SQLite database whose tables are views of
 * s (which must outlive it): objects, refs and roots, as eponymous
 * virtual tables over the store (nothing copied), and the functions
 * path(), retained(), addr(), hexaddr() and hd_rows_visited() (see man
 * 1 heapdump-query). Nothing can write: the database is opened
 * SQLITE_OPEN_READONLY, the tables have no xUpdate, and an authorizer
 * denies every statement but SELECT (and a few read-only pragmas),
 * ATTACH included. Close with hd_sql_close. libsqlite3 is not linked:
 * the first call loads it (dlopen of the SONAME built against), so a
 * program that runs statements on the database links libsqlite3 itself
 * or loads it the same way.
 * @return 0, HD_ENOMEM, HD_EINVAL, HD_ERROR (libsqlite3 cannot be
 *         loaded: err names it and the package to install)
 */
HD_API int hd_sql_open(struct sqlite3 **out, const hd_store *s,
		       hd_error *err);
/** Closes a database of hd_sql_open(). NULL is a no-op. */
HD_API void hd_sql_close(struct sqlite3 *db);
/** The name of table i of hd_sql_open() ("objects"), NULL past the last. */
HD_API const char *hd_sql_table(unsigned i);

/* ===================================================================== */
/* Malloc snapshots: native allocations by site (man 5 heapdump-malloc)  */
/* ===================================================================== */

/*
 * The malloc tracker (the LD_PRELOAD library libheapdump-malloc.so that
 * `heapdump malloc -- CMD` runs a program under) writes snapshots: one
 * NDJSON file each, a header line, then one line per allocation site
 * (a Ruby file:line, or the C caller), then the leak scan's lines when
 * it ran. hd_msnap_* reads one tolerantly: a damaged line is counted
 * and skipped, as the dump reader does, unknown line types and keys are
 * ignored, and a file whose header is missing or names another format
 * is refused. hd_mreport_* analyses one snapshot or several of one
 * process: sites by live bytes, growth and slope, the join with a heap
 * dump, and a verdict.
 */

/** The snapshot format this library reads. */
#define HD_MSNAP_FORMAT 1

/** The header line of a snapshot. Strings are NUL-terminated copies
 * (JSON-unescaped, cut to their buffer). */
typedef struct hd_msnap_header {
	int format;            /**< HD_MSNAP_FORMAT */
	int tracking;          /**< 0: the tracker tracked nothing (why) */
	int64_t pid;
	double time;           /**< seconds since the epoch, 0 if unknown */
	char ruby[32];
	char allocator[32];    /**< "glibc", "jemalloc"... */
	char reason[16];       /**< exit, signal, interval, api, dump */
	char why[256];         /**< with tracking 0: the tracker's reason */
	int has_gc_count, has_malloc, has_rss;
	uint64_t gc_count;
	/** totals over every site */
	uint64_t allocs, frees, bytes_allocated, live_bytes, live_blocks;
	uint64_t malloc_in_use; /**< mallinfo2's uordblks (has_malloc) */
	uint64_t malloc_free;   /**< mallinfo2's fordblks (has_malloc) */
	uint64_t rss;           /**< bytes (has_rss) */
} hd_msnap_header;

/** hd_msnap_item.kind of a site */
enum hd_msnap_kind { HD_MSITE_RUBY = 1, HD_MSITE_C = 2 };

/** hd_msnap_item.type */
enum hd_msnap_type {
	HD_MSNAP_SITE = 1,     /**< a site line */
	HD_MSNAP_LEAKSCAN = 2, /**< the leak scan's summary line */
	HD_MSNAP_LEAKED = 3    /**< a site's unreached blocks */
};

/** One line after the header. site, allocator and blind point into the
 * reader's buffer, valid until the next hd_msnap_next(). */
typedef struct hd_msnap_item {
	int type;              /**< an hd_msnap_type */
	int kind;              /**< an hd_msnap_kind (SITE, LEAKED) */
	const char *site;      /**< unescaped, NUL-terminated; may hold
				    any byte (escape it to print it) */
	size_t site_len;
	/* SITE */
	uint64_t allocs, frees, bytes_allocated, live_bytes, live_blocks;
	int has_gen;           /**< gen_oldest and gen_mean are given */
	uint64_t gen_oldest;
	double gen_mean;
	/* LEAKED: blocks, bytes; LEAKSCAN: the summary */
	uint64_t blocks, bytes;
	uint64_t scanned_bytes, unreached_blocks, unreached_bytes;
	double seconds;
	const char *allocator; /**< LEAKSCAN, "" when not given */
	const char *blind;     /**< LEAKSCAN: what the scan cannot see,
				    the list's items joined by "; " */
} hd_msnap_item;

/** Options for hd_msnap_open(); initialise with HD_MSNAP_OPTIONS_INIT. */
typedef struct hd_msnap_options {
	unsigned int version;  /**< HD_MSNAP_OPTIONS_VERSION */
	int strict;            /**< a damaged line fails (HD_EPARSE) */
} hd_msnap_options;
#define HD_MSNAP_OPTIONS_VERSION 1
#define HD_MSNAP_OPTIONS_INIT { HD_MSNAP_OPTIONS_VERSION, 0 }

typedef struct hd_msnap hd_msnap;

/**
 * Opens the snapshot at path ("-": standard input) and reads its header.
 * @param opts NULL for the defaults
 * @return 0, HD_EIO, HD_ENOMEM, HD_ELIMIT (over 1 GiB), HD_EFORMAT (no
 *         header line, no "format", or another format: err says which)
 */
HD_API int hd_msnap_open(hd_msnap **out, const char *path,
			 const hd_msnap_options *opts, hd_error *err);

/** The same over len bytes of memory (copied). */
HD_API int hd_msnap_open_mem(hd_msnap **out, const char *data, size_t len,
			     const hd_msnap_options *opts, hd_error *err);

/** The header read by open. Borrowed. */
HD_API const hd_msnap_header *hd_msnap_header_get(const hd_msnap *m);

/**
 * The next site, leak scan or leaked line. Damaged lines (not JSON, a
 * site without its name or counts, a second header, a line without a
 * type) are skipped and counted (hd_msnap_skipped, the first one's
 * line in hd_msnap_first_skip); in strict mode the first fails. Lines
 * of another type are passed over.
 * @return 0, HD_ITEROVER at the end, HD_EPARSE (strict: line, column)
 */
HD_API int hd_msnap_next(hd_msnap *m, hd_msnap_item *out, hd_error *err);

/** Lines skipped as damaged so far. */
HD_API uint64_t hd_msnap_skipped(const hd_msnap *m);

/** The 1-based line of the first skipped line, 0 when none. */
HD_API uint64_t hd_msnap_first_skip(const hd_msnap *m);

/** Closes m. NULL is a no-op. */
HD_API void hd_msnap_close(hd_msnap *m);

/** Options for hd_mreport_new(); initialise with HD_MREPORT_OPTIONS_INIT. */
typedef struct hd_mreport_options {
	unsigned int version;  /**< HD_MREPORT_OPTIONS_VERSION */
	/** the growth (bytes, first snapshot to last) under which the
	 * live bytes of a site, and of the whole, are judged flat */
	uint64_t min_growth;
} hd_mreport_options;
#define HD_MREPORT_OPTIONS_VERSION 1
#define HD_MREPORT_MIN_GROWTH 1000000u
#define HD_MREPORT_OPTIONS_INIT \
	{ HD_MREPORT_OPTIONS_VERSION, HD_MREPORT_MIN_GROWTH }

/** At most this many snapshots in one report. */
#define HD_MREPORT_MAX_SNAPS 64

/** One site of a report, its figures those of the last snapshot. */
typedef struct hd_mreport_site {
	const char *site;      /**< unescaped, NUL-terminated, any byte */
	size_t site_len;
	int kind;              /**< an hd_msnap_kind */
	uint64_t allocs, frees, bytes_allocated, live_bytes, live_blocks;
	int has_gen;
	uint64_t gen_oldest;
	double gen_mean;
	/** mwrap's estimate of the live bytes: bytes per allocation x
	 * (allocations - frees), in the last snapshot */
	uint64_t estimate;
	/* with two snapshots or more (first to last) */
	int64_t growth;        /**< live bytes, last - first */
	/** mwrap's estimate of the growth: the bytes per allocation made
	 * between the two x (allocations - frees between the two) */
	int64_t growth_estimate;
	double slope;          /**< least squares of live bytes against
				    the snapshots' times, bytes/s (0 when
				    the times do not differ) */
	int grows_every_step;  /**< live bytes rose at every snapshot */
	/* the join (hd_mreport_join), Ruby sites only */
	int joined;            /**< a dump was joined */
	uint64_t dump_objects; /**< objects the dump has at file:line */
	uint64_t dump_memsize; /**< their memsize */
	uint64_t dump_iseq_memsize; /**< of which IMEMO/iseq */
	/** live bytes the objects' memsize does not account for (0 when
	 * it accounts for all) */
	uint64_t unexplained;
	/* the leak scan of the last snapshot */
	uint64_t leaked_blocks, leaked_bytes;
} hd_mreport_site;

typedef struct hd_mreport hd_mreport;

/** @return 0, HD_ENOMEM, HD_EINVAL (unknown options version) */
HD_API int hd_mreport_new(hd_mreport **out, const hd_mreport_options *opts,
			  hd_error *err);

/**
 * Reads the rest of m (open, header read) into the report as its next
 * snapshot; snapshots go in the order taken. name is kept (a copy).
 * @return 0, HD_ENOMEM, HD_ELIMIT (more than HD_MREPORT_MAX_SNAPS),
 *         HD_EINVAL (a snapshot of another pid, or older than the one
 *         before: err says which), and hd_msnap_next()'s errors
 */
HD_API int hd_mreport_add(hd_mreport *r, hd_msnap *m, const char *name,
			  hd_error *err);

/**
 * Joins the Ruby sites with a heap dump's objects by allocation site
 * (file:line; the dump must have been traced): what the objects there
 * account for in memsize and what they do not. The dumper's objects
 * (hd_store_is_dumper) are left out. Call after the last add.
 * @return 0, HD_ENOMEM
 */
HD_API int hd_mreport_join(hd_mreport *r, const hd_store *s, hd_error *err);

/** Sorts the sites (live bytes of the last snapshot, descending; with
 * several snapshots by growth) and writes the verdict. Call once, after
 * the adds and the join. @return 0, HD_ENOMEM, HD_EINVAL (no snapshot) */
HD_API int hd_mreport_finish(hd_mreport *r, hd_error *err);

/** The number of snapshots and of sites. */
HD_API size_t hd_mreport_snap_count(const hd_mreport *r);
HD_API size_t hd_mreport_site_count(const hd_mreport *r);
/** Snapshot i's header, name and skipped lines. Borrowed. */
HD_API const hd_msnap_header *hd_mreport_snap(const hd_mreport *r, size_t i,
					      const char **name,
					      uint64_t *skipped);
/** Site i (after finish: in the report's order). Borrowed. */
HD_API const hd_mreport_site *hd_mreport_site_get(const hd_mreport *r,
						  size_t i);
/** Site i's live bytes in snapshot k. */
HD_API uint64_t hd_mreport_site_live(const hd_mreport *r, size_t i,
				     size_t k);
/** The last snapshot's leak scan, NULL when it has none. Borrowed; its
 * string members point into the report. */
HD_API const hd_msnap_item *hd_mreport_leakscan(const hd_mreport *r);

/** hd_mreport_verdict's kind */
enum hd_mreport_judgement {
	HD_MREPORT_INACTIVE = 1, /**< a snapshot says tracking was off */
	HD_MREPORT_ONE,          /**< one snapshot: its largest site */
	HD_MREPORT_GROWS,        /**< a site grew by min_growth or more */
	HD_MREPORT_FLAT,         /**< no site grew: no native growth */
	HD_MREPORT_EMPTY         /**< nothing tracked is live */
};

/** The verdict after finish: its kind, and the one sentence every
 * front end prints ("native memory grows at app.rb:12: ..."); its site
 * (SIZE_MAX when none) has its control bytes as \u00XX. */
HD_API const char *hd_mreport_verdict(const hd_mreport *r, int *judgement,
				      size_t *site);

/** Frees r. NULL is a no-op. */
HD_API void hd_mreport_free(hd_mreport *r);
/* Redaction (redact.c, man 1 heapdump-redact)                           */
/* ===================================================================== */

/** hd_redact_options flags: what is rewritten beside string contents. */
#define HD_REDACT_PATHS (1u << 0)   /**< "file" and memprof "path" */
#define HD_REDACT_NAMES (1u << 1)   /**< reference names, symbols, methods */
#define HD_REDACT_CLASSES (1u << 2) /**< class names outside keep_classes */
#define HD_REDACT_TIMES (1u << 3)   /**< generations and memprof times */

/** What hd_redact() did, filled when it returns 0. */
typedef struct hd_redact_stats {
	uint64_t records;  /**< lines written */
	uint64_t values;   /**< string contents replaced */
	uint64_t keys;     /**< hash keys of reference names replaced */
	uint64_t paths;    /**< file paths replaced */
	uint64_t names;    /**< names, symbols and methods replaced */
	uint64_t classes;  /**< class names replaced */
	uint64_t times;    /**< generations and times shifted */
	uint64_t other;    /**< other strings replaced (unknown members) */
	uint64_t salvaged; /**< records rebuilt from salvaged fields */
	uint64_t shared;   /**< short values that had to share a placeholder */
	uint64_t mapped;   /**< entries of the map file */
	hd_read_stats read; /**< the reader's counts */
} hd_redact_stats;

/** Options for hd_redact(); initialise with HD_REDACT_OPTIONS_INIT. */
typedef struct hd_redact_options {
	unsigned int version;  /**< HD_REDACT_OPTIONS_VERSION */
	unsigned int flags;    /**< HD_REDACT_ bits */
	/** With HD_REDACT_CLASSES, the class and module names kept beside
	 *  Ruby's core ones (hd_redact_core_class), or NULL. */
	const char *const *keep_classes;
	size_t nkeep_classes;
	/** The map file to write (0600, atomically; an existing map's key is
	 *  reused and its entries kept), or NULL for none. */
	const char *map_path;
	/** The dump's sidecar (man 5 heapdump-dump, SIDECAR) and where to
	 *  write it redacted (the host replaced, "dump" the output's base
	 *  name, with HD_REDACT_TIMES its time shifted; numbers kept), or
	 *  NULL for none. */
	const char *sidecar_in, *sidecar_out;
	hd_read_options read;    /**< how to read the dump */
	hd_progress_cb progress; /**< bytes read, or NULL */
	void *progress_payload;
	hd_redact_stats *stats;  /**< receives the counts, or NULL */
} hd_redact_options;

#define HD_REDACT_OPTIONS_VERSION 1
#define HD_REDACT_OPTIONS_INIT                                            \
	{ HD_REDACT_OPTIONS_VERSION, 0, NULL, 0, NULL, NULL, NULL,          \
	  HD_READ_OPTIONS_INIT, NULL, NULL, NULL }

/**
 * Writes a dump with its secrets replaced, as plain NDJSON that every
 * command reads (man 1 heapdump-redact): every string content (a
 * STRING's value, a hash key in a reference name, any string of a member
 * this function does not know) by a placeholder of the same byte length
 * drawn from a keyed hash (SipHash under a random 128-bit key), the same
 * content always by the same placeholder and, for contents of up to 8
 * bytes, two contents never by one; with the flags, file paths, names,
 * class names and generations too. Addresses, types, sizes, counts and
 * references are kept, so every analysis gives the same numbers. Lines
 * that yielded no record are dropped; invalid ones come out valid.
 * @param out_path the output, "-" for standard output (hd_outfile)
 * @return 0, HD_EIO, HD_EPARSE, HD_ENOMEM, HD_EINVAL ("'MAP' is a
 *         symbolic link", "'MAP' is not a redaction map")
 */
HD_API int hd_redact(const char *in_path, const char *out_path,
		     const hd_redact_options *opts, hd_error *err);

/**
 * Copies in_path ("-": standard input) to out_path ("-": standard
 * output) with every placeholder of the map file turned back into its
 * original, JSON-escaped (valid inside a JSON string, readable as
 * text): the names, paths, classes and hash keys of an analysis of a
 * redacted dump.
 * @param replaced receives the number of placeholders replaced, or NULL
 * @return 0, HD_EIO, HD_ENOMEM, HD_EINVAL ("'MAP' is not a redaction map")
 */
HD_API int hd_redact_unmap(const char *map_path, const char *in_path,
			   const char *out_path, uint64_t *replaced,
			   hd_error *err);

/** 1 when name is one of the classes or modules a bare Ruby defines
 *  (kept by HD_REDACT_CLASSES), else 0. */
HD_API int hd_redact_core_class(const char *name, size_t len);

/* ===================================================================== */
/* Flame graphs (man 1 heapdump-flame)                                   */
/* ===================================================================== */

/**
 * A weighted call tree: stacks of frames (outermost first), each with a
 * weight, frame names interned. A node is one stack prefix; its self
 * weight what was added at exactly that stack, its total its self plus
 * its descendants'. Built frame by frame (hd_flame_child: one hash
 * lookup) and walked without recursion, however deep. Frames below
 * max_depth fold into one "(deeper)" frame at max_depth + 1.
 */
typedef struct hd_flame hd_flame;

/** The tree's root: no frame, the parent of every outermost frame. */
#define HD_FLAME_ROOT 0u
/** hd_flame_new()'s max_depth when given 0. */
#define HD_FLAME_DEPTH_DEFAULT 128u

/** A new, empty tree. @return 0, HD_ENOMEM */
HD_API int hd_flame_new(hd_flame **out, uint32_t max_depth, hd_error *err);
/** Frees a tree. NULL is a no-op. */
HD_API void hd_flame_free(hd_flame *f);
/**
 * The node of frame name[0..len) under parent (HD_FLAME_ROOT or a node
 * hd_flame_child returned), created if new, into *child. Under a node
 * at max_depth it is the "(deeper)" node, and under that node itself.
 * @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_flame_child(hd_flame *f, uint32_t parent, const char *name,
			  size_t len, uint32_t *child, hd_error *err);
/** Adds weight to node's self weight (sums saturate at 2^64-1). */
HD_API void hd_flame_weigh(hd_flame *f, uint32_t node, uint64_t weight);
/**
 * Adds weight at the stack frames[0..depth) (outermost first; lens NULL:
 * NUL-terminated frames). depth 0 weighs the root itself, which no
 * writer shows. @return 0, HD_ENOMEM, HD_EINVAL
 */
HD_API int hd_flame_add(hd_flame *f, const char *const *frames,
			const size_t *lens, size_t depth, uint64_t weight,
			hd_error *err);
/** The sum of every weight added; *saturated (may be NULL) 1 when it
 * stopped at 2^64-1. */
HD_API uint64_t hd_flame_total(const hd_flame *f, int *saturated);
/** The number of nodes (stack prefixes), the root aside. */
HD_API uint32_t hd_flame_node_count(const hd_flame *f);

/** One node of a tree, as hd_flame_node() gives it. */
typedef struct hd_flame_node_info {
	const char *name;  /**< the frame (borrowed, NUL-terminated, raw
			       bytes); "" for the root */
	size_t name_len;
	uint64_t self;     /**< the weight added at exactly this stack */
	uint64_t total;    /**< self and every descendant's (saturating) */
	uint32_t depth;    /**< 0 for HD_FLAME_ROOT */
	uint32_t parent;   /**< HD_FLAME_ROOT's: UINT32_MAX */
	uint32_t nchildren;
	const uint32_t *children; /**< largest total first, then oldest */
} hd_flame_node_info;

/**
 * The node id of f, after hd_flame_index(f) (else HD_EINVAL): a tree
 * view walks from HD_FLAME_ROOT down its children. Borrowed until the
 * tree changes or is freed. @return 0, HD_EINVAL, HD_ENOTFOUND (no
 * such node)
 */
HD_API int hd_flame_node(hd_flame_node_info *out, const hd_flame *f,
			 uint32_t id);
/** Computes every node's total and children, largest first, for
 * hd_flame_node(): O(N log N) once. @return 0, HD_ENOMEM */
HD_API int hd_flame_index(hd_flame *f, hd_error *err);

/* hd_flame_write() formats */
/** "a;b;c 123" a line per stack of nonzero self weight (Brendan Gregg's
 * folded stacks, for flamegraph.pl and inferno); ';', control bytes
 * and DEL in a frame are written as \xHH. */
#define HD_FLAME_FOLDED 1
/** speedscope's file format, one "sampled" profile: a sample per stack
 * of nonzero self weight, weighted by it. */
#define HD_FLAME_SPEEDSCOPE 2
/** pprof's profile.proto, gzip'd: a sample per stack of nonzero self
 * weight; a function and a location per frame. */
#define HD_FLAME_PPROF 3

/* What the weights are (hd_flame_options.metric; names the unit and
 * sample type the writers give). */
#define HD_FLAME_COUNT 1    /**< objects */
#define HD_FLAME_MEMSIZE 2  /**< bytes of memsize */
#define HD_FLAME_RETAINED 3 /**< bytes retained (see hd_flame_build) */

/**
 * Writes f in format (HD_FLAME_FOLDED, _SPEEDSCOPE, _PPROF) through w;
 * name names the profile (speedscope), metric (HD_FLAME_COUNT, ...)
 * its unit. @return 0, HD_ENOMEM, HD_EINVAL, or the sink's non-zero
 * value unchanged
 */
HD_API int hd_flame_write(const hd_flame *f, int format, const char *name,
			  int metric, hd_write_cb w, void *payload,
			  hd_error *err);

/**
 * A stack source: the allocation stack of node, outermost frame first,
 * into frames[0..max) and their lengths into lens; returns the depth
 * (0: node has no stack). The strings must live until the next call.
 */
typedef size_t (*hd_flame_stack_fn)(void *ctx, hd_node_id node,
				    const char **frames, size_t *lens,
				    size_t max);
/**
 * The stack source of a store's allocation stacks (man 5 heapdump-store,
 * STACKS): ctx is the hd_store; each frame named by its label (else its
 * method, else its file), borrowed from the store. The outermost max
 * frames of a deeper stack.
 */
HD_API size_t hd_store_flame_stack(void *ctx, hd_node_id node,
				   const char **frames, size_t *lens,
				   size_t max);

/* hd_flame_options.by */
#define HD_FLAME_BY_PATH 1  /**< the dominator tree: retention paths */
#define HD_FLAME_BY_SITE 2  /**< one frame, the allocation site */
#define HD_FLAME_BY_STACK 3 /**< the frames of hd_flame_options.stack */
/** hd_flame_options flag: keep the tracer's and dump_all's own objects
 * (as --all; HD_ROOTS_SKIP_WEAK also applies). */
#define HD_FLAME_ALL (1u << 4)
/** The error of HD_FLAME_BY_STACK on a dump without stacks. */
#define HD_FLAME_NO_STACKS "this dump has no allocation stacks (record " \
			   "them with HeapDump.trace(stacks: true))"

/** Options for hd_flame_build(); initialise with HD_FLAME_OPTIONS_INIT. */
typedef struct hd_flame_options {
	unsigned int version;  /**< HD_FLAME_OPTIONS_VERSION */
	int by;                /**< HD_FLAME_BY_ */
	int metric;            /**< HD_FLAME_COUNT, _MEMSIZE, _RETAINED */
	unsigned int flags;    /**< HD_ROOTS_SKIP_WEAK, HD_FLAME_ALL */
	uint32_t max_depth;    /**< 0: HD_FLAME_DEPTH_DEFAULT */
	hd_flame_stack_fn stack; /**< HD_FLAME_BY_STACK's source */
	void *stack_ctx;
	/** The dominator tree of s to use (serve keeps one), or NULL:
	 * computed (hd_domtree_new) when the source needs one. */
	const hd_domtree *domtree;
	/** Version 2: NULL, or hd_store_node_count(s) entries the build
	 * fills with each object's frame, the node of the tree it weighs
	 * at (UINT32_MAX: it weighs nowhere), for hd_flame_objects(). */
	uint32_t *frame_of;
} hd_flame_options;

#define HD_FLAME_OPTIONS_VERSION 2
#define HD_FLAME_OPTIONS_INIT \
	{ HD_FLAME_OPTIONS_VERSION, HD_FLAME_BY_PATH, HD_FLAME_MEMSIZE, 0, 0, \
	  NULL, NULL, NULL, NULL }

/**
 * The flame graph of the objects of s (only: those of the set, NULL:
 * all; the tracer's and dump_all's own left out unless HD_FLAME_ALL).
 *  - HD_FLAME_BY_PATH: each object reached from the roots is a frame
 *    under its immediate dominator's (hd_domtree_idom), named as path
 *    names a node (hd_store_node_name), after the name of the reference
 *    its dominator holds it by when it has one ("@body String"); it
 *    weighs its own count or memsize (self weight) there, so a frame's
 *    total is the retained size of its objects (HD_FLAME_RETAINED is
 *    HD_FLAME_MEMSIZE here). Objects no root reaches are left out.
 *  - HD_FLAME_BY_SITE: one frame, "file:line in method", or "(no site)".
 *  - HD_FLAME_BY_STACK: the frames opts->stack gives, or "(no stack)".
 *  - HD_FLAME_RETAINED by site or stack: each reached object's memsize
 *    at the frames of its nearest dominator (itself first) that has a
 *    site or stack, "(no site)" when none has: every reached byte once.
 * O(N + E log E) by path, O(N) by site and stack (+ the dominator tree
 * for retained).
 * @return 0, HD_ENOMEM, HD_EINVAL, HD_ENOTFOUND (by stack: no source,
 *         or no object has a stack: HD_FLAME_NO_STACKS)
 */
HD_API int hd_flame_build(hd_flame **out, const hd_store *s,
			  const hd_nodes *only, const hd_flame_options *opts,
			  hd_error *err);

/**
 * The objects under frame of f (the frame itself and its descendants),
 * from the frame_of[0..n) hd_flame_build filled (hd_flame_options
 * .frame_of), ascending into *out (the caller's; free with
 * hd_nodes_free): with HD_FLAME_COUNT their number is the frame's
 * total. Needs hd_flame_index(f). O(n + the frame's descendants).
 * @return 0, HD_ENOMEM, HD_EINVAL, HD_ENOTFOUND (no such frame)
 */
HD_API int hd_flame_objects(hd_nodes *out, const hd_flame *f,
			    const uint32_t *frame_of, size_t n,
			    uint32_t frame, hd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* HEAPDUMP_H */
