/*
 * store_format.h - the on-disk layout of a heapdump store (man 5
 * heapdump-store) and the in-memory hd_store shared by store.c,
 * store_build.c and store_write.c. Never installed.
 *
 * A store is a header, a section table and 8-byte aligned sections. All
 * integers are little-endian. A built store holds the same section images
 * in memory as an opened one holds in its mapping, so one set of
 * accessors serves both.
 */
#ifndef HD_STORE_FORMAT_H
#define HD_STORE_FORMAT_H

#include "hd_int.h"

/* ---- header ---- */

#define HD__STORE_MAGIC "HDSTORE\0"
#define HD__STORE_MAGIC_LEN 8
/* 2: the references include each object's class edge (CLASS flag
 * HD__CLS_EDGE, META HD__M_CLASS_EDGES); a version 1 store is refused
 * with a message that says to index the dump again. */
#define HD__STORE_VERSION 2u
#define HD__STORE_HEADER 32u    /* magic, version, count, file size, 0 */
#define HD__STORE_ENTRY 24u     /* id, flags, offset, size */
#define HD__STORE_MAX_SECTIONS 64u
#define HD__STORE_ALIGN 8u

/* Section flags: an unknown section may be skipped only if optional. */
#define HD__SECF_OPTIONAL 1u

/* ---- section ids (1-based; the table may list them in any order) ---- */

enum hd__sec {
	HD__SEC_META = 1,     /* u64[HD__M_COUNT] */
	HD__SEC_STRINGS,      /* NUL-terminated strings back to back */
	HD__SEC_STROFFS,      /* u32[strings + 1] start offsets */
	HD__SEC_ADDRESS,      /* u64[nodes], strictly ascending */
	HD__SEC_TYPE,         /* u8[nodes], hd_type */
	HD__SEC_BITS,         /* u16[nodes], HD_B_ bits */
	HD__SEC_CLASS,        /* u32[nodes] class node or HD_NODE_NONE */
	HD__SEC_CLASSX,       /* wide[classx]: class address, class NONE */
	HD__SEC_MEMSIZE,      /* u32[nodes], HD__ESC: see MEMSIZE_WIDE */
	HD__SEC_MEMSIZE_WIDE, /* wide[] */
	HD__SEC_GENERATION,   /* u32[nodes] or empty: 0 none, g + 1, ESC */
	HD__SEC_GEN_WIDE,     /* wide[] */
	HD__SEC_SIZE,         /* u32[nodes], ESC */
	HD__SEC_SIZE_WIDE,    /* wide[] */
	HD__SEC_SITE,         /* u32[nodes] site id or NONE, or empty */
	HD__SEC_SITES,        /* site[sites] */
	HD__SEC_AUX,          /* u32[nodes] string id or NONE */
	HD__SEC_OFFSET,       /* u64[nodes] record offset in the source */
	HD__SEC_REFS_OFF,     /* u32[nodes + 1] */
	HD__SEC_REFS,         /* u32[edges] */
	HD__SEC_REV_OFF,      /* u32[nodes + 1] */
	HD__SEC_REV,          /* u32[edges] */
	HD__SEC_ROOT_NAMES,   /* u32[root categories] string ids */
	HD__SEC_ROOT_OFF,     /* u32[root categories + 1] */
	HD__SEC_ROOT_REFS,    /* u32[root refs kept] */
	HD__SEC_CLASSES,      /* class[classes], ascending node */
	/* Optional sections (flag HD__SECF_OPTIONAL): all or none of a
	 * group. The dominator tree (index --dominators): */
	HD__SEC__REQUIRED,    /* ids below are in every store */
	HD__SEC_DOM_INFO = HD__SEC__REQUIRED, /* u64[HD__DOM_INFO_COUNT] */
	HD__SEC_DOM_IDOM,     /* u32[nodes]: idom, HD_DOM_ROOT or NONE */
	HD__SEC_DOM_COUNT,    /* u32[nodes]: retained count */
	HD__SEC_DOM_MEM,      /* u64[nodes]: retained memsize */
	/* Reference names (man 5 heapdump-store, REFERENCE NAMES): */
	HD__SEC_NAME_INFO,    /* u64[4]: encoding, entries, flags, roots */
	HD__SEC_NAME_MAP,     /* edge -> string: sparse pairs or dense */
	HD__SEC_NAME_ROOT,    /* u32[root refs kept] string id + 1, or empty */
	/* The stats summary (store_stats.c), alone in its group: */
	HD__SEC_STATS,        /* head, rows by type, class name, dumper */
	/* The identity of the dump a cached store was built from (the
	 * cache's key, store_cache.c; written last but one: the summary
	 * stays last in the file), alone in its group: */
	HD__SEC_SOURCE_ID,    /* u64[HD__SID_COUNT] */
	/* The dominator tree's children orders (domtree_children.c), with
	 * the tree (all of DOM_* or none of these), as a tree view lists
	 * them: CSR over the nodes and the virtual root (row nodes). */
	HD__SEC_DOM_KIDS_OFF, /* u32[nodes + 2] row offsets */
	HD__SEC_DOM_KIDS,     /* u32[KIDS_OFF[nodes + 1]]: each row's
			       * children, largest retained memsize first,
			       * then ascending node */
	/* Allocation stacks (man 5 heapdump-store, STACKS; store_stacks.c),
	 * all or none: */
	HD__SEC_STACK_INFO,   /* u64[HD__STK_INFO_COUNT] */
	HD__SEC_STACK_NODE,   /* u32[nodes] stack id or 0; or sparse pairs */
	HD__SEC_STACK_OFF,    /* u32[stacks + 1]: start in STACK_ENT */
	HD__SEC_STACK_ENT,    /* u32[entries]: frame ids, outermost first */
	HD__SEC_STACK_FRAME,  /* frame[frames] (HD__FRAME_SIZE) */
	/* Views (man 5 heapdump-store, VIEWS; views.c): what serve reads
	 * at start and on its first calls, each group optional on its own
	 * and versioned; a damaged or stale one does not stop the store
	 * from opening (its size is its own: views.c checks it when it is
	 * read, and the reader computes it again). The string values, all
	 * three or none: */
	HD__SEC_STRV_INFO = 43, /* u64[HD__SV_COUNT] */
	HD__SEC_STRV_ROWS,    /* u64 off[rows + 1], then row[rows]
			       * (HD__SV_ROW_SIZE) */
	HD__SEC_STRV_TEXT,    /* the values, each with a NUL, then the
			       * same lowercased (ASCII) */
	/* The group stats (alone): */
	HD__SEC_VIEW_GROUPS,  /* see views.c */
	/* Retained by class, with the tree (alone): */
	HD__SEC_VIEW_CLASSES, /* see views.c */
	/* The objects' order, with the tree (alone): */
	HD__SEC_VIEW_ORDER,   /* see views.c */
	/* Ids 49 and 50 are reserved (never read: skipped as unknown when
	 * optional). The builder's version (store_cache.c: a cached store
	 * from another builder is built again), alone: */
	HD__SEC_BUILDER = 51, /* u64: HD__STORE_BUILDER */
	HD__SEC__COUNT        /* one past the last id */
};

/* The builder's version kept in a cached store (BUILDER section): one
 * more whenever what the builder puts in a store changes (1: the
 * inferred finalizers root, store_build.c finalizer_roots; 2: none
 * inferred for a dump of 3.3 or before, lists_finalizers; 3: plain
 * objects as finalizers, finalizer_entry). A cached store without it
 * or with another is built again; a store named by the user opens
 * whatever its builder. A kept verdict (leak_keep.c) is keyed by it. */
#define HD__STORE_BUILDER 3u
/* The leak hunt's rules, for a kept verdict's key (leak_keep.c): one
 * more whenever what the hunt says of the same stores changes (1: a
 * core Set of 4.0 followed as a growing collection, growth.c), so that
 * a verdict kept by other rules is computed again. */
#define HD__VERDICT_RULES 1u
#define HD__SEC_RESERVED(id) ((id) >= 49 && (id) <= 50)

/* DOM_INFO fields (u64 each): the flags the tree was computed with
 * (HD_ROOTS_SKIP_WEAK), the objects reached, their memsize. */
enum hd__dom_info { HD__DI_FLAGS, HD__DI_REACHED, HD__DI_MEMSIZE,
		    HD__DOM_INFO_COUNT };

/* SOURCE_ID fields (u64 each): the dump's stat(2) taken before it was
 * read (store_cache.c compares every field). */
enum hd__source_id { HD__SID_DEV, HD__SID_INO, HD__SID_SIZE,
		     HD__SID_MTIME, HD__SID_MTIME_NS, HD__SID_CTIME,
		     HD__SID_CTIME_NS, HD__SID_COUNT };

/* A wide-value entry: u32 node, u32 zero, u64 value (16 bytes). */
#define HD__WIDE_SIZE 16u
/* A site: u32 file string id, u32 method string id, u64 line. */
#define HD__SITE_SIZE 16u
/* A class: u32 node, u32 display string id, u32 real string id, u32
 * flags (HD__CLS_SINGLETON). */
#define HD__CLASS_SIZE 16u
#define HD__CLS_SINGLETON 1u
/* Its instances hold it (man 5 heapdump-store, CLASS REFERENCES): a
 * singleton or anonymous class or module; each instance's last
 * reference is the class edge to it. */
#define HD__CLS_EDGE 2u

/* The escape in a u32 value column: the value is in the wide table. */
#define HD__ESC 0xffffffffu

/* The SIZE of a STRING (not shared), ARRAY or HASH whose record gave no
 * size: a wide entry of 2^64-1 (never in a dump_all dump, so such stores
 * do not grow); 0 stays a length of 0 (hd_store_length). */
#define HD__SIZE_NONE UINT64_MAX

/* ---- META fields (u64 each, in this order) ---- */

enum hd__meta {
	HD__M_NODES,
	HD__M_EDGES,
	HD__M_DANGLING,
	HD__M_DUPLICATES,
	HD__M_ROOT_REFS,        /* references listed on ROOT lines */
	HD__M_ROOT_CATEGORIES,
	HD__M_ROOT_KEPT,        /* root references resolved to nodes */
	HD__M_SHAPES,
	HD__M_SOURCE_SIZE,
	HD__M_SOURCE_MTIME,
	HD__M_FINGERPRINT,
	HD__M_FP_KIND,          /* HD__FP_ */
	HD__M_SOURCE_PATH,      /* string id */
	HD__M_FEATURES,
	HD__M_COLUMNS,          /* HD__COL_ bits */
	HD__M_STRINGS,
	HD__M_SITES,
	HD__M_CLASSES,
	HD__M_CLASSX,
	HD__M_MEMSIZE_WIDE,
	HD__M_GEN_WIDE,
	HD__M_SIZE_WIDE,
	HD__M_RD_BYTES,         /* hd_read_stats, in declaration order */
	HD__M_RD_TOTAL_BYTES,
	HD__M_RD_LINES,
	HD__M_RD_OBJECTS,
	HD__M_RD_ROOTS,
	HD__M_RD_SHAPES,
	HD__M_RD_OTHERS,
	HD__M_RD_BLANK,
	HD__M_RD_SKIPPED,
	HD__M_RD_REPAIRED,
	HD__M_RD_TRUNCATED,
	HD__M_RD_GZIP,
	HD__M_RD_MEMPROF,
	HD__M_CLASS_EDGES,      /* of HD__M_EDGES: class edges (version 2) */
	HD__M_COUNT
};

/* Optional node columns present (HD__M_COLUMNS). */
#define HD__COL_GENERATION 1u
#define HD__COL_SITE 2u

/* How the fingerprint was taken (HD__M_FP_KIND). */
#define HD__FP_NONE 0u  /* a pipe: only the size can be compared */
#define HD__FP_PLAIN 1u /* the file's bytes */
#define HD__FP_GZIP 2u  /* the compressed file's bytes */

#define HD__FP_SPAN 65536u

/* ---- the in-memory store ---- */

struct hd_store {
	const unsigned char *sec[HD__SEC__COUNT]; /* section images */
	uint64_t len[HD__SEC__COUNT];
	uint64_t meta[HD__M_COUNT];
	uint32_t nodes;
	uint32_t nstrings;
	hd_store_info info;
	/* what to release */
	void *map;                      /* the mapped file */
	size_t map_len;
	int fd;                         /* the file, open while mapped */
	unsigned char *buf;             /* the file read into memory */
	size_t buf_len;
	void *own[HD__SEC__COUNT];      /* sections of a built store */
	size_t own_len[HD__SEC__COUNT];
	char *source_found;             /* the dump found beside the store */
	size_t source_found_len;
	unsigned jobs;                  /* a built store: the build's -j,
					 * which hd_store_write() follows */
	struct hd__gathered *gathered;  /* a built store: its STRING
					 * records' values (never written) */
	/* a built store's sections moved out of memory (store_spill.c):
	 * spill_fd open when spilling, spill_map[id] the mapping of
	 * section id in it (its image), at spill_off[id] */
	int spill_fd;
	int spilling;                   /* spill_fd open */
	int spill_more;                 /* hd_store_spill called: sections
					 * attached later spill too */
	void *spill_map[HD__SEC__COUNT];
	uint64_t spill_off[HD__SEC__COUNT];
	uint64_t spill_end;
};

/*
 * The STRING records' values a build with HD_INDEX_STRING_VALUES kept,
 * in dump order, in blocks (never copied together: a part read on
 * another thread hands its blocks over): entry k (found by walking the
 * blocks) is u32 value length, u16 encoding length, u8 flags (GV_VALUE: the
 * record has a value; GV_SIZE: a bytesize, then u64 bytesize), the
 * encoding and the value as written (JSON-escaped). node[k] is its
 * node, HD_NODE_NONE for a record whose address an earlier record took.
 */
#define HD__GV_VALUE 1u
#define HD__GV_SIZE 2u
struct hd__gv_chunk {
	unsigned char *p; /* NULL: spilled, len bytes at at in spill_fd */
	size_t len, cap;
	uint64_t at;
};
struct hd__gathered {
	struct hd__gv_chunk *chunk;   /* p NULL: freed once read */
	size_t nchunk, chunk_cap;
	hd_node_id *node;
	size_t n;
};


/*
 * Checks the section images of s (placed in s->sec / s->len) against
 * the counts in META and fills s->meta, s->nodes and s->info. With full,
 * also every stored index against what it indexes (what hd_store_open()
 * does); without, only the sizes (what hd_store_build() does).
 */
HD_HIDDEN int hd__store_validate(hd_store *s, int full, hd_error *err);

/* Opens a store from a copy of buf[0..len), validated as hd_store_open()
 * validates a file (the store fuzzer's entry). */
HD_HIDDEN int hd__store_open_mem(hd_store **out, const void *buf, size_t len,
				 hd_error *err);

/* The limits hd_store_build() enforces (store_build.c): the format's,
 * lowered only by tests. */
HD_HIDDEN extern uint64_t hd__max_nodes, hd__max_refs, hd__max_string_bytes;
/* The records from which the build sorts on two threads (-j >= 2);
 * lowered only by tests. */
HD_HIDDEN extern size_t hd__par_sort_min;

/* The image of section sid (and its length in bytes), or NULL when the
 * store has none. */
HD_HIDDEN const unsigned char *hd__store_section(const hd_store *s, int sid,
						 uint64_t *len);
/*
 * Bytes [off, off + n) of section sid's image, for a pass over a whole
 * column: copied with pread into buf (n bytes) from a store file, which
 * costs less than reading its mapping the first time (a page fault each
 * few pages), or the image itself for a store in memory. NULL if the
 * file cannot be read (the caller then reads the image). The caller
 * keeps [off, off + n) within the section.
 */
HD_HIDDEN const unsigned char *hd__store_copy(const hd_store *s, int sid,
					      uint64_t off, size_t n,
					      unsigned char *buf);
/*
 * Attaches n optional sections (ids sid[k] >= HD__SEC__REQUIRED) to a
 * built store, replacing any it held: the store takes over img[k]
 * (len[k] bytes, allocated with hd__malloc of len[k] or 1 bytes), so
 * hd_store_write() keeps them. HD_EINVAL, taking nothing, for an opened
 * store or a required section id. The one way anything outside the
 * store's own files adds to a store (dominators.c: the tree).
 */
HD_HIDDEN int hd__store_attach(hd_store *s, const int *sid, void *const *img,
			       const size_t *len, size_t n, hd_error *err);

/* The images of the children orders' sections (domtree_children.c),
 * hd__malloc'd: 0 or HD_ENOMEM. */
HD_HIDDEN int hd__domtree_children_images(const hd_domtree_children *c,
					  unsigned char **off, size_t *off_len,
					  unsigned char **kids,
					  size_t *kids_len);

/* Reference names (store_refnames.c). The code of a ref_names token:
 * string id + 1 of its printed text in t, 0 for null. */
HD_HIDDEN int hd__refname_intern(struct hd__intern *t, hd_str token,
				 uint32_t *code);
/* Lays out the name sections of a built store from the codes of its
 * edges (enm, edge order) and root references kept (rnm), either may be
 * NULL; both NULL: the names inferred from class constants. Strings go
 * into t (before it becomes STRINGS). Nothing when nothing is named. */
HD_HIDDEN int hd__store_names_build(hd_store *s, struct hd__intern *t,
				    const uint32_t *enm, const uint32_t *rnm,
				    hd_error *err);
/* The size section id (a NAME one) must have, UINT64_MAX if unknowable. */
HD_HIDDEN uint64_t hd__store_names_size(const hd_store *s, int id);
/* The name sections: all or none, flags known; with full every entry. */
HD_HIDDEN int hd__store_names_check(const hd_store *s, int full,
				    hd_error *err);

/* The stats summary (store_stats.c). A row: */
#define HD__SS_DUMPER 1u    /* row flag: hd_store_is_dumper's objects */
#define HD__SS_SATURATED 2u /* row flag: the memsize sum saturated */
struct hd__ss_row {
	int type;
	int dumper, saturated;
	const char *name; /* the stats class name, not NUL-terminated */
	size_t name_len;
	uint64_t count, memsize, edges, traced, gen_min, gen_max;
};
/* The section image of the summary of s (hd__malloc'd, *len bytes). */
HD_HIDDEN int hd__store_stats_image(const hd_store *s, unsigned char **img,
				    size_t *len, hd_error *err);
/* The size the section must have (UINT64_MAX: unknowable); its rows
 * checked (sorted, valid, summing to the nodes and edges). */
HD_HIDDEN uint64_t hd__store_stats_size(const hd_store *s);
HD_HIDDEN int hd__store_stats_check(const hd_store *s, hd_error *err);
/* The rows (0 when the store has no summary) and row i of them. */
HD_HIDDEN uint64_t hd__store_stats_rows(const hd_store *s);
HD_HIDDEN void hd__store_stats_row(struct hd__ss_row *r, const hd_store *s,
				   uint64_t i);

/*
 * hd_store_is_dumper() of every node in one pass (the site table's
 * flags computed once), as a bitmap over node ids (hd__bitmap_new's
 * layout; free with hd__bitmap_free(m, nodes)), or NULL when out of
 * memory. count and memsize (optional) receive the nodes set and the
 * saturated sum of their memsize (hd_store_dumper_count).
 */
HD_HIDDEN unsigned char *hd__store_dumper_bitmap(const hd_store *s,
						 uint64_t *count,
						 uint64_t *memsize);

/*
 * The nodes of s (all, or ids[0..nids), repeats counted) grouped by the
 * integers their stats keys depend on, so that a stats accumulator names
 * each group once instead of each node (stats.c): type, class, struct or
 * imemo type and dumper flag always, and as what asks, HD__SG_SITE the
 * site and whether the node is traced, HD__SG_GEN the generation and
 * whether its site names a file, HD__SG_LEN the length bucket. Groups in
 * the order of their first node (rep); free with hd__store_groups_free.
 */
#define HD__SG_SITE 1u
#define HD__SG_GEN 2u
#define HD__SG_LEN 4u
struct hd__sgroup {
	uint32_t rep;
	int dumper, saturated;
	uint64_t count, memsize, edges, traced, gen_min, gen_max;
};
HD_HIDDEN int hd__store_groups(struct hd__sgroup **out, size_t *n_out,
			       const hd_store *s, const hd_node_id *ids,
			       size_t nids, unsigned what);
HD_HIDDEN void hd__store_groups_free(struct hd__sgroup *g, size_t n);
/*
 * The class name of each node whose grp[i] is not HD_STR_NONE, as
 * hd_store_class_name into a buffer of size bytes (cut to size - 1),
 * interned into names once a distinct class key and in node order:
 * grp[i] receives its string id.
 */
HD_HIDDEN int hd__store_class_names(uint32_t *grp, const hd_store *s,
				    struct hd__intern *names, size_t size);

/* The same of a section image (hd__store_stats_image's, in memory for a
 * store without the section). */
HD_HIDDEN uint64_t hd__stats_image_rows(const unsigned char *img);
HD_HIDDEN void hd__stats_image_row(struct hd__ss_row *r,
				   const unsigned char *img, uint64_t i);

/*
 * Phase timing of the build and the write (HEAPDUMP_TIMING=1 in the
 * environment): each call prints to standard error the wall time, the
 * process's CPU time (all threads) and the calling thread's CPU time
 * since the previous call, under the name of the phase that just ended.
 * Nothing when the variable is unset; a NULL phase only starts the clock.
 * From one thread at a time.
 */
HD_HIDDEN void hd__timing(const char *phase);

/*
 * Is the last reference of node id its class edge (man 5 heapdump-store,
 * CLASS REFERENCES)? Then *k (optional) receives its index among id's
 * references. O(log classes).
 */
HD_HIDDEN int hd__store_class_edge(const hd_store *s, hd_node_id id,
				   uint32_t *k);

/* Sections of fewer bytes stay in memory when a store spills (1 MiB;
 * lowered only by tests). */
HD_HIDDEN extern size_t hd__spill_min;

/* Opens s's spill file in dir (hd_store_spill): 0, 1 when the file
 * system cannot make an unnamed file (nothing is spilled), or an
 * error. */
HD_HIDDEN int hd__store_spill_open(hd_store *s, const char *dir,
				   hd_error *err);

/* n bytes of p written to s's spill file at a place of their own
 * (safe on several threads at once): 0 with *at, or -1 with errno. */
HD_HIDDEN int hd__store_spill_put(hd_store *s, const void *p, size_t n,
				  uint64_t *at);

/* len bytes at at of s's spill file (hd__store_spill_put's), mapped
 * read-only to be read once in order (munmap them), or NULL with
 * errno. */
HD_HIDDEN const unsigned char *hd__store_spill_map(const hd_store *s,
						  uint64_t at, size_t len);

/* The spill file's mappings unmapped and the file closed
 * (store_spill.c; nothing when s spilled nothing). */
HD_HIDDEN void hd__store_spill_release(hd_store *s);

/* Once s spills (hd_store_spill), the sections attached since moved to
 * its file too, and what was read of the spilled ones dropped from the
 * process: hd__store_attach calls it, so that each step of a build
 * starts without what the last one read. A no-op otherwise. */
HD_HIDDEN void hd__store_spill_more(hd_store *s);

/* Section sid's spilled mapping, unmapped (hd__store_attach replaces
 * it); a no-op when sid is not spilled. */
HD_HIDDEN void hd__store_spill_drop(hd_store *s, int sid);

/* Frees what s owns (mapping, buffer, built sections) and s. */
HD_HIDDEN void hd__store_release(hd_store *s);

/*
 * The fingerprint of the dump at path (FNV-1a 64 of the 8-byte LE size,
 * the first and the last HD__FP_SPAN bytes of the file). kind receives
 * HD__FP_PLAIN or HD__FP_GZIP (by the magic), size the file size.
 */
HD_HIDDEN int hd__store_fingerprint(const char *path, uint64_t *fp,
				    uint32_t *kind, uint64_t *size,
				    uint64_t *mtime, hd_error *err);

/*
 * Formats the stats class name of an object (class_names.c): type, its class
 * pointer klass (0: none), the real name of the class entry (NULL if the
 * pointer is not a known class) and aux (DATA struct, IMEMO imemo_type,
 * NODE node_type). Writes at most size bytes with a NUL (if size > 0)
 * and returns the full length, as snprintf does. *is_real (optional) is
 * set when the result is exactly real.
 */
HD_HIDDEN size_t hd__class_name_fmt(char *buf, size_t size, int type,
				    uint64_t klass, const char *real,
				    size_t real_len, const char *aux,
				    size_t aux_len, int *is_real);

/* ---- allocation stacks (store_stacks.c) ---- */

/* STACK_INFO fields (u64 each): the layout's version, the stacks, the
 * frames, the entries of STACK_ENT, the nodes that have a stack and how
 * STACK_NODE holds them: HD__STK_DENSE, u32 per node (0: none), or
 * HD__STK_SPARSE, (u32 node, u32 stack) pairs by ascending node, when
 * fewer than half the nodes have one (a sampled trace). */
enum hd__stk_info { HD__STK_VERSION, HD__STK_STACKS, HD__STK_FRAMES,
		    HD__STK_ENTRIES, HD__STK_NODES, HD__STK_ENCODING,
		    HD__STK_INFO_COUNT };
#define HD__STK_DENSE 1u
#define HD__STK_SPARSE 2u
#define HD__STK_LAYOUT 1u
/* A frame: u32 file, method, class and label string ids (HD_STR_NONE
 * when absent), u64 line (0 unknown). */
#define HD__FRAME_SIZE 24u

/* What the build gathers of a dump's STACK and FRAME records (their
 * ids as the dump has them) while it reads. */
struct hd__stk_frame {
	uint32_t id, file, method, cls, label;
	uint64_t line;
};
struct hd__stk_acc {
	struct hd__stk_frame *fr;
	size_t nfr, fr_cap;
	uint32_t *sid, *soff, *slen;  /* per STACK record */
	size_t nst, sid_cap, soff_cap, slen_cap;
	uint32_t *ent;                /* their frame ids, back to back */
	size_t nent, ent_cap;
	int used;                     /* an object has a "stack" */
};
/* A STACK or FRAME record added (its strings interned into t). */
HD_HIDDEN int hd__stk_add(struct hd__stk_acc *a, struct hd__intern *t,
			  const hd_record *rec);
/* p's records appended to a's, p's string ids translated by str. */
HD_HIDDEN int hd__stk_merge(struct hd__stk_acc *a,
			    const struct hd__stk_acc *p, const uint32_t *str);
HD_HIDDEN void hd__stk_free(struct hd__stk_acc *a);
/* The sections INFO, OFF, ENT and FRAME (img[k], len[k] bytes,
 * hd__malloc'd of cap[k])
 * of a, the dump's stack ids of col (nodes entries, node order)
 * translated in place into the store's (0: none or unknown) and made
 * little-endian. A stack id repeated keeps its first record; a frame
 * id no FRAME record has is left out of its stack. */
HD_HIDDEN int hd__stk_sections(const struct hd__stk_acc *a, uint32_t *col,
			       size_t nodes, void *img[5], size_t len[5],
			       size_t cap[5]);
/* The size section id (a STACK one) must have, UINT64_MAX if unknowable;
 * the group checked (all or none; with full, every entry). */
HD_HIDDEN uint64_t hd__store_stacks_size(const hd_store *s, int id);
HD_HIDDEN int hd__store_stacks_check(const hd_store *s, int full,
				     hd_error *err);

/* ---- layouts of the optional sections (store_refnames.c,
 * store_stats.c write them; store_check.c checks them on open) ---- */

/* NAME_INFO fields (u64 each) and the encodings of NAME_MAP */
enum { NI_ENCODING, NI_ENTRIES, NI_FLAGS, NI_ROOT_ENTRIES, NI__COUNT };

#define ENC_SPARSE 1u
#define ENC_DENSE16 2u
#define ENC_DENSE32 4u

/* The stats summary's head: u64 version, rows, name bytes, flags (0). */
#define SS_VERSION 1u
#define SS_HEAD 32u
/* A row: u32 type, u32 flags (HD__SS_), u32 name offset, u32 name
 * length, u64 count, memsize (saturated), references, traced, least and
 * greatest generation (0 when none is traced). */
#define SS_ROW 64u

/* memcmp order of two byte spans, the shorter first on a tie (the order
 * of the stats summary's names) */
static inline int hd__span_cmp(const char *a, size_t an, const char *b,
			       size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	return c ? c : an < bn ? -1 : an > bn;
}

#endif /* HD_STORE_FORMAT_H */
