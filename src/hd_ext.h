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
size_t rb_obj_gc_flags(VALUE obj, ID *flags, size_t max);
const char *rb_imemo_name(int imemo_type);

/* Flag bits MRI keeps in its private headers (same values 2.7 - 3.3);
 * used only by the walker, which is built for 3.0 and 3.1 only. */
#define HD_STR_SHARED RUBY_FL_USER2         /* internal/string.h */
#define HD_HASH_PROC_DEFAULT RUBY_FL_USER2  /* internal/hash.h */
#define HD_IMEMO_MASK 0x0f                  /* internal/imemo.h */

/* ---- hd_table.c: open-addressing map from a VALUE to a pointer ---- */

struct hd_table {
	VALUE *keys;    /* 0: empty; 1: deleted */
	void **vals;
	size_t cap;     /* power of two */
	size_t used;    /* live + deleted */
	size_t live;
};

int hd_table_init(struct hd_table *t, size_t cap);
void hd_table_free(struct hd_table *t);
/* Returns the slot of key, inserting it (value NULL) if absent; NULL when
 * out of memory. Only malloc: safe inside a NEWOBJ hook. */
void **hd_table_put(struct hd_table *t, VALUE key);
void **hd_table_get(const struct hd_table *t, VALUE key);
/* Removes key; returns its value (NULL if absent). */
void *hd_table_del(struct hd_table *t, VALUE key);

/* ---- hd_trace.c: allocation sites ---- */

struct hd_site {
	const char *file;      /* interned, NUL-terminated; NULL if unknown */
	size_t file_len;
	const char *method;    /* interned; NULL if none */
	size_t method_len;
	unsigned long line;
	size_t generation;
};

/* The allocation site of obj, or NULL when it was not traced. */
const struct hd_site *hd_trace_lookup(VALUE obj);
/* Interns a byte string for the life of the process (malloc only). */
const char *hd_intern(const char *s, size_t n);
void hd_init_trace(VALUE mod);

/* ---- hd_out.c: the buffered output ---- */

struct hd_out {
	int fd;
	void *gz;              /* gzFile, or NULL for plain output */
	char *buf;
	size_t len, cap;
	int err;               /* first errno, 0 if fine */
	uint64_t bytes;
};

int hd_out_open(struct hd_out *o, int fd, int gzip);
void hd_out_flush(struct hd_out *o);
/* Flushes and closes (the fd too); returns 0 or an errno. */
int hd_out_close(struct hd_out *o);

static inline void hd_put(struct hd_out *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		hd_out_flush(o);
		if (n > o->cap) {
			size_t i;

			for (i = 0; i < n; i += o->cap) {
				size_t k = n - i < o->cap ? n - i : o->cap;

				memcpy(o->buf, s + i, k);
				o->len = k;
				hd_out_flush(o);
			}
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

#define HD_PUTS(o, lit) hd_put((o), (lit), sizeof(lit) - 1)

void hd_put_cstr(struct hd_out *o, const char *s);
void hd_put_u64(struct hd_out *o, uint64_t v);
void hd_put_i64(struct hd_out *o, int64_t v);
/* "0x..." lowercase, no padding, quoted. */
void hd_put_addr(struct hd_out *o, VALUE v);
/* A JSON string (quotes included): control characters, quote and
 * backslash escaped; valid UTF-8 copied; each byte of invalid UTF-8
 * written as \u00XX. */
void hd_put_json(struct hd_out *o, const char *s, size_t n);

/* ---- hd_dump.c, hd_count.c, hd_meta.c ---- */

/* "STRING", "IMEMO"...: dump_all's names of the builtin types */
const char *hd_type_name(int type);
void hd_init_dump(VALUE mod);
void hd_init_count(VALUE mod);
void hd_init_meta(VALUE mod);

extern VALUE hd_eError;

#endif
