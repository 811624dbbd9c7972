/*
 * hd_refnames.c - reference names ("ref_names", man 5 heapdump-dump): for
 * the object being written, the name of each reference the walk wrote,
 * where the VM knows it through public functions.
 *
 * Two phases:
 *  - hdx_names_prepare, before the walk (it may allocate a few Ruby
 *    objects, which the dump then holds like the wrapper's own): the
 *    constants of every class and module (rb_mod_const_at, malloc only;
 *    autoloads and undefined constants skipped, so nothing is loaded),
 *    the fiber-locals and thread variables of every thread, the global
 *    variables (read through their getter, except the built-in ones
 *    whose getter has side effects or a frame-local value: SKIP_GLOBALS).
 *    the locals every Proc (of Ruby code) and Binding captured, through
 *    MRI's own Proc#binding and Binding#local_variables (see
 *    "closures" below). GC is disabled meanwhile (rb_gc_disable first
 *    ends a sweep under way), so no object the heap scan found is freed
 *    while the preparation allocates.
 *    Each name is kept, malloc'ed, under the object that holds the value.
 *  - hdx_names_object, inside the walk (no Ruby allocation, no Ruby
 *    call, no raise): the names known from the object itself, in the
 *    order MRI marks them (ivars, hash entries, array elements, struct
 *    members, class structure), plus the prepared ones. Each reference
 *    is matched by identity, in order with a cursor, else through a
 *    lookup table: several references to one object keep their own
 *    names as long as the order is the marking order.
 *
 * Names are on by default: they are what a retention path is read by
 * (`LeakyCache ::CACHE -> Hash [4] -> Request`), every JSON reader
 * ignores the field, the references are byte-identical to names: false,
 * and they cost little (tests/bench/README.md).
 *
 * The preparation calls MRI's own methods only: no autoload runs, and
 * Warning[:deprecated] is off meanwhile (lib/heapdump.rb), so
 * Warning.warn (user code) does not run either; Thread#keys and the like
 * are called only when they are MRI's own (rb_method_basic_definition_p).
 * Its calls do enter
 * MRI's global call cache, which the vm ROOT record marks: that record
 * may list a few call caches more than a names: false dump of the same
 * heap. What it allocates (Arrays of keys, MRI's temporary strings, the
 * closures' Bindings) is recorded by a NEWOBJ hook and left out of the
 * dump with the references to it. Closure locals: Binding#
 * local_variable_get of a block parameter not yet in its slot writes it
 * there, which changes the env's references under the scan, so a value
 * is looked for from past the last match, then before it. Linear in the
 * Procs: an env done once is not done again, nor its outer envs.
 *
 * Not named: method entries (the only public route,
 * Module#instance_method, writes the module's method cache: the dump
 * would show references the program never made); the singleton class
 * (the class word, never a reference). A C extension's global with a
 * getter of its own is read through that getter. On 4.0 a class's ivars
 * are held by its IMEMO/fields object, whose record names them (from
 * rb_ivar_foreach on its owner, its class).
 */
#include "hd_ext.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef HD_WALKER

enum {
	NM_NONE,
	NM_INDEX,   /* array element: an integer */
	NM_TEXT,    /* s, n: the whole name */
	NM_IVAR,    /* s, n: "@x" */
	NM_CONST,   /* "::" s */
	NM_STRKEY,  /* "[\"" s "\"]" */
	NM_SYMKEY,  /* "[:" s "]" */
	NM_INTKEY,  /* "[" i "]" */
	NM_KEY,     /* "[key]" */
	NM_VALUE,   /* "[value]" */
	NM_MEMBER,  /* "." s */
	NM_SUPER,   /* "(superclass)" */
	NM_INCLUDE  /* "(include)" */
};
/* or'ed into kind: s is printable ASCII without " and \, written as is */
#define NM_PLAIN 0x100

struct hdx_name {
	VALUE target;
	int kind;
	const char *s;
	long n;        /* length of s, or the index / integer key */
};

/* prepared names of one holder */
struct held {
	size_t n;
	struct hdx_name e[];
};

struct hdx_names {
	struct hdx_table held;        /* holder VALUE -> struct held * */
	struct hdx_name *globals;     /* global_tbl root names */
	size_t nglobals, capglobals;
	/* the current object's names */
	struct hdx_name *list;
	size_t len, cap;
	struct hdx_table lookup;      /* target -> first entry, built lazily */
	int have_lookup;
	size_t cursor;
	VALUE array;                  /* an array matched by index, or 0 */
	long acursor;
	int err;
	char *text;                   /* the name being formatted */
	size_t textcap;
	ID id_members;
	/* ID -> its name, for the walk (rb_id2str is a table lookup) */
	struct idc {
		ID id;
		const char *s;
		long n;
		int plain;
	} idc[4096];
	/* the objects the preparation allocated (the Arrays of
	 * global_variables and Thread#keys, MRI's temporary strings...),
	 * seen by a NEWOBJ hook: the walk leaves them, and the references
	 * to them, out of the dump, which shows the heap as it was */
	struct hdx_table own;
	uint64_t bloom[HD_BLOOM_WORDS]; /* a quick "certainly not" for own */
	/* the ivar names of T_OBJECTs by position, per layout (layout_key):
	 * learned from one object through rb_ivar_foreach, then read off the
	 * fields of the others without a call (see object_ivars) */
	struct hdx_table layouts;     /* key -> struct layout * */
	struct ivrec {
		ID id;
		VALUE val;
	} *rec;                       /* what rb_ivar_foreach gave */
	size_t nrec, caprec;
	VALUE obj, klass, key;        /* the current T_OBJECT, its layout key */
	int fast;                     /* its names came from its layout */
	struct hdx_table envs;        /* the envs the closures' names were looked up in */
};

/* a position of a layout: the ivar's name as ivar_i would add it */
#define LN_KNOWN 1u
#define LN_NAMED 2u  /* an "@name": added for a heap value */
struct lname {
	ID id;
	const char *s;
	long n;
	int kind;
	unsigned flags;
};

struct layout {
	long n;              /* positions */
	struct lname e[];
};

/* ---- growing the lists (malloc only) ---- */

static inline int push(struct hdx_names *nm, struct hdx_name **list, size_t *len,
		size_t *cap, VALUE target, int kind, const char *s, long n)
{
	if (RB_SPECIAL_CONST_P(target))
		return 0;
	if (RB_UNLIKELY(*len == *cap)) {
		size_t c = *cap ? *cap * 2 : 16;
		struct hdx_name *p = realloc(*list, c * sizeof(*p));

		if (!p) {
			nm->err = 1;
			return -1;
		}
		*list = p;
		*cap = c;
	}
	(*list)[*len].target = target;
	(*list)[*len].kind = kind;
	(*list)[*len].s = s;
	(*list)[(*len)++].n = n;
	return 0;
}

static inline void add(struct hdx_names *nm, VALUE target, int kind, const char *s,
		long n)
{
	push(nm, &nm->list, &nm->len, &nm->cap, target, kind, s, n);
}

/* the bytes written as is in a JSON string: printable ASCII but " and \\
 * (filled by hdx_names_new) */
static unsigned char PLAIN[256];

static void plain_init(void)
{
	int c;

	for (c = 0; c < 256; c++)
		PLAIN[c] = c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
}

static int plain_text(const char *s, long n)
{
	long i;

	for (i = 0; i < n; i++)
		if (!PLAIN[(unsigned char)s[i]])
			return 0;
	return 1;
}

/* The name of an ID, from a direct-mapped cache: NULL if none. */
static const struct idc *id_text(struct hdx_names *nm, ID id)
{
	struct idc *c = &nm->idc[(size_t)((id * 0x9e3779b97f4a7c15ULL) >> 52)];
	VALUE str;

	if (c->id == id && c->s)
		return c;
	str = rb_id2str(id);
	if (!str)
		return NULL;
	c->id = id;
	c->s = RSTRING_PTR(str);
	c->n = RSTRING_LEN(str);
	c->plain = plain_text(c->s, c->n);
	return c;
}

static void add_id(struct hdx_names *nm, VALUE target, int kind, ID id)
{
	const struct idc *c = id_text(nm, id);

	if (c)
		add(nm, target, kind | (c->plain ? NM_PLAIN : 0), c->s, c->n);
}

/* A Symbol's ID without making a dynamic symbol permanent: 0 if none */
static ID static_sym_id(VALUE sym)
{
	return RB_STATIC_SYM_P(sym) ? RB_SYM2ID(sym) : 0;
}

/* ---- before the walk ---- */

static size_t bloom_bit(VALUE v)
{
	return HD_BLOOM_BIT(v);
}

const uint64_t *hdx_names_bloom(const struct hdx_names *nm)
{
	return nm->bloom;
}

/* NEWOBJ during the preparation: malloc only */
static struct hdx_names *preparing;

static void newobj_i(VALUE tpval, void *data)
{
	VALUE obj = rb_tracearg_object(rb_tracearg_from_tracepoint(tpval));
	struct hdx_names *nm = preparing;
	size_t b;

	if (!nm)
		return;
	if (!hdx_table_put(&nm->own, obj)) {
		nm->err = 1;
		return;
	}
	b = bloom_bit(obj);
	nm->bloom[b / 64] |= 1ULL << (b % 64);
}

int hdx_names_own_p(const struct hdx_names *nm, VALUE v)
{
	size_t b = bloom_bit(v);

	if (!(nm->bloom[b / 64] & (1ULL << (b % 64))))
		return 0;
	/* the VM's caches and tables it made outlive it (hdx_vm_cache_p:
	 * asked now, when a T_DATA has its type) */
	return hdx_table_get(&nm->own, v) != NULL && !hdx_vm_cache_p(v);
}

/* A copy of s (malloc), kept for the whole dump in held lists. */
static char *dup_text(const char *a, const char *s, size_t n, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + n + lb + 1);

	if (!p)
		return NULL;
	memcpy(p, a, la);
	memcpy(p + la, s, n);
	memcpy(p + la + n, b, lb);
	p[la + n + lb] = 0;
	return p;
}

static void hold(struct hdx_names *nm, VALUE holder, VALUE target,
		 const char *a, const char *s, size_t n, const char *b)
{
	void **slot;
	struct held *h, *g;
	char *text;

	if (RB_SPECIAL_CONST_P(target) || RB_SPECIAL_CONST_P(holder))
		return;
	if (!(slot = hdx_table_put(&nm->held, holder)) ||
	    !(text = dup_text(a, s, n, b))) {
		nm->err = 1;
		return;
	}
	h = *slot;
	/* capacity: powers of two from 4 */
	if (!h || (h->n >= 4 && !(h->n & (h->n - 1)))) {
		size_t cap = h ? h->n * 2 : 4;

		if (!(g = realloc(h, sizeof(*g) + cap * sizeof(g->e[0])))) {
			free(text);
			nm->err = 1;
			return;
		}
		if (!h)
			g->n = 0;
		*slot = h = g;
	}
	h->e[h->n].target = target;
	h->e[h->n].n = (long)strlen(text);
	h->e[h->n].kind = NM_TEXT | (plain_text(text, h->e[h->n].n) ? NM_PLAIN : 0);
	h->e[h->n++].s = text;
}

static int sym_text(VALUE sym, const char **s, long *n)
{
	VALUE str;

	if (!RB_SYMBOL_P(sym))
		return 0;
	str = rb_sym2str(sym);
	*s = RSTRING_PTR(str);
	*n = RSTRING_LEN(str);
	return 1;
}

struct const_arg {
	struct hdx_names *nm;
	VALUE mod;
};

static int const_i(st_data_t key, st_data_t val, st_data_t arg)
{
	struct const_arg *c = (struct const_arg *)arg;
	ID id = (ID)key;
	VALUE v;
	const char *name;

	/* undefined (an autoload whose feature is loaded) or a pending
	 * autoload: reading it would load code, skip it */
	if (!rb_const_defined_at(c->mod, id) || !NIL_P(rb_autoload_p(c->mod, id)))
		return ST_CONTINUE;
	v = rb_const_get_at(c->mod, id);
	if (!RB_SPECIAL_CONST_P(v) && (name = rb_id2name(id)))
		hold(c->nm, c->mod, v, "::", name, strlen(name), "");
	return ST_CONTINUE;
}

/* the classes, modules and threads of the heap, found without allocating;
 * and apart, the Procs and Bindings (closures) */
struct mods {
	VALUE *v;
	size_t n, cap;
	VALUE *c;
	size_t nc, capc;
	int err;
};

int hdx_push_value(VALUE **v, size_t *n, size_t *cap, VALUE x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		VALUE *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* a Proc or a Binding (not hidden: its methods can be called) */
static int closure_p(VALUE v)
{
	if (!RTYPEDDATA_P(v) || !RBASIC_CLASS(v))
		return 0;
	if (rb_obj_is_proc(v))
		return 1;
	return RTYPEDDATA_TYPE(v)->wrap_struct_name &&
	       !strcmp(RTYPEDDATA_TYPE(v)->wrap_struct_name, "binding");
}

static int thread_p(VALUE v)
{
	return RB_BUILTIN_TYPE(v) == RUBY_T_DATA && RTYPEDDATA_P(v) &&
	       RTYPEDDATA_TYPE(v)->wrap_struct_name &&
	       !strcmp(RTYPEDDATA_TYPE(v)->wrap_struct_name, "VM/thread");
}

static int mods_i(void *start, void *end, size_t stride, void *data)
{
	struct mods *m = data;
	VALUE v;

	for (v = (VALUE)start; v != (VALUE)end; v += stride) {
		int t;

		if (!RBASIC(v)->flags)
			continue;
		t = RB_BUILTIN_TYPE(v);
		if (t == RUBY_T_DATA && closure_p(v)) {
			if (hdx_push_value(&m->c, &m->nc, &m->capc, v)) {
				m->err = 1;
				return 1;
			}
			continue;
		}
		if (t != RUBY_T_CLASS && t != RUBY_T_MODULE && !thread_p(v))
			continue;
		if (hdx_push_value(&m->v, &m->n, &m->cap, v)) {
			m->err = 1;
			return 1;
		}
	}
	return 0;
}

static void prepare_thread(struct hdx_names *nm, VALUE th);
static void prepare_closures(struct hdx_names *nm, const VALUE *c, size_t n);

static void prepare_heap(struct hdx_names *nm)
{
	struct mods m = { 0 };
	size_t i;

	rb_objspace_each_objects(mods_i, &m);
	if (m.err)
		nm->err = 1;
	for (i = 0; i < m.n && !nm->err; i++) {
		struct const_arg c = { nm, m.v[i] };
		st_table *tbl;

		if (RB_BUILTIN_TYPE(m.v[i]) == RUBY_T_DATA) {
			prepare_thread(nm, m.v[i]);
			continue;
		}
		tbl = rb_mod_const_at(m.v[i], NULL);

		if (tbl) {
			st_foreach(tbl, const_i, (st_data_t)&c);
			st_free_table(tbl);
		}
	}
	if (!nm->err)
		prepare_closures(nm, m.c, m.nc);
	free(m.v);
	free(m.c);
}

/* Built-in globals not read: a getter with side effects ($! $@ call
 * #backtrace, $FILENAME advances ARGF), or a value local to the frame or
 * thread of the dumper itself, not held by global_tbl. */
static const char *const SKIP_GLOBALS[] = {
	"$!", "$@", "$~", "$_", "$&", "$`", "$'", "$+", "$FILENAME",
	"$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", NULL
};

static int skip_global(const char *s, long n)
{
	int i;

	for (i = 0; SKIP_GLOBALS[i]; i++)
		if ((long)strlen(SKIP_GLOBALS[i]) == n &&
		    !memcmp(SKIP_GLOBALS[i], s, (size_t)n))
			return 1;
	return 0;
}

static void prepare_globals(struct hdx_names *nm)
{
	VALUE names = rb_f_global_variables();
	long i;

	for (i = 0; i < RARRAY_LEN(names) && !nm->err; i++) {
		const char *s;
		long n;
		VALUE v;
		size_t k;
		int seen = 0;
		char *text;

		if (!sym_text(RARRAY_AREF(names, i), &s, &n) || skip_global(s, n))
			continue;
		v = rb_gv_get(rb_id2name(SYM2ID(RARRAY_AREF(names, i))));
		if (RB_SPECIAL_CONST_P(v))
			continue;
		/* aliases ($" and $LOADED_FEATURES): keep the longest */
		for (k = 0; k < nm->nglobals; k++) {
			if (nm->globals[k].target == v) {
				seen = 1;
				if (nm->globals[k].n < n &&
				    (text = dup_text("", s, (size_t)n, ""))) {
					free((char *)nm->globals[k].s);
					nm->globals[k].s = text;
					nm->globals[k].n = n;
				}
			}
		}
		if (seen)
			continue;
		if (!(text = dup_text("", s, (size_t)n, "")) ||
		    push(nm, &nm->globals, &nm->nglobals, &nm->capglobals, v,
			 NM_TEXT, text, n)) {
			free(text);
			nm->err = 1;
		}
	}
	RB_GC_GUARD(names);
}

/* a method of the thread's class that is still MRI's own */
static int basic(VALUE obj, const char *name)
{
	return rb_method_basic_definition_p(CLASS_OF(obj), rb_intern(name));
}

/* Names the values of a thread's keys on each holder of holders (the
 * thread; its fiber or its hash of thread variables, which hold them
 * on some Rubies). */
static void name_keys(struct hdx_names *nm, VALUE th, VALUE keys,
		      const char *getter, const char *prefix,
		      const VALUE *holders, int nholders)
{
	long i;
	int h;

	if (!RB_TYPE_P(keys, T_ARRAY))
		return;
	for (i = 0; i < RARRAY_LEN(keys); i++) {
		VALUE key = RARRAY_AREF(keys, i), v;
		const char *s;
		long n;

		if (!sym_text(key, &s, &n))
			continue;
		v = rb_funcall(th, rb_intern(getter), 1, key);
		for (h = 0; h < nholders; h++)
			if (holders[h])
				hold(nm, holders[h], v, prefix, s, (size_t)n, "]");
	}
}

/* The fiber a thread references (its current one: the holder of the
 * fiber-locals from 3.3 on). */
static void fiber_i(VALUE ref, void *data)
{
	VALUE *fiber = data;

	if (!*fiber && RB_TYPE_P(ref, T_DATA) && RTYPEDDATA_P(ref) &&
	    RTYPEDDATA_TYPE(ref)->wrap_struct_name &&
	    !strcmp(RTYPEDDATA_TYPE(ref)->wrap_struct_name, "fiber"))
		*fiber = ref;
}

static void prepare_thread(struct hdx_names *nm, VALUE th)
{
	VALUE h[2] = { th, 0 };
	{

		rb_objspace_reachable_objects_from(th, fiber_i, &h[1]);
		if (!basic(th, "alive?") ||
		    rb_funcall(th, rb_intern("alive?"), 0) != Qtrue)
			return;
		if (basic(th, "keys") && basic(th, "[]"))
			name_keys(nm, th, rb_funcall(th, rb_intern("keys"), 0),
				  "[]", "thread[:", h, 2);
		/* thread variables: a Hash in the thread's hidden ivar
		 * "locals" (thread.c, 3.0 - 4.0), which holds the values */
		h[1] = rb_attr_get(th, rb_intern("locals"));
		if (!RB_TYPE_P(h[1], T_HASH))
			h[1] = 0;
		if (basic(th, "thread_variables") && basic(th, "thread_variable_get"))
			name_keys(nm, th,
				  rb_funcall(th, rb_intern("thread_variables"), 0),
				  "thread_variable_get", "thread_variable[:", h, 2);
	}
}

/* ---- closures: the locals a Proc or a Binding captured ----
 *
 * Binding#local_variables lists the locals of an environment and of its
 * outer ones, innermost first, each in the order of its iseq's local
 * table, which is also the order its IMEMO/env marks them (the locals,
 * then the frame's own words, itself, the outer env, the iseq): each
 * name's value is looked for in the current env from past the last match
 * on, else in the next outer env. An env seen once (several Procs of one
 * scope) is not done again, nor is any env outer to it. */

#define ENV_DEPTH 64

struct envrefs {
	VALUE env;
	VALUE *r;       /* its references, in marking order (itself left out) */
	size_t n, cap;
	VALUE prev;     /* the outer env, or 0 */
	int err;
};

static ID id_binding, id_local_variables, id_local_variable_get;

/* the class of the closures seen last and whether its methods are MRI's
 * own (basic() is a method lookup: once per class, not per closure) */
static VALUE last_proc_class, last_binding_class;
static int last_proc_ok, last_binding_ok;

struct closure {
	struct hdx_names *nm;
	VALUE obj;      /* the Proc or Binding */
	VALUE env;      /* its innermost env */
	struct envrefs *envs;
};

static int env_p(VALUE v)
{
	return RB_BUILTIN_TYPE(v) == RUBY_T_IMEMO && !strcmp(hdx_imemo_name(v), "env");
}

static void envref_i(VALUE ref, void *data)
{
	struct envrefs *e = data;

	if (ref == e->env)
		return;
	if (!e->prev && env_p(ref))
		e->prev = ref;
	if (hdx_push_value(&e->r, &e->n, &e->cap, ref))
		e->err = 1;
}

static int load_env(struct hdx_names *nm, struct envrefs *e, VALUE env)
{
	e->env = env;
	e->n = 0;
	e->prev = 0;
	rb_objspace_reachable_objects_from(env, envref_i, e);
	if (e->err)
		nm->err = 1;
	return e->err ? -1 : 0;
}

static int env_done(struct hdx_names *nm, VALUE env)
{
	return hdx_table_get(&nm->envs, env) != NULL;
}

/* The env of a Proc whose block is Ruby code (an IMEMO/iseq beside it),
 * or of a Binding: 0 for a Proc of C code or of a Symbol, and for a
 * Proc made from another Proc (the inner one is seen on its own). */
struct closref {
	VALUE env;
	int iseq;
};

static void closref_i(VALUE ref, void *data)
{
	struct closref *c = data;
	const char *t;

	if (RB_BUILTIN_TYPE(ref) != RUBY_T_IMEMO)
		return;
	t = hdx_imemo_name(ref);
	if (!strcmp(t, "env")) {
		if (!c->env)
			c->env = ref;
	} else if (!strcmp(t, "iseq")) {
		c->iseq = 1;
	}
}

/* under rb_protect: Proc#binding, Binding#local_variables and
 * #local_variable_get, each still MRI's own */
static VALUE closure_body(VALUE arg)
{
	struct closure *cl = (struct closure *)arg;
	struct hdx_names *nm = cl->nm;
	struct envrefs *envs = cl->envs;
	VALUE b = cl->obj, names;
	size_t k = 0, c = 0, j;
	long i;

	if (rb_obj_is_proc(b)) {
		if (CLASS_OF(b) != last_proc_class) {
			last_proc_class = CLASS_OF(b);
			last_proc_ok = basic(b, "binding");
		}
		if (!last_proc_ok)
			return Qnil;
		b = rb_funcall(b, id_binding, 0);
	}
	if (CLASS_OF(b) != last_binding_class) {
		last_binding_class = CLASS_OF(b);
		last_binding_ok = basic(b, "local_variables") &&
				  basic(b, "local_variable_get");
	}
	if (!last_binding_ok)
		return Qnil;
	names = rb_funcall(b, id_local_variables, 0);
	if (!RB_TYPE_P(names, T_ARRAY) || load_env(nm, &envs[0], cl->env))
		return Qnil;
	for (i = 0; i < RARRAY_LEN(names) && !nm->err; i++) {
		VALUE sym = RARRAY_AREF(names, i), v;
		const char *s;
		long n;

		if (!sym_text(sym, &s, &n))
			continue;
		v = rb_funcall(b, id_local_variable_get, 1, sym);
		if (RB_SPECIAL_CONST_P(v))
			continue;
		for (;;) {
			struct envrefs *e = &envs[k];
			size_t p;

			for (p = c; p < e->n && e->r[p] != v; p++)
				;
			/* before the cursor too: #local_variable_get of a block
			 * parameter not made a Proc yet writes it to its slot,
			 * so the env's references are no longer those loaded
			 * (issue 34, item 7: the first dump lost the locals
			 * after it, named by the next dump) */
			if (p == e->n)
				for (p = 0; p < c && p < e->n && e->r[p] != v; p++)
					;
			if (p < e->n && e->r[p] == v) {
				hold(nm, e->env, v, "", s, (size_t)n, "");
				if (p >= c)
					c = p + 1;
				break;
			}
			/* the local of an outer env: stop at one done before */
			if (!e->prev || k + 1 == ENV_DEPTH || env_done(nm, e->prev))
				goto out;
			if (load_env(nm, &envs[k + 1], e->prev))
				goto out;
			k++;
			c = 0;
		}
	}
out:
	for (j = 0; j <= k; j++)
		if (!hdx_table_put(&nm->envs, envs[j].env))
			nm->err = 1;
	RB_GC_GUARD(names);
	RB_GC_GUARD(b);
	return Qnil;
}

static void prepare_closures(struct hdx_names *nm, const VALUE *c, size_t n)
{
	struct envrefs envs[ENV_DEPTH];
	size_t i;

	memset(envs, 0, sizeof(envs));
	id_binding = rb_intern("binding");
	id_local_variables = rb_intern("local_variables");
	id_local_variable_get = rb_intern("local_variable_get");
	last_proc_class = last_binding_class = 0;
	for (i = 0; i < n && !nm->err; i++) {
		struct closref r = { 0, 0 };
		struct closure cl;
		int state = 0;

		rb_objspace_reachable_objects_from(c[i], closref_i, &r);
		if (!r.env || env_done(nm, r.env) ||
		    (rb_obj_is_proc(c[i]) && !r.iseq))
			continue;
		cl.nm = nm;
		cl.obj = c[i];
		cl.env = r.env;
		cl.envs = envs;
		rb_protect(closure_body, (VALUE)&cl, &state);
		if (state) {
			VALUE err = rb_errinfo();

			/* an isolated Proc, a numbered parameter...: no names;
			 * an interrupt goes on (rb_ensure ends the preparation) */
			if (!rb_obj_is_kind_of(err, rb_eStandardError)) {
				for (i = 0; i < ENV_DEPTH; i++)
					free(envs[i].r);
				rb_jump_tag(state);
			}
			rb_set_errinfo(Qnil);
		}
	}
	for (i = 0; i < ENV_DEPTH; i++)
		free(envs[i].r);
}

struct hdx_names *hdx_names_new(void)
{
	struct hdx_names *nm = calloc(1, sizeof(*nm));

	if (!nm)
		return NULL;
	if (hdx_table_init(&nm->held, 1024)) {
		free(nm);
		return NULL;
	}
	if (hdx_table_init(&nm->own, 256)) {
		hdx_table_free(&nm->held);
		free(nm);
		return NULL;
	}
	if (hdx_table_init(&nm->layouts, 256)) {
		hdx_table_free(&nm->held);
		hdx_table_free(&nm->own);
		free(nm);
		return NULL;
	}
	if (hdx_table_init(&nm->envs, 64)) {
		hdx_table_free(&nm->layouts);
		hdx_table_free(&nm->own);
		hdx_table_free(&nm->held);
		free(nm);
		return NULL;
	}
	nm->id_members = rb_intern("__members__");
	plain_init();
	return nm;
}

static VALUE newobj_tp;
static VALUE saved_verbose;
static int gc_was_disabled;

static VALUE prepare_body(VALUE arg)
{
	struct hdx_names *nm = (struct hdx_names *)arg;

	ruby_verbose = Qnil; /* no "not initialized" warnings */
	prepare_globals(nm);
	ruby_verbose = saved_verbose;
	prepare_heap(nm);
	return Qnil;
}

/* also when the preparation raised: the hook must not outlive it */
static VALUE prepare_end(VALUE arg)
{
	ruby_verbose = saved_verbose;
	rb_tracepoint_disable(newobj_tp);
	preparing = NULL;
	if (!gc_was_disabled)
		rb_gc_enable();
	return Qnil;
}

/* Before the walk: may allocate and call MRI's own methods; what it
 * allocates is left out of the dump. 0 or -1. */
int hdx_names_prepare(struct hdx_names *nm)
{
	saved_verbose = ruby_verbose;
	/* no GC until the walk is done with the objects the heap scan found:
	 * rb_gc_disable ends a sweep under way first, so each of them stays
	 * as it is while the preparation allocates */
	gc_was_disabled = RTEST(rb_gc_disable());
	preparing = nm;
	rb_tracepoint_enable(newobj_tp);
	rb_ensure(prepare_body, (VALUE)nm, prepare_end, Qnil);
	return nm->err ? -1 : 0;
}

/* When the extension loads: the hook's TracePoint, an object that one
 * made by the first dump would be new in the second. */
void hdx_names_init(void)
{
	newobj_tp = rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_NEWOBJ, newobj_i,
				      NULL);
	rb_gc_register_mark_object(newobj_tp);
}

void hdx_names_free(struct hdx_names *nm)
{
	size_t i, k;

	if (!nm)
		return;
	for (i = 0; i < nm->held.cap; i++) {
		struct held *h;

		if (nm->held.keys[i] <= 1 || !(h = nm->held.vals[i]))
			continue;
		for (k = 0; k < h->n; k++)
			free((char *)h->e[k].s);
		free(h);
	}
	hdx_table_free(&nm->held);
	hdx_table_free(&nm->own);
	for (i = 0; i < nm->layouts.cap; i++)
		if (nm->layouts.keys[i] > 1)
			free(nm->layouts.vals[i]);
	hdx_table_free(&nm->layouts);
	free(nm->rec);
	hdx_table_free(&nm->envs);
	for (i = 0; i < nm->nglobals; i++)
		free((char *)nm->globals[i].s);
	free(nm->globals);
	free(nm->list);
	if (nm->have_lookup)
		hdx_table_free(&nm->lookup);
	free(nm->text);
	free(nm);
}

/* ---- inside the walk ---- */

static int ivar_i(ID key, VALUE val, st_data_t arg)
{
	struct hdx_names *nm = (struct hdx_names *)arg;
	const struct idc *c;

	if (!RB_SPECIAL_CONST_P(val) && (c = id_text(nm, key)) && c->n &&
	    c->s[0] == '@')
		add(nm, val, NM_IVAR | (c->plain ? NM_PLAIN : 0), c->s, c->n);
	return ST_CONTINUE;
}

/* ---- T_OBJECT ivars by layout ----
 *
 * rb_ivar_foreach gives a T_OBJECT's ivars in the order of their
 * positions in its fields (up to 3.1 the class's iv index table, whose
 * order is the index order; from 3.2 the shape, root first), skipping the
 * unset ones (Qundef) up to 3.4, and from 4.0 the object_id field. Which
 * ivar is at which position depends only on the class (3.1) or the shape
 * id (3.2 on), the layout key. The first object of a layout is asked
 * through rb_ivar_foreach and its answer matched to its fields by
 * identity, position by position; the layout is kept only if every ivar
 * matched its own position (on 4.0, only from an object without an
 * object_id field). The others read their fields through the layout; the
 * writer checks that the references it gets are those values, in order
 * (layout_checked), else asks rb_ivar_foreach after all. */

#if HD_V >= 400
#define OBJ_FIELDS(o) ROBJECT_FIELDS(o)
#else
#define OBJ_FIELDS(o) ROBJECT_IVPTR(o)
#endif

static VALUE layout_key(VALUE obj, VALUE klass)
{
#if defined(HAVE_RB_OBJ_SHAPE_ID)
	uint32_t id = rb_obj_shape_id(obj); /* all of it: the flags too */

	(void)klass;
	if (id & HD_SHAPE_ID_FL_TOO_COMPLEX)
		return 0;
	return ((VALUE)id + 1) << 2;
#elif defined(HAVE_RB_SHAPE_GET_SHAPE_ID)
	(void)klass;
	if (rb_shape_obj_too_complex(obj))
		return 0;
	return ((VALUE)rb_shape_get_shape_id(obj) + 1) << 2;
#else
	(void)obj;
	return klass; /* 0 (hidden): none */
#endif
}

#ifdef HAVE_RB_GC_OBJECT_METADATA
/* 4.0: an object_id field among the fields (rb_ivar_foreach skips it) */
static int obj_id_field(VALUE obj)
{
	const struct hdx_gc_meta *m = rb_gc_object_metadata(obj);
	ID id = rb_intern("object_id"); /* interned before the walk */

	for (; m->name; m++)
		if (m->name == id)
			return 1;
	return 0;
}
#endif

static int record_i(ID key, VALUE val, st_data_t arg)
{
	struct hdx_names *nm = (struct hdx_names *)arg;

	if (nm->nrec == nm->caprec) {
		size_t c = nm->caprec ? nm->caprec * 2 : 64;
		struct ivrec *p = realloc(nm->rec, c * sizeof(*p));

		if (!p) {
			nm->err = 1;
			return ST_STOP;
		}
		nm->rec = p;
		nm->caprec = c;
	}
	nm->rec[nm->nrec].id = key;
	nm->rec[nm->nrec++].val = val;
	return ST_CONTINUE;
}

/* The layout of obj from what rb_ivar_foreach gave (nm->rec), kept under
 * key if every ivar is at its own position. */
static void learn(struct hdx_names *nm, VALUE key, VALUE obj)
{
	const VALUE *p = OBJ_FIELDS(obj);
	struct layout *l;
	void **slot;
	long i;
	size_t k;
#if !defined(HAVE_RB_OBJ_SHAPE_ID) && !defined(HAVE_RB_SHAPE_GET_SHAPE_ID)
	long num = (long)ROBJECT_NUMIV(obj);
#endif

#ifdef HAVE_RB_GC_OBJECT_METADATA
	if (obj_id_field(obj))
		return;
#endif
	if (!nm->nrec)
		return;
	if ((slot = hdx_table_get(&nm->layouts, key)) && *slot &&
	    ((struct layout *)*slot)->n >= (long)nm->nrec)
		return;
	/* the positions: up to 3.1 the set ones in order (unset: Qundef,
	 * skipped), from 3.2 one per ivar (an unset one: no layout) */
#if !defined(HAVE_RB_OBJ_SHAPE_ID) && !defined(HAVE_RB_SHAPE_GET_SHAPE_ID)
	for (i = 0, k = 0; k < nm->nrec; i++) {
		if (i >= num)
			return;
		if (p[i] == Qundef)
			continue;
		if (p[i] != nm->rec[k].val)
			return;
		k++;
	}
#else
	for (k = 0; k < nm->nrec; k++)
		if (p[k] != nm->rec[k].val || p[k] == Qundef)
			return;
	i = (long)nm->nrec;
#endif
	if (!(l = calloc(1, sizeof(*l) + (size_t)i * sizeof(l->e[0])))) {
		nm->err = 1;
		return;
	}
	l->n = i;
	for (i = 0, k = 0; k < nm->nrec; i++) {
		const struct idc *c;

		if (p[i] == Qundef)
			continue;
		l->e[i].id = nm->rec[k].id;
		l->e[i].flags = LN_KNOWN;
		if ((c = id_text(nm, nm->rec[k].id)) && c->n && c->s[0] == '@') {
			l->e[i].flags |= LN_NAMED;
			l->e[i].s = c->s;
			l->e[i].n = c->n;
			l->e[i].kind = NM_IVAR | (c->plain ? NM_PLAIN : 0);
		}
		k++;
	}
	if (!slot && !(slot = hdx_table_put(&nm->layouts, key))) {
		free(l);
		nm->err = 1;
		return;
	}
	free(*slot);
	*slot = l;
}

/* obj's ivars asked through rb_ivar_foreach (and its layout learned) */
static void ivars_asked(struct hdx_names *nm, VALUE obj, VALUE key)
{
	size_t k;

	nm->nrec = 0;
	rb_ivar_foreach(obj, record_i, (st_data_t)nm);
	for (k = 0; k < nm->nrec; k++)
		ivar_i(nm->rec[k].id, nm->rec[k].val, (st_data_t)nm);
	if (key)
		learn(nm, key, obj);
}

/* obj's ivars read through layout l: 0 if l does not cover them */
static int ivars_by_layout(struct hdx_names *nm, const struct layout *l, VALUE obj)
{
	const VALUE *p = OBJ_FIELDS(obj);
	long i;

#if !defined(HAVE_RB_OBJ_SHAPE_ID) && !defined(HAVE_RB_SHAPE_GET_SHAPE_ID)
	long num = (long)ROBJECT_NUMIV(obj);

	for (i = 0; i < num; i++) {
		VALUE v = p[i];

		if (v == Qundef)
			continue;
		if (i >= l->n || !(l->e[i].flags & LN_KNOWN))
			return 0;
		if (!RB_SPECIAL_CONST_P(v) && (l->e[i].flags & LN_NAMED))
			add(nm, v, l->e[i].kind, l->e[i].s, l->e[i].n);
	}
#else
	for (i = 0; i < l->n; i++) {
		VALUE v = p[i];

		if (!RB_SPECIAL_CONST_P(v) && (l->e[i].flags & LN_NAMED))
			add(nm, v, l->e[i].kind, l->e[i].s, l->e[i].n);
	}
#endif
	return 1;
}

static void object_ivars(struct hdx_names *nm, VALUE obj, VALUE klass)
{
	VALUE key = layout_key(obj, klass);
	void **slot = key ? hdx_table_get(&nm->layouts, key) : NULL;

	nm->obj = obj;
	nm->klass = klass;
	nm->key = key;
	if (slot && *slot && ivars_by_layout(nm, *slot, obj)) {
		nm->fast = 1;
		return;
	}
	nm->len = 0;
	ivars_asked(nm, obj, key);
}

/* Whether the references of a T_OBJECT named through its layout are the
 * listed values in order, but for those the walk leaves out (its class,
 * the preparation's objects): then rb_ivar_foreach would have given the
 * same names for them. */
static int layout_checked(struct hdx_names *nm, const VALUE *refs, size_t nrefs)
{
	size_t c = 0, i;

	for (i = 0; i < nrefs; i++, c++) {
		for (; c < nm->len && nm->list[c].target != refs[i]; c++)
			if (nm->list[c].target != nm->klass &&
			    !hdx_names_own_p(nm, nm->list[c].target))
				return 0;
		if (c == nm->len)
			return 0;
	}
	for (; c < nm->len; c++)
		if (nm->list[c].target != nm->klass &&
		    !hdx_names_own_p(nm, nm->list[c].target))
			return 0;
	return 1;
}

/* a key printed in the name: printable ASCII but " and \, <= 32 bytes */
static int short_key(const char *s, long n)
{
	return n <= 32 && plain_text(s, n);
}

static int hash_i(VALUE key, VALUE val, VALUE arg)
{
	struct hdx_names *nm = (struct hdx_names *)arg;
	const char *s;
	long n;

	add(nm, key, NM_KEY, NULL, 0);
	if (RB_SPECIAL_CONST_P(val))
		return ST_CONTINUE;
	if (RB_FIXNUM_P(key))
		add(nm, val, NM_INTKEY, NULL, FIX2LONG(key));
	else if (static_sym_id(key)) {
		const struct idc *c = id_text(nm, static_sym_id(key));

		if (c && c->n <= 32 && c->plain)
			add(nm, val, NM_SYMKEY | NM_PLAIN, c->s, c->n);
		else
			add(nm, val, NM_VALUE, NULL, 0);
	} else if (RB_SYMBOL_P(key) && sym_text(key, &s, &n) && short_key(s, n))
		add(nm, val, NM_SYMKEY | NM_PLAIN, s, n);
	else if (RB_TYPE_P(key, T_STRING) &&
		 short_key(RSTRING_PTR(key), RSTRING_LEN(key)))
		add(nm, val, NM_STRKEY, RSTRING_PTR(key), RSTRING_LEN(key));
	else
		add(nm, val, NM_VALUE, NULL, 0);
	return ST_CONTINUE;
}

/* The members of a Struct (or Data), found as rb_struct_members would
 * without its cache write on the class: the __members__ ivar of the
 * class or an ancestor. */
static VALUE struct_members(struct hdx_names *nm, VALUE s)
{
	VALUE c;

	for (c = rb_obj_class(s); c && c != rb_cStruct;
	     c = rb_class_get_superclass(c)) {
		VALUE m;

		if (RB_BUILTIN_TYPE(c) != RUBY_T_CLASS)
			continue;
		m = rb_attr_get(c, nm->id_members);
		if (RB_TYPE_P(m, T_ARRAY))
			return m;
	}
	return Qnil;
}

static void struct_names(struct hdx_names *nm, VALUE s)
{
	VALUE m = struct_members(nm, s);
	long i, n = RSTRUCT_LEN(s);

	if (NIL_P(m) || RARRAY_LEN(m) != n)
		return;
	for (i = 0; i < n; i++) {
		const char *t;
		long k;

		VALUE sym = RARRAY_AREF(m, i);

		if (static_sym_id(sym))
			add_id(nm, RSTRUCT_GET(s, i), NM_MEMBER, static_sym_id(sym));
		else if (sym_text(sym, &t, &k))
			add(nm, RSTRUCT_GET(s, i), NM_MEMBER |
			    (plain_text(t, k) ? NM_PLAIN : 0), t, k);
	}
}

static void class_names(struct hdx_names *nm, VALUE mod)
{
	VALUE super = rb_class_get_superclass(mod);

	if (super && !RB_SPECIAL_CONST_P(super))
		add(nm, super,
		    RB_BUILTIN_TYPE(super) == RUBY_T_ICLASS ? NM_INCLUDE : NM_SUPER,
		    NULL, 0);
}

static void add_held(struct hdx_names *nm, VALUE obj)
{
	void **slot = hdx_table_get(&nm->held, obj);
	struct held *h;
	size_t i;

	if (!slot || !(h = *slot))
		return;
	for (i = 0; i < h->n; i++)
		add(nm, h->e[i].target, h->e[i].kind, h->e[i].s, h->e[i].n);
}

/* generic ivars: held by the object itself up to 3.4, by its IMEMO/fields
 * from 4.0 */
static int ivars_here(VALUE obj, int type)
{
	switch (type) {
	case RUBY_T_OBJECT:
		return 1;
#if HD_V < 400
	case RUBY_T_CLASS:
	case RUBY_T_MODULE:
		return 1;
	case RUBY_T_IMEMO:
	case RUBY_T_NODE:
	case RUBY_T_ICLASS:
	case RUBY_T_NONE:
	case RUBY_T_ZOMBIE:
		return 0;
	default:
		return RB_FL_TEST_RAW(obj, RUBY_FL_EXIVAR) != 0;
#else
	default:
		return 0;
#endif
	}
}

int hdx_names_wanted(const struct hdx_names *nm, VALUE obj, int type,
		     const char *imemo)
{
	void **slot;

	switch (type) {
	case RUBY_T_OBJECT:
	case RUBY_T_HASH:
	case RUBY_T_ARRAY:
	case RUBY_T_STRUCT:
	case RUBY_T_CLASS:
	case RUBY_T_MODULE:
	case RUBY_T_ICLASS:
		return 1;
	case RUBY_T_IMEMO:
		if (HD_V >= 400 && !strcmp(imemo, "fields"))
			return 1;
		/* a closure's env whose locals have names */
		return nm->envs.live && imemo[0] == 'e' && !strcmp(imemo, "env") &&
		       (slot = hdx_table_get(&nm->held, obj)) && *slot;
	case RUBY_T_DATA: /* threads, fibers */
		if ((slot = hdx_table_get(&nm->held, obj)) && *slot)
			return 1;
		break;
	case RUBY_T_NODE:
	case RUBY_T_NONE:
	case RUBY_T_ZOMBIE:
		return 0;
	default:
		break;
	}
#if HD_V < 400
	return RB_FL_TEST_RAW(obj, RUBY_FL_EXIVAR) != 0; /* generic ivars */
#else
	return 0;
#endif
}

/* Collects the names of obj's references. klass: the class word the walk
 * writes (for 4.0's IMEMO/fields, the owner of the fields). */
void hdx_names_object(struct hdx_names *nm, VALUE obj, int type, VALUE klass,
		      const char *imemo)
{
	nm->len = 0;
	nm->cursor = 0;
	nm->array = 0;
	nm->acursor = 0;
	nm->fast = 0;
	if (nm->have_lookup) {
		hdx_table_free(&nm->lookup);
		nm->have_lookup = 0;
	}
	/* first: the prepared names win over [:key] in a thread's Hash */
	if (type == RUBY_T_CLASS || type == RUBY_T_MODULE ||
	    type == RUBY_T_DATA || type == RUBY_T_HASH ||
	    (type == RUBY_T_IMEMO && imemo[0] == 'e'))
		add_held(nm, obj);
	if (type == RUBY_T_OBJECT)
		object_ivars(nm, obj, klass);
	else if (ivars_here(obj, type))
		rb_ivar_foreach(obj, ivar_i, (st_data_t)nm);
#if HD_V >= 400
	if (type == RUBY_T_IMEMO && klass && !RB_SPECIAL_CONST_P(klass) &&
	    !strcmp(imemo, "fields"))
		rb_ivar_foreach(klass, ivar_i, (st_data_t)nm);
#else
	(void)klass;
	(void)imemo;
#endif
	switch (type) {
	case RUBY_T_ARRAY:
		if (!RB_FL_TEST_RAW(obj, RUBY_ELTS_SHARED))
			nm->array = obj;
		break;
	case RUBY_T_HASH:
		if (RHASH_SIZE(obj))
#ifdef HAVE_RB_HASH_STLIKE_FOREACH
			rb_hash_stlike_foreach(obj, hash_i, (st_data_t)nm);
#else
			rb_hash_foreach(obj, hash_i, (VALUE)nm);
#endif
		break;
	case RUBY_T_STRUCT:
		struct_names(nm, obj);
		break;
	case RUBY_T_CLASS:
	case RUBY_T_MODULE:
	case RUBY_T_ICLASS:
		class_names(nm, obj);
		break;
	default:
		break;
	}
}

static const struct hdx_name *lookup(struct hdx_names *nm, VALUE ref)
{
	void **slot;
	size_t i;

	if (nm->cursor < nm->len && nm->list[nm->cursor].target == ref)
		return &nm->list[nm->cursor++];
	if (nm->len <= 16) {
		for (i = 0; i < nm->len; i++)
			if (nm->list[i].target == ref)
				return &nm->list[i];
		return NULL;
	}
	if (!nm->have_lookup) {
		if (hdx_table_init(&nm->lookup, nm->len * 2)) {
			nm->err = 1;
			return NULL;
		}
		nm->have_lookup = 1;
		for (i = nm->len; i-- > 0;) /* the first entry wins */
			if ((slot = hdx_table_put(&nm->lookup, nm->list[i].target)))
				*slot = &nm->list[i];
	}
	slot = hdx_table_get(&nm->lookup, ref);
	return slot ? *slot : NULL;
}

/* array elements in order: special constants are never references, so
 * the next reference is the next heap element */
static long array_index(struct hdx_names *nm, VALUE ref)
{
	VALUE a = nm->array;
	long i, n = RARRAY_LEN(a);

	for (i = nm->acursor; i < n; i++) {
		VALUE e = RARRAY_AREF(a, i);

		if (e == ref) {
			nm->acursor = i + 1;
			return i;
		}
		if (!RB_SPECIAL_CONST_P(e))
			return -1;
	}
	return -1;
}

static void text(struct hdx_names *nm, size_t *len, const char *a, size_t na,
		 const char *s, size_t n, const char *b)
{
	size_t nb = strlen(b), need = na + n + nb;

	if (need > nm->textcap) {
		char *p = realloc(nm->text, need);

		if (!p) {
			nm->err = 1;
			*len = 0;
			return;
		}
		nm->text = p;
		nm->textcap = need;
	}
	memcpy(nm->text, a, na);
	memcpy(nm->text + na, s, n);
	memcpy(nm->text + na + n, b, nb);
	*len = need;
}

/* n bytes (a name: a few) from s to d, without a call for up to 16; no
 * byte of s beyond n is read */
static inline void small_copy(char *d, const char *s, size_t n)
{
	if (n >= 8 && n <= 16) {
		uint64_t a, b;

		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n < 4) {
		size_t i;

		for (i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		memcpy(d, s, n);
	}
}

/* '"' a s b '"', JSON-escaped unless plain (a and b are) */
static inline void put_parts(struct hdx_names *nm, struct hdx_out *o, const char *a,
		      size_t na, const char *s, size_t n, const char *b,
		      size_t nb, int plain)
{
	size_t len = 0;

	if (plain && na + n + nb + 2 <= 256 && o->cap >= 256) {
		char *p;
		size_t i;

		if (o->len + 256 > o->cap)
			hdx_out_flush(o);
		p = o->buf + o->len;
		*p++ = '"';
		for (i = 0; i < na; i++) /* a and b: a byte or two */
			*p++ = a[i];
		small_copy(p, s, n);
		p += n;
		for (i = 0; i < nb; i++)
			*p++ = b[i];
		*p++ = '"';
		o->len = (size_t)(p - o->buf);
		return;
	}
	if (plain) {
		HD_PUTS(o, "\"");
		hdx_put(o, a, na);
		hdx_put(o, s, n);
		hdx_put(o, b, nb);
		HD_PUTS(o, "\"");
		return;
	}
	text(nm, &len, a, na, s, n, b);
	hdx_put_json(o, nm->text, len);
}

/* a literal into the buffer, which has room (put_entry made it) */
#define PUT_LIT(o, lit) \
	do { \
		memcpy((o)->buf + (o)->len, (lit), sizeof(lit) - 1); \
		(o)->len += sizeof(lit) - 1; \
	} while (0)
/* what put_entry makes room for: the longest literal, or a short key */
#define ENTRY_ROOM 64

static void put_name(struct hdx_names *nm, struct hdx_out *o,
		     const struct hdx_name *e)
{
	int plain = (e->kind & NM_PLAIN) != 0;
	size_t n = (size_t)e->n;

	switch (e->kind & ~NM_PLAIN) {
	case NM_TEXT:
	case NM_IVAR:
		put_parts(nm, o, "", 0, e->s, n, "", 0, plain);
		return;
	case NM_CONST:
		put_parts(nm, o, "::", 2, e->s, n, "", 0, plain);
		return;
	case NM_STRKEY: /* printable, no quote or backslash, <= 32 bytes: as is */
		PUT_LIT(o, "\"[\\\"");
		small_copy(o->buf + o->len, e->s, n);
		o->len += n;
		PUT_LIT(o, "\\\"]\"");
		return;
	case NM_SYMKEY:
		put_parts(nm, o, "[:", 2, e->s, n, "]", 1, plain);
		return;
	case NM_INTKEY:
		PUT_LIT(o, "\"[");
		hdx_put_i64(o, e->n);
		HD_PUTS(o, "]\"");
		return;
	case NM_KEY:
		PUT_LIT(o, "\"[key]\"");
		return;
	case NM_VALUE:
		PUT_LIT(o, "\"[value]\"");
		return;
	case NM_MEMBER:
		put_parts(nm, o, ".", 1, e->s, n, "", 0, plain);
		return;
	case NM_SUPER:
		PUT_LIT(o, "\"(superclass)\"");
		return;
	case NM_INCLUDE:
		PUT_LIT(o, "\"(include)\"");
		return;
	default:
		PUT_LIT(o, "null");
		return;
	}
}

/* ',' (comma) and the decimal i (>= 0), straight into the buffer */
static inline void put_index(struct hdx_out *o, int comma, long i)
{
	unsigned long u = (unsigned long)i;
	size_t digits = 1;
	char *p;

	while (u >= 10 && digits < 20) {
		u /= 10;
		digits++;
	}
	if (RB_UNLIKELY(o->len + 24 > o->cap))
		hdx_out_flush(o);
	p = o->buf + o->len;
	if (comma)
		*p++ = ',';
	o->len = (size_t)(p + digits - o->buf);
	u = (unsigned long)i;
	do {
		p[--digits] = (char)('0' + u % 10);
		u /= 10;
	} while (digits);
}

/* The name of a reference, resolved in order: its array index (*k >= 0),
 * else its entry (*e), else neither (0 returned). */
static inline int resolve(struct hdx_names *nm, VALUE ref,
			  const struct hdx_name **e, long *k)
{
	*e = NULL;
	*k = -1;
	if (nm->array && (*k = array_index(nm, ref)) >= 0)
		return 1;
	if (nm->cursor < nm->len && nm->list[nm->cursor].target == ref) {
		*e = &nm->list[nm->cursor++];
		return 1;
	}
	return nm->len && (*e = lookup(nm, ref)) != NULL;
}

/* One entry of ref_names, after a comma unless first */
static inline void put_entry(struct hdx_names *nm, struct hdx_out *o, int comma,
			     const struct hdx_name *e, long k)
{
	if (k >= 0) {
		put_index(o, comma, k);
		return;
	}
	if (RB_UNLIKELY(o->len + ENTRY_ROOM > o->cap))
		hdx_out_flush(o);
	if (comma)
		o->buf[o->len++] = ',';
	if (e)
		put_name(nm, o, e);
	else
		PUT_LIT(o, "null");
}

/* Writes ', "ref_names":[...]' for refs (as written), unless none has a
 * name. global: the ROOT global_tbl record. The last neph references are
 * a WeakKeyMap's values whose key is the object (hd_eph.c), each named
 * "(ephemeron value)". One pass: the references before the first named
 * one are nulls. */
static void names_write(struct hdx_names *nm, struct hdx_out *o,
			const VALUE *refs, size_t nrefs, int global,
			size_t neph)
{
	const struct hdx_name *e = NULL;
	size_t i, j, own = nrefs - neph;
	long k = -1;

	if (!nrefs)
		return;
	if (own && nm->fast && !global && !layout_checked(nm, refs, own)) {
		nm->fast = 0; /* the layout did not cover them: ask MRI */
		nm->len = 0;
		ivars_asked(nm, nm->obj, nm->key);
	}
	if (global) {
		nm->fast = 0;
		nm->len = 0;
		nm->cursor = 0;
		nm->array = 0;
		if (nm->have_lookup) {
			hdx_table_free(&nm->lookup);
			nm->have_lookup = 0;
		}
		for (i = 0; i < nm->nglobals; i++)
			add(nm, nm->globals[i].target, NM_TEXT, nm->globals[i].s,
			    nm->globals[i].n);
	}
	i = own;
	if (nm->len || nm->array)
		for (i = 0; i < own; i++)
			if (resolve(nm, refs[i], &e, &k))
				break;
	if (i == own && !neph)
		return;
	HD_PUTS(o, ", \"ref_names\":[");
	for (j = 0; j < i; j++)
		put_entry(nm, o, j != 0, NULL, -1);
	if (i < own) {
		put_entry(nm, o, i != 0, e, k);
		for (i++; i < own; i++) {
			resolve(nm, refs[i], &e, &k);
			put_entry(nm, o, 1, e, k);
		}
	}
	for (j = 0; j < neph; j++) {
		if (own || j)
			HD_PUTS(o, ",");
		HD_PUTS(o, "\"(ephemeron value)\"");
	}
	HD_PUTS(o, "]");
}

void hdx_names_write(struct hdx_names *nm, struct hdx_out *o,
		     const VALUE *refs, size_t nrefs, int global)
{
	names_write(nm, o, refs, nrefs, global, 0);
}

void hdx_names_write_eph(struct hdx_names *nm, struct hdx_out *o,
			 const VALUE *refs, size_t nrefs, size_t neph)
{
	names_write(nm, o, refs, nrefs, 0, neph);
}

int hdx_names_failed(const struct hdx_names *nm)
{
	return nm->err;
}

#endif /* HD_WALKER */
