/*
 * map.c - an open-addressing u64 -> u32 map with linear probing, hashed
 * with SipHash-1-3 under a random key of its own (hash.c): the keys are
 * addresses from the dump, chosen by whoever wrote it.
 */
#include "util_int.h"

static int alloc_slots(struct hd__map *m, size_t expect)
{
	size_t cap = 16;

	while (cap < expect * 2 && cap < ((size_t)1 << 62))
		cap *= 2;
	m->keys = hd__calloc(cap, sizeof(*m->keys));
	m->vals = hd__array_alloc(cap, sizeof(*m->vals));
	m->cap = cap;
	m->count = 0;
	if (!m->keys || !m->vals) {
		hd__map_free(m);
		return HD_ENOMEM;
	}
	return 0;
}

int hd__map_init(struct hd__map *m, size_t expect)
{
	m->has_max = 0;
	hd__hash_key_new(&m->hkey);
	return alloc_slots(m, expect);
}

void hd__map_free(struct hd__map *m)
{
	hd__free(m->keys, m->cap * sizeof(*m->keys));
	hd__free(m->vals, m->cap * sizeof(*m->vals));
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->count = 0;
}

static inline size_t home(const struct hd__map *m, uint64_t key)
{
	return (size_t)hd__hash_u64(&m->hkey, key) & (m->cap - 1);
}

/* Doubles the table, keeping its key (a map never initialized gets one). */
static int rehash(struct hd__map *m)
{
	struct hd__map n;
	size_t i, j;

	if (m->cap > ((size_t)1 << 61))
		return HD_ENOMEM;
	if (!m->cap)
		hd__hash_key_new(&m->hkey);
	n.hkey = m->hkey;
	if (alloc_slots(&n, m->cap))
		return HD_ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		for (j = home(&n, m->keys[i] - 1); n.keys[j];
		     j = (j + 1) & (n.cap - 1))
			;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
	}
	n.count = m->count;
	n.has_max = m->has_max;
	n.max_val = m->max_val;
	hd__map_free(m);
	*m = n;
	return 0;
}

int hd__map_put(struct hd__map *m, uint64_t key, uint32_t val,
		uint32_t *val_out, int *found)
{
	size_t mask, i;

	if (key == UINT64_MAX) {
		*found = m->has_max;
		if (!m->has_max)
			m->max_val = val;
		m->has_max = 1;
		*val_out = m->max_val;
		return 0;
	}
	if ((m->count + 1) * 4 > m->cap * 3 && rehash(m))
		return HD_ENOMEM;
	mask = m->cap - 1;
	for (i = home(m, key);; i = (i + 1) & mask) {
		if (!m->keys[i]) {
			m->keys[i] = key + 1;
			m->vals[i] = val;
			m->count++;
			*val_out = val;
			*found = 0;
			return 0;
		}
		if (m->keys[i] == key + 1) {
			*val_out = m->vals[i];
			*found = 1;
			return 0;
		}
	}
}

int hd__map_get(const struct hd__map *m, uint64_t key, uint32_t *val)
{
	size_t mask, i;

	if (key == UINT64_MAX) {
		if (m->has_max)
			*val = m->max_val;
		return m->has_max;
	}
	if (!m->cap)
		return 0;
	mask = m->cap - 1;
	for (i = home(m, key); m->keys[i]; i = (i + 1) & mask) {
		if (m->keys[i] == key + 1) {
			*val = m->vals[i];
			return 1;
		}
	}
	return 0;
}

size_t hd__map_displacement(const struct hd__map *m)
{
	size_t i, d = 0;

	for (i = 0; i < m->cap; i++)
		if (m->keys[i])
			d += (i - home(m, m->keys[i] - 1)) & (m->cap - 1);
	return d;
}
