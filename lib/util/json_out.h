/*
 * json_out.h - JSON text into a caller's buffer (json_out.c), for
 * hd_json_repair (json_repair.c) and hd_replace_class (replace_class.c):
 * an snprintf-style sink that stores what fits and counts everything,
 * the escapes of JSON strings, and a growable buffer for one line.
 * Internal: never installed.
 */
#ifndef HD_JSON_OUT_H
#define HD_JSON_OUT_H

#include "util_int.h"

/* An snprintf-style output: stores what fits, counts everything. */
struct hd__sink {
	char *p;
	size_t size;
	size_t len;
};

static inline void hd__put(struct hd__sink *o, const char *s, size_t n)
{
	if (o->len < o->size)
		memcpy(o->p + o->len, s,
		       n < o->size - o->len ? n : o->size - o->len);
	o->len += n;
}

static inline void hd__put_ch(struct hd__sink *o, char ch)
{
	if (o->len < o->size)
		o->p[o->len] = ch;
	o->len++;
}

/*
 * Writes the bytes between a string's quotes as valid JSON string
 * content: valid escapes are kept, a raw quote, the backslash of an
 * invalid escape and control characters are escaped.
 */
HD_HIDDEN void hd__put_content(struct hd__sink *o, const char *s,
			     size_t n);
/* Writes raw bytes (a class name) as a JSON string, quotes included. */
HD_HIDDEN void hd__put_json_str(struct hd__sink *o, const char *s,
			      size_t n);

/* A growable byte buffer for one line. */
struct hd__buf {
	char *p;
	size_t len;
	size_t cap;
};

static inline int hd__buf_reserve(struct hd__buf *b, size_t need)
{
	return hd__grow((void **)&b->p, &b->cap, need, 1) ? HD_ENOMEM : 0;
}

/* Formats into a sink over the buffer's free space, growing and retrying
 * when it did not fit. */
HD_HIDDEN int hd__buf_sink(struct hd__buf *b, struct hd__sink *o,
			  size_t hint);

#endif
