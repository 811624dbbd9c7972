/*
 * hd_eph.c - the keys of ObjectSpace::WeakKeyMap (Ruby 3.3 and later),
 * which no dump lists. A WeakKeyMap keeps a value alive while its key
 * lives (an ephemeron): the value belongs to whoever holds the key, but
 * dump_all lists only the map's values (MRI marks the keys weakly), so a
 * leak of keys looks like a leak the map holds. Before the walk, with
 * names on, we find every WeakKeyMap and ask each of them, for every
 * object that can be asked without running the program's code, whether
 * that very object is one of its keys; the walk then writes each key's
 * values as references of the key named "(ephemeron value)" (man 5
 * heapdump-dump), after its own.
 *
 * Asked: Strings of class String (their hash is their bytes), and
 * objects of a class whose #hash is Kernel#hash that already have an
 * object id (FL_SEEN_OBJ_ID up to 3.4, the GC's metadata from 4.0): a
 * key's hash is its id, given when it was stored, so asking gives none
 * to an object that had none. Other objects (Arrays, Hashes, objects
 * with their own #hash) are not asked: their values stay the map's.
 * WeakKeyMap#getkey answers the stored key equal to the object; only
 * the object itself counts. O(objects x maps) calls, none while a map
 * is absent; at most EPH_MAX_PROBES of them, else nothing is asked.
 *
 * Runs before the walk, GC disabled, under the dump's NEWOBJ hook (what
 * a call allocates is left out of the dump).
 */
#include "hd_ext.h"

#include <stdlib.h>
#include <string.h>

#if defined(HD_WALKER) && HD_V >= 303

#define EPH_MAX_PROBES 50000000ull

struct eph_vals {
	size_t n, cap;
	VALUE v[];
};

struct hdx_eph {
	struct hdx_table keys; /* key -> struct eph_vals * */
	size_t pairs;
	int err;
};

static ID id_getkey, id_aref, id_hash;
#ifdef HAVE_RB_GC_OBJECT_METADATA
static ID id_object_id;
#endif

void hdx_eph_init(void)
{
	id_getkey = rb_intern("getkey");
	id_aref = rb_intern("[]");
	id_hash = rb_intern("hash");
#ifdef HAVE_RB_GC_OBJECT_METADATA
	id_object_id = rb_intern("object_id");
#endif
}

static int wkmap_p(VALUE v)
{
	const char *n;

	if (RB_BUILTIN_TYPE(v) != RUBY_T_DATA || !RTYPEDDATA_P(v) ||
	    !RBASIC_CLASS(v))
		return 0;
	n = RTYPEDDATA_TYPE(v)->wrap_struct_name;
	return n && !strcmp(n, "weakkeymap");
}

static int has_id(VALUE v)
{
#ifdef HAVE_RB_GC_OBJECT_METADATA
	const struct hdx_gc_meta *m = rb_gc_object_metadata(v);

	for (; m->name; m++)
		if (m->name == id_object_id)
			return 1;
	return 0;
#else
	return RB_FL_TEST_RAW(v, RUBY_FL_SEEN_OBJ_ID) != 0;
#endif
}

/* An object that can be asked without running the program's code
 * (its class's #hash is looked at after the heap scan). */
static int askable(VALUE v)
{
	switch (RB_BUILTIN_TYPE(v)) {
	case RUBY_T_STRING:
		return RBASIC_CLASS(v) == rb_cString;
	case RUBY_T_OBJECT:
	case RUBY_T_DATA:
	case RUBY_T_STRUCT:
		return RBASIC_CLASS(v) != 0 && has_id(v);
	default:
		return 0;
	}
}

struct scan {
	VALUE *maps, *cand;
	size_t nmaps, capmaps, ncand, capcand;
	int err;
};

static int maps_i(void *start, void *end, size_t stride, void *data)
{
	struct scan *sc = data;
	VALUE v;

	for (v = (VALUE)start; v != (VALUE)end; v += stride)
		if (RBASIC(v)->flags && wkmap_p(v) &&
		    hdx_push_value(&sc->maps, &sc->nmaps, &sc->capmaps, v)) {
			sc->err = 1;
			return 1;
		}
	return 0;
}

static int cand_i(void *start, void *end, size_t stride, void *data)
{
	struct scan *sc = data;
	VALUE v;

	for (v = (VALUE)start; v != (VALUE)end; v += stride)
		if (RBASIC(v)->flags && askable(v) &&
		    hdx_push_value(&sc->cand, &sc->ncand, &sc->capcand, v)) {
			sc->err = 1;
			return 1;
		}
	return 0;
}

static void add(struct hdx_eph *e, VALUE key, VALUE val)
{
	void **slot = hdx_table_put(&e->keys, key);
	struct eph_vals *p, *q;

	if (!slot) {
		e->err = 1;
		return;
	}
	p = *slot;
	if (!p || p->n == p->cap) {
		size_t cap = p ? p->cap * 2 : 2;

		if (!(q = realloc(p, sizeof(*q) + cap * sizeof(q->v[0])))) {
			e->err = 1;
			return;
		}
		if (!p)
			q->n = 0;
		q->cap = cap;
		*slot = p = q;
	}
	p->v[p->n++] = val;
	e->pairs++;
}

static void ask(struct hdx_eph *e, const struct scan *sc)
{
	size_t i, k;
	VALUE c, key, val;

	for (i = 0; i < sc->ncand && !e->err; i++) {
		c = sc->cand[i];
		if (RB_BUILTIN_TYPE(c) != RUBY_T_STRING &&
		    !rb_method_basic_definition_p(RBASIC_CLASS(c), id_hash))
			continue;
		for (k = 0; k < sc->nmaps; k++) {
			key = rb_funcall(sc->maps[k], id_getkey, 1, c);
			if (key != c)
				continue;
			val = rb_funcall(sc->maps[k], id_aref, 1, c);
			if (!RB_SPECIAL_CONST_P(val))
				add(e, c, val);
		}
	}
}

void hdx_eph_free(struct hdx_eph *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->keys.cap; i++)
		if (e->keys.keys[i] > 1)
			free(e->keys.vals[i]);
	hdx_table_free(&e->keys);
	free(e);
}

struct hdx_eph *hdx_eph_prepare(int *nomem)
{
	struct scan sc = { 0 };
	struct hdx_eph *e = NULL;
	int gc_was_disabled = RTEST(rb_gc_disable());

	*nomem = 0;
	rb_objspace_each_objects(maps_i, &sc);
	if (!sc.err && sc.nmaps)
		rb_objspace_each_objects(cand_i, &sc);
	if (sc.err) {
		*nomem = 1;
	} else if (sc.nmaps && sc.ncand &&
		   (unsigned long long)sc.nmaps * sc.ncand <= EPH_MAX_PROBES) {
		if (!(e = calloc(1, sizeof(*e))) ||
		    hdx_table_init(&e->keys, 64)) {
			free(e);
			e = NULL;
			*nomem = 1;
		} else {
			ask(e, &sc);
			if (e->err)
				*nomem = 1;
			if (e->err || !e->pairs) {
				hdx_eph_free(e);
				e = NULL;
			}
		}
	}
	free(sc.maps);
	free(sc.cand);
	if (!gc_was_disabled)
		rb_gc_enable();
	return e;
}

const VALUE *hdx_eph_values(const struct hdx_eph *e, VALUE key, size_t *n)
{
	void **slot = hdx_table_get(&e->keys, key);
	const struct eph_vals *p;

	if (!slot || !(p = *slot)) {
		*n = 0;
		return NULL;
	}
	*n = p->n;
	return p->v;
}

#else /* before 3.3: no WeakKeyMap */

void hdx_eph_init(void)
{
}

struct hdx_eph *hdx_eph_prepare(int *nomem)
{
	*nomem = 0;
	return NULL;
}

void hdx_eph_free(struct hdx_eph *e)
{
	(void)e;
}

const VALUE *hdx_eph_values(const struct hdx_eph *e, VALUE key, size_t *n)
{
	(void)e;
	(void)key;
	*n = 0;
	return NULL;
}

#endif
