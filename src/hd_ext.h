/*
 * hd_ext.h - what the C files of the heapdump extension share.
 *
 * MRI exports the heap-walk functions below but declares them only in its
 * private headers (internal/gc.h, internal/imemo.h), which ruby-dev does
 * not ship. We declare them here, once; extconf.rb probes each one
 * (HAVE_RB_...) and the code that needs a missing one is left out.
 * Their signatures have been stable from 2.7 to 4.0.
 */
#ifndef HD_EXT_H
#define HD_EXT_H

#include "hd_config.h" /* extconf.rb: HAVE_RB_..., HD_WALKER */
#include "hd_reason.h" /* extconf.rb: HD_NO_WALKER_WHY, why not */

#include <ruby.h>
#include <ruby/debug.h>
#include <ruby/encoding.h>
#include <ruby/io.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The Ruby the extension is built for, as major * 100 + minor (402 for
 * 4.2): the walk writes that version's dump_all fields in its order. */
#include <ruby/version.h>
#define HD_V (RUBY_API_VERSION_MAJOR * 100 + RUBY_API_VERSION_MINOR)

void rb_objspace_each_objects(int (*cb)(void *start, void *end,
					size_t stride, void *data),
			      void *data);
void rb_objspace_reachable_objects_from(VALUE obj,
					void (*cb)(VALUE ref, void *data),
					void *data);
void rb_objspace_reachable_objects_from_root(
	void (*cb)(const char *category, VALUE ref, void *data), void *data);
int rb_objspace_internal_object_p(VALUE obj);
size_t rb_obj_memsize_of(VALUE obj);
const char *rb_imemo_name(int imemo_type);
/* GC flags: names up to 3.4, names and values from 4.0 */
size_t rb_obj_gc_flags(VALUE obj, ID *flags, size_t max);
struct hdx_gc_meta {
	ID name;     /* 0 ends the list */
	VALUE val;   /* true, or a Fixnum (age, object_id) */
};
struct hdx_gc_meta *rb_gc_object_metadata(VALUE obj);
/* shapes: 3.3, 3.4 */
uint32_t rb_shape_get_shape_id(VALUE obj);
_Bool rb_shape_obj_too_complex(VALUE obj);
/* 4.0 */
uint32_t rb_obj_shape_id(VALUE obj);
unsigned char rb_class_variation_count(VALUE klass);
VALUE rb_class_singleton_p(VALUE klass);
/* a Hash's entries in order, without rb_hash_foreach's iteration level
 * (a write to the hash) and rb_ensure: for a callback that never
 * changes the hash nor raises (3.0 - 4.0) */
int rb_hash_stlike_foreach(VALUE hash, st_foreach_callback_func *func,
			   st_data_t arg);

/* Flag bits MRI keeps in its private headers, each the same on every
 * Ruby that has it, and each proven on the running Ruby by
 * HeapDump._self_check (hd_dump.c) before the walk is used and by
 * tests/ext/compare.rb on every Ruby the tests run. The shared-string
 * bit is RUBY_ELTS_SHARED, public. */
#define HD_HASH_PROC_DEFAULT RUBY_FL_USER2  /* internal/hash.h, 2.6 - 4.0 */
#define HD_STR_CHILLED (RUBY_FL_USER2 | RUBY_FL_USER3) /* 3.4, 4.0 */
#define HD_IMEMO_MASK 0x0f                  /* internal/imemo.h, 2.6 - 4.0 */
/* 4.0's shape_id: the shape's index in bits 0-18, too complex: bit 27
 * (shape.h); tests/ext/compare.rb checks shape_id and too_complex_shape */
#define HD_SHAPE_ID_OFFSET_MASK ((1u << 19) - 1)
#define HD_SHAPE_ID_FL_TOO_COMPLEX (1u << 27)

static inline const char *hdx_imemo_name(VALUE obj)
{
	const char *name = rb_imemo_name(
		(int)((RBASIC(obj)->flags >> RUBY_FL_USHIFT) & HD_IMEMO_MASK));

	return name ? name : "unknown";
}

/* A cache or table of the VM's that a call or a constant read makes
 * (rb_funcall's call cache, a class's method cache and its 4.0 table, an
 * inline constant cache): it outlives the call that made it, held by the
 * VM, so it is no temporary for the walk to leave out. Left out of one
 * dump, it would be new in the next: a leak the dump made. */
static inline int hdx_vm_cache_p(VALUE obj)
{
	int type = RB_BUILTIN_TYPE(obj);

	if (type == RUBY_T_IMEMO) {
		const char *t = hdx_imemo_name(obj);

		return !strcmp(t, "callcache") || !strcmp(t, "callinfo") ||
		       !strcmp(t, "constcache") || !strcmp(t, "ment");
	}
	if (type == RUBY_T_DATA && RTYPEDDATA_P(obj) && RTYPEDDATA_TYPE(obj) &&
	    RTYPEDDATA_TYPE(obj)->wrap_struct_name)
		return !strncmp(RTYPEDDATA_TYPE(obj)->wrap_struct_name, "VM/", 3);
	return 0;
}

#if defined(HAVE_RB_OBJ_SHAPE_ID)
static inline uint32_t hdx_shape_id(VALUE obj)
{
	return rb_obj_shape_id(obj) & HD_SHAPE_ID_OFFSET_MASK;
}
static inline int hdx_too_complex(VALUE obj)
{
	return (rb_obj_shape_id(obj) & HD_SHAPE_ID_FL_TOO_COMPLEX) != 0;
}
#elif defined(HAVE_RB_SHAPE_GET_SHAPE_ID)
static inline uint32_t hdx_shape_id(VALUE obj)
{
	return rb_shape_get_shape_id(obj);
}
static inline int hdx_too_complex(VALUE obj)
{
	return rb_shape_obj_too_complex(obj);
}
#else
static inline int hdx_too_complex(VALUE obj)
{
	return 0;
}
#endif

/* ---- hd_order.c ---- */

/* One Heap#origin ([pid, time, compaction count]) as the library's
 * hd_dump_origin. */
struct hd_dump_origin;
void hdx_origin_get(VALUE og, struct hd_dump_origin *o, const char **t);

/* ---- hd_table.c: open-addressing map from a VALUE to a pointer ---- */

struct hdx_table {
	VALUE *keys;    /* 0: empty; 1: deleted */
	void **vals;
	size_t cap;     /* power of two */
	size_t used;    /* live + deleted */
	size_t live;
};

int hdx_table_init(struct hdx_table *t, size_t cap);
void hdx_table_free(struct hdx_table *t);
/* Returns the slot of key, inserting it (value NULL) if absent; NULL when
 * out of memory. Only malloc: safe inside a NEWOBJ hook. */
void **hdx_table_put(struct hdx_table *t, VALUE key);
void **hdx_table_get(const struct hdx_table *t, VALUE key);
/* Removes key; returns its value (NULL if absent). */
void *hdx_table_del(struct hdx_table *t, VALUE key);
/* Re-keys the entries whose object compaction moved (rb_gc_location), for
 * a dcompact function, which the GC calls while it updates references.
 * Only malloc. A value displaced by a stale entry at the new address, or
 * one that cannot be re-keyed for want of memory (that object then goes
 * untraced), is given to drop. */
void hdx_table_relocate(struct hdx_table *t, void (*drop)(void *));

/* ---- hd_trace.c: allocation sites ---- */

struct hdx_site {
	const char *file;      /* interned, NUL-terminated; NULL if unknown */
	size_t file_len;
	const char *method;    /* interned; NULL if none */
	size_t method_len;
	unsigned long line;
	size_t generation;
	uint32_t stack;        /* allocation stack id, 0: none taken */
};

/* The allocation site of obj, or NULL when it was not traced. */
const struct hdx_site *hdx_trace_lookup(VALUE obj);
/* Interns a byte string for the life of the process (malloc only). */
const char *hdx_intern(const char *s, size_t n);
void hdx_init_trace(VALUE mod);
/* The allocation stacks (trace_allocations(stacks: true)): the frames'
 * names asked of Ruby (before a walk), the counts, stack s's frame ids
 * (1-based, outermost first), frame f's names (interned or NULL). */
void hdx_stacks_resolve(void);
size_t hdx_stacks_count(void);
size_t hdx_frames_count(void);
const uint32_t *hdx_stack_frames(uint32_t s, size_t *n);
void hdx_frame_get(uint32_t f, const char **file, int *line,
		   const char **method, const char **klass, const char **label);

/* ---- hd_out.c: the buffered output ---- */

struct hdx_out {
	int fd;
	void *gz;              /* gzFile, or NULL for plain output */
	char *buf;
	size_t len, cap;
	int err;               /* first errno, 0 if fine */
	uint64_t bytes;
};

int hdx_out_open(struct hdx_out *o, int fd, int gzip);
void hdx_out_flush(struct hdx_out *o);
/* Flushes and closes (the fd too); returns 0 or an errno. */
int hdx_out_close(struct hdx_out *o);

static inline void hdx_put(struct hdx_out *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		hdx_out_flush(o);
		if (n > o->cap) {
			size_t i;

			for (i = 0; i < n; i += o->cap) {
				size_t k = n - i < o->cap ? n - i : o->cap;

				memcpy(o->buf, s + i, k);
				o->len = k;
				hdx_out_flush(o);
			}
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

#define HD_PUTS(o, lit) hdx_put((o), (lit), sizeof(lit) - 1)

void hdx_put_cstr(struct hdx_out *o, const char *s);
void hdx_put_u64(struct hdx_out *o, uint64_t v);
void hdx_put_i64(struct hdx_out *o, int64_t v);
/* "0x..." lowercase, no padding, quoted. */
void hdx_put_addr(struct hdx_out *o, VALUE v);
/* A JSON string (quotes included): control characters, quote and
 * backslash escaped; valid UTF-8 copied; each byte of invalid UTF-8
 * written as \u00XX. */
void hdx_put_json(struct hdx_out *o, const char *s, size_t n);

/* ---- hd_meta.c: the sidecar ---- */

struct hdx_totals {
	uint64_t objects, roots, memsize, memsize_of_all, bytes;
};
/* After the walk: the sidecar written and renamed, then the dump renamed
 * (finish: what lib/heapdump.rb prepared before the walk). Raises. */
void hdx_sidecar_finish(VALUE finish, int sfd, const struct hdx_totals *t);

/* ---- hd_refnames.c: reference names (ref_names) ---- */

struct hdx_names;
void hdx_names_init(void); /* when the extension loads */
struct hdx_names *hdx_names_new(void);
/* Before the walk (may allocate): constants, threads, globals. 0 or -1. */
int hdx_names_prepare(struct hdx_names *nm);
/* Inside the walk: the names of obj's references (klass: the class word
 * written; imemo: the IMEMO type name or ""). */
void hdx_names_object(struct hdx_names *nm, VALUE obj, int type, VALUE klass,
		      const char *imemo);
/* Writes ', "ref_names":[...]' parallel to refs, unless none has a name;
 * global: the ROOT global_tbl record (names of the global variables). */
void hdx_names_write(struct hdx_names *nm, struct hdx_out *o,
		     const VALUE *refs, size_t nrefs, int global);
/* The same when the last neph of refs are the values of a WeakKeyMap
 * whose key is the object (hd_eph.c): those are named
 * "(ephemeron value)". */
void hdx_names_write_eph(struct hdx_names *nm, struct hdx_out *o,
			 const VALUE *refs, size_t nrefs, size_t neph);
int hdx_names_failed(const struct hdx_names *nm);
/* An object the preparation allocated (an Array of keys): the walk
 * leaves it and the references to it out. */
int hdx_names_own_p(const struct hdx_names *nm, VALUE v);
/* ... asked only when its bit of this filter (HD_BLOOM_WORDS words) is set */
#define HD_BLOOM_WORDS 1024
/* the slot's address itself, modulo 512 KB in 8-byte units: the few
 * objects the preparation allocates fall on distinct bits, no multiply */
#define HD_BLOOM_BIT(v) ((size_t)((uint64_t)(v) >> 3) % (HD_BLOOM_WORDS * 64))
const uint64_t *hdx_names_bloom(const struct hdx_names *nm);
/* Whether obj's references may have names (the walk keeps them only then). */
int hdx_names_wanted(const struct hdx_names *nm, VALUE obj, int type,
		     const char *imemo);
void hdx_names_free(struct hdx_names *nm);
/* Appends x to the malloc'd array *v (*n used of *cap): 0, or -1 when
 * out of memory (hd_refnames.c; safe inside a heap scan). */
int hdx_push_value(VALUE **v, size_t *n, size_t *cap, VALUE x);

/* ---- hd_eph.c: the keys of ObjectSpace::WeakKeyMap ---- */

struct hdx_eph;
void hdx_eph_init(void); /* when the extension loads */
/* Before the walk (GC disabled meanwhile; may call the maps' methods):
 * the values of every WeakKeyMap by key, or NULL when there are none
 * (*nomem set when out of memory). */
struct hdx_eph *hdx_eph_prepare(int *nomem);
/* The values whose key is key (*n of them), or NULL. */
const VALUE *hdx_eph_values(const struct hdx_eph *e, VALUE key, size_t *n);
void hdx_eph_free(struct hdx_eph *e);

/* ---- hd_dump.c, hd_count.c, hd_meta.c ---- */

/* "STRING", "IMEMO"...: dump_all's names of the builtin types */
const char *hdx_type_name(int type);
void hdx_init_dump(VALUE mod);
void hdx_init_count(VALUE mod);
void hdx_init_meta(VALUE mod);
void hdx_init_malloc(VALUE mod); /* hd_malloc.c */

extern VALUE hdx_eError;

#endif
