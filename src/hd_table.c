/*
 * hd_table.c - an open-addressing hash map from object addresses to
 * pointers, with plain malloc: usable inside NEWOBJ/FREEOBJ hooks and
 * heap walks, where allocating through Ruby could start a GC.
 */
#include "hd_ext.h"

#include <stdlib.h>

#define EMPTY ((VALUE)0)
#define DELETED ((VALUE)1)

static size_t slot_of(VALUE key, size_t cap)
{
	uint64_t h = (uint64_t)key;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (cap - 1);
}

int hdx_table_init(struct hdx_table *t, size_t cap)
{
	size_t c = 16;

	while (c < cap)
		c <<= 1;
	memset(t, 0, sizeof(*t));
	t->keys = calloc(c, sizeof(*t->keys));
	t->vals = calloc(c, sizeof(*t->vals));
	if (!t->keys || !t->vals) {
		hdx_table_free(t);
		return -1;
	}
	t->cap = c;
	return 0;
}

void hdx_table_free(struct hdx_table *t)
{
	free(t->keys);
	free(t->vals);
	memset(t, 0, sizeof(*t));
}

static int grow(struct hdx_table *t)
{
	struct hdx_table n;
	size_t i;

	if (hdx_table_init(&n, t->live * 4 > 16 ? t->live * 4 : 16))
		return -1;
	for (i = 0; i < t->cap; i++) {
		size_t j;

		if (t->keys[i] == EMPTY || t->keys[i] == DELETED)
			continue;
		j = slot_of(t->keys[i], n.cap);
		while (n.keys[j] != EMPTY)
			j = (j + 1) & (n.cap - 1);
		n.keys[j] = t->keys[i];
		n.vals[j] = t->vals[i];
	}
	n.used = n.live = t->live;
	hdx_table_free(t);
	*t = n;
	return 0;
}

void **hdx_table_get(const struct hdx_table *t, VALUE key)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = slot_of(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->keys[i] == key)
			return &t->vals[i];
		if (t->keys[i] == EMPTY)
			return NULL;
	}
}

void **hdx_table_put(struct hdx_table *t, VALUE key)
{
	void **v;
	size_t i;

	if ((v = hdx_table_get(t, key)))
		return v;
	if ((t->used + 1) * 4 > t->cap * 3 && grow(t))
		return NULL;
	for (i = slot_of(key, t->cap);; i = (i + 1) & (t->cap - 1))
		if (t->keys[i] == EMPTY || t->keys[i] == DELETED)
			break;
	if (t->keys[i] == EMPTY)
		t->used++;
	t->keys[i] = key;
	t->vals[i] = NULL;
	t->live++;
	return &t->vals[i];
}

void *hdx_table_del(struct hdx_table *t, VALUE key)
{
	void **v = hdx_table_get(t, key);
	void *old;

	if (!v)
		return NULL;
	old = *v;
	t->keys[v - t->vals] = DELETED;
	*v = NULL;
	t->live--;
	return old;
}

void hdx_table_relocate(struct hdx_table *t, void (*drop)(void *))
{
	VALUE *to = NULL;
	void **val = NULL;
	size_t i, n = 0, cap = 0;

	for (i = 0; i < t->cap; i++) {
		VALUE key = t->keys[i], dst;

		if (key == EMPTY || key == DELETED)
			continue;
		if ((dst = rb_gc_location(key)) == key)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			VALUE *nt = realloc(to, c * sizeof(*to));
			void **nv = nt ? realloc(val, c * sizeof(*val)) : NULL;

			if (nt)
				to = nt;
			if (nv)
				val = nv;
			if (!nt || !nv) {
				/* no memory: this one goes untraced */
				drop(t->vals[i]);
				t->keys[i] = DELETED;
				t->vals[i] = NULL;
				t->live--;
				continue;
			}
			cap = c;
		}
		to[n] = dst;
		val[n++] = t->vals[i];
		t->keys[i] = DELETED;
		t->vals[i] = NULL;
		t->live--;
	}
	/* all moved entries out first: a destination may be a moved
	 * entry's old key */
	for (i = 0; i < n; i++) {
		void **slot = hdx_table_put(t, to[i]);

		if (!slot) {
			drop(val[i]);
			continue;
		}
		if (*slot)
			drop(*slot);
		*slot = val[i];
	}
	free(to);
	free(val);
}
