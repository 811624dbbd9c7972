/*
 * intern.c - string interning: equal byte strings get one dense u32 id.
 * Strings are stored back to back, each NUL-terminated, so that the
 * table can be written to the store as it is. The slots are hashed with
 * SipHash-1-3 under a random key of the table's own (hash.c): class
 * names, paths and method names come from the dump. Ids follow the
 * order of first insertion, never the slots.
 */
#include "keycache.h"

#include <ctype.h>

uint64_t hd__hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL);
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = hd__mix64(h ^ w) + 0x9e3779b97f4a7c15ULL;
		s += 8;
		n -= 8;
	}
	w = 0;
	if (n)
		memcpy(&w, s, n);
	return hd__mix64(h ^ w ^ n);
}

int hd__intern_init(struct hd__intern *t)
{
	memset(t, 0, sizeof(*t));
	t->slot_cap = 1024;
	hd__hash_key_new(&t->hkey);
	t->slots = hd__calloc(t->slot_cap, sizeof(*t->slots));
	if (!t->slots || hd__grow((void **)&t->offs, &t->offs_cap, 1,
				  sizeof(*t->offs))) {
		hd__intern_free(t);
		return HD_ENOMEM;
	}
	t->offs[0] = 0;
	return 0;
}

void hd__intern_free(struct hd__intern *t)
{
	hd__free(t->bytes, t->bytes_cap);
	hd__free(t->offs, t->offs_cap * sizeof(*t->offs));
	hd__free(t->slots, t->slot_cap * sizeof(*t->slots));
	memset(t, 0, sizeof(*t));
}

static int same(const struct hd__intern *t, uint32_t id, const char *s,
		size_t n)
{
	size_t len;
	const char *p = hd__intern_str(t, id, &len);

	return len == n && memcmp(p, s, n) == 0;
}

static int grow_slots(struct hd__intern *t)
{
	size_t ncap = t->slot_cap * 2, i, j;
	uint32_t *ns = hd__calloc(ncap, sizeof(*ns));

	if (!ns)
		return HD_ENOMEM;
	for (i = 0; i < t->count; i++) {
		size_t len;
		const char *p = hd__intern_str(t, (uint32_t)i, &len);

		j = hd__hash_keyed(&t->hkey, p, len) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = (uint32_t)i + 1;
	}
	hd__free(t->slots, t->slot_cap * sizeof(*t->slots));
	t->slots = ns;
	t->slot_cap = ncap;
	return 0;
}

int hd__intern_put(struct hd__intern *t, const char *s, size_t n,
		   uint32_t *id_out)
{
	size_t j;
	uint32_t id;

	if ((t->count + 1) * 2 > t->slot_cap && grow_slots(t))
		return HD_ENOMEM;
	j = hd__hash_keyed(&t->hkey, s, n) & (t->slot_cap - 1);
	for (; t->slots[j]; j = (j + 1) & (t->slot_cap - 1)) {
		if (same(t, t->slots[j] - 1, s, n)) {
			*id_out = t->slots[j] - 1;
			return 0;
		}
	}
	if (t->count >= HD_STR_NONE - 1)
		return HD_ENOMEM;
	if (hd__grow((void **)&t->bytes, &t->bytes_cap, t->bytes_len + n + 1,
		     1) ||
	    hd__grow((void **)&t->offs, &t->offs_cap, t->count + 2,
		     sizeof(*t->offs)))
		return HD_ENOMEM;
	if (n)
		memcpy(t->bytes + t->bytes_len, s, n);
	t->bytes[t->bytes_len + n] = '\0';
	t->bytes_len += n + 1;
	id = (uint32_t)t->count++;
	t->offs[t->count] = t->bytes_len;
	t->slots[j] = id + 1;
	*id_out = id;
	return 0;
}

size_t hd__intern_displacement(const struct hd__intern *t)
{
	size_t i, len, d = 0, mask = t->slot_cap - 1;
	const char *p;

	for (i = 0; i < t->slot_cap; i++) {
		if (!t->slots[i])
			continue;
		p = hd__intern_str(t, t->slots[i] - 1, &len);
		d += (i - (size_t)hd__hash_keyed(&t->hkey, p, len)) & mask;
	}
	return d;
}

int hd__intern_json(struct hd__intern *t, hd_str s, uint32_t *id_out)
{
	char small[256];
	char *buf = small;
	size_t n;
	int rc;

	if (!s.len)
		return hd__intern_put(t, "", 0, id_out);
	if (!memchr(s.ptr, '\\', s.len))
		return hd__intern_put(t, s.ptr, s.len, id_out);
	if (s.len > sizeof(small) && !(buf = hd__malloc(s.len)))
		return HD_ENOMEM;
	n = hd_json_unescape(buf, s.ptr, s.len);
	rc = hd__intern_put(t, buf, n, id_out);
	if (buf != small)
		hd__free(buf, s.len);
	return rc;
}

/* Does s[0..n) read as the body of a JSON string: no raw quote or
 * control byte, and every backslash starts a valid escape? */
static int json_body(const char *s, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c < 0x20)
			return 0;
		if (c != '\\')
			continue;
		if (++i == n)
			return 0;
		switch (s[i]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n':
		case 'r': case 't':
			break;
		case 'u':
			for (k = 1; k <= 4; k++)
				if (i + k >= n || !isxdigit((unsigned char)s[i + k]))
					return 0;
			i += 4;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

int hd__intern_field(struct hd__intern *t, hd_str s, uint32_t *id_out)
{
	if (s.len && memchr(s.ptr, '\\', s.len) && json_body(s.ptr, s.len))
		return hd__intern_json(t, s, id_out);
	return hd__intern_put(t, s.len ? s.ptr : "", s.len, id_out);
}

int hd__intern_cached_miss(struct hd__strcache *c, struct hd__intern *t,
			   hd_str s, int json, uint32_t *id_out)
{
	int rc = json ? hd__intern_json(t, s, id_out) :
			hd__intern_field(t, s, id_out);

	if (!rc && s.len && !memchr(s.ptr, '\\', s.len)) {
		hd__kc_put(c->kc, hd__kc_str_slot(s), *id_out);
		c->last = *id_out + 1;
	}
	return rc;
}
