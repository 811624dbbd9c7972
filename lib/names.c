/*
 * names.c - class display names, dumper objects and version features.
 *
 * The class table collects the CLASS, MODULE and ICLASS records of a dump
 * and, for every class pointer, the first object seen that uses it (the
 * "attached" object of a singleton class). Once the whole dump has been
 * read, hd__classtab_resolve() names every class. The rules (also in man
 * 5 heapdump-store, CLASS NAMES):
 *
 *  - A singleton class (flagged "singleton":true, or, in dumps that flag
 *    no class at all, i.e. before Ruby 3.1, a metaclass: the class
 *    pointer of some CLASS record) is named #<Class:X>, X being the
 *    display name of its attached object: a class or module's own
 *    display name (recursively), #<Name:0x%016llx> for other objects with
 *    Name the object's real class name, or, when no attached object is
 *    known, #<Class:0x%016llx> with the singleton's own address.
 *  - Otherwise a class or module with a name is named by it (unescaped),
 *    and an anonymous one #<Class:0x%016llx> or #<Module:0x%016llx>.
 *  - An ICLASS is #<ICLASS:M>, M the display name of the included module.
 *  - The real name (what obj.class would print) follows superclass
 *    pointers while the class is a singleton or an ICLASS. If the chain
 *    breaks it falls back to real_class_name (3.1+), then to the record's
 *    own name (before 3.0 Ruby names a singleton after its real class),
 *    then to the class whose metaclass is the singleton's class pointer
 *    (3.0, where singletons carry neither flag nor superclass), and last
 *    to the singleton's own display name.
 *
 * Every walk is bounded and marks what it visits, so hostile cycles (a
 * class that is its own superclass, a loop of singletons) end.
 */
#include "util/keycache.h"
#include "store_format.h"

#include <stddef.h>

#include <stdio.h>

#define CF_WEAK 0x100u      /* the attached candidate may be a singleton */
#define MAX_WALK 100000     /* superclass steps in one walk */
#define MAX_NEST 16         /* #<Class:#<Class:...>> levels */
#define MAX_INNER 65536     /* longest name nested in another */
#define MAX_ICLASS 256      /* included modules skipped to a superclass */

static int is_mod(int type)
{
	return type == HD_T_CLASS || type == HD_T_MODULE;
}

static int is_single(const struct hd__class *c)
{
	return (c->flags & HD__CF_SINGLETON) != 0;
}

int hd__classtab_init(struct hd__classtab *ct, struct hd__intern *strs)
{
	memset(ct, 0, sizeof(*ct));
	ct->strs = strs;
	return hd__map_init(&ct->index, 1024);
}

void hd__classtab_free(struct hd__classtab *ct)
{
	if (!ct)
		return;
	hd__free(ct->v, ct->cap * sizeof(*ct->v));
	hd__map_free(&ct->index);
	memset(ct, 0, sizeof(*ct));
}

/*
 * Most objects are instances of a few classes, so ct->recent, a key
 * cache (keycache.h), remembers the entry of each of the latest
 * addresses, checked against the entry's own address: addresses crafted
 * to collide in it cost one multiply and one comparison more each, and
 * the index, under SipHash's random key, keeps the worst case.
 */
#define RECENT_BITS 10 /* ct->recent has 1 << RECENT_BITS slots */
typedef char recent_bits_ok[sizeof(((struct hd__classtab *)0)->recent) ==
					    sizeof(uint32_t) << RECENT_BITS ?
				    1 :
				    -1];

/* Slot i of ct->recent, if it holds the entry of addr; else HD__NONE. */
static inline uint32_t recent_find(const struct hd__classtab *ct, size_t i,
				   uint64_t addr)
{
	return hd__kc_find(ct->recent, i, ct->v, ct->count, sizeof(*ct->v),
			   offsetof(struct hd__class, address), &addr,
			   sizeof(addr));
}

/* The entry for addr, created empty (type 0) if new; NULL on ENOMEM. */
static struct hd__class *slot_for(struct hd__classtab *ct, uint64_t addr)
{
	struct hd__class *c;
	size_t i = hd__kc_slot(addr, RECENT_BITS);
	uint32_t slot = recent_find(ct, i, addr);
	int found;

	if (slot != HD__NONE)
		return &ct->v[slot];
	if (ct->count >= UINT32_MAX - 1 ||
	    hd__grow((void **)&ct->v, &ct->cap, ct->count + 1,
		     sizeof(*ct->v)) ||
	    hd__map_put(&ct->index, addr, (uint32_t)ct->count, &slot, &found))
		return NULL;
	hd__kc_put(ct->recent, i, slot);
	if (found)
		return &ct->v[slot];
	c = &ct->v[ct->count++];
	memset(c, 0, sizeof(*c));
	c->address = addr;
	c->name = c->real_name = c->display = c->real = HD_STR_NONE;
	return c;
}

/* A real (recorded) class entry, or NULL. */
static struct hd__class *entry(const struct hd__classtab *ct, uint64_t addr)
{
	uint32_t slot;

	if (!hd__map_get(&ct->index, addr, &slot) || slot >= ct->count ||
	    !ct->v[slot].type)
		return NULL;
	return &ct->v[slot];
}

const struct hd__class *hd__classtab_find(const struct hd__classtab *ct,
					  uint64_t address)
{
	return entry(ct, address);
}

/*
 * Offers an object as the attached object of class klass. The first one
 * wins, except that a class that may itself be a singleton (flagged, or
 * without a name) gives way to any later object that cannot: the
 * metaclass of Class is the class pointer of Class and of every
 * metaclass.
 */
static int add_candidate(struct hd__classtab *ct, uint64_t klass,
			 uint64_t addr, int type, int weak)
{
	struct hd__class *c;

	if (addr == klass)
		return 0; /* the metaclass of Class's metaclass chain */
	if (!(c = slot_for(ct, klass)))
		return HD_ENOMEM;
	if (c->attached && (weak || !(c->flags & CF_WEAK)))
		return 0;
	c->attached = addr;
	c->attached_type = type;
	if (weak)
		c->flags |= CF_WEAK;
	else
		c->flags &= ~CF_WEAK;
	return 0;
}

/*
 * Is klass, found in ct->recent (checked against the entry's address,
 * as slot_for() does), a class whose attached object add_candidate()
 * would keep? Most objects are instances of such a class: they then
 * cost no call and no table.
 */
static int settled(const struct hd__classtab *ct, uint64_t klass, int weak)
{
	uint32_t r = recent_find(ct, hd__kc_slot(klass, RECENT_BITS), klass);
	const struct hd__class *c;

	if (r == HD__NONE)
		return 0;
	c = &ct->v[r];
	return c->attached && (weak || !(c->flags & CF_WEAK));
}

static int add_class(struct hd__classtab *ct, const hd_record *rec)
{
	struct hd__class *c = slot_for(ct, rec->address);
	uint32_t name = HD_STR_NONE, real = HD_STR_NONE;

	if (!c)
		return HD_ENOMEM;
	if (c->type)
		return 0; /* a duplicate address: keep the first record */
	if (rec->name.len && hd__intern_json(ct->strs, rec->name, &name))
		return HD_ENOMEM;
	if (rec->real_class_name.len &&
	    hd__intern_json(ct->strs, rec->real_class_name, &real))
		return HD_ENOMEM;
	c->type = rec->type;
	c->klass = (rec->has & HD_HAS_CLASS) ? rec->class_addr : 0;
	c->superclass = (rec->has & HD_HAS_SUPERCLASS) ? rec->superclass : 0;
	c->name = name;
	c->real_name = real;
	if (rec->bits & HD_B_SINGLETON)
		c->flags |= HD__CF_SINGLETON;
	return 0;
}

int hd__classtab_add(struct hd__classtab *ct, const hd_record *rec)
{
	int rc, weak;

	if (rec->kind != HD_REC_OBJECT)
		return 0;
	switch (rec->type) {
	case HD_T_CLASS:
	case HD_T_MODULE:
		if ((rc = add_class(ct, rec)))
			return rc;
		break;
	case HD_T_ICLASS:
		/* its class pointer is the included module, not a class */
		return add_class(ct, rec);
	case HD_T_NONE:  /* a free-list pointer */
	case HD_T_IMEMO: /* junk before 3.2 */
	case HD_T_NODE:
		return 0;
	default:
		break;
	}
	if (!(rec->has & HD_HAS_CLASS) || !rec->class_addr)
		return 0;
	weak = is_mod(rec->type) &&
	       ((rec->bits & HD_B_SINGLETON) || !rec->name.len);
	if (settled(ct, rec->class_addr, weak))
		return 0;
	return add_candidate(ct, rec->class_addr, rec->address, rec->type,
			     weak);
}

/* ---- resolution ---- */

struct sbuf {
	char *p;
	size_t len, cap;
};

static int sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 < b->len ||
	    hd__grow((void **)&b->p, &b->cap, b->len + n + 1, 1))
		return HD_ENOMEM;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int sb_str(struct sbuf *b, const char *s)
{
	return sb_put(b, s, strlen(s));
}

static int sb_id(struct sbuf *b, const struct hd__intern *t, uint32_t id)
{
	size_t n;
	const char *s = hd__intern_str(t, id, &n);

	return sb_put(b, s, n);
}

static int sb_hex(struct sbuf *b, uint64_t v)
{
	char tmp[24];

	snprintf(tmp, sizeof(tmp), "0x%016llx", (unsigned long long)v);
	return sb_str(b, tmp);
}

static int intern_sb(struct hd__classtab *ct, struct sbuf *b, uint32_t *id)
{
	return hd__intern_put(ct->strs, b->p ? b->p : "", b->len, id);
}

/* Does any record flag a singleton? Then the dump flags them all. */
static int has_flags(const struct hd__classtab *ct)
{
	size_t i;

	for (i = 0; i < ct->count; i++)
		if (ct->v[i].type && is_single(&ct->v[i]))
			return 1;
	return 0;
}

/* The class or module a singleton is attached to, or NULL. */
static struct hd__class *attached_mod(const struct hd__classtab *ct,
				      const struct hd__class *k)
{
	struct hd__class *a;

	if (!is_single(k) || !k->attached || !is_mod(k->attached_type))
		return NULL;
	a = entry(ct, k->attached);
	return a && is_mod(a->type) ? a : NULL;
}

/*
 * Dumps before 3.1 flag no singleton. In 3.0 singletons also have no
 * name, and are recognised so: a metaclass is the class pointer of a
 * class or module (a class's class pointer is its metaclass, a
 * module's is Module unless it has a singleton class), when it has no
 * name (Class and Module have one; so has every class of a dump before
 * 3.0, where Ruby names a singleton after its real class, which is
 * kept). And an unnamed class whose class pointer is the metaclass of
 * another, named class is the singleton class of an instance of it (a
 * singleton points at the metaclass of its real class; an anonymous
 * class at its own metaclass, which is attached to itself).
 */
static void detect_singletons(struct hd__classtab *ct)
{
	struct hd__class *k, *b;
	size_t i;

	for (i = 0; i < ct->count; i++) {
		if (!is_mod(ct->v[i].type) || !ct->v[i].klass)
			continue;
		k = entry(ct, ct->v[i].klass);
		if (k && k->type == HD_T_CLASS && k->name == HD_STR_NONE)
			k->flags |= HD__CF_SINGLETON;
	}
	for (i = 0; i < ct->count; i++) {
		struct hd__class *c = &ct->v[i];

		if (c->type != HD_T_CLASS || is_single(c) ||
		    c->name != HD_STR_NONE || !c->klass)
			continue;
		k = entry(ct, c->klass);
		b = k ? attached_mod(ct, k) : NULL;
		if (b && b != c && !is_single(b) && b->name != HD_STR_NONE)
			c->flags |= HD__CF_SINGLETON;
	}
}

/* The first superclass of c that is not an ICLASS, or NULL. */
static struct hd__class *real_super(const struct hd__classtab *ct,
				    const struct hd__class *c)
{
	struct hd__class *n = c->superclass ? entry(ct, c->superclass) : NULL;
	int steps = 0;

	while (n && n->type == HD_T_ICLASS && ++steps < MAX_ICLASS)
		n = n->superclass ? entry(ct, n->superclass) : NULL;
	return n && n->type != HD_T_ICLASS ? n : NULL;
}

/*
 * Can class x be the object k is the metaclass of? The superclass of a
 * metaclass is the metaclass of the superclass, so the class pointer of
 * x's superclass must be k's superclass. 1 yes, 0 no, -1 unknown (no
 * superclass fields: before 3.1).
 */
static int plausible(const struct hd__classtab *ct, const struct hd__class *x,
		     const struct hd__class *k)
{
	const struct hd__class *xs = real_super(ct, x);
	const struct hd__class *ks = real_super(ct, k);

	if (!ks)
		return -1;
	if (!xs)
		return x->superclass ? -1 : !is_single(ks);
	return xs->klass == ks->address;
}

/*
 * The metaclass of Class's metaclass (and its own metaclasses) is the
 * class pointer of every metaclass without a metaclass of its own, so
 * the first candidate seen may be the wrong one. With superclass fields
 * (3.1+) the right one can be told apart.
 */
static void fix_metaclasses(struct hd__classtab *ct)
{
	struct hd__class *x, *k, *a;
	size_t i;

	for (i = 0; i < ct->count; i++) {
		x = &ct->v[i];
		if (x->type != HD_T_CLASS || !x->klass)
			continue;
		k = entry(ct, x->klass);
		if (!k || k == x || !is_single(k) ||
		    k->attached == x->address ||
		    (k->attached && !is_mod(k->attached_type)))
			continue;
		a = k->attached ? entry(ct, k->attached) : NULL;
		if (a && !is_single(a))
			continue; /* a class that is no singleton is right */
		if ((!a || plausible(ct, a, k) == 0) &&
		    plausible(ct, x, k) == 1) {
			k->attached = x->address;
			k->attached_type = x->type;
		}
	}
}

/* Pass 1: classes and modules that are not singletons. */
static int name_plain(struct hd__classtab *ct, struct sbuf *b)
{
	size_t i;

	for (i = 0; i < ct->count; i++) {
		struct hd__class *c = &ct->v[i];

		if (!is_mod(c->type) || is_single(c))
			continue;
		if (c->name != HD_STR_NONE) {
			c->display = c->name;
		} else {
			b->len = 0;
			if (sb_str(b, c->type == HD_T_MODULE ? "#<Module:" :
							      "#<Class:") ||
			    sb_hex(b, c->address) || sb_str(b, ">") ||
			    intern_sb(ct, b, &c->display))
				return HD_ENOMEM;
		}
		c->flags |= HD__CF_DONE;
	}
	return 0;
}

/*
 * The real name of a singleton whose superclass chain broke at c: the
 * real_class_name Ruby 3.1+ writes; the name Ruby up to 2.7 gives (that
 * of the real class); Class or Module for the singleton of a class or
 * module; for the singleton of another object, the class whose
 * metaclass c's class pointer is (Ruby points a singleton at the
 * metaclass of its real class).
 */
static uint32_t real_fallback(struct hd__classtab *ct, struct hd__class *c)
{
	struct hd__class *k, *b;
	uint32_t id;

	if (c->real_name != HD_STR_NONE)
		return c->real_name;
	if (c->name != HD_STR_NONE && c->type != HD_T_ICLASS)
		return c->name;
	if (c->type == HD_T_ICLASS || !c->attached)
		return HD_STR_NONE;
	if (is_mod(c->attached_type)) {
		if (hd__intern_put(ct->strs, c->attached_type == HD_T_CLASS ?
						     "Class" : "Module",
				   c->attached_type == HD_T_CLASS ? 5 : 6, &id))
			return HD_STR_NONE;
		return id;
	}
	k = c->klass ? entry(ct, c->klass) : NULL;
	b = k ? attached_mod(ct, k) : NULL;
	if (b && b != c && !is_single(b) && (b->flags & HD__CF_DONE))
		return b->display;
	return HD_STR_NONE;
}

/*
 * Pass 2: the real name of c, memoised on every entry of the walk (they
 * all share it). RESOLVING marks the walk, so a loop ends it.
 */
static void name_real(struct hd__classtab *ct, struct hd__class *e)
{
	struct hd__class *c = e, *n;
	uint32_t r;
	size_t steps = 0;

	for (;;) {
		if (c->flags & HD__CF_REALDONE) {
			r = c->real;
			break;
		}
		if (!is_single(c) && c->type != HD_T_ICLASS) {
			r = c->display;
			break;
		}
		c->flags |= HD__CF_RESOLVING;
		n = c->superclass ? entry(ct, c->superclass) : NULL;
		if (!n || (n->flags & HD__CF_RESOLVING) ||
		    ++steps > MAX_WALK) {
			r = real_fallback(ct, c);
			break;
		}
		c = n;
	}
	for (c = e; c && (c->flags & HD__CF_RESOLVING);
	     c = c->superclass ? entry(ct, c->superclass) : NULL) {
		c->flags &= ~HD__CF_RESOLVING;
		c->flags |= HD__CF_REALDONE;
		c->real = r;
	}
}

/* The innermost display name of a singleton chain, at c. */
static int name_core(struct hd__classtab *ct, struct hd__class *c,
		     struct sbuf *b, int object)
{
	b->len = 0;
	if (object && c->real != HD_STR_NONE) {
		if (sb_str(b, "#<Class:#<") || sb_id(b, ct->strs, c->real) ||
		    sb_str(b, ":") || sb_hex(b, c->attached) ||
		    sb_str(b, ">>"))
			return HD_ENOMEM;
		return 0;
	}
	if (sb_str(b, "#<Class:") || sb_hex(b, c->address) || sb_str(b, ">"))
		return HD_ENOMEM;
	return 0;
}

/*
 * Would nesting name id once more pass MAX_NEST levels or MAX_INNER
 * bytes? Then the singleton is named by its address instead, so that a
 * hostile chain of singletons cannot build ever longer names.
 */
static int too_deep(const struct hd__classtab *ct, uint32_t id)
{
	size_t n, depth = 0;
	const char *s = hd__intern_str(ct->strs, id, &n);

	if (n > MAX_INNER)
		return 1;
	while (n >= 8 && !memcmp(s, "#<Class:", 8) && depth < MAX_NEST) {
		s += 8;
		n -= 8;
		depth++;
	}
	return depth >= MAX_NEST;
}

/*
 * Pass 3: a singleton's display name, #<Class:X>, along its attached
 * chain: at most MAX_NEST levels, each named from the one below.
 */
static int name_single(struct hd__classtab *ct, struct hd__class *e,
		       struct sbuf *b)
{
	struct hd__class *path[MAX_NEST + 1], *c = e, *a;
	int depth = 0, object = 0, i;
	uint32_t inner;

	for (;;) {
		path[depth] = c;
		if (c->flags & HD__CF_DONE)
			break;
		c->flags |= HD__CF_RESOLVING;
		if (c->attached && !is_mod(c->attached_type)) {
			object = 1;
			a = NULL;
		} else {
			a = c->attached ? entry(ct, c->attached) : NULL;
		}
		if (!a || (a->flags & HD__CF_RESOLVING) || depth == MAX_NEST)
			break;
		c = a;
		depth++;
	}
	for (i = 0; i <= depth; i++)
		path[i]->flags &= ~HD__CF_RESOLVING;
	if (!(c->flags & HD__CF_DONE)) {
		if (name_core(ct, c, b, object) ||
		    intern_sb(ct, b, &c->display))
			return HD_ENOMEM;
		c->flags |= HD__CF_DONE;
	}
	inner = c->display;
	for (i = depth - 1; i >= 0; i--) {
		b->len = 0;
		if (too_deep(ct, inner)) {
			if (name_core(ct, path[i], b, 0))
				return HD_ENOMEM;
		} else if (sb_str(b, "#<Class:") || sb_id(b, ct->strs, inner) ||
			   sb_str(b, ">")) {
			return HD_ENOMEM;
		}
		if (intern_sb(ct, b, &path[i]->display))
			return HD_ENOMEM;
		path[i]->flags |= HD__CF_DONE;
		inner = path[i]->display;
	}
	return 0;
}

/* Pass 5: #<ICLASS:M>. */
static int name_iclass(struct hd__classtab *ct, struct hd__class *c,
		       struct sbuf *b)
{
	const struct hd__class *m = c->klass ? entry(ct, c->klass) : NULL;

	b->len = 0;
	if (sb_str(b, "#<ICLASS:"))
		return HD_ENOMEM;
	if (m && is_mod(m->type) && (m->flags & HD__CF_DONE)) {
		if (sb_id(b, ct->strs, m->display))
			return HD_ENOMEM;
	} else if (sb_hex(b, c->klass)) {
		return HD_ENOMEM;
	}
	if (sb_str(b, ">") || intern_sb(ct, b, &c->display))
		return HD_ENOMEM;
	c->real = c->display;
	c->flags |= HD__CF_DONE | HD__CF_REALDONE;
	return 0;
}

int hd__classtab_resolve(struct hd__classtab *ct)
{
	struct sbuf b = { NULL, 0, 0 };
	size_t i;
	int rc = 0;

	for (i = 0; i < ct->count; i++)
		ct->v[i].flags &= ~(HD__CF_DONE | HD__CF_REALDONE |
				    HD__CF_RESOLVING);
	if (!has_flags(ct))
		detect_singletons(ct);
	fix_metaclasses(ct);
	if ((rc = name_plain(ct, &b)))
		goto out;
	for (i = 0; i < ct->count; i++)
		if (is_mod(ct->v[i].type))
			name_real(ct, &ct->v[i]);
	for (i = 0; i < ct->count; i++) {
		struct hd__class *c = &ct->v[i];

		if (is_mod(c->type) && !(c->flags & HD__CF_DONE) &&
		    (rc = name_single(ct, c, &b)))
			goto out;
	}
	for (i = 0; i < ct->count; i++) {
		struct hd__class *c = &ct->v[i];

		if (is_mod(c->type) && c->real == HD_STR_NONE)
			c->real = c->display;
	}
	for (i = 0; i < ct->count; i++)
		if (ct->v[i].type == HD_T_ICLASS &&
		    (rc = name_iclass(ct, &ct->v[i], &b)))
			goto out;
out:
	hd__free(b.p, b.cap);
	return rc;
}

/* ---- object class names ---- */

struct fmt {
	char *buf;
	size_t size, len;
};

static void put(struct fmt *f, const char *s, size_t n)
{
	if (f->len < f->size) {
		size_t room = f->size - f->len;

		memcpy(f->buf + f->len, s, n < room ? n : room);
	}
	f->len += n;
}

static void puts_(struct fmt *f, const char *s)
{
	put(f, s, strlen(s));
}

static void prefixed(struct fmt *f, const char *what, const char *aux,
		     size_t aux_len)
{
	puts_(f, what);
	if (aux && aux_len) {
		put(f, "/", 1);
		put(f, aux, aux_len);
	}
}

static int is_plain_object(const char *s, size_t n)
{
	return (n == 6 && !memcmp(s, "Object", 6)) ||
	       (n == 11 && !memcmp(s, "BasicObject", 11)) ||
	       (n == 4 && !memcmp(s, "Data", 4));
}

size_t hd__class_name_fmt(char *buf, size_t size, int type, uint64_t klass,
			  const char *real, size_t real_len, const char *aux,
			  size_t aux_len, int *is_real)
{
	struct fmt f = { buf, size ? size - 1 : 0, 0 };
	char tmp[40];

	if (is_real)
		*is_real = 0;
	if (type == HD_T_IMEMO) {
		prefixed(&f, "IMEMO", aux, aux_len);
	} else if (type == HD_T_NODE) {
		prefixed(&f, "NODE", aux, aux_len);
	} else if (type == HD_T_NONE) {
		puts_(&f, "(free slot)");
	} else if (!klass && type == HD_T_DATA && aux && aux_len) {
		/* a VM table (Ruby 4.0's interned strings, "VM/concurrent_set"),
		 * named by its struct as the class-less DATA below */
		prefixed(&f, "DATA", aux, aux_len);
	} else if (!klass) {
		puts_(&f, "(hidden ");
		puts_(&f, hd_type_name(type));
		puts_(&f, ")");
	} else if (type == HD_T_DATA &&
		   (!real || is_plain_object(real, real_len))) {
		prefixed(&f, "DATA", aux, aux_len);
	} else if (!real) {
		snprintf(tmp, sizeof(tmp), "#<unknown:0x%llx>",
			 (unsigned long long)klass);
		puts_(&f, tmp);
	} else {
		put(&f, real, real_len);
		if (is_real)
			*is_real = 1;
	}
	if (size)
		buf[f.len < f.size ? f.len : f.size] = '\0';
	return f.len;
}

int hd__object_class_name(const struct hd__classtab *ct,
			  struct hd__intern *strs, int type, uint64_t klass,
			  hd_str aux, uint32_t *id_out)
{
	const struct hd__class *c = NULL;
	const char *real = NULL;
	size_t rl = 0, n;
	char small[256], *p = small;
	int is_real, rc;

	if (klass && type != HD_T_IMEMO && type != HD_T_NODE &&
	    type != HD_T_NONE)
		c = entry(ct, klass);
	if (c && c->real != HD_STR_NONE)
		real = hd__intern_str(ct->strs, c->real, &rl);
	n = hd__class_name_fmt(small, sizeof(small), type, klass, real, rl,
			       aux.ptr, aux.len, &is_real);
	if (is_real && strs == ct->strs) {
		*id_out = c->real;
		return 0;
	}
	if (n >= sizeof(small)) {
		if (n == SIZE_MAX || !(p = hd__malloc(n + 1)))
			return HD_ENOMEM;
		hd__class_name_fmt(p, n + 1, type, klass, real, rl, aux.ptr,
				   aux.len, NULL);
	}
	rc = hd__intern_put(strs, p, n, id_out);
	if (p != small)
		hd__free(p, n + 1);
	return rc;
}

/* ---- dumper objects and features ---- */

static int span_is(hd_str s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len == n && s.ptr && !memcmp(s.ptr, lit, n);
}

static int span_ends(hd_str s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len >= n && s.ptr && !memcmp(s.ptr + s.len - n, lit, n);
}

int hd__is_dumper_object(const hd_record *rec)
{
	if (rec->type == HD_T_DATA &&
	    span_is(rec->struct_name, "ObjectTracing/allocation_info_tracer"))
		return 1;
	if ((rec->has & HD_HAS_METHOD) && (span_is(rec->method, "dump_all") ||
					   span_is(rec->method, "_dump_all")))
		return 1;
	if ((rec->has & HD_HAS_FILE) && (span_ends(rec->file, "/objspace.rb") ||
					 span_is(rec->file, "objspace.rb")))
		return 1;
	return 0;
}

/* Does the record's line contain lit? memchr(3) finds the candidates by
 * lit's first '_' (rare in a dump line, unlike its leading quote). */
static int text_has(const hd_record *rec, const char *lit)
{
	size_t n = strlen(lit), i, a;
	const char *u = strchr(lit, '_'), *p, *end;

	if (!rec->text || rec->text_len < n)
		return 0;
	a = u ? (size_t)(u - lit) : 0;
	end = rec->text + rec->text_len - (n - a - 1);
	for (i = a; (p = memchr(rec->text + i, lit[a],
				(size_t)(end - (rec->text + i))));
	     i = (size_t)(p - rec->text) + 1)
		if (!memcmp(p - a, lit, n))
			return 1;
	return 0;
}

/* The "ruby_version":"X.Y.Z" a ROOT record of the gem's carries, as
 * HD_FEAT_VERSION_MASK bits; 0 when none, or not three small numbers. */
static uint32_t named_version(const hd_record *rec)
{
	static const char key[] = "\"ruby_version\":\"";
	const char *p, *end;
	unsigned v[3] = { 0, 0, 0 }, i;
	static const unsigned max[3] = { 15, 63, 63 };

	if (!text_has(rec, key))
		return 0;
	end = rec->text + rec->text_len;
	for (p = rec->text; p + sizeof(key) - 1 <= end; p++)
		if (!memcmp(p, key, sizeof(key) - 1))
			break;
	p += sizeof(key) - 1;
	for (i = 0; i < 3; i++) {
		const char *start = p;

		while (p < end && *p >= '0' && *p <= '9' && v[i] <= max[i])
			v[i] = v[i] * 10 + (unsigned)(*p++ - '0');
		if (p == start || v[i] > max[i] || p >= end ||
		    *p != (i < 2 ? '.' : '"'))
			return 0;
		p++;
	}
	if (!v[0])
		return 0;
	return ((v[0] << 12) | (v[1] << 6) | v[2]) << HD_FEAT_VERSION_SHIFT;
}

static uint32_t root_category_features(const hd_record *rec)
{
	if (span_is(rec->root, "global_symbols"))
		return HD_FEAT_GEN_SYMBOLS;
	if (span_is(rec->root, "object_id"))
		return HD_FEAT_OBJECT_ID_ROOT;
	if (span_is(rec->root, "finalizers"))
		return HD_FEAT_FINALIZER_ROOT;
	/* 3.4's GC marks its finalizer and object id tables as "objspace"
	 * (dump_all's walk of the roots starts after it, so its dumps have
	 * none; another walker's may) */
	if (span_is(rec->root, "objspace"))
		return HD_FEAT_OBJSPACE_ROOT;
	return 0;
}

static uint32_t root_features(const hd_record *rec)
{
	return root_category_features(rec) | named_version(rec);
}

/* (what it reads of an object record: hd__record_features_key()) */
uint32_t hd__record_features(const hd_record *rec)
{
	return hd__record_features_new(rec, 0);
}

uint32_t hd__record_features_new(const hd_record *rec, uint32_t known)
{
	uint32_t f = 0;

	if (rec->origin & HD_O_MEMPROF)
		return HD_FEAT_MEMPROF |
		       ((rec->has & HD_HAS_FILE) ? HD_FEAT_TRACED : 0);
	if (rec->kind == HD_REC_ROOT)
		return root_features(rec);
	if (rec->kind == HD_REC_SHAPE)
		return HD_FEAT_SHAPES;
	if (rec->kind != HD_REC_OBJECT)
		return 0;
	if (rec->type == HD_T_NODE)
		f |= HD_FEAT_NODE;
	if (rec->type == HD_T_IMEMO) {
		f |= HD_FEAT_IMEMO;
		if (rec->imemo_type.len)
			f |= HD_FEAT_IMEMO_TYPE;
		if (!(known & HD_FEAT_CALLCACHE_ID) &&
		    text_has(rec, "\"called_id\":"))
			f |= HD_FEAT_CALLCACHE_ID;
	}
	if (rec->has & HD_HAS_SUPERCLASS)
		f |= HD_FEAT_SUPERCLASS;
	if (rec->has & HD_HAS_SLOT_SIZE)
		f |= HD_FEAT_SHAPES;
	if (rec->bits & HD_B_CHILLED)
		f |= HD_FEAT_CHILLED;
	if (rec->has & (HD_HAS_AGE | HD_HAS_OBJECT_ID))
		f |= HD_FEAT_INT_FLAGS;
	if (rec->has & HD_HAS_GENERATION) {
		f |= HD_FEAT_TRACED;
		if (rec->has & HD_HAS_METHOD)
			f |= HD_FEAT_METHOD_TRACED;
	}
	return f;
}

/* ---- versions ---- */

static const char *const versions[] = {
	"2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7",
	"3.0", "3.1", "3.2", "3.3", "3.4", "4.0",
};

enum { V21, V22, V23, V24, V25, V26, V27, V30, V31, V32, V33, V34, V40 };

#define NVERS ((int)(sizeof(versions) / sizeof(versions[0])))

static void at_least(int *lo, int v)
{
	if (*lo < v)
		*lo = v;
}

static void at_most(int *hi, int v)
{
	if (*hi > v)
		*hi = v;
}

/*
 * Narrows [lo, hi] with what the features prove. Absences count only
 * when imemo_type shows a 2.5+ heap: every 3.2+ object line has
 * slot_size, every 4.0 line integer flags and, unless the dump is
 * partial, some 3.1+ class a superclass.
 */
static void narrow(uint32_t f, int *lo, int *hi)
{
	if (f & HD_FEAT_NODE)
		at_most(hi, V24);
	if (f & HD_FEAT_IMEMO)
		at_least(lo, V23);
	if (f & HD_FEAT_IMEMO_TYPE)
		at_least(lo, V25);
	else if (f & HD_FEAT_IMEMO)
		at_most(hi, V24);
	if (f & HD_FEAT_SUPERCLASS)
		at_least(lo, V31);
	if (f & HD_FEAT_SHAPES)
		at_least(lo, V32);
	if (f & HD_FEAT_CHILLED)
		at_least(lo, V34);
	if (f & (HD_FEAT_INT_FLAGS | HD_FEAT_GEN_SYMBOLS))
		at_least(lo, V40);
	if (f & HD_FEAT_OBJECT_ID_ROOT) {
		at_least(lo, V27);
		at_most(hi, V33);
	}
	if (f & HD_FEAT_FINALIZER_ROOT)
		at_most(hi, V33);
	if (f & HD_FEAT_OBJSPACE_ROOT)
		at_least(lo, V34);
	if (f & HD_FEAT_CALLCACHE_ID)
		at_least(lo, V33);
	if (f & HD_FEAT_IMEMO_TYPE) {
		if (!(f & HD_FEAT_SHAPES))
			at_most(hi, V31);
		if (!(f & (HD_FEAT_SUPERCLASS | HD_FEAT_PARTIAL)))
			at_most(hi, V30);
		if (!(f & HD_FEAT_INT_FLAGS))
			at_most(hi, V34);
	}
	/* a whole 3.2+ heap: 3.3 caches name their method, 3.4 literals
	 * are chilled */
	if ((f & HD_FEAT_IMEMO_TYPE) && (f & HD_FEAT_SHAPES) &&
	    !(f & HD_FEAT_PARTIAL)) {
		if (!(f & HD_FEAT_CALLCACHE_ID))
			at_most(hi, V32);
		if (!(f & HD_FEAT_CHILLED))
			at_most(hi, V33);
	}
}

const char *hd_features_ruby(char *buf, size_t size, uint32_t features)
{
	int lo = 0, hi = NVERS - 1;

	if (!buf || !size)
		return buf;
	if (features & HD_FEAT_MEMPROF) {
		snprintf(buf, size, "memprof (Ruby 1.8)");
		return buf;
	}
	if (features & HD_FEAT_VERSION_MASK) {
		uint32_t v = features >> HD_FEAT_VERSION_SHIFT;

		snprintf(buf, size, "%u.%u.%u", (unsigned)(v >> 12),
			 (unsigned)((v >> 6) & 63), (unsigned)(v & 63));
		return buf;
	}
	narrow(features, &lo, &hi);
	if (lo > hi || (lo == 0 && hi == NVERS - 1))
		snprintf(buf, size, "unknown");
	else if (lo == hi && hi < NVERS - 1)
		snprintf(buf, size, "%s", versions[lo]);
	else if (hi == NVERS - 1)
		snprintf(buf, size, "%s or later", versions[lo]);
	else if (lo == 0)
		snprintf(buf, size, "%s or earlier", versions[hi]);
	else
		snprintf(buf, size, "%s to %s", versions[lo], versions[hi]);
	return buf;
}

/* ---- merging (the parallel scan) ---- */

static int move_name(struct hd__classtab *dst, const struct hd__classtab *src,
		     uint32_t id, uint32_t *out)
{
	const char *s;
	size_t n;

	*out = HD_STR_NONE;
	if (id == HD_STR_NONE)
		return 0;
	s = hd__intern_str(src->strs, id, &n);
	return hd__intern_put(dst->strs, s, n, out);
}

/*
 * Adds src, the table of the records that follow those of dst, to dst,
 * as if dst had been fed src's records too: entries keep their order of
 * first appearance, the first record of an address wins, and an attached
 * object follows add_candidate's rule (the first one, a weak one giving
 * way to the first that is not).
 */
int hd__classtab_merge(struct hd__classtab *dst,
		       const struct hd__classtab *src)
{
	size_t i;

	for (i = 0; i < src->count; i++) {
		const struct hd__class *e = &src->v[i];
		struct hd__class *d = slot_for(dst, e->address);

		if (!d)
			return HD_ENOMEM;
		if (e->type && !d->type) {
			if (move_name(dst, src, e->name, &d->name) ||
			    move_name(dst, src, e->real_name, &d->real_name))
				return HD_ENOMEM;
			d->type = e->type;
			d->klass = e->klass;
			d->superclass = e->superclass;
			d->flags |= e->flags & HD__CF_SINGLETON;
		}
		if (e->attached &&
		    (!d->attached ||
		     ((d->flags & CF_WEAK) && !(e->flags & CF_WEAK)))) {
			d->attached = e->attached;
			d->attached_type = e->attached_type;
			d->flags = (d->flags & ~CF_WEAK) | (e->flags & CF_WEAK);
		}
	}
	return 0;
}
